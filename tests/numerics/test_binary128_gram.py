"""Binary128 scaled Gaussian Gram in float64 words: against the mp and float64 backends, bound, errors, bits."""
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_quaddtype import QuadPrecDType

from precise_kpca.backends import get_backend
from precise_kpca.numerics import double_center, gaussian_residual
from precise_kpca.numerics.exact import ExactData
from precise_kpca.numerics.linear_spectrum import LinearSpectrum
from precise_kpca.numerics.binary128_gram import centered_residual_words, scaled_gaussian_gram_words
from precise_kpca.numerics.binary128_phi import SERIES_ERROR, phi_series
from precise_kpca.numerics.binary128_squares import ExactSquares

U_QUAD = 2.0**-113
EPS = np.finfo(np.float64).eps
MP = get_backend("mp", 50)


def _data(n=24, d=3, offset=0.0, seed=0):
    return offset + np.random.default_rng(seed).normal(size=(n, d))


def _reference(X, sigma, backend, **kw):
    """L + H G H on a stable backend (what scaled_gaussian_gram builds), with median/standardized options."""
    linear = LinearSpectrum(X, backend)
    residual = double_center(gaussian_residual(X, sigma, backend=backend, **kw))
    return linear.gram(), residual.deviation, residual.meta


def _mp_errors(q, A):
    ctx = MP.ctx
    err = np.array([[ctx.mpf(h) + ctx.mpf(l) for h, l in zip(hr, lr)] for hr, lr in zip(q.hi, q.lo)], dtype=object)
    err = err - A
    frobenius = float(ctx.sqrt(sum(e * e for e in err.ravel())))
    return frobenius, float(max(abs(e) for e in err.ravel())), float(max(abs(a) for a in A.ravel()))


# the last column: the bound before the exact squared distances (main at 53dde61); it may only get tighter
CASES = [
    ("2**-2", {}, 0.0, float.fromhex("0x1.18e9be34806fap-99")),
    (1, {}, 0.0, float.fromhex("0x1.4ead38d32eea9p-100")),
    (Fraction(32), {}, 0.0, float.fromhex("0x1.562f9be32340cp-101")),
    (2.0**13, {}, 0.0, float.fromhex("0x1.5571cb4c94c2fp-101")),
    ("2^25", {}, 0.0, float.fromhex("0x1.5571ca8eaa126p-101")),
    ("2**5", {"median": "pairs"}, 0.0, float.fromhex("0x1.562549d753ec9p-101")),
    (Fraction(3, 2), {"standardized": False}, 0.0, float.fromhex("0x1.8f8d1683d68dbp-100")),
    # a large common offset: centering must not lose the data's digits
    ("2**13", {}, 1e3, float.fromhex("0x1.5571cb4c94bd8p-101")),
]


@pytest.mark.parametrize("sigma, kw, offset, old_bound", CASES)
def test_words_match_mp_within_a_tight_rigorous_bound(sigma, kw, offset, old_bound):
    X = _data(offset=offset)
    q = scaled_gaussian_gram_words(X, sigma, **kw)
    L, E, meta = _reference(X, sigma, MP, **kw)
    frobenius, worst, scale = _mp_errors(q, L + E)
    n = X.shape[0]
    assert worst <= n * 2**7 * U_QUAD * max(scale, float(max(abs(v) for v in L.ravel())))
    assert frobenius <= q.error_bound <= old_bound
    assert q.error_bound <= 1e4 * frobenius  # the bound is not vacuous
    assert abs(q.sigma_x - meta["sigma_x"]) <= 4 * U_QUAD * abs(meta["sigma_x"])
    if meta["median_distance"] is None:
        assert q.median_distance is None
    else:
        assert abs(q.median_distance - meta["median_distance"]) <= 4 * U_QUAD * meta["median_distance"]


@pytest.mark.parametrize("sigma", [0.25, 1.0, 2.0**5, 2.0**13])
def test_hi_matches_float64_backend(sigma):
    X = _data(n=40, d=4, seed=1)
    q = scaled_gaussian_gram_words(X, sigma)
    L, E, meta = _reference(X, sigma, get_backend("float64"))
    scale = np.abs(L).max() + np.abs(E).max()
    assert np.abs(q.hi - (L + E)).max() <= 8 * X.shape[0] * EPS * scale
    assert float(q.sigma_x) == pytest.approx(meta["sigma_x"], rel=16 * EPS)
    assert np.all(np.abs(q.lo) <= EPS / 2 * np.abs(q.hi))


