"""The Ozaki-product refinement: tier 1 in two iterations, references, certified Arb eigenvalues, mutations."""
from __future__ import annotations

import math

import flint
import pytest

import precise_kpca.numerics.eigen_refine as er
from precise_kpca.numerics.eigen import eigensystem
from precise_kpca.numerics.eigen_gallery import centered_gaussian_gram, gaussian_data
from precise_kpca.numerics.eigen_refine import refine_eigensystem

from .eigsy_reference import reference

DPS = 30


def _vec_err(ctx, res, c, ref_vec):
    return math.sqrt(sum((ctx.mpf(res.vectors[i, c]) - ref_vec[i]) ** 2 for i in range(res.vectors.shape[0])))


@pytest.fixture(scope="module")
def graded40():
    A = centered_gaussian_gram(gaussian_data(40, seed=2), bits=256)
    return A, reference(A, 110)


def test_tier1_two_iterations_bounds_contain_errors(graded40):
    A, (ctx, values, vectors) = graded40
    res = refine_eigensystem(A, dps=DPS, tier=1, k=8)
    assert res.iterations <= 2
    norm = abs(values[0])
    for i, v in enumerate(values):
        err = abs(ctx.mpf(res.values[i]) - v)
        assert err <= res.value_error_bounds[i], i
        assert res.value_error_bounds[i] <= norm * 10.0**-DPS, i
    for c in range(8):
        err = _vec_err(ctx, res, c, vectors[c])
        assert err <= res.vector_error_bounds[c] <= 10.0**-DPS, c


def test_tier2_relative_digits(graded40):
    A, (ctx, values, vectors) = graded40
    res = refine_eigensystem(A, dps=DPS, tier=2)
    noise = abs(values[0]) * 2.0**-230  # A carries ~256 bits: below that only absolute statements
    for i, v in enumerate(values):
        err = abs(ctx.mpf(res.values[i]) - v)
        assert err <= res.value_error_bounds[i], i
        if abs(v) > noise * 10**DPS:
            assert res.value_error_bounds[i] <= abs(v) * 10.0**-DPS, i
            assert _vec_err(ctx, res, i, vectors[i]) <= res.vector_error_bounds[i] <= 10.0**-DPS, i


def test_arb_certified_eigenvalues_inside_bounds():
    # an independent, certified reference: Arb's eig at 640 bits on a small graded Gram
    A = centered_gaussian_gram(gaussian_data(12, seed=5), bits=200)
    res = refine_eigensystem(A, dps=DPS, tier=1, k=3)
    with flint.ctx.workprec(640):
        M = flint.arb_mat([[flint.arb(flint.fmpq(*_ratio(x))) for x in row] for row in A])
        eig = flint.acb_mat(M).eig(multiple=True)
        mids = sorted((z.real for z in eig), key=lambda z: -float(z.mid()))
        for i, z in enumerate(mids):
            v = flint.fmpq(*_ratio(res.values[i]))
            r = flint.fmpq(*_ratio(res.value_error_bounds[i]))
            assert z.rad() < 1e-100
            assert flint.arb(v - r) < z < flint.arb(v + r), i


def _ratio(x):
    sign, man, exp, _ = x._mpf_
    man = -int(man) if sign else int(man)
    return (man << exp, 1) if exp >= 0 else (man, 1 << -exp)


def test_mutation_corrupted_product_is_caught(graded40, monkeypatch):
    # corrupt the diagonal of S = XᵀAX by 1e-20 (normalised units) at every step: the reported values then
    # leave their reported bounds, and the reference check must see it
    A, (ctx, values, _) = graded40
    original = er._diag_integers

    def corrupted(F):
        ints, exp2 = original(F)
        ints = list(ints)
        ints[0] += int(2 ** (-exp2) * 1e-20)
        return ints, exp2

    monkeypatch.setattr(er, "_diag_integers", corrupted)
    res = refine_eigensystem(A, dps=DPS, tier=1, k=3)
    errs = [abs(ctx.mpf(res.values[i]) - v) for i, v in enumerate(values)]
    assert any(e > b for e, b in zip(errs, res.value_error_bounds))


def test_mutation_wrong_eigenvalue_is_caught(graded40):
    A, (ctx, values, _) = graded40
    res = refine_eigensystem(A, dps=DPS, tier=1, k=3)
    wrong = res.values.copy()
    wrong[5] = wrong[5] + 3 * res.value_error_bounds[5]
    assert abs(ctx.mpf(wrong[5]) - values[5]) > res.value_error_bounds[5]


def test_not_converged_when_bits_are_short():
    # A read to 60 bits cannot give 30 digits: the bounds say so (no false convergence)
    A = centered_gaussian_gram(gaussian_data(20, seed=4), bits=200)
    res = refine_eigensystem(A, dps=DPS, tier=1, k=2, max_bits=60)
    norm = abs(res.values[0])
    assert max(res.value_error_bounds) > norm * 10.0**-DPS


def test_eigensystem_tier_keyword():
    A = centered_gaussian_gram(gaussian_data(16, seed=6), bits=200)
    s1 = eigensystem(A, dps=DPS, k=3)
    s2 = eigensystem(A, dps=DPS, k=3, tier=2)
    assert s1.vectors.shape == s2.vectors.shape == (16, 3)
    for a, c in zip(s1.values[:5], s2.values[:5]):
        assert abs(a - c) <= abs(s1.values[0]) * 1e-28
    with pytest.raises(ValueError, match="tier"):
        eigensystem(A, dps=DPS, k=3, tier=3)


def test_tier1_dps60_against_eigsy():
    # bounds far below 2**-104 relative: the intervals are centred on the exact Rayleigh quotients
    A = centered_gaussian_gram(gaussian_data(20, seed=8), bits=320)
    res = refine_eigensystem(A, dps=60, tier=1, k=3)
    ctx, values, vectors = reference(A, 150)
    norm = abs(values[0])
    for i, v in enumerate(values):
        err = abs(ctx.mpf(res.values[i]) - v)
        assert err <= res.value_error_bounds[i] <= norm * 10.0**-60, i
    for c in range(3):
        assert _vec_err(ctx, res, c, vectors[c]) <= res.vector_error_bounds[c] <= 10.0**-60, c
