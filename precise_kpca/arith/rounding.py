"""Directed rounding: float64 bounds on exact (rational) quantities, rounded in the stated direction."""
from __future__ import annotations

import math
from fractions import Fraction


def float_up(x: Fraction | float) -> float:
    """The least float64 >= x (x >= 0); inf beyond float64's range."""
    try:
        f = float(x)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)
