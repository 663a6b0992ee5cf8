"""The independent reference (tests/reference.py) against closed forms, to 30+ digits.

Each closed form is derived by hand for data whose eigenvectors are known (two points; a symmetric collinear
triple; a general collinear triple, reduced to a 2×2 problem solved by the rotation formula; the regular simplex
I_N, whose eigenvalues are tied) and evaluated here in its own mpmath context: none of it goes through the
reference's eigsy, median or Gram code.
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from .reference import exact_rank, median_distance, reference, spectra, squared_distances, exact_rows

DIGITS = 30
SIGMAS = [-2, 0, 7, 30, 100]


def _ctx(p: int):
    """A context whose precision covers the closed forms' own cancellation at σ = 2^p (up to σ⁻⁸)."""
    ctx = mpmath.MPContext()
    ctx.dps = 80 + int(8 * abs(p) * 0.302)
    return ctx


_CHECK = mpmath.MPContext()
_CHECK.dps = 1000  # comparisons far above every operand's precision (the global mp has 53 bits)


def _agree(got, want, digits=DIGITS):
    """got equals want to ``digits`` significant digits."""
    assert got is not None
    got, want = _CHECK.mpf(got), _CHECK.mpf(want)
    assert abs(got - want) <= _CHECK.mpf(10) ** -digits * abs(want), (got, want)


def _tiny(got, scale=1, digits=DIGITS):
    """A quantity that is exactly zero comes out below 10^−digits (relative to ``scale``)."""
    assert got is not None and abs(_CHECK.mpf(got)) <= _CHECK.mpf(10) ** -digits * scale, got


def _export(x):
    return mpmath.mp.make_mpf(x._mpf_)


@pytest.mark.parametrize("p", SIGMAS)
def test_two_points(p):
    """x₁, x₂ at distance δ = 5: d_X = δ/2 (the middle two of 0, 0, δ, δ), u = 2/σ², μ/λ = (1 − e^{−u})/u, the
    eigenvectors coincide, and A ∝ L."""
    X = np.array([[0.0, 0.0], [3.0, 4.0]])
    ctx = _ctx(p)
    sigma = ctx.mpf(2) ** p
    u = 2 / sigma**2
    ratio = -ctx.expm1(-u) / u
    _agree(reference(X, "eigenvalue", f"2**{p}").value, _export(1 - ratio))
    _agree(reference(X, "metric", f"2**{p}").value, _export(1 - ctx.sqrt(ratio)))
    _agree(reference(X, "pc", f"2**{p}").value, _export(1 - ctx.sqrt(ratio)))
    projection = reference(X, "eigenprojection", f"2**{p}")
    _tiny(projection.value)
    _agree(projection.at_zero, _export(ctx.pi / 4))
    _tiny(reference(X, "cka", f"2**{p}").value)


@pytest.mark.parametrize("p", SIGMAS)
def test_symmetric_collinear_triple(p):
    """−x, 0, x with |x| = 5: d_X = 5, a = e^{−1/(2σ²)}, b = e^{−2/σ²}; the reflection fixes the eigenvectors:
    μ₁ = 25σ²(1 − b) on w₁ ∝ (−1, 0, 1) (λ₁ = 50), μ₂ = 25σ²(1 − 4a/3 + b/3) on (1, −2, 1), μ₃ = 0."""
    X = np.array([[-3.0, -4.0], [0.0, 0.0], [3.0, 4.0]])
    ctx = _ctx(p)
    s2 = (ctx.mpf(2) ** p) ** 2
    a, b = ctx.exp(-1 / (2 * s2)), ctx.exp(-2 / s2)
    mu1, mu2, lam = 25 * s2 * (1 - b), 25 * s2 * (1 - 4 * a / 3 + b / 3), ctx.mpf(50)
    got_mu, got_lam = spectra(X, f"2**{p}")
    for got, want in zip(got_mu[:2], (mu1, mu2)):
        _agree(got, _export(want))
    assert got_lam[1] == got_lam[2] == 0  # exact zeros past the exact rank
    _agree(reference(X, "eigenvalue", f"2**{p}").value, _export(max(abs(mu1 - lam), abs(mu2)) / lam))
    _agree(reference(X, "pc", f"2**{p}").value, _export(abs(ctx.sqrt(mu1 / lam) - 1)))
    v = 2 / s2  # ρ = 10/5
    _agree(reference(X, "metric", f"2**{p}").value, _export(1 - ctx.sqrt(-ctx.expm1(-v) / v)))
    projection = reference(X, "eigenprojection", f"2**{p}")
    _tiny(projection.value)
    _agree(projection.at_zero, _export(ctx.pi / 4))


