"""Eigen measures in the structured range (σ large), rigorously: the ``structured-enclosure`` route.

The approximation is the structured perturbation expansion of :mod:`.structured` (float64 E, the linear basis of
the enclosure below), never trusted; the certificate is :mod:`precise_kpca.certify.linear_enclosure` (L's
eigenvalues and eigenvector subspaces) and :mod:`precise_kpca.certify.perturbed_enclosure` (A's top eigenvalues
and eigenvector subspaces, the bound on the rest), combined here into intervals of the measures:

* eigenvalue (Eq. 18): max_i |μ_i − λ_i| / λ_1 from the enclosures of both sides (the rest of the spectrum by the
  trace bound; where that bound is not below the top block's largest difference the interval stays wide and the
  route reports fewer digits);
* eigenprojection (Algorithm 1): per group J, the largest principal angle ∠(V_J, W_J) lies within
  asin(sin Θ_V) + asin(sin Θ_W) of the angle between the exact approximate bases (:mod:`.angles`), aggregated by
  mean or max in ball arithmetic; the normalizer EigenDist(I, w) the same way;
* pc (Theorem 3): ‖√μ v − √λ w‖/√λ = √((δ/(√μ + √λ))² + 4√(μλ) sin²(θ/2))/√λ with δ = μ − λ, θ = ∠(v, w), for
  singletons on both sides (a PC of a repeated eigenvalue depends on the basis: undetermined).

Everything is in the S-units of the linear enclosure (the measures are ratios and angles).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from ..arith.dyadic import Dyadic
from ..backends import Float64Backend, MPBackend
from ..certify.linear_enclosure import LinearEnclosure, linear_enclosure
from ..certify.perturbed_enclosure import TopEnclosure, eigenvalue_gap_interval, enclose_top, residual_operator
from ..errors import RouteUnavailable
from ..numerics import double_center, gaussian_residual
from ..numerics.data import data_state
from ..numerics.kernels import Float64Underflow
from ..numerics.perturbed_spectrum import PerturbedSpectrum
from .intervals import aggregate as aggregate_balls
from .intervals import check_k, group_angle, linear_groups_exact, pc_interval_of

_DIGIT_BITS = math.log2(10)
_GUARD_DIGITS = 4
_CORRECTIONS = 1  # residual corrections of the float64 expansion's vectors (each gains ~log10(gap/‖E‖) digits)
_MAX_SHIFT = 8192  # σ·2^-m for m up to this: every σ whose binary128 residual the exact side can read
# the expansion's own vectors: eigenprojection 14 digits, eigenvalue 25 on wine at σ = 2^2…2^40 (both 24–25 digits
# after one correction, which costs a second enclosure): a certificate is built corrected only when asked for


@dataclass(frozen=True)
class StructuredCertificate:
    """The enclosures one σ's eigen measures are built from (S-units)."""

    lin: LinearEnclosure
    top: TopEnclosure
    t: int


def certificate(X: np.ndarray, sigma: Fraction, *, median: str = "full", digits: int = 10,
                corrected: bool = False) -> StructuredCertificate:
    """Enclosures of L's and A's top eigen-structure at bandwidth σ (cached per data set, σ and precision).

    ``corrected`` encloses the expansion's vectors after :data:`_CORRECTIONS` residual corrections (sharper angles,
    one more enclosure each), else the expansion's vectors themselves.

    Raises
    ------
    RouteUnavailable
        No linear eigenvalue stands clear of ‖E‖ (σ too small for the structured range).
    InsufficientPrecision
        A bound cannot separate what it must at this precision.
    """
    return data_state(X).derived(_certificate_cached, sigma, median, int(digits), _CORRECTIONS if corrected else 0,
                                 keep=2)


def require_top(cert: StructuredCertificate, needed: int, what: str) -> None:
    """RouteUnavailable unless the top block holds eigenvectors 0..needed−1."""
    if needed > cert.t:
        raise RouteUnavailable(f"{what} needs eigenvectors 0..{needed - 1}; the structured top block holds "
                               f"{cert.t} at this σ", remedy="the binary128 enclosure covers smaller σ")


