"""1 − CKA(K_G(σ), K_lin) (paper Theorem 1) and its σ → 0 normalizer, enclosed rigorously.

Guarantee: for the exact X (float64 taken as exact) and the exact σ, ``[lower, upper]`` contains
1 − CKA(K_G(σ), K_lin) and ``[f0_lower, f0_upper]`` contains f(0) = 1 − trace(L)/(√(N−1)·‖L‖_F), for every σ the
binary128 builder :func:`~precise_kpca.numerics.binary128_gram.centered_residual_words` accepts, under that
builder's stated assumptions (correctly rounded binary128 arithmetic, SLEEF's 1-ulp expm1). Outside its range
:class:`~precise_kpca.errors.RouteUnavailable` is raised.

The quantity. A = σ_X² H K_G H = L + E with L = H X Xᵀ H and E = H G H, G_ij = σ_X² φ(u_ij) (φ(u) = e^{−u} − 1 + u);
CKA = ⟨A, L⟩ / (‖A‖ ‖L‖) (Frobenius; centering and the σ_X² scale cancel). With p = ‖E_⊥‖, E_⊥ the part of E
orthogonal to L, a = ‖A‖, c = ⟨A, L⟩ = ‖L‖² + ⟨E, L⟩ and ℓ = ‖L‖:

    1 − CKA = sin²/(1 + cos) = p² ℓ / (a (a ℓ + c)),        sin² = p²/a²,  cos = c/(a ℓ)

(A_⊥ = E_⊥: L has no part orthogonal to itself), which subtracts no nearly equal numbers.

Proof of the enclosure.

1. L exactly. X = M·2^e (:class:`~precise_kpca.numerics.exact.ExactData`), so Z = N·M − 1·(1ᵀM) is an
   integer N×d matrix with X_c = Z·2^e/N and L = Z Zᵀ·s, s = 2^(2e)/N². Hence ℓ² = ‖ZᵀZ‖²·s² and
   trace(L) = ‖Z‖²·s, with ZᵀZ and ‖Z‖² from exact Ozaki products and exact column dots.
2. E up to one perturbation. The builder returns float64 words hi + lo with ‖E − (hi + lo)‖ ≤ β (its
   ``error_bound``). In each row block b, hi and lo are read as exact fixed-point matrices H_b, W_b
   (:meth:`~precise_kpca.arith.fixed.FixedMatrix.from_float64`) whose entries err by at most ε_b together;
   so E_hp, the stack of the H_b + W_b, satisfies ‖E − E_hp‖ ≤ δ := β + √(N Σ_b rows_b ε_b²) (where E is below
   float64's range the words hold E·2^−x, ``Binary128Gram.exp2``: every scalar below is scaled back exactly). Then
   ⟨E_hp, L⟩ = s·trace(Zᵀ E_hp Z) (exact Ozaki products H_b Z, W_b Z and column dots with Z) and
   ‖E_hp‖² = Σ_b ‖H_b‖² + 2⟨H_b, W_b⟩ + ‖W_b‖² (exact column dots) are exact rationals, and so are
   p̂² = ‖E_hp‖² − ⟨E_hp, L⟩²/ℓ² (= ‖E_hp,⊥‖², ≥ 0), â² = ‖L + E_hp‖² = ℓ² + 2⟨E_hp, L⟩ + ‖E_hp‖² and
   ĉ = ℓ² + ⟨E_hp, L⟩.
3. Propagation of ΔE = E − E_hp, ‖ΔE‖ ≤ δ: |c − ĉ| = |⟨ΔE, L⟩| ≤ δ ℓ (Cauchy–Schwarz); |a − â| ≤ δ and
   |p − p̂| ≤ δ (the triangle inequality; E ↦ E_⊥ is an orthogonal projection, a contraction). Moreover p ≥ 0
   and c = σ_X²⟨K_G, L⟩ ≥ 0 (K_G and L are positive semidefinite), so the box is intersected with those.
4. Monotonicity. On a > 0, c ≥ 0, f(p, a, c) = p² ℓ / (a(aℓ + c)) increases with p ≥ 0 and decreases with a
   (the denominator's derivative 2aℓ + c is positive) and with c. So f(p_lo, a_hi, c_hi) ≤ 1 − CKA ≤
   f(p_hi, a_lo, c_lo) over the box of step 3; both are evaluated as arb balls (ℓ a ball from its exact square)
   and their lower and upper ends taken. a_lo ≤ 0 (δ as large as ‖A‖) raises
   :class:`~precise_kpca.errors.InsufficientPrecision`.
6. Over a range of σ (:func:`cka_upper_over`). G_ij = (D_ij/2)·g(u_ij) with g(u) = φ(u)/u, u = D_ij t/2 and
   t = 1/σ_X²; g increases on u ≥ 0 with 0 ≤ g′ ≤ 1/2 (proofs/theorem1). For σ_X ∈ [σ_a, σ_b] (t_b ≤ t ≤ t_a)
   hence 0 ≤ G(σ) − G(σ_b) ≤ (D∘D)(t_a − t_b)/8 entrywise, so E(σ) = E(σ_b) + HΔH with
   ‖HΔH‖ ≤ ‖D∘D‖_F (t_a − t_b)/8 =: δ_σ (H is an orthogonal projector). Steps 3–4 with δ + δ_σ give one upper
   end for every σ of the range. For σ_b = ∞, E(∞) = 0: the bound is f(δ_σ, ℓ − δ_σ, ℓ² − ℓδ_σ) =
   δ_σ²/(2(ℓ − δ_σ)²) with δ_σ = ‖D∘D‖_F t_a/8, and δ_σ² grows like t_a² (Theorem 1's ratio on [σ_a, ∞) is
   then at most this over (ρ/σ_a)²: bound/(ρ/σ)² ∝ t/(ℓ − ‖D∘D‖_F t/8)² increases with t).
5. f(0) = ((N−1)ℓ² − trace(L)²) / (√(N−1) ℓ (√(N−1) ℓ + trace(L))) from exact integers (the numerator is
   ≥ 0 by Cauchy–Schwarz: rank L ≤ N − 1), as one arb ball.

The balls' precision is chosen from ‖E_hp‖/δ so that their rounding stays ≥ 2⁶⁴ times below the width δ imposes
(f's relative width is at least 2δ/p ≥ 2δ/‖E_hp‖); the interval's digits are then those of δ/p (≈ 28 on the
paper's data). Cost: the builder (O(N² d) binary128 work, most of the time) plus, per row block, the exact
products H_b Z, W_b Z and the column dots: O(N² d) float64 work; memory: the builder's two N×N float64 words
and about ten block-sized arrays.

Hand-written because no library encloses a kernel alignment: python-flint's arb does the scalar balls, the
exact matrix products are :mod:`precise_kpca.arith.ozaki`'s; this module is the bookkeeping of the bound.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import flint
import mpmath
import numpy as np

from ..arith.balls import exact_fraction
from ..arith.fixed import FixedMatrix
from ..arith.ozaki import column_dots, matmul
from ..errors import InsufficientPrecision, RouteUnavailable
from ..numerics.data import data_state
from ..numerics.exact import ExactData
from ..numerics.exact_geometry import ExactEccentricity
from ..numerics.geometry import check_median
from ..numerics.binary128_gram import kept_words
from ..validation import check_data, parse_sigma

_BLOCK_ENTRIES = 1 << 20  # entries per row block of E read at once (its digits: ~10 float64 arrays of this size)
_GUARD_BITS = 64  # ball rounding this far below the width that δ imposes
_MIN_PREC = 128
_F0_PREC = 256  # f(0) is exact data: its ball is as narrow as this precision makes it
# the builder's messages for a bandwidth or a Gram it cannot hold (every other ValueError propagates as is)
_REFUSALS = ("outside the binary128 range", "exceed the float64 range")
_REMEDY = "a heuristic route (agreement of mp evaluations) is the only one there"


@dataclass(frozen=True)
class CKAEnclosure:
    """Rigorous enclosures of 1 − CKA(K_G(σ), K_lin) and of its normalizer f(0) (module docstring).

    Attributes
    ----------
    lower, upper : mpmath.mpf
        Ends of the enclosure of 1 − CKA at σ: exact binary numbers (global-type mpf, not rounded).
    f0_lower, f0_upper : mpmath.mpf
        Ends of the enclosure of f(0) = 1 − trace(L)/(√(N−1)·‖L‖_F), the value at σ → 0.
    seconds : float
        Wall time of the whole call (the binary128 builder included).
    """

    lower: mpmath.mpf
    upper: mpmath.mpf
    f0_lower: mpmath.mpf
    f0_upper: mpmath.mpf
    seconds: float


def cka_interval(X, sigma, *, median="full") -> CKAEnclosure:
    """Enclose 1 − CKA(K_G(σ), K_lin) and f(0) rigorously (proof in the module docstring).

    Parameters
    ----------
    X : array_like, shape (N, d)
        Data, float64 taken as exact; validated by :func:`precise_kpca.validation.check_data`.
    sigma : int, float, str, Fraction or mpf
        Standardized bandwidth (σ_X = σ·d_X), read exactly by :func:`precise_kpca.validation.parse_sigma`.
    median : {"full", "pairs"}
        Which median distance d_X standardizes σ.

    Returns
    -------
    CKAEnclosure

    Raises
    ------
    ValueError
        Invalid X, σ or median (the message names the parameter, row or column), or a zero median distance.
    RouteUnavailable
        The binary128 builder refuses this bandwidth (or the Gram exceeds the float64 range).
    InsufficientPrecision
        The builder's error bound is as large as ‖A‖_F itself (no enclosure with a positive ‖A‖).
    """
    start = time.perf_counter()
    X = check_data(X)
    exact_sigma = parse_sigma(sigma)
    median = check_median(median)
    quad = _residual_words(X, exact_sigma, median)
    linear = _linear_part(X)
    words = _residual_scalars(quad.hi, quad.lo, quad.error_bound, linear)  # of E·2^−exp2, the words' units
    unit = Fraction(2) ** quad.exp2
    delta = _delta(quad.error_bound, words.read_sq, X.shape[0]) * unit
    residual = _ResidualScalars(words.inner * unit, words.norm_sq * unit * unit, words.read_sq * unit * unit)
    lower, upper = _gap_ends(linear, residual, delta)
    f0_lower, f0_upper = _f0_ends(linear, X.shape[0])
    return CKAEnclosure(lower, upper, f0_lower, f0_upper, time.perf_counter() - start)


def cka_upper_over(X, sigma_a, sigma_b, *, median="full") -> mpmath.mpf:
    """An upper bound on 1 − CKA(K_G(σ), K_lin) valid at every σ ∈ [sigma_a, sigma_b] (module docstring, 6.).

    Parameters
    ----------
    X : array_like, shape (N, d)
    sigma_a : int, float, str, Fraction or mpf
        Lower end of the standardized bandwidths, > 0.
    sigma_b : same, or math.inf
        Upper end, ≥ sigma_a; ``math.inf`` for every σ ≥ sigma_a.
    median : {"full", "pairs"}

    Returns
    -------
    mpmath.mpf
        An exact binary number.

    Raises
    ------
    RouteUnavailable
        The binary128 builder refuses sigma_b.
    InsufficientPrecision
        The range is too wide for a positive ‖A‖ (δ + δ_σ ≥ ‖A‖_F): split it.
    """
    X = check_data(X)
    median = check_median(median)
    low = parse_sigma(sigma_a)
    high = None if sigma_b == math.inf else parse_sigma(sigma_b)
    if high is not None and high < low:
        raise ValueError(f"sigma_b = {sigma_b} is below sigma_a = {sigma_a}")
    linear = _linear_part(X)
    if high is None:
        residual, delta = _ResidualScalars(Fraction(0), Fraction(0), Fraction(0)), Fraction(0)
    else:
        quad = _residual_words(X, high, median)
        residual = _residual_scalars(quad.hi, quad.lo, quad.error_bound, linear)
        delta = _delta(quad.error_bound, residual.read_sq, X.shape[0])
    width = 1 / Fraction(low) ** 2 - (0 if high is None else 1 / Fraction(high) ** 2)
    try:
        return _gap_ends(linear, residual, delta + _sigma_width(X, median, width))[1]
    except InsufficientPrecision as exc:
        raise InsufficientPrecision(f"the range [{sigma_a}, {sigma_b}] is too wide for an upper bound on 1 - CKA "
                                    "(the perturbation over it reaches ||A||_F): split it") from exc


def _sigma_width(X: np.ndarray, median: str, width: Fraction) -> Fraction:
    """δ_σ = ‖D∘D‖_F (t_a − t_b)/8 rounded up, with t_a − t_b = width/d_X² (width = 1/σ_a² − 1/σ_b²)."""
    return data_state(X).derived(_width_constant, median, keep=4) * width


def _width_constant(X: np.ndarray, median: str) -> Fraction:
    """An upper bound on ‖D∘D‖_F/(8 d_X²): in the units 2^(2e) of the exact squared distances S,
    ‖D∘D‖_F = 2^(4e)√ΣS⁴ and 1/d_X² = ρ²/(diam² 2^(2e))."""
    exact = ExactData.from_float64(X)
    fourth = sum(int(v) ** 4 for v in exact.squared_distance_integers.ravel())
    geometry = ExactEccentricity(X, median)
    with flint.ctx.workprec(_MIN_PREC):
        bound = (_arb(Fraction(fourth)).sqrt() * geometry.rho_squared()
                 * _arb(Fraction(2) ** (2 * exact.exp2) / (8 * geometry.diameter_sq)))
        return exact_fraction(bound.upper())


def cka_at_zero_interval(X) -> tuple:
    """Exact-ended enclosure of f(0), the σ → 0 value of 1 − CKA (see :func:`_f0_ends`), without any Gram."""
    X = check_data(X)
    return _f0_ends(_linear_part(X), X.shape[0])


def centered_residual_words(X: np.ndarray, sigma: Fraction, *, median: str):
    """E = H G H in binary128 words (:func:`~precise_kpca.numerics.binary128_gram.centered_residual_words`), the one
    the structured route reads at this σ (:func:`~precise_kpca.numerics.binary128_gram.kept_words`)."""
    return kept_words(X, sigma, median=median, linear=False)


def _residual_words(X: np.ndarray, sigma: Fraction, median: str):
    """E = H G H as binary128 float64 words; what the builder cannot hold becomes :class:`RouteUnavailable`."""
    try:
        quad = centered_residual_words(X, sigma, median=median)
    except ValueError as exc:
        if not any(refusal in str(exc) for refusal in _REFUSALS):
            raise
        raise RouteUnavailable(f"no rigorous 1 - CKA here: the binary128 builder refuses it ({exc})",
                               remedy=_REMEDY) from exc
    if not math.isfinite(quad.error_bound):  # finite words whose bound overflowed (entries near 2^1024)
        raise RouteUnavailable("no rigorous 1 - CKA here: the binary128 builder's error bound exceeds the float64 "
                               "range; rescale X", remedy=_REMEDY)
    return quad


def _linear_part(X: np.ndarray) -> "_LinearPart":
    """The σ-independent linear part, kept per data set (a curve calls every σ on the same X)."""
    return data_state(X).derived(_LinearPart.from_data, keep=4)


@dataclass(frozen=True)
class _LinearPart:
    """L = Z Zᵀ·s exactly: Z = N·X_c·2^(−e) integer, s = 2^(2e)/N².

    Attributes
    ----------
    z : FixedMatrix, shape (N, d)
        Z, exact.
    scale : Fraction
        s.
    gram_sq : Fraction
        ‖ZᵀZ‖_F² (an integer; ‖L‖_F² = gram_sq·s²).
    trace : Fraction
        ‖Z‖_F² (an integer; trace(L) = trace·s).
    zero_inner : int
        ⟨B, L⟩/s for the σ → 0 limit B of K_G (B_ij = 1 where rows i and j are equal, else 0):
        Σ over groups g of equal rows of ‖Σ_{i∈g} Z_i‖² (the trace when no row repeats).
    zero_norm_sq : int
        ‖H B H‖_F² = Σ n_g² − (2/N) Σ n_g³ + (Σ n_g²)²/N² times N² (an integer; N − 1 times N² with no repeats).
    """

    z: FixedMatrix
    scale: Fraction
    gram_sq: Fraction
    trace: Fraction
    zero_inner: int
    zero_norm_sq: Fraction

    @classmethod
    def from_data(cls, X: np.ndarray) -> "_LinearPart":
        exact = ExactData.from_float64(X)
        n = X.shape[0]
        m = exact.mantissas
        z = FixedMatrix.from_integers(n * m - m.sum(axis=0)[None, :], 0)
        ints, exp2 = matmul(z.T, z).to_integers()
        gram_sq = sum(int(v) * int(v) for v in ints.ravel()) * Fraction(2) ** (2 * exp2)
        _, groups = np.unique(X, axis=0, return_inverse=True)  # rows equal as numbers (exact float64 comparison)
        groups = groups.ravel()
        sizes = np.bincount(groups)
        zi = n * m - m.sum(axis=0)[None, :]
        zero_inner = sum(sum(int(v) for v in zi[groups == g].sum(axis=0) ** 2) if c > 1 else
                         sum(int(v) ** 2 for v in zi[groups == g][0]) for g, c in enumerate(sizes))
        s2, s3 = (sum(int(c) ** p for c in sizes) for p in (2, 3))
        zero_norm_sq = Fraction(s2) - Fraction(2 * s3, n) + Fraction(s2 * s2, n * n)
        return cls(z, Fraction(2) ** (2 * exact.exp2) / (n * n), gram_sq, _dot_sum(z, z), zero_inner, zero_norm_sq)

    @property
    def norm_sq(self) -> Fraction:
        """‖L‖_F², exact."""
        return self.gram_sq * self.scale**2


@dataclass(frozen=True)
class _ResidualScalars:
    """Exact scalars of E_hp (the row blocks of hi and lo read in fixed point).

    Attributes
    ----------
    inner : Fraction
        ⟨E_hp, L⟩_F.
    norm_sq : Fraction
        ‖E_hp‖_F².
    read_sq : Fraction
        Σ_b rows_b·ε_b²: the squared Frobenius error of the read is at most N times this.
    """

    inner: Fraction
    norm_sq: Fraction
    read_sq: Fraction


def _residual_scalars(hi: np.ndarray, lo: np.ndarray, builder_bound: float, linear: _LinearPart) -> _ResidualScalars:
    """⟨E_hp, L⟩ = s·trace(Zᵀ E_hp Z) and ‖E_hp‖² exactly, one row block of the words at a time.

    Each block's hi and lo are read separately (:meth:`FixedMatrix.from_float64`, each with its own exponent, so
    lo needs ~53 bits fewer than hi) on one absolute grid 2^g: every entry of hi + lo then errs by at most 2^g,
    and g is chosen with N·2^g ≤ β/16, so the read adds at most a sixteenth to δ. Only that choice uses float64
    arithmetic: the bound itself comes from the reads' exact ``error_bound``.
    """
    n = hi.shape[0]
    rows_per_block = max(1, _BLOCK_ENTRIES // n)
    grid = _read_grid(builder_bound, n)
    trace = norm_sq = read_sq = Fraction(0)
    for first in range(0, n, rows_per_block):
        rows = np.arange(first, min(n, first + rows_per_block))
        words = [_read(w[rows], grid) for w in (hi, lo)]
        z_rows = linear.z.T.take_columns(rows).T
        for w in words:
            trace += _dot_sum(z_rows, matmul(w, linear.z))
        high, low = words
        norm_sq += _dot_sum(high, high) + 2 * _dot_sum(high, low) + _dot_sum(low, low)
        read_sq += len(rows) * (Fraction(high.error_bound) + Fraction(low.error_bound)) ** 2
    return _ResidualScalars(trace * linear.scale, norm_sq, read_sq)


def _read_grid(builder_bound: float, n: int) -> int:
    """The g with N·2^g ≤ β/16 < N·2^(g+1)."""
    return math.frexp(builder_bound / n)[1] - 5


def _read(word: np.ndarray, grid: int) -> FixedMatrix:
    """A float64 block rounded to the grid 2^grid: error ≤ 2^(grid−1) per entry (``error_bound``)."""
    top = float(np.max(np.abs(word), initial=0.0))
    bits = max(1, math.frexp(top)[1] + 1 - grid) if top else 1
    return FixedMatrix.from_float64(word, bits=bits)


def _dot_sum(a: FixedMatrix, b: FixedMatrix) -> Fraction:
    """Σ_ij a_ij b_ij, exactly."""
    dots, exp2 = column_dots(a, b)
    return sum(int(v) for v in dots) * Fraction(2) ** exp2


def _delta(builder_bound: float, read_sq: Fraction, n: int) -> Fraction:
    """δ ≥ ‖E − E_hp‖_F: the builder's bound plus √(N·read_sq), the latter rounded up to a dyadic number."""
    with flint.ctx.workprec(_MIN_PREC):
        read = _arb(n * read_sq).sqrt().upper()
    return Fraction(builder_bound) + exact_fraction(read)


