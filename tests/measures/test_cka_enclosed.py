"""1 − CKA(K_G(σ), K_lin) and f(0) enclosed rigorously (precise_kpca.measures.cka_enclosed).

The reference is independent of the library: exact rationals (python-flint fmpz/fmpq) from the float64 data, the
median distance and the centered linear Gram from them, K_G by mpmath.exp in a private context, the centering and the Frobenius
sums of the definition CKA = ⟨HKH, L⟩ / (‖HKH‖ ‖L‖), all at a precision that absorbs their cancellation.
"""
import dataclasses
import math
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import pdist

from precise_kpca.datasets import load
from precise_kpca.errors import RouteUnavailable
from precise_kpca.measures import cka_enclosed
from precise_kpca.measures.cka_enclosed import cka_interval
from precise_kpca.measures.measurement import interval_digits
from precise_kpca.numerics.binary128_gram import centered_residual_words

TIGHT_DIGITS = 12
REF_DIGITS = 50  # the reference's accuracy (test_reference_holds_its_digits), far beyond the intervals' ~30


def _dps(sigma: Fraction) -> int:
    """80 digits plus the 4·log10 σ that the centering of K_G (2·log10 σ) and 1 − cos (2·log10 σ) cancel: the
    REF_DIGITS kept, and 30 for the sums over N² entries and the spread of the distances."""
    log10_sigma = (sigma.numerator.bit_length() - sigma.denominator.bit_length()) * math.log10(2)
    return 80 + 4 * max(0, math.ceil(log10_sigma))


