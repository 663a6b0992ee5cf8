"""Certified inertia and eigenvalue enclosures (precise_kpca.certify.psd), incl. the seed's Experiment 1."""
import math

import flint
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.certify.psd import CertificationError, certify_kernel_psd, certify_psd, require_psd

EPS = np.finfo(np.float64).eps


@pytest.fixture(scope="module")
def X50():
    return np.random.default_rng(42).normal(size=(50, 3))


def _sq(X):
    s = np.sum(X**2, axis=1)
    return s[:, None] + s[None, :] - 2 * X @ X.T


def _width_ok(cert, n):
    """Ball enclosures are as tight as the float64 eigenbasis allows: a few n·eps·|λ_max|."""
    scale = abs(cert.max_eigenvalue[1])
    return all(hi - lo <= 8 * n * EPS * scale for lo, hi in cert.eigenvalue_bounds)


# --- Experiment 1 (seed 001): RBF γ = 0.5, polynomial degree 2, the invalid −|x − y| kernel ---------------
def test_experiment1_rbf_certified(X50):
    cert = certify_kernel_psd(X50, "gaussian", gamma=0.5)
    assert cert.inertia == (50, 0, 0) and cert.is_pd
    lo, hi = cert.min_eigenvalue
    assert 0 < lo <= hi and abs(lo - 0.000181) < 0.5e-6  # the article prints 0.000181
    lo, hi = cert.max_eigenvalue
    assert abs(lo - 15.644640) < 0.5e-6
    assert _width_ok(cert, 50)
    assert cert.method == "ball-ostrowski"


def test_experiment1_polynomial_exact_rank_10(X50):
    cert = certify_kernel_psd(X50, "polynomial", degree=2, gamma=1.0, coef0=1.0)
    assert cert.inertia == (10, 40, 0) and cert.rank == math.comb(3 + 2, 2)
    assert cert.min_eigenvalue == (0.0, 0.0)
    assert abs(cert.max_eigenvalue[0] - 254.878312) < 0.5e-6
    assert cert.method == "exact-charpoly"
    # float64 shows the 40 exact zeros as rounding noise of both signs
    w = np.linalg.eigvalsh((X50 @ X50.T + 1.0) ** 2)
    assert np.all(np.abs(w[:40]) < 100 * 50 * EPS * w[-1]) and np.all(w[:40] != 0)


def test_experiment1_float_polynomial_gram_is_not_psd_as_binary_matrix(X50):
    """The float64 Gram taken as exact binary numbers is a different matrix: rounding made it indefinite."""
    cert = certify_psd((X50 @ X50.T + 1.0) ** 2)
    assert cert.inertia[2] > 0 and cert.inertia[1] == 0
    assert cert.min_eigenvalue[1] < 0 and cert.min_eigenvalue[0] > -100 * 50 * EPS * 255


def test_experiment1_invalid_kernel(X50):
    cert = certify_kernel_psd(X50, "neg_distance")
    assert cert.inertia == (49, 0, 1) and not cert.is_psd
    assert abs(cert.min_eigenvalue[0] - (-98.802080)) < 0.5e-6
    assert abs(cert.max_eigenvalue[0] - 22.587837) < 0.5e-6
    # the article's float Gram (with Gram-trick cancellation) certifies to the same printed digits
    float_cert = certify_psd(-np.sqrt(np.maximum(_sq(X50), 0)))
    assert float_cert.inertia == (49, 0, 1)
    assert abs(float_cert.min_eigenvalue[0] - (-98.802080)) < 0.5e-6


def test_exact_and_ball_methods_agree_on_float_gram(X50):
    K = np.exp(-0.5 * _sq(X50))
    exact = certify_psd(K, method="exact-charpoly")
    ball = certify_psd(K, method="ball-ostrowski")
    assert exact.inertia == ball.inertia == (50, 0, 0)
    for (a, b), (c, d) in zip(exact.eigenvalue_bounds, ball.eigenvalue_bounds):
        assert max(a, c) <= min(b, d)  # enclosures of the same eigenvalue must overlap


def test_linear_and_euclidean_exact(X50):
    lin = certify_kernel_psd(X50, "linear")
    assert lin.inertia == (3, 47, 0)
    eu = certify_kernel_psd(X50, "euclidean")  # −D²/2 = −s/2 1ᵀ − 1 sᵀ/2 + X Xᵀ: rank ≤ d + 2
    assert eu.inertia[2] == 1 and eu.rank <= 5


def test_gaussian_duplicates_merge(X50):
    X = np.vstack([X50[:8], X50[:3]])
    cert = certify_kernel_psd(X, "gaussian", sigma=1.5)
    assert cert.inertia == (8, 3, 0) and cert.method.endswith("duplicate-merge")
    w = np.linalg.eigvalsh(np.exp(-_sq(X) / (2 * 1.5**2)))
    for (lo, hi), v in zip(cert.eigenvalue_bounds[3:], w[3:]):
        assert lo - 100 * EPS * w[-1] <= v <= hi + 100 * EPS * w[-1]


