"""Sharp constants of Theorems 2 and 3: the limits σ² × measure as σ → ∞ and the paper's η bound.

Theorem 2 (metric). The relative metric dissonance is R(v) = 1 − √((1 − e^{−v})/v), v = ρ²/2σ² (proofs/
theorem2), so C(σ) = R / (ρ/σ)² increases with σ to the sharp constant 1/8 for every data set, while the
paper's bound is (ρ/σ)² η with η = diameter / minimum nonzero distance ≥ 1.

Theorem 3 (spectra). σ_X² H K_G H = L + ε² E₁ + O(ε⁴), ε = 1/σ_X. With σ_X = d_X σ,
σ² × (Eq. 18) → max(|shifts|, λ_max P₀E₁P₀) / (d_X² λ_1) and σ² × EigenDist → the mean (or max) over the
top-k groups of ‖T_g‖₂ / d_X². :class:`EnclosedLimits` encloses them rigorously (:mod:`.enclosed_limits`: exact
first-order data, the linear enclosures, Lipschitz bounds in the linear basis); :class:`CheckedLimits`, two
evaluations that agree (:mod:`.first_order`), stays available as ``guarantee="heuristic"``.

Every :class:`Constant` carries the interval behind its value and that interval's guarantee; its certified digits
are derived from the interval (:func:`~precise_kpca.measures.measurement.interval_digits`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import mpmath
import numpy as np

from ..certify.linear_enclosure import tied_linear_eigenvalues_cached
from ..measures import Measurement, measure
from ..measures.measurement import GUARANTEES, exact_mpf, interval_digits
from ..measures.results import arb_ends
from ..measures.spectral import linear_groups
from ..numerics.geometry import geometry
from ..numerics.exact_geometry import ExactEccentricity
from ..numerics.linear_exact import exact_linear
from ..validation import check_data, parse_sigma
from .enclosed_limits import eigenprojection_limit_ball, eigenvalue_limit_ball, enclosed_limit
from .first_order import FirstOrder, checked_pair

__all__ = ["METRIC_LIMIT", "CheckedLimits", "Constant", "EnclosedLimits", "FirstOrder", "eigenprojection_constant",
           "eigenvalue_constant", "eta_bound", "metric_constant"]

METRIC_LIMIT = Fraction(1, 8)
LIMIT_DIGITS = 12
"""Digits requested of the σ → ∞ limits by default."""
_FLOAT_EPS = Fraction(1, 2**52)  # unit roundoff of the float64 first-order path
_FLOAT_FLOOR = 64 * _FLOAT_EPS  # a float64 evaluation's own spread: never more than about 14 digits
_BALL_PREC = 256  # bits of the Arb arithmetic on scaled measures (their intervals are far wider)


@dataclass(frozen=True)
class Constant:
    """A constant of the asymptotics, the interval behind it and its guarantee.

    Attributes
    ----------
    name : str
    value : float
        Midpoint of ``[lower, upper]`` rounded to float64 (the interval carries every certified digit).
    method : str
        How it was computed (human-readable, never parsed).
    lower, upper : mpmath.mpf or None
        Ends of the interval (exact binary numbers).
    guarantee : {"rigorous", "heuristic", "none"}
        As for :class:`~precise_kpca.measures.measurement.Measurement`.
    reason : str
        Why fewer digits than requested were certified; empty otherwise.
    certified_digits : int
        From ``[lower, upper]`` (0 for guarantee ``"none"``).
    """

    name: str
    value: float
    method: str
    lower: object = None
    upper: object = None
    guarantee: str = "none"
    reason: str = ""
    certified_digits: int = field(init=False)

    def __post_init__(self):
        if self.guarantee not in GUARANTEES:
            raise ValueError(f"guarantee must be one of {GUARANTEES}, got {self.guarantee!r}")
        if self.guarantee != "none" and (self.lower is None or self.upper is None):
            raise ValueError(f"a {self.guarantee} constant needs the ends of its interval")
        digits = interval_digits(self.lower, self.upper) if self.guarantee != "none" else 0
        object.__setattr__(self, "certified_digits", digits)


def _from_interval(name: str, lo, hi, guarantee: str, method: str, reason: str = "") -> Constant:
    ctx = mpmath.MPContext()
    ctx.prec = 64
    mid = (ctx.mpf(exact_mpf(lo)) + ctx.mpf(exact_mpf(hi))) / 2  # rounded once, to far more than a float
    return Constant(name, float(mid), method, lower=exact_mpf(lo), upper=exact_mpf(hi), guarantee=guarantee,
                    reason=reason)


def metric_constant(X, sigma=math.inf, *, digits: int = 12) -> Constant:
    """C(σ) = relative metric dissonance (Eq. 17) / (ρ/σ)²; ``sigma=math.inf`` gives the limit 1/8 (exact).

    The dissonance is the certified measure's interval (arb balls); ρ² is enclosed in arb from exact squared
    distances, σ² is exact.
    """
    X = check_data(X)
    if sigma == math.inf:
        eighth = exact_mpf(METRIC_LIMIT)
        return Constant("metric", float(METRIC_LIMIT), "exact limit 1/8 (proofs: theorem2)", lower=eighth,
                        upper=eighth, guarantee="rigorous")
    m = measure(X, "metric", sigma, digits=digits)
    s = parse_sigma(sigma)
    with flint.ctx.workprec(_BALL_PREC):
        ball = _scaled_ball(m, s * s) / ExactEccentricity(X).rho_squared()
        lo, hi = arb_ends(ball)
    return _from_interval("metric", lo, hi, m.guarantee, m.method + "; ρ² exact (arb)", m.reason)


def _scaled_ball(m: Measurement, factor: Fraction) -> flint.arb:
    """A ball containing factor × every point of the measurement's interval."""
    lo, hi = (_mpf_arb(v) for v in (m.lower, m.upper))
    return lo.union(hi) * flint.arb(flint.fmpq(factor.numerator, factor.denominator))


