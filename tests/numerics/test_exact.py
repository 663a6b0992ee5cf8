"""numerics/exact: the integer forms of X against exact rational arithmetic (Fractions)."""
from fractions import Fraction

import numpy as np
from hypothesis import given, settings

from precise_kpca.numerics.exact import ExactData

from ..strategies import data_sets, hard_data_sets


@settings(max_examples=60, deadline=None)
@given(data_sets())
def test_centered_integers_are_n_times_the_centered_data(X):
    """Z·2^e = N·X_c entrywise, exactly (X_c = X − its column means, in Fractions)."""
    exact = ExactData.from_float64(X)
    n, d = X.shape
    F = [[Fraction(float(v)) for v in row] for row in X]
    means = [sum(row[j] for row in F) / n for j in range(d)]
    unit = Fraction(2) ** exact.exp2
    for i in range(n):
        for j in range(d):
            assert Fraction(int(exact.centered_integers[i, j])) * unit == n * (F[i][j] - means[j])


@settings(max_examples=40, deadline=None)
@given(hard_data_sets())
def test_mantissas_and_squared_distances_are_exact(X):
    exact = ExactData.from_float64(X)
    unit = Fraction(2) ** exact.exp2
    F = [[Fraction(float(v)) for v in row] for row in X]
    assert all(Fraction(int(m)) * unit == f for mrow, frow in zip(exact.mantissas, F) for m, f in zip(mrow, frow))
    i, j = 0, len(F) - 1
    assert Fraction(int(exact.squared_distance_integers[i, j])) * unit * unit == sum((a - b) ** 2 for a, b in
                                                                                     zip(F[i], F[j]))
    assert np.array_equal(exact.squared_distance_integers, exact.squared_distance_integers.T)
