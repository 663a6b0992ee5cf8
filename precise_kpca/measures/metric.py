"""RKHS metric dissonance (paper Eq. 17, Definition 1), without cancellation.

With u = |x_i − x_j|²/2σ_X², the Gaussian RKHS squared distance is d_G² = −2 expm1(−u) (Eq. 5; the same for
K and HKH by Lemma 1) and the linear one is d_L² = |x_i − x_j|² =: D. Writing G = σ_X²(e^{−u} − 1 + u),

    σ_X d_G − d_L = √(D − 2G) − √D = −2G / (√(D − 2G) + √D),

a form in which no two nearly equal numbers are subtracted. The relative dissonance divides the max over
pairs by diam(X). ``float64-naive`` instead takes the paper's route (exp, double centering, Eq. 6).

Rigorous enclosure (``arb``): per pair the dissonance relative to d_L is 1 − √((1 − e^{−u})/u), increasing in
u (proofs/theorem2), so the maximum is the diameter pair's; ball arithmetic on exact integer data encloses it.
"""
from __future__ import annotations

import flint
import numpy as np

from ..backends import Backend
from ..numerics import double_center, gaussian_gram, rkhs_sq_distances
from ..numerics.exact import ExactData
from ..numerics.geometry import check_median, squared_distances
from ..numerics.kernels import _Prepared, _scaled_arguments


def metric_dissonance_value(X, sigma, backend: Backend, median: str = "full"):
    """Relative metric dissonance max_ij |σ_X d_G − d_L| / diam, over all pairs, in one backend."""
    if backend.naive:
        K = gaussian_gram(X, sigma, backend=backend, median=median)
        sq_gauss = rkhs_sq_distances(double_center(K)).deviation
        sq_lin = squared_distances(np.asarray(X, dtype=np.float64), backend)
        sigma_x = K.meta["sigma_x"]
        gap = np.abs(sigma_x * np.sqrt(np.maximum(sq_gauss, 0.0)) - np.sqrt(sq_lin))
        return gap.max() / np.sqrt(sq_lin.max())
    prep = _Prepared(X, backend, None)
    bw = prep.bandwidth(sigma, True, median)
    u = _scaled_arguments(prep, bw)
    residual = backend.exp_residual(u) * (bw.sigma_x * bw.sigma_x)
    root = backend.sqrt(prep.sq)
    iu = np.triu_indices(prep.sq.shape[0], 1)  # the diagonal is 0/0: distinct pairs only
    residual, root, sq = residual[iu], root[iu], prep.sq[iu]
    gap = 2 * residual / (backend.sqrt(sq - 2 * residual) + root)
    return max(gap) / max(root)


def metric_dissonance_ball(X, sigma, *, prec: int, median: str = "full") -> flint.arb:
    """Rigorous arb enclosure of the relative metric dissonance at bandwidth σ (exact Fraction).

    ``prec`` is the target precision in bits; the evaluation adds the bits that e^{−u} − 1 + u cancels.
    python-flint has one global precision: it is set for this call and restored, whatever happens.
    """
    check_median(median)
    exact = ExactData.from_float64(np.asarray(X, dtype=np.float64))
    sq = exact.squared_distance_integers  # exact integers; the factor 2**(2 e) cancels in u
    saved = flint.ctx.prec
    try:
        flint.ctx.prec = 64
        d_x = _median_distance_ball(sq, median)
        s = flint.arb(sigma.numerator) / sigma.denominator
        rough_u = flint.arb(int(sq.max())) / (2 * d_x * d_x * s * s)
        man, exp = rough_u.mid().man_exp()
        cancelled = max(0, -(int(exp) + int(man).bit_length())) + 8  # ≥ log2(1/u) bits
        flint.ctx.prec = prec + cancelled + 32
        d_x = _median_distance_ball(sq, median)
        s = flint.arb(sigma.numerator) / sigma.denominator
        u = flint.arb(int(sq.max())) / (2 * d_x * d_x * s * s)
        residual_over_u = ((-u).expm1() + u) / u  # cancels log2(1/u) bits, paid for above
        ratio = -(-u).expm1() / u
        return residual_over_u / (1 + ratio.sqrt())
    finally:
        flint.ctx.prec = saved


def _median_distance_ball(sq: np.ndarray, median: str) -> flint.arb:
    n = sq.shape[0]
    pairs = sorted(sq[np.triu_indices(n, 1)])
    if median == "full":
        count = n * n
        element = lambda k: 0 if k < n else pairs[(k - n) // 2]  # noqa: E731
    else:
        count = len(pairs)
        element = lambda k: pairs[k]  # noqa: E731
    if count % 2:
        return flint.arb(int(element(count // 2))).sqrt()
    return (flint.arb(int(element(count // 2 - 1))).sqrt() + flint.arb(int(element(count // 2))).sqrt()) / 2
