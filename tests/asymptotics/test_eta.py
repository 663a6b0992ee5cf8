"""Issue 5, Theorem 2: C(σ) ≤ 1/8 and increasing, the η bound holds and overshoots, the study and its table."""
import math

import numpy as np
import pytest
from hypothesis import given, settings

from precise_kpca.asymptotics import ExactEccentricity, metric_constant
from precise_kpca.asymptotics.adversarial import excess_over_one_eighth, metric_objective, search
from precise_kpca.asymptotics.study import cross_table, eta_study, metric_curve, slopes, stress_sets
from precise_kpca.datasets import synthetic
from precise_kpca.measures import measure
from precise_kpca.numerics import geometry

from ..strategies import data_sets


@given(data_sets(max_rows=8, allow_duplicates=True))
@settings(max_examples=15, deadline=None)
def test_exact_eccentricity_matches_float_geometry(X):
    try:
        g = geometry(X)
    except ValueError:
        return  # zero median: no ρ
    assert ExactEccentricity(X).rho() == pytest.approx(g.eccentricity, rel=64 * np.finfo(float).eps)


def test_curve_is_increasing_below_one_eighth_and_agrees_with_the_measure():
    X = synthetic.gaussian_with_outliers(60, 3, radius=20.0, seed=1)
    curve = metric_curve(X, range(-4, 41, 2))
    assert (curve["C_digits"] >= 14).all()
    assert curve["C"].is_monotonic_increasing and (curve["C"] <= 1 / 8).all()
    assert 1 / 8 - curve["C"].iloc[-1] < 1e-14
    for p in (-2, 6, 30):  # the certified measure (arb) divided by exact ρ² gives the same constant
        row = curve[curve["log2_sigma"] == p].iloc[0]
        assert metric_constant(X, f"2**{p}").value == pytest.approx(row["C"], rel=1e-14)


@pytest.mark.parametrize("name", list(stress_sets()))
def test_eta_bound_holds_and_overshoots_by_eight_eta_in_the_limit(name):
    X = stress_sets()[name]
    curve = metric_curve(X, range(-4, 61, 8))
    eta = geometry(X).eta_nonzero
    assert (curve["dissonance"] <= curve["eta_bound"]).all()
    assert (curve["overshoot"] >= 8 * eta * (1 - 1e-14)).all()
    assert curve["overshoot"].iloc[-1] == pytest.approx(8 * eta, rel=1e-14)


def test_near_duplicates_make_eta_huge_but_not_the_constant():
    X = synthetic.near_duplicates(50, 3, delta=1e-12, seed=0)
    study = eta_study(X, "twins", spectral=False)
    assert study.eta > 1e11 and study.overshoot_limit > 8e11
    assert study.sup_C <= 1 / 8


def test_study_reports_theorem3_limits_and_the_table():
    studies = [eta_study(synthetic.gaussian_with_outliers(40, 3, radius=r, seed=0), f"r={r}", ks=(1, 2))
               for r in (2.0, 8.0, 32.0)]
    for s in studies:
        assert s.eigenvalue.certified_digits >= 12 and s.eigenvalue.guarantee == "rigorous"
        assert list(s.spectral["k"]) == [1, 2] and (s.spectral["digits"] >= 12).all()
        assert (s.spectral["guarantee"] == "rigorous").all()
        assert (s.spectral["lower"] < s.spectral["upper"]).all()
        assert "eigenvalue" in s.paper  # small N: the float64 value at σ = 2^7 is there
    table = cross_table(studies)
    assert list(table["data"]) == ["r=2.0", "r=8.0", "r=32.0"] and "eigenvalue_2_7" in table
    fits = slopes(table).set_index("quantity")
    assert fits.loc["lim σ²·metric dissonance = ρ²/8", "slope"] == pytest.approx(2.0)
    assert fits.loc["lim σ²·metric dissonance = ρ²/8", "count"] == 3


def test_heuristic_study_keeps_the_old_path_and_says_so():
    X = synthetic.gaussian_with_outliers(40, 3, radius=8.0, seed=0)
    rigorous = eta_study(X, "r", ks=(1,), paper_spectral=False)
    heuristic = eta_study(X, "h", ks=(1,), paper_spectral=False, guarantee="heuristic")
    assert heuristic.eigenvalue.guarantee == "heuristic" and heuristic.spectral["guarantee"].tolist() == ["heuristic"]
    assert "reversed" in heuristic.notes[-1] or "mp path" in heuristic.notes[-1]
    assert heuristic.eigenvalue.lower <= rigorous.eigenvalue.upper
    assert rigorous.eigenvalue.lower <= heuristic.eigenvalue.upper


def test_excess_over_one_eighth_is_certified_negative():
    X = np.random.default_rng(3).normal(size=(5, 2))
    for p in (-1, 4, 20):
        excess = excess_over_one_eighth(X, p)
        assert excess < 0
        # against the closed form 1/8 - C ≈ 5ρ²/384σ² for large σ
    rho2 = ExactEccentricity(X).rho() ** 2
    assert -excess == pytest.approx(5 * rho2 / 384 * 2.0**-40, rel=1e-6)


def test_adversarial_search_finds_nothing_above_one_eighth():
    for p in (0, 6):
        result = search(metric_objective(p), 4, 2, starts=1, iterations=25, seed=p)
        assert result.evaluations >= 25 and -math.inf < result.best < 0


def test_measure_and_curve_agree_on_the_paper_sigma():
    X = synthetic.clusters(30, 4, spread=1e-3, seed=2)
    m = measure(X, "metric", "2**7", digits=12)
    study = eta_study(X, "clusters", spectral=False)
    assert study.paper["metric"] == pytest.approx(float(m.value), rel=1e-13)