# --- properties: Sylvester's law on constructed matrices ---------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(
    signs=st.lists(st.sampled_from([-3, -1, 0, 0, 1, 2]), min_size=1, max_size=7),
    lower=st.lists(st.integers(-3, 3), min_size=21, max_size=21),
)
def test_inertia_matches_sylvester(signs, lower):
    n = len(signs)
    L = np.eye(n, dtype=np.int64)
    it = iter(lower)
    for i in range(n):
        for j in range(i):
            L[i, j] = next(it)
    K = (L @ np.diag(signs) @ L.T).astype(np.float64)  # small integers: exact in float64
    expected = (sum(s > 0 for s in signs), sum(s == 0 for s in signs), sum(s < 0 for s in signs))
    cert = certify_psd(K)
    assert cert.inertia == expected
    w = np.linalg.eigvalsh(K)
    tol = 100 * n * EPS * max(1.0, np.abs(w).max())
    assert all(lo - tol <= v <= hi + tol for (lo, hi), v in zip(cert.eigenvalue_bounds, w))
    if expected[1] == 0:
        assert certify_psd(K, method="ball-ostrowski").inertia == expected
    else:
        with pytest.raises(CertificationError, match="cannot separate"):
            certify_psd(K, method="ball-ostrowski")


def test_fmpz_input_and_ball_input():
    A = flint.fmpz_mat([[2, 1], [1, 2]])
    cert = certify_psd(A)
    assert cert.inertia == (2, 0, 0) and cert.min_eigenvalue == (1.0, 1.0)
    ball = flint.arb_mat([[2, 1], [1, 2]])
    assert certify_psd(ball).inertia == (2, 0, 0)
    with pytest.raises(CertificationError, match="contains 0"):
        certify_psd(flint.arb_mat([[1, 1], [1, 1]]))


def test_require_psd_guard(X50):
    require_psd(np.exp(-0.5 * _sq(X50)), what="RBF Gram")
    with pytest.raises(ValueError, match=r"invalid Gram is not positive semi-definite: 1 negative"):
        require_psd(-np.sqrt(np.maximum(_sq(X50), 0)), what="invalid Gram")


@pytest.mark.parametrize(
    "K, match",
    [
        (np.ones((2, 3)), "square"),
        (np.array([[1.0, 2.0], [3.0, 1.0]]), r"not symmetric: K\[0, 1\]"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), r"K\[0, 1\] = nan is not finite"),
        (np.array([["a"]]), "real numeric"),
        (np.zeros((0, 0)), "empty"),
    ],
)
def test_certify_psd_errors(K, match):
    with pytest.raises(ValueError, match=match):
        certify_psd(K)


def test_certify_psd_bad_method():
    with pytest.raises(ValueError, match="unknown method"):
        certify_psd(np.eye(2), method="magic")
    with pytest.raises(ValueError, match="needs exact entries"):
        certify_psd(flint.arb_mat([[1]]), method="exact-charpoly")


@pytest.mark.parametrize(
    "X, kernel, params, match",
    [
        (np.ones((3, 2)), "sigmoid", {}, "unknown kernel"),
        (np.ones((3, 2)), "linear", {"gamma": 1}, r"takes no parameter\(s\) \['gamma'\]"),
        (np.ones((3, 2)), "gaussian", {}, "exactly one of gamma= or sigma="),
        (np.ones((3, 2)), "gaussian", {"gamma": 1, "sigma": 1}, "exactly one of gamma= or sigma="),
        (np.ones((3, 2)), "gaussian", {"sigma": -1.0}, "sigma must be > 0"),
        (np.ones((3, 2)), "polynomial", {"degree": 0}, "degree must be an integer >= 1"),
        (np.ones(3), "linear", {}, "must be 2-D"),
        (np.array([[1.0, np.inf]]), "linear", {}, r"X\[0, 1\] = inf is not finite"),
    ],
)
def test_certify_kernel_psd_errors(X, kernel, params, match):
    with pytest.raises(ValueError, match=match):
        certify_kernel_psd(X, kernel, **params)


# --- Experiment 1b: the guard stops the invalid kernel before the solver -----------------------------------
def test_experiment1_function_and_svc_guard(X50):
    import warnings

    from sklearn.svm import SVC

    from precise_kpca.certify.psd import experiment1, guarded_svc

    certs = experiment1()
    assert [c.inertia for c in certs.values()] == [(50, 0, 0), (10, 40, 0), (49, 0, 1)]
    y = np.where(X50[:, 0] > 0, 1.0, -1.0)
    K_invalid = -np.sqrt(np.maximum(_sq(X50), 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the seed's point: libsvm fits an indefinite Gram without a word
        SVC(kernel="precomputed", C=1.0).fit(K_invalid, y)
    with pytest.raises(ValueError, match="not positive semi-definite: 1 negative eigenvalue"):
        guarded_svc(K_invalid, y, C=1.0)
    clf, cert = guarded_svc(np.exp(-0.5 * _sq(X50)), y, C=1.0)
    assert cert.is_pd and clf.score(np.exp(-0.5 * _sq(X50)), y) > 0.5
    with pytest.raises(ValueError, match="do not pass kernel="):
        guarded_svc(np.eye(3), [0, 1, 0], kernel="rbf")
