"""Theorem 1's constant: C(X) = sup_{σ ≥ ρ/2} (1 − CKA(K_G(σ), K_lin)) / (ρ/σ)², certified over the whole range,
and the search for data that make it large.

Guarantee. :func:`ratio_interval` is rigorous: ``measure(X, "cka", σ)`` encloses 1 − CKA (frobenius-enclosure
engine, exact data) and ρ² is an Arb ball from the exact squared distances, so the ratio's interval is a ball
quotient; its lower end is a certified *lower* bound on C(X). :func:`sup_bounds` certifies an *upper* bound on
the sup over the whole continuum σ ≥ ρ/2 as well, by branch and bound: every σ-range [σ_a, σ_b] gets one upper
end of 1 − CKA valid on all of it (:func:`~precise_kpca.measures.cka_enclosed.cka_upper_over`), times
σ_b²/ρ²; the range [σ_T, ∞) gets its σ_T²/ρ² multiple (the ratio's bound there increases with 1/σ²); ranges
whose bound exceeds the target are split. :func:`adversarial_search` is float64 and heuristic; what it finds is
handed back to :func:`ratio_interval`. proofs/theorem1 shows that no data-independent C exists (the family
:func:`unit_vectors_and_origins`), so C(X) is a property of each data set.

Hand-written: the measure and the ball arithmetic are the library's and python-flint's; this is bookkeeping.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from scipy.spatial.distance import pdist, squareform

from ..arith.rounding import float_down, float_up
from ..backends.base import as_fraction
from ..errors import InsufficientPrecision, InternalCheckFailed
from ..measures import measure
from ..measures.cka_enclosed import cka_upper_over
from ..measures.results import arb_ends
from ..numerics.exact_geometry import ExactEccentricity
from ..validation import check_data

GRID_STEPS = (1, Fraction(3, 2), 2, 3, 4, 8, 16)
"""σ / σ₀ on the grid, σ₀ the smallest dyadic ≥ ρ/2 (8 significant bits)."""
_BALL_PREC = 128


@dataclass(frozen=True)
class Ratio:
    """(1 − CKA)/(ρ/σ)² at one exact σ, enclosed.

    Attributes
    ----------
    sigma : Fraction
    lower, upper : float
        Outward-rounded ends (floats below/above the exact Arb ends).
    gap_lower, gap_upper : float
        Ends of 1 − CKA.
    guarantee : str
        The measurement's guarantee ("rigorous" unless the measure fell back).
    """

    sigma: Fraction
    lower: float
    upper: float
    gap_lower: float
    gap_upper: float
    guarantee: str


def unit_vectors_and_origins(m: int) -> np.ndarray:
    """X_m of proofs/theorem1: the m unit vectors of R^m and m copies of the origin, shape (2m, m)."""
    if m < 2:
        raise ValueError(f"m must be at least 2, got {m}")
    return np.vstack([np.eye(m), np.zeros((m, m))])


def sigma_grid(X) -> list[Fraction]:
    """Exact σ ≥ ρ/2: σ₀·GRID_STEPS, σ₀ the first 8-bit dyadic at or above ρ/2 (from the exact ρ² ball)."""
    with flint.ctx.workprec(_BALL_PREC):
        half = float_up(arb_ends(ExactEccentricity(check_data(X)).rho_squared().sqrt())[1]) / 2  # a float ≥ ρ/2
    e = math.frexp(half)[1] - 8
    sigma0 = Fraction(math.ceil(half / 2.0**e)) * Fraction(2) ** e
    return [sigma0 * Fraction(step) for step in GRID_STEPS]


def ratio_interval(X, sigma: Fraction, *, digits: int = 6) -> Ratio:
    """Rigorous enclosure of (1 − CKA)/(ρ/σ)² at σ > 0 (module docstring); Theorem 1's range σ ≥ ρ/2 is the
    caller's choice (:func:`sigma_grid`)."""
    X = check_data(X)
    m = measure(X, "cka", sigma, digits=digits)
    with flint.ctx.workprec(_BALL_PREC):
        rho2 = flint.arb(ExactEccentricity(X).rho_squared())
        s2 = flint.arb(flint.fmpq(sigma.numerator, sigma.denominator)) ** 2
        gap = _exact_ball(m.lower).union(_exact_ball(m.upper))
        lo, hi = arb_ends(gap * s2 / rho2)
    return Ratio(Fraction(sigma), float_down(lo), float_up(hi), float(m.lower), float(m.upper), m.guarantee)


def _exact_ball(v) -> flint.arb:
    """An exact binary mpf as an Arb ball of radius 0 (its mantissa fits the working precision)."""
    sign, man, exp, _ = v._mpf_
    return flint.arb(flint.fmpz(-int(man) if sign else int(man))) * flint.arb(2) ** int(exp)


@dataclass(frozen=True)
class SupBounds:
    """Certified bounds on C(X) = sup_{σ ≥ ρ/2} (1 − CKA)/(ρ/σ)² (:func:`sup_bounds`).

    Attributes
    ----------
    lower : float
        A certified value of the ratio at some σ ≥ ρ/2 (rounded down): C(X) ≥ lower.
    upper : float
        C(X) ≤ upper (rounded up).
    at_sigma : Fraction
        Where ``lower`` was found.
    evaluations : int
        σ-ranges bounded.
    converged : bool
        upper ≤ (1 + tolerance)·lower was reached within the evaluations allowed.
    """

    lower: float
    upper: float
    at_sigma: Fraction
    evaluations: int
    converged: bool


