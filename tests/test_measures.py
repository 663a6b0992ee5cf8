"""Measures: certified digits never overclaim (checked against an independent reference at twice the
precision), closed forms, normalization, onset protocol, and the float64 breakdown."""
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import precise_kpca as pk
from precise_kpca.backends import MPBackend
from precise_kpca.measures import MEASURES, agreeing_digits, evaluate, measure, onset_from_curve
from precise_kpca.measures.onset import PAPER_FIT_LOG2_SIGMA, PAPER_GRID

from .strategies import data_sets


def _k(name):
    return 2 if name in ("eigenprojection", "pc") else 1


@pytest.mark.parametrize("name", MEASURES)
@given(X=data_sets(min_rows=5, max_rows=7, max_dim=3, allow_duplicates=False), p=st.sampled_from([-3, 2, 9, 25, 40]))
@settings(max_examples=4, deadline=None)
def test_certified_digits_never_overclaim(name, X, p):
    if name in ("eigenprojection", "pc") and np.linalg.matrix_rank(X - X.mean(0)) < 2:
        return
    m = measure(X, name, f"2**{p}", k=_k(name), digits=8)
    if "not determined" in m.method:  # nearly repeated Gaussian eigenvalues: refusing is the honest answer
        assert m.certified_digits == 0 and math.isnan(m.value)
        return
    assert m.certified_digits >= 8, m.method
    reference_dps = 2 * m.dps
    ref, _, _ = evaluate(X, name, Fraction(2) ** p, MPBackend(reference_dps), k=_k(name), eigensolver_only=True)
    actual = agreeing_digits(m.value, MPBackend(reference_dps).export(ref))
    assert actual >= m.certified_digits, (m, actual)


@given(X=data_sets(max_rows=8), p=st.integers(-4, 80))
@settings(max_examples=20, deadline=None)
def test_metric_dissonance_matches_its_closed_form(X, p):
    """Relative dissonance = 1 − √((1 − e^{−v})/v), v = ρ²/2σ² (proofs/theorem2): a function of ρ/σ only."""
    m = measure(X, "metric", f"2**{p}", digits=12)
    ctx = mpmath.MPContext()
    ctx.dps = 120  # 1 − √(1 − O(v)) cancels ~log10(1/v) ≤ 50 digits
    g = pk.geometry(X)
    rho = ctx.mpf(g.diameter) / ctx.mpf(g.median_distance)  # float64 geometry: ~15 digits
    v = rho**2 / (2 * ctx.mpf(2) ** (2 * p))
    closed = 1 - ctx.sqrt(-ctx.expm1(-v) / v)
    assert agreeing_digits(m.value, mpmath.mp.make_mpf(closed._mpf_)) >= 12
    assert m.backend == "arb" and m.certified_digits >= 12


def test_metric_constant_is_below_one_eighth_and_tends_to_it():
    X = np.random.default_rng(1).normal(size=(9, 3))
    rho = pk.geometry(X).eccentricity
    constants = [float(measure(X, "metric", f"2**{p}").value) * 4.0**p / rho**2 for p in (0, 4, 10, 30)]
    assert all(c < 1 / 8 for c in constants[:-1])
    assert constants[-1] <= (1 + 8 * 2.0**-52) / 8  # ρ comes from float64 geometry
    assert constants == sorted(constants)
    assert abs(constants[-1] - 1 / 8) <= 1e-15


def test_normalization_is_log2_value_over_value_at_sigma_zero():
    X = np.random.default_rng(2).normal(size=(8, 3))
    m = measure(X, "eigenvalue", "2**3", digits=8)
    assert m.normalized == pytest.approx(math.log2(m.value), rel=1e-12)  # f(0) = 1


@pytest.mark.parametrize("name", ["metric", "eigenvalue", "eigenprojection"])
def test_float64_naive_overlay_breaks_where_certified_curve_continues(name):
    X = np.random.default_rng(3).normal(size=(10, 3))
    good = measure(X, name, "2**24", digits=8)
    naive = measure(X, name, "2**24", backend="float64-naive")
    assert naive.certified_digits == 0
    assert good.certified_digits >= 8
    assert not agreeing_digits(naive.value, good.value) >= 2  # float64 has nothing left at 2^24


def test_onset_protocol_reproduces_table_ii_metric_column_from_rho():
    """The metric measure is a function of ρ/σ, so Table II's first column follows from the printed ρ."""
    table = {1.15: 1, 1.22: 1, 10.52: 8, 8.41: 8, 5.0: 4, 14.83: 16, 3.68: 4, 2.55: 2, 4.67: 4, 16.29: 16,
             1.63: 2, 2.57: 2, 41.42: 32, 502.54: math.inf, 3.17: 4, 106.69: 128, 252.8: math.inf, 33.4: 32,
             608.41: math.inf, 1806.03: math.inf, 2.98: 4, 6.6: 8, 3.37: 4, 3.87: 4}
    for rho, paper in table.items():
        values = []
        for p in PAPER_GRID:
            v = rho**2 / (2 * 4.0**p)
            values.append(math.log2(1 - math.sqrt(-math.expm1(-v) / v)))
        assert onset_from_curve(PAPER_GRID, values, PAPER_FIT_LOG2_SIGMA) == paper, rho


