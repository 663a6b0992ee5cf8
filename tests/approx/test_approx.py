"""Random Fourier features, Nyström and random-feature KPCA, and their large-σ limits."""
import mpmath
import numpy as np
import pytest

from precise_kpca import gaussian_gram, get_backend
from precise_kpca.approx.convergence import large_sigma_convergence, linear_limit
from precise_kpca.approx.kpca import (
    RFKPCA,
    NystromKPCA,
    empirical_kpca,
    nystrom_kpca,
    rf_kpca,
)
from precise_kpca.approx.rff import RandomFourierFeatures, rff_convergence, rff_expected_mse
from precise_kpca.measures.measurement import exact_mpf

BACKENDS = [("float64", None), ("mp", 30)]


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(24, 3)) * [3.0, 2.0, 1.0]


def _f(a):
    return np.vectorize(float, otypes=[float])(a)


# --- random Fourier features -------------------------------------------------------------------------------
def test_rff_seeded_and_reproducible(X):
    a = RandomFourierFeatures(64, gamma=0.5, random_state=7).fit_transform(X)
    b = RandomFourierFeatures(64, gamma=0.5, random_state=7).fit_transform(X)
    c = RandomFourierFeatures(64, gamma=0.5, random_state=8).fit_transform(X)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.shape == (24, 64)


@pytest.mark.parametrize("kind", ["cos", "sincos"])
def test_rff_mse_matches_exact_expectation(kind):
    """Mean over 40 seeds of the pairwise MSE vs the exact E[MSE] = mean v / D (±5 standard errors)."""
    rng = np.random.default_rng(3)
    Xp, Yp = rng.normal(size=(50, 4)), rng.normal(size=(50, 4))
    k = np.exp(-0.3 * np.sum((Xp - Yp) ** 2, axis=1))
    mses = []
    for seed in range(40):
        f = RandomFourierFeatures(200, gamma=0.3, kind=kind, random_state=seed).fit(Xp)
        mses.append(np.mean((np.sum(f.transform(Xp) * f.transform(Yp), axis=1) - k) ** 2))
    se = np.std(mses, ddof=1) / np.sqrt(len(mses))
    assert abs(np.mean(mses) - rff_expected_mse(Xp, Yp, 200, gamma=0.3, kind=kind)) < 5 * se


def test_rff_slope_reduced_protocol():
    """Slope of log RMSE vs log D within 4 standard errors (estimated from the trial spread) of −1/2."""
    r = rff_convergence(Ds=(20, 50, 100, 200, 500, 1000, 2000), n_trials=10)
    assert abs(r.slope + 0.5) < 4 * r.slope_se
    assert r.slope_se < 0.02  # the band is informative
    # and the level matches the exact expectation: per-D RMSE within 5 SE of sqrt(E MSE)
    se = np.std(r.rmse, axis=1, ddof=1) / np.sqrt(r.rmse.shape[1])
    assert (np.abs(r.rmse_mean - r.predicted_rmse) < 5 * se + 0.01 * r.predicted_rmse).all()


@pytest.mark.slow
def test_rff_article_protocol_reproduced():
    """The seed article's full protocol (same draws) gives its printed slope −0.4998."""
    r = rff_convergence()
    assert round(r.slope, 4) == -0.4998


def _mp_rmse(ctx, f: RandomFourierFeatures, Xp, Yp):
    """RMSE of the D-feature estimate in mpmath, from the exact floats of the points and the draws."""
    def mp(v):
        return ctx.mpf(float(v))  # exact

    def features(p):
        scale = ctx.sqrt(ctx.mpf(2) / f.n_components)
        return [scale * ctx.cos(ctx.fsum(mp(w) * mp(v) for w, v in zip(row, p)) + mp(b))
                for row, b in zip(f.frequencies_, f.phases_)]

    residuals = [ctx.fsum(a * b for a, b in zip(features(x), features(y)))
                 - ctx.exp(-f.gamma * ctx.fsum((mp(a) - mp(b)) ** 2 for a, b in zip(x, y))) for x, y in zip(Xp, Yp)]
    return ctx.sqrt(ctx.fsum(e * e for e in residuals) / len(residuals))


