import math

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