def test_measure_input_errors():
    X = np.random.default_rng(4).normal(size=(6, 2))
    with pytest.raises(ValueError, match="unknown measure"):
        measure(X, "volume", 1.0)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        measure(X, "eigenprojection", 1.0, k=0)
    with pytest.raises(ValueError, match="k=3 exceeds the rank 2"):
        measure(X, "eigenprojection", 1.0, k=3)
    with pytest.raises(ValueError, match="digits must be an integer"):
        measure(X, "metric", 1.0, digits=0)
    with pytest.raises(ValueError, match="metric measure only"):
        measure(X, "eigenvalue", 1.0, backend="arb")
    with pytest.raises(ValueError, match="no point at log2 sigma = 7"):
        onset_from_curve([0, 1], [0.0, -2.0], 7)


def test_uncertifiable_points_say_so_loudly():
    """At σ = 2^-12 the centered Gaussian Gram is ≈ σ_X²·H: N − 1 equal eigenvalues, eigenvectors undefined."""
    X = np.random.default_rng(2).normal(size=(8, 3))
    with pytest.warns(RuntimeWarning, match="FAILED to certify: the value is not determined"):
        m = measure(X, "eigenprojection", "2**-12", k=1, digits=6)
    assert m.certified_digits == 0 and m.method.startswith("FAILED") and math.isnan(m.value)


def test_an_eigenvalue_gap_float64_cannot_resolve_escalates_to_mp():
    """At σ = 3/32 the Gaussian gaps at edges 1…3 are 2e-11 … 8e-14 of ‖A‖: float64 refuses (its floor is
    1e-7) and the enclosure cannot separate them; mp resolves them. The agreement must start at mp instead of
    refusing; the value is checked against dps 100."""
    X = np.random.default_rng(5).normal(size=(10, 3))
    sigma = Fraction(3, 32)
    with pytest.raises(ArithmeticError, match="coincide to 7 digits"):
        evaluate(X, "eigenprojection", sigma, pk.backends.Float64Backend(), k=3)
    m = measure(X, "eigenprojection", sigma, k=3, digits=8)
    assert m.certified_digits >= 8 and "eigensolver evaluations at mp(dps=30)" in m.method, m.method
    ref = MPBackend(100)
    want, _, _ = evaluate(X, "eigenprojection", sigma, ref, k=3)
    assert agreeing_digits(m.value, ref.export(want)) >= m.certified_digits


@pytest.mark.parametrize("name", ["eigenvalue", "eigenprojection", "pc"])
def test_far_past_float64_the_structured_path_is_certified_against_an_independent_reference(name):
    X = np.random.default_rng(7).normal(size=(9, 3)) * np.array([1.0, 3.0, 0.5])
    for p in (20, 60):
        m = measure(X, name, f"2**{p}", k=2, digits=10)
        assert "structured" in m.method and m.certified_digits >= 10
        ref, _, path = evaluate(X, name, Fraction(2) ** p, MPBackend(2 * p + 40), k=2, eigensolver_only=True)
        assert path == "eigensolver"
        assert agreeing_digits(m.value, MPBackend(2 * p + 40).export(ref)) >= m.certified_digits


def test_a_long_structured_series_tries_the_cheaper_enclosure_first(monkeypatch):
    """N = 420 rows, 40 attributes at σ = 2⁶: the top block holds all 40 linear eigenvalues and the mp twin's
    series needs 12 terms (12·40 > N), so the rigorous enclosure goes first (measured: 24 digits in 4 s
    against 14 digits in 15 s). Far out the series is short and the structured path stays; a request the
    enclosure cannot reach stays structured; an enclosure that falls short hands over to the structured path."""
    from precise_kpca.measures import certified

    X = np.random.default_rng(0).normal(size=(420, 40)).round(3)
    options = dict(k=1, tau=1e-6, aggregate="mean", median="full")
    assert certified._eigen_route(X, "eigenvalue", Fraction(2**6), 8, options) == "enclosure first"
    assert certified._eigen_route(X, "eigenvalue", Fraction(2**6), 30, options) == "structured"
    assert certified._eigen_route(X, "eigenvalue", Fraction(2**30), 8, options) == "structured"
    m = measure(X, "eigenvalue", "2**6", digits=8)
    assert m.method.startswith("rigorous enclosure") and m.certified_digits >= 8, m.method
    short = mpmath.mpf(m.value) * (1 + mpmath.mpf(10) ** -2)  # an interval certifying only 2 digits
    monkeypatch.setattr(certified, "_enclosed", lambda *args: certified._rigorous(
        "eigenvalue", Fraction(2**6), None, MPBackend(40), mpmath.mpf(m.value), short, mpmath.mpf(1),
        mpmath.mpf(1), 0.0, 8, certified.Route("binary128-enclosure", "test"), "FAILED: short enclosure"))
    fallback = measure(X, "eigenvalue", "2**6", digits=8)
    assert "agreement of structured evaluations" in fallback.method and fallback.certified_digits >= 8
    assert agreeing_digits(m.value, fallback.value) >= min(m.certified_digits, fallback.certified_digits)
