"""The test Grams' exact centered Gaussian Grams (precise_kpca.testing): both faces agree bit for bit and match the
core's mp Gram."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
from mpmath import libmp

import precise_kpca as pk
from precise_kpca.testing import centered_gaussian_gram, centered_gaussian_gram_fixed, gaussian_data


def _exact_tuples(F):
    Z, e = F.to_integers()
    return [libmp.from_man_exp(int(z), e) for z in Z.ravel()]


@pytest.mark.parametrize("n, sigma_exp2, bits", [(9, 0, 120), (24, 10, 256)])
def test_fixed_face_holds_the_mpf_values_exactly(n, sigma_exp2, bits):
    X = gaussian_data(n, d=3, seed=n)
    A = centered_gaussian_gram(X, sigma_exp2=sigma_exp2, bits=bits)
    F = centered_gaussian_gram_fixed(X, sigma_exp2=sigma_exp2, bits=bits)
    assert F.shape == (n, n) and F.error_bound == 0
    assert _exact_tuples(F) == [a._mpf_ for a in A.ravel()]
    # the exponent is the least that holds max |A| (the builder's bound on the largest entry is exact)
    top = max(abs(a) for a in A.ravel())
    assert 2 ** (F.exponent - 2) < top <= 2 ** (F.exponent - 1)


def test_worker_processes_build_the_same_matrix():
    X = gaussian_data(70, seed=1)
    one = centered_gaussian_gram_fixed(X, bits=200, digit_bits=20)
    two = centered_gaussian_gram_fixed(X, bits=200, digit_bits=20, workers=2)
    assert one.digit_bits == 20 and np.array_equal(one.digits, two.digits) and one.exponent == two.exponent


@pytest.mark.parametrize("sigma_exp2", [0, 6])
def test_matches_the_core_mp_gram_to_the_stated_bits(sigma_exp2):
    # an independent construction: the core's mp backend (expm1 in mpmath, exact centering identities)
    X = gaussian_data(15, d=4, seed=7)
    bits = 160
    A = centered_gaussian_gram(X, sigma_exp2=sigma_exp2, bits=bits)
    core = pk.double_center(pk.gaussian_gram(X, f"2**{sigma_exp2}", backend="mp", dps=120)).values
    ctx = mpmath.MPContext()
    ctx.prec = 500
    top = max(abs(ctx.mpf(a)) for a in A.ravel())
    err = max(abs(ctx.mpf(a) - ctx.mpf(c)) for a, c in zip(A.ravel(), core.ravel()))
    assert err <= top * ctx.ldexp(1, -bits)
    # and not by accident: a bandwidth one binade off is far outside that accuracy
    other = centered_gaussian_gram(X, sigma_exp2=sigma_exp2 + 1, bits=bits)
    assert max(abs(ctx.mpf(a) - ctx.mpf(c)) for a, c in zip(other.ravel(), core.ravel())) > top * 1e-3


def test_narrow_bandwidth_is_refused_with_its_size():
    with pytest.raises(ValueError, match=r"sigma_exp2=-3: .* reaches .* > 32"):
        centered_gaussian_gram_fixed(gaussian_data(20, seed=1), sigma_exp2=-3, bits=100)
