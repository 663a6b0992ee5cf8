"""PreciseKernelPCA: equals scikit-learn's KernelPCA where float64 is valid, stays right where it is not."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import mpmath
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
from precise_kpca.estimator import CONDITION_TOL, PreciseKernelPCA, auto_dps, error_bounds
from precise_kpca.measures.measurement import exact_mpf
from precise_kpca.numerics import double_center, gaussian_gram, geometry

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
    enclosed = PreciseKernelPCA(4, sigma="2**20", backend="float64", enclose=True).fit(X)
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
    fitted = PreciseKernelPCA(n_components, sigma=f"2**{log2_sigma}", backend=backend, enclose=True).fit(X)
    assert fitted.eigenvalues_guarantee_ == "rigorous"
    reference = hkh_eigenvalues(X, Fraction(2) ** log2_sigma, n_components, dps=45 + max(log2_sigma, 0))
    for lower, value, upper, exact in zip(fitted.eigenvalues_lower_, fitted.eigenvalues_, fitted.eigenvalues_upper_,
                                          reference):
        assert exact_mpf(lower) <= exact_mpf(exact) <= exact_mpf(upper)
        assert lower <= value <= upper
        assert (upper - lower) <= 1e-12 * upper  # the top d eigenvalues are enclosed to ~16 digits


def test_eigenvalue_guarantee_without_enclosure():
    X = RANDOM[:12, :3]
    assert PreciseKernelPCA(2, sigma=1).fit(X).eigenvalues_guarantee_ == "heuristic"  # the default: no enclosure
    assert PreciseKernelPCA(2, sigma=1, enclose=False).fit(X).eigenvalues_guarantee_ == "heuristic"  # auto's check
    assert PreciseKernelPCA(2, sigma=1, backend="mp", dps=30, enclose=False).fit(X).eigenvalues_guarantee_ == "none"
    fitted = PreciseKernelPCA(2, sigma=1, backend="float64", enclose=False).fit(X)
    assert fitted.eigenvalues_guarantee_ == "none" and np.isnan(fitted.eigenvalues_upper_).all()
    assert fitted.eigenvalues_.shape == fitted.eigenvalues_lower_.shape == (2,)


def test_dps_rule_and_error_bounds():
    assert auto_dps(1, 100) == 15 and auto_dps(2**20, 100) == 15 + 25
    assert auto_dps(0.25, 100) == 15  # no extra digits below σ = 1
    assert auto_dps(1, 10) == 15  # 14 by the formula: the mp backend's floor of 15 digits
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


# --- a scikit-learn citizen (issue 21) -------------------------------------------------------------------------

def _mp_reference_spectrum(X, gamma, dps=40, *, floats=True):
    """Eigenvalues (descending) of H K H, K = exp(−γ|x − y|²), by mpmath.eigsy at ``dps`` from the exact data
    (floats, or the mpf values)."""
    ctx = mpmath.MPContext()
    ctx.dps = dps
    rows = [[Fraction(float(v)) for v in row] for row in X]
    g = Fraction(gamma)
    n = len(rows)
    K = ctx.matrix(n, n)
    for i in range(n):
        for j in range(n):
            sq = sum((a - b) ** 2 for a, b in zip(rows[i], rows[j]))
            u = g * sq
            K[i, j] = ctx.exp(-ctx.mpf(u.numerator) / u.denominator)
    H = ctx.eye(n) - ctx.ones(n, n) / n
    values = ctx.eigsy(H * K * H, eigvals_only=True)
    return sorted((float(v) if floats else v for v in values), reverse=True)


def test_default_constructor_keeps_the_components_resolved_to_eight_digits():
    X = RANDOM[:30]
    ours = PreciseKernelPCA().fit(X)
    assert ours.get_params()["n_components"] is None and ours.backend_ == "float64"
    reference = _mp_reference_spectrum(X, ours.gamma_)
    k = len(ours.eigenvalues_)
    np.testing.assert_allclose(ours.eigenvalues_, reference[:k], rtol=1e-8)
    # the first component left out is not resolved: its error bound, from the exact spectrum, exceeds the tolerance
    bounds = error_bounds(np.array(reference) / reference[0], k + 1, eps=2.0**-52, n=30)
    assert np.all(bounds[:k] <= CONDITION_TOL) and bounds[k] > CONDITION_TOL
    assert ours.transform(RANDOM[30:]).shape == (10, k)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), log2_gamma=st.integers(-40, 2), n_components=st.integers(1, 3))
def test_rigorous_eigenvalues_with_gamma_contain_an_independent_reference(seed, log2_gamma, n_components):
    """γ = 2^p / 3: σ_X = (2γ)^(−1/2) is irrational, so the enclosure is built at a rational σ' and widened."""
    X = np.random.default_rng(seed).normal(size=(8, 3)) * [1.0, 3.0, 0.5]
    gamma = Fraction(2) ** log2_gamma / 3
    fitted = PreciseKernelPCA(n_components, gamma=gamma, enclose=True).fit(X)
    assert fitted.eigenvalues_guarantee_ == "rigorous"
    reference = _mp_reference_spectrum(X, gamma, dps=60 - log2_gamma, floats=False)
    for lower, value, upper, exact in zip(fitted.eigenvalues_lower_, fitted.eigenvalues_, fitted.eigenvalues_upper_,
                                          reference):
        assert exact_mpf(lower) <= exact <= exact_mpf(upper)
        assert lower <= value <= upper
        assert (upper - lower) <= 1e-12 * upper  # the widening for σ' ≠ σ_X costs no visible digit


