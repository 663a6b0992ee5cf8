"""Cost model of a sweep: the route each point will take and its predicted seconds, before anything heavy runs.

The route of a certified point is the first step of its plan (:func:`precise_kpca.measures.plan`: a float64
probe, no enclosure); float64-naive points are the ``naive`` route. The seconds come from a cost law per route
and σ-regime,

    t = c₀ + c₂·N²d + c₃·N³    (c ≥ 0: overhead, the Gram's distances, the eigensolver and its certificate),

fitted by non-negative least squares (``scipy.optimize.nnls``, on the times themselves so that the costly points
weigh as they do in a sum) on the calibration table ``calibration.csv`` beside this module: measured point times of
a real sweep on this machine class (its first line names the command that produced it,
``benchmarks/calibrate_cost.py``, the machine and the date; rerun it to recalibrate). The regime is the paper's
grid (log2 σ ≤ :data:`PAPER_REGIME_MAX`) or the extension beyond it, fitted apart where the table has enough
points of a route in both. An estimate is a forecast (``guarantee="none"``), printed so that a long run is never
silent, not a bound.

Hand-written around ``nnls``: the model is three coefficients per route on a few dozen timings. A power law in N
fitted on small N would see the overhead, not the N³ that dominates a large set.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

CALIBRATION = Path(__file__).with_name("calibration.csv")
PAPER_REGIME_MAX = 8
"""Largest log2 σ of the paper's grid: beyond it the structured route takes over from the Gram enclosures."""
MIN_REGIME_POINTS = 4
"""Fewest calibration points of a route in one regime for a fit of its own (else the route's fit over both)."""

NAIVE_ROUTE = "naive"


