"""The refined route's Gram: N²·A_S as an exact fixed-point matrix with a rigorous bound on its distance to the true
one, at any precision (step 1 of :mod:`.refined_enclosed`).

A_S = L_S + E_S with L_S = Z Zᵀ (exact integers) and E_S = HΨH, Ψ_ij = s·φ(u_ij), s = N²σ²d², φ(u) = e^{−u} − 1 + u
= expm1(−u) + u, u_ij = D_ij / (2σ²d²): D the exact integer squared distances, d the mean of the square roots of the
one or two exact median values (σ_X = σ·d·2^e; the 2^e cancels between u and the S-units). Each distinct Ψ_ij is an
arb ball (expm1 keeps its absolute error near 2^−w·u: no cancellation at large σ) rounded to W_ij·2^g, the grid 2^g
about 2^−bits of max|A_S| (at least trace(A_S)/N); with r = W1 and T = 1ᵀW1, N²Â = N²L_S + (N²W − N(r1ᵀ + 1rᵀ) +
T11ᵀ)·2^g is exact integer arithmetic (int64 limbs; N²L_S by exact Ozaki products), i.e. Â = L_S + H(W·2^g)H
exactly. H is an orthogonal projector, so ‖A_S − Â‖_F ≤ ‖Ψ − W·2^g‖_F ≤ N·(max rad Ψ_ij + 2^(g−1)): ``error``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import flint
import numpy as np

from ..arith import ozaki
from ..arith.fixed import FixedMatrix
from ..numerics.linear_exact import exact_linear
from ..errors import InternalCheckFailed
from ..numerics.exact import ExactData
from ..numerics.exact_geometry import ExactEccentricity

_GRID_TRIES = 3  # grids tried for A_S before its enclosure is taken for a bug
_LIMB_BITS = 16  # digit width of the fixed-point A as built (the refinement re-splits it to its own, exactly)
_BLOCK_ENTRIES = 1 << 22  # int64 limbs per row block of the E part (32 MB)
_WORDS_MAX_BITS = 1000  # squared distances up to this many bits enter as float64 words (each below 2**1000)


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


def _log2(x: Fraction) -> float:
    """log2 of a positive rational of any size (no float conversion of the rational itself)."""
    return math.log2(x.numerator) - math.log2(x.denominator)
