"""Linear ties (asymptotics/repeated): first-order splitting against exact rational arithmetic, and the
determined eigenprojection onto a whole tied eigenspace."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from precise_kpca import measure
from precise_kpca.asymptotics.repeated import cross_family, tie_splitting
from precise_kpca.asymptotics.symmetry import square_orbits
from precise_kpca.numerics.exact import ExactData


def _exact_shifts(X: np.ndarray) -> list[float]:
    """Eigenvalues of W_Jᵀ E₁ W_J in S-units, E₁ = H D∘D H / 8, from Fractions (sympy for the 2×2 roots).

    For these data the tie is the whole range of L, spanned by the columns of X_c (orthogonal, equal norms),
    so W_J = X_c/‖x_c‖ and the compression is X_cᵀ E₁ X_c/‖x_c‖², a rational 2×2 matrix."""
    n = X.shape[0]
    rows = [[Fraction(float(v)) for v in row] for row in X]
    mean = [sum(r[j] for r in rows) / n for j in range(2)]
    xc = [[r[j] - mean[j] for j in range(2)] for r in rows]
    D = [[sum((a - b) ** 2 for a, b in zip(p, q)) for q in rows] for p in rows]
    Q = [[v * v for v in row] for row in D]
    rs = [sum(row) / n for row in Q]
    total = sum(rs) / n
    E = [[(Q[i][j] - rs[i] - rs[j] + total) / 8 for j in range(n)] for i in range(n)]
    norm2 = sum(r[0] ** 2 for r in xc)
    C = sp.Matrix(2, 2, lambda a, b: sp.Rational(sum(xc[i][a] * E[i][j] * xc[j][b] for i in range(n) for j in range(n))
                                                 / norm2))
    exact = ExactData.from_float64(X)
    unit = sp.Rational(n * n) * sp.Rational(2) ** (-2 * exact.exp2)
    return sorted((float(v * unit) for v in C.eigenvals(multiple=True)), reverse=True)


def test_cross_splitting_matches_exact_and_gaussian():
    X = cross_family()
    result = tie_splitting(X, (0, 2), Fraction(2) ** 16)
    for (lo, hi), exact, (g_lo, g_hi) in zip(result.shifts, _exact_shifts(X), result.scaled):
        assert lo <= exact <= hi
        assert abs((g_lo + g_hi) / 2 - exact) <= 2.0**-24 * abs(exact)  # O(ε²) at σ = 2^16, ε² ≈ 2^-32 / d_X²
    assert result.relative_spread() > 0.1  # an accidental tie splits at first order


def test_symmetric_tie_does_not_split():
    X = square_orbits([(3, 1), (2, 0)])
    result = tie_splitting(X, (0, 2), Fraction(2) ** 12)
    assert result.relative_spread() == 0
    assert result.scaled[0] == result.scaled[1]


def test_not_a_tie_rejected():
    with pytest.raises(ValueError, match="not an exact tie"):
        tie_splitting(cross_family(), (0, 1), Fraction(2) ** 12)


@pytest.mark.parametrize("log2_sigma", [0, 6, 24])
def test_whole_tie_eigenprojection_is_determined(log2_sigma):
    """k at the tie's end is rigorous; k inside it is NaN (the linear basis inside the tie is arbitrary)."""
    X = square_orbits([(3, 1), (2, 0), (5, 5)])
    whole = measure(X, "eigenprojection", Fraction(2) ** log2_sigma, k=2, digits=6)
    with pytest.warns(RuntimeWarning, match="not determined"):
        inside = measure(X, "eigenprojection", Fraction(2) ** log2_sigma, k=1, digits=6)
    assert whole.guarantee == "rigorous" and whole.certified_digits >= 6 and whole.lower <= whole.upper
    assert math.isnan(inside.value)
