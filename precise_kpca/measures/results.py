"""Building :class:`~.measurement.Measurement` objects: one constructor per guarantee.

Each constructor takes what its guarantee rests on — the ends of a rigorous enclosure, the two agreeing
evaluations of the heuristic, the unchecked value — and derives the reported value, the normalized value (Eq. 16)
and, through the Measurement itself, the certified digits. The reported value of an interval is its exact midpoint.
"""
from __future__ import annotations

import math
import time
import warnings
from fractions import Fraction

import flint
import mpmath

from ..arith.balls import ends_fraction
from .measurement import Measurement, Route, exact_mpf, interval_digits

ONE = mpmath.mpf(1)
_NORMALIZED_PREC = 113  # the normalized point value is a float: 113 bits leave its rounding to the last step


def rigorous(name, sigma, k, *, lo, hi, f0, start, digits, route: Route, method, backend="mp", dps=None,
             f0_enclosed=True) -> Measurement:
    """A rigorous result: [lo, hi] encloses the value; f0 = (lo, hi) encloses the normalizer f(0) when
    ``f0_enclosed`` (the normalized value then gets a rigorous interval too), else f0 is a point value."""
    lo, hi = exact_mpf(lo), exact_mpf(hi)
    value = exact_midpoint(lo, hi)
    certified = interval_digits(lo, hi)
    n_lo = n_hi = None
    if f0_enclosed and lo > 0:
        n_lo, n_hi = log2_ratio_interval(lo, hi, *f0)
    reason = ""
    if digits is not None and certified < digits:
        reason = f"the rigorous interval certifies {certified} of the {digits} digits requested ({route.engine})"
        method = f"FAILED to certify {digits} digits ({certified} certified): " + method
    return Measurement(measure=name, sigma=sigma, k=k, value=public_value(value, certified),
                       normalized=normalized_point(value, *f0), backend=backend,
                       dps=dps if dps is not None else max(15, min(certified, 10**4) + 2), method=method,
                       seconds=time.perf_counter() - start, lower=lo, upper=hi, normalized_lower=n_lo,
                       normalized_upper=n_hi, guarantee="rigorous", route=route, reason=reason,
                       requested_digits=digits)


def heuristic(name, sigma, k, *, first, second, at_zero, start, digits, route: Route, method, backend,
              dps, first_dps) -> Measurement:
    """Agreement of two evaluations: the interval is second ∓ max(10·|first − second|, 10^(−first_dps)·|second|)
    (one digit fewer than they agree on, and no more than the coarser evaluation carries). Not an enclosure:
    ``guarantee="heuristic"``."""
    v1, v2 = exact_mpf(first), exact_mpf(second)
    ctx = mpmath.MPContext()
    ctx.prec = max(_bits(v1), _bits(v2)) + abs(_exponent(v1) - _exponent(v2)) + 16
    spread = max(10 * abs(ctx.mpf(v1) - ctx.mpf(v2)), abs(ctx.mpf(v2)) * ctx.mpf(10) ** -first_dps)
    lo, hi = (mpmath.mp.make_mpf(x._mpf_) for x in (ctx.mpf(v2) - spread, ctx.mpf(v2) + spread))
    certified = interval_digits(lo, hi)
    reason = ""
    if digits is not None and certified < digits:
        reason = f"the two evaluations agree on {certified} of the {digits} digits requested"
        method = f"FAILED to certify {digits} digits ({certified} certified): " + method
    f0 = exact_mpf(at_zero)
    return Measurement(measure=name, sigma=sigma, k=k, value=public_value(v2, certified),
                       normalized=normalized_point(v2, f0, f0), backend=backend, dps=dps, method=method,
                       seconds=time.perf_counter() - start, lower=lo, upper=hi, guarantee="heuristic", route=route,
                       reason=reason, requested_digits=digits)


def unchecked(name, sigma, k, *, value, at_zero, start, method, route: Route, backend, dps) -> Measurement:
    """guarantee="none": the value as computed (the paper's float64 arithmetic), nothing checked."""
    value, f0 = float(value), float(at_zero)
    normalized = math.log2(value) - math.log2(f0) if value > 0 else (-math.inf if value == 0 else math.nan)
    return Measurement(measure=name, sigma=sigma, k=k, value=value, normalized=normalized, backend=backend,
                       dps=dps, method=method, seconds=time.perf_counter() - start, guarantee="none", route=route)