def test_rff_enclosures_contain_an_independent_reference():
    """mpmath at 60 digits from the same draws: cos(w·x + b) and exp(−γ|x − y|²) of the exact floats."""
    r = rff_convergence(Ds=(6, 12), n_trials=2, n_pairs=8, enclose=True)
    ctx = mpmath.MPContext()
    ctx.dps = 60
    master = np.random.default_rng(0)  # the protocol's pairs: X then Y
    Xp, Yp = master.normal(size=(8, 5)), master.normal(size=(8, 5))
    for j, D in enumerate((6, 12)):
        for t in range(2):
            reference = _mp_rmse(ctx, RandomFourierFeatures(D, gamma=0.5, random_state=1000 * D + t).fit(Xp), Xp, Yp)
            interval = r.enclosure.rmse[j, t]
            assert interval.guarantee == "rigorous" and interval.lower <= exact_mpf(reference) <= interval.upper
            assert interval.digits >= 20
            assert abs(r.rmse[j, t] / float(reference) - 1) < 1e3 * np.finfo(float).eps  # float64 agrees too
    assert r.enclosure.slope.digits >= 15 and abs(r.enclosure.slope.value - r.slope) < 1e-12


def test_rff_errors(X):
    with pytest.raises(ValueError, match="exactly one of gamma"):
        RandomFourierFeatures(4)
    with pytest.raises(ValueError, match="even n_components"):
        RandomFourierFeatures(5, gamma=1, kind="sincos")
    with pytest.raises(ValueError, match="n_components must be an integer >= 1"):
        RandomFourierFeatures(0, gamma=1)
    with pytest.raises(ValueError, match="call fit before transform"):
        RandomFourierFeatures(4, gamma=1).transform(X)
    with pytest.raises(ValueError, match="fitted for 3 columns"):
        RandomFourierFeatures(4, gamma=1).fit(X).transform(np.ones((2, 2)))
    with pytest.raises(ValueError, match="at least two distinct"):
        rff_convergence(Ds=(10, 10))


# --- Nyström / empirical / RF KPCA -------------------------------------------------------------------------
@pytest.mark.parametrize("backend, dps", BACKENDS)
def test_nystrom_with_all_points_is_exact_kpca(X, backend, dps):
    b = get_backend(backend, dps)
    n = X.shape[0]
    ny = NystromKPCA(n, 6, sigma=1.5, backend=b, random_state=0).fit(X)
    K = gaussian_gram(X, 1.5, backend=b)
    ex = empirical_kpca(K.deviation, n_components=6, backend=b)
    lam_ny, lam_ex = _f(ny.eigenvalues_), _f(ex.eigenvalues)
    tol = 100 * n * b.eps
    np.testing.assert_allclose(lam_ny, lam_ex, rtol=tol * lam_ex[0] / lam_ex[-1])
    # U-statistic scaling: eigenvalues of H K H / (n − 1)
    H = np.eye(n) - 1 / n
    ref = np.linalg.eigvalsh(H @ K.to_float64() @ H)[::-1][:6] / (n - 1)
    np.testing.assert_allclose(lam_ex, ref, rtol=1e3 * n * np.finfo(float).eps * ref[0] / ref[-1])
    assert abs(float(ny.result_.reconstruction_error) - float(ex.reconstruction_error)) <= tol * float(ex.total_variance)
    # components agree up to sign, and transform reproduces them on training points
    s = np.sign(np.sum(_f(ny.result_.components) * _f(ex.components), axis=0))
    np.testing.assert_allclose(_f(ny.result_.components) * s, _f(ex.components), atol=tol * 10)
    np.testing.assert_allclose(_f(ny.transform(X[:5])), _f(ny.result_.components[:5]), atol=tol)


def test_nystrom_reconstruction_error_and_interlacing(X):
    K = gaussian_gram(X, 1.0)
    ex = empirical_kpca(K.deviation, n_components=4)
    errors = []
    for m in (6, 12, 24):
        ny = NystromKPCA(m, 4, sigma=1.0, random_state=1).fit(X)
        assert (ny.eigenvalues_ <= ex.eigenvalues * (1 + 1e-12)).all()  # compression: Rayleigh-Ritz bound
        errors.append(ny.result_.reconstruction_error)
        # the closed form equals the direct sum of residual norms (1/n) Σ |k_i − m̂|² − |P(k_i − m̂)|²
        direct = ny.result_.total_variance - np.sum(ny.result_.components**2) / X.shape[0]
        assert abs(direct - ny.result_.reconstruction_error) <= 1e3 * np.finfo(float).eps * ny.result_.total_variance
    assert errors[-1] <= errors[0] and min(errors) >= ex.reconstruction_error * (1 - 1e-12)