def sup_bounds(X, *, tolerance=Fraction(1, 4), max_evaluations: int = 200) -> SupBounds:
    """Branch and bound for C(X) over σ ≥ ρ/2 (module docstring): split the range with the largest bound until
    it is within (1 + tolerance) of the best certified value, or ``max_evaluations`` ranges were bounded.

    The ranges cover [σ_s, ∞) with σ_s a dyadic at or below ρ/2 (a superset: the bound stays an upper bound);
    values at σ < ρ/2 never enter ``lower``.
    """
    import heapq

    X = check_data(X)
    with flint.ctx.workprec(_BALL_PREC):
        rho2 = flint.arb(ExactEccentricity(X).rho_squared())
        rho2_lo, rho2_hi = (as_fraction(end) for end in arb_ends(rho2))
        half = float_down(arb_ends(rho2.sqrt())[0]) / 2  # a float at or below ρ/2
    e = math.frexp(half)[1] - 8
    start = Fraction(math.floor(half / 2.0**e)) * Fraction(2) ** e
    first = ratio_interval(X, sigma_grid(X)[0])  # the first dyadic ≥ ρ/2
    best, at, count = first.lower, first.sigma, 0
    if not 4 * first.sigma**2 >= rho2_hi:
        raise InternalCheckFailed(f"the grid's first σ = {first.sigma} lies below ρ/2")
    heap = []

    def bound(a, b):
        nonlocal best, at, count
        count += 1
        try:
            gap = as_fraction(cka_upper_over(X, a, b))
        except InsufficientPrecision:
            return math.inf
        if b != math.inf and 4 * b * b >= rho2_hi:  # b ≥ ρ/2: a certified value of the ratio there
            value = ratio_interval(X, b)
            if value.lower > best:
                best, at = value.lower, b
        return float_up(gap * (a if b == math.inf else b) ** 2 / rho2_lo)

    edges = [start * Fraction(k, 8) for k in range(8, 33)]
    for a, b in list(zip(edges, edges[1:])) + [(edges[-1], math.inf)]:
        heapq.heappush(heap, (-bound(a, b), a, b))
    while count < max_evaluations and -heap[0][0] > (1 + tolerance) * best:
        _, a, b = heapq.heappop(heap)
        middle = 2 * a if b == math.inf else (a + b) / 2
        for piece in ((a, middle), (middle, b)):
            heapq.heappush(heap, (-bound(*piece), *piece))
    upper = -heap[0][0]
    return SupBounds(best, upper, at, count, upper <= (1 + tolerance) * best)




# -- heuristic search ------------------------------------------------------------------------------------------
def float_ratio(X: np.ndarray, s: float) -> float:
    """(1 − CKA)/(ρ/σ)² in float64 at ρ/σ = 2s, i.e. σ_X = diam/(2s) (d_X cancels); heuristic."""
    D = squareform(pdist(X, "sqeuclidean"))
    diam2 = D.max()
    if diam2 == 0:
        return 0.0
    A = _center(np.exp(-D * (2 * s * s) / diam2))
    L = _center(X @ X.T)
    na, nl = np.linalg.norm(A), np.linalg.norm(L)
    if na == 0 or nl == 0:
        return 0.0
    return float((1 - (A * L).sum() / (na * nl)) / (4 * s * s))


def _center(M: np.ndarray) -> np.ndarray:
    return M - M.mean(axis=0) - M.mean(axis=1)[:, None] + M.mean()


SEARCH_S_MIN = 1 / 16
"""Smallest s = ρ/2σ the search visits. 1 − CKA = O(s⁴) is formed in float64 with an absolute error ~N·eps;
at s = 1/16 (s⁴ ≈ 1.5e-5) that is far below it, while as s → 0 the rounding noise divided by 4s² would be
"found" instead of the ratio (and the unbounded coordinate overflowed math.exp)."""


def _search_s(z: float) -> float:
    """s ∈ [SEARCH_S_MIN, 1] from an unbounded search coordinate (expit: no overflow as z → ±∞)."""
    return SEARCH_S_MIN + (1 - SEARCH_S_MIN) * float(expit(z))


def adversarial_search(n: int, d: int, *, restarts: int = 4, seed: int = 0) -> tuple[np.ndarray, float, float]:
    """Maximise :func:`float_ratio` over X (n×d) and s ∈ [SEARCH_S_MIN, 1] (σ from 8ρ down to Theorem 1's ρ/2)
    by Nelder–Mead from random starts.

    Returns
    -------
    (X, s, ratio)
        The best configuration (rounded to float32-exact values, so that it is exact data for a rigorous check),
        its s and its float64 ratio.
    """
    rng = np.random.default_rng(seed)
    best = (None, 0.0, -math.inf)

    def objective(z):
        return -float_ratio(z[:-1].reshape(n, d), _search_s(z[-1]))

    for _ in range(restarts):
        start = np.concatenate([rng.standard_normal(n * d), [0.0]])
        result = minimize(objective, start, method="Nelder-Mead",
                          options=dict(maxiter=400 * (n * d + 1), xatol=1e-6, fatol=1e-10))
        if -result.fun > best[2]:
            X = result.x[:-1].reshape(n, d).astype(np.float32).astype(np.float64)
            s = _search_s(result.x[-1])
            best = (X, s, float_ratio(X, s))
    return best
