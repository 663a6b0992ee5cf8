"""The structured spectrum of L + E and the residual series, against full high-precision eigensystems."""
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


def _reference(p: int):
    ref = MPBackend(120)
    linear = LinearSpectrum(X, ref)
    mu = ref.internal(eigensystem(scaled_gaussian_gram(X, Fraction(2) ** p, ref, linear)).values)
    shifts = [mu[i] - linear.values[i] for i in range(linear.rank)]
    return ref, shifts, mu[linear.rank]


@pytest.mark.parametrize("p", [4, 12, 40])
@pytest.mark.parametrize("backend", [Float64Backend(), MPBackend(30)], ids=["float64", "mp30"])
def test_shifts_and_null_top_have_full_relative_accuracy(backend, p):
    ref, shifts, null_top = _reference(p)
    E = double_center(gaussian_residual(X, f"2**{p}", backend=backend)).deviation
    ps = PerturbedSpectrum(LinearSpectrum(X, MPBackend(90)), E, backend, k=2)
    assert ps.applicable
    for got, want in zip(ps.shifts, shifts):
        assert abs(ref.internal(backend.export(got)) - want) <= 64 * backend.eps * abs(want)
    assert abs(ref.internal(backend.export(ps.null_top)) - null_top) <= 64 * backend.eps * abs(null_top)


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
