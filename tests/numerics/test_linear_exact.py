"""numerics/linear_exact: the exact linear form of X (against Fractions) and S's approximate eigensystem, the one
its three users (LinearSpectrum, FirstOrder, the linear enclosure) read, against mpmath eigsy on the exact L."""
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
from hypothesis import given, settings

from precise_kpca.asymptotics import FirstOrder
from precise_kpca.backends import Float64Backend, MPBackend
from precise_kpca.certify.linear_enclosure import linear_enclosure
from precise_kpca.numerics import linear_exact
from precise_kpca.numerics.data import clear
from precise_kpca.numerics.linear_exact import exact_linear
from precise_kpca.numerics.linear_spectrum import LinearSpectrum

from ..eigsy_reference import eigsy_descending
from ..strategies import hard_data_sets

_rng = np.random.default_rng(23)
_A = _rng.integers(-8, 9, (12, 2)).astype(np.float64)
# the third column is the sum of the first two plus 2^-40 × small integers (exact in float64): rank 3, λ_3/λ_1 ≈ 1e-24,
# below what 15 digits resolve relative to λ_1
NEAR_DEFICIENT = np.column_stack([_A, _A.sum(axis=1) + 2.0**-40 * _rng.integers(-4, 5, 12)])
TALL = _rng.standard_normal((10, 3)) * np.array([1.0, 3.0, 0.5])
WIDE = _rng.standard_normal((5, 7))


def _fractions(X):
    F = [[Fraction(float(v)) for v in row] for row in X]
    means = [sum(row[j] for row in F) / len(F) for j in range(len(F[0]))]
    return [[v - m for v, m in zip(row, means)] for row in F]


def _rank(C) -> int:
    return flint.fmpq_mat([[flint.fmpq(v.numerator, v.denominator) for v in row] for row in C]).rank()


def _l_reference(X, dps):
    """(context, eigenvalues descending, unit eigenvectors) of L = X_c X_cᵀ by eigsy at ``dps``, from exact Fractions
    rounded once."""
    C = _fractions(X)
    ctx = mpmath.MPContext()
    ctx.dps = dps

    def entry(x: Fraction):
        return ctx.make_mpf(mpmath.libmp.from_rational(x.numerator, x.denominator, ctx.prec, mpmath.libmp.round_nearest))

    values, vectors = eigsy_descending(ctx, [[entry(sum(a * b for a, b in zip(u, v))) for v in C] for u in C])
    return ctx, values, vectors, entry


@settings(max_examples=40, deadline=None)
@given(hard_data_sets())
def test_the_form_matches_fractions(X):
    """rank(S) is the rank of the exact X_c, and trace(L_S) read in L's units is ‖X_c‖_F² (Fractions)."""
    exact = exact_linear(X)
    C = _fractions(X)
    assert exact.rank == _rank(C)
    assert exact.to_l_units(exact.trace()) == sum(v * v for row in C for v in row)
    assert exact.tall == (X.shape[1] <= X.shape[0])


@pytest.mark.parametrize("make", [lambda: LinearSpectrum(NEAR_DEFICIENT, MPBackend(15)).rank,
                                  lambda: FirstOrder(NEAR_DEFICIENT, path="mp", dps=15).rank,
                                  lambda: FirstOrder(NEAR_DEFICIENT, path="float64", dps=15).rank],
                         ids=["LinearSpectrum", "FirstOrder-mp", "FirstOrder-float64"])
def test_the_rank_is_exact_below_the_working_precision(make):
    """λ_3/λ_1 ≈ 1e-24 at 15 digits: a numeric floor (N·eps·λ₁) or the refinement's bounds at 15 digits drop it; the
    exact rank keeps it, the precision raised until it is resolved."""
    assert _rank(_fractions(NEAR_DEFICIENT)) == 3
    assert make() == 3


@pytest.mark.parametrize("X", [TALL, WIDE, NEAR_DEFICIENT], ids=["tall", "wide", "near-deficient"])
def test_eigensystem_against_eigsy_on_the_exact_gram(X):
    """l_values within their bounds of L's eigenvalues (eigsy at 60 digits), vectors spanning the same lines."""
    dps = 25
    system = exact_linear(X).eigensystem(dps)
    ctx, values, vectors, entry = _l_reference(X, 60)
    b = MPBackend(dps)
    lam, W, W64 = system.l_values(b), system.vectors(b), system.vectors(Float64Backend())
    r = exact_linear(X).rank
    assert len(lam) == W.shape[1] == W64.shape[1] == r
    unit = ctx.mpf(10) ** -(dps - 4)
    for i in range(r):
        bound = entry(system.exact.to_l_units(system.bounds[i]))
        assert abs(ctx.mpf(lam[i]) - values[i]) <= bound * (1 + unit) + abs(values[i]) * unit
        # sin θ(q) ≤ 10^-dps λ₁/gap (tier 1), and W = Z q/√λ_S multiplies q's error by up to √(λ₁/λ_i)
        gap = min([values[i - 1] - values[i]] * (i > 0) + [values[i] - values[i + 1]] * (i + 1 < len(values)))
        sin = unit * values[0] / gap * ctx.sqrt(values[0] / values[i])
        for w, rounding in ((W[:, i], unit), (W64[:, i], ctx.mpf(2) ** -40)):
            w = [ctx.mpf(a) for a in w]
            cos = ctx.fsum(a * c for a, c in zip(w, vectors[i]))
            norm = ctx.sqrt(ctx.fsum(a * a for a in w))
            outside = ctx.sqrt(ctx.fsum((a - cos * c) ** 2 for a, c in zip(w, vectors[i]))) / norm
            assert abs(norm - 1) <= rounding * values[0] / values[i]
            assert outside <= sin + rounding * ctx.sqrt(values[0] / values[i])


def test_one_refinement_serves_every_user(monkeypatch):
    """FirstOrder and LinearSpectrum at the same precision share S's eigensystem: refined once."""
    X = TALL * 1.5
    clear()
    calls = []
    real = linear_exact.refine_eigensystem
    monkeypatch.setattr(linear_exact, "refine_eigensystem", lambda *a, **k: calls.append(k["dps"]) or real(*a, **k))
    first = FirstOrder(X, path="mp", dps=30)
    spectrum = LinearSpectrum(X, MPBackend(30))
    assert calls == [30]
    assert [float(v) for v in spectrum.values[:3]] == list(first.values)


@pytest.mark.parametrize("make", [lambda X: LinearSpectrum(X, MPBackend(20)), lambda X: FirstOrder(X, path="mp"),
                                  lambda X: linear_enclosure(X, 64)],
                         ids=["LinearSpectrum", "FirstOrder", "linear_enclosure"])
def test_all_rows_equal_is_refused(make):
    """L = 0 has no nonzero eigenpair: a ValueError saying so (the refinement of S = 0 diverged before)."""
    with pytest.raises(ValueError, match="every row is the same"):
        make(np.full((4, 2), 0.75))
