"""The study's computation: data sets (optionally subsampled), every curve point as one task of one sweep over
all data sets, streamed into the results store, and the curves read back from it.

A point is keyed exactly as in :func:`precise_kpca.studies.convergence_curve` (data hash, measure, k, σ,
requested backend, digits), so ``precise-kpca curves`` and ``precise-kpca reproduce`` share stored points, and a
rerun of the study computes only what is missing.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..studies.curves import COLUMNS, PointTask, run_sweep, sweep_tasks
from ..studies.store import ResultsStore

STUDY_MEASURES = ("metric", "eigenvalue", "eigenprojection")
DEFAULT_KS = (1, 2, 3, 4, 5)
DEFAULT_DIGITS = 8


@dataclass(frozen=True)
class StudyData:
    """One data set as the study uses it.

    Attributes
    ----------
    name : str
    X : numpy.ndarray
        The rows the measures are computed on (all rows, or a subsample).
    n_full : int
        Rows of the whole preprocessed set (Table I).
    d : int
        Attributes after one-hot encoding (Table I).
    rho_full : float
        ρ of the whole set (Table I), full N×N median.
    rho : float
        ρ of ``X`` (equal to ``rho_full`` unless subsampled).
    rank : int
        Rank of the centered linear Gram of ``X`` (the largest usable k).
    distinct_ks : dict of int to int or None, optional
        Algorithm 1's k read as *k distinct linear eigenvalues*: k → the number of eigenvectors those
        eigenvalues span (None where ``X`` has fewer than k distinct nonzero ones); filled by
        :func:`with_distinct_counts`, empty until then.
    """

    name: str
    X: np.ndarray = field(repr=False)
    n_full: int
    d: int
    rho_full: float
    rho: float
    rank: int
    distinct_ks: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def subsampled(self) -> bool:
        return self.X.shape[0] < self.n_full


def subsample(X: np.ndarray, max_rows: int | None, seed: int) -> np.ndarray:
    """At most ``max_rows`` rows of X, drawn without replacement by ``numpy.random.default_rng(seed)``, kept in
    their original order (all of X when it has no more rows)."""
    if max_rows is None or X.shape[0] <= max_rows:
        return X
    if max_rows < 3:
        raise ValueError(f"max_rows must be at least 3 (a median distance and a diameter), got {max_rows}")
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=max_rows, replace=False))
    return np.ascontiguousarray(X[rows])


def load_study_data(names: Sequence[str], *, data_dir=None, max_rows: int | None = None,
                    seed: int = 0) -> dict[str, StudyData]:
    """Load data sets by name with the paper's preprocessing, their Table I geometry, and the rows to use.

    Parameters
    ----------
    names : sequence of str
        Names for :func:`precise_kpca.datasets.load`.
    data_dir : path-like, optional
        Data directory.
    max_rows : int, optional
        Subsample larger sets to this many rows (seeded); Table I values stay those of the whole set.
    seed : int
        Seed of the subsample.

    Returns
    -------
    dict of str to StudyData
    """
    from ..backends import get_backend
    from ..datasets import load
    from ..numerics import geometry
    from ..measures.spectral import LinearSpectrum

    data = {}
    for name in names:
        X_full = load(name, data_dir=data_dir)
        X = subsample(X_full, max_rows, seed)
        rho_full = geometry(X_full).eccentricity
        rho = rho_full if X is X_full else geometry(X).eccentricity
        rank = LinearSpectrum(X, get_backend("float64")).rank
        data[name] = StudyData(name, X, X_full.shape[0], X_full.shape[1], rho_full, rho, rank)
    return data


K_COUNTS = ("eigenvectors", "distinct")
"""Readings of Algorithm 1's k: the number of top linear eigenvectors (the measures' own k), or the number of
top *distinct* linear eigenvalues, as the paper's text says ("k is less than L if one or more eigenvalues are
repeated"); they differ only on data with exactly repeated linear eigenvalues (tic-tac-toe)."""


def distinct_eigenvector_counts(X: np.ndarray, ks) -> dict[int, int | None]:
    """For each k, how many top linear eigenvectors the top k distinct linear eigenvalues of X span.

    Rigorous: a 64-bit linear enclosure (:func:`precise_kpca.certify.linear_enclosure.linear_enclosure`) proves
    the top eigenvalues simple where their enclosures are disjoint; only where they overlap are the exact ties
    decided (:func:`precise_kpca.certify.linear_ties`, integer characteristic polynomial) — the exact check
    alone takes minutes on splice (d = 287), the enclosure seconds.

    Parameters
    ----------
    X : numpy.ndarray, shape (N, d)
    ks : iterable of int
        Counts of distinct eigenvalues.

    Returns
    -------
    dict of int to int or None
        k → eigenvector count (equal to k without ties), None where X has fewer than k distinct nonzero
        linear eigenvalues.
    """
    from ..certify.linear_enclosure import linear_enclosure, tied_linear_eigenvalues_cached

    ks = sorted(set(int(k) for k in ks))
    enc = linear_enclosure(X, 64)
    top = min(max(ks), enc.rank)
    if all(enc.separated(i) for i in range(1, top + 1)):
        return {k: k if k <= enc.rank else None for k in ks}
    runs = dict(tied_linear_eigenvalues_cached(enc.exact))
    ends, i = [], 0
    while i < enc.rank:
        i = runs.get(i, i + 1)  # a run [a, z) of equal eigenvalues is one distinct value
        ends.append(i)
    return {k: ends[k - 1] if k <= len(ends) else None for k in ks}


