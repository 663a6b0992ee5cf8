"""The refined-enclosure route against an independent reference: mpmath's eigsy at high precision on the Gram built
from exact Fractions of X (nothing of precise_kpca's numerics), the route's three bounds each caught when divided
by 10, and the escalation of its precision."""
import time
import warnings
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precise_kpca.arith.dyadic import Dyadic
from precise_kpca.arith.fixed import FixedMatrix
from precise_kpca.errors import InsufficientPrecision, RouteUnavailable, Undetermined
from precise_kpca.measures import engines, measure, plan
from precise_kpca.measures import refined_enclosed as refined
from precise_kpca.measures import refined_gram
from precise_kpca.measures.routes import REFINED_MAX_N, _ROUTES
from precise_kpca.numerics.data import clear as clear_derived

from ..strategies import data_sets

ROUTE = _ROUTES["refined-enclosure"]
REF_DPS = 160
TAU = 1e-6


# -- the independent reference --------------------------------------------------------------------------------
class Reference:
    """Gaussian and linear eigensystems of X from exact Fractions, in mpmath (private context) at ``dps``.

    A = σ_X² H K H and L = X_c X_cᵀ in X's units (σ_X = σ·d_X, d_X the mean square root of the middle one or two
    of the N² squared distances, zeros included: ``median="full"``); ``s_units`` converts to the S-units of the
    route (N²·2^(−2e), X = M·2^e with integer M).
    """

    def __init__(self, X: np.ndarray, sigma: Fraction, dps: int = REF_DPS):
        self.ctx = ctx = mpmath.MPContext()
        ctx.dps = dps
        F = [[Fraction(float(v)) for v in row] for row in X]
        n = self.n = len(F)
        D = [[sum((a - b) ** 2 for a, b in zip(F[i], F[j])) for j in range(n)] for i in range(n)]
        flat = sorted(D[i][j] for i in range(n) for j in range(n))
        middle = [flat[n * n // 2]] if n * n % 2 else [flat[n * n // 2 - 1], flat[n * n // 2]]
        d_x = sum(ctx.sqrt(self.mp(m)) for m in middle) / len(middle)
        s2 = self.mp(sigma) ** 2 * d_x ** 2
        H = ctx.eye(n) - ctx.ones(n, n) / n
        K = ctx.matrix([[ctx.exp(-self.mp(D[i][j]) / (2 * s2)) for j in range(n)] for i in range(n)])
        self.A = s2 * H * K * H
        mean = [sum(row[c] for row in F) / n for c in range(len(F[0]))]
        centered = [[v - m for v, m in zip(row, mean)] for row in F]
        self.L = ctx.matrix([[self.mp(sum(a * b for a, b in zip(centered[i], centered[j]))) for j in range(n)]
                             for i in range(n)])
        self.mu, self.V = self._eig(self.A)
        self.lam, self.W = self._eig(self.L)
        exponent = -max(Fraction(float(v)).denominator for v in X.ravel()).bit_length() + 1
        self.s_units = self.mp(Fraction(n * n) * Fraction(2) ** (-2 * exponent))
        self.kernel_max = max(K[i, j] for i in range(n) for j in range(n) if D[i][j])

    def mp(self, q: Fraction):
        return self.ctx.mpf(q.numerator) / q.denominator

    def _eig(self, M):
        values, vectors = self.ctx.eigsy(M)
        order = sorted(range(self.n), key=lambda j: -values[j])
        return [values[j] for j in order], [vectors[:, j] for j in order]

    def groups(self, k: int) -> list:
        """Algorithm 1's groups of the top k on the reference's linear eigenvalues."""
        out, start = [], 0
        while start < k:
            stop = start + 1
            while stop < k and abs(self.lam[stop] - self.lam[start]) / self.lam[start] < TAU:
                stop += 1
            out.append((start, stop))
            start = stop
        return out

    def angle(self, start: int, stop: int):
        """Largest principal angle between the Gaussian and the linear eigenvectors of [start, stop)."""
        ctx = self.ctx
        V = ctx.matrix([[self.V[j][i] for j in range(start, stop)] for i in range(self.n)])
        W = ctx.matrix([[self.W[j][i] for j in range(start, stop)] for i in range(self.n)])
        M = W - V * (V.T * W)  # the part of W orthogonal to span V
        return ctx.asin(ctx.sqrt(max(ctx.eigsy(M.T * M)[0])))

    def value(self, name: str, k: int):
        ctx = self.ctx
        if name == "eigenvalue":
            return max(abs(m - l) for m, l in zip(self.mu, self.lam)) / self.lam[0]
        if name == "eigenprojection":
            angles = [self.angle(s, t) for s, t in self.groups(k)]
            return sum(angles) / len(angles)
        worst = 0
        for i in range(k):
            cos = abs(sum(a * b for a, b in zip(self.V[i], self.W[i])))
            gap2 = self.mu[i] + self.lam[i] - 2 * ctx.sqrt(self.mu[i] * self.lam[i]) * cos
            worst = max(worst, ctx.sqrt(gap2 / self.lam[i]))
        return worst


def _contains(lo, hi, ref) -> bool:
    """lo ≤ ref ≤ hi compared exactly (mpf of any context, no rounding)."""
    cmp = mpmath.libmp.mpf_cmp
    return cmp(lo._mpf_, ref._mpf_) <= 0 <= cmp(hi._mpf_, ref._mpf_)


def _run(X, name, sigma, k=1, digits=20):
    return engines.ENGINES["refined-enclosure"](X, name, sigma, k=k, digits=digits, tau=TAU, aggregate="mean",
                                                median="full", start=time.perf_counter(), route=ROUTE)


def _example_one():  # the binary128 route certifies 7 digits of its k = 3 eigenprojection
    return np.random.default_rng(5).normal(size=(10, 3)), Fraction(3, 32)


def _near_tie():  # Gaussian eigenvalues 1, 2, 3, 4 within 6e-59, 5e-68, 2e-68 of λ_1 of each other
    return np.random.default_rng(2).normal(size=(8, 3)), Fraction(1, 32)


# -- 1. the Gram and its bound --------------------------------------------------------------------------------
def _gram_error(X, sigma, gram):
    ref = Reference(X, sigma, dps=120)
    ints, exp2 = gram.fixed.to_integers()
    unit = ref.mp(gram.unit) * ref.ctx.ldexp(1, exp2)
    n = ref.n
    frobenius = ref.ctx.sqrt(sum((ref.A[i, j] * ref.s_units - int(ints[i, j]) * unit) ** 2
                                 for i in range(n) for j in range(n)))
    return frobenius / ref.mp(gram.unit)


@pytest.mark.parametrize("seed, n, sigma", [(5, 10, Fraction(3, 32)), (2, 8, Fraction(1, 32)),
                                            (0, 9, Fraction(2) ** 20), (3, 6, Fraction(5))])
def test_gram_enclosure_holds_and_a_tenth_of_it_would_not(seed, n, sigma):
    X = np.random.default_rng(seed).normal(size=(n, 3)) * np.array([1.0, 0.5, 1e-3])
    gram = refined_gram.gram_enclosure(X, sigma, bits=200)
    actual = _gram_error(X, sigma, gram)
    assert actual <= gram.error
    assert actual > gram.error / 10  # the bound is the grid's, and the grid's rounding is really there
    assert gram.error <= n * 2.0**-200


@pytest.mark.parametrize("bits", [110, 1400])  # float64 words, and integers beyond float64's range
def test_phi_balls_of_exact_integers_contain_phi(bits):
    """φ(u) = e^(−u) − 1 + u at u = c·v for exact integers v (squared distances past 2^1000 arise from data
    spanning beyond ~1e150), against mpmath at 100 digits."""
    rng = np.random.default_rng(bits)
    values = [int(x) << (bits - 64 - int(s)) for x, s in zip(rng.integers(1, 2**62, size=20), rng.integers(0, 40, 20))]
    ctx = mpmath.MPContext()
    ctx.dps = 100
    with flint.ctx.workprec(300):
        c = -flint.arb(1) / (flint.arb(2) ** (bits - 2) * 3)  # u = c·v from 1e-13 to 1/3
        balls = refined_gram._phi_balls(values, c)
        ends = [[ctx.ldexp(*(int(t) for t in e.man_exp())) for e in (b.lower(), b.upper())] for b in balls]
    for v, (lo, hi) in zip(values, ends):
        u = ctx.mpf(v) / (ctx.mpf(2) ** (bits - 2) * 3)
        phi = ctx.expm1(-u) + u
        assert lo <= phi <= hi and hi - lo < phi * ctx.mpf(10) ** -60


def test_gram_enclosure_of_a_kernel_below_every_float():
    """σ = 2^-12: off-diagonal kernel entries near 10^-786766 (no float64 or binary128 holds them)."""
    X, _ = _near_tie()
    gram = refined_gram.gram_enclosure(X, Fraction(1, 4096), bits=200)
    assert _gram_error(X, Fraction(1, 4096), gram) <= gram.error
    ref = Reference(X, Fraction(1, 4096), dps=30)
    assert abs(gram.kernel_digits + ref.ctx.log10(ref.kernel_max)) <= 1


# -- 2. intervals against the reference -----------------------------------------------------------------------
@pytest.mark.parametrize("example, name, k, digits", [
    (_example_one, "eigenprojection", 3, 30), (_example_one, "pc", 3, 30), (_example_one, "eigenvalue", 1, 40),
    (_near_tie, "eigenprojection", 3, 20), (_near_tie, "eigenprojection", 1, 20), (_near_tie, "pc", 2, 20),
    (_near_tie, "eigenvalue", 1, 40)])
def test_intervals_contain_the_reference(example, name, k, digits):
    X, sigma = example()
    m = _run(X, name, sigma, k=k, digits=digits)
    assert m.guarantee == "rigorous" and m.route.engine == "refined-enclosure"
    assert m.certified_digits >= digits
    assert _contains(m.lower, m.upper, Reference(X, sigma).value(name, k))


def test_thirty_digits_where_the_binary128_route_certifies_fewer_than_ten():
    X, sigma = _example_one()
    binary = engines.ENGINES["binary128-enclosure"](X, "eigenprojection", sigma, k=3, digits=30, tau=TAU,
                                                    aggregate="mean", median="full", start=time.perf_counter(),
                                                    route=_ROUTES["binary128-enclosure"])
    assert binary.certified_digits < 10
    m = measure(X, "eigenprojection", sigma, k=3, digits=30)
    assert m.route.engine == "refined-enclosure" and m.certified_digits >= 30
    assert _contains(m.lower, m.upper, Reference(X, sigma).value("eigenprojection", 3))


def _record_dps(monkeypatch):
    """Wrap the refined route's enclosure so a test sees the precision of each attempt: (dps list, original)."""
    tried = []
    original = refined.spectrum_enclosure

    def recording(*args, **kwargs):
        tried.append(kwargs["dps"])
        return original(*args, **kwargs)

    monkeypatch.setattr(refined, "spectrum_enclosure", recording)
    return tried, original


def test_a_near_tie_escalates_until_it_separates(monkeypatch):
    X, sigma = _near_tie()
    ref = Reference(X, sigma)
    assert abs(ref.mu[2] - ref.mu[3]) < ref.mu[0] * mpmath.mpf(10) ** -60  # far below binary128's resolution
    tried, original = _record_dps(monkeypatch)
    m = _run(X, "eigenprojection", sigma, k=3, digits=20)
    assert tried[0] == refined.first_dps(20) and len(tried) > 1 and tried == sorted(tried)
    with pytest.raises(InsufficientPrecision):
        refined.eigen_distance_interval(original(X, sigma, dps=tried[0], block=3), 3, TAU, "mean")
    assert m.certified_digits >= 20 and _contains(m.lower, m.upper, ref.value("eigenprojection", 3))


def test_a_tie_below_every_precision_is_refused_with_the_precision_it_needs(monkeypatch):
    X, _ = _near_tie()
    sigma = Fraction(1, 4096)
    tried, _ = _record_dps(monkeypatch)
    with pytest.raises(InsufficientPrecision) as info:
        _run(X, "eigenprojection", sigma, k=1, digits=10)
    assert info.value.needed_dps > 786000  # the top eigenvalues split at the kernel's 1e-786766
    assert tried == [refined.first_dps(10)]  # a precision beyond the route's maximum is not attempted
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = measure(X, "eigenprojection", sigma, k=1, digits=10)
    assert not m.determined and "786" in m.reason


# -- 3. each bound divided by 10 excludes the truth ------------------------------------------------------------
def test_eigenvalue_enclosures_honour_the_input_error_and_not_a_tenth_of_it(monkeypatch):
    """Â shifted by c·I with ‖c·I‖_F = c√N declared: every eigenvalue moves by exactly c."""
    X, sigma = _example_one()
    n = X.shape[0]
    original = refined.gram_enclosure

    def shifted(X, sigma, *, bits, median="full"):
        gram = original(X, sigma, bits=bits, median=median)
        c = 2.0**-60
        eye = FixedMatrix.from_integers(np.eye(n, dtype=int).astype(object), -60)
        return refined_gram.GramEnclosure(gram.fixed + eye, gram.unit, gram.error + c * np.sqrt(n) * (1 + 2**-40),
                                     gram.kernel_digits)

    monkeypatch.setattr(refined, "gram_enclosure", shifted)
    clear_derived(refined._refined)
    clear_derived(refined._enclosure_cached)
    try:
        enc = refined.spectrum_enclosure(X, sigma, dps=30, block=3)
    finally:
        clear_derived(refined._refined)
        clear_derived(refined._enclosure_cached)
    ref = Reference(X, sigma, dps=60)
    truth = [mu * ref.s_units for mu in ref.mu]  # of the true A: the shifted Â is within the declared error
    assert all(ref.mp(enc.lower(i)) <= truth[i] <= ref.mp(enc.upper(i)) for i in range(n))
    tenth = [(ref.mp(enc.lower(i) + enc.upper(i)) / 2, ref.mp(enc.upper(i) - enc.lower(i)) / 20) for i in range(n)]
    assert all(abs(truth[i] - mid) > half for i, (mid, half) in enumerate(tenth))


def test_the_sin_theta_bound_holds_for_a_spoiled_basis_and_a_tenth_of_it_would_not():
    """The top Ritz vector turned by 2^-40 towards the second: Davis–Kahan must see the turn, and nearly all of it."""
    X, sigma = _example_one()
    enc = refined.spectrum_enclosure(X, sigma, dps=40, block=3)
    r = enc.rotation
    turn = Dyadic(r.ints + _column_shift(r, 1, 0, 40), r.exp2)
    spoiled = refined.RefinedEnclosure(**{**enc.__dict__, "rotation": turn})
    v, bound = refined.group_basis(spoiled, 0, 1)
    ref = Reference(X, sigma, dps=60)
    ctx = ref.ctx
    x = [ctx.mpf(int(v.ints[i, 0])) for i in range(ref.n)]
    along = sum(a * b for a, b in zip(x, ref.V[0]))
    sin = ctx.sqrt(max(0, sum(a * a for a in x) - along**2)) / ctx.sqrt(sum(a * a for a in x))
    assert sin > mpmath.mpf(2) ** -41  # the spoiled vector is off by the turn
    bound = ref.mp(bound)
    assert sin <= bound < 10 * sin


def _column_shift(r: Dyadic, source: int, target: int, shift: int):
    """fmpz_mat adding column ``source`` times 2^−shift to column ``target`` (on r's grid, rounded down)."""
    m = r.shape[0]
    out = flint.fmpz_mat(m, m)
    for i in range(m):
        out[i, target] = int(r.ints[i, source]) >> shift
    return out


# -- 4. hypothesis: random small data ---------------------------------------------------------------------------
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(X=data_sets(min_rows=4, max_rows=10, max_dim=3, allow_duplicates=False),
       log2_sigma=st.integers(-4, 6), name=st.sampled_from(["eigenvalue", "eigenprojection", "pc"]),
       k=st.integers(1, 2))
def test_intervals_contain_the_reference_on_random_data(X, log2_sigma, name, k):
    sigma = Fraction(2) ** log2_sigma
    try:
        m = _run(X, name, sigma, k=k, digits=15)
    except (Undetermined, InsufficientPrecision, ValueError) as exc:  # a tie, or k beyond the rank
        assert not isinstance(exc, ValueError) or "exceeds the rank" in str(exc)
        return
    assert _contains(m.lower, m.upper, Reference(X, sigma).value(name, k))


# -- 5. the route table and the escalation ---------------------------------------------------------------------
def test_the_route_is_planned_last_up_to_its_row_limit_and_refused_beyond():
    X = np.random.default_rng(0).normal(size=(REFINED_MAX_N + 1, 2))
    assert plan(X[:-1], "eigenprojection", "2**-2", k=2).steps[-1].engine == "refined-enclosure"
    assert "refined-enclosure" not in [s.engine for s in plan(X, "eigenprojection", "2**-2", k=2).steps]
    assert "refined-enclosure" not in [s.engine for s in plan(X[:20], "metric", "2**-2").steps]
    with pytest.raises(RouteUnavailable):
        _run(X, "eigenvalue", Fraction(1, 4))


class _Short:
    def __init__(self, digits, wanted):
        self.certified_digits, self.short = digits, digits < wanted


def test_escalation_follows_the_precision_asked_for_and_stops_at_the_maximum():
    def asked(needed):
        def attempt(dps):
            tried.append(dps)
            if dps < needed:
                raise InsufficientPrecision("gap", needed_dps=needed)
            return _Short(40, 10)
        return attempt

    tried = []
    assert refined.escalate(asked(75), 10, max_dps=200).certified_digits == 40 and tried == [30, 75]
    tried = []
    with pytest.raises(InsufficientPrecision) as info:
        refined.escalate(asked(500), 10, max_dps=200)
    assert tried == [30] and info.value.needed_dps == 500  # beyond the maximum: not attempted
    tried = []

    def unknown(dps):
        tried.append(dps)
        raise InsufficientPrecision("gap of unknown size")

    with pytest.raises(InsufficientPrecision):
        refined.escalate(unknown, 10, max_dps=200)
    assert tried == [30, 60, 120, 200]
    tried = []

    def short(dps):
        tried.append(dps)
        return _Short(dps - 45, 30)

    assert refined.escalate(short, 30, max_dps=200).certified_digits >= 30 and tried == [50, 50 + 25 + 10]
    tried = []

    def capped(dps):  # digits that stop growing (the angles' ball arithmetic carries ~94)
        tried.append(dps)
        return _Short(min(dps - 45, 20), 30)

    assert refined.escalate(capped, 30, max_dps=200).certified_digits == 20 and tried == [50, 85, 105]
