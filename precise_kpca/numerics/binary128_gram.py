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
  else the Ozaki scheme. Each exact entry is read into binary128 with relative error r (:class:`_IntegerProducts`):
  r = 0 on the float64 route, r = u (one rounding) when their a-priori bound is below 2²⁰⁷, else u + 2⁻¹⁸⁰.
* D̂ = D(1 + δ_D), |δ_D| ≤ r_D = r (was: d differences, squares and sums in binary128, γ_{d+2}).
* L̂ = (N²L read as D̂ is) / N² in binary128: |L̂ − L| ≤ r_L |L| ≤ r_L |L̂| / (1 − r_L), r_L = (1 + r)(1 + u) − 1
  (was: X_c rounded and L̂ summed in binary128, |L̂ − L| ≤ γ_{d+2} |X_c| |X_c|ᵀ).
* û = D̂·ĉ with ĉ = 1/(2σ_X²) rounded once (σ_X² = σ² d_X² from the exact median pair(s) of
  :class:`~precise_kpca.numerics.exact_geometry.ExactEccentricity`, 320-bit intermediate):
  |δû| ≤ δ_u = (1 + r_D)(1 + 2⁻³⁰⁰)(1 + u)² − 1 ≤ 3u + 2⁻¹⁷⁹ (was γ_{d+5}).
