"""A measured value, the interval behind it, and the guarantee that interval carries.

The guarantee is data, not prose (python-flint's balls are the model): a :class:`Measurement` holds the ends of an
interval, says what the interval is (``guarantee``), and derives its certified digits from the interval alone.

* ``"rigorous"`` — ``[lower, upper]`` provably contains the exact value of the measure for the exact input (an
  enclosure: ball arithmetic, or a-posteriori bounds on exact products);
* ``"heuristic"`` — ``[lower, upper]`` spans two evaluations at different precisions that agree (mpmath's
  ``autoprec`` idea, which its documentation calls "easily fooled"); returned only when the caller asks for it;
* ``"none"`` — nothing is checked (the paper's float64 arithmetic), or the value is undetermined (NaN, with the
  reason in ``reason``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath

GUARANTEES = ("rigorous", "heuristic", "none")


@dataclass(frozen=True)
class Route:
    """How a value was computed and what certifies it.

    Attributes
    ----------
    engine : str
        The computation: ``"arb-ball"``, ``"binary128-enclosure"``, ``"structured-enclosure"``,
        ``"frobenius-enclosure"``, ``"agreement"``, ``"naive"``.
    certificate : str
        The theorem or rule behind the interval (e.g. ``"Kato-Temple, Davis-Kahan"``).
    detail : str
        Parameters of this run (precisions, block sizes).
    """

    engine: str
    certificate: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.engine} ({self.certificate})" + (f"; {self.detail}" if self.detail else "")


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
        The un-normalized measure (ratio inside log2 of Eqs. 17–18; EigenDist of Alg. 1 in radians): the midpoint
        of ``[lower, upper]``. An ``mpf`` where more than 15 digits are certified or the value is outside the float
        range; NaN when undetermined.
    normalized : float or mpmath.mpf
        log2 value − log2 f(0) (Eq. 16).
    backend : str
        The arithmetic of the reported value (``"float64"``, ``"mp"``, ``"arb"``, ``"float64-naive"``).
    dps : int
        Its working precision in decimal digits.
    method : str
        Human-readable account of the computation (never parsed: use ``guarantee``, ``route``, ``reason``).
    seconds : float
        Wall time of the whole measurement, certification included.
    lower, upper : mpmath.mpf or None
        Ends of the interval behind ``value`` (exact binary numbers; None when there is none).
    normalized_lower, normalized_upper : mpmath.mpf or None
        The same for ``normalized``.
    guarantee : {"rigorous", "heuristic", "none"}
        What the interval is (module docstring).
    route : Route or None
    reason : str
        Why the value is undetermined, or why fewer digits than requested were certified; empty otherwise.
    requested_digits : int or None
        The digits the caller asked for.
    certified_digits : int
        Derived from ``[lower, upper]`` by :func:`interval_digits` (0 for guarantee ``"none"``).
    """

    measure: str
    sigma: Fraction
    k: int | None
    value: object
    normalized: object
    backend: str
    dps: int
    method: str
    seconds: float = 0.0
    details: dict = field(default_factory=dict, compare=False, repr=False)
    lower: object = None
    upper: object = None
    normalized_lower: object = None
    normalized_upper: object = None
    guarantee: str = "none"
    route: Route | None = None
    reason: str = ""
    requested_digits: int | None = None
    certified_digits: int = field(init=False)

    def __post_init__(self):
        if self.guarantee not in GUARANTEES:
            raise ValueError(f"guarantee must be one of {GUARANTEES}, got {self.guarantee!r}")
        if self.guarantee != "none" and (self.lower is None or self.upper is None):
            raise ValueError(f"a {self.guarantee} measurement needs the ends of its interval")
        digits = interval_digits(self.lower, self.upper) if self.guarantee != "none" else 0
        object.__setattr__(self, "certified_digits", digits)

    @property
    def log2_sigma(self) -> float:
        return math.log2(self.sigma.numerator) - math.log2(self.sigma.denominator)

    @property
    def determined(self) -> bool:
        """False when the value is NaN because it depends on an arbitrary choice (see ``reason``)."""
        return not _is_nan(self.value)

    @property
    def short(self) -> bool:
        """True when fewer digits than requested were certified (``reason`` says why)."""
        return self.requested_digits is not None and self.certified_digits < self.requested_digits


