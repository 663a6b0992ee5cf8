"""The Ozaki-product refinement: tier 1 in two iterations, references, certified Arb eigenvalues, mutations."""
from __future__ import annotations

import math

from types import SimpleNamespace

import flint
import mpmath
import numpy as np
import pytest

from precise_kpca.arith import ozaki
from precise_kpca.numerics.eigen_refine import bounds as er_bounds
from precise_kpca.numerics.eigen_refine import correction as er_correction
from precise_kpca.numerics.eigen_refine import helpers as er_helpers
from precise_kpca.numerics.eigen_refine import products as er_products
from precise_kpca.arith.fixed import FixedMatrix
from precise_kpca.numerics.eigen import eigensystem
from precise_kpca.testing import centered_gaussian_gram, centered_gaussian_gram_fixed, gaussian_data
from precise_kpca.numerics.eigen_refine import input_bits, refine_eigensystem
from precise_kpca.numerics.binary128_gram import scaled_gaussian_gram_words

from ..eigsy_reference import reference

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
    original = er_products._diag_integers

    def corrupted(F):
        ints, exp2 = original(F)
        ints = list(ints)
        ints[0] += int(2 ** (-exp2) * 1e-20)
        return ints, exp2

    monkeypatch.setattr(er_products, "_diag_integers", corrupted)
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


# -- second-order bounds inside groups ---------------------------------------------------------------------
def _pencil(omega_scale, seed=1):
    """A c-scaled pencil (Θ + E, I + F) as a rotated cluster leaves it: E ≈ (FΘ + ΘF)/2 + tiny coupling."""
    rng = np.random.default_rng(seed)
    th = np.array([1e-3, 5e-4, 2e-4, 1e-4])
    m = len(th)
    F = rng.standard_normal((m, m)) * omega_scale
    F = (F + F.T) / 2
    np.fill_diagonal(F, 0.0)
    T0 = rng.standard_normal((m, m)) * 1e-15
    T0 = (T0 + T0.T) / 2
    np.fill_diagonal(T0, 0.0)
    E = (F * th[None, :] + th[:, None] * F) / 2 + T0
    return th, E, F


def _pencil_eigenvalues(th, E, F):
    ctx = mpmath.MPContext()
    ctx.dps = 60
    m = len(th)
    M = ctx.matrix([[ctx.mpf(float(E[i, j])) if i != j else ctx.mpf(float(th[i])) for j in range(m)] for i in range(m)])
    G = ctx.matrix([[ctx.mpf(float(F[i, j])) if i != j else ctx.mpf(1) for j in range(m)] for i in range(m)])
    Linv = ctx.inverse(ctx.cholesky(G))
    w = ctx.eigsy(Linv * M * Linv.T, eigvals_only=True)
    return ctx, sorted(w, reverse=True)


def test_group_second_order_contains_pencil_eigenvalues():
    # radii second order in ω (≈ ω² θ + ω ‖E‖), far below Ostrowski's ω |θ|, yet containing every eigenvalue;
    # mutation: claiming the group orthogonal (ω = 0) drops the ω‖E‖ term and a true eigenvalue falls outside
    th, E, F = _pencil(1e-8)
    ctx, lam = _pencil_eigenvalues(th, E, F)
    pr = SimpleNamespace(theta_hi=th, theta_lo=np.zeros_like(th), delta_g=0.0, S=E, R=F)
    omega = float(np.linalg.norm(F)) * (1 + 2.0**-40)
    e = float(np.linalg.norm(E)) * (1 + 2.0**-40)
    J = np.arange(len(th))
    c = np.ones(len(th))  # S, G - I as given are already the c-scaled ones
    radii = er_bounds.group_second_order(pr, J, c, omega, e, 1.0)
    errors = [abs(lam[i] - ctx.mpf(float(th[i]))) for i in range(len(th))]
    assert all(err <= r for err, r in zip(errors, radii))
    assert max(radii) < 1e-3 * omega * th[0]  # second order: Ostrowski would give ≥ ω θ
    wrong = er_bounds.group_second_order(pr, J, c, 0.0, e, 1.0)
    assert any(err > r for err, r in zip(errors, wrong))


