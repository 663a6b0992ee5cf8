"""``PreciseKernelPCA``: Gaussian kernel PCA with scikit-learn's conventions, valid at any bandwidth.

It computes what ``sklearn.decomposition.KernelPCA(kernel="rbf", gamma=1/(2σ_X²))`` computes, but from the
cancellation-free Gram of :func:`precise_kpca.gaussian_gram` (stored as 1 + expm1(−u), centered without
forming K − 1), in float64 where that is accurate and in mpmath arithmetic where it is not. scikit-learn's
``exp(−u)`` rounds to 1 once u < 2⁻⁵³, i.e. for σ beyond about 2²⁶ times the median distance, and its
components are then noise; these stay meaningful to σ = 2³⁰ and far beyond.

Backend ``"auto"``:

1. float64 (stable Gram) when σ_X is inside the float64 range; then each requested eigenpair i is checked
   against LAPACK's backward error N·eps·λ₁: if N·eps·λ₁ / min(λ_i, gap_i) ≤ 1e-8 (gap_i: distance to the
   nearest other eigenvalue) the float64 result is kept — at least 8 correct digits per eigenpair;
2. otherwise ``"mp"`` at ``dps = 13 + ⌈log10 N⌉ + ⌈4·log10 max(σ, 1)⌉`` decimal digits: eigenvalues beyond
   the linear rank shrink like σ⁻⁴ relative to λ₁ (the quadratic part of the Gaussian kernel), and 8 digits of
   those need 8 + log10 N + 4 log10 σ digits of working precision (5 more as guard). The same check is
   repeated at mp's eps; when it fails the precision is doubled once, and a ``RuntimeWarning`` names any
   component still ill-conditioned (e.g. a repeated eigenvalue, whose eigenvector is not defined).

Guarantee of the eigenvalues (``eigenvalues_guarantee_``), whatever the backend:

* ``"rigorous"`` (``enclose=True``, wherever σ_X² H K H fits binary128): σ_X² H K H is built in binary128 with a
  proven Frobenius error bound (:func:`~precise_kpca.numerics.quad_gram.scaled_gaussian_gram_words`), the float64
  eigensystem of it is certified by exact products
  (:func:`~precise_kpca.certify.eigen_enclosure.enclose_eigensystem`: Weyl, Kato–Temple, Li–Li), and the intervals
  are divided by a ball of the exact σ_X² (:func:`~precise_kpca.approx.rigorous.sigma_x2_ball`). Their ends, rounded
  outward to floats, are ``eigenvalues_lower_`` and ``eigenvalues_upper_``, and ``eigenvalues_`` lies between them.
  The assumptions are those of the two builders (IEEE float64 BLAS, correctly rounded binary128, SLEEF's documented
  1-ulp expm1). Cost: one more N×N float64 eigensystem and a few dozen N×N GEMMs.
* ``"heuristic"``: no enclosure, but ``"auto"``'s a-priori check (rules 1–2) passed; an estimate, not a proof.
* ``"none"``: no enclosure and no check (``backend="float64"`` or ``"mp"`` with ``enclose=False``, σ beyond
  binary128, or components that failed the check).
"""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

import flint
import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .approx.rigorous import sigma_x2_ball
from .backends import get_backend
from .backends.ozaki import FixedMatrix
from .certify.eigen_enclosure import enclose_eigensystem
from .numerics import (
    center_cross,
    double_center,
    eigensystem,
    gaussian_cross_gram,
    gaussian_gram,
    principal_components,
)
from .numerics.quad_gram import scaled_gaussian_gram_words
from .validation import check_data, parse_sigma

BACKENDS = ("auto", "float64", "mp")
CONDITION_TOL = 1e-8
"""Largest accepted relative error bound of a requested eigenpair (≈ 8 correct digits)."""
_A_BITS = 120  # fixed-point bits of hi + lo (106 carried): the read of the binary128 Gram stays exact
_BALL_BITS = 256  # Arb precision of the division by σ_X²: far below the enclosures' widths


