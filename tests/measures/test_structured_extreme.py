"""The structured enclosure far past float64's residual (σ = 2^300, 2^1000): every eigen measure keeps its digits.

There E(σ) underflows float64, so the approximation is built at σ·2^-m and scaled back, and E's binary128 words
are held scaled (``Binary128Gram.exp2``). Every certified digit there is relative to a value of ~(ρ/σ)², so each piece
of the chain must work relative to E, never at a fixed exponent: these tests check the measures against the
independent reference (:func:`tests.rigorous_check.check_measurement`: mpmath eigsy on the exact data at twice
the digits) and that the structured route certifies them itself (no hand-over to the refined route).
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import precise_kpca
from precise_kpca.measures import structured_enclosed
from precise_kpca.validation import check_data, rescaled

from ..rigorous_check import check_measurement

SPECS = [("eigenprojection", 1), ("eigenprojection", 2), ("pc", 1), ("pc", 2)]


def _data() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((10, 3))


@pytest.mark.parametrize("p", [300, 1000])
@pytest.mark.parametrize("name, k", SPECS, ids=[f"{name}-k{k}" for name, k in SPECS])
def test_vector_measures_far_past_the_float64_residual_hold_the_reference(name, k, p):
    """Past σ ≈ 2^256 these certified 0 digits: the expansion's in-span coordinates (linear in E, like its
    out-of-span part) were not scaled back from σ·2^-m, leaving an E-sized residual; at 2^1000 E's float64
    words underflowed as well (an error bound of N·2^-1060, the whole value)."""
    X = _data()
    m = precise_kpca.measure(X, name, Fraction(2) ** p, k=k)
    assert m.route.engine == "structured-enclosure", m.route
    assert m.guarantee == "rigorous" and not m.short and m.certified_digits >= 10, (m.certified_digits, m.reason)
    assert check_measurement(m, X) == "rigorous"


def test_the_eigenvalue_at_sigma_2_1000_holds_the_reference():
    """Eq. 18 at σ = 2^1000 (0 digits while E's words underflowed: its Weyl and trace bounds were N·2^-1060)."""
    X = _data()
    m = precise_kpca.measure(X, "eigenvalue", Fraction(2) ** 1000)
    assert m.route.engine == "structured-enclosure" and not m.short and m.certified_digits >= 10
    assert check_measurement(m, X) == "rigorous"


def test_the_residual_correction_sharpens_the_vectors_at_sigma_2_1000():
    """The correction reads the exact residual in float64: at σ = 2^1000 it is ~2^-1900 and was read as zeros, so
    the corrected vectors were the uncorrected ones (wine's eigenprojection k = 3 fell to 9 digits there). Read
    scaled, a correction gains ~log2(gap/‖E‖) bits in the Davis–Kahan bound (34 on these data), as at σ = 2^40."""
    X = rescaled(check_data(_data()))
    sigma = Fraction(2) ** 1000
    plain = structured_enclosed.certificate(X, sigma).top
    corrected = structured_enclosed.certificate(X, sigma, corrected=True).top
    for i in range(2):
        gain = _log2(plain.group_sin_theta(i, i + 1)) - _log2(corrected.group_sin_theta(i, i + 1))
        assert gain > 20, (i, gain)


def _log2(x: Fraction) -> float:
    return math.log2(x.numerator) - math.log2(x.denominator)
