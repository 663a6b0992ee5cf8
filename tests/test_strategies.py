"""The hard data-set families deliver what tests/strategies.py documents, and the reference runs on all of them."""

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.validation import check_data

from .reference import exact_rank, exact_rows, median_distance, spectra, squared_distances
from .strategies import FAMILIES, hard_data_sets, sigma_exponents


@pytest.mark.parametrize("family", list(FAMILIES))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_each_family_is_valid_input_with_its_documented_structure(family, data):
    X = data.draw(hard_data_sets(families=(family,)))
    n, d = X.shape
    assert 3 <= n <= 12 and 1 <= d <= 6
    check_data(X)
    ctx = mpmath.MPContext()
    assert median_distance(ctx, squared_distances(exact_rows(X))) > 0
    rank = exact_rank(exact_rows(X))
    if family == "wide":
        assert n <= d + 1
    elif family == "rank-deficient":
        assert rank < min(n - 1, d)
    elif family == "duplicates":
        assert len(np.unique(X, axis=0)) < n
    elif family in ("integer", "one-hot"):
        assert np.array_equal(X, np.round(X))
    if family == "one-hot":
        assert set(np.unique(X)) <= {0.0, 1.0} and len(set(X.sum(axis=1))) == 1
    if family == "outlier":
        assert np.abs(X).max() >= 1e3 * np.median(np.abs(X))


@settings(max_examples=200, deadline=None)
@given(sigma_exponents())
def test_sigma_exponents_span_minus_4_to_100(p):
    assert -4 <= p <= 100


@settings(max_examples=24, deadline=None)
@given(hard_data_sets(), sigma_exponents())
def test_reference_spectra_keep_the_trace_identity_on_hard_data(X, p):
    """tr A − tr L = tr HGH = −(1/N) Σ G_ij (G_ii = 0): the reference's eigenvalues (exact zeros past the exact
    rank included) sum to it within 10^(−2·digits) of the E-sized right-hand side."""
    digits = 10
    mu, lam = spectra(X, f"2**{p}", digits=digits)
    ctx = mpmath.MPContext()
    ctx.dps = 300
    sq = squared_distances(exact_rows(X))
    sigma_x2 = (ctx.mpf(2) ** p * median_distance(ctx, sq)) ** 2
    u = [[ctx.mpf(x.numerator) / x.denominator / (2 * sigma_x2) for x in row] for row in sq]
    trace_hgh = -sigma_x2 * ctx.fsum(ctx.expm1(-x) + x for row in u for x in row) / len(X)
    gap = ctx.fsum(ctx.mpf(m) for m in mu) - ctx.fsum(ctx.mpf(x) for x in lam) - trace_hgh
    assert abs(gap) <= ctx.mpf(10) ** (-2 * digits) * abs(trace_hgh)