def _mpf_arb(x) -> flint.arb:
    sign, man, exp, _ = exact_mpf(x)._mpf_
    return flint.arb(-int(man) if sign else int(man)) * flint.arb(2) ** int(exp)


def eta_bound(X, sigma) -> float:
    """Theorem 2's bound on the relative metric dissonance: (ρ/σ)² η, η = diameter / min nonzero distance."""
    X = check_data(X)
    g = geometry(X)
    s = parse_sigma(sigma)
    return g.eccentricity**2 * float(s.denominator**2 / Fraction(s.numerator**2)) * g.eta_nonzero


class EnclosedLimits:
    """σ → ∞ limits of Theorem 3's measures, enclosed rigorously (:mod:`.enclosed_limits`).

    Parameters
    ----------
    X : array_like, shape (N, d)
    digits : int
        Digits requested of every limit (the working precision doubles until the interval certifies them).
    route : {"features", "dense"}, optional
        How E₁ is applied (:mod:`.first_order_operator`); default by size.
    """

    def __init__(self, X, *, digits: int = LIMIT_DIGITS, route: str | None = None):
        self.X = check_data(X)
        self.digits, self.route = int(digits), route
        self.rank = exact_linear(self.X).rank

    @property
    def repeated(self) -> list[tuple[int, int]]:
        """Exactly repeated nonzero linear eigenvalues (index ranges [a, z)), proven on the integer Gram."""
        return list(tied_linear_eigenvalues_cached(exact_linear(self.X)))

    def _constant(self, name: str, evaluate) -> Constant:
        (lo, hi), bits, reason = enclosed_limit(self.X, evaluate, self.digits, route=self.route)
        method = (f"first-order perturbation, enclosed: exact E₁, linear basis at {bits} bits with Davis–Kahan "
                  "bounds, Lipschitz bounds in the basis, arb balls")
        return _from_interval(name, lo, hi, "rigorous", method, reason)

    def eigenvalue(self) -> Constant:
        """lim σ² × Eq. 18."""
        return self._constant("eigenvalue", eigenvalue_limit_ball)

    def eigenprojection(self, k: int = 1, *, tau: float = 1e-6, aggregate: str = "mean") -> Constant:
        """lim σ² × EigenDist over the top-k linear eigenvalues, grouped as in Algorithm 1.

        Raises
        ------
        ValueError
            k exceeds the rank of the centered linear Gram.
        Undetermined
            A group's edge cuts an exact tie of linear eigenvalues (the limit depends on a basis choice).
        """
        return self._constant("eigenprojection", lambda enc: eigenprojection_limit_ball(enc, k, tau, aggregate))


