"""The scaled Gaussian Gram A = σ_X² H K_G H = L + H G H in binary128 (quad), delivered as float64 word pairs.

Same matrix, bandwidth and input checks as :func:`precise_kpca.measures.spectral.scaled_gaussian_gram` on the
stable backends, at a cost of ~40 binary128 operations per entry (numpy-quaddtype, SLEEF backend) plus exact
integer products on float64 BLAS, instead of one mpmath object per entry: N = 5404 in about a minute, in the
memory of a few float64 N×N arrays. Hand-written because no library gives binary128 Grams with a proven bound:
numpy-quaddtype supplies the correctly rounded scalar operations, the Ozaki scheme
(:mod:`precise_kpca.arith.ozaki`) the exact products, and this module the error analysis.

Computation (u = 2⁻¹¹³ is the binary128 unit roundoff, γ_k = ku/(1 − ku)):

* Exact integers: X = M·2^e (:class:`~precise_kpca.numerics.exact.ExactData`); M' = M − round(column means of M)
  exactly (D and X_c do not change under a shift of the columns; it only shortens the integers). Then
  D_ij = ‖m'_i − m'_j‖²·2^(2e) and N²L = C Cᵀ·2^(2e), C = N·M' − 1·ΣM', are exact integer products, row block by
  row block: one float64 GEMM where every partial sum is an integer of magnitude ≤ 2⁵³ (one-hot or count data),
  else the Ozaki scheme. Each exact entry is read into binary128 with relative error r (:mod:`.binary128_squares`):
  r = 0 on the float64 route, r = u (one rounding) when their a-priori bound is below 2²⁰⁷, else u + 2⁻¹⁸⁰.
* D̂ = D(1 + δ_D), |δ_D| ≤ r_D = r (was: d differences, squares and sums in binary128, γ_{d+2}).
* L̂ = (N²L read as D̂ is) / N² in binary128: |L̂ − L| ≤ r_L |L| ≤ r_L |L̂| / (1 − r_L), r_L = (1 + r)(1 + u) − 1
  (was: X_c rounded and L̂ summed in binary128, |L̂ − L| ≤ γ_{d+2} |X_c| |X_c|ᵀ).
* û = D̂·ĉ with ĉ = 1/(2σ_X²) rounded once (σ_X² = σ² d_X² from the exact median pair(s) of
  :class:`~precise_kpca.numerics.exact_geometry.ExactEccentricity`, 320-bit intermediate):
  |δû| ≤ δ_u = (1 + r_D)(1 + 2⁻³⁰⁰)(1 + u)² − 1 ≤ 3u + 2⁻¹⁷⁹ (was γ_{d+5}).
* Ĝ = φ(û)·ŝ, ŝ = σ_X² rounded once, φ(v) = e^{−v} − 1 + v by its series where û < 1/16 (relative error
  1.2γ_46, :func:`~.binary128_phi.phi_series`; was below 1/4, 1.2γ_60) and as expm1(−û) + û elsewhere. SLEEF's
  expm1 errs by ≤ 1 ulp ≤ 2u|expm1(−û)| ≤ 2uû, an *absolute* error σ_X²·2uû ≈ u·D that the cancellation in
  expm1(−û) + û does not shrink (from 1/16 on it is below the series' former 1.2γ_60 relative). A relative
  perturbation δ of the argument moves φ(v) = e^{−v} − 1 + v by at most 2|δ|φ (since vφ'(v) ≤ 2φ(v)), so
  |Ĝ − G| ≤ c_G|Ĝ| + c_D D with c_G ≈ 4u + 2δ_u ≤ 10u (was (2d + 14)u), c_D ≈ u (exact constants in
  :func:`~.binary128_phi.residual_coefficients`; D is taken as fl64(D̂), whose relative error r_D + 2⁻⁵³ is
  covered there).
* Ĝ is held between the two passes as float64 words G̃ = hi + lo (|G̃ − Ĝ| ≤ 2⁻¹⁰⁶|Ĝ|); its exact row means
  are m_i, computed as m̂_i with |m̂_i − m_i| ≤ γ_N a_i, a_i = Σ_j |G̃_ij| / N (any summation order).
* Every entry of Ĝ depends on D̂_ij alone and every entry of Â on (i, j) symmetrically, so both passes evaluate
  the entries on and above the diagonal only and mirror them (half the binary128 work); the bound counts each
  mirrored entry's term twice.
* Â_ij = ((L̂_ij + G̃_ij) − (m̂_i + m̂_j)) + ĝ (ĝ the computed grand mean): both the row and the column mean
  enter through one symmetric sum, so Â is exactly symmetric; centering arithmetic errs by γ_3 times the sum of
  the magnitudes.
* hi = fl64(Â), lo = fl64(Â − hi) (the difference is exact in quad): |hi + lo − Â| ≤ 2⁻¹⁰⁶|Â|.

Since H L H = L and ‖H E H‖_F ≤ ‖E‖_F, the error bound is ‖e_G‖_F + ‖e_rest‖_F with the entrywise bounds
above, evaluated in float64 and inflated by a factor covering that evaluation's own rounding, plus 2⁻¹⁰⁶⁰ per
entry for float64 words in the subnormal range.

E alone (:func:`centered_residual_words`) is held as words of E·2^−x where E's a-priori size (σ_X²û_max²/2, û_max
from the bound on D) is below 2^−512, x its binary exponent: ŝ·2^−x is exact in binary128, every error above is
relative or scales with it, and E keeps its ~106 bits where float64 words would lose it (from σ ≈ 2^256 on
unit-scale data; the 2⁻¹⁰⁶⁰ per entry was the whole bound from σ ≈ 2^530). Elsewhere x = 0; A is never scaled.

Assumptions: binary128 +, −, ×, ÷ and the float64 ↔ binary128 conversions are correctly rounded to nearest
(SLEEF documents its add/sub/mul/div as 0.5 ulp); SLEEF's ``Sleef_expm1q1_u10``, which numpy-quaddtype calls for
``np.expm1``, errs by at most 1.0 ulp (SLEEF quad reference: "The error bound of the returned value is 1.0 ULP");
the float64 BLAS GEMM adds exactly when every product and partial sum is an integer of magnitude ≤ 2⁵³ (what
the Ozaki scheme relies on too).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import libmp

from ..validation import check_data, parse_sigma
from .data import data_state
from .binary128_phi import (BITS, QUAD, SERIES_ERROR, WIDE_BITS, gamma, binary128_scalar, residual_block,
                            residual_coefficients)
from .binary128_squares import ExactSquares
from .exact import ExactData
from .exact_geometry import ExactEccentricity
from .geometry import check_median

_WORDS = 2.0**-106  # relative error of a binary128 value held as two float64 words
_TINY = 2.0**-1060  # per-entry allowance for float64 words in the subnormal range
_QUAD_EXP = 16000  # keep every scaled quantity well inside the binary128 normal range (2^±16382)
_SCALED_BELOW = -512  # E's words are scaled up where its a-priori size is below 2^this (float64 would lose it)
_BLOCK_ENTRIES = 2**20  # entries per row block: ~16 MB per binary128 temporary
_KEEP_BYTES = 7 * 2**28  # D̂, L̂ and their float64 roundings on and above the diagonal (σ-independent, 24 N² bytes)
# kept between σ up to N = 8848 (phoneme's 5404: 0.7 GB); with one σ's first pass (its words and G̃ in binary128,
# 24 N² bytes) and the words of A and E (32 N²) up to N = 4846 (spambase's 4601: 1.7 GB; its eigen measures and
# 1 − CKA share one first pass)


@dataclass(frozen=True)
class Binary128Gram:
    """A = σ_X² H K_G H (the matrix of ``scaled_gaussian_gram``) as a binary128 result held in float64 words.

    Attributes
    ----------
    hi, lo : ndarray of float64, shape (N, N)
        hi = fl64(Â), lo = fl64(Â − hi), Â the binary128 result of A·2^−exp2; both exactly symmetric. hi + lo is
        not Â itself but within 2⁻¹⁰⁶|Â| of it, entrywise.
    error_bound : float
        Upper bound on ‖A·2^−exp2 − (hi + lo)‖_F for the exact A of the exact X and σ, under the assumptions of
        the module docstring.
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
    exp2: int = 0  # the words hold A·2^−exp2 (nonzero only for E past the float64 range: module docstring)

    @property
    def meta(self) -> dict:
        """The bandwidth record of the float64 and mp paths (``sigma``, ``sigma_x``, ``median_distance``)."""
        return {"sigma": self.sigma, "sigma_x": self.sigma_x, "median_distance": self.median_distance}