# -- fixed-point input (binary128 Gram words) with an input error --------------------------------------------
@pytest.fixture(scope="module")
def binary128_40():
    g = scaled_gaussian_gram_words(gaussian_data(40, seed=3), 2**10)
    ctx = mpmath.MPContext()
    ctx.prec = 2200  # hi + lo exactly
    exact = np.array([[ctx.fadd(ctx.mpf(h), ctx.mpf(l), exact=True) for h, l in zip(rh, rl)]
                      for rh, rl in zip(g.hi, g.lo)], dtype=object)
    return g, exact, reference(exact, 110)


def test_words_input_bounds_given_and_true(binary128_40):
    g, exact, (ctx, values, vectors) = binary128_40
    F = FixedMatrix.from_words([g.hi, g.lo], bits=input_bits(40, DPS))
    res = refine_eigensystem(F, dps=DPS, tier=1, k=4, input_error=g.error_bound)
    assert res.input_error >= g.error_bound
    norm = abs(values[0])
    for i, v in enumerate(values):
        err = abs(ctx.mpf(res.values[i]) - v)
        # the binary128 matrix as given: refined to the target; the exact Gram: its error added (Weyl)
        assert err <= res.given_value_error_bounds[i] <= norm * 10.0**-DPS, i
        assert res.value_error_bounds[i] >= res.given_value_error_bounds[i] + g.error_bound * (1 - 1e-12), i
    for c in range(4):
        assert _vec_err(ctx, res, c, vectors[c]) <= res.given_vector_error_bounds[c] <= 10.0**-DPS, c
        assert res.vector_error_bounds[c] >= res.given_vector_error_bounds[c], c
    # the same matrix through mpf entries: the same eigenvalues to the bounds
    ref = refine_eigensystem(exact, dps=DPS, tier=1, k=4)
    for a, b, ba, bb in zip(res.values, ref.values, res.given_value_error_bounds, ref.value_error_bounds):
        assert abs(a - b) <= ba + bb


def test_words_input_wrong_arguments_rejected(binary128_40):
    g, _, _ = binary128_40
    F = FixedMatrix.from_words([g.hi, g.lo], bits=input_bits(40, DPS))
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="input_error"):
            refine_eigensystem(F, dps=DPS, input_error=bad)
    with pytest.raises(ValueError, match="square"):
        refine_eigensystem(F.take_columns(np.arange(39)), dps=DPS)


def test_words_input_error_too_large_is_reported():
    # an input known only to 1e-10 ‖A‖: the bounds for the exact matrix say so, the given ones reach the target
    g = scaled_gaussian_gram_words(gaussian_data(20, seed=4), 2**10)
    F = FixedMatrix.from_words([g.hi, g.lo], bits=input_bits(20, DPS))
    norm = float(np.max(np.abs(np.linalg.eigvalsh(g.hi))))
    res = refine_eigensystem(F, dps=DPS, tier=1, k=2, input_error=1e-10 * norm)
    assert min(res.value_error_bounds) >= 1e-10 * norm
    assert max(res.given_value_error_bounds) <= norm * 10.0**-DPS


# -- vector bound through a virtual Newton step ---------------------------------------------------------------
def _perturbed_basis(j_noise=1e-12, seed=7):
    """Exact S = XᵀAX, G = XᵀX (mpmath) for float64 eigenvectors of a graded A with a close pair, perturbed."""
    ctx = mpmath.MPContext()
    ctx.dps = 60
    lam = [4, 2, 1, 1 - ctx.mpf(10) ** -6, ctx.mpf(10) ** -3, 0]
    n = len(lam)
    rng = np.random.default_rng(seed)
    Qm, _ = ctx.qr(ctx.matrix(rng.standard_normal((n, n)).tolist()))  # orthogonal to 60 digits
    A = Qm * ctx.diag(lam) * Qm.T
    X = np.array(Qm.tolist(), dtype=float) + j_noise * rng.standard_normal((n, n))
    Xm = ctx.matrix(X.tolist())
    S, G = Xm.T * A * Xm, Xm.T * Xm
    theta = [S[i, i] / G[i, i] for i in range(n)]
    hi = np.array([float(t) for t in theta])
    pr = SimpleNamespace(
        S=np.array([[float((S[i, k] + S[k, i]) / 2) for k in range(n)] for i in range(n)]),
        R=np.array([[float(G[i, k] - (1 if i == k else 0)) for k in range(n)] for i in range(n)]),
        theta_hi=hi, theta_lo=np.array([float(t - h) for t, h in zip(theta, hi)]), delta_s=0.0, delta_g=0.0)
    return ctx, lam, Qm, Xm, G, pr


