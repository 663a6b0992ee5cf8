"""PreciseKernelPCA: equals scikit-learn's KernelPCA where float64 is valid, stays right where it is not."""
from __future__ import annotations

import pickle
import warnings

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.decomposition import KernelPCA
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator

from precise_kpca.datasets import load
from precise_kpca.estimator import PreciseKernelPCA, auto_dps, error_bounds
from precise_kpca.measures.measurement import exact_mpf
from precise_kpca.numerics import geometry

from .neighbours_reference import hkh_eigenvalues

RANDOM = np.random.default_rng(4).normal(size=(40, 4)) * [1.0, 3.0, 0.5, 2.0]


def _sklearn(X, estimator):
    gamma = 1 / (2 * estimator.sigma_x_**2)
    return KernelPCA(estimator.n_components, kernel="rbf", gamma=gamma, eigen_solver="dense").fit(X)


def _same_up_to_sign(A, B, rtol):
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A, B * signs, rtol=rtol, atol=rtol * np.abs(B).max())


@pytest.mark.parametrize("X, sigma, n_components", [
    (load("wine"), 1, 3), (load("wine"), 0.25, 5), (RANDOM, 2, 3), (RANDOM, "2**6", 4), (RANDOM, 0.5, 10),
])
def test_matches_sklearn_where_float64_is_valid(X, sigma, n_components):
    train, test = X[::2], X[1::2]
    ours = PreciseKernelPCA(n_components, sigma=sigma).fit(train)
    assert ours.backend_ == "float64"
    assert ours.sigma_x_ == pytest.approx(float(sigma if not isinstance(sigma, str) else 64)
                                          * geometry(train).median_distance, rel=1e-15)
    theirs = _sklearn(train, ours)
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-9)
    _same_up_to_sign(ours.eigenvectors_, theirs.eigenvectors_, rtol=1e-7)
    _same_up_to_sign(ours.transform(test), theirs.transform(test), rtol=1e-7)
    _same_up_to_sign(ours.fit_transform(train), theirs.transform(train), rtol=1e-7)
    alphas = ours.alphas_
    np.testing.assert_allclose(ours.eigenvalues_ * np.sum(alphas * alphas, axis=0), 1.0, rtol=1e-12)  # λ α·α = 1


def test_meaningful_at_sigma_2_30_where_sklearn_fails():
    X = RANDOM[:20]
    auto = PreciseKernelPCA(3, sigma="2**30").fit(X)
    reference = PreciseKernelPCA(3, sigma="2**30", backend="mp", dps=40).fit(X)
    assert auto.backend_ == "float64" and reference.backend_ == "mp"
    np.testing.assert_allclose(auto.eigenvalues_, reference.eigenvalues_, rtol=1e-9)
    test = RANDOM[20:]
    _same_up_to_sign(auto.transform(test), reference.transform(test), rtol=1e-8)
    # Theorem 3: σ_X-scaled components approach linear PCA's; at σ = 2**30 they agree to ~(ρ/σ)² ≈ 1e-17
    centered = test - X.mean(axis=0)
    _, _, vt = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    _same_up_to_sign(auto.sigma_x_ * auto.transform(test), centered @ vt[:3].T, rtol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns about its all-zero spectrum
        theirs = _sklearn(X, auto)
    assert np.max(np.abs(theirs.eigenvalues_ / reference.eigenvalues_ - 1)) > 0.5  # its exp(−u) rounded to 1


def test_auto_goes_to_mp_beyond_the_linear_rank_and_beyond_the_float_range():
    X = RANDOM[:12, :3]
    beyond_rank = PreciseKernelPCA(4, sigma="2**20").fit(X)  # λ₄/λ₁ ~ σ⁻²: lost in float64
    assert beyond_rank.backend_ == "mp" and beyond_rank.dps_ == auto_dps(2**20, 12)
    check = PreciseKernelPCA(4, sigma="2**20", backend="mp", dps=2 * beyond_rank.dps_).fit(X)
    np.testing.assert_allclose(beyond_rank.eigenvalues_, check.eigenvalues_, rtol=1e-12)
    _same_up_to_sign(beyond_rank.transform(RANDOM[12:20, :3]), check.transform(RANDOM[12:20, :3]), rtol=1e-10)
    float64_only = PreciseKernelPCA(4, sigma="2**20", backend="float64", enclose=False).fit(X)
    assert abs(float64_only.eigenvalues_[3] / check.eigenvalues_[3] - 1) > 1e-6  # what auto avoided
    assert float64_only.eigenvalues_guarantee_ == "none" and np.isnan(float64_only.eigenvalues_lower_).all()
    # enclosed, the float64 backend's λ₄ is replaced by the enclosure's midpoint: right, and proven so
    enclosed = PreciseKernelPCA(4, sigma="2**20", backend="float64").fit(X)
    assert enclosed.eigenvalues_guarantee_ == "rigorous"
    assert abs(enclosed.eigenvalues_[3] / check.eigenvalues_[3] - 1) < 1e-7
    huge = PreciseKernelPCA(2, sigma="2**600").fit(X)  # σ_X² overflows float64
    assert huge.backend_ == "mp"
    Z = huge.transform(RANDOM[12:14, :3])
    assert np.all(np.isfinite(Z)) and 0 < np.abs(Z).max() < 1e-170


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), log2_sigma=st.integers(-4, 40), n_components=st.integers(1, 3),
       backend=st.sampled_from(["auto", "float64", "mp"]))
