"""Rigorous enclosures of float64 eigensystems (certify.eigen_enclosure) against exact spectra."""
from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from precise_kpca.arith import ozaki
from precise_kpca.arith.fixed import FixedMatrix, digit_bits_for
from precise_kpca.certify.eigen_enclosure import enclose_eigensystem
from precise_kpca.testing import centered_gaussian_gram, gaussian_data

from ..eigsy_reference import eigsy_descending

EPS = np.finfo(float).eps
REF_DPS = 60


# -- exact test matrices ----------------------------------------------------------------------------------
def householder_case(d, seed=0, reflections=3):
    """A = Q diag(d) Qᵀ with Q a product of rational Householder reflections: exact spectrum and vectors."""
    n = len(d)
    rng = np.random.default_rng(seed)
    Q = flint.fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])
    for _ in range(reflections):
        v = flint.fmpq_mat(n, 1, [int(x) for x in rng.integers(-9, 10, size=n)])
        vv = (v.transpose() * v)[0, 0]
        Q = Q * (flint.fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)]) - v * v.transpose() * (2 / vv))
    D = flint.fmpq_mat(n, n, [flint.fmpq(d[i].numerator, d[i].denominator) if i == j else 0
                                  for i in range(n) for j in range(n)])
    A = Q * D * Q.transpose()
    entries = [Fraction(int(x.p), int(x.q)) for x in A.entries()]
    q_entries = [Fraction(int(x.p), int(x.q)) for x in Q.entries()]
    return np.array(entries, dtype=object).reshape(n, n), np.array(q_entries, dtype=object).reshape(n, n)


def gram_case(n, sigma_exp2, seed=3):
    """Centered Gaussian Gram (exact: its mpf entries) as fractions."""
    A = centered_gaussian_gram(gaussian_data(n, seed=seed), sigma_exp2=sigma_exp2, bits=200)
    return np.array([Fraction(*_mpf_ratio(x)) for x in A.ravel()], dtype=object).reshape(n, n)


def _mpf_ratio(x):
    sign, man, exp, _ = x._mpf_
    man = -int(man) if sign else int(man)
    return (man << exp, 1) if exp >= 0 else (man, 1 << -exp)


def fixed_point(A, bits):
    """(A_hp, delta): A rounded to ``bits`` bits below its largest entry, and a bound on ‖A − A_hp‖_F."""
    n = A.shape[0]
    top = max(abs(x) for x in A.ravel())
    e0 = math.floor(math.log2(top)) + 1 - bits
    unit = Fraction(2) ** e0
    ints = np.array([round(x / unit) for x in A.ravel()], dtype=object).reshape(n, n)
    err2 = sum((x - i * unit) ** 2 for x, i in zip(A.ravel(), ints.ravel()))
    A_hp = FixedMatrix.from_integers(ints, e0, digit_bits=digit_bits_for(n))
    return A_hp, math.nextafter(math.sqrt(float(err2)), math.inf) * (1 + 1e-12)


def float_eigensystem(A):
    w, V = np.linalg.eigh(np.array([[float(x) for x in row] for row in A]))
    order = np.argsort(-w, kind="stable")
    return np.ascontiguousarray(w[order]), np.ascontiguousarray(V[:, order])


def reference(A):
    """mpmath.eigsy at REF_DPS: eigenvalues descending and eigenvectors (columns)."""
    ctx = mpmath.MPContext()
    ctx.dps = REF_DPS
    values, vectors = eigsy_descending(ctx, [[ctx.mpf(x.numerator) / x.denominator for x in row] for row in A])
    return ctx, values, ctx.matrix(vectors).T


def true_sin(ctx, Y, V):
    """Largest principal-angle sine between span Y (float64 N×m) and span V (orthonormal mp N×m)."""
    Ym = ctx.matrix(Y.tolist())
    M = Ym.T * Ym
    W = V.T * Ym
    S = M - W.T * W  # Yᵀ(I − VVᵀ)Y
    L = ctx.cholesky(M)
    Li = L ** -1
    values = ctx.eigsy(Li * S * Li.T)[0]
    return ctx.sqrt(max(max(values), 0))


