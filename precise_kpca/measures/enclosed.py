"""Eigen measures certified by rigorous enclosures of a float64 eigensystem (large N, below the structured range).

Where E = σ_X² H K_G H − L is too large for the structured expansion, the eigen measures need the whole
eigensystem of A = σ_X² H K_G H. A multiprecision eigensolver costs O(N³) multiprecision operations — hours at
N in the thousands. Instead:

1. A is built in binary128 (:func:`~precise_kpca.numerics.quad_gram.scaled_gaussian_gram_words`) as float64
   words hi + lo with a rigorous bound on ‖A − (hi + lo)‖_F;
2. the float64 eigensystem of hi is certified by exact products on float64 BLAS
   (:func:`~precise_kpca.certify.eigen_enclosure.enclose_eigensystem`): an interval for every eigenvalue of A
   and a sin Θ bound for each top eigenvector group of Algorithm 1;
3. the measure is evaluated in interval form from those enclosures and the mp linear spectrum: its value is
   the interval's midpoint and its certified digits are those on which the interval's ends agree.

Guarantee: rigorous, given IEEE float64 BLAS (the products are exact integer arithmetic in float64), correctly
rounded binary128 arithmetic and SLEEF's documented 1-ulp expm1 (see the quad builder); the linear
eigenpairs are computed at a precision chosen from their conditioning (:func:`linear_for`) so that their error
(~10^−dps·(λ_1/λ_r)², eigenvectors of small eigenvalues from the d×d problem) stays below 10^−40; it is not
added to the intervals.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np

from ..backends import MPBackend
from ..backends.ozaki import FixedMatrix, matmul
from ..certify.eigen_enclosure import enclose_eigensystem, fmpq_matrix, ritz_subspace_sin_theta
from ..numerics.quad_gram import scaled_gaussian_gram_words
from .measurement import agreeing_digits
from .spectral import linear_groups
from .structured import linear_spectrum

LINEAR_DPS = 40  # digits of the linear side beyond its conditioning: far below any enclosure width
_LINEAR_STEP = 20  # linear precisions are rounded up to multiples of this, so the cache is shared across σ
_PREC = 1000  # bits of the interval arithmetic on the measures: differences of enclosure ends are then exact
_SLACK = 2.0**-500  # absolute widening covering the rounding of that arithmetic (far below any enclosure width)
_A_BITS = 120  # fixed-point bits kept for A = hi + lo (106 carried; the rest keeps the read exact)
_VECTOR_BITS = 128  # float64 eigenvectors and their Newton corrections fit this grid exactly in practice
_SAME = 2.0**-40  # eigenvalues this close (relative to ‖A‖) are one group: no Newton coupling between them
MAX_K = 10


@dataclass(frozen=True)
class SpectrumEnclosure:
    """What the eigen measures at one σ need: eigenvalue intervals and the top groups' bases with sin Θ bounds.

    Attributes
    ----------
    lower, upper : ndarray of mpmath mpf, shape (N,)
        Enclosures of A's eigenvalues, descending.
    vectors, correction : ndarray of float64, shape (N, m)
        The float64 eigenvectors of the top m eigenvalues and one Newton correction: the basis measured is
        vectors + correction (the exact sum of the two words).
    sin_theta : dict of (int, int) to float or None
        Per group [start, stop): bound on ‖sin Θ‖₂ between span (vectors + correction)[:, start:stop] and A's
        invariant subspace (for groups of several vectors the correction is zero there: see
        :func:`_newton_correction`); None when the enclosures cannot separate the group.
    seconds : dict
    """

    lower: np.ndarray
    upper: np.ndarray
    vectors: np.ndarray
    correction: np.ndarray
    sin_theta: dict
    seconds: dict


def linear_for(X: np.ndarray):
    """The mp linear spectrum at LINEAR_DPS digits plus twice its conditioning log10(λ_1/λ_r), cached."""
    first = linear_spectrum(X, LINEAR_DPS)
    values = first.values[: first.rank]
    cond = float(MPBackend(LINEAR_DPS).export(values[0] / values[-1]))
    dps = _LINEAR_STEP * math.ceil((LINEAR_DPS + 2 * math.log10(max(cond, 1.0))) / _LINEAR_STEP)
    return first if dps <= LINEAR_DPS else linear_spectrum(X, dps)


def needed_groups(X: np.ndarray, k_max: int, tau: float) -> tuple[tuple[int, int], ...]:
    """Algorithm 1's groups of every k ≤ k_max (prefixes of one grouping, except possibly the last group)."""
    linear = linear_for(X)
    k_max = min(k_max, linear.rank)
    return tuple(sorted({g for k in range(1, k_max + 1) for g in linear_groups(linear.values, k, tau)}))


