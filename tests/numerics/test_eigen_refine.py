"""Correctness of the fast eigen refinement against mpmath.eigsy references at small N."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.testing import centered_gaussian_gram, gaussian_data
from precise_kpca.numerics.eigen_refine import refine_eigensystem

from ..eigsy_reference import reference

DPS = 30


def gaussian_case(n: int, bits: int, seed: int = 1) -> np.ndarray:
    return centered_gaussian_gram(gaussian_data(n, seed=seed), bits=bits)


@pytest.fixture(scope="module")
def tier1_case():
    A = gaussian_case(30, bits=256)
    return A, refine_eigensystem(A, dps=DPS, tier=1, k=6), reference(A, 2 * DPS + 40)


def test_tier1_values_and_bounds(tier1_case):
    A, res, (ctx, values, _) = tier1_case
    norm = abs(values[0])
    assert all(res.values[i] >= res.values[i + 1] for i in range(len(values) - 1))
    for i, v in enumerate(values):
        err = abs(ctx.mpf(res.values[i]) - v)
        assert err <= res.value_error_bounds[i], i
        assert res.value_error_bounds[i] <= norm * 10.0**-DPS, i


def test_tier1_top_vectors(tier1_case):
    A, res, (ctx, _, vectors) = tier1_case
    assert res.vectors.shape == (30, 6)
    for c in range(6):
        err = math.sqrt(sum((ctx.mpf(res.vectors[i, c]) - vectors[c][i]) ** 2 for i in range(30)))
        assert err <= res.vector_error_bounds[c], c
        assert res.vector_error_bounds[c] <= 10.0**-DPS, c


def test_sign_convention_and_types(tier1_case):
    _, res, _ = tier1_case
    assert mpmath.mp.dps == 15
    for c in range(res.vectors.shape[1]):
        col = [abs(x) for x in res.vectors[:, c]]
        big = col.index(max(col))
        assert res.vectors[big, c] > 0
    assert all(type(v) is mpmath.mpf for v in res.values)
    assert all(type(v) is mpmath.mpf for v in res.vectors.ravel())
    # columns orthonormal to far below the target
    ctx = mpmath.MPContext()
    ctx.prec = 300
    V = [[ctx.mpf(x) for x in row] for row in res.vectors]
    for a in range(len(V[0])):
        for b in range(a, len(V[0])):
            dot = ctx.fsum(row[a] * row[b] for row in V)
            assert abs(dot - (a == b)) <= 10.0 ** -(DPS + 5)


def test_tier2_graded_spectrum_relative_digits():
    # N = 24: smallest nonzero |λ|/λ_max about 1e-30; A carries 400 bits (≈ 120 digits)
    A = gaussian_case(24, bits=400, seed=3)
    res = refine_eigensystem(A, dps=DPS, tier=2)
    ctx, values, vectors = reference(A, 160)
    noise = abs(values[0]) * 2.0**-380  # below A's own accuracy: only absolute statements
    for i, v in enumerate(values):
        err = abs(ctx.mpf(res.values[i]) - v)
        assert err <= res.value_error_bounds[i], i
        if abs(v) > noise * 10**DPS:
            assert err <= abs(v) * 10.0**-DPS, i
            assert res.value_error_bounds[i] <= abs(v) * 10.0**-DPS, i
            vec_err = math.sqrt(sum((ctx.mpf(res.vectors[r, i]) - vectors[i][r]) ** 2 for r in range(24)))
            assert vec_err <= res.vector_error_bounds[i] <= 10.0**-DPS, i
    # the exact zero from centering is found, within its bound
    assert abs(res.values[-1]) <= res.value_error_bounds[-1]


def _hadamard(n: int) -> np.ndarray:
    h = np.array([[1]], dtype=object)
    while len(h) < n:
        h = np.block([[h, h], [h, -h]])
    return h


def test_repeated_eigenvalues_invariant_subspaces():
    # A = Q diag(λ) Qᵀ with the dyadic orthogonal Q = H16/4: exactly repeated and graded eigenvalues
    from fractions import Fraction

    n = 16
    Q = _hadamard(n) * Fraction(1, 4)
    lam = [Fraction(x) for x in (3, 3, 3, 1, 1, Fraction(1, 2), 0, 0)]
    lam += [Fraction(1, 2**k) for k in (40, 41, 80, 81, 120, 121, 160, 200)]
    lam_sorted = sorted(lam, reverse=True)
    A = (Q * np.array(lam, dtype=object)) @ Q.T
    ctx = mpmath.MPContext()
    ctx.prec = 400  # holds every entry (dyadic, 210 bits) exactly
    Amp = np.array([[ctx.mpf(x.numerator) / x.denominator for x in row] for row in A], dtype=object)
    res = refine_eigensystem(Amp, dps=DPS, tier=2, max_bits=300)
    for i, v in enumerate(lam_sorted):
        err = abs(ctx.mpf(res.values[i]) - ctx.mpf(v.numerator) / v.denominator)
        assert err <= res.value_error_bounds[i], i
        # relative digits where A's 300 bits allow them, else absolute at A's accuracy
        assert err <= (v * 10.0**-DPS if v >= Fraction(1, 2**160) else 2.0**-240), i
    # every returned vector lies in its true eigenspace up to its (subspace) bound
    for c in range(n):
        v = [ctx.mpf(x) for x in res.vectors[:, c]]
        cols = [j for j in range(n) if lam[j] == lam_sorted[c]]
        q = {j: [ctx.mpf(Q[r, j].numerator) / Q[r, j].denominator for r in range(n)] for j in cols}
        proj = {j: ctx.fsum(q[j][r] * v[r] for r in range(n)) for j in cols}
        # ‖v - Σ proj_j q_j‖ directly (‖v‖² - Σ proj² would cancel to sqrt(2**-prec))
        outside = ctx.sqrt(ctx.fsum((v[r] - ctx.fsum(proj[j] * q[j][r] for j in cols)) ** 2 for r in range(n)))
        assert outside <= res.vector_error_bounds[c], c
    assert any(stop - start == 3 for start, stop in res.clusters)  # the triple eigenvalue 3


@settings(max_examples=12, deadline=None)
@given(st.integers(min_value=2, max_value=7).flatmap(
    lambda n: st.lists(st.integers(-2**20, 2**20), min_size=n * n, max_size=n * n).map(
        lambda xs: (n, xs))))
def test_random_integer_matrices_bounds_hold(case):
    n, xs = case
    M = np.array(xs, dtype=object).reshape(n, n)
    M = M + M.T
    A = np.array([[mpmath.mpf(int(x)) for x in row] for row in M], dtype=object)
    res = refine_eigensystem(A, dps=20, tier=2, max_bits=200)
    ctx, values, _ = reference(A, 80)
    for i, v in enumerate(values):
        assert abs(ctx.mpf(res.values[i]) - v) <= res.value_error_bounds[i]


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        refine_eigensystem(np.empty((2, 3), dtype=object), dps=30)
    with pytest.raises(ValueError, match="mpf"):
        refine_eigensystem(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=object), dps=30)
    with pytest.raises(ValueError, match="tier"):
        refine_eigensystem(np.array([[mpmath.mpf(1)]], dtype=object), dps=30, tier=3)


def test_diagnostics_go_to_the_module_logger(caplog, capsys):
    """Per-stage timings and the bound components are DEBUG records of the module's logger, never prints."""
    A = gaussian_case(12, bits=200)
    with caplog.at_level("DEBUG", logger="precise_kpca.numerics.eigen_refine"):
        refine_eigensystem(A, dps=20, tier=1, k=2)
    messages = [r.getMessage() for r in caplog.records if r.levelname == "DEBUG"]
    assert any(m.startswith("bounds: groups") for m in messages)
    assert any(m.startswith("products (A ") for m in messages)
    assert capsys.readouterr().out == ""


def test_nonsymmetric_input_encloses_the_symmetric_part():
    """A skew part of 1e-20 is symmetrised away exactly ((A + Aᵀ)/2 through FixedMatrix.from_integers) and added to
    the bounds: they hold the eigenvalues of the symmetric part (mpmath eigsy of it, twice the digits) and cover
    the skew part's norm."""
    A = gaussian_case(12, bits=200, seed=5)
    skew = mpmath.mpf(10) ** -20
    A[0, 1], A[1, 0] = A[0, 1] + skew, A[1, 0] - skew
    res = refine_eigensystem(A, dps=DPS, tier=1, k=3)
    sym = np.array([[(A[i, j] + A[j, i]) / 2 for j in range(12)] for i in range(12)], dtype=object)
    ctx, values, _ = reference(sym, 2 * DPS + 40)
    for i, v in enumerate(values):
        assert abs(ctx.mpf(res.values[i]) - v) <= res.value_error_bounds[i], i
    assert min(res.value_error_bounds) >= skew
