"""A measured value with its certified digits, and the agreement rule that certifies it."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath


@dataclass(frozen=True)
class Measurement:
    """One convergence measure at one bandwidth.

    Attributes
    ----------
    measure : str
        ``"metric"``, ``"eigenvalue"``, ``"eigenprojection"``, ``"pc"`` or ``"cka"``.
    sigma : Fraction
        Standardized bandwidth, exact.
    k : int or None
        Number of top eigenvalues (eigenprojection, pc).
    value : float or mpmath.mpf
        The un-normalized measure (ratio inside log2 of Eqs. 17–18; EigenDist of Alg. 1 in radians).
        An ``mpf`` where the value is outside the float range.
    normalized : float or mpmath.mpf
        log2 value − log2 f(0) (Eq. 16).
    certified_digits : int
        Significant digits of ``value`` that the ``method`` certifies (0: none checked).
    backend : str
        The arithmetic of the reported value (``"float64"``, ``"mp"``, ``"arb"``, ``"float64-naive"``).
    dps : int
        Its working precision in decimal digits.
    method : str
        How the digits were certified.
    seconds : float
        Wall time of the whole measurement, certification included.
    """

    measure: str
    sigma: Fraction
    k: int | None
    value: object
    normalized: object
    certified_digits: int
    backend: str
    dps: int
    method: str
    seconds: float = 0.0
    details: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def log2_sigma(self) -> float:
        return math.log2(self.sigma.numerator) - math.log2(self.sigma.denominator)


def agreeing_digits(a, b) -> int:
    """Significant decimal digits on which two evaluations agree: floor(−log10 |a − b| / |b|), ≥ 0.

    Both are read exactly (floats and mpf are dyadic); the difference is taken in a private context wide
    enough to be exact for any float or mpf up to 10⁴ bits.
    """
    ctx = mpmath.MPContext()
    ctx.prec = 20000
    a, b = ctx.mpf(_exact(a)), ctx.mpf(_exact(b))
    if a == b:
        return 10**6  # identical: limited only by the evaluations' own precision
    if b == 0:
        return 0
    gap = abs(a - b) / abs(b)
    return max(0, int(ctx.floor(-ctx.log10(gap))))


def _exact(x):
    mpf_tuple = getattr(x, "_mpf_", None)
    if mpf_tuple is not None:
        return mpmath.mp.make_mpf(mpf_tuple)
    return x
