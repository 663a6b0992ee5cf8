"""Issue 19, "Bugs": each test fails (crashes, or would hang) on the code before its fix.

a. rank(HX) = N − 1 (N ≤ d + 1): the structured spectrum's rest block is empty;
b. k beyond the rank of the centered linear Gram: a ValueError naming k and the rank, never a hang;
c. convergence_onset on a curve with undetermined points: Undetermined, never a silent "256+".

Values are checked against the independent reference of tests/reference.py (plain mpmath, exact data).
"""
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import precise_kpca
from precise_kpca.backends import Float64Backend, MPBackend
from precise_kpca.measures import structured
from precise_kpca.numerics.data import clear as clear_derived

from ..reference import reference

_CHECK = mpmath.MPContext()
_CHECK.dps = 500  # compares mpf of any precision exactly enough (the global mp has 53 bits)
BACKENDS = [Float64Backend(), MPBackend(30)]


def _wide(n, d):
    """N ≤ d + 1 rows: rank(HX) = N − 1, so the top block can take every linear eigenvalue."""
    return np.random.default_rng(19).normal(size=(n, d))


def _relative_error(b, got, want):
    got, want = _CHECK.mpf(b.export(got)), _CHECK.mpf(want)
    return abs(got - want) / abs(want)


# (shape, log2 σ, measures): at 2⁴ the top block of the 4×3 and 3×2 sets stops short of the rank, leaving a
# rest block of r − t = n − t − 1 eigenvalues (one fewer than r − t + 1: there is no zero beyond them)
CASES = [((5, 6), p, ("eigenvalue", "eigenprojection", "pc")) for p in (4, 7, 10, 40, 100)] + [
    (shape, p, ("eigenvalue", "eigenprojection", "pc")) for shape in ((4, 3), (3, 2)) for p in (7, 40)] + [
    (shape, 4, ("eigenvalue",)) for shape in ((4, 3), (3, 2))]


@pytest.mark.parametrize("backend", BACKENDS, ids=["float64", "mp30"])
@pytest.mark.parametrize("shape, p, names", CASES)
def test_structured_measures_with_rank_n_minus_one_match_the_reference(backend, shape, p, names):
    """Eq. 18 pairs A's last eigenvalue (the exact zero of 1) with the linear zero; with t = N − 1 nothing else is
    left, so the rest block is empty and every measure comes from the top block alone (before the fix the mp
    backend crashed in np.hstack of no Ritz bases)."""
    X = _wide(*shape)
    n, d = shape
    rank = min(n - 1, d)
    ps = structured.perturbed_spectrum(X, Fraction(2) ** p, backend, rank)
    assert ps.applicable and ps.linear.rank == rank
    assert len(ps.rest_values) == min(rank - ps.rank + 1, n - ps.rank - 1)
    evaluate = {"eigenvalue": (1, lambda k: structured.eigenvalue_difference(ps)),
                "eigenprojection": (min(rank, 3), lambda k: structured.eigen_distance(ps, k, 1e-6, "mean")),
                "pc": (rank, lambda k: structured.pc_dissonance(ps, k))}
    for name in names:
        k, value = evaluate[name]
        assert structured.covers(ps, name, k, 1e-6), name
        want = reference(X, name, f"2**{p}", k=k).value
        assert _relative_error(backend, value(k), want) <= 64 * backend.eps, name


@pytest.mark.parametrize("p", [7, 10, 40])
@pytest.mark.parametrize("name, k", [("eigenvalue", 1), ("eigenprojection", 2), ("pc", 4)])
def test_measure_on_n_le_d_plus_one_encloses_the_reference(name, k, p):
    """The issue's reproduction (N = 5 rows in d = 6): measure(X, "eigenvalue", "2**10") crashed."""
    X = _wide(5, 6)
    m = precise_kpca.measure(X, name, f"2**{p}", k=k, digits=10)
    want = _CHECK.mpf(reference(X, name, f"2**{p}", k=k).value)
    assert m.certified_digits >= 10
    assert _CHECK.mpf(m.lower) <= want <= _CHECK.mpf(m.upper)


# --- b. k beyond the rank ------------------------------------------------------------------------------------

class _Bounded(list):
    """A spectrum that fails the test, instead of hanging it, once read 10⁴ times (a 4-element grouping needs
    a few dozen reads)."""

    reads = 0

    def __getitem__(self, i):
        self.reads += 1
        if self.reads > 10_000:
            raise AssertionError("linear_groups does not terminate")
        return super().__getitem__(i)


@pytest.mark.parametrize("values, k", [
    ([3.0, 2.0, 0.0, 0.0], 4),  # k beyond the rank: 0/0 is NaN in numpy and the loop never advanced
    ([3.0, float("nan")], 2),
    ([3.0, -1.0], 2),
])
def test_linear_groups_refuses_zero_nan_or_negative_eigenvalues(values, k):
    first = next(i for i, v in enumerate(values) if not v > 0)
    with pytest.raises(ValueError, match=rf"linear eigenvalue {first} of the top k={k}"):
        precise_kpca.measures.spectral.linear_groups(_Bounded(np.array(values)), k, 1e-6)


