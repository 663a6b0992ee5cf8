"""Eigen measures from a refined many-digit eigensystem of an arb-enclosed Gram: the ``refined-enclosure`` route.

The two other rigorous eigen routes stop at the binary128 Gram's noise (~1e-30 of ‖A‖): they cannot separate
Gaussian eigenvalues closer than that, nor carry 30+ digits at moderate σ. Here A (S-units, see
:mod:`precise_kpca.certify.linear_enclosure`) is enclosed at any precision and its eigensystem refined to match:

1. **A with a rigorous bound** (:func:`gram_enclosure`). A_S = L_S + E_S with L_S = Z Zᵀ (exact integers) and
   E_S = HΨH, Ψ_ij = s·φ(u_ij), s = N²σ²d², φ(u) = e^{−u} − 1 + u = expm1(−u) + u, u_ij = D_ij / (2σ²d²): D the
   exact integer squared distances, d the mean of the square roots of the one or two exact median values (σ_X =
   σ·d·2^e; the 2^e cancels between u and the S-units). Each distinct Ψ_ij is an arb ball (expm1 keeps its
   absolute error near 2^−w·u: no cancellation at large σ) rounded to W_ij·2^g, the grid 2^g about 2^−bits of
   max|A_S| (at least trace(A_S)/N); with r = W1 and T = 1ᵀW1, N²Â = N²L_S + (N²W − N(r1ᵀ + 1rᵀ) + T11ᵀ)·2^g is
   exact integer arithmetic (int64 limbs; N²L_S by exact Ozaki products), i.e. Â = L_S + H(W·2^g)H exactly. H is
   an orthogonal projector, so ‖A_S − Â‖_F ≤ ‖Ψ − W·2^g‖_F ≤ N·(max rad Ψ_ij + 2^(g−1)): ``error``.
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
from dataclasses import dataclass, replace
from fractions import Fraction

import flint
import mpmath
import numpy as np

from ..arith import ozaki
from ..arith.dyadic import Dyadic, mpf_matrix_to_dyadic
from ..arith.fixed import FixedMatrix
from ..arith.rounding import sqrt_up
from ..backends.base import as_fraction
from ..certify import theorems
from ..certify.eigen_enclosure import ritz_subspace_sin_theta
from ..certify.ritz import gram_lower_bound, ritz_pencil
from ..certify.linear_enclosure import LinearEnclosure, exact_linear, linear_enclosure
from ..errors import InsufficientPrecision, InternalCheckFailed
from ..numerics.eigen_refine import input_bits, refine_eigensystem
from ..numerics.data import data_state
from ..numerics.exact import ExactData
from ..numerics.exact_geometry import ExactEccentricity
from .intervals import aggregate as aggregate_balls
from .intervals import check_k, group_angle, linear_groups_exact, pc_from_parts

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
_GRID_TRIES = 3  # grids tried for A_S before its enclosure is taken for a bug
_LIMB_BITS = 16  # digit width of the fixed-point A as built (the refinement re-splits it to its own, exactly)
_BLOCK_ENTRIES = 1 << 22  # int64 limbs per row block of the E part (32 MB)
_WORDS_MAX_BITS = 1000  # squared distances up to this many bits enter as float64 words (each below 2**1000)


# -- 1. A with a rigorous bound ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class GramEnclosure:
    """N²·A_S (A_S = σ_X² H K_G H in S-units) as an exact fixed-point matrix, and a bound on its distance to the
    true one. The factor N² makes the centering exact in integers (N²H = N²I − N·11ᵀ).

    Attributes
    ----------
    fixed : FixedMatrix, shape (N, N)
        N²·Â·2^−shift, entries at most 1/2 in magnitude, exactly symmetric.
    unit : Fraction
        2^shift/N²: Â = fixed·unit (S-units).
    error : float
        Upper bound on ‖A_S − Â‖_F / unit (the units of ``fixed``).
    kernel_digits : int
        ⌊−log10 max K_ij⌋ over pairs of distinct rows (u_min·log10 e, a float64 estimate): at small σ (K ≈ I) the
        top eigenvalues ≈ σ_X² split at about that size (0 when every row is the same as another).
    """

    fixed: FixedMatrix
    unit: Fraction
    error: float
    kernel_digits: int


def gram_enclosure(X: np.ndarray, sigma: Fraction, *, bits: int, median: str = "full") -> GramEnclosure:
    """N²·A_S on a grid at most 2^−bits of its largest entry, with a rigorous Frobenius bound (module docstring, 1.).

    Parameters
    ----------
    X : ndarray, shape (N, d)
        Validated float64 data (exact).
    sigma : Fraction
        Standardized bandwidth (σ_X = σ·d_X).
    bits : int
        Grid bits below max |A_S| (about; a trace bound fixes the grid); ``error`` is below N·2^−bits.
    median : {"full", "pairs"}
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    D = ExactData.from_float64(X).squared_distance_integers
    upper = np.triu_indices(n, 1)
    index: dict = {}
    inverse = np.fromiter((index.setdefault(v, len(index)) for v in D[upper].tolist()), dtype=np.intp,
                          count=len(upper[0]))
    values = list(index)  # the distinct squared distances: one ball each (one-hot data have few)
    pairs = _Pairs(values, np.bincount(inverse, minlength=len(values)), upper, inverse)
    roots = ExactEccentricity(X, median).median_sq
    # log2 u = log2 D − 1 − 2 log2 σ − 2 log2 d, d the mean of the roots: estimates for precision choices only,
    # in logarithms so that no data range overflows a float
    halves = [math.log2(v) / 2 if v else -math.inf for v in roots]
    top = max(halves)
    log2_d = top + math.log2(sum(2.0 ** (h - top) for h in halves) / len(halves))
    scale = 1 + 2 * _log2(sigma) + 2 * log2_d
    log2_u_max = math.log2(max(values)) - scale
    positive = [v for v in values if v]
    kernel_digits = 0
    if positive:  # ⌊u_min·log10 e⌋, capped far beyond any precision
        kernel_digits = math.floor(2.0 ** min(math.log2(min(positive)) - scale, 60.0) * math.log10(math.e))
    z = exact_linear(X).z.to_int_array()
    for _ in range(_GRID_TRIES):
        deficit, gram = _gram_on_grid(z, pairs, roots, sigma, bits=bits, log2_u_max=log2_u_max)
        if gram is not None:
            return replace(gram, kernel_digits=kernel_digits)
        bits += deficit
    raise InternalCheckFailed(f"the enclosure of A_S missed its accuracy at {_GRID_TRIES} grids (bits={bits})")