def _median_distance(sq, median, ctx):
    """d_X: the median of the N² squared distances (diagonal included) or of the N(N−1)/2 pairs, square-rooted;
    an even count averages the square roots of its two middle entries. ``sq``: exact integers."""
    n = len(sq)
    if median == "full":
        values = sorted(sq[i][j] for i in range(n) for j in range(n))
    else:
        values = sorted(sq[i][j] for i in range(n) for j in range(i + 1, n))
    count = len(values)
    middle = [values[count // 2]] if count % 2 else [values[count // 2 - 1], values[count // 2]]
    return ctx.fsum(ctx.sqrt(v) for v in middle) / len(middle)


def _centered(K, ctx):
    n = len(K)
    rows = [ctx.fsum(r) / n for r in K]
    grand = ctx.fsum(rows) / n
    return [[K[i][j] - rows[i] - rows[j] + grand for j in range(n)] for i in range(n)]


def _exact_grams(X):
    """Squared distances as integers S with |x_i − x_j|² = S_ij·4^−k, and L = H X Xᵀ H as an fmpq matrix, from
    the float64 data read as rationals."""
    ratios = [[float(v).as_integer_ratio() for v in row] for row in X]
    k = max(q.bit_length() - 1 for row in ratios for _, q in row)
    M = flint.fmpz_mat([[p << (k - (q.bit_length() - 1)) for p, q in row] for row in ratios])
    n = M.nrows()
    G = M * M.transpose()
    sq = [[int(G[i, i] + G[j, j] - 2 * G[i, j]) for j in range(n)] for i in range(n)]
    H = flint.fmpq_mat([[flint.fmpq(int(i == j)) - flint.fmpq(1, n) for j in range(n)] for i in range(n)])
    L = H * flint.fmpq_mat(G) * H / flint.fmpz(4) ** k
    return sq, k, L


def reference(X, sigma: Fraction, median="full", dps=None):
    """(1 − CKA, f(0)) from the definition, in mpmath at ``dps`` digits from the exact data."""
    ctx = mpmath.MPContext()
    ctx.dps = dps or _dps(sigma)
    n = len(X)
    sq, k, exact_l = _exact_grams(X)
    L = [[ctx.mpf(int(exact_l[i, j].p)) / int(exact_l[i, j].q) for j in range(n)] for i in range(n)]
    sigma_x = ctx.mpf(sigma.numerator) / sigma.denominator * ctx.ldexp(_median_distance(sq, median, ctx), -k)
    scale = -ctx.ldexp(1, -2 * k) / (2 * sigma_x**2)  # exp(−|x_i − x_j|²/2σ_X²) = exp(S_ij·scale)
    A = _centered([[ctx.exp(v * scale) for v in row] for row in sq], ctx)
    inner = ctx.fsum(A[i][j] * L[i][j] for i in range(n) for j in range(n))
    norm_a = ctx.sqrt(ctx.fsum(v * v for row in A for v in row))
    norm_l = ctx.sqrt(ctx.fsum(v * v for row in L for v in row))
    gap = 1 - inner / (norm_a * norm_l)
    # f(0): σ → 0 takes K_G to B, B_ij = 1 where rows i and j are equal (the identity when no row repeats)
    B = _centered([[ctx.mpf(1 if sq[i][j] == 0 else 0) for j in range(n)] for i in range(n)], ctx)
    inner_0 = ctx.fsum(B[i][j] * L[i][j] for i in range(n) for j in range(n))
    f0 = 1 - inner_0 / (ctx.sqrt(ctx.fsum(v * v for row in B for v in row)) * norm_l)
    return mpmath.mp.make_mpf(gap._mpf_), mpmath.mp.make_mpf(f0._mpf_)  # exact, not rounded to mp's 53 bits


@st.composite
def shaped_data(draw):
    """N ≤ 40 rows: random, with duplicate rows, with a far outlier, N ≤ d + 1, or of rank below d."""
    kind = draw(st.sampled_from(["random", "duplicates", "outlier", "wide", "rank-deficient"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    if kind == "wide":
        n = draw(st.integers(3, 12))
        X = rng.normal(size=(n, n - 1 + draw(st.integers(0, 4))))
    else:
        n, d = draw(st.integers(5, 40)), draw(st.integers(1, 6))
        X = rng.normal(size=(n, d))
        if kind == "duplicates":  # every row repeated from a pool of about n/2 distinct rows
            X = X[rng.integers(0, max(3, n // 2), size=n)]
        elif kind == "outlier":
            X[-1] *= draw(st.sampled_from([1e2, 1e4, 1e6]))
        elif kind == "rank-deficient":
            rank = draw(st.integers(1, max(1, d - 1)))
            X = rng.normal(size=(n, rank)) @ rng.normal(size=(rank, d + 1))
    return X * scale


def _contains(lower, upper, ref) -> bool:
    """lower ≤ ref ≤ upper up to the reference's own error (|ref|·10^−REF_DIGITS: it is rounded, while an end
    may be exact, e.g. f(0) = 1/2 for d = 1 and N = 5); the intervals are ~10^−28 wide, far wider."""
    lower, upper, ref = _exact(lower), _exact(upper), _exact(ref)
    slack = abs(ref) / 10**REF_DIGITS
    return lower - slack <= ref <= upper + slack


def _exact(x) -> Fraction:
    """An mpf as a Fraction, exactly (global mpf arithmetic would round to 53 bits)."""
    man, exp = mpmath.libmp.to_man_exp(x._mpf_) if x else (0, 0)
    return man * Fraction(2) ** exp


def _assert_encloses(X, sigma, median="full"):
    result = cka_interval(X, sigma, median=median)
    gap, f0 = reference(X, sigma, median)
    assert _contains(result.lower, result.upper, gap), (result, gap)
    assert _contains(result.f0_lower, result.f0_upper, f0), (result, f0)
    return result


@settings(max_examples=40, deadline=None)
@given(X=shaped_data(), log2_sigma=st.integers(-4, 100), median=st.sampled_from(["full", "pairs"]))
def test_interval_contains_the_definition_and_is_tight(X, log2_sigma, median):
    assume(not _zero_median(X, median))  # a zero median distance is refused: tested below
    assume(len(np.unique(X, axis=0)) > 2)  # two distinct rows: 1 − CKA = 0 exactly, tested below
    result = _assert_encloses(X, Fraction(2) ** log2_sigma, median)
    assert interval_digits(result.lower, result.upper) >= TIGHT_DIGITS
    assert interval_digits(result.f0_lower, result.f0_upper) >= TIGHT_DIGITS


def _zero_median(X, median) -> bool:
    """Whether the middle entry (the upper one of an even count) of the sorted distances is 0: then d_X = 0."""
    zero_pairs = int(np.count_nonzero(pdist(X) == 0))  # exact duplicates only: distinct rows are far apart
    n = len(X)
    zeros, count = (n + 2 * zero_pairs, n * n) if median == "full" else (zero_pairs, n * (n - 1) // 2)
    return zeros > count // 2


@pytest.mark.parametrize("log2_sigma", [-4, 100])
def test_reference_holds_its_digits(log2_sigma):
    """The oracle itself: 40 more digits change it by less than 10^−REF_DIGITS (σ = 2¹⁰⁰ cancels the most)."""
    X = np.random.default_rng(7).normal(size=(12, 3))
    X[-1] *= 1e4  # a far outlier: the widest spread of kernel entries
    sigma = Fraction(2) ** log2_sigma
    for base, more in zip(reference(X, sigma), reference(X, sigma, dps=_dps(sigma) + 40)):
        assert abs(_exact(base) - _exact(more)) <= abs(_exact(more)) / 10**REF_DIGITS


def test_f0_of_a_regular_simplex_is_exactly_zero():
    """X = I₃: L = H, whose nonzero eigenvalues are equal, so trace(L) = √(N−1)·‖L‖ and f(0) = 0 exactly."""
    result = cka_interval(np.eye(3), 1)
    assert result.f0_lower == result.f0_upper == 0
    assert _contains(result.lower, result.upper, reference(np.eye(3), Fraction(1))[0])


def test_two_distinct_rows_give_an_exact_zero_enclosed_from_zero():
    """Two distinct rows, repeated: HK_GH and L both span the one centered cluster indicator, so 1 − CKA = 0;
    the interval starts at 0 exactly and ends δ²-small (p̂ = 0 exactly, p ≤ δ)."""
    X = np.array([[0.25, -1.0], [0.25, -1.0], [3.0, 0.5], [0.25, -1.0], [3.0, 0.5]])
    result = cka_interval(X, 1, median="pairs")
    assert result.lower == 0 < result.upper < 2.0**-160
    assert _contains(result.lower, result.upper, reference(X, Fraction(1), "pairs")[0])


def _perturb_builder(monkeypatch, extra_bound):
    """Make the builder return E + Δ, Δ = 2⁻⁷⁰·E_⊥ (the part of its words orthogonal to L, in float64), with its
    own bound plus ``extra_bound(‖Δ‖_F)``."""

    def builder(X, sigma, **kwargs):
        quad = centered_residual_words(X, sigma, **kwargs)
        Xc = X - X.mean(axis=0)
        L = Xc @ Xc.T
        perpendicular = quad.hi - ((quad.hi * L).sum() / (L * L).sum()) * L
        lo = quad.lo + np.ldexp(perpendicular, -70)
        # ‖Δ‖_F = ‖lo − quad.lo‖_F by exact rational arithmetic, rounded up
        norm_sq = sum((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(lo.ravel(), quad.lo.ravel()))
        norm = math.nextafter(math.sqrt(float(norm_sq)) * (1 + 2.0**-50), math.inf)
        return dataclasses.replace(quad, lo=lo, error_bound=quad.error_bound + extra_bound(norm))

    monkeypatch.setattr(cka_enclosed, "centered_residual_words", builder)


@pytest.mark.parametrize("log2_sigma", [0, 20, 100])
def test_an_error_the_bound_does_not_cover_moves_the_interval_off_the_truth(monkeypatch, log2_sigma):
    """Mutation check of step 3's |p − p̂| ≤ δ: a wrong E by Δ along E_⊥ is enclosed with δ ≥ ‖Δ‖_F and missed
    with half of it (so a propagation of δ/2, or none, is caught)."""
    X, sigma = np.random.default_rng(11).normal(size=(15, 3)), Fraction(2) ** log2_sigma
    gap = reference(X, sigma)[0]
    _perturb_builder(monkeypatch, lambda norm: norm)
    covered = cka_interval(X, sigma)
    assert _contains(covered.lower, covered.upper, gap)
    _perturb_builder(monkeypatch, lambda norm: norm / 2)
    half = cka_interval(X, sigma)
    assert not _contains(half.lower, half.upper, gap)
    _perturb_builder(monkeypatch, lambda norm: 0.0)
    uncovered = cka_interval(X, sigma)
    assert gap < uncovered.lower  # Δ enlarges E_⊥: the interval sits above the truth


def test_interval_past_the_float64_range_of_e_stays_tight():
    """σ = 2^1000, E ~ 2^-2000: its binary128 words are held scaled (Binary128Gram.exp2); unscaled they underflowed, and
    the builder's 2^-1060 per entry left no digit (17 at σ = 2^500)."""
    X = np.random.default_rng(0).normal(size=(10, 3))
    result = _assert_encloses(X, Fraction(2) ** 1000)
    assert interval_digits(result.lower, result.upper) >= TIGHT_DIGITS


def test_bandwidth_outside_the_binary128_range_is_a_route_failure():
    X = np.random.default_rng(2).normal(size=(8, 2))
    for sigma in ("2**-9000", "2**9000"):
        with pytest.raises(RouteUnavailable, match="binary128 range"):
            cka_interval(X, sigma)


def test_residual_near_the_float64_limit_is_a_route_failure():
    """Entries of E near 2^1024: the words are finite but the builder's bound is not, so nothing is enclosed."""
    X = np.random.default_rng(2).normal(size=(6, 2)) * 5e153
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(RouteUnavailable, match="float64 range"):
        cka_interval(X, 1)


@pytest.mark.parametrize("X, kwargs, message", [
    (np.zeros((6, 2)), {}, "median pairwise distance"),
    (np.array([[0.0, 1.0], [np.nan, 2.0], [3.0, 4.0]]), {}, "row 1, column 0"),
    (np.eye(4), {"median": "middle"}, "median"),
])
def test_bad_input_is_a_value_error_naming_it(X, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cka_interval(X, 1, **kwargs)


def test_bad_sigma_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="sigma"):
        cka_interval(np.eye(4), -1)


WINE_LOG2_SIGMAS = (-4, 0, 8, 20, 40, 100)


@pytest.fixture(scope="module")
def wine(data_dir):
    return load("wine", data_dir=data_dir)


@pytest.mark.parametrize("log2_sigma", WINE_LOG2_SIGMAS)
def test_wine_is_enclosed_to_ten_digits(wine, log2_sigma):
    result = cka_interval(wine, Fraction(2) ** log2_sigma)
    assert interval_digits(result.lower, result.upper) >= 10
    assert interval_digits(result.f0_lower, result.f0_upper) >= 10


def test_wine_interval_contains_the_definition_at_the_largest_bandwidth(wine):
    _assert_encloses(wine, Fraction(2) ** 100)
