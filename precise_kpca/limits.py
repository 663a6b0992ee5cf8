"""Resource limits: a request that could run for hours or fill the memory is refused before any work starts.

Each limit is checked where the request enters the library (the bandwidth parser, the backend factory, the measure
and sweep entry points), and a refusal is a :class:`~precise_kpca.errors.ResourceLimitExceeded` naming the
parameter, the limit, the estimated cost of the request and how to lift the limit. No library offers this (the
costs are those of this package's algorithms), hence the module.

=========================  =========  =========================================================================
limit                      default    bounds
=========================  =========  =========================================================================
``max_dps``                10000      mp working precision (decimal digits) asked through ``dps``
``max_digits``             10000      certified digits asked of a measure or a sweep
``max_seconds``            1800       estimated time of the mp evaluations a request would start (the heuristic
                                      route of the measures, the estimator's mp path)
``max_log2_sigma``         10000      abs(log2 σ): σ = 2^±10000 prints in 3011 digits (Python's limit is 4300)
``max_sigma_chars``        2000       characters of a σ string
``max_points``             200000     points of one sweep (curves, reproduce)
=========================  =========  =========================================================================

Lifting a limit: set the environment variable ``PRECISE_KPCA_<LIMIT>`` (e.g. ``PRECISE_KPCA_MAX_DPS=100000``)
before the process starts, or in code ``with precise_kpca.limits.lifted(max_dps=100_000): ...`` (or
:func:`set_limits` for the rest of the process). Lifting a limit lifts only the refusal: the cost stays what the
estimate says.

The estimates are rough by design (within a factor of a few, on the safe side); their constants were measured on
this project's shared 2-core machine under its usual load (about 7 busy processes per core): an mpmath ``expm1``
takes 0.29 ms at 50 digits, 1.2 ms at 1000, 32 ms at 10000 (:func:`mp_entry_seconds`); an mpf of ``dps`` digits
holds ~0.42·dps bytes plus ~100 bytes of object overhead; the eigen measures by agreement on wine subsets
(:func:`heuristic_seconds`).
"""
from __future__ import annotations

import math
import os
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace

ENV_PREFIX = "PRECISE_KPCA_"


@dataclass(frozen=True)
class Limits:
    """The resource limits (module docstring); every field is an integer."""

    max_dps: int = 10_000
    max_digits: int = 10_000
    max_seconds: int = 1800
    max_log2_sigma: int = 10_000
    max_sigma_chars: int = 2000
    max_points: int = 200_000


def _from_environment() -> Limits:
    values = {}
    for f in fields(Limits):
        text = os.environ.get(ENV_PREFIX + f.name.upper())
        if text is None:
            continue
        try:
            values[f.name] = int(text)
        except ValueError:
            raise ValueError(f"environment variable {ENV_PREFIX + f.name.upper()}={text!r} must be an integer") from None
    return Limits(**values)


_current = _from_environment()


def current() -> Limits:
    """The limits in force."""
    return _current


def set_limits(**changes: int) -> Limits:
    """Change limits for the rest of the process (names as the fields of :class:`Limits`); returns the old ones."""
    global _current
    old = _current
    unknown = set(changes) - {f.name for f in fields(Limits)}
    if unknown:
        raise ValueError(f"unknown limit(s) {sorted(unknown)}; the limits are {[f.name for f in fields(Limits)]}")
    for name, value in changes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"limit {name} must be a positive integer, got {value!r}")
    _current = replace(_current, **changes)
    return old


@contextmanager
def lifted(**changes: int):
    """Context manager: the limits ``changes`` inside the block, the previous ones after it."""
    global _current
    old = set_limits(**changes)
    try:
        yield _current
    finally:
        _current = old


def lift_hint(limit: str) -> str:
    """How to lift one limit (the end of every refusal)."""
    return (f"to lift it set {ENV_PREFIX}{limit.upper()} or use precise_kpca.limits.lifted({limit}=...) "
            "(the cost stays as estimated)")


def _refuse(parameter: str, limit: str, value, estimate: str):
    from .errors import ResourceLimitExceeded

    raise ResourceLimitExceeded(parameter, limit, value, getattr(_current, limit), estimate)


# -- cost models -----------------------------------------------------------------------------------------------
_MPF_OVERHEAD_BYTES = 100


def mp_entry_seconds(dps: int) -> float:
    """Estimated seconds of one mpmath ``expm1`` at ``dps`` digits: 2.9e-4·(1 + (dps/500)^1.5) (module docstring:
    0.29 ms at 50 digits, 1.1 ms at 1000, 26 ms at 10000)."""
    return 2.9e-4 * (1 + (dps / 500) ** 1.5)


def mp_entry_bytes(dps: int) -> float:
    """Estimated bytes of one mpf at ``dps`` digits."""
    return 0.42 * dps + _MPF_OVERHEAD_BYTES


def describe_seconds(seconds: float) -> str:
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def describe_bytes(size: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size:.0f} B"


# -- checks ----------------------------------------------------------------------------------------------------
def check_dps(dps: int, *, parameter: str = "dps", n: int = 100) -> None:
    """Refuse a working precision beyond ``max_dps`` (estimate for an n×n mp matrix)."""
    if dps > _current.max_dps:
        _refuse(parameter, "max_dps", dps, f"a {n}x{n} mp matrix at this precision holds about "
                f"{describe_bytes(n * n * mp_entry_bytes(dps))} and one elementwise exp over it takes about "
                f"{describe_seconds(n * n * mp_entry_seconds(dps))}")


