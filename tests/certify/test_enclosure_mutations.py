"""Issue 19, "a mutation check per enclosure theorem": each bound, tightened by a factor 100, loses the truth.

Every test builds a case in which its theorem's term decides the enclosure (approximate vectors spoiled by 1e-7,
so the residual terms dominate; or an eigenvalue approximation spoiled, so the residual is the eigenvalue error),
checks that the unmutated bound contains the independent reference (plain mpmath eigsy on the exact data,
tests/reference.py) and is tight — so the same bound loosened by a factor 100 would fail — and then monkeypatches
the bound to be 100 times tighter and asserts that the containment check fails. Comparisons run in a private
8192-bit mpmath context on the exact ends (rationals, dyadic mpf).

Units: the structured certificates are in the S-units of :mod:`precise_kpca.certify.linear_enclosure`
(L_S = N²2^(−2e)·L); the reference works in L's units, and the binary128 route in L's units too.
"""
from dataclasses import replace
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from precise_kpca.arith.dyadic import Dyadic, mpf_matrix_to_dyadic
from precise_kpca.certify import angles
from precise_kpca.certify import linear_enclosure as linear_module
from precise_kpca.certify import perturbed_enclosure as perturbed
from precise_kpca.measures import enclosed, intervals, structured_enclosed
from precise_kpca.numerics import theorems
from precise_kpca.numerics.data import clear as clear_derived

from ..reference import eigensystems, reference
from .test_linear_ties import _tied_boards

SPOIL = 1e-7  # the approximate vectors' error: far above every rounding, far below every gap
TIGHTER = 100  # the factor the mutants tighten their bound by
REF_DIGITS = 20  # the reference runs at 2·20 + 20 + σ-digits: the spoiled errors (≥ 1e-16 relative) are resolved

_CTX = mpmath.MPContext()
_CTX.prec = 8192


def _q(x):
    """A Fraction, float or mpf (any context) in the comparison context (exact for dyadic values)."""
    if isinstance(x, Fraction):
        return _CTX.mpf(x.numerator) / x.denominator  # 8192 bits: the rounding of a non-dyadic ratio is far below
    mpf_tuple = getattr(x, "_mpf_", None)
    return _CTX.make_mpf(mpf_tuple) if mpf_tuple is not None else _CTX.mpf(float(x))


def _data(n=10, seed=7):
    """Well-separated linear eigenvalues (ratio ~2.7 and ~8): every gap far above ‖E‖ and the spoil."""
    return np.random.default_rng(seed).normal(size=(n, 3)) * np.array([3.0, 1.5, 0.5])


