"""The enclosure theorems (numerics/theorems.py): identities where a theorem is attained, and a mutation check per
theorem against the independent reference.

Mutation checks: each case makes its theorem's term decide an enclosure, checks that the enclosure contains the
reference (mpmath ``eigsy`` on the exact matrix, tests/eigsy_reference.py, or an exactly known spectrum) and is
tight on the side the term decides, then scales the theorem's bound by :data:`FACTOR` both ways: tightened, the
enclosure loses the reference; loosened, it is no longer tight. The routes reach the theorems through the module
(``theorems.kato_temple(...)``), so one monkeypatch mutates every caller.
"""
from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import flint
import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.approx.enclosure import basis_enclosures
from precise_kpca.arith.fixed import FixedMatrix
from precise_kpca.arith.rounding import sqrt_up
from precise_kpca.certify import float64_enclosure
from precise_kpca.certify.eigen_enclosure import enclose_eigensystem
from precise_kpca.numerics import theorems
from precise_kpca.numerics.eigen_refine import bounds as refine_bounds
from precise_kpca.numerics.eigen_refine import refine_eigensystem
from precise_kpca.testing import centered_gaussian_gram, gaussian_data

from ..eigsy_reference import reference

FACTOR = 100  # the mutants scale their bound by this, up (loosened) and down (tightened)
DPS = 60  # the reference's digits: every distance checked below is above 1e-40 of the eigenvalues
VALUES = [4.0, 2.5, 1.0, 0.5, -0.25, -1.5]
PAIR = [3.0, 3.0 + 1e-13, 1.0, 0.5, -1.0]  # a pair closer than every spoil: one run


