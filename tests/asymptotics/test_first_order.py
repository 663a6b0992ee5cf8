"""Issue 5, Theorem 3: the float64 first-order path against the mp path, repeated eigenvalues, numerics."""
import math

import numpy as np
import pytest

from precise_kpca.asymptotics import CheckedLimits, FirstOrder, eigenprojection_constant
from precise_kpca.asymptotics.adversarial import near_degenerate, theorem3_ratios, two_shells
from precise_kpca.measures.measurement import agreeing_digits
from precise_kpca.measures import measure

CASES = {
    "gaussian": np.random.default_rng(0).normal(size=(12, 3)) * np.array([1.0, 2.0, 4.0]),
    "integers": np.round(np.random.default_rng(1).normal(size=(30, 4)) * 3),
    "wide": np.random.default_rng(2).normal(size=(8, 12)),  # d > N: the N×N linear side
}


@pytest.mark.parametrize("name", list(CASES))
def test_float64_path_agrees_with_mp_path(name):
    X = CASES[name]
    fast, slow = FirstOrder(X), FirstOrder(X, path="mp")
    assert fast.rank == slow.rank and fast.clusters == slow.clusters
    assert agreeing_digits(fast.eigenvalue_coefficient(), slow.eigenvalue_coefficient()) >= 12
    assert np.allclose(fast.shifts, slow.shifts, rtol=0, atol=1e-12 * np.abs(slow.shifts).max())
    for start, stop in [(0, 1), (1, 2), (0, 2)]:
        assert agreeing_digits(fast.angle_coefficient(start, stop), slow.angle_coefficient(start, stop)) >= 11


def test_claimed_digits_hold_against_mp():
    X = CASES["gaussian"]
    limits = CheckedLimits(X, mp_max_n=0)  # force the float64-twin check, then compare with mp
    mp = FirstOrder(X, path="mp")
    claim = limits.eigenvalue()
    assert "reversed" in claim.method
    assert agreeing_digits(claim.value, mp.eigenvalue_coefficient()) >= claim.certified_digits


def _square_symmetric():
    """Vertices of a square (and its scaled copy): λ_1 = λ_2 exactly (a repeated linear eigenvalue)."""
    square = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    return np.vstack([square, 3 * square, 0.5 * square @ [[0.6, -0.8], [0.8, 0.6]]])


def test_repeated_eigenvalues_form_clusters_and_shift_by_the_compressed_matrix():
    X = _square_symmetric()
    fast, slow = FirstOrder(X), FirstOrder(X, path="mp")
    assert fast.clusters[0] == (0, 2) and slow.clusters[0] == (0, 2)
    W, M_cluster = fast._W[:, :2], fast._C[:2, :2]
    assert np.allclose(np.sort(fast.shifts[:2]), np.sort(np.linalg.eigvalsh(M_cluster)))
    assert np.allclose(fast.shifts, slow.shifts, atol=1e-12 * np.abs(slow.shifts).max())
    with pytest.raises(ValueError, match="split the exactly repeated linear eigenvalues 0..1"):
        fast.angle_coefficient(0, 1)
    assert agreeing_digits(fast.angle_coefficient(0, 2), slow.angle_coefficient(0, 2)) >= 11
    assert W.shape == (12, 2)


def test_repeated_cluster_limit_matches_numerics_at_2_20():
    X = _square_symmetric()
    limit = eigenprojection_constant(X, 2)
    at = measure(X, "eigenprojection", "2**20", k=2, digits=8)
    assert agreeing_digits(limit.value, float(at.value) * 2.0**40) >= 8


def test_eigenprojection_constant_grows_like_one_over_the_gap():
    ratios = [theorem3_ratios(near_degenerate(40, gap))[1] for gap in (1e-4, 1e-6)]
    assert ratios[1] / ratios[0] == pytest.approx(100, rel=0.01)


def test_eigenvalue_constant_over_rho2_grows_with_dimension():
    low, high = (theorem3_ratios(two_shells(300, d))[0] for d in (4, 32))
    assert high > 2 * low and high > 1 / 4
    assert math.isfinite(high)
