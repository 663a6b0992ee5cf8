"""One default ``measure(...)`` call checked against the independent reference (tests/reference.py).

Shared by the property tests of issue 19 (``test_rigorous_properties.py``): :func:`check_point` runs the library's
default call and the reference at twice the certified digits, asserts what a rigorous result promises, and returns
what happened (for the counts the tests report). Comparisons run in a private mpmath context of
:data:`COMPARE_PREC` bits, wide enough to hold every interval end and reference value exactly (the ends are
≤ 320-bit arb or 256-bit rational roundings, the reference ≤ ~600 bits); the global ``mp`` (53 bits) is never
used for a comparison.
"""
from __future__ import annotations

import math
import warnings
from collections import Counter
from fractions import Fraction

import mpmath
import numpy as np

import precise_kpca

from .reference import exact_rank, exact_rows, reference

COMPARE_PREC = 8192
REFERENCE_MAX_DIGITS = 60  # past this many certified digits the reference at 2×60 + 20 digits still decides
REFERENCE_MAX_ESCALATION = 480  # a tie floor of 10^-490: below any gap the refined route (≤ 200 digits) resolves
OUTCOMES = ("rigorous", "short", "tie-refused", "near-tie-refused", "k-beyond-rank")


def compare_context() -> mpmath.MPContext:
    ctx = mpmath.MPContext()
    ctx.prec = COMPARE_PREC
    return ctx


def in_context(ctx, x):
    """x (float or mpf of any context) in ``ctx``, without rounding."""
    mpf_tuple = getattr(x, "_mpf_", None)
    return ctx.make_mpf(mpf_tuple) if mpf_tuple is not None else ctx.mpf(float(x))  # floats are dyadic: exact


def check_point(X: np.ndarray, name: str, p: int, k: int = 1, aggregate: str = "mean",
                counts: Counter | None = None) -> str:
    """Run ``measure(X, name, 2**p, k=k, aggregate=aggregate)`` (every other option default) and check it.

    Returns
    -------
    str
        One of :data:`OUTCOMES`; also counted in ``counts`` when given.
    """
    outcome = _check(X, name, p, k, aggregate)
    if counts is not None:
        counts[outcome] += 1
    return outcome


def _check(X, name, p, k, aggregate) -> str:
    sigma = Fraction(2) ** p
    if name in ("eigenprojection", "pc") and k > exact_rank(exact_rows(X)):
        try:
            precise_kpca.measure(X, name, sigma, k=k, aggregate=aggregate)
        except ValueError as exc:
            assert f"k={k}" in str(exc) and "rank" in str(exc), exc
            return "k-beyond-rank"
        raise AssertionError(f"k={k} beyond the exact rank was not refused")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # short or undetermined points warn; checked below
        m = precise_kpca.measure(X, name, sigma, k=k, aggregate=aggregate)
    assert m.guarantee != "heuristic", f"the default call returned heuristic digits: {m.method}"
    return check_measurement(m, X, aggregate)


def check_measurement(m, X: np.ndarray, aggregate: str = "mean") -> str:
    """The promises of a Measurement ``m`` of ``X`` (not heuristic) against the reference; returns the outcome."""
    name, sigma, k = m.measure, m.sigma, m.k or 1
    if not m.determined:
        return _check_refusal(X, name, sigma, k, aggregate, m)
    assert m.guarantee == "rigorous", f"a number without a rigorous interval: {m.guarantee}, {m.method}"
    digits = min(m.certified_digits, REFERENCE_MAX_DIGITS)
    ref_digits = max(digits, 10)
    ref, ref_digits = _resolving_reference(X, name, sigma, ref_digits, k, aggregate)
    where = f"{name} k={k} {aggregate} at sigma={sigma}"
    assert ref.determined, (f"{where} is a number ({m.value}, {m.certified_digits} digits) but the reference finds "
                            f"it basis-dependent: {ref.ties}")
    ctx = compare_context()
    lo, hi = in_context(ctx, m.lower), in_context(ctx, m.upper)
    want = _reference_value(ctx, ref)
    while not lo <= want <= hi and ref_digits < REFERENCE_MAX_ESCALATION:
        # the reference's own error is ~10^-dps/gap: across a near-tie of the Gaussian spectrum (σ = 1/16 on a
        # cyclic set: 4e-47 at 20 digits, 8e-163 at 40, exactly 0 by symmetry) only a finer reference decides
        ref, ref_digits = _resolving_reference(X, name, sigma, min(2 * ref_digits, REFERENCE_MAX_ESCALATION), k,
                                               aggregate)
        want = _reference_value(ctx, ref)
    assert lo <= want <= hi, (f"{where}: reference {mpmath.nstr(want, 40)} outside [{mpmath.nstr(lo, 40)}, "
                              f"{mpmath.nstr(hi, 40)}] ({m.route})")
    if m.certified_digits:
        error = abs(in_context(ctx, m.value) - want)
        assert error <= abs(want) * ctx.mpf(10) ** -m.certified_digits, (
            f"{where}: value {m.value} differs from the reference {mpmath.nstr(want, 30)} beyond its "
            f"{m.certified_digits} certified digits")
    _check_normalized(ctx, m, ref, where)
    return "short" if m.short else "rigorous"


def _reference_value(ctx, ref):
    """The reference value in ``ctx``. Every measure is ≥ 0 by definition (a max of |·|, an angle, a norm,
    1 − a cosine): a negative reference is its rounding of a value within its error of 0 (1 − CKA = 0 exactly on an
    equilateral triangle gave −1.6e-86)."""
    return max(in_context(ctx, ref.value), ctx.zero)


def _resolving_reference(X, name, sigma, digits, k, aggregate):
    """(reference, its digits): at ``digits``, or at doubled digits while it finds a tie: its tie rule (a gap below
    10^(−dps/2) of the largest eigenvalue) only says a near-tie is below its own precision's floor, so a value the
    library certifies across a near-tie of 1e-118 needs a reference whose floor lies below that gap. An exact tie
    stays below every floor (eigsy resolves it to ~10^−dps), so escalation never turns a true tie into a value."""
    ref = reference(X, name, sigma, digits=digits, k=k, aggregate=aggregate)
    while not ref.determined and digits < REFERENCE_MAX_ESCALATION:
        digits = min(2 * digits, REFERENCE_MAX_ESCALATION)
        ref = reference(X, name, sigma, digits=digits, k=k, aggregate=aggregate)
    return ref, digits


def _check_normalized(ctx, m, ref, where) -> None:
    if m.normalized_lower is None:
        return
    want = ref.normalized
    assert want is not None, f"{where}: a normalized interval where the reference has no log2(ref/ref_f0)"
    n_lo, n_hi = in_context(ctx, m.normalized_lower), in_context(ctx, m.normalized_upper)
    assert n_lo <= in_context(ctx, want) <= n_hi, (f"{where}: log2(ref/ref_f0) = {mpmath.nstr(want, 30)} "
                                               f"outside [{mpmath.nstr(n_lo, 30)}, {mpmath.nstr(n_hi, 30)}]")


def _check_refusal(X, name, sigma, k, aggregate, m) -> str:
    assert m.guarantee == "none" and math.isnan(float(m.value)), m
    assert m.reason, "an undetermined measure without a reason"
    ref = reference(X, name, sigma, digits=10, k=k, aggregate=aggregate)
    return "near-tie-refused" if ref.determined else "tie-refused"