@pytest.mark.parametrize("p", SIGMAS)
def test_general_collinear_triple_by_the_two_by_two_rotation(p):
    """t·(3, 4), t = 0, 1, 3: A restricted to 1⊥ in the basis (w₁, q) is a 2×2 matrix M; its top eigenvector is
    w₁ rotated by θ = ½·atan2(2M₁₂, M₁₁ − M₂₂), so EigenDist = |θ|, μ± = tr/2 ± √(((M₁₁ − M₂₂)/2)² + M₁₂²)."""
    t = [0, 1, 3]
    X = np.array([[3.0 * s, 4.0 * s] for s in t])
    ctx = _ctx(p)
    sigma_x2 = (5 * ctx.mpf(2) ** p) ** 2  # distances 5, 10, 15: the median of the nine is 5
    c = [ctx.mpf(s) - ctx.mpf(4) / 3 for s in t]
    lam = 25 * ctx.fsum(x * x for x in c)  # 350/3
    w = [x / ctx.sqrt(ctx.fsum(y * y for y in c)) for x in c]
    q = [ctx.mpf(1), ctx.mpf(-2), ctx.mpf(1)]  # ⊥ 1 and ⊥ c = (−4, −1, 5)/3 … scaled below
    q = [qi - ctx.fsum(a * b for a, b in zip(q, w)) * wi for qi, wi in zip(q, w)]
    q = [x / ctx.sqrt(ctx.fsum(y * y for y in q)) for x in q]
    K = [[ctx.exp(-25 * (ti - tj) ** 2 / (2 * sigma_x2)) for tj in t] for ti in t]

    def form(a, b):  # aᵀ σ_X² K b; a, b ⊥ 1 so H drops out
        return sigma_x2 * ctx.fsum(a[i] * K[i][j] * b[j] for i in range(3) for j in range(3))

    m11, m12, m22 = form(w, w), form(w, q), form(q, q)
    theta = ctx.atan2(2 * m12, m11 - m22) / 2
    half = ctx.sqrt(((m11 - m22) / 2) ** 2 + m12**2)
    mu_top, mu_low = (m11 + m22) / 2 + half, (m11 + m22) / 2 - half
    _agree(reference(X, "eigenprojection", f"2**{p}").value, _export(abs(theta)))
    _agree(reference(X, "eigenvalue", f"2**{p}").value, _export(max(abs(mu_top - lam), abs(mu_low)) / lam))
    along = ctx.sqrt(mu_top) * ctx.cos(theta) - ctx.sqrt(lam)
    pc = ctx.sqrt(along**2 + mu_top * ctx.sin(theta) ** 2) / ctx.sqrt(lam)
    _agree(reference(X, "pc", f"2**{p}").value, _export(pc))


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("p", SIGMAS)
def test_regular_simplex_ties_are_refused_and_invariant_values_kept(n, p):
    """X = I_N: L = H (λ = 1, N − 1 times), A = 2σ²(1 − e^{−w})H, w = 1/(2σ²). Any top-k cut inside the tie is
    basis-dependent (None); the group holding the whole tie is determined: angle 0, f(0) = arccos(1/√N)."""
    X = np.eye(n)
    ctx = _ctx(p)
    w = 1 / (2 * (ctx.mpf(2) ** p) ** 2)
    _agree(reference(X, "eigenvalue", f"2**{p}").value, _export(1 + ctx.expm1(-w) / w))
    _agree(reference(X, "metric", f"2**{p}").value, _export(1 - ctx.sqrt(-ctx.expm1(-w) / w)))  # ρ = 1
    _tiny(reference(X, "cka", f"2**{p}").value)
    for k in range(1, n - 1):
        for name in ("eigenprojection", "pc"):
            tied = reference(X, name, f"2**{p}", k=k)
            assert tied.value is None and not tied.determined and tied.ties, (name, k)
            assert any("linear eigenvalues" in t for t in tied.ties) and any("Gaussian" in t for t in tied.ties)
    assert reference(X, "pc", f"2**{p}", k=n - 1).value is None
    whole = reference(X, "eigenprojection", f"2**{p}", k=n - 1)
    assert whole.determined and not whole.ties
    _tiny(whole.value)
    _agree(whole.at_zero, _export(ctx.acos(1 / ctx.sqrt(n))))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("p", [-4, 0, 20, 100])
def test_metric_closed_form_from_the_proofs(seed, p):
    """proofs/theorem2: the relative metric dissonance is 1 − √((1 − e^{−v})/v), v = ρ²/2σ²."""
    X = np.random.default_rng(seed).normal(size=(7, 3))
    X[-1] *= 1e3 if seed else 1.0
    ctx = _ctx(p)
    sq = squared_distances(exact_rows(X))
    top = max(max(row) for row in sq)
    rho2 = ctx.mpf(top.numerator) / top.denominator / median_distance(ctx, sq) ** 2  # a dyadic: exact
    v = rho2 / (2 * (ctx.mpf(2) ** p) ** 2)
    _agree(reference(X, "metric", f"2**{p}").value, _export(1 - ctx.sqrt(-ctx.expm1(-v) / v)))


