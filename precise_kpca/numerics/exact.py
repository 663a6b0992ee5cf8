"""Exact form of float64 data: X = M · 2**e with an integer matrix M.

Every float64 number is a dyadic rational, so the whole data matrix is an integer matrix times one power
of two. Squared distances are then exact integers (times 2**(2e)), computed with python-flint's
``fmpz_mat`` product; the mp backend rounds each once, at its working precision.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import flint
import numpy as np


@dataclass(frozen=True)
class ExactData:
    """Integer mantissas and the common binary exponent of a float64 data matrix.

    Attributes
    ----------
    mantissas : ndarray of object (Python int), shape (N, d)
    exp2 : int
        ``X == mantissas * 2**exp2`` exactly.
    """

    mantissas: np.ndarray
    exp2: int

    @classmethod
    def from_float64(cls, X: np.ndarray) -> "ExactData":
        ratios = [float(x).as_integer_ratio() for x in X.ravel()]
        # Denominators are powers of two; the largest fixes the common exponent.
        denominator = max(den for _, den in ratios)
        exp2 = -(denominator.bit_length() - 1)
        mantissas = np.array([num * (denominator // den) for num, den in ratios], dtype=object).reshape(X.shape)
        return cls(mantissas, exp2)

    @cached_property
    def squared_distance_integers(self) -> np.ndarray:
        """Integer matrix S, shape (N, N), with ``|x_i - x_j|² == S[i, j] * 2**(2*exp2)`` exactly."""
        return _squared_distances(self.mantissas, self.mantissas)

    @cached_property
    def centered_integers(self) -> np.ndarray:
        """Integer matrix Z, shape (N, d), with ``N·X_c == Z * 2**exp2`` exactly (X_c = X − 1·meanᵀ): N·M − 1·sᵀ,
        s the column sums of the mantissas M."""
        n = self.mantissas.shape[0]
        return n * self.mantissas - self.mantissas.sum(axis=0)[None, :]

    @cached_property
    def gram_integers(self) -> np.ndarray:
        """Integer matrix G, shape (N, N), with ``x_i · x_j == G[i, j] * 2**(2*exp2)`` exactly."""
        return _integer_product(self.mantissas, self.mantissas)


def cross_squared_distance_integers(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact squared distances between the rows of two float64 matrices.

    Returns
    -------
    S : ndarray of object (Python int), shape (len(A), len(B))
    exp2 : int
        ``|a_i - b_j|² == S[i, j] * 2**exp2`` exactly.
    """
    both = ExactData.from_float64(np.vstack([A, B]))
    ma, mb = both.mantissas[: len(A)], both.mantissas[len(A):]
    return _squared_distances(ma, mb), 2 * both.exp2


def _integer_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    product = flint.fmpz_mat(a.tolist()) * flint.fmpz_mat(b.tolist()).transpose()
    return np.array([int(v) for v in product.entries()], dtype=object).reshape(len(a), len(b))


def _squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na = (a * a).sum(axis=1)
    nb = (b * b).sum(axis=1)
    return na[:, None] + nb[None, :] - 2 * _integer_product(a, b)
