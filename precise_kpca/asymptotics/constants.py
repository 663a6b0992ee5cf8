"""Sharp constants of Theorems 2 and 3: the limits σ² × measure as σ → ∞ and the paper's η bound.

Theorem 2 (metric). The relative metric dissonance is R(v) = 1 − √((1 − e^{−v})/v), v = ρ²/2σ² (proofs/
theorem2), so C(σ) = R / (ρ/σ)² increases with σ to the sharp constant 1/8 for every data set, while the
paper's bound is (ρ/σ)² η with η = diameter / minimum nonzero distance ≥ 1.

Theorem 3 (spectra). σ_X² H K_G H = L + ε² M + O(ε⁴), ε = 1/σ_X, M = H D^{∘2} H / 8 (proofs/perturbation).
First-order perturbation theory gives, with w_i, λ_i the linear eigenpairs (simple) and P₀ the projector on
null(L):

* eigenvalue shifts ε² w_iᵀ M w_i (i ≤ rank), and the null eigenvalues split into ε²·eig(P₀ M P₀);
* eigenvector angles ε² ‖Σ_{j≠i} (w_jᵀ M w_i)/(λ_i − λ_j) w_j + P₀ M w_i / λ_i‖.

With σ_X = d_X σ, σ² × (Eq. 18) → max(|w_iᵀMw_i|, λ_max(P₀MP₀)) / (d_X² λ_1) and σ² × EigenDist → the mean (or
max) over the top-k groups of the angle coefficients / d_X². Linear eigenpairs and M are evaluated on the mp
backend from exact data; the top eigenvalue of the (N − rank)-dimensional block P₀MP₀ in float64 (it is
well conditioned relative to its own norm, so float64 gives it to ~14 digits).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from ..backends import MPBackend
from ..measures import Measurement, measure
from ..measures.spectral import LinearSpectrum, linear_groups
from ..numerics.centering import center_array
from ..numerics.exact import ExactData
from ..numerics.geometry import geometry, median_distance
from ..validation import check_data, parse_sigma

METRIC_LIMIT = Fraction(1, 8)
_DPS = 40


@dataclass(frozen=True)
class Constant:
    """A constant of the asymptotics with its certified digits and how they were obtained."""

    name: str
    value: float
    certified_digits: int
    method: str


def _rho_over_sigma_squared(X, sigma: Fraction) -> float:
    return geometry(X).eccentricity ** 2 / float(sigma) ** 2


def metric_constant(X, sigma=math.inf, *, digits: int = 12) -> Constant:
    """C(σ) = relative metric dissonance (Eq. 17) / (ρ/σ)²; ``sigma=math.inf`` gives the limit 1/8 (exact)."""
    X = check_data(X)
    if sigma == math.inf:
        return Constant("metric", float(METRIC_LIMIT), 16, "exact limit 1/8 (proofs: theorem2)")
    m = measure(X, "metric", sigma, digits=digits)
    value = float(m.value) / _rho_over_sigma_squared(X, parse_sigma(sigma))
    return Constant("metric", value, min(m.certified_digits, 15), m.method + "; ρ from float64 geometry")


def eta_bound(X, sigma) -> float:
    """Theorem 2's bound on the relative metric dissonance: (ρ/σ)² η, η = diameter / min nonzero distance."""
    X = check_data(X)
    g = geometry(X)
    return _rho_over_sigma_squared(X, parse_sigma(sigma)) * g.eta_nonzero


class FirstOrder:
    """First-order (ε²) perturbation data of σ_X² H K_G H around L, from exact data on the mp backend.

    Attributes
    ----------
    linear : LinearSpectrum
    shifts : list of mpf
        w_iᵀ M w_i for the nonzero linear eigenvalues.
    null_top : float
        λ_max(P₀ M P₀).
    angle_coefficients : list of mpf
        ‖Σ_{j≠i} (w_jᵀMw_i)/(λ_i − λ_j) w_j + P₀Mw_i/λ_i‖ for i < rank.
    d_x2 : mpf
        Squared median distance.
    """

    def __init__(self, X: np.ndarray, dps: int = _DPS):
        b = self.backend = MPBackend(dps)
        exact = ExactData.from_float64(X)
        sq = b.from_scaled_integers(exact.squared_distance_integers, 2 * exact.exp2)
        self.d_x2 = median_distance(sq, b) ** 2
        M = center_array(sq * sq) / 8
        linear = self.linear = LinearSpectrum(X, b)
        W, lam = linear.vectors, linear.values
        r = linear.rank
        MW = M.dot(W)
        coupling = W.T.dot(MW)  # w_jᵀ M w_i
        self.shifts = [coupling[i, i] for i in range(r)]
        outside = MW - W.dot(coupling)  # P₀ M w_i (M kills 1, so P₀ = I − WWᵀ on its range)
        self.angle_coefficients = []
        for i in range(r):
            inside = sum((coupling[j, i] / (lam[i] - lam[j])) ** 2 for j in range(r) if j != i)
            self.angle_coefficients.append(b.sqrt(inside + outside[:, i].dot(outside[:, i]) / lam[i] ** 2))
        Mf = np.vectorize(b.to_float, otypes=[float])(M)
        Wf = np.vectorize(b.to_float, otypes=[float])(W)
        P = np.eye(len(Mf)) - Wf @ Wf.T
        self.null_top = float(np.linalg.eigvalsh(P @ Mf @ P)[-1])


def eigenvalue_constant(X, sigma=math.inf, *, digits: int = 10) -> Constant:
    """σ² × ‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ (Eq. 18); ``sigma=math.inf`` for the first-order limit."""
    X = check_data(X)
    if sigma != math.inf:
        return _scaled_measure(X, "eigenvalue", sigma, 1, digits)
    first = FirstOrder(X)
    b = first.backend
    top = max(max(abs(s) for s in first.shifts), b.scalar(first.null_top))
    value = top / (first.d_x2 * first.linear.values[0])
    return Constant("eigenvalue", b.to_float(value), 12,
                    "first-order perturbation (exact data, mp; null block in float64)")


def eigenprojection_constant(X, k: int = 1, sigma=math.inf, *, tau: float = 1e-6, aggregate: str = "mean",
                             digits: int = 10) -> Constant:
    """σ² × EigenDist (Algorithm 1, radians) over the top-k eigenvalues; ``sigma=math.inf`` for the limit."""
    X = check_data(X)
    if sigma != math.inf:
        return _scaled_measure(X, "eigenprojection", sigma, k, digits)
    first = FirstOrder(X)
    b = first.backend
    if k > first.linear.rank:
        raise ValueError(f"k={k} exceeds the rank {first.linear.rank} of the centered linear Gram")
    groups = linear_groups(first.linear.values, k, tau)
    if any(stop - start > 1 for start, stop in groups):
        raise ValueError("repeated linear eigenvalues among the top k: the first-order limit needs simple ones")
    angles = [first.angle_coefficients[start] / first.d_x2 for start, _ in groups]
    value = max(angles) if aggregate == "max" else sum(angles) / len(angles)
    return Constant("eigenprojection", b.to_float(value), 12, "first-order perturbation (exact data, mp)")


def _scaled_measure(X, name, sigma, k, digits) -> Constant:
    m: Measurement = measure(X, name, sigma, k=k, digits=digits)
    s = parse_sigma(sigma)
    ctx = mpmath.MPContext()
    ctx.prec = 200
    value = ctx.mpf(m.value) * ctx.mpf(s.numerator) ** 2 / ctx.mpf(s.denominator) ** 2
    return Constant(name, float(value), min(m.certified_digits, 15), m.method)