def test_median_is_over_all_n_squared_distances_with_the_mean_of_the_middle_two():
    """0, 1, 3, 7 on a line: the 16 sorted distances' middle pair is 2, 3 → d_X = 2.5 (not √((4 + 9)/2));
    0, 1, 3: the 9 distances' middle one is 1."""
    ctx = mpmath.MPContext()
    ctx.dps = 40
    four = squared_distances(exact_rows(np.array([[0.0], [1.0], [3.0], [7.0]])))
    assert median_distance(ctx, four) == ctx.mpf(5) / 2
    three = squared_distances(exact_rows(np.array([[0.0], [1.0], [3.0]])))
    assert median_distance(ctx, three) == 1
    with pytest.raises(ValueError, match="median distance"):
        median_distance(ctx, squared_distances(exact_rows(np.array([[1.0], [1.0], [1.0], [2.0]]))))


def test_the_input_is_read_exactly():
    """0.1·3 ≠ 0.3 in float64, so those rows are not collinear: rank 2 (a decimal reading gives 1); an exact
    multiple (powers of two) is rank 1, and its linear zero eigenvalues are exact."""
    assert exact_rows(np.array([[0.1], [0.3]]))[0][0] == Fraction(0.1) != Fraction(1, 10)
    assert exact_rank(exact_rows(np.array([[0.1, 0.3], [0.2, 0.6], [0.3, 0.9]]))) == 2
    collinear = np.array([[0.5, 1.0], [1.0, 2.0], [1.5, 3.0], [4.0, 8.0]])
    assert exact_rank(exact_rows(collinear)) == 1
    _, lam = spectra(collinear, "2**3")
    assert lam[0] > 0 and all(x == 0 for x in lam[1:])
    with pytest.raises(ValueError, match="k=2 exceeds the rank 1"):
        reference(collinear, "pc", "2**3", k=2)


def test_a_tie_from_a_symmetry_is_detected_and_a_rounding_near_tie_is_not():
    """The square (±1, 0), (0, ±1) has λ₁ = λ₂ and μ₁ = μ₂ exactly: k = 1 is refused, the group {1, 2} kept. A
    rectangle with sides 1 and 1 + 2⁻⁵⁰ is a near-tie far above 10^(−dps/2): determined."""
    square = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [2.0, 2.0], [-2.0, 2.0], [2.0, -2.0],
                       [-2.0, -2.0]])
    for name in ("eigenprojection", "pc"):
        assert reference(square, name, "2**5", k=1).value is None
    assert reference(square, "pc", "2**5", k=2).value is None
    assert reference(square, "eigenprojection", "2**5", k=2).determined
    near = square * np.array([1.0, 1.0 + 2.0**-50])
    for name in ("eigenprojection", "pc"):
        value = reference(near, name, "2**5", k=1)
        assert value.determined and not value.ties


def test_a_value_small_by_near_symmetry_gets_the_digits_it_cancels():
    """The rounded equilateral triangle: A and L are proportional up to the rounding of √3/2, so 1 − CKA ≈ 9e−35
    at σ = 1, far below what σ predicts. The reference at digits=12 must still give 24 digits (before the error
    model's top-up it gave 13): checked against the direct σ_X² H K_G H formula at 300 digits."""
    X = np.array([[1.0, 0.0], [-0.5, np.sqrt(3) / 2], [-0.5, -np.sqrt(3) / 2]])
    ctx = mpmath.MPContext()
    ctx.dps = 300
    rows = exact_rows(X)
    sq = squared_distances(rows)
    sigma_x2 = median_distance(ctx, sq) ** 2
    K = [[ctx.exp(-(ctx.mpf(x.numerator) / x.denominator) / (2 * sigma_x2)) for x in row] for row in sq]
    means = [sum(col) / 3 for col in zip(*rows)]
    centered = [[ctx.mpf((x - m).numerator) / (x - m).denominator for x, m in zip(row, means)] for row in rows]
    L = [[ctx.fsum(a * b for a, b in zip(p, q)) for q in centered] for p in centered]

    def center(M):
        r = [ctx.fsum(row) / 3 for row in M]
        return [[M[i][j] - r[i] - r[j] + ctx.fsum(r) / 3 for j in range(3)] for i in range(3)]

    def gap(M):
        inner = lambda P, Q: ctx.fsum(p * q for rp, rq in zip(P, Q) for p, q in zip(rp, rq))  # noqa: E731
        return 1 - inner(M, L) / ctx.sqrt(inner(M, M) * inner(L, L))

    got = reference(X, "cka", "2**0", digits=12)
    _agree(got.value, _export(gap(center(K))), digits=24)
    _agree(got.at_zero, _export(gap(center([[ctx.mpf(int(i == j)) for j in range(3)] for i in range(3)]))), digits=24)
