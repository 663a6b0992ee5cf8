"""RKHS metric dissonance (paper Eq. 17, Definition 1), without cancellation.

With u = |x_i − x_j|²/2σ_X², the Gaussian RKHS squared distance is d_G² = −2 expm1(−u) (Eq. 5; the same for
K and HKH by Lemma 1) and the linear one is d_L² = |x_i − x_j|² =: D. Writing G = σ_X²(e^{−u} − 1 + u),

    σ_X d_G − d_L = √(D − 2G) − √D = −2G / (√(D − 2G) + √D),

a form in which no two nearly equal numbers are subtracted. The relative dissonance divides the max over
pairs by diam(X). ``float64-naive`` instead takes the paper's route (exp, double centering, Eq. 6).

Rigorous enclosure (``arb``): per pair the dissonance relative to d_L is 1 − √((1 − e^{−u})/u), increasing in
u (proofs/theorem2), so the maximum is the diameter pair's, and the relative dissonance is R(v) at
v = ρ²/2σ²; ball arithmetic on the exact ρ² (:class:`~precise_kpca.numerics.exact_geometry.ExactEccentricity`,
which finds the diameter and median pairs without all N² exact distances) encloses it.
"""
from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from ..backends import Backend
from ..numerics import double_center, gaussian_gram, rkhs_sq_distances
from ..numerics.data import data_state
from ..numerics.exact_geometry import ExactEccentricity
from ..numerics.geometry import squared_distances
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

    ``prec`` is the target precision in bits; the evaluation adds the bits that e^{−v} − 1 + v cancels.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    return dissonance_ball(eccentricity(X, median), sigma, prec)


def eccentricity(X: np.ndarray, median: str = "full") -> ExactEccentricity:
    """Exact ρ² of a data set, kept by its :class:`~precise_kpca.numerics.data.DataState` (one exact pass serves
    every σ)."""
    return data_state(X).derived(ExactEccentricity, median, keep=8)


def dissonance_ball(ecc: ExactEccentricity, sigma: Fraction, prec: int) -> flint.arb:
    """R(v) = 1 − √((1 − e^{−v})/v), v = ρ²/2σ², as (e^{−v} − 1 + v)/v / (1 + √((1 − e^{−v})/v)): no cancellation
    beyond the log2(1/v) bits of e^{−v} − 1 + v, which the working precision adds."""
    with flint.ctx.workprec(64):
        rough = ecc.rho_squared() * sigma.denominator**2 / (2 * sigma.numerator**2)
        man, exp = rough.mid().man_exp()
        cancelled = max(0, -(int(exp) + int(man).bit_length())) + 8
    with flint.ctx.workprec(prec + cancelled + 32):
        v = ecc.rho_squared() * sigma.denominator**2 / (2 * sigma.numerator**2)
        residual_over_v = ((-v).expm1() + v) / v
        ratio = -(-v).expm1() / v
        return residual_over_v / (1 + ratio.sqrt())
