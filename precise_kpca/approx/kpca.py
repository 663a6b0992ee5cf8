"""Empirical, Nyström and random-feature kernel PCA with U-statistic scaling (seed 002), on any backend.

Conventions (Sterge & Sriperumbudur): the covariance estimate is the U-statistic
``Σ̂ = 1/(2n(n−1)) Σ_{i≠j} (k_i − k_j)⊗(k_i − k_j) = 1/(n−1) Σ_i (k_i − m̂)⊗(k_i − m̂)``; with
``H_n = n I − 1 1ᵀ`` its eigenvalues are those of ``K H_n / (n(n−1))``, i.e. of ``H K H / (n−1)`` with the
usual ``H = I − 1 1ᵀ/n``.

* **Empirical KPCA** (:func:`empirical_kpca`): eigenpairs of ``H K H / (n−1)``.
* **Nyström KPCA** (:func:`nystrom_kpca`, :class:`NystromKPCA`): ``Σ̂`` compressed onto the span of the
  features ``k(·, x_{r_j})`` of m landmark points: the eigenvalues ``λ̃ = eig(M) / (n(n−1))`` of
  ``M = K_mm^{−1/2} K_mn H_n K_nm K_mm^{−1/2}``, eigenfunctions ``φ̃_l = Σ_j β_{jl} k(·, x_{r_j})`` with
  ``β = K_mm^{−1/2} U`` (orthonormal in H). ``K_mm^{−1/2}`` is the pseudo-inverse square root on the
  eigenvalues above ``rcond · max``. With m = n (all points) it reproduces empirical KPCA.
* **Random-feature KPCA** (:func:`rf_kpca`, :class:`RFKPCA`): the same for the finite-dimensional kernel
  ``k_D(x, y) = z(x)·z(y)``: eigenpairs of ``Σ̂_D = Z_cᵀ Z_c / (n−1)`` (``Z_c = H Z``), D × D.

Reconstruction error (training sample, in the RKHS of the kernel used):
``R = (1/n) Σ_i |(k_i − m̂) − P(k_i − m̂)|² = (tr(H K H) − (n−1) Σ_{l≤ℓ} λ_l) / n`` (for Nyström too: φ̃_l
lies in the compression space, so ``⟨φ̃_l, Σ̂ φ̃_l⟩ = λ̃_l``). Empirical KPCA minimises it (Ky Fan).

Every routine is written once on backend arrays (float64 ndarray or object ndarray of the mp backend's
private-context mpf) and runs on ``"float64"`` and ``"mp"``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backends import Backend, get_backend
from ..numerics.exact import ExactData
from ..numerics.geometry import check_median, median_distance, squared_distances
from ..numerics.kernels import gaussian_cross_gram
from ..validation import check_data, parse_sigma
from .rff import RandomFourierFeatures

__all__ = [
    "KPCAResult",
    "empirical_kpca",
    "nystrom_kpca",
    "rf_kpca",
    "NystromKPCA",
    "RFKPCA",
    "rff_features",
    "gaussian_bandwidth",
]


@dataclass
class KPCAResult:
    """Eigenvalues, coefficients and training components of one (approximate) KPCA.

    Attributes
    ----------
    eigenvalues : ndarray, shape (ℓ,)
        U-statistic-scaled eigenvalues, descending (backend scalars).
    coefficients : ndarray, shape (p, ℓ)
        Unit-norm eigenfunctions in the basis of the method: ``Σ_j β_{jl} k(·, x_{r_j})`` (Nyström, p = m),
        ``Σ_i a_{il} k(·, x_i)`` with centered ``a`` (empirical, p = n), or ``v_l ∈ R^D`` (random features).
    components : ndarray, shape (n, ℓ)
        Principal components of the training points ``⟨k(·, x_i) − m̂, φ_l⟩``.
    reconstruction_error : scalar
        Training reconstruction error in the RKHS with ℓ components.
    total_variance : scalar
        ``tr(H K H)/n`` (the error with no component).
    backend : Backend
    """

    eigenvalues: np.ndarray
    coefficients: np.ndarray
    components: np.ndarray
    reconstruction_error: object
    total_variance: object
    backend: Backend

    def to_float(self, name: str) -> np.ndarray:
        """Nearest-float copy of one array attribute (for reporting)."""
        value = getattr(self, name)
        if isinstance(value, np.ndarray):
            return self.backend.to_floats(value)
        return self.backend.to_float(value)


def _n_components(n_components, limit: int, where: str) -> int:
    if n_components is None:
        return limit
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or not 1 <= n_components <= limit:
        raise ValueError(f"{where}: n_components must be an integer in [1, {limit}], got {n_components!r}")
    return int(n_components)


def _result(lam, coefficients, components, total, n: int, b: Backend) -> KPCAResult:
    """KPCAResult with the training reconstruction error ``(tr(H K H) − (n−1) Σ λ_l) / n`` (None without total)."""
    if total is None:
        return KPCAResult(lam, coefficients, components, None, None, b)
    return KPCAResult(lam, coefficients, components, (total - (n - 1) * lam.sum()) / n, total / n, b)


def _center_columns(A: np.ndarray) -> np.ndarray:
    return A - A.sum(axis=0)[None, :] / A.shape[0]


def empirical_kpca(K_dev: np.ndarray, *, n_components=None, backend="float64", dps=None) -> KPCAResult:
    """Exact empirical KPCA with U-statistic scaling: eigenpairs of ``H K H / (n−1)``.

    Parameters
    ----------
    K_dev : ndarray, shape (n, n)
        Gram matrix in backend form, possibly minus a constant (centering removes constants, so the
        deviation part ``K − 1`` of a Gaussian Gram may be passed to keep full accuracy).
    n_components : int, optional
        ℓ (default n − 1).
    backend, dps
        As in the core API.

    Returns
    -------
    KPCAResult
        ``coefficients[:, l] = u_l / sqrt((n−1) λ_l)`` (u_l ⊥ 1, so the eigenfunction
        ``Σ_i a_i k(·, x_i)`` is centered and has unit RKHS norm); ``components[:, l] = sqrt((n−1) λ_l) u_l``.
    """
    b = get_backend(backend, dps)
    n = K_dev.shape[0]
    ell = _n_components(n_components, n - 1, "empirical_kpca")
    C = _center_columns(_center_columns(K_dev).T)  # H K H (symmetric)
    w, U = b.eigh(C)
    lam = w[:ell] / (n - 1)
    norms = np.array([b.sqrt(x * (n - 1)) for x in lam], dtype=U.dtype)
    return _result(lam, U[:, :ell] / norms[None, :], U[:, :ell] * norms[None, :], sum(C[i, i] for i in range(n)), n, b)


def nystrom_kpca(K_nm_dev: np.ndarray, K_mm: np.ndarray, *, n_components=None, total=None, rcond=None,
                 backend="float64", dps=None) -> KPCAResult:
    """Nyström KPCA from the kernel blocks (Sterge & Sriperumbudur's M-eigenproblem).

    Parameters
    ----------
    K_nm_dev : ndarray, shape (n, m)
        Kernel between all n points and the m landmarks, in backend form, possibly minus a constant
        (``K_mn H_n K_nm`` is unchanged by constants because ``H_n 1 = 0``).
    K_mm : ndarray, shape (m, m)
        Landmark Gram (the full matrix, not a deviation).
    n_components : int, optional
        ℓ (default: the numerical rank of ``K_mm``).
    total : scalar, optional
        ``tr(H K H)`` of the full Gram, needed only for the reconstruction error (else NaN/None).
    rcond : float, optional
        Relative cut-off of ``K_mm``'s eigenvalues for the pseudo-inverse square root (default
        ``m · eps`` of the backend).
    backend, dps
        As in the core API.

    Returns
    -------
    KPCAResult
        ``eigenvalues = eig(M)/(n(n−1))``; ``coefficients = β = K_mm^{−1/2} U`` (m × ℓ);
        ``components = H K_nm β``.
    """
    b = get_backend(backend, dps)
    n, m = K_nm_dev.shape
    if K_mm.shape != (m, m):
        raise ValueError(f"nystrom_kpca: K_mm has shape {K_mm.shape}, expected ({m}, {m}) to match K_nm {K_nm_dev.shape}")
    s, Q = b.eigh(K_mm)
    cut = (b.scalar(rcond) if rcond is not None else b.eps * m) * s[0]
    keep = [k for k in range(m) if s[k] > cut]
    R = Q[:, keep] * np.array([1 / b.sqrt(s[k]) for k in keep], dtype=Q.dtype)[None, :]  # K_mm^{+1/2}
    C = _center_columns(K_nm_dev)  # H K_nm
    CR = C @ R
    w, U = b.eigh(CR.T @ CR)  # = M / n: eig(M)/(n(n−1)) = w/(n−1)
    ell = _n_components(n_components, len(keep), "nystrom_kpca")
    lam = w / (n - 1)
    beta = R @ U[:, :ell]
    comps = CR @ U[:, :ell]
    return _result(lam[:ell], beta, comps, total, n, b)


def rf_kpca(Z: np.ndarray, *, n_components=None, backend="float64", dps=None) -> KPCAResult:
    """Random-feature KPCA (U-statistic): eigenpairs of ``Σ̂_D = Z_cᵀ Z_c / (n−1)``.

    Parameters
    ----------
    Z : ndarray, shape (n, D)
        Random features of the training points, in backend form.
    n_components : int, optional
        ℓ (default min(n − 1, D)).
    backend, dps

    Returns
    -------
    KPCAResult
        ``coefficients`` are the unit eigenvectors ``v_l ∈ R^D``; ``components = Z_c v``; the
        reconstruction error is in the D-dimensional RKHS of ``k_D``.
    """
    b = get_backend(backend, dps)
    n, D = Z.shape
    ell = _n_components(n_components, min(n - 1, D), "rf_kpca")
    Zc = _center_columns(Z)
    w, V = b.eigh(Zc.T @ Zc)
    lam = w[:ell] / (n - 1)
    return _result(lam, V[:, :ell], Zc @ V[:, :ell], (Zc * Zc).sum(), n, b)


# ---------------------------------------------------------------------------------------------------------
# data-level wrappers (Gaussian kernel, standardized bandwidth as in the core API)
# ---------------------------------------------------------------------------------------------------------
def gaussian_bandwidth(X, sigma, *, standardized=True, median="full", backend="float64", dps=None):
    """Effective Gaussian bandwidth ``σ_X = d_X·σ`` (or σ itself), as a backend scalar.

    ``d_X`` is the core's median distance (full N×N matrix by default), computed from X in the backend's
    precision (exact squared distances on mp).
    """
    X = check_data(X)
    b = get_backend(backend, dps)
    s = b.scalar(parse_sigma(sigma))
    if not standardized:
        return s
    exact = ExactData.from_float64(X) if b.exact_input else None
    return s * median_distance(squared_distances(X, b, exact), b, check_median(median))


def _landmarks(n: int, m: int, random_state) -> np.ndarray:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 3 <= m <= n:
        raise ValueError(f"NystromKPCA: n_landmarks must be an integer in [3, n={n}], got {m!r}")
    return _draw_landmarks(n, m, random_state)


def _draw_landmarks(n: int, m: int, random_state) -> np.ndarray:
    """Sorted indices of m of the n points, uniform without replacement from ``default_rng(random_state)``."""
    return np.sort(np.random.default_rng(random_state).choice(n, size=int(m), replace=False))


def _unit_features(X: np.ndarray, n_features: int, kind: str, random_state) -> RandomFourierFeatures:
    """Seeded features with ω ~ N(0, I) (γ = 1/2), to be divided by σ_X in backend arithmetic (``scale=``)."""
    return RandomFourierFeatures(n_features, gamma=0.5, kind=kind, random_state=random_state).fit(X)


def rff_features(X, rff: RandomFourierFeatures, *, scale=None, backend="float64", dps=None) -> np.ndarray:
    """Random Fourier features of X in backend arithmetic.

    The fitted frequencies ``W`` and phases ``b`` of ``rff`` (float64, taken as exact) define the map; with
    ``scale`` given, the frequencies are ``W / scale`` (``scale`` a backend scalar, e.g. ``σ_X``, with ``rff``
    fitted at γ = 1/2 so that ``W/σ_X ~ N(0, I/σ_X²)``). On mp, ``W x + b`` is formed from the exact floats
    and the cosines are evaluated in the private context.

    Returns
    -------
    ndarray, shape (n, D)
    """
    X = check_data(X, min_rows=1)
    b = get_backend(backend, dps)
    proj = b.internal(X) @ b.internal(rff.frequencies_).T
    if scale is not None:
        proj = proj / scale
    norm = b.sqrt(b.scalar(2) / rff.n_components)
    if rff.kind == "cos":
        return np.asarray(b.cos(proj + b.internal(rff.phases_)[None, :]), dtype=b.dtype) * norm
    return np.hstack([np.asarray(b.cos(proj), dtype=b.dtype), np.asarray(b.sin(proj), dtype=b.dtype)]) * norm


class NystromKPCA:
    """Nyström kernel PCA with the Gaussian kernel (uniform landmarks, U-statistic scaling).

    Parameters
    ----------
    n_landmarks : int
        m ≥ 3, sampled uniformly without replacement.
    n_components : int, optional
    sigma : int, float, str or mpf
        Bandwidth, standardized (σ_X = d_X·σ) unless ``standardized=False``.
    standardized : bool
    backend, dps : as in the core API
    random_state : int, optional
        Seed of the landmark sample.
    rcond : float, optional
        See :func:`nystrom_kpca`.

    Attributes (after fit)
    ----------------------
    landmarks_ : ndarray of int, shape (m,)
    sigma_x_ : backend scalar
    result_ : KPCAResult
    eigenvalues_ : ndarray, shape (ℓ,)
    """

    def __init__(self, n_landmarks: int, n_components=None, *, sigma=1, standardized=True, backend="float64",
                 dps=None, random_state=None, rcond=None):
        self.n_landmarks = n_landmarks
        self.n_components = n_components
        self.sigma = sigma
        self.standardized = standardized
        self.backend = get_backend(backend, dps)
        self.random_state = random_state
        self.rcond = rcond

    def fit(self, X) -> "NystromKPCA":
        """Sample landmarks, build K_nm and K_mm, solve the m × m problem (and the training error).

        Parameters
        ----------
        X : array_like, shape (n, d)
        """
        X = check_data(X)
        b = self.backend
        self.X_ = X
        self.landmarks_ = _landmarks(X.shape[0], self.n_landmarks, self.random_state)
        self.sigma_x_ = gaussian_bandwidth(X, self.sigma, standardized=self.standardized, backend=b)
        L = X[self.landmarks_]
        K_nm = _cross(X, L, self.sigma_x_, b)
        K_mm = K_nm.deviation[self.landmarks_, :] + K_nm.offset
        self._K_nm_mean = K_nm.deviation.sum(axis=0) / X.shape[0]
        self.result_ = nystrom_kpca(K_nm.deviation, K_mm, n_components=self.n_components,
                                    total=_trace_centered_gaussian(X, self.sigma_x_, b), rcond=self.rcond, backend=b)
        self.eigenvalues_ = self.result_.eigenvalues
        return self

    def transform(self, X_new) -> np.ndarray:
        """Principal components ``⟨k(·, x) − m̂, φ̃_l⟩`` of new points, shape (n_new, ℓ), backend form."""
        X_new = check_data(X_new, name="X_new", min_rows=1)
        K = _cross(X_new, self.X_[self.landmarks_], self.sigma_x_, self.backend)
        return (K.deviation - self._K_nm_mean[None, :]) @ self.result_.coefficients


class RFKPCA:
    """Random-feature kernel PCA for the Gaussian kernel (U-statistic scaling).

    Parameters
    ----------
    n_features : int
        D.
    n_components : int, optional
    sigma, standardized, backend, dps : as in :class:`NystromKPCA`
    kind : {"cos", "sincos"}
        Feature map (see :mod:`precise_kpca.approx.rff`).
    random_state : int, optional
        Seed of the frequencies and phases (drawn as N(0, I) and scaled by 1/σ_X in backend arithmetic).
    """

    def __init__(self, n_features: int, n_components=None, *, sigma=1, standardized=True, backend="float64",
                 dps=None, kind="cos", random_state=None):
        self.n_features = n_features
        self.n_components = n_components
        self.sigma = sigma
        self.standardized = standardized
        self.backend = get_backend(backend, dps)
        self.kind = kind
        self.random_state = random_state

    def fit(self, X) -> "RFKPCA":
        """Draw the features, map X and solve the D × D problem.

        Parameters
        ----------
        X : array_like, shape (n, d)
        """
        X = check_data(X)
        b = self.backend
        self.sigma_x_ = gaussian_bandwidth(X, self.sigma, standardized=self.standardized, backend=b)
        self.rff_ = _unit_features(X, self.n_features, self.kind, self.random_state)
        Z = rff_features(X, self.rff_, scale=self.sigma_x_, backend=b)
        self._mean = Z.sum(axis=0) / X.shape[0]
        self.result_ = rf_kpca(Z, n_components=self.n_components, backend=b)
        self.eigenvalues_ = self.result_.eigenvalues
        return self

    def transform(self, X_new) -> np.ndarray:
        """Principal components ``(z(x) − z̄)·v_l``, shape (n_new, ℓ), backend form."""
        Z = rff_features(X_new, self.rff_, scale=self.sigma_x_, backend=self.backend)
        return (Z - self._mean[None, :]) @ self.result_.coefficients


def _cross(A, B, sigma_x, b):
    return gaussian_cross_gram(A, B, b.export(sigma_x), backend=b)


def _trace_centered_gaussian(X, sigma_x, b):
    """tr(H K H) = n − (1/n) Σ_ij K_ij = −(1/n) Σ_ij (K_ij − 1) for a Gaussian Gram (diagonal 1)."""
    G = _cross(X, X, sigma_x, b).deviation
    return -G.sum() / X.shape[0]
