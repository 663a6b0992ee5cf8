"""E = H G H held as binary128 words and applied exactly to mp vectors: the structured path's mp twin at large N.

The mp backend's own E is one mpmath object per entry (tens of GB at N = 5404). Here E comes from the binary128
builder (~106 bits relative to max|E|, rigorous Frobenius bound) and each product E·V is exact fixed-point
arithmetic on float64 BLAS (:mod:`precise_kpca.arith.ozaki`), rounded once to the backend's precision.
Suitable for working precisions up to ~30 digits (:data:`MAX_DPS`): beyond, E itself is the limit.
"""
from __future__ import annotations

import math

import numpy as np

from ..arith.dyadic import fixed_point_integers
from ..arith.fixed import FixedMatrix
from ..arith.ozaki import matmul
from ..backends import MPBackend
from .kernels import Float64Underflow, sigma_text
from .binary128_gram import centered_residual_words

MAX_DPS = 30
_E_BITS = 120  # fixed-point bits of E = hi + lo below max|E| (the words carry ~106)


class Binary128ResidualOperator:
    """The operator interface of :class:`~precise_kpca.numerics.perturbed_spectrum.PerturbedSpectrum`.

    Attributes
    ----------
    shape : tuple (N, N)
    frobenius : float
        ‖E‖_F of the float64 high word.
    error_bound : float
        Rigorous bound on ‖E_exact − (hi + lo)‖_F from the builder.
    """

    def __init__(self, X: np.ndarray, sigma, backend: MPBackend, median: str = "full"):
        if backend.dps > MAX_DPS:
            raise ValueError(f"binary128 E carries ~{MAX_DPS} digits; dps={backend.dps} needs the mp residual")
        words = centered_residual_words(X, sigma, median=median)
        self.backend = backend
        self.shape = words.hi.shape
        self._exp2 = words.exp2  # the words hold E·2^−exp2 where E is below float64's range
        self._hi = words.hi
        self._fixed = FixedMatrix.from_words([words.hi, words.lo], bits=_E_BITS)
        self.frobenius = math.ldexp(float(np.linalg.norm(words.hi)), self._exp2)
        if not self.frobenius >= np.finfo(np.float64).tiny:
            raise Float64Underflow(f"sigma={sigma_text(words.sigma)}: ‖E‖ is below the float64 range; "
                                   "it needs the mp residual")
        bound = words.error_bound + self.shape[0] * self._fixed.error_bound
        self.error_bound = math.nextafter(math.ldexp(bound, self._exp2), math.inf)  # ldexp may round down

    def to_float64(self) -> np.ndarray:
        return np.ldexp(self._hi, self._exp2)

    def dot(self, b: np.ndarray) -> np.ndarray:
        """E·b for an object array of backend mpf, shape (N,) or (N, m); exact product, one rounding per entry."""
        b = np.asarray(b, dtype=object)
        matrix = b.reshape(b.shape[0], -1)
        bits = self.backend.prec + 16
        ints, exp2 = fixed_point_integers(matrix, bits)
        fixed = FixedMatrix.from_integers(np.array(ints, dtype=object).reshape(matrix.shape), exp2)
        product, e = matmul(self._fixed, fixed, bits=bits).to_integers()
        return self.backend.from_scaled_integers(product, e + self._exp2).reshape(self.shape[:1] + b.shape[1:])
