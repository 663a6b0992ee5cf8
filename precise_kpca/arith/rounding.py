"""Directed rounding: float64 and dyadic bounds on exact quantities, each rounded in the direction its name says.

Each function returns a rigorous bound in the direction its name says, never a nearest rounding; the float64 norm
bounds (:func:`frobenius_up`, :func:`spectral_up`) hold for any summation order of the BLAS, with or without FMA.
Used by the enclosures (``certify``, ``measures``, ``asymptotics``) and the
fixed-point error bounds (:mod:`.fixed`, :mod:`.ozaki`).
"""
from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np

_SQRT_BITS = 64  # relative accuracy 2**-64 of the directed square roots


def float_up(x) -> float:
    """The least float64 ``>= x``, for an exact ``x`` (``Fraction``, int, float or mpf; compared exactly).

    ``+inf`` when ``x`` lies beyond float64's range (``-max`` for ``x`` below ``-max``).
    """
    try:
        f = float(x)
    except OverflowError:
        return math.inf if x > 0 else -sys.float_info.max
    return f if f >= x else math.nextafter(f, math.inf)


def float_down(x) -> float:
    """The greatest float64 ``<= x``, for an exact ``x`` (as in :func:`float_up`); ``-inf`` below float64's
    range (``max`` above it)."""
    try:
        f = float(x)
    except OverflowError:
        return -math.inf if x < 0 else sys.float_info.max
    return f if f <= x else math.nextafter(f, -math.inf)


def sqrt_up(x: Fraction) -> Fraction:
    """A dyadic rational ``>= √x`` (0 for ``x <= 0``), within a relative ``2**-64``."""
    if x <= 0:
        return Fraction(0)
    e = max(0, 2 * _SQRT_BITS - (x.numerator.bit_length() - x.denominator.bit_length())) // 2 + 1
    scaled = -((-x.numerator << (2 * e)) // x.denominator)  # ceil(x · 4**e)
    return Fraction(math.isqrt(scaled - 1) + 1, 1 << e)


def sqrt_down(x: Fraction) -> Fraction:
    """A dyadic rational ``<= √x`` (0 for ``x <= 0``), within a relative ``2**-64``."""
    if x <= 0:
        return Fraction(0)
    e = max(0, 2 * _SQRT_BITS - (x.numerator.bit_length() - x.denominator.bit_length())) // 2 + 1
    return Fraction(math.isqrt((x.numerator << (2 * e)) // x.denominator), 1 << e)


def frobenius_up(M: np.ndarray) -> float:
    """An upper bound on ‖M‖_F for a float64 array (any summation order, underflow included)."""
    top = float(np.max(np.abs(M), initial=0.0))
    if top == 0:
        return 0.0
    e = math.frexp(top)[1]
    v = np.ldexp(M.ravel(), -e)  # max |v| in [1/2, 1); scaling down may underflow: ≤ 2**-1074 per entry
    n = v.size
    s = float(np.dot(v, v)) + n * 2.0**-1000  # absorbs underflow in the scaling and the squares
    s *= 1 + (n + 4) * 2.0**-51  # γ_{n+1} for the sum of squares, with room for this product's rounding
    return math.ldexp(math.nextafter(math.sqrt(s), math.inf), e)


def spectral_up(M: np.ndarray, err: Fraction, levels: int) -> Fraction:
    """Upper bound on ‖M'‖₂ for every M' with ‖M' − M‖_F ≤ err (M float64, shape (n, m)).

    ``‖M‖₂ = ‖MᵀM‖₂^{1/2}`` applied ``levels`` times (Schatten 4, 8, … norms: for N×N matrices of similar
    singular values N^{1/4}, N^{1/8}, … from ‖·‖₂ instead of N^{1/2}), Frobenius at the bottom. The float64
    GEMM obeys ``|fl(MᵀM) − MᵀM| ≤ γ_n |M|ᵀ|M|`` entrywise for any summation order, with or without FMA (not
    for Strassen-type products, which BLAS dgemm does not use); ``‖|M|ᵀ|M|‖_F ≤ ‖M‖_F²``.
    """
    if levels == 0 or min(M.shape) == 0:
        return Fraction(frobenius_up(M)) + err
    top = float(np.max(np.abs(M)))
    if top == 0:
        return err
    e = math.frexp(top)[1]
    S = np.ldexp(M, -e)  # exact unless scaling down underflows: ≤ 2**-1075 per entry (absorbed below)
    n = S.shape[0]
    C = S.T @ S
    frob = Fraction(frobenius_up(S))
    gamma = Fraction(n, 2**53 - n)
    err_c = gamma * frob * frob + S.size * Fraction(2) ** -1000  # + underflow in the scaling and the products
    return sqrt_up(spectral_up(C, err_c, levels - 1)) * Fraction(2) ** e + err
