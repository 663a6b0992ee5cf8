"""Gram matrices (paper Eqs. 1, 2a, 2b) computed from X in the backend's working precision.

The Gaussian kernel is standardized as in the paper: bandwidth σ_X = d_X·σ with d_X the median pairwise
distance (``standardized=False`` takes σ as the raw bandwidth). On the ``float64`` and ``mp`` backends the
Gram is stored as 1 + expm1(−u) (u = |x_i − x_j|² / 2σ_X²), so centering never cancels; on
``float64-naive`` it is exp(−u), as the paper (and scikit-learn) computed it.

Any float64 magnitude: a backend with a bounded exponent range (float64,
:attr:`~precise_kpca.backends.Backend.bounded_range`) works on X·2^s (:func:`precise_kpca.validation.scale_exponent`,
exact; a raw σ is scaled with it), so the Gaussian Gram, invariant under that scaling, is computed for data near
1e307 or 1e-310 as for data near 1; quantities that scale (the residual, the linear and Euclidean Grams) are scaled back
exactly and refused when their values lie outside the float64 range. u is formed as ((D/b)/b)·2^(−2e−1) with
σ_X = b·2^e, so bandwidths far outside the float range (σ = 1e-320, 2^2000) neither overflow nor produce 0/0:
u = ∞ gives the exact float64 limit K = 0, and a u that underflows is refused (its deviation would have no digits).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from scipy.spatial.distance import cdist

from ..backends import Backend, get_backend
from ..validation import check_data, parse_sigma, scale_exponent
from .exact import ExactData, cross_squared_distance_integers
from .geometry import check_median, median_distance, squared_distances
from .matrix import SymmetricMatrix

_WARN_SECONDS = 60.0  # warn before elementwise passes longer than a minute


@dataclass
class Bandwidth:
    """A Gaussian bandwidth in backend arithmetic.

    Attributes
    ----------
    sigma : Fraction
        The requested (standardized or raw) bandwidth, exact.
    sigma_x : scalar
        The effective bandwidth σ_X (backend scalar) in the units of the prepared data (X·2^s on a bounded range).
    median_distance : scalar or None
        d_X when standardized (same units).
    base, exponent : float, int
        Bounded range only: σ_X = base·2^exponent with base = d_X·m (or m), m ∈ [1, 2) the mantissa of σ (rounded
        once), so u never forms σ_X² outside the float range.
    """

    sigma: object
    sigma_x: object
    median_distance: object
    base: float = 1.0
    exponent: int = 0


class _Prepared:
    """X validated, its exact form, and squared distances in one backend (shared by the kernel builders).

    On a backend with a bounded range ``X`` is the data times 2^``scale`` (exact) and every length below is in those
    units.
    """

    def __init__(self, X, backend, dps):
        X = check_data(X)
        self.backend = get_backend(backend, dps)
        self.scale = scale_exponent(X) if self.backend.bounded_range else 0
        self.X = np.ldexp(X, self.scale) if self.scale else X
        self.exact = ExactData.from_float64(self.X) if self.backend.exact_input else None
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
        rows = self.X if self.exact is None else None
        d_x = median_distance(self.sq, b, check_median(median), self.exact, rows=rows) if standardized else None
        if b.bounded_range:
            mantissa, exponent = _split(exact_sigma if standardized else exact_sigma * Fraction(2) ** self.scale)
            base = mantissa * d_x if standardized else mantissa
            return Bandwidth(exact_sigma, _ldexp(base, exponent), d_x, base, exponent)
        s = b.scalar(exact_sigma)
        return Bandwidth(exact_sigma, s * d_x if standardized else s, d_x)

    def true_meta(self, bw: Bandwidth) -> dict:
        """The bandwidth record in the data's own units (bounded range: floats, exact mpf where out of range)."""
        if not self.backend.bounded_range:
            return {"sigma": bw.sigma, "sigma_x": bw.sigma_x, "median_distance": bw.median_distance}
        d_x = None if bw.median_distance is None else _unscale_scalar(bw.median_distance, -self.scale)
        return {"sigma": bw.sigma, "sigma_x": _unscale_scalar(bw.base, bw.exponent - self.scale), "median_distance": d_x}

    def rescale(self, array: np.ndarray, exponent: int, what: str) -> np.ndarray:
        """array·2^exponent (bounded range; other arrays are returned as they are), refused where an entry leaves the
        normal float64 range (it would be inf, or lose its digits)."""
        if exponent == 0 or not self.backend.bounded_range:
            return array
        with np.errstate(over="ignore", under="ignore"):
            out = np.ldexp(array, exponent)
        lost = np.isfinite(array) & ~np.isfinite(out) | (array != 0) & (np.abs(out) < np.finfo(np.float64).tiny)
        if lost.any():
            largest = _unscale_scalar(float(np.abs(self.X).max()), -self.scale)
            raise ValueError(f"{what} of X lie outside the float64 range (max |x| = {mpmath.nstr(mpmath.mpf(largest), 3)}); "
                             "use backend='mp'")
        return out


