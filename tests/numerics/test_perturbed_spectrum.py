"""The structured spectrum of L + E and the residual series, against full high-precision eigensystems."""
import math
from fractions import Fraction

import numpy as np
import pytest

from precise_kpca.backends import Float64Backend, MPBackend
from precise_kpca.measures.spectral import scaled_gaussian_gram
from precise_kpca.numerics import double_center, eigensystem, gaussian_residual
from precise_kpca.numerics.linear_spectrum import LinearSpectrum
from precise_kpca.numerics.perturbed_spectrum import PerturbedSpectrum
from precise_kpca.numerics.residual_series import ResidualSeries

X = np.random.default_rng(0).normal(size=(12, 3)) * np.array([1.0, 2.0, 4.0])


def _reference(p: int, data=X):
    """Full eigensystem at 120 digits: (backend, linear values, Gaussian eigenvalues μ, descending)."""
    ref = MPBackend(120)
    linear = LinearSpectrum(data, ref)
    mu = ref.internal(eigensystem(scaled_gaussian_gram(data, Fraction(2) ** p, ref, linear)).values)
    return ref, linear.values, mu


def _check_against_reference(ps, backend, p, data=X):
    ref, lam, mu = _reference(p, data)
    t = ps.rank
    for i, got in enumerate(ps.shifts):
        want = mu[i] - lam[i]
        assert abs(ref.internal(backend.export(got)) - want) <= 64 * backend.eps * abs(want), i
    assert len(ps.rest_values) == ps.linear.rank - t + 1
    for j, got in enumerate(ps.rest_values):
        want = mu[t + j]
        assert abs(ref.internal(backend.export(got)) - want) <= 64 * backend.eps * abs(want), t + j


@pytest.mark.parametrize("p", [4, 12, 40])
@pytest.mark.parametrize("backend", [Float64Backend(), MPBackend(30)], ids=["float64", "mp30"])
def test_shifts_and_rest_values_have_full_relative_accuracy(backend, p):
    E = double_center(gaussian_residual(X, f"2**{p}", backend=backend)).deviation
    ps = PerturbedSpectrum(LinearSpectrum(X, MPBackend(90)), E, backend, k=2)
    assert ps.applicable and ps.rank == 3
    _check_against_reference(ps, backend, p)


# the third attribute nearly a combination of the others: λ_3/λ_1 ~ 1e-14, E-sized long before σ = 2^40
NEAR_COLLINEAR = np.column_stack([X[:, 0], X[:, 1], X[:, 0] + 2 * X[:, 1] + 1e-6 * X[:, 2]])


@pytest.mark.parametrize("p", [6, 12])
@pytest.mark.parametrize("backend", [Float64Backend(), MPBackend(30)], ids=["float64", "mp30"])
def test_small_linear_eigenvalues_join_the_rest_block(backend, p):
    """λ_3 below ‖E‖: the top block is λ_1, λ_2 and the rest block pairs λ_3 and a zero with A's 3rd and 4th
    eigenvalues; all to full relative accuracy against the full eigensystem."""
    E = double_center(gaussian_residual(NEAR_COLLINEAR, f"2**{p}", backend=backend)).deviation
    ps = PerturbedSpectrum(LinearSpectrum(NEAR_COLLINEAR, MPBackend(90)), E, backend, k=2)
    assert ps.applicable and ps.rank == 2 and len(ps.rest_lam) == 1
    _check_against_reference(ps, backend, p, NEAR_COLLINEAR)


def test_not_applicable_when_the_perturbation_is_large():
    b = Float64Backend()
    E = double_center(gaussian_residual(X, "2**-2", backend=b)).deviation
    assert not PerturbedSpectrum(LinearSpectrum(X, MPBackend(40)), E, b, k=1).applicable


@pytest.mark.parametrize("p", [3, 20, 60])
def test_series_operator_equals_the_dense_residual(p):
    b = MPBackend(40)
    series = ResidualSeries(X, b)
    op = series.operator(Fraction(2) ** p)
    E = double_center(gaussian_residual(X, f"2**{p}", backend=b)).deviation
    V = b.internal(np.random.default_rng(1).normal(size=(12, 3)))
    got, want = op.dot(V), E.dot(V)
    scale = max(abs(w) for w in want.ravel())
    assert max(abs(g - w) for g, w in zip(got.ravel(), want.ravel())) <= 64 * b.eps * scale
    dense_norm = b.to_float(b.sqrt((E * E).sum()))
    assert abs(op.frobenius - dense_norm) <= 1e-12 * dense_norm  # a float estimate, documented as such
    assert np.allclose(op.to_float64(), np.vectorize(b.to_float)(E), rtol=4 * 2.0**-52, atol=0)


def test_series_refuses_small_bandwidths():
    with pytest.raises(ValueError, match="the series does not apply"):
        ResidualSeries(X, MPBackend(30)).operator(Fraction(1, 4))


