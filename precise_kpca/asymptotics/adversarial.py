"""Adversarial search over point configurations for the largest constants of Theorems 2 and 3.

Theorem 2: maximize C(σ) = dissonance/(ρ/σ)² over the coordinates of N points (Nelder–Mead from random
starts). The objective is the *certified measure* on the ``mp`` backend, which takes the maximum over all pairs
(it does not assume the diameter pair, unlike the closed form) and certifies by agreement of two precisions;
ρ² comes from exact squared distances. ``lim C`` is probed at σ = 2^30 (C(2^30) differs from the limit by
about 5ρ²/384·2^−40).

Theorem 3: maximize the limits σ²×(Eq. 18) and σ²×EigenDist (k = 1) divided by ρ², from the first-order
float64 path. Two explicit families show that no data-independent constant exists (:func:`two_shells`,
:func:`near_degenerate`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import flint
import mpmath
import numpy as np
from scipy.optimize import minimize

from ..errors import InsufficientPrecision
from ..measures import measure
from ..numerics.exact_geometry import ExactEccentricity
from .first_order import FirstOrder

LIMIT_LOG2_SIGMA = 20


def excess_over_one_eighth(X: np.ndarray, log2_sigma: int, digits: int = 24) -> float:
    """C(2^p) − 1/8, from the mp-backend metric measure (all pairs, certified by agreement) and exact ρ².

    The difference is formed in 160-bit arithmetic from ≥ ``digits`` certified digits of the dissonance, so
    its sign is certain whenever |C − 1/8| > 10^−digits (true for σ ≤ 2^20 and ρ ≥ 1: 1/8 − C ≈ 5ρ²/384σ²).
    """
    m = measure(X, "metric", f"2**{log2_sigma}", backend="mp", dps=digits + 16, digits=digits)
    if m.certified_digits < digits:
        raise InsufficientPrecision(f"metric measure certified only {m.certified_digits} digits at σ = 2^{log2_sigma}")
    ctx = mpmath.MPContext()
    ctx.prec = 160
    with flint.ctx.workprec(160):
        man, exp = ExactEccentricity(X).rho_squared().mid().man_exp()
    rho2 = ctx.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))
    c = ctx.mpf(m.value) / (rho2 * ctx.ldexp(1, -2 * log2_sigma))
    return float(c - ctx.mpf(1) / 8)


def theorem3_ratios(X: np.ndarray) -> tuple[float, float]:
    """(lim σ²·Eq. 18, lim σ²·EigenDist k=1) divided by ρ², float64 first-order path."""
    first = FirstOrder(X)
    rho2 = ExactEccentricity(X).rho() ** 2
    return first.eigenvalue_coefficient() / rho2, first.angle_coefficient(0, 1) / first.d_x2 / rho2


@dataclass(frozen=True)
class SearchResult:
    """Best configuration of a search: objective value, points, evaluations spent."""

    objective: str
    best: float
    points: np.ndarray
    evaluations: int


def search(objective, n: int, d: int, *, starts: int = 4, iterations: int = 60, seed: int = 0) -> SearchResult:
    """Maximize ``objective(X)`` over N×d configurations by Nelder–Mead from random Gaussian starts.

    Configurations the objective rejects (duplicate rows, zero median: ``ValueError``) score −∞.
    """
    rng = np.random.default_rng(seed)
    best, best_x, count = -math.inf, None, 0

    def negative(flat):
        nonlocal best, best_x, count
        count += 1
        X = flat.reshape(n, d)
        try:
            value = objective(X)
        except ValueError:
            return math.inf
        if value > best:
            best, best_x = value, X.copy()
        return -value

    for _ in range(starts):
        minimize(negative, rng.standard_normal(n * d), method="Nelder-Mead",
                 options=dict(maxfev=iterations, xatol=1e-9, fatol=1e-14))
    return SearchResult(getattr(objective, "__name__", "objective"), best, best_x, count)


def metric_objective(log2_sigma: int):
    """The objective C(2^p) − 1/8 for :func:`search` (named for reports)."""
    def objective(X):
        return excess_over_one_eighth(X, log2_sigma)
    objective.__name__ = f"C(2^{log2_sigma}) - 1/8"
    return objective


def two_shells(n: int, d: int, *, inner: float = 0.0, seed: int = 0) -> np.ndarray:
    """Half the points on the unit sphere of R^d, half at radius ``inner`` (random directions).

    The squared norms |x_i|² vary between the halves while every direction carries variance ~1/d, so the
    null-block shift of Theorem 3 (the part of D∘D along |x|² − mean, orthogonal to the linear span) grows
    like d relative to ρ² λ_1: lim σ²·Eq. 18 / ρ² is unbounded in the dimension.
    """
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((n, d))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    radii = np.where(np.arange(n) % 2 == 0, 1.0, inner)
    return directions * radii[:, None] + (inner == 0.0) * 1e-3 * rng.standard_normal((n, d))


def near_degenerate(n: int, gap: float, *, seed: int = 0) -> np.ndarray:
    """A planar Gaussian cloud whitened, then stretched so that λ_1/λ_2 − 1 = ``gap`` exactly up to rounding.

    The top eigenprojection's first-order coefficient has (λ_1 − λ_2) in its denominator: the eigenprojection
    constant grows like 1/gap at fixed ρ (Section VI's "repeated eigenvalues", approached continuously).
    """
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 2))
    Z -= Z.mean(axis=0)
    values, vectors = np.linalg.eigh(Z.T @ Z)
    white = Z @ vectors / np.sqrt(values)
    return white * np.array([1.0, math.sqrt(1.0 + gap)])
