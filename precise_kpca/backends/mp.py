"""Arbitrary-precision backend: NumPy object arrays of mpmath ``mpf`` from a private context.

Each :class:`MPBackend` owns its own :class:`mpmath.MPContext`, so precision never leaks into (or from)
the global ``mpmath.mp``. Public results are exported as global-type ``mpmath.mpf`` built from the exact
mantissa/exponent (``mpmath.mp.make_mpf``): exporting never rounds.
"""
from __future__ import annotations

import flint
import mpmath
import numpy as np
from mpmath import libmp

from ..arith.dyadic import fixed_point_integers
from .base import Backend, as_fraction

MIN_DPS = 15  # 15 digits = 53 bits: the least precision that holds float64 input exactly
_GUARD_BITS = 10
_PRODUCT_GUARD_BITS = 32
_SMALL_PRODUCT = 4096  # below this many multiply-adds NumPy's object loop is as fast
_SERIES_LIMIT = 0.25  # exp(-u) - 1 + u by its Taylor series when max u is at most this
# Measured: ~20 µs per mpf expm1 at 50 digits; mpmath.eigsy ~7.7 s for N = 100 at dps 30, growing like N³ (and ~dps).
_SECONDS_PER_ENTRY_DPS50 = 2e-5
_EIGSY_SECONDS_N100_DPS30 = 7.7


