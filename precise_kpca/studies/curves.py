"""Convergence curves: the paper's Figs 3, 5, 6 and 8 over any range of log2 σ, each point certified.

A curve is a set of independent points (σ, measure, k), each computed by
:func:`precise_kpca.measures.measure`, stored in the results store as it completes, and read back from it
(so a rerun, or an interrupted sweep, computes only the missing points and those whose stored guarantee falls
short of the request, see :meth:`ResultsStore.existing`).

Each row carries the point's guarantee as data: ``guarantee``, ``route``, ``reason`` and the interval behind the
value as exact decimal text (:func:`exact_text`), so a CSV or Parquet reader gets the rigorous ends back exactly.
"""
from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from ..validation import check_data
from .executors import get_executor
from .store import NAIVE_BACKEND, NO_K, PointKey, ResultsStore

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
    "normalized_upper_text", "requested_backend", "digits", "route", "reason", "method",
]
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


def compute_point(X: np.ndarray, task: PointTask) -> dict:
    """Compute one point with :func:`precise_kpca.measures.measure` (runs in a worker; picklable in and out).

    Returns
    -------
    dict
        The record stored by :meth:`ResultsStore.put`.
    """
    from ..measures import measure

    key = task.key
    options = {"k": task.k or 1, "backend": key.requested_backend}
    if key.digits != NAIVE_DIGITS:
        options["digits"] = key.digits
    start = time.perf_counter()
    try:
        m = measure(X, key.measure, Fraction(key.sigma), **options)
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
    }


def _naive_failure(task: PointTask, reason: str, seconds: float) -> dict:
    """The record of an overlay point float64 cannot evaluate: NaN, guarantee none, the reason kept."""
    return {
        "log2_sigma": float(task.log2_sigma), "value": math.nan, "value_text": "nan", "normalized": math.nan,
        "normalized_text": "nan", "certified_digits": 0, "backend": NAIVE_BACKEND, "dps": 15,
        "method": "float64-naive (not computable)", "seconds": float(seconds), "lower_text": "", "upper_text": "",
        "normalized_lower_text": "", "normalized_upper_text": "", "guarantee": "none", "route": "", "reason": reason,
    }


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


def bundle_tasks(pending: list[tuple[str, PointTask]], sizes: dict[str, int]) -> list[list[tuple[str, PointTask]]]:
    """Group points by (data set, σ, requested backend) — the measures of one σ share its enclosures in one
    worker — expensive bundles first (naive last, then large N, then large σ) so that a pool finishes evenly."""
    bundles: dict[tuple, list] = {}
    for name, task in pending:
        bundles.setdefault((name, task.log2_sigma, task.key.requested_backend), []).append((name, task))
    return sorted(bundles.values(), key=lambda b: (b[0][1].key.requested_backend == NAIVE_BACKEND,
                                                    -sizes[b[0][0]], -b[0][1].log2_sigma))


def compute_bundle(shared: dict[str, np.ndarray], bundle: list[tuple[str, PointTask]]) -> list[dict]:
    """Every point of one bundle (see :func:`bundle_tasks`) in one worker, with the data sets in ``shared``."""
    return [compute_point(shared[name], task) for name, task in bundle]


def _check_exponents(log2_sigmas) -> list[int]:
    exponents = []
    for p in np.atleast_1d(np.asarray(log2_sigmas, dtype=object)).tolist():
        if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or p != int(p):
            raise ValueError(f"log2_sigmas must hold integers (σ = 2**p exactly), got {p!r}")
        exponents.append(int(p))
    if not exponents:
        raise ValueError("log2_sigmas is empty")
    return sorted(set(exponents))


def _check_ks(k) -> list[int]:
    ks = [k] if isinstance(k, (int, np.integer)) and not isinstance(k, bool) else list(k)
    for value in ks:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"k must be a positive integer or a list of them, got {k!r}")
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


