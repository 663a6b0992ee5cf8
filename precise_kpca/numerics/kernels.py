"""Gram matrices (paper Eqs. 1, 2a, 2b) computed from X in the backend's working precision.

The Gaussian kernel is standardized as in the paper: bandwidth σ_X = d_X·σ with d_X the median pairwise
distance (``standardized=False`` takes σ as the raw bandwidth). On the ``float64`` and ``mp`` backends the
Gram is stored as 1 + expm1(−u) (u = |x_i − x_j|² / 2σ_X²), so centering never cancels; on
``float64-naive`` it is exp(−u), as the paper (and scikit-learn) computed it.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

from ..backends import Backend, Float64Backend, get_backend
from ..validation import check_data, parse_sigma
from .exact import ExactData, cross_squared_distance_integers
from .geometry import check_median, median_distance, squared_distances
from .matrix import SymmetricMatrix

# Measured: ~20 µs per mpf expm1 at 50 digits; warn before runs longer than a minute.
_MP_SECONDS_PER_ENTRY = 2e-5
_WARN_SECONDS = 60.0


@dataclass
class Bandwidth:
    """A Gaussian bandwidth in backend arithmetic.

    Attributes
    ----------
    sigma : Fraction
        The requested (standardized or raw) bandwidth, exact.
    sigma_x : scalar
        The effective bandwidth σ_X (backend scalar).
    median_distance : scalar or None
        d_X when standardized.
    """

    sigma: object
    sigma_x: object
    median_distance: object


class _Prepared:
    """X validated, its exact form, and squared distances in one backend (shared by the kernel builders)."""

    def __init__(self, X, backend, dps):
        self.X = check_data(X)
        self.backend = get_backend(backend, dps)
        self.exact = None if isinstance(self.backend, Float64Backend) else ExactData.from_float64(self.X)
        _warn_if_slow(self.backend, self.X.shape[0])
        self._sq = None

    @property
    def sq(self) -> np.ndarray:
        if self._sq is None:
            self._sq = squared_distances(self.X, self.backend, self.exact)
        return self._sq

    def bandwidth(self, sigma, standardized: bool, median: str) -> Bandwidth:
        exact_sigma = parse_sigma(sigma)
        b = self.backend
        try:
            s = b.scalar(exact_sigma)
        except OverflowError:
            raise ValueError(f"sigma={sigma!r} exceeds the float64 range; use backend='mp'") from None
        d_x = median_distance(self.sq, b, check_median(median), self.exact) if standardized else None
        sigma_x = s * d_x if standardized else s
        return Bandwidth(exact_sigma, sigma_x, d_x)


def _warn_if_slow(backend: Backend, n: int) -> None:
    if isinstance(backend, Float64Backend):
        return
    seconds = _MP_SECONDS_PER_ENTRY * n * n * max(1.0, backend.dps / 50)
    if seconds > _WARN_SECONDS:
        warnings.warn(
            f"mp backend with N={n} at dps={backend.dps}: each N×N elementwise pass takes about "
            f"{seconds / 60:.0f} min, and an mpmath eigensystem far longer (~N³)",
            RuntimeWarning,
            stacklevel=4,
        )


def _scaled_arguments(prep: _Prepared, bw: Bandwidth) -> np.ndarray:
    """u = |x_i − x_j|² / (2σ_X²), elementwise, with a float64 range check."""
    b = prep.backend
    with np.errstate(over="ignore"):
        two_s2 = 2 * bw.sigma_x * bw.sigma_x
    if isinstance(b, Float64Backend):
        if not math.isfinite(two_s2):
            raise ValueError(f"sigma={float(bw.sigma):g} makes 2σ_X² overflow float64; use backend='mp'")
        u = prep.sq / two_s2
        positive = prep.sq > 0
        if positive.any() and u[positive].min() < np.finfo(np.float64).tiny:
            raise ValueError(
                f"sigma={float(bw.sigma):g} is so large that |x_i - x_j|²/2σ_X² underflows float64; "
                "use backend='mp'"
            )
        return u
    return prep.sq / two_s2


def gaussian_gram(X, sigma, *, backend="float64", dps=None, standardized=True, median="full") -> SymmetricMatrix:
    """Gaussian RBF Gram matrix K_G(σ) = exp(−|x_i − x_j|² / 2σ_X²) (paper Eq. 1).

    Parameters
    ----------
    X : array_like, shape (N, d)
        Data (float64, taken as exact).
    sigma : int, float, str, Fraction or mpf
        Standardized bandwidth σ (σ_X = d_X·σ), or the raw bandwidth when ``standardized=False``.
        Strings such as ``"2**100"`` keep bandwidths beyond the float range exact.
    backend : {"float64", "float64-naive", "mp"}
    dps : int, optional
        Decimal digits for ``backend="mp"`` (required there).
    standardized : bool, default True
    median : {"full", "pairs"}
        Which median distance standardizes σ (see :mod:`precise_kpca.numerics.geometry`).

    Returns
    -------
    SymmetricMatrix, shape (N, N)
        ``meta`` holds ``sigma`` (exact), ``sigma_x`` and ``median_distance`` (backend scalars).
    """
    prep = _Prepared(X, backend, dps)
    bw = prep.bandwidth(sigma, standardized, median)
    u = _scaled_arguments(prep, bw)
    b = prep.backend
    meta = {"sigma": bw.sigma, "sigma_x": bw.sigma_x, "median_distance": bw.median_distance}
    if b.naive:
        return SymmetricMatrix(b.exp(-u), b, 0, kind="gaussian", meta=meta)
    return SymmetricMatrix(b.expm1(-u), b, 1, kind="gaussian", meta=meta)


def gaussian_residual(X, sigma, *, backend="float64", dps=None, standardized=True, median="full") -> SymmetricMatrix:
    """G = σ_X² (K_G − 1) + |x_i − x_j|²/2 = σ_X² (e^{−u} − 1 + u), with full relative accuracy.

    By Lemma 2, σ_X² H K_G H = H K_lin H + H G H: this is the part of the scaled Gaussian Gram that
    distinguishes it from linear PCA, O(σ⁻²) relative, computed without forming that difference.
    """
    prep = _Prepared(X, backend, dps)
    bw = prep.bandwidth(sigma, standardized, median)
    b = prep.backend
    if b.naive:
        raise ValueError("gaussian_residual has no naive form; use backend='float64' or 'mp'")
    u = _scaled_arguments(prep, bw)
    if isinstance(b, Float64Backend) and (prep.sq > 0).any() and u[prep.sq > 0].min() ** 2 < np.finfo(np.float64).tiny:
        raise ValueError(
            f"sigma={float(bw.sigma):g}: the residual e^-u - 1 + u ~ u²/2 underflows float64; use backend='mp'"
        )
    residual = b.exp_residual(u) * (bw.sigma_x * bw.sigma_x)
    meta = {"sigma": bw.sigma, "sigma_x": bw.sigma_x, "median_distance": bw.median_distance}
    return SymmetricMatrix(residual, b, 0, kind="gaussian residual", meta=meta)


def gaussian_cross_gram(X_new, X, sigma_x, *, backend="float64", dps=None) -> SymmetricMatrix:
    """Gaussian kernel between new rows and training rows at an effective bandwidth σ_X.

    Returns
    -------
    SymmetricMatrix, shape (M, N)
        Not square; stored as 1 + expm1(−u) like :func:`gaussian_gram` (naive: exp(−u)).
    """
    X_new = check_data(X_new, name="X_new", min_rows=1)
    X = check_data(X)
    if X_new.shape[1] != X.shape[1]:
        raise ValueError(f"X_new has {X_new.shape[1]} columns but the training data has {X.shape[1]}")
    b = get_backend(backend, dps)
    s = b.internal(sigma_x) if not isinstance(sigma_x, (int, float)) else b.scalar(sigma_x)
    if isinstance(b, Float64Backend):
        sq = cdist(X_new, X, "sqeuclidean")  # direct differences, as squared_distances: no Gram cancellation
    else:
        integers, exp2 = cross_squared_distance_integers(X_new, X)
        sq = b.from_scaled_integers(integers, exp2)
    u = sq / (2 * s * s)
    if b.naive:
        return SymmetricMatrix(b.exp(-u), b, 0, kind="gaussian cross")
    return SymmetricMatrix(b.expm1(-u), b, 1, kind="gaussian cross")


def linear_gram(X, *, backend="float64", dps=None) -> SymmetricMatrix:
    """Linear Gram matrix x_i · x_j (paper Eq. 2a); exact integers rounded once on the mp backend."""
    prep = _Prepared(X, backend, dps)
    b = prep.backend
    if isinstance(b, Float64Backend):
        return SymmetricMatrix(prep.X @ prep.X.T, b, kind="linear")
    return SymmetricMatrix(b.from_scaled_integers(prep.exact.gram_integers, 2 * prep.exact.exp2), b, kind="linear")


def euclidean_gram(X, *, backend="float64", dps=None) -> SymmetricMatrix:
    """Euclidean pseudo-kernel −|x_i − x_j|²/2 (paper Eq. 2b)."""
    prep = _Prepared(X, backend, dps)
    return SymmetricMatrix(-prep.sq / 2, prep.backend, kind="euclidean")


def polynomial_gram(X, *, degree=2, gamma=1, coef0=1, backend="float64", dps=None) -> SymmetricMatrix:
    """Polynomial Gram (γ x_i · x_j + c)^p; γ and c are taken exactly (int, float, Fraction or str)."""
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    linear = linear_gram(X, backend=backend, dps=dps)
    b = linear.backend
    g = b.scalar(parse_sigma(gamma, name="gamma"))
    c = b.scalar(coef0)
    return SymmetricMatrix((g * linear.deviation + c) ** int(degree), b, kind=f"polynomial degree {degree}")
