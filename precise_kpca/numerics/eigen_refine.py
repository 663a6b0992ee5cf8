"""Fast arbitrary-precision symmetric eigensystems by cluster-aware mixed-precision refinement.

Algorithm (Ogita & Aishima 2018, with the cluster treatment of Ogita & Aishima 2019):

1. ``X₀``: float64 LAPACK eigenvectors of ``A``, held as an exact fixed-point matrix
   (:class:`precise_kpca.backends.ozaki.FixedMatrix`: float64 digit slices). ``A`` is read from its mpf
   entries once (:func:`.eigen_fixed.mpf_matrix_to_fixed`), or given as a ``FixedMatrix`` (e.g. the
   binary128 Gram's words through ``FixedMatrix.from_words``, no mpf objects), and stays a ``FixedMatrix``.
   An ``input_error`` (‖A_true − A‖₂) is added to the returned bounds only: the refinement targets A.
2. Each iteration forms ``P = AX``, ``S = XᵀP`` and ``G = XᵀX`` by Ozaki-scheme products on float64 BLAS
   (``ozaki.matmul(..., grid=)``: each rounded to the grid the step needs, its rounding recorded in the
   result's ``error_bound``), column panel by column panel of X and read out at once (float64 double words:
   no N×N fixed-point product is kept), the Rayleigh quotients ``θᵢ = Sᵢᵢ / Gᵢᵢ`` exactly from the digits
   (``Gᵢᵢ`` by exact column dots), and a float64 correction ``W``:

   - pairs ``(i, j)`` whose gap ``|θᵢ - θⱼ|`` is well above the coupling ``|Sᵢⱼ - θⱼRᵢⱼ|`` get the
     first-order Newton correction ``Eᵢⱼ = (Sᵢⱼ - θⱼRᵢⱼ) / (θⱼ - θᵢ)`` (quadratic convergence);
   - the rest are grouped into clusters: inside a cluster ``Eᵢⱼ = -Rᵢⱼ/2`` (orthogonalise), then the
     cluster is rotated by the float64 eigenvectors of its shifted, rescaled block ``(S - μG)_JJ``
     (to float64 relative accuracy: diagonal ``Gⱼⱼ(θⱼ - μ)`` from the double-double θ, off-diagonal from
     double-word read-outs when float64 ones would not do), plus what the Newton corrections of the
     columns outside the cluster add to that block at second order (``_outside_second_order``, the Schur
     term ``Σ_k T_ka T_kb / θ_k``: left out, it couples the cluster's levels again at ``T² / θ_k``).

   ``X ← X + X (W - I)`` is one more truncated product. On graded spectra (eigenvalue groups decades
   apart) each iteration resolves the next group, then converges quadratically.
3. Precision: ``X`` starts at 64 bits and its bits roughly double per iteration, never finer than the
   products can steer; tier 1 holds ``A`` at ``target + 2 log2 N + 8 + (top-k gap)`` bits and ``X`` at
   ``target + log2 N + gap`` bits; tier 2 uses all bits of ``A`` but, while a graded cluster is being peeled,
   products only to ``2**-(53+40)`` of the block just rotated.
4. Stopping and error bounds use the ``S, G`` of the basis (no extra product), see ``_Refiner._bounds``:
   groups of the vectors not orthogonal to the target (a cluster rotated last) get Ostrowski + Weyl inside
   the group, and the same coupling ``T`` second order inside it (``_group_second_order``: Weyl and Li–Li per
   member, remainder ``ω‖E‖ + O(ω²)|θ|``: a cluster rotated last, orthogonal only to 2**-53, no longer costs
   ``2**-53 |θ|``); across groups the non-orthogonality enters to first order as coupling
   ``T = E - (FΘ + ΘF)/2`` and to second order as ``φ² ‖S‖``; Weyl on ‖T‖ and the Li–Li quadratic block
   bound per separated group (coupling² / gap), intersected through sorted interval ends. Tier 1 thus
   stops once couplings are below ``√(target · gap)`` — 2 iterations on the benchmark Grams. Davis–Kahan's
   sin θ theorem bounds each eigenvector (or, for overlapping enclosures, its invariant subspace) by its
   residual over its gap; where that misses the target, the residual of one virtual Newton step
   ``x + X f`` (``_newton_vector_bound``) gives a bound of about ``‖f‖``, the actual error, instead of
   ``‖r‖ / (smallest gap)``.
"""
from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import dataclass, field

import mpmath
import numpy as np
from mpmath import libmp
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ..backends import ozaki
from ..errors import InternalCheckFailed, NoConvergence
from . import eigen_checkpoint
from .eigen_fixed import integers_to_fixed, mpf_matrix_to_fixed, ratio_to_mpf_tuple

LOG2_10 = math.log2(10)
_START_BITS = 64  # float64 eigenvectors fit in 64-bit fixed point (smaller entries lose only absolute 2**-64)
_W_GUARD = 24  # fractional bits of the integer correction W beyond the target accuracy
_MAX_ITERATIONS = 40
# tier 1: bits of A beyond target, 2 log2 N (Frobenius-to-entry factors of the products) and the top-k gaps
_A_GUARD = 8
_MAX_GAP_BITS = 50  # tier 1's allowance for ‖A‖ / (smallest top-k gap): beyond 2**50 the float64 gaps say nothing
_OUT_GUARD_BITS = 16  # returned eigenvalues carry this many bits beyond the basis and A (their rounding is bounded)

# -- rounding constants: each bounds one float64 rounding or sets one decision, with the reason -----------------
# A pair is clustered unless its first-order correction |F_ij / gap| is below 2**-26: a larger one would
# leave a second-order error above the 2**-53 relative accuracy of the float64 rotation of the cluster's block.
_CLUSTER_FACTOR = 2.0**26
_NORM_SAFETY = 1 + 2.0**-40  # covers float64 rounding in the Frobenius norms of the bounds
_EPS = 2.0**-52  # float64's machine epsilon (2u): one rounding of a sum or product of float64 read-outs
_SHORT_ROUNDING = 2.0**-50  # a few float64 roundings (a short expression of faithful read-outs), relative
_READOUT_SAFETY = 1 + 2.0**-48  # float64 read-outs are faithful (2 ulp); the c-scaling adds a few ulp
_SCALED_ROUNDING = 2.0**-47  # the read-outs and c-scaling (2**-48) plus one rounding of a difference of them
_GAP_ROUNDING = 2.0**-40  # a gap of float64 θ differences shrunk by this relative margin (far above its rounding)
_DD_PAIR = 2.0**-99  # the double-double rounding of two θ (2**-100 each) in a difference G_ii(θ_i - θ_j)
_DD_GAP = 2.0**-100  # the double-double rounding of a gap θ_(a-1) - θ_(a), relative to θ_(a)
_DD_ENDS = 2.0**-103  # a difference of double-double θ (or interval ends) misses by at most this of the θ involved
_WORDS_NEEDED = 2.0**-45  # a shifted block's float64 read-outs do if their rounding is this far below the block
_DIAGONAL_ENOUGH = 2.0**-10  # off-diagonal below this fraction of the target: no rotation (orthonormalisation)
_LINK_MARGIN = 2.0**-6  # pairs non-orthogonal beyond this of √(finest wanted / θ_max) / N are grouped
_NOISE_ROUNDINGS = 2.0**8  # eigenvalues within this many roundings of A's fixed point are noise
_NOISE_MARGIN = 2.0**24  # relative digits (tier 2) or vectors (tier 1) only this far above the noise floor
_LOG = logging.getLogger(__name__)  # INFO: one line per iteration (runs of hours at N = 5404); DEBUG: timings, bounds
_PANEL_BYTES = 1 << 31  # about the working set of one column panel of the N×N products (int64 levels and digits):
# at N = 5404 four panels of 1351 columns, whose slice GEMMs run at 98 % of the full width's speed (414: 80 %)
_CHUNK_ENTRIES = 1 << 21  # entries of one row chunk of the N×N float64 work in bounds and corrections
_SUB_PANELS = 4  # sub-panels per column panel for the triangular tiles of S and G (see _sub_panels)
_X_EXPONENT = 2  # the basis is held with entries below 2 (a near-orthonormal basis has them near or below 1)


@dataclass
class RefinedEigensystem:
    """Result of :func:`refine_eigensystem`.

    Attributes
    ----------
    values : ndarray of mpmath mpf, shape (N,)
        Eigenvalues, descending.
    vectors : ndarray of mpmath mpf, shape (N, m)
        Unit eigenvectors as columns (``m = k`` for tier 1, ``N`` for tier 2); the largest-magnitude
        component of each is positive (first index on ties).
    value_error_bounds : ndarray of mpmath mpf, shape (N,)
        Absolute bounds ``|values[i] - λᵢ(A)|`` (λ sorted descending).
    vector_error_bounds : ndarray of float, shape (m,)
        Bounds on ``‖vectors[:, i] - vᵢ‖₂`` for a unit eigenvector ``vᵢ`` of ``A``; for a member of a
        cluster (see ``clusters``) the bound is on the distance to the cluster's invariant subspace.
    iterations : int
    precision_bits_used : int
        Largest fixed-point precision (bits below ``max |A|``) of the matrices multiplied.
    clusters : list of tuple of int
        Index ranges ``(start, stop)`` of eigenvalues whose bounds do not separate them.
    history : list of dict
        Per iteration: bits of A and X, the largest first-order correction, number of clustered indices, and
        the largest ratio of a bound to its target at the check before the correction (None: no check), and the
        iteration's wall-clock seconds (products to update).
    input_error : mpmath mpf
        The ``input_error`` argument (A's units): ``value_error_bounds`` and ``vector_error_bounds`` hold for any
        matrix within it of the input; 0 for an input taken as exact.
    given_value_error_bounds, given_vector_error_bounds : ndarray
        The same bounds for the input matrix itself (equal to the above when ``input_error`` is 0): what the
        refinement achieved, as opposed to what the input's accuracy allows.
    resumed : dict or None
        For a run resumed from a ``checkpoint``: ``{"iteration": i, "seconds": s}``, the iteration it resumed at
        and the seconds the earlier calls had spent up to their last checkpoint (None: not resumed).
    """

    values: np.ndarray
    vectors: np.ndarray
    value_error_bounds: np.ndarray
    vector_error_bounds: np.ndarray
    iterations: int
    precision_bits_used: int
    clusters: list = field(default_factory=list)
    history: list = field(default_factory=list)
    input_error: object = 0
    given_value_error_bounds: np.ndarray | None = None
    given_vector_error_bounds: np.ndarray | None = None
    resumed: dict | None = None


