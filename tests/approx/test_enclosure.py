"""The neighbours' numbers carry their guarantee: rigorous intervals contain independent mpmath references.

References (tests/neighbours_reference.py): plain mpmath at twice the digits the enclosures used, from the exact data
and the same random draws, through other formulas than the library's (exp(−u), LU instead of Cholesky, the n×n
forms, mpmath.eig of C Q).
"""
from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precise_kpca.approx.convergence import RATE_DIGITS, _rate, large_sigma_convergence
from precise_kpca.approx.enclosure import (Interval, arb_interval, basis_enclosures, cholesky, top_eigenvalues,
                                           undetermined)
from precise_kpca.errors import InsufficientPrecision
from precise_kpca.measures.measurement import exact_mpf

from ..neighbours_reference import context, reference

DRAWS = {"exact": {}, "nystrom": {"n_landmarks": 4}, "rf-cos": {"n_features": 6}, "rf-sincos": {"n_features": 8}}


@st.composite
def small_data(draw):
    """8–11 points in R^2 or R^3 at scales 1e-3, 1, 1e3, sometimes with a far outlier (no duplicate rows)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(draw(st.integers(8, 11)), draw(st.integers(2, 3)))) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    if draw(st.booleans()):
        X[-1] *= 100.0
    return X


def _contains(interval: Interval, value) -> bool:
    value = exact_mpf(value)  # exactly: mpmath.mpf(value) would round a reference to 53 bits
    inside = interval.guarantee == "rigorous" and interval.lower <= value <= interval.upper
    assert inside, (f"{mpmath.nstr(value, 40)} not in [{mpmath.nstr(interval.lower, 40)}, "
                    f"{mpmath.nstr(interval.upper, 40)}] ({interval.guarantee})")
    return inside


def _reference_dps(study) -> int:
    return int(2 * max(study.precision) / math.log2(10)) + 20


@pytest.mark.parametrize("method", sorted(DRAWS))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(X=small_data(), log2_sigma=st.integers(-4, 40), seed=st.integers(0, 1000))
def test_rigorous_intervals_contain_the_reference(method, X, log2_sigma, seed):
    draws = dict(DRAWS[method])
    if method == "nystrom":
        draws["n_landmarks"] = X.shape[1] + 1
    sigmas = [Fraction(2) ** log2_sigma, Fraction(2) ** (log2_sigma + 1)]
    study = large_sigma_convergence(X, [f"2**{log2_sigma}", f"2**{log2_sigma + 1}"], method=method,
                                    random_state=seed, **draws)
    ell = study.limit.shape[0]
    assert study.route == "arb-enclosure"
    assert study.relative_error.digits.min() >= 10  # the default request
    dps = _reference_dps(study)
    for s, sigma in enumerate(sigmas):
        ref = reference(X, method, sigma, ell=ell, dps=dps, seed=seed, **draws)
        for l in range(ell):
            assert _contains(study.limit[l], ref["limit"][l])
            assert _contains(study.scaled_eigenvalues[s, l], ref["scaled"][l])
            assert _contains(study.relative_error[s, l], ref["errors"][l])
        if method != "exact":
            assert _contains(study.gram_error[s], ref["gram"])
            assert study.gram_error[s].digits >= 10


@pytest.mark.parametrize("method, rate", [("exact", -2), ("nystrom", -2), ("rf-sincos", -2), ("rf-cos", -1)])
def test_sigma_2_28_is_positive_rigorous_and_gives_a_finite_rate(method, rate):
    """The audit's case: formed in float64 the errors were 0.0 at σ = 2^28 and the rate nan."""
    X = np.random.default_rng(5).normal(size=(12, 2)) * [2.0, 1.0] + [0.5, 0.0]
    draws = {**DRAWS[method], "n_landmarks": 5} if method == "nystrom" else DRAWS[method]
    study = large_sigma_convergence(X, ["2**16", "2**20", "2**24", "2**28"], method=method, random_state=1, **draws)
    last = study.relative_error[-1]
    assert set(last.guarantee) == {"rigorous"} and all(e.lower > 0 for e in last.entries)
    assert last.digits.min() >= 10
    assert np.all(np.abs(study.rate.value - rate) < 0.01) and set(study.rate.guarantee) == {"rigorous"}
    ref = reference(X, method, Fraction(2**28), ell=2, dps=_reference_dps(study), seed=1, **draws)
    assert all(_contains(e, r) for e, r in zip(last.entries, ref["errors"]))
    if rate == -2:  # below float64's resolution of 1 (σ⁻² ≈ 2^-56): why 0.0 came out before
        assert 0 < ref["errors"][0] < 2.0**-50


def test_a_point_short_of_the_requested_digits_says_so():
    X = np.random.default_rng(5).normal(size=(8, 2))
    errors = large_sigma_convergence(X, ["2**2", "2**3"], method="exact", digits=5000).relative_error
    assert set(errors.guarantee.ravel()) == {"rigorous"} and 100 < errors.digits.max() < 5000  # still enclosed
    assert all(reason.startswith("fewer than 5000 digits at ") for reason in errors.reason.ravel())


def test_heuristic_route_is_labelled_heuristic_and_never_rigorous():
    X = np.random.default_rng(5).normal(size=(12, 2))
    study = large_sigma_convergence(X, ["2**8", "2**12", "2**28"], method="nystrom", n_landmarks=4,
                                    guarantee="heuristic")
    assert study.route == "agreement"
    for array in (study.limit, study.scaled_eigenvalues, study.relative_error, study.rate, study.constant):
        assert set(array.guarantee.ravel()) == {"heuristic"}
    assert set(study.gram_error.guarantee) == {"none"} and "agreement route" in study.gram_error.reason[0]
    rigorous = large_sigma_convergence(X, ["2**8", "2**12", "2**28"], method="nystrom", n_landmarks=4)
    # formed in mp, not float64: the heuristic errors at 2^28 are not 0 and agree with the enclosures
    np.testing.assert_allclose(study.relative_error.value, rigorous.relative_error.value, rtol=1e-9)