def check_digits(digits: int, *, parameter: str = "digits") -> None:
    """Refuse a digit request beyond ``max_digits``."""
    if digits > _current.max_digits:
        _refuse(parameter, "max_digits", digits, f"an mp evaluation at {digits + 20} digits holds about "
                f"{describe_bytes(mp_entry_bytes(digits + 20))} per number and its exp takes about "
                f"{describe_seconds(mp_entry_seconds(digits + 20))}")


def check_log2_sigma(log2_sigma: float, *, parameter: str = "sigma", shown: str | None = None) -> None:
    """Refuse a bandwidth with abs(log2 σ) beyond ``max_log2_sigma`` (``shown``: the request as it is printed)."""
    if abs(log2_sigma) > _current.max_log2_sigma:
        digits = abs(log2_sigma) * math.log10(2)
        _refuse(parameter, "max_log2_sigma", shown if shown is not None else f"2**{log2_sigma:.6g}",
                f"|log2 sigma| = {abs(log2_sigma):.4g}: the exact value has ~{digits:.3g} decimal digits (Python prints "
                f"at most 4300) and evaluations at this bandwidth need ~{4 * digits:.3g} digits of mp precision, about "
                f"{describe_seconds(mp_entry_seconds(4 * digits))} per exp")


def check_sigma_text(text: str, *, parameter: str = "sigma") -> None:
    """Refuse a σ string longer than ``max_sigma_chars``."""
    if len(text) > _current.max_sigma_chars:
        _refuse(parameter, "max_sigma_chars", f"<a string of {len(text)} characters>",
                f"parsing it builds integers of ~{len(text)} digits")


def check_points(points: int, *, parameter: str, seconds_per_point: float = 0.01) -> None:
    """Refuse a sweep of more than ``max_points`` points (estimate: ``seconds_per_point`` each, ~2 KB stored)."""
    if points > _current.max_points:
        _refuse(parameter, "max_points", f"<{points} points>",
                f"at least {describe_seconds(points * seconds_per_point)} of computing at "
                f"{seconds_per_point * 1e3:.0f} ms per point and {describe_bytes(points * 2000)} of results")


_EIGEN_MEASURES = ("eigenvalue", "eigenprojection", "pc")
_WARN_SECONDS = 60.0


def heuristic_seconds(n: int, measure: str, dps: int) -> float:
    """Estimated seconds of the heuristic route (two mp evaluations at about ``dps`` digits) on N = ``n`` rows.

    Eigen measures: 0.07·N^1.44·(1 + (dps/200)^2.33), fitted to the eigenvalue measure on wine subsets (N = 178 at
    dps 58, 118, 318: 132 s, 158 s, 488 s; N = 40 and 80 at dps 318: 26 s and 72 s, overestimated twofold). The
    others: 10 elementwise mp passes over N² entries.
    """
    if measure in _EIGEN_MEASURES:
        return 0.07 * n**1.44 * (1 + (dps / 200) ** 2.33)
    return 10 * n * n * mp_entry_seconds(dps)


def check_heuristic(n: int, measure: str, *, backend: str, guarantee: str, digits: int, dps) -> None:
    """Before a measure by agreement of two mp evaluations (``guarantee="heuristic"``, or an explicit backend
    ``"float64"``/``"mp"``): warn (RuntimeWarning) when it is estimated to take over a minute, refuse it beyond
    ``max_seconds``. Nothing for the rigorous routes (they answer at once, short of digits they cannot
    reach)."""
    if backend in ("float64", "mp"):
        work, parameter, value = (dps or 15) + 20, "dps" if backend == "mp" else "backend", dps or backend
    elif backend == "auto" and guarantee == "heuristic" and measure != "metric":
        work, parameter, value = digits + 20, "digits", digits
    else:
        return
    seconds = heuristic_seconds(n, measure, work)
    if seconds > _current.max_seconds:
        _refuse(parameter, "max_seconds", value,
                f"the heuristic route's two mp evaluations of {measure} at ~{work} digits on N={n} rows are estimated "
                f"at {describe_seconds(seconds)}; the rigorous routes (guarantee='rigorous', backend='auto') answer "
                "at once, short of such digits")
    if seconds > _WARN_SECONDS:
        import warnings

        warnings.warn(f"{measure} by agreement at ~{work} digits on N={n} rows: estimated {describe_seconds(seconds)}",
                      RuntimeWarning, stacklevel=3)


def check_mp_eigensystem(n: int, dps: int, *, parameter: str, value) -> None:
    """Refuse an mp Gram and eigensystem of an n×n matrix at ``dps`` digits estimated beyond ``max_seconds`` (two
    elementwise passes, and half the heuristic route's estimate: one eigensystem instead of two), and a precision
    beyond ``max_dps``."""
    check_dps(dps, parameter=f"{parameter} (through dps={dps})", n=n)
    seconds = 2 * n * n * mp_entry_seconds(dps) + heuristic_seconds(n, "eigenvalue", dps) / 2
    if seconds > _current.max_seconds:
        _refuse(parameter, "max_seconds", value, f"an mp eigensystem of a {n}x{n} matrix at dps={dps} is estimated at "
                f"{describe_seconds(seconds)}")


__all__ = ["Limits", "check_digits", "check_dps", "check_heuristic", "check_log2_sigma", "check_mp_eigensystem",
           "check_points", "check_sigma_text", "current", "heuristic_seconds", "lifted", "set_limits"]
