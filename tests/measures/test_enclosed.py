"""Eigen measures from rigorous enclosures of the float64 eigensystem, and the binary128 E operator."""
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from precise_kpca.backends import MPBackend
from precise_kpca.measures import enclosed, evaluate, measure
from precise_kpca.measures.measurement import interval_digits
from precise_kpca.measures.results import exact_midpoint, fraction_ends
from precise_kpca.measures.structured import perturbed_spectrum
from precise_kpca.numerics import double_center, gaussian_residual
from precise_kpca.numerics.kernels import Float64Underflow
from precise_kpca.numerics.binary128_residual import Binary128ResidualOperator
from precise_kpca.studies.curves import bundle_tasks
from precise_kpca.studies.curves import NAIVE_BACKEND, sweep_tasks
from precise_kpca.numerics.data import clear as clear_derived

REF_DPS = 60


def _data(seed=3, n=36):
    return np.random.default_rng(seed).normal(size=(n, 3)) * np.array([2.0, 1.0, 0.3])


def _reference(X, name, p, **kw):
    ref, _, _ = evaluate(X, name, Fraction(2) ** p, MPBackend(REF_DPS), eigensolver_only=True, **kw)
    return MPBackend(REF_DPS).export(ref)  # global-type mpf, not rounded


def _interval(X, name, p, k=1, aggregate="mean", enc=None):
    enc = enc or enclosed.spectrum_enclosure(X, Fraction(2) ** p)
    if name == "eigenvalue":
        return fraction_ends(*enclosed.eigenvalue_interval(enc, X))
    return enclosed.eigen_distance_interval(enc, X, k, 1e-6, aggregate)


@pytest.mark.parametrize("p", [-2, 3, 9, 13])
@pytest.mark.parametrize("name, k, aggregate", [("eigenvalue", 1, "mean"), ("eigenprojection", 1, "mean"),
                                                ("eigenprojection", 3, "max")])
def test_intervals_contain_an_independent_reference_and_are_narrow(name, k, aggregate, p):
    X = _data()
    lo, hi = _interval(X, name, p, k, aggregate)
    ref = _reference(X, name, p, k=k, aggregate=aggregate)
    assert lo <= ref <= hi
    digits = interval_digits(lo, hi)
    assert digits >= 15, (lo, hi)
    assert abs(exact_midpoint(lo, hi) - ref) <= abs(ref) * mpmath.mpf(10) ** -digits


def test_perturbed_eigenvectors_widen_the_interval_but_never_lose_the_truth(monkeypatch):
    X, p = _data(seed=5), 6
    ref = _reference(X, "eigenprojection", p, k=1)
    eigh = np.linalg.eigh

    def spoiled(a):
        w, V = eigh(a)
        V = V.copy()
        V[:, -1] += 1e-7 * V[:, -2]  # the top vector, 1e-7 off
        return w, V

    enclosed.linear_for(X)  # the linear side (cached) from the unspoiled eigensolver: only A's vectors are spoiled
    clear_derived(enclosed._enclosure_cached)
    monkeypatch.setattr(enclosed.np.linalg, "eigh", spoiled)
    monkeypatch.setattr(enclosed, "_newton_correction", lambda A, w, V, m: np.zeros((V.shape[0], m)))
    enc = enclosed.spectrum_enclosure(X, Fraction(2) ** p)
    clear_derived(enclosed._enclosure_cached)
    lo, hi = _interval(X, "eigenprojection", p, enc=enc)
    assert lo <= ref <= hi
    assert interval_digits(lo, hi) <= 8  # 1e-7 of error cannot be certified away
    # mutation: the same basis without its sin Θ slack excludes the truth, so the containment test has teeth
    blind = enclosed.SpectrumEnclosure(enc.lower, enc.upper, enc.vectors, enc.correction,
                                       {g: (c, 0.0) for g, (c, _) in enc.sin_theta.items()}, enc.seconds)
    lo, hi = _interval(X, "eigenprojection", p, enc=blind)
    assert not lo <= ref <= hi


def test_measure_reports_the_enclosure_method_below_the_structured_range():
    X = _data()  # no linear eigenvalue stands clear of ‖E‖ up to σ = 2²; from 2³ the top block is λ₁
    m = measure(X, "eigenvalue", "2**2", digits=12)
    assert m.route.engine == "binary128-enclosure" and m.guarantee == "rigorous" and m.certified_digits >= 12
    assert float(m.value) == pytest.approx(float(_reference(X, "eigenvalue", 2)), rel=1e-12)


