"""Exact high-precision matrix products on float64 BLAS (Ozaki scheme I: error-free splitting into digit slices).

A real matrix is held in block fixed point (:class:`FixedMatrix`): one exponent ``e`` for the whole matrix and
``L`` slices of balanced integer digits of ``b`` bits,

    value = 2**e * Σ_l digits[l] * 2**(-b*(l+1)),      |digits[l]| <= 2**(b-1),

stored as float64 arrays. With ``b <= digit_bits_for(inner)`` the float64 GEMM of two slices is exact: every
partial sum is an integer of magnitude at most ``inner * 2**(2b-2) <= 2**53``, whatever the summation order or
FMA use of the BLAS. Wider digits (up to ``chunked_digit_bits(inner)``, 22 bits) split the inner dimension into
chunks for which that holds and sum the chunks' GEMMs in int64: fewer digits, fewer GEMMs. A product of two
fixed-point matrices is therefore a sum of exact slice GEMMs; the GEMMs of one level ``l + m`` are summed in int64
and carried into balanced digits, least significant level first.

Guarantees. ``matmul(a, b)``, ``column_dots``, ``+``, ``-``, negation, ``.T``, ``scaled2``, ``take_columns``,
``from_integers``/``to_integers``, ``from_digit_sums`` and re-splitting to other digit widths are exact.
``from_float64``, ``from_words``, ``rounded`` and ``matmul(..., bits=p)`` round to nearest on a stated grid (ties
toward +∞), ``matmul(..., bits=p)`` also skips slice products whose total is below a quarter of that grid; the entrywise
error each of them commits is bounded rigorously and accumulated in :attr:`FixedMatrix.error_bound`.
``to_float64`` is faithful, ``to_double_word`` and ``to_words`` have bounded relative errors (see their
docstrings).

Exponents: the constructors choose the least ``e`` with ``max |value| <= 2**(e-1)`` (balanced digits hold every
multiple of the last digit's unit in that range); any balanced digits give ``|value| < 2**(e-1) (1 + 2**(1-b))``.
Exact products keep ``e`` within one digit of the least; ``matmul(..., bits=p)`` chooses it to the bit.

Threads: slice GEMMs below ``2**25`` multiply-adds run on one BLAS thread (scoped with threadpoolctl); larger ones
use the caller's BLAS setting.

API: :class:`FixedMatrix` (``from_float64``, ``from_words``, ``from_integers``, ``from_digit_sums``,
``to_integers``, ``to_float64``, ``to_double_word``, ``to_words``, ``rounded``, ``with_digit_bits``, ``scaled2``,
``take_columns``, ``max_abs_bound``, ``.T``, ``-a``, ``a + b``, ``a - b``, ``a @ b``), :func:`matmul`,
:func:`matmul_transpose_self`, :func:`column_dots`, :func:`digit_bits_for`, :func:`chunked_digit_bits`.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from threadpoolctl import ThreadpoolController

from .integer_digits import balanced_digits, least_exponent, max_abs

_MAX_DIGIT_BITS = 27  # one product of two 27-bit balanced digits is 2**52: the widest exact single product
_STACK_BYTES = 1 << 26  # thin products whose slice GEMM results all fit in this many bytes do them side by side
_THIN = 64  # at most this many columns of b (rows of a) make a product thin
_SMALL_GEMM = 1 << 25  # slice GEMMs with fewer multiply-adds run on one BLAS thread
# longest inner-dimension chunk of the slice GEMMs of digits wider than digit_bits_for(inner): 22-bit digits on
# chunks of at most 2048 (measured at N = 5404, 1351 columns: three chunks of 1802 at 97 % of an unchunked GEMM's
# speed; 23 bits on chunks of 512: 86 %, which eats most of the saving of fewer digits)
_INNER_CHUNK = 2048
_BLOCK_ENTRIES = 1 << 20  # entries per row block of from_words (its levels are digits + 1 times that)
_controller = None


def chunked_digit_bits(inner: int) -> int:
    """The widest digits :func:`matmul` multiplies without re-splitting them: ``digit_bits_for(inner)``, or for an
    inner dimension above ``_INNER_CHUNK`` the width whose slice GEMMs are exact on chunks of that length (summed
    in int64).

    >>> chunked_digit_bits(200), chunked_digit_bits(5404)
    (23, 22)
    """
    return digit_bits_for(min(max(1, int(inner)), _INNER_CHUNK))


def digit_bits_for(inner: int) -> int:
    """The largest ``b`` with ``inner * 2**(2(b-1)) <= 2**53``: slice GEMMs of inner dimension ``inner`` are exact.

    >>> digit_bits_for(200), digit_bits_for(5404)
    (23, 21)
    """
    inner = max(1, int(inner))
    if inner > 1 << 53:
        raise ValueError(f"inner dimension {inner} exceeds 2**53: no digit width gives exact float64 GEMMs")
    b = 1
    while b < _MAX_DIGIT_BITS and inner << (2 * b) <= 1 << 53:
        b += 1
    return b


def _check_digit_bits(digit_bits) -> int:
    if isinstance(digit_bits, bool) or not isinstance(digit_bits, (int, np.integer)):
        raise ValueError(f"digit_bits must be an integer, got {digit_bits!r}")
    if not 1 <= digit_bits <= _MAX_DIGIT_BITS:
        raise ValueError(f"digit_bits must be between 1 and {_MAX_DIGIT_BITS}, got {digit_bits}")
    return int(digit_bits)


def _check_bits(bits) -> int:
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or bits < 1:
        raise ValueError(f"bits must be a positive integer, got {bits!r}")
    return int(bits)


def _up(x: Fraction | float) -> float:
    """The least float64 >= x (x >= 0); inf beyond float64's range."""
    try:
        f = float(x)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _pow2(k: int) -> Fraction:
    return Fraction(2) ** k


# -- carry normalisation ------------------------------------------------------------------------------------
def _split_low(v: np.ndarray, b: int) -> np.ndarray:
    """Balanced low digit of int64 ``v`` in [-2**(b-1), 2**(b-1)); ``v`` becomes the carry (in place)."""
    half = 1 << (b - 1)
    r = v + half
    np.bitwise_and(r, (1 << b) - 1, out=r)
    r -= half
    v -= r
    np.right_shift(v, b, out=v)
    return r