def test_fixed_gamma_is_sklearns_rbf_and_does_not_move_with_the_fold():
    X = load("wine")
    gamma = 2.5e-6
    for rows in (slice(0, None, 2), slice(1, None, 2), slice(0, 120)):
        ours = PreciseKernelPCA(3, gamma=gamma).fit(X[rows])
        assert ours.gamma_ == pytest.approx(gamma, rel=2**-50)  # the same bandwidth whatever the rows
        theirs = KernelPCA(3, kernel="rbf", gamma=gamma, eigen_solver="dense").fit(X[rows])
        np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-9)
        _same_up_to_sign(ours.transform(X), theirs.transform(X), rtol=1e-7)
    widths = {PreciseKernelPCA(3, sigma=1).fit(X[rows]).sigma_x_ for rows in (slice(0, None, 2), slice(1, None, 2))}
    assert len(widths) == 2  # the standardized σ follows each fold's median distance


def test_pipeline_and_grid_search_with_fixed_gamma_score_as_sklearn():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    grid = {"kpca__gamma": [1e-7, 1e-6, 1e-5]}
    scores = []
    for kpca in (PreciseKernelPCA(n_components=4), KernelPCA(n_components=4, kernel="rbf", eigen_solver="dense")):
        search = GridSearchCV(Pipeline([("kpca", kpca), ("clf", LogisticRegression(max_iter=2000))]), grid, cv=3)
        search.fit(X, y)
        scores.append(search.cv_results_["mean_test_score"])
    np.testing.assert_allclose(scores[0], scores[1], atol=1e-12)  # same features up to sign: same predictions
    assert search.best_params_["kpca__gamma"] in grid["kpca__gamma"]


def test_inverse_transform_is_sklearns_pre_image_map():
    X = RANDOM
    ours = PreciseKernelPCA(3, gamma=0.05, fit_inverse_transform=True, alpha=0.1).fit(X)
    theirs = KernelPCA(3, kernel="rbf", gamma=0.05, fit_inverse_transform=True, alpha=0.1,
                       eigen_solver="dense").fit(X)
    # the kernel on the components sees only distances, which sign flips keep: the pre-images agree
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(X)),
                               theirs.inverse_transform(theirs.transform(X)), rtol=1e-7, atol=1e-9)
    assert ours.dual_coef_.shape == X.shape and ours.X_transformed_fit_.shape == (40, 3)
    plain = PreciseKernelPCA(3, gamma=0.05).fit(X)
    assert not hasattr(plain, "inverse_transform")
    with pytest.raises(AttributeError, match="has no attribute 'inverse_transform'") as info:
        plain.inverse_transform(X[:, :3])
    assert "needs fit_inverse_transform=True" in str(info.value.__cause__)


