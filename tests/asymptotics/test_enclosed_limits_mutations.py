"""Issue 19, "a mutation check per enclosure theorem", for Theorem 3's enclosed limits (asymptotics/enclosed_limits.py).

The limits are evaluated on a linear basis spoiled by SPOIL (each column moved along the part of E₁w_i orthogonal
to every linear eigenvector, the direction the first-order data are most sensitive to), so the Lipschitz radii
decide the interval: the spoiled Davis–Kahan bounds are recomputed from the spoiled basis, which keeps the
enclosure rigorous. Each test checks that the unmutated interval contains the independent reference
(tests/first_order_reference.py, mpmath eigsy on the exact data) and is tight — its radius is within a factor
TIGHTER of the actual error, so the same bound loosened by TIGHTER would fail — and that the radius tightened by
TIGHTER loses the reference. Comparisons run in a private 2000-bit mpmath context on the exact ends.
"""
import dataclasses
from unittest import mock

import flint
import mpmath
import numpy as np
import pytest

from precise_kpca.arith.dyadic import Dyadic
from precise_kpca.asymptotics import enclosed_limits
from precise_kpca.certify import linear_enclosure as linear_module
from precise_kpca.measures.results import arb_ends
from precise_kpca.numerics.data import clear as clear_derived

from ..first_order_reference import Reference

SPOIL = 1e-7  # far above the basis grid (2^-256) and the reference's accuracy, far below every gap
TIGHTER = 100
REF_DPS = 80
BITS = 256

_CTX = mpmath.MPContext()
_CTX.prec = 2000


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Spoiled enclosures must not outlive their test (nor cached clean ones leak in)."""
    caches = (linear_module._linear_cached, enclosed_limits._enclose_cached)
    clear_derived(*caches)
    yield
    clear_derived(*caches)


def _wide():
    """N = 5 ≤ d + 1: ker L = span 1, no null block; the eigenvalue limit is the linear shifts' alone."""
    return np.random.default_rng(3).normal(size=(5, 6)) * np.array([3.0, 1.5, 0.7, 0.3, 0.1, 0.05])


def _tall():
    """N = 10, d = 3: a 6-dimensional null block beside well-separated linear eigenvalues."""
    return np.random.default_rng(7).normal(size=(10, 3)) * np.array([3.0, 1.5, 0.5])


def _spoiled_linear(X):
    """The linear enclosure with its basis moved by SPOIL along (I − WWᵀ)E₁w_i (a float64 direction: only its size
    matters); its subspace bounds are recomputed from the spoiled basis."""
    lin = linear_module.linear_enclosure(X, BITS)
    w = lin.vectors.to_float64()
    n = len(X)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    h = np.eye(n) - 1 / n
    e1w = h @ (sq * sq) @ h @ w / 8
    direction = e1w - w @ (w.T @ e1w)
    direction /= np.linalg.norm(direction, axis=0)
    return dataclasses.replace(lin, vectors=Dyadic.from_float64(w + SPOIL * direction), _sin_cache={})


def _interval(X, evaluate, *, coupling=1, null=1):
    """(lo, hi) of ``evaluate`` on the spoiled basis, the coupling and null-block radii divided by the factors."""
    lin = _spoiled_linear(X)
    coupling_radius, null_radius = enclosed_limits.LimitEnclosure.coupling_radius, enclosed_limits._null_radius
    with mock.patch.object(enclosed_limits, "linear_enclosure", lambda *_: lin), \
            mock.patch.object(enclosed_limits.LimitEnclosure, "coupling_radius",
                              lambda self, j, k: coupling_radius(self, j, k) / coupling), \
            mock.patch.object(enclosed_limits, "_null_radius", lambda *a: null_radius(*a) / null):
        enc = enclosed_limits.enclose(X, BITS)
        with flint.ctx.workprec(enc.prec):
            ends = arb_ends(evaluate(enc))
    clear_derived(enclosed_limits._enclose_cached)
    return tuple(_CTX.mpf(v) for v in ends)


def _reference_value(ref, limit):
    return _CTX.mpf(ref.eigenvalue_limit() if limit == "eigenvalue" else ref.eigenprojection_limit(3))


def _evaluate(limit):
    if limit == "eigenvalue":
        return enclosed_limits.eigenvalue_limit_ball
    return lambda enc: enclosed_limits.eigenprojection_limit_ball(enc, 3, 1e-6, "mean")


def _assert_tight_and_containing(lo, hi, value):
    assert lo <= value <= hi
    assert (hi - lo) / 2 < TIGHTER * abs((lo + hi) / 2 - value)  # loosened by TIGHTER, this would fail


@pytest.mark.parametrize("data,limit", [(_wide, "eigenvalue"), (_tall, "eigenvalue"), (_wide, "eigenprojection")])
def test_coupling_radius_is_tight_and_needed(data, limit):
    """‖C_JK − C̃_JK‖ ≤ τ_J e_K + τ_K e_J + τ_Jτ_K‖E₁‖ (Lipschitz in the basis, Davis–Kahan τ)."""
    X = data()
    value = _reference_value(Reference(X, REF_DPS), limit)
    _assert_tight_and_containing(*_interval(X, _evaluate(limit)), value)
    lo, hi = _interval(X, _evaluate(limit), coupling=TIGHTER)
    assert not lo <= value <= hi


def test_null_radius_is_tight_and_needed():
    """‖N_g − Ñ_g‖ ≤ 2τ_g‖E₁‖p_g + τ_g²‖E₁‖² (the null-space part of the eigenvectors' first-order term)."""
    X = _tall()
    value = _reference_value(Reference(X, REF_DPS), "eigenprojection")
    _assert_tight_and_containing(*_interval(X, _evaluate("eigenprojection")), value)
    lo, hi = _interval(X, _evaluate("eigenprojection"), null=TIGHTER)
    assert not lo <= value <= hi