def with_distinct_counts(data: dict[str, StudyData], ks, *, progress: bool | str = False) -> dict[str, StudyData]:
    """The same data sets with :attr:`StudyData.distinct_ks` filled for ``ks`` (a progress bar on stderr with
    ``progress``: seconds per set, half a minute on splice)."""
    from ..extras import progress_bar_class

    tqdm = progress_bar_class()

    disable = not progress or (progress != "always" and not sys.stderr.isatty())
    return {name: replace(item, distinct_ks=distinct_eigenvector_counts(item.X, ks))
            for name, item in tqdm(data.items(), desc="distinct linear eigenvalues", unit="set", file=sys.stderr,
                                   disable=disable, dynamic_ncols=True)}


def eigenvector_ks(item: StudyData, ks) -> list[int]:
    """Eigenprojection ranks to compute for ``item``: ``ks`` within its rank, and the eigenvector counts of the
    distinct-eigenvalue reading where :attr:`StudyData.distinct_ks` is filled (both readings in one store)."""
    wanted = {k for k in ks if k <= item.rank}
    wanted |= {item.distinct_ks[k] for k in ks if item.distinct_ks.get(k) is not None}
    return sorted(wanted)


@dataclass(frozen=True)
class StudyPlan:
    """What to compute: certified points on ``log2_sigmas`` and float64-naive points on the same grid.

    Attributes
    ----------
    log2_sigmas : tuple of int
        Exponents p of σ = 2^p (the paper's grid is −4…8; the extension goes to 40).
    ks : tuple of int
        Ranks of the eigenprojection measure (k larger than a set's rank is skipped for that set).
    digits : int
        Certified digits requested per point.
    """

    log2_sigmas: tuple[int, ...]
    ks: tuple[int, ...] = DEFAULT_KS
    digits: int = DEFAULT_DIGITS

    def __post_init__(self):
        if not self.log2_sigmas:
            raise ValueError("the study needs at least one log2 sigma")
        if any(k < 1 for k in self.ks) or not self.ks:
            raise ValueError(f"ks must be positive integers, got {self.ks}")
        if self.digits < 1:
            raise ValueError(f"digits must be a positive integer, got {self.digits}")


def plan_tasks(data: dict[str, StudyData], plan: StudyPlan, data_keys: dict[str, str]) -> list[tuple[str, PointTask]]:
    """Every point of the study as ``(data-set name, PointTask)``: certified points and their float64-naive twins."""
    tasks = []
    for name, item in data.items():
        ks = eigenvector_ks(item, plan.ks)
        for measures, k in ((("metric", "eigenvalue"), 1), (("eigenprojection",), ks)):
            if not k:
                continue
            tasks += [(name, task) for task in sweep_tasks(
                item.X, list(plan.log2_sigmas), measures=measures, k=k, digits=plan.digits, backend="auto",
                naive_overlay=True, data_key=data_keys[name])]
    return tasks


@dataclass
class RunStats:
    """Counts and times of one study run.

    Attributes
    ----------
    computed, reused : int
        Points computed now, and points found in the store.
    wall_seconds : float
        Wall time of the computation.
    point_seconds : float
        Sum of the computed points' own times: what one worker would have needed.
    executor : str
    """

    computed: int
    reused: int
    wall_seconds: float
    point_seconds: float
    executor: str

    @property
    def speedup(self) -> float:
        return self.point_seconds / self.wall_seconds if self.wall_seconds > 0 and self.computed else math.nan


