"""Convergence curves: the paper's Figs 3, 5, 6 and 8 over any range of log2 σ, each point certified.

A curve is a set of independent points (σ, measure, k), each computed by
:func:`precise_kpca.measures.measure`, stored in the results store as it completes, and read back from it
(so a rerun, or an interrupted sweep, computes only the missing points and those whose stored guarantee falls
short of the request, see :meth:`ResultsStore.existing`). Every argument of a sweep is checked before its first
point runs (:func:`sweep_tasks`), its size against :mod:`precise_kpca.limits`; concurrent sweeps on one store share
the points (:func:`run_sweep` claims each before computing it).

Each row carries the point's guarantee as data: ``guarantee``, ``route``, ``reason`` and the interval behind the
value as exact decimal text (:func:`exact_text`), so a CSV or Parquet reader gets the rigorous ends back exactly.
"""
from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

from .. import limits
from ..numerics.data import DataState, data_state
from ..validation import check_data
from .executors import get_executor
from .store import AGREEMENT_BACKENDS, NAIVE_BACKEND, NO_K, POLL_SECONDS, PointKey, ResultsStore, data_hash
from .versions import route_version

DEFAULT_MEASURES = ("metric", "eigenvalue", "eigenprojection")
RANKED_MEASURES = ("eigenprojection", "pc")
"""Measures that take the rank parameter k (the others get one point per σ, with k missing)."""
NAIVE_DIGITS = 0
"""Requested digits stored for float64-naive points: they certify nothing, whatever ``digits`` says."""
NAIVE_FAILURE = "float64-naive cannot evaluate this σ"
"""Start of the ``reason`` of an overlay point float64 cannot compute at all (σ_X² or u outside its range): the
point is kept, NaN, instead of aborting the sweep."""

COLUMNS = [
    "log2_sigma", "sigma", "measure", "k", "value", "normalized", "certified_digits", "guarantee", "backend", "dps",
    "seconds", "value_text", "normalized_text", "lower_text", "upper_text", "normalized_lower_text",
    "normalized_upper_text", "requested_backend", "digits", "route", "reason", "method", "requested_dps", "tau",
    "median", "aggregate", "requested_guarantee", "code_version",
]
"""Columns of a curve frame (:func:`convergence_curve`), in order: ``log2_sigma, sigma, measure, k, value,
normalized, certified_digits, guarantee, backend, dps, seconds``; ``value_text, normalized_text`` and the interval
ends ``lower_text, upper_text, normalized_lower_text, normalized_upper_text`` (exact decimal text,
:func:`exact_text`; ``""`` where the measurement has no such end; ``value``/``normalized`` are NaN where outside the
float64 range); ``requested_backend, digits, route, reason, method``; the rest of the key ``requested_dps, tau,
median, aggregate, requested_guarantee`` and the route's ``code_version``. ``guarantee`` is ``rigorous``,
``heuristic`` or ``none`` (``unknown`` for points stored before guarantees were recorded); ``sigma`` is the exact σ
as text (``"1/16"``); ``k`` is missing for measures without a rank; overlay rows have
``requested_backend == "float64-naive"``."""
GUARANTEE_ORDER = ("rigorous", "heuristic", "none")
"""The guarantees of :class:`precise_kpca.measures.Measurement`, strongest first (the store adds ``"unknown"``
for points stored before guarantees were recorded)."""


@dataclass(frozen=True)
class PointTask:
    """One point of a sweep: what to compute (``key``) and the exponent it belongs to."""

    key: PointKey
    log2_sigma: int

    @property
    def k(self) -> int | None:
        return None if self.key.k == NO_K else self.key.k


def exact_text(value) -> str:
    """Decimal text of a float or mpmath mpf from which the number is read back exactly.

    Floats: ``repr`` (shortest text that reads back as the same float). mpf: the exact decimal expansion
    (a dyadic m·2^e is m·5^−e·10^e, a finite decimal), in scientific notation, so reading it at any precision of
    at least the mantissa's bits, or as a ``fractions.Fraction``, gives exactly the number: the ends of a rigorous
    interval do not move when read back. NaN and infinities are ``nan``, ``+inf``, ``-inf``.
    """
    mpf_tuple = getattr(value, "_mpf_", None)
    if mpf_tuple is None:
        return repr(float(value))
    sign, man, exp, _ = mpf_tuple
    if not man:
        from mpmath import libmp

        return libmp.to_str(mpf_tuple, 1)  # zero, NaN and the infinities
    digits = str(int(man) << exp if exp >= 0 else int(man) * 5**-exp)
    stripped = digits.rstrip("0")
    power = min(exp, 0) + len(digits) - 1  # the value is int(digits)·10^min(exp, 0)
    return f"{'-' if sign else ''}{stripped[0]}.{stripped[1:] or '0'}e{power:+d}"


