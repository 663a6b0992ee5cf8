"""Theorem 3's σ → ∞ limits, enclosed (asymptotics/enclosed_limits.py): every interval against an independent
mpmath reference at twice the digits (tests/first_order_reference.py), exact ties, duplicates, both ways of
applying E₁, and the rigorous measure at σ = 2^60."""
from unittest import mock

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from precise_kpca.asymptotics import EnclosedLimits, ExactEccentricity, eigenprojection_constant, eigenvalue_constant
from precise_kpca.asymptotics.adversarial import two_shells
from precise_kpca.asymptotics.enclosed_limits import enclose
from precise_kpca.asymptotics import first_order_operator as operator_module
from precise_kpca.asymptotics.first_order_operator import ROUTES, first_order_operator
from precise_kpca.certify.linear_enclosure import linear_enclosure
from precise_kpca.numerics.linear_exact import exact_linear
from precise_kpca.datasets import load
from precise_kpca.errors import InsufficientPrecision, Undetermined
from precise_kpca.numerics.data import clear as clear_derived

from ..first_order_reference import Reference
from ..strategies import data_sets

DIGITS = 15
AT_DIGITS = 20  # digits asked of the rigorous measure at σ = 2^60
REF_DPS = 2 * DIGITS + 50  # the reference is trusted to 2·DIGITS digits: room for ill-conditioning and cancellation
# (P₀E₁w on near-duplicate rows cancels up to 13 digits)


def _contains(constant, value, ref) -> bool:
    """value ∈ [lower, upper], up to the reference's accuracy (never finer than 2·DIGITS digits, relative to the
    value or, for a zero limit, absolute: the limits are dimensionless)."""
    slack = (abs(value) + 1) * (ref.accuracy + ref.ctx.mpf(10) ** (-2 * DIGITS))
    return ref.ctx.mpf(constant.lower) - slack <= value <= ref.ctx.mpf(constant.upper) + slack


@st.composite
def symmetric_sets(draw):
    """Orbits of the quarter turn (x, y) → (−y, x), with a third coordinate constant on each orbit: the planar
    variance is isotropic, so the top linear eigenvalues tie exactly (and the ties reach E₁'s blocks)."""
    orbits = draw(st.integers(1, 2))
    rows = []
    for _ in range(orbits):
        a, b = draw(st.integers(-9, 9)), draw(st.integers(1, 9))
        z = draw(st.integers(-20, 20)) / 4
        rows += [(a, b, z), (-b, a, z), (-a, -b, z), (b, -a, z)]
    if draw(st.booleans()):
        rows.append((0, 0, draw(st.integers(-20, 20)) / 4))  # the centre: fixed by the turn
    return np.array(rows, dtype=np.float64) * draw(st.sampled_from([1.0, 2.0**-20, 1e3]))


def _check_against_reference(X, route):
    try:
        limits = EnclosedLimits(X, digits=DIGITS, route=route)
    except ValueError:
        assume(False)  # all rows equal or a zero median: no limit is defined
    ref = Reference(X, REF_DPS)
    assert limits.rank == len(ref.values)
    _check_null_block(X, route, ref)
    eigenvalue = limits.eigenvalue()
    assert eigenvalue.guarantee == "rigorous"
    assert _contains(eigenvalue, ref.eigenvalue_limit(), ref)
    assert eigenvalue.certified_digits >= DIGITS or eigenvalue.reason
    for k in range(1, min(3, limits.rank) + 1):
        if ref.splits_a_tie(k):
            with pytest.raises(Undetermined, match="are equal"):
                limits.eigenprojection(k)
            continue
        for aggregate in ("mean", "max"):
            c = limits.eigenprojection(k, aggregate=aggregate)
            assert _contains(c, ref.eigenprojection_limit(k, aggregate), ref)
            assert c.certified_digits >= DIGITS or (c.lower <= 0 and "is 0 to within" in c.reason)


def _check_null_block(X, route, ref):
    """The enclosure of ν = λ_max(P₀E₁P₀) (S-units), read as ν/λ_1 (unit-free), contains the reference's."""
    lo, hi = first_order_operator(X, route).null_top
    lin = linear_enclosure(X, 128)
    ctx = ref.ctx
    ratio = ref.null_top() / ref.values[0]
    slack = (abs(ratio) + 1) * (ref.accuracy + ctx.mpf(10) ** (-2 * DIGITS))
    assert _q(ctx, lo) / _q(ctx, lin.upper(0)) - slack <= ratio <= _q(ctx, hi) / _q(ctx, lin.lower(0)) + slack


@given(data_sets(max_rows=9, max_dim=3), st.sampled_from(ROUTES))
@settings(max_examples=25, deadline=None)
def test_limits_contain_the_reference_on_random_data(X, route):
    _check_against_reference(X, route)