def exact(x):
    """A Fraction or an mpf (any context) as an exact Fraction."""
    return x if isinstance(x, Fraction) else Fraction(*_mpf_ratio(x))


def contains(enc, i, value):
    return exact(enc.lower[i]) <= exact(value) <= exact(enc.upper[i])


def width(enc, i):
    return float(exact(enc.upper[i]) - exact(enc.lower[i]))


# -- exact spectra ----------------------------------------------------------------------------------------
DISTINCT = [Fraction(40 - 3 * i, 7) + Fraction(1, 10 ** (i % 4 + 1)) for i in range(12)] + [Fraction(0)] * 4 + \
    [Fraction(-1, 3 + i) for i in range(8)]


@pytest.fixture(scope="module")
def distinct_case():
    d = sorted(DISTINCT, reverse=True)
    A, Q = householder_case(d, seed=1)
    A_hp, delta = fixed_point(A, 160)
    values, vectors = float_eigensystem(A)
    return d, A, Q, A_hp, delta, values, vectors


def test_exact_spectrum_contained_and_tight(distinct_case):
    d, A, Q, A_hp, delta, values, vectors = distinct_case
    enc = enclose_eigensystem(A_hp, delta, values, vectors, k=4, groups=[(0, 1), (1, 3), (3, 4)])
    norm = float(d[0])
    for i, v in enumerate(d):
        assert contains(enc, i, v), i
        assert width(enc, i) <= 1e3 * EPS * norm, i  # global-bound scale at least
    isolated = [i for i, m in enumerate(enc.method) if m == "kato-temple"]
    assert set(range(12)) <= set(isolated)
    for i in range(12):
        assert width(enc, i) <= 1e-25 * norm, i
    assert "block" in enc.method  # the four exact zeros are one run
    assert enc.omega <= 100 * EPS and enc.omega > 0
    assert enc.digits_relative_to_norm["top_k"] >= 25
    assert enc.norm_bounds[0] <= norm <= enc.norm_bounds[1]
    assert np.all(enc.rayleigh_residuals <= enc.residual_norms * 1.01 + 2 * delta)  # θ minimises the residual
    assert abs(exact(enc.rayleigh[0]) - d[0]) <= 1e-25 * norm  # Rayleigh quotients are second-order accurate
    with flint.ctx.workprec(200):
        assert all(enc.ball(i).contains(flint.fmpq(v.numerator, v.denominator)) for i, v in enumerate(d))
        assert enc.ball(0).rad() <= 1e-25 * norm


def test_group_sin_bounds_hold(distinct_case):
    d, A, Q, A_hp, delta, values, vectors = distinct_case
    enc = enclose_eigensystem(A_hp, delta, values, vectors, k=4, groups=[(0, 1), (1, 3), (3, 4)])
    ctx = mpmath.MPContext()
    ctx.dps = 80
    for g in enc.groups:
        V = ctx.matrix([[ctx.mpf(Q[r, c].numerator) / Q[r, c].denominator for c in range(g.start, g.stop)]
                        for r in range(len(d))])
        angle = true_sin(ctx, vectors[:, g.start:g.stop], V)
        assert g.sin_theta is not None, g.reason
        assert angle <= g.sin_theta <= 1e3 * EPS, (g, angle)


def test_block_bound_on_repeated_eigenvalues():
    d = [Fraction(5), Fraction(3), Fraction(3), Fraction(3), Fraction(1)] + [Fraction(1, 2 + i) for i in range(20)]
    A, Q = householder_case(d, seed=2)
    A_hp, delta = fixed_point(A, 160)
    values, vectors = float_eigensystem(A)
    enc = enclose_eigensystem(A_hp, delta, values, vectors, k=5, groups=[(0, 1), (1, 4), (1, 2), (2, 5)])
    for i, v in enumerate(d):
        assert contains(enc, i, v), i
    assert enc.method[1:4] == ("block",) * 3
    assert max(width(enc, i) for i in range(1, 4)) <= 1e-25 * 5
    ctx = mpmath.MPContext()
    ctx.dps = 80
    V = ctx.matrix([[ctx.mpf(Q[r, c].numerator) / Q[r, c].denominator for c in range(1, 4)] for r in range(len(d))])
    whole, split, straddle = enc.groups[1], enc.groups[2], enc.groups[3]
    assert whole.sin_theta is not None and true_sin(ctx, vectors[:, 1:4], V) <= whole.sin_theta <= 1e-12
    for g in (split, straddle):  # a basis vector of a repeated eigenvalue is not determined: refused
        assert g.sin_theta is None
        # λ̂ may sit just outside the true tie: then a tiny positive gap is proven, and the bound is ≥ 1
        assert "not separated" in g.reason or (g.gap <= 1e3 * EPS * 5 and "bound ≥ 1" in g.reason), g