@pytest.mark.parametrize("name", ["eigenvalue", "eigenprojection", "pc"])
def test_measures_with_a_split_linear_spectrum_match_a_full_eigensolver(name):
    """The structured path with λ_3 in the rest block (it applies at σ = 2^12 only because of the split) against
    a full eigensystem at twice the digits: the certified digits hold."""
    from precise_kpca.measures.certified import evaluate, measure
    from precise_kpca.measures.measurement import agreeing_digits

    sigma = Fraction(2) ** 12
    _, _, path = evaluate(NEAR_COLLINEAR, name, sigma, Float64Backend(), k=2)
    assert path == "structured"
    m = measure(NEAR_COLLINEAR, name, sigma, k=2, digits=10)
    assert m.certified_digits >= 10, m.method
    ref = MPBackend(2 * m.dps + 20)
    want, _, _ = evaluate(NEAR_COLLINEAR, name, sigma, ref, k=2, eigensolver_only=True)
    assert agreeing_digits(m.value, ref.export(want)) >= m.certified_digits


def _quarter_turns(points):
    """The orbit of ``points`` under the quarter turn (x, y, z) ↦ (−y, x, z): exact in float64, and the data
    set is invariant, so λ_2 = λ_3 exactly (in-plane isotropy) and the Gaussian Gram keeps the tie."""
    turns = [points]
    for _ in range(3):
        last = turns[-1]
        turns.append(np.column_stack([-last[:, 1], last[:, 0], last[:, 2]]))
    return np.vstack(turns)


SYMMETRIC = _quarter_turns(np.random.default_rng(2).normal(size=(4, 3)) * np.array([1.0, 1.5, 5.0]))
# the tie broken by a relative 1e-7: a cluster while ‖E‖ is larger than the gap, singletons beyond
NEAR_TIE = SYMMETRIC * np.array([1.0, 1.0 + 1e-7, 1.0])


@pytest.mark.parametrize("p", [4, 12, 40])
@pytest.mark.parametrize("backend", [Float64Backend(), MPBackend(30)], ids=["float64", "mp30"])
def test_exactly_tied_linear_eigenvalues_are_solved_as_a_cluster(backend, p):
    E = double_center(gaussian_residual(SYMMETRIC, f"2**{p}", backend=backend)).deviation
    ps = PerturbedSpectrum(LinearSpectrum(SYMMETRIC, MPBackend(90)), E, backend, k=3)
    assert ps.applicable and ps.rank == 3 and ps.clusters == [(0, 1), (1, 3)]
    _check_against_reference(ps, backend, p, SYMMETRIC)


@pytest.mark.parametrize("p, clustered", [(4, True), (12, True), (40, False)])
def test_nearly_tied_linear_eigenvalues(p, clustered):
    backend = MPBackend(30)
    E = double_center(gaussian_residual(NEAR_TIE, f"2**{p}", backend=backend)).deviation
    ps = PerturbedSpectrum(LinearSpectrum(NEAR_TIE, MPBackend(90)), E, backend, k=3)
    assert ps.applicable and ((1, 3) in ps.clusters) == clustered
    _check_against_reference(ps, backend, p, NEAR_TIE)


@pytest.mark.parametrize("p", [6, 30])
def test_eigenprojection_over_a_tied_pair_matches_a_full_eigensolver(p):
    """Algorithm 1's group [1, 3) spans the tied pair: the structured value carries its certified digits
    (checked against a full eigensystem at twice the digits)."""
    from precise_kpca.measures.certified import evaluate, measure
    from precise_kpca.measures.measurement import agreeing_digits

    sigma = Fraction(2) ** p
    _, _, path = evaluate(SYMMETRIC, "eigenprojection", sigma, Float64Backend(), k=3)
    assert path == "structured"
    m = measure(SYMMETRIC, "eigenprojection", sigma, k=3, digits=10)
    assert m.certified_digits >= 10, m.method
    ref = MPBackend(2 * m.dps + 20 + 2 * p)
    want, _, _ = evaluate(SYMMETRIC, "eigenprojection", sigma, ref, k=3, eigensolver_only=True)
    assert agreeing_digits(m.value, ref.export(want)) >= m.certified_digits


@pytest.mark.parametrize("name", ["eigenprojection", "pc"])
def test_angles_to_an_arbitrary_linear_eigenvector_are_refused(name):
    """k = 2 cuts the tied pair: w_2 is any unit vector of a plane. Both evaluations share the linear basis, so
    they would agree on an arbitrary angle; the measure must say it is not determined instead."""
    from precise_kpca.measures.certified import measure

    with pytest.warns(RuntimeWarning, match="not determined"):
        m = measure(SYMMETRIC, name, Fraction(2) ** 10, k=2, digits=10)
    assert m.certified_digits == 0 and m.guarantee == "none" and math.isnan(m.value)
    assert "are equal" in m.reason and "characteristic polynomial" in m.reason  # the tie is proven, not guessed