def auto_dps(sigma, n: int) -> int:
    """Initial mp precision of backend "auto" for a bandwidth (any form :func:`parse_sigma` reads) and N rows
    (module docstring, rule 2)."""
    sigma = parse_sigma(sigma)
    log10_sigma = max(0.0, math.log10(sigma.numerator) - math.log10(sigma.denominator))
    return 13 + math.ceil(math.log10(n)) + math.ceil(4 * log10_sigma)


def error_bounds(values: np.ndarray, n_components: int, eps: float) -> np.ndarray:
    """Relative error bound N·eps·λ₁ / min(λ_i, gap_i) of each requested eigenpair (inf when not positive).

    Parameters
    ----------
    values : ndarray, shape (N,)
        All eigenvalues, descending (floats).
    n_components : int
    eps : float
        Unit roundoff of the arithmetic that produced them.

    Returns
    -------
    ndarray, shape (n_components,)
    """
    n = len(values)
    noise = n * eps * abs(values[0])
    bounds = np.empty(n_components)
    for i in range(n_components):
        gaps = [abs(values[i] - values[j]) for j in (i - 1, i + 1) if 0 <= j < n]
        scale = min([values[i], *gaps])
        bounds[i] = noise / scale if scale > 0 else math.inf
    return bounds


def enclose_eigenvalues(X: np.ndarray, sigma: Fraction, n_components: int):
    """Float bounds on the top eigenvalues of H K H (module docstring, "rigorous"), or None where unavailable.

    Parameters
    ----------
    X : ndarray of float64, shape (N, d)
    sigma : Fraction
        Standardized bandwidth.
    n_components : int

    Returns
    -------
    (lower, upper) : tuple of ndarray, shape (n_components,), or None
        None when σ_X² H K H is outside the binary128 range.
    """
    try:
        quad = scaled_gaussian_gram_words(X, sigma)
    except ValueError:  # the bandwidth puts the scaled Gram outside binary128
        return None
    w, V = np.linalg.eigh(quad.hi)
    A_hp = FixedMatrix.from_words([quad.hi, quad.lo], bits=_A_BITS)
    # ‖A − A_hp‖_F ≤ the builder's bound + N × the fixed-point read's largest entry error
    delta = quad.error_bound + X.shape[0] * A_hp.error_bound
    enc = enclose_eigensystem(A_hp, delta, w[::-1].copy(), V[:, ::-1].copy(), k=1)
    with flint.ctx.workprec(_BALL_BITS):
        s2 = sigma_x2_ball(X, sigma)
        balls = [(_exact_ball(lo).union(_exact_ball(hi))) / s2
                 for lo, hi in zip(enc.lower[:n_components], enc.upper[:n_components])]
        lower = np.array([_float_beside(b.lower(), up=False) for b in balls])
        upper = np.array([_float_beside(b.upper(), up=True) for b in balls])
    return lower, upper


def _exact_ball(x) -> flint.arb:
    """A ball containing an mpf (exact when its mantissa fits the working precision)."""
    sign, man, exp, _ = x._mpf_
    value = Fraction(-int(man) if sign else int(man)) * Fraction(2) ** int(exp)
    return flint.arb(flint.fmpq(value.numerator, value.denominator))


def _float_beside(point: flint.arb, *, up: bool) -> float:
    """The nearest float above (``up``) or below an exact Arb point."""
    man, exp = (int(v) for v in point.man_exp())
    exact = Fraction(man) * Fraction(2) ** exp
    value = float(exact)
    if (Fraction(value) < exact) if up else (Fraction(value) > exact):
        return math.nextafter(value, math.inf if up else -math.inf)
    return value


class PreciseKernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Gaussian (RBF) kernel PCA at a standardized bandwidth, accurate far past the float64 limit.

    Parameters
    ----------
    n_components : int
        Number of principal components (at most N − 1, the rank of the centered Gram).
    sigma : int, float, str or Fraction
        Standardized bandwidth: σ_X = d_X·σ with d_X the median pairwise distance of the training data
        (paper Eq. 1; ``median="full"``). Strings such as ``"2**40"`` stay exact.
    backend : {"auto", "float64", "mp"}
        See the module docstring for ``"auto"``. ``"float64"`` always uses the stable float64 Gram.
    dps : int, optional
        Decimal digits for ``backend="mp"`` (default: the "auto" rule). Not allowed with ``"float64"``.
    enclose : bool, default True
        Enclose the returned eigenvalues rigorously (module docstring); False skips that cost.

    Attributes
    ----------
    eigenvalues_ : ndarray, shape (n_components,)
        Largest eigenvalues of the centered Gram H K H (scikit-learn's convention: not divided by N), float64
        (they scale like σ⁻², so they underflow to 0 beyond σ ≈ 2⁵⁰⁰; ``transform`` does not use them). Where
        they are enclosed, the solver's value if it lies in the enclosure, else the enclosure's midpoint.
    eigenvalues_guarantee_ : {"rigorous", "heuristic", "none"}
        What supports ``eigenvalues_`` (module docstring).
    eigenvalues_lower_, eigenvalues_upper_ : ndarray, shape (n_components,)
        Float bounds with ``lower ≤ λ_i ≤ upper`` for the exact eigenvalues of the exact H K H (rounded outward)
        when the guarantee is ``"rigorous"``; NaN otherwise.
    eigenvectors_ : ndarray, shape (N, n_components)
        Their unit-norm eigenvectors v_i (scikit-learn's convention), float64; each column's largest-magnitude
        entry is positive.
    alphas_ : ndarray, shape (N, n_components)
        Kernel-PCA coefficients α_i = v_i / √λ_i, normalized as in the paper's Section II-A1 (λ_i α_i·α_i = 1),
        in the working precision: float64, or an object array of ``mpmath.mpf``. ``transform`` uses them.
    sigma_x_ : float
        Effective bandwidth σ_X = d_X·σ (so ``gamma = 1 / (2 * sigma_x_**2)`` in scikit-learn's terms).
    backend_ : str
        ``"float64"`` or ``"mp"``: the arithmetic used.
    dps_ : int
        Its decimal digits (15 for float64).
    X_fit_ : ndarray, shape (N, d)
        Training data.
    n_features_in_ : int

    Examples
    --------
    >>> from precise_kpca.datasets import load
    >>> Z = PreciseKernelPCA(2, sigma="2**30").fit_transform(load("wine"))  # sklearn's output is noise here
    """

    def __init__(self, n_components, *, sigma, backend="auto", dps=None, enclose=True):
        self.n_components = n_components
        self.sigma = sigma
        self.backend = backend
        self.dps = dps
        self.enclose = enclose

    def _check_params(self, n_samples: int) -> Fraction:
        n = self.n_components
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= n_samples - 1:
            raise ValueError(f"n_components must be an integer in [1, N-1] = [1, {n_samples - 1}], got {n!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.dps is not None and self.backend != "mp":
            raise ValueError(f"dps applies to backend='mp' only (backend={self.backend!r})")
        return parse_sigma(self.sigma)

    def fit(self, X, y=None):
        """Fit on X, shape (N, d) (N ≥ 3); ``y`` is ignored. Returns self."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=3)
        X = check_data(X)
        sigma = self._check_params(X.shape[0])
        gram, system, checked = self._solve(X, sigma)
        self.X_fit_ = X
        self.backend_, self.dps_ = gram.backend.name, gram.backend.dps
        b = gram.backend
        n = self.n_components
        self.sigma_x_ = b.to_float(gram.meta["sigma_x"])
        values = np.array([b.to_float(v) for v in b.internal(system.values[:n])])
        bounds = enclose_eigenvalues(X, sigma, n) if self.enclose else None
        if bounds is None:
            self.eigenvalues_ = values
            self.eigenvalues_guarantee_ = "heuristic" if checked else "none"
            self.eigenvalues_lower_ = self.eigenvalues_upper_ = np.full(n, np.nan)
        else:
            lower, upper = bounds
            inside = (lower <= values) & (values <= upper)
            self.eigenvalues_ = np.where(inside, values, np.clip((lower + upper) / 2, lower, upper))
            self.eigenvalues_guarantee_ = "rigorous"
            self.eigenvalues_lower_, self.eigenvalues_upper_ = lower, upper
        self.eigenvectors_ = np.vectorize(b.to_float, otypes=[float])(b.internal(system.vectors[:, :n]))
        self.alphas_ = system.kpca_coefficients(n)
        self._fit_components = principal_components(double_center(gram), system, n)
        return self

    def _solve(self, X: np.ndarray, sigma: Fraction):
        """Gram, eigensystem in the chosen arithmetic (module docstring), and whether "auto"'s check passed."""
        if self.backend == "float64":
            return (*self._system(X, sigma, "float64", None), False)
        if self.backend == "mp":
            return (*self._system(X, sigma, "mp", self.dps or auto_dps(sigma, X.shape[0])), False)
        try:
            gram, system = self._system(X, sigma, "float64", None)
        except ValueError:  # σ_X or u outside the float64 range
            gram = system = None
        if system is not None and self._well_conditioned(system):
            return gram, system, True
        dps = auto_dps(sigma, X.shape[0])
        for _ in range(2):
            gram, system = self._system(X, sigma, "mp", dps)
            if self._well_conditioned(system):
                return gram, system, True
            dps *= 2
        bounds = self._bounds(system)
        bad = [i for i, bound in enumerate(bounds) if not bound <= CONDITION_TOL]
        warnings.warn(
            f"components {bad} of the Gaussian kernel PCA at sigma={self.sigma!r} are ill-conditioned even at "
            f"dps={system.dps} (relative error bounds {[f'{bounds[i]:.2g}' for i in bad]}): their eigenvalues "
            "are (nearly) repeated or not positive, so their eigenvectors are not well defined",
            RuntimeWarning,
            stacklevel=3,
        )
        return gram, system, False

    @staticmethod
    def _system(X, sigma, backend, dps):
        gram = gaussian_gram(X, sigma, backend=backend, dps=dps)
        return gram, eigensystem(double_center(gram))

    def _bounds(self, system) -> np.ndarray:
        b = system.backend
        values = b.internal(system.values)
        scaled = np.array([b.to_float(v / values[0]) for v in values])  # λ/λ₁: inside the float range
        return error_bounds(scaled, self.n_components, b.eps)

    def _well_conditioned(self, system) -> bool:
        return bool(np.all(self._bounds(system) <= CONDITION_TOL))

    def transform(self, X):
        """Project X, shape (M, d), on the fitted components.

        Returns
        -------
        ndarray, shape (M, n_components)
            float64 (nearest float of the working-precision result).
        """
        check_is_fitted(self, "alphas_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        b = get_backend(self.backend_, self.dps_ if self.backend_ == "mp" else None)
        gram = gaussian_gram(self.X_fit_, self.sigma, backend=b)
        cross = gaussian_cross_gram(X, self.X_fit_, gram.meta["sigma_x"], backend=b)
        components = center_cross(cross, gram).deviation.dot(b.internal(self.alphas_))
        return np.vectorize(b.to_float, otypes=[float])(components)

    def fit_transform(self, X, y=None):
        """Fit on X and return its components √λ_i v_i, shape (N, n_components), float64."""
        self.fit(X)
        b = get_backend(self.backend_, self.dps_ if self.backend_ == "mp" else None)
        return np.vectorize(b.to_float, otypes=[float])(b.internal(self._fit_components))

    @property
    def _n_features_out(self) -> int:
        return self.n_components
