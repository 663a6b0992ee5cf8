"""Explicit polynomial feature maps, verified exactly over Q against the kernel."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from precise_kpca.feature_maps import (
    polynomial_feature_dimension,
    polynomial_feature_exponents,
    polynomial_feature_map,
    polynomial_feature_weights,
    verify_polynomial_feature_map,
)

EPS = np.finfo(np.float64).eps
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=30, deadline=None)
@given(
    X=arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 4)), elements=finite),
    degree=st.integers(1, 4),
    gamma=st.sampled_from([1.0, 0.5, 0.1, 3.0]),
    coef0=st.sampled_from([0.0, 1.0, 0.3, 2.5]),
)
def test_feature_map_is_exact_over_Q(X, degree, gamma, coef0):
    assert verify_polynomial_feature_map(X, degree=degree, gamma=gamma, coef0=coef0)


def test_verification_detects_a_wrong_weight():
    X = np.random.default_rng(0).normal(size=(3, 2))
    assert verify_polynomial_feature_map(X, degree=2, gamma=1.0, coef0=1.0)
    # a different kernel must not verify: weights of (x·y + 1)² against (x·y + 2)²
    from fractions import Fraction

    exps, w = polynomial_feature_weights(2, 2, 1, 1)
    mono = lambda x: [math.prod(Fraction(float(x[k])) ** int(a[k]) for k in range(2)) for a in exps]
    x, y = X[0], X[1]
    lhs = sum(wi * a * b for wi, a, b in zip(w, mono(x), mono(y)))
    assert lhs != (Fraction(float(x @ y)) + 2) ** 2


@pytest.mark.parametrize("d, degree", [(1, 1), (2, 2), (3, 2), (5, 3), (4, 4)])
def test_dimension_and_exponents(d, degree):
    inhom = polynomial_feature_exponents(d, degree)
    hom = polynomial_feature_exponents(d, degree, homogeneous=True)
    assert len(inhom) == polynomial_feature_dimension(d, degree) == math.comb(d + degree, degree)
    assert len(hom) == polynomial_feature_dimension(d, degree, homogeneous=True) == math.comb(d + degree - 1, degree)
    assert len({tuple(r) for r in inhom}) == len(inhom) and (inhom.sum(axis=1) <= degree).all()
    assert (hom.sum(axis=1) == degree).all()


def test_matches_article_degree2_map_up_to_order():
    gamma, coef0 = 0.7, 1.3
    x = np.array([0.3, -1.2])
    x1, x2 = x
    article = np.array([gamma * x1**2, gamma * x2**2, np.sqrt(2) * gamma * x1 * x2,
                        np.sqrt(2 * coef0 * gamma) * x1, np.sqrt(2 * coef0 * gamma) * x2, coef0])
    ours = polynomial_feature_map(x[None, :], 2, gamma, coef0)[0]
    np.testing.assert_allclose(np.sort(ours), np.sort(article), rtol=8 * EPS, atol=0)


def test_float_map_agrees_with_kernel_to_rounding():
    X = np.random.default_rng(1).normal(size=(20, 4))
    for degree, gamma, coef0 in [(2, 1.0, 1.0), (3, 0.5, 2.0), (4, 0.25, 0.0)]:
        Phi = polynomial_feature_map(X, degree, gamma, coef0)
        F = Phi.shape[1]
        terms = np.abs(Phi) @ np.abs(Phi).T  # scale of the sum of |terms|
        err = np.abs(Phi @ Phi.T - (gamma * X @ X.T + coef0) ** degree)
        assert (err <= 4 * (F + degree + 2) * EPS * terms).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"degree": 0}, "degree must be an integer >= 1"),
        ({"degree": 2, "gamma": 0.0}, "gamma must be > 0"),
        ({"degree": 2, "coef0": -1.0}, "coef0 must be >= 0"),
        ({"degree": 2, "gamma": "abc"}, "must be real numbers"),
    ],
)
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        polynomial_feature_map(np.ones((2, 2)), **kwargs)


def test_input_errors():
    with pytest.raises(ValueError, match="must be 2-D"):
        polynomial_feature_map(np.ones(3), 2)
    with pytest.raises(ValueError, match=r"X\[1, 0\] = nan is not finite"):
        polynomial_feature_map(np.array([[1.0], [np.nan]]), 2)
    with pytest.raises(ValueError, match="equal columns"):
        verify_polynomial_feature_map(np.ones((2, 2)), np.ones((2, 3)), degree=2)
    with pytest.raises(ValueError, match="dimension d must be"):
        polynomial_feature_exponents(0, 2)