@pytest.mark.parametrize("kind", ["normal", "one-hot", "wide"])  # the three reads: digits, float64, window
def test_symmetric_and_independent_of_block_rows(kind):
    X = _data(n=23, d=5, seed=2) if kind == "normal" else _kind(kind, 23, seed=2)
    results = [scaled_gaussian_gram_words(X, "2**9", block_rows=b) for b in (1, 4, 23, 100)]
    first = results[0]
    assert np.array_equal(first.hi, first.hi.T) and np.array_equal(first.lo, first.lo.T)
    for other in results[1:]:
        assert np.array_equal(first.hi.view(np.int64), other.hi.view(np.int64))
        assert np.array_equal(first.lo.view(np.int64), other.lo.view(np.int64))


@pytest.mark.parametrize(
    "X, sigma",
    [
        (np.array([[0.0, 1.0], [np.nan, 2.0], [3.0, 4.0]]), 1),
        (_data(), 0),
        (_data(), "-2"),
        (_data(n=2), 1),
    ],
)
def test_invalid_inputs_raise_like_the_float64_path(X, sigma):
    with pytest.raises(ValueError) as expected:
        gaussian_residual(X, sigma, backend="float64")
    with pytest.raises(ValueError) as got:
        scaled_gaussian_gram_words(X, sigma)
    assert str(got.value) == str(expected.value)


def test_zero_median_and_out_of_range_sigma_raise():
    with pytest.raises(ValueError, match="median pairwise distance"):
        scaled_gaussian_gram_words(np.zeros((4, 2)), 1)
    with pytest.raises(ValueError, match="binary128 range"):
        scaled_gaussian_gram_words(_data(), "2**9000")


def test_invalid_block_rows():
    with pytest.raises(ValueError, match="block_rows"):
        scaled_gaussian_gram_words(_data(), 1, block_rows=0)


# -- the exact squared distances and linear Gram, against exact rationals and an mpmath reference -------------

U = Fraction(1, 2**113)


def _kind(kind: str, n: int = 10, seed: int = 0) -> np.ndarray:
    """Small data sets for the three read routes: float64 GEMM (integers), Ozaki digits, windowed digits."""
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return rng.normal(size=(n, 3))
    if kind == "offset":  # a common offset: the shift by the rounded column means must keep D and L exact
        return 1e3 + rng.normal(size=(n, 3))
    if kind == "counts":
        return rng.integers(0, 1000, size=(n, 3)).astype(np.float64)
    if kind == "one-hot":
        return np.eye(4)[rng.integers(0, 4, size=n)]
    if kind == "duplicates":
        X = rng.normal(size=(n, 3))
        X[n // 2:] = X[: n - n // 2]  # every row twice (one three times when n is odd)
        return X
    if kind == "wide":  # mantissas of ~180 bits, products beyond the eight digits read in full
        return rng.normal(size=(n, 3)) * 2.0 ** rng.integers(-60, 60, size=(n, 3))
    if kind == "mixed":  # 1e-300 … 1e300 in one data set; the constant 1e300 column is removed by the shift
        return np.column_stack([rng.normal(size=n) * 1e-300, rng.normal(size=n) * 1e100, np.full(n, 1e300),
                                rng.normal(size=n) * 10.0 ** rng.integers(-300, 100, size=n)])
    raise AssertionError(kind)


KINDS = ["normal", "offset", "counts", "one-hot", "duplicates", "wide", "mixed"]


def _exact_squares(X):
    """Exact D_ij = |x_i - x_j|² and L_ij = (x_i - mean)·(x_j - mean) as Fractions from the float64 data."""
    F = [[Fraction(float(v)) for v in row] for row in X]
    n, d = X.shape
    mean = [sum(row[k] for row in F) / n for k in range(d)]
    C = [[row[k] - mean[k] for k in range(d)] for row in F]
    D = [[sum((a - b) ** 2 for a, b in zip(F[i], F[j])) for j in range(n)] for i in range(n)]
    L = [[sum(a * b for a, b in zip(C[i], C[j])) for j in range(n)] for i in range(n)]
    return D, L


def _fraction(q) -> Fraction:
    return Fraction(*q.as_integer_ratio())


def _relative_errors(got, exact):
    """max |got - exact| / |exact| over the nonzero entries; None if a zero entry is not read as 0."""
    worst = Fraction(0)
    for row_got, row in zip(got, exact):
        for g, e in zip(row_got, row):
            g = _fraction(g)
            if e == 0:
                if g != 0:
                    return None
                continue
            worst = max(worst, abs(g - e) / abs(e))
    return worst


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(KINDS), st.integers(2, 9), st.integers(0, 2**32 - 1))
def test_exact_squares_are_one_rounding_of_the_exact_rationals(kind, n, seed):
    X = _kind(kind, n, seed)
    squares = ExactSquares(ExactData.from_float64(X))
    D, L = _exact_squares(X)
    got_d, got_l = squares.distances(slice(0, n)), squares.linear(slice(0, n))
    err_d, err_l = _relative_errors(got_d, D), _relative_errors(got_l, L)
    assert err_d is not None and err_d <= Fraction(squares.distance_error)
    assert err_l is not None and err_l <= Fraction(squares.linear_error)
    # integer data: the float64 GEMM is exact; otherwise one rounding (+ 2^-180 for the windowed read)
    assert squares.distance_error <= U * (1 + Fraction(1, 2**52))
    if kind in ("counts", "one-hot"):
        assert squares.distance_error == 0.0
    assert Fraction(squares.linear_error) <= 2 * U * (1 + Fraction(1, 2**51))  # the division by N² adds one
    # exactly symmetric, and rows read one block at a time (columns from the block's first row on) give the same
    # binary128 numbers
    for got, read in ((got_d, squares.distances), (got_l, squares.linear)):
        assert all(_fraction(got[i, j]) == _fraction(got[j, i]) for i in range(n) for j in range(i))
        for i in range(n):
            row = read(slice(i, i + 1))
            assert row.shape == (1, n - i)
            assert all(_fraction(a) == _fraction(b) for a, b in zip(row[0], got[i, i:]))


