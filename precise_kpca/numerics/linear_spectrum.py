"""Eigen-decomposition of the centered linear Gram L = H X Xᵀ H through the d×d matrix X_cᵀ X_c
(or L itself when d > N).

L = X_c X_cᵀ has rank r ≤ d; its nonzero eigenvalues are those of X_cᵀ X_c (d×d) and its eigenvectors are
W = X_c Q Λ^{−1/2}. The other N − r eigenvalues are exactly 0. With exact input (mp) X_c comes from the exact
integer form of X (N·X_c has integer mantissas): X_cᵀ X_c and X_c Q are exact integer products (python-flint
``fmpz_mat``, Q read in fixed point at the working precision), and the d×d eigenproblem is solved by the
refined eigensolver — O(N d²) integer work instead of O(N d²) mpmath operations (minutes at d in the hundreds).
"""
from __future__ import annotations

import flint
import numpy as np

from ..arith.dyadic import fixed_point_integers
from ..backends import Backend
from .eigen_refine import refine_eigensystem
from .exact import ExactData


class LinearSpectrum:
    """Eigen-decomposition of the centered linear Gram L = X_c X_cᵀ via the d×d matrix X_cᵀ X_c.

    Attributes
    ----------
    centered : ndarray, shape (N, d)
        X_c = X − mean, in backend arithmetic (exact integers rounded once on mp).
    values : ndarray, shape (N,)
        Descending eigenvalues of L: the r nonzero ones, then exact zeros.
    vectors : ndarray, shape (N, r)
        Orthonormal eigenvectors of the nonzero eigenvalues.
    """

    def __init__(self, X: np.ndarray, backend: Backend):
        b = self.backend = backend
        n = X.shape[0]
        tall = X.shape[1] <= n
        if not b.exact_input:
            centered = X - X.mean(axis=0)
            small_values, q = b.eigh(centered.T.dot(centered) if tall else centered.dot(centered.T))
        else:
            exact = ExactData.from_float64(X)
            scaled = exact.centered_integers  # N·X_c, exact
            centered = b.from_scaled_integers(scaled, exact.exp2) / n
            small_values, q = self._mp_small_eigensystem(scaled, exact.exp2, tall)
        self.centered = centered
        floor = n * b.eps * abs(small_values[0])
        rank = sum(1 for v in small_values if v > floor)
        self.rank = rank
        if not tall:  # more attributes than rows: the N×N Gram was the smaller problem
            self.vectors = q[:, :rank]
        elif not b.exact_input:
            self.vectors = centered.dot(q[:, :rank]) / b.sqrt(small_values[:rank])[None, :]
        else:
            self.vectors = self._mp_vectors(scaled, exact.exp2, q[:, :rank]) / b.sqrt(small_values[:rank])[None, :]
        self.values = np.concatenate([small_values[:rank], np.array([b.scalar(0)] * (n - rank), dtype=b.dtype)])

    def _mp_small_eigensystem(self, scaled: np.ndarray, exp2: int, tall: bool):
        """Eigenpairs (descending) of X_cᵀX_c (tall) or X_cX_cᵀ from the exact integer product, refined to dps."""
        b = self.backend
        n = scaled.shape[0]
        m = flint.fmpz_mat([[int(v) for v in row] for row in scaled])
        product = m.transpose() * m if tall else m * m.transpose()
        size = product.nrows()
        ints = np.array([int(v) for v in product.entries()], dtype=object).reshape(size, size)
        # X_cᵀX_c = product · 2**(2 exp2) / N²: exact integers, one rounding to mpf, then the division rounds once
        small = b.from_scaled_integers(ints, 2 * exp2) / (n * n)
        refined = refine_eigensystem(b.export(small), dps=b.dps, tier=1, k=size)
        return b.internal(refined.values), b.internal(refined.vectors)

    def _mp_vectors(self, scaled: np.ndarray, exp2: int, q: np.ndarray) -> np.ndarray:
        """X_c Q (N×r) as one exact integer product: X_c = scaled·2**exp2/N, Q in fixed point at working bits."""
        b = self.backend
        n = scaled.shape[0]
        q_ints, q_exp2 = fixed_point_integers(q, b.prec + 16)
        q_mat = flint.fmpz_mat(q.shape[0], q.shape[1], [int(v) for v in q_ints])
        m = flint.fmpz_mat([[int(v) for v in row] for row in scaled])
        ints = np.array([int(v) for v in (m * q_mat).entries()], dtype=object).reshape(n, q.shape[1])
        return b.from_scaled_integers(ints, exp2 + q_exp2) / n

    def gram(self) -> np.ndarray:
        """L = X_c X_cᵀ, shape (N, N)."""
        return self.centered.dot(self.centered.T)
