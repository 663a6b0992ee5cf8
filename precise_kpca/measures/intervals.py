"""From enclosures to intervals of the measures: the pieces both rigorous eigen routes share.

Each route (:mod:`.enclosed` below the structured range, :mod:`.structured_enclosed` in it) encloses the Gaussian
eigenvalues and eigenvector subspaces its own way; the linear side is always
:class:`~precise_kpca.certify.linear_enclosure.LinearEnclosure` (S-units). This module turns those enclosures into
the measures' intervals in ball arithmetic (python-flint ``arb``), and decides Algorithm 1's grouping on the
enclosures, so that no grouping is decided on rounded values.
"""
from __future__ import annotations

from fractions import Fraction

import flint

from ..arith.dyadic import Dyadic
from ..certify.angles import largest_angle_ball, sin_bound_to_angle, widen
from ..certify.linear_enclosure import LinearEnclosure
from ..errors import Undetermined
from .results import arb_ends as ball_ends

ANGLE_PREC = 320  # bits of the ball arithmetic on angles and measures (the enclosures are far wider)


def check_k(lin: LinearEnclosure, k: int, what: str) -> None:
    """ValueError naming k and the rank when k exceeds the rank of the centered linear Gram."""
    if k > lin.rank:
        raise ValueError(f"k={k} exceeds the rank {lin.rank} of the centered linear Gram (N={lin.exact.n}, "
                         f"d={lin.exact.d}): {what} has no linear counterpart beyond the rank")


def linear_groups_exact(lin: LinearEnclosure, k: int, tau: float) -> list[tuple[int, int]]:
    """Algorithm 1's groups of the top k from the *enclosures*: |λ_i − λ_i0|/λ_i0 < τ decided rigorously.

    Raises
    ------
    Undetermined
        τ falls inside an enclosure of some |λ_i − λ_i0|/λ_i0 (Algorithm 1's grouping itself is then not decided).
    """
    tau = Fraction(tau)
    groups, start = [], 0
    while start < k:
        stop = start + 1
        while stop < k:
            gap_lo = max(lin.lower(start) - lin.upper(stop), Fraction(0))
            gap_hi = lin.upper(start) - lin.lower(stop)
            if gap_hi < tau * lin.lower(start):
                stop += 1
            elif gap_lo >= tau * lin.upper(start):
                break
            else:
                raise Undetermined(f"Algorithm 1's threshold τ = {float(tau):.3g} falls inside the enclosure of the "
                                   f"relative gap between linear eigenvalues {start} and {stop}")
        groups.append((start, stop))
        start = stop
    return groups


def group_angle(v: Dyadic, s_v: Fraction, lin: LinearEnclosure, start: int, stop: int) -> flint.arb:
    """Ball containing ∠(V_J, W_J): the exact basis v of the Gaussian group with its sin Θ bound s_v, against the
    linear enclosure's basis with its own bound (raises Undetermined where the linear group is not unique)."""
    s_w = lin.sin_theta(start, stop)
    with flint.ctx.workprec(ANGLE_PREC):
        measured = largest_angle_ball(v, lin.vectors.columns(start, stop), ANGLE_PREC)
        slack = sin_bound_to_angle(s_v, ANGLE_PREC) + sin_bound_to_angle(s_w, ANGLE_PREC)
        return widen(measured, slack, ANGLE_PREC)


def eigen_distance_at_zero_interval(lin: LinearEnclosure, k: int, tau: float, aggregate_name: str):
    """Rigorous interval of EigenDist(I, w, λ) (Eq. 19's normalizer): angles of the first coordinate vectors."""
    check_k(lin, k, "eigenprojection")
    n = lin.exact.n
    balls = []
    for start, stop in linear_groups_exact(lin, k, tau):
        g = stop - start
        eye = Dyadic(flint.fmpz_mat(n, g, [int(i == j + start) for i in range(n) for j in range(g)]), 0)
        balls.append(group_angle(eye, Fraction(0), lin, start, stop))
    return aggregate(balls, aggregate_name=aggregate_name)


def aggregate(balls, *, aggregate_name: str):
    """Mean or max of balls, as exact mpf ends."""
    with flint.ctx.workprec(ANGLE_PREC):
        if aggregate_name == "max":
            value = balls[0]
            for ball in balls[1:]:
                value = ball_max(value, ball)
        else:
            value = sum(balls[1:], balls[0]) / len(balls)
        return ball_ends(value)


def pc_interval_of(lin: LinearEnclosure, k: int, angle, mu):
    """Theorem 3's interval from a route's enclosures: ``angle(i)`` is the ball of the angle between the i-th
    Gaussian and linear eigenvectors, ``mu(i)`` the i-th Gaussian eigenvalue's (lo, hi) in S-units. A PC of a
    repeated linear eigenvalue depends on the basis: :meth:`LinearEnclosure.sin_theta` raises there."""
    check_k(lin, k, "pc")
    angles, mus = [], []
    for i in range(k):
        for edge in (i, i + 1):
            if not lin.separated(edge):
                lin.sin_theta(i, i + 1)  # raises Undetermined
        angles.append(angle(i))
        mus.append(mu(i))
    return pc_from_parts(lin, mus, angles)


def pc_from_parts(lin: LinearEnclosure, mus, angles):
    """max_{i<k} of √((δ/(√μ + √λ))² + 4√(μλ) sin²(θ/2))/√λ (δ = μ − λ) from enclosures (μ_lo, μ_hi) in S-units and
    angle balls: ‖√μ v − √λ w‖² = (√μ − √λ)² + 4√(μλ) sin²(θ/2) for unit v, w at angle θ, with no cancellation."""
    worst = None
    with flint.ctx.workprec(ANGLE_PREC):
        for i, ((m_lo, m_hi), angle) in enumerate(zip(mus, angles)):
            mu = fraction_ball(m_lo, m_hi)
            lam = fraction_ball(lin.lower(i), lin.upper(i))
            delta = fraction_ball(m_lo - lin.upper(i), m_hi - lin.lower(i))
            along = delta / (mu.sqrt() + lam.sqrt())
            half = (angle / 2).sin()
            value = (along * along + 4 * (mu * lam).sqrt() * half * half).sqrt() / lam.sqrt()
            worst = value if worst is None else ball_max(worst, value)
        return ball_ends(worst)


def fraction_ball(lo: Fraction, hi: Fraction) -> flint.arb:
    """A ball containing [lo, hi] (exact rationals)."""
    return flint.arb(flint.fmpq(lo.numerator, lo.denominator)).union(flint.arb(flint.fmpq(hi.numerator, hi.denominator)))


def ball_max(a: flint.arb, b: flint.arb) -> flint.arb:
    """A ball containing max(x, y) for every x in a, y in b."""
    lo = a.lower() if a.lower() > b.lower() else b.lower()
    hi = a.upper() if a.upper() > b.upper() else b.upper()
    return flint.arb(lo).union(flint.arb(hi))