def _certificate_cached(X, sigma, median, digits, corrections) -> StructuredCertificate:
    E, shift = _float64_residual(X, sigma, median)
    e_norm = float(np.linalg.norm(E))
    probe = linear_enclosure(X, 128)
    top_l = float(probe.values[0]) * _l_units(probe)
    loss_bits = math.log2(max(top_l / max(e_norm, 1e-300), 2.0)) + 2 * shift
    bits = int(loss_bits + (digits + _GUARD_DIGITS) * _DIGIT_BITS) + 32
    lin = linear_enclosure(X, bits)
    ps = _approximation(lin, E)
    t = ps.rank
    xs = np.column_stack([ps.coords[i][0] for i in range(t)])
    zs = np.column_stack([ps.coords[i][1] for i in range(t)])
    own = np.zeros((t, t), dtype=bool)  # x's entries inside each vector's own cluster: O(1), the same at σ·2^-m
    for a, z in ps.clusters:
        own[a:z, a:z] = True
    # the rest of x and all of z are linear in E to the order kept: scaled by 2^-2m, like E
    mixed = Dyadic.from_float64(np.where(own, xs, 0.0)) + \
        Dyadic.from_float64(np.where(own, 0.0, xs)).scaled(1, -2 * shift)
    vectors = lin.vectors.columns(0, t) @ mixed + Dyadic.from_float64(zs).scaled(1, -2 * shift)
    eop = residual_operator(X, sigma, lin.exact, median)
    product_bits = int((digits + _GUARD_DIGITS) * _DIGIT_BITS) + 40
    top = enclose_top(lin, eop, vectors, product_bits=product_bits)
    for _ in range(corrections):
        top = enclose_top(lin, eop, _corrected(lin, top), product_bits=product_bits)
    return StructuredCertificate(lin=lin, top=top, t=t)


def _float64_residual(X: np.ndarray, sigma: Fraction, median: str) -> tuple[np.ndarray, int]:
    """The centered E at σ·2^-m in float64, and m: 0, or the first multiple of 64 at which float64 holds E.

    Only the approximation reads it (nothing trusts it): E(σ) = 2^-2m E(σ·2^-m) (1 + O(σ⁻²)) and the expansion's
    out-of-span part and its in-span coordinates on the other clusters' eigenvectors are linear in E to that
    order, so the caller scales them by 2^-2m (unscaled, they leave an E-sized residual: no digit of an angle).
    """
    for shift in range(0, _MAX_SHIFT + 1, 64):
        try:
            return double_center(gaussian_residual(X, sigma / 2**shift, backend=Float64Backend(),
                                                   median=median)).deviation, shift
        except Float64Underflow:
            continue
    raise RouteUnavailable(f"sigma = {float(sigma):.3g}: the Gaussian residual underflows float64 even at "
                           f"sigma·2^-{_MAX_SHIFT}", remedy="a smaller sigma")


def _corrected(lin: LinearEnclosure, top: TopEnclosure) -> Dyadic:
    """One preconditioned residual correction of the top vectors (an approximation step; nothing trusts it).

    With the exact residual r = K − θ v: c = Σ_j ŵ_j (ŵ_jᵀr)/(θ − λ̂_j) over linear eigenvectors outside v's run,
    plus (r − ŴŴᵀr)/θ on the rest of the space, where A − θ ≈ −θ. This solves (A − θ)c = −r up to a relative
    ‖E‖/gap, so each step gains about log10(gap/‖E‖) digits in the vectors (and so in the angle bounds).
    """
    t = top.t
    v = top.vectors
    theta = [(v.columns(i, i + 1).T @ top.products.columns(i, i + 1)).entry(0, 0) / c
             for i, c in enumerate(v.column_squares())]
    residual = top.products - v.scale_columns(*_dyadic_diagonal(theta, 2 * lin.bits))
    # r is E-sized (below float64's range past σ ≈ 2^500): read as r·2^-s, the correction (linear in r) scaled back
    s = _exponent(residual.max_abs())
    r = residual.scaled(1, -s).to_float64()
    w = lin.vectors.to_float64()
    coefficients = w.T @ r  # r × t
    th = np.array([float(x) for x in theta])
    # exact differences: θ and λ̂ of a near-tie agree to float64 precision (a regular heptagon: both round alike)
    denominators = np.array([[float(x - value) for x in theta] for value in lin.values])
    for a, z in top.runs:
        denominators[a:z, a:z] = np.inf  # inside a run the block's Rayleigh–Ritz decides the mixing
    correction = w @ (coefficients / denominators) + (r - w @ coefficients) / th[None, :]
    return v + Dyadic.from_float64(correction).scaled(1, s)


def _exponent(x: Fraction) -> int:
    """An integer near log2 x (0 for x = 0): a power of two that brings x near 1."""
    return x.numerator.bit_length() - x.denominator.bit_length() if x else 0


