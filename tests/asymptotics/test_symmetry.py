"""Dihedral tie certificate (asymptotics/symmetry): characters against independent eigenvalue counts."""
from __future__ import annotations

from collections import Counter
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from precise_kpca.asymptotics import symmetry
from precise_kpca.asymptotics.symmetry import (
    SignedColumnPermutation, board_moves, dihedral_certificate, generic_square_profile, pairs_in_spectrum,
    square_moves, square_orbits)
from precise_kpca.errors import InternalCheckFailed
from precise_kpca.numerics.exact import ExactData

POINTS = [(3, 1), (2, 0), (5, 5), (7, 2)]


def _mp_profile(X: np.ndarray, sigma_x2: Fraction, dps: int = 40) -> dict[int, int]:
    """{multiplicity: count} of the centered Gaussian Gram by mpmath.eigsy from the exact squared distances,
    runs closer than 10^(−dps/2)·‖A‖ counted as one eigenvalue (twice the digits a tie needs to show)."""
    ctx = mpmath.MPContext()
    ctx.dps = dps
    exact = ExactData.from_float64(X)
    sq = exact.squared_distance_integers
    unit = ctx.mpf(2) ** (2 * exact.exp2) / (2 * ctx.mpf(sigma_x2.numerator) / sigma_x2.denominator)
    n = X.shape[0]
    K = ctx.matrix([[ctx.exp(-int(sq[i, j]) * unit) for j in range(n)] for i in range(n)])
    H = ctx.eye(n) - ctx.ones(n, n) / n
    values = sorted(ctx.eigsy(H * K * H, eigvals_only=True), reverse=True)
    tol = ctx.mpf(10) ** (-dps // 2) * abs(values[0])
    runs, count = [], 1
    for a, b in zip(values, values[1:]):
        if abs(a - b) <= tol:
            count += 1
        else:
            runs.append(count)
            count = 1
    runs.append(count)
    return dict(Counter(runs))


def test_square_orbits_profile_matches_eigsy():
    X = square_orbits(POINTS)
    cert = dihedral_certificate(X, *square_moves(), 4)
    expected = _mp_profile(X, Fraction(37, 4))
    assert cert.multiplicity_profile() == expected
    assert expected == generic_square_profile(POINTS)  # orbit sizes: 8 → two pairs, 4 → one


def test_wrong_character_is_caught(monkeypatch):
    """Mutation: a character table off by one pair must disagree with the eigsy count."""
    original = symmetry._two_dim
    monkeypatch.setattr(symmetry, "_two_dim", lambda rot, m: tuple(v + 1 for v in original(rot, m)))
    X = square_orbits(POINTS)
    cert = dihedral_certificate(X, *square_moves(), 4)
    assert cert.multiplicity_profile() != _mp_profile(X, Fraction(37, 4))


@settings(max_examples=8, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9), st.integers(0, 9)), min_size=1, max_size=3, unique=True),
       st.integers(-3, 3))
def test_certificate_matches_orbit_count(points, log2_scale):
    """Characters against the orbit-size count for any integer orbits, at any power-of-two scale."""
    X = square_orbits(points, 2.0**log2_scale)  # a ≥ 1: every orbit has at least 4 points
    cert = dihedral_certificate(X, *square_moves(), 4)
    assert cert.multiplicity_profile() == generic_square_profile(points)
    assert sum(cert.one_dim.values()) + 2 * cert.forced_pairs == len(X)


def test_non_symmetry_rejected():
    X = square_orbits(POINTS)
    X[0, 0] += 0.5
    with pytest.raises(ValueError, match="not a symmetry"):
        dihedral_certificate(X, *square_moves(), 4)


def test_wrong_order_rejected():
    X = square_orbits(POINTS)
    with pytest.raises(ValueError, match="r\\^m = 1"):
        dihedral_certificate(X, *square_moves(), 3)


def test_bad_signed_permutation():
    with pytest.raises(ValueError, match="permutation"):
        SignedColumnPermutation((0, 0), (1, 1))


