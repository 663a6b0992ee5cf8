"""Eigen measures from a refined many-digit eigensystem of an arb-enclosed Gram: the ``refined-enclosure`` route.

The two other rigorous eigen routes stop at the binary128 Gram's noise (~1e-30 of ‖A‖): they cannot separate
Gaussian eigenvalues closer than that, nor carry 30+ digits at moderate σ. Here A (S-units, see
:mod:`precise_kpca.certify.linear_enclosure`) is enclosed at any precision and its eigensystem refined to match:

1. **A with a rigorous bound** (:func:`~.refined_gram.gram_enclosure`): N²·A_S exact on a grid, with a
   Frobenius bound on its distance to the true A_S (:mod:`.refined_gram`).
2. **Refine** (:func:`~precise_kpca.numerics.eigen_refine.refine_eigensystem`, tier 1, ``input_error`` = that
   bound): its value bounds hold for the true A_S. Tier 1 is what the measures use: Eq. 18 compares all
   N eigenvalues in absolute terms (relative to λ_1), and only the top k eigenvectors enter Algorithm 1 and
   Theorem 3; tier 2's relative accuracy on every eigenpair costs about 5× more (61 s against 13 s at N = 1000).
3. **The top block, by Rayleigh–Ritz on exact products** (:func:`spectrum_enclosure`). The refinement's bounds
   inside a cluster stop at about 1e-29 of |θ| (its float64 rotations of a cluster, its double-double Rayleigh
   quotients), whatever the precision: a near-tie below that is never split by them. So its top vectors U (N×m,
   dyadic, the block [0, m) extended to an edge its enclosures separate) only give exact G = UᵀU, H = UᵀÂU and
   Q = (ÂU)ᵀ(ÂU). With U_o = U G^(−1/2), B = U_oᵀÂU_o (eigenvalues: the pencil (H, G), enclosed by Arb) and
   R = ÂU_o − U_oB = (I − P_U)ÂU G^(−1/2), ‖R‖_F² ≤ ‖ÂU − UC‖_F²/λ_min(G) for any C
   (:func:`~precise_kpca.certify.ritz.ritz_pencil`, no exact solve); for the true A = Â + Δ (‖Δ‖₂ ≤ δ) write A in the basis
   [U_o, U_⊥] as [[B_t, R_tᵀ], [R_t, C_t]] with ‖B_t − B‖₂ ≤ δ and ‖R_t‖₂ ≤ ε = ‖R‖_F + δ. Weyl puts the sorted
   eigenvalues of diag(B_t, C_t) within ε of A's; if the Ritz enclosures widened by δ lie above every other
   enclosure widened by ε, by η > 0, B_t's eigenvalues take the top m places and C_t's lie below, η apart; then
   Li–Li gives |λ_j(A) − λ_j(B_t)| ≤ 2ε²/(η + √(η² + 4ε²)) ≤ ε²/η, so λ_j ∈ ritz_j ± (δ + ε²/η), j < m.
   For a group J ⊂ [0, m) the Ritz vectors V̂_J = U·Y_J (Y_J approximate eigenvectors of the pencil, dyadic) get
   Davis–Kahan from exact |J|×|J| products (:func:`~precise_kpca.certify.eigen_enclosure.ritz_subspace_sin_theta`)
   against every enclosure: ‖sin Θ(span V̂_J, V_J)‖₂ ≤ (‖ÂV̂_o − V̂_o(V̂_oᵀÂV̂_o)‖_F + δ)/gap. Nothing here rests on
   the refinement's vector bounds; its value enclosures bound the eigenvalues below the block. Where its basis
   stalled (inside a cluster its bounds never reach the target, so it keeps an early basis), Newton steps on the
   block's subspace first bring ‖R‖_F down towards δ (:func:`_polished`).
4. **Measures** as on the binary128 route (:mod:`.intervals`: Algorithm 1's groups decided on the enclosures,
   angles in ball arithmetic, Theorem 3 by :func:`~.intervals.pc_from_parts`), against a linear enclosure whose
   grid is finer than the refinement's target.

:func:`escalate` raises the precision until the digits asked for are certified or a maximum is reached; a group
that is still not separated then raises InsufficientPrecision with the precision the Ritz values' gap asks for
(or, for a cluster below every precision at small σ, the size of the off-diagonal kernel entries).

Guarantee: rigorous, given IEEE float64 BLAS (the refinement's products are exact integer arithmetic on it) and
Arb's ball semantics. Hand-written because no library encloses a whole symmetric eigensystem at hundreds of digits
in O(N³) float64 work: Arb's ``arb_mat_eig_simple`` needs simple eigenvalues and works at full precision
throughout; mpmath's ``eigsy`` gives no bounds and costs O(N³) multiprecision operations.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import flint
import mpmath
import numpy as np

from ..arith import ozaki
from ..arith.dyadic import Dyadic, mpf_matrix_to_dyadic
from ..arith.fixed import FixedMatrix
from ..arith.rounding import sqrt_up
from ..backends.base import as_fraction
from ..certify.eigen_enclosure import ritz_subspace_sin_theta
from ..certify.ritz import gram_lower_bound, ritz_pencil
from ..certify.linear_enclosure import LinearEnclosure, linear_enclosure
from ..errors import InsufficientPrecision, InternalCheckFailed
from ..numerics import theorems
from ..numerics.eigen_refine import input_bits, refine_eigensystem
from ..numerics.data import data_state
from .intervals import aggregate as aggregate_balls
from .intervals import check_k, group_angle, linear_groups_exact, pc_interval_of
from .refined_gram import GramEnclosure, _log2, gram_enclosure

DIGIT_BITS = math.log2(10)
GUARD_DIGITS = 10  # tier 1 takes eigenvalues within 2**24 (7 digits) of its target for noise; 3 more to spare
MAX_BLOCK = 32  # refined vectors certified as one Rayleigh–Ritz block (its exact m×m products and Arb's m×m eig)
SHARED_BLOCK = 5  # the refinement returns at least this many vectors, so measures with k ≤ 5 share one
_VECTOR_GUARD_BITS = 40  # the refined vectors' dyadic grid stays this far below the target
_LINEAR_GUARD_DIGITS = 20  # the linear enclosure's radius stays this far below the refinement's target
_ESTIMATE_GUARD_DIGITS = 20  # the pencil's eigensystem in mpmath: this far below the refinement's target
_RESOLVED = 2.0**-40  # float64 eigenvalue gaps below this (relative to ‖A‖) are not resolved by float64 eigh
_POLISH_STEPS = 4  # Newton steps on the block's subspace (each gains about log10(gap / (2^-53‖A‖)) digits)
_MIN_LINEAR_BITS = 256  # as the binary128 route's linear enclosure (enclosed.LINEAR_BITS)


# -- 2. the refined eigensystem, enclosed ------------------------------------------------------------------------
def _refined(X: np.ndarray, sigma, median: str, dps: int, k: int):
    """(GramEnclosure, RefinedEigensystem, seconds) at ``dps`` digits with the top k vectors (kept: the last two)."""
    start = time.perf_counter()
    gram = gram_enclosure(X, sigma, bits=input_bits(X.shape[0], dps, tier=1), median=median)
    built = time.perf_counter()
    refined = refine_eigensystem(gram.fixed, dps=dps, tier=1, k=k, input_error=gram.error)
    return gram, refined, {"gram": built - start, "refinement": time.perf_counter() - built}


@dataclass(frozen=True)
class RefinedEnclosure:
    """A's eigenvalues enclosed, and the top block of refined eigenvectors with its exact Rayleigh–Ritz data.

    Units: those of :attr:`GramEnclosure.fixed` (S-units / ``unit``); :meth:`lower` and :meth:`upper` give
    S-units.

    Attributes
    ----------
    lows, highs : tuple of Fraction, length N
        Eigenvalue i (descending) of the true A lies in [lows[i], highs[i]].
    estimates : tuple of Fraction, length m
        The Ritz values (eigenvalues of the pencil (H, G)) from mpmath at dps + 20 digits, descending: within
        about δ of A's, whatever the enclosures' widths (for :meth:`needed_dps` only).
    basis : Dyadic, shape (N, m)
        U: the refined top-m vectors on a dyadic grid; the block [0, m) ends at an edge the enclosures separate.
    products : tuple of Dyadic, each shape (m, m)
        Exact G = UᵀU, H = UᵀÂU, Q = (ÂU)ᵀ(ÂU).
    rotation : Dyadic, shape (m, m)
        Approximate eigenvectors of the pencil (columns, descending): the Ritz vectors are U·rotation.
    delta : Fraction
        ‖A − Â‖₂ ≤ delta.
    kernel_digits : int
        −log10 of the largest off-diagonal kernel entry between distinct rows (see :class:`GramEnclosure`).
    unit : Fraction
        S-units per unit here (2^shift/N²).
    linear : LinearEnclosure
    dps : int
    seconds : dict
    """

    lows: tuple
    highs: tuple
    estimates: tuple
    basis: Dyadic
    products: tuple
    rotation: Dyadic
    delta: Fraction
    kernel_digits: int
    unit: Fraction
    linear: LinearEnclosure
    dps: int
    seconds: dict

    @property
    def n(self) -> int:
        return len(self.lows)

    @property
    def block(self) -> int:
        return self.basis.shape[1]

    def lower(self, i: int) -> Fraction:
        """Lower end of eigenvalue i's enclosure, S-units."""
        return self.lows[i] * self.unit

    def upper(self, i: int) -> Fraction:
        return self.highs[i] * self.unit

    def separated(self, edge: int) -> bool:
        """Whether eigenvalues edge − 1 and edge are proven apart (True at the ends of the spectrum)."""
        return not 0 < edge < self.n or self.lows[edge - 1] > self.highs[edge]

    def needed_dps(self, edge: int) -> int | None:
        """Digits that would separate eigenvalues edge − 1 and edge (an estimate; None when unknown).

        From the gap of the Ritz value estimates where it is above this precision's resolution 10^−dps·‖A‖ (below
        it the estimates are noise); else, where the off-diagonal kernel entries lie below that resolution (K ≈ I:
        the top eigenvalues split at about their size), from those entries (a lower estimate).
        """
        norm = max(abs(self.lows[0]), abs(self.highs[0]))
        gap = abs(self.estimates[edge - 1] - self.estimates[edge]) if 0 < edge < self.block else Fraction(0)
        if gap > norm * Fraction(1, 10**self.dps):
            needed = math.ceil((_log2(norm) - _log2(gap)) / DIGIT_BITS) + GUARD_DIGITS
            return max(needed, self.dps + GUARD_DIGITS)
        if self.kernel_digits > self.dps:
            return self.kernel_digits + GUARD_DIGITS
        return None


