"""Measures with certified digits: :func:`measure`, the one entry point, and its named shortcuts.

``guarantee="rigorous"`` (the default) returns only enclosures (:mod:`.routes` decides the route; the reported
digits are derived from the interval); ``guarantee="heuristic"`` also accepts, as a last resort, the agreement of
two evaluations at different precisions (labelled ``guarantee="heuristic"``); an explicit ``backend="float64"`` or
``"mp"`` asks for that evaluation and its agreement check; ``backend="float64-naive"`` is the paper's float64
computation, unchecked (``guarantee="none"``).
"""
from __future__ import annotations

import time

import numpy as np

from .. import limits
from ..backends import MPBackend, get_backend
from ..numerics.linear_exact import exact_linear
from ..numerics.data import DataState
from ..validation import check_data, parse_sigma, rescaled
from . import results, routes
from .agreement import ESCALATION_DPS, by_agreement, evaluate
from .measurement import Measurement, Route

MEASURES = ("metric", "eigenvalue", "eigenprojection", "pc", "cka")
AGGREGATES = ("mean", "max")
BACKENDS = ("auto", "arb", "float64", "mp", "float64-naive")


def measure(X, name: str, sigma, *, k: int = 1, digits: int = 10, backend="auto", dps=None, tau=1e-6,
            aggregate="mean", median="full", guarantee="rigorous") -> Measurement:
    """Evaluate a convergence measure at bandwidth σ with certified digits.

    Parameters
    ----------
    X : array_like, shape (N, d), or DataState
        The data, or their :class:`~precise_kpca.numerics.data.DataState` (a study holds one per data set).
    name : {"metric", "eigenvalue", "eigenprojection", "pc", "cka"}
        Eq. 17, Eq. 18, Algorithm 1 / Eq. 19, Theorem 3 principal components, 1 − CKA(K_G, K_lin).
    sigma : int, float, str or Fraction
        Standardized bandwidth (σ_X = d_X·σ).
    k : int
        Top eigenvalues for ``eigenprojection`` and ``pc``.
    digits : int
        Significant digits to certify.
    backend : {"auto", "arb", "float64", "mp", "float64-naive"}
        ``auto``: the route table (:mod:`precise_kpca.measures.routes`); ``arb`` is the metric's rigorous route by
        name; ``float64``/``mp`` evaluate as asked and check against a second evaluation at higher precision
        (heuristic); ``float64-naive`` is the paper's computation, unchecked.
    dps : int, optional
        Working precision for ``backend="mp"``.
    guarantee : {"rigorous", "heuristic"}
        ``rigorous``: enclosures only; when no route reaches ``digits`` the best enclosure is returned with
        ``short`` True and a warning, and a value no route can give is NaN with its ``reason``. ``heuristic``: the
        agreement of two precisions is the last resort.

    Returns
    -------
    Measurement
        ``lower``/``upper`` hold the interval, ``guarantee`` what it is, ``certified_digits`` derived from it.
    """
    if isinstance(X, DataState):
        X = X.X  # already validated: its own array finds its state without hashing
    X = rescaled(check_data(X))  # every measure is invariant under X -> X·2^s: data near 1e307 or 1e-310 too
    exact_sigma = parse_sigma(sigma)
    _check_options(name, k, digits, aggregate, tau, backend, guarantee)
    start = time.perf_counter()
    options = dict(k=k, tau=tau, aggregate=aggregate, median=median)
    k_field = k if name in ("eigenprojection", "pc") else None
    if k_field is not None:
        _check_k_within_rank(X, k, name)
    limits.check_heuristic(X.shape[0], name, backend=backend, guarantee=guarantee, digits=digits, dps=dps)
    if backend == "float64-naive":
        b = get_backend("float64-naive")
        value, at_zero, _ = evaluate(X, name, exact_sigma, b, **options)
        return results.unchecked(name, exact_sigma, k_field, value=value, at_zero=at_zero, start=start,
                                 method="uncertified: the paper's float64 computation (exp, then center)",
                                 route=Route("naive", "none: the paper's float64 computation (exp, then center)"),
                                 backend=b.name, dps=b.dps)
    if backend == "arb" and name != "metric":
        raise ValueError(f"backend='arb' (rigorous balls) is available for the metric measure only, not {name!r}")
    if backend in ("auto", "arb"):
        the_plan = routes.plan(X, name, exact_sigma, k=k, digits=digits, guarantee=guarantee, tau=tau, median=median)
        return routes.run(X, the_plan, tau=tau, aggregate=aggregate, median=median, start=start)
    first = get_backend(backend, dps)
    second = MPBackend(max(first.dps, 15) + ESCALATION_DPS)
    return by_agreement(X, name, exact_sigma, first, second, digits, options, k_field, start, escalate=False)


def plan(X, name: str, sigma, *, k: int = 1, digits: int = 10, tau=1e-6, median="full",
         guarantee="rigorous") -> routes.Plan:
    """The routes :func:`measure` would take (see :class:`precise_kpca.measures.routes.Plan`), without running."""
    X = rescaled(check_data(X))
    _check_options(name, k, digits, "mean", tau, "auto", guarantee)
    return routes.plan(X, name, parse_sigma(sigma), k=k, digits=digits, guarantee=guarantee, tau=tau, median=median)


def _check_k_within_rank(X: np.ndarray, k: int, name: str) -> None:
    """ValueError before any heavy work when k exceeds the exact rank of the centered linear Gram."""
    exact = exact_linear(X)
    if k > exact.rank:
        raise ValueError(f"k={k} exceeds the rank {exact.rank} of the centered linear Gram (N={exact.n}, "
                         f"d={exact.d}): {name} has no linear counterpart beyond the rank")


def _check_options(name, k, digits, aggregate, tau, backend, guarantee):
    if name not in MEASURES:
        raise ValueError(f"unknown measure {name!r}; choose one of {MEASURES}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer (top eigenvalues), got {k!r}")
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    limits.check_digits(int(digits))
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    if not 0 < tau < 1:
        raise ValueError(f"tau must be in (0, 1), got {tau!r}")
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
    if guarantee not in routes.GUARANTEES_ASKED:
        raise ValueError(f"guarantee must be one of {routes.GUARANTEES_ASKED}, got {guarantee!r}")


def metric_dissonance(X, sigma, *, backend="auto", digits=15, **kwargs) -> Measurement:
    """Relative RKHS metric dissonance (Eq. 17), certified. See :func:`measure`."""
    return measure(X, "metric", sigma, backend=backend, digits=digits, **kwargs)


def eigenvalue_difference(X, sigma, *, backend="auto", digits=15, **kwargs) -> Measurement:
    """‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ (Eq. 18), certified. See :func:`measure`."""
    return measure(X, "eigenvalue", sigma, backend=backend, digits=digits, **kwargs)


def eigenprojection_dissonance(X, sigma, *, k=1, tau=1e-6, aggregate="mean", backend="auto", digits=15,
                               **kwargs) -> Measurement:
    """EigenDist of Algorithm 1 (radians) over the top-k linear eigenvalues, certified. See :func:`measure`."""
    return measure(X, "eigenprojection", sigma, k=k, tau=tau, aggregate=aggregate, backend=backend,
                   digits=digits, **kwargs)