def to_float(value) -> float:
    """Nearest float, or NaN where the number lies outside the float64 range (its text keeps it)."""
    mpf_tuple = getattr(value, "_mpf_", None)
    if mpf_tuple is None:
        return float(value)
    from mpmath import libmp

    result = libmp.to_float(mpf_tuple, rnd=libmp.round_nearest)
    if math.isinf(result) or (result == 0.0 and mpf_tuple[1] != 0):
        return math.nan
    return result


def compute_point(X: np.ndarray | DataState, task: PointTask) -> dict:
    """Compute one point with :func:`precise_kpca.measures.measure` (runs in a worker; picklable in and out).

    Returns
    -------
    dict
        The record stored by :meth:`ResultsStore.put`.
    """
    from ..measures import measure

    key = task.key
    start = time.perf_counter()
    try:
        m = measure(X, key.measure, Fraction(key.sigma), **measure_options(key))
    except (ValueError, OverflowError) as exc:
        if key.requested_backend != NAIVE_BACKEND:
            raise
        # the certified run of the same point validated the arguments: what is left is float64's range
        return _naive_failure(task, f"{NAIVE_FAILURE}: {exc}", time.perf_counter() - start)
    return {
        "log2_sigma": float(task.log2_sigma),
        "value": to_float(m.value),
        "value_text": exact_text(m.value),
        "normalized": to_float(m.normalized),
        "normalized_text": exact_text(m.normalized),
        "certified_digits": int(m.certified_digits),
        "backend": str(m.backend),
        "dps": int(m.dps),
        "method": str(m.method),
        "seconds": float(m.seconds),
        "lower_text": _end_text(m.lower),
        "upper_text": _end_text(m.upper),
        "normalized_lower_text": _end_text(m.normalized_lower),
        "normalized_upper_text": _end_text(m.normalized_upper),
        "guarantee": str(m.guarantee),
        "route": "" if m.route is None else str(m.route),
        "reason": str(m.reason),
        "code_version": route_version(None if m.route is None else m.route.engine),
    }


def _naive_failure(task: PointTask, reason: str, seconds: float) -> dict:
    """The record of an overlay point float64 cannot evaluate: NaN, guarantee none, the reason kept."""
    return {
        "log2_sigma": float(task.log2_sigma), "value": math.nan, "value_text": "nan", "normalized": math.nan,
        "normalized_text": "nan", "certified_digits": 0, "backend": NAIVE_BACKEND, "dps": 15,
        "method": "float64-naive (not computable)", "seconds": float(seconds), "lower_text": "", "upper_text": "",
        "normalized_lower_text": "", "normalized_upper_text": "", "guarantee": "none", "route": "", "reason": reason,
        "code_version": route_version("naive"),
    }


def measure_options(key: PointKey) -> dict:
    """The keyword arguments of :func:`precise_kpca.measures.measure` that a key stands for."""
    options = {"k": key.k if key.k != NO_K else 1, "backend": key.requested_backend, "median": key.median}
    if key.digits != NAIVE_DIGITS:
        options["digits"] = key.digits
    if key.requested_dps:
        options["dps"] = key.requested_dps
    if key.tau:
        options["tau"] = float(key.tau)
    if key.aggregate:
        options["aggregate"] = key.aggregate
    if key.requested_backend in ("auto", "arb"):
        options["guarantee"] = key.requested_guarantee
    return options


def _end_text(end) -> str:
    return "" if end is None else exact_text(end)


def undetermined(frame: pd.DataFrame) -> pd.Series:
    """Rows whose value is NaN: it depends on an arbitrary choice (``reason`` says which), as
    :attr:`precise_kpca.measures.Measurement.determined` says."""
    return frame["value_text"] == "nan"


