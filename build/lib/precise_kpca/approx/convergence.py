"""Do Theorems 2–3 carry over to Nyström and random-feature KPCA? Large-σ limits, measured in mp.

Limits (derived; the functions below measure the approach to them):

* **Nyström.** The landmark span contains, as σ → ∞, the (scaled) linear functions as soon as the m
  landmarks affinely span R^d. ``σ_X² Σ̂`` tends to the linear sample covariance and its compression onto the
  landmark span keeps the linear part, so ``σ_X² λ̃_l → μ_l``, the eigenvalues of the *full-sample* linear
  covariance ``H X Xᵀ H / (n−1)`` (not of the subsample's). The Gaussian kernel is even in x − y, so the
  expansion is in σ⁻²: the expected rate is ``|σ_X² λ̃_l / μ_l − 1| ≈ C_l σ⁻²``.
* **Random features.** With ``w = ω/σ_X``, ``ω ~ N(0, I)``, a feature ``cos(w·x + b)`` linearises:
  centered, ``z(x) − z̄ ≈ −√(2/D) sin(b) ω·(x − x̄)/σ_X``. So at fixed features ``σ_X² Σ̂_D`` tends to the
  covariance of the *randomly projected* data ``P x`` with ``P = √(2/D) diag(sin b) Ω`` (``kind="cos"``) or
  ``P = √(2/D) [0; Ω]`` (``kind="sincos"``): RF-KPCA → linear PCA of the random projection, whose nonzero
  eigenvalues are ``eig(C Q)``, ``C`` the sample covariance and ``Q = Pᵀ P`` (``E Q = I``, so this limit
  tends to linear PCA as D → ∞, at the Monte-Carlo rate D^{−1/2}). The ``"cos"`` map is not shift-invariant:
  its kernel has a cubic term ``∝ Σ_k sin(2b_k)(w_k·x)²(w_k·y)`` that survives centering, so the approach is
  only O(σ⁻¹), with a constant of size O(D^{−1/2}) (it averages to 0 over b); ``"sincos"`` is even in
  x − y and converges at O(σ⁻²) like Theorem 3.

Every quantity is computed on the mp backend from the exact data; each σ is evaluated at two precisions
and the agreement is reported as ``certified_digits`` (CONTRIBUTING: agreement of independent evaluations).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..backends import get_backend
from ..validation import check_data, parse_sigma
from .kpca import (_center_columns, _cross, _draw_landmarks, _unit_features, empirical_kpca, gaussian_bandwidth,
                   nystrom_kpca, rf_kpca, rff_features)

__all__ = ["ConvergenceStudy", "linear_limit", "large_sigma_convergence", "METHODS"]

METHODS = ("exact", "nystrom", "rf-cos", "rf-sincos")


@dataclass(frozen=True)
class ConvergenceStudy:
    """Relative eigenvalue errors of an approximate KPCA against its linear limit, versus σ.

    Attributes
    ----------
    method : str
        One of :data:`METHODS`.
    sigmas : ndarray of float, shape (S,)
        Standardized bandwidths σ (σ_X = d_X·σ).
    limit : ndarray, shape (ℓ,)
        Limit eigenvalues μ_l (linear PCA of the sample, or of the random projection).
    scaled_eigenvalues : ndarray, shape (S, ℓ)
        ``σ_X² λ_l(σ)``.
    relative_error : ndarray, shape (S, ℓ)
        ``|σ_X² λ_l / μ_l − 1|``.
    certified_digits : ndarray, shape (S, ℓ)
        Significant digits of ``σ_X² λ_l`` on which the two precisions agree (17: identical as float64).
    rate : ndarray, shape (ℓ,)
        Least-squares slope of log error versus log σ over the last ``fit_points`` bandwidths.
    constant : ndarray, shape (ℓ,)
        ``error · σ^{−rate}`` at the largest σ, with the rate rounded to the nearest integer (C in C σ^p).
    fit_points : int
    """

    method: str
    sigmas: np.ndarray
    limit: np.ndarray
    scaled_eigenvalues: np.ndarray
    relative_error: np.ndarray
    certified_digits: np.ndarray
    rate: np.ndarray
    constant: np.ndarray
    fit_points: int


def linear_limit(X, *, method: str = "nystrom", n_features: int = 100, random_state=0, n_components: int | None = None,
                 dps: int = 50) -> np.ndarray:
    """Eigenvalues of the σ → ∞ limit (mp, returned as floats), descending.

    Parameters
    ----------
    X : array_like, shape (n, d)
    method : {"exact", "nystrom", "rf-cos", "rf-sincos"}
        ``"exact"``, ``"nystrom"``: the sample covariance ``H X Xᵀ H/(n−1)``. ``"rf-*"``: ``eig(C Q)`` of the projection
        defined by the seeded features (``RandomFourierFeatures(n_features, gamma=1/2, kind,
        random_state)``, i.e. ω ~ N(0, I)).
    n_components : int, optional
        Default d.
    dps : int

    Returns
    -------
    ndarray of float, shape (ℓ,)
    """
    X = check_data(X)
    b = get_backend("mp", dps)
    ell = n_components or X.shape[1]
    Xc = _center_columns(b.internal(X))
    C = Xc.T @ Xc / (X.shape[0] - 1)
    if method in ("exact", "nystrom"):
        M = C
    else:
        rff = _unit_features(X, n_features, method[3:], random_state)
        W = b.internal(rff.frequencies_)
        if rff.kind == "cos":
            s = np.frompyfunc(b.ctx.sin, 1, 1)(b.internal(rff.phases_))
            P = W * s[:, None]
        else:
            P = W
        P = P * b.sqrt(b.scalar(2) / n_features)
        Q = P.T @ P
        # eig(C Q) = eig(Q^{1/2} C Q^{1/2}) = eig(L^T C L) with Q = L L^T (Cholesky through eigh)
        q, V = b.eigh(Q)
        L = V * np.array([b.sqrt(x) for x in q], dtype=object)[None, :]
        M = L.T @ C @ L
    w, _ = b.eigh(M)
    return np.array([b.to_float(x) for x in w[:ell]])


def _eigen_at(X, sigma, method, m, n_features, random_state, dps, ell):
    b = get_backend("mp", dps)
    sigma_x = gaussian_bandwidth(X, sigma, backend=b)
    if method == "exact":
        K = _cross(X, X, sigma_x, b)
        res = empirical_kpca(K.deviation, n_components=ell, backend=b)
    elif method == "nystrom":
        idx = _draw_landmarks(X.shape[0], m, random_state)
        K_nm = _cross(X, X[idx], sigma_x, b)
        K_mm = K_nm.deviation[idx, :] + K_nm.offset
        # K_mm's eigenvalues reach σ_X^{-2k}: no cut-off, the precision carries them.
        res = nystrom_kpca(K_nm.deviation, K_mm, n_components=ell, rcond=0, backend=b)
    else:
        rff = _unit_features(X, n_features, method[3:], random_state)
        res = rf_kpca(rff_features(X, rff, scale=sigma_x, backend=b), n_components=ell, backend=b)
    return [x * sigma_x * sigma_x for x in res.eigenvalues]


def _agreement_digits(a, b) -> float:
    a, b = float(a), float(b)
    if a == b:
        return 17.0
    return max(0.0, -math.log10(abs(a - b) / abs(b)))


def large_sigma_convergence(
    X, sigmas, *, method: str = "nystrom", n_landmarks: int = 10, n_features: int = 100, random_state=0,
    n_components: int | None = None, dps: int | None = None, fit_points: int | None = None,
) -> ConvergenceStudy:
    """Measure the σ → ∞ convergence of Nyström / RF-KPCA eigenvalues to their linear limit (mp backend).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data; ``n_components`` (default d) must not exceed d.
    sigmas : sequence of int, float or str
        Standardized bandwidths (e.g. ``["2**4", "2**8", ...]``), increasing.
    method : {"exact", "nystrom", "rf-cos", "rf-sincos"}
        ``"exact"`` is empirical (U-statistic) KPCA itself, Theorem 3's setting, for comparing constants.
    n_landmarks : int
        m for Nyström (landmarks drawn by ``default_rng(random_state)``).
    n_features : int
        D for random features (seeded by ``random_state``).
    n_components : int, optional
    dps : int, optional
        Working precision; default ``30 + 2·m·log10(σ_max)`` for Nyström (K_mm's eigenvalues fall like
        σ⁻², σ⁻⁴, …) and ``30 + 4·log10(σ_max)`` for random features. Each σ is also evaluated at
        ``dps + 20`` to report certified digits.
    fit_points : int, optional
        Number of largest bandwidths used for the rate fit (default min(4, len(sigmas))).

    Returns
    -------
    ConvergenceStudy
    """
    X = check_data(X)
    if method not in METHODS:
        raise ValueError(f"large_sigma_convergence: method must be one of {METHODS}, got {method!r}")
    ell = n_components or X.shape[1]
    if not 1 <= ell <= X.shape[1]:
        raise ValueError(f"large_sigma_convergence: n_components must be in [1, d={X.shape[1]}], got {n_components}")
    exact_sigmas = [parse_sigma(s) for s in sigmas]
    if len(exact_sigmas) < 2 or any(a >= b for a, b in zip(exact_sigmas, exact_sigmas[1:])):
        raise ValueError("large_sigma_convergence: sigmas must hold at least two increasing values")
    fit_points = min(4, len(exact_sigmas)) if fit_points is None else fit_points
    if not 2 <= fit_points <= len(exact_sigmas):
        raise ValueError(f"large_sigma_convergence: fit_points must be in [2, {len(exact_sigmas)}], got {fit_points}")
    if method == "nystrom" and not X.shape[1] + 1 <= n_landmarks <= X.shape[0]:
        raise ValueError(
            f"large_sigma_convergence: n_landmarks must be in [d+1={X.shape[1] + 1}, n={X.shape[0]}] so that "
            f"the landmarks can affinely span R^d, got {n_landmarks}"
        )
    log_max = math.log10(float(exact_sigmas[-1])) if float(exact_sigmas[-1]) > 1 else 0.0
    if dps is None:
        dps = int(30 + (2 * n_landmarks if method == "nystrom" else 4) * log_max)
    limit = linear_limit(X, method=method, n_features=n_features, random_state=random_state, n_components=ell,
                         dps=dps)
    scaled, digits = [], []
    for s in exact_sigmas:
        lo = _eigen_at(X, s, method, n_landmarks, n_features, random_state, dps, ell)
        hi = _eigen_at(X, s, method, n_landmarks, n_features, random_state, dps + 20, ell)
        scaled.append([float(x) for x in hi])
        digits.append([_agreement_digits(a, c) for a, c in zip(lo, hi)])
    scaled = np.array(scaled)
    rel = np.abs(scaled / limit[None, :] - 1)
    logs = np.log10(np.array([float(s) for s in exact_sigmas]))
    rate = np.array([np.polyfit(logs[-fit_points:], np.log10(rel[-fit_points:, l]), 1)[0] for l in range(ell)])
    p = np.round(rate)
    constant = rel[-1] * 10 ** (-p * logs[-1])
    return ConvergenceStudy(method, 10**logs, limit, scaled, rel, np.array(digits), rate, constant, fit_points)