def _split(q: Fraction) -> tuple[float, int]:
    """(m, e) with q ≈ m·2^e, m ∈ [1, 2) the correctly rounded mantissa (q > 0, any size)."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    shifted = q / Fraction(2) ** e  # in [1/2, 2)
    m = float(shifted)
    if m < 1:
        m, e = 2 * m, e - 1
    return m, e


def _ldexp(x: float, e: int) -> float:
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(x, int(np.clip(e, -2200, 2200))))


def _unscale_scalar(x: float, e: int):
    """x·2^e as a float where that is a normal float, else the exact global mpf."""
    out = _ldexp(x, e)
    if np.finfo(np.float64).tiny <= abs(out) < math.inf or x == 0:
        return out
    return mpmath.mp.make_mpf(mpmath.libmp.mpf_shift(mpmath.libmp.from_float(x), e))


def _warn_if_slow(backend: Backend, n: int) -> None:
    seconds = backend.elementwise_seconds(n * n)
    if seconds > _WARN_SECONDS:
        warnings.warn(
            f"{backend.name} backend with N={n} at dps={backend.dps}: each N×N elementwise pass takes about "
            f"{seconds / 60:.0f} min, and an eigensystem far longer (~N³)",
            RuntimeWarning,
            stacklevel=4,
        )


class Float64Underflow(ValueError):
    """σ is so large that u = |x_i − x_j|²/2σ_X², or the residual ~u²/2 built from it, leaves the float64 range."""


def _scaled_arguments(prep: _Prepared, bw: Bandwidth) -> np.ndarray:
    """u = |x_i − x_j|² / (2σ_X²), elementwise (bounded range: ((D/b)/b)·2^(−2e−1), refused where it
    underflows)."""
    b = prep.backend
    if b.bounded_range:
        with np.errstate(over="ignore", under="ignore"):
            u = np.ldexp(prep.sq / bw.base / bw.base, int(np.clip(-2 * bw.exponent - 1, -4400, 4400)))
        positive = prep.sq > 0
        if positive.any() and u[positive].min() < np.finfo(np.float64).tiny:
            raise Float64Underflow(
                f"sigma={sigma_text(bw.sigma)} is so large that |x_i - x_j|²/2σ_X² underflows float64; "
                "use backend='mp'"
            )
        return u
    return prep.sq / (2 * bw.sigma_x * bw.sigma_x)


def sigma_text(sigma: Fraction) -> str:
    """σ for a message: its float where that holds it, else 2**(log2 σ)."""
    try:
        value = float(sigma)
    except OverflowError:
        value = math.inf
    if 0 < value < math.inf and value >= np.finfo(np.float64).tiny:
        return f"{value:g}"
    return f"2**{math.log2(sigma.numerator) - math.log2(sigma.denominator):.6g}"


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
    meta = prep.true_meta(bw)
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
    if b.bounded_range:  # σ_X² = base²·2^(2e), in units of 2^scale
        if (prep.sq > 0).any() and u[prep.sq > 0].min() ** 2 < np.finfo(np.float64).tiny:
            raise Float64Underflow(
                f"sigma={sigma_text(bw.sigma)}: the residual e^-u - 1 + u ~ u²/2 underflows float64; use backend='mp'"
            )
        residual = prep.rescale(b.exp_residual(u) * bw.base * bw.base, 2 * bw.exponent - 2 * prep.scale,
                                "the Gaussian residual entries")
    else:
        residual = b.exp_residual(u) * (bw.sigma_x * bw.sigma_x)
    return SymmetricMatrix(residual, b, 0, kind="gaussian residual", meta=prep.true_meta(bw))


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
    exact_sigma_x = parse_sigma(sigma_x, name="sigma_x")
    if not b.exact_input:  # on X·2^s, X_new·2^s and σ_X·2^s: the kernel is invariant (module docstring)
        scale = scale_exponent(np.vstack([X_new, X]))
        X_new, X = (np.ldexp(A, scale) for A in (X_new, X))
        base, exponent = _split(exact_sigma_x * Fraction(2) ** scale)
        sq = cdist(X_new, X, "sqeuclidean")  # direct differences, as squared_distances: no Gram cancellation
        with np.errstate(over="ignore", under="ignore"):
            u = np.ldexp(sq / base / base, int(np.clip(-2 * exponent - 1, -4400, 4400)))
    else:
        integers, exp2 = cross_squared_distance_integers(X_new, X)
        s = b.scalar(exact_sigma_x)
        u = b.from_scaled_integers(integers, exp2) / (2 * s * s)
    if b.naive:
        return SymmetricMatrix(b.exp(-u), b, 0, kind="gaussian cross")
    return SymmetricMatrix(b.expm1(-u), b, 1, kind="gaussian cross")


def linear_gram(X, *, backend="float64", dps=None) -> SymmetricMatrix:
    """Linear Gram matrix x_i · x_j (paper Eq. 2a); exact integers rounded once on the mp backend."""
    prep = _Prepared(X, backend, dps)
    b = prep.backend
    if not b.exact_input:
        return SymmetricMatrix(prep.rescale(prep.X @ prep.X.T, -2 * prep.scale, "the inner products x_i · x_j"), b,
                               kind="linear")
    return SymmetricMatrix(b.from_scaled_integers(prep.exact.gram_integers, 2 * prep.exact.exp2), b, kind="linear")


def euclidean_gram(X, *, backend="float64", dps=None) -> SymmetricMatrix:
    """Euclidean pseudo-kernel −|x_i − x_j|²/2 (paper Eq. 2b)."""
    prep = _Prepared(X, backend, dps)
    return SymmetricMatrix(prep.rescale(-prep.sq / 2, -2 * prep.scale, "the squared distances"), prep.backend,
                           kind="euclidean")


def polynomial_gram(X, *, degree=2, gamma=1, coef0=1, backend="float64", dps=None) -> SymmetricMatrix:
    """Polynomial Gram (γ x_i · x_j + c)^p; γ and c are taken exactly (int, float, Fraction or str)."""
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    linear = linear_gram(X, backend=backend, dps=dps)
    b = linear.backend
    g = b.scalar(parse_sigma(gamma, name="gamma"))
    c = b.scalar(coef0)
    return SymmetricMatrix((g * linear.deviation + c) ** int(degree), b, kind=f"polynomial degree {degree}")