@pytest.mark.parametrize("p", [8, 20, 300])  # 2^300: E's words held scaled (E ~ 2^-600, Binary128Gram.exp2)
def test_binary128_residual_operator_applies_e_to_thirty_digits(p):
    X = _data(n=24)
    b = MPBackend(30)
    E = double_center(gaussian_residual(X, Fraction(2) ** p, backend=MPBackend(60))).deviation
    op = Binary128ResidualOperator(X, Fraction(2) ** p, b)
    V = np.array([[b.scalar(float(v)) for v in row] for row in np.random.default_rng(0).normal(size=(24, 3))])
    got = op.dot(V)
    ctx = MPBackend(60)
    exact = E.dot(np.array([[ctx.scalar(MPBackend(30).export(v)) for v in row] for row in V], dtype=object))
    scale = max(abs(x) for x in exact.ravel())
    worst = max(abs(ctx.scalar(MPBackend(30).export(g)) - e) for g, e in zip(got.ravel(), exact.ravel()))
    assert worst <= scale * mpmath.mpf(10) ** -27
    assert op.frobenius == pytest.approx(float(mpmath.sqrt(sum(e * e for e in E.ravel()))), rel=1e-12)


def test_binary128_residual_operator_refuses_an_e_below_the_float64_range():
    """σ = 2^600: ‖E‖ ~ 2^-1200 has no float64 norm for the expansion to read: a loud Float64Underflow."""
    with pytest.raises(Float64Underflow, match="below the float64 range"):
        Binary128ResidualOperator(_data(n=24), Fraction(2) ** 600, MPBackend(30))


def test_structured_twin_with_binary128_e_matches_the_mp_one(monkeypatch):
    X = _data(n=24)
    sigma = Fraction(2) ** 22
    b = MPBackend(30)
    mp_shifts = [b.export(s) for s in perturbed_spectrum(X, sigma, b, 2).shifts]
    monkeypatch.setattr("precise_kpca.measures.structured.BINARY128_MIN_N", 0)
    from precise_kpca.measures import structured
    clear_derived(structured._perturbed_cached)
    quad_shifts = [b.export(s) for s in perturbed_spectrum(X, sigma, b, 2).shifts]
    clear_derived(structured._perturbed_cached)
    for a, c in zip(mp_shifts, quad_shifts):
        assert abs(a - c) <= abs(a) * mpmath.mpf(10) ** -25


def test_bundles_hold_each_point_once_grouped_by_data_set_sigma_and_backend():
    X = _data(n=10)
    tasks = [(name, t) for name in ("a", "b") for t in sweep_tasks(
        X, [1, 2, 3], measures=("metric", "eigenvalue", "eigenprojection"), k=[1, 2], digits=8,
        naive_overlay=True, data_key=name)]
    bundles = bundle_tasks(tasks, {"a": 10, "b": 500})
    flat = [t for b in bundles for t in b]
    assert sorted(map(repr, (t.key for _, t in flat))) == sorted(map(repr, (t.key for _, t in tasks)))
    for b in bundles:
        assert len({(name, t.log2_sigma, t.key.requested_backend) for name, t in b}) == 1
    naive = [b[0][1].key.requested_backend == NAIVE_BACKEND for b in bundles]
    assert naive == sorted(naive)  # certified bundles first
    assert bundles[0][0][0] == "b" and bundles[0][0][1].log2_sigma == 3  # larger N, then larger σ first


def test_ill_conditioned_linear_eigenvectors_do_not_break_the_enclosure():
    """λ_1/λ_3 ≈ 5e9: linear eigenvectors at a fixed 40 digits were off by ~1e-23 and the interval missed the
    truth (found by hypothesis); the linear precision now grows with the conditioning."""
    X = np.array([[1.25730221e-04, -1.32104863e-04, 6.40422650e-04],
                  [1.04900117e-04, -5.35669373e-04, 3.61595055e-04],
                  [1.30400005e-03, 9.47080963e-04, -7.03735236e-04],
                  [-1.26542147e-03, -6.23274463e-04, 4.13259793e-05],
                  [-2.32503077e+01, -2.18791664e+00, -1.24591095e+01]])
    lo, hi = _interval(X, "eigenprojection", 2, k=2)
    ref, _, _ = evaluate(X, "eigenprojection", Fraction(4), MPBackend(120), k=2, eigensolver_only=True)
    assert lo <= MPBackend(120).export(ref) <= hi
