"""Mutation tests: each checker takes the claim as data and rejects wrong claims (it is not vacuous)."""
from __future__ import annotations

import sympy as sp

from proofs import bounds, corollary2, expansions, gram, lemma1, lemma2, perturbation, theorem2
from proofs.indexsum import K, N, R, C, T, centering, identity

HALF = sp.Rational(1, 2)


# Lemma 1 / Eq. 7 ---------------------------------------------------------------------------------------
def test_eq7_wrong_grand_mean_rejected():
    assert lemma1.eq7_defect() == 0
    assert lemma1.eq7_defect(lambda a, b: K[a, b] - R(a) / N - C(b) / N + T / N) != 0


def test_single_centering_breaks_lemma1_general_n():
    assert lemma1.distance_defect(centering, centering) == 0
    assert lemma1.distance_defect(identity, centering) != 0
    assert lemma1.distance_defect(centering, identity) != 0


def test_single_centering_breaks_lemma1_explicit():
    assert all(lemma1.explicit_defects(gram.row_centering, sizes=(2, 3, 4)).values())
    assert all(lemma1.explicit_defects(gram.column_centering, sizes=(2, 3)).values())


def test_wrong_centering_operator_moves_differences():
    assert lemma1.difference_image(centering) == 0
    # any I - c 11^T fixes e_n - e_m (1^T (e_n - e_m) = 0); a rank-one part not along 1 does not
    assert lemma1.difference_image(lambda a, b: sp.KroneckerDelta(a, b) - 1 / (N + 1)) == 0
    assert lemma1.difference_image(lambda a, b: sp.KroneckerDelta(a, b) - sp.KroneckerDelta(b, 1) / N) != 0
    assert lemma1.difference_image(lambda a, b: 2 * sp.KroneckerDelta(a, b)) != 0


def test_note_example_numbers():
    before, after, after_t, quadratic = lemma1.note_example(gram.row_centering)
    assert (before, after, after_t, quadratic) == (6, 5, 7, 6)
    assert lemma1.note_example(gram.double_centering)[:3] == (6, 6, 6)


# Lemma 2 / Corollary 1 ---------------------------------------------------------------------------------
def test_lemma2_rejects_single_centering_and_wrong_scale():
    assert lemma2.explicit_defect(3, 2) == sp.zeros(3, 3)
    assert lemma2.explicit_defect(3, 2, scale=-1) != sp.zeros(3, 3)
    assert lemma2.explicit_defect(3, 2, center=gram.row_centering) != sp.zeros(3, 3)
    assert lemma2.rank_one_residue(identity, centering)[1] != 0


def test_corollary1_rejects_wrong_euclidean_scale():
    assert lemma2.general_distance_defects(-1)[0] != 0
    assert lemma2.corollary1_defects(3, 2, scale=-1)


# Eqs. 9-12 ---------------------------------------------------------------------------------------------
def test_wrong_series_coefficients_rejected():
    A = expansions.sq_distance_symbols(3)
    assert expansions.coefficient_mismatches(A, expansions.PAPER_COEFFICIENTS) == []
    assert expansions.coefficient_mismatches(A, {2: sp.Rational(1, 4)}) == [2]  # "½·½" instead of "½·¼"
    assert expansions.coefficient_mismatches(A, {1: -1}) == [1]  # E without the ½
    assert expansions.constant_term_residue() == 0


def test_eq12_rejects_nonzero_self_distances_and_wrong_factor():
    a, e = expansions.alpha, expansions.eps
    assert expansions.eq12_leading(sp.Rational(1, 8) * (2 * a**4 - 2 * a**4) * e**4) != 0  # α_ii = α_ij
    assert expansions.eq12_leading(sp.Rational(1, 4) * (-2 * a**4) * e**4) != 0


# Eqs. 12-14 --------------------------------------------------------------------------------------------
def test_taylor_sandwich_constant_is_sharp():
    assert bounds.taylor_sandwich(HALF)[0]
    assert not bounds.taylor_sandwich(HALF - sp.Rational(1, 1000))[0]


def test_eq13_constant_below_quarter_rejected():
    assert bounds.eq13_check(sp.Rational(1, 4))[0]
    holds, witness = bounds.eq13_check(sp.Rational(1, 4) - sp.Rational(1, 1000))
    assert not holds and "arb-certified" in witness


def test_eq14_constant_below_eighth_rejected():
    assert bounds.eq14_check(sp.Rational(1, 8), with_eta=False)[0]
    assert not bounds.eq14_check(sp.Rational(1, 8) - sp.Rational(1, 1000), with_eta=False)[0]


# Theorem 2 ---------------------------------------------------------------------------------------------
def test_theorem2_sharp_constant():
    assert theorem2.supremum() == sp.Rational(1, 8)
    assert theorem2.constant_check(sp.Rational(1, 8))[0]
    holds, witness = theorem2.constant_check(sp.Rational(99, 800))
    assert not holds and "arb-certified" in witness


def test_theorem2_closed_form_rejects_wrong_formula():
    assert theorem2.closed_form_defect() == 0
    wrong = theorem2.R.subs(theorem2.v, 2 * theorem2.v)  # v = ρ²/σ² instead of ρ²/2σ²
    alpha = theorem2.sx * sp.sqrt(2 * theorem2.v)
    relative = (alpha - theorem2.sx * sp.sqrt(2 * theorem2.w)) / alpha
    assert sp.simplify(relative - wrong.subs(sp.exp(-2 * theorem2.v), (1 - theorem2.w) ** 2)) != 0


# Corollary 2 -------------------------------------------------------------------------------------------
def test_cosine_coefficient_rejects_wrong_claim():
    c1 = corollary2.cosine_coefficient()
    assert sp.simplify(c1 - corollary2.claimed_coefficient()) == 0
    assert sp.simplify(c1 - 2 * corollary2.claimed_coefficient()) != 0


def test_collinear_angle_is_first_order():
    at_pi, _ = corollary2.degenerate_coefficients(corollary2.cosine_coefficient())
    assert at_pi != 0  # so |φ - θ| ~ √(2c₁) ε: O(ρ/σ), not O((ρ/σ)²)


# Eq. 15 / Theorem 3 ------------------------------------------------------------------------------------
def test_wrong_residual_coefficients_rejected():
    D = perturbation.Dsym
    assert perturbation.residual_mismatches() == []
    assert perturbation.residual_mismatches({2: D**2 / 4}) == [2]
    assert perturbation.residual_mismatches({4: D**3 / 48}) == [4]


def test_wrong_first_order_formulas_rejected():
    assert perturbation.first_order_residual() == sp.zeros(3, 3)
    flipped = lambda L, M, i: -perturbation.standard_correction(L, M, i)  # noqa: E731  (λ_j - λ_i)
    assert perturbation.first_order_residual(correction=flipped) != sp.zeros(3, 3)
    doubled = lambda L, M, i: 2 * M[i, i]  # noqa: E731
    assert perturbation.first_order_residual(shift=doubled) != sp.zeros(3, 3)
