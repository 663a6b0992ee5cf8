"""Exact values of python-flint's arb balls as Fractions: the one place that reads a ball's parts.

An arb ball is mid ± rad with mid and rad exact binary floats (arf); their ``man_exp()`` pairs are exact, so a
ball's midpoint, radius and ends mid ∓ rad are exact rationals. The ends are formed here from mid and rad, not by
flint's ``lower()``/``upper()``, which round outward to the ambient precision (53 bits outside a ``workprec``
block): rigorous, but it can cost every digit past 16. Hand-written: python-flint converts arb to float or string,
not to an exact rational.
"""
from __future__ import annotations

from fractions import Fraction


def exact_fraction(x) -> Fraction:
    """An exact binary float — an ``arf``, or an ``arb`` of radius 0 such as a ball's ``mid()`` or ``upper()`` — as
    a Fraction (``man_exp`` raises on an arb of nonzero radius)."""
    man, exp = (int(v) for v in x.man_exp())
    return Fraction(man << exp) if exp >= 0 else Fraction(man, 1 << -exp)


def mid_fraction(ball) -> Fraction:
    """The midpoint of an arb ball, exactly."""
    return exact_fraction(ball.mid())


def radius_fraction(ball) -> Fraction:
    """The radius of an arb ball, exactly."""
    return exact_fraction(type(ball)(ball.rad()))


def ends_fraction(ball) -> tuple[Fraction, Fraction]:
    """The ends (mid − rad, mid + rad) of an arb ball, exactly, whatever flint's current precision."""
    mid, rad = mid_fraction(ball), radius_fraction(ball)
    return mid - rad, mid + rad


__all__ = ["ends_fraction", "exact_fraction", "mid_fraction", "radius_fraction"]