def _gap_ends(linear: _LinearPart, residual: _ResidualScalars, delta: Fraction) -> tuple:
    """The ends f(p_lo, a_hi, c_hi) and f(p_hi, a_lo, c_lo) of the module docstring, steps 3 and 4."""
    ll, el, ee = linear.norm_sq, residual.inner, residual.norm_sq
    with flint.ctx.workprec(_working_bits(ee, delta)):
        d = _arb(delta)
        norm_l = _arb(ll).sqrt()
        p = _arb(ee - el * el / ll).sqrt()
        a = _arb(ll + 2 * el + ee).sqrt()
        c = _arb(ll + el)
        p_lo, p_hi = _nonnegative((p - d).lower()), (p + d).upper()
        a_lo, a_hi = (a - d).lower(), (a + d).upper()
        c_lo, c_hi = _nonnegative((c - d * norm_l).lower()), (c + d * norm_l).upper()
        if not a_lo > 0:
            raise InsufficientPrecision(
                f"the binary128 error bound {float(delta):.3g} on E is as large as ||A||_F: 1 - CKA is not enclosed")
        low = _gap(p_lo, a_hi, c_hi, norm_l).lower()
        high = _gap(p_hi, a_lo, c_lo, norm_l).upper()
    return _exact_mpf(low), _exact_mpf(high)