def centered_residual_words(X, sigma, *, median="full", standardized=True, block_rows=None) -> Binary128Gram:
    """E = H G H = σ_X² H K_G H − L alone (the structured path's perturbation), in binary128 as float64 words.

    Same computation, bound and parameters as :func:`scaled_gaussian_gram_words` without the linear part, so E
    keeps ~106 bits relative to its own size even where ‖E‖ ≪ ‖L‖; where E is below float64's range its words
    hold E·2^−exp2 (``Binary128Gram.exp2``, module docstring).
    """
    return _build(X, sigma, median, standardized, block_rows, include_linear=False)


def scaled_gaussian_gram_words(X, sigma, *, median="full", standardized=True, block_rows=None) -> Binary128Gram:
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
    Binary128Gram
        ``hi``, ``lo`` of shape (N, N), ``error_bound`` and the bandwidth.

    Raises
    ------
    ValueError
        Invalid data or σ (same messages as the float64 path), a zero median distance, a bandwidth outside the
        binary128 range, or entries of A beyond the float64 range.
    """
    return _build(X, sigma, median, standardized, block_rows, include_linear=True)


def kept_words(X, sigma, *, median="full", linear: bool) -> Binary128Gram:
    """:func:`scaled_gaussian_gram_words` (``linear``) or :func:`centered_residual_words` of the default blocking,
    the last bandwidth's kept: the eigen routes and 1 − CKA read the same E (or A and E, which share the first
    pass: Ĝ, its row sums and its bound) at each σ. Up to N = 4846 (with the σ-independent reads, ≤ _KEEP_BYTES
    per process); beyond, each call builds anew. The words are shared: callers must not write to them."""
    X = check_data(X)
    exact_sigma = parse_sigma(sigma)
    median = check_median(median)
    if 80 * X.shape[0] ** 2 > _KEEP_BYTES:
        return _build(X, exact_sigma, median, True, None, include_linear=linear)
    return data_state(X).derived(_kept, exact_sigma, median, linear, keep=2)  # A and E of one σ


def _kept(X, sigma: Fraction, median: str, linear: bool) -> Binary128Gram:
    # the first pass is keyed by the words' scale: A and E share it wherever E is unscaled (wherever A is read)
    first = data_state(X).derived(_first_pass, sigma, median, True, None,
                                  0 if linear else _residual_exp2(X, sigma, median, True), keep=1)
    return _second_pass(first.copy(), _data_side(X, median, True)[2], include_linear=linear)


def _build(X, sigma, median, standardized, block_rows, *, include_linear: bool) -> Binary128Gram:
    X = check_data(X)
    sigma, median = parse_sigma(sigma), check_median(median)
    exp2 = 0 if include_linear else _residual_exp2(X, sigma, median, standardized)
    first = _first_pass(X, sigma, median, standardized, block_rows, exp2)
    squares = _data_side(X, first.median, standardized)[2]
    return _second_pass(first, squares, include_linear=include_linear)


def _residual_exp2(X, sigma: Fraction, median: str, standardized: bool) -> int:
    """x of E's words E·2^−x (module docstring): 0, or the exponent of E's a-priori size below 2^_SCALED_BELOW."""
    exact, median_sq, _ = _data_side(X, median, standardized)
    return _bandwidth(sigma, median_sq, X, exact.exp2).residual_exp2


@dataclass
class _FirstPass:
    """Ĝ as float64 words (on and above the diagonal, mirrored), its exact row sums in binary128, and what the
    second pass and the bound need from it."""

    hi: np.ndarray
    lo: np.ndarray
    held: list  # per row block, G̃ = hi + lo in binary128 on and above the diagonal (exact: no re-conversion)
    sums: np.ndarray
    abs_means: np.ndarray
    norm_g: "_SquaredNorm"
    blocks: list
    scales: "_Scales"
    sigma: Fraction
    median: str
    standardized: bool
    exp2: int  # the words hold Ĝ·2^−exp2

    def copy(self) -> "_FirstPass":
        """A copy whose words the second pass may overwrite (the kept first pass serves A and E)."""
        return _FirstPass(self.hi.copy(), self.lo.copy(), self.held, self.sums, self.abs_means, self.norm_g,
                          self.blocks, self.scales, self.sigma, self.median, self.standardized, self.exp2)


def _first_pass(X, exact_sigma, median, standardized, block_rows, exp2: int) -> _FirstPass:
    n = X.shape[0]
    exact, median_sq, squares = _data_side(X, median, standardized)
    scales = _bandwidth(exact_sigma, median_sq, X, exact.exp2)
    s2 = scales.s2 * binary128_scalar(libmp.from_man_exp(1, -exp2))  # exact: a power of two within binary128's range
    rows_per_block = _block_rows(block_rows, n)
    blocks = [slice(i, min(i + rows_per_block, n)) for i in range(0, n, rows_per_block)]
    coef_g, coef_d = residual_coefficients(squares.distance_error)

    # Ĝ on and above the diagonal, row block by row block, held in the output words and mirrored (every entry of
    # Ĝ depends on D̂_ij alone, and D̂ is exactly symmetric: the mirror is the entry); the G part of the bound,
    # each entry past the block's diagonal square counted for its mirror too.
    hi = np.empty((n, n))
    lo = np.empty((n, n))
    held = []
    norm_g = _SquaredNorm()
    for rows in blocks:
        upper = slice(rows.start, n)
        dist = squares.distances(rows)
        g, series = residual_block(dist, scales.c, s2)
        held.append(_to_words(g, hi[rows, upper], lo[rows, upper], held=True))
        # series entries: relative error only; expm1 entries: expm1's absolute error u·û survives the cancellation
        relative = coef_g + _WORDS + np.where(series, SERIES_ERROR, 0.0)
        absolute = 0.0 if series.all() else np.where(
            series, 0.0, coef_d * np.ldexp(squares.distances_float64(rows), -exp2))
        _add_upper(norm_g, relative * np.abs(hi[rows, upper]) + absolute + _TINY, rows)
        _mirror(hi, lo, rows)

    # The exact row sums of G̃ (whole rows, one reduction each: the same numbers whatever the blocking); a row's
    # part left of its block is the mirror, read from the earlier blocks' columns.
    sums = np.empty(n, dtype=QUAD)
    abs_means = np.empty(n)
    for index, rows in enumerate(blocks):
        left = [held[k][:, rows.start - b.start:rows.stop - b.start].T for k, b in enumerate(blocks[:index])]
        sums[rows] = np.add.reduce(np.concatenate(left + [held[index]], axis=1), axis=1)
        abs_means[rows] = np.abs(hi[rows]).sum(axis=1) / n
    return _FirstPass(hi, lo, held, sums, abs_means, norm_g, blocks, scales, exact_sigma, median, standardized,
                      exp2)


def _second_pass(first: _FirstPass, squares: "ExactSquares", *, include_linear: bool) -> Binary128Gram:
    """Â = L̂ + G̃ − m̂_i − m̂_j + ĝ (or E without L̂) on and above the diagonal (symmetric in i, j), overwriting
    the first pass's words block by block, and mirrored; the bound of both passes."""
    hi, lo, sums, abs_means = first.hi, first.lo, first.sums, first.abs_means
    n = hi.shape[0]
    n_q = np.array([n], dtype=np.float64).astype(QUAD)[0]
    means = sums / n_q
    grand = np.add.reduce(means) / n_q
    means_abs = np.abs(means.astype(np.float64))
    g3, gn = gamma(3), gamma(n)
    grand_err = gn * (means_abs.mean() + abs_means.mean()) + g3 * abs(float(grand))
    coef_l = _linear_coefficient(squares.linear_error) if include_linear else 0.0
    norm_rest = _SquaredNorm()
    for rows, held in zip(first.blocks, first.held):
        upper = slice(rows.start, n)
        outer_means = means_abs[rows, None] + means_abs[None, upper]
        rest = g3 * (np.abs(hi[rows, upper]) + outer_means) + grand_err
        rest += gn * (abs_means[rows, None] + abs_means[None, upper])
        if include_linear:
            linear = squares.linear(rows)
            rest += coef_l * np.abs(squares.linear_float64(rows))
            held = linear + held
        a = held - (means[rows, None] + means[None, upper])
        _to_words(a + grand, hi[rows, upper], lo[rows, upper])
        _add_upper(norm_rest, rest + _WORDS * np.abs(hi[rows, upper]) + _TINY, rows)
        _mirror(hi, lo, rows)
    if not np.isfinite(hi).all():
        raise ValueError("entries of the scaled Gaussian Gram exceed the float64 range; rescale X")

    margin = 1 + (n * n + 128) * 2.0**-52  # float64 evaluation of the bound itself
    bound = (first.norm_g.value() + norm_rest.value()) * margin
    scales = first.scales
    return Binary128Gram(
        hi=hi,
        lo=lo,
        error_bound=math.nextafter(bound, math.inf),
        sigma=first.sigma,
        sigma_x=_round_mpf(scales.sigma_x),
        median_distance=None if scales.d_x is None else _round_mpf(scales.d_x),
        median=first.median,
        standardized=first.standardized,
        exp2=first.exp2,
    )