def test_newton_vector_bound_second_order_and_mutation():
    ctx, lam, Qm, Xm, G, pr = _perturbed_basis()
    n, j = len(lam), 2  # λ = 1, next to 1 - 1e-6
    omega = float(ctx.mnorm(G - ctx.eye(n), "f")) * (1 + 2.0**-40)
    lift = math.sqrt(1 + omega) / (1 - omega) * (1 + 2.0**-40)
    g_min = float(min(G[i, i] for i in range(n)))
    gap = float(min(abs(lam[i] - ctx.mpf(pr.theta_hi[j])) for i in range(n) if i != j)) * (1 - 1e-9)
    x = Xm[:, j] / ctx.norm(Xm[:, j])
    v = Qm[:, j]  # exact unit eigenvector of λ_j (A was built from Q)
    true = float(min(ctx.norm(x - v), ctx.norm(x + v)))
    state = SimpleNamespace(n=n, a_rounding=0.0)
    bound = er_bounds.newton_vector_bound(state, pr, j, gap, g_min, omega, lift, 0.0)
    residual = float(ctx.norm((Xm.T * (Qm * ctx.diag(lam) * Qm.T) * Xm - ctx.mpf(pr.theta_hi[j]) * G)[:, j]))
    davis_kahan = math.sqrt(2) * lift * residual / gap / math.sqrt(g_min)
    assert true <= bound <= 1e-4 * davis_kahan
    # mutation: a basis whose column j is claimed decoupled (S, G off-diagonals zeroed) must not pass
    for M in (pr.S, pr.R):
        M[:, j] = M[j, :] = 0.0
    pr.R[j, j] = float(G[j, j] - 1)
    wrong = er_bounds.newton_vector_bound(state, pr, j, gap, g_min, omega, lift, 0.0)
    assert true > wrong


# -- memory: column panels and row chunks ---------------------------------------------------------------------
def test_panels_and_chunks_never_form_full_products(monkeypatch):
    # N = 150 in column panels of 64 and row chunks of 1000 entries: no product sees more than 64 columns (no
    # N×N fixed-point product is formed, the N = 5404 memory), and the result agrees with the unblocked one
    n = 150
    g = scaled_gaussian_gram_words(gaussian_data(n, seed=1), 2**10)
    F = FixedMatrix.from_words([g.hi, g.lo], bits=input_bits(n, DPS))
    whole = refine_eigensystem(F, dps=DPS, k=4, input_error=g.error_bound)
    widths = []
    matmul = ozaki.matmul

    def recording(a, b, **kwargs):
        widths.append(b.shape[1])
        return matmul(a, b, **kwargs)

    monkeypatch.setattr(ozaki, "matmul", recording)
    monkeypatch.setattr(er_products, "_PANEL_BYTES", 1)
    monkeypatch.setattr(er_helpers, "_CHUNK_ENTRIES", 1000)
    res = refine_eigensystem(F, dps=DPS, k=4, input_error=g.error_bound)
    assert widths and max(widths) <= 64
    assert res.iterations == whole.iterations
    norm = abs(whole.values[0])
    assert max(res.given_value_error_bounds) <= norm * 10.0**-DPS
    for a, b, ba, bb in zip(res.values, whole.values, res.given_value_error_bounds, whole.given_value_error_bounds):
        assert abs(a - b) <= ba + bb
    for c in range(4):
        diff = math.sqrt(sum((res.vectors[i, c] - whole.vectors[i, c]) ** 2 for i in range(n)))
        assert diff <= res.given_vector_error_bounds[c] + whole.given_vector_error_bounds[c] <= 2 * 10.0**-DPS


