import mpmath
import numpy as np
import pytest

import precise_kpca as pk
from precise_kpca.validation import parse_sigma

GOOD = np.random.default_rng(0).normal(size=(6, 2))


@pytest.mark.parametrize(
    "X, match",
    [
        (np.arange(5.0), r"must be 2-D .* got shape \(5,\)"),
        (np.ones((2, 3)), r"has 2 row\(s\); at least 3"),
        (np.zeros((4, 0)), "no columns"),
        (np.array([["a", "b"], ["c", "d"], ["e", "f"]]), "must be numeric"),
        (np.array([[1.0, 2.0], [3.0, np.nan], [5.0, 6.0]]), r"nan at row 1, column 1"),
        (np.array([[1.0, 2.0], [3.0, 4.0], [np.inf, 6.0], [1.0, -np.inf]]), r"inf at row 2, column 0 .*2 non-finite"),
        (np.ones((5, 2)), "all 5 rows of X are identical"),
        (np.array([[0.0], [0.0], [0.0], [1.0]]), r"median pairwise distance .* is 0: 3 of 6 pairs"),
        (np.array([[1 + 2j, 0], [0, 1], [1, 1]]), "must be real"),
    ],
)
def test_bad_data_is_rejected_with_location(X, match):
    with pytest.raises(ValueError, match=match):
        pk.gaussian_gram(X, 1.0)


def test_geometry_rejects_bad_median_and_bad_data():
    with pytest.raises(ValueError, match="median must be one of"):
        pk.geometry(GOOD, median="mean")
    with pytest.raises(ValueError, match="nan at row 0, column 0"):
        pk.geometry(np.array([[np.nan, 1.0], [1.0, 2.0], [3.0, 4.0]]))


@pytest.mark.parametrize(
    "sigma, match",
    [(0, "must be > 0"), (-2.0, "must be > 0"), (float("nan"), "finite"), (float("inf"), "finite"),
     ("abc", "is not a number"), ("2**-3.5", "is not a number"), (True, "positive number"), ([1], "finite positive")],
)
def test_bad_sigma_is_rejected(sigma, match):
    with pytest.raises(ValueError, match=match):
        pk.gaussian_gram(GOOD, sigma)


def test_sigma_strings_are_exact():
    assert parse_sigma("2**100") == 2**100
    assert parse_sigma("2^-4") == parse_sigma(0.0625)
    assert parse_sigma("1e400") == 10**400
    assert parse_sigma("0.1") == parse_sigma("1/10".replace("1/10", "0.1"))
    assert parse_sigma("0.1").denominator == 10  # decimal strings stay decimal (not the float 0.1)


def test_float64_range_errors_point_to_mp():
    with pytest.raises(ValueError, match=r"sigma=2\*\*2000 is so large .* underflows float64; use backend='mp'"):
        pk.gaussian_gram(GOOD, "2**2000")
    with pytest.raises(ValueError, match="sigma=4.14952e.180 is so large .* underflows float64; use backend='mp'"):
        pk.gaussian_gram(GOOD, "2**600")
    with pytest.raises(ValueError, match="underflows float64; use backend='mp'"):
        pk.gaussian_residual(GOOD, "2**300")
    centered = pk.double_center(pk.gaussian_gram(GOOD, "2**2000", backend="mp", dps=30))
    assert 0 < abs(centered[0, 1]) < mpmath.mpf(2) ** -3990  # O(σ⁻²) entries, far below the float64 range


def test_mp_precision_errors():
    with pytest.raises(ValueError, match="too little precision"):
        pk.gaussian_gram(GOOD, 1.0, backend="mp", dps=8)
    with pytest.raises(ValueError, match="needs an explicit precision"):
        pk.gaussian_gram(GOOD, 1.0, backend="mp")
    with pytest.raises(ValueError, match="needs dps="):
        pk.double_center(np.array(pk.gaussian_gram(GOOD, 1.0, backend="mp", dps=30).values))


def test_other_matrix_errors():
    with pytest.raises(ValueError, match="square matrix"):
        pk.double_center(np.ones((3, 4)))
    with pytest.raises(ValueError, match="inf at row 1, column 0"):
        pk.eigensystem(np.array([[1.0, 0.0], [np.inf, 1.0]]))
    with pytest.raises(ValueError, match="degree must be a positive integer"):
        pk.polynomial_gram(GOOD, degree=0)
    with pytest.raises(ValueError, match="X_new has 3 columns"):
        pk.gaussian_cross_gram(np.ones((1, 3)), GOOD, 1.0)
    with pytest.raises(ValueError, match="eigenvalue .* is not positive"):
        pk.eigensystem(pk.double_center(pk.linear_gram(GOOD))).kpca_coefficients(4)


def test_large_mp_problems_warn_with_an_estimate():
    X = np.random.default_rng(1).normal(size=(2000, 2))
    with pytest.warns(RuntimeWarning, match=r"N=2000 at dps=50: each N×N elementwise pass takes about \d+ min"):
        pk.numerics.kernels._warn_if_slow(pk.get_backend("mp", 50), X.shape[0])
    with pytest.warns(RuntimeWarning, match=r"eigensystem of an 300×300 matrix at dps=30: estimated \d+ min"):
        pk.numerics.eigen._warn_if_slow(pk.get_backend("mp", 30), 300)