def spectrum_enclosure(X: np.ndarray, sigma: Fraction, *, dps: int, median: str = "full",
                       block: int = 1) -> RefinedEnclosure:
    """The :class:`RefinedEnclosure` of A = σ_X² H K_G H at ``dps`` digits whose block holds the top ``block``.

    Parameters
    ----------
    X : ndarray, shape (N, d)
        Validated data.
    sigma : Fraction
    dps : int
        Target digits of the refinement, relative to ‖A‖ (tier 1).
    median : {"full", "pairs"}
    block : int
        Eigenvectors needed (the block is extended to the next separated edge).

    Raises
    ------
    InsufficientPrecision
        The top ``block`` eigenvalues belong to a cluster of more than :data:`MAX_BLOCK` at this precision, or
        the block is not separated from the rest.
    """
    return data_state(X).derived(_enclosure_cached, sigma, median, dps, block, keep=4)


def _enclosure_cached(X: np.ndarray, sigma, median: str, dps: int, block: int) -> RefinedEnclosure:
    n = X.shape[0]
    k = min(n, max(block, SHARED_BLOCK))
    gram, refined, seconds = data_state(X).derived(_refined, sigma, median, dps, k, keep=2)
    lows, highs = _value_ends(refined)
    stop = _block_end(lows, highs, min(block, n))
    if stop > MAX_BLOCK:
        raise InsufficientPrecision(
            f"the top {block} Gaussian eigenvalues lie in a cluster of {stop} or more that the enclosures at {dps} "
            f"digits do not split (at most {MAX_BLOCK} are treated as one block)",
            needed_dps=gram.kernel_digits + GUARD_DIGITS if gram.kernel_digits > dps else None)
    if stop > k:
        gram, refined, seconds = data_state(X).derived(_refined, sigma, median, dps, stop, keep=2)
    return _block_enclosure(X, gram, refined, lows, highs, dps, stop, seconds)