def test_linear_groups_still_groups_by_relative_gaps():
    values = _Bounded(np.array([3.0, 3.0 * (1 + 1e-9), 2.0, 1.0, 0.0]))
    assert precise_kpca.measures.spectral.linear_groups(values, 4, 1e-6) == [(0, 2), (2, 3), (3, 4)]
    assert values.reads < 100


@pytest.fixture
def bounded_groups(monkeypatch):
    """linear_groups, in every loaded precise_kpca module that binds it, on a bounded spectrum: a regression
    fails instead of hanging."""
    real = precise_kpca.measures.spectral.linear_groups

    def bounded(values, k, tau):
        return real(_Bounded(list(values)), k, tau)

    for module in _precise_kpca_modules():
        if getattr(module, "linear_groups", None) is real:
            monkeypatch.setattr(module, "linear_groups", bounded)


def _precise_kpca_modules():
    return [m for name, m in list(sys.modules.items()) if name.startswith("precise_kpca") and m is not None]


def _dps(backend):
    return 30 if backend == "mp" else None


FULL_RANK = np.random.default_rng(7).normal(size=(8, 3))  # rank 3
DEFICIENT = np.column_stack([FULL_RANK[:, :2], 2 * FULL_RANK[:, 0]])  # an exact multiple: rank 2


@pytest.mark.parametrize("X, rank", [(FULL_RANK, 3), (DEFICIENT, 2)], ids=["full", "deficient"])
@pytest.mark.parametrize("backend", ["auto", "float64", "mp", "float64-naive"])
@pytest.mark.parametrize("p", [-2, 10])
def test_pc_with_k_beyond_the_rank_raises_naming_k_and_the_rank(bounded_groups, X, rank, backend, p):
    """Before the fix this never returned (linear_groups divided 0/0 on the zero eigenvalues)."""
    k = rank + 1
    message = rf"k={k} exceeds the rank {rank} of the centered linear Gram \(N=8, d=3\)"
    with pytest.raises(ValueError, match=message):
        precise_kpca.measure(X, "pc", f"2**{p}", k=k, backend=backend, dps=_dps(backend), digits=6)


@pytest.mark.parametrize("backend", ["auto", "float64", "mp"])
@pytest.mark.parametrize("p", [-2, 10])
def test_eigenprojection_with_k_beyond_the_rank_raises_naming_k_and_the_rank(bounded_groups, backend, p):
    with pytest.raises(ValueError, match=r"k=3 exceeds the rank 2 of the centered linear Gram"):
        precise_kpca.measure(DEFICIENT, "eigenprojection", f"2**{p}", k=3, backend=backend, dps=_dps(backend),
                             digits=6)


@pytest.mark.parametrize("backend", BACKENDS, ids=["float64", "mp30"])
@pytest.mark.parametrize("p", [-2, 10])
def test_the_structured_path_refuses_k_beyond_the_rank_before_any_eigensolver(backend, p):
    """covers() decides between the structured path and a full eigensolver: it raises for eigenprojection and pc,
    whether or not the spectrum applies (2⁻² it does not), and lets the eigenvalue measure (no k) through."""
    ps = structured.perturbed_spectrum(FULL_RANK, Fraction(2) ** p, backend, 4)
    for name in ("eigenprojection", "pc"):
        with pytest.raises(ValueError, match=r"k=4 exceeds the rank 3 of the centered linear Gram \(N=8, d=3\)"):
            structured.covers(ps, name, 4, 1e-6)
    assert structured.covers(ps, "eigenvalue", 4, 1e-6) == ps.applicable


HEAVY = ("gaussian_residual", "gaussian_gram", "scaled_gaussian_gram_words", "eigensystem", "ResidualSeries",
         "Binary128ResidualOperator")  # the N×N Gram builders and the full eigensolver, wherever a module binds them


@pytest.mark.parametrize("name", ["pc", "eigenprojection"])
def test_k_beyond_the_rank_is_refused_before_any_gram_is_formed(monkeypatch, name):
    def heavy(*args, **kwargs):
        raise AssertionError("a Gram or a full eigensystem was formed before the rank check")

    clear_derived()  # a kept spectrum of FULL_RANK would hide the Gram's formation
    for module in _precise_kpca_modules():
        for attribute in HEAVY:
            if hasattr(module, attribute):
                monkeypatch.setattr(module, attribute, heavy)
    with pytest.raises(ValueError, match="k=4 exceeds the rank 3"):
        precise_kpca.measure(FULL_RANK, name, "2**10", k=4)