def run_study(data: dict[str, StudyData], plan: StudyPlan, store: ResultsStore, *, executor=None,
              progress: bool | str = True, retry_uncertified: bool = False, confirm=None) -> RunStats:
    """Compute every missing point of the study in one sweep over all data sets and store each as it completes.

    Parameters
    ----------
    data : dict of str to StudyData
    plan : StudyPlan
    store : ResultsStore
    executor : str, Executor or None
        See :func:`precise_kpca.studies.get_executor` (None: local process pool).
    progress : bool or "always"
        Progress bar with ETA on stderr (True: when stderr is a terminal).
    retry_uncertified : bool
        Also recompute stored points that are not rigorous where the request would accept them (see
        :func:`precise_kpca.studies.store.reusable`; points short of the requested digits, undetermined or of
        unknown guarantee are recomputed in any case).
    confirm : callable, optional
        Called with the :class:`precise_kpca.studies.cost.Estimate` of the pending points (routes, predicted
        time) before any is computed; a false answer stops the run with
        :class:`precise_kpca.studies.cost.Declined`.

    Returns
    -------
    RunStats
    """
    keys = {name: store.register_data(item.X, name) for name, item in data.items()}
    tasks = plan_tasks(data, plan, keys)
    stats = run_sweep(store, {name: item.X for name, item in data.items()}, tasks, executor=executor,
                      progress=progress, retry_uncertified=retry_uncertified, desc="study points",
                      confirm=confirm)
    return RunStats(stats.computed, stats.reused, stats.wall_seconds, stats.point_seconds, stats.executor)


AGGREGATION_SETS = 2
"""Data sets in Fig 2 (the smallest of the run, by rows: its points are computed outside the store)."""


def aggregation_curves(data: dict[str, StudyData], plan: StudyPlan, *, progress: bool | str = True
                       ) -> tuple[pd.DataFrame, int | None]:
    """Fig 2's points: eigenprojection dissonance at the largest rank of ``plan`` with the mean and the max
    aggregation (Algorithm 1, line 13), on the paper's grid within the plan's, for the :data:`AGGREGATION_SETS`
    data sets with the fewest rows whose rank allows it.

    The store's points are keyed without the aggregation, so these are computed here
    (:func:`precise_kpca.measures.measure`, backend ``auto``, rigorous by default; the guarantee is carried).

    Returns
    -------
    (pandas.DataFrame, int or None)
        Rows ``dataset, rho, aggregate, log2_sigma, normalized, guarantee, certified_digits``, and the rank
        (None, with no rows, when no data set allows a rank above 1 — the aggregations then coincide).
    """
    from fractions import Fraction

    from ..extras import progress_bar_class

    tqdm = progress_bar_class()

    from ..measures import measure
    from ..measures.onset import PAPER_GRID

    k = max(plan.ks)
    chosen = sorted((item for item in data.values() if item.rank >= k), key=lambda item: item.X.shape[0])
    chosen = chosen[:AGGREGATION_SETS]
    grid = [p for p in plan.log2_sigmas if p in PAPER_GRID]
    columns = ["dataset", "rho", "aggregate", "log2_sigma", "normalized", "guarantee", "certified_digits"]
    if k < 2 or not chosen or not grid:
        return pd.DataFrame(columns=columns), None
    jobs = [(item, aggregate, p) for item in chosen for aggregate in ("mean", "max") for p in grid]
    disable = not progress or (progress != "always" and not sys.stderr.isatty())
    rows = []
    for item, aggregate, p in tqdm(jobs, unit="pt", desc="Fig 2 points", file=sys.stderr, disable=disable,
                                   dynamic_ncols=True):
        m = measure(item.X, "eigenprojection", Fraction(2) ** p, k=k, digits=plan.digits, aggregate=aggregate)
        rows.append(dict(dataset=item.name, rho=item.rho, aggregate=aggregate, log2_sigma=p,
                         normalized=float(m.normalized), guarantee=m.guarantee,
                         certified_digits=int(m.certified_digits)))
    return pd.DataFrame(rows, columns=columns), k


def collect_curves(data: dict[str, StudyData], plan: StudyPlan, store: ResultsStore) -> pd.DataFrame:
    """The study's stored points as one frame: the columns of :func:`precise_kpca.convergence_curve` plus
    ``dataset``, ``rho`` and ``n`` (of the rows used) and ``n_full`` (rows of the whole set: more than ``n`` for a
    subsample).

    Raises
    ------
    ValueError
        If points are missing from the store (run :func:`run_study` first).
    """
    keys = {name: store.register_data(item.X, name) for name, item in data.items()}
    tasks = plan_tasks(data, plan, keys)
    frame = store.frame([task.key for _, task in tasks])
    if len(frame) != len(tasks):
        raise ValueError(f"the store {store.path} holds {len(frame)} of the study's {len(tasks)} points: "
                         "run the study first")
    names = {key: name for name, key in keys.items()}
    frame = frame.assign(log2_sigma=frame["log2_sigma"].astype(int), dataset=frame["data_hash"].map(names))
    frame = frame.assign(rho=frame["dataset"].map({n: d.rho for n, d in data.items()}),
                         n=frame["dataset"].map({n: d.X.shape[0] for n, d in data.items()}),
                         n_full=frame["dataset"].map({n: d.n_full for n, d in data.items()}))
    return frame[["dataset", "rho", "n", "n_full"] + COLUMNS].reset_index(drop=True)
