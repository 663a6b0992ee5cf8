import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from precise_kpca.backends import Float64Backend, MPBackend, get_backend

BACKENDS = [Float64Backend(), MPBackend(40)]


def test_mpmath_uses_gmpy_integers():
    assert mpmath.libmp.BACKEND == "gmpy"


def test_mp_backend_never_touches_global_precision():
    before = mpmath.mp.prec
    b = MPBackend(80)
    b.exp_residual(b.internal(np.array([1e-30, 0.5])))
    b.eigh(b.internal(np.array([[2.0, 1.0], [1.0, 3.0]])))
    assert mpmath.mp.prec == before


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
@given(u=st.one_of(st.floats(0, 50), st.floats(1e-300, 1e-3)))
@settings(max_examples=60, deadline=None)
def test_exp_residual_has_full_relative_accuracy(backend, u):
    reference_ctx = mpmath.MPContext()
    reference_ctx.prec = backend.prec + 1200  # expm1(-u) + u cancels up to log2(1/u) < 1000 bits
    exact = reference_ctx.expm1(-reference_ctx.mpf(u)) + u
    got = backend.exp_residual(backend.internal(np.array([u])))[0]
    if exact == 0:
        assert got == 0
        return
    if isinstance(backend, Float64Backend) and exact < np.finfo(np.float64).tiny:
        assert 0 <= got < np.finfo(np.float64).tiny  # below float64's normal range: underflow is the answer
        return
    rel = abs((reference_ctx.mpf(backend.export(got)) - exact) / exact)
    assert rel <= 16 * backend.eps


def test_exported_mp_values_are_global_mpf_without_rounding():
    b = MPBackend(60)
    third = b.scalar(1) / 3
    exported = b.export(third)
    assert isinstance(exported, mpmath.mpf)
    assert exported._mpf_ == third._mpf_


def test_get_backend_errors():
    with pytest.raises(ValueError, match="needs an explicit precision"):
        get_backend("mp")
    with pytest.raises(ValueError, match="too little precision"):
        get_backend("mp", dps=10)
    with pytest.raises(ValueError, match="dps must be an integer"):
        get_backend("mp", dps=30.5)
    with pytest.raises(ValueError, match="unknown backend"):
        get_backend("quad")
    with pytest.raises(ValueError, match="fixed precision"):
        get_backend("float64", dps=30)


def test_eps_scales_with_precision():
    assert Float64Backend().eps == 2.0**-52
    assert MPBackend(50).eps == 2.0 ** (1 - MPBackend(50).prec)
    assert MPBackend(50).eps < 1e-49
    assert math.isclose(MPBackend(100).eps / MPBackend(50).eps, 2.0 ** (MPBackend(50).prec - MPBackend(100).prec))


# --- the primitives every algorithm is written against (issue 23 step 3), each against mpmath at high precision ---
ALL_BACKENDS = [Float64Backend(), Float64Backend(naive=True), MPBackend(30), MPBackend(60)]
_REFERENCE = mpmath.MPContext()
_REFERENCE.prec = 600


def _ids(b):
    return f"{b.name}{b.dps}"


def _ref(backend, value):
    """The exact value of a backend scalar in the 600-bit reference context."""
    return _REFERENCE.mpf(backend.export(value))


@pytest.mark.parametrize("backend", ALL_BACKENDS, ids=_ids)
@given(y=st.floats(-1e6, 1e6), x=st.floats(-1e6, 1e6), tiny=st.integers(0, 300))
@settings(max_examples=80, deadline=None)
def test_atan2_has_full_relative_accuracy(backend, y, x, tiny):
    y = y * 2.0**-tiny  # also angles far below eps, where acos/asin would have no digits
    got = backend.atan2(backend.scalar(y), backend.scalar(x))
    exact = _REFERENCE.atan2(_REFERENCE.mpf(y), _REFERENCE.mpf(x))
    if exact == 0:
        assert got == 0
        return
    if backend.bounded_range and abs(exact) < np.finfo(np.float64).tiny:
        assert abs(_ref(backend, got) - exact) <= 2.0**-1074  # subnormal: one unit of the last place
        return
    assert abs((_ref(backend, got) - exact) / exact) <= backend.eps


@pytest.mark.parametrize("backend", ALL_BACKENDS, ids=_ids)
@pytest.mark.parametrize("name", ["cos", "sin"])
def test_cos_and_sin_elementwise(backend, name):
    xs = np.random.default_rng(5).uniform(-100, 100, 40)
    got = getattr(backend, name)(backend.internal(xs))
    assert got.shape == xs.shape
    for g, x in zip(got, xs):
        exact = getattr(_REFERENCE, name)(_REFERENCE.mpf(x))
        assert abs(_ref(backend, g) - exact) <= backend.eps  # |cos|, |sin| <= 1: absolute error in units of eps