@dataclass(frozen=True)
class GuaranteeSummary:
    """How many points carry each guarantee, and the fewest certified digits among the rigorous ones.

    Attributes
    ----------
    counts : dict of str to int
        Points per guarantee: every one of :data:`GUARANTEE_ORDER`, then any other found (``unknown``).
    fewest_rigorous_digits : int or None
        None when no point is rigorous.
    """

    counts: dict
    fewest_rigorous_digits: int | None

    @property
    def points(self) -> int:
        return sum(self.counts.values())

    def __str__(self) -> str:
        parts = [f"{n} {g}" for g, n in self.counts.items()]
        if self.fewest_rigorous_digits is not None:
            parts[0] += f" (fewest certified digits {self.fewest_rigorous_digits})"
        return ", ".join(parts)


def guarantee_summary(frame: pd.DataFrame) -> GuaranteeSummary:
    """:class:`GuaranteeSummary` of the rows of a curve frame (its ``guarantee`` and ``certified_digits``)."""
    found = frame["guarantee"].value_counts()
    counts = {g: int(found.get(g, 0)) for g in GUARANTEE_ORDER}
    counts.update({g: int(n) for g, n in found.items() if g not in counts})
    rigorous = frame.loc[frame["guarantee"] == "rigorous", "certified_digits"]
    return GuaranteeSummary(counts, int(rigorous.min()) if len(rigorous) else None)


class Bundle(list):
    """Points of one (data set, σ, requested backend), computed together in one worker: a list of
    ``(data-set name, PointTask)``, which says what it is in an error message."""

    def describe(self) -> str:
        name, first = self[0]
        measures = ", ".join(dict.fromkeys(f"{t.key.measure}" + (f" k={t.key.k}" if t.key.k != NO_K else "")
                                           for _, t in self))
        return f"{name} at sigma=2**{first.log2_sigma} ({measures}; backend {first.key.requested_backend})"


def bundle_tasks(pending: list[tuple[str, PointTask]], sizes: dict[str, int]) -> list[Bundle]:
    """Group points by (data set, σ, requested backend) — the measures of one σ share its enclosures in one
    worker — expensive bundles first (naive last, then large N, then large σ) so that a pool finishes evenly."""
    bundles: dict[tuple, Bundle] = {}
    for name, task in pending:
        bundles.setdefault((name, task.log2_sigma, task.key.requested_backend), Bundle()).append((name, task))
    return sorted(bundles.values(), key=lambda b: (b[0][1].key.requested_backend == NAIVE_BACKEND,
                                                    -sizes[b[0][0]], -b[0][1].log2_sigma))


def compute_bundle(shared: dict[str, DataState], bundle: list[tuple[str, PointTask]]) -> list[dict]:
    """Every point of one bundle (see :func:`bundle_tasks`) in one worker, with the data sets in ``shared`` (their
    states: the worker holds them, so the work their σ share is done once whatever the registry drops)."""
    return [compute_point(shared[name], task) for name, task in bundle]


def _check_exponents(log2_sigmas) -> list[int]:
    if isinstance(log2_sigmas, range):  # its size is known before a list of it is built
        limits.check_points(len(log2_sigmas), parameter="log2_sigmas")
    exponents = []
    for p in np.atleast_1d(np.asarray(log2_sigmas, dtype=object)).tolist():
        if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or p != int(p):
            raise ValueError(f"log2_sigmas must hold integers (σ = 2**p exactly), got {p!r}")
        limits.check_log2_sigma(int(p), parameter="log2_sigmas", shown=f"[..., {int(p)}, ...]")
        exponents.append(int(p))
    if not exponents:
        raise ValueError("log2_sigmas is empty")
    return sorted(set(exponents))


def _check_ks(k) -> list[int]:
    ks = [k] if isinstance(k, (int, np.integer)) and not isinstance(k, bool) else list(k)
    for value in ks:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"k must be a positive integer or a list of them, got {k!r}")
    if not ks:
        raise ValueError("k is empty: give at least one rank (e.g. k=1)")
    return sorted(set(int(v) for v in ks))