@dataclass
class _Products:
    """Read-outs of ``S ≈ XᵀAX`` and ``G ≈ XᵀX`` of the current basis (fixed-point products, computed column
    panel by column panel and not kept: ``S_fix``, ``G_fix`` below name those products; their tiles above the
    diagonal blocks are computed, the tiles below are the transposes, so only diagonal blocks are averaged)."""

    s_diag: list  # exact diagonal of S_fix: integers, S_fix_ii = s * 2**s_exp
    g_diag: list  # exact diagonal of XᵀX (column dots): integers, G_ii = g * 2**g_exp
    s_exp: int
    g_exp: int
    S: np.ndarray  # float64 of (S_fix + S_fixᵀ)/2, normalised units
    R: np.ndarray  # float64, G - I (diagonal from the exact column dots; off it the faithful G_fix)
    theta_hi: np.ndarray  # Rayleigh quotients S_fix_ii / G_ii as double-double (hi + lo)
    theta_lo: np.ndarray
    delta_s: float  # entrywise error bound of S_fix (against XᵀA_usedX: P's rounding included)
    delta_g: float  # entrywise error bound of G_fix off the diagonal (the diagonal is exact)
    # second words (for the shifted cluster blocks): (S_fix + S_fixᵀ)/2 ≈ S + s_lo and G_fix ≈ R + g_lo off the
    # diagonal, within about 2**-98 relative (FixedMatrix.to_double_word); all four arrays exactly symmetric
    s_lo: np.ndarray | None = None
    g_lo: np.ndarray | None = None


@dataclass
class _Kept:
    """What the result needs of a checked basis (see ``_Refiner._kept``)."""

    basis: ozaki.FixedMatrix  # tier 1: a copy of the returned columns; tier 2: the basis
    take: np.ndarray  # the returned columns of ``basis``
    cols: np.ndarray  # their indices in the checked basis
    x_bits: int
    R_cols: np.ndarray  # their block of G - I
    s_diag: list
    g_diag: list
    s_exp: int
    g_exp: int
    order: np.ndarray
    vb: np.ndarray  # bounds for A as given
    vec: np.ndarray
    true_vb: np.ndarray  # with the input_error (equal to the above without one)
    true_vec: np.ndarray
    groups: list


def refine_eigensystem(A, *, dps: int, tier: int = 1, k: int | None = None, max_bits: int | None = None,
                       input_error: float = 0.0, checkpoint: str | os.PathLike | None = None):
    """Eigenvalues and eigenvectors of a symmetric matrix to ``dps`` digits, with error bounds.

    Parameters
    ----------
    A : ndarray of mpmath mpf, shape (N, N), or ozaki.FixedMatrix
        Symmetric matrix, read exactly: mpf entries (any mpmath context), or a fixed-point matrix such as
        ``FixedMatrix.from_words([hi, lo], bits=input_bits(N, dps, tier))`` of a double-word Gram
        (:func:`precise_kpca.numerics.binary128_gram.scaled_gaussian_gram_words`), whose ``error_bound`` counts as
        rounding of the input. A nonsymmetric input is symmetrised and the asymmetry is added to the bounds.
    dps : int
        Target decimal digits.
    tier : {1, 2}
        1: every eigenvalue to ``dps`` digits relative to ``‖A‖₂`` and the top ``k`` eigenvectors to
        ``dps`` digits (those whose eigenvalue exceeds ``2**24 10**-dps ‖A‖₂``: below that tier 1 treats the
        spectrum as one cluster and the returned bounds say how well such vectors are known). 2: every eigenpair
        to ``dps`` digits relative to its own eigenvalue, as far as the precision carried by ``A``'s entries
        allows: eigenvalues within ``2**24`` of A's noise get absolute bounds of that size, the noise being the
        larger of A's read rounding and one half step of its grid (``N 2**-(bits+1)`` of ``max |A|``, also for
        an ``A`` given exactly: the basis carries no more bits than A).
    k : int, optional
        Number of leading eigenvectors returned by tier 1 (default ``min(N, 10)``); tier 2 returns all.
    max_bits : int, optional
        Cap on the fixed-point bits used for ``A`` (default: tier 1 what ``dps`` needs, tier 2 all the
        bits the entries carry).
    input_error : float, optional
        Bound on ``‖A_true - A‖₂`` (in ``A``'s units; a Frobenius bound will do, e.g. ``Binary128Gram.error_bound``)
        when ``A`` stands for a matrix known only to that accuracy. The refinement targets ``A`` as given; the
        returned ``value_error_bounds`` and ``vector_error_bounds`` hold for ``A_true`` (Weyl; Davis–Kahan with
        the residual and the gaps widened by it), ``given_*`` for ``A`` itself.
    checkpoint : str or path-like, optional
        File for the state after each iteration (:mod:`.eigen_checkpoint`: written whole, then renamed). A call
        with the same ``A`` and arguments resumes from it (``RefinedEigensystem.resumed``); another ``A`` or other
        arguments raise ValueError. It is removed when the refinement returns.

    Returns
    -------
    RefinedEigensystem
    """
    started = time.perf_counter()
    if tier not in (1, 2):
        raise ValueError(f"tier must be 1 or 2, got {tier!r}")
    if not isinstance(dps, (int, np.integer)) or dps < 1:
        raise ValueError(f"dps must be a positive integer, got {dps!r}")
    if not (isinstance(input_error, (int, float, np.floating)) and math.isfinite(input_error) and input_error >= 0):
        raise ValueError(f"input_error must be a finite nonnegative float, got {input_error!r}")
    if isinstance(A, ozaki.FixedMatrix):
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"A must be a square matrix, got shape {A.shape}")
        n = A.shape[0]
    else:
        A = np.asarray(A, dtype=object)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"A must be a square matrix, got shape {A.shape}")
        n = A.shape[0]
    k = min(n, 10) if k is None else int(k)
    if tier == 1 and not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and N={n}, got {k}")
    if isinstance(A, ozaki.FixedMatrix):
        A_read, exp2, a_bits, read_rounding = _normalised_fixed(A)
        if max_bits is not None and max_bits < a_bits:
            A_read = _exact(A_read.rounded(A_read.exponent + max_bits))
            read_rounding += n * 2.0 ** -(max_bits + 1)
            exp2, a_bits = exp2 + a_bits - max_bits, max_bits
    else:
        a_bits = input_bits(n, dps, tier)
        if max_bits is not None:
            a_bits = max_bits if a_bits is None else min(a_bits, max_bits)
        A_read, exp2, a_bits = mpf_matrix_to_fixed(A, a_bits)
        # ‖ΔA‖₂ ≤ ‖ΔA‖_F ≤ n 2**-(a_bits+1) (normalised units)
        read_rounding = n * 2.0 ** -(a_bits + 1)
    del A  # the refiner may round A_read: no second copy of the input's digits
    # input_error in normalised units; A's exponent can lie far outside float64's range (σ beyond 2**500)
    try:
        scaled_error = math.ldexp(float(input_error), -(exp2 + a_bits)) * _NORM_SAFETY if input_error else 0.0
    except OverflowError:
        scaled_error = math.inf
    if not math.isfinite(scaled_error):
        raise ValueError(f"input_error={input_error!r} is far larger than A itself (its unit is 2**{exp2 + a_bits})")
    # the slice GEMMs use the caller's BLAS threads (threadpoolctl / OPENBLAS_NUM_THREADS)
    refiner = _Refiner(A_read, n, exp2, a_bits, dps, tier, k, max_bits, read_rounding, scaled_error)
    del A_read  # the refiner holds A rounded to the bits it needs (GBs at N = 5404)
    if checkpoint is not None:
        refiner.checkpoint = (checkpoint, started)
    result = refiner.run()
    if checkpoint is not None:
        eigen_checkpoint.remove(checkpoint)
    return result


def input_bits(n: int, dps: int, tier: int = 1) -> int | None:
    """Fixed-point bits below ``max |A|`` that :func:`refine_eigensystem` reads (tier 1), ``None`` for all (tier 2).

    Tier 1 reads enough for the largest top-k gap allowance (50 bits) and then rounds to what the float64 gaps
    ask for; build a ``FixedMatrix`` input with these ``bits`` (more only cost memory).
    """
    if tier != 1:
        return None
    return math.ceil(dps * LOG2_10) + 2 * max(1, math.ceil(math.log2(n))) + _A_GUARD + _MAX_GAP_BITS


def _normalised_fixed(F: ozaki.FixedMatrix):
    """A ``FixedMatrix`` input in the refiner's units: ``(A_read, exp2, a_bits, read_rounding)`` with ``A_read``
    of exponent 1 on the grid ``2**-a_bits`` and ``F = A_read 2**(exp2 + a_bits)``; ``read_rounding`` bounds
    ``‖F_represented - F‖₂`` through F's entrywise ``error_bound`` (Frobenius ≤ n max)."""
    n = F.shape[0]
    shift = 1 - F.exponent
    A_read = ozaki.FixedMatrix(F.digits, 1, F.digit_bits, 0.0)
    a_bits = -A_read.ulp_exp2
    exp2 = F.exponent - 1 - a_bits
    read_rounding = n * math.ldexp(float(F.error_bound), shift) * _NORM_SAFETY
    return A_read, exp2, a_bits, read_rounding


