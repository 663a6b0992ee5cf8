"""Sharp constants of Theorems 2 and 3: the limits σ² × measure as σ → ∞ and the paper's η bound.

Theorem 2 (metric). The relative metric dissonance is R(v) = 1 − √((1 − e^{−v})/v), v = ρ²/2σ² (proofs/
theorem2), so C(σ) = R / (ρ/σ)² increases with σ to the sharp constant 1/8 for every data set, while the
paper's bound is (ρ/σ)² η with η = diameter / minimum nonzero distance ≥ 1.

Theorem 3 (spectra). σ_X² H K_G H = L + ε² M + O(ε⁴), ε = 1/σ_X (see :mod:`.first_order`). With σ_X = d_X σ,
σ² × (Eq. 18) → max(|shifts|, λ_max|P₀MP₀|) / (d_X² λ_1) and σ² × EigenDist → the mean (or max) over the
top-k groups of ‖T_g‖₂ / d_X². Digits of the limits are certified by agreement of two evaluations
(:func:`.first_order.checked_pair` names them in ``Constant.method``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import mpmath

from ..measures import Measurement, measure
from ..measures.spectral import linear_groups
from ..numerics.geometry import geometry
from ..validation import check_data, parse_sigma
from ..numerics.exact_geometry import ExactEccentricity
from .first_order import FirstOrder, agreeing_digits, checked_pair

__all__ = ["METRIC_LIMIT", "CheckedLimits", "Constant", "FirstOrder", "eigenprojection_constant",
           "eigenvalue_constant", "eta_bound", "metric_constant"]

METRIC_LIMIT = Fraction(1, 8)
_FLOAT_DIGITS = 14  # a float64 evaluation is reported with at most 14 digits, whatever the agreement


@dataclass(frozen=True)
class Constant:
    """A constant of the asymptotics with its certified digits and how they were obtained."""

    name: str
    value: float
    certified_digits: int
    method: str


def metric_constant(X, sigma=math.inf, *, digits: int = 12) -> Constant:
    """C(σ) = relative metric dissonance (Eq. 17) / (ρ/σ)²; ``sigma=math.inf`` gives the limit 1/8 (exact).

    The dissonance is the certified measure (arb balls); ρ² is enclosed in arb from exact squared distances.
    """
    X = check_data(X)
    if sigma == math.inf:
        return Constant("metric", float(METRIC_LIMIT), 16, "exact limit 1/8 (proofs: theorem2)")
    m = measure(X, "metric", sigma, digits=digits)
    s = parse_sigma(sigma)
    with flint.ctx.workprec(128):
        rho2 = ExactEccentricity(X).rho_squared()
        ctx = mpmath.MPContext()
        ctx.prec = 128
        man, exp = rho2.mid().man_exp()
        rho2_mpf = ctx.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))
        ratio = ctx.mpf(m.value) / rho2_mpf * s.numerator**2 / s.denominator**2
    return Constant("metric", float(ratio), min(m.certified_digits, 15), m.method + "; ρ² exact (arb)")


def eta_bound(X, sigma) -> float:
    """Theorem 2's bound on the relative metric dissonance: (ρ/σ)² η, η = diameter / min nonzero distance."""
    X = check_data(X)
    g = geometry(X)
    s = parse_sigma(sigma)
    return g.eccentricity**2 * float(s.denominator**2 / Fraction(s.numerator**2)) * g.eta_nonzero


class CheckedLimits:
    """σ → ∞ limits of Theorem 3's measures from a float64 :class:`FirstOrder` and its certifying twin.

    Parameters
    ----------
    X : array_like, shape (N, d)
    mp_max_n : int, optional
        Largest N checked against the mp path (see :func:`.first_order.checked_pair`).
    """

    def __init__(self, X, **options):
        self.primary, self.reference, self.method = checked_pair(X, **options)

    def _constant(self, name: str, compute) -> Constant:
        value, check = compute(self.primary), compute(self.reference)
        digits = min(_FLOAT_DIGITS, max(0, agreeing_digits(value, check) - 1))
        return Constant(name, value, digits, "first-order perturbation; " + self.method)

    def eigenvalue(self) -> Constant:
        """lim σ² × Eq. 18."""
        return self._constant("eigenvalue", FirstOrder.eigenvalue_coefficient)

    def eigenprojection(self, k: int = 1, *, tau: float = 1e-6, aggregate: str = "mean") -> Constant:
        """lim σ² × EigenDist over the top-k linear eigenvalues, grouped as in Algorithm 1."""
        rank = self.primary.rank
        if k > rank:
            raise ValueError(f"k={k} exceeds the rank {rank} of the centered linear Gram")

        def compute(first: FirstOrder) -> float:
            groups = linear_groups(first.values, k, tau)
            angles = [first.angle_coefficient(start, stop) / first.d_x2 for start, stop in groups]
            return max(angles) if aggregate == "max" else sum(angles) / len(angles)

        return self._constant("eigenprojection", compute)


def eigenvalue_constant(X, sigma=math.inf, *, digits: int = 10) -> Constant:
    """σ² × ‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ (Eq. 18); ``sigma=math.inf`` for the first-order limit."""
    X = check_data(X)
    if sigma != math.inf:
        return _scaled_measure(X, "eigenvalue", sigma, 1, digits)
    return CheckedLimits(X).eigenvalue()


def eigenprojection_constant(X, k: int = 1, sigma=math.inf, *, tau: float = 1e-6, aggregate: str = "mean",
                             digits: int = 10) -> Constant:
    """σ² × EigenDist (Algorithm 1, radians) over the top-k eigenvalues; ``sigma=math.inf`` for the limit.

    Exactly repeated linear eigenvalues are allowed when Algorithm 1's groups keep them together (the limit
    is then the group's total eigenprojection); a k that splits such a cluster raises ``ValueError``.
    """
    X = check_data(X)
    if sigma != math.inf:
        return _scaled_measure(X, "eigenprojection", sigma, k, digits)
    return CheckedLimits(X).eigenprojection(k, tau=tau, aggregate=aggregate)


def _scaled_measure(X, name, sigma, k, digits) -> Constant:
    m: Measurement = measure(X, name, sigma, k=k, digits=digits)
    s = parse_sigma(sigma)
    ctx = mpmath.MPContext()
    ctx.prec = 200
    value = ctx.mpf(m.value) * ctx.mpf(s.numerator) ** 2 / ctx.mpf(s.denominator) ** 2
    return Constant(name, float(value), min(m.certified_digits, 15), m.method)