def _value_ends(refined) -> tuple[list, list]:
    """The refinement's eigenvalue enclosures values ∓ bounds as exact rationals (units of the fixed A)."""
    pairs = [(as_fraction(v), as_fraction(b)) for v, b in zip(refined.values, refined.value_error_bounds)]
    return [v - b for v, b in pairs], [v + b for v, b in pairs]


def _block_end(lows: list, highs: list, block: int) -> int:
    """The least m ≥ block at which the enclosures separate m − 1 from m (N if none)."""
    return next((m for m in range(block, len(lows)) if lows[m - 1] > highs[m]), len(lows))


def _block_enclosure(X, gram: GramEnclosure, refined, lows: list, highs: list, dps: int, m: int,
                     seconds: dict) -> RefinedEnclosure:
    """Rayleigh–Ritz on the refined top-m vectors with exact products (module docstring, 3.)."""
    start = time.perf_counter()
    bits = math.ceil(dps * DIGIT_BITS) + _VECTOR_GUARD_BITS
    lows, highs = list(lows), list(highs)
    delta = Fraction(gram.error)
    block = _polished(gram.fixed, _block(gram.fixed, mpf_matrix_to_dyadic(refined.vectors[:, :m], bits), dps),
                      delta, bits, dps)
    ritz = [theorems.weyl(lo, hi, delta) for lo, hi in _ritz(block.G, block.H, bits + 64)]  # B_t's, from B's
    # Li–Li's root-free radius ε²/η (module docstring, 3.)
    bounds = theorems.li_li(ritz, block.residual + delta, below=max(highs[m:]) if m < len(lows) else None, arith=None)
    if bounds is None:
        raise InsufficientPrecision(f"the block of the top {m} refined vectors is not separated from the rest "
                                    f"at {dps} digits")
    for j, (lo, hi) in enumerate(bounds):
        lows[j], highs[j] = max(lows[j], lo), min(highs[j], hi)
    lin = linear_enclosure(X, max(_MIN_LINEAR_BITS, math.ceil((dps + _LINEAR_GUARD_DIGITS) * DIGIT_BITS)))
    seconds = dict(seconds, block=time.perf_counter() - start)
    return RefinedEnclosure(lows=tuple(lows), highs=tuple(highs), estimates=block.estimates, basis=block.basis,
                            products=block.products, rotation=mpf_matrix_to_dyadic(block.vectors, bits), delta=delta,
                            kernel_digits=gram.kernel_digits, unit=gram.unit, linear=lin, dps=dps,
                            seconds=seconds)


