"""Exact linear eigenvalue ties: the integer covariance is exact, and ties are found iff they exist."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings

from precise_kpca.numerics.linear_exact import exact_linear
from precise_kpca.certify.linear_ties import tied_linear_eigenvalues

from ..strategies import data_sets
from ..numerics.test_perturbed_spectrum import NEAR_TIE, SYMMETRIC, X


@settings(max_examples=40, deadline=None)
@given(data_sets())
def test_the_integer_form_is_a_power_of_two_times_n_squared_times_the_centered_gram(data):
    """S / (N²·X_cᵀX_c) (tall) or S / (N²·X_c X_cᵀ) (wide) is one power of two for every entry (Fractions: no
    rounding anywhere), so S's characteristic polynomial has L's nonzero eigenvalues' multiplicities."""
    exact = exact_linear(np.ascontiguousarray(data, dtype=np.float64))
    n, d = data.shape
    F = [[Fraction(v) for v in row] for row in data]
    mean = [sum(row[j] for row in F) / n for j in range(d)]
    C = [[row[j] - mean[j] for j in range(d)] for row in F]
    pairs = ([(sum(row[i] * row[j] for row in C), i, j) for i in range(d) for j in range(d)] if exact.tall else
             [(sum(a * b for a, b in zip(C[i], C[j])), i, j) for i in range(n) for j in range(n)])
    ratios = set()
    for value, i, j in pairs:
        got = Fraction(int(exact.small[i, j]))
        assert (value == 0) == (got == 0)
        if value:
            ratios.add(got / (n * n * value))
    assert len(ratios) <= 1
    if ratios:
        ratio = ratios.pop()
        assert ratio > 0 and (ratio.numerator & (ratio.numerator - 1)) == 0 and ratio.denominator & (ratio.denominator - 1) == 0


def test_a_rotation_invariant_sample_has_an_exact_double_eigenvalue():
    assert tied_linear_eigenvalues(SYMMETRIC) == [(1, 3)]


def test_a_tie_broken_by_one_part_in_ten_million_is_not_a_tie():
    assert tied_linear_eigenvalues(NEAR_TIE) == [] and tied_linear_eigenvalues(X) == []


def test_a_cyclic_symmetry_gives_a_double_eigenvalue_and_a_zero_is_ignored():
    """Points and their cyclic coordinate shifts: the covariance commutes with the shift, so the plane ⊥ (1,1,1)
    is one double eigenvalue; a zero column adds a zero eigenvalue that is not reported."""
    base = np.random.default_rng(3).normal(size=(5, 3))
    data = np.vstack([np.roll(base, s, axis=1) for s in range(3)])
    assert tied_linear_eigenvalues(data) in ([(0, 2)], [(1, 3)])
    assert tied_linear_eigenvalues(np.column_stack([data, np.zeros(len(data))])) in ([(0, 2)], [(1, 3)])


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        tied_linear_eigenvalues(np.array([[1.0, np.nan], [0.0, 1.0], [2.0, 3.0]]))


def _tied_boards():
    """12 one-hot boards of 3 cells × 3 states, closed under the cells' permutations: λ₁ = λ₂, λ₃ = λ₄ exactly."""
    import itertools

    boards = [b for b in itertools.product(range(3), repeat=3) if sorted(b) in ([0, 1, 2], [0, 0, 1], [1, 1, 2])]
    return np.array([[float(b[c] == s) for c in range(3) for s in range(3)] for b in boards])


@pytest.mark.parametrize("bits", [256, 512, 768])
def test_the_linear_enclosure_reaches_its_grid_across_exact_ties(bits):
    """The eigen-refinement stalls inside exact ties (radius 3e-77 at 512 bits, 8e-31 at 768, before the eigsy
    fallback); the radius must be within 2^24 grid units of λ₁·2^-bits, so σ = 2^200 keeps its digits. The
    eigenvalues are checked against mpmath.eigsy of the exact integer S at twice the bits."""
    import mpmath

    from precise_kpca.certify.linear_enclosure import linear_enclosure

    lin = linear_enclosure(_tied_boards(), bits)
    assert lin.radius <= abs(lin.values[0]) * Fraction(2) ** (24 - bits)
    ctx = mpmath.MPContext()
    ctx.prec = 2 * bits + 64
    small = lin.exact.small
    exact = sorted(ctx.eigsy(ctx.matrix([[int(small[i, j]) for j in range(small.ncols())]
                                         for i in range(small.nrows())]))[0], reverse=True)
    for i in range(lin.rank):
        assert ctx.mpf(lin.lower(i).numerator) / lin.lower(i).denominator <= exact[i]
        assert exact[i] <= ctx.mpf(lin.upper(i).numerator) / lin.upper(i).denominator