def undetermined(name, sigma, k, *, reason: str, start, digits, route: Route | None = None,
                 warn: bool = True) -> Measurement:
    """No value: NaN, guarantee "none", and the reason (a tie, or what precision would be needed)."""
    method = f"FAILED to certify: {reason}"
    if warn:
        warnings.warn(f"{name} at sigma={sigma}: {method}", RuntimeWarning, stacklevel=4)
    return Measurement(measure=name, sigma=sigma, k=k, value=math.nan, normalized=math.nan, backend="none", dps=0,
                       method=method, seconds=time.perf_counter() - start, guarantee="none", route=route,
                       reason=reason, requested_digits=digits)


# -- helpers ------------------------------------------------------------------------------------------------
def exact_midpoint(lo, hi):
    """(lo + hi)/2 exactly, for dyadic mpf ends (libmp's exact addition: prec 0; no context to build)."""
    lo, hi = exact_mpf(lo), exact_mpf(hi)
    return mpmath.mp.make_mpf(mpmath.libmp.mpf_shift(mpmath.libmp.mpf_add(lo._mpf_, hi._mpf_, 0), -1))


def _bits(x) -> int:
    return max(int(x._mpf_[3]), 1)


def _exponent(x) -> int:
    return int(x._mpf_[2]) if x else 0


def public_value(value, certified: int):
    """A float where that holds every certified digit (≤ 14: a float's rounding, up to 1.1e-16 relative, then stays
    inside the interval) and the value is in range, else the exact mpf."""
    as_float = float(value)
    fits = certified <= 14 and as_float != 0 and math.isfinite(as_float)  # its rounding stays inside the interval
    return as_float if fits else exact_mpf(value)


def normalized_point(value, f0_lo, f0_hi):
    """log2 value − log2 f(0) (Eq. 16) as a float, f(0) the midpoint of its interval; NaN without f(0).

    Evaluated with libmp at 113 bits (the value may lie outside the float range; the float rounding comes last).
    """
    if f0_lo is None:
        return math.nan
    lib, prec = mpmath.libmp, _NORMALIZED_PREC
    v = exact_mpf(value)._mpf_
    if v == lib.fzero:
        return -math.inf
    if v[0] or v in (lib.fnan, lib.finf, lib.fninf):
        return math.nan
    f0 = exact_midpoint(f0_lo, f0_hi)._mpf_
    if f0 == lib.fzero:
        return math.inf
    ratio = lib.mpf_div(v, f0, prec, lib.round_nearest)
    return lib.to_float(lib.mpf_div(lib.mpf_log(ratio, prec), lib.mpf_ln2(prec), prec, lib.round_nearest))


def log2_ratio_interval(lo, hi, f0_lo, f0_hi):
    """Rigorous ends of log2(x/f) over x ∈ [lo, hi], f ∈ [f0_lo, f0_hi] (arb balls on the exact dyadic ends)."""
    ends = [exact_mpf(x) for x in (lo, hi, f0_lo, f0_hi)]
    with flint.ctx.workprec(max(map(_bits, ends)) + 64):
        a, b, c, d = (_to_arb(x) for x in ends)
        log2 = flint.arb(2).log()
        return arb_ends((a / d).log() / log2)[0], arb_ends((b / c).log() / log2)[1]


def _to_arb(x):
    sign, man, exp, _ = x._mpf_
    return flint.arb(-int(man) if sign else int(man)) * flint.arb(2) ** int(exp)


def arb_ends(ball) -> tuple:
    """The ends mid ∓ rad of an arb ball as exact global-type mpf, whatever flint's current precision
    (:func:`~precise_kpca.arith.balls.ends_fraction`; the metric measure's ends were read at 53 bits: 15 digits of
    30 asked).

    Raises
    ------
    InsufficientPrecision
        The ball is not finite (a bound could not be carried through at this precision).
    """
    if not ball.is_finite():
        from ..errors import InsufficientPrecision

        raise InsufficientPrecision(f"an enclosure became unbounded ({ball}): its inputs are not separated enough")
    return tuple(exact_mpf(end) for end in ends_fraction(ball))


def fraction_ends(lo: Fraction, hi: Fraction, prec: int = 256) -> tuple:
    """[lo, hi] rounded outward to ``prec``-bit global-type mpf (rationals that are not dyadic have no exact form)."""
    lib = mpmath.libmp
    return (mpmath.mp.make_mpf(lib.from_rational(lo.numerator, lo.denominator, prec, lib.round_floor)),
            mpmath.mp.make_mpf(lib.from_rational(hi.numerator, hi.denominator, prec, lib.round_ceiling)))