def test_rate_needs_determined_errors():
    sigmas = [Fraction(2**k) for k in (10, 12, 14)]
    good = [arb_interval(flint.arb(2.0 ** -(2 * k))) for k in (10, 12, 14)]
    rate, constant = _rate(good, sigmas, 3)
    assert rate.lower <= -2 <= rate.upper and rate.guarantee == "rigorous"
    assert constant.lower <= 1 <= constant.upper
    cases = {
        "is not separated from 0": Interval(exact_mpf(0), exact_mpf(2.0**-60), "rigorous"),
        f"has 0 digits (fewer than {RATE_DIGITS})": Interval(exact_mpf(2.0**-60), exact_mpf(2.0**-56), "rigorous"),
        "is undetermined (overflow)": undetermined("overflow"),
    }
    for why, bad in cases.items():
        rate, constant = _rate(good[:2] + [bad], sigmas, 3)
        assert math.isnan(rate.value) and math.isnan(constant.value) and rate.guarantee == "none"
        assert rate.reason == f"no rate: the error at sigma=2^14 {why}"
    rate, _ = _rate([undetermined("x")] + good[1:], sigmas, 2)  # only the fitted points matter
    assert rate.guarantee == "rigorous"


# --- the enclosure theorems, each checked where its bound is attained ----------------------------------------------
def test_li_li_radius_is_attained_to_first_order():
    """B = [[2, ε], [ε, 1]]: λ₁ = 2 + ε² − ε⁴ + …; the enclosure's radius ε²/η (η = 1) is the least that holds."""
    eps = Fraction(1, 2**20)
    with flint.ctx.workprec(200):
        B = flint.arb_mat([[2, flint.arb(flint.fmpq(eps.numerator, eps.denominator))],
                           [flint.arb(flint.fmpq(eps.numerator, eps.denominator)), 1]])
        (top,) = basis_enclosures(B, flint.arb_mat([[1, 0], [0, 1]]), 1)
        exact = flint.arb(1.5) + (flint.arb(0.25) + flint.arb(flint.fmpq(eps.numerator**2, eps.denominator**2))).sqrt()
        assert top.contains(exact)
        # half the radius would miss λ₁; the radius is not larger than ε² (up to the balls' rounding)
        assert not flint.arb(2, float(eps**2) / 2).contains(exact)
        assert float(top.rad()) <= float(eps**2) * (1 + 2.0**-25)  # Arb's radii carry 30 bits


def test_ostrowski_factor_is_attained():
    """A = [3], V = [1 + δ]: VᵀAV = 3(1 + δ)², ω = (1 + δ)² − 1, and θ = 1 + ω exactly: the enclosure's lower end
    is λ = 3 itself, and its width 3(1 + ω)(1/(1 − ω) − 1/(1 + ω)) ≈ 6ω."""
    delta = 2.0**-20
    with flint.ctx.workprec(200):
        (top,) = basis_enclosures(flint.arb_mat([[3]]), flint.arb_mat([[1 + delta]]), 1)
        omega = (1 + delta) ** 2 - 1
        assert top.contains(3)
        assert float(top.lower()) >= 3 - 3 * omega * 2.0**-20  # θ = 1 + ω/2 would put the lower end at 3 + 1.5ω
        assert float(top.upper()) - float(top.lower()) <= 6 * omega * (1 + 2 * omega)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(2, 12), grading=st.sampled_from([0, 20, 60]),
       tie=st.booleans())
def test_top_eigenvalues_contain_eigsy(seed, p, grading, tie):
    """Random symmetric matrices with graded spectra (down to 10^-grading) and exactly tied top eigenvalues."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(p, p)))
    spectrum = np.sort(10.0 ** -rng.uniform(0, grading, size=p))[::-1] if grading else rng.uniform(1, 2, size=p)
    if tie:
        spectrum[1] = spectrum[0]
    A = (Q * spectrum) @ Q.T
    A = (A + A.T) / 2  # exactly symmetric floats: the exact matrix is this one
    ell = min(3, p)
    ctx = context(120)
    values = ctx.eigsy(ctx.matrix(A.tolist()), eigvals_only=True)
    ref = sorted((values[i] for i in range(p)), reverse=True)[:ell]
    with flint.ctx.workprec(256):
        try:
            enclosures = top_eigenvalues(flint.arb_mat(A.tolist()), ell)
        except InsufficientPrecision:
            assert grading == 60  # the rest may sit within 10^-60 of a wanted eigenvalue: refused, not wrong
            return
    for ball, r in zip(enclosures, ref):
        assert _contains(arb_interval(ball), r)


def test_cholesky_encloses_the_factor_and_refuses_indefinite():
    A = [[4, 2, 2], [2, 5, 3], [2, 3, 6]]
    with flint.ctx.workprec(128):
        L = cholesky(flint.arb_mat(A))
        assert (L * L.transpose()).contains(flint.arb_mat(A))
        assert L[0, 0].contains(2) and L[1, 0].contains(1) and L[0, 1] == 0
        with pytest.raises(InsufficientPrecision, match="pivot 1"):
            cholesky(flint.arb_mat([[1, 2], [2, 1]]))
