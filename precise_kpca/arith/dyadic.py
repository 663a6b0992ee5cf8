"""Exact dyadic matrices: an integer matrix times a power of two, on python-flint's ``fmpz_mat``.

The rigorous enclosures need products of tall matrices (N×m, m ≤ a few hundred) whose entries carry hundreds of
bits, exactly. python-flint multiplies integer matrices at C speed (multi-modular) but has no dyadic type, and
``fmpq_mat`` normalises every entry by a gcd (orders of magnitude slower at N in the thousands); the Ozaki scheme
(:mod:`.ozaki`) is the faster route for N×N factors of ~120 bits. :class:`Dyadic` is the thin exact layer between
them: every operation below is exact (no rounding anywhere) except :meth:`Dyadic.rounded`, which says so.

mpf matrices (any context) enter by one rounding to a common grid: :func:`fixed_point_integers` (the integers and
exponent), :func:`mpf_matrix_to_dyadic` (as a :class:`Dyadic`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from .fixed import FixedMatrix


@dataclass(frozen=True)
class Dyadic:
    """The exact matrix ``ints · 2**exp2``.

    Attributes
    ----------
    ints : flint.fmpz_mat, shape (n, m)
    exp2 : int
    """

    ints: flint.fmpz_mat
    exp2: int

    # -- construction -------------------------------------------------------------------------------------
    @classmethod
    def from_int_array(cls, ints, exp2: int = 0) -> "Dyadic":
        """From an array-like of Python ints (object array or nested lists), shape (n, m)."""
        array = np.asarray(ints, dtype=object)
        if array.ndim != 2:
            raise ValueError(f"ints must be 2-d, got shape {array.shape}")
        return cls(flint.fmpz_mat(array.shape[0], array.shape[1], [int(v) for v in array.ravel()]), int(exp2))

    @classmethod
    def from_fixed(cls, fixed: FixedMatrix) -> "Dyadic":
        """The exact value of an Ozaki fixed-point matrix (its ``error_bound`` is the caller's to carry)."""
        ints, exp2 = fixed.to_integers()
        return cls.from_int_array(ints, exp2)

    @classmethod
    def from_float64(cls, a: np.ndarray) -> "Dyadic":
        """The exact value of a float64 array (every finite float64 is dyadic), shape (n, m)."""
        a = np.asarray(a, dtype=np.float64)
        if a.ndim == 1:
            a = a[:, None]
        if not np.isfinite(a).all():
            raise ValueError("a float64 array with NaN or inf has no exact dyadic value")
        nonzero = a[a != 0]
        if nonzero.size == 0:
            return cls(flint.fmpz_mat(*a.shape), 0)
        mant, ex = np.frexp(a)  # a = mant·2**ex, mant in [1/2, 1) with 53 significant bits
        low = int(ex[a != 0].min()) - 53
        ints = [int(m) << int(e - 53 - low) if m else 0
                for m, e in zip(np.ldexp(mant, 53).astype(np.int64).ravel(), ex.ravel())]
        return cls(flint.fmpz_mat(a.shape[0], a.shape[1], ints), low)

    # -- shape --------------------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return self.ints.nrows(), self.ints.ncols()

    @property
    def T(self) -> "Dyadic":
        return Dyadic(self.ints.transpose(), self.exp2)

    def columns(self, start: int, stop: int) -> "Dyadic":
        n, m = self.shape
        if stop <= start:
            return Dyadic(flint.fmpz_mat(n, 0), self.exp2)
        # a product with the 0/1 selection matrix runs in C (~6x faster than reading the entries one by one)
        select = flint.fmpz_mat(m, stop - start, [int(i == j + start) for i in range(m) for j in range(stop - start)])
        return Dyadic(self.ints * select, self.exp2)

    # -- exact arithmetic ---------------------------------------------------------------------------------
    def __matmul__(self, other: "Dyadic") -> "Dyadic":
        return Dyadic(self.ints * other.ints, self.exp2 + other.exp2)

    def _aligned(self, other: "Dyadic") -> tuple[flint.fmpz_mat, flint.fmpz_mat, int]:
        e = min(self.exp2, other.exp2)
        a = self.ints * flint.fmpz(2) ** (self.exp2 - e) if self.exp2 > e else self.ints
        b = other.ints * flint.fmpz(2) ** (other.exp2 - e) if other.exp2 > e else other.ints
        return a, b, e

    def __add__(self, other: "Dyadic") -> "Dyadic":
        a, b, e = self._aligned(other)
        return Dyadic(a + b, e)

    def __sub__(self, other: "Dyadic") -> "Dyadic":
        a, b, e = self._aligned(other)
        return Dyadic(a - b, e)

    def __neg__(self) -> "Dyadic":
        return Dyadic(-self.ints, self.exp2)

    def scaled(self, factor: int, exp2: int = 0) -> "Dyadic":
        """``factor · 2**exp2 · self`` for an integer factor."""
        return Dyadic(self.ints * flint.fmpz(factor), self.exp2 + exp2)

    def scale_columns(self, factors, exp2: int) -> "Dyadic":
        """Column j multiplied by the integer ``factors[j]``, all by ``2**exp2`` (a diagonal right factor)."""
        _, m = self.shape
        diag = flint.fmpz_mat(m, m)
        for j, f in enumerate(factors):
            diag[j, j] = int(f)
        return Dyadic(self.ints * diag, self.exp2 + exp2)

    # -- exact read-outs ----------------------------------------------------------------------------------
    def entry(self, i: int, j: int) -> Fraction:
        return _fraction(int(self.ints[i, j]), self.exp2)

    def to_int_array(self) -> np.ndarray:
        n, m = self.shape
        return np.array([int(v) for v in self.ints.entries()], dtype=object).reshape(n, m)

    def to_float64(self) -> np.ndarray:
        """Nearest float64 of every entry (an approximation: for computing corrections, never for bounds)."""
        n, m = self.shape
        return np.array([math.ldexp(float(int(v)), self.exp2) if abs(int(v)).bit_length() < 1000
                         else float(Fraction(int(v)) * Fraction(2) ** self.exp2) for v in self.ints.entries()],
                        dtype=np.float64).reshape(n, m)

    def to_fixed(self) -> FixedMatrix:
        """The same exact value as an Ozaki fixed-point matrix (for N×N products on BLAS)."""
        return FixedMatrix.from_integers(self.to_int_array(), self.exp2)

    def to_fmpq(self) -> flint.fmpq_mat:
        scale = flint.fmpq(2) ** self.exp2 if self.exp2 >= 0 else flint.fmpq(1, 2 ** -self.exp2)
        n, m = self.shape
        return flint.fmpq_mat(n, m, [flint.fmpq(v) * scale for v in self.ints.entries()])

    def column_squares(self) -> list[Fraction]:
        """Exact squared Euclidean norms of the columns."""
        gram = self.T @ self
        return [gram.entry(j, j) for j in range(self.shape[1])]

    def frobenius_squared(self) -> Fraction:
        return _fraction(sum(int(v) ** 2 for v in self.ints.entries()), 2 * self.exp2)

    def max_abs(self) -> Fraction:
        return _fraction(max((abs(int(v)) for v in self.ints.entries()), default=0), self.exp2)

    # -- rounding (the one inexact operation) -------------------------------------------------------------
    def rounded(self, bits: int) -> "Dyadic":
        """Entries rounded to nearest on the grid 2**(top − bits), top = ⌈log2 max|entry|⌉; error ≤ half that
        grid step per entry (exactly what :meth:`max_abs` of the difference shows)."""
        entries = self.ints.entries()  # fmpz throughout: no conversion to Python ints (3x faster)
        top = max(max(entries), -min(entries)).bit_length() if entries else 0
        shift = top - bits
        if shift <= 0:
            return self
        half = flint.fmpz(1 << (shift - 1))
        n, m = self.shape
        return Dyadic(flint.fmpz_mat(n, m, [(v + half) >> shift for v in entries]), self.exp2 + shift)


def _fraction(numerator: int, exp2: int) -> Fraction:
    return Fraction(numerator * (1 << exp2)) if exp2 >= 0 else Fraction(numerator, 1 << -exp2)


def fixed_point_integers(a: np.ndarray, bits: int) -> tuple[list, int]:
    """Row-major integers Z and exponent e with a ≈ Z·2**e, rounding below 2**-bits of the largest entry.

    Entries are read exactly from their ``_mpf_`` tuples (any mpmath context); each is rounded once, to
    nearest with ties away from zero.
    """
    tuples = [x._mpf_ for x in np.asarray(a).ravel()]
    top = max((t[2] + t[3] for t in tuples if t[1]), default=0)
    e0 = top - bits
    out = []
    for sign, man, exp, _ in tuples:
        if not man:
            out.append(0)
            continue
        k = exp - e0
        v = man << k if k >= 0 else (man + (1 << (-k - 1))) >> -k
        out.append(-int(v) if sign else int(v))
    return out, e0


def mpf_matrix_to_dyadic(a: np.ndarray, bits: int) -> Dyadic:
    """An object array of mpf (any context) rounded once to a common grid 2**(top − bits) (see
    :func:`fixed_point_integers`)."""
    a = np.asarray(a, dtype=object)
    if a.ndim == 1:
        a = a[:, None]
    ints, exp2 = fixed_point_integers(a, bits)
    return Dyadic(flint.fmpz_mat(a.shape[0], a.shape[1], ints), exp2)