@given(st.one_of(data_sets(max_rows=9, max_dim=3), symmetric_sets()))
@settings(max_examples=15, deadline=None)
def test_dense_rayleigh_bound_of_the_null_block_contains_the_reference(X):
    """The dense route's fallback for large N·q (exact Rayleigh quotient, Kato–Temple or Frobenius), forced."""
    try:
        lin = linear_enclosure(X, 128)
    except ValueError:
        assume(False)  # all rows equal
    clear_derived(operator_module._operator_cached)
    with mock.patch.object(operator_module, "_COMPRESSION_MAX_ENTRIES", 0):
        lo, hi = first_order_operator(X, "dense").null_top
        method = first_order_operator(X, "dense").null_method
    clear_derived(operator_module._operator_cached)
    assert "compression" not in method
    ref = Reference(X, REF_DPS)
    ctx = ref.ctx
    ratio = ref.null_top() / ref.values[0]
    slack = (abs(ratio) + 1) * (ref.accuracy + ctx.mpf(10) ** (-2 * DIGITS))
    assert _q(ctx, lo) / _q(ctx, lin.upper(0)) - slack <= ratio <= _q(ctx, hi) / _q(ctx, lin.lower(0)) + slack


def _q(ctx, x):
    return ctx.mpf(x.numerator) / x.denominator


@given(symmetric_sets(), st.sampled_from(ROUTES))
@settings(max_examples=15, deadline=None)
def test_limits_contain_the_reference_on_exact_ties(X, route):
    _check_against_reference(X, route)


def test_duplicates_and_rank_deficiency():
    rng = np.random.default_rng(5)
    base = rng.normal(size=(4, 3))
    X = np.vstack([base, base[:2], base[:1]])  # 7 rows, 3 of them repeated
    _check_against_reference(X, None)
    wide = rng.normal(size=(5, 6))  # N ≤ d + 1: ker L is span(1), no null-space part
    limits = EnclosedLimits(wide, digits=DIGITS)
    ref = Reference(wide, REF_DPS)
    assert limits.rank == 4 and _contains(limits.eigenprojection(2), ref.eigenprojection_limit(2), ref)


def test_the_null_space_term_is_needed():
    """The eigenvectors' null-space part P₀E₁w_i/λ_i moves the eigenprojection limits far beyond their intervals:
    the reference without it falls outside (a mutation dropping it is caught)."""
    X = two_shells(30, 4, seed=1)
    limits = EnclosedLimits(X, digits=DIGITS)
    full, dropped = Reference(X, REF_DPS), Reference(X, REF_DPS, drop_null=True)
    for k in (1, 2):
        angle = limits.eigenprojection(k)
        assert _contains(angle, full.eigenprojection_limit(k), full)
        assert not _contains(angle, dropped.eigenprojection_limit(k), full)