def _mirror(hi: np.ndarray, lo: np.ndarray, rows: slice) -> None:
    """Copy the words of rows × (columns past the block) to their transposed places below the block."""
    past = slice(rows.stop, hi.shape[0])
    hi[past, rows] = hi[rows, past].T
    lo[past, rows] = lo[rows, past].T


def _add_upper(norm: "_SquaredNorm", e: np.ndarray, rows: slice) -> None:
    """Add the entrywise bounds ``e`` of rows × [rows.start, N) to a squared norm with each entry past the block's
    diagonal square counted twice (once for its mirror: the bound of entry (j, i) equals that of (i, j))."""
    width = rows.stop - rows.start
    norm.add(e[:, :width])
    if e.shape[1] > width:
        past = e[:, width:]
        norm.add(past)
        norm.add(past)


def _data_side(X, median: str, standardized: bool):
    """What every bandwidth of one data set shares: X = M·2^e, the exact median pair(s) (or None) and the exact
    squares, whose binary128 blocks are kept (a sweep over σ reads them once)."""
    # one data set's reads at a time: up to _KEEP_BYTES per process
    return data_state(X).derived(_data_side_of, median, standardized, keep=1)


def _data_side_of(X, median: str, standardized: bool):
    exact = ExactData.from_float64(X)
    median_sq = ExactEccentricity(X, median).median_sq if standardized else None
    return exact, median_sq, ExactSquares(exact, keep=24 * X.shape[0] ** 2 <= _KEEP_BYTES)



