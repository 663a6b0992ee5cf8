"""Certified digits from an interval (measurement.interval_digits, agreeing_digits) against Python's decimal module.

The reference is ``floor(−log10(w))`` evaluated by ``decimal`` at 400 significant digits on the exact dyadic ends
(an independent implementation); widths of exactly 10^(−d) are decided by hand.
"""
from __future__ import annotations

import decimal
from fractions import Fraction

import mpmath
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.measures.measurement import EXACT_DIGITS, agreeing_digits, interval_digits

_CTX = decimal.Context(prec=400)


def _decimal(x: Fraction) -> decimal.Decimal:
    return _CTX.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))


def _reference(lo: Fraction, hi: Fraction) -> int:
    width = _CTX.divide(_decimal(hi - lo), _decimal(min(abs(lo), abs(hi))))
    return max(0, int(_CTX.minus(width.log10(_CTX)).to_integral_value(rounding=decimal.ROUND_FLOOR)))


dyadic = st.builds(lambda m, e: Fraction(m) * Fraction(2) ** e, st.integers(1, 2**80), st.integers(-300, 300))


@settings(max_examples=300, deadline=None)
@given(centre=dyadic, rel=st.integers(1, 2**60), shift=st.integers(0, 200), negative=st.booleans())
def test_interval_digits_match_decimal(centre, rel, shift, negative):
    lo = centre
    hi = centre + centre * Fraction(rel) / Fraction(2) ** (60 + shift)
    if negative:
        lo, hi = -hi, -lo
    expected = _reference(lo, hi)
    as_mpf = [mpmath.mp.make_mpf(mpmath.libmp.from_rational(x.numerator, x.denominator, 2000,
                                                            mpmath.libmp.round_nearest)) for x in (lo, hi)]
    assert all(Fraction(*_ratio(v)) == x for v, x in zip(as_mpf, (lo, hi)))  # the dyadic ends are exact mpf
    assert interval_digits(lo, hi) == expected
    assert interval_digits(*as_mpf) == expected


def _ratio(v):
    sign, man, exp, _ = v._mpf_
    man = -int(man) if sign else int(man)
    return (man << exp, 1) if exp >= 0 else (man, 1 << -exp)


def test_width_of_exactly_a_power_of_ten():
    for d in range(0, 40):
        lo = Fraction(10) ** 50
        assert interval_digits(lo, lo + lo / 10**d) == d
        assert interval_digits(lo, lo + lo / 10**d + 1) == max(d - 1, 0)


def test_degenerate_intervals():
    assert interval_digits(-1.0, 1.0) == 0  # contains 0
    assert interval_digits(0.0, 1.0) == 0
    assert interval_digits(2.0, 1.0) == 0  # empty
    assert interval_digits(mpmath.mpf("-inf"), 1.0) == 0
    assert interval_digits(1.0, mpmath.nan) == 0
    assert interval_digits(None, 1.0) == 0
    assert interval_digits(3.0, 3.0) == EXACT_DIGITS
    tiny = Fraction(1, 2**3000)
    assert interval_digits(Fraction(1), 1 + tiny) == 903  # floor(3000 log10 2)
    assert interval_digits(Fraction(1), 1 + Fraction(1, 10**(EXACT_DIGITS + 5))) == EXACT_DIGITS


def test_agreeing_digits_match_decimal():
    assert agreeing_digits(1.0, 1.0) == EXACT_DIGITS
    assert agreeing_digits(1.0, 0.0) == 0
    close = mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(2**70 + 1, -570))  # 2^-500 (1 + 2^-70), exact
    for a, b in ((1.0, 1.001), (mpmath.mpf(2) ** -500, close)):
        fa, fb = (Fraction(x) if isinstance(x, float) else Fraction(*_ratio(x)) for x in (a, b))
        width = _CTX.divide(_decimal(abs(fa - fb)), _decimal(abs(fb)))
        expected = max(0, int(_CTX.minus(width.log10(_CTX)).to_integral_value(rounding=decimal.ROUND_FLOOR)))
        assert agreeing_digits(a, b) == expected
