import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import precise_kpca as pk

from ..strategies import data_sets

BACKENDS = [("float64", None), ("float64-naive", None), ("mp", 30)]


CTX = mpmath.MPContext()
CTX.prec = 300


def _matrix(array):
    return CTX.matrix(np.asarray(array, dtype=object).tolist())


@pytest.mark.parametrize("backend, dps", BACKENDS)
@given(X=data_sets(max_rows=7), log2_sigma=st.integers(-3, 6))
@settings(max_examples=8, deadline=None)
def test_eigensystem_reconstructs_and_is_orthonormal(backend, dps, X, log2_sigma):
    Kc = pk.double_center(pk.gaussian_gram(X, f"2**{log2_sigma}", backend=backend, dps=dps))
    system = pk.eigensystem(Kc)
    eps = Kc.backend.eps
    n = Kc.n
    ctx, V, A = CTX, _matrix(system.vectors), _matrix(Kc.values)
    lam = ctx.diag([ctx.mpf(v) for v in system.values])
    scale = max(abs(ctx.mpf(v)) for v in system.values)
    assert ctx.mnorm(V * lam * V.T - A, 1) <= 8 * n * n * eps * scale
    assert ctx.mnorm(V.T * V - ctx.eye(n), 1) <= 8 * n * n * eps
    values = [ctx.mpf(v) for v in system.values]
    assert all(a >= b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("backend, dps", BACKENDS)
def test_sign_convention_and_kpca_normalization(backend, dps):
    X = np.random.default_rng(2).normal(size=(9, 3))
    Kc = pk.double_center(pk.gaussian_gram(X, 1.0, backend=backend, dps=dps))
    system = pk.eigensystem(Kc)
    b = system.backend
    vectors = b.internal(system.vectors)
    for j in range(3):
        column = [abs(x) for x in vectors[:, j]]
        assert vectors[column.index(max(column)), j] > 0
    alphas = b.internal(system.kpca_coefficients(3))
    values = b.internal(system.values[:3])
    for j in range(3):
        norm = values[j] * sum(a * a for a in alphas[:, j])
        assert abs(norm - 1) <= 16 * b.eps * 9


@pytest.mark.parametrize("backend, dps", BACKENDS)
def test_projecting_training_points_reproduces_their_components(backend, dps):
    X = np.random.default_rng(4).normal(size=(8, 2))
    K = pk.gaussian_gram(X, 0.7, backend=backend, dps=dps)
    Kc = pk.double_center(K)
    system = pk.eigensystem(Kc)
    train = pk.principal_components(Kc, system, 2)
    cross = pk.center_cross(pk.gaussian_cross_gram(X, X, K.meta["sigma_x"], backend=K.backend), K)
    again = pk.project(cross, system, 2)
    b = K.backend
    gap = max(abs(b.internal(a) - b.internal(c)) for a, c in zip(np.ravel(train), np.ravel(again)))
    assert gap <= 64 * b.eps * max(abs(b.internal(a)) for a in np.ravel(train))
    # components are sqrt(λ) v
    lam0 = b.internal(system.values[0])
    v0 = b.internal(system.vectors[:, 0])
    assert max(abs(b.internal(t) - b.sqrt(lam0) * v) for t, v in zip(train[:, 0], v0)) <= 64 * b.eps * abs(b.sqrt(lam0))


def test_mp_eigenvalues_agree_with_float64_where_float64_is_valid():
    X = np.random.default_rng(6).normal(size=(10, 3))
    f = pk.eigensystem(pk.double_center(pk.gaussian_gram(X, 2.0)))
    m = pk.eigensystem(pk.double_center(pk.gaussian_gram(X, 2.0, backend="mp", dps=40)))
    top = f.values[0]
    for a, b in zip(f.values, m.values):
        assert abs(a - float(b)) <= 64 * 2.0**-52 * top
    for j in range(3):  # same sign convention, same vectors
        assert np.max(np.abs(f.vectors[:, j] - m.vectors[:, j].astype(float))) <= 1e3 * 2.0**-52 * 10


def test_eigensystem_accepts_plain_arrays():
    A = np.array([[2.0, 1.0], [1.0, 2.0]])
    system = pk.eigensystem(A)
    assert np.allclose(system.values, [3.0, 1.0], rtol=0, atol=4 * 2.0**-52 * 3)
    mp_system = pk.eigensystem(np.array(A, dtype=object), dps=30)
    assert abs(mp_system.values[0] - 3) < mpmath.mpf(10) ** -29