def read_calibration(path=CALIBRATION) -> tuple[pd.DataFrame, str]:
    """The calibration table and its source line (the ``# source:`` comment heading the file).

    Returns
    -------
    (pandas.DataFrame, str)
        Columns ``route, measure, n, d, log2_sigma, seconds``; the source text.

    Raises
    ------
    ValueError
        A missing column or a non-positive time.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        first = handle.readline()
    source = first[1:].strip() if first.startswith("#") else "unknown"
    table = pd.read_csv(path, comment="#")
    missing = {"route", "measure", "n", "d", "log2_sigma", "seconds"} - set(table.columns)
    if missing:
        raise ValueError(f"calibration table {path} lacks the columns {sorted(missing)}")
    if not (table["seconds"] > 0).all():
        raise ValueError(f"calibration table {path} has non-positive times (rows "
                         f"{table.index[table['seconds'] <= 0].tolist()})")
    return table, source


def _fit(rows: pd.DataFrame) -> tuple[float, float, float]:
    """(c₀, c₂, c₃) ≥ 0 of t = c₀ + c₂·N²d + c₃·N³ by non-negative least squares (columns scaled to unit maximum)."""
    from scipy.optimize import nnls

    n, d = rows["n"].to_numpy(dtype=float), rows["d"].to_numpy(dtype=float)
    features = np.column_stack([np.ones(len(rows)), n * n * d, n**3])
    scale = features.max(axis=0)
    coef, _ = nnls(features / scale, rows["seconds"].to_numpy(dtype=float))
    return tuple(float(c) for c in coef / scale)


def regime(log2_sigma: int) -> str:
    """``"paper"`` (log2 σ ≤ :data:`PAPER_REGIME_MAX`) or ``"extended"``."""
    return "paper" if log2_sigma <= PAPER_REGIME_MAX else "extended"


@dataclass(frozen=True)
class CostModel:
    """Fitted per-route power laws (see the module docstring).

    Attributes
    ----------
    fits : dict
        ``(route, regime)`` or ``(route, None)`` (both regimes) → (c₀, c₂, c₃).
    source : str
        Where the calibration came from.
    """

    fits: dict
    source: str

    def seconds(self, route: str, n: int, d: int, log2_sigma: int) -> float:
        """Predicted seconds of one point (a route missing from the table: the costliest fitted route's law)."""
        coef = self.fits.get((route, regime(log2_sigma))) or self.fits.get((route, None))
        if coef is None:
            return max(self.seconds(r, n, d, log2_sigma) for r, reg in self.fits if reg is None)
        c0, c2, c3 = coef
        return c0 + c2 * n * n * d + c3 * n**3


def fit_cost_model(table: pd.DataFrame, source: str = "") -> CostModel:
    """Fit :class:`CostModel` on a calibration table (see :func:`read_calibration`).

    Raises
    ------
    ValueError
        An empty table.
    """
    if table.empty:
        raise ValueError("the calibration table is empty")
    fits = {}
    table = table.assign(regime=table["log2_sigma"].map(regime))
    for route, rows in table.groupby("route"):
        fits[(route, None)] = _fit(rows)
        for name, part in rows.groupby("regime"):
            if len(part) >= MIN_REGIME_POINTS and part["n"].nunique() >= 2:
                fits[(route, name)] = _fit(part)
    return CostModel(fits, source)


@lru_cache(maxsize=1)
def default_model() -> CostModel:
    """The model fitted on the package's calibration table."""
    return fit_cost_model(*read_calibration())


@dataclass
class Estimate:
    """What a sweep will compute and how long it should take.

    Attributes
    ----------
    points, reused : int
        Points to compute, and points the store already holds.
    by_route : dict of str to [int, float]
        Route → [points, predicted serial seconds].
    workers : int
        Workers the executor runs in parallel.
    source : str
        The cost model's calibration.
    """

    points: int
    reused: int
    workers: int
    source: str
    by_route: dict = field(default_factory=dict)

    @property
    def serial_seconds(self) -> float:
        return sum(seconds for _, seconds in self.by_route.values())

    @property
    def wall_seconds(self) -> float:
        """Serial time over the workers (bundles are independent; a forecast, not a bound)."""
        return self.serial_seconds / max(1, min(self.workers, self.points or 1))

    def describe(self) -> str:
        lines = [f"plan: {self.points} points to compute, {self.reused} reused from the store"]
        for route, (points, seconds) in sorted(self.by_route.items(), key=lambda item: -item[1][1]):
            lines.append(f"  {route:<22}{points:>7} points  ~{_duration(seconds)} serial")
        lines.append(f"estimated {_duration(self.serial_seconds)} serial, ~{_duration(self.wall_seconds)} wall on "
                     f"{self.workers} worker(s) (forecast from the cost model; calibration: {self.source})")
        return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def point_route(X: np.ndarray, task) -> str:
    """The route a point will take first: ``naive`` for float64-naive requests, the backend's name for another
    explicit backend (:func:`precise_kpca.studies.curves.sweep_tasks` has refused unknown ones), else (``auto``)
    its plan's first engine."""
    from fractions import Fraction

    from ..measures import plan
    from .store import NAIVE_BACKEND

    key = task.key
    if key.requested_backend == NAIVE_BACKEND:
        return NAIVE_ROUTE
    if key.requested_backend != "auto":
        return key.requested_backend
    return plan(X, key.measure, Fraction(key.sigma), k=task.k or 1, digits=key.digits).steps[0].engine


def estimate(pending, data: dict, *, reused: int, workers: int, model: CostModel | None = None,
             progress=False) -> Estimate:
    """Route and predicted seconds of every pending point.

    Parameters
    ----------
    pending : list of (str, PointTask)
        Data-set name and task (:func:`precise_kpca.studies.curves.sweep_tasks`).
    data : dict of str to numpy.ndarray
        Each data set's rows, shape (N, d).
    reused : int
        Points the store already holds (reported, not costed).
    workers : int
    model : CostModel, optional
        Default: :func:`default_model`.
    progress : bool or "always"
        Progress bar of the planning probes on stderr.

    Returns
    -------
    Estimate
    """
    import sys

    from ..extras import progress_bar_class

    tqdm = progress_bar_class()

    model = model or default_model()
    result = Estimate(len(pending), reused, workers, model.source)
    disable = not progress or (progress != "always" and not sys.stderr.isatty())
    for name, task in tqdm(pending, unit="pt", desc="planning", file=sys.stderr, disable=disable, dynamic_ncols=True):
        X = data[name]
        route = point_route(X, task)
        entry = result.by_route.setdefault(route, [0, 0.0])
        entry[0] += 1
        entry[1] += model.seconds(route, X.shape[0], X.shape[1], task.log2_sigma)
    return result


def workers_of(executor) -> int:
    """Parallel workers of an executor: the pool's processes, 1 serially, a Dask cluster's threads (asked of its
    scheduler; 1, the cautious guess for a forecast, when it does not answer)."""
    from .executors import DaskExecutor, LocalExecutor

    if isinstance(executor, LocalExecutor):
        return executor.workers
    if not isinstance(executor, DaskExecutor):
        return 1
    from dask.distributed import Client

    try:
        with Client(executor.address, timeout=executor.timeout, set_as_default=False) as client:
            return max(1, sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()))
    except OSError:
        return 1


class Declined(Exception):
    """The user declined a run after reading its plan (nothing was computed)."""


def ask(confirm, pending, data: dict, reused: int, executor, progress=False) -> Estimate:
    """Estimate the pending points and put the estimate to ``confirm``.

    Raises
    ------
    Declined
        ``confirm`` answered false.
    """
    found = estimate(pending, data, reused=reused, workers=workers_of(executor), progress=progress)
    if not confirm(found):
        raise Declined(f"declined after the plan: {found.points} points, ~{_duration(found.wall_seconds)} wall")
    return found