# -- centered Gaussian Grams against mp references --------------------------------------------------------
@pytest.mark.parametrize("sigma_exp2", [0, 8, 20])
def test_gaussian_gram_against_reference(sigma_exp2):
    n, k = 36, 3
    A = gram_case(n, sigma_exp2)
    A_hp, delta = fixed_point(A, 140)
    values, vectors = float_eigensystem(A)
    enc = enclose_eigensystem(A_hp, delta, values, vectors, k=k)
    ctx, ref_values, ref_vectors = reference(A)
    norm = float(abs(ref_values[0]))
    for i, v in enumerate(ref_values):
        assert contains(enc, i, v), (i, v, enc.lower[i], enc.upper[i])
        assert width(enc, i) <= 1e-13 * norm, i
    for i in range(k):
        assert enc.method[i] == "kato-temple" and width(enc, i) <= 1e-25 * norm, i
    for g in enc.groups:
        angle = true_sin(ctx, vectors[:, g.start:g.stop], ref_vectors[:, g.start:g.stop])
        assert g.sin_theta is not None and angle <= g.sin_theta <= 1e-10, (g, angle)


# -- wrong inputs stay valid, with wider enclosures -------------------------------------------------------
def test_perturbed_inputs_still_enclose(distinct_case):
    d, A, Q, A_hp, delta, values, vectors = distinct_case
    base = enclose_eigensystem(A_hp, delta, values, vectors, k=2)
    rng = np.random.default_rng(5)
    shifted = values.copy()
    shifted[0] += 1e-9 * values[0]
    bad_column = vectors.copy()
    bad_column[:, 0] += 1e-7 * rng.standard_normal(len(d))
    ctx = mpmath.MPContext()
    ctx.dps = 80
    V0 = ctx.matrix([[ctx.mpf(Q[r, 0].numerator) / Q[r, 0].denominator] for r in range(len(d))])
    for vals, vecs in ((shifted, vectors), (values, bad_column)):
        enc = enclose_eigensystem(A_hp, delta, vals, vecs, k=2)
        for i, v in enumerate(d):
            assert contains(enc, i, v), i
        assert enc.global_radius > 10 * base.global_radius
        angle = true_sin(ctx, vecs[:, :1], V0)
        assert angle <= enc.groups[0].sin_theta and enc.groups[0].sin_theta > 10 * base.groups[0].sin_theta


def test_perturbed_matrix_within_delta(distinct_case):
    """A_hp = A + Δ with ‖Δ‖_F ≤ delta and the eigensystem of A_hp: only delta connects the bounds to A."""
    d, A, Q, _, _, _, _ = distinct_case
    n = len(d)
    rng = np.random.default_rng(6)
    noise = rng.standard_normal((n, n)) * 1e-10
    noisy = A + np.array([[Fraction(x) for x in row] for row in (noise + noise.T)], dtype=object)
    A_hp, rounding = fixed_point(noisy, 200)
    delta = rounding + 2.01 * float(np.linalg.norm(noise))
    values, vectors = float_eigensystem(noisy)
    enc = enclose_eigensystem(A_hp, delta, values, vectors, k=1)
    for i, v in enumerate(d):
        assert contains(enc, i, v), i
        assert width(enc, i) >= 2 * delta
    ctx = mpmath.MPContext()
    ctx.dps = 80
    V0 = ctx.matrix([[ctx.mpf(Q[r, 0].numerator) / Q[r, 0].denominator] for r in range(n)])
    angle = true_sin(ctx, vectors[:, :1], V0)
    assert angle > 1e-12 and angle <= enc.groups[0].sin_theta <= 1e3 * float(angle)


