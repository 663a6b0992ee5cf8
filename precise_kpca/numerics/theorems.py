"""The enclosure theorems, each written once, in the arithmetic of the values it is given.

Every rigorous eigen route of the package (:mod:`precise_kpca.certify.eigen_enclosure`,
:mod:`precise_kpca.certify.float64_enclosure`, :mod:`precise_kpca.certify.perturbed_enclosure`,
:mod:`precise_kpca.certify.linear_enclosure`, :mod:`precise_kpca.certify.psd`, :mod:`precise_kpca.approx.enclosure`,
the refined route and the first-order limits) and the fast refinement's float64 bounds
(:mod:`precise_kpca.numerics.eigen_refine.bounds`) read their eigenvalue and subspace bounds from the functions below;
they differ only in how they obtain the norms the theorems take (exact products, a-priori float64 bounds, ball
matrices). The module sits in ``numerics``, the lowest layer that applies them. As mpmath's ``eigen_symmetric.py``
cites EISPACK for each routine, each function states its theorem and its source.

Arithmetic. ``+``, ``−``, ``×``, ``÷`` and the comparisons are those of the values themselves; what a theorem needs
beyond them (a square root rounded in a stated direction, the lowest and highest value a result stands for) comes
from an :class:`Arithmetic`:

* :data:`EXACT` — ``Fraction`` (and int): exact; square roots rounded down or up to dyadics
  (:func:`~precise_kpca.arith.rounding.sqrt_down`, :func:`~precise_kpca.arith.rounding.sqrt_up`). float64 data
  enter this arithmetic exactly (``Fraction(x)``) after their a-priori error bounds, as in
  :mod:`precise_kpca.certify.float64_enclosure`.
* :data:`BALL` — ``flint.arb``: every operation returns a ball that contains the exact result, a square root is the
  ball's root, a comparison holds only where it is proven, and a result stands for every value of its ball.
* :data:`FLOAT64` — float64 numbers or NumPy arrays, elementwise, rounded to nearest (see its docstring: not a
  directed arithmetic).

Each theorem holds for exact inputs; in EXACT or BALL its result bounds the exact one in the direction the theorem
states, provided the caller's inputs do (upper bounds of norms, enclosures of eigenvalues). Functions that do not
branch on a comparison take NumPy arrays as values (elementwise); where one branches, the array caller keeps the
guard (e.g. ``np.where(eta > 0, li_li_radius(eps, eta, arith=FLOAT64), np.inf)``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..arith import rounding
from ..arith.balls import exact_fraction

__all__ = ["Arithmetic", "BALL", "EXACT", "FLOAT64", "davis_kahan_gap", "global_radius", "kahan_cluster_radius",
           "kato_temple", "li_li", "li_li_radius", "ostrowski", "ostrowski_radius", "overlap_runs", "sin_theta",
           "split_runs", "weyl"]


@dataclass(frozen=True)
class Arithmetic:
    """What a theorem needs of an arithmetic beyond its values' own ``+ − × ÷`` and comparisons.

    Attributes
    ----------
    sqrt_down : callable
        A value whose lowest end is ≤ √x (x ≥ 0).
    lower, upper : callable
        The lowest / highest value a result stands for (the value itself where results are exact).
    key : callable
        A total order on ``lower``/``upper`` ends (for ``min``/``max``).
    """

    sqrt_down: Callable
    lower: Callable
    upper: Callable
    key: Callable


def _same(x):
    return x


EXACT = Arithmetic(rounding.sqrt_down, _same, _same, _same)
BALL = Arithmetic(lambda x: x.sqrt(), lambda x: x.lower(), lambda x: x.upper(), exact_fraction)
FLOAT64 = Arithmetic(np.sqrt, _same, _same, _same)
"""float64 numbers or NumPy float64 arrays, elementwise, every operation and ``np.sqrt`` rounded to nearest.