def _ritz(G: flint.fmpq_mat, H: flint.fmpq_mat, prec: int) -> list:
    """Arb's enclosures of the eigenvalues of the pencil (H, G) (descending; a cluster gets one common enclosure),
    at ``prec`` bits or, where Arb fails to isolate them (near-ties close to that precision), twice or four times
    it."""
    for bits in (prec, 2 * prec, 4 * prec):
        pencil = ritz_pencil(G, H, prec=bits)
        if pencil is not None:
            return pencil.values
    raise InsufficientPrecision(f"Arb could not enclose the Ritz values of the top {G.nrows()} refined vectors "
                                f"at {4 * prec} bits")


@dataclass(frozen=True)
class _Block:
    """A basis U of the top block with its exact products and the pencil's approximate eigensystem."""

    basis: Dyadic
    image: Dyadic  # ÂU, exact
    products: tuple  # Dyadic UᵀU, UᵀÂU, (ÂU)ᵀ(ÂU)
    G: flint.fmpq_mat
    H: flint.fmpq_mat
    residual: Fraction  # ≥ ‖ÂU_o − U_o B‖_F (U_o = U G^(−1/2), B = U_oᵀÂU_o): ‖(I − P_U)ÂU‖_F / √λ_min(G)
    estimates: tuple
    vectors: np.ndarray


