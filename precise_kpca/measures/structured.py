"""Eigen measures from the structured spectrum of L + E (no eigensolver on the full scaled Gram).

:class:`~precise_kpca.numerics.perturbed_spectrum.PerturbedSpectrum` gives δ_i = μ_i − λ_i, the top null-block
eigenvalue and the top eigenvectors as v_i = W x_i + z_i (z_i ⊥ W). Every measure below is then a
combination of E-sized numbers: no step subtracts two O(‖L‖) quantities, so E may be held in float64. The
linear part is computed at the precision the cancellation would have cost (``linear_dps``) and cached per
data set.
"""
from __future__ import annotations

import math

import numpy as np

from ..backends import Backend, MPBackend, get_backend
from ..errors import InsufficientPrecision
from ..numerics import double_center, gaussian_residual
from ..numerics.data import data_state
from ..numerics.linear_spectrum import LinearSpectrum
from ..numerics.perturbed_spectrum import PerturbedSpectrum
from ..numerics import binary128_residual
from ..numerics.residual_series import SERIES_LIMIT, ResidualSeries
from .spectral import linear_groups, require_k_within_rank

_LINEAR_DPS_STEP = 20  # round linear precisions up to a multiple of this, so the cache is reused across σ
_MIN_VECTORS = 5
BINARY128_MIN_N = 600  # above this the mp twin's E is binary128 words with exact products, not N² mpf objects


def linear_dps(X: np.ndarray, e_norm: float, working_dps: int) -> int:
    """Digits the linear eigenpairs need so that their error stays below the working eps relative to ‖E‖.

    Their absolute error is ~10^−dps · λ_1 · (λ_1/λ_r) (eigenvectors of small eigenvalues from the d×d
    problem); relative to E-sized results that is multiplied by λ_1/‖E‖.
    """
    centered = X - X.mean(axis=0)
    spectrum = np.linalg.eigvalsh(centered.T @ centered)
    top = spectrum.max()
    positive = spectrum[spectrum > X.shape[0] * 2.0**-52 * top]
    need = working_dps + math.log10(top / max(e_norm, 1e-300)) + math.log10(top / positive.min()) + 10
    return _LINEAR_DPS_STEP * math.ceil(max(need, 30) / _LINEAR_DPS_STEP)


def _linear_cached(X: np.ndarray, dps: int) -> LinearSpectrum:
    return LinearSpectrum(X, MPBackend(dps))


def linear_spectrum(X: np.ndarray, dps: int) -> LinearSpectrum:
    """The mp linear spectrum of X at ``dps`` digits, kept per data set and precision."""
    return data_state(X).derived(_linear_cached, dps, keep=8)


def perturbed_spectrum(X: np.ndarray, sigma, backend: Backend, k: int, median: str = "full") -> PerturbedSpectrum:
    """Structured spectrum of σ_X² H K_G H = L + E at bandwidth σ, E in ``backend``'s arithmetic.

    Kept (the last two) per data set, σ, backend and precision: the eigen measures at one σ share it.
    """
    state = data_state(X)
    rank_bound = min(state.shape)
    return state.derived(_perturbed_cached, sigma, backend.name, backend.dps, median,
                         min(rank_bound, max(k, _MIN_VECTORS)), keep=2)


def _perturbed_cached(X: np.ndarray, sigma, backend_name: str, dps: int, median: str, k: int) -> PerturbedSpectrum:
    shape = X.shape
    backend = get_backend(backend_name, None if backend_name != "mp" else dps)
    E = None
    # E from exact data at working precision: binary128 words with exact products, or the σ-independent series
    if backend.exact_input and shape[0] > BINARY128_MIN_N and dps <= binary128_residual.MAX_DPS:
        E = binary128_residual.Binary128ResidualOperator(X, sigma, backend, median)
        e_norm = E.frobenius
    elif backend.exact_input:
        series = data_state(X).derived(_series_cached, dps, median, keep=2)
        if series.u_max(backend.scalar(sigma) * series.median_distance) <= SERIES_LIMIT:
            E = series.operator(sigma)
            e_norm = E.frobenius
    if E is None:
        E = double_center(gaussian_residual(X, sigma, backend=backend, median=median)).deviation
        e_norm = backend.to_float(backend.sqrt((E * E).sum()))
    linear = linear_spectrum(X, linear_dps(X, e_norm, backend.dps))
    return PerturbedSpectrum(linear, E, backend, min(linear.rank, k))


def _series_cached(X: np.ndarray, dps: int, median: str) -> ResidualSeries:
    """The σ-independent series pieces of E for one data set (mp only): E(σ) at C speed for large σ."""
    return ResidualSeries(X, MPBackend(dps), median)


def covers(ps: PerturbedSpectrum, name: str, k: int, tau: float) -> bool:
    """Whether ``ps`` gives measure ``name`` at rank k: it applies and, for eigenvectors, Algorithm 1's groups
    of the top k lie inside the computed top block.

    Raises
    ------
    ValueError
        For eigenprojection and pc with k beyond the rank of L (:func:`~.spectral.require_k_within_rank`),
        before any full eigensolver or second evaluation is started.
    """
    if name in ("eigenprojection", "pc"):
        require_k_within_rank(k, ps.linear)
    if not ps.applicable:
        return False
    if name == "eigenvalue":
        return True
    if k > len(ps.coords):
        return False
    if name == "pc":  # Theorem 3's formula below takes x_i = 1: eigenvalue i alone in its cluster
        return all(z - a == 1 for a, z in ps.clusters if a < k)
    return max(stop for _, stop in linear_groups(ps.lam, k, tau)) <= len(ps.coords)