def test_rigorous_eigenvalues_contain_an_independent_reference(seed, log2_sigma, n_components, backend):
    """mpmath.eigsy of H K H built from exp(−u) at twice the enclosures' digits (tests/neighbours_reference.py)."""
    X = np.random.default_rng(seed).normal(size=(9, 3)) * [1.0, 3.0, 0.5]
    fitted = PreciseKernelPCA(n_components, sigma=f"2**{log2_sigma}", backend=backend).fit(X)
    assert fitted.eigenvalues_guarantee_ == "rigorous"
    reference = hkh_eigenvalues(X, Fraction(2) ** log2_sigma, n_components, dps=45 + max(log2_sigma, 0))
    for lower, value, upper, exact in zip(fitted.eigenvalues_lower_, fitted.eigenvalues_, fitted.eigenvalues_upper_,
                                          reference):
        assert exact_mpf(lower) <= exact_mpf(exact) <= exact_mpf(upper)
        assert lower <= value <= upper
        assert (upper - lower) <= 1e-12 * upper  # the top d eigenvalues are enclosed to ~16 digits


def test_eigenvalue_guarantee_without_enclosure():
    X = RANDOM[:12, :3]
    assert PreciseKernelPCA(2, sigma=1, enclose=False).fit(X).eigenvalues_guarantee_ == "heuristic"  # auto's check
    assert PreciseKernelPCA(2, sigma=1, backend="mp", dps=30, enclose=False).fit(X).eigenvalues_guarantee_ == "none"
    fitted = PreciseKernelPCA(2, sigma=1, backend="float64", enclose=False).fit(X)
    assert fitted.eigenvalues_guarantee_ == "none" and np.isnan(fitted.eigenvalues_upper_).all()
    assert fitted.eigenvalues_.shape == fitted.eigenvalues_lower_.shape == (2,)


def test_dps_rule_and_error_bounds():
    assert auto_dps(1, 10) == 14 and auto_dps(2**20, 100) == 15 + 25
    assert auto_dps(0.25, 10) == 14  # no extra digits below σ = 1
    bounds = error_bounds(np.array([1.0, 0.5, 0.5 - 1e-9, 1e-20]), 3, eps=2.0**-52)
    assert bounds[0] == pytest.approx(4 * 2.0**-52 / 0.5) and bounds[1] > 1e-8 and bounds[2] > 1e-8


def test_parameters_and_inputs_are_validated():
    X = RANDOM[:10]
    for params, match in [(dict(n_components=0), "n_components"), (dict(n_components=10), r"\[1, 9\]"),
                          (dict(backend="arb"), "backend"), (dict(dps=30), "dps applies"),
                          (dict(sigma=-1), "sigma"), (dict(sigma="wide"), "sigma")]:
        options = dict(dict(n_components=2, sigma=1), **params)
        with pytest.raises(ValueError, match=match):
            PreciseKernelPCA(**options).fit(X)
    with pytest.raises(NotFittedError):
        PreciseKernelPCA(2, sigma=1).transform(X)
    fitted = PreciseKernelPCA(2, sigma=1).fit(X)
    with pytest.raises(ValueError, match="features"):
        fitted.transform(X[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        PreciseKernelPCA(2, sigma=1).fit(np.where(X > 2, np.nan, X))


def test_sklearn_conventions_pickle_clone_and_pipeline():
    check_estimator(PreciseKernelPCA(2, sigma=1))
    fitted = PreciseKernelPCA(2, sigma="2**40", backend="mp", dps=30).fit(RANDOM[:8])
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.transform(RANDOM[8:12]), fitted.transform(RANDOM[8:12]))
    assert clone(fitted).get_params() == fitted.get_params()
    pipeline = make_pipeline(PreciseKernelPCA(2, sigma=1)).fit(RANDOM)
    assert list(pipeline.get_feature_names_out()) == ["precisekernelpca0", "precisekernelpca1"]
