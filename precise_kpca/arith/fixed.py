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
``from_float64``, ``from_words``, ``from_words_apart`` (each word apart), ``rounded`` and ``matmul(..., bits=p)``
round to nearest on a stated grid (ties toward +∞), ``matmul(..., bits=p)`` also skips slice products whose total
is below a quarter of that grid; the entrywise error each of them commits is bounded rigorously and accumulated in
:attr:`FixedMatrix.error_bound`.
``to_float64`` is faithful, ``to_double_word`` and ``to_words`` have bounded relative errors (see their
docstrings).

Exponents: the constructors choose the least ``e`` with ``max |value| <= 2**(e-1)`` (balanced digits hold every
multiple of the last digit's unit in that range); any balanced digits give ``|value| < 2**(e-1) (1 + 2**(1-b))``.
Exact products keep ``e`` within one digit of the least; ``matmul(..., bits=p)`` chooses it to the bit.

Threads: slice GEMMs below ``2**25`` multiply-adds run on one BLAS thread (scoped with threadpoolctl); larger ones
use the caller's BLAS setting.

API: :class:`FixedMatrix` (``from_float64``, ``from_words``, ``from_words_apart``, ``from_integers``,
``from_digit_sums``, ``to_integers``, ``to_float64``, ``to_double_word``, ``to_words``, ``rounded``,
``with_digit_bits``, ``scaled2``, ``take_columns``, ``max_abs_bound``, ``.T``, ``-a``, ``a + b``, ``a - b``, ``a @ b``), :func:`digit_bits_for`,
:func:`chunked_digit_bits`; the products are :mod:`.ozaki`'s.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InternalCheckFailed
from .eft import floor_of_sum
from .integer_digits import balanced_digits, least_exponent, max_abs, normalize, to_levels
from .rounding import float_up

_MAX_DIGIT_BITS = 27  # one product of two 27-bit balanced digits is 2**52: the widest exact single product
# longest inner-dimension chunk of the slice GEMMs of digits wider than digit_bits_for(inner): 22-bit digits on
# chunks of at most 2048 (measured at N = 5404, 1351 columns: three chunks of 1802 at 97 % of an unchunked GEMM's
# speed; 23 bits on chunks of 512: 86 %, which eats most of the saving of fewer digits)
_INNER_CHUNK = 2048
_BLOCK_ENTRIES = 1 << 20  # entries per row block of from_words (its levels are digits + 1 times that)


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


def _pow2(k: int) -> Fraction:
    return Fraction(2) ** k


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
            floor_rest = floor_of_sum(rests)
            np.left_shift(floor_rest, (grid - b) - (e - b * (n + 1)), out=floor_rest)
            levels[-1] += floor_rest
            digits, prefix = normalize(levels, b)
            exact_levels, rounded = to_levels(digits, b, e + b * prefix, b_dst=b, e_dst=e, n_dst=n, grid=grid)
            inexact = inexact or rounded or any(bool(np.any(r)) for r in rests)
            out[:, I] = normalize(exact_levels, b)[0]  # the value fits n digits below e (e bounds it)
        return cls(out, e, b, 2.0 ** (grid - 1) if inexact else 0.0)

    @classmethod
    def from_words_apart(cls, words, *, digits: int, digit_bits: int | None = None) -> "FixedMatrix":
        """The sum of float64 arrays, each rounded to nearest (ties toward +∞) on the grid of ``digits`` digits
        below the exponent: :meth:`from_words` without its guard digit and exact rounding of the sum, so about
        half its cost, for an error of up to one half grid per word instead of one in all.

        Parameters
        ----------
        words : sequence of array_like of float64, each shape (n, m)
        digits : int
            Digits kept: the grid is ``2**(exponent - digits * digit_bits)``.
        digit_bits : int, optional
            Default ``digit_bits_for(max(n, m))``.

        Returns
        -------
        FixedMatrix
            ``exponent`` the least with ``2**(exponent-1)`` at least a float64 upper bound on ``max Σ|words|``;
            ``error_bound`` the sum over words of their largest rounding error (exact remainders), rounded up.
        """
        words = [_as_matrix(w, f"words[{i}]") for i, w in enumerate(words)]
        shapes = {w.shape for w in words}
        if len(shapes) != 1:
            raise ValueError(f"from_words_apart needs words of one shape, got {sorted(shapes)}")
        shape = words[0].shape
        b = _check_digit_bits(digit_bits_for(max(shape)) if digit_bits is None else digit_bits)
        n = _check_bits(digits)
        rows = max(1, _BLOCK_ENTRIES // max(1, shape[1]))
        blocks = [slice(i, min(shape[0], i + rows)) for i in range(0, shape[0], rows)]
        # Σ|w| evaluated in float64 errs by at most (c − 1)u of itself; the rounded words add at most a grid each
        top = max(float(np.max(sum(np.abs(w[I]) for w in words), initial=0.0)) for I in blocks)
        top *= 1 + len(words) * 2.0**-52
        # the rounded sum exceeds top by a few half grids at most, which balanced digits on e still hold
        e = _exponent_for(top) if top else 0
        out = np.empty((n,) + shape)
        worst = [0.0] * len(words)  # each word's largest rounding error (exact: the remainders are exact)
        for I in blocks:
            levels = np.zeros((n, I.stop - I.start, shape[1]), dtype=np.int64)
            for i, w in enumerate(words):
                d, rest = _float_digits(w[I], e, b, n, e - b * n)
                levels += d.astype(np.int64)
                worst[i] = max(worst[i], float(np.max(np.abs(rest), initial=0.0)))
            del d
            block, prefix = normalize(levels, b)
            if prefix:
                raise InternalCheckFailed("from_words_apart: the rounded sum does not fit its exponent")
            out[:, I] = block
        return cls(out, e, b, float_up(sum(Fraction(x) for x in worst)))

    @classmethod
    def from_integers(cls, ints, exp2: int, *, digit_bits: int | None = None) -> "FixedMatrix":
        """The exact matrix ``ints * 2**exp2``.

        Parameters
        ----------
        ints : array_like of Python int (object), shape (n, m)
            E.g. the row-major list of :func:`precise_kpca.arith.dyadic.fixed_point_integers`, reshaped.
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
        out, prefix = normalize(digits.astype(np.int64), b)
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
            digits, prefix = normalize(levels, b)
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
        return float_up(top * _pow2(self.exponent - 2 * b))

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
        error = float_up(Fraction(self.error_bound) * _pow2(k))
        return FixedMatrix(self.digits, self.exponent + k, self.digit_bits, error)

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
        levels, _ = to_levels(self.digits, self.digit_bits, self.exponent, b_dst=b, e_dst=self.exponent, n_dst=n)
        digits, prefix = normalize(levels, b)
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
        levels, _ = to_levels(self.digits, self.digit_bits, self.exponent, b_dst=b, e_dst=e, n_dst=n)
        more, _ = to_levels(other.digits, other.digit_bits, other.exponent, b_dst=b, e_dst=e, n_dst=n)
        levels += more
        del more
        digits, prefix = normalize(levels, b)
        error = float_up(Fraction(self.error_bound) + Fraction(other.error_bound))
        return FixedMatrix(digits, e + b * prefix, b, error)

    def __sub__(self, other: "FixedMatrix") -> "FixedMatrix":
        if not isinstance(other, FixedMatrix):
            return NotImplemented
        return self + (-other)

    def __matmul__(self, other: "FixedMatrix") -> "FixedMatrix":
        if not isinstance(other, FixedMatrix):
            return NotImplemented
        from .ozaki import matmul  # the products import this module

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
        levels, inexact = to_levels(self.digits, self.digit_bits, self.exponent, b_dst=b, e_dst=e, n_dst=n,
                                  grid=e - bits)
        digits, prefix = normalize(levels, b)
        if prefix and exponent is not None:
            raise ValueError(f"rounded: the value does not fit exponent {exponent} (|value| > 2**{exponent - 1})")
        bound = Fraction(self.error_bound) + (_pow2(e - bits - 1) if inexact else 0)
        return FixedMatrix(digits, e + b * prefix, b, float_up(bound))


def _as_matrix(a, name: str) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} has nan or infinite entries")
    return a