def _check_measures(measures) -> list[str]:
    from ..measures import MEASURES

    names = [measures] if isinstance(measures, str) else list(measures)
    for name in names:
        if name not in MEASURES:
            raise ValueError(f"unknown measure {name!r}; choose from {', '.join(MEASURES)}")
    if not names:
        raise ValueError("measures is empty")
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class Request:
    """How every point of a sweep is computed (the arguments of :func:`precise_kpca.measures.measure`)."""

    digits: int = 10
    backend: str = "auto"
    dps: int | None = None
    tau: float = 1e-6
    median: str = "full"
    aggregate: str = "mean"
    guarantee: str = "rigorous"

    def check(self, X: np.ndarray, names: list[str], ks: list[int]) -> None:
        """Every option checked as :func:`precise_kpca.measures.measure` would check it, before any point runs."""
        from ..backends import get_backend
        from ..measures.certified import BACKENDS, _check_k_within_rank, _check_options
        from ..numerics.geometry import check_median

        if self.backend not in BACKENDS or not isinstance(self.backend, str):
            raise ValueError(f"unknown backend {self.backend!r}; choose one of {BACKENDS}")
        for name in names:
            _check_options(name, ks[0], self.digits, self.aggregate, self.tau, self.backend, self.guarantee)
            if self.backend == "arb" and name != "metric":
                raise ValueError(f"backend='arb' (rigorous balls) is available for the metric measure only, not {name!r}")
        check_median(self.median)
        if self.backend in AGREEMENT_BACKENDS:
            get_backend(self.backend, self.dps)
        elif self.dps is not None:
            raise ValueError(f"dps applies to backend='mp' (or 'float64') only, not backend={self.backend!r}")
        if any(name in RANKED_MEASURES for name in names):
            _check_k_within_rank(X, max(ks), next(n for n in names if n in RANKED_MEASURES))

    def key(self, data_key: str, name: str, rank: int, sigma: str, backend: str, digits: int) -> PointKey:
        """The store key of one point (``backend``/``digits``: this request's, or the naive overlay's)."""
        naive = backend == NAIVE_BACKEND
        guarantee = "none" if naive else "heuristic" if backend in AGREEMENT_BACKENDS else self.guarantee
        return PointKey(data_key, name, rank, sigma, backend, digits, 0 if naive or self.dps is None else self.dps,
                        repr(float(self.tau)) if name in RANKED_MEASURES else "", self.median,
                        self.aggregate if name == "eigenprojection" else "", guarantee)


def sweep_tasks(
    X: np.ndarray, log2_sigmas, *, measures=DEFAULT_MEASURES, k=1, digits=10, backend="auto", naive_overlay=False,
    data_key: str, request: Request | None = None,
) -> list[PointTask]:
    """Every point of a sweep, certified points first, then the float64-naive overlay; every argument is checked
    first (ValueError naming it; :class:`~precise_kpca.errors.ResourceLimitExceeded` beyond the limits).

    ``request`` carries the other options of the measures (dps, τ, median, aggregate, guarantee); ``digits`` and
    ``backend`` override its own.
    """
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or digits < 1:
        raise ValueError(f"digits must be a positive integer, got {digits!r}")
    request = Request(**dict((request or Request()).__dict__, digits=int(digits), backend=backend))
    names, ks, exponents = _check_measures(measures), _check_ks(k), _check_exponents(log2_sigmas)
    if backend == NAIVE_BACKEND:
        naive_overlay = False
    runs = [(backend, int(digits))] + ([(NAIVE_BACKEND, NAIVE_DIGITS)] if naive_overlay else [])
    points = len(runs) * len(exponents) * sum(len(ks) if name in RANKED_MEASURES else 1 for name in names)
    limits.check_points(points, parameter="the sweep (measures x k x log2_sigmas)")
    request.check(X, names, ks)
    tasks = []
    for requested_backend, requested_digits in runs:
        for name in names:
            for rank in ks if name in RANKED_MEASURES else [NO_K]:
                for p in exponents:
                    key = request.key(data_key, name, rank, str(Fraction(2) ** p), requested_backend, requested_digits)
                    tasks.append(PointTask(key, p))
    return tasks


@dataclass
class SweepStats:
    """Counts and times of one sweep (:func:`run_sweep`).

    Attributes
    ----------
    computed : int
        Points this sweep computed.
    reused : int
        Points found in the store: before the sweep, or landed meanwhile from a concurrent sweep.
    wall_seconds, point_seconds : float
        Wall time of the computation; the sum of the computed points' own times.
    executor : str
    """

    computed: int = 0
    reused: int = 0
    wall_seconds: float = 0.0
    point_seconds: float = 0.0
    executor: str = ""
    _start: float = field(default_factory=time.perf_counter, repr=False)


