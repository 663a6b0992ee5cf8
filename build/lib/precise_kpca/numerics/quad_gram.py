"""The scaled Gaussian Gram A = σ_X² H K_G H = L + H G H in binary128 (quad), delivered as float64 word pairs.

Same matrix, bandwidth and input checks as :func:`precise_kpca.measures.spectral.scaled_gaussian_gram` on the
stable backends, at a cost of ~40 binary128 operations per entry (numpy-quaddtype, SLEEF backend) instead of one
mpmath object per entry: N = 5404 in about a minute, in the memory of a few float64 N×N arrays.

Computation (u = 2⁻¹¹³ is the binary128 unit roundoff, γ_k = ku/(1 − ku)):

* X_c = X − mean, each entry rounded once from the exact rational N·X_c/N (exact integer form of X);
  L̂_ij = Σ_k X_c,ik X_c,jk in quad: |L̂ − L| ≤ γ_{d+2} P, P = |X_c| |X_c|ᵀ.
* D̂_ij = Σ_k (x_ik − x_jk)² in quad from the float64 data (converted exactly): relative error ≤ γ_{d+2}.
* û = D̂·ĉ with ĉ = 1/(2σ_X²) rounded once (σ_X² = σ² d_X² from the exact median pair(s) of
  :class:`~precise_kpca.numerics.exact_geometry.ExactEccentricity`, 320-bit intermediate): |δû| ≤ γ_{d+5}.
* Ĝ = (expm1(−û) + û)·ŝ, ŝ = σ_X² rounded once. SLEEF's expm1 errs by ≤ 1 ulp ≤ 2u|expm1(−û)| ≤ 2uû, an
  *absolute* error σ_X²·2uû ≈ u·D that the cancellation in expm1(−û) + û does not shrink. A relative
  perturbation δ of the argument moves φ(v) = e^{−v} − 1 + v by at most 2|δ|φ (since vφ'(v) ≤ 2φ(v)), so
  |Ĝ − G| ≤ c_G|Ĝ| + c_D D with c_G ≈ (2d + 14)u, c_D ≈ u (exact constants in :func:`_residual_coefficients`).
* Ĝ is held between the two passes as float64 words G̃ = hi + lo (|G̃ − Ĝ| ≤ 2⁻¹⁰⁶|Ĝ|); its exact row means
  are m_i, computed as m̂_i with |m̂_i − m_i| ≤ γ_N a_i, a_i = Σ_j |G̃_ij| / N (any summation order).
* Â_ij = ((L̂_ij + G̃_ij) − (m̂_i + m̂_j)) + ĝ (ĝ the computed grand mean): both the row and the column mean
  enter through one symmetric sum, so Â is exactly symmetric; centering arithmetic errs by γ_3 times the sum of
  the magnitudes.
* hi = fl64(Â), lo = fl64(Â − hi) (the difference is exact in quad): |hi + lo − Â| ≤ 2⁻¹⁰⁶|Â|.

Since H L H = L and ‖H E H‖_F ≤ ‖E‖_F, the error bound is ‖e_G‖_F + ‖e_rest‖_F with the entrywise bounds
above, evaluated in float64 and inflated by a factor covering that evaluation's own rounding, plus 2⁻¹⁰⁶⁰ per
entry for float64 words in the subnormal range.

Assumptions: binary128 +, −, ×, ÷ and the float64 ↔ binary128 conversions are correctly rounded to nearest
(SLEEF documents its add/sub/mul/div as 0.5 ulp); SLEEF's ``Sleef_expm1q1_u10``, which numpy-quaddtype calls for
``np.expm1``, errs by at most 1.0 ulp (SLEEF quad reference: "The error bound of the returned value is 1.0 ULP").
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import libmp
from numpy_quaddtype import QuadPrecDType
from scipy.spatial.distance import cdist

from ..validation import check_data, parse_sigma
from .exact import ExactData
from .exact_geometry import ExactEccentricity
from .geometry import check_median

_Q = QuadPrecDType("sleef")
_BITS = 113
_U = 2.0**-_BITS  # binary128 unit roundoff
_WIDE_BITS = 320  # working precision of the bandwidth scalars before their one rounding to binary128
_WORDS = 2.0**-106  # relative error of a binary128 value held as two float64 words
_TINY = 2.0**-1060  # per-entry allowance for float64 words in the subnormal range
_QUAD_EXP = 16000  # keep every scaled quantity well inside the binary128 normal range (2^±16382)
_BLOCK_ENTRIES = 2**20  # entries per row block: ~16 MB per binary128 temporary
_SERIES_TERMS = 26  # (1/4)^24 / 26! < 2^-140: the truncated tail is far below one binary128 rounding


@dataclass(frozen=True)
class QuadGram:
    """A = σ_X² H K_G H (the matrix of ``scaled_gaussian_gram``) as a binary128 result held in float64 words.

    Attributes
    ----------
    hi, lo : ndarray of float64, shape (N, N)
        hi = fl64(Â), lo = fl64(Â − hi), Â the binary128 result; both exactly symmetric. hi + lo is not Â
        itself but within 2⁻¹⁰⁶|Â| of it, entrywise.
    error_bound : float
        Upper bound on ‖A − (hi + lo)‖_F for the exact A of the exact X and σ, under the assumptions of the
        module docstring.
    sigma : Fraction
        The requested bandwidth, exact (as :func:`precise_kpca.validation.parse_sigma` reads it).
    sigma_x : mpmath.mpf
        σ_X = σ·d_X (or σ when not standardized), the exact value rounded to 113 bits.
    median_distance : mpmath.mpf or None
        d_X rounded to 113 bits, None when not standardized.
    median : str
    standardized : bool
    """

    hi: np.ndarray
    lo: np.ndarray
    error_bound: float
    sigma: Fraction
    sigma_x: mpmath.mpf
    median_distance: mpmath.mpf | None
    median: str
    standardized: bool

    @property
    def meta(self) -> dict:
        """The bandwidth record of the float64 and mp paths (``sigma``, ``sigma_x``, ``median_distance``)."""
        return {"sigma": self.sigma, "sigma_x": self.sigma_x, "median_distance": self.median_distance}


def centered_residual_words(X, sigma, *, median="full", standardized=True, block_rows=None) -> QuadGram:
    """E = H G H = σ_X² H K_G H − L alone (the structured path's perturbation), in binary128 as float64 words.

    Same computation, bound and parameters as :func:`scaled_gaussian_gram_words` without the linear part, so E
    keeps ~106 bits relative to its own size even where ‖E‖ ≪ ‖L‖.
    """
    return _build(X, sigma, median, standardized, block_rows, include_linear=False)


def scaled_gaussian_gram_words(X, sigma, *, median="full", standardized=True, block_rows=None) -> QuadGram:
    """σ_X² H K_G H = L + H G H in binary128, returned as float64 words with a rigorous Frobenius error bound.

    Parameters
    ----------
    X : array_like, shape (N, d)
        Data (float64, taken as exact); validated by :func:`precise_kpca.validation.check_data`.
    sigma : int, float, str, Fraction or mpf
        Standardized bandwidth σ (σ_X = d_X·σ), or the raw bandwidth when ``standardized=False``; read exactly
        by :func:`precise_kpca.validation.parse_sigma` (``"2**100"`` etc.).
    median : {"full", "pairs"}
        Which median distance standardizes σ (see :mod:`precise_kpca.numerics.geometry`).
    standardized : bool, default True
    block_rows : int, optional
        Rows per block (default: about 2²⁰ entries). Changes memory and speed, never the result.

    Returns
    -------
    QuadGram
        ``hi``, ``lo`` of shape (N, N), ``error_bound`` and the bandwidth.

    Raises
    ------
    ValueError
        Invalid data or σ (same messages as the float64 path), a zero median distance, a bandwidth outside the
        binary128 range, or entries of A beyond the float64 range.
    """
    return _build(X, sigma, median, standardized, block_rows, include_linear=True)


def _build(X, sigma, median, standardized, block_rows, *, include_linear: bool) -> QuadGram:
    X = check_data(X)
    exact_sigma = parse_sigma(sigma)
    n, d = X.shape
    exact = ExactData.from_float64(X)
    median_sq = ExactEccentricity(X, check_median(median)).median_sq if standardized else None
    scales = _bandwidth(exact_sigma, median_sq, X, exact.exp2)
    rows_per_block = _block_rows(block_rows, n)
    blocks = [slice(i, min(i + rows_per_block, n)) for i in range(0, n, rows_per_block)]

    x_t = np.ascontiguousarray(X.T).astype(_Q)  # exact: binary64 ⊂ binary128
    xc = _centered(exact, n)
    xc_t = np.ascontiguousarray(xc.T)
    xc_abs = np.abs(xc.astype(np.float64))
    coef_g, coef_d = _residual_coefficients(d)

    # Pass 1: Ĝ row block by row block, held in the output words; its row sums and the G part of the bound.
    hi = np.empty((n, n))
    lo = np.empty((n, n))
    sums = np.empty(n, dtype=_Q)
    abs_means = np.empty(n)
    norm_g = _SquaredNorm()
    for rows in blocks:
        g, series = _residual_block(x_t, rows, scales.c, scales.s2)
        held = _to_words(g, hi[rows], lo[rows])
        sums[rows] = np.add.reduce(held, axis=1)
        g_abs = np.abs(hi[rows])
        abs_means[rows] = g_abs.sum(axis=1) / n
        # series entries: relative error only; expm1 entries: expm1's absolute error u·û survives the cancellation
        relative = coef_g + _WORDS + np.where(series, _SERIES_ERROR, 0.0)
        absolute = np.where(series, 0.0, coef_d * cdist(X[rows], X, "sqeuclidean"))
        norm_g.add(relative * g_abs + absolute + _TINY)

    # Pass 2: Â = L̂ + G̃ − m̂_i − m̂_j + ĝ, overwriting each block's words.
    n_q = np.array([n], dtype=np.float64).astype(_Q)[0]
    means = sums / n_q
    grand = np.add.reduce(means) / n_q
    means_abs = np.abs(means.astype(np.float64))
    g3, gd, gn = _gamma(3), _gamma(d + 2), _gamma(n)
    grand_err = gn * (means_abs.mean() + abs_means.mean()) + g3 * abs(float(grand))
    norm_rest = _SquaredNorm()
    for rows in blocks:
        held = hi[rows].astype(_Q) + lo[rows].astype(_Q)  # G̃, exact
        outer_means = means_abs[rows, None] + means_abs[None, :]
        rest = g3 * (np.abs(hi[rows]) + outer_means) + grand_err
        rest += gn * (abs_means[rows, None] + abs_means[None, :])
        if include_linear:
            rest += (gd + g3 * (1 + gd)) * (xc_abs[rows] @ xc_abs.T)
            held = _linear_block(xc_t, rows) + held
        a = held - (means[rows, None] + means[None, :])
        _to_words(a + grand, hi[rows], lo[rows])
        norm_rest.add(rest + _WORDS * np.abs(hi[rows]) + _TINY)
    if not np.isfinite(hi).all():
        raise ValueError("entries of the scaled Gaussian Gram exceed the float64 range; rescale X")

    margin = 1 + (n * n + 4 * d + 128) * 2.0**-52  # float64 evaluation of the bound itself
    bound = (norm_g.value() + norm_rest.value()) * margin
    return QuadGram(
        hi=hi,
        lo=lo,
        error_bound=math.nextafter(bound, math.inf),
        sigma=exact_sigma,
        sigma_x=_round_mpf(scales.sigma_x),
        median_distance=None if scales.d_x is None else _round_mpf(scales.d_x),
        median=median,
        standardized=standardized,
    )


@dataclass(frozen=True)
class _Scales:
    sigma_x: object  # 320-bit mpf
    d_x: object  # 320-bit mpf or None
    s2: object  # σ_X² rounded to binary128
    c: object  # 1/(2σ_X²) rounded to binary128


def _bandwidth(sigma: Fraction, median_sq, X: np.ndarray, exp2: int) -> _Scales:
    """σ_X and the binary128 scalars σ_X², 1/(2σ_X²), each rounded once from a 320-bit value (rel. error ≤ 2⁻³⁰⁰).

    Raises ValueError unless σ_X², every û (≥ 2^(2e)·ĉ where D > 0, ≤ d·(2 max|x|)²·ĉ) and so Ĝ stay well
    inside the binary128 normal range.
    """
    ctx = mpmath.MPContext()
    ctx.prec = _WIDE_BITS
    s = ctx.make_mpf(libmp.from_rational(sigma.numerator, sigma.denominator, _WIDE_BITS, libmp.round_nearest))
    requested = s
    d_x = None
    if median_sq is not None:  # d_X = 2^e · mean of √(median integers), as geometry.median_distance defines it
        d_x = ctx.ldexp(ctx.fsum(ctx.sqrt(v) for v in median_sq) / len(median_sq), exp2)
        s = s * d_x
    s2 = s * s
    c = 1 / (2 * s2)
    top = ctx.mag(X.shape[1] * (2 * ctx.mpf(max(float(np.abs(X).max()), 2.0**exp2))) ** 2)
    if max(abs(ctx.mag(s2)), abs(ctx.mag(c) + 2 * exp2), abs(ctx.mag(c) + top)) > _QUAD_EXP:
        raise ValueError(f"sigma={ctx.nstr(requested, 6)} puts |x_i - x_j|^2/2sigma_X^2 outside the binary128 range; "
                         "use backend='mp'")
    return _Scales(s, d_x, _quad_scalar(s2._mpf_), _quad_scalar(c._mpf_))


def _block_rows(block_rows, n: int) -> int:
    if block_rows is None:
        return max(1, _BLOCK_ENTRIES // n)
    if isinstance(block_rows, bool) or not isinstance(block_rows, (int, np.integer)) or block_rows < 1:
        raise ValueError(f"block_rows must be a positive integer, got {block_rows!r}")
    return int(block_rows)


def _gamma(k: int) -> float:
    return k * _U / (1 - k * _U)


def _residual_coefficients(d: int) -> tuple[float, float]:
    """c_G, c_D with |Ĝ − G| ≤ c_G|Ĝ| + c_D·D entrywise (module docstring).

    ŝ(1+δ_s), the product and the sum carry γ_4 (δ_s includes the 2⁻³⁰⁰ of the wide value); û = u(1 + δ_u),
    |δ_u| ≤ γ_{d+5} (D̂: γ_{d+2}, ĉ, the product); |φ(û) − φ(u)| ≤ 2|δ_u| φ(û)/(1 − |δ_u|)²; expm1 errs by
    ≤ 2u·û, and σ_X²û ≤ (1 + γ_{d+5}) D/2. The factor 1 + 2⁻⁴⁰ covers evaluating these in float64.
    """
    g4, gu = _gamma(4), _gamma(d + 5)
    spread = 2 * gu / (1 - gu) ** 2
    coef_g = g4 / (1 - g4) + spread / (1 - g4)
    coef_d = (1 + spread) * (1 + gu) * _U
    return coef_g * (1 + 2.0**-40), coef_d * (1 + 2.0**-40)


def _residual_block(x_t: np.ndarray, rows: slice, c, s2) -> np.ndarray:
    """Ĝ = σ_X²(expm1(−û) + û), û = D̂·ĉ, for a row block: shape (rows, N) binary128.

    x_ik − x_jk and x_jk − x_ik round to opposite values, so D̂ and Ĝ are exactly symmetric.
    """
    dist = np.zeros((rows.stop - rows.start, x_t.shape[1]), dtype=_Q)
    diff = np.empty_like(dist)
    for column in x_t:
        np.subtract(column[rows, None], column[None, :], out=diff)
        np.multiply(diff, diff, out=diff)
        np.add(dist, diff, out=dist)
    u = np.multiply(dist, c, out=dist)
    small = u < _SERIES_QUAD
    if small.all():  # large σ: the series everywhere, no expm1
        return np.multiply(_phi_series(u), s2), small
    with np.errstate(invalid="ignore"):  # SLEEF flags 'invalid' for very negative arguments yet returns −1
        e = np.expm1(np.negative(u, out=diff), out=diff)
    np.add(e, u, out=e)
    if small.any():
        e[small] = _phi_series(u[small])
    return np.multiply(e, s2, out=e), small


def _phi_series(u: np.ndarray) -> np.ndarray:
    """φ(u) = e^{−u} − 1 + u = u² Σ_j (−u)^j / (j + 2)! by Horner, for 0 ≤ u < 1/4: no cancellation, so full
    relative accuracy where expm1(−u) + u would keep only ~113 − log2(1/u) bits."""
    terms = _series_terms(float(np.max(u).astype(np.float64)))
    s = np.full(u.shape, _SERIES_COEFFICIENTS[terms - 1])
    for coefficient in _SERIES_COEFFICIENTS[terms - 2::-1]:
        s = coefficient - u * s
    return (u * u) * s


def _series_terms(u_max: float) -> int:
    """Terms T with u_max^T / (T + 2)! below 2⁻¹⁴⁰ (far below one binary128 rounding of the sum ≥ 1/2 · 1/2!)."""
    u_max = max(u_max * (1 + 2.0**-40), 2.0**-1000)  # the float64 read of û may round down
    for terms in range(1, _SERIES_TERMS + 1):
        if terms * math.log2(u_max) - math.log2(math.factorial(terms + 2)) < -140:
            return terms
    return _SERIES_TERMS


def _linear_block(xc_t: np.ndarray, rows: slice) -> np.ndarray:
    """L̂ = Σ_k X_c,ik X_c,jk for a row block, products summed in k order (exactly symmetric)."""
    out = np.zeros((rows.stop - rows.start, xc_t.shape[1]), dtype=_Q)
    term = np.empty_like(out)
    for column in xc_t:
        np.add(out, np.multiply(column[rows, None], column[None, :], out=term), out=out)
    return out


def _to_words(a: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Write hi = fl64(a), lo = fl64(a − hi) into the given views; return hi + lo in binary128 (exact).

    a − hi is exact in binary128 (a multiple of ulp(a) below ulp64(a)), and so is hi + lo (113 bits suffice).
    """
    hi[...] = a.astype(np.float64)
    hi_q = hi.astype(_Q)
    lo[...] = (a - hi_q).astype(np.float64)
    return hi_q + lo.astype(_Q)


def _centered(exact: ExactData, n: int) -> np.ndarray:
    """X_c = X − mean, shape (N, d) binary128, each entry the exact (N·M − Σ M)·2^e / N rounded once."""
    m = exact.mantissas
    scaled = n * m - m.sum(axis=0)[None, :]
    tuples = []
    for v in scaled.ravel():
        sign, man, exp, bc = libmp.from_rational(int(v), n, _BITS, libmp.round_nearest)
        tuples.append((sign, man, exp + exact.exp2, bc))
    return _quad_array(tuples).reshape(scaled.shape)


def _quad_scalar(mpf_tuple):
    """An mpf value rounded to the nearest binary128 number (a 0-d value usable in quad arithmetic)."""
    return _quad_array([libmp.mpf_pos(mpf_tuple, _BITS, libmp.round_nearest)])[0]


def _quad_array(tuples) -> np.ndarray:
    """Binary128 array from mpf tuples of ≤ 113-bit mantissas, exactly.

    Each mantissa is three float64-exact chunks whose binary128 sum is exact; powers of two within the
    float64 range then scale it exactly.
    """
    mask = (1 << 53) - 1
    chunks = [np.array([float(((t[1] >> s) & mask) << s) for t in tuples]).astype(_Q) for s in (106, 53, 0)]
    q = (chunks[0] + chunks[1]) + chunks[2]
    remaining = np.array([t[2] for t in tuples], dtype=np.int64)
    while remaining.any():
        step = np.clip(remaining, -1000, 1000)
        q = q * np.ldexp(1.0, step).astype(_Q)
        remaining -= step
    signs = np.array([t[0] for t in tuples], dtype=bool)
    q[signs] = -q[signs]
    return q


def _round_mpf(x) -> mpmath.mpf:
    return mpmath.mp.make_mpf(libmp.mpf_pos(x._mpf_, _BITS, libmp.round_nearest))


class _SquaredNorm:
    """√(Σ e²) of nonnegative float64 blocks without overflow: each block scaled by a power of two."""

    def __init__(self):
        self._parts: list[tuple[int, float]] = []

    def add(self, e: np.ndarray) -> None:
        top = math.frexp(float(e.max()))[1]
        scaled = np.ldexp(e, -top)
        self._parts.append((top, float(np.dot(scaled.ravel(), scaled.ravel()))))

    def value(self) -> float:
        top = max(t for t, _ in self._parts)
        total = sum(math.ldexp(s, 2 * (t - top)) for t, s in self._parts)
        return math.ldexp(math.sqrt(total), top)


# φ's series: coefficients 1/(j+2)! rounded once to binary128, used where û < 1/4. Horner's relative error is at
# most γ_{2T+4} times Σ|terms| / |φ/u²| ≤ 1.134 at u = 1/4 (coefficient roundings included); 1.2 covers it.
_SERIES_QUAD = _quad_scalar(libmp.from_rational(1, 4, _BITS, libmp.round_nearest))
_SERIES_COEFFICIENTS = [_quad_scalar(libmp.from_rational(1, math.factorial(j + 2), _WIDE_BITS, libmp.round_nearest))
                        for j in range(_SERIES_TERMS)]
_SERIES_ERROR = 1.2 * _gamma(2 * _SERIES_TERMS + 8)