def _block(fixed: FixedMatrix, basis: Dyadic, dps: int) -> _Block:
    """The :class:`_Block` of a basis: exact products with Â, the residual bound, the pencil in mpmath."""
    image = Dyadic.from_fixed(ozaki.matmul(fixed, basis.to_fixed()))  # exact: no bits, no grid
    products = (basis.T @ basis, basis.T @ image, image.T @ image)
    fit = ritz_pencil(*products[:2], prec=math.ceil(dps * DIGIT_BITS), square=products[2], values=False)
    lam_min = gram_lower_bound(products[0])
    if fit is None or not lam_min > 0:
        raise InsufficientPrecision(f"the basis of the top {basis.shape[1]} refined vectors is numerically singular "
                                    f"at {dps} digits")
    G, H = (p.to_fmpq() for p in products[:2])
    estimates, vectors = _pencil_eigensystem(G, H, dps + _ESTIMATE_GUARD_DIGITS)
    return _Block(basis, image, products, G, H, sqrt_up(fit.residual2 / lam_min), estimates, vectors)


def _polished(fixed: FixedMatrix, block: _Block, delta: Fraction, bits: int, dps: int) -> _Block:
    """Newton steps on the block's invariant subspace while its residual exceeds ‖Δ‖ bound delta and halves.

    The refinement keeps the basis whose *bounds* scored best; inside a cluster its bounds stall at the floor of
    the module docstring (3.) from the first check on, so the basis it returns can be far less accurate than its
    last one (residual 1e-63 of ‖A‖ at 90 digits on the 8-row example of the tests). Each step solves
    (A − θ_j)c_j = −r_j on the float64 eigenvectors outside the block (no accuracy is assumed: the exact
    products of the next basis say what it achieved).
    """
    eig = None
    for _ in range(_POLISH_STEPS):
        if block.residual <= delta:
            break
        if eig is None:
            w, V = np.linalg.eigh(fixed.to_float64())
            eig = (w[::-1].copy(), V[:, ::-1].copy())
        candidate = _block(fixed, _newton_step(block, *eig, bits), dps)
        if not candidate.residual < block.residual / 2:
            break
        block = candidate
    return block


def _newton_step(block: _Block, w: np.ndarray, V: np.ndarray, bits: int) -> Dyadic:
    """Ritz vectors Y plus the float64 correction −Σ_{i ≥ m} v_i v_iᵀ r_j / (λ_i − θ_j), r = ÂY − YΘ exact."""
    m = len(block.estimates)
    rotation = mpf_matrix_to_dyadic(block.vectors, bits)
    Y = block.basis @ rotation
    theta = _diagonal(block.estimates)
    residual = (block.image @ rotation - Y @ theta).to_float64()
    outside = V[:, m:]
    theta64 = np.array([float(t) for t in block.estimates])
    gaps = w[m:, None] - theta64[None, :]
    # gaps float64 cannot resolve get no correction (a step that does not halve the residual is discarded)
    resolved = np.abs(gaps) > _RESOLVED * np.max(np.abs(w))
    coefficients = np.where(resolved, outside.T @ residual, 0.0) / np.where(resolved, gaps, 1.0)
    return (Y + Dyadic.from_float64(-(outside @ coefficients))).rounded(bits)