def run_sweep(db: ResultsStore, shared: dict[str, np.ndarray], tasks: list[tuple[str, PointTask]], *, executor=None,
              progress=True, retry_uncertified: bool = False, desc: str = "points", confirm=None) -> SweepStats:
    """Compute every point of ``tasks`` not reusable from the store, storing each as it completes.

    Each bundle of points is claimed in the store just before it is handed to the executor; points another live
    sweep has claimed are skipped, then waited for (and taken over if that sweep dies), so concurrent sweeps on
    one store compute every point once. The sweep's claims are released and the log checkpointed into the
    ``.sqlite`` file however it ends.

    Parameters
    ----------
    db : ResultsStore
    shared : dict of str to ndarray
        The data sets, by name (shipped to each worker once).
    tasks : list of (str, PointTask)
    executor : str, Executor or None
        See :func:`precise_kpca.studies.executors.get_executor`.
    progress : bool or "always"
    retry_uncertified : bool
        Recompute stored points short of the request (see :func:`precise_kpca.studies.store.reusable`).
    confirm : callable, optional
        Shown the :class:`precise_kpca.studies.cost.Estimate` of the points to compute (routes, predicted time)
        before any is; a false answer raises :class:`precise_kpca.studies.cost.Declined`.

    Returns
    -------
    SweepStats
    """
    runner = get_executor(executor)
    stats = SweepStats(executor=runner.name)
    done = db.existing((task.key for _, task in tasks), retry_uncertified=retry_uncertified)
    waiting = [t for t in tasks if t[1].key not in done]
    stats.reused = len(tasks) - len(waiting)
    if not waiting:
        return stats
    if confirm is not None:
        from .cost import ask

        ask(confirm, waiting, shared, stats.reused, runner, progress)
    sizes = {name: X.shape[0] for name, X in shared.items()}
    states = {name: data_state(check_data(X)) for name, X in shared.items()}  # one per data set, shipped once
    run_id = db.start_run(runner.name, sorted({name for name, _ in waiting}))
    try:
        with _progress_bar(len(waiting), progress, desc) as bar:
            while waiting:
                taken: list = []
                claimed = _claimed_bundles(db, run_id, bundle_tasks(waiting, sizes), taken, stats, bar,
                                           retry_uncertified)
                for bundle, records in runner.run(compute_bundle, states, claimed):
                    for (_, task), record in zip(bundle, records):
                        db.put(task.key, record)
                        stats.point_seconds += record["seconds"]
                    stats.computed += len(bundle)
                    db.update_run(run_id, stats.computed, stats.point_seconds, time.perf_counter() - stats._start)
                    bar.set_postfix_str(bundle[0][0], refresh=False)
                    bar.update(len(bundle))
                waiting = _wait_for_others(db, taken, stats, bar, retry_uncertified)
    finally:
        stats.wall_seconds = time.perf_counter() - stats._start
        db.finish_run(run_id)
    return stats


def _claimed_bundles(db, run_id, bundles, taken, stats, bar, retry_uncertified):
    """Yield each bundle restricted to the points this sweep claims now; note the others (done, or taken)."""
    for bundle in bundles:
        status = db.claim([task.key for _, task in bundle], run_id, retry_uncertified=retry_uncertified)
        landed = sum(1 for v in status.values() if v == "done")
        stats.reused += landed
        bar.update(landed)
        taken.extend(t for t in bundle if status[t[1].key] == "taken")
        mine = Bundle(t for t in bundle if status[t[1].key] == "mine")
        if mine:
            yield mine


def _wait_for_others(db, taken, stats, bar, retry_uncertified) -> list:
    """Wait until the points other sweeps claimed land; return those whose claims were abandoned (to compute)."""
    while taken:
        landed = db.existing((task.key for _, task in taken), retry_uncertified=retry_uncertified)
        stats.reused += len(landed)
        bar.update(len(landed))
        taken = [t for t in taken if t[1].key not in landed]
        free = [t for t in taken if not db.claimed_by_other(t[1].key)]
        if free:
            return free
        if taken:
            time.sleep(POLL_SECONDS)
    return []


@contextmanager
def _opened_store(store):
    """The :class:`ResultsStore` that ``store`` stands for (:func:`convergence_curve`'s argument: a store, a path,
    None for the default one, False for one in memory), closed on leaving when it was opened here."""
    if isinstance(store, ResultsStore):
        yield store
        return
    db = ResultsStore(":memory:") if store is False else ResultsStore(store)
    try:
        yield db
    finally:
        db.close()