def test_sparse_input_is_the_dense_fit():
    import scipy.sparse

    X = np.where(RANDOM > 0.5, RANDOM, 0.0)
    dense = PreciseKernelPCA(3, sigma=2).fit(X)
    sparse = PreciseKernelPCA(3, sigma=2).fit(scipy.sparse.csr_matrix(X))
    np.testing.assert_array_equal(sparse.eigenvalues_, dense.eigenvalues_)
    np.testing.assert_array_equal(sparse.transform(scipy.sparse.csc_matrix(X[:5])), dense.transform(X[:5]))


def test_fit_asks_the_eigensolver_for_the_requested_pairs_only(monkeypatch):
    import scipy.linalg
    import scipy.sparse.linalg

    import precise_kpca.estimator as estimator

    calls = []
    eigh, eigsh = scipy.linalg.eigh, scipy.sparse.linalg.eigsh
    monkeypatch.setattr(estimator.scipy.linalg, "eigh", lambda *a, **k: calls.append(("eigh", k)) or eigh(*a, **k))
    monkeypatch.setattr(estimator.scipy.sparse.linalg, "eigsh",
                        lambda *a, **k: calls.append(("eigsh", k)) or eigsh(*a, **k))
    PreciseKernelPCA(3, sigma=1).fit(RANDOM)  # N = 40: LAPACK's subset driver, 3 pairs + 1 for the last gap
    assert calls == [("eigh", {"subset_by_index": [36, 39], "driver": "evr"})]
    calls.clear()
    big = np.random.default_rng(1).normal(size=(250, 3))
    fitted = PreciseKernelPCA(3, sigma=1).fit(big)  # N > 200, k < 10: Lanczos, as scikit-learn's "auto"
    assert [name for name, _ in calls] == ["eigsh"] and calls[0][1]["k"] == 4
    reference = np.linalg.eigvalsh(double_center(gaussian_gram(big, 1)).internal)[::-1][:3]
    np.testing.assert_allclose(fitted.eigenvalues_, reference, rtol=1e-10)


def test_transform_does_not_rebuild_the_training_gram(monkeypatch):
    import precise_kpca.estimator as estimator

    for options in (dict(sigma=1), dict(sigma="2**40", backend="mp", dps=30)):
        fitted = PreciseKernelPCA(2, **options).fit(RANDOM[:12])
        expected = fitted.transform(RANDOM[12:16])
        monkeypatch.setattr(estimator, "gaussian_gram", lambda *a, **k: pytest.fail("transform built a Gram"))
        np.testing.assert_array_equal(fitted.transform(RANDOM[12:16]), expected)
        monkeypatch.undo()


def test_bandwidth_and_kernel_parameters_are_validated():
    for params, match in [(dict(gamma=0.1, sigma=1), "not both"), (dict(kernel="poly"), "KernelPCA"),
                          (dict(gamma=-1), "gamma"), (dict(alpha=0), "alpha")]:
        with pytest.raises(ValueError, match=match):
            PreciseKernelPCA(2, **params).fit(RANDOM)
    assert PreciseKernelPCA(2, kernel="gaussian", gamma=0.1).fit(RANDOM).gamma_ == pytest.approx(0.1, rel=2**-50)


def test_check_estimator_passes_every_check_with_array_api_dispatch():
    """All checks, the array-API one included (it needs SCIPY_ARRAY_API set before SciPy loads: a subprocess)."""
    script = (
        "from sklearn.utils.estimator_checks import check_estimator\n"
        "from precise_kpca.estimator import PreciseKernelPCA\n"
        "for est in (PreciseKernelPCA(), PreciseKernelPCA(3, gamma=0.5, fit_inverse_transform=True)):\n"
        "    results = check_estimator(est, on_fail=None)\n"
        "    print(len(results), [(r['check_name'], r['status']) for r in results if r['status'] != 'passed'])\n"
    )
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parent.parent)
    lines = done.stdout.split("\n")[:2]
    assert lines == ["47 []", "47 []"], done.stdout + done.stderr