def _exact(x) -> Fraction:
    """An interval end or reference value (Fraction, float, mpf of any context, exact arb) as a Fraction."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, flint.arb):
        return theorems.BALL.key(x)
    mpf = getattr(x, "_mpf_", None)
    if mpf is None:
        return Fraction(float(x))
    sign, man, exp, _ = mpf
    return (-1 if sign else 1) * Fraction(int(man)) * Fraction(2) ** exp


def _centred_tight(ends, value, slack=3) -> bool:
    """value ∈ [lo, hi] and the half-width within ``slack`` times value's distance from the centre: a bound
    symmetric about its centre (the centre's error is what the theorem's term covers)."""
    lo, hi = (_exact(x) for x in ends)
    return lo <= value <= hi and (hi - lo) / 2 <= slack * abs(value - (lo + hi) / 2)


def _upper_tight(ends, value) -> bool:
    """value ∈ [lo, hi] and the upper end within half the lower end's distance of it: a quadratic bound sharp
    above (the Rayleigh quotient or Ritz value below the top eigenvalue, the term covering the difference)."""
    lo, hi = (_exact(x) for x in ends)
    return lo <= value <= hi and hi - value <= (value - lo) / 2


def _caught(monkeypatch, name, mutant, run, holds, factors=(Fraction(1, FACTOR), Fraction(FACTOR))):
    """``holds(run())`` for the theorem as written, and not with ``mutant(theorem, f)`` for f = FACTOR^±1 (float
    factors for the refinement's float64 values)."""
    assert holds(run())
    original = getattr(theorems, name)
    for factor in factors:
        monkeypatch.setattr(theorems, name, mutant(original, factor))
        assert not holds(run()), f"{name} with its bound scaled by {factor} was not caught"
    monkeypatch.setattr(theorems, name, original)


def _result_scaled(original, f):
    return lambda *args, **kw: original(*args, **kw) * f


def _rotated(values, seed):
    """A float64 symmetric matrix with about these eigenvalues (exact: the binary numbers it holds), its float64
    eigensystem (descending) and the reference eigenvalues and vectors of the exact matrix."""
    n = len(values)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    A = (Q * np.asarray(values)) @ Q.T
    A = np.triu(A) + np.triu(A, 1).T  # exactly symmetric
    w, V = np.linalg.eigh(A)
    ctx, ref_values, ref_vectors = reference(A, DPS)
    return A, np.ascontiguousarray(w[::-1]), np.ascontiguousarray(V[:, ::-1]), [_exact(v) for v in ref_values], \
        (ctx, ref_vectors)


def _enclose(A, w, V, **kw):
    A_hp = FixedMatrix.from_float64(A, bits=120)
    assert A_hp.error_bound == 0  # A exactly: the reference is of A_hp
    return enclose_eigensystem(A_hp, 0, w, V, **kw)


# -- identities: the theorems where they are attained (exact rational 2×2 spectra) -----------------------------
def _rotation(p: int, q: int) -> tuple[Fraction, Fraction]:
    """(cos, sin) of a rational rotation, from the Pythagorean triple of (p, q)."""
    h = p * p + q * q
    return Fraction(p * p - q * q, h), Fraction(2 * p * q, h)


_TWO = dict(p=st.integers(1, 50), q=st.integers(1, 50), l1=st.fractions(-10, 10, max_denominator=100),
            gap=st.fractions(Fraction(1, 1000), 10, max_denominator=1000), t=st.fractions(-3, 3, max_denominator=97))


def _two_by_two(p, q, l1, gap, t):
    """A = Q diag(l1, l2) Qᵀ exactly, its top eigenvector v1, and the unit vector's Rayleigh data for u ∝ v1 + t v2."""
    c, s = _rotation(p, q)
    l2 = l1 - gap
    v1, v2 = (c, s), (-s, c)
    A = [[l1 * v1[i] * v1[j] + l2 * v2[i] * v2[j] for j in range(2)] for i in range(2)]
    u = (v1[0] + t * v2[0], v1[1] + t * v2[1])
    uu = u[0] ** 2 + u[1] ** 2
    Au = (A[0][0] * u[0] + A[0][1] * u[1], A[1][0] * u[0] + A[1][1] * u[1])
    theta = (u[0] * Au[0] + u[1] * Au[1]) / uu
    eps2 = ((Au[0] - theta * u[0]) ** 2 + (Au[1] - theta * u[1]) ** 2) / uu
    sin2 = 1 - (u[0] * v1[0] + u[1] * v1[1]) ** 2 / uu
    return l1, l2, theta, eps2, sin2


@settings(max_examples=60, deadline=None)
@given(**_TWO)
def test_kato_temple_is_attained_on_two_by_two(p, q, l1, gap, t):
    """With α the other eigenvalue exactly, θ + ε²/(θ − α) is the top eigenvalue itself, and θ its lower end."""
    l1, l2, theta, eps2, _ = _two_by_two(p, q, l1, gap, t)
    assert theorems.kato_temple(theta, theta, eps2, alpha=l2) == (theta, l1)
    # and the bottom eigenvalue from above, with β = the top one
    bottom = _two_by_two(p, q, l1, gap, 1 / t if t else Fraction(10**6))
    low, high = theorems.kato_temple(bottom[2], bottom[2], bottom[3], beta=l1)
    assert (low, high) == (l2, bottom[2])


@settings(max_examples=60, deadline=None)
@given(a=st.fractions(-10, 10, max_denominator=1000), eta=st.fractions(Fraction(1, 10**6), 10, max_denominator=10**6),
       e=st.fractions(0, 10, max_denominator=10**6))
def test_li_li_radius_is_attained_on_two_by_two(a, eta, e):
    """[[a, e], [e, a − η]]: λ₁ − a = 2e²/(η + √(η² + 4e²)) exactly; the directed root gives it to 2⁻⁶⁰, from
    above; the root-free form ε²/η is above it."""
    ctx = mpmath.MPContext()
    ctx.prec = 400
    half_eta, e_mp = ctx.mpf(eta.numerator) / eta.denominator / 2, ctx.mpf(e.numerator) / e.denominator
    shift = _exact(ctx.sqrt(half_eta ** 2 + e_mp ** 2) - half_eta)  # λ₁ − a in closed form, to 2⁻³⁹⁰
    radius = theorems.li_li_radius(e, eta)
    assert shift * (1 - Fraction(1, 2**300)) <= radius <= shift * (1 + Fraction(1, 2**60))
    assert theorems.li_li_radius(e, eta, arith=None) >= radius


@settings(max_examples=60, deadline=None)
@given(**_TWO)
def test_davis_kahan_holds_on_two_by_two(p, q, l1, gap, t):
    """sin∠(u, v₁) ≤ ‖(A − θ)u‖/(θ − λ₂) (the gap from the Rayleigh quotient to the other eigenvalue): tan, in
    fact, for 2×2."""
    l1, l2, theta, eps2, sin2 = _two_by_two(p, q, l1, gap, t)
    gap_ = theorems.davis_kahan_gap(theta, theta, below=l2)
    assert gap_ == theta - l2
    bound = theorems.sin_theta(sqrt_up(eps2), gap_)
    assert bound ** 2 >= sin2
    assert bound ** 2 * (1 - sin2) <= sin2 * (1 + Fraction(1, 2**60))  # tan² = sin²/cos²: attained


@settings(max_examples=60, deadline=None)
@given(mu=st.fractions(-10, 10, max_denominator=1000), omega=st.fractions(0, Fraction(99, 100), max_denominator=1000))
def test_ostrowski_radius_is_attained_and_holds_the_corners(mu, omega):
    """A = [a], V = [√(1 − ω)]: VᵀAV = μ = a(1 − ω), so λ(A) = μ/(1 − ω) lies exactly ω/(1 − ω)·|μ| from μ; and
    every corner of :func:`ostrowski` lies within the radius of μ."""
    radius = theorems.ostrowski_radius(abs(mu), omega)
    assert abs(mu / (1 - omega) - mu) == radius
    low, high = theorems.ostrowski(mu, mu, omega)
    assert mu - radius <= low <= high <= mu + radius


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.fractions(-10, 10, max_denominator=8), st.fractions(0, 2, max_denominator=8)),
                max_size=12))