def _near_tie_data():
    """λ_1, λ_2 within a relative 2e-9 (singular values 1 + 1e-9 and 1), λ_3 ten times smaller: at σ = 2⁸ the Weyl
    intervals of the top two overlap (‖E‖ ≈ 3e-5 λ_1), a run for the Li–Li bound, clear of λ_3."""
    rng = np.random.default_rng(11)
    centred = rng.normal(size=(10, 3))
    u, _, _ = np.linalg.svd(centred - centred.mean(axis=0), full_matrices=False)  # orthonormal, centred columns
    return (u * np.array([1 + 1e-9, 1.0, 0.3])) @ np.linalg.qr(rng.normal(size=(3, 3)))[0]


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Spoiled enclosures must not outlive their test (nor cached clean ones leak in)."""
    caches = (linear_module._linear_cached, structured_enclosed._certificate_cached, enclosed._enclosure_cached)
    clear_derived(*caches)
    yield
    clear_derived(*caches)


def _s_units(lin) -> object:
    factor, shift = lin.exact.to_s_units
    return _CTX.mpf(factor) * _CTX.mpf(2) ** shift


def _floats(vector) -> np.ndarray:
    return np.array([float(x) for x in vector])


def _spoiled_top(X, sigma, t, spoil_with, *, lin_bits=256):
    """enclose_top of A_S's top t eigenvalues from the reference eigenvectors (rounded to float64), column 0
    spoiled by SPOIL × the reference eigenvector ``spoil_with``. Returns (top, lin, eop, the reference (μ, V, λ, W))."""
    mu, V, lam, W = eigensystems(X, sigma, digits=REF_DIGITS)
    lin = linear_module.linear_enclosure(X, lin_bits)
    eop = perturbed.residual_operator(X, sigma, lin.exact)
    basis = np.column_stack([_floats(V[i]) for i in range(t)])
    basis[:, 0] += SPOIL * _floats(V[spoil_with])
    top = perturbed.enclose_top(lin, eop, Dyadic.from_float64(basis), product_bits=120)
    return top, lin, eop, (mu, V, lam, W)


def _sin_angle(column: Dyadic, unit) -> object:
    """sin ∠(span of one exact dyadic column, the reference unit vector), in the comparison context."""
    v = [_q(column.entry(i, 0)) for i in range(column.shape[0])]
    u = [_q(x) for x in unit]
    along = _CTX.fsum(a * b for a, b in zip(v, u))
    rest = [a - along * b for a, b in zip(v, u)]
    return _CTX.sqrt(_CTX.fsum(x * x for x in rest) / _CTX.fsum(x * x for x in v))


def _contains(lo, value, hi) -> bool:
    return _q(lo) <= value <= _q(hi)


# -- structured route: certify/perturbed_enclosure.py ------------------------------------------------------
def test_weyl_isolation_e2(monkeypatch):
    """σ = 2⁴⁰, v̂ = v_1 + 1e-7 v_3: Kato–Temple (α = λ_2 + e2 above μ_3) is ~1e-14 λ wide, ‖E‖ ~ 1e-24 λ: both ends
    of μ_1's enclosure are Weyl's λ_1 ∓ e2, and μ_1 − λ_1 = −0.91 e2 on this data (Weyl is nearly tight)."""
    X, sigma = _data(), Fraction(2) ** 40
    top, lin, _, (mu, _, lam, _) = _spoiled_top(X, sigma, 1, spoil_with=2)
    scale = _s_units(lin)
    mu0, shift = _q(mu[0]) * scale, abs(_q(mu[0]) - _q(lam[0])) * scale
    assert _contains(top.lower[0], mu0, top.upper[0])
    assert (_q(top.upper[0]) - _q(top.lower[0])) / 2 <= 2 * shift  # e2 ≤ 2|μ_1 − λ_1|: e2 × 100 would fail

    e2 = perturbed.ResidualOperator.spectral_bound
    monkeypatch.setattr(perturbed.ResidualOperator, "spectral_bound", property(lambda op: e2.fget(op) / TIGHTER))
    top, *_ = _spoiled_top(X, sigma, 1, spoil_with=2)
    assert not _contains(top.lower[0], mu0, top.upper[0])


def _shrunk_toward(centre: Fraction, lo: Fraction, hi: Fraction) -> tuple[Fraction, Fraction]:
    return centre - (centre - lo) / TIGHTER, centre + (hi - centre) / TIGHTER


def _one_sided_tight(lo, value, hi) -> bool:
    """The upper end is within half the lower end's distance of the value: a quadratic bound that is sharp above
    (θ + ε²/(θ − α) for the top eigenvalue, with θ below it), which a factor 100 on the ε² term breaks."""
    return _q(hi) - value <= (value - _q(lo)) / 2


def test_kato_temple(monkeypatch):
    """σ = 2⁸ (‖E‖ ≈ 3e-5 λ_1, Weyl far wider): μ_1 ∈ [θ, θ + ε²/(θ − α)] with v = v_1 + 1e-7 v_2, θ = μ_1 − ~1e-14."""
    X, sigma = _data(), Fraction(2) ** 8
    top, lin, _, (mu, *_) = _spoiled_top(X, sigma, 1, spoil_with=1)
    mu0 = _q(mu[0]) * _s_units(lin)
    assert top.methods == ("kato-temple",)
    assert _contains(top.lower[0], mu0, top.upper[0])
    assert _one_sided_tight(top.lower[0], mu0, top.upper[0])

    kato_temple = perturbed._kato_temple

    def tighter(v, k, unknown, alpha, beta, index):
        lo, hi = kato_temple(v, k, unknown, alpha, beta, index)
        theta = (v.T @ k).entry(0, 0) / (v.T @ v).entry(0, 0)
        return _shrunk_toward(theta, lo, hi)

    monkeypatch.setattr(perturbed, "_kato_temple", tighter)
    top, *_ = _spoiled_top(X, sigma, 1, spoil_with=1)
    assert not _contains(top.lower[0], mu0, top.upper[0])


def tighten_li_li(monkeypatch):
    """The mutant: every Li–Li radius around the Ritz values TIGHTER times smaller (also for the binary128
    route's top block, which is the same bound)."""
    block, ritz = perturbed._block, perturbed._ritz

    def tighter(v, k, unknown, below, above, start, stop):
        values, _ = ritz(v, k, unknown)
        return [(r_lo - (r_lo - lo) / TIGHTER, r_hi + (hi - r_hi) / TIGHTER)
                for (lo, hi), (r_lo, r_hi) in zip(block(v, k, unknown, below, above, start, stop), values)]

    monkeypatch.setattr(perturbed, "_block", tighter)


def test_li_li_block_radius(monkeypatch):
    """λ_1, λ_2 closer than ‖E‖: one run, Rayleigh–Ritz on span V̂ with v̂_1 = v_1 + 1e-7 v_3; the top Ritz value is
    ~1e-14 below μ_1 and the Li–Li radius 2ε²/(η + √(η² + 4ε²)) covers exactly that."""
    X, sigma = _near_tie_data(), Fraction(2) ** 8
    top, lin, _, (mu, *_) = _spoiled_top(X, sigma, 2, spoil_with=2)
    mu0 = _q(mu[0]) * _s_units(lin)
    assert top.runs == ((0, 2),) and top.methods == ("block", "block")
    assert _contains(top.lower[0], mu0, top.upper[0])
    assert _one_sided_tight(top.lower[0], mu0, top.upper[0])

    tighten_li_li(monkeypatch)
    top, *_ = _spoiled_top(X, sigma, 2, spoil_with=2)
    assert not _contains(top.lower[0], mu0, top.upper[0])


def test_li_li_radius_inside_an_exact_tie(monkeypatch):
    """σ = 2²⁰⁰ on the symmetric boards: μ_1 = μ_2 exactly, ~1e-121 λ from λ_1 = λ_2. Rayleigh–Ritz on the reference
    pair with v̂_1 = v_1 + 1e-65 v_3 (exact dyadics at 1024 bits): the lower Ritz value is ~1e-130 λ below μ_2, far
    inside Weyl's ‖E‖, and the Li–Li radius covers exactly that. The Ritz values were enclosed at 2^-320 of λ (wider
    than Weyl: the cluster bound never decided), now at 2^-320 of the cluster's spread."""
    X, sigma = _tied_boards(), Fraction(2) ** 200

    def top_of_pair():
        mu, V, _, _ = eigensystems(X, sigma, digits=REF_DIGITS)
        basis = np.array([[_q(V[0][r]) + _CTX.mpf(10) ** -65 * _q(V[2][r])] + [_q(V[c][r]) for c in range(1, 4)]
                          for r in range(len(X))], dtype=object)
        lin = linear_module.linear_enclosure(X, 512)
        eop = perturbed.residual_operator(X, sigma, lin.exact)
        return perturbed.enclose_top(lin, eop, mpf_matrix_to_dyadic(basis, 1024), product_bits=200), lin, mu

    top, lin, mu = top_of_pair()
    mu1 = _q(mu[1]) * _s_units(lin)
    assert top.runs[:2] == ((0, 2), (2, 4)) and top.methods[:2] == ("block", "block")
    assert _contains(top.lower[1], mu1, top.upper[1])
    assert _one_sided_tight(top.lower[1], mu1, top.upper[1])
    assert _q(top.upper[1]) - _q(top.lower[1]) < (_q(top.e2) * 2) * _CTX.mpf(10) ** -8  # not Weyl's

    tighten_li_li(monkeypatch)
    top, *_ = top_of_pair()
    assert not _contains(top.lower[1], mu1, top.upper[1])


def test_davis_kahan_group_sin_theta(monkeypatch):
    """σ = 2²⁰, v̂ = v_1 + 1e-7 v_2: sin ∠(v̂, v_1) ≈ 1e-7 and ε/η with η ≈ μ_1 − μ_2 is within a factor 2 of it."""
    X, sigma = _data(), Fraction(2) ** 20
    top, _, _, (_, V, _, _) = _spoiled_top(X, sigma, 1, spoil_with=1)
    true = _sin_angle(top.vectors, V[0])
    bound = _q(top.group_sin_theta(0, 1))
    assert true <= bound <= 2 * true

    sin_theta = perturbed.TopEnclosure.group_sin_theta
    monkeypatch.setattr(perturbed.TopEnclosure, "group_sin_theta",
                        lambda self, start, stop: sin_theta(self, start, stop) / TIGHTER)
    assert not true <= _q(top.group_sin_theta(0, 1))


def test_rest_bound_trace_and_null_block(monkeypatch):
    """t = rank = 3 (N = 10, d = 3): μ_4 ≤ rest_upper = min(λ_4 + e2, trace bound, ‖P₀EP₀‖_F + δ). On this data
    e2 ≈ 3.9 μ_4, the trace bound ≈ 1.16 μ_4 (six rest eigenvalues) and the null block ≈ 1.009 μ_4 decides."""
    X, sigma = _data(), Fraction(2) ** 20
    top, lin, eop, (mu, V, _, _) = _spoiled_top(X, sigma, 3, spoil_with=3)
    mu_t = _q(mu[3]) * _s_units(lin)
    null = perturbed.null_block_bound(lin.exact, eop)
    assert mu_t <= _q(null) <= mu_t * Fraction(11, 10)
    assert mu_t <= _q(top.rest_upper) <= mu_t * Fraction(11, 10)

    basis = top.vectors
    huge = Fraction(10) ** 300
    monkeypatch.setattr(perturbed, "null_block_bound", lambda exact, op: huge)  # the trace bound alone
    trace_only = perturbed.enclose_top(lin, eop, basis, product_bits=120).rest_upper
    assert mu_t <= _q(trace_only) <= mu_t * Fraction(5, 4)

    # the trace bound (trace(A_S) − Σ lower) tightened by 100, through the trace of E it starts from
    tight_trace = replace(eop, trace=eop.trace - trace_only * (TIGHTER - 1) / TIGHTER)
    assert not mu_t <= _q(perturbed.enclose_top(lin, tight_trace, basis, product_bits=120).rest_upper)

    monkeypatch.setattr(perturbed, "null_block_bound", lambda exact, op: null / TIGHTER)
    assert not mu_t <= _q(perturbed.enclose_top(lin, eop, basis, product_bits=120).rest_upper)


# -- the linear side: certify/linear_enclosure.py ----------------------------------------------------------
def _spoiled_refinement(monkeypatch, spoil_values: bool):
    """The refined eigensystem of S with λ̂_1 × (1 + 1e-10), or with q̂_1 + 1e-7 q̂_2 (an approximation: nothing
    trusts it)."""
    refine = linear_module.refine_exact_clusters

    def spoiled(*args):
        q, values = refine(*args)
        if spoil_values:
            return q, [values[0] * Fraction(1 + 1e-10)] + values[1:]
        shear = np.eye(q.shape[1])
        shear[1, 0] = SPOIL
        return q @ Dyadic.from_float64(shear), values

    monkeypatch.setattr(linear_module, "refine_exact_clusters", spoiled)
    clear_derived(linear_module._linear_cached)


@pytest.mark.slow
def test_linear_radius(monkeypatch):
    """λ̂_1 spoiled by a relative 1e-10: the residual S q̂ − q̂ λ̂ is that error, so the global radius ρ is within a
    factor 2 of |λ_1 − λ̂_1| (and the other eigenvalues' errors are ~2^-80)."""
    X = _data()
    _, _, lam, _ = eigensystems(X, Fraction(1), digits=REF_DIGITS)
    _spoiled_refinement(monkeypatch, spoil_values=True)
    lin = linear_module.linear_enclosure(X, 64)
    lam0 = _q(lam[0]) * _s_units(lin)
    error = abs(lam0 - _q(lin.values[0]))
    assert _contains(lin.lower(0), lam0, lin.upper(0))
    assert _q(lin.radius) <= 2 * error

    radius = linear_module._global_radius
    monkeypatch.setattr(linear_module, "_global_radius", lambda *args: radius(*args) / TIGHTER)
    clear_derived(linear_module._linear_cached)
    lin = linear_module.linear_enclosure(X, 64)
    assert not _contains(lin.lower(0), lam0, lin.upper(0))


@pytest.mark.slow
def test_linear_subspace_sin_theta(monkeypatch):
    """q̂_1 spoiled by 1e-7 q̂_2: Ŵ_1 = Z q̂_1/√λ̂_1 is ~1e-7·√(λ_2/λ_1) off w_1; the Davis–Kahan bound on exact g×g
    products is within a factor 2 of the true sin Θ."""
    X = _data()
    _, _, _, W = eigensystems(X, Fraction(1), digits=REF_DIGITS)
    _spoiled_refinement(monkeypatch, spoil_values=False)
    lin = linear_module.linear_enclosure(X, 128)
    true = _sin_angle(lin.vectors.columns(0, 1), W[0])
    assert true <= _q(lin.sin_theta(0, 1)) <= 2 * true

    sin_theta = linear_module.ritz_subspace_sin_theta
    monkeypatch.setattr(linear_module, "ritz_subspace_sin_theta", lambda *a, **kw: sin_theta(*a, **kw) / TIGHTER)
    clear_derived(linear_module._linear_cached)
    lin = linear_module.linear_enclosure(X, 128)
    assert not true <= _q(lin.sin_theta(0, 1))


# -- from enclosures to the measure: the principal-angle widening (certify/angles.py) --------------------
def test_principal_angle_widening(monkeypatch):
    """The structured eigenprojection interval with the expansion's top vector spoiled by 1e-7 ŵ_2 and no residual
    correction: the measured ∠(V̂, Ŵ) is ~1e-7 while the true angle is ~1e-12; only the widening by
    asin(sin Θ_V) + asin(sin Θ_W) brings the truth back, and the interval is then at most 4 × the spoil wide."""
    X, sigma = _data(), Fraction(2) ** 20
    monkeypatch.setattr(structured_enclosed, "_CORRECTIONS", 0)
    enclose_top = structured_enclosed.enclose_top

    def spoiled(lin, eop, vectors, *, product_bits):
        other = lin.vectors.columns(1, 2).to_float64()
        push = np.zeros(vectors.shape)
        push[:, :1] = SPOIL * other
        return enclose_top(lin, eop, vectors + Dyadic.from_float64(push), product_bits=product_bits)

    monkeypatch.setattr(structured_enclosed, "enclose_top", spoiled)
    want = _q(reference(X, "eigenprojection", sigma, digits=REF_DIGITS).value)

    def interval():
        clear_derived(structured_enclosed._certificate_cached)
        cert = structured_enclosed.certificate(X, sigma, digits=10)
        return cert, structured_enclosed.eigen_distance_interval(cert, 1, 1e-6, "mean")

    cert, (lo, hi) = interval()
    _, V, _, _ = eigensystems(X, sigma, digits=REF_DIGITS)
    spoil = _sin_angle(cert.top.vectors.columns(0, 1), V[0])
    assert spoil >= SPOIL / 2  # the spoil is there (the route would certify 12+ digits without it)
    assert _contains(lo, want, hi)
    assert _q(hi) - _q(lo) <= 4 * spoil

    widen = angles.widen
    monkeypatch.setattr(intervals, "widen", lambda angle, slack, prec: widen(angle, slack / TIGHTER, prec))
    _, (lo, hi) = interval()
    assert not _contains(lo, want, hi)


# -- the binary128 route: measures/enclosed.py and certify/eigen_enclosure.py ------------------------------
def _spoiled_eigh(monkeypatch):
    """numpy's eigh with the top eigenvector 1e-7 off (towards the second): the float64 eigensystem the binary128
    route certifies (the linear side is computed first, unspoiled)."""
    eigh = np.linalg.eigh

    def spoiled(a):
        w, V = eigh(a)
        V = V.copy()
        V[:, -1] += SPOIL * V[:, -2]
        return w, V

    monkeypatch.setattr(enclosed.np.linalg, "eigh", spoiled)


def test_binary128_kato_temple(monkeypatch):
    """σ = 2³ (below the structured range): μ_1 ∈ [θ − δ, θ + ε²/(θ − α) + δ] for the spoiled float64 vector; the
    global radius (~1e-7 λ) is far wider, so Kato–Temple decides."""
    X, sigma = _data(), Fraction(2) ** 3
    mu, *_ = eigensystems(X, sigma, digits=REF_DIGITS)
    mu0 = _q(mu[0])
    enclosed.linear_for(X)
    _spoiled_eigh(monkeypatch)
    enc = enclosed.spectrum_enclosure(X, sigma)
    assert _contains(enc.lower[0], mu0, enc.upper[0])
    assert _one_sided_tight(enc.lower[0], mu0, enc.upper[0])

    kato_temple = theorems.kato_temple

    def tighter(theta_low, theta_high, eps2, alpha=None, beta=None):
        bound = kato_temple(theta_low, theta_high, eps2, alpha, beta)
        return None if bound is None else _shrunk_toward((theta_low + theta_high) / 2, *bound)

    monkeypatch.setattr(theorems, "kato_temple", tighter)
    clear_derived(enclosed._enclosure_cached)
    enc = enclosed.spectrum_enclosure(X, sigma)
    assert not _contains(enc.lower[0], mu0, enc.upper[0])


def test_binary128_group_bounds(monkeypatch):
    """The Newton-corrected basis of the spoiled top vector: its Davis–Kahan bound from exact g×g products
    (``_group_bounds``) is the one used (far below the plain vector's ~1e-7) and within a factor 10 of the true
    sin Θ between the corrected vector and μ_1's eigenvector."""
    X, sigma = _data(), Fraction(2) ** 3
    _, V, _, _ = eigensystems(X, sigma, digits=REF_DIGITS)
    enclosed.linear_for(X)
    _spoiled_eigh(monkeypatch)

    def corrected_bound():
        clear_derived(enclosed._enclosure_cached)
        enc = enclosed.spectrum_enclosure(X, sigma)
        corrected, bound = enc.sin_theta[(0, 1)]
        assert corrected
        return _q(bound), Dyadic.from_float64(enc.vectors[:, :1]) + Dyadic.from_float64(enc.correction[:, :1])

    bound, basis = corrected_bound()
    true = _sin_angle(basis, V[0])
    assert true <= bound <= 10 * true and bound < SPOIL / 1000

    group_bounds = enclosed._group_bounds
    monkeypatch.setattr(enclosed, "_group_bounds", lambda *args: {
        g: None if b is None else b / TIGHTER for g, b in group_bounds(*args).items()})
    bound, _ = corrected_bound()
    assert not true <= bound