def _float64_eigenvalue_limit(X, *, with_null: bool = True) -> float:
    """The eigenvalue limit's formula in plain float64 (dense, NumPy): a reference for well-conditioned data."""
    n = len(X)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    h = np.eye(n) - 1 / n
    lin, e1 = -h @ sq @ h / 2, h @ (sq * sq) @ h / 8
    values, vectors = np.linalg.eigh(lin)
    keep = values > n * np.finfo(float).eps * values[-1]
    w = vectors[:, keep]
    shifts = np.abs(np.einsum("ij,ik,kj->j", w, e1, w))
    null = np.eye(n) - w @ w.T
    top = max(shifts.max(), np.linalg.eigvalsh(null @ e1 @ null).max() if with_null else 0.0)
    distances = np.sort(np.sqrt(sq).ravel())
    d_x = (distances[(n * n - 1) // 2] + distances[n * n // 2]) / 2
    return top / (d_x**2 * values[-1])


def test_the_null_block_is_the_eigenvalue_limit_on_two_shells():
    """Two shells in 16 dimensions: λ_max(P₀E₁P₀) exceeds every linear shift, so the eigenvalue limit is the null
    block's (a mutation dropping it is caught; the float64 reference is good to ~N·100 unit roundoffs here)."""
    X = two_shells(200, 16, seed=0)
    limit = EnclosedLimits(X, digits=DIGITS).eigenvalue()
    tolerance = 100 * len(X) * np.finfo(float).eps
    assert limit.certified_digits >= DIGITS
    assert float(limit.value) == pytest.approx(_float64_eigenvalue_limit(X), rel=tolerance)
    assert float(limit.value) != pytest.approx(_float64_eigenvalue_limit(X, with_null=False), rel=tolerance)


def test_both_routes_give_one_interval():
    X = np.random.default_rng(3).normal(size=(40, 3)) * np.array([3.0, 1.0, 0.5])
    features, dense = (EnclosedLimits(X, digits=DIGITS, route=r) for r in ROUTES)
    for a, b in [(features.eigenvalue(), dense.eigenvalue()),
                 (features.eigenprojection(3, aggregate="max"), dense.eigenprojection(3, aggregate="max"))]:
        assert a.certified_digits >= DIGITS and b.certified_digits >= DIGITS
        assert a.lower <= b.upper and b.lower <= a.upper


def _second_order_tolerance(X, limit, log2_sigma: int):
    """Bound on |σ²·m(σ) − lim| from the first neglected order of the expansion.

    σ_X² H K_G H = L + ε²E₁ + ε⁴E₂ + O(ε⁶), E₂ = −H D^{∘3} H/48, ε = 1/(d_X σ). The second-order coefficients of
    the eigenvalues and eigenvectors are at most ‖E₂‖ + ‖E₁‖²/g (g the smallest gap between L's distinct
    eigenvalues, 0 included; exact ties are one cluster), so relative to the first-order ones (size ‖E₁‖) the next
    term is ε²(‖E₂‖/‖E₁‖ + ‖E₁‖/g), and ‖E₂‖/‖E₁‖ ≤ diam²/6 = ρ² d_X²/6. Both ratios enter with a factor 4 to
    spare for the constants of the expansion (sums over the spectrum, the normalization of the angle).
    """
    enc = enclose(X, 128)
    lin = enc.lin
    gaps = [lin.lower(i) - lin.upper(i + 1) for i in range(lin.rank) if lin.separated(i + 1)]  # exact ties: no gap
    ratio = float(enc.norm.upper()) / float(min(gaps))
    rho2 = ExactEccentricity(X).rho() ** 2
    return abs(limit) * 4 * (rho2 / 6 + ratio / float(enc.d_x2.mid())) * 2.0 ** (-2 * log2_sigma)


@pytest.mark.parametrize("name,k", [("eigenvalue", 1), ("eigenprojection", 1), ("eigenprojection", 3)])
def test_limit_is_the_rigorous_measure_at_2_60(name, k):
    """σ²·measure at σ = 2^60 (rigorous structured enclosure) lies within the second-order tolerance of the limit."""
    X = load("wine")
    limit = eigenvalue_constant(X, digits=30) if name == "eigenvalue" else eigenprojection_constant(X, k, digits=30)
    at = eigenvalue_constant(X, "2**60", digits=AT_DIGITS) if name == "eigenvalue" else \
        eigenprojection_constant(X, k, "2**60", digits=AT_DIGITS)
    assert limit.guarantee == at.guarantee == "rigorous" and limit.certified_digits >= 30
    ctx = mpmath.MPContext()
    ctx.prec = 400  # exact for the interval ends
    tolerance = ctx.mpf(_second_order_tolerance(X, limit.value, 60))
    assert ctx.mpf(at.lower) - tolerance <= limit.upper and limit.lower <= ctx.mpf(at.upper) + tolerance
    assert tolerance < abs(limit.value) * 10.0**-AT_DIGITS  # the check pins the digits asked at 2^60


def test_tic_tac_toe_ties_are_undetermined_and_the_rest_rigorous(data_dir):
    X = load("tic-tac-toe", data_dir=data_dir)
    limits = EnclosedLimits(X, digits=12)
    assert (1, 3) in limits.repeated
    with pytest.raises(Undetermined, match="linear eigenvalues 1 and 2 are equal") as info:
        limits.eigenprojection(2)
    assert "multiplicity 2" in info.value.proof
    eigenvalue, k3 = limits.eigenvalue(), limits.eigenprojection(3)
    assert eigenvalue.guarantee == k3.guarantee == "rigorous"
    assert eigenvalue.certified_digits >= 12 and k3.certified_digits >= 12
    heuristic = eigenvalue_constant(X, guarantee="heuristic")  # the old path agrees where it claims digits
    assert heuristic.guarantee == "heuristic"
    assert heuristic.lower <= eigenvalue.upper and eigenvalue.lower <= heuristic.upper


def test_dense_compression_raises_its_precision_until_the_solve_succeeds():
    """The dense route's null block starts its Arb solve far too coarse (2 bits: C's ball inverse fails, 4 bits
    succeed with wide balls): the precision doubles, the balls' radii widen the enclosure (Weyl) so that it still
    contains the reference, and when no doubling is allowed the failure is typed."""
    X = np.random.default_rng(4).normal(size=(12, 3)) * np.array([1.0, 1.0, 1e-6])  # C ill-conditioned
    exact = exact_linear(X)
    lo, hi = operator_module._compressed_null_top(exact, prec=2)
    ref = Reference(X, REF_DPS)
    lin = linear_enclosure(X, 128)
    scale = operator_module._features_scale(exact)
    ratio = ref.null_top() / ref.values[0]
    slack = (abs(ratio) + 1) * (ref.accuracy + ref.ctx.mpf(10) ** (-2 * DIGITS))
    ctx = ref.ctx
    assert _q(ctx, scale * lo) / _q(ctx, lin.upper(0)) - slack <= ratio
    assert ratio <= _q(ctx, scale * hi) / _q(ctx, lin.lower(0)) + slack
    with mock.patch.object(operator_module, "_SOLVE_DOUBLINGS", 1), pytest.raises(InsufficientPrecision):
        operator_module._compressed_null_top(exact, prec=2)