def _progress_bar(total: int, progress, desc: str = "points"):
    from ..extras import progress_bar_class

    tqdm = progress_bar_class()
    disable = not progress or (progress != "always" and not sys.stderr.isatty())
    return tqdm(total=total, unit="pt", desc=desc, file=sys.stderr, disable=disable, dynamic_ncols=True)


def convergence_curve(
    X, log2_sigmas: Iterable[int], *, measures: Sequence[str] | str = DEFAULT_MEASURES, k: int | Sequence[int] = 1,
    digits: int = 10, backend: str = "auto", store=None, executor=None, progress=True, naive_overlay: bool = False,
    name: str = "data", dps: int | None = None, tau: float = 1e-6, median: str = "full", aggregate: str = "mean",
    guarantee: str = "rigorous", retry_uncertified: bool = False, confirm=None,
) -> pd.DataFrame:
    """Normalized convergence measures at σ = 2**p for each p, every point with its certified digits.

    Parameters
    ----------
    X : array_like, shape (N, d)
        Data (float64, taken as exact).
    log2_sigmas : iterable of int
        Exponents p; σ = 2**p is exact, however large.
    measures : str or sequence of str
        Names from :data:`precise_kpca.measures.MEASURES`.
    k : int or sequence of int
        Ranks for the measures that take one (eigenprojection, pc); one curve per k.
    digits : int
        Certified significant digits requested per point.
    backend : str
        Passed to :func:`precise_kpca.measures.measure` (``"auto"`` picks and escalates precision).
    store : ResultsStore, path-like, None or False
        Where points are kept: None is the default store (``$PRECISE_KPCA_STORE`` or the user cache), a path
        opens (or creates) a store there, False keeps them in memory only. Stored points are not recomputed.
    executor : str, Executor or None
        See :func:`precise_kpca.studies.executors.get_executor`; None is a local process pool.
    progress : bool or "always"
        Progress bar with ETA on stderr: True shows it when stderr is a terminal, "always" forces it.
    naive_overlay : bool
        Also compute every point with ``backend="float64-naive"`` (the paper's computation, no certified
        digits), to show where float64 breaks.
    name : str
        Data-set name recorded in the store.
    confirm : callable, optional
        Called with the :class:`precise_kpca.studies.cost.Estimate` of the points to compute before any is; a false
        answer raises :class:`precise_kpca.studies.cost.Declined`.
    dps, tau, median, aggregate, guarantee
        As in :func:`precise_kpca.measures.measure` (``dps`` with ``backend="mp"``); part of every point's key.
    retry_uncertified : bool
        Recompute stored points short of the request (see :func:`precise_kpca.studies.store.reusable`).

    Returns
    -------
    pandas.DataFrame
        One row per point, ordered by requested backend (certified first), measure, k, log2_sigma, with the
        columns of :data:`COLUMNS` (described there). ``frame.attrs`` holds ``computed`` and ``reused`` (points
        taken from the store) counts.

    Raises
    ------
    ValueError
        Bad arguments or data, before any point runs (ResourceLimitExceeded beyond :mod:`precise_kpca.limits`).
    TaskError
        A point failed (points finished before it are stored); WorkerLost when a worker process died.
    StoreError
        The store cannot be used (StoreCorrupted: damaged rows or pages, named).
    """
    X = check_data(X)
    request = Request(digits=digits, backend=backend, dps=dps, tau=tau, median=median, aggregate=aggregate,
                      guarantee=guarantee)
    tasks = sweep_tasks(X, log2_sigmas, measures=measures, k=k, digits=digits, backend=backend,
                        naive_overlay=naive_overlay, data_key=data_hash(X), request=request)
    runner = get_executor(executor)
    with _opened_store(store) as db:
        db.register_data(X, name)
        stats = run_sweep(db, {name: X}, [(name, task) for task in tasks], executor=runner, progress=progress,
                          retry_uncertified=retry_uncertified, confirm=confirm)
        frame = _curve_frame(db.frame([task.key for task in tasks]))
    frame.attrs.update(computed=stats.computed, reused=stats.reused)
    return frame


def _curve_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Public column order; rows stay in task order (backend run, measure, k, log2_sigma)."""
    return frame.assign(log2_sigma=frame["log2_sigma"].astype(int))[COLUMNS].reset_index(drop=True)
