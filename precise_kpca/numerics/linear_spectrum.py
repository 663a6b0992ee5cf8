"""Eigen-decomposition of the centered linear Gram L = H X Xᵀ H through the d×d matrix X_cᵀ X_c
(or L itself when d > N), in a backend's arithmetic.

L = X_c X_cᵀ has rank r ≤ d; its nonzero eigenvalues are those of X_cᵀ X_c (d×d) and its eigenvectors are
W = X_c Q Λ^{−1/2}. The other N − r eigenvalues are exactly 0. With exact input (mp) everything comes from the data
set's exact integer form (:mod:`precise_kpca.numerics.linear_exact`: the exact rank, S's eigensystem refined from its
integers at the working precision, W by an exact integer product); on float64 from X − mean and a float64 ``eigh``,
the rank by a numeric floor.
"""
from __future__ import annotations

import numpy as np

from ..backends import Backend
from .linear_exact import exact_linear


class LinearSpectrum:
    """Eigen-decomposition of the centered linear Gram L = X_c X_cᵀ via the d×d matrix X_cᵀ X_c.

    Attributes
    ----------
    centered : ndarray, shape (N, d)
        X_c = X − mean, in backend arithmetic (exact integers rounded once on mp).
    rank : int
        rank(L): exact on exact input; on float64 the eigenvalues above N·eps·λ₁.
    values : ndarray, shape (N,)
        Descending eigenvalues of L: the r nonzero ones, then exact zeros.
    vectors : ndarray, shape (N, r)
        Orthonormal eigenvectors of the nonzero eigenvalues.
    """

    def __init__(self, X: np.ndarray, backend: Backend):
        b = self.backend = backend
        n = X.shape[0]
        if b.exact_input:
            exact = exact_linear(X)
            system = exact.eigensystem(b.dps)
            self.centered = b.from_scaled_integers(exact.z.to_int_array(), exact.exp2) / n
            self.rank = exact.rank
            nonzero, self.vectors = system.l_values(b), system.vectors(b)
        else:
            tall = X.shape[1] <= n
            centered = self.centered = X - X.mean(axis=0)
            small_values, q = b.eigh(centered.T.dot(centered) if tall else centered.dot(centered.T))
            floor = n * b.eps * abs(small_values[0])
            rank = self.rank = sum(1 for v in small_values if v > floor)
            nonzero = small_values[:rank]
            # wide: the N×N Gram was the smaller problem, its eigenvectors are L's
            self.vectors = centered.dot(q[:, :rank]) / b.sqrt(nonzero)[None, :] if tall else q[:, :rank]
        self.values = np.concatenate([nonzero, np.array([b.scalar(0)] * (n - self.rank), dtype=b.dtype)])

    def gram(self) -> np.ndarray:
        """L = X_c X_cᵀ, shape (N, N)."""
        return self.centered.dot(self.centered.T)