def _gap(p, a, c, norm_l):
    """f(p, a, c) = p² ℓ / (a (a ℓ + c)) as an arb ball."""
    return p * p * norm_l / (a * (a * norm_l + c))


def _f0_ends(linear: _LinearPart, n: int) -> tuple:
    """Ends of f(0) = 1 − CKA(B, L) at the σ → 0 limit B of K_G (see :class:`_LinearPart`):
    (h ℓ² − b²) / (√h ℓ (√h ℓ + b)) with h = ‖HBH‖², b = ⟨B, L⟩ in integer units (s cancels); with no repeated
    row h = N − 1 and b = trace(L), the formula of the module docstring."""
    with flint.ctx.workprec(_F0_PREC):
        h, b = linear.zero_norm_sq, Fraction(linear.zero_inner)
        scaled = _arb(h * linear.gram_sq).sqrt()  # ‖HBH‖·‖ZᵀZ‖
        numerator = _arb(h * linear.gram_sq - b * b)
        ball = numerator / (scaled * (scaled + _arb(b)))
        return _exact_mpf(ball.lower()), _exact_mpf(ball.upper())


def _working_bits(norm_sq: Fraction, delta: Fraction) -> int:
    """Precision whose rounding lies _GUARD_BITS below δ/‖E_hp‖ (the least relative width of f)."""
    log2_norm = (norm_sq.numerator.bit_length() - norm_sq.denominator.bit_length()) // 2 + 1 if norm_sq else 0
    log2_delta = delta.numerator.bit_length() - delta.denominator.bit_length() - 1
    return _MIN_PREC + _GUARD_BITS + max(0, log2_norm - log2_delta)


def _arb(x: Fraction):
    """A ball containing the rational x (exact when x is dyadic and fits the precision)."""
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


def _nonnegative(end):
    return end if end > 0 else flint.arb(0)




def _exact_mpf(end) -> mpmath.mpf:
    """An exact arb value (a ball's end) as a global-type mpf, without rounding."""
    man, exp = (int(v) for v in end.man_exp())
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(man, exp))