# -- second-order effect of the outside Newton corrections on a rotated cluster ------------------------------
def test_outside_second_order_is_the_corrected_basis_block():
    # basis X = I, so S = M and G = I: the Newton step moves cluster column j to e_j + Σ_k E_kj e_k (k outside,
    # E_kj = T_kj / (θ_j - θ_k)), and the cluster's new shifted block is Vᵀ (M - μI) V. The returned term makes
    # the float64 block equal to it up to third order; mutation: leaving it out (the old rotation) errs by the
    # Schur term itself.
    rng = np.random.default_rng(7)
    outside_th = np.array([1.0, 0.5, 2e-3])
    cluster_th = np.array([3e-6, 2e-6, 1e-6])
    m_out, m = len(outside_th), len(cluster_th)
    n = m_out + m
    M = np.diag(np.concatenate([outside_th, cluster_th]))
    T = rng.standard_normal((m_out, m)) * 1e-5
    M[:m_out, m_out:], M[m_out:, :m_out] = T, T.T
    M[0, 1] = M[1, 0] = 1e-5  # coupling among the outside columns: third order in the block
    J = np.arange(m_out, n)
    mu = float(np.mean(cluster_th))
    W = np.zeros((n, n))
    W[:m_out, m_out:] = T / (cluster_th[None, :] - outside_th[:, None])
    pr = SimpleNamespace(theta_hi=np.diag(M).copy(), theta_lo=np.zeros(n), S=M, R=np.zeros((n, n)))
    delta = er_correction.outside_second_order(SimpleNamespace(n=n), pr, W, J, mu)

    ctx = mpmath.MPContext()
    ctx.dps = 50
    V = ctx.matrix(n, m)
    for i in range(n):
        for c in range(m):
            V[i, c] = ctx.mpf(float(W[i, J[c]])) + (1 if i == J[c] else 0)
    shifted = ctx.matrix([[ctx.mpf(float(M[i, j])) - (mu if i == j else 0) for j in range(n)] for i in range(n)])
    exact = V.T * shifted * V
    block = M[np.ix_(J, J)] - mu * np.eye(m)

    def err(b):
        return max(abs(exact[a, c] - ctx.mpf(float(b[a, c]))) for a in range(m) for c in range(m))

    schur = float(np.max(np.abs(delta)))
    assert schur > 1e-9  # Σ_k T_ka T_kb / θ_k with T ≈ 1e-5 and θ_k = 2e-3 outside
    assert err(block + delta) < 1e-4 * schur
    assert err(block) > 0.5 * schur


def test_tier2_exact_input_with_a_zero_eigenvalue_meets_its_targets():
    # A duplicated row makes e_3 - e_7 an exact null vector of the fixed-point Gram, given exactly (no read
    # rounding). Tier 2 wants relative digits only above 2**24 grid steps of A: an exact zero must not want
    # a zero bound (that never converged and returned the first checked basis, 10**-24 relative at best)
    n, bits = 20, 200
    X = gaussian_data(n, d=3, seed=5)
    X[7] = X[3]
    F = centered_gaussian_gram_fixed(X, sigma_exp2=4, bits=bits)
    res = refine_eigensystem(F, dps=DPS, tier=2)
    assert all(h["bounds_over_target"] is None or math.isfinite(h["bounds_over_target"]) for h in res.history)
    top = abs(res.values[0])
    floor = top * 2.0 ** (24 + 2 - bits) * n  # 2**24 half steps of the grid, 2 bits of slack in max |A|'s binade
    above = [i for i in range(n) if abs(res.values[i]) > floor * 10.0**DPS]
    assert len(above) == n - 2  # the duplicate's exact zero and the centering's rounded one lie below
    for i in above:
        assert res.value_error_bounds[i] <= abs(res.values[i]) * 10.0**-DPS, i
    for i in set(range(n)) - set(above):
        assert res.value_error_bounds[i] <= floor, i
    # the exact zero lies inside an enclosure
    assert min(abs(res.values[i]) - res.value_error_bounds[i] for i in range(n)) <= 0
