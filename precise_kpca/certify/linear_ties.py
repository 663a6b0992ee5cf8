"""Exactly repeated linear eigenvalues, proven in integer arithmetic.

A symmetry of the data (tic-tac-toe's board, a rotation-invariant sample) makes eigenvalues of the centered
linear Gram L = X_c X_cᵀ repeat *exactly*; the linear eigenvectors of a repeated eigenvalue are then any basis of
its eigenspace, and a measure that takes the top-k linear subspace with k inside such a run is undefined — no
precision can certify it. Numerically a tie only shows as a gap at the rounding level; this module proves it.

Method (rigorous): X is float64, hence X = 2^e·M with M integer, and Z = N·M − 1·sᵀ (s the column sums of M) gives
X_c = Z·2^e/N; L's nonzero eigenvalues are, up to the factor 2^(2e)/N², those of the integer S = ZᵀZ (or Z Zᵀ,
whichever is smaller; :class:`~precise_kpca.numerics.linear_exact.ExactLinear`). The characteristic polynomial of S
is computed exactly (python-flint ``fmpz_mat.charpoly``) and its roots isolated with their exact multiplicities
(``fmpz_poly.complex_roots``: squarefree factorisation, then arb root isolation); the count of nonzero roots is
checked against rank(S). The computation is the linear enclosure's (one per data set, kept by its DataState).
"""
from __future__ import annotations

import numpy as np

from ..numerics.linear_exact import exact_linear
from ..validation import check_data
from .linear_enclosure import tied_linear_eigenvalues_cached


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
    return list(tied_linear_eigenvalues_cached(exact_linear(check_data(X))))