@dataclass(frozen=True)
class _Pairs:
    """The distinct squared distances of the pairs i < j, their multiplicities, and where each pair's is."""

    values: list
    counts: np.ndarray
    upper: tuple
    inverse: np.ndarray


def _gram_on_grid(z: np.ndarray, pairs: _Pairs, roots, sigma: Fraction, *, bits: int, log2_u_max: float):
    """(0, GramEnclosure), or (bits short, None) when the bound exceeds N·2^−bits of the result's scale.

    Ψ = sΦ (s = N²σ²d²) on the grid 2^g: W = round(Ψ·2^−g) per distinct distance; then
    N²Â = N²L_S + (N²W − N(r1ᵀ + 1rᵀ) + T11ᵀ)·2^g with r = W1, T = 1ᵀW1, so Â = L_S + H(W·2^g)H exactly and
    ‖A_S − Â‖_F ≤ ‖Ψ − W·2^g‖_F ≤ N·max|Ψ_ij − W_ij·2^g| (H an orthogonal projector; zero diagonal).
    """
    n = z.shape[0]
    # arb bits: φ(u) = expm1(−u) + u errs by about 2^−w·max(u, 1) relative to φ's scale, which max|A| can
    # undercut by min(1, u_max) (A ≈ L at large σ): w covers both and log2 N + 32 guard bits
    w = bits + max(1, math.ceil(math.log2(n))) + 32 + abs(math.ceil(log2_u_max))
    with flint.ctx.workprec(w):
        d = sum((flint.arb(v).sqrt() for v in roots), flint.arb(0)) / len(roots)
        s2 = flint.arb(flint.fmpq(sigma.numerator, sigma.denominator)) ** 2 * d * d
        phis = _phi_balls(pairs.values, -1 / (2 * s2))
        s = s2 * (n * n)
        # trace(A_S) = ‖Z‖_F² − s·(Σ_ij φ_ij)/N, and max|A_S| ≥ trace/N (A_S is positive semidefinite)
        total = (sum(phis, flint.arb(0)) + sum((int(c - 1) * phis[i] for i, c in enumerate(pairs.counts) if c > 1),
                                                flint.arb(0))) * 2
        trace = flint.arb(int((z.astype(object) ** 2).sum())) - s * total / n
        # a ball straddling 0 (σ so small that the arb bits miss the cancellation of L_S against E_S): A ≈ s·H
        trace_low = trace.lower() if trace > 0 else (s * (n - 1) / 2).lower()
        g = min(0, math.floor(float((flint.arb(trace_low) / n).log().lower()) / math.log(2)) - bits)
        W, worst = _on_grid(phis, s * flint.arb(2) ** -g)
    fixed_e = _centered_on_grid(W, pairs, n, g)
    nz = FixedMatrix.from_integers(z * n, 0)
    total_fixed = ozaki.matmul(nz, nz.T) + fixed_e  # N²L_S exactly, plus the E part: exact
    fixed, shift = _normalised(total_fixed)
    with flint.ctx.workprec(64):
        # ‖A_S − Â‖_F ≤ N·(max rad + 1/2)·2^g (S-units); fixed = N²Â·2^−shift
        error = flint.arb(n) ** 3 * (worst + flint.arb(1) / 2) * flint.arb(2) ** (g - shift)
        budget = flint.arb(n) * flint.arb(2) ** (-bits)
        if not error < budget:
            return max(1, math.ceil(float((error / budget).log().upper()) / math.log(2))) + 8, None
        bound = math.nextafter(float(error.upper()), math.inf)
    return 0, GramEnclosure(fixed=fixed, unit=Fraction(2) ** shift / (n * n), error=bound, kernel_digits=0)