def sweep_tasks(
    X: np.ndarray, log2_sigmas, *, measures=DEFAULT_MEASURES, k=1, digits=10, backend="auto", naive_overlay=False,
    data_key: str,
) -> list[PointTask]:
    """Every point of a sweep, certified points first, then the float64-naive overlay."""
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or digits < 1:
        raise ValueError(f"digits must be a positive integer, got {digits!r}")
    if backend == NAIVE_BACKEND:
        naive_overlay = False
    runs = [(backend, int(digits))] + ([(NAIVE_BACKEND, NAIVE_DIGITS)] if naive_overlay else [])
    ks = _check_ks(k)
    tasks = []
    for requested_backend, requested_digits in runs:
        for name in _check_measures(measures):
            for rank in ks if name in RANKED_MEASURES else [NO_K]:
                for p in _check_exponents(log2_sigmas):
                    sigma = str(Fraction(2) ** p)
                    key = PointKey(data_key, name, rank, sigma, requested_backend, requested_digits)
                    tasks.append(PointTask(key, p))
    return tasks


def _open_store(store) -> tuple[ResultsStore, bool]:
    if isinstance(store, ResultsStore):
        return store, False
    if store is False:
        return ResultsStore(":memory:"), True
    return ResultsStore(store), True


def _progress_bar(total: int, progress):
    from ..extras import progress_bar_class

    tqdm = progress_bar_class()
    disable = not progress or (progress != "always" and not sys.stderr.isatty())
    return tqdm(total=total, unit="pt", desc="points", file=sys.stderr, disable=disable, dynamic_ncols=True)


def convergence_curve(
    X,
    log2_sigmas: Iterable[int],
    *,
    measures: Sequence[str] | str = DEFAULT_MEASURES,
    k: int | Sequence[int] = 1,
    digits: int = 10,
    backend: str = "auto",
    store=None,
    executor=None,
    progress=True,
    naive_overlay: bool = False,
    name: str = "data",
    confirm=None,
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

    Returns
    -------
    pandas.DataFrame
        One row per point, ordered by requested backend (certified first), measure, k, log2_sigma; the columns
        of :data:`COLUMNS`: ``log2_sigma, sigma, measure, k, value, normalized, certified_digits, guarantee,
        backend, dps, seconds``; ``value_text, normalized_text`` and the interval ends ``lower_text,
        upper_text, normalized_lower_text, normalized_upper_text`` (exact decimal text, :func:`exact_text`;
        ``""`` where the measurement has no such end; ``value``/``normalized`` are NaN where outside the float64
        range); ``requested_backend, digits, route, reason, method``. ``guarantee`` is ``rigorous``,
        ``heuristic`` or ``none`` (``unknown`` for points stored before guarantees were recorded); ``sigma``
        is the exact σ as text (``"1/16"``); ``k`` is missing for measures without a rank; overlay rows have
        ``requested_backend == "float64-naive"``. ``frame.attrs`` holds ``computed`` and ``reused`` (points
        taken from the store) counts.

    Raises
    ------
    ValueError
        Bad arguments or data.
    TaskError
        A point failed (points finished before it are stored).
    """
    X = check_data(X)
    db, owned = _open_store(store)
    try:
        data_key = db.register_data(X, name)
        tasks = sweep_tasks(X, log2_sigmas, measures=measures, k=k, digits=digits, backend=backend,
                            naive_overlay=naive_overlay, data_key=data_key)
        done = db.existing(task.key for task in tasks)
        pending = [(name, task) for task in tasks if task.key not in done]
        runner = get_executor(executor)
        if confirm is not None and pending:
            from .cost import ask

            ask(confirm, pending, {name: X}, len(tasks) - len(pending), runner, progress)
        with _progress_bar(len(pending), progress) as bar:
            for bundle, records in runner.run(compute_bundle, {name: X}, bundle_tasks(
                    pending, {name: X.shape[0]})):
                for (_, task), record in zip(bundle, records):
                    db.put(task.key, record)
                bar.update(len(bundle))
        frame = _curve_frame(db.frame([task.key for task in tasks]))
    finally:
        if owned:
            db.close()
    frame.attrs.update(computed=len(pending), reused=len(tasks) - len(pending))
    return frame


def _curve_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Public column order; rows stay in task order (backend run, measure, k, log2_sigma)."""
    return frame.assign(log2_sigma=frame["log2_sigma"].astype(int))[COLUMNS].reset_index(drop=True)