@dataclass(frozen=True)
class _Scales:
    sigma_x: object  # 320-bit mpf
    d_x: object  # 320-bit mpf or None
    s2: object  # σ_X² rounded to binary128
    c: object  # 1/(2σ_X²) rounded to binary128
    residual_exp2: int  # x of E's words E·2^−x (module docstring)


def _bandwidth(sigma: Fraction, median_sq, X: np.ndarray, exp2: int) -> _Scales:
    """σ_X and the binary128 scalars σ_X², 1/(2σ_X²), each rounded once from a 320-bit value (rel. error ≤ 2⁻³⁰⁰).

    Raises ValueError unless σ_X², every û (≥ 2^(2e)·ĉ where D > 0, ≤ d·(2 max|x|)²·ĉ) and so Ĝ stay well
    inside the binary128 normal range.
    """
    ctx = mpmath.MPContext()
    ctx.prec = WIDE_BITS
    s = ctx.make_mpf(libmp.from_rational(sigma.numerator, sigma.denominator, WIDE_BITS, libmp.round_nearest))
    requested = s
    d_x = None
    if median_sq is not None:  # d_X = 2^e · mean of √(median integers), as geometry.median_distance defines it
        d_x = ctx.ldexp(ctx.fsum(ctx.sqrt(v) for v in median_sq) / len(median_sq), exp2)
        s = s * d_x
    s2 = s * s
    c = 1 / (2 * s2)
    top = ctx.mag(X.shape[1] * (2 * ctx.mpf(max(float(np.abs(X).max()), 2.0**exp2))) ** 2)
    size = ctx.mag(s2) + 2 * (ctx.mag(c) + top)  # ≥ log2 of σ_X²û²/2 ≥ Ĝ for every û ≤ ĉ·max D
    residual_exp2 = size if size < _SCALED_BELOW else 0
    if max(abs(ctx.mag(s2)), abs(ctx.mag(c) + 2 * exp2), abs(ctx.mag(c) + top),
           abs(ctx.mag(s2) - residual_exp2)) > _QUAD_EXP:
        raise ValueError(f"sigma={ctx.nstr(requested, 6)} puts |x_i - x_j|^2/2sigma_X^2 outside the binary128 range; "
                         "use backend='mp'")
    return _Scales(s, d_x, binary128_scalar(s2._mpf_), binary128_scalar(c._mpf_), int(residual_exp2))


