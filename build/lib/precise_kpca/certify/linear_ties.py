"""Exactly repeated linear eigenvalues, proven in integer arithmetic.

A symmetry of the data (tic-tac-toe's board, a rotation-invariant sample) makes eigenvalues of the centered
linear Gram L = X_c X_cᵀ repeat *exactly*; the linear eigenvectors of a repeated eigenvalue are then any basis of
its eigenspace, and a measure that takes the top-k linear subspace with k inside such a run is undefined — no
precision can certify it. Numerically a tie only shows as a gap at the rounding level; this module proves it.

Method (rigorous): X is float64, hence X = 2^e·Z with Z integer; L's nonzero eigenvalues are those of
C = X_cᵀX_c = 2^(2e)/N · (N·ZᵀZ − s sᵀ), s the column sums of Z. The characteristic polynomial of that integer
d×d matrix is computed exactly (python-flint ``fmpz_mat.charpoly``) and its roots isolated with their exact
multiplicities (``fmpz_poly.complex_roots``: squarefree factorisation, then arb root isolation).
"""
from __future__ import annotations

import math

import flint
import numpy as np

from ..validation import check_data


def integer_covariance(X: np.ndarray) -> flint.fmpz_mat:
    """M = N·ZᵀZ − s sᵀ with X = 2^e·Z (Z integer): N·2^(−2e) times X_cᵀX_c, exactly.

    Parameters
    ----------
    X : array_like, shape (N, d)

    Returns
    -------
    flint.fmpz_mat, shape (d, d)
    """
    X = check_data(X)
    nonzero = X[X != 0]
    if nonzero.size == 0:
        return flint.fmpz_mat(X.shape[1], X.shape[1])
    # every float64 is m·2^q with |m| < 2^53; the smallest q over X makes all entries integers
    exponent = min(math.frexp(float(v))[1] - 53 for v in nonzero)
    Z = [[int(math.ldexp(float(v), -exponent)) if v else 0 for v in row] for row in X]
    Zm = flint.fmpz_mat(Z)
    sums = flint.fmpz_mat([[sum(row[j] for row in Z) for j in range(X.shape[1])]])
    return X.shape[0] * Zm.transpose() * Zm - sums.transpose() * sums


def tied_linear_eigenvalues(X: np.ndarray) -> list[tuple[int, int]]:
    """Runs [a, z) (0-based, eigenvalues descending) of nonzero linear eigenvalues that are exactly equal.

    Rigorous (see the module docstring): a run is reported only if the exact characteristic polynomial has a
    root of that multiplicity; eigenvalues not in a run are proven simple.

    Parameters
    ----------
    X : array_like, shape (N, d)

    Returns
    -------
    list of (a, z)
        Each with z − a ≥ 2, the multiplicity of the repeated eigenvalue λ_a = … = λ_(z−1).
    """
    M = integer_covariance(X)
    roots = [(root, multiplicity) for root, multiplicity in M.charpoly().complex_roots()
             if not root.contains(0)]
    # the polynomial is real with real roots (M symmetric): order by midpoint, largest first
    roots.sort(key=lambda item: float(item[0].real.mid()), reverse=True)
    runs, start = [], 0
    for _, multiplicity in roots:
        if multiplicity > 1:
            runs.append((start, start + multiplicity))
        start += multiplicity
    return runs