def test_exact_squares_read_wide_integers_through_the_window():
    X = _kind("mixed", 8)
    squares = ExactSquares(ExactData.from_float64(X))
    assert -(-squares._distances._exponent // 26) > 8  # more digits than one read takes: the windowed read
    assert U + Fraction(1, 2**180) <= squares.distance_error
    D, _ = _exact_squares(X)
    assert _relative_errors(squares.distances(slice(0, 8)), D) <= Fraction(squares.distance_error)


def _exact_reference(X, sigma: Fraction, *, linear: bool, standardized=True):
    """A = L + H G H (or H G H) at 600+ bits from exact rationals and mpmath (private context): the full median,
    σ_X, φ(v) = e^{-v} - 1 + v (mpmath's expm1, with the bits its cancellation costs) and the centering.

    Returns A, the largest |entry| of L and of H G H (the scale of the rounding errors), and the context.
    """
    ctx = mpmath.MPContext()
    ctx.prec = 600
    n = X.shape[0]
    D, L = _exact_squares(X)
    mpf = lambda q: ctx.mpf(q.numerator) / q.denominator  # noqa: E731
    s2 = mpf(sigma) ** 2
    if standardized:
        pairs = sorted(D[i][j] for i in range(n) for j in range(n))
        middle = pairs[n * n // 2 - 1: n * n // 2 + 1] if n % 2 == 0 else pairs[n * n // 2: n * n // 2 + 1]
        s2 *= (sum(ctx.sqrt(mpf(v)) for v in middle) / len(middle)) ** 2
    G = [[ctx.mpf(0)] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            v = mpf(D[i][j]) / (2 * s2)
            if v:
                with ctx.extraprec(max(0, -2 * int(ctx.mag(v))) + 20):
                    G[i][j] = s2 * (ctx.expm1(-v) + v)
    rows = [ctx.fsum(r) / n for r in G]
    grand = ctx.fsum(rows) / n
    E = [[G[i][j] - rows[i] - rows[j] + grand for j in range(n)] for i in range(n)]
    L = [[mpf(v) if linear else ctx.mpf(0) for v in row] for row in L]
    scale = max(abs(float(v)) for M in (L, E) for row in M for v in row)
    return [[a + e for a, e in zip(ra, re)] for ra, re in zip(L, E)], scale, ctx


def _frobenius_error(q, A, ctx, perturb=None):
    """‖A − (hi + lo)‖_F at the reference's precision; ``perturb`` = (i, j, δ) adds δ to that entry of hi + lo."""
    total = ctx.mpf(0)
    for i, row in enumerate(A):
        for j, a in enumerate(row):
            got = ctx.mpf(q.hi[i, j]) + ctx.mpf(q.lo[i, j])
            if perturb is not None and (i, j) == perturb[:2]:
                got += perturb[2]
            total += (got - a) ** 2
    return ctx.sqrt(total)


SIGMAS = [Fraction(1, 16), Fraction(1), Fraction(2**20), Fraction(2**100)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("linear", [True, False])
def test_words_within_the_bound_of_an_independent_reference(kind, linear):
    X = _kind(kind, 10, seed=3)
    build = scaled_gaussian_gram_words if linear else centered_residual_words
    # mixed: raw bandwidths on the data's scale (the exact median of ExactEccentricity overflows a float there)
    standardized = kind != "mixed"
    for sigma in SIGMAS if standardized else [s * 2**332 for s in SIGMAS]:
        q = build(X, sigma, standardized=standardized)
        A, scale, ctx = _exact_reference(X, sigma, linear=linear, standardized=standardized)
        error = _frobenius_error(q, A, ctx)
        assert error <= q.error_bound, (sigma, float(error), q.error_bound)
        # the reference resolves the bound: an entry moved by twice the bound is caught by the same comparison
        assert _frobenius_error(q, A, ctx, perturb=(2, 5, 2 * ctx.mpf(q.error_bound))) > q.error_bound
        # and the bound is not vacuous: ~N u max(|L|, |H G H|), within a small factor of the actual error
        assert q.error_bound <= 2**-103 * X.shape[0] * scale and q.error_bound <= 1000 * error


@pytest.mark.parametrize("p", [300, 1000])
def test_residual_words_below_the_float64_range_keep_a_relative_bound(p):
    """E ~ 2^-2p: its words hold E·2^-exp2 (a float64 word of E itself underflows past σ ≈ 2^512, and the bound's
    2^-1060 per entry was all of E at σ = 2^1000); the bound stays within ~N u of max|E|, against the reference."""
    X = _kind("normal", 10, seed=3)
    sigma = Fraction(2) ** p
    q = centered_residual_words(X, sigma)
    A, _, ctx = _exact_reference(X, sigma, linear=False)
    held = [[ctx.ldexp(a, -q.exp2) for a in row] for row in A]
    scale = max(abs(v) for row in held for v in row)
    assert 2.0**-20 < scale < 4  # held near 1 (its a-priori size is an upper bound), whatever σ
    error = _frobenius_error(q, held, ctx)
    assert error <= q.error_bound <= min(2**-103 * X.shape[0] * scale, 1000 * error)
    assert _frobenius_error(q, held, ctx, perturb=(2, 5, 2 * ctx.mpf(q.error_bound))) > q.error_bound


@pytest.mark.parametrize("part, build", [("distances", centered_residual_words),
                                         ("linear", scaled_gaussian_gram_words)])
def test_the_bound_catches_a_squared_distance_or_gram_read_2_96_off(monkeypatch, part, build):
    """Mutation: D̂ (or L̂) off by a relative 2⁻⁹⁶ — 2¹⁷ times the read's own error — breaks the bound."""
    X = _kind("normal", 10, seed=3)
    exact = getattr(ExactSquares, part)
    one, tiny = np.array([1.0, 2.0**-96]).astype(QuadPrecDType("sleef"))
    factor = one + tiny  # exact in binary128 (not in float64)
    monkeypatch.setattr(ExactSquares, part, lambda self, rows: exact(self, rows) * factor)
    for sigma in SIGMAS[:3]:  # at σ = 2^100, G's share of E ~ D²/σ_X² is below every bound term
        q = build(X, sigma)
        A, _, ctx = _exact_reference(X, sigma, linear=build is scaled_gaussian_gram_words)
        assert _frobenius_error(q, A, ctx) > q.error_bound, sigma


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 2**52 - 1), st.integers(-400, -4)), min_size=1, max_size=40))
def test_series_within_its_error_bound_in_every_magnitude_class(values):
    """φ(u) = e^{-u} - 1 + u by the series, per magnitude class, against mpmath at 400 bits (u < 1/16 exactly)."""
    u = [Fraction(m, 2**52) * Fraction(2) ** e for m, e in values]
    q = np.array([float(v) for v in u]).astype(QuadPrecDType("sleef"))  # exact: 53-bit mantissas
    got = phi_series(q)
    ctx = mpmath.MPContext()
    ctx.prec = 400
    for v, g in zip(u, got):
        x = ctx.mpf(v.numerator) / v.denominator
        with ctx.extraprec(-2 * int(ctx.mag(x)) + 20):
            exact = ctx.expm1(-x) + x
        assert abs(ctx.mpf(_fraction(g).numerator) / _fraction(g).denominator - exact) <= SERIES_ERROR * exact