def spectrum_enclosure(X: np.ndarray, sigma, *, median: str = "full", k_max: int = 5,
                       tau: float = 1e-6) -> SpectrumEnclosure:
    """Enclosures of A = σ_X² H K_G H's eigenvalues and of its top eigenvector groups (cached per σ).

    Parameters
    ----------
    X : ndarray, shape (N, d)
    sigma : Fraction
    median : {"full", "pairs"}
    k_max : int
        Groups of Algorithm 1 for every k ≤ k_max are bounded.
    tau : float
        Algorithm 1's grouping tolerance.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    return _enclosure_cached(X.tobytes(), X.shape, sigma, median, k_max, tau)


@lru_cache(maxsize=2)
def _enclosure_cached(data: bytes, shape: tuple, sigma, median: str, k_max: int, tau: float) -> SpectrumEnclosure:
    import time

    X = np.frombuffer(data, dtype=np.float64).reshape(shape)
    start = time.perf_counter()
    quad = scaled_gaussian_gram_words(X, sigma, median=median)
    built = time.perf_counter()
    w, V = np.linalg.eigh(quad.hi)
    w, V = w[::-1].copy(), V[:, ::-1].copy()
    solved = time.perf_counter()
    A_hp = FixedMatrix.from_words([quad.hi, quad.lo], bits=_A_BITS)
    # ‖A − A_hp‖_F ≤ the builder's bound + N × the fixed-point read's largest entry error
    delta = quad.error_bound + shape[0] * A_hp.error_bound
    del quad
    groups = needed_groups(X, k_max, tau)
    m = max(stop for _, stop in groups)
    enc = enclose_eigensystem(A_hp, delta, w, V, k=min(max(m, 1), MAX_K, shape[0]), groups=groups)
    enclosed = time.perf_counter()
    sin_theta = {(g.start, g.stop): g.sin_theta for g in enc.groups}
    correction = _newton_correction(A_hp, w, V, m)
    for group, bound in _group_bounds(A_hp, delta, V[:, :m], correction, enc.lower, enc.upper, groups).items():
        if bound is not None:
            old = sin_theta[group]
            sin_theta[group] = bound if old is None else min(old, bound)
    seconds = {"gram": built - start, "eigh": solved - built, "enclosure": enclosed - solved,
               "refinement": time.perf_counter() - enclosed}
    return SpectrumEnclosure(lower=enc.lower, upper=enc.upper, vectors=V[:, :m].copy(), correction=correction,
                             sin_theta=sin_theta, seconds=seconds)


def _newton_correction(A_hp: FixedMatrix, w: np.ndarray, V: np.ndarray, m: int) -> np.ndarray:
    """One Newton step for the top m eigenvectors, shape (N, m): C = −Σ_{j≠i} x̂_j (x̂_jᵀ r_i)/(λ̂_j − λ̂_i).

    The residual r_i = A_hp x̂_i − λ̂_i x̂_i is formed exactly and rounded once, so the step removes the float64
    eigenvector error up to second order; x̂_i + c_i is then held as two float64 words. Its accuracy is not
    assumed anywhere: :func:`_group_bounds` certifies what it achieves.
    """
    top = V[:, :m]
    X = FixedMatrix.from_float64(top, bits=_VECTOR_BITS)
    lam = FixedMatrix.from_float64(np.diag(w[:m]), bits=_VECTOR_BITS)
    residual = (matmul(A_hp, X) - matmul(X, lam)).to_float64()
    gaps = w[:, None] - w[None, :m]  # λ̂_j − λ̂_i
    same = np.abs(gaps) <= _SAME * np.max(np.abs(w))
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = np.where(same, 0.0, -(V.T @ residual) / gaps)
    return V @ coef


def _group_bounds(A_hp: FixedMatrix, delta, top: np.ndarray, correction: np.ndarray, lower, upper,
                  groups) -> dict:
    """Davis–Kahan ‖sin Θ‖₂ for each group [s, t) of the corrected basis x̂ + c (see
    :func:`~precise_kpca.certify.eigen_enclosure.ritz_subspace_sin_theta`): exact g×g products of the basis and
    of A_hp times it, so the Newton step's gain counts for groups of close eigenvalues as for single ones."""
    v = FixedMatrix.from_words([top, correction], bits=_VECTOR_BITS)
    if v.error_bound:
        return {}  # the words did not fit the grid: the span measured would not be the span bounded
    p = matmul(A_hp, v)
    out = {}
    for s, t in groups:
        cols = np.arange(s, t)
        vs, ps = v.take_columns(cols), p.take_columns(cols)
        G, H, Q = (fmpq_matrix(matmul(a.T, b)) for a, b in ((vs, vs), (vs, ps), (ps, ps)))
        bound = ritz_subspace_sin_theta(G, H, Q, delta, lower, upper, s, t)
        out[(s, t)] = None if bound is None else float(bound) * (1 + 2.0**-50)
    return out