def _split_top(v: np.ndarray, b: int) -> np.ndarray:
    """Like :func:`_split_low`, but a leading digit may also take +2**(b-1) (so 2**(e-1) needs no new digit)."""
    half = 1 << (b - 1)
    at_half = v == half  # the one value that fits the digit but not [-2**(b-1), 2**(b-1))
    r = _split_low(v, b)
    np.putmask(r, at_half, half)
    np.putmask(v, at_half, 0)
    return r


def _finish_top(top: np.ndarray, b: int) -> list[np.ndarray]:
    """Leading digits (most significant first) absorbing the carry ``top``; empty if it is zero."""
    prefix = []
    while top.any():
        prefix.append(_split_top(top, b))
    return prefix[::-1]


def _normalize(levels: np.ndarray, b: int) -> tuple[np.ndarray, int]:
    """Balanced float64 digits of ``Σ_k levels[k] 2**(-b k)`` and the number of leading digits prepended because
    the carry out of level 0 was nonzero.

    The digits overwrite the int64 levels' memory (same item size): no second array of the full size.
    """
    out = levels.view(np.float64)
    carry = np.zeros(levels.shape[1:], dtype=np.int64)
    for k in range(levels.shape[0] - 1, 0, -1):
        v = levels[k]
        v += carry
        r = _split_low(v, b)
        np.copyto(carry, v)
        out[k] = r
    v = levels[0]
    v += carry
    r = _split_top(v, b)
    prefix = _finish_top(v.copy(), b) if v.any() else []
    out[0] = r
    if prefix:
        out = np.concatenate([np.stack(prefix).astype(np.float64), out])
    return out, len(prefix)


def _levels(digits, b, e, *, b_dst, e_dst, n_dst, grid=None) -> tuple[np.ndarray, bool]:
    """int64 levels in units ``2**(e_dst - b_dst (j+1))`` of the value ``(digits, b, e)`` rounded to the grid
    ``2**grid`` (nearest, ties toward +∞; default grid: the last level's unit, exact there).

    Returns the levels (not yet carried) and whether anything was rounded away. The caller guarantees that the
    value fits ``n_dst`` digits below ``e_dst``; source digits above ``e_dst`` are folded into level 0 with
    wrapping int64 shifts, correct because only the (small) total of that level matters.
    """
    base = e_dst - b_dst * n_dst
    grid = base if grid is None else grid
    if grid < base:
        raise ValueError(f"grid 2**{grid} is finer than the last digit's unit 2**{base}")
    levels = np.zeros((n_dst,) + digits.shape[1:], dtype=np.int64)
    inexact = False
    tail = None  # floor-carry of the digits below the grid; their remainders lie in [0, 2**b)
    for l in range(digits.shape[0] - 1, -1, -1):
        p = e - b * (l + 1) - grid  # digit l's unit is 2**p grid units
        if p >= 0:
            p += grid - base
            j, s = n_dst - 1 - p // b_dst, p % b_dst
            if j < 0:
                j, s = 0, p - b_dst * (n_dst - 1)
            if s < 64:
                d = digits[l].astype(np.int64)
                np.left_shift(d, s, out=d)
                levels[j] += d
            continue
        v = digits[l].astype(np.int64)
        if tail is not None:
            v += tail
        if p + b < 0 and l > 0:  # digit l-1 lies below the grid too
            inexact = inexact or bool(np.any(v & ((1 << b) - 1)))
            tail = np.right_shift(v, b, out=v)
            continue
        # the most significant digit reaching below the grid: round(v 2**p + lower part in [0, 2**p))
        s = -p
        inexact = inexact or bool(np.any(v & ((1 << min(s, 63)) - 1))) or s >= 63 and bool(np.any(v))
        if s < 63:
            v += 1 << (s - 1)
            np.right_shift(v, s, out=v)
            np.left_shift(v, grid - base, out=v)
            levels[-1] += v
        tail = None
    return levels, inexact