class MPBackend(Backend):
    """mpmath arithmetic at ``dps`` decimal digits (``prec`` bits) in a private context.

    Parameters
    ----------
    dps : int
        Working precision in decimal digits, at least 15 (the least that holds float64 data exactly).
    """

    name = "mp"
    fixed_precision = False
    bounded_range = False
    exact_input = True

    def __init__(self, dps: int):
        if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)):
            raise ValueError(f"dps must be an integer number of decimal digits, got {dps!r}")
        if dps < MIN_DPS:
            raise ValueError(
                f"dps={dps} is too little precision to be meaningful: the mp backend needs dps >= {MIN_DPS} "
                "(53 bits) to hold float64 input exactly; use backend='float64' for float64 accuracy"
            )
        self.ctx = mpmath.MPContext()
        self.ctx.dps = int(dps)
        self.dps = int(dps)
        self.prec = self.ctx.prec
        ctx = self.ctx
        self._exp = np.frompyfunc(ctx.exp, 1, 1)
        self._expm1 = np.frompyfunc(ctx.expm1, 1, 1)
        self._sqrt = np.frompyfunc(ctx.sqrt, 1, 1)
        self._cos = np.frompyfunc(ctx.cos, 1, 1)
        self._sin = np.frompyfunc(ctx.sin, 1, 1)
        self._log2 = np.frompyfunc(lambda x: ctx.log(x, 2), 1, 1)
        self._export = np.frompyfunc(lambda x: mpmath.mp.make_mpf(x._mpf_), 1, 1)
        self._internal = np.frompyfunc(self.scalar, 1, 1)

    @property
    def dtype(self):
        return object

    def scalar(self, value):
        mpf_tuple = getattr(value, "_mpf_", None)
        if mpf_tuple is not None:  # already dyadic: keep it exactly
            return self.ctx.make_mpf(mpf_tuple)
        q = as_fraction(value)
        return self.ctx.make_mpf(libmp.from_rational(q.numerator, q.denominator, self.prec, libmp.round_nearest))

    def from_scaled_integers(self, integers, exp2):
        make = self.ctx.make_mpf
        prec = self.prec
        convert = np.frompyfunc(lambda m: make(libmp.from_man_exp(int(m), exp2, prec, libmp.round_nearest)), 1, 1)
        return np.asarray(convert(integers), dtype=object)

    def export(self, array):
        if isinstance(array, np.ndarray):
            return np.asarray(self._export(array), dtype=object)
        return mpmath.mp.make_mpf(array._mpf_)

    def internal(self, array):
        if isinstance(array, np.ndarray):
            return np.asarray(self._internal(array), dtype=object)
        return self.scalar(array)

    def to_float(self, value) -> float:
        return float(libmp.to_float(value._mpf_, rnd=libmp.round_nearest))

    def checked_internal(self, array, name):
        return self.internal(array)

    def exp(self, a):
        return self._exp(a)

    def cos(self, a):
        return self._cos(a)

    def sin(self, a):
        return self._sin(a)

    def atan2(self, y, x):
        return self.ctx.atan2(y, x)

    def expm1(self, a):
        return self._expm1(a)

    def sqrt(self, a):
        return self._sqrt(a)

    def log2(self, a):
        return self._log2(a)

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a @ b via exact integer products (python-flint ``fmpz_mat``) of fixed-point forms.

        Each factor is rounded to ``prec + 32 + log2(inner size)`` bits below its largest entry, the product
        of the integers is exact, and each result entry is rounded once: the error is below that of a
        floating-point product at working precision (N·eps·max|a|·max|b| per entry).
        """
        return self.operator(a).dot(b)

    def operator(self, a: np.ndarray) -> "FixedPointOperator":
        """``a`` held as a fixed-point integer matrix, for repeated products ``op.dot(b)``."""
        return FixedPointOperator(np.asarray(a, dtype=object), self)

    def exp_residual(self, u):
        u = np.asarray(u, dtype=object)
        positive = [x for x in u.ravel() if x]
        if not positive:
            return self.zeros(u.shape)
        largest = max(positive)
        if largest <= _SERIES_LIMIT:
            return self._exp_residual_series(u, largest)
        # expm1(-u) + u cancels log2(2/u) bits; evaluate with that many extra bits, then round once.
        extra = max(0, -min(self.ctx.mag(x) for x in positive)) + 1 + _GUARD_BITS
        ctx = self.ctx
        with ctx.workprec(self.prec + extra):
            wide = np.frompyfunc(lambda x: ctx.expm1(-x) + x, 1, 1)(u)
        return np.asarray(np.frompyfunc(lambda x: +x, 1, 1)(wide), dtype=object)

    def _exp_residual_series(self, u: np.ndarray, largest) -> np.ndarray:
        """u² Σ_j (−u)^j/(j+2)!: all terms have the sign pattern of an alternating series with ratio ≤ 1/4,
        so stopping when u_max^j/(j+2)! < eps/8 leaves a relative error below eps/4."""
        ctx = self.ctx
        coefficients = []
        j = 0
        while True:
            term = ctx.mpf(1) / ctx.factorial(j + 2)
            coefficients.append(term)
            if largest**j * term < self.eps / 8 * coefficients[0]:
                break
            j += 1
        acc = np.full(u.shape, coefficients[-1], dtype=object)
        neg_u = -u
        for c in reversed(coefficients[:-1]):
            acc = acc * neg_u + c
        return u * u * acc

    def eigh(self, a):
        ctx = self.ctx
        values, vectors = ctx.eigsy(ctx.matrix(np.asarray(a, dtype=object).tolist()))
        n = len(values)
        order = sorted(range(n), key=lambda i: values[i], reverse=True)
        w = np.array([values[i] for i in order], dtype=object)
        v = np.array([[vectors[r, i] for i in order] for r in range(n)], dtype=object)
        return w, v

    def eigvalsh(self, a):
        return self.eigh(a)[0]

    def norm2(self, a):
        return self.sqrt(self.eigh(a.T.dot(a))[0][0])

    def inverse(self, a):
        ctx = self.ctx
        return np.array(ctx.inverse(ctx.matrix(a.tolist())).tolist(), dtype=object)

    def elementwise_seconds(self, count):
        return _SECONDS_PER_ENTRY_DPS50 * count * max(1.0, self.dps / 50)

    def eigh_seconds(self, n):
        return _EIGSY_SECONDS_N100_DPS30 * (n / 100) ** 3 * max(1.0, self.dps / 30)


class FixedPointOperator:
    """A matrix of an :class:`MPBackend` kept in fixed-point integer form for repeated exact products.

    Built from an object array ``a`` (converted on first use) or, by subclasses, directly from integers.
    """

    def __init__(self, a: np.ndarray | None, backend: MPBackend, shape: tuple[int, int] | None = None):
        self.a = a
        self.backend = backend
        self.shape = a.shape if a is not None else shape
        self.bits = backend.prec + _PRODUCT_GUARD_BITS + self.shape[1].bit_length()
        self._integers = None

    def dot(self, b: np.ndarray) -> np.ndarray:
        a, backend = self.a, self.backend
        b = np.asarray(b, dtype=object)
        matrix_b = b.reshape(b.shape[0], -1)
        if a is not None and a.shape[0] * a.shape[1] * matrix_b.shape[1] < _SMALL_PRODUCT:
            return a.dot(b)
        if self._integers is None:
            ints, exp2 = fixed_point_integers(a, self.bits)
            self._integers = (flint.fmpz_mat(a.shape[0], a.shape[1], ints), exp2)
        ia, ea = self._integers
        ib, eb = fixed_point_integers(matrix_b, self.bits)
        product = ia * flint.fmpz_mat(*matrix_b.shape, ib)
        make, prec, exp2 = backend.ctx.make_mpf, backend.prec, ea + eb
        entries = [make(libmp.from_man_exp(int(v), exp2, prec, libmp.round_nearest)) for v in product.entries()]
        return np.array(entries, dtype=object).reshape(self.shape[:1] + b.shape[1:])
