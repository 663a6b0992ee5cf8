"""Repeated linear eigenvalues (issue 24, Build 2a–b): the determined eigenprojection onto a whole tied
eigenspace over σ, and the σ → ∞ splitting of a linear tie.

(a) For an exact linear tie λ_a = … = λ_(z−1) (:func:`~precise_kpca.certify.linear_ties.tied_linear_eigenvalues`)
the top-k eigenprojection with k = z (Algorithm 1's last group then holds the whole eigenspace) does not depend
on a basis: ``measure(X, "eigenprojection", σ, k=z)`` is rigorous at every σ, while k inside the run is
undetermined (NaN with the proof).

(b) First order: the Gaussian eigenvalues μ_a..μ_(z−1) of σ_X² H K_G H satisfy μ_i = λ + ε² s_i + O(ε⁴),
s_i the eigenvalues of the compression W_Jᵀ E₁ W_J (Kato II.2; ε = 1/σ_X). :func:`tie_splitting` encloses s_i
(:func:`.enclosed_limits._block_shifts`: the exact pencil (Ĉ_JJ, Ĝ_JJ), Arb) and compares them with
σ_X²(μ_i − λ) from the structured enclosures of μ_i at a large σ (Kato–Temple / Li–Li on exact products,
:func:`~precise_kpca.measures.structured_enclosed.certificate`). Both sides are rigorous intervals; their
agreement up to O(ε²) is the check. A symmetry that forces the tie at every σ (:mod:`.symmetry`) makes all s_i
equal; an accidental linear tie splits.

Hand-written glue: the enclosures are the library's; this module only puts the two sides in the same units
(S-units of :mod:`~precise_kpca.certify.linear_enclosure`: both A_S and E₁_S carry the factor N²2^(−2e)).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from ..measures.intervals import fraction_ball
from ..measures.structured_enclosed import certificate
from ..validation import check_data
from .enclosed_limits import _block_shifts, enclose

_PREC = 256


@dataclass(frozen=True)
class Splitting:
    """First-order shifts of one linear tie and the scaled Gaussian eigenvalue differences at one σ.

    Attributes
    ----------
    block : (int, int)
        [a, z) of the tie.
    sigma : Fraction
    shifts : list of (float, float)
        Enclosures of s_i (S-units), descending.
    scaled : list of (float, float)
        Enclosures of σ_X²(μ_i − λ) (S-units), descending.
    """

    block: tuple
    sigma: Fraction
    shifts: list
    scaled: list

    def relative_spread(self) -> float:
        """(max s − min s)/max |s| from the midpoints: 0 for a tie the symmetry keeps."""
        mids = [(lo + hi) / 2 for lo, hi in self.shifts]
        return (max(mids) - min(mids)) / max(abs(v) for v in mids)


def tie_splitting(X, block: tuple[int, int], sigma: Fraction, *, bits: int = 256, digits: int = 12) -> Splitting:
    """Enclose the first-order splitting of the tie ``block`` and σ_X²(μ_i − λ) at ``sigma`` (module docstring).

    Raises
    ------
    ValueError
        If ``block`` is not an exact tie of X's linear eigenvalues.
    RouteUnavailable
        σ is below the structured range (no certified Gaussian eigenvalues there).
    """
    X = check_data(X)
    enc = enclose(X, bits)
    if tuple(block) not in enc.blocks:
        raise ValueError(f"block {block} is not an exact tie of the linear eigenvalues (ties: "
                         f"{[b for b in enc.blocks if b[1] - b[0] > 1]})")
    a, z = block
    cert = certificate(X, Fraction(sigma), digits=digits)
    if z > cert.t:
        raise ValueError(f"the structured top block holds {cert.t} eigenvalues; the tie ends at {z}")
    with flint.ctx.workprec(_PREC):
        shifts = [_ends(b) for b in _block_shifts(enc, a, z)]
        s = flint.arb(flint.fmpq(Fraction(sigma).numerator, Fraction(sigma).denominator))
        scale = enc.d_x2 * s * s
        # μ_i − λ exactly first: in 256-bit balls it kept 2^-256 of λ, none of a shift of 10^-121 λ (σ = 2^200)
        scaled = [_ends(fraction_ball(cert.top.lower[i] - cert.lin.upper(a), cert.top.upper[i] - cert.lin.lower(a))
                        * scale) for i in range(a, z)]
    return Splitting(tuple(block), Fraction(sigma), sorted(shifts, reverse=True), scaled)


def _ends(ball: flint.arb) -> tuple[float, float]:
    return float(ball.lower()), float(ball.upper())


def cross_family(scale: int = 1) -> np.ndarray:
    """An accidental linear tie: (3, 0), (−1, 0), (−2, 0), (0, 3), (0, −1), (0, −2) (times ``scale``).

    Centered, Σx² = Σy² = 14 and Σxy = 0, so L has one eigenvalue of multiplicity 2; the only symmetry is the
    swap x ↔ y (a group of order 2, 1-dimensional irreducibles only), which forces no Gaussian tie.
    """
    arm = [3, -1, -2]
    return np.array([[v, 0] for v in arm] + [[0, v] for v in arm], dtype=np.float64) * scale
