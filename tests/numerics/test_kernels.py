"""Gram-level identities (Lemmas 1, 2), PSD-ness, and float64-stable / naive / mp agreement."""
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import precise_kpca as pk

from ..strategies import data_sets

DPS = 40


def rel_gap(a, b) -> float:
    """max |a − b| / max |b| over entries, computed in mpmath at high precision."""
    ctx = mpmath.MPContext()
    ctx.prec = 400
    a = np.asarray(a.values if hasattr(a, "values") else a, dtype=object).ravel()
    b = np.asarray(b.values if hasattr(b, "values") else b, dtype=object).ravel()
    num = max(abs(ctx.mpf(x) - ctx.mpf(y)) for x, y in zip(a, b))
    den = max(abs(ctx.mpf(y)) for y in b)
    return float(num / den)


@given(X=data_sets(), log2_sigma=st.integers(-4, 60))
@settings(max_examples=25, deadline=None)
def test_lemma1_centering_preserves_rkhs_distances_mp(X, log2_sigma):
    K = pk.gaussian_gram(X, f"2**{log2_sigma}", backend="mp", dps=DPS)
    before = pk.rkhs_sq_distances(K)
    after = pk.rkhs_sq_distances(pk.double_center(K))
    assert rel_gap(after, before) <= 10.0 ** -(DPS - 10)


@given(X=data_sets())
@settings(max_examples=25, deadline=None)
def test_lemma2_centered_euclidean_equals_centered_linear_mp(X):
    E = pk.double_center(pk.euclidean_gram(X, backend="mp", dps=DPS))
    L = pk.double_center(pk.linear_gram(X, backend="mp", dps=DPS))
    assert rel_gap(E, L) <= 10.0 ** -(DPS - 10)


@given(X=data_sets(), log2_sigma=st.integers(-4, 40))
@settings(max_examples=15, deadline=None)
def test_centered_gaussian_gram_is_psd(X, log2_sigma):
    for backend, dps in (("float64", None), ("mp", 30)):
        Kc = pk.double_center(pk.gaussian_gram(X, f"2**{log2_sigma}", backend=backend, dps=dps))
        values = pk.eigensystem(Kc).values
        b = Kc.backend
        top = b.internal(values[0])
        floor = -len(values) * 4 * b.eps * abs(top)
        assert all(b.internal(v) >= floor for v in values), (backend, [b.to_float(v) for v in values])


def test_residual_identity_scaled_gaussian_is_linear_plus_residual():
    """σ_X² H K_G H = H K_lin H + H G H (Lemma 2 + definition of G), checked on the mp backend."""
    X = np.random.default_rng(3).normal(size=(7, 3))
    for sigma in ("2**-3", "2**5", "2**50"):
        K = pk.double_center(pk.gaussian_gram(X, sigma, backend="mp", dps=60))
        G = pk.double_center(pk.gaussian_residual(X, sigma, backend="mp", dps=60))
        L = pk.double_center(pk.linear_gram(X, backend="mp", dps=60))
        s2 = K.meta["sigma_x"] ** 2
        lhs = pk.SymmetricMatrix(K.deviation * s2, K.backend)
        rhs = pk.SymmetricMatrix(L.deviation + G.deviation, K.backend)
        assert rel_gap(lhs, rhs) <= 10.0 ** -(60 - 10)


WINE_LIKE = np.random.default_rng(11).normal(size=(12, 4)) * np.array([1.0, 10.0, 100.0, 0.1])
SIGMAS = [-4, 0, 6, 12, 20, 30, 40]


def _reference(quantity, log2_sigma):
    return quantity(WINE_LIKE, f"2**{log2_sigma}", backend="mp", dps=50)


def _centered(X, sigma, **kw):
    return pk.double_center(pk.gaussian_gram(X, sigma, **kw))


def _scaled_residual(X, sigma, **kw):
    return pk.double_center(pk.gaussian_residual(X, sigma, **kw))


@pytest.mark.parametrize("log2_sigma", SIGMAS)
@pytest.mark.parametrize("quantity", [_centered, _scaled_residual], ids=["HKH", "HGH"])
def test_float64_stable_agrees_with_mp_to_12_digits(quantity, log2_sigma):
    got = quantity(WINE_LIKE, f"2**{log2_sigma}", backend="float64")
    assert rel_gap(got, _reference(quantity, log2_sigma)) <= 1e-12


def test_float64_naive_measurably_loses_digits_past_2_12():
    digits = {}
    for log2_sigma in SIGMAS:
        naive = _centered(WINE_LIKE, f"2**{log2_sigma}", backend="float64-naive")
        digits[log2_sigma] = -math.log10(max(rel_gap(naive, _reference(_centered, log2_sigma)), 1e-17))
    assert all(digits[p] >= 12 for p in SIGMAS if p <= 0)
    assert all(digits[p] < 12 for p in SIGMAS if p >= 12)
    assert digits[20] < 5 and digits[30] < 1  # nothing left: the paper's float64 limit
    assert digits[12] > digits[20] > digits[30]


def test_gaussian_gram_entries_and_meta():
    X = np.array([[0.0], [1.0], [3.0]])  # d_X = 1 (full median)
    K = pk.gaussian_gram(X, 2.0)
    assert K[0, 1] == pytest.approx(math.exp(-1 / 8), rel=4 * 2.0**-52)
    assert K[0, 0] == 1.0 and K.meta["sigma_x"] == 2.0
    raw = pk.gaussian_gram(X, 2.0, standardized=False, median="pairs")
    assert raw[0, 2] == pytest.approx(math.exp(-9 / 8), rel=4 * 2.0**-52)
    mp = pk.gaussian_gram(X, "2**-1", backend="mp", dps=50)
    assert isinstance(mp[0, 1], mpmath.mpf)
    ctx = mpmath.MPContext()
    ctx.dps = 60
    assert abs(ctx.mpf(mp[0, 1]) - ctx.exp(-2)) < ctx.mpf(10) ** -49


def test_polynomial_and_linear_grams_are_exact_on_mp():
    X = np.array([[0.1, 0.2], [0.3, -0.7], [1e-3, 5.0]])
    P = pk.polynomial_gram(X, degree=3, gamma=0.5, coef0=1, backend="mp", dps=80)
    from fractions import Fraction as F
    x0, x1 = [F(v) for v in X[0]], [F(v) for v in X[1]]
    exact = (F(1, 2) * (x0[0] * x1[0] + x0[1] * x1[1]) + 1) ** 3
    ctx = mpmath.MPContext()
    ctx.dps = 100
    assert abs(ctx.mpf(P[0, 1]) - ctx.mpf(exact.numerator) / exact.denominator) < ctx.mpf(10) ** -78


def test_cross_gram_centering_matches_training_centering():
    """Projecting the training points themselves through the cross kernel reproduces H K H."""
    X = np.random.default_rng(5).normal(size=(6, 2))
    for backend, dps in (("float64", None), ("mp", 30)):
        K = pk.gaussian_gram(X, 3.0, backend=backend, dps=dps)
        cross = pk.gaussian_cross_gram(X, X, K.meta["sigma_x"], backend=K.backend)
        assert rel_gap(pk.center_cross(cross, K), pk.double_center(K)) <= 64 * K.backend.eps