def interval_digits(lower, upper) -> int:
    """Significant decimal digits every point of ``[lower, upper]`` shares with its midpoint.

    ``floor(−log10(w))`` with the relative width w = (upper − lower) / min(|lower|, |upper|): the midpoint is then
    within w/2 < 10^(−digits)/2 of every point, relatively. 0 for an interval that contains 0, is unbounded or NaN;
    a point interval (lower == upper ≠ 0) is exact and gets :data:`EXACT_DIGITS`. Decided in exact rational
    arithmetic (the ends are dyadic), so a width of exactly 10^(−d) gives d.
    """
    lo, hi = _finite_fraction(lower), _finite_fraction(upper)
    if lo is None or hi is None or hi < lo or lo <= 0 <= hi:
        return 0
    if lo == hi:
        return EXACT_DIGITS
    return _decimal_digits(hi - lo, min(abs(lo), abs(hi)))


def _decimal_digits(num: Fraction, den: Fraction) -> int:
    """floor(−log10(num/den)) for rationals num, den > 0, at least 0 and at most :data:`EXACT_DIGITS`: the
    largest d with num·10^d ≤ den, from a float estimate (math.log10 takes integers of any size) corrected by
    exact comparisons."""
    ratio = den / num
    estimate = math.floor(math.log10(ratio.numerator) - math.log10(ratio.denominator))
    if estimate > EXACT_DIGITS + 1:
        return EXACT_DIGITS
    d = min(max(0, estimate), EXACT_DIGITS)
    while d > 0 and num * 10**d > den:
        d -= 1
    while d < EXACT_DIGITS and num * 10 ** (d + 1) <= den:
        d += 1
    return d


def _finite_fraction(x) -> Fraction | None:
    """The exact rational value of a float, int, Fraction or mpf (any context); None for None, NaN or ±inf."""
    if x is None:
        return None
    mpf_tuple = getattr(x, "_mpf_", None)
    if mpf_tuple is not None:
        sign, man, exp, _ = mpf_tuple
        if not man:
            return Fraction(0) if mpf_tuple == mpmath.libmp.fzero else None  # 0, or NaN / ±inf
        value = Fraction(int(man) << exp) if exp >= 0 else Fraction(int(man), 1 << -exp)
        return -value if sign else value
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    x = float(x)
    return Fraction(x) if math.isfinite(x) else None


EXACT_DIGITS = 10**6
"""Digits of a point interval: exact, limited only by how the value is printed."""


def agreeing_digits(a, b) -> int:
    """Significant decimal digits on which two evaluations agree: floor(−log10 |a − b| / |b|), ≥ 0.

    Both are read exactly (floats and mpf are dyadic) and compared in exact rational arithmetic.
    """
    a, b = _finite_fraction(a), _finite_fraction(b)
    if a is None or b is None:
        return 0
    if a == b:
        return EXACT_DIGITS  # identical: limited only by the evaluations' own precision
    if b == 0:
        return 0
    return _decimal_digits(abs(a - b), abs(b))


def exact_mpf(x):
    """A global-type ``mpf`` with exactly the value of x (float, int, Fraction with a power-of-two denominator, any
    mpf); rationals that are not dyadic are refused (they have no exact binary form)."""
    if isinstance(x, Fraction):
        if x.denominator & (x.denominator - 1):
            raise ValueError(f"{x} is not a dyadic rational: it has no exact binary form")
        return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(x.numerator, -(x.denominator.bit_length() - 1)))
    if getattr(x, "_mpf_", None) is not None:
        return _exact(x)
    if isinstance(x, int):
        return mpmath.mp.make_mpf(mpmath.libmp.from_int(x))
    return mpmath.mp.make_mpf(mpmath.libmp.from_float(float(x)))  # floats are dyadic: exact


def _exact(x):
    mpf_tuple = getattr(x, "_mpf_", None)
    if mpf_tuple is not None:
        return mpmath.mp.make_mpf(mpf_tuple)
    return x


def _is_nan(x) -> bool:
    if x is None:
        return False
    mpf_tuple = getattr(x, "_mpf_", None)
    if mpf_tuple is not None:
        return mpmath.isnan(mpmath.mp.make_mpf(mpf_tuple))
    try:
        return math.isnan(x)
    except TypeError:
        return False
