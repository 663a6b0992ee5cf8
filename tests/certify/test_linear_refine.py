"""The linear enclosure's eigenpairs of the exact integer S (certify/linear_refine.py): Newton with the exact clusters
(the zero eigenvalue, the exact ties), Rayleigh–Ritz inside float64's near ties, never the general refinement or
mpmath's eigsy of the whole S (the slow fallback: > 1150 s on splice at 256 bits). Every enclosure is checked
against the independent reference, mpmath eigsy of the exact S at twice the bits (tests/eigsy_reference.py)."""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.certify import linear_enclosure as linear_module
from precise_kpca.certify import linear_refine
from precise_kpca.numerics import eigen_refine
from precise_kpca.numerics.data import clear as clear_derived

from ..eigsy_reference import eigsy_descending
from ..strategies import hard_data_sets
from .test_linear_ties import _tied_boards


def _refused(*args, **kwargs):
    raise AssertionError("the general eigen-refinement was called for the exact integer S")


def _enclosure(monkeypatch, X, bits):
    """linear_enclosure(X, bits) computed afresh with the general refinement refused, and how often the Newton
    refinement and its Rayleigh–Ritz step ran."""
    calls = {"newton": 0, "ritz": 0}
    newton, ritz = linear_module.refine_exact_clusters, linear_refine._ritz_rotated

    def counted_newton(*args):
        calls["newton"] += 1
        return newton(*args)

    def counted_ritz(*args):
        calls["ritz"] += 1
        return ritz(*args)

    monkeypatch.setattr(eigen_refine, "refine_eigensystem", _refused)
    monkeypatch.setattr(linear_module, "refine_exact_clusters", counted_newton)
    monkeypatch.setattr(linear_refine, "_ritz_rotated", counted_ritz)
    clear_derived(linear_module._linear_cached)
    try:
        return linear_module.linear_enclosure(X, bits), calls
    finally:
        clear_derived(linear_module._linear_cached)


def _reference(lin):
    """(context, S's eigenvalues descending, their unit eigenvectors) at twice the enclosure's bits."""
    ctx = mpmath.MPContext()
    ctx.prec = 2 * lin.bits + 64
    small = lin.exact.small
    values, vectors = eigsy_descending(ctx, [[int(small[i, j]) for j in range(small.ncols())]
                                             for i in range(small.nrows())])
    return ctx, values, vectors


def _mpf(ctx, x: Fraction):
    return ctx.mpf(x.numerator) / x.denominator


def _check_values(lin, ctx, values):
    """Every nonzero eigenvalue inside its enclosure; the radius on the grid (2^24 grid units of λ₁)."""
    assert lin.radius <= abs(lin.values[0]) * Fraction(2) ** (24 - lin.bits)
    for i in range(lin.rank):
        assert _mpf(ctx, lin.lower(i)) <= values[i] <= _mpf(ctx, lin.upper(i))
    # exactly size − rank zeros: the reference's are at its rounding level
    assert all(abs(v) <= values[0] * ctx.mpf(2) ** (-lin.bits) for v in values[lin.rank:])


def _sin_angle(lin, vectors, start, stop):
    """sin of the largest principal angle between span Ŵ[:, start:stop] and the reference's eigenvectors Z v
    (tall) of the same eigenvalues, to about 2^-(2 bits) (the reference's accuracy; the sine is the square root of
    a quadratic form, so it is formed at twice the reference's precision)."""
    ctx = mpmath.MPContext()
    ctx.prec = 4 * lin.bits + 128
    w = lin.vectors.columns(start, stop)
    W = ctx.matrix([[ctx.ldexp(ctx.mpf(int(v)), w.exp2) for v in row] for row in w.to_int_array()])
    Z = ctx.matrix(lin.exact.z.to_int_array().tolist())
    V = Z * ctx.matrix([[vectors[j][r] for j in range(start, stop)] for r in range(len(vectors))])
    outside = W - V * ctx.inverse(V.T * V) * (V.T * W)  # (I − P_V) Ŵ
    inverse = ctx.inverse(ctx.cholesky(W.T * W))
    return ctx.sqrt(max(max(ctx.eigsy(inverse * (W.T * outside) * inverse.T)[0]), 0))  # rounding: ≥ −2^-prec


