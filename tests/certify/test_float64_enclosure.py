"""The float64 enclosure (a-priori GEMM bounds, Kahan's cluster theorem, counting) against mpmath eigsy."""
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from precise_kpca.backends.base import as_fraction
from precise_kpca.certify import float64_enclosure
from precise_kpca.certify.float64_enclosure import enclose_float64

from ..eigsy_reference import eigsy_descending


def _reference(A: np.ndarray) -> list[Fraction]:
    """Eigenvalues (descending) of the exact float64 matrix from mpmath eigsy at 50 digits, as exact Fractions."""
    ctx = mpmath.MPContext()
    ctx.dps = 50
    values = ctx.eigsy(ctx.matrix(A.tolist()), eigvals_only=True)
    return sorted((as_fraction(values[i]) for i in range(A.shape[0])), reverse=True)


def _matrix(seed: int, n: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    if kind == "clusters":  # exactly repeated eigenvalues, then rounding: a float64 cluster
        lam = np.repeat(rng.normal(size=n // 3 + 1), 3)[:n]
    elif kind == "graded":
        lam = 10.0 ** rng.uniform(-12, 0, size=n)
    else:
        lam = rng.normal(size=n)
    A = (Q * lam) @ Q.T
    return (A + A.T) / 2


def _eigh(A):
    w, V = np.linalg.eigh(A)
    return w[::-1].copy(), V[:, ::-1].copy()


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), kind=st.sampled_from(["plain", "clusters", "graded"]))
@settings(max_examples=25, deadline=None)
def test_every_eigenvalue_is_enclosed_and_tightly(seed, n, kind):
    A = _matrix(seed, n, kind)
    w, V = _eigh(A)
    enc = enclose_float64(A, 0, w, V, groups=[(0, 1)])
    ref = _reference(A)
    scale = Fraction(float(np.abs(w).max()))
    for lo, hi, lam in zip(enc.lower, enc.upper, ref):
        assert lo <= lam <= hi
        assert hi - lo <= scale * Fraction(1, 10**11)  # tight: ~N u ‖A‖, a loosened bound would fail this


def test_a_bound_tightened_tenfold_misses_the_eigenvalues(monkeypatch):
    """Shifted approximate eigenvalues (w + 1e-9 ‖A‖): the residual radius alone covers the shift, so a radius
    divided by ten must lose the truth — the containment test above has teeth."""
    A = _matrix(3, 12, "plain")
    w, V = _eigh(A)
    shifted = w + 1e-9 * np.abs(w).max()
    ref = _reference(A)
    enc = enclose_float64(A, 0, shifted, V)
    assert all(lo <= lam <= hi for lo, hi, lam in zip(enc.lower, enc.upper, ref))
    radius, single = float64_enclosure._run_radius, float64_enclosure._single_radii
    monkeypatch.setattr(float64_enclosure, "_run_radius", lambda *args: radius(*args) / 10)
    monkeypatch.setattr(float64_enclosure, "_single_radii", lambda *args: single(*args) / 10)  # runs of one vector
    shrunk = enclose_float64(A, 0, shifted, V)
    assert not all(lo <= lam <= hi for lo, hi, lam in zip(shrunk.lower, shrunk.upper, ref))


def test_delta_moves_the_enclosure_to_a_nearby_matrix():
    """The bound holds for every A within delta of A_f: a perturbation of size delta is covered, one of 3·delta
    generally not."""
    A = _matrix(5, 10, "plain")
    w, V = _eigh(A)
    E = np.random.default_rng(1).normal(size=A.shape)
    E = (E + E.T) / 2
    E *= 1e-8 / np.linalg.norm(E)
    near = _reference(A + E)
    enc = enclose_float64(A, Fraction(1e-8), w, V)
    assert all(lo <= lam <= hi for lo, hi, lam in zip(enc.lower, enc.upper, near))
    blind = enclose_float64(A, 0, w, V)
    assert not all(lo <= lam <= hi for lo, hi, lam in zip(blind.lower, blind.upper, near))


def test_davis_kahan_bound_holds_for_the_top_vector():
    A = _matrix(7, 15, "plain")
    w, V = _eigh(A)
    V_spoiled = V.copy()
    V_spoiled[:, 0] += 1e-7 * V[:, 1]
    enc = enclose_float64(A, 0, w, V_spoiled, groups=[(0, 1)])
    ctx = mpmath.MPContext()
    ctx.dps = 50
    u = ctx.matrix(eigsy_descending(ctx, A.tolist())[1][0])
    v = ctx.matrix(V_spoiled[:, 0].tolist())
    # at 50 digits: in float64, 1 − cos² of a 1e-7 angle keeps two digits (sin_true 1.0106e-7 > the bound on BLAS)
    sin_true = float(ctx.sqrt(1 - (ctx.fdot(u, v) / ctx.norm(v)) ** 2))
    assert float(enc.group_sin[(0, 1)]) >= sin_true >= 0.5e-7
    assert float(enc.group_sin[(0, 1)]) <= 100 * sin_true  # and not vacuous


def test_asymmetric_input_is_a_bug_not_a_number():
    A = _matrix(2, 5, "plain")
    A[0, 1] += 1e-3
    w, V = _eigh((A + A.T) / 2)
    with pytest.raises(Exception, match="exactly symmetric"):
        enclose_float64(A, 0, w, V)


def test_runs_that_join_in_a_chain_merge_in_one_pass():
    """Three eigenvalues 3, 2, 1 with radii 0.6, 0.6, 0.6: the first two intervals overlap, and the joined run
    overlaps the third (a KeyError on the joined run's radius on spambase before); two far ones stay apart."""
    from precise_kpca.certify.float64_enclosure import _merge

    w = np.array([3.0, 2.0, 1.0, -5.0])
    runs = [(0, 1), (1, 2), (2, 3), (3, 4)]
    radii = {run: 0.6 for run in runs}
    assert _merge(runs, radii, w) == [(0, 3), (3, 4)]
