"""IEEE float64 backend: NumPy arrays, SciPy/LAPACK eigensolver."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import scipy.linalg

from .base import Backend, as_fraction

# exp(-u) - 1 + u = u² Σ_j (-u)^j / (j+2)!  — 18 terms reach float64 roundoff for u < 1.
_RESIDUAL_SERIES = np.array([1.0 / math.factorial(j + 2) for j in range(18)])


class Float64Backend(Backend):
    """float64 arithmetic with cancellation-free forms (``naive=False``) or the paper's plain forms."""

    dps = 15
    prec = 53
    fixed_precision = True
    bounded_range = True
    exact_input = False

    def __init__(self, naive: bool = False):
        self.naive = naive
        self.name = "float64-naive" if naive else "float64"

    @property
    def dtype(self):
        return np.float64

    def scalar(self, value):
        value = float(as_fraction(value))
        if not math.isfinite(value):
            raise OverflowError("value exceeds the float64 range; use backend='mp'")
        return value

    def from_scaled_integers(self, integers, exp2):
        # Fraction -> float rounds correctly once, whatever the size of the integer.
        scale = Fraction(2) ** exp2
        return np.vectorize(lambda m: float(int(m) * scale), otypes=[float])(integers)

    def export(self, array):
        if isinstance(array, np.ndarray):
            return array.astype(np.float64, copy=False)
        return float(array)

    def internal(self, array):
        if isinstance(array, np.ndarray) and array.dtype == object:
            return np.vectorize(float, otypes=[float])(array)
        if isinstance(array, np.ndarray):
            return array.astype(np.float64, copy=False)
        return float(array)

    def to_floats(self, array):
        return np.array(array, dtype=np.float64)

    def checked_internal(self, array, name):
        from ..validation import exact_float64  # validation sits above the backends (it converts with them)

        values = exact_float64(array, name)
        if not np.isfinite(values).all():
            row, col = map(int, np.argwhere(~np.isfinite(values))[0])
            raise ValueError(f"matrix contains {values[row, col]} at row {row}, column {col}")
        return values

    def exp(self, a):
        return np.exp(a)

    def cos(self, a):
        return np.cos(a)

    def sin(self, a):
        return np.sin(a)

    def atan2(self, y, x):
        return math.atan2(y, x)  # the C library's, correctly rounded more often than NumPy's scalar arctan2

    def expm1(self, a):
        return np.expm1(a)

    def sqrt(self, a):
        return np.sqrt(a)

    def log2(self, a):
        return np.log2(a)

    def exp_residual(self, u):
        u = np.asarray(u, dtype=np.float64)
        small = u < 1.0
        series = np.zeros_like(u)
        us = u[small]
        acc = np.zeros_like(us)
        for c in _RESIDUAL_SERIES[::-1]:  # Horner in x = -u
            acc = acc * (-us) + c
        series[small] = us * us * acc
        series[~small] = np.expm1(-u[~small]) + u[~small]
        return series

    def eigh(self, a):
        values, vectors = scipy.linalg.eigh(np.asarray(a, dtype=np.float64))
        return values[::-1].copy(), vectors[:, ::-1].copy()

    def eigvalsh(self, a):
        return np.linalg.eigvalsh(a)[::-1]

    def norm2(self, a):
        return np.linalg.norm(a, 2)

    def inverse(self, a):
        return scipy.linalg.inv(a)

    def elementwise_seconds(self, count):
        return 0.0

    def eigh_seconds(self, n):
        return 0.0