def _float_digits(a: np.ndarray, e: int, b: int, n: int, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """Balanced digits (float64, shape (n,) + a.shape) of float64 ``a`` for exponent ``e``, the last one rounded
    to nearest (ties toward +∞) on the grid ``2**grid``, and the exact remainder ``a - value(digits)``.

    Exact steps: ``x / 2**u`` is a power-of-two scaling, ``x - q 2**u`` with ``q`` the rounded quotient is a
    floating-point remainder; a quotient that underflows is below 1/2 and rounds to 0, leaving ``x`` unchanged.
    Requires ``|a| <= 2**(e-1)``.
    """
    x = np.array(a, dtype=np.float64, copy=True)
    digits = np.empty((n,) + x.shape)
    for l in range(n):
        unit = e - b * (l + 1)
        step = grid if l == n - 1 else unit
        y = np.ldexp(x, -step)
        q = np.floor(y)
        y -= q
        q += y >= 0.5
        x -= np.ldexp(q, step)
        digits[l] = np.ldexp(q, step - unit)
    return digits, x


def _exponent_for(bound: float) -> int:
    """The least e with bound <= 2**(e-1) (bound > 0)."""
    f, t = math.frexp(bound)
    return t if f == 0.5 else t + 1


# -- the matrix type ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FixedMatrix:
    """A real matrix in block fixed point with balanced integer digit slices (see the module docstring).

    value = 2**exponent * Σ_l digits[l] * 2**(-digit_bits*(l+1)), exactly.

    Attributes
    ----------
    digits : ndarray of float64, shape (L, n, m)
        Integer-valued, balanced: ``|digits| <= 2**(digit_bits-1)``.
    exponent : int
        One block exponent for the whole matrix (see the module docstring for how it is chosen).
    digit_bits : int
    error_bound : float
        Rigorous bound on ``max |value - exact|`` over entries, where ``exact`` is what exact arithmetic on the
        original inputs (the float64 arrays, words or integers given to the constructors) would give. 0 when the
        value is exact; rounding operations add their rounding error, and every operation propagates it.
    """

    digits: np.ndarray
    exponent: int
    digit_bits: int
    error_bound: float = 0.0

    def __post_init__(self):
        _check_digit_bits(self.digit_bits)
        if self.digits.ndim != 3 or self.digits.dtype != np.float64:
            raise ValueError(
                f"digits must be a float64 array of shape (L, n, m), got {self.digits.dtype} {self.digits.shape}"
            )

    # -- shape ------------------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return self.digits.shape[1:]

    @property
    def n_digits(self) -> int:
        return self.digits.shape[0]

    @property
    def ulp_exp2(self) -> int:
        """Exponent of the last digit's unit: every value is an integer multiple of ``2**ulp_exp2``."""
        return self.exponent - self.digit_bits * self.n_digits

    # -- constructors -----------------------------------------------------------------------------------
    @classmethod
    def from_float64(cls, a, *, bits: int, digit_bits: int | None = None) -> "FixedMatrix":
        """``a`` rounded to the grid ``2**(exponent - bits)``, the least exponent with ``max|a| <= 2**(exponent-1)``.

        Parameters
        ----------
        a : array_like of float64, shape (n, m)
            Finite entries.
        bits : int
            Grid bits below ``2**exponent`` (the largest entry keeps ``bits - 1`` or ``bits`` bits).
        digit_bits : int, optional
            Default ``digit_bits_for(max(n, m))`` (exact products with either inner dimension).

        Returns
        -------
        FixedMatrix
            With ``ceil(bits / digit_bits)`` digits; rounding is to nearest with ties toward +∞, so the result is
            exact when every entry is a multiple of the grid, and ``error_bound`` is the exact largest rounding
            error (a float64: the remainders are computed exactly).
        """
        a = _as_matrix(a, "a")
        bits = _check_bits(bits)
        b = _check_digit_bits(digit_bits_for(max(a.shape)) if digit_bits is None else digit_bits)
        top = float(np.max(np.abs(a), initial=0.0))
        e = _exponent_for(top) if top else 0
        digits, rest = _float_digits(a, e, b, -(-bits // b), e - bits)
        return cls(digits, e, b, float(np.max(np.abs(rest), initial=0.0)))

    @classmethod
    def from_words(cls, words, *, bits: int, digit_bits: int | None = None) -> "FixedMatrix":
        """The exact sum of float64 arrays (e.g. a double-word ``hi + lo``) rounded to the grid ``2**(exponent-bits)``.

        Parameters
        ----------
        words : sequence of array_like of float64, each shape (n, m)
        bits, digit_bits : as in :meth:`from_float64`.

        Returns
        -------
        FixedMatrix
            ``exponent`` is the least with ``2**(exponent-1)`` at least every word's largest entry and a float64
            upper bound on ``max |Σ words|``; the exact sum is rounded once, to nearest with ties toward +∞
            (``error_bound`` is half the grid if some bits lay below the grid, else 0).

        Notes
        -----
        Each word is split exactly into digits on a grid ``digit_bits`` bits finer, plus a float64 remainder below
        half of that grid. Only ``floor`` of the remainders' sum affects the rounding; it is decided from an
        error-free transformation (``TwoSum`` chain), and for the rare entries whose float sum lies too close to
        an integer, from exact rational arithmetic.
        """
        words = [_as_matrix(w, f"words[{i}]") for i, w in enumerate(words)]
        if not words:
            raise ValueError("from_words needs at least one word")
        shapes = {w.shape for w in words}
        if len(shapes) > 1:
            raise ValueError(f"from_words: the words have different shapes {sorted(shapes)}")
        bits = _check_bits(bits)
        b = _check_digit_bits(digit_bits_for(max(words[0].shape)) if digit_bits is None else digit_bits)
        c = len(words)
        shape = words[0].shape
        n = -(-bits // b)
        # row blocks: the int64 levels and float digits of a block are (n + 1) times its size
        blocks = [slice(i, min(shape[0], i + max(1, _BLOCK_ENTRIES // max(1, shape[1]))))
                  for i in range(0, shape[0], max(1, _BLOCK_ENTRIES // max(1, shape[1])))]
        # |Σ words| <= |fl(Σ)| + (c-1) u Σ|w| (recursive summation); each word must fit the exponent on its own too
        slack = (c - 1) * 2.0**-52 * (1 + 2.0**-40)
        top = 0.0
        for I in blocks:
            total = np.zeros((I.stop - I.start, shape[1]))
            absolute = np.zeros_like(total)
            for w in words:
                total += w[I]
                absolute += np.abs(w[I])
                top = max(top, float(np.max(np.abs(w[I]), initial=0.0)))
            top = max(top, float(np.max(np.abs(total) + slack * absolute, initial=0.0)))
        e = _exponent_for(top) if top else 0
        grid = e - bits
        out = np.empty((n,) + shape)
        inexact = False
        for I in blocks:
            # exact digits of every word on the guard grid 2**(grid - b), one digit below the kept ones
            levels = np.zeros((n + 1, I.stop - I.start, shape[1]), dtype=np.int64)
            rests = []
            for w in words:
                d, rest = _float_digits(w[I], e, b, n + 1, grid - b)
                levels += d.astype(np.int64)
                rests.append(np.ldexp(rest, b - grid))  # in guard-grid units, |rest| <= 1/2
            del d
            floor_rest = _floor_of_sum(rests)
            np.left_shift(floor_rest, (grid - b) - (e - b * (n + 1)), out=floor_rest)
            levels[-1] += floor_rest
            digits, prefix = _normalize(levels, b)
            exact_levels, rounded = _levels(digits, b, e + b * prefix, b_dst=b, e_dst=e, n_dst=n, grid=grid)
            inexact = inexact or rounded or any(bool(np.any(r)) for r in rests)
            out[:, I] = _normalize(exact_levels, b)[0]  # the value fits n digits below e (e bounds it)
        return cls(out, e, b, 2.0 ** (grid - 1) if inexact else 0.0)

    @classmethod
    def from_integers(cls, ints, exp2: int, *, digit_bits: int | None = None) -> "FixedMatrix":
        """The exact matrix ``ints * 2**exp2``.

        Parameters
        ----------
        ints : array_like of Python int (object), shape (n, m)
            E.g. the row-major list of :func:`precise_kpca.backends.mp.fixed_point_integers`, reshaped.
        exp2 : int
        digit_bits : int, optional
            Default ``digit_bits_for(max(n, m))``.

        Returns
        -------
        FixedMatrix
            ``exponent`` the least with ``max |value| <= 2**(exponent-1)``; the digits are cut out of the integers'
            bytes (:mod:`.integer_digits`).
        """
        ints = np.asarray(ints, dtype=object)
        if ints.ndim != 2:
            raise ValueError(f"ints must be a 2-d array, got shape {ints.shape}")
        b = _check_digit_bits(digit_bits_for(max(ints.shape)) if digit_bits is None else digit_bits)
        exp2 = int(exp2)
        flat = ints.ravel().tolist()
        e = least_exponent(max_abs(flat), exp2)
        digits = balanced_digits(flat, len(flat), exp2, e, b)
        return cls(digits.reshape(digits.shape[:1] + ints.shape), e, b)


    @classmethod
    def from_digit_sums(cls, digits, exponent: int, digit_bits: int) -> "FixedMatrix":
        """The exact ``2**exponent * Σ_l digits[l] * 2**(-digit_bits*(l+1))`` for digits that need not be balanced
        (e.g. entrywise sums of the balanced digits of matrices on one exponent), carried into balanced digits.

        Parameters
        ----------
        digits : array_like of float64, shape (L, n, m)
            Integer-valued, ``|digits| < 2**52``.
        exponent, digit_bits : int

        Returns
        -------
        FixedMatrix
            The same value, ``L`` balanced digits on ``exponent``, with leading digits prepended (``exponent`` raised
            by ``digit_bits`` each) only where the carry out of the first digit is nonzero. Exact.
        """
        b = _check_digit_bits(digit_bits)
        digits = np.asarray(digits, dtype=np.float64)
        if digits.ndim != 3:
            raise ValueError(f"digits must have shape (L, n, m), got {digits.shape}")
        if not np.all(np.abs(digits) < 2.0**52) or not np.array_equal(digits, np.floor(digits)):
            raise ValueError("digits must be integers of magnitude below 2**52")
        out, prefix = _normalize(digits.astype(np.int64), b)
        return cls(out, int(exponent) + b * prefix, b)
    # -- read-outs --------------------------------------------------------------------------------------
    def to_integers(self) -> tuple[np.ndarray, int]:
        """Exact ``(ints, exp2)`` with ``value == ints * 2**exp2``; ints an object array of Python int, shape (n, m)."""
        acc = np.zeros(self.shape, dtype=object)
        for d in self.digits:
            acc = acc * (1 << self.digit_bits) + d.astype(np.int64).astype(object)
        return acc, self.ulp_exp2

    def to_float64(self) -> np.ndarray:
        """Faithful float64 of every entry, shape (n, m).

        The digits are summed most significant first in double-word arithmetic (``TwoSum``): balanced digits make
        the sum well conditioned (every partial sum is at most 3 times the value), so the double-word result is
        within ``3 L² 2**-106`` relative of the value and its final rounding returns one of the two float64
        neighbours of the value (the nearest one unless the value lies that close to a midpoint). Valid in
        float64's normal range (digits below 2**-1074 are flushed).
        """
        hi, lo = self._double_word_sum()
        return np.ldexp(hi + lo, self.exponent)

    def to_double_word(self) -> tuple[np.ndarray, np.ndarray]:
        """``(hi, lo)``: ``hi`` the faithful float64 of :meth:`to_float64`, ``hi + lo`` (exactly) the double-word sum
        it was rounded from, within ``3 L² 2**-106`` relative of the value (normal range).

        One pass over the digits: cheaper than ``to_words(2)``, whose exact remainder is within ``2**-104``.
        """
        hi, lo = self._double_word_sum()
        s = hi + lo
        lo -= s - hi  # FastTwoSum: |hi| >= |lo|, so hi + lo = s + lo' exactly
        return np.ldexp(s, self.exponent), np.ldexp(lo, self.exponent)

    def _double_word_sum(self) -> tuple[np.ndarray, np.ndarray]:
        """The digits summed most significant first in double-word arithmetic (TwoSum), in units of
        ``2**exponent``: every partial sum is at most 3 times the value (balanced digits)."""
        hi = np.zeros(self.shape)
        lo = np.zeros(self.shape)
        b = self.digit_bits
        for l, d in enumerate(self.digits):
            v = np.ldexp(d, -b * (l + 1))
            s = hi + v
            bv = s - hi
            lo += (hi - (s - bv)) + (v - bv)
            hi = s
        return hi, lo

    def to_words(self, count: int) -> list[np.ndarray]:
        """``count`` float64 arrays whose exact sum approximates the value, each the faithful rounding of what
        the previous ones leave (computed exactly in fixed point).

        Each residual is below one ulp of the word before it, so ``|value - Σ words| <= 2**(-52 count) |value|``
        entrywise (normal range).
        """
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"count must be a positive integer, got {count!r}")
        b = self.digit_bits
        rest = self
        words = []
        for i in range(count):
            w = rest.to_float64()
            words.append(w)
            if i == count - 1:
                break
            # w lies on the value's grid (faithful rounding of a grid value), so rest - w is exact there
            d, _ = _float_digits(w, rest.exponent, b, rest.n_digits, rest.ulp_exp2)
            levels = rest.digits.astype(np.int64)
            levels -= d.astype(np.int64)
            digits, prefix = _normalize(levels, b)
            rest = FixedMatrix(digits, rest.exponent + b * prefix, b)
        return words

    def max_abs_bound(self) -> float:
        """A float64 upper bound on ``max |value|`` from the two leading digits, above it by at most
        ``2**(exponent - 2 digit_bits + 1)`` (plus float64 rounding upward)."""
        b = self.digit_bits
        lead = self.digits[0].astype(np.int64) << b
        if self.n_digits > 1:
            lead += self.digits[1].astype(np.int64)
        top = Fraction(int(np.max(np.abs(lead), initial=0)))
        if self.n_digits > 2:  # the remaining digits add at most 2**(b-1) Σ_{l>=2} 2**(-b(l-1))
            top += Fraction(1 << (b - 1)) * (1 - _pow2(-b * (self.n_digits - 2))) / ((1 << b) - 1)
        return _up(top * _pow2(self.exponent - 2 * b))

    # -- exact transformations --------------------------------------------------------------------------
    @property
    def T(self) -> "FixedMatrix":
        """Transpose (a view of the digits)."""
        return FixedMatrix(self.digits.transpose(0, 2, 1), self.exponent, self.digit_bits, self.error_bound)

    def __neg__(self) -> "FixedMatrix":
        return FixedMatrix(-self.digits, self.exponent, self.digit_bits, self.error_bound)

    def scaled2(self, k: int) -> "FixedMatrix":
        """Exact ``value * 2**k``."""
        k = int(k)
        return FixedMatrix(self.digits, self.exponent + k, self.digit_bits, _up(Fraction(self.error_bound) * _pow2(k)))

    def take_columns(self, idx) -> "FixedMatrix":
        """Columns ``idx`` (any NumPy index of the last axis), shape (n, len(idx))."""
        digits = self.digits[:, :, idx]
        if digits.ndim != 3:
            raise ValueError(f"take_columns needs a 1-d index of columns, got {idx!r}")
        return FixedMatrix(np.ascontiguousarray(digits), self.exponent, self.digit_bits, self.error_bound)

    def with_digit_bits(self, digit_bits: int) -> "FixedMatrix":
        """The same value re-split exactly into digits of ``digit_bits <= self.digit_bits`` bits."""
        b = _check_digit_bits(digit_bits)
        if b == self.digit_bits:
            return self
        if b > self.digit_bits:
            raise ValueError(f"can only re-split to narrower digits: {b} > {self.digit_bits}")
        n = -(-self.digit_bits * self.n_digits // b)
        levels, _ = _levels(self.digits, self.digit_bits, self.exponent, b_dst=b, e_dst=self.exponent, n_dst=n)
        digits, prefix = _normalize(levels, b)
        return FixedMatrix(digits, self.exponent + b * prefix, b, self.error_bound)

    def __add__(self, other: "FixedMatrix") -> "FixedMatrix":
        """Exact sum; exponent ``max + 1``, digits of the narrower width, down to the finer of the two grids."""
        if not isinstance(other, FixedMatrix):
            return NotImplemented
        if self.shape != other.shape:
            raise ValueError(f"cannot add FixedMatrix of shape {self.shape} and {other.shape}")
        b = min(self.digit_bits, other.digit_bits)
        e = max(self.exponent, other.exponent) + 1
        n = -(-(e - min(self.ulp_exp2, other.ulp_exp2)) // b)
        levels, _ = _levels(self.digits, self.digit_bits, self.exponent, b_dst=b, e_dst=e, n_dst=n)
        more, _ = _levels(other.digits, other.digit_bits, other.exponent, b_dst=b, e_dst=e, n_dst=n)
        levels += more
        del more
        digits, prefix = _normalize(levels, b)
        return FixedMatrix(digits, e + b * prefix, b, _up(Fraction(self.error_bound) + Fraction(other.error_bound)))

    def __sub__(self, other: "FixedMatrix") -> "FixedMatrix":
        if not isinstance(other, FixedMatrix):
            return NotImplemented
        return self + (-other)

    def __matmul__(self, other: "FixedMatrix") -> "FixedMatrix":
        if not isinstance(other, FixedMatrix):
            return NotImplemented
        return matmul(self, other)

    # -- rounding ---------------------------------------------------------------------------------------
    def rounded(self, bits: int, *, exponent: int | None = None, digit_bits: int | None = None) -> "FixedMatrix":
        """The value rounded to the grid ``2**(exponent - bits)`` (nearest, ties toward +∞), with
        ``ceil(bits / digit_bits)`` digits; ``self`` if it already lies on a grid at least that fine.

        The exponent stays, unless a value above ``2**(exponent-1)`` rounds up past what the digits hold: then
        one leading digit is added (exponent + digit_bits; the grid is the same). ``error_bound`` grows by half
        the grid if anything was rounded away.

        ``exponent``: hold the result with this exponent instead (e.g. to assemble column panels into one
        matrix); ``ValueError`` if the rounded value does not fit its digits. ``digit_bits``: re-split to this
        width (wider or narrower) in the same pass.
        """
        bits = _check_bits(bits)
        b = self.digit_bits if digit_bits is None else _check_digit_bits(digit_bits)
        e = self.exponent if exponent is None else int(exponent)
        if exponent is None and b == self.digit_bits and self.exponent - bits <= self.ulp_exp2:
            return self
        n = -(-bits // b)
        levels, inexact = _levels(self.digits, self.digit_bits, self.exponent, b_dst=b, e_dst=e, n_dst=n,
                                  grid=e - bits)
        digits, prefix = _normalize(levels, b)
        if prefix and exponent is not None:
            raise ValueError(f"rounded: the value does not fit exponent {exponent} (|value| > 2**{exponent - 1})")
        bound = Fraction(self.error_bound) + (_pow2(e - bits - 1) if inexact else 0)
        return FixedMatrix(digits, e + b * prefix, b, _up(bound))


def _as_matrix(a, name: str) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has nan or infinite entries")
    return a


def _floor_of_sum(rests: list[np.ndarray]) -> np.ndarray:
    """Exact ``floor(Σ rests)`` (int64) for float64 arrays with small entries.

    A ``TwoSum`` chain gives ``Σ rests = s + Σ q`` exactly with ``s`` the float sum; ``floor(s)`` is the answer
    unless ``s`` lies within ``Σ|q|`` of an integer (for an integer ``s`` with a single error term, its sign
    decides). The remaining entries are summed as exact fractions.
    """
    s = rests[0].copy()
    qs = []
    for r in rests[1:]:
        t = s + r
        bv = t - s
        qs.append((s - (t - bv)) + (r - bv))
        s = t
    result = np.floor(s)
    if not qs:
        return result.astype(np.int64)
    if len(qs) == 1:
        # one error term, |q| <= ulp(s)/2: a non-integer s is at least ulp(s) from every integer
        result -= (s == result) & (qs[0] < 0)
        return result.astype(np.int64)
    q_abs = np.zeros(s.shape)
    for q in qs:
        q_abs += np.abs(q)
    q_abs *= 1 + len(qs) * 2.0**-50
    dist = np.minimum(s - result, result + 1 - s)
    ambiguous = (q_abs > 0) & (dist <= q_abs)
    for index in zip(*np.nonzero(ambiguous)):
        exact = sum((Fraction(float(r[index])) for r in rests), Fraction(0))
        result[index] = math.floor(exact)
    return result.astype(np.int64)


# -- products -----------------------------------------------------------------------------------------------
def _common_width(widths: tuple[int, int], totals: tuple[int, int], inner: int) -> int:
    """The digit width of a product: the narrower operand's, at most ``chunked_digit_bits(inner)``, and narrow
    enough that a level's int64 sum of at most ``min(La, Lb)`` slice products (``inner 2**(2b-2)`` each, for
    ``L = ceil(total bits / b)`` digits) stays below ``2**62``."""
    bd = min(*widths, chunked_digit_bits(inner))
    while bd > digit_bits_for(inner) and (min(-(-t // bd) for t in totals) + 1) * inner << (2 * bd - 2) >= 1 << 62:
        bd -= 1
    return bd


def _chunk(inner: int, bd: int) -> int:
    """The longest inner-dimension chunk whose slice GEMMs of ``bd``-bit digits are exact: c 2**(2(bd-1)) <= 2**53."""
    return min(inner, 1 << (53 - 2 * (bd - 1)))


def _common_split(a: FixedMatrix, b: FixedMatrix, inner: int) -> tuple[FixedMatrix, FixedMatrix, int]:
    bd = _common_width((a.digit_bits, b.digit_bits), (a.digit_bits * a.n_digits, b.digit_bits * b.n_digits), inner)
    return a.with_digit_bits(bd), b.with_digit_bits(bd), bd


class _SliceProducts:
    """The exact slice GEMMs ``A[l] @ B[m]`` of a product, delivered level by level (``l + m == k``).

    Digits wider than ``digit_bits_for(inner)`` split the inner dimension into chunks of ``chunk`` (each chunk's
    GEMM exact in float64) whose results are summed in int64. Thin products (few columns of ``B`` or few rows of
    ``A``, unchunked) compute all GEMMs first, as one GEMM per slice of the wide operand against the side-by-side
    slices of the thin one, so the wide operand is read once instead of once per slice of the thin one.
    Symmetric products ``aᵀa`` compute one GEMM per pair ``l <= m`` and add it with its transpose for the pair
    ``(m, l)``.
    """

    def __init__(self, A: np.ndarray, B: np.ndarray, kmax: int, symmetric: bool, chunk: int):
        self.A, self.B, self.symmetric = A, B, symmetric
        La, Lb = A.shape[0], B.shape[0]
        n, inner, m = A.shape[1], A.shape[2], B.shape[2]
        count = -(-inner // chunk)  # equal chunks: no short last GEMM
        self.chunks = [slice(inner * c // count, inner * (c + 1) // count) for c in range(count)]
        self.cache = {}
        self.buf = None
        if len(self.chunks) > 1 or symmetric or La * Lb * n * m * 8 > _STACK_BYTES or min(n, m) > _THIN:
            return
        if m <= n:
            side_by_side = np.ascontiguousarray(B.transpose(1, 0, 2)).reshape(inner, Lb * m)
            for l in range(min(La, kmax + 1)):
                w = min(Lb, kmax - l + 1)
                g = A[l] @ side_by_side[:, : w * m]
                self.cache.update({(l, j): g[:, j * m : (j + 1) * m] for j in range(w)})
        else:
            stacked = np.ascontiguousarray(A).reshape(La * n, inner)
            for j in range(min(Lb, kmax + 1)):
                h = min(La, kmax - j + 1)
                g = stacked[: h * n] @ B[j]
                self.cache.update({(l, j): g[l * n : (l + 1) * n] for l in range(h)})

    def add(self, l: int, m: int, acc: np.ndarray, both: bool = False) -> None:
        """acc += A[l] @ B[m] (and its transpose if ``both``), exactly: int64, every chunk's GEMM entry an
        integer of magnitude <= 2**53."""
        g = self.cache.pop((l, m), None)
        for part in [g] if g is not None else (self._gemm(l, m, c) for c in self.chunks):
            np.add(acc, part, out=acc, dtype=np.int64, casting="unsafe")
            if both:
                np.add(acc, part.T, out=acc, dtype=np.int64, casting="unsafe")

    def _gemm(self, l: int, m: int, c: slice) -> np.ndarray:
        """A[l] @ B[m] over the inner chunk c, into a reused buffer."""
        if self.buf is None:
            self.buf = np.empty((self.A.shape[1], self.B.shape[2]))
        return np.matmul(self.A[l][:, c], self.B[m][c], out=self.buf)

    def add_level(self, k: int, acc: np.ndarray) -> None:
        """acc += Σ_{l+m=k} A[l] @ B[m] (int64)."""
        La, Lb = self.A.shape[0], self.B.shape[0]
        for l in range(max(0, k - Lb + 1), min(La, k + 1)):
            m = k - l
            if self.symmetric and l > m:
                continue
            self.add(l, m, acc, both=self.symmetric and l < m)


def _one_thread_if_small(work: int):
    """Single-threaded BLAS for small slice GEMMs (scoped): there, starting and synchronising BLAS threads costs
    more than it saves, and on a shared machine spinning threads cost far more."""
    global _controller
    if work >= _SMALL_GEMM:
        return contextlib.nullcontext()
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")


def _product_digits(slices: _SliceProducts, b: int, base: int, kmax: int, grid: int | None = None):
    """Balanced digits and exponent of ``2**base Σ_{l+m<=kmax} A[l] @ B[m] 2**(-b(l+m))``, leading zero digits
    dropped, and whether a nonzero remainder was left out (see ``grid``).

    One int64 accumulator is filled level by level, least significant first; once a level is complete its low
    digit is split off and the rest is the carry into the next level.

    ``grid``: the value is only wanted rounded to nearest on ``2**grid`` (ties upward). Levels below the last one
    whose unit is at most ``2**(grid-1)`` are then carried by floor division and not kept: the value is the kept
    digits plus a remainder in ``[0, u)``, ``u`` the last kept unit, and since the kept digits and every rounding
    threshold ``(j + ½) 2**grid`` are multiples of ``u``, that remainder cannot change the rounding.
    """
    A, B = slices.A, slices.B
    La, Lb, inner = A.shape[0], B.shape[0], A.shape[2]
    n, m = A.shape[1], B.shape[2]
    # leading digits above level 0: |value| <= inner 2**(2b-2) Σ_l 2**(-bl) Σ_m 2**(-bm) level-0 units must
    # stay within the range 2**(b(t+1)-1) of t digits above level 0 plus the digits below
    bound = (inner << (2 * b - 2)) * _geometric(b, La) * _geometric(b, Lb)
    t = 1
    while bound > 1 << (b * (t + 1) - 1):
        t += 1
    # level k's digit has unit 2**(base - b k): keep levels up to the first whose unit is at most 2**(grid-1)
    keep = kmax if grid is None else min(kmax, max(0, -(-(base - grid + 1) // b)))
    out = np.empty((keep + 1 + t, n, m))
    acc = np.zeros((n, m), dtype=np.int64)
    left_out = False
    for k in range(kmax, -1, -1):
        slices.add_level(k, acc)
        if k > keep:
            left_out = left_out or bool(np.any(np.bitwise_and(acc, (1 << b) - 1)))
            np.right_shift(acc, b, out=acc)
        else:
            out[k + t] = _split_low(acc, b)
    for i in range(t - 1, 0, -1):
        out[i] = _split_low(acc, b)
    out[0] = _split_top(acc, b)
    if acc.any():
        raise RuntimeError("internal error: carry out of the product's leading digit despite the bound")
    # digit i has unit 2**(base - b(i - t)) = 2**(e - b(i+1))
    e = base + b * (t + 1)
    lead = 0
    while lead < out.shape[0] - 1 and not out[lead].any():
        lead += 1
    return out[lead:], e - b * lead, left_out


def _propagated(a: FixedMatrix, b: FixedMatrix, inner: int) -> Fraction:
    """Bound on the product's error inherited from the operands' error bounds."""
    da, db = Fraction(a.error_bound), Fraction(b.error_bound)
    if not da and not db:
        return Fraction(0)
    ma, mb = Fraction(a.max_abs_bound()), Fraction(b.max_abs_bound())
    return inner * (ma * db + da * mb + da * db)


def matmul(a: FixedMatrix, b: FixedMatrix, *, bits: int | None = None, grid: int | None = None) -> FixedMatrix:
    """The product ``a @ b``: exact, or rounded to a grid with a rigorous error bound.

    Parameters
    ----------
    a : FixedMatrix, shape (n, k)
    b : FixedMatrix, shape (k, m)
    bits : int, optional
        ``None`` (and no ``grid``): the exact product (``La + Lb - 1`` levels of digits, plus carries).
        Otherwise the result's exponent ``E`` is the least with ``B + ¾ 2**(E-bits) <= 2**(E-1)``, ``B`` an
        exact bound on ``max |a @ b|`` from the leading slice product; slice GEMMs of the levels whose total
        contribution is below ``¼ 2**(E-bits)`` are skipped, and the sum of the others is rounded to the grid
        ``2**(E-bits)`` (nearest, ties toward +∞).
    grid : int, optional
        Instead of ``bits``: round to the absolute grid ``2**grid``, ``E`` the least with
        ``B + ¾ 2**grid <= 2**(E-1)``. Column panels of one product computed on one grid hold the entries of the
        whole product rounded on it (their exponents may differ).

    Returns
    -------
    FixedMatrix, shape (n, m)
        ``error_bound`` = inherited error ``k (|a| δb + δa |b| + δa δb)`` + skipped terms' bound + half the grid
        if the rounding was inexact: at most ``¾`` of the grid plus the inherited part.

    Notes
    -----
    Both operands are first re-split (exactly) to the common digit width ``min(their widths,
    chunked_digit_bits(k))`` (narrower if a level's int64 sum could reach ``2**62``). Each slice product is one
    float64 GEMM, or for digits wider than ``digit_bits_for(k)`` one per chunk of the inner dimension, exact by
    that width.
    """
    if not isinstance(a, FixedMatrix) or not isinstance(b, FixedMatrix):
        raise ValueError(f"matmul needs two FixedMatrix operands, got {type(a).__name__} and {type(b).__name__}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: a has shape {a.shape} and b has shape {b.shape}: inner dimensions differ")
    if bits is not None and grid is not None:
        raise ValueError("matmul: give bits or grid, not both")
    if bits is not None:
        bits = _check_bits(bits)
    if grid is not None:
        if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)):
            raise ValueError(f"grid must be an integer, got {grid!r}")
        grid = int(grid)
    inner = a.shape[1]
    inherited = _propagated(a, b, inner)
    symmetric = _is_transpose_of(a, b)
    if symmetric:  # re-split once, and keep the two operands views of one array
        total = b.digit_bits * b.n_digits
        b = b.with_digit_bits(_common_width((b.digit_bits, b.digit_bits), (total, total), inner))
        a, bd = b.T, b.digit_bits
    else:
        a, b, bd = _common_split(a, b, inner)
    with _one_thread_if_small(a.shape[0] * inner * b.shape[1]):
        return _matmul(a, b, bd, bits, grid, symmetric, inherited)


def _matmul(a: FixedMatrix, b: FixedMatrix, bd: int, bits: int | None, grid: int | None, symmetric: bool,
            inherited: Fraction):
    """:func:`matmul` on validated operands already re-split to the common digit width ``bd``."""
    inner = a.shape[1]
    A, B = a.digits, b.digits
    La, Lb = A.shape[0], B.shape[0]
    base = a.exponent + b.exponent - 2 * bd  # unit of the level-0 slice product A[0] @ B[0]
    chunk = _chunk(inner, bd)
    if bits is None and grid is None:
        kmax = La + Lb - 2
        digits, e, _ = _product_digits(_SliceProducts(A, B, kmax, symmetric, chunk), bd, base, kmax)
        return FixedMatrix(digits, e, bd, _up(inherited))
    p0 = np.zeros((A.shape[1], B.shape[2]), dtype=np.int64)
    _SliceProducts(A, B, 0, False, chunk).add(0, 0, p0)
    gemm_bound = inner << (2 * bd - 2)  # |entries of one slice GEMM|
    # every pair (l, m) != (0, 0) adds at most gemm_bound 2**(-bd(l+m)) units of 2**base
    others = _geometric(bd, La) * _geometric(bd, Lb) - 1
    bound = (Fraction(int(np.max(np.abs(p0), initial=0))) + gemm_bound * others) * _pow2(base)
    if grid is None:
        E = _result_exponent(bound, bits)
        grid = E - bits
    else:
        E = _exponent_on_grid(bound, grid)
        bits = E - grid
    # skip the least significant levels while their total stays within a quarter of the grid
    kmax, skipped = La + Lb - 2, Fraction(0)
    while kmax > 0:
        more = skipped + _pairs_at(kmax, La, Lb) * gemm_bound * _pow2(base - bd * kmax)
        if more > _pow2(grid - 2):
            break
        kmax, skipped = kmax - 1, more
    slices = _SliceProducts(A, B, kmax, symmetric, chunk)
    slices.cache.setdefault((0, 0), p0)
    del p0
    digits, e, left_out = _product_digits(slices, bd, base, kmax, grid)
    del slices
    n = -(-bits // bd)
    levels, inexact = _levels(digits, bd, e, b_dst=bd, e_dst=E, n_dst=n, grid=grid)
    inexact = inexact or left_out
    del digits
    out, prefix = _normalize(levels, bd)
    error = inherited + skipped + (_pow2(grid - 1) if inexact else 0)
    return FixedMatrix(out, E + bd * prefix, bd, _up(error))


def _is_transpose_of(a: FixedMatrix, b: FixedMatrix) -> bool:
    """Whether ``a`` is ``b.T`` over the same memory (then ``a @ b`` is symmetric: half the slice GEMMs)."""
    da, db = a.digits, b.digits.transpose(0, 2, 1)
    return (
        a.exponent == b.exponent
        and a.digit_bits == b.digit_bits
        and da.shape == db.shape
        and da.strides == db.strides
        and da.__array_interface__["data"][0] == db.__array_interface__["data"][0]
    )


def matmul_transpose_self(a: FixedMatrix, *, bits: int | None = None) -> FixedMatrix:
    """``aᵀa`` (shape (m, m) for ``a`` of shape (n, m)); same as ``matmul(a.T, a, bits=bits)``, which also
    recognises the pair and computes only the slice GEMMs ``l <= m``."""
    return matmul(a.T, a, bits=bits)


def _geometric(b: int, n: int) -> Fraction:
    """Σ_{l<n} 2**(-b l)."""
    return (1 - _pow2(-b * n)) / (1 - _pow2(-b))


def _pairs_at(k: int, La: int, Lb: int) -> int:
    """Number of digit pairs (l, m), l < La, m < Lb, with l + m == k."""
    return max(0, min(La - 1, k) - max(0, k - Lb + 1) + 1)


def _result_exponent(bound: Fraction, bits: int) -> int:
    """The least E with bound + ¾ 2**(E-bits) <= 2**(E-1)."""
    if bound == 0:
        return 0
    E = bound.numerator.bit_length() - bound.denominator.bit_length()  # 2**(E-1) <= 2 bound... start low
    while bound + Fraction(3, 4) * _pow2(E - bits) > _pow2(E - 1):
        E += 1
    return E


def _exponent_on_grid(bound: Fraction, grid: int) -> int:
    """The least E > grid with bound + ¾ 2**grid <= 2**(E-1)."""
    total = bound + Fraction(3, 4) * _pow2(grid)
    E = max(grid + 1, total.numerator.bit_length() - total.denominator.bit_length())
    while total > _pow2(E - 1):
        E += 1
    return E


def two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's TwoProduct, elementwise: ``a·b = hi + lo`` exactly, ``hi = fl(a·b)``.

    Exact barring underflow (then ``|error| <= 2**-1071`` per entry); needs ``|a|, |b| < 2**995`` so that
    Veltkamp's splitting does not overflow.
    """
    hi = a * b
    a1, a2 = _veltkamp(a)
    b1, b2 = _veltkamp(b)
    lo = ((a1 * b1 - hi) + a1 * b2 + a2 * b1) + a2 * b2
    return hi, lo


def _veltkamp(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a = hi + lo exactly with hi, lo of at most 26 significant bits each."""
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def column_dots(a: FixedMatrix, b: FixedMatrix) -> tuple[np.ndarray, int]:
    """Exact ``diag(aᵀ b)``: for each column j, ``Σ_i a[i, j] b[i, j]``.

    Parameters
    ----------
    a, b : FixedMatrix, shape (n, m)

    Returns
    -------
    ints : ndarray of Python int (object), shape (m,)
    exp2 : int
        ``diag(aᵀ b) == ints * 2**exp2`` exactly.
    """
    if a.shape != b.shape:
        raise ValueError(f"column_dots: a has shape {a.shape} and b has shape {b.shape}; they must be equal")
    n, m = a.shape
    a, b, bd = _common_split(a, b, n)
    La, Lb = a.n_digits, b.n_digits
    levels = np.zeros((La + Lb - 1, m), dtype=np.int64)
    chunk = _chunk(n, bd)
    for l in range(La):
        for k in range(Lb):
            for c in range(0, n, chunk):
                # products exact, partial sums integers <= chunk 2**(2bd-2) <= 2**53: exact in any order
                rows = slice(c, c + chunk)
                levels[l + k] += np.einsum("ij,ij->j", a.digits[l][rows], b.digits[k][rows]).astype(np.int64)
    acc = np.zeros(m, dtype=object)
    for row in levels:
        acc = acc * (1 << bd) + row.astype(object)
    return acc, a.exponent + b.exponent - 2 * bd - bd * (La + Lb - 2)
