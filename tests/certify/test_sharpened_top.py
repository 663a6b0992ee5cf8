"""The top eigenvalues sharpened by exact products (certify/float64_enclosure.sharpen_top) and the binary128 route's
use of them (a-priori bounds for every eigenvalue, exact products for the top rank(L) + 1 only).

References are independent: mpmath eigsy at 60 digits on the exact float64 matrix, and tests/reference.py (plain
mpmath on the exact data) for the measures. Each theorem gets a case where its term decides the enclosure (the
approximate vector spoiled by 1e-7, so ε²/gap is far above every rounding and far below the a-priori width) and a
mutation — the bound tightened 100× — that loses the truth.
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from precise_kpca.arith.dyadic import Dyadic
from precise_kpca.backends.base import as_fraction
from precise_kpca.certify import perturbed_enclosure
from precise_kpca.certify.float64_enclosure import enclose_float64, sharpen_top
from precise_kpca.measures import enclosed, measure
from precise_kpca.measures.measurement import interval_digits
from precise_kpca.measures.results import fraction_ends
from precise_kpca.numerics.data import clear as clear_derived

from ..reference import reference
from ..rigorous_check import check_measurement
from .test_enclosure_mutations import tighten_li_li

SPOIL = 1e-7
TIGHTER = 100


def _reference(A: np.ndarray) -> list[Fraction]:
    ctx = mpmath.MPContext()
    ctx.dps = 60
    values = ctx.eigsy(ctx.matrix(A.tolist()), eigvals_only=True)
    return sorted((as_fraction(values[i]) for i in range(A.shape[0])), reverse=True)


def _matrix(spectrum, seed=0) -> np.ndarray:
    n = len(spectrum)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    A = (Q * np.asarray(spectrum)) @ Q.T
    return (A + A.T) / 2


def _sharpened(A: np.ndarray, m: int, spoil=None):
    """sharpen_top of A's top m from numpy's eigenvectors (column 0 moved by SPOIL towards column ``spoil``),
    multiplied exactly (A is exact: unknown = 0)."""
    w, V = np.linalg.eigh(A)
    w, V = w[::-1].copy(), V[:, ::-1].copy()
    if spoil is not None:
        V[:, 0] += SPOIL * V[:, spoil]
    f64 = enclose_float64(A, 0, w, V)
    v = Dyadic.from_float64(V[:, :m])
    k = Dyadic.from_float64(A) @ v
    return f64, sharpen_top(f64, v, k, [Fraction(0)] * m)


def _contains(enc, ref, indices) -> bool:
    return all(enc.lower[i] <= ref[i] <= enc.upper[i] for i in indices)


def test_kato_temple_sharpens_a_singleton_far_below_the_a_priori_width(monkeypatch):
    A = _matrix([10.0, 7.0, 3.0] + list(np.linspace(1, 0.1, 27)))
    ref = _reference(A)
    f64, sharp = _sharpened(A, 3, spoil=1)
    assert _contains(sharp, ref, range(len(ref)))
    a_priori = f64.upper[0] - f64.lower[0]
    width = sharp.upper[0] - sharp.lower[0]
    # spoiled by 1e-7 towards a gap of 3: ε² / gap ~ 1e-14 · 3; the a-priori width is ~N u ‖A‖ ~ 1e-13 · 10
    assert width <= Fraction(1, 10**12) and width * 10 <= a_priori
    assert max(ref[0] - sharp.lower[0], sharp.upper[0] - ref[0]) >= width / 4  # the truth is not at a far edge
    for i in (1, 2):  # unspoiled vectors: ε²/gap at the float64 rounding level, ~1e-30
        assert sharp.upper[i] - sharp.lower[i] <= Fraction(1, 10**25)

    kato_temple = perturbed_enclosure._kato_temple

    def tighter(v, k, unknown, alpha, beta, index):
        lo, hi = kato_temple(v, k, unknown, alpha, beta, index)
        theta = (v.T @ k).entry(0, 0) / (v.T @ v).entry(0, 0)
        return theta - (theta - lo) / TIGHTER, theta + (hi - theta) / TIGHTER

    monkeypatch.setattr(perturbed_enclosure, "_kato_temple", tighter)
    _, mutant = _sharpened(A, 3, spoil=1)
    assert not _contains(mutant, ref, [0])


def test_li_li_sharpens_a_cluster_the_a_priori_bounds_cannot_split(monkeypatch):
    """λ_1, λ_2 1e-14 apart: one a-priori run; Rayleigh–Ritz on both vectors (column 0 spoiled towards λ_3) and the
    Li–Li radius enclose both, each sharpened enclosure inside its a-priori one."""
    A = _matrix([10.0, 10.0 - 1e-13, 4.0] + list(np.linspace(1, 0.1, 17)), seed=3)
    ref = _reference(A)
    f64, sharp = _sharpened(A, 3, spoil=2)
    assert (0, 2) in f64.runs
    assert _contains(sharp, ref, range(len(ref)))
    for i in (0, 1):
        assert sharp.upper[i] - sharp.lower[i] <= Fraction(1, 10**12)
        assert f64.lower[i] <= sharp.lower[i] <= sharp.upper[i] <= f64.upper[i]

    tighten_li_li(monkeypatch)
    _, mutant = _sharpened(A, 3, spoil=2)
    assert not _contains(mutant, ref, [0, 1])


def test_runs_beyond_the_products_keep_their_a_priori_enclosures():
    A = _matrix([10.0, 7.0, 3.0] + list(np.linspace(1, 0.1, 7)))
    f64, sharp = _sharpened(A, 2)
    assert sharp.lower[2:] == f64.lower[2:] and sharp.upper[2:] == f64.upper[2:]
    assert all(sharp.upper[i] - sharp.lower[i] < f64.upper[i] - f64.lower[i] for i in (0, 1))


def _wine_like(n=40, seed=1):
    """Attributes on very different scales (as wine's proline against its other columns): a graded linear
    spectrum, λ_1/λ_3 ~ 1e4."""
    return np.random.default_rng(seed).normal(size=(n, 3)) * np.array([100.0, 3.0, 1.0])


@pytest.mark.parametrize("p", [-2, 3, 8])
def test_the_hybrid_enclosure_certifies_the_eigen_measures(p):
    """The binary128 route's first attempt (a-priori bounds + exact top) against the reference: eigenvalue and
    eigenprojection intervals contain it, with binary128-level digits (≥ 15)."""
    X = _wine_like()
    sigma = Fraction(2) ** p
    clear_derived(enclosed._enclosure_cached)
    enc = enclosed.spectrum_enclosure(X, sigma, exact_products=False)
    for name, k in (("eigenvalue", 1), ("eigenprojection", 1), ("eigenprojection", 2)):
        if name == "eigenvalue":
            lo, hi = fraction_ends(*enclosed.eigenvalue_interval(enc, X))
        else:
            lo, hi = enclosed.eigen_distance_interval(enc, X, k, 1e-6, "mean")
        want = reference(X, name, sigma, digits=20, k=k).value
        assert lo <= want <= hi, (name, k)
        assert interval_digits(lo, hi) >= 15, (name, k)


def test_eq18_reads_the_eigenvalues_up_to_the_rank_only():
    """Beyond r = rank L, λ_L,i = 0 and 0 ≤ μ_i ≤ μ_r: the enclosures of indices > r cannot change Eq. 18's interval
    (here replaced by absurd ones), which still contains the reference of the full definition (max over all N)."""
    X = _wine_like(n=20)
    sigma = Fraction(1, 16)  # the Gaussian tail is large here (μ_i ≈ σ_X² for i ≥ r): reading it would show
    enc = enclosed.spectrum_enclosure(X, sigma)
    r = enclosed.linear_for(X).rank
    absurd = np.array([Fraction(-(10**9))] * (len(enc.lower) - r - 1), dtype=object)
    spoiled = enclosed.SpectrumEnclosure(np.concatenate([enc.lower[:r + 1], absurd]),
                                         np.concatenate([enc.upper[:r + 1], -absurd]), enc.vectors, enc.correction,
                                         enc.sin_theta, enc.seconds)
    interval = fraction_ends(*enclosed.eigenvalue_interval(enc, X))
    assert fraction_ends(*enclosed.eigenvalue_interval(spoiled, X)) == interval
    want = reference(X, "eigenvalue", sigma, digits=20).value
    assert interval[0] <= want <= interval[1] and interval_digits(*interval) >= 15


def test_measure_takes_the_hybrid_first_and_labels_it():
    X = _wine_like()
    m = measure(X, "eigenvalue", Fraction(1, 4))
    assert m.route.engine == "binary128-enclosure" and "sharpened" in m.route.detail and not m.short
    assert check_measurement(m, X) == "rigorous"
