"""Synthetic families: seeded, and ρ, η where the module documentation says they are."""
from __future__ import annotations

import math

import numpy as np
import pytest

from precise_kpca import geometry
from precise_kpca.datasets import synthetic


@pytest.mark.parametrize("family, kwargs", [
    (synthetic.gaussian, {}),
    (synthetic.gaussian_with_outliers, {"radius": 50.0, "k": 3}),
    (synthetic.near_duplicates, {"delta": 1e-6, "pairs": 4}),
    (synthetic.clusters, {"spread": 0.01}),
])
def test_seeded_shape_and_dtype(family, kwargs):
    X = family(200, 6, seed=3, **kwargs)
    assert X.shape == (200, 6) and X.dtype == np.float64
    np.testing.assert_array_equal(X, family(200, 6, seed=3, **kwargs))
    assert not np.array_equal(X, family(200, 6, seed=4, **kwargs))


@pytest.mark.parametrize("d", [2, 10, 100])
def test_unit_median_cloud(d):
    assert geometry(synthetic.gaussian(500, d)).median_distance == pytest.approx(1.0, rel=0.05)


@pytest.mark.parametrize("d", [2, 50])
def test_outliers_control_rho(d):
    """ρ = √(1 + radius²) up to the cloud's spread √(2 ln(k n)/d) and a few per cent of d_X."""
    rhos = []
    spread = math.sqrt(2 * math.log(5 * 500) / d)
    for radius in (10.0, 100.0, 1000.0):
        rho = geometry(synthetic.gaussian_with_outliers(500, d, radius=radius, k=5)).eccentricity
        assert abs(rho - math.hypot(1.0, radius)) <= 0.05 * math.hypot(1.0, radius) + spread
        rhos.append(rho)
    assert rhos == sorted(rhos)


@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_near_duplicates_control_eta(delta):
    g = geometry(synthetic.near_duplicates(300, 5, delta=delta, pairs=3))
    assert g.min_nonzero_distance == pytest.approx(delta, rel=1e-6)
    assert g.eta_nonzero == pytest.approx(g.diameter / delta, rel=1e-6)
    assert g.eccentricity == pytest.approx(geometry(synthetic.gaussian(297, 5)).eccentricity, rel=0.05)


def test_zero_delta_gives_exact_duplicates():
    X = synthetic.near_duplicates(50, 3, delta=0.0, pairs=2)
    np.testing.assert_array_equal(X[48:], X[:2])
    assert geometry(X).eta == math.inf


def test_clusters_low_rho_and_eta_inverse_in_spread():
    spreads = (1e-1, 1e-2, 1e-3)
    gs = [geometry(synthetic.clusters(400, 8, spread=s, c=4)) for s in spreads]
    for s, g in zip(spreads, gs):
        assert 1.0 <= g.eccentricity <= 1.0 + 3.0 * s
        assert g.median_distance == pytest.approx(1.0, rel=0.05)
    products = [g.eta * s for s, g in zip(spreads, gs)]
    assert max(products) / min(products) < 1.2


@pytest.mark.parametrize("call, message", [
    (lambda: synthetic.gaussian(2, 3), r"need n >= 3 rows, got 2"),
    (lambda: synthetic.gaussian(10, 0), r"need d >= 1 columns, got 0"),
    (lambda: synthetic.gaussian_with_outliers(100, 2, radius=5.0, k=6), r"k must be between 1 and n // 20 = 5"),
    (lambda: synthetic.gaussian_with_outliers(100, 2, radius=-1.0), r"radius must be finite and >= 0, got -1"),
    (lambda: synthetic.near_duplicates(10, 2, delta=1e-3, pairs=6), r"pairs must be between 1 and n // 2 = 5"),
    (lambda: synthetic.near_duplicates(10, 2, delta=math.nan), r"delta must be finite and >= 0, got nan"),
    (lambda: synthetic.clusters(10, 3, spread=0.1, c=4), r"need c >= 3 clusters and d >= c dimensions"),
    (lambda: synthetic.clusters(10, 4, spread=0.0), r"spread must be finite and > 0"),
])
def test_bad_parameters(call, message):
    with pytest.raises(ValueError, match=message):
        call()
