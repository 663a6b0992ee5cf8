"""Arbitrary-precision backend: NumPy object arrays of mpmath ``mpf`` from a private context.

Each :class:`MPBackend` owns its own :class:`mpmath.MPContext`, so precision never leaks into (or from)
the global ``mpmath.mp``. Public results are exported as global-type ``mpmath.mpf`` built from the exact
mantissa/exponent (``mpmath.mp.make_mpf``): exporting never rounds.
"""
from __future__ import annotations

import mpmath
import numpy as np
from mpmath import libmp

from .base import Backend, as_fraction

MIN_DPS = 15  # 15 digits = 53 bits: the least precision that holds float64 input exactly
_GUARD_BITS = 10


class MPBackend(Backend):
    """mpmath arithmetic at ``dps`` decimal digits (``prec`` bits) in a private context.

    Parameters
    ----------
    dps : int
        Working precision in decimal digits, at least 15 (the least that holds float64 data exactly).
    """

    name = "mp"

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

    def exp(self, a):
        return self._exp(a)

    def expm1(self, a):
        return self._expm1(a)

    def sqrt(self, a):
        return self._sqrt(a)

    def log2(self, a):
        return self._log2(a)

    def exp_residual(self, u):
        u = np.asarray(u, dtype=object)
        positive = [x for x in u.ravel() if x]
        if not positive:
            return self.zeros(u.shape)
        # expm1(-u) + u cancels log2(2/u) bits; evaluate with that many extra bits, then round once.
        extra = max(0, -min(self.ctx.mag(x) for x in positive)) + 1 + _GUARD_BITS
        ctx = self.ctx
        with ctx.workprec(self.prec + extra):
            wide = np.frompyfunc(lambda x: ctx.expm1(-x) + x, 1, 1)(u)
        return np.asarray(np.frompyfunc(lambda x: +x, 1, 1)(wide), dtype=object)

    def eigh(self, a):
        ctx = self.ctx
        values, vectors = ctx.eigsy(ctx.matrix(np.asarray(a, dtype=object).tolist()))
        n = len(values)
        order = sorted(range(n), key=lambda i: values[i], reverse=True)
        w = np.array([values[i] for i in order], dtype=object)
        v = np.array([[vectors[r, i] for i in order] for r in range(n)], dtype=object)
        return w, v
