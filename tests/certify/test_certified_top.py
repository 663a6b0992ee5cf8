"""The binary128 route from the top eigenpairs alone: the tail certified below a threshold by a shifted floating-point
Cholesky factorization (certify/float64_enclosure.certify_tail), the top rank(L) eigenvalues by Li–Li on exact
products (enclose_top_block), partial eigenpairs from Lanczos with the Newton step's complement solved by conjugate
gradients (measures/enclosed.py).

References are independent: mpmath eigsy at 60 digits on the exact float64 matrix, tests/reference.py (plain mpmath
on the exact data) for the measures. Mutations: the error a bound must cover is dropped, or a radius tightened 100×,
and the truth is lost or a false statement certified.
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from precise_kpca.backends.base import as_fraction
from precise_kpca.certify import float64_enclosure
from precise_kpca.certify.float64_enclosure import certify_tail
from precise_kpca.errors import InsufficientPrecision
from precise_kpca.measures import enclosed
from precise_kpca.measures.measurement import interval_digits
from precise_kpca.measures.results import fraction_ends
from precise_kpca.numerics.data import clear as clear_derived

from ..reference import eigensystems, reference
from .test_enclosure_mutations import tighten_li_li


def _matrix(spectrum, seed=0) -> np.ndarray:
    n = len(spectrum)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    A = (Q * np.asarray(spectrum)) @ Q.T
    return (A + A.T) / 2


def _top(A, m):
    w, V = np.linalg.eigh(A)
    return w[::-1], np.ascontiguousarray(V[:, ::-1][:, :m])


def _eigenvalues(A) -> list[Fraction]:
    ctx = mpmath.MPContext()
    ctx.dps = 60
    values = ctx.eigsy(ctx.matrix(A.tolist()), eigvals_only=True)
    return sorted((as_fraction(values[i]) for i in range(A.shape[0])), reverse=True)


def test_the_tail_is_certified_below_a_threshold_just_above_it_and_only_there():
    A = _matrix([10.0, 7.0, 5.0] + list(np.linspace(1.0, 0.0, 37)))
    w, Q = _top(A, 3)
    lam = _eigenvalues(A)[3]  # the first eigenvalue past the top three, ≈ 1
    for alpha in (float(lam) * (1 + 1e-9), 3.0, 4.9):
        certify_tail(A, 0, Q, alpha, 2 * w[0])
    for alpha in (float(lam) * (1 - 1e-9), float(lam) * (1 + 1e-15)):  # false, or within rounding: refused
        with pytest.raises(InsufficientPrecision):
            certify_tail(A, 0, Q, alpha, 2 * w[0])
    with pytest.raises(InsufficientPrecision):
        certify_tail(A, 0, Q[:, :2], 4.9, 2 * w[0])  # λ_2 = 5 lies above 4.9: the top block must hold it


def test_the_certificate_covers_every_matrix_within_delta(monkeypatch):
    """A_f's λ_3 is 1, and a matrix within δ = 0.02 of A_f has λ_3 = 1.015: α = 1.01 must be refused for δ = 0.02
    (the statement is false for that matrix) and accepted for δ = 0. Mutation: δ left out of ε certifies it."""
    A = _matrix([10.0, 7.0, 5.0] + list(np.linspace(1.0, 0.0, 17)), seed=2)
    w, Q = _top(A, 3)
    with pytest.raises(InsufficientPrecision):
        certify_tail(A, Fraction(1, 50), Q, 1.01, 2 * w[0])
    certify_tail(A, 0, Q, 1.01, 2 * w[0])
    float_up = float64_enclosure.float_up
    monkeypatch.setattr(float64_enclosure, "float_up", lambda x: 0.0 if x == Fraction(1, 50) else float_up(x))
    certify_tail(A, Fraction(1, 50), Q, 1.01, 2 * w[0])  # the mutant certifies the false statement


@pytest.fixture
def partial(monkeypatch):
    """The certified-top path on small data: Lanczos pairs and the Cholesky certificate from N = 1."""
    monkeypatch.setattr(enclosed, "PARTIAL_MIN_N", 1)
    clear_derived(enclosed._enclosure_cached)
    yield
    clear_derived(enclosed._enclosure_cached)


def _wine_like(n=60, seed=1):
    return np.random.default_rng(seed).normal(size=(n, 3)) * np.array([100.0, 3.0, 1.0])


@pytest.mark.slow
@pytest.mark.parametrize("p", [-2, 3, 8])
def test_certified_top_intervals_contain_the_reference(partial, p):
    X = _wine_like()
    sigma = Fraction(2) ** p
    enc = enclosed.spectrum_enclosure(X, sigma, exact_products=False)
    assert len(enc.lower) == enclosed.linear_for(X).rank + 1  # the top block and one bound for the tail
    for name, k in (("eigenvalue", 1), ("eigenprojection", 1), ("eigenprojection", 2), ("pc", 2)):
        if name == "eigenvalue":
            lo, hi = fraction_ends(*enclosed.eigenvalue_interval(enc, X))
        elif name == "eigenprojection":
            lo, hi = enclosed.eigen_distance_interval(enc, X, k, 1e-6, "mean")
        else:
            lo, hi = enclosed.pc_interval(enc, X, k)
        want = reference(X, name, sigma, digits=20, k=k).value
        assert lo <= want <= hi, (name, k)
        assert interval_digits(lo, hi) >= 15, (name, k)


def test_the_complement_solve_gives_the_newton_step_its_accuracy(partial, monkeypatch):
    """Without the conjugate-gradient part of the Newton step (Lanczos pairs: V holds the top ones only), the
    corrected top vector keeps the float64 residual and its angle certifies far fewer digits."""
    X, sigma = _wine_like(), Fraction(2) ** 3
    full = enclosed.spectrum_enclosure(X, sigma, exact_products=False)
    digits = interval_digits(*enclosed.eigen_distance_interval(full, X, 1, 1e-6, "mean"))
    clear_derived(enclosed._enclosure_cached)
    monkeypatch.setattr(enclosed, "_complement_solve", lambda A_f, V, theta, B: np.zeros_like(B))
    blind = enclosed.spectrum_enclosure(X, sigma, exact_products=False)
    assert interval_digits(*enclosed.eigen_distance_interval(blind, X, 1, 1e-6, "mean")) < digits - 3


@pytest.mark.slow  # its σ = 8 reference (~20 s) is computed here once the slow test above is deselected
def test_li_li_radius_of_the_certified_block_decides(partial, monkeypatch):
    """The block's last vector spoiled by 1e-7 towards the first eigenvector past it (span V changes), no Newton
    step: its Ritz value sits ~1e-14 (μ_{r−1} − μ_r) below μ_{r−1}, and the Li–Li radius around it, whose gap is
    that same distance to the certified threshold, is what covers it; tightened 100× it loses it."""
    X, sigma = _wine_like(), Fraction(2) ** 3
    rank = enclosed.linear_for(X).rank
    mu = _q_list(eigensystems(X, sigma, digits=20)[0])[rank - 1]
    eigenpairs = enclosed._eigenpairs

    def spoiled(A_f, count):
        w, V = eigenpairs(A_f, count)
        V = V.copy()
        V[:, rank - 1] += 1e-7 * V[:, rank]
        return w, V

    monkeypatch.setattr(enclosed, "_eigenpairs", spoiled)
    monkeypatch.setattr(enclosed, "_newton_correction", lambda *args, **kwargs: np.zeros((args[2].shape[0], args[3])))
    enc = enclosed.spectrum_enclosure(X, sigma, exact_products=False)
    assert _contains(enc.lower[rank - 1], mu, enc.upper[rank - 1])
    assert enc.upper[rank - 1] - enc.lower[rank - 1] < Fraction(1, 10**8) * abs(mu)  # the spoil shows, tightly

    tighten_li_li(monkeypatch)
    clear_derived(enclosed._enclosure_cached)
    enc = enclosed.spectrum_enclosure(X, sigma, exact_products=False)
    assert not _contains(enc.lower[rank - 1], mu, enc.upper[rank - 1])


def _q_list(values):
    return [as_fraction(v) for v in values]


def _contains(lo, x, hi) -> bool:
    return as_fraction(lo) <= x <= as_fraction(hi)