def test_overlap_runs_split_where_neighbours_are_apart(enclosures):
    """Runs partition 0…n−1 in order; inside a run neighbours' enclosures meet, between runs they do not; the
    same runs from a NumPy boolean array of separations (the refinement's form)."""
    centres = sorted((c for c, _ in enclosures), reverse=True)
    lower = [c - r for c, (_, r) in zip(centres, enclosures)]
    upper = [c + r for c, (_, r) in zip(centres, enclosures)]
    runs = theorems.overlap_runs(lower, upper)
    assert [i for a, z in runs for i in range(a, z)] == list(range(len(lower)))
    assert all(a < z for a, z in runs)
    for a, z in runs:
        assert all(not upper[i] < lower[i - 1] for i in range(a + 1, z))
        assert a == 0 or upper[a] < lower[a - 1]
    apart = np.array([upper[i] < lower[i - 1] for i in range(1, len(lower))], dtype=bool)
    assert (theorems.split_runs(apart) if len(lower) else []) == runs


_POSITIVE = st.floats(2.0**-60, 2.0**60)


@settings(max_examples=100, deadline=None)
@given(eps=st.lists(_POSITIVE, min_size=1, max_size=5), eta=_POSITIVE, omega=st.floats(0, 0.5), value=_POSITIVE)
def test_float64_results_are_bounds_after_the_safety_factor(eps, eta, omega, value):
    """FLOAT64 on arrays, elementwise: each result within a few roundings of the exact theorem on the same float64
    inputs, so times the refinement's ``_NORM_SAFETY`` (1 + 2⁻⁴⁰) it bounds the exact one from above."""
    safety = Fraction(1 + 2.0**-40)
    eps = np.array(eps)
    radii = theorems.li_li_radius(eps, eta, arith=theorems.FLOAT64)
    for e, r in zip(eps, radii):
        exact = theorems.li_li_radius(Fraction(e), Fraction(eta))  # the root rounded down: an upper bound
        assert exact * (1 - Fraction(1, 2**48)) <= Fraction(r) <= exact * (1 + Fraction(1, 2**48))
        assert Fraction(r) * safety >= exact
    for float_result, exact in (
            (theorems.ostrowski_radius(value, omega), theorems.ostrowski_radius(Fraction(value), Fraction(omega))),
            (theorems.sin_theta(value, eta, omega + 0.5), theorems.sin_theta(Fraction(value), Fraction(eta),
                                                                               Fraction(omega + 0.5)))):
        assert Fraction(float_result) * safety >= exact >= Fraction(float_result) / safety


