"""The directed roundings of :mod:`precise_kpca.arith.rounding` against exact rational arithmetic."""
from __future__ import annotations

import math
import sys
from fractions import Fraction

import mpmath
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from precise_kpca.arith.rounding import float_down, float_up, frobenius_up, spectral_up, sqrt_down, sqrt_up

# rationals across float64's whole range, subnormals included, and a little beyond it
exact = st.builds(lambda m, d, e: Fraction(m, d) * Fraction(2) ** e, st.integers(-2**60, 2**60),
                  st.integers(1, 2**60), st.integers(-1140, 1030))


@given(exact)
def test_float_up_and_down_are_the_float64_neighbours(x):
    up, down = float_up(x), float_down(x)
    assert down <= x <= up  # exact comparisons (Fraction against float)
    if math.isfinite(up):
        assert math.nextafter(up, -math.inf) < x or up == x
    if math.isfinite(down):
        assert math.nextafter(down, math.inf) > x or down == x
    assert (up == down) == (math.isfinite(up) and Fraction(up) == x)


def test_float_up_and_down_beyond_float64():
    big = Fraction(2) ** 1100
    assert (float_up(big), float_down(big)) == (math.inf, sys.float_info.max)
    assert (float_up(-big), float_down(-big)) == (-sys.float_info.max, -math.inf)


def test_float_up_and_down_of_mpf_compare_exactly():
    x = mpmath.mpf(1) / 3  # 53 bits at the default context; a 200-bit value has no float64 of its own
    with mpmath.workprec(200):
        y = mpmath.mpf(1) / 3
    assert float_down(y) < y < float_up(y) and float_up(x) == float_down(x) == float(x)


@given(st.fractions(min_value=0, max_value=10**30))
def test_sqrt_up_and_down_bracket_the_root_within_2_to_minus_64(x):
    hi, lo = sqrt_up(x), sqrt_down(x)
    assert lo * lo <= x <= hi * hi
    assert hi - lo <= hi * Fraction(2) ** -63


def test_frobenius_and_spectral_bounds_hold_above_the_exact_norms():
    rng = np.random.default_rng(3)
    M = rng.standard_normal((40, 30)) * 2.0 ** rng.integers(-20, 20, (40, 30))
    frob2 = sum(Fraction(float(v)) ** 2 for v in M.ravel())
    assert Fraction(frobenius_up(M)) ** 2 >= frob2
    with mpmath.workdps(40):
        man, exp = max(mpmath.svd_r(mpmath.matrix(M.tolist()), compute_uv=False)).man_exp
    top = Fraction(man) * Fraction(2) ** exp  # σ_max to 40 digits, far inside the bounds' slack
    for levels in (0, 1, 2):
        assert spectral_up(M, Fraction(0), levels) >= top