# -- input validation -------------------------------------------------------------------------------------
def test_validation(distinct_case):
    d, A, Q, A_hp, delta, values, vectors = distinct_case
    ok = dict(k=2)
    with pytest.raises(ValueError, match="descending"):
        enclose_eigensystem(A_hp, delta, values[::-1].copy(), vectors, **ok)
    with pytest.raises(ValueError, match="shapes"):
        enclose_eigensystem(A_hp, delta, values[:-1], vectors, **ok)
    with pytest.raises(ValueError, match="finite"):
        bad = vectors.copy()
        bad[0, 0] = np.nan
        enclose_eigensystem(A_hp, delta, values, bad, **ok)
    with pytest.raises(ValueError, match="delta"):
        enclose_eigensystem(A_hp, -1.0, values, vectors, **ok)
    with pytest.raises(ValueError, match="k must"):
        enclose_eigensystem(A_hp, delta, values, vectors, k=11)
    with pytest.raises(ValueError, match="group"):
        enclose_eigensystem(A_hp, delta, values, vectors, k=2, groups=[(1, 3)])
    with pytest.raises(TypeError, match="FixedMatrix"):
        enclose_eigensystem(np.eye(len(d)), delta, values, vectors, **ok)
    with pytest.raises(ValueError, match="orthonormal"):
        enclose_eigensystem(A_hp, delta, values, 2 * vectors, **ok)
    n = len(d)
    ints = np.array([[int(i == j) + int(i == 0 and j == 1) for j in range(n)] for i in range(n)], dtype=object)
    with pytest.raises(ValueError, match="symmetric"):
        enclose_eigensystem(FixedMatrix.from_integers(ints, 0, digit_bits=20), delta, values, vectors, **ok)


def test_global_bound_with_scaled_columns():
    """Columns off unit length by 1e-10: X̂ᵀAX̂ moves by ~2e-10·λ, which only Ostrowski's factor covers."""
    d = [Fraction(5), Fraction(3), Fraction(3), Fraction(3), Fraction(1)] + [Fraction(1, 2 + i) for i in range(20)]
    A, _ = householder_case(d, seed=4)
    A_hp, delta = fixed_point(A, 160)
    values, vectors = float_eigensystem(A)
    scaled = vectors * (1 + 1e-10 * np.arange(1, len(d) + 1))
    enc = enclose_eigensystem(A_hp, delta, values, scaled, k=1, max_block=1)
    assert 1e-10 < enc.omega < 1e-7
    assert enc.method[1:4] == ("global",) * 3 and enc.method[0] == "kato-temple"
    for i, v in enumerate(d):
        assert contains(enc, i, v), i


def test_vectors_rounded_to_fewer_bits(distinct_case):
    """With X̂ read on a 40-bit grid, the certified span is the float64 one: the rounding enters the sin bound."""
    d, A, Q, A_hp, delta, values, vectors = distinct_case
    exact_read = enclose_eigensystem(A_hp, delta, values, vectors, k=1)
    enc = enclose_eigensystem(A_hp, delta, values, vectors, k=1, max_vector_bits=40)
    for i, v in enumerate(d):
        assert contains(enc, i, v), i
    ctx = mpmath.MPContext()
    ctx.dps = 80
    V0 = ctx.matrix([[ctx.mpf(Q[r, 0].numerator) / Q[r, 0].denominator] for r in range(len(d))])
    g = enc.groups[0]
    assert true_sin(ctx, vectors[:, :1], V0) <= g.sin_theta
    assert g.sin_theta > 2.0**-41 > 100 * exact_read.groups[0].sin_theta


# -- Ritz-subspace bound from exact g×g products ----------------------------------------------------------
def _ritz_inputs(A_hp, V):
    from precise_kpca.certify.eigen_enclosure import fmpq_matrix

    Vf = FixedMatrix.from_float64(V, bits=128)  # exact: the entries span far less than 128 bits
    P = ozaki.matmul(A_hp, Vf)
    return [fmpq_matrix(ozaki.matmul(a.T, b)) for a, b in ((Vf, Vf), (Vf, P), (P, P))]


