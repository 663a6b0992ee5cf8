"""Rigorous largest principal angles between the spans of two exact bases.

For exact dyadic bases V, W (N×g, full column rank) the largest principal angle θ between span V and span W
satisfies sin²θ = λ_max(G_V⁻¹ S) with G_V = VᵀV, M = VᵀW and S = G_V − M G_W⁻¹ Mᵀ, the Gram matrix of the part of V
orthogonal to span W. G_V, M, G_W are exact g×g rationals (exact integer products), so S is exact and there is no
cancellation however small θ is; the largest eigenvalue of the g×g product is enclosed by Arb (a closed form for
g = 1). The arcsine is an Arb ball as well. SciPy's ``subspace_angles`` computes the same angle in float64, where
sin θ below 1e-8 is lost: no library gives it rigorously, hence this module.

A principal-angle bound transfers between bases: the largest principal angle is a metric on the subspaces of one
dimension, so ∠(V_true, W_true) ∈ ∠(V, W) ± (∠(V, V_true) + ∠(W, W_true)) (:func:`widen`).
"""
from __future__ import annotations

from fractions import Fraction

import flint

from ..backends.dyadic import Dyadic
from ..errors import InternalCheckFailed
from .eigen_enclosure import ritz_enclosures


def largest_angle_ball(v: Dyadic, w: Dyadic, prec: int) -> flint.arb:
    """Arb ball containing the largest principal angle (radians) between span v and span w.

    Parameters
    ----------
    v, w : Dyadic, shape (N, g)
        Exact bases of equal dimension g ≥ 1 (need not be orthonormal).
    prec : int
        Bits of the Arb arithmetic.
    """
    if v.shape != w.shape or v.shape[1] == 0:
        raise ValueError(f"bases must have equal, nonzero shapes; got {v.shape} and {w.shape}")
    gv, gw, m = (v.T @ v).to_fmpq(), (w.T @ w).to_fmpq(), (v.T @ w).to_fmpq()
    g = v.shape[1]
    with flint.ctx.workprec(prec):
        if g == 1:
            a, b, c = gv[0, 0], gw[0, 0], m[0, 0]
            sin2 = flint.arb((a * b - c * c) / (a * b))  # one exact rational, then one ball
        else:
            s = gv - m * gw.solve(m.transpose())
            enclosures = ritz_enclosures(gv.solve(s), prec)
            if enclosures is None:
                raise InternalCheckFailed("Arb could not enclose the eigenvalues of a g×g principal-angle matrix")
            low, high = enclosures[0]
            sin2 = flint.arb(flint.fmpq(low.numerator, low.denominator)).union(
                flint.arb(flint.fmpq(high.numerator, high.denominator)))
        sin2 = _clamp_unit(sin2)
        return sin2.sqrt().asin()


def sin_bound_to_angle(bound: Fraction, prec: int) -> flint.arb:
    """Upper end of asin(bound) as a ball (bound < 1 is a sin Θ bound)."""
    with flint.ctx.workprec(prec):
        return flint.arb(flint.fmpq(bound.numerator, bound.denominator)).asin()


def widen(angle: flint.arb, slack: flint.arb, prec: int) -> flint.arb:
    """The ball [lo(angle) − hi(slack), hi(angle) + hi(slack)] ∩ [0, π/2]."""
    with flint.ctx.workprec(prec):
        s = slack.upper()
        lo = angle.lower() - s
        hi = angle.upper() + s
        zero = flint.arb(0)
        lo = zero if lo < 0 else lo
        return flint.arb(lo).union(flint.arb(hi))


def _clamp_unit(x: flint.arb) -> flint.arb:
    """x ∩ [0, 1] (a squared sine): a ball that strays outside by rounding keeps its true part."""
    lo = x.lower()
    hi = x.upper()
    lo = flint.arb(0) if lo < 0 else lo
    hi = flint.arb(1) if hi > 1 else hi
    return flint.arb(lo).union(flint.arb(hi))