* Ĝ = φ(û)·ŝ, ŝ = σ_X² rounded once, φ(v) = e^{−v} − 1 + v by its series where û < 1/16 (relative error
  1.2γ_46, :func:`_phi_series`; was below 1/4, 1.2γ_60) and as expm1(−û) + û elsewhere. SLEEF's expm1 errs by
  ≤ 1 ulp ≤ 2u|expm1(−û)| ≤ 2uû, an *absolute* error σ_X²·2uû ≈ u·D that the cancellation in expm1(−û) + û
  does not shrink (from 1/16 on it is below the series' former 1.2γ_60 relative). A relative
  perturbation δ of the argument moves φ(v) = e^{−v} − 1 + v by at most 2|δ|φ (since vφ'(v) ≤ 2φ(v)), so
  |Ĝ − G| ≤ c_G|Ĝ| + c_D D with c_G ≈ 4u + 2δ_u ≤ 10u (was (2d + 14)u), c_D ≈ u (exact constants in
  :func:`_residual_coefficients`; D is taken as fl64(D̂), whose relative error r_D + 2⁻⁵³ is covered there).
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
from functools import cached_property

import mpmath
import numpy as np
from mpmath import libmp
from numpy_quaddtype import QuadPrecDType

from ..arith.fixed import FixedMatrix, digit_bits_for
from ..arith.ozaki import matmul
from ..arith.rounding import float_up
from ..errors import InternalCheckFailed
from ..validation import check_data, parse_sigma
from .data import data_state
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
_SCALED_BELOW = -512  # E's words are scaled up where its a-priori size is below 2^this (float64 would lose it)
_BLOCK_ENTRIES = 2**20  # entries per row block: ~16 MB per binary128 temporary
_SERIES_TERMS = 19  # (1/16)^19 / 21! < 2^-140: the truncated tail is far below one binary128 rounding
_FLOAT_EXACT = 2**53  # integers up to this are exact in float64, and so are sums that stay within it
_READ_BITS = 26  # digit width of the canonical fixed point read by _read_digits (two digits fit a float64)
_WINDOW = 8  # digits read per entry: two halves of four, each exact in binary128
_WINDOWED_READ = math.nextafter(_U, math.inf)  # ≥ u + 2^-180, the error of _read_digits beyond the window
_KEEP_BYTES = 2**29  # D̂, L̂ and their float64 roundings (σ-independent, 48 N² bytes) kept between σ up to N = 3344;
# with one σ's first pass and words (kept_words: 32 N² bytes more) up to N = 2590


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
    pass: Ĝ, its row sums and its bound) at each σ. Up to N = 2590 (with the σ-independent reads, ≤ _KEEP_BYTES
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
        return _FirstPass(self.hi.copy(), self.lo.copy(), self.sums, self.abs_means, self.norm_g, self.blocks,
                          self.scales, self.sigma, self.median, self.standardized, self.exp2)


def _first_pass(X, exact_sigma, median, standardized, block_rows, exp2: int) -> _FirstPass:
    n = X.shape[0]
    exact, median_sq, squares = _data_side(X, median, standardized)
    scales = _bandwidth(exact_sigma, median_sq, X, exact.exp2)
    s2 = scales.s2 * _quad_scalar(libmp.from_man_exp(1, -exp2))  # exact: a power of two within binary128's range
    rows_per_block = _block_rows(block_rows, n)
    blocks = [slice(i, min(i + rows_per_block, n)) for i in range(0, n, rows_per_block)]
    coef_g, coef_d = _residual_coefficients(squares.distance_error)

    # Ĝ on and above the diagonal, row block by row block, held in the output words and mirrored (every entry of
    # Ĝ depends on D̂_ij alone, and D̂ is exactly symmetric: the mirror is the entry); the G part of the bound,
    # each entry past the block's diagonal square counted for its mirror too.
    hi = np.empty((n, n))
    lo = np.empty((n, n))
    norm_g = _SquaredNorm()
    for rows in blocks:
        upper = slice(rows.start, n)
        dist = np.ascontiguousarray(squares.distances(rows)[:, upper])
        g, series = _residual_block(dist, scales.c, s2)
        _to_words(g, hi[rows, upper], lo[rows, upper])
        # series entries: relative error only; expm1 entries: expm1's absolute error u·û survives the cancellation
        relative = coef_g + _WORDS + np.where(series, _SERIES_ERROR, 0.0)
        absolute = 0.0 if series.all() else np.where(
            series, 0.0, coef_d * np.ldexp(squares.distances_float64(rows)[:, upper], -exp2))
        _add_upper(norm_g, relative * np.abs(hi[rows, upper]) + absolute + _TINY, rows)
        _mirror(hi, lo, rows)

    # The exact row sums of G̃ (whole rows, one reduction each: the same numbers whatever the blocking).
    sums = np.empty(n, dtype=_Q)
    abs_means = np.empty(n)
    for rows in blocks:
        sums[rows] = np.add.reduce(hi[rows].astype(_Q) + lo[rows].astype(_Q), axis=1)
        abs_means[rows] = np.abs(hi[rows]).sum(axis=1) / n
    return _FirstPass(hi, lo, sums, abs_means, norm_g, blocks, scales, exact_sigma, median, standardized, exp2)


def _second_pass(first: _FirstPass, squares: "_ExactSquares", *, include_linear: bool) -> Binary128Gram:
    """Â = L̂ + G̃ − m̂_i − m̂_j + ĝ (or E without L̂) on and above the diagonal (symmetric in i, j), overwriting
    the first pass's words block by block, and mirrored; the bound of both passes."""
    hi, lo, sums, abs_means = first.hi, first.lo, first.sums, first.abs_means
    n = hi.shape[0]
    n_q = np.array([n], dtype=np.float64).astype(_Q)[0]
    means = sums / n_q
    grand = np.add.reduce(means) / n_q
    means_abs = np.abs(means.astype(np.float64))
    g3, gn = _gamma(3), _gamma(n)
    grand_err = gn * (means_abs.mean() + abs_means.mean()) + g3 * abs(float(grand))
    coef_l = _linear_coefficient(squares.linear_error) if include_linear else 0.0
    norm_rest = _SquaredNorm()
    for rows in first.blocks:
        upper = slice(rows.start, n)
        held = hi[rows, upper].astype(_Q) + lo[rows, upper].astype(_Q)  # G̃, exact
        outer_means = means_abs[rows, None] + means_abs[None, upper]
        rest = g3 * (np.abs(hi[rows, upper]) + outer_means) + grand_err
        rest += gn * (abs_means[rows, None] + abs_means[None, upper])
        if include_linear:
            linear = squares.linear(rows)[:, upper]
            rest += coef_l * np.abs(squares.linear_float64(rows)[:, upper])
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
    return exact, median_sq, _ExactSquares(exact, keep=48 * X.shape[0] ** 2 <= _KEEP_BYTES)


class _ExactSquares:
    """Row blocks of D = (‖x_i − x_j‖²) and L = X_c X_cᵀ from exact integer products, in binary128.

    Parameters
    ----------
    exact : ExactData
        X = M·2^e, shape (N, d).
    keep : bool
        Keep each block read (the same rows are asked for at every σ); callers get copies to overwrite.

    Attributes
    ----------
    distance_error, linear_error : float
        Bounds on the entrywise relative errors of :meth:`distances` and :meth:`linear` (module docstring).
    """

    def __init__(self, exact: ExactData, keep: bool = False):
        self._keep = keep
        self._kept: dict = {}
        m = exact.mantissas
        n = m.shape[0]
        # D and X_c are invariant under a shift of each column: subtracting the rounded column means keeps the
        # integers short (offset data becomes small, one-hot data stays within {-1, 0, 1})
        self._m = m - (m.sum(axis=0) + n // 2) // n
        self._n = n
        self._exp2 = 2 * exact.exp2
        self._distances = _IntegerProducts(self._m, distances=True)
        self.distance_error = self._distances.error

    @cached_property
    def _linear(self) -> "_IntegerProducts":
        return _IntegerProducts(self._n * self._m - self._m.sum(axis=0), distances=False)

    @property
    def linear_error(self) -> float:
        """r_L = (1 + r)(1 + u) − 1 (the read of N²L, then one division by N²), rounded up."""
        return float_up((1 + Fraction(self._linear.error)) * (1 + Fraction(_U)) - 1)

    def distances(self, rows: slice) -> np.ndarray:
        """D̂ for the rows ``rows``: shape (rows, N), binary128, |D̂ − D| ≤ ``distance_error``·D."""
        return self._read("distances", rows, lambda: self._distances.block(rows, self._exp2))

    def linear(self, rows: slice) -> np.ndarray:
        """L̂ for the rows ``rows``: shape (rows, N), binary128, |L̂ − L| ≤ ``linear_error``·|L|."""
        return self._read("linear", rows, lambda: self._linear.block(rows, self._exp2, self._n * self._n))

    def distances_float64(self, rows: slice) -> np.ndarray:
        """fl64(D̂) for the rows ``rows`` (for the bound's terms), shape (rows, N)."""
        return self._read("distances64", rows, lambda: self.distances(rows).astype(np.float64))

    def linear_float64(self, rows: slice) -> np.ndarray:
        """fl64(L̂) for the rows ``rows`` (for the bound's terms), shape (rows, N)."""
        return self._read("linear64", rows, lambda: self.linear(rows).astype(np.float64))

    def _read(self, part: str, rows: slice, compute) -> np.ndarray:
        if not self._keep:
            return compute()
        key = (part, rows.start, rows.stop)
        if key not in self._kept:
            self._kept[key] = compute()
        return self._kept[key].copy()


class _IntegerProducts:
    """Exact row blocks of P = F Fᵀ, or of ‖f_i − f_j‖² = n_i + n_j − 2 P_ij (n_i = ‖f_i‖²), for an integer
    matrix F, each entry read into binary128 with relative error at most ``error``.

    Two routes, fixed per matrix, so that entry (i, j) reads the same from every row block (Â stays exactly
    symmetric and independent of the blocking):

    * float64: every product and partial sum is an integer of magnitude ≤ 2⁵³ (small integers: one-hot, counts),
      so one float64 GEMM is exact whatever its summation order, and so is the conversion: error 0.
    * fixed point: the Ozaki scheme's exact product, re-split exactly (the grid is 1) into balanced 26-bit digits
      on the one exponent E of the a-priori bound, so an entry's digits do not depend on its block; for the
      distances the norms' digits on the same exponent are added digit by digit and the sums carried exactly
      (:meth:`~precise_kpca.arith.fixed.FixedMatrix.from_digit_sums`). Then :func:`_read_digits`: one
      rounding (error u) while E ≤ 208, else u + 2⁻¹⁸⁰.

    Parameters
    ----------
    f : ndarray of Python int (object), shape (N, k)
    distances : bool
        Squared distances instead of the Gram.
    """

    def __init__(self, f: np.ndarray, *, distances: bool):
        k = f.shape[1]
        top = int(np.max(np.abs(f), initial=0))
        bound = (4 if distances else 1) * k * top * top  # ≥ every |entry|, and every float64 partial sum
        self._distances = distances
        self._exponent = bound.bit_length() + 1  # every |entry| ≤ bound < 2^(E−1)
        if bound <= _FLOAT_EXACT:
            self.error = 0.0
            self._floats = f.astype(np.float64)
            self._norms = np.einsum("ij,ij->i", self._floats, self._floats)  # ≤ k·top² ≤ 2⁵³: exact
            return
        self.error = _U if -(-self._exponent // _READ_BITS) <= _WINDOW else _WINDOWED_READ
        self._floats = None
        self._f = FixedMatrix.from_integers(f, 0, digit_bits=digit_bits_for(k))
        if distances:
            norms = FixedMatrix.from_integers((f * f).sum(axis=1)[:, None], 0, digit_bits=_READ_BITS)
            self._norms = self._canonical(norms).digits[:, :, 0]

    def block(self, rows: slice, exp2: int, divisor: int = 1) -> np.ndarray:
        """The entries of the rows ``rows`` times 2^exp2 / ``divisor`` (an integer below 2⁵³): shape (rows, N),
        binary128, each within ``error`` (and one more rounding, u, for a divisor other than 1)."""
        if self._floats is not None:
            f = self._floats
            p = f[rows] @ f.T
            if self._distances:
                p = (self._norms[rows, None] + self._norms[None, :]) - 2 * p
            return _scaled(p.astype(_Q), exp2, divisor)
        product = self._canonical(matmul(_rows(self._f, rows), self._f.T))
        if self._distances:
            sums = (self._norms[:, rows, None] + self._norms[:, None, :]) - 2 * product.digits
            product = FixedMatrix.from_digit_sums(sums, self._exponent, _READ_BITS)
            if product.exponent != self._exponent:
                raise InternalCheckFailed(f"squared distances exceed their a-priori bound 2^{self._exponent - 1}")
        return _read_digits(product, exp2, divisor)

    def _canonical(self, a: FixedMatrix) -> FixedMatrix:
        """``a`` (exact integers) as balanced 26-bit digits on the a-priori exponent E: the same in every block."""
        out = a.rounded(self._exponent, exponent=self._exponent, digit_bits=_READ_BITS)
        if out.error_bound:
            raise InternalCheckFailed(f"an exact integer product is not on the grid 1 of exponent {self._exponent}")
        return out


def _read_digits(fixed: FixedMatrix, exp2: int, divisor: int) -> np.ndarray:
    """value·2^exp2/divisor of a fixed-point matrix with balanced digits of ≤ 26 bits, in binary128: shape of ``fixed``.

    Each entry is read from at most eight digits: all of them, or the eight from its leading nonzero digit ℓ.
    Pairs d·2^b + d' are integers below 2⁵², exact in float64; two pairs (four digits) below 2^(4b) ≤ 2¹⁰⁴ add
    exactly in binary128, so the entry is one rounding of the sum of the (at most two) halves: error u when every
    digit is read. With more than eight digits, balanced digits give |value| ≥ (½ − 2⁻²⁶)·unit_ℓ and a tail beyond
    the window of magnitude ≤ 2⁻¹⁸³(1 + 2⁻²⁵)·unit_ℓ (b = 26): error ≤ u + 2⁻¹⁸⁰. The scalings by powers of two
    are exact within binary128's range; a divisor other than 1 rounds once more.
    """
    b, digits = fixed.digit_bits, fixed.digits
    count = digits.shape[0]
    if count <= _WINDOW:
        window, lead = [np.zeros(digits.shape[1:])] * (count % 2) + list(digits), None
    else:
        lead = np.argmax(digits != 0, axis=0)  # 0 for a zero entry, whose digits are all 0
        window = []
        for k in range(_WINDOW):
            index = lead + k
            d = np.take_along_axis(digits, np.minimum(index, count - 1)[None], axis=0)[0]
            window.append(np.where(index < count, d, 0.0))
    pairs = len(window) // 2
    # pair k, scaled by 2^(2b(pairs − 1 − k)) in float64 (exact), then in binary128
    q = [((window[2 * k] * 2.0**b + window[2 * k + 1]) * 2.0 ** (2 * b * (pairs - 1 - k))).astype(_Q)
         for k in range(pairs)]
    high = q[0] + q[1] if pairs > 1 else q[0]
    value = high if pairs <= 2 else high + (q[2] + q[3] if pairs == 4 else q[2])
    last = fixed.exponent - b * count + exp2  # unit of the last digit
    if lead is None:
        return _scaled(value, last, divisor)
    units = _quad_array([(0, 1, last + b * (count - l - _WINDOW), 1) for l in range(count)])
    return _scaled(value * units[lead], 0, divisor)


def _scaled(q: np.ndarray, exp2: int, divisor: int) -> np.ndarray:
    """q·2^exp2 / divisor in binary128: exact for divisor 1, else one rounding (divisor·2^-exp2 is exact)."""
    if divisor == 1:
        return q * _quad_scalar(libmp.from_man_exp(1, exp2))
    return q / _quad_scalar(libmp.from_man_exp(divisor, -exp2))


def _rows(a: FixedMatrix, rows: slice) -> FixedMatrix:
    """The rows ``rows`` of ``a`` (a view of its digits)."""
    return FixedMatrix(a.digits[:, rows], a.exponent, a.digit_bits)


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
    size = ctx.mag(s2) + 2 * (ctx.mag(c) + top)  # ≥ log2 of σ_X²û²/2 ≥ Ĝ for every û ≤ ĉ·max D
    residual_exp2 = size if size < _SCALED_BELOW else 0
    if max(abs(ctx.mag(s2)), abs(ctx.mag(c) + 2 * exp2), abs(ctx.mag(c) + top),
           abs(ctx.mag(s2) - residual_exp2)) > _QUAD_EXP:
        raise ValueError(f"sigma={ctx.nstr(requested, 6)} puts |x_i - x_j|^2/2sigma_X^2 outside the binary128 range; "
                         "use backend='mp'")
    return _Scales(s, d_x, _quad_scalar(s2._mpf_), _quad_scalar(c._mpf_), int(residual_exp2))


def _block_rows(block_rows, n: int) -> int:
    if block_rows is None:
        return max(1, _BLOCK_ENTRIES // n)
    if isinstance(block_rows, bool) or not isinstance(block_rows, (int, np.integer)) or block_rows < 1:
        raise ValueError(f"block_rows must be a positive integer, got {block_rows!r}")
    return int(block_rows)


def _gamma(k: int) -> float:
    return k * _U / (1 - k * _U)


def _residual_coefficients(distance_error: float) -> tuple[float, float]:
    """c_G, c_D with |Ĝ − G| ≤ c_G|Ĝ| + c_D·D entrywise (module docstring), given D̂'s relative error r_D.

    ŝ(1+δ_s), the product and the sum carry γ_4 (δ_s includes the 2⁻³⁰⁰ of the wide value); û = u(1 + δ_u),
    |δ_u| ≤ (1 + r_D)(1 + 2⁻³⁰⁰)(1 + u)² − 1 (D̂, ĉ from its 320-bit value, the product);
    |φ(û) − φ(u)| ≤ 2|δ_u| φ(û)/(1 − |δ_u|)²; expm1 errs by ≤ 2u·û, and σ_X²û ≤ (1 + δ_u) D/2. The factor
    1 + 2⁻⁴⁰ covers evaluating these in float64 and reading D as fl64(D̂).
    """
    g4 = _gamma(4)
    gu = float_up((1 + Fraction(distance_error)) * (1 + Fraction(1, 2**300)) * (1 + Fraction(_U)) ** 2 - 1)
    spread = 2 * gu / (1 - gu) ** 2
    coef_g = g4 / (1 - g4) + spread / (1 - g4)
    coef_d = (1 + spread) * (1 + gu) * _U
    return coef_g * (1 + 2.0**-40), coef_d * (1 + 2.0**-40)


def _linear_coefficient(linear_error: float) -> float:
    """The factor of |L̂| in the entrywise bound: L̂'s own error r_L|L| ≤ r_L|L̂|/(1 − r_L), plus γ_3|L̂| for its
    share of the centering sums' magnitudes; 1 + 2⁻⁴⁰ covers reading |L̂| as fl64 and the float64 evaluation."""
    return (linear_error / (1 - linear_error) + _gamma(3)) * (1 + 2.0**-40)


def _residual_block(dist: np.ndarray, c, s2) -> tuple[np.ndarray, np.ndarray]:
    """Ĝ = σ_X²(expm1(−û) + û), û = D̂·ĉ, for a row block of D̂ (binary128, overwritten): shape (rows, N).

    Returns Ĝ and the mask of the entries evaluated by the series. D̂ is exactly symmetric, and so is Ĝ.
    """
    u = np.multiply(dist, c, out=dist)
    small = u < _SERIES_QUAD
    if small.all():  # large σ: the series everywhere, no expm1
        return np.multiply(_phi_series(u), s2), small
    diff = np.empty_like(u)
    with np.errstate(invalid="ignore"):  # SLEEF flags 'invalid' for very negative arguments yet returns −1
        e = np.expm1(np.negative(u, out=diff), out=diff)
    np.add(e, u, out=e)
    if small.any():
        e[small] = _phi_series(u[small])
    return np.multiply(e, s2, out=e), small


def _phi_series(u: np.ndarray) -> np.ndarray:
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
    for terms in range(1, _SERIES_TERMS + 1):
        if terms * math.log2(u_max) - math.log2(math.factorial(terms + 2)) < -140:
            return terms
    return _SERIES_TERMS


def _to_words(a: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> None:
    """Write hi = fl64(a), lo = fl64(a − hi) into the given views (a − hi is exact in binary128: a multiple of
    ulp(a) below ulp64(a))."""
    hi[...] = a.astype(np.float64)
    lo[...] = (a - hi.astype(_Q)).astype(np.float64)


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


# φ's series: coefficients 1/(j+2)! rounded once to binary128, used where û < 1/16. Horner's relative error is at
# most γ_{2T+4} times Σ|terms| / |φ/u²| ≤ 1.05 at u = 1/16 (coefficient roundings included); 1.2 covers it.
# From 1/16 on, expm1's absolute error σ_X²·2uû is below the series' 1.2γ_60 (the bound before) times φ(û)σ_X²
# (φ(û)/û ≥ 1/32.7 > 1/36 there), so the switch at 1/16 rather than 1/4 tightens every entry's bound.
_SERIES_QUAD = _quad_scalar(libmp.from_rational(1, 16, _BITS, libmp.round_nearest))
_SERIES_COEFFICIENTS = [_quad_scalar(libmp.from_rational(1, math.factorial(j + 2), _WIDE_BITS, libmp.round_nearest))
                        for j in range(_SERIES_TERMS)]
_SERIES_ERROR = 1.2 * _gamma(2 * _SERIES_TERMS + 8)
_SERIES_CLASSES = [(_quad_scalar(libmp.from_man_exp(1, -k)), _series_terms(2.0**-k)) for k in (140, 64, 32, 16, 8, 4)]
