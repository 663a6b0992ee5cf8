"""Eigen-decomposition of the centered linear Gram L = H X Xᵀ H through the d×d matrix X_cᵀ X_c
(or L itself when d > N).

L = X_c X_cᵀ has rank r ≤ d; its nonzero eigenvalues are those of X_cᵀ X_c (d×d) and its eigenvectors are
W = X_c Q Λ^{−1/2}. The other N − r eigenvalues are exactly 0. On the mp backend X_c comes from the exact
integer form of X (N·X_c has integer mantissas), so only the d×d eigenproblem rounds.
"""
from __future__ import annotations

import numpy as np

from ..backends import Backend, Float64Backend
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
        if isinstance(b, Float64Backend):
            centered = X - X.mean(axis=0)
        else:
            exact = ExactData.from_float64(X)
            scaled = n * exact.mantissas - exact.mantissas.sum(axis=0)[None, :]  # N·X_c, exact
            centered = b.from_scaled_integers(scaled, exact.exp2) / n
        self.centered = centered
        if X.shape[1] <= n:
            small_values, q = b.eigh(centered.T.dot(centered))
        else:  # more attributes than rows: the N×N Gram is the smaller problem
            small_values, q = b.eigh(centered.dot(centered.T))
        floor = n * b.eps * abs(small_values[0])
        rank = sum(1 for v in small_values if v > floor)
        self.rank = rank
        if X.shape[1] <= n:
            self.vectors = centered.dot(q[:, :rank]) / b.sqrt(small_values[:rank])[None, :]
        else:
            self.vectors = q[:, :rank]
        self.values = np.concatenate([small_values[:rank], np.array([b.scalar(0)] * (n - rank), dtype=b.dtype)])

    def gram(self) -> np.ndarray:
        """L = X_c X_cᵀ, shape (N, N)."""
        return self.centered.dot(self.centered.T)