class CheckedLimits:
    """σ → ∞ limits of Theorem 3's measures from a float64 :class:`FirstOrder` and its checking twin (heuristic).

    The interval of each constant is the checked value ∓ 10× the two evaluations' difference (at least 64 float64
    unit roundoffs): agreement, not an enclosure, so ``guarantee="heuristic"``.

    Parameters
    ----------
    X : array_like, shape (N, d)
    mp_max_n : int, optional
        Largest N checked against the mp path (see :func:`.first_order.checked_pair`).
    """

    def __init__(self, X, **options):
        self.primary, self.reference, self.method = checked_pair(X, **options)

    def _constant(self, name: str, compute) -> Constant:
        value, check = Fraction(compute(self.primary)), Fraction(compute(self.reference))
        spread = max(10 * abs(value - check), _FLOAT_FLOOR * abs(check))
        return Constant(name, float(value), "first-order perturbation; " + self.method,
                        lower=exact_mpf(check - spread), upper=exact_mpf(check + spread), guarantee="heuristic")

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


def limits(X, guarantee: str = "rigorous", *, digits: int = LIMIT_DIGITS):
    """The limit evaluator of a guarantee: :class:`EnclosedLimits` (rigorous) or :class:`CheckedLimits` (heuristic)."""
    if guarantee == "rigorous":
        return EnclosedLimits(X, digits=digits)
    if guarantee == "heuristic":
        return CheckedLimits(X)
    raise ValueError(f"guarantee must be 'rigorous' or 'heuristic' for the σ → ∞ limits, got {guarantee!r}")


def eigenvalue_constant(X, sigma=math.inf, *, digits: int = LIMIT_DIGITS, guarantee: str = "rigorous") -> Constant:
    """σ² × ‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ (Eq. 18); ``sigma=math.inf`` for the first-order limit."""
    X = check_data(X)
    if sigma != math.inf:
        return _scaled_measure(X, "eigenvalue", sigma, 1, digits)
    return limits(X, guarantee, digits=digits).eigenvalue()


def eigenprojection_constant(X, k: int = 1, sigma=math.inf, *, tau: float = 1e-6, aggregate: str = "mean",
                             digits: int = LIMIT_DIGITS, guarantee: str = "rigorous") -> Constant:
    """σ² × EigenDist (Algorithm 1, radians) over the top-k eigenvalues; ``sigma=math.inf`` for the limit.

    Exactly repeated linear eigenvalues are allowed when Algorithm 1's groups keep them together (the limit
    is then the group's total eigenprojection); a k that splits such a cluster raises
    :class:`~precise_kpca.errors.Undetermined` (``ValueError`` on the heuristic path).
    """
    X = check_data(X)
    if sigma != math.inf:
        return _scaled_measure(X, "eigenprojection", sigma, k, digits)
    return limits(X, guarantee, digits=digits).eigenprojection(k, tau=tau, aggregate=aggregate)


def _scaled_measure(X, name, sigma, k, digits) -> Constant:
    """σ² × the measure at σ, with the measurement's interval (scaled exactly) and guarantee."""
    m: Measurement = measure(X, name, sigma, k=k, digits=digits)
    s = parse_sigma(sigma)
    if m.guarantee == "none" or not np.isfinite(float(m.value)):
        return Constant(name, float(m.value) * float(s * s), m.method, guarantee="none", reason=m.reason)
    with flint.ctx.workprec(_BALL_PREC):
        lo, hi = arb_ends(_scaled_ball(m, s * s))
    return _from_interval(name, lo, hi, m.guarantee, m.method, m.reason)