# -- mutation checks: each theorem's bound scaled, through the routes that use it ------------------------------
def test_weyl(monkeypatch):
    """A_hp = diag(VALUES) with exact eigenvectors (its own enclosures are points), A = A_hp + δe₁e₁ᵀ: Weyl's
    4 ± δ holds λ₁(A) = 4 + δ at its upper end."""
    delta = 2.0**-30
    A = np.diag(VALUES)
    A[0, 0] += delta
    _, ref_values, _ = reference(A, DPS)

    def run():
        enc = enclose_eigensystem(FixedMatrix.from_float64(np.diag(VALUES), bits=60), delta, np.array(VALUES),
                                  np.eye(len(VALUES)), k=1)
        return enc.lower[0], enc.upper[0]

    _caught(monkeypatch, "weyl", lambda weyl, f: lambda low, high, norm: weyl(low, high, norm * f), run,
            lambda ends: _centred_tight(ends, _exact(ref_values[0])))


def test_global_radius(monkeypatch):
    """A pair 1e-13 apart in a run not given the block bound (max_block=1), the approximate values spoiled by 1e-7:
    the global radius ρ ≈ ‖R‖₂ ≈ 1e-7 decides the pair's enclosures, centred 1e-7 from the eigenvalue."""
    A, w, V, ref_values, _ = _rotated(PAIR, seed=1)

    w[:2] += 1e-7  # the others stay exact to rounding: their (mutated) global enclosures still hold them

    def run():
        enc = _enclose(A, w, V, k=2, max_block=1)
        return enc.method[0], (enc.lower[0], enc.upper[0])

    _caught(monkeypatch, "global_radius", _result_scaled, run,
            lambda out: out[0] == "global" and _centred_tight(out[1], ref_values[0]))


def test_kahan_cluster_radius(monkeypatch):
    """The float64 enclosure of the same pair (one run), values spoiled by 1e-7: Kahan's radius ≈ ‖R_J‖₂ decides."""
    A, w, V, ref_values, _ = _rotated(PAIR, seed=1)

    w[:2] += 1e-7

    def run():
        enc = float64_enclosure.enclose_float64(A, 0, w, V)
        return enc.runs[0], (enc.lower[1], enc.upper[1])

    _caught(monkeypatch, "kahan_cluster_radius", _result_scaled, run,
            lambda out: out[0] == (0, 2) and _centred_tight(out[1], ref_values[1]))


def test_kato_temple(monkeypatch):
    """The top vector spoiled by 1e-6 towards the second: θ = λ₁ − O(1e-12), and Kato–Temple's upper end
    θ + ε²/(θ − α) lies within a small fraction of that above λ₁ (its lower end is θ)."""
    A, w, V, ref_values, _ = _rotated(VALUES, seed=2)
    V[:, 0] += 1e-6 * V[:, 1]

    def run():
        enc = _enclose(A, w, V, k=1)
        return enc.method[0], (enc.lower[0], enc.upper[0])

    _caught(monkeypatch, "kato_temple",
            lambda kato_temple, f: lambda lo, hi, eps2, *args: kato_temple(lo, hi, eps2 * f, *args), run,
            lambda out: out[0] == "kato-temple" and _upper_tight(out[1], ref_values[0]))