def _diagonal(values) -> Dyadic:
    """The exact diagonal matrix of dyadic rationals."""
    exp2 = min(-(v.denominator.bit_length() - 1) for v in values)
    m = len(values)
    ints = [int(values[i] * Fraction(2) ** -exp2) if i == j else 0 for i in range(m) for j in range(m)]
    return Dyadic(flint.fmpz_mat(m, m, ints), exp2)


def _pencil_eigensystem(G: flint.fmpq_mat, H: flint.fmpq_mat, dps: int) -> tuple[tuple, np.ndarray]:
    """Eigenvalues (Fractions, descending) and eigenvectors (shape (m, m) of mpf, columns in that order) of the
    pencil (H, G), from mpmath at ``dps`` (an approximation: the certificate of :func:`group_basis` holds for
    whatever basis it gets). G = LLᵀ, vectors L⁻ᵀ·eig(L⁻¹HL⁻ᵀ)."""
    ctx = mpmath.MPContext()
    ctx.dps = dps
    m = G.nrows()
    to_mp = lambda M: ctx.matrix([[ctx.mpf(int(M[i, j].p)) / int(M[i, j].q) for j in range(m)] for i in range(m)])
    L_inv = ctx.inverse(ctx.cholesky(to_mp(G)))
    C = L_inv * to_mp(H) * L_inv.T
    values, vectors = ctx.eigsy((C + C.T) / 2)
    vectors = L_inv.T * vectors
    order = sorted(range(m), key=lambda j: -values[j])
    return (tuple(as_fraction(values[j]) for j in order),
            np.array([[vectors[i, j] for j in order] for i in range(m)], dtype=object))


# -- 3. subspaces -----------------------------------------------------------------------------------------------
def group_basis(enc: RefinedEnclosure, start: int, stop: int) -> tuple[Dyadic, Fraction]:
    """The exact basis of eigenvector group [start, stop) (Ritz vectors U·rotation) and its ‖sin Θ‖₂ bound
    (Davis–Kahan on exact products against every eigenvalue's enclosure, module docstring 3.).

    Raises
    ------
    InsufficientPrecision
        An edge of the group is not separated at this precision, or the bound is not below 1.
    """
    if stop > enc.block:
        raise InternalCheckFailed(f"group [{start}, {stop}) reaches beyond the refined block of {enc.block}")
    for edge in (start, stop):
        if not enc.separated(edge):
            raise InsufficientPrecision(
                f"Gaussian eigenvalues {edge - 1} and {edge} are not separated by their enclosures at {enc.dps} "
                f"digits (width {float((enc.highs[edge] - enc.lows[edge]) / enc.highs[0]):.2g} of λ_1)",
                needed_dps=enc.needed_dps(edge))
    q = enc.rotation.columns(start, stop)
    G, H, Q = ((q.T @ p @ q).to_fmpq() for p in enc.products)
    bound = ritz_subspace_sin_theta(G, H, Q, enc.delta, enc.lows, enc.highs, start, stop,
                                    prec=math.ceil(enc.dps * DIGIT_BITS) + 64)
    if bound is None or not bound < 1:
        raise InsufficientPrecision(f"eigenvector group [{start}, {stop}) is not bounded at {enc.dps} digits",
                                    needed_dps=2 * enc.dps)
    return enc.basis @ q, bound


def _group_angle(enc: RefinedEnclosure, start: int, stop: int):
    """Ball containing ∠(V_J, W_J) for group J = [start, stop) (see :func:`.intervals.group_angle`)."""
    enc.linear.sin_theta(start, stop)  # an exact linear tie at the group's edge: Undetermined, before the Gaussian
    return group_angle(*group_basis(enc, start, stop), enc.linear, start, stop)