class _Refiner:
    """State of one refinement: fixed-point A, basis X, precision schedule."""

    def __init__(self, A_read, n, exp2, a_bits, dps, tier, k, max_bits, read_rounding, input_error):
        self.n, self.exp2, self.dps, self.tier, self.k = n, exp2, dps, tier, k
        # normalised units: 2**(exp2 + a_bits) ≈ max |A|; A_read = Z 2**-a_bits there
        self.unit_exp = exp2 + a_bits
        self.asym = 0.0
        # reading A to fixed point is a symmetric perturbation (after symmetrising: the mean of two such),
        # read_rounding bounds its ‖ΔA‖₂; input_error (‖A_true - A‖₂) enters only the returned bounds
        self.input_error = input_error
        if not np.array_equal(A_read.digits, A_read.digits.transpose(0, 2, 1)):
            # 2A_sym = A + Aᵀ exactly (units unchanged: one more fractional bit); the skew part is a
            # perturbation of norm ≤ ‖A - Aᵀ‖_F / 2
            Z, z_exp = A_read.to_integers()
            self.asym = float(np.linalg.norm((A_read - A_read.T).to_float64())) / 2 * _NORM_SAFETY
            A_read = integers_to_fixed((Z + Z.T).ravel().tolist(), n, n, z_exp - 1)
            self.exp2 = exp2 - 1
            a_bits += 1
        read_rounding += self.asym
        A_float = A_read.to_float64()
        w, V = np.linalg.eigh(A_float)
        order = np.argsort(-w, kind="stable")
        self.V0 = V[:, order]
        del V
        self.a_norm = float(np.max(np.abs(w)))
        del A_float
        self.target = 10.0**-dps
        # digits of A and X: the widest the products take without re-splitting (22 bits on inner chunks of at
        # most 2048 beyond N = 2048: at N = 5404 about 10 % fewer slice GEMMs than 21 bits)
        self.digit_bits = ozaki.chunked_digit_bits(n)
        if tier == 1:
            target_bits = math.ceil(dps * LOG2_10)
            log2n = max(1, math.ceil(math.log2(n)))
            want = target_bits + 2 * log2n + _A_GUARD + _gap_bits_from_values(w[order], k)
            if max_bits is not None:
                want = min(want, max_bits)
            if want < a_bits:
                # round to the grid 2**-want (normalised units): one more symmetric perturbation
                A_read = _exact(A_read.rounded(A_read.exponent + want, digit_bits=self.digit_bits))
                read_rounding += n * 2.0 ** -(want + 1)
                a_bits = want
        # exactly, in the refinement's digit width (on the same grid)
        A_read = A_read.rounded(A_read.exponent + a_bits, digit_bits=self.digit_bits)
        self.a_bits = a_bits
        self.A_full = _exact(A_read)
        self.a_rounding = read_rounding
        # What the refinement resolves: A's own rounding, and at least one half step of its grid (X carries no
        # more bits than A, so an exactly given A is resolved no further than one rounded to the same grid;
        # without this floor an exact zero eigenvalue would want a zero bound)
        self.resolution = max(read_rounding, n * 2.0 ** -(a_bits + 1))
        # Eigenvalues within a few hundred roundings of A's fixed point are noise; for tier 1 so is everything
        # far below the absolute target. They form one cluster whose block is rotated, never split.
        self.noise = _NOISE_ROUNDINGS * self.resolution
        if tier == 1:
            self.noise = max(self.noise, _NOISE_MARGIN * self.target * self.a_norm)
        self.history = []
        self.checkpoint = None  # (path, perf_counter at the call's start) when the state is saved per iteration

    # -- products ---------------------------------------------------------------------------------
    def _a_at(self, bits):
        """A to at least ``bits`` fractional bits, treated as exact: its leading digits (a view, no copy: A is
        GBs at N = 5404), truncated rather than rounded, which is as good for a step that is not checked.
        Returns (matrix, bits)."""
        A = self.A_full
        bits = min(bits, self.a_bits)
        keep = -(-(bits + A.exponent) // A.digit_bits)
        if keep < A.n_digits:
            A = ozaki.FixedMatrix(A.digits[:keep], A.exponent, A.digit_bits)
        return A, bits

    def _products(self, X, x_bits, a_bits):
        n = self.n
        A, a_bits = self._a_at(a_bits)
        log2n = max(1, math.ceil(math.log2(n)))
        # P = AX kept to a_bits + 16 + log2 n fractional bits (its rounding enters S's error bound); S, G to
        # the accuracy the correction (or the bounds) can use
        if self.tier == 1 and a_bits == self.a_bits:
            # tier 1's a_bits already hold 2 log2 n + 8 guard bits beyond target and gaps: S's error
            # N² 2**-a_bits (from P's rounding) stays below the target by those guard bits
            p_frac = s_frac = g_frac = a_bits
        elif a_bits == self.a_bits:
            # tier 2 at full precision: S's error N² 2**-(a_bits + log2 n) is below A's own rounding
            p_frac, s_frac, g_frac = a_bits + log2n, a_bits, a_bits
        else:
            p_frac, s_frac, g_frac = a_bits + 16 + log2n, a_bits + 8 + log2n, a_bits + 16 + log2n
        g_frac = min(2 * x_bits + 8, g_frac)
        # Column panel J of X: P_J = A X_J; then, sub-panel K by sub-panel K of J, the tiles of S = XᵀP and
        # G = XᵀX above and on the diagonal (rows [0, K.stop)), each rounded on its product's one grid and read
        # out at once (no N×N fixed-point product is kept: at N = 5404 each is GBs). The tiles below the
        # diagonal are the transposed tiles above it: every entry is still one of S_fix's or G_fix's, within
        # delta_s or delta_g of XᵀA_usedX or XᵀX, and S costs about half of a full XᵀP.
        s_hi, s_lo, R, g_lo = (np.empty((n, n)) for _ in range(4))
        s_parts = []
        delta_s = delta_g = 0.0
        for J in _panels(n, n, A.n_digits + X.n_digits):
            P_J = ozaki.matmul(A, _columns(X, J), grid=-p_frac)
            for K in _sub_panels(J):
                X_up = _columns(X, slice(0, K.stop)).T
                S_K = ozaki.matmul(X_up, _columns(P_J, slice(K.start - J.start, K.stop - J.start)), grid=-s_frac)
                s_parts.append(_diag_integers(ozaki.FixedMatrix(S_K.digits[:, K], S_K.exponent, S_K.digit_bits)))
                delta_s = max(delta_s, float(S_K.error_bound))
                hi, lo = S_K.to_double_word()
                del S_K
                _set_upper_tile(s_hi, s_lo, K, hi, lo)
                G_K = ozaki.matmul(X_up, _columns(X, K), grid=-g_frac)
                delta_g = max(delta_g, float(G_K.error_bound))
                hi, lo = G_K.to_double_word()
                del G_K, X_up
                _set_upper_tile(R, g_lo, K, hi, lo)
            del P_J
        # the panels' diagonals on the finest of their grids
        s_exp = min(e for _, e in s_parts)
        s_diag = [int(v) << (e - s_exp) for ints, e in s_parts for v in ints]
        del s_parts
        g_diag, g_exp = ozaki.column_dots(X, X)
        g_diag = [int(v) for v in g_diag]
        _symmetrise_words(s_hi, s_lo)
        S = s_hi
        np.fill_diagonal(R, 0.0)
        one = 1 << -g_exp if g_exp < 0 else None
        if one is None:
            raise InternalCheckFailed("XᵀX has no fractional bits: the basis is not normalised")
        R[np.diag_indices(n)] = [_int_to_float(g - one, -g_exp) for g in g_diag]
        theta_hi, theta_lo = _rayleigh(s_diag, s_exp, g_diag, g_exp)
        return _Products(s_diag, g_diag, s_exp, g_exp, S, R, theta_hi, theta_lo, delta_s, delta_g, s_lo, g_lo)

    # -- one correction ---------------------------------------------------------------------------
    def _correction(self, pr: _Products):
        """Float64 ``W - I`` and the order of its columns by predicted eigenvalue (``W[:, new_order]`` is the
        correction of the reordered basis), with diagnostics.

        ``W - I`` rather than ``W``: the diagonal corrections ``-Rᵢᵢ/2`` are far below float64's
        resolution of 1, so the identity is added in fixed point.
        """
        n = self.n
        th, tl = pr.theta_hi, pr.theta_lo
        order = np.lexsort((-tl, -th))
        noise = np.abs(th) <= self.noise
        # Newton correction E_ij = (S_ij - θ_j R_ij) / (θ_j - θ_i), written as T_ij / (θ_j - θ_i) - R_ij / 2
        # with the symmetric T = S - (θ_i + θ_j) R / 2: the orthogonalising -R/2 then survives when the
        # gap is below float64's resolution of θ. Gaps are double-double differences. By row chunks: W and
        # the cluster flags are the only N×N arrays.
        W = np.empty((n, n))
        clustered = np.empty((n, n), dtype=bool)
        e_max = 0.0
        for I in _row_chunks(n, n):
            own = (np.arange(I.stop - I.start), np.arange(I.start, I.stop))  # the diagonal entries
            mR = ((th[I, None] + th[None, :]) / 2) * pr.R[I]
            T = pr.S[I] - mR
            T[own] = 0.0
            gap = (th[None, :] - th[I, None]) + (tl[None, :] - tl[I, None])
            # T's own float64 rounding counts as coupling: it must stay small against the gap too
            cl = np.abs(gap) <= _CLUSTER_FACTOR * (np.abs(T) + _SHORT_ROUNDING * (np.abs(pr.S[I]) + np.abs(mR)))
            cl |= noise[I, None] & noise[None, :]
            cl[own] = False
            with np.errstate(divide="ignore", invalid="ignore"):
                E = np.where(cl, 0.0, T / gap)
            E[own] = 0.0
            E -= pr.R[I] / 2
            clustered[I] = cl
            cl[own] = True  # separated pairs only
            e_max = max(e_max, float(np.max(np.abs(E[~cl]), initial=0.0)))
            W[I] = E
            del mR, T, gap, cl, E
        clusters = _interval_clusters(clustered, order)
        del clustered
        predicted = th.copy()
        in_cluster = 0
        self.rotated_scale = None  # smallest block scale rotated (sets the next products' precision, tier 2)
        for start, stop in clusters:
            J = order[start:stop]
            if len(J) < 2:
                continue
            in_cluster += len(J)
            # E inside J was set to -R/2 only where the pair itself was flagged: do the whole block
            W[np.ix_(J, J)] = -pr.R[np.ix_(J, J)] / 2
            mu, block = self._shifted_block(pr, J)
            block += self._outside_second_order(pr, W, J, mu)
            scale = np.max(np.abs(block))
            # A block already diagonal to the target is left alone: its float64 rotation would cost
            # orthogonality (2**-53) that the next iterations would have to restore.
            if scale == 0 or np.max(np.abs(block - np.diag(np.diag(block))), initial=0.0) <= self._block_tol(th[J]):
                continue
            block /= scale
            nu, Q = np.linalg.eigh(block)
            del block
            self.rotated_scale = scale if self.rotated_scale is None else min(self.rotated_scale, scale)
            # (I + E)[:, J] Q - I[:, J]
            rotated = W[:, J] @ Q
            rotated[J, :] += Q - np.eye(len(J))
            W[:, J] = rotated
            predicted[J] = mu + nu * scale
        new_order = np.argsort(-predicted, kind="stable")
        return W, new_order, e_max, in_cluster

    def _outside_second_order(self, pr: _Products, W, J, mu) -> np.ndarray:
        """What the Newton corrections ``E_kJ`` of the columns outside the cluster ``J`` add to its shifted block
        (S - μG)_JJ at second order: ``E_OJᵀ Y + Yᵀ E_OJ + E_OJᵀ diag(G_kk (θ_k - μ)) E_OJ`` with
        ``Y = (S - μG)_OJ``; the couplings among the outside columns enter at third order and are left out.

        Rotating the block without it leaves Schur terms ``Σ_k T_ka T_kb / θ_k`` between its columns (phoneme,
        N = 5404: grading level 1 coupled levels 2 and 4 at 2e-21 after the first step, a third iteration).
        """
        outside = np.ones(self.n, dtype=bool)
        outside[J] = False
        O = np.flatnonzero(outside)
        if len(O) == 0:
            return np.zeros((len(J), len(J)))
        E = W[np.ix_(O, J)]
        Y = pr.S[np.ix_(O, J)] - mu * pr.R[np.ix_(O, J)]
        shift = ((pr.theta_hi[O] - mu) + pr.theta_lo[O]) * (1.0 + pr.R[O, O])
        cross = E.T @ Y
        delta = cross + cross.T + E.T @ (shift[:, None] * E)
        return (delta + delta.T) / 2  # exactly symmetric, as the block is

    def _block_tol(self, theta_block) -> float:
        """Off-diagonal size below which a cluster's block needs no rotation (normalised units)."""
        if self.tier == 1:
            return _DIAGONAL_ENOUGH * self.target * self.a_norm
        floor = self.resolution * _NOISE_MARGIN
        return _DIAGONAL_ENOUGH * max(self.target * float(np.min(np.abs(theta_block))), floor)

    def _shifted_block(self, pr: _Products, J):
        """(S - μG)_JJ to float64 relative accuracy (μ a float64 near the cluster), exactly symmetric.

        Off the diagonal from float64 read-outs where their rounding (2**-52 of |S|, |μR|) is 2**-45 below the
        block, else from the double-word read-outs of the fixed-point S and G (an exact product μ G_hi); on the
        diagonal ``G_jj (θ_j - μ)`` with the double-double θ, so the cancellation is exact. By row chunks.
        """
        mu = float(np.mean(pr.theta_hi[J]))
        diag = ((pr.theta_hi[J] - mu) + pr.theta_lo[J]) * (1.0 + pr.R[J, J])
        m = len(J)
        block = np.empty((m, m))
        err = off_max = 0.0
        chunks = _row_chunks(m, m)
        for rows in chunks:
            own = (np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop))
            JJ = np.ix_(J[rows], J)
            S_r, R_r = pr.S[JJ], pr.R[JJ]
            b = S_r - mu * R_r
            size = np.abs(S_r) + abs(mu) * np.abs(R_r)
            size[own] = 0.0
            err = max(err, _EPS * float(np.max(size)))
            b[own] = 0.0
            off_max = max(off_max, float(np.max(np.abs(b))))
            block[rows] = b
            del S_r, R_r, b, size
        scale = max(float(np.max(np.abs(diag))), off_max)
        if err > _WORDS_NEEDED * scale:
            for rows in chunks:
                JJ = np.ix_(J[rows], J)
                g_hi = pr.R[JJ]
                p_hi, p_lo = ozaki.two_product(np.full_like(g_hi, mu), g_hi)
                block[rows] = (pr.S[JJ] - p_hi) + (pr.s_lo[JJ] - p_lo - mu * pr.g_lo[JJ])
                del g_hi, p_hi, p_lo
        # S, s_lo, R and g_lo are exactly symmetric, and so is every entry computed from them
        block[np.diag_indices(m)] = diag
        return mu, block

    # -- bounds -----------------------------------------------------------------------------------
    def _bounds(self, pr: _Products):
        """Eigenvalue and eigenvector bounds (normalised units) from the fixed-point S and G.

        Returns ``(order, vb, vec, groups)`` or None when XᵀX is too far from I: ``order`` sorts the basis
        by Rayleigh quotient (descending), ``vb[i]`` bounds the eigenvalue at position ``pos(i)`` around
        ``θ_i``, ``vec[i]`` the vector (or its group's subspace), ``groups`` the position ranges whose
        bounds do not separate them.

        Chain (each step rigorous; ``c = diag(G)^{-1/2}``, Ŝ = cSc with diagonal θ, Ĝ = cGc unit diagonal):

        1. groups ``g`` of indices linked by ``|Ĝ_ij|`` above the target (clusters rotated last time);
           ``D = I + F_in`` the block diagonal of Ĝ, ``ω_in ≥ max_g ‖F_g‖``; ``C = D^{-1/2}``,
           ``CĜC = I + CF_outC`` with ``‖CF_outC‖ ≤ ω' = (‖F_out‖ + NδG/min G_ii) / (1 - ω_in)``.
           Ostrowski: ``λᵢ(CŜC) = ϑᵢ λᵢ(A_hp)``, ``ϑᵢ ∈ [1 - ω', 1 + ω']``.
        2. ``CŜC = C(Θ + E_in)C + CE_outC + CΔSC``; the block-diagonal part has, block by block, the
           eigenvalues of the pencil ``(Θ_g + E_g, I + F_g)``: by Ostrowski and Weyl inside the block each
           lies within ``r = e_g + ω_g/(1 - ω_g) (|θ| + e_g)`` of its θ (sorted within the block).
        3. Weyl: ``‖CE_outC‖ ≤ η_out = ‖E_out‖ / (1 - ω_in)``, ``‖CΔSC‖ ≤ NδS / (min G_ii (1 - ω_in))``.
        4. Li–Li (quadratic) per group ``g`` whose intervals are separated by ``η_g > 0`` from the others
           widened by η_out: ``|λⱼ - λⱼ(diag(H₁, H₂))| ≤ 2ε²/(η + √(η² + 4ε²))``, ``ε = ‖E_out[:, g]‖ / (1 - ω_in)``.
        Sorted ends: if eigenvalues are matched one-to-one to intervals, the i-th largest lies between the
        i-th largest lower end and the i-th largest upper end; every argument's sorted ends are intersected.
        """
        n = self.n
        th, tl = pr.theta_hi, pr.theta_lo
        gdiag = 1.0 + np.diag(pr.R)
        g_min = float(np.min(gdiag))
        if not g_min > 0.5:
            return None
        c = 1.0 / np.sqrt(gdiag)
        safety = _NORM_SAFETY
        rel = _READOUT_SAFETY
        # -- groups by non-orthogonality --------------------------------------------------------------
        # pairs left out of the groups enter through Φ to first order (as coupling) and φ² ‖Ŝ‖: keep
        # φ ≤ ‖F_out‖_F small against the square root of the finest accuracy wanted
        th_abs = np.abs(th)
        th_max = float(np.max(th_abs))
        wanted = float(np.min(self._wanted(pr)))
        link_tol = _LINK_MARGIN * math.sqrt(wanted / max(th_max, wanted)) / n
        # Ĝ = cGc and Ŝ = cSc (zero diagonals) by row chunks: N×N float64 temporaries are 233 MB each at N = 5404
        chunks = _row_chunks(n, n)
        indices, counts = [], []
        for I in chunks:
            link = np.abs(_scaled_rows(pr.R, c, I)) > link_tol
            counts.append(np.count_nonzero(link, axis=1))
            indices.append(np.nonzero(link)[1].astype(np.int32))
        del link
        indptr = np.concatenate(([0], np.cumsum(np.concatenate(counts))))
        indices = np.concatenate(indices)
        graph = csr_matrix((np.ones(len(indices), dtype=bool), indices, indptr), shape=(n, n))
        n_groups, labels = connected_components(graph, directed=False)
        del graph, indices, indptr, counts
        sizes = np.bincount(labels, minlength=n_groups)
        # cross-group pairs: ‖E_out‖_F, ‖F_out‖_F and, per column, their first-order coupling
        # T = E - (FΘ + ΘF)/2 with its float64 rounding; inside the groups: per column ‖F_g‖², ‖E_g‖²
        e_out2 = phi2 = 0.0
        col_out, col_fin, col_ein = np.zeros(n), np.zeros(n), np.zeros(n)
        for I in chunks:
            G_I = _scaled_rows(pr.R, c, I)
            S_I = _scaled_rows(pr.S, c, I)
            same = labels[I, None] == labels[None, :]
            col_fin += np.sum(np.where(same, G_I, 0.0) ** 2, axis=0)
            col_ein += np.sum(np.where(same, S_I, 0.0) ** 2, axis=0)
            G_I[same] = 0.0
            S_I[same] = 0.0
            del same
            FH = G_I * ((th[I, None] + th[None, :]) / 2)
            T_out = np.abs(S_I - FH) + _SHORT_ROUNDING * (np.abs(S_I) + np.abs(FH))
            col_out += np.sum(T_out**2, axis=0)
            e_out2 += float(np.sum(S_I**2))
            phi2 += float(np.sum(G_I**2))
            del G_I, S_I, FH, T_out
        e_out = math.sqrt(e_out2) * safety * rel
        phi = math.sqrt(phi2) * safety * rel
        om_g = np.sqrt(np.bincount(labels, weights=col_fin, minlength=n_groups)) * safety * rel
        om_g += sizes * pr.delta_g / g_min
        e_g = np.sqrt(np.bincount(labels, weights=col_ein, minlength=n_groups)) * safety * rel
        del col_fin, col_ein
        om_in = float(np.max(om_g))
        e_in = float(np.max(e_g))
        if not om_in < 0.25:
            return None
        phi = phi / (1 - om_in) * safety
        dphi = n * pr.delta_g / g_min / (1 - om_in) * safety  # the error of G, also off the groups
        ph = phi + dphi
        if not ph < 0.25:
            return None
        # group members: Ostrowski and Weyl inside the block; singletons: θ itself (double-double rounding)
        big = sizes[labels] > 1
        og = om_g[labels]
        eg = e_g[labels]
        # (intervals are centred on the exact θ = S_ii/G_ii; its double-double only enters differences of
        # distinct θ, each with its own 2**-104 allowance)
        r = np.where(big, eg + og / (1 - og) * (th_abs + eg), 0.0) * safety
        # second order inside the groups (a float64 rotation leaves ω_g ≈ 2**-53: ω_g |θ| can exceed the target)
        for gidx in np.flatnonzero(sizes > 1):
            members = np.flatnonzero(labels == gidx)
            r[members] = np.minimum(r[members], self._group_second_order(
                pr, members, c, float(om_g[gidx]), float(e_g[gidx]), g_min))
        # Z = (I+Φ)^{-1/2} CŜC (I+Φ)^{-1/2} = B + C T_out C + small (see the docstring)
        m_norm = (th_max + e_in + e_out) / (1 - om_in) * safety
        kappa = 0.375 * ph * ph / (1 - ph)
        rem = m_norm * (ph * ph / 4 + 2 * kappa + kappa * ph + kappa * kappa)
        o2 = phi * (e_in + om_in / (1 - om_in) * (th_max + e_in)) / (1 - om_in)
        eta_small = (ph * e_out / (1 - om_in) + rem + o2 + dphi * m_norm) * safety
        eta_out = math.sqrt(float(np.sum(col_out))) * safety / (1 - om_in) * safety
        eta_delta = n * pr.delta_s / (g_min * (1 - om_in)) * safety
        # -- sorted ends: global (Weyl) argument ----------------------------------------------------
        order = np.lexsort((-tl, -th))
        lo_off, hi_off = _sorted_ends(th, tl, order, r + eta_out, r + eta_out)
        # -- Li–Li per group --------------------------------------------------------------------------
        eps_g = np.sqrt(np.bincount(labels, weights=col_out, minlength=n_groups)) * safety / (1 - om_in)
        eta_g = self._group_gaps(th, tl, r, eta_out, labels, n_groups)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            q_g = np.where(eta_g > 0, 2 * eps_g**2 / (eta_g + np.sqrt(eta_g**2 + 4 * eps_g**2)), np.inf)
        q_g *= safety
        for gidx in np.flatnonzero((eta_g > 0) & (q_g < eta_out)):
            members = labels == gidx
            rad_g = np.where(members, r + q_g[gidx], r + eta_out + q_g[gidx])
            lo2, hi2 = _sorted_ends(th, tl, order, rad_g, rad_g)
            lo_off = np.maximum(lo_off, lo2)
            hi_off = np.minimum(hi_off, hi2)
        # offsets are relative to θ at each position: radius around θ_(i)
        # + the rounding of the returned θ to max(x_bits, a_bits) + 16 bits
        rad = np.maximum(-lo_off, hi_off) + eta_delta + eta_small + self.a_rounding
        rad += th_abs[order] * 2.0 ** -(self.a_bits + _OUT_GUARD_BITS - 1)
        vb = np.empty(n)
        vb[order] = rad * safety
        if _LOG.isEnabledFor(logging.DEBUG):
            ratio = vb / self._wanted(pr)
            worst = int(np.argmax(ratio))
            _LOG.debug("bounds: groups %d (largest %d), om_in %.2e, phi %.2e, eta_small %.2e, eta_out %.2e, "
                       "eta_delta %.2e, max r %.2e, a_rounding %.2e; vb/wanted max %.2e at pos %d (θ %.2e, r %.2e, "
                       "group size %d)", n_groups, sizes.max(), om_in, phi, eta_small, eta_out, eta_delta, r.max(),
                       self.a_rounding, ratio[worst], int(np.flatnonzero(order == worst)[0]), th[worst], r[worst],
                       sizes[labels[worst]])
        # -- vectors: Davis–Kahan --------------------------------------------------------------------
        vec = self._vector_bounds(pr, order, vb, c, g_min)
        groups = _overlap_groups(th[order], tl[order], vb[order])
        return order, vb, vec, groups

    def _group_second_order(self, pr, J, c, om, e, g_min):
        """Radii of the group's pencil ``(Θ + E, I + F)`` (indices ``J`` of ``cSc``, ``cGc``) around its θ, second
        order in F.

        With ``K = (I+F)^{-1/2} - I = -F/2 + K₂``, ``‖K₂‖ ≤ κ = 3ω²/(8(1-ω))``, the pencil's eigenvalues are those
        of ``Z = Θ + T + Q``: ``T = E - (FΘ + ΘF)/2`` (symmetric, zero diagonal) and
        ``‖Q‖ ≤ ωe + (2κ + (ω/2 + κ)²)(max|θ| + e)``, ``Q = -(FE + EF)/2 + K₂M + MK₂ + KMK``. Weyl gives every
        eigenvalue within ``‖T‖ + ‖Q‖``; Li–Li per member ``i`` whose θ is separated from the others' Weyl
        intervals by ``η > 0`` gives ``2ε²/(η + √(η² + 4ε²))``, ``ε = ‖T e_i‖`` (the others keep ``‖T‖`` more);
        the arguments' sorted ends are intersected. ``ω``, ``e``: the group's ``‖F‖``, ``‖E‖`` bounds.
        Returns the radius per member (order of ``J``), valid like the Ostrowski radii it may replace.
        """
        safety = _NORM_SAFETY
        th, tl = pr.theta_hi[J], pr.theta_lo[J]
        m = len(J)
        th_top = float(np.max(np.abs(th)))
        # ε_i² = Σ_j T_ij² by row chunks of T (a rotated cluster's group can be nearly N wide); T is symmetric in
        # exact arithmetic, and its rows as computed bound the true entries as well as its columns would
        eps = np.empty(m)
        for rows in _row_chunks(m, m):
            Jr = J[rows]
            E = _scaled_rows(pr.S, c, Jr, J)
            F = _scaled_rows(pr.R, c, Jr, J)
            FH = F * ((th[rows, None] + th[None, :]) / 2)
            # float64 read-outs and scaling (2**-48 relative, as in _bounds) and the rounding here, and G's error
            # δG times the θ it meets
            T = np.abs(E - FH) + _SCALED_ROUNDING * (np.abs(E) + np.abs(FH)) + th_top * pr.delta_g / g_min
            T[np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop)] = 0.0
            eps[rows] = np.sum(T * T, axis=1)
            del E, F, FH, T
        t_norm = math.sqrt(float(np.sum(eps))) * safety
        eps = np.sqrt(eps) * safety
        kappa = 0.375 * om * om / (1 - om)
        q_rem = (om * e + (2 * kappa + (om / 2 + kappa) ** 2) * (th_top + e)) * safety
        local = np.lexsort((-tl, -th))
        weyl = np.full(m, t_norm)
        lo_off, hi_off = _sorted_ends(th, tl, local, weyl, weyl)
        # η_i: distance from θ_i to the other θ_j (double-double, with the allowance of _group_gaps) less ‖T‖
        eta = np.full(m, np.inf)
        chunk = max(1, 2_000_000 // m)
        for a in range(0, m, chunk):
            rows = slice(a, min(m, a + chunk))
            d = np.abs((th[rows, None] - th[None, :]) + (tl[rows, None] - tl[None, :]))
            d = d * (1 - _SHORT_ROUNDING) - _DD_ENDS * (np.abs(th[rows, None]) + np.abs(th[None, :]))
            d[np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop)] = np.inf
            eta[rows] = np.min(d, axis=1) - t_norm
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            q = np.where(eta > 0, 2 * eps**2 / (eta + np.sqrt(eta**2 + 4 * eps**2)), np.inf) * safety
        for i in np.flatnonzero(q < t_norm):
            rad = np.full(m, t_norm + q[i])
            rad[i] = q[i]
            lo2, hi2 = _sorted_ends(th, tl, local, rad, rad)
            lo_off = np.maximum(lo_off, lo2)
            hi_off = np.minimum(hi_off, hi2)
        out = np.empty(m)
        out[local] = (np.maximum(-lo_off, hi_off) + q_rem) * safety
        return out

    def _group_gaps(self, th, tl, r, eta_out, labels, n_groups):
        """η_g: least distance between a group's intervals and the others' intervals widened by η_out."""
        n = self.n
        eta = np.full(n_groups, np.inf)
        chunk = max(1, 2_000_000 // max(n, 1))
        for s in range(0, n, chunk):
            rows = slice(s, min(n, s + chunk))
            d = np.abs((th[rows, None] - th[None, :]) + (tl[rows, None] - tl[None, :]))
            d = d * (1 - _SHORT_ROUNDING) - _DD_ENDS * (np.abs(th[rows, None]) + np.abs(th[None, :]))
            d = d - r[rows, None] - r[None, :] - eta_out
            d[labels[rows, None] == labels[None, :]] = np.inf
            np.minimum.at(eta, labels[rows], np.min(d, axis=1))
        return eta

    def _vector_bounds(self, pr, order, vb, c, g_min, extra=0.0):
        """‖x̂ - v‖ bounds: sin θ of a vector, or of its group's invariant subspace (Davis–Kahan).

        ``A x - θ x = X G⁻¹ Xᵀ(A x - θ x)``, so ``‖A x - θ x‖ ≤ √(1+ω)/(1-ω) ‖(S - θG) e‖``. For a group
        ``Y = X_J`` of overlapping positions, ``K = G_JJ⁻¹ S_JJ`` gives ``Xᵀ(AY - YK) = (S - GΘ)_oJ -
        G_oJ G_JJ⁻¹ (S - GΘ)_JJ`` (zero on the rows J) and ``λ(K)`` lies within ``e + ω_J/(1-ω_J)(|θ| + e)``
        of the θ_J (Ostrowski and Weyl on the c-scaled block). ``extra`` bounds a further perturbation of A (its
        enclosures ``vb`` must already contain it).
        """
        n = self.n
        th, tl = pr.theta_hi, pr.theta_lo
        omega_g = float(np.linalg.norm(pr.R)) * _NORM_SAFETY + n * pr.delta_g
        vec = np.full(n, 2.0)
        if not omega_g < 0.5:
            return vec
        lift = math.sqrt(1 + omega_g) / (1 - omega_g) * _NORM_SAFETY
        tho, tlo, vbo = th[order], tl[order], vb[order]
        pos = np.empty(n, dtype=int)
        pos[order] = np.arange(n)
        wanted = np.zeros(n, dtype=bool)
        wanted[pos[order[: self.k]] if self.tier == 1 else np.arange(n)] = True
        for a, b in _overlap_groups(tho, tlo, vbo):
            if not wanted[a:b].any():
                continue
            J = order[a:b]
            thJ = th[J]
            # |(S - G Θ_J)| on the columns J, plus the read-out, cancellation and fixed-point errors
            Fa = np.abs(pr.S[:, J] - pr.R[:, J] * thJ[None, :])
            Fa += _SHORT_ROUNDING * (np.abs(pr.S[:, J]) + np.abs(pr.R[:, J] * thJ[None, :]))
            Fa += pr.delta_s + np.abs(thJ)[None, :] * pr.delta_g
            Fa[J, np.arange(len(J))] = 0.0  # S_jj - θ_j G_jj = 0 for the exact θ_j (double-double error: 2**-50 term)
            if b - a == 1:
                res = float(np.linalg.norm(Fa)) * _NORM_SAFETY * lift
                # distance from θ_j to the other eigenvalues: all above are ≥ θ_(a-1) - vb, below ≤ θ_(b) + vb
                lo_mu = hi_mu = 0.0
            else:
                in_j = np.zeros(n, dtype=bool)
                in_j[J] = True
                RJ = np.abs(pr.R[np.ix_(J, J)]) * c[J][:, None] * c[J][None, :]
                np.fill_diagonal(RJ, 0.0)
                om_j = float(np.linalg.norm(RJ)) * _NORM_SAFETY + len(J) * pr.delta_g / g_min
                if not om_j < 0.5:
                    continue
                g_oj = float(np.linalg.norm(np.abs(pr.R[np.ix_(~in_j, J)]) + pr.delta_g)) * _NORM_SAFETY
                res = float(np.linalg.norm(Fa[~in_j])) + g_oj * float(np.linalg.norm(Fa[in_j])) / (1 - om_j)
                res *= _NORM_SAFETY * lift
                # λ(K): the pencil (S_JJ, G_JJ) scaled by c: within e + ω/(1-ω)(|θ| + e) of the θ_J
                e_j = float(np.linalg.norm(Fa[in_j] * c[J][:, None] * c[J][None, :])) * _NORM_SAFETY
                spread = e_j + om_j / (1 - om_j) * (float(np.max(np.abs(thJ))) + e_j)
                lo_mu = ((tho[b - 1] - tho[a]) + (tlo[b - 1] - tlo[a])) - spread  # relative to θ_(a)
                hi_mu = spread
            # A itself differs from the fixed-point A_hp by ‖ΔA‖₂ ≤ a_rounding: ‖ΔA Y‖ ≤ a_rounding ‖Y‖
            # (extra: a further perturbation ‖A_true - A‖₂ ≤ extra, the input's own error)
            res += (self.a_rounding + extra) * math.sqrt(1 + omega_g) * _NORM_SAFETY
            d = []
            if a > 0:  # eigenvalues above: ≥ θ_(a-1) - vb_(a-1)
                d.append(((tho[a - 1] - tho[a]) + (tlo[a - 1] - tlo[a])) - vbo[a - 1] - hi_mu)
            if b < n:  # eigenvalues below: ≤ θ_(b) + vb_(b)
                d.append(lo_mu - ((tho[b] - tho[a]) + (tlo[b] - tlo[a])) - vbo[b])
            gap = min(d) * (1 - _GAP_ROUNDING) - _DD_GAP * abs(tho[a]) if d else np.inf
            if not gap > 0:
                continue
            sin = res / gap if np.isfinite(gap) else 0.0
            if b - a == 1:
                # unit x̂ = x/‖x‖: ‖x̂ - v‖ = 2 sin(φ/2) ≤ √2 sin φ (sign of v chosen), ‖x‖² = G_jj ≥ g_min
                bound = math.sqrt(2) * sin / math.sqrt(g_min)
                if bound * _NORM_SAFETY > self.target and np.isfinite(gap):
                    bound = min(bound, self._newton_vector_bound(pr, J[0], gap, g_min, omega_g, lift, extra))
            else:
                # distance of a unit vector of span Y to the invariant subspace ≤ ‖sin Θ‖, σ_min(Y)² ≥ 1 - ω
                bound = sin / math.sqrt(1 - omega_g)
            vec[J] = min(bound * _NORM_SAFETY, 2.0)
            if bound > self.target:
                _LOG.debug("vector pos %d:%d res %.2e gap %.2e bound %.2e", a, b, res, gap, bound)
        return vec

    def _newton_vector_bound(self, pr, j, gap, g_min, omega_g, lift, extra) -> float:
        """‖x̂ⱼ - v‖ through one virtual Newton step: second order in the residual instead of first.

        ``y = X u``, ``u = eⱼ + f`` with ``fᵢ = -rᵢ / (Gᵢᵢ(θᵢ - θⱼ))`` (``r = (S - θⱼG)eⱼ``; any float64 ``f``
        is admissible, only the bounds below must be rigorous). ``Xᵀ(A - θⱼ)y = z = (S - θⱼG)u`` is bounded
        entrywise from the float64 ``z̃`` (read-out, product and rounding errors as in the residuals above), so
        ``sin∠(y, v) ≤ (lift ‖z‖ + ‖ΔA‖ ‖y‖) / (‖y‖ gap)`` (Davis–Kahan, same shift θⱼ and gap) and
        ``sin∠(xⱼ, y) ≤ ‖X f‖ / ‖xⱼ‖``; the angles add, and ``‖x̂ - v‖ ≤ φ``.
        """
        n = self.n
        th, tl = pr.theta_hi, pr.theta_lo
        tj = th[j]
        rs = pr.S[:, j] - pr.R[:, j] * tj
        rs[j] = 0.0
        err_r = _SHORT_ROUNDING * (np.abs(pr.S[:, j]) + np.abs(pr.R[:, j]) * abs(tj)) + pr.delta_s + abs(tj) * pr.delta_g
        err_r[j] = 0.0  # S_jj - θ_j G_jj = 0 for the exact θ_j
        g = 1.0 + np.diag(pr.R)
        d = g * ((th - tj) + (tl - tl[j]))
        # |G_ii(θ_i - θ_j) - d_i|: float64 G_ii and difference, double-double θ (2**-100 covers both θ)
        d_err = _SHORT_ROUNDING * np.abs(d) + _DD_PAIR * (np.abs(th) + abs(tj)) * g
        d[j] = 0.0  # G_jj(θ_j - θ_j)
        f = -rs / np.where(np.arange(n) == j, np.inf, d)
        f_abs = np.abs(f)
        # off-diagonal part of (S - θ_j G) f, the diagonal entries removed again
        off = (pr.S @ f - np.diag(pr.S) * f) - tj * (pr.R @ f - np.diag(pr.R) * f)
        z = rs + d * f + off
        m_abs = _abs_matvec(pr.S, f_abs) + abs(tj) * _abs_matvec(pr.R, f_abs)
        gamma = (n + 8) * _EPS
        z_err = (err_r + d_err * f_abs + _SHORT_ROUNDING * m_abs + (pr.delta_s + abs(tj) * pr.delta_g) * float(np.sum(f_abs))
                 + gamma * (np.abs(rs) + np.abs(d) * f_abs + 2 * m_abs))
        z_norm = float(np.linalg.norm(np.abs(z) + z_err)) * _NORM_SAFETY
        f_norm = float(np.linalg.norm(f)) * _NORM_SAFETY
        x_f = math.sqrt(1 + omega_g) * f_norm  # ≥ ‖X f‖
        y_low = math.sqrt(g_min) - x_f
        if not y_low > 0:
            return 2.0
        y_high = math.sqrt(1 + omega_g) * math.sqrt(1 + f_norm**2)
        res = (lift * z_norm + (self.a_rounding + extra) * y_high) * _NORM_SAFETY
        s = (x_f / math.sqrt(g_min) + res / (y_low * gap)) * _NORM_SAFETY
        _LOG.debug("newton %d: ‖Xf‖ part %.2e, residual part %.2e (z %.2e, A rounding + extra %.2e)", j,
                   x_f / math.sqrt(g_min), res / (y_low * gap), lift * z_norm, (self.a_rounding + extra) * y_high)
        if not s < 0.5:
            return 2.0
        return s * (1 + s * s)  # asin s ≤ s (1 + s²) for s ≤ 1/2

    def _wanted(self, pr: _Products) -> np.ndarray:
        """Target absolute accuracy of each eigenvalue (normalised units)."""
        th_abs = np.abs(pr.theta_hi)
        if self.tier == 1:
            return np.full(self.n, self.target * max(float(np.max(th_abs)), 2.0**-self.a_bits))
        # eigenvalues within 10**dps of the noise of A's fixed point cannot carry dps relative digits
        return np.maximum(self.target * th_abs, self.resolution * _NOISE_MARGIN)

    def _vector_targets(self, pr: _Products, order) -> np.ndarray:
        """Indices whose vectors must reach the target: tier 1 the top k above the noise (eigenvalues within
        2**24 targets of zero have no tier-1 vectors), tier 2 those above A's precision."""
        if self.tier == 1:
            top = order[: self.k]
            return top[np.abs(pr.theta_hi[top]) > self.noise]
        return np.flatnonzero(np.abs(pr.theta_hi) > self.resolution * _NOISE_MARGIN / self.target)

    def _done(self, pr: _Products, order, vb, vec) -> bool:
        vectors_ok = np.all(vec[self._vector_targets(pr, order)] <= self.target)
        return bool(np.all(vb <= self._wanted(pr)) and vectors_ok)

    # -- driver -----------------------------------------------------------------------------------
    def run(self) -> RefinedEigensystem:
        n = self.n
        # tier 1: X's rounding enters eigenvalues quadratically and vectors as 2**-x_bits / gap (gap bits are
        # in a_bits); tier 2 keeps 16 bits beyond A
        log2n = max(1, math.ceil(math.log2(n)))
        x_cap = self.a_bits - log2n - 8 if self.tier == 1 else self.a_bits
        saved = self._resumed_state()
        if saved is None:
            x_bits = _START_BITS
            X = _exact(ozaki.FixedMatrix.from_float64(self.V0, bits=x_bits, digit_bits=self.digit_bits))
            start, bits_used, stall = 0, 0, 0
            best = None  # (score, iteration, what the result needs) of the best checked basis
            self.rotated_scale = None
        else:
            # popped, not read: the loaded basis and best basis are GBs each at N = 5404 and must not outlive X
            X, x_bits, start, bits_used, stall, best = (saved.pop(key) for key in
                                                        ("X", "x_bits", "iteration", "bits_used", "stall", "best"))
            self.rotated_scale, self.history = saved.pop("rotated_scale"), saved.pop("history")
            saved = {"iteration": start, "seconds": saved["seconds"]}
            _LOG.info("refine_eigensystem N=%d tier %d: resumed after iteration %d (%.1f s before)", n, self.tier,
                      start, saved["seconds"])
        self.V0 = None
        for it in range(start, _MAX_ITERATIONS + 1):
            it_clock = time.perf_counter()
            a_bits = min(self.a_bits, x_bits + 48)
            if self.tier == 2 and self.rotated_scale is not None:
                # a graded cluster is being peeled: its next level is resolved by products accurate to 2**-53
                # of the block just rotated (plus 40 guard bits); the full precision waits for the last steps
                need = math.ceil(math.log2(max(self.a_norm, 1e-300) / self.rotated_scale)) + 53 + 40
                a_bits = min(a_bits, max(need, 2 * _START_BITS))
            clock = time.perf_counter()
            pr = self._products(X, x_bits, a_bits)
            bits_used = max(bits_used, x_bits, a_bits)
            _debug_time(f"products (A {a_bits} b, X {x_bits} b)", clock)
            clock = time.perf_counter()
            bnd = self._bounds(pr) if a_bits == self.a_bits else None
            _debug_time("bounds", clock)
            if bnd is not None:
                order, vb, vec, _ = bnd
                # best basis: eigenvalue and (wanted) vector bounds against their targets
                vec_cols = self._vector_targets(pr, order)
                with np.errstate(divide="ignore", invalid="ignore"):  # 10**-dps underflows past dps 323
                    score = max(float(np.max(vb / self._wanted(pr))),
                                float(np.max(vec[vec_cols], initial=0.0)) / max(self.target, 1e-300))
                done = self._done(pr, order, vb, vec)
                if best is None or done or score < best[0]:
                    best, stall = (score, it, self._kept(X, x_bits, pr, bnd)), 0
                else:
                    stall += 1  # bounds stopped improving: the precision of A is exhausted
                if done or stall >= 3 or it == _MAX_ITERATIONS:
                    break
            clock = time.perf_counter()
            W, new_order, e_max, in_cluster = self._correction(pr)
            _debug_time(f"correction ({in_cluster} clustered)", clock)
            self.history.append(
                {"a_bits": a_bits, "x_bits": x_bits, "max_correction": e_max, "clustered": in_cluster,
                 "bounds_over_target": score if bnd is not None else None}
            )
            del pr
            # precision doubles per iteration: convergence is at most quadratic, and graded spectra
            # need the higher precision to resolve their next eigenvalue group
            # and no finer than the products just used can steer (W is only as good as S: 2**-a_bits)
            new_bits = min(x_cap, 2 * x_bits, a_bits + 64)
            clock = time.perf_counter()
            X = _updated_basis(X, W, new_order, new_bits)
            del W
            _debug_time("update", clock)
            x_bits = new_bits
            h = self.history[-1]
            h["seconds"] = time.perf_counter() - it_clock
            _LOG.info("refine_eigensystem N=%d tier %d: iteration %d (A %d b, X %d b, %d clustered) in %.1f s; "
                      "next X %d b", n, self.tier, it + 1, h["a_bits"], h["x_bits"], h["clustered"], h["seconds"],
                      x_bits)
            if self.checkpoint is not None:
                self._save_state({"X": X, "x_bits": x_bits, "iteration": it + 1, "bits_used": bits_used,
                                  "stall": stall, "best": best, "rotated_scale": self.rotated_scale,
                                  "history": self.history})
        if best is None:
            raise NoConvergence("refine_eigensystem: no basis was close enough to orthonormal to bound",
                                remedy="a larger dps or tier 1 (the matrix may carry too few bits)")
        _, it, kept = best
        del X, best
        pr = bnd = None  # a break leaves the last products alive
        self.A_full = None  # the result needs the kept basis only (A and X are GBs each at N = 5404)
        result = self._result(kept, it, bits_used)
        if saved is not None:
            result.resumed = saved
        return result

    # -- checkpoints --------------------------------------------------------------------------------
    def _checkpoint_key(self) -> str:
        A = self.A_full
        return eigen_checkpoint.fingerprint(
            A.digits, exponent=A.exponent, digit_bits=A.digit_bits, n=self.n, exp2=self.exp2, a_bits=self.a_bits,
            dps=self.dps, tier=self.tier, k=self.k, a_rounding=self.a_rounding, input_error=self.input_error)

    def _resumed_state(self) -> dict | None:
        """The saved state to resume from (None: start afresh); sets the fingerprint and the earlier seconds."""
        self._seconds_before = 0.0
        if self.checkpoint is None:
            return None
        self._key = self._checkpoint_key()
        saved = eigen_checkpoint.load(self.checkpoint[0], self._key)
        if saved is not None:
            self._seconds_before = saved["seconds"]
        return saved

    def _save_state(self, state: dict) -> None:
        """Save the state after an iteration with the seconds spent so far (earlier calls' included)."""
        path, started = self.checkpoint
        state["seconds"] = self._seconds_before + time.perf_counter() - started
        eigen_checkpoint.save(path, self._key, state)

    def _kept(self, X, x_bits, pr, bnd) -> _Kept:
        """What the result needs of a checked basis, so that its products (and for tier 1 the basis) can go:
        the returned columns (tier 1: a copy of the top k), their block of ``G - I``, the exact diagonals of S
        and G, the bounds for A and, with an ``input_error``, for A_true (Weyl on the values; the vectors see
        the error in their residuals and in the gaps to the widened enclosures)."""
        order, vb, vec, groups = bnd
        cols = order if self.tier == 2 else order[: self.k]
        true_vb, true_vec = vb, vec
        if self.input_error:
            true_vb = (vb + self.input_error) * _NORM_SAFETY
            gdiag = 1.0 + np.diag(pr.R)
            true_vec = self._vector_bounds(pr, order, true_vb, 1.0 / np.sqrt(gdiag), float(np.min(gdiag)),
                                           extra=self.input_error)
        basis, take = (X, cols) if self.tier == 2 else (X.take_columns(cols), np.arange(len(cols)))
        return _Kept(basis, take, cols, x_bits, pr.R[np.ix_(cols, cols)], pr.s_diag, pr.g_diag, pr.s_exp, pr.g_exp,
                     order, vb, vec, true_vb, true_vec, groups)

    def _orthonormalised(self, Y, R, x_bits):
        """Columns ``Y`` (with ``R = YᵀY - I`` in float64), orthonormalised when R is off zero by more than the
        target (e.g. a cluster rotated last, orthogonal only to 2**-53): ``Y ← Y (I + K)`` with ``I + K`` the
        series of ``G^{-1/2}`` to ``R⁴`` (float64, R tiny) applied as an exact fixed-point product. Returns the
        columns and how far each normalised column moved (added to its vector bound; a column inside its
        group's invariant subspace stays inside it)."""
        R = R.copy()
        np.fill_diagonal(R, 0.0)  # the diagonal is removed by the normalisation
        if float(np.max(np.abs(R), initial=0.0)) <= _DIAGONAL_ENOUGH * self.target:
            return Y, np.zeros(Y.shape[1])
        R2 = R @ R
        K = -R / 2 + 3 * R2 / 8 - 5 * (R2 @ R) / 16 + 35 * (R2 @ R2) / 128
        # ‖x̂' - x̂‖ ≤ 2 ‖K e‖ (1 + ω) for the normalised columns
        moved = 2.5 * np.linalg.norm(K, axis=0)
        top = float(np.max(np.abs(K)))
        Kf = ozaki.FixedMatrix.from_float64(K, bits=x_bits + 40 + _exp_of(top), digit_bits=Y.digit_bits)
        YK = ozaki.matmul(Y, Kf, grid=-(x_bits + 32))
        Z = Y + YK
        del YK
        return _exact(Z.rounded(Z.exponent + x_bits + 32)), moved

    def _result(self, kept, iterations, bits_used):
        n = self.n
        unit_exp = self.unit_exp  # normalised unit
        x_bits, order, groups = kept.x_bits, kept.order, kept.groups
        out_prec = max(x_bits, self.a_bits) + _OUT_GUARD_BITS
        values = np.empty(n, dtype=object)
        bounds = np.empty(n, dtype=object)
        given_vb, given_vec = kept.vb, kept.vec
        vb, vec = kept.true_vb, kept.true_vec
        given_bounds = np.empty(n, dtype=object)
        for pos, i in enumerate(order):
            s, g = kept.s_diag[i], kept.g_diag[i]
            # θ = (s 2**s_exp) / (g 2**g_exp) in normalised units
            tup = ratio_to_mpf_tuple(s, g, out_prec)
            values[pos] = mpmath.mp.make_mpf(libmp.mpf_shift(tup, kept.s_exp - kept.g_exp + unit_exp))
            # the rounding of the quotient to out_prec bits is covered by the 2**-100 |θ| in the bounds
            bounds[pos] = mpmath.mp.make_mpf(libmp.mpf_shift(libmp.from_float(float(vb[i])), unit_exp))
            given_bounds[pos] = (bounds[pos] if given_vb is vb else
                                 mpmath.mp.make_mpf(libmp.mpf_shift(libmp.from_float(float(given_vb[i])), unit_exp)))
        cols = kept.cols
        Y = kept.basis.take_columns(kept.take)
        kept.basis = None  # tier 2: the whole basis, one copy at a time
        Xc, moved = self._orthonormalised(Y, kept.R_cols, x_bits)
        del Y
        vectors = np.empty((n, len(cols)), dtype=object)
        t_bits = x_bits + 16
        g_cols, g_exp = ozaki.column_dots(Xc, Xc)
        vec_out = np.empty(len(cols))
        given_vec_out = np.empty(len(cols))
        chunk = max(1, _CHUNK_ENTRIES // n)  # columns read out to Python integers at a time
        for c, j in enumerate(cols):
            if c % chunk == 0:
                ints, x_exp = Xc.take_columns(slice(c, c + chunk)).to_integers()
            g = int(g_cols[c])  # ‖x_j‖² = g 2**g_exp, x = ints 2**x_exp with g_exp = 2 x_exp
            root = math.isqrt(g << (2 * t_bits))  # ≈ ‖x_j‖ 2**(-x_exp + t_bits)
            col = [_round_div(int(v) << (2 * t_bits), root) for v in ints[:, c % chunk]]
            big = max(range(n), key=lambda i: (abs(col[i]), -i))
            sign = -1 if col[big] < 0 else 1
            for i in range(n):
                vectors[i, c] = mpmath.mp.make_mpf(libmp.from_man_exp(sign * col[i], -t_bits))
            # rounding of the normalisation: ≤ (1 + √n) 2**-(t_bits-1) in norm
            rounding = float(moved[c]) + (1 + math.sqrt(n)) * 2.0 ** -(t_bits - 1)
            vec_out[c] = float(vec[j]) + rounding
            given_vec_out[c] = float(given_vec[j]) + rounding
        clusters = [(s, t) for s, t in groups if t - s > 1]
        return RefinedEigensystem(
            values=values,
            vectors=vectors,
            value_error_bounds=bounds,
            vector_error_bounds=vec_out,
            iterations=iterations,
            precision_bits_used=bits_used,
            clusters=clusters,
            history=self.history,
            input_error=mpmath.mp.make_mpf(libmp.mpf_shift(libmp.from_float(self.input_error), unit_exp)),
            given_value_error_bounds=given_bounds,
            given_vector_error_bounds=given_vec_out,
        )


def _exact(F: ozaki.FixedMatrix) -> ozaki.FixedMatrix:
    """The same value with ``error_bound`` 0: a rounded matrix taken as the exact operand it now is."""
    return ozaki.FixedMatrix(F.digits, F.exponent, F.digit_bits, 0.0)


def _exp_of(x: float) -> int:
    """The least e with x <= 2**(e-1) (x > 0)."""
    f, t = math.frexp(x)
    return t if f == 0.5 else t + 1


def _debug_time(what: str, since: float) -> None:
    _LOG.debug("%s: %.1f s", what, time.perf_counter() - since)


def _row_chunks(n_rows: int, n_cols: int) -> list[slice]:
    """Row slices of about ``_CHUNK_ENTRIES`` entries (float64 temporaries of 16 MB)."""
    step = max(1, _CHUNK_ENTRIES // max(1, n_cols))
    return [slice(i, min(n_rows, i + step)) for i in range(0, n_rows, step)]


def _scaled_rows(M: np.ndarray, c: np.ndarray, rows, cols=None) -> np.ndarray:
    """Rows ``rows`` (a slice or indices) of ``c M c`` (columns ``cols``, default all), zero on M's diagonal.

    ``rows`` and ``cols`` index the same positions: with ``cols`` given, the diagonal entries are those where
    ``rows[r] == cols[k]``.
    """
    r_idx = np.arange(M.shape[0])[rows]
    if cols is None:
        out = M[rows] * c[r_idx, None] * c[None, :]
        out[np.arange(len(r_idx)), r_idx] = 0.0
        return out
    out = M[np.ix_(r_idx, cols)] * c[r_idx, None] * c[None, cols]
    out[r_idx[:, None] == np.asarray(cols)[None, :]] = 0.0
    return out


def _symmetrise_words(hi: np.ndarray, lo: np.ndarray) -> None:
    """In place: ``(hi, lo)`` ← ``(H + Hᵀ)/2`` for ``H = hi + lo`` as a double word, exactly symmetric.

    ``hi`` becomes ``fl(hi + hiᵀ)/2`` (what ``(S + S.T) / 2`` gives), ``lo`` the TwoSum error of that sum plus
    ``(lo + loᵀ)``, halved (one rounding of the low word: about 2**-105 relative). Block pairs ``(I, J)``,
    ``(J, I)`` are read together before either is written.
    """
    n = hi.shape[0]
    step = max(1, int(math.isqrt(_CHUNK_ENTRIES)))
    for i in range(0, n, step):
        I = slice(i, min(n, i + step))
        for j in range(i, n, step):
            J = slice(j, min(n, j + step))
            a, b = hi[I, J], hi[J, I].T
            s = a + b
            bb = s - a
            low = ((a - (s - bb)) + (b - bb) + (lo[I, J] + lo[J, I].T)) / 2
            s /= 2
            hi[I, J], hi[J, I] = s, s.T
            lo[I, J], lo[J, I] = low, low.T


def _abs_matvec(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``|M| @ v`` by row chunks (no N×N ``|M|``)."""
    out = np.empty(M.shape[0])
    for I in _row_chunks(M.shape[0], M.shape[1]):
        out[I] = np.abs(M[I]) @ v
    return out


def _panels(n_cols: int, rows: int, levels: int) -> list[slice]:
    """Column panels whose product working set (``levels`` int64 digit levels of ``rows`` rows, plus their
    rounding) stays near ``_PANEL_BYTES``; at least 64 columns wide so that the slice GEMMs stay efficient."""
    width = max(64, _PANEL_BYTES // (16 * max(1, rows) * max(1, levels)))
    count = -(-n_cols // width)
    edges = [n_cols * p // count for p in range(count + 1)]  # equal widths: no thin last panel
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]


def _sub_panels(J: slice) -> list[slice]:
    """``J`` cut into up to ``_SUB_PANELS`` column ranges of at least 128 columns (for the triangular tiles of S
    and G: with p sub-panels in all they cost (p + 1) / 2p of full products, and GEMMs this wide stay efficient)."""
    width = J.stop - J.start
    count = max(1, min(_SUB_PANELS, width // 128))
    edges = [J.start + width * p // count for p in range(count + 1)]
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]


def _set_upper_tile(hi_out: np.ndarray, lo_out: np.ndarray, K: slice, hi: np.ndarray, lo: np.ndarray) -> None:
    """Write the tile of rows ``[0, K.stop)`` and columns K, and its transpose left of the diagonal block."""
    for M, tile in ((hi_out, hi), (lo_out, lo)):
        M[: K.stop, K] = tile
        M[K, : K.start] = tile[: K.start].T


def _columns(F: ozaki.FixedMatrix, cols: slice) -> ozaki.FixedMatrix:
    """Columns ``cols`` of ``F`` as a view of its digits (the slice GEMMs read strided operands in place)."""
    return ozaki.FixedMatrix(F.digits[:, :, cols], F.exponent, F.digit_bits, F.error_bound)


def _updated_basis(X: ozaki.FixedMatrix, W: np.ndarray, new_order, new_bits: int) -> ozaki.FixedMatrix:
    """``X[:, new_order] + X (W - I)[:, new_order]`` (W given as ``W - I``) on the grid ``2**-new_bits``, column
    panel by column panel into one preallocated matrix of exponent ``_X_EXPONENT``.

    ``X`` lies on a coarser grid, so only the product is rounded. The basis only has to be near orthonormal
    (the bounds are a posteriori), so its rounding is not tracked.
    """
    n = X.shape[0]
    b = X.digit_bits
    digits = np.empty((-(-(new_bits + _X_EXPONENT) // b), n, len(new_order)))
    w_bits = new_bits + _W_GUARD
    # an update panel holds W's digits, the product's and the sum's: about twice a product panel's levels
    for J in _panels(len(new_order), n, 2 * (X.n_digits + -(-w_bits // b))):
        cols = new_order[J]
        WJ = W[:, cols]
        top = float(np.max(np.abs(WJ)))
        Z = X.take_columns(cols)
        if top:
            # W's grid 2**-(new_bits + 24) in every panel
            Wf = ozaki.FixedMatrix.from_float64(WJ, bits=max(1, w_bits + _exp_of(top)), digit_bits=b)
            del WJ
            XW = ozaki.matmul(X, Wf, grid=-new_bits)
            del Wf
            Z = Z + XW
            del XW
        try:
            digits[:, :, J] = Z.rounded(new_bits + _X_EXPONENT, exponent=_X_EXPONENT).digits
        except ValueError as err:  # an entry beyond 2: the basis is no longer near orthonormal
            raise NoConvergence("refine_eigensystem: the refined basis diverged",
                                remedy="a larger dps (clusters closer than the working precision)") from err
    return ozaki.FixedMatrix(digits, _X_EXPONENT, b)


def _diag_integers(F: ozaki.FixedMatrix) -> tuple[list, int]:
    """Exact diagonal of a fixed-point matrix: integers ``d`` with ``F_ii = d * 2**ulp_exp2``."""
    n = min(F.shape)
    idx = np.arange(n)
    d = F.digits[:, idx, idx].astype(np.int64)
    acc = [0] * n
    b = F.digit_bits
    for row in d.tolist():
        acc = [(a << b) + v for a, v in zip(acc, row)]
    return acc, F.ulp_exp2


def _rayleigh(s_diag, s_exp, g_diag, g_exp):
    """θᵢ = (sᵢ 2**s_exp) / (gᵢ 2**g_exp) as double-double, relative accuracy about 2**-104."""
    n = len(s_diag)
    hi = np.empty(n)
    lo = np.empty(n)
    for i in range(n):
        s, g = int(s_diag[i]), int(g_diag[i])
        if s == 0:
            hi[i] = lo[i] = 0.0
            continue
        # q = round(s / g * 2**shift) with ~120 significant bits
        shift = 120 - (abs(s).bit_length() - g.bit_length())
        q = _round_div(s << shift, g) if shift >= 0 else _round_div(s, g << -shift)
        scale = shift - s_exp + g_exp  # θ = q 2**-scale
        h = _int_to_float(q, scale)
        hi[i] = h
        lo[i] = _int_to_float(q - _float_to_int(h, scale), scale) if h != 0 else 0.0
    return hi, lo


def _sorted_ends(th, tl, order, r_lo, r_hi):
    """Offsets from θ_(i) of the i-th largest lower end θ_k - r_lo_k and upper end θ_k + r_hi_k.

    The ends are formed and ordered in double-double; where the i-th end belongs to position i itself the
    offset is exactly ∓r, otherwise the double-double difference gets a 2**-103 allowance of the θ involved
    (a misordering of ends closer than that changes an end by no more).
    """
    out = []
    for sign, rad in ((-1.0, r_lo), (1.0, r_hi)):
        s, e = _two_sum(th, sign * rad)
        e = e + tl
        hi = s + e
        lo = e - (hi - s)
        k = np.lexsort((-lo, -hi))
        slack = _DD_ENDS * (np.abs(th[k]) + rad[k] + np.abs(th[order]))
        off = ((hi[k] - th[order]) + (lo[k] - tl[order]))
        off = off - slack if sign < 0 else off + slack
        own = k == order
        off[own] = sign * rad[k[own]]
        out.append(off)
    return out[0], out[1]


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _overlap_groups(th, tl, vb) -> list[tuple[int, int]]:
    """Runs of consecutive positions (descending θ) whose intervals θ ± vb overlap."""
    n = len(th)
    if n == 0:
        return []
    gaps = (th[:-1] - th[1:]) + (tl[:-1] - tl[1:])
    join = gaps * (1 - _GAP_ROUNDING) <= vb[:-1] + vb[1:]
    stops = np.flatnonzero(~join) + 1
    starts = np.concatenate(([0], stops))
    stops = np.concatenate((stops, [n]))
    return list(zip(starts.tolist(), stops.tolist()))


def _gap_bits_from_values(w: np.ndarray, k: int) -> int:
    """Bits of ``‖A‖ / gap`` over the top-k of descending float64 eigenvalues (capped at 50)."""
    scale = max(abs(w[0]), abs(w[-1]))
    if scale == 0 or len(w) < 2:
        return 0
    gaps = np.abs(np.diff(w))
    near = np.minimum(np.concatenate(([np.inf], gaps)), np.concatenate((gaps, [np.inf])))[:k]
    ratio = scale / max(np.min(near), scale * 2.0**-_MAX_GAP_BITS)
    return int(math.ceil(min(float(_MAX_GAP_BITS), max(0.0, math.log2(ratio)))))


def _round_div(a: int, b: int) -> int:
    """round(a / b) for b > 0, ties upward."""
    return (2 * a + b) // (2 * b)


def _int_to_float(v: int, scale: int) -> float:
    """float64 of v * 2**-scale, without overflow for long v."""
    t = max(0, abs(v).bit_length() - 1000)
    return math.ldexp(float(v >> t), t - scale)


def _float_to_int(x: float, scale: int) -> int:
    """Exact integer x * 2**scale (x a float64 whose ulp is at least 2**-scale)."""
    m, e = math.frexp(x)
    mant = int(math.ldexp(m, 53))
    shift = e - 53 + scale
    return mant << shift if shift >= 0 else mant >> -shift


def _interval_clusters(linked: np.ndarray, order: np.ndarray) -> list[tuple[int, int]]:
    """Split positions 0..n-1 (sorted by ``order``) into intervals so that every linked pair shares one.

    ``linked[i, j]`` flags a pair of indices; position ``p`` holds index ``order[p]``.
    """
    n = len(linked)
    idx = np.arange(n)
    reach = np.full(n, -1)
    for P in _row_chunks(n, n):
        sub = linked[order[P]][:, order]
        # the last linked position of each row
        last = n - 1 - np.argmax(sub[:, ::-1], axis=1)
        reach[P] = np.where(sub.any(axis=1), last, -1)
    reach = np.maximum(reach, idx)
    reach = np.maximum.accumulate(reach)
    stops = np.flatnonzero(reach == idx) + 1
    starts = np.concatenate(([0], stops[:-1]))
    return list(zip(starts.tolist(), stops.tolist()))
