"""Rayleigh–Ritz without exact solves (precise_kpca.certify.ritz): Ritz values and ‖(I − P_V)K‖_F² against
exact rational references (fmpq solves, exact spectra), and mutations of the residual bound."""
from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.arith.dyadic import Dyadic
from precise_kpca.certify import ritz
from precise_kpca.errors import InternalCheckFailed

from .test_eigen_enclosure import householder_case


def _products(n: int, g: int, noise: float, seed: int):
    """Exact G = VᵀV, H = VᵀK, Q = KᵀK for K = AV, A a random symmetric float64 matrix (exact), V its top g
    eigenvectors in float64 plus ``noise``; and the reference ‖(I − P_V)K‖_F² = tr(Q − HᵀG⁻¹H) by an exact solve."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    a = a + a.T
    _, u = np.linalg.eigh(a)
    v = Dyadic.from_float64(u[:, -g:] + noise * rng.standard_normal((n, g)))
    k = Dyadic.from_float64(a) @ v
    gram, cross, square = v.T @ v, v.T @ k, k.T @ k
    G, H, Q = gram.to_fmpq(), cross.to_fmpq(), square.to_fmpq()
    outside = Q - H.transpose() * G.solve(H)
    total = sum((outside[i, i] for i in range(g)), flint.fmpq(0))
    return gram, cross, square, Fraction(int(total.p), int(total.q))


@settings(max_examples=20, deadline=None)
@given(st.integers(6, 14), st.integers(1, 5), st.sampled_from([0.0, 1e-15, 1e-9, 1e-3]), st.integers(0, 999))
def test_residual_bound_holds_and_is_tight(n, g, noise, seed):
    """‖(I − P_V)K‖_F² ≤ ‖K − VC‖_F² ≤ (1 + 2^-19)·‖(I − P_V)K‖_F² for the C read from the Arb solve."""
    g = min(g, n - 1)
    gram, cross, square, exact = _products(n, g, noise, seed)
    found = ritz.ritz_pencil(gram, cross, prec=128, square=square).residual2
    assert exact <= found <= exact * (1 + Fraction(1, 2**19)) or found - exact <= Fraction(1, 2**400), \
        (float(exact), float(found))


def test_any_c_gives_a_valid_looser_bound():
    """C not the rounding of G⁻¹H (perturbed, or the identity): still ≥ ‖(I − P_V)K‖_F², and looser."""
    gram, cross, square, exact = _products(10, 3, 1e-6, 7)
    tight = ritz.ritz_pencil(gram, cross, prec=128, square=square).residual2
    G, H, Q = (ritz._Scaled.of(m) for m in (gram, cross, square))
    solved = gram.to_fmpq().solve(cross.to_fmpq())
    for c in (solved + flint.fmpq_mat(3, 3, [flint.fmpq(i - 4, 1000) for i in range(9)]),
              flint.fmpq_mat(3, 3, [int(i == j) for i in range(3) for j in range(3)])):
        loose = ritz._residual(G, H, Q, ritz._Scaled.of(c)).trace()
        assert loose >= exact and loose > tight


def _without_cgc(G, H, Q, C):
    """The mutant: (K − VC)ᵀ(K − VC) without its CᵀGC term."""
    hc = ritz._Scaled(H.ints.transpose() * C.ints, H.scale * C.scale)
    return ritz._combination([(Fraction(1), Q), (Fraction(-1), hc),
                              (Fraction(-1), ritz._Scaled(hc.ints.transpose(), hc.scale))])


def test_a_residual_without_the_cgc_term_is_caught(monkeypatch):
    """Dropping tr(CᵀGC) understates the residual: the containment check of the test above fails on it."""
    gram, cross, square, exact = _products(10, 3, 1e-6, 7)
    monkeypatch.setattr(ritz, "_residual", _without_cgc)
    found = ritz.ritz_pencil(gram, cross, prec=128, square=square).residual2
    assert found < exact


def test_negative_squared_residual_is_an_internal_failure():
    """Products of different bases (Q of another K) give a negative ‖K − VC‖_F²: a loud InternalCheckFailed."""
    gram, cross, square, _ = _products(10, 3, 1e-6, 7)
    with pytest.raises(InternalCheckFailed):
        ritz.ritz_pencil(gram, cross, prec=128, square=square.scaled(1, -200))


@settings(max_examples=25, deadline=None)
@given(st.fractions(min_value=-2**40, max_value=2**40, max_denominator=999).filter(lambda c: abs(c) >= 1),
       st.integers(300, 3000), st.lists(st.integers(-9, 9), min_size=4, max_size=4),
       st.lists(st.integers(-5, 5), min_size=16, max_size=16))
def test_ritz_values_of_a_tight_cluster_in_a_skewed_basis(center, k, spread, mix):
    """V = W R spans an exact invariant subspace (W orthonormal, eigenvalues c + 2^-k s_i, R an integer matrix with
    a dominant diagonal): G = RᵀR, H = RᵀAR, Q = RᵀA²R (A = W D Wᵀ). The pencil's enclosures hold the s_i 2^-128 of the spread
    wide (the shift is relative to the cluster, with G ≠ I), and the residual bound is far below ‖K‖_F²."""
    d = [center + Fraction(s, 2**k) for s in spread]
    R = flint.fmpq_mat(4, 4, [mix[4 * i + j] + (20 if i == j else 0) for i in range(4) for j in range(4)])
    a, _ = householder_case(sorted(d, reverse=True), seed=abs(sum(mix)))  # W D Wᵀ, W rational orthogonal
    A = flint.fmpq_mat(4, 4, [flint.fmpq(x.numerator, x.denominator) for x in a.ravel()])
    G, H, Q = R.transpose() * R, R.transpose() * A * R, R.transpose() * A * A * R
    found = ritz.ritz_pencil(G, H, prec=256, square=Q)
    scale = Fraction(max(max(abs(s) for s in spread), 1), 2**k)
    for (lo, hi), value in zip(found.values, sorted(d, reverse=True)):
        assert lo <= value <= hi and hi - lo <= scale * Fraction(1, 2**128), (float(center), k, spread)
    trace_q = sum((Q[i, i] for i in range(4)), flint.fmpq(0))
    assert found.residual2 <= Fraction(int(trace_q.p), int(trace_q.q)) * scale**2 * Fraction(1, 2**256)