def test_tic_tac_toe_pairs_match_float64_count(data_dir):
    """235 forced pairs on tic-tac-toe; the float64 spectrum at σ_X² = 4 shows exactly 235 pairs and no more."""
    from scipy.spatial.distance import pdist, squareform

    from precise_kpca.datasets import load

    X = load("tic-tac-toe", data_dir=data_dir)
    cert = dihedral_certificate(X, *board_moves(), 4)
    assert cert.forced_pairs == 235 and cert.multiplicity_profile() == {1: 488, 2: 235}
    A = np.exp(-squareform(pdist(X, "sqeuclidean")) / 8)
    A = A - A.mean(0) - A.mean(1)[:, None] + A.mean()
    w = np.linalg.eigvalsh(A)[::-1]
    close = np.abs(np.diff(w)) <= 256 * len(X) * np.finfo(float).eps * w[0]
    assert int(close.sum()) == 235 and not np.any(close[1:] & close[:-1])


def _mp_scaled_values(X: np.ndarray, sigma: Fraction, dps: int = 40) -> list:
    """Eigenvalues (descending) of σ_X² H K_G H by mpmath.eigsy from the exact squared distances, σ_X = σ·d_X with
    d_X the median of all N² distances (mean of the two middle ones), all in mpmath: independent of the library."""
    ctx = mpmath.MPContext()
    ctx.dps = dps
    exact = ExactData.from_float64(X)
    sq = exact.squared_distance_integers
    n = X.shape[0]
    entries = sorted(int(v) for v in sq.ravel())
    scale = ctx.mpf(2) ** exact.exp2
    d_x = (ctx.sqrt(entries[n * n // 2 - 1]) + ctx.sqrt(entries[n * n // 2])) / 2 * scale
    sigma_x2 = (ctx.mpf(sigma.numerator) / sigma.denominator * d_x) ** 2
    K = ctx.matrix([[ctx.exp(-int(sq[i, j]) * scale**2 / (2 * sigma_x2)) for j in range(n)] for i in range(n)])
    H = ctx.eye(n) - ctx.ones(n, n) / n
    return sorted(ctx.eigsy(sigma_x2 * H * K * H, eigvals_only=True), reverse=True)


@pytest.mark.parametrize("log2_sigma", [-2, 0, 4])
def test_pairs_in_spectrum_match_eigsy(log2_sigma):
    """The certified spectrum of the square orbits shows exactly the forced pairs: the isolated pairs are the
    eigenvalues eigsy (40 digits, exact data) finds doubled, every other run is one simple eigenvalue, and every
    interval holds eigsy's eigenvalue."""
    X = square_orbits(POINTS)
    sigma = Fraction(2) ** log2_sigma
    found = pairs_in_spectrum(X, *square_moves(), sigma)
    values = _mp_scaled_values(X, sigma)
    doubled = [i for i in range(len(values) - 1) if abs(values[i] - values[i + 1]) <= mpmath.mpf(10) ** -20 * values[0]]
    for run in found.runs:
        for i in range(run.start, run.stop):
            assert run.lower <= Fraction(str(values[i])) <= run.upper  # 40 digits ≪ the interval widths
        if run.kind == "simple":
            assert run.start not in doubled and run.start - 1 not in doubled
    assert set(found.pair_indices) <= set(doubled) and found.forced_pairs == 6 == len(doubled)
    if log2_sigma <= 0:  # at σ = 16 the last 8 eigenvalues (below 1e-14 ‖A‖) form one cluster of intervals
        assert found.exact and found.pair_indices == doubled
    else:
        assert found.count("cluster") == 1 and found.count("pair") >= 3


def test_pairs_in_spectrum_catches_a_wrong_involution(monkeypatch):
    """Mutation: the mirror s in place of r² (free orbits, so both move every row and the dimension check
    passes): the s-odd part holds simple eigenvalues, which the even-multiplicity check refuses."""
    X = square_orbits([(3, 1), (7, 2), (5, 2)])
    rows = symmetry.row_permutation(X, square_moves()[1])
    assert not np.any(rows == np.arange(len(X)))
    assert pairs_in_spectrum(X, *square_moves(), Fraction(1)).exact
    monkeypatch.setattr(symmetry, "_half_turn", lambda X, rotation: rows)
    with pytest.raises(InternalCheckFailed, match="even multiplicity"):
        pairs_in_spectrum(X, *square_moves(), Fraction(1))


def test_tic_tac_toe_pairs_in_certified_spectrum(data_dir):
    """At σ = 1 the certified spectrum of tic-tac-toe is 488 simple eigenvalues and the 235 forced pairs,
    each isolated (multiplicity exactly 2)."""
    from precise_kpca.datasets import load

    found = pairs_in_spectrum(load("tic-tac-toe", data_dir=data_dir), *board_moves(), Fraction(1))
    assert found.exact and found.count("simple") == 488 and found.count("pair") == 235 == found.forced_pairs
