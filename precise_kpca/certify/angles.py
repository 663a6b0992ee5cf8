"""Largest principal angles between two subspaces: the one owner of the concept.

Two disciplines, one definition (sin θ_max = ‖(I − P_W)V‖₂ for orthonormal V, W):

* :func:`largest_angle` — the value in a :class:`~precise_kpca.backends.Backend`'s arithmetic, for orthonormal
  bases (guarantee: none beyond the backend's rounding; the measures' certification decides its digits);
* :func:`largest_angle_ball` — a rigorous enclosure for exact dyadic bases, orthonormal or not.

Enclosure. For exact dyadic bases V, W (N×g, full column rank) the largest principal angle θ between span V and
span W satisfies sin²θ = λ_max(G_V⁻¹ S) with S = ((I − P_W)V)ᵀ((I − P_W)V), the Gram matrix of the part of V
orthogonal to span W. From the exact g×g products G_V = VᵀV, G_W = WᵀW and WᵀV, :func:`.ritz.ritz_pencil` gives
the exact T = (V − WC)ᵀ(V − WC) ⪰ S for a C ≈ G_W⁻¹WᵀV with T − S ⪯ excess·I (no exact solve, and no cancellation
however small θ is), so sin²θ ∈ [λ_max(G_V⁻¹T) − excess/λ_min(G_V), λ_max(G_V⁻¹T)] (the eigenvalues of G_V⁻¹S
are monotone in S), λ_max enclosed by Arb (a closed form for g = 1). The arcsine is an Arb ball as well. SciPy's
``subspace_angles`` computes the same angle in float64, where sin θ below 1e-8 is lost: no library gives it
rigorously, hence this module.

A principal-angle bound transfers between bases: the largest principal angle is a metric on the subspaces of one
dimension, so ∠(V_true, W_true) ∈ ∠(V, W) ± (∠(V, V_true) + ∠(W, W_true)) (:func:`widen`).
"""
from __future__ import annotations

from fractions import Fraction

import flint

from ..arith.dyadic import Dyadic
from ..backends import Backend
from ..errors import InternalCheckFailed
from .ritz import gram_lower_bound, ritz_pencil


def largest_angle(b: Backend, V, W):
    """Largest principal angle between span(V) and span(W) in ``b``'s arithmetic (no guarantee).

    Parameters
    ----------
    b : Backend
    V, W : ndarray, shape (N, m)
        Orthonormal columns, in ``b``'s arithmetic.

    Returns
    -------
    scalar of ``b``
        θ_max from sin²θ_max = λ_max(((I − WWᵀ)V)ᵀ(I − WWᵀ)V) and cos²θ_max = σ_min(WᵀV)², by atan2: full relative
        accuracy for tiny angles (no arccos of a number near 1).
    """
    overlap = W.T.dot(V)
    outside = V - W.dot(overlap)
    sin2 = b.eigh(outside.T.dot(outside))[0][0]
    cos2 = b.eigh(overlap.T.dot(overlap))[0][-1]
    return b.atan2(b.sqrt(max(sin2, b.scalar(0))), b.sqrt(max(cos2, b.scalar(0))))


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
    gv, gw, m = v.T @ v, w.T @ w, w.T @ v
    g = v.shape[1]
    with flint.ctx.workprec(prec):
        if g == 1:
            a, b, c = gv.entry(0, 0), gw.entry(0, 0), m.entry(0, 0)
            sin2 = (a * b - c * c) / (a * b)  # one exact rational, then one ball
            sin2 = flint.arb(flint.fmpq(sin2.numerator, sin2.denominator))
        else:
            fit = ritz_pencil(gw, m, prec=prec, square=gv, values=False)  # T ⪰ S, T − S ⪯ excess·I
            pencil = None if fit is None else ritz_pencil(gv, fit.residual_gram, prec=prec)  # G_V⁻¹T
            if pencil is None:
                raise InternalCheckFailed("Arb could not enclose the eigenvalues of a g×g principal-angle matrix")
            low, high = pencil.values[0]
            lam_min = gram_lower_bound(gv)
            low = low - fit.excess / lam_min if lam_min > 0 else Fraction(0)  # sin²θ ≥ 0 always
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
    hi = flint.arb(1) if hi > 1 else hi
    if lo <= 0:  # a union with 0 rounds its radius up past 0: [r/2 ± r/2] instead
        return flint.arb(hi).union(flint.arb(0)).nonnegative_part()
    return flint.arb(lo).union(flint.arb(hi))
