"""arith/balls: exact reads of arb balls, checked against exact rationals (Fractions) — not against flint's own
lower()/upper(), which round to the ambient precision."""
from fractions import Fraction

import flint
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.arith.balls import ends_fraction, exact_fraction, mid_fraction, radius_fraction

PREC = 300


@settings(max_examples=200, deadline=None)
@given(st.integers(-10**40, 10**40), st.integers(1, 10**40))
def test_ends_enclose_the_value_at_the_balls_own_precision_whatever_the_ambient_one(p, q):
    exact = Fraction(p, q)
    with flint.ctx.workprec(PREC):
        ball = flint.arb(flint.fmpq(p, q))
    lo, hi = ends_fraction(ball)  # read outside the workprec block: flint's ambient precision is 53 bits
    assert lo <= exact <= hi
    assert hi - lo <= abs(exact) * Fraction(2) ** (3 - PREC) or exact == 0 or (hi == lo == exact)
    assert (lo + hi) / 2 == mid_fraction(ball) and (hi - lo) / 2 == radius_fraction(ball)


@given(st.integers(-2**200, 2**200), st.integers(-400, 400))
def test_exact_fraction_of_a_binary_float(man, exp):
    with flint.ctx.workprec(260):
        x = flint.arb(man) * flint.arb(2) ** exp  # exact: 201 bits fit
    assert x.rad() == 0 and exact_fraction(x) == Fraction(man) * Fraction(2) ** exp


def test_flints_own_ends_lose_what_these_keep():
    """The failure this module exists for: a 300-bit ball's lower() outside workprec keeps ~16 digits."""
    with flint.ctx.workprec(PREC):
        ball = flint.arb(1) / 3
    lo, hi = ends_fraction(ball)
    rounded = exact_fraction(ball.lower())
    assert hi - lo < Fraction(1, 10**85) and Fraction(1, 3) - rounded > Fraction(1, 10**20)
