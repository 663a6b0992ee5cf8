"""Explicit symbolic matrices for small N: symmetric Grams, centering, RKHS squared distances (Eq. 5)."""
from __future__ import annotations

from itertools import combinations
from typing import Callable

import sympy as sp

Centering = Callable[[sp.Matrix], sp.Matrix]


def centering_matrix(size: int) -> sp.Matrix:
    """H = I - 11^T / N with exact rational entries."""
    return sp.eye(size) - sp.ones(size, size) / size


def symmetric_gram(size: int, name: str = "k") -> sp.Matrix:
    """Fully symbolic symmetric N x N matrix with entries ``k_ab`` (a <= b)."""
    return sp.Matrix(size, size, lambda a, b: sp.Symbol(f"{name}_{min(a, b)}{max(a, b)}"))


def double_centering(K: sp.Matrix) -> sp.Matrix:
    """H K H (the paper's double centering)."""
    H = centering_matrix(K.rows)
    return H * K * H


def row_centering(K: sp.Matrix) -> sp.Matrix:
    """K H: subtracts each row's mean (single centering)."""
    return K * centering_matrix(K.rows)


def column_centering(K: sp.Matrix) -> sp.Matrix:
    """H K: subtracts each column's mean (single centering)."""
    return centering_matrix(K.rows) * K


def sq_distance(K: sp.Matrix, a: int, b: int) -> sp.Expr:
    """Eq. 5: K_aa + K_bb - 2 K_ab (the RKHS squared distance when K is a symmetric Gram)."""
    return K[a, a] + K[b, b] - 2 * K[a, b]


def distance_defects(K: sp.Matrix, center: Centering) -> dict[tuple[int, int], sp.Expr]:
    """Nonzero differences of Eq. 5 distances between ``center(K)`` and K, keyed by pair."""
    A = center(K)
    defects = {}
    for a, b in combinations(range(K.rows), 2):
        diff = sp.expand(sq_distance(A, a, b) - sq_distance(K, a, b))
        if diff != 0:
            defects[(a, b)] = diff
    return defects
