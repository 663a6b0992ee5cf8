"""Binary128 scaled Gaussian Gram in float64 words: against the mp and float64 backends, bound, errors, bits."""
from fractions import Fraction

import numpy as np
import pytest

from precise_kpca.backends import get_backend
from precise_kpca.numerics import double_center, gaussian_residual
from precise_kpca.numerics.linear_spectrum import LinearSpectrum
from precise_kpca.numerics.quad_gram import scaled_gaussian_gram_words

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


CASES = [
    ("2**-2", {}, 0.0),
    (1, {}, 0.0),
    (Fraction(32), {}, 0.0),
    (2.0**13, {}, 0.0),
    ("2^25", {}, 0.0),
    ("2**5", {"median": "pairs"}, 0.0),
    (Fraction(3, 2), {"standardized": False}, 0.0),
    ("2**13", {}, 1e3),  # a large common offset: centering must not lose the data's digits
]


@pytest.mark.parametrize("sigma, kw, offset", CASES)
def test_words_match_mp_within_a_tight_rigorous_bound(sigma, kw, offset):
    X = _data(offset=offset)
    q = scaled_gaussian_gram_words(X, sigma, **kw)
    L, E, meta = _reference(X, sigma, MP, **kw)
    frobenius, worst, scale = _mp_errors(q, L + E)
    n = X.shape[0]
    assert worst <= n * 2**7 * U_QUAD * max(scale, float(max(abs(v) for v in L.ravel())))
    assert frobenius <= q.error_bound
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


def test_symmetric_and_independent_of_block_rows():
    X = _data(n=23, d=5, seed=2)
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