def test_ritz_subspace_bound_for_a_close_pair():
    """A pair 2⁻³⁰ apart is one group: its basis tilted by ~1e-9 out of the subspace gets a sound, tight bound;
    splitting the pair, or enclosures that do not separate the group, give no bound or a sound one."""
    from precise_kpca.certify.eigen_enclosure import ritz_subspace_sin_theta

    d = [Fraction(10), Fraction(5) + Fraction(1, 2**30), Fraction(5), Fraction(1), Fraction(1, 2), Fraction(1, 10)]
    A, Q = householder_case(d, seed=4)
    A_hp, delta = fixed_point(A, 120)
    rng = np.random.default_rng(1)
    tilt = 1e-9 * rng.standard_normal((6, 2))
    V = np.array(Q[:, 1:3], dtype=float) + np.outer(np.array(Q[:, 3], dtype=float), [1.0, 0.0]) * 1e-9 + tilt * 1e-3
    ctx = mpmath.MPContext()
    ctx.dps = REF_DPS
    U = ctx.matrix([[ctx.mpf(x.numerator) / x.denominator for x in row] for row in Q[:, 1:3]])
    true = float(true_sin(ctx, V, U))
    G, H, QQ = _ritz_inputs(A_hp, V)
    bound = ritz_subspace_sin_theta(G, H, QQ, delta, d, d, 1, 3)
    assert bound is not None and true <= bound <= 20 * true, (true, bound)

    # the pair split: one vector of the tilted basis against its own eigenvalue — sound or refused
    G1, H1, Q1 = _ritz_inputs(A_hp, V[:, :1])
    U1 = ctx.matrix([[ctx.mpf(x.numerator) / x.denominator] for x in Q[:, 1]])
    split = ritz_subspace_sin_theta(G1, H1, Q1, delta, d, d, 1, 2)
    assert split is None or float(true_sin(ctx, V[:, :1], U1)) <= split

    # mutation: enclosures of the neighbours widened over the group's Ritz values must refuse
    wide_upper = list(d)
    wide_upper[3] = Fraction(6)
    assert ritz_subspace_sin_theta(G, H, QQ, delta, d, wide_upper, 1, 3) is None
    # a basis far from the subspace: refused, or bounded soundly
    far = np.array(Q[:, 1:3], dtype=float) + 0.3 * np.array(Q[:, 3:5], dtype=float)
    Gf, Hf, Qf = _ritz_inputs(A_hp, far)
    far_bound = ritz_subspace_sin_theta(Gf, Hf, Qf, delta, d, d, 1, 3)
    assert far_bound is None or float(true_sin(ctx, far, U)) <= far_bound


@settings(max_examples=25, deadline=None)
@given(st.fractions(min_value=-2**40, max_value=2**40, max_denominator=999).filter(lambda c: abs(c) >= 1),
       st.integers(300, 3000), st.lists(st.integers(-9, 9), min_size=4, max_size=4), st.integers(0, 99))
@example(Fraction(-111, 106), 300, [0, 2, 2, -2], 2)  # a double eigenvalue beside simple ones: Arb 2^-8 wide at 256
def test_ritz_enclosures_resolve_a_cluster_far_below_their_precision(center, k, spread, seed):
    """Eigenvalues c + 2^-k·s_i (c any rational, s_i small integers, repeats allowed) of an exact rational
    Q diag(·) Qᵀ, k up to 3000 bits below c: the 256-bit enclosures hold them, 2^-128 of the spread wide. The
    precision was relative to c (widths ~c·2^-320: Weyl-wide Gaussian ties at σ = 2^200)."""
    from precise_kpca.certify.ritz import ritz_enclosures

    d = sorted((center + Fraction(s, 2**k) for s in spread), reverse=True)
    A, _ = householder_case(d, seed=seed)
    C = flint.fmpq_mat(4, 4, [flint.fmpq(x.numerator, x.denominator) for row in A for x in row])
    ritz = ritz_enclosures(C, 256)
    assert ritz is not None
    scale = Fraction(max(max(abs(s) for s in spread), 1), 2**k)
    for (lo, hi), value in zip(ritz, d):
        assert lo <= value <= hi and hi - lo <= scale * Fraction(1, 2**128), (float(center), k, spread)