def _within(lin, sine, bound: Fraction) -> bool:
    """sine ≤ bound up to the reference's accuracy 2^-(2 bits)."""
    return sine <= bound.numerator / mpmath.mpf(bound.denominator) + mpmath.mpf(2) ** (-2 * lin.bits)


@pytest.mark.parametrize("bits", [256, 768])
def test_exact_ties_take_the_newton_path_and_hold_the_reference(monkeypatch, bits):
    """The tied one-hot boards (λ₁ = λ₂, λ₃ = λ₄ exactly, a zero eigenvalue): the old code's refinement stalled
    (radius 3e-77 at 512 bits) and fell back to eigsy of S; now Newton with the exact clusters reaches the grid
    without a Rayleigh–Ritz step, and each group's subspace (a whole tie or a simple eigenvalue) is within its
    Davis–Kahan bound of the reference."""
    lin, calls = _enclosure(monkeypatch, _tied_boards(), bits)
    assert calls == {"newton": 1, "ritz": 0}
    ties = linear_module.tied_linear_eigenvalues_cached(lin.exact)
    assert ties and lin.rank < lin.exact.small.nrows()
    ctx, values, vectors = _reference(lin)
    _check_values(lin, ctx, values)
    edges = sorted({0, lin.rank} | {e for run in ties for e in run} | set(range(lin.rank)))
    edges = [e for e in edges if not any(a < e < z for a, z in ties)]
    for start, stop in zip(edges, edges[1:]):
        bound = lin.sin_theta(start, stop)
        assert bound < Fraction(2) ** (40 - bits)
        assert _within(lin, _sin_angle(lin, vectors, start, stop), bound)


def test_a_near_tie_float64_cannot_split_is_split_by_rayleigh_ritz(monkeypatch):
    """Two eigenvalues 2^-46 apart (relative; distinct): float64's eigenvectors mix them, Newton alone would
    diverge; the Rayleigh–Ritz step inside the cluster splits them and both reach the grid."""
    c, s = math.cos(0.3), math.sin(0.3)
    u, v = 1.0, 1.0 + 2.0**-47
    X = np.array([(a * u * c, a * u * s, 0.5) for a in (1, -1)] + [(-a * v * s, a * v * c, 0.25) for a in (1, -1)])
    X = np.vstack([X, X / 2])
    lin, calls = _enclosure(monkeypatch, X, 512)
    assert calls["newton"] == 1 and calls["ritz"] >= 1
    assert linear_module.tied_linear_eigenvalues_cached(lin.exact) == ()
    ctx, values, vectors = _reference(lin)
    assert 0 < values[0] - values[1] < values[0] * 2.0**-40
    _check_values(lin, ctx, values)
    for start in (0, 1):
        assert _within(lin, _sin_angle(lin, vectors, start, start + 1), lin.sin_theta(start, start + 1))


@settings(max_examples=60, deadline=None)
@given(X=hard_data_sets(), bits=st.sampled_from([64, 192, 512]))
def test_every_hard_data_set_reaches_the_grid_without_the_general_refinement(X, bits):
    """Symmetric point sets, polygons (near ties of rounding size), one-hot boards, duplicates, wide and
    rank-deficient data, outliers: the radius reaches the grid and contains the reference's eigenvalues."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        try:
            lin, _ = _enclosure(monkeypatch, X, bits)
        except ValueError as err:  # every row the same: no nonzero eigenvalue to enclose
            assert "all zero" in str(err)
            return
    ctx, values, _ = _reference(lin)
    _check_values(lin, ctx, values)
