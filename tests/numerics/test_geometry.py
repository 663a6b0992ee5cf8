import math

import numpy as np
import pytest
from hypothesis import given, settings

import precise_kpca as pk
from precise_kpca.backends import Float64Backend, MPBackend
from precise_kpca.numerics.geometry import median_distance, squared_distances

from ..strategies import data_sets

# Three collinear points at 0, 1, 3: pair distances 1, 2, 3; the 9 full entries are 0,0,0,1,1,2,2,3,3.
LINE = np.array([[0.0], [1.0], [3.0]])


def test_full_and_pairs_medians_on_a_hand_example():
    full = pk.geometry(LINE, median="full")
    pairs = pk.geometry(LINE, median="pairs")
    assert full.median_distance == 1.0  # 5th of 9 sorted entries
    assert pairs.median_distance == 2.0
    assert full.diameter == 3.0 and full.eccentricity == 3.0 and pairs.eccentricity == 1.5
    assert full.min_distance == 1.0 and full.eta == 3.0


def test_even_count_median_averages_the_two_middle_distances():
    X = np.array([[0.0], [1.0], [4.0], [9.0]])  # pairs 1,3,4,5,8,9; full: 4 zeros + each pair twice (16)
    g = pk.geometry(X)
    assert g.median_distance == (3.0 + 4.0) / 2  # 8th and 9th of 16 sorted entries
    assert pk.geometry(X, median="pairs").median_distance == (4.0 + 5.0) / 2


def test_duplicate_rows_give_infinite_eta_but_finite_nonzero_eta():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [0.0, 0.0]])
    g = pk.geometry(X)
    assert g.min_distance == 0.0 and math.isinf(g.eta)
    assert g.min_nonzero_distance == 1.0 and g.eta_nonzero == g.diameter


@given(data_sets())
@settings(max_examples=30, deadline=None)
def test_mp_median_agrees_with_float64_and_rho_is_scale_invariant(X):
    f64, mp = Float64Backend(), MPBackend(40)
    d64 = median_distance(squared_distances(X, f64), f64)
    dmp = median_distance(squared_distances(X, mp), mp)
    assert abs(mp.to_float(dmp) - d64) <= 8 * f64.eps * d64
    g, g2 = pk.geometry(X), pk.geometry(X * 2.0**7)
    assert g.eccentricity == pytest.approx(g2.eccentricity, rel=8 * f64.eps)
    assert g.eccentricity >= 1.0