def eigenvalue_interval(enc: SpectrumEnclosure, X: np.ndarray):
    """Interval of ‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ (Eq. 18) from the eigenvalue enclosures: (lo, hi) mpf."""
    ctx = _ctx()
    linear = [ctx.mpf(v) for v in linear_for(X).values]
    worst_lo = worst_hi = ctx.zero
    for lo, hi, lam in zip(enc.lower, enc.upper, linear):
        lo, hi = ctx.mpf(lo), ctx.mpf(hi)
        far = max(abs(lo - lam), abs(hi - lam))
        near = ctx.zero if lo <= lam <= hi else min(abs(lo - lam), abs(hi - lam))
        worst_lo, worst_hi = max(worst_lo, near), max(worst_hi, far)
    top = abs(linear[0])
    return _down(ctx, worst_lo / top), _up(ctx, worst_hi / top)  # l_0 is the linear value: see the module note


def eigen_distance_interval(enc: SpectrumEnclosure, X: np.ndarray, k: int, tau: float, aggregate: str):
    """Interval of EigenDist (Algorithm 1, radians) from the enclosed groups: (lo, hi) mpf.

    The largest principal angle is a metric on subspaces of one dimension, so the true angle to the linear
    group lies within arcsin(sin Θ bound) of the angle measured from the float64 basis (computed in mp).
    """
    ctx = _ctx()
    linear = linear_for(X)
    if k > linear.rank:
        raise ValueError(f"k={k} exceeds the rank {linear.rank} of the centered linear Gram")
    bounds = []
    for start, stop in linear_groups(linear.values, k, tau):
        sin_bound = enc.sin_theta.get((start, stop))
        if sin_bound is None or not sin_bound < 1:
            raise ArithmeticError(f"eigenvector group [{start}, {stop}) is not separated from the rest of the "
                                  "spectrum by the enclosures: its subspace is not determined")
        angle = _principal_angle(ctx, enc.vectors[:, start:stop], enc.correction[:, start:stop],
                                 linear.vectors[:, start:stop])
        slack = ctx.asin(ctx.mpf(sin_bound))
        bounds.append((max(angle - slack, ctx.zero), angle + slack))
    if aggregate == "max":
        lo, hi = max(b[0] for b in bounds), max(b[1] for b in bounds)
    else:
        lo, hi = sum(b[0] for b in bounds) / len(bounds), sum(b[1] for b in bounds) / len(bounds)
    return _down(ctx, lo), _up(ctx, hi)


def certified_value(lo, hi):
    """Midpoint of [lo, hi] and the significant digits on which the ends agree (every point of the interval
    agrees with the midpoint to at least that many)."""
    mid = (lo + hi) / 2
    return mid, (agreeing_digits(lo, hi) if hi > 0 else 0)


def _principal_angle(ctx, V: np.ndarray, C: np.ndarray, W) -> object:
    """Largest principal angle between span(V + C) (two float64 words N×g, any basis) and span W (mp,
    orthonormal N×g)."""
    b = MPBackend(ctx.dps)
    Vm = np.array([[b.scalar(float(x)) + b.scalar(float(c)) for x, c in zip(row, crow)] for row, crow in zip(V, C)],
                  dtype=object)
    Wm = np.array([[b.scalar(x) for x in row] for row in W], dtype=object)
    values, vectors = b.eigh(Vm.T.dot(Vm))
    Vo = Vm.dot(vectors / np.array([b.sqrt(v) for v in values], dtype=object)[None, :])
    overlap = Wm.T.dot(Vo)
    outside = Vo - Wm.dot(overlap)
    sin2 = b.eigh(outside.T.dot(outside))[0][0]
    cos2 = b.eigh(overlap.T.dot(overlap))[0][-1]
    zero = b.scalar(0)
    return ctx.mpf(b.export(b.ctx.atan2(b.sqrt(max(sin2, zero)), b.sqrt(max(cos2, zero)))))


def _ctx():
    ctx = mpmath.MPContext()
    ctx.prec = _PREC
    return ctx


def _down(ctx, x):
    """x widened downward by _SLACK·(1 + |x|): covers the 1000-bit rounding of the measure's evaluation (its
    cancellations cost at most a few hundred bits of absolute accuracy at these magnitudes)."""
    return x - (1 + abs(x)) * ctx.mpf(_SLACK)


def _up(ctx, x):
    return x + (1 + abs(x)) * ctx.mpf(_SLACK)