def test_li_li_radius(monkeypatch):
    """A pair 1e-6 apart (one run: the global radius is ~2e-6), its first vector spoiled by 1e-6 towards the
    third: the top Ritz value is s²(λ₁ − λ₃) = 2e-12 below λ₁ and the Li–Li radius ε²/η ≈ (2e-6)²/2 covers
    exactly that (attained to first order)."""
    A, w, V, ref_values, _ = _rotated([3.0, 3.0 - 1e-6, 1.0, 0.5, -1.0], seed=3)
    V[:, 0] += 1e-6 * V[:, 2]

    def run():
        enc = _enclose(A, w, V, k=2)
        return enc.method[:2], (enc.lower[0], enc.upper[0])

    _caught(monkeypatch, "li_li_radius", _result_scaled, run,
            lambda out: out[0] == ("block", "block") and _upper_tight(out[1], ref_values[0]))


def _true_sin(V, column, ref):
    """sin∠(V[:, column], the reference eigenvector of the same index), in the reference's context."""
    ctx, vectors = ref
    x = [ctx.mpf(v) for v in V[:, column]]
    v = vectors[column]
    cos2 = ctx.fsum(a * b for a, b in zip(x, v)) ** 2 / ctx.fsum(a * a for a in x)
    return _exact(ctx.sqrt(1 - cos2))


def test_davis_kahan(monkeypatch):
    """The top vector spoiled by 1e-6 towards the second: sin∠ ≈ 1e-6 and the Davis–Kahan ‖R‖/δ, δ ≈ λ₁ − λ₂, is
    within a factor 3 of it. Its two parts mutated: the gap δ, and the bound residual/δ."""
    A, w, V, _, ref = _rotated(VALUES, seed=2)
    V[:, 0] += 1e-6 * V[:, 1]
    true = _true_sin(V, 0, ref)

    def run():
        return _enclose(A, w, V, k=1, groups=[(0, 1)]).groups[0].sin_theta

    def holds(bound):
        return bound is not None and true <= Fraction(bound) <= 3 * true

    _caught(monkeypatch, "sin_theta", _result_scaled, run, holds)
    _caught(monkeypatch, "davis_kahan_gap", _result_scaled, run, holds)


def test_ostrowski(monkeypatch):
    """A = [3], V = [1 + δ]: VᵀAV = 3(1 + δ)² and θ = 1 + ω exactly (ω = (1 + δ)² − 1): the enclosure's lower end is
    3 itself and its width ~6ω (Ostrowski's factor attained)."""
    delta = 2.0**-20
    omega = Fraction((1 + delta) ** 2 - 1)

    def run():
        with flint.ctx.workprec(200):
            (top,) = basis_enclosures(flint.arb_mat([[3]]), flint.arb_mat([[1 + delta]]), 1)
        return top.lower(), top.upper()

    def holds(ends):
        lo, hi = (_exact(x) for x in ends)
        return lo <= 3 <= hi and hi - lo <= 6 * omega * (1 + 2 * omega)

    _caught(monkeypatch, "ostrowski",
            lambda ostrowski, f: lambda low, high, om, **kw: ostrowski(low, high, om * flint.fmpq(f.numerator,
                                                                                                  f.denominator),
                                                                       **kw), run, holds)


# -- the same mutations through the fast refinement's float64 bounds (numerics/eigen_refine/bounds.py) -----------
# At the refinement's last iteration its eigenvalue bounds rest on its a-priori floor (second-order remainders, A's
# rounding), far above the Li–Li and Ostrowski terms (graded Gaussian Grams: errors 1e-10…1e-5 of the bounds); those
# two are checked on its bounds stage, given the products S = XᵀAX, G = XᵀX of a basis where they decide. Its vector
# bounds are Davis–Kahan's (errors 0.1…0.5 of the bounds): checked on refine_eigensystem itself.
FLOAT_FACTORS = (1 / FACTOR, float(FACTOR))