def _block_rows(block_rows, n: int) -> int:
    if block_rows is None:
        return max(1, _BLOCK_ENTRIES // n)
    if isinstance(block_rows, bool) or not isinstance(block_rows, (int, np.integer)) or block_rows < 1:
        raise ValueError(f"block_rows must be a positive integer, got {block_rows!r}")
    return int(block_rows)


def _linear_coefficient(linear_error: float) -> float:
    """The factor of |L̂| in the entrywise bound: L̂'s own error r_L|L| ≤ r_L|L̂|/(1 − r_L), plus γ_3|L̂| for its
    share of the centering sums' magnitudes; 1 + 2⁻⁴⁰ covers reading |L̂| as fl64 and the float64 evaluation."""
    return (linear_error / (1 - linear_error) + gamma(3)) * (1 + 2.0**-40)


def _to_words(a: np.ndarray, hi: np.ndarray, lo: np.ndarray, *, held: bool = False) -> np.ndarray | None:
    """Write hi = fl64(a), lo = fl64(a − hi) into the given views (a − hi is exact in binary128: a multiple of
    ulp(a) below ulp64(a)); with ``held``, return hi + lo in binary128 (exact: what the words hold)."""
    hi[...] = a.astype(np.float64)
    high = hi.astype(QUAD)
    lo[...] = (a - high).astype(np.float64)
    return np.add(high, lo.astype(QUAD), out=high) if held else None


def _round_mpf(x) -> mpmath.mpf:
    return mpmath.mp.make_mpf(libmp.mpf_pos(x._mpf_, BITS, libmp.round_nearest))


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


# φ's series: coefficients 1/(j+2)! rounded once to binary128, used where û < 1/16. Horner's relative error is at