@pytest.mark.parametrize("backend", ALL_BACKENDS, ids=_ids)
@pytest.mark.parametrize("n", [1, 3, 6])
def test_inverse_of_a_well_conditioned_matrix(backend, n):
    rng = np.random.default_rng(n)
    a = rng.uniform(-1, 1, (n, n)) + 2 * n * np.eye(n)  # diagonally dominant: cond(a) < 3
    got = backend.inverse(backend.internal(a))
    exact = _REFERENCE.inverse(_REFERENCE.matrix(a.tolist()))
    scale = max(abs(exact[i, j]) for i in range(n) for j in range(n))
    for i in range(n):
        for j in range(n):
            assert abs(_ref(backend, got[i, j]) - exact[i, j]) <= 8 * n * backend.eps * scale


@pytest.mark.parametrize("backend", ALL_BACKENDS, ids=_ids)
def test_checked_internal_holds_or_refuses(backend):
    third = np.array([[Fraction(1, 3), 1], [1, Fraction(1, 3)]], dtype=object)
    if backend.fixed_precision:  # float64 holds only exact float64 entries
        with pytest.raises(ValueError, match="K"):
            backend.checked_internal(third, "K")
        with pytest.raises(ValueError, match="inf"):
            backend.checked_internal(np.array([[1.0, math.inf], [math.inf, 1.0]]), "K")
    else:  # rounded once to working precision
        got = backend.checked_internal(third, "K")
        exact = mpmath.libmp.from_rational(1, 3, backend.prec, mpmath.libmp.round_nearest)
        assert got[0, 0]._mpf_ == exact and got[0, 1] == 1
    exact_floats = np.array([[0.1, 2.0**-1074], [2.0**1000, -3.5]])
    assert [_ref(backend, v) for v in backend.checked_internal(exact_floats, "K").ravel()] == \
        [_REFERENCE.mpf(v) for v in exact_floats.ravel()]


@pytest.mark.parametrize("backend", ALL_BACKENDS, ids=_ids)
def test_bounded_range_is_the_scalars_range(backend):
    """bounded_range: 2^1100 overflows the backend's scalars; otherwise it is held exactly."""
    if backend.bounded_range:
        with pytest.raises(OverflowError):
            backend.scalar(2**1100)
    else:
        assert _ref(backend, backend.scalar(2**1100)) == 2**1100


@pytest.mark.parametrize("backend", ALL_BACKENDS, ids=_ids)
def test_cost_estimates(backend):
    """The long-run warnings' estimates: negligible on float64, growing with the work (×8 for eigh at 2N) on mp."""
    if backend.fixed_precision:
        assert backend.elementwise_seconds(10**8) == backend.eigh_seconds(10**4) == 0
    else:
        assert backend.elementwise_seconds(2000) == 2 * backend.elementwise_seconds(1000) > 0
        assert backend.eigh_seconds(200) == 8 * backend.eigh_seconds(100) > 0


@pytest.mark.parametrize("backend", ALL_BACKENDS, ids=_ids)
def test_to_floats_are_the_nearest_floats(backend):
    thirds = backend.internal(np.array([[1.0, 2.0], [-7.0, 2.0**-1070]])) / 3
    got = backend.to_floats(thirds)
    assert got.dtype == np.float64 and got.shape == (2, 2)
    assert got.tolist() == [[float(_ref(backend, v)) for v in row] for row in thirds]  # mpf → float rounds to nearest


@pytest.mark.parametrize("backend", ALL_BACKENDS, ids=_ids)
@pytest.mark.parametrize("n", [1, 4, 7])
def test_eigvalsh_and_norm2(backend, n):
    """Descending eigenvalues of a symmetric matrix and the spectral norm of a rectangular one, both within
    n·eps·‖a‖₂ of mpmath's eigsy / svd at 600 bits."""
    rng = np.random.default_rng(10 + n)
    a = rng.standard_normal((n, n))
    a = a + a.T
    got = backend.eigvalsh(backend.internal(a))
    exact = sorted(_REFERENCE.eigsy(_REFERENCE.matrix(a.tolist()), eigvals_only=True), reverse=True)
    scale = max(abs(v) for v in exact)
    assert len(got) == n
    for g, e in zip(got, exact):
        assert abs(_ref(backend, g) - e) <= 8 * n * backend.eps * scale
    rect = rng.standard_normal((n + 2, n))
    norm = max(_REFERENCE.svd_r(_REFERENCE.matrix(rect.tolist()), compute_uv=False))
    assert abs(_ref(backend, backend.norm2(backend.internal(rect))) - norm) <= 8 * n * backend.eps * norm
