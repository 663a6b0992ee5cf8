"""Exact squared distances D and the linear Gram L = X_c X_cᵀ of X = M·2^e, read into binary128 row block by row
block (:mod:`.binary128_gram`'s first step: module docstring there, "Exact integers").

Integer products run on float64 BLAS (one exact GEMM for small integers, else the Ozaki scheme,
:mod:`precise_kpca.arith.ozaki`); each exact entry is read into binary128 with a stated relative error, and reads
the same from every row block, so the Gram stays exactly symmetric and independent of the blocking.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property

import numpy as np
from mpmath import libmp

from ..arith.fixed import FixedMatrix, digit_bits_for
from ..arith.ozaki import matmul
from ..arith.rounding import float_up
from ..errors import InternalCheckFailed
from .binary128_phi import QUAD, U, binary128_array, binary128_scalar
from .exact import ExactData

_FLOAT_EXACT = 2**53  # integers up to this are exact in float64, and so are sums that stay within it
_READ_BITS = 26  # digit width of the canonical fixed point read by _read_digits (two digits fit a float64)
_WINDOW = 8  # digits read per entry: two halves of four, each exact in binary128
_WINDOWED_READ = math.nextafter(U, math.inf)  # ≥ u + 2^-180, the error of _read_digits beyond the window


class ExactSquares:
    """Row blocks of D = (‖x_i − x_j‖²) and L = X_c X_cᵀ from exact integer products, in binary128, on and above
    the diagonal: rows [a, b) × columns [a, N) (both are symmetric; the Gram's passes mirror the rest).

    Parameters
    ----------
    exact : ExactData
        X = M·2^e, shape (N, d).
    keep : bool
        Keep each block read (the same rows are asked for at every σ; ~24 N² bytes for the four parts of all
        blocks); callers get copies to overwrite.

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
        return float_up((1 + Fraction(self._linear.error)) * (1 + Fraction(U)) - 1)

    def distances(self, rows: slice) -> np.ndarray:
        """D̂ for the rows ``rows`` and columns [rows.start, N): binary128, |D̂ − D| ≤ ``distance_error``·D."""
        return self._read("distances", rows, lambda: self._distances.block(rows, self._exp2))

    def linear(self, rows: slice) -> np.ndarray:
        """L̂ for the rows ``rows`` and columns [rows.start, N): binary128, |L̂ − L| ≤ ``linear_error``·|L|."""
        return self._read("linear", rows, lambda: self._linear.block(rows, self._exp2, self._n * self._n))

    def distances_float64(self, rows: slice) -> np.ndarray:
        """fl64(D̂) of :meth:`distances` (for the bound's terms)."""
        return self._read("distances64", rows, lambda: self.distances(rows).astype(np.float64))

    def linear_float64(self, rows: slice) -> np.ndarray:
        """fl64(L̂) of :meth:`linear` (for the bound's terms)."""
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
        self.error = U if -(-self._exponent // _READ_BITS) <= _WINDOW else _WINDOWED_READ
        self._floats = None
        self._f = FixedMatrix.from_integers(f, 0, digit_bits=digit_bits_for(k))
        if distances:
            norms = FixedMatrix.from_integers((f * f).sum(axis=1)[:, None], 0, digit_bits=_READ_BITS)
            self._norms = self._canonical(norms).digits[:, :, 0]

    def block(self, rows: slice, exp2: int, divisor: int = 1) -> np.ndarray:
        """The entries of the rows ``rows`` and columns [rows.start, N) times 2^exp2 / ``divisor`` (an integer below
        2⁵³), binary128, each within ``error`` (and one more rounding, u, for a divisor other than 1)."""
        cols = slice(rows.start, None)
        if self._floats is not None:
            f = self._floats
            p = f[rows] @ f[cols].T
            if self._distances:
                p = (self._norms[rows, None] + self._norms[None, cols]) - 2 * p
            return _scaled(p.astype(QUAD), exp2, divisor)
        product = self._canonical(matmul(_rows(self._f, rows), _rows(self._f, cols).T))
        if self._distances:
            sums = (self._norms[:, rows, None] + self._norms[:, None, cols]) - 2 * product.digits
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
    q = [((window[2 * k] * 2.0**b + window[2 * k + 1]) * 2.0 ** (2 * b * (pairs - 1 - k))).astype(QUAD)
         for k in range(pairs)]
    high = q[0] + q[1] if pairs > 1 else q[0]
    value = high if pairs <= 2 else high + (q[2] + q[3] if pairs == 4 else q[2])
    last = fixed.exponent - b * count + exp2  # unit of the last digit
    if lead is None:
        return _scaled(value, last, divisor)
    units = binary128_array([(0, 1, last + b * (count - l - _WINDOW), 1) for l in range(count)])
    return _scaled(value * units[lead], 0, divisor)


def _scaled(q: np.ndarray, exp2: int, divisor: int) -> np.ndarray:
    """q·2^exp2 / divisor in binary128: exact for divisor 1, else one rounding (divisor·2^-exp2 is exact)."""
    if divisor == 1:
        return q * binary128_scalar(libmp.from_man_exp(1, exp2))
    return q / binary128_scalar(libmp.from_man_exp(divisor, -exp2))


def _rows(a: FixedMatrix, rows: slice) -> FixedMatrix:
    """The rows ``rows`` of ``a`` (a view of its digits)."""
    return FixedMatrix(a.digits[:, rows], a.exponent, a.digit_bits)