def _dyadic_diagonal(values, bits: int) -> tuple[list[int], int]:
    """Integer factors and a common exponent of dyadic approximations (``bits`` below the largest) of ``values``.

    θ must keep many more bits than float64: r = K − θv is E-sized only if θ is accurate far below ‖E‖.
    """
    top = max(abs(x) for x in values)
    common = math.floor(math.log2(top)) - bits
    scale = Fraction(2) ** -common
    return [round(x * scale) for x in values], common


def _l_units(lin: LinearEnclosure) -> float:
    factor, shift = lin.exact.to_s_units
    return 2.0**-shift / factor


class _ViewBackend(MPBackend):
    """mp for the linear eigenvalues (their E-sized gaps inside clusters need it), while float64 arrays — the basis,
    which the expansion reads in E's float64 arithmetic anyway — pass through ``export`` as they are."""

    def export(self, array):
        if isinstance(array, np.ndarray) and array.dtype == np.float64:
            return array
        return super().export(array)


class _LinearView:
    """The linear enclosure's basis in the form :class:`PerturbedSpectrum` reads (L-units): eigenvalues in mp, the
    basis Ŵ rounded to float64 once (the expansion with a float64 E would round it so at every σ)."""

    def __init__(self, lin: LinearEnclosure):
        self.backend = b = _ViewBackend(max(30, int(lin.bits / _DIGIT_BITS) + 10))
        factor, shift = lin.exact.to_s_units
        scale = Fraction(2) ** -shift / factor
        n, r = lin.exact.n, lin.rank
        self.rank = r
        self.values = np.array([b.scalar(v * scale) for v in lin.values] + [b.scalar(0)] * (n - r), dtype=object)
        self.vectors = lin.vectors.to_float64()


def _approximation(lin: LinearEnclosure, E: np.ndarray) -> PerturbedSpectrum:
    view = lin.derived(_LinearView, keep=4)  # one view per linear enclosure: it serves every σ of its precision
    try:
        ps = PerturbedSpectrum(view, E, Float64Backend(), view.rank, rest=False)
    except ArithmeticError as exc:
        raise RouteUnavailable(f"the structured expansion did not settle: {exc}") from exc
    if not ps.applicable:
        raise RouteUnavailable("no linear eigenvalue stands clear of ‖E‖: σ is below the structured range",
                               remedy="the binary128 enclosure covers it")
    return ps


# -- the measures ------------------------------------------------------------------------------------------
def eigenvalue_interval(cert: StructuredCertificate) -> tuple[Fraction, Fraction]:
    """Rigorous interval of Eq. 18's ratio; wide (few digits) where the rest bound is not decisive."""
    lo, hi, _ = eigenvalue_gap_interval(cert.lin, cert.top)
    return lo, hi


def _group_angle(cert: StructuredCertificate, start: int, stop: int) -> flint.arb:
    """Ball containing ∠(V_J, W_J) for the index group J = [start, stop).

    The linear group is checked first: where its edge cuts an exact tie the value does not exist (Undetermined),
    whatever the Gaussian side's enclosures can or cannot separate.
    """
    cert.lin.sin_theta(start, stop)
    return group_angle(cert.top.vectors.columns(start, stop), cert.top.group_sin_theta(start, stop), cert.lin,
                       start, stop)


def eigen_distance_interval(cert: StructuredCertificate, k: int, tau: float, aggregate: str):
    """Rigorous interval of EigenDist (Algorithm 1, radians) over the top-k linear eigenvalues."""
    check_k(cert.lin, k, "eigenprojection")
    groups = linear_groups_exact(cert.lin, k, tau)
    require_top(cert, groups[-1][1], "eigenprojection")
    return aggregate_balls([_group_angle(cert, s, t) for s, t in groups], aggregate_name=aggregate)


def pc_interval(cert: StructuredCertificate, k: int):
    """Rigorous interval of max_{i<k} ‖σ_X PC_G,i − PC_L,i‖ / ‖PC_L,i‖ (Theorem 3)."""
    lin, top = cert.lin, cert.top
    check_k(lin, k, "pc")
    require_top(cert, k, "pc")
    return pc_interval_of(lin, k, lambda i: _group_angle(cert, i, i + 1), lambda i: (top.lower[i], top.upper[i]))


__all__ = ["StructuredCertificate", "certificate", "eigen_distance_interval", "eigenvalue_interval",
           "pc_interval"]
