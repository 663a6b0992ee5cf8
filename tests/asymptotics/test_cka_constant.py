"""Theorem 1's constant (asymptotics/cka_constant): rigorous ratios against the closed form of proofs/theorem1."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from precise_kpca.asymptotics.cka_constant import (
    adversarial_search, float_ratio, ratio_interval, sigma_grid, unit_vectors_and_origins)
from proofs import theorem1

EPS = np.finfo(float).eps


@pytest.mark.parametrize("m", [3, 8])
def test_family_interval_contains_closed_form(m):
    """The frobenius-enclosure interval holds the exact block-algebra value (independent: no matrices)."""
    X = unit_vectors_and_origins(m)
    sigma = Fraction(3, 2)
    r = ratio_interval(X, sigma)
    s = sp.sqrt(2) / (2 * sp.Rational(3, 2))  # ρ = √2 (diam √2, d_X = 1): ρ/σ = 2s
    exact = sp.N(theorem1.family_ratio(m, s), 40)
    assert r.guarantee == "rigorous"
    assert r.lower <= exact <= r.upper
    assert r.upper - r.lower <= 64 * EPS * r.upper


def test_family_ratio_grows_with_m():
    """The refutation in numbers: at ρ/σ = 1/4 the exact ratio increases with m far past the paper's 0.0135."""
    values = [float(theorem1.family_ratio(m, sp.Rational(1, 8))) for m in (10, 100, 1000)]
    assert values[0] < values[1] < values[2] and values[2] > 0.1


def test_float_ratio_agrees_with_enclosure():
    X = np.random.default_rng(3).standard_normal((12, 3))
    sigma = sigma_grid(X)[2]
    r = ratio_interval(X, sigma)
    from precise_kpca.numerics.geometry import geometry

    s = geometry(X).eccentricity / (2 * float(sigma))
    assert float_ratio(X, s) == pytest.approx((r.lower + r.upper) / 2, rel=2**20 * EPS)


def test_sigma_grid_starts_at_half_rho():
    from precise_kpca.numerics.geometry import geometry

    X = unit_vectors_and_origins(4)
    grid = sigma_grid(X)
    half = Fraction(geometry(X).eccentricity / 2)
    assert half * (1 - Fraction(1, 2**40)) <= grid[0] < half * Fraction(129, 128)
    assert grid == sorted(grid)


def test_adversarial_search_improves_on_its_start():
    X, s, value = adversarial_search(4, 1, restarts=1, seed=1)
    start = np.random.default_rng(1).standard_normal((4, 1))
    assert value >= float_ratio(start, 0.5) and 0 < s < 1 and X.shape == (4, 1)


@pytest.mark.parametrize("n, d", [(4, 1), (6, 2)])
def test_adversarial_search_stays_in_range_and_is_certified(n, d):
    """Nelder–Mead drives the bandwidth coordinate far out (math.exp overflowed there); s stays in
    [SEARCH_S_MIN, 1] and the float64 ratio found is the rigorous one at that configuration."""
    from precise_kpca.asymptotics.cka_constant import SEARCH_S_MIN
    from precise_kpca.numerics.geometry import geometry

    X, s, value = adversarial_search(n, d, restarts=3)
    assert SEARCH_S_MIN <= s <= 1
    sigma = Fraction(geometry(X).eccentricity / (2 * s))
    r = ratio_interval(X, sigma)
    assert value == pytest.approx((r.lower + r.upper) / 2, rel=2**20 * EPS)


def _family_gap(m: int, sigma) -> float:
    """1 − CKA of X_m at standardized σ (d_X = 1, ρ = √2: ρ/σ = 2s), from the closed form of proofs/theorem1."""
    s = sp.sqrt(2) / (2 * sp.nsimplify(sigma))
    return float(sp.N(theorem1.family_ratio(m, s) * 4 * s**2, 30))


def _range_holds(X, m, a, b) -> bool:
    from precise_kpca.measures.cka_enclosed import cka_upper_over

    bound = float(cka_upper_over(X, a, b))
    return all(_family_gap(m, a + (b - a) * Fraction(i, 8)) <= bound for i in range(9))


def test_upper_over_a_range_holds_the_closed_form(monkeypatch):
    """One upper end for all σ ∈ [1, 17/16] holds the exact 1 − CKA at nine points of the range; mutation: without
    the range's perturbation δ_σ it is the end at σ_b alone, below the value at σ_a."""
    from precise_kpca.measures import cka_enclosed

    X = unit_vectors_and_origins(3)
    assert _range_holds(X, 3, Fraction(1), Fraction(17, 16))
    monkeypatch.setattr(cka_enclosed, "_sigma_width", lambda X, median, width: Fraction(0))
    assert not _range_holds(X, 3, Fraction(1), Fraction(17, 16))


def test_upper_over_the_tail_bounds_the_ratio():
    """[σ_a, ∞): the end times (σ_a/ρ)² bounds (1 − CKA)/(ρ/σ)² at every σ ≥ σ_a (closed form at σ_a·2^i)."""
    import math

    from precise_kpca.measures.cka_enclosed import cka_upper_over

    X, a = unit_vectors_and_origins(3), Fraction(2)
    bound = float(cka_upper_over(X, a, math.inf)) * float(a) ** 2 / 2  # ρ² = 2
    ratios = [_family_gap(3, a * 2**i) * float(a * 2**i) ** 2 / 2 for i in range(6)]
    assert max(ratios) <= bound


def test_sup_bounds_bracket_the_closed_form():
    """C(X_3) over σ ≥ ρ/2: the certified lower end is the exact ratio at its σ; the upper end is above the
    exact ratio everywhere on a grid of s = ρ/2σ ∈ (0, 1], and within the tolerance of the lower end."""
    from precise_kpca.asymptotics.cka_constant import sup_bounds

    found = sup_bounds(unit_vectors_and_origins(3))
    at = float(sp.N(theorem1.family_ratio(3, sp.sqrt(2) / (2 * sp.nsimplify(found.at_sigma))), 30))
    assert found.lower <= at <= found.lower * (1 + 2**20 * EPS)
    grid = [float(theorem1.family_ratio(3, sp.Rational(i, 64))) for i in range(1, 65)]
    assert found.converged and max(grid) <= found.upper <= Fraction(5, 4) * found.lower
