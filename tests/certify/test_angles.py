"""Largest principal angles between exact bases (precise_kpca.certify.angles) against mpmath at 120 digits."""
from __future__ import annotations

import flint
import mpmath
import numpy as np
import pytest

from precise_kpca.arith.dyadic import Dyadic
from precise_kpca.certify import angles


def _reference(ctx, v: np.ndarray, w: np.ndarray):
    """arcsin of the largest singular value of (I − Q_W Q_Wᵀ) Q_V, orthonormal bases by QR in ctx."""
    qv, _ = ctx.qr(ctx.matrix(v.tolist()))
    qw, _ = ctx.qr(ctx.matrix(w.tolist()))
    g = v.shape[1]
    qv = qv[:, :g]
    qw = qw[:, :g]
    outside = qv - qw * (qw.T * qv)
    s = ctx.svd_r(outside, compute_uv=False)
    return ctx.asin(max(s))


@pytest.mark.parametrize("g, tilt", [(1, 1e-3), (3, 1e-3), (3, 1e-14), (5, 1e-9)])
def test_largest_angle_ball_holds_the_reference(g, tilt):
    """W = V + tilt·noise (non-orthonormal V): the ball holds the 120-digit angle and is narrow (2^-100 relative)."""
    rng = np.random.default_rng(g)
    v = rng.standard_normal((12, g))
    w = v + tilt * rng.standard_normal((12, g))
    ball = angles.largest_angle_ball(Dyadic.from_float64(v), Dyadic.from_float64(w), 256)
    ctx = mpmath.MPContext()
    ctx.dps = 120
    true = _reference(ctx, v, w)
    with flint.ctx.workprec(400):
        lo, hi = (ctx.mpf(x.str(110, radius=False)) for x in (ball.lower(), ball.upper()))
    slack = true * ctx.mpf(2) ** -300  # the reference's own error (120 digits ~ 2^-398)
    assert lo - slack <= true <= hi + slack, (lo, true, hi)
    assert hi - lo <= true * ctx.mpf(2) ** -100


@pytest.mark.parametrize("backend, dps", [("float64", None), ("mp", 30)])
@pytest.mark.parametrize("g, tilt", [(1, 1e-3), (3, 1e-6), (3, 1e-14)])
def test_largest_angle_value_matches_the_reference(backend, dps, g, tilt):
    """The backend value of an angle between orthonormal bases is within a few unit roundoffs (absolute, radians)
    of the 120-digit angle of the same exact bases, tiny angles included (arccos would lose half the digits)."""
    from precise_kpca.backends import get_backend

    b = get_backend(backend, dps)
    rng = np.random.default_rng(10 * g + int(-np.log10(tilt)))
    v = rng.standard_normal((12, g))
    w = v + tilt * rng.standard_normal((12, g))
    work = mpmath.MPContext()
    work.prec = 53 if dps is None else b.prec

    def orthonormal(a):  # a basis orthonormal in b's precision (the function's precondition)
        q = work.qr(work.matrix(a.tolist()))[0]
        return np.array([[q[i, j] for j in range(g)] for i in range(a.shape[0])], dtype=object)

    qv, qw = orthonormal(v), orthonormal(w)
    value = angles.largest_angle(b, b.internal(qv.astype(float) if dps is None else qv),
                                 b.internal(qw.astype(float) if dps is None else qw))
    ctx = mpmath.MPContext()
    ctx.dps = 120
    true = _reference(ctx, v, w)
    assert true > 0
    assert abs(ctx.mpf(value) - true) <= 64 * v.shape[0] * b.eps, (value, true)