def test_nystrom_linear_kernel_spanning_landmarks_is_linear_pca(X):
    """Linear kernel, landmarks spanning R^d: the compression space is all of R^d, so Nyström = PCA."""
    L = X @ X[:5].T
    res = nystrom_kpca(L, L[:5], n_components=3)
    Xc = X - X.mean(axis=0)
    ref = np.linalg.eigvalsh(Xc.T @ Xc / (len(X) - 1))[::-1]
    np.testing.assert_allclose(res.eigenvalues, ref, rtol=1e3 * np.finfo(float).eps)


@pytest.mark.parametrize("backend, dps", BACKENDS)
def test_rf_kpca_matches_gram_route(X, backend, dps):
    rf = RFKPCA(40, 5, sigma=1.0, backend=backend, dps=dps, random_state=2).fit(X)
    Z = _f(rf.result_.components)  # = Z_c v: its Gram eigenvalues are (n − 1) λ
    lam = _f(rf.eigenvalues_)
    np.testing.assert_allclose(np.sum(Z**2, axis=0) / (len(X) - 1), lam, rtol=1e3 * np.finfo(float).eps)
    np.testing.assert_allclose(_f(rf.transform(X[:3])), Z[:3], atol=1e3 * np.finfo(float).eps)
    assert float(rf.result_.reconstruction_error) >= 0


def test_kpca_errors(X):
    with pytest.raises(ValueError, match=r"n_landmarks must be an integer in \[3, n=24\]"):
        NystromKPCA(2).fit(X)
    with pytest.raises(ValueError, match="K_mm has shape"):
        nystrom_kpca(np.ones((5, 3)), np.eye(2))
    with pytest.raises(ValueError, match=r"n_components must be an integer in \[1, 4\]"):
        rf_kpca(np.ones((5, 4)), n_components=9)


# --- large-σ limits (Theorems 2–3 for the approximations) ----------------------------------------------------
SIGMAS = ["2**8", "2**11", "2**14"]


@pytest.mark.parametrize("method, rate", [("nystrom", -2), ("rf-sincos", -2), ("rf-cos", -1)])
def test_large_sigma_rates(method, rate):
    X = np.random.default_rng(5).normal(size=(12, 2)) * [2.0, 1.0] + [0.5, 0.0]
    st = large_sigma_convergence(X, SIGMAS, method=method, n_landmarks=5, n_features=16, random_state=1)
    # leading-order errors follow C σ^rate: the fitted slope is within 0.1 of it for the top component
    assert abs(st.rate.value[0] - rate) < 0.1 and st.rate.guarantee[0] == "rigorous"
    errors = st.relative_error
    assert (errors.upper[-1] < errors.lower[0]).all()
    assert errors.digits.min() >= 10 and set(errors.guarantee.ravel()) == {"rigorous"}


def test_linear_limits():
    X = np.random.default_rng(5).normal(size=(12, 2))
    Xc = X - X.mean(axis=0)
    ref = np.linalg.eigvalsh(Xc.T @ Xc / 11)[::-1]
    limit = linear_limit(X, method="nystrom")
    np.testing.assert_allclose(limit.value, ref, rtol=1e3 * np.finfo(float).eps)
    assert limit.digits.min() >= 30 and set(limit.guarantee) == {"rigorous"}
    f = RandomFourierFeatures(8, gamma=0.5, kind="sincos", random_state=0).fit(X)
    P = np.sqrt(2 / 8) * f.frequencies_
    ref = np.linalg.eigvalsh(P @ (Xc.T @ Xc / 11) @ P.T)[::-1][:2]
    np.testing.assert_allclose(linear_limit(X, method="rf-sincos", n_features=8).value, ref,
                               rtol=1e3 * np.finfo(float).eps)


def test_convergence_errors():
    X = np.random.default_rng(5).normal(size=(12, 2))
    with pytest.raises(ValueError, match="method must be one of"):
        large_sigma_convergence(X, SIGMAS, method="svd")
    with pytest.raises(ValueError, match="increasing"):
        large_sigma_convergence(X, ["2**8", "2**6"])
    with pytest.raises(ValueError, match=r"n_landmarks must be in \[d\+1=3"):
        large_sigma_convergence(X, SIGMAS, n_landmarks=2)
    with pytest.raises(ValueError, match="guarantee must be one of"):
        large_sigma_convergence(X, SIGMAS, guarantee="certified")
    with pytest.raises(ValueError, match="dps applies to guarantee='heuristic' only"):
        large_sigma_convergence(X, SIGMAS, dps=40)
    with pytest.raises(ValueError, match=r"n_components must be an integer in \[1, 1\]"):
        large_sigma_convergence(X, SIGMAS, method="rf-sincos", n_features=2, n_components=2)
