"""Binary128 arithmetic of the Gram builder (:mod:`.binary128_gram`): exact binary128 scalars and arrays from mpf
values, and φ(u) = e^{−u} − 1 + u of the residual Ĝ = σ_X² φ(û) with its entrywise error coefficients.

The error analysis these serve is :mod:`.binary128_gram`'s module docstring; each function states its share.
Assumptions: binary128 +, −, ×, ÷ correctly rounded to nearest and SLEEF's ``Sleef_expm1q1_u10`` (numpy-quaddtype's
``np.expm1``) within 1.0 ulp.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from mpmath import libmp
from numpy_quaddtype import QuadPrecDType

from ..arith.rounding import float_up
from ..errors import InternalCheckFailed

QUAD = QuadPrecDType("sleef")
BITS = 113
U = 2.0**-BITS  # binary128 unit roundoff
WIDE_BITS = 320  # working precision of the bandwidth scalars before their one rounding to binary128
SERIES_TERMS = 19  # (1/16)^19 / 21! < 2^-140: the truncated tail is far below one binary128 rounding


def gamma(k: int) -> float:
    return k * U / (1 - k * U)


def residual_coefficients(distance_error: float) -> tuple[float, float]:
    """c_G, c_D with |Ĝ − G| ≤ c_G|Ĝ| + c_D·D entrywise (module docstring), given D̂'s relative error r_D.

    ŝ(1+δ_s), the product and the sum carry γ_4 (δ_s includes the 2⁻³⁰⁰ of the wide value); û = u(1 + δ_u),
    |δ_u| ≤ (1 + r_D)(1 + 2⁻³⁰⁰)(1 + u)² − 1 (D̂, ĉ from its 320-bit value, the product);
    |φ(û) − φ(u)| ≤ 2|δ_u| φ(û)/(1 − |δ_u|)²; expm1 errs by ≤ 2u·û, and σ_X²û ≤ (1 + δ_u) D/2. The factor
    1 + 2⁻⁴⁰ covers evaluating these in float64 and reading D as fl64(D̂).
    """
    g4 = gamma(4)
    gu = float_up((1 + Fraction(distance_error)) * (1 + Fraction(1, 2**300)) * (1 + Fraction(U)) ** 2 - 1)
    spread = 2 * gu / (1 - gu) ** 2
    coef_g = g4 / (1 - g4) + spread / (1 - g4)
    coef_d = (1 + spread) * (1 + gu) * U
    return coef_g * (1 + 2.0**-40), coef_d * (1 + 2.0**-40)


def residual_block(dist: np.ndarray, c, s2) -> tuple[np.ndarray, np.ndarray]:
    """Ĝ = σ_X²(expm1(−û) + û), û = D̂·ĉ, for a row block of D̂ (binary128, overwritten): shape (rows, N).

    Returns Ĝ and the mask of the entries evaluated by the series. D̂ is exactly symmetric, and so is Ĝ.
    """
    u = np.multiply(dist, c, out=dist)
    small = u < _SERIES_QUAD
    if small.all():  # large σ: the series everywhere, no expm1
        return np.multiply(phi_series(u), s2), small
    diff = np.empty_like(u)
    with np.errstate(invalid="ignore"):  # SLEEF flags 'invalid' for very negative arguments yet returns −1
        e = np.expm1(np.negative(u, out=diff), out=diff)
    np.add(e, u, out=e)
    if small.any():
        e[small] = phi_series(u[small])
    return np.multiply(e, s2, out=e), small


def phi_series(u: np.ndarray) -> np.ndarray:
    """φ(u) = e^{−u} − 1 + u = u² Σ_j (−u)^j / (j + 2)! by Horner, for 0 ≤ u < 1/16: no cancellation, so full
    relative accuracy where expm1(−u) + u would keep only ~113 − log2(1/u) bits.

    Each magnitude class of u (below 2⁻¹⁴⁰, 2⁻⁶⁴, …, 2⁻⁸, 2⁻⁴) is summed with the terms its upper end needs
    (:func:`_series_terms`): few operations at large σ, and the number of terms, hence the rounded result,
    depends on the entry alone (not on its row block), so Ĝ stays exactly symmetric.
    """
    out = np.empty_like(u)
    todo = np.ones(u.shape, dtype=bool)
    for top, terms in _SERIES_CLASSES:
        part = todo & (u < top)
        if part.any():
            out[part] = _horner(u[part], terms)
            todo &= ~part
    if todo.any():
        raise InternalCheckFailed("the series for phi was asked for an argument of at least 1/16")
    return out


def _horner(u: np.ndarray, terms: int) -> np.ndarray:
    """u² Σ_{j < terms} (−u)^j / (j + 2)! for a 1-d binary128 array, Horner's scheme in place."""
    s = np.full(u.shape, _SERIES_COEFFICIENTS[terms - 1])
    for coefficient in _SERIES_COEFFICIENTS[terms - 2::-1]:
        np.subtract(coefficient, np.multiply(u, s, out=s), out=s)
    return (u * u) * s


def _series_terms(u_max: float) -> int:
    """Terms T with u_max^T / (T + 2)! below 2⁻¹⁴⁰ (far below one binary128 rounding of the sum ≥ 1/2 · 1/2!)."""
    for terms in range(1, SERIES_TERMS + 1):
        if terms * math.log2(u_max) - math.log2(math.factorial(terms + 2)) < -140:
            return terms
    return SERIES_TERMS


def binary128_scalar(mpf_tuple):
    """An mpf value rounded to the nearest binary128 number (a 0-d value usable in binary128 arithmetic)."""
    return binary128_array([libmp.mpf_pos(mpf_tuple, BITS, libmp.round_nearest)])[0]


def binary128_array(tuples) -> np.ndarray:
    """Binary128 array from mpf tuples of ≤ 113-bit mantissas, exactly.

    Each mantissa is three float64-exact chunks whose binary128 sum is exact; powers of two within the
    float64 range then scale it exactly.
    """
    mask = (1 << 53) - 1
    chunks = [np.array([float(((t[1] >> s) & mask) << s) for t in tuples]).astype(QUAD) for s in (106, 53, 0)]
    q = (chunks[0] + chunks[1]) + chunks[2]
    remaining = np.array([t[2] for t in tuples], dtype=np.int64)
    while remaining.any():
        step = np.clip(remaining, -1000, 1000)
        q = q * np.ldexp(1.0, step).astype(QUAD)
        remaining -= step
    signs = np.array([t[0] for t in tuples], dtype=bool)
    q[signs] = -q[signs]
    return q


# most γ_{2T+4} times Σ|terms| / |φ/u²| ≤ 1.05 at u = 1/16 (coefficient roundings included); 1.2 covers it.
# From 1/16 on, expm1's absolute error σ_X²·2uû is below the series' 1.2γ_60 (the bound before) times φ(û)σ_X²
# (φ(û)/û ≥ 1/32.7 > 1/36 there), so the switch at 1/16 rather than 1/4 tightens every entry's bound.
_SERIES_QUAD = binary128_scalar(libmp.from_rational(1, 16, BITS, libmp.round_nearest))
_SERIES_COEFFICIENTS = [binary128_scalar(libmp.from_rational(1, math.factorial(j + 2), WIDE_BITS, libmp.round_nearest))
                        for j in range(SERIES_TERMS)]
SERIES_ERROR = 1.2 * gamma(2 * SERIES_TERMS + 8)
_SERIES_CLASSES = [(binary128_scalar(libmp.from_man_exp(1, -k)), _series_terms(2.0**-k)) for k in (140, 64, 32, 16, 8, 4)]
