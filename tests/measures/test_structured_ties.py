"""Issue 19, left-open item 2: inside exact ties the structured enclosures are as sharp as outside them.

A symmetry of the rows ties λ_1 = λ_2 (and λ_3 = λ_4) exactly in L and in every Gaussian Gram. A's tied
eigenvalues lie λ + eig(WᵀEW) + O(‖E‖²) from λ: at σ = 2^200 that shift is ~1e-121 of λ. The cluster's Ritz
values were enclosed by Arb at 320 bits relative to their size, so the block enclosures fell back to Weyl's
λ ± ‖E‖: 0 digits of the shift and of the eigenvalue measure (Eq. 18), which is that shift. Checked against the
independent reference (tests/reference.py: mpmath eigsy on the exact data at 2·digits + 20 + σ-digits), and an
accidental tie's splitting against its first-order shifts in exact rational arithmetic
(tests/asymptotics/test_repeated.py).
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

import precise_kpca
from precise_kpca.asymptotics.repeated import cross_family, tie_splitting
from precise_kpca.asymptotics.symmetry import square_orbits
from precise_kpca.certify.linear_enclosure import tied_linear_eigenvalues_cached
from precise_kpca.measures.structured_enclosed import certificate

from ..reference import spectra
from ..rigorous_check import check_measurement
from ..asymptotics.test_repeated import _exact_shifts
from ..certify.test_linear_ties import _tied_boards

DIGITS = 20  # of each tied eigenvalue's shift μ_i − λ_i: the binary128 residual carries ~30

_CTX = mpmath.MPContext()
_CTX.prec = 4096


def _square():
    """Two D_4 orbits in the plane (16 points): L is a multiple of the identity, λ_1 = λ_2."""
    return square_orbits([(3, 1), (2, 0), (5, 5)])


SETS = {"boards": _tied_boards, "square": _square}


def _q(x: Fraction):
    return _CTX.mpf(x.numerator) / x.denominator


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("log2_sigma, corrected", [(200, False), (200, True), (400, True), (1000, True)])
def test_tied_eigenvalues_are_enclosed_to_the_digits_of_their_shift(name, log2_sigma, corrected):
    """Every eigenvalue of an exact tie: its enclosure holds the reference and is 10^-20 of its shift μ_i − λ_i
    wide (it was 2‖E‖ wide, Weyl's, from σ = 2^200 on: 0 digits). The route's first certificate (the expansion's
    vectors) and its corrected one; at 2^400 the expansion, built at σ·2^-192, leaves the corrected one."""
    X, sigma = SETS[name](), Fraction(2) ** log2_sigma
    cert = certificate(X, sigma, digits=DIGITS, corrected=corrected)
    ties = [(a, z) for a, z in tied_linear_eigenvalues_cached(cert.lin.exact) if z <= cert.t]
    assert ties, "the data must have an exact linear tie inside the top block"
    mu, lam = spectra(X, sigma, digits=DIGITS)
    factor, shift = cert.lin.exact.to_s_units
    unit = _CTX.mpf(factor) * _CTX.mpf(2) ** shift  # reference (L-units) → S-units
    for a, z in ties:
        for i in range(a, z):
            lo, hi = _q(cert.top.lower[i]), _q(cert.top.upper[i])
            want = _CTX.mpf(mu[i]) * unit
            moved = abs(want - _CTX.mpf(lam[i]) * unit)
            assert lo <= want <= hi, f"eigenvalue {i} of {name} outside its enclosure at σ = 2^{log2_sigma}"
            assert hi - lo <= moved * _CTX.mpf(10) ** -DIGITS, (
                f"eigenvalue {i} of {name}: width {mpmath.nstr(hi - lo, 3)} for a shift {mpmath.nstr(moved, 3)}")


@pytest.mark.parametrize("name", sorted(SETS))
def test_eigenvalue_measure_inside_ties_at_2_200(name):
    """Eq. 18 is max_i |μ_i − λ_i| / λ_1, set by the tied eigenvalues: ≥ 20 certified digits, holding the reference
    (it was 0 digits: short)."""
    X = SETS[name]()
    m = precise_kpca.measure(X, "eigenvalue", Fraction(2) ** 200, digits=DIGITS)
    assert m.route.engine == "structured-enclosure" and not m.short and m.certified_digits >= DIGITS
    assert check_measurement(m, X) == "rigorous"


@pytest.mark.parametrize("log2_sigma", [200, 400])
def test_an_accidental_tie_splits_as_its_first_order_shifts(log2_sigma):
    """A linear tie no symmetry forces (asymptotics/repeated.cross_family) splits: σ_X²(μ_i − λ) → s_i, the
    eigenvalues of W_JᵀE₁W_J (exact, sympy). At σ = 2^200 the O(σ⁻²) rest is ~2^-400: the enclosures of
    σ_X²(μ_i − λ) must hold s_i to float64's resolution (they were ±σ_X²‖E‖ wide: of the size of s_i itself)."""
    X = cross_family()
    result = tie_splitting(X, (0, 2), Fraction(2) ** log2_sigma, digits=DIGITS)
    for (lo, hi), exact in zip(result.scaled, _exact_shifts(X)):
        slack = 2.0**-50 * abs(exact)  # the float ends' rounding and the O(σ⁻²) rest
        assert lo - slack <= exact <= hi + slack
        assert hi - lo <= 2.0**-40 * abs(exact)
    assert result.relative_spread() > 0.1