def _refinement_enclosures(S, G):
    """The refinement's eigenvalue enclosures (descending, Fractions) from exact float64 products S and G with
    G_ii = 1 (θ_i = S_ii exactly), no read-out error: ``bounds.bounds`` at a target far below every term."""
    n = len(S)
    ref = SimpleNamespace(n=n, k=n, tier=1, target=2.0**-200, a_bits=300, a_rounding=0.0, resolution=0.0)
    pr = SimpleNamespace(S=S, R=G - np.eye(n), theta_hi=np.diag(S).copy(), theta_lo=np.zeros(n), delta_s=0.0,
                         delta_g=0.0)
    order, vb, _, _ = refine_bounds.bounds(ref, pr)
    return [(Fraction(pr.theta_hi[i]) - Fraction(vb[i]), Fraction(pr.theta_hi[i]) + Fraction(vb[i])) for i in order]


def test_li_li_radius_in_the_refinement(monkeypatch):
    """G = I and S = diag(VALUES) coupled by c = 2⁻²⁰ between its first two: λ₁ − θ₁ = 2c²/(1.5 + √(1.5² + 4c²))
    exactly, and the refinement's Li–Li radius (η the gap 1.5 less ‖T‖ ≈ √2c) covers that to a relative 1e-6, far
    inside Weyl's √2c."""
    S = np.diag(VALUES)
    S[0, 1] = S[1, 0] = 2.0**-20
    _, ref_values, _ = reference(S, DPS)
    _caught(monkeypatch, "li_li_radius", _result_scaled, lambda: _refinement_enclosures(S, np.eye(len(VALUES)))[0],
            lambda ends: _centred_tight(ends, _exact(ref_values[0])), FLOAT_FACTORS)


def test_ostrowski_radius_in_the_refinement(monkeypatch):
    """S = diag(3, 3, 1, 0.5), G = I + f(e₁e₂ᵀ + e₂e₁ᵀ), f = 2⁻³⁰: one group of two, the pencil's eigenvalues
    3/(1 ∓ f) exactly, 3f/(1 − f) from θ; Ostrowski's radius ω/(1 − ω)·3, ω ≥ ‖F‖_F = √2 f, holds them. Tightened,
    the enclosure loses λ₁; loosened, the refinement keeps its second-order radius (the minimum of both): only the
    tightened bound can be caught here."""
    S = np.diag([3.0, 3.0, 1.0, 0.5])
    G = np.eye(4)
    f = 2.0**-30
    G[0, 1] = G[1, 0] = f
    top = Fraction(3) / (1 - Fraction(f))
    _caught(monkeypatch, "ostrowski_radius", _result_scaled, lambda: _refinement_enclosures(S, G)[0],
            lambda ends: _centred_tight(ends, top), FLOAT_FACTORS[:1])


@pytest.fixture(scope="module")
def refined_gram():
    """A graded centred Gaussian Gram (N = 40) and its eigsy reference at 100 digits."""
    A = centered_gaussian_gram(gaussian_data(40, seed=2), bits=256)
    return A, reference(A, 100)


def test_davis_kahan_in_the_refinement(monkeypatch, refined_gram):
    """refine_eigensystem's bounds on the top three eigenvectors (tier 1, 30 digits) are Davis–Kahan's residual over
    gap: each holds the reference's distance and is within 10 times of it. Its two parts mutated: the gap, and the
    bound residual/gap."""
    A, (ctx, _, vectors) = refined_gram

    def run():
        res = refine_eigensystem(A, dps=30, tier=1, k=3)
        errors = [min(ctx.norm(ctx.matrix([ctx.mpf(x) - s * v for x, v in zip(res.vectors[:, c], vectors[c])]))
                      for s in (1, -1)) for c in range(3)]
        return [(_exact(e), Fraction(b)) for e, b in zip(errors, res.vector_error_bounds)]

    def holds(pairs):
        return all(e <= b <= 10 * e for e, b in pairs)

    _caught(monkeypatch, "sin_theta", _result_scaled, run, holds, FLOAT_FACTORS)
    _caught(monkeypatch, "davis_kahan_gap", _result_scaled, run, holds, FLOAT_FACTORS)
