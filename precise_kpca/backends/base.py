"""The arithmetic context every algorithm is written against.

An algorithm in :mod:`precise_kpca.numerics` is written once, with NumPy array syntax (``+``, ``@``,
``sum``, broadcasting) plus the few primitives below; the backend decides what an array element is:

* :class:`~precise_kpca.backends.float64.Float64Backend` — IEEE float64 elements, LAPACK eigensolver;
* :class:`~precise_kpca.backends.mp.MPBackend` — NumPy object arrays of mpmath ``mpf`` from a private
  :class:`mpmath.MPContext` at ``dps`` decimal digits (the global ``mpmath.mp`` is never touched).

Precision is a property of the backend object, never of global state. As with mpmath's contexts (``mp``, ``fp``,
``iv`` share one interface; an algorithm that must differ asks ``ctx._fixed_precision``, never the context's type),
an algorithm never asks which backend it runs on: it calls a primitive, or, where the algorithm itself differs (a
power-of-two scaling only a bounded exponent range needs, an exact integer form only an arbitrary precision can
use), it asks a capability: :attr:`Backend.fixed_precision`, :attr:`Backend.bounded_range`,
:attr:`Backend.exact_input`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction

import numpy as np


class Backend(ABC):
    """Arithmetic and linear-algebra primitives for one kind of number.

    Attributes
    ----------
    name : str
        ``"float64"``, ``"float64-naive"`` or ``"mp"``.
    dps : int
        Working precision in decimal digits (15 for float64).
    prec : int
        Working precision in bits (53 for float64).
    naive : bool
        True for the paper-compatible mode that exponentiates and then centers (no cancellation-free forms).
    fixed_precision : bool
        True when the precision cannot be raised (float64; mpmath's ``ctx._fixed_precision``): an eigensystem is
        the native solver's, with nothing to refine it towards, and an escalation must move to another backend.
    bounded_range : bool
        True when numbers have float64's exponent range: algorithms work on the data scaled by an exact power of
        two into range, keep quantities that scale as mantissa and exponent, and refuse a value that leaves the
        range (float64). False: exponents are unbounded (mp).
    exact_input : bool
        True when quantities derived from X (squared distances, Grams, centered data) are formed from its exact
        integer form (:class:`~precise_kpca.numerics.exact.ExactData`) and rounded once (mp). False: they are
        formed in the backend's arithmetic from the float data, within a few ulps (float64: direct differences,
        BLAS).
    """

    name: str
    dps: int
    prec: int
    naive: bool = False
    fixed_precision: bool
    bounded_range: bool
    exact_input: bool

    @property
    def eps(self) -> float:
        """Unit roundoff 2**(1 - prec): the scale of every tolerance on this backend."""
        return 2.0 ** (1 - self.prec)

    # --- conversion -----------------------------------------------------------------------------------
    @abstractmethod
    def scalar(self, value):
        """Convert an int, Fraction, float, or mpmath number to one backend scalar (one rounding at most)."""

    @abstractmethod
    def from_scaled_integers(self, integers: np.ndarray, exp2: int) -> np.ndarray:
        """Array of ``integers * 2**exp2`` (object array of Python ints), each entry rounded once."""

    @abstractmethod
    def export(self, array):
        """Public form of an array or scalar: float64 values, or global-type ``mpmath.mpf`` (no rounding)."""

    @abstractmethod
    def internal(self, array):
        """Inverse of :meth:`export`: bring public values (floats or any ``mpf``) into this backend."""

    def to_float(self, value) -> float:
        """Nearest float of a backend scalar (for reporting only, never for further computation)."""
        return float(value)

    def to_floats(self, array: np.ndarray) -> np.ndarray:
        """Nearest-float copy of a backend array, as a float64 ndarray (for reporting and plotting only)."""
        return np.vectorize(self.to_float, otypes=[float])(array)

    @abstractmethod
    def checked_internal(self, array: np.ndarray, name: str) -> np.ndarray:
        """A public real 2-D array in this backend, refusing what the backend cannot hold.

        float64: every entry must equal a finite float64 exactly (ValueError naming ``name`` and the first entry
        that does not); mp: each entry rounded once to working precision (:meth:`internal`).
        """

    # --- elementwise functions ------------------------------------------------------------------------
    @abstractmethod
    def exp(self, a): ...

    @abstractmethod
    def expm1(self, a): ...

    @abstractmethod
    def sqrt(self, a): ...

    @abstractmethod
    def log2(self, a): ...

    @abstractmethod
    def cos(self, a):
        """Cosine, elementwise, within an ulp: NumPy's (float64), mpmath's at working precision (mp)."""

    @abstractmethod
    def sin(self, a):
        """Sine, elementwise, within an ulp: NumPy's (float64), mpmath's at working precision (mp)."""

    @abstractmethod
    def atan2(self, y, x):
        """The angle of the point (x, y) in (−π, π], of two backend scalars, with full relative accuracy also for
        tiny angles (y ≪ x, where acos or asin would lose it), within an ulp: the C library's ``atan2`` (float64),
        mpmath's at working precision (mp)."""

    @abstractmethod
    def exp_residual(self, u):
        """``exp(-u) - 1 + u`` for ``u >= 0`` with full relative accuracy, also where it is ~u²/2 ≪ u."""

    # --- linear algebra -------------------------------------------------------------------------------
    @abstractmethod
    def eigh(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Eigenvalues (descending) and orthonormal eigenvectors (columns) of a symmetric matrix."""

    @abstractmethod
    def eigvalsh(self, a: np.ndarray) -> np.ndarray:
        """Eigenvalues (descending) of a symmetric matrix, without eigenvectors: LAPACK's (float64, backward
        stable: errors ~ eps·‖a‖₂); those of :meth:`eigh` (mp)."""

    @abstractmethod
    def norm2(self, a: np.ndarray):
        """Spectral norm ‖a‖₂ (largest singular value): LAPACK's SVD (float64), the root of the largest eigenvalue
        of aᵀa (mp); errors ~ eps·‖a‖₂."""

    @abstractmethod
    def inverse(self, a: np.ndarray) -> np.ndarray:
        """Inverse of a small nonsingular square matrix: LAPACK's (float64, backward stable); mpmath's LU at
        working precision (mp, error ~ cond(a)·eps)."""

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a @ b (backends may override with a faster exact-product scheme)."""
        return a.dot(b)

    def operator(self, a: np.ndarray):
        """``a`` prepared for repeated products ``op.dot(b)`` (itself on float64)."""
        return a

    @abstractmethod
    def elementwise_seconds(self, count: int) -> float:
        """Estimated seconds for ``count`` elementwise exponentials (to warn before a long run; 0 where
        negligible)."""

    @abstractmethod
    def eigh_seconds(self, n: int) -> float:
        """Estimated seconds for :meth:`eigh` of an n×n matrix (to warn before a long run; 0 where negligible)."""

    def zeros(self, shape) -> np.ndarray:
        return np.full(shape, self.scalar(0), dtype=self.dtype)

    @property
    @abstractmethod
    def dtype(self): ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dps={self.dps})"


def as_fraction(value) -> Fraction:
    """Exact rational value of an int, float, Fraction, or mpmath mpf (mpf are dyadic, hence exact)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, (float, np.floating)):
        return Fraction(float(value))
    mpf_tuple = getattr(value, "_mpf_", None)
    if mpf_tuple is not None:
        sign, man, exp, _ = mpf_tuple
        if not man and exp:  # mpmath encodes inf/nan as zero mantissa with a nonzero exponent code
            raise ValueError(f"{value!r} is not a finite number")
        numerator = (-1) ** sign * int(man)
        return Fraction(numerator * 2**exp) if exp >= 0 else Fraction(numerator, 2 ** (-exp))
    raise TypeError(f"cannot convert {type(value).__name__} {value!r} to an exact rational")