def _phi_balls(values: list, c: flint.arb) -> list:
    """φ(−c·v) = expm1(c·v) − c·v for each v (c < 0): arb balls at the context's precision.

    Each v (an integer of up to hundreds of bits) enters as exact 52-bit float64 words: python-flint converts
    large Python ints through their decimal text, several times slower than the whole ball evaluation. Integers
    beyond float64's range (data spanning more than ~1e150) are converted directly.
    """
    if max(values).bit_length() > _WORDS_MAX_BITS:
        exact = [flint.arb(v) for v in values]
    else:
        exact = [sum((flint.arb(x) for x in parts), flint.arb(0)) for parts in zip(*_float_words(values))]
    balls = []
    for v in exact:
        u = c * v
        balls.append(u.expm1() - u)
    return balls


def _float_words(values: list) -> list:
    """Exact float64 words of nonnegative integers: v = Σ_k words[k][i] (each word a multiple of 2^(52k))."""
    v = np.array(values, dtype=object)
    top = max(int(x).bit_length() for x in values) if values else 0
    words = []
    for k in range(max(1, -(-top // 52))):
        chunk = ((v >> (52 * k)) & ((1 << 52) - 1)).astype(np.float64)
        words.append(np.ldexp(chunk, 52 * k).tolist())
    return words


def _on_grid(balls: list, scale: flint.arb) -> tuple[list, flint.arb]:
    """Integers round(mid(scale·b)) for the balls b, and a ball ≥ max rad(scale·b) (the rounding adds ≤ 1/2)."""
    out, worst = [], flint.arb(0)
    for b in balls:
        x = scale * b
        man, exp = (int(t) for t in x.mid().man_exp())
        out.append(man << exp if exp >= 0 else (man + (1 << (-exp - 1))) >> -exp)
        radius = x.rad()
        if radius > worst:
            worst = radius
    return out, worst


def _centered_on_grid(W: list, pairs: _Pairs, n: int, g: int) -> FixedMatrix:
    """The exact FixedMatrix of (N²W − N(r1ᵀ + 1rᵀ) + T11ᵀ)·2^g for W symmetric with zero diagonal (given per
    distinct distance), built in int64 16-bit limbs row block by row block."""
    table = np.vstack([_limbs(W), np.zeros((1, _limb_count(W)), dtype=np.int64)])  # last row: the diagonal's 0
    index = np.full((n, n), len(W), dtype=np.intp)
    index[pairs.upper] = pairs.inverse
    index[pairs.upper[1], pairs.upper[0]] = pairs.inverse
    rows = max(1, _BLOCK_ENTRIES // (n * table.shape[1]))
    r = np.vstack([table[index[i:i + rows]].sum(axis=1) for i in range(0, n, rows)])  # |r| < N·2^16 per limb
    t = r.sum(axis=0)
    # |N²W − N(r_i + r_j) + T| < 4N²·2^16 per limb: the carry adds at most this many limbs on top
    levels = table.shape[1] + (2 * n.bit_length() + 2) // _LIMB_BITS + 2
    digits = np.empty((levels, n, n))
    for i in range(0, n, rows):
        block = table[index[i:i + rows]] * (n * n) - (r[i:i + rows, None, :] + r[None, :, :]) * n + t
        digits[:, i:i + rows, :] = _balanced(np.moveaxis(block, -1, 0), levels)
    return FixedMatrix(digits, g + _LIMB_BITS * levels, _LIMB_BITS)


def _limb_count(W: list) -> int:
    """16-bit limbs that hold every integer of W in two's complement."""
    return max((abs(v).bit_length() for v in W), default=0) // _LIMB_BITS + 1


def _limbs(W: list) -> np.ndarray:
    """Little-endian 16-bit limbs of integers (int64, shape (len(W), L)); the top limb is signed."""
    count = _limb_count(W)
    raw = np.frombuffer(b"".join(v.to_bytes(2 * count, "little", signed=True) for v in W), dtype="<u2")
    limbs = raw.reshape(len(W), count).astype(np.int64)
    half, full = 1 << (_LIMB_BITS - 1), 1 << _LIMB_BITS
    limbs[:, -1] = np.where(limbs[:, -1] >= half, limbs[:, -1] - full, limbs[:, -1])
    return limbs


def _balanced(levels: np.ndarray, count: int) -> np.ndarray:
    """Balanced float64 digits, most significant first (shape (count,) + rest), of Σ_l levels[l]·2^(16l) for
    little-endian int64 levels (|levels| < 2^46): carried upward, the value fitting ``count`` limbs."""
    out = np.zeros((count,) + levels.shape[1:])
    carry = np.zeros(levels.shape[1:], dtype=np.int64)
    half, mask = 1 << (_LIMB_BITS - 1), (1 << _LIMB_BITS) - 1
    for l in range(count):
        v = carry + levels[l] if l < len(levels) else carry
        digit = ((v + half) & mask) - half
        carry = (v - digit) >> _LIMB_BITS
        out[count - 1 - l] = digit
    if np.any(carry):
        raise InternalCheckFailed(f"the centered E part does not fit {count} limbs of {_LIMB_BITS} bits")
    return out


def _normalised(total: FixedMatrix) -> tuple[FixedMatrix, int]:
    """(total·2^−shift, shift) with the least exponent for the value (no leading zero bits: the refinement counts
    its precision from the exponent) and entries at most 1/2."""
    lead = next(k for k in range(total.n_digits) if np.any(total.digits[k]))  # max_abs_bound reads two digits
    total = FixedMatrix(total.digits[lead:], total.exponent - lead * total.digit_bits, total.digit_bits)
    bound = total.scaled2(-total.exponent).max_abs_bound()  # ≤ 1/2: no float64 overflow whatever the exponent
    mantissa, exp2 = math.frexp(bound)
    least = total.exponent + exp2 + (0 if mantissa > 0.5 else -1) + 1  # bound ≤ 2^(least − 1)
    exact = total.rounded(least - total.ulp_exp2, exponent=least)  # the same grid: no rounding
    return exact.scaled2(-least), least


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


def _log2(x: Fraction) -> float:
    """log2 of a positive rational of any size (no float conversion of the rational itself)."""
    return math.log2(x.numerator) - math.log2(x.denominator)


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
    check_k(lin, k, "pc")
    angles, mus = [], []
    for i in range(k):
        for edge in (i, i + 1):
            if not lin.separated(edge):
                lin.sin_theta(i, i + 1)  # raises: a PC of a repeated linear eigenvalue depends on the basis
        angles.append(_group_angle(enc, i, i + 1))
        mus.append((enc.lower(i), enc.upper(i)))
    return pc_from_parts(lin, mus, angles)


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