def eigenvalue_difference(ps: PerturbedSpectrum):
    """‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞: the top shifts, and the rest block's largest eigenvalues against the rest
    of the linear ones and a zero (every smaller eigenvalue of A is paired with a zero and is smaller still)."""
    paired = zip(ps.rest_values, ps.rest_lam + [ps.backend.scalar(0)])
    largest = max(max(abs(d) for d in ps.shifts), max((abs(v - lam) for v, lam in paired), default=0))
    return largest / ps.lam[0]


def eigen_distance(ps: PerturbedSpectrum, k: int, tau: float, aggregate: str):
    """EigenDist of Algorithm 1 over the top-k linear eigenvalues, from the structured eigenvectors."""
    if k > len(ps.coords):
        raise ValueError(f"k={k} exceeds the {len(ps.coords)} eigenvectors computed")
    groups = linear_groups(ps.lam, k, tau)
    _check_linear_defined(ps, [stop for _, stop in groups])
    thetas = [_group_angle(ps, start, stop) for start, stop in groups]
    return max(thetas) if aggregate == "max" else sum(thetas) / len(thetas)


def _check_linear_defined(ps: PerturbedSpectrum, edges) -> None:
    """Refuse angles to linear eigenvectors that are arbitrary: λ_{e−1} = λ_e at an edge e of the measured
    subspaces (e.g. a symmetry of the data). Both evaluations share the linear basis, so their agreement
    would certify an arbitrary angle; the floor is 10^(−dps/2)·λ_1 at the linear spectrum's precision."""
    lb, values = ps.linear.backend, ps.linear.values
    floor = abs(values[0]) * lb.scalar(10) ** (-(lb.dps // 2))
    for edge in edges:
        if 0 < edge < ps.linear.rank and not values[edge - 1] - values[edge] > floor:
            raise InsufficientPrecision(
                f"linear eigenvalues {edge - 1} and {edge} coincide to {lb.dps // 2} digits: the top-{edge} "
                "linear eigenvectors (and the angles measured to them) are not determined at this precision")


def _group_angle(ps: PerturbedSpectrum, start: int, stop: int):
    """Largest principal angle between span{v_i} and span{w_i}, i in [start, stop).

    With Gram G = XᵀX + ZᵀZ of the group's coordinates, sin² θ_max = λ_max(G^{−1/2} (X_outᵀX_out + ZᵀZ) G^{−1/2})
    and cos² θ_max = λ_min(G^{−1/2} X_inᵀX_in G^{−1/2}); atan2 keeps tiny angles to full relative accuracy.
    """
    b = ps.backend
    xs = np.array([ps.coords[i][0] for i in range(start, stop)], dtype=b.dtype).T  # r × g
    zs = np.array([ps.coords[i][1] for i in range(start, stop)], dtype=b.dtype).T  # N × g
    inside = xs[start:stop]
    outside = np.concatenate([xs[:start], xs[stop:]])
    zz = zs.T.dot(zs)
    gram = xs.T.dot(xs) + zz
    values, vectors = b.eigh(gram)
    half = vectors / b.sqrt(values)[None, :]  # G^{−1/2} up to an orthogonal factor
    sin_block = half.T.dot(outside.T.dot(outside) + zz).dot(half)
    cos_block = half.T.dot(inside.T.dot(inside)).dot(half)
    sin2 = b.eigh((sin_block + sin_block.T) / 2)[0][0]
    cos2 = b.eigh((cos_block + cos_block.T) / 2)[0][-1]
    zero = b.scalar(0)
    return b.atan2(b.sqrt(max(sin2, zero)), b.sqrt(max(cos2, zero)))


def pc_dissonance(ps: PerturbedSpectrum, k: int):
    """max_{i<k} ‖σ_X·PC_G,i − PC_L,i‖ / ‖PC_L,i‖ (Theorem 3) from the structured eigenvectors.

    With v = W x + z (x_i = 1), ‖v‖² = 1 + s, s = Σ_{j≠i} x_j² + ‖z‖², and μ = λ + δ:
    the i-th coordinate of √μ v/‖v‖ − √λ w_i is (δ − λ s) / ((√μ + √λ √(1+s)) √(1+s)) — no cancellation.
    """
    b = ps.backend
    _check_linear_defined(ps, range(1, k + 1))
    worst = b.scalar(0)
    for i in range(k):
        x, z = ps.coords[i]
        lam, delta = ps.lam[i], ps.shifts[i]
        mu = lam + delta
        s = sum(x[j] * x[j] for j in range(len(x)) if j != i) + z.dot(z)
        norm = b.sqrt(1 + s)
        along = (delta - lam * s) / ((b.sqrt(mu) + b.sqrt(lam) * norm) * norm)
        across2 = mu * s / (1 + s)
        worst = max(worst, b.sqrt(along * along + across2) / b.sqrt(lam))
    return worst