Not a directed arithmetic: a theorem's float64 result misses the exact one by a few roundings in either direction,
so it is a bound only after the caller's a-priori safety factor for those roundings (the fast refinement's
``_NORM_SAFETY``, ``1 + 2⁻⁴⁰``, in :mod:`precise_kpca.numerics.eigen_refine.rounding`), applied to the result as
:mod:`precise_kpca.numerics.eigen_refine.bounds` does; its inputs carry their own allowances (read-out and
double-double gap margins) likewise.
"""


# -- eigenvalues ----------------------------------------------------------------------------------------------
def weyl(low, high, norm):
    """Move an eigenvalue enclosure from one symmetric matrix to another.

    *Weyl's inequality* (Weyl 1912; Bhatia, Matrix Analysis, Cor. III.2.6): for symmetric M, M′ with eigenvalues
    sorted alike, ``|λᵢ(M) − λᵢ(M′)| ≤ ‖M − M′‖₂``. So ``λᵢ(M) ∈ [low, high]`` gives
    ``λᵢ(M′) ∈ [low − norm, high + norm]`` for any ``norm ≥ ‖M − M′‖₂`` (e.g. a Frobenius norm).

    Returns
    -------
    (low − norm, high + norm)

    Examples
    --------
    >>> from fractions import Fraction
    >>> weyl(Fraction(2), Fraction(3), Fraction(1, 4))
    (Fraction(7, 4), Fraction(13, 4))
    """
    return low - norm, high + norm


def overlap_runs(lower, upper) -> list[tuple[int, int]]:
    """Maximal runs ``[a, z)`` of consecutive eigenvalues whose enclosures overlap (descending order).

    With one enclosure ``[lower[i], upper[i]]`` per index (e.g. :func:`weyl`'s), the eigenvalues of a run are
    isolated from every other one: ``λ_{a−1} ≥ lower[a−1] > upper[a]`` and ``λ_z ≤ upper[z] < lower[z−1]``, the
    hypothesis of :func:`kato_temple` (runs of one) and :func:`li_li` (longer runs).
    """
    return split_runs([upper[i] < lower[i - 1] for i in range(1, len(lower))]) if len(lower) else []


def split_runs(separated) -> list[tuple[int, int]]:
    """The maximal runs ``[a, z)`` of the indices ``0 … len(separated)``, split after i where ``separated[i]``.

    :func:`overlap_runs` with the separation of neighbours i and i + 1 decided by the caller, for enclosures not
    given as ends in one arithmetic (the refinement compares a double-double gap of centres, less its allowance,
    with the sum of the two radii).
    """
    stops = [i + 1 for i, apart in enumerate(separated) if apart] + [len(separated) + 1]
    return list(zip([0] + stops[:-1], stops))


def global_radius(residual, omega, spread, *, arith: Arithmetic | None = EXACT):
    """ρ with ``|λᵢ(A) − λ̂ᵢ| ≤ ρ`` for every i, from an approximate eigensystem ``(λ̂, X̂)`` of all of A (N×N).

    *Weyl after an exactly orthogonal similarity* (this package's Theorem 2 of
    :mod:`precise_kpca.certify.eigen_enclosure`; the
    similarity is the polar factor W = X̂G^(−1/2), G = X̂ᵀX̂, as in Higham, Functions of Matrices, Thm 8.4): with
    ``ω ≥ ‖G − I‖₂ < 1``, ``R = AX̂ − X̂Λ̂`` and ``S = G^(1/2) − I`` (‖S‖₂ ≤ 1 − √(1 − ω)),
    ``WᵀAW − Λ̂ = WᵀR G^(−1/2) + [S, Λ̂] G^(−1/2)`` and ``‖[S, Λ̂]‖₂ ≤ ‖S‖₂ (λ̂_max − λ̂_min)``, so Weyl gives
    ``ρ = (‖R‖₂ + (1 − √(1 − ω))·spread) / √(1 − ω)``.

    Parameters
    ----------
    residual : ≥ ‖AX̂ − X̂Λ̂‖₂
    omega : ≥ ‖X̂ᵀX̂ − I‖₂, < 1
    spread : λ̂_max − λ̂_min
    arith : Arithmetic or None
        Its ``sqrt_down`` gives √(1 − ω); None: no square root, through ``1 − √(1 − ω) ≤ ω/(2 − ω)`` and
        ``1/√(1 − ω) ≤ 1/(1 − ω)`` (exact rationals, not limited by a rounded root's relative accuracy).
    """
    if arith is None:
        return (residual + omega / (2 - omega) * spread) / (1 - omega)
    root = arith.sqrt_down(1 - omega)
    return (residual + (1 - root) * spread) / root


def kahan_cluster_radius(residual, omega, spread):
    """ρ_J such that some |J| eigenvalues of A (distinct indices) lie within ρ_J of the ``λ̂_J`` (sorted alike).

    *Kahan's theorem* (Parlett, The Symmetric Eigenvalue Problem, Thm 11.5.1): for Q with orthonormal columns and
    symmetric H there are m eigenvalues αⱼ of A with ``|αⱼ − θⱼ| ≤ ‖AQ − QH‖₂``, θ the eigenvalues of H. With
    ``Q = V_J G^(−1/2)`` (G = V_JᵀV_J, ω ≥ ‖G − I‖₂ < 1) and ``H = Λ̂_J``,
    ``AQ − QH = R_J G^(−1/2) + V_J (Λ̂_J G^(−1/2) − G^(−1/2) Λ̂_J)``; with ``‖G^(−1/2)‖ ≤ 1/(1 − ω)``,
    ``‖G^(−1/2) − I‖ ≤ ω/((2 − ω)(1 − ω))`` and ``‖V_J‖ ≤ 1 + ω`` (the commutator shifted to the run's midpoint):
    ``ρ_J = ‖R_J‖₂/(1 − ω) + (1 + ω)·spread·ω/((2 − ω)(1 − ω))``.

    Parameters
    ----------
    residual : ≥ ‖AV_J − V_JΛ̂_J‖₂
    omega : ≥ ‖V_JᵀV_J − I‖₂, < 1
    spread : max λ̂_J − min λ̂_J
    """
    return residual / (1 - omega) + (1 + omega) * spread * omega / ((2 - omega) * (1 - omega))


def kato_temple(theta_low, theta_high, eps2, alpha=None, beta=None):
    """Enclosure of the only eigenvalue λ of A in (α, β), from a unit vector's Rayleigh quotient and residual.

    *Kato–Temple* (Kato 1949; Parlett, The Symmetric Eigenvalue Problem, Thm 10.5.1): for a unit u with Rayleigh
    quotient θ and residual ε = ‖(A − θ)u‖, if ``α < θ < β`` and λ is A's only eigenvalue in (α, β), then
    ``θ − ε²/(β − θ) ≤ λ ≤ θ + ε²/(θ − α)``. Without β (λ the largest eigenvalue) the lower end is θ itself
    (Courant–Fischer); without α (the smallest), the upper end. For θ known only in ``[θ_low, θ_high]`` both ends are
    increasing in θ while ``ε < θ − α`` and ``ε < β − θ``, so the ends are taken at θ_low and θ_high.

    Parameters
    ----------
    theta_low, theta_high : enclosure of θ (equal ends: θ exactly)
    eps2 : ≥ ε²
    alpha, beta : the neighbours' bounds (``λ_next ≤ α``, ``λ_previous ≥ β``); None for −∞ / +∞

    Returns
    -------
    (low, high) or None
        None where the hypotheses do not hold (θ outside (α, β); for an interval θ, ε not below its distance to α
        and β).

    Examples
    --------
    A = diag(3, 1), u = (1, 1)/√2: θ = 2, ε² = 1, and with α = 1 the bound is attained (λ₁ = 3).

    >>> from fractions import Fraction
    >>> kato_temple(Fraction(2), Fraction(2), Fraction(1), alpha=Fraction(1))
    (Fraction(2, 1), Fraction(3, 1))
    """
    if (alpha is not None and not alpha < theta_low) or (beta is not None and not theta_high < beta):
        return None
    if theta_low != theta_high and ((alpha is not None and not (theta_low - alpha) ** 2 > eps2)
                                    or (beta is not None and not (beta - theta_high) ** 2 > eps2)):
        return None
    low = theta_low if beta is None else theta_low - eps2 / (beta - theta_low)
    high = theta_high if alpha is None else theta_high + eps2 / (theta_high - alpha)
    return low, high


def li_li_radius(eps, eta, *, arith: Arithmetic | None = EXACT):
    """The quadratic residual bound: how far the eigenvalues of a block move when its coupling is switched on.

    *Li & Li* (LAA 395 (2005) 183–190, sharpening Mathias, SIMAX 19 (1998) 541–550): for symmetric
    ``[[H₁, Eᵀ], [E, H₂]]`` with ``η = min |λ(H₁) − λ(H₂)| > 0``, the sorted eigenvalues satisfy
    ``|λⱼ − λⱼ(diag(H₁, H₂))| ≤ 2‖E‖₂² / (η + √(η² + 4‖E‖₂²))``.

    Parameters
    ----------
    eps : ≥ ‖E‖₂
    eta : ≤ η, > 0
    arith : Arithmetic or None
        Its ``sqrt_down`` bounds the root below; None: the root-free ``ε²/η`` (the root ≥ η; at most twice the
        sharp radius).

    Examples
    --------
    ``[[a, 2], [2, a − 3]]`` has λ₁ = a + 1: the radius is attained.

    >>> from fractions import Fraction
    >>> li_li_radius(Fraction(2), Fraction(3)), li_li_radius(Fraction(2), Fraction(3), arith=None)
    (Fraction(1, 1), Fraction(4, 3))
    """
    e2 = eps * eps
    if arith is None:
        return e2 / eta
    return 2 * e2 / (eta + arith.sqrt_down(eta * eta + 4 * e2))


def li_li(ritz, eps, above=None, below=None, *, arith: Arithmetic = EXACT):
    """Enclosures of the eigenvalues of a run from the Ritz values of an approximate basis of its subspace.

    Rayleigh–Ritz and :func:`li_li_radius`: with U an orthonormal basis of the run's approximate subspace,
    ``H₁ = UᵀAU`` (eigenvalues: the Ritz values) and ``‖E‖₂ = ‖(I − UUᵀ)AU‖₂ ≤ ε``. By Weyl the eigenvalues of
    ``diag(H₁, H₂)`` lie within ε of A's, so if every Ritz value lies in ``(below + ε, above − ε)`` — ``above`` a
    lower bound of the eigenvalue before the run, ``below`` an upper bound of the one after it — they take exactly
    the run's positions and ``η ≥ min dist(Ritz value, outside that interval)``.

    Parameters
    ----------
    ritz : list of (low, high)
        Enclosures of the Ritz values, descending.
    eps : ≥ ‖(I − UUᵀ)AU‖₂
    above, below : the neighbouring eigenvalues' bounds; None where the run starts (ends) the spectrum
    arith : Arithmetic
        As for :func:`li_li_radius`.

    Returns
    -------
    list of (low, high) or None
        The run's enclosures, descending (the Ritz values themselves when the run is the whole spectrum); None when
        the Ritz values are not separated (η ≤ 0).
    """
    top = above - eps if above is not None else None
    bottom = below + eps if below is not None else None
    dists = ([r_lo - bottom for r_lo, _ in ritz] if bottom is not None else []) + \
        ([top - r_hi for _, r_hi in ritz] if top is not None else [])
    if not dists:  # the whole spectrum: U is a basis of ℝᴺ
        return list(ritz)
    eta = min(dists)
    if not eta > 0:
        return None
    radius = li_li_radius(eps, eta, arith=arith)
    return [(lo - radius, hi + radius) for lo, hi in ritz]


def ostrowski(low, high, omega, *, arith: Arithmetic = EXACT):
    """Enclosure of λₖ(A) from an enclosure of λₖ(VᵀAV), V square and nearly orthonormal.

    *Ostrowski's theorem* (Ostrowski 1959; Horn & Johnson, Matrix Analysis, Thm 4.5.9): for symmetric A and
    nonsingular V, ``λₖ(VᵀAV) = θₖ λₖ(A)`` with ``θₖ ∈ [λ_min(VᵀV), λ_max(VᵀV)] ⊂ [1 − ω, 1 + ω]`` for
    ``ω ≥ ‖VᵀV − I‖₂ < 1``. So λₖ(A) lies in the hull of ``end / factor`` over the four corners
    ``end ∈ {low, high}``, ``factor ∈ {1 − ω, 1 + ω}`` (in ball arithmetic tighter than one ball division).

    Returns
    -------
    (low, high)
        In ``arith``'s ends (``lower``/``upper`` of the corners).
    """
    corners = [end / factor for end in (low, high) for factor in (1 - omega, 1 + omega)]
    return (min((arith.lower(c) for c in corners), key=arith.key),
            max((arith.upper(c) for c in corners), key=arith.key))


def ostrowski_radius(value, omega):
    """Radius of :func:`ostrowski` around a value: ``|λₖ(A) − μ| ≤ ω/(1 − ω)·|μ|`` for ``μ = λₖ(VᵀAV)``.

    From ``λₖ(A) = μ/θₖ``, ``θₖ ∈ [1 − ω, 1 + ω]``: ``|μ/θₖ − μ| = |μ|·|1 − θₖ|/θₖ ≤ |μ|·ω/(1 − ω)``. Elementwise
    (no comparison), for array callers; :func:`ostrowski`'s four corners are tighter.

    Parameters
    ----------
    value : ≥ |λₖ(VᵀAV)|
    omega : ≥ ‖VᵀV − I‖₂, < 1

    Examples
    --------
    >>> from fractions import Fraction
    >>> ostrowski_radius(Fraction(3), Fraction(1, 4))  # μ = 3: λ ∈ [3/(5/4), 3/(3/4)] = [2.4, 4] ⊂ 3 ± 1
    Fraction(1, 1)
    """
    return omega / (1 - omega) * value


# -- invariant subspaces ----------------------------------------------------------------------------------------
def davis_kahan_gap(low, high, above=None, below=None):
    """δ: the separation of a group's eigenvalue interval ``[low, high]`` from every other eigenvalue of A.

    ``above`` bounds the eigenvalue before the group below, ``below`` the one after it above (the eigenvalues are
    sorted, so every other one lies beyond these): ``δ = min(above − high, low − below)``. None when the group is
    the whole spectrum (no other eigenvalue: the subspace is the whole space). δ ≤ 0: not separated.
    """
    gaps = ([above - high] if above is not None else []) + ([low - below] if below is not None else [])
    return min(gaps) if gaps else None


def sin_theta(residual, gap, sigma_min=1):
    """Upper bound on ``‖sin Θ(span Y, V_J)‖₂`` between an approximate basis Y and A's invariant subspace V_J.

    *Davis–Kahan sin Θ* (Davis & Kahan, SINUM 7 (1970) 1–46; Bhatia, Matrix Analysis, Thm VII.3.1, in its
    Sylvester-equation form ``‖Z‖ ≤ ‖ΛZ − ZK‖/δ`` for Hermitian Λ, K with spectra δ apart): for Y with
    ``‖AY − YK‖₂ ≤ residual``, K symmetric with eigenvalues in ``[low, high]`` and the eigenvalues of A outside
    J at least ``gap`` (:func:`davis_kahan_gap`) from that interval,
    ``‖sin Θ‖₂ = ‖V_⊥ᵀ Y (YᵀY)^(−1/2)‖₂ ≤ residual / (σ_min(Y)·gap)``.

    Parameters
    ----------
    residual : ≥ ‖AY − YK‖₂
    gap : ≤ δ, > 0
    sigma_min : ≤ σ_min(Y) (1: Y orthonormal, or the residual already of Y(YᵀY)^(−1/2))
    """
    return residual / (sigma_min * gap)