# -- 4. measures ------------------------------------------------------------------------------------------------
def eigenvalue_interval(enc: RefinedEnclosure) -> tuple[Fraction, Fraction]:
    """Interval of ‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ (Eq. 18) from the enclosures of both sides (exact rationals)."""
    lin = enc.linear
    worst_lo = worst_hi = Fraction(0)
    for i in range(enc.n):
        m_lo, m_hi, l_lo, l_hi = enc.lower(i), enc.upper(i), lin.lower(i), lin.upper(i)
        worst_lo = max(worst_lo, m_lo - l_hi, l_lo - m_hi)
        worst_hi = max(worst_hi, m_hi - l_lo, l_hi - m_lo)
    return worst_lo / lin.upper(0), worst_hi / lin.lower(0)


def eigen_distance_interval(enc: RefinedEnclosure, k: int, tau: float, aggregate: str):
    """Interval of EigenDist (Algorithm 1, radians; mpf ends): each group's angle ball widened by both sin Θ."""
    check_k(enc.linear, k, "eigenprojection")
    return aggregate_balls([_group_angle(enc, s, t) for s, t in linear_groups_exact(enc.linear, k, tau)],
                           aggregate_name=aggregate)


def pc_interval(enc: RefinedEnclosure, k: int):
    """Interval of max_{i<k} ‖σ_X PC_G,i − PC_L,i‖ / ‖PC_L,i‖ (Theorem 3; mpf ends)."""
    lin = enc.linear
    return pc_interval_of(lin, k, lambda i: _group_angle(enc, i, i + 1), lambda i: (enc.lower(i), enc.upper(i)))


# -- escalation -------------------------------------------------------------------------------------------------
def first_dps(digits: int) -> int:
    """The first precision tried: the digits asked for and twice the guard. The measures lose the cancellation
    log10(‖L‖/‖E‖) and the gaps' log10(‖A‖/gap) on top of the refinement's digits (at σ = 3/32…2^6 a few digits;
    the Gram's own grid is another 15 digits finer); a short result escalates by what it missed."""
    return digits + 2 * GUARD_DIGITS


def escalate(attempt, digits: int, *, max_dps: int):
    """Run ``attempt(dps)`` (→ Measurement) at rising precision until it certifies ``digits`` or reaches max_dps.

    After an InsufficientPrecision the next precision is the one it names (at least GUARD_DIGITS more) or twice
    the last; after a short result, the last plus the digits missing plus GUARD_DIGITS, unless it certified no
    more than the one before (the digits are then capped elsewhere, e.g. by the angles' ball arithmetic).

    Raises
    ------
    InsufficientPrecision
        Still not separated at ``max_dps``, or the precision it names is beyond ``max_dps`` (not tried);
        ``needed_dps`` where an estimate exists.
    """
    dps, last = min(first_dps(digits), max_dps), None
    while True:
        try:
            m = attempt(dps)
        except InsufficientPrecision as exc:
            needed = exc.needed_dps
            if dps >= max_dps or (needed or 0) > max_dps:
                raise InsufficientPrecision(f"{exc.reason} (the refined route stops at {max_dps} digits)",
                                            needed_dps=needed) from exc
            dps = min(max_dps, max(needed, dps + GUARD_DIGITS) if needed else 2 * dps)
            continue
        if not m.short or dps >= max_dps or (last is not None and m.certified_digits <= last.certified_digits):
            return m
        dps, last = min(max_dps, dps + digits - m.certified_digits + GUARD_DIGITS), m


__all__ = ["GramEnclosure", "RefinedEnclosure", "eigen_distance_interval", "eigenvalue_interval", "escalate",
           "first_dps", "gram_enclosure", "group_basis", "pc_interval", "spectrum_enclosure"]
