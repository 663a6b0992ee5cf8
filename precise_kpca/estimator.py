"""``PreciseKernelPCA``: Gaussian kernel PCA with scikit-learn's conventions, valid at any bandwidth.

It computes what ``sklearn.decomposition.KernelPCA(kernel="rbf", gamma=γ)`` computes, but from the
cancellation-free Gram of :func:`precise_kpca.gaussian_gram` (stored as 1 + expm1(−u), centered without
forming K − 1), in float64 where that is accurate and in mpmath arithmetic where it is not. scikit-learn's
``exp(−u)`` rounds to 1 once u < 2⁻⁵³, i.e. for σ beyond about 2²⁶ times the median distance, and its
components are then noise; these stay meaningful to σ = 2³⁰ and far beyond.

Bandwidth: ``gamma`` fixes it in the data's units (u = γ|x − y|², scikit-learn's meaning; the same for every
cross-validation fold), ``sigma`` standardizes it as the paper does (σ_X = d_X·σ, d_X the median distance of the
training rows, so it moves with the fold). γ enters as σ_X = (2γ)^(−1/2), taken to 2·(working bits) + 8 bits
from the exact rational γ and rounded once to the working precision.

Backend ``"auto"``:

1. float64 (stable Gram) when σ_X is inside the float64 range; then each requested eigenpair i is checked
   against LAPACK's backward error N·eps·λ₁ (plus the residual ‖A v_i − λ_i v_i‖ of the Lanczos solver, used
   like scikit-learn's ``eigen_solver="auto"`` for N > 200 and fewer than 10 components): if that error over
   min(λ_i, gap_i) is ≤ 1e-8 (gap_i: distance to the nearest other eigenvalue) the float64 result is kept — at
   least 8 correct digits per eigenpair;
2. otherwise ``"mp"`` at ``dps = max(15, 13 + ⌈log10 N⌉ + ⌈4·log10 max(σ, 1)⌉)`` decimal digits (σ = σ_X / d_X): eigenvalues
   beyond the linear rank shrink like σ⁻⁴ relative to λ₁ (the quadratic part of the Gaussian kernel), and 8
   digits of those need 8 + log10 N + 4 log10 σ digits of working precision (5 more as guard). The same check is
   repeated at mp's eps; when it fails the precision is doubled once, and a ``RuntimeWarning`` names any
   component still ill-conditioned (e.g. a repeated eigenvalue, whose eigenvector is not defined).

``fit`` computes the requested eigenpairs only (and one more eigenvalue, for the gap of the last): LAPACK's
subset driver or the Lanczos solver in float64, top-k refinement in mp. ``transform`` reuses the training Gram's
column means kept by ``fit`` (N numbers), never the N × N Gram.

Guarantee of the eigenvalues (``eigenvalues_guarantee_``), whatever the backend:

* ``"rigorous"`` (``enclose=True``, wherever σ_X² H K H fits binary128): σ_X² H K H is built in binary128 with a
  proven Frobenius error bound (:func:`~precise_kpca.numerics.binary128_gram.scaled_gaussian_gram_words`), the float64
  eigensystem of it is certified by exact products
  (:func:`~precise_kpca.certify.eigen_enclosure.enclose_eigensystem`: Weyl, Kato–Temple, Li–Li), and the intervals
  are divided by a ball of the exact σ_X² (:func:`~precise_kpca.approx.rigorous.sigma_x2_ball`). Their ends, rounded
  outward to floats, are ``eigenvalues_lower_`` and ``eigenvalues_upper_``, and ``eigenvalues_`` lies between them.
  The assumptions are those of the two builders (IEEE float64 BLAS, correctly rounded binary128, SLEEF's documented
  1-ulp expm1). Cost: one more N×N float64 eigensystem and a few dozen N×N GEMMs. With ``gamma`` the Gram is built
  at the rational σ' = :func:`sigma_x_from_gamma` (γ, 400 bits) instead of the irrational σ_X = (2γ)^(−1/2); with
  r = σ_X²/σ'² = 1/(2γσ'²) (exact), every entry moves by |e^(−u) − e^(−ur)| ≤ u|1 − r|e^(−u·min(1, r)) ≤
  |1 − r|/min(1, r), so (Weyl) each interval is widened by N·|1 − r|/min(1, r) ≥ ‖K − K'‖_F.
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
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from . import limits
from .approx.rigorous import sigma_x2_ball
from .arith.fixed import FixedMatrix
from .backends import get_backend
from .errors import NoConvergence
from .certify.eigen_enclosure import enclose_eigensystem
from .numerics import double_center, eigensystem, gaussian_cross_gram, gaussian_gram
from .numerics.eigen import Eigensystem, fix_signs
from .numerics.geometry import median_distance, squared_distances
from .numerics.kernels import sigma_text
from .numerics.binary128_gram import scaled_gaussian_gram_words
from .validation import check_data, parse_sigma

BACKENDS = ("auto", "float64", "mp")
KERNELS = ("rbf", "gaussian")
"""Kernel names accepted: scikit-learn's ``"rbf"`` and its synonym ``"gaussian"`` (the same kernel)."""
CONDITION_TOL = 1e-8
"""Largest accepted relative error bound of a requested eigenpair (≈ 8 correct digits)."""
LANCZOS_MIN_N, LANCZOS_MAX_K = 200, 10
"""scikit-learn's ``eigen_solver="auto"`` rule: ARPACK for N > 200 and fewer than 10 eigenpairs."""
_MP_BITS_PER_DIGIT = 3.33
_A_BITS = 120  # fixed-point bits of hi + lo (106 carried): the read of the binary128 Gram stays exact
_BALL_BITS = 256  # Arb precision of the division by σ_X²: far below the enclosures' widths
_GAMMA_BITS = 400  # bits of σ' for an enclosure with gamma: the widening N·|1 − r| is ~N·2⁻³⁹⁸


def auto_dps(sigma, n: int) -> int:
    """Initial mp precision of backend "auto" for a standardized bandwidth (any form :func:`parse_sigma` reads)
    and N rows (module docstring, rule 2)."""
    sigma = parse_sigma(sigma)
    log10_sigma = max(0.0, math.log10(sigma.numerator) - math.log10(sigma.denominator))
    # never below the 15 digits the mp backend needs to hold float64 input exactly (N < 100 and σ ≤ 1 give 14)
    return max(15, 13 + math.ceil(math.log10(n)) + math.ceil(4 * log10_sigma))


def error_bounds(values: np.ndarray, n_components: int, eps: float, *, n: int | None = None,
                 residuals=None) -> np.ndarray:
    """Relative error bound (n·eps·λ₁ + r_i) / min(λ_i, gap_i) of each requested eigenpair (inf when not positive).

    Parameters
    ----------
    values : ndarray, shape (m,)
        The leading eigenvalues, descending (floats), m > n_components unless all N are given.
    n_components : int
    eps : float
        Unit roundoff of the arithmetic that produced them.
    n : int, optional
        Order N of the matrix (default ``len(values)``).
    residuals : array_like, shape (n_components,), optional
        Residual norms ‖A v_i − λ_i v_i‖ of an iterative solver (default 0: a backward-stable direct solver).

    Returns
    -------
    ndarray, shape (n_components,)
    """
    m = len(values)
    noise = (m if n is None else n) * eps * abs(values[0])
    extra = np.zeros(n_components) if residuals is None else np.asarray(residuals, dtype=float)
    bounds = np.empty(n_components)
    for i in range(n_components):
        gaps = [abs(values[i] - values[j]) for j in (i - 1, i + 1) if 0 <= j < m]
        scale = min([values[i], *gaps])
        bounds[i] = (noise + extra[i]) / scale if scale > 0 else math.inf
    return bounds


def sigma_x_from_gamma(gamma: Fraction, bits: int) -> Fraction:
    """σ_X = (2γ)^(−1/2) to ``bits`` bits (floor of the exact square root at that scale; relative error < 2^−bits·2)."""
    scale = 2 * bits
    target = Fraction(1) / (2 * gamma) * Fraction(2) ** (2 * scale)
    return Fraction(math.isqrt(target.numerator // target.denominator), 2**scale)


def enclose_eigenvalues(X: np.ndarray, bandwidth: tuple[str, Fraction], n_components: int):
    """Float bounds on the top eigenvalues of H K H (module docstring, "rigorous"), or None where unavailable.

    Parameters
    ----------
    X : ndarray of float64, shape (N, d)
    bandwidth : ("sigma", Fraction) or ("gamma", Fraction)
        Standardized bandwidth σ, or scikit-learn's γ, exact.
    n_components : int

    Returns
    -------
    (lower, upper) : tuple of ndarray, shape (n_components,), or None
        None when σ_X² H K H is outside the binary128 range.
    """
    kind, value = bandwidth
    rounded = sigma_x_from_gamma(value, _GAMMA_BITS) if kind == "gamma" else None
    try:
        quad = (scaled_gaussian_gram_words(X, value) if rounded is None
                else scaled_gaussian_gram_words(X, rounded, standardized=False))
    except ValueError:  # the bandwidth puts the scaled Gram outside binary128
        return None
    w, V = np.linalg.eigh(quad.hi)
    A_hp = FixedMatrix.from_words([quad.hi, quad.lo], bits=_A_BITS)
    # ‖A − A_hp‖_F ≤ the builder's bound + N × the fixed-point read's largest entry error
    delta = quad.error_bound + X.shape[0] * A_hp.error_bound
    enc = enclose_eigensystem(A_hp, delta, w[::-1].copy(), V[:, ::-1].copy(), k=1)
    with flint.ctx.workprec(_BALL_BITS):
        if rounded is None:
            s2, widening = sigma_x2_ball(X, value), flint.arb(0)
        else:
            s2 = _exact_ball(rounded * rounded)
            widening = _exact_ball(_gamma_widening(value, rounded, X.shape[0]))
        balls = [(_exact_ball(lo).union(_exact_ball(hi))) / s2 + flint.arb(0, widening.upper())
                 for lo, hi in zip(enc.lower[:n_components], enc.upper[:n_components])]
        lower = np.array([_float_beside(b.lower(), up=False) for b in balls])
        upper = np.array([_float_beside(b.upper(), up=True) for b in balls])
    return lower, upper


def _gamma_widening(gamma: Fraction, rounded: Fraction, n: int) -> Fraction:
    """N·|1 − r|/min(1, r), r = 1/(2γσ'²): bounds ‖K − K'‖_F, K' the Gram at σ' (module docstring)."""
    r = 1 / (2 * gamma * rounded * rounded)
    return n * abs(1 - r) / min(Fraction(1), r)


def _exact_ball(x) -> flint.arb:
    """A ball containing an mpf or a Fraction (exact when its mantissa fits the working precision)."""
    if isinstance(x, Fraction):
        value = x
    else:
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


def _learns_inverse(estimator) -> bool:
    if not estimator.fit_inverse_transform:
        raise AttributeError("inverse_transform needs fit_inverse_transform=True when instantiating (as in "
                             "scikit-learn's KernelPCA)")
    return True


class PreciseKernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Gaussian (RBF) kernel PCA, accurate far past the float64 limit, with scikit-learn's KernelPCA interface.

    Parameters
    ----------
    n_components : int or None, default None
        Number of principal components, at most N − 1 (the rank of the centered Gram). None: the leading
        components the first arithmetic of ``backend`` resolves to 8 digits (module docstring's check), up to the
        first it does not — scikit-learn's "all non-zero components", with non-zero meaning "above rounding".
    kernel : {"rbf", "gaussian"}, default "rbf"
    gamma : float, str or Fraction, optional
        Fixed bandwidth, scikit-learn's: K = exp(−γ|x − y|²), read exactly (0.1 is the float 0.1). Stable under
        cross-validation. Not with ``sigma``.
    sigma : int, float, str or Fraction, optional
        Standardized bandwidth (the paper's Eq. 1): σ_X = d_X·σ with d_X the median pairwise distance of the
        training data (``median="full"``). Strings such as ``"2**40"`` stay exact. Default 1 when ``gamma`` is
        not given.
    fit_inverse_transform : bool, default False
        Learn the pre-image map as scikit-learn does (kernel ridge regression of X on the components, with the
        same kernel on the components), for :meth:`inverse_transform`.
    alpha : float, default 1.0
        Ridge parameter of that regression.
    backend : {"auto", "float64", "mp"}
        See the module docstring for ``"auto"``. ``"float64"`` always uses the stable float64 Gram.
    dps : int, optional
        Decimal digits for ``backend="mp"`` (default: the "auto" rule). Not allowed with ``"float64"``.
    enclose : bool, default False
        Enclose the returned eigenvalues rigorously (module docstring, ``"rigorous"``). Off by default so that
        ``fit`` stays within a few times scikit-learn's KernelPCA (the enclosure costs a full N×N eigensystem and
        exact products: 170× KernelPCA at N = 1000, ``benchmarks/estimator_bench.py``); the guarantee of what is
        returned is always in ``eigenvalues_guarantee_``.

    Attributes
    ----------
    eigenvalues_ : ndarray, shape (n_components_,)
        Largest eigenvalues of the centered Gram H K H (scikit-learn's convention: not divided by N), float64
        (they scale like σ⁻², so they underflow to 0 beyond σ ≈ 2⁵⁰⁰; ``transform`` does not use them). Where
        they are enclosed, the solver's value if it lies in the enclosure, else the enclosure's midpoint.
    eigenvalues_guarantee_ : {"rigorous", "heuristic", "none"}
        What supports ``eigenvalues_`` (module docstring).
    eigenvalues_lower_, eigenvalues_upper_ : ndarray, shape (n_components_,)
        Float bounds with ``lower ≤ λ_i ≤ upper`` for the exact eigenvalues of the exact H K H (rounded outward)
        when the guarantee is ``"rigorous"``; NaN otherwise.
    eigenvectors_ : ndarray, shape (N, n_components_)
        Their unit-norm eigenvectors v_i (scikit-learn's convention), float64; each column's largest-magnitude
        entry is positive.
    alphas_ : ndarray, shape (N, n_components_)
        Kernel-PCA coefficients α_i = v_i / √λ_i, normalized as in the paper's Section II-A1 (λ_i α_i·α_i = 1),
        in the working precision: float64, or an object array of ``mpmath.mpf``. ``transform`` uses them.
    sigma_x_ : float
        Effective bandwidth σ_X (so ``gamma_ = 1 / (2 * sigma_x_**2)``); inf beyond the float64 range.
    gamma_ : float
        The kernel coefficient in scikit-learn's terms (0 when it underflows).
    backend_ : str
        ``"float64"`` or ``"mp"``: the arithmetic used.
    dps_ : int
        Its decimal digits (15 for float64).
    X_fit_ : ndarray, shape (N, d)
        Training data (dense float64).
    dual_coef_ : ndarray, shape (N, d)
        With ``fit_inverse_transform``: the ridge coefficients of the pre-image map.
    X_transformed_fit_ : ndarray, shape (N, n_components_)
        With ``fit_inverse_transform``: the training components.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When X has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from precise_kpca.datasets import load
    >>> X = load("wine")
    >>> kpca = PreciseKernelPCA(2, sigma="2**30")
    >>> Z = kpca.fit_transform(X)  # scikit-learn's KernelPCA(gamma=kpca.gamma_) returns noise here
    >>> Xc = X - X.mean(axis=0)
    >>> linear = Xc @ np.linalg.svd(Xc)[2][:2].T  # linear PCA's scores: the σ → ∞ limit of σ_X·Z, up to signs
    >>> error = np.abs(np.abs(kpca.sigma_x_ * Z) - np.abs(linear)).max() / np.abs(linear).max()
    >>> bool(error < 100 * np.finfo(float).eps)
    True
    """

    def __init__(self, n_components=None, *, kernel="rbf", gamma=None, sigma=None, fit_inverse_transform=False,
                 alpha=1.0, backend="auto", dps=None, enclose=False):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.sigma = sigma
        self.fit_inverse_transform = fit_inverse_transform
        self.alpha = alpha
        self.backend = backend
        self.dps = dps
        self.enclose = enclose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # --- parameters ------------------------------------------------------------------------------------------

    def _check_params(self, n_samples: int) -> None:
        n = self.n_components
        if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer))
                              or not 1 <= n <= n_samples - 1):
            raise ValueError(f"n_components must be None or an integer in [1, N-1] = [1, {n_samples - 1}], "
                             f"got {n!r}")
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS} (the Gaussian kernel), got {self.kernel!r}; "
                             "for other kernels use sklearn.decomposition.KernelPCA")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.dps is not None and self.backend != "mp":
            raise ValueError(f"dps applies to backend='mp' only (backend={self.backend!r})")
        if self.gamma is not None and self.sigma is not None:
            raise ValueError("give gamma (fixed bandwidth) or sigma (standardized bandwidth), not both")
        if not (isinstance(self.alpha, (int, float, np.number)) and not isinstance(self.alpha, bool)
                and self.alpha > 0):
            raise ValueError(f"alpha must be a positive number, got {self.alpha!r}")
        if self.dps is not None:
            get_backend("mp", self.dps)  # dps=0 or beyond the limits is refused, not replaced by the "auto" rule

    def _bandwidth(self) -> tuple[str, Fraction]:
        """("gamma", γ) or ("sigma", σ), exact."""
        if self.gamma is not None:
            return "gamma", parse_sigma(self.gamma, name="gamma")
        return "sigma", parse_sigma(1 if self.sigma is None else self.sigma)

    def _standardized(self, X: np.ndarray, bandwidth) -> Fraction:
        """σ = σ_X / d_X (for the "auto" precision rule), exact for ``sigma``, float64-close for ``gamma``."""
        kind, value = bandwidth
        if kind == "sigma":
            return value
        b = get_backend("float64")
        d_x = median_distance(squared_distances(X, b), b)
        return Fraction(float(sigma_x_from_gamma(value, 60)) / d_x)

    # --- fitting -------------------------------------------------------------------------------------------

    def fit(self, X, y=None):
        """Fit on X, shape (N, d) (N ≥ 3; dense or scipy.sparse); ``y`` is ignored. Returns self."""
        X = self._validate(X, reset=True)
        self._check_params(X.shape[0])
        bandwidth = self._bandwidth()
        gram, system, k, checked = self._solve(X, bandwidth)
        b = gram.backend
        self.X_fit_ = X
        self.backend_, self.dps_ = b.name, b.dps
        sigma_x = gram.meta["sigma_x"]
        self.sigma_x_ = _float(b, sigma_x)
        with np.errstate(over="ignore"):
            self.gamma_ = _float(b, 1 / (2 * sigma_x * sigma_x))
        self._sigma_x = b.export(sigma_x)
        values = b.internal(system.values[:k])
        self._set_eigenvalues(X, bandwidth, b.to_floats(values), checked)
        self.eigenvectors_ = b.to_floats(b.internal(system.vectors[:, :k]))
        self.alphas_ = system.kpca_coefficients(k)
        vectors = b.internal(system.vectors[:, :k])
        self._fit_components = b.to_floats(vectors * b.sqrt(values)[None, :])  # = H K H α, without the N×N product
        deviation = gram.deviation
        self._train_col_means = b.export(deviation.sum(axis=0) / X.shape[0])
        if self.fit_inverse_transform:
            self._fit_inverse(self._fit_components, X)
        return self

    def _set_eigenvalues(self, X: np.ndarray, bandwidth, values: np.ndarray, checked: bool) -> None:
        """``eigenvalues_`` and their guarantee, enclosed when ``enclose`` and binary128 allow (module docstring)."""
        k = len(values)
        bounds = enclose_eigenvalues(X, bandwidth, k) if self.enclose else None
        if bounds is None:
            self.eigenvalues_ = values
            self.eigenvalues_guarantee_ = "heuristic" if checked else "none"
            self.eigenvalues_lower_ = self.eigenvalues_upper_ = np.full(k, np.nan)
            return
        lower, upper = bounds
        inside = (lower <= values) & (values <= upper)
        self.eigenvalues_ = np.where(inside, values, np.clip((lower + upper) / 2, lower, upper))
        self.eigenvalues_guarantee_ = "rigorous"
        self.eigenvalues_lower_, self.eigenvalues_upper_ = lower, upper

    def _validate(self, X, *, reset: bool) -> np.ndarray:
        X = validate_data(self, X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, reset=reset,
                          ensure_min_samples=3 if reset else 1)
        if scipy.sparse.issparse(X):
            X = X.toarray()  # float64 entries are exact; the Gram is dense whatever the input
        return check_data(X, min_rows=3 if reset else 1)

    def _solve(self, X: np.ndarray, bandwidth):
        """Gram, eigensystem (top pairs), the number k of components (backend rule, module docstring), and
        whether "auto"'s check passed."""
        n = X.shape[0]
        wanted = self.n_components
        if self.backend in ("float64", "mp"):
            dps = None if self.backend == "float64" else self.dps or auto_dps(self._standardized(X, bandwidth), n)
            gram, system, residuals = self._system(X, bandwidth, self.backend, dps, wanted)
            k = wanted or self._resolved(system, residuals)
            return gram, system, k, False
        try:
            gram, system, residuals = self._system(X, bandwidth, "float64", None, wanted)
        except ValueError:  # σ_X or u outside the float64 range
            gram = system = None
        if system is not None:
            k = wanted or self._resolved(system, residuals)
            if self._well_conditioned(system, k, residuals):
                return gram, system, k, True
        dps = auto_dps(self._standardized(X, bandwidth), n)
        for _ in range(2):
            gram, system, residuals = self._system(X, bandwidth, "mp", dps, wanted)
            k = wanted or self._resolved(system, residuals)
            if self._well_conditioned(system, k, residuals):
                return gram, system, k, True
            dps *= 2
        bounds = self._bounds(system, k, residuals)
        bad = [i for i, bound in enumerate(bounds) if not bound <= CONDITION_TOL]
        warnings.warn(
            f"components {bad} of the Gaussian kernel PCA at {bandwidth[0]}={bandwidth[1]} are ill-conditioned "
            f"even at dps={system.dps} (relative error bounds {[f'{bounds[i]:.2g}' for i in bad]}): their "
            "eigenvalues are (nearly) repeated or not positive, so their eigenvectors are not well defined",
            RuntimeWarning,
            stacklevel=3,
        )
        return gram, system, k, False

    def _gram(self, X: np.ndarray, bandwidth, backend: str, dps):
        kind, value = bandwidth
        if kind == "sigma":
            return gaussian_gram(X, value, backend=backend, dps=dps)
        bits = 53 if backend == "float64" else math.ceil(dps * _MP_BITS_PER_DIGIT)
        return gaussian_gram(X, sigma_x_from_gamma(value, 2 * bits + 8), backend=backend, dps=dps,
                             standardized=False)

    def _system(self, X, bandwidth, backend, dps, wanted):
        """Gram, its centered eigensystem (the pairs asked for plus one eigenvalue), and Lanczos residuals."""
        if backend == "mp":  # refused before an hours-long run (the auto rule grows like 4 log10 sigma)
            kind, value = bandwidth
            limits.check_mp_eigensystem(X.shape[0], dps, parameter=kind, value=repr(str(value)))
        gram = self._gram(X, bandwidth, backend, dps)
        centered = double_center(gram)
        n = X.shape[0]
        if backend != "float64":
            try:
                return gram, eigensystem(centered, k=min(n, (wanted or n - 1) + 1)), None
            except NoConvergence as exc:  # name the parameters that set the precision, not only the iteration
                kind, value = bandwidth
                raise NoConvergence(f"{kind}={sigma_text(value)}: the mp eigensystem at dps={dps} did not settle "
                                    f"({exc.reason})", remedy="give a larger dps, or a smaller bandwidth") from exc
        values, vectors, residuals = _float64_top(centered.internal, None if wanted is None else wanted + 1)
        return gram, Eigensystem(values, vectors, gram.backend), residuals

    def _resolved(self, system, residuals) -> int:
        """n_components=None: the leading components up to the first not resolved to CONDITION_TOL (≥ 1)."""
        k = len(system.values) - 1
        bounds = self._bounds(system, k, residuals)
        unresolved = np.flatnonzero(~(bounds <= CONDITION_TOL))
        return max(1, int(unresolved[0]) if len(unresolved) else k)

    def _bounds(self, system, k: int, residuals) -> np.ndarray:
        b = system.backend
        values = b.internal(system.values)
        scaled = np.array([b.to_float(v / values[0]) for v in values])  # λ/λ₁: inside the float range
        scaled_residuals = None if residuals is None else residuals[:k] / b.to_float(values[0])
        return error_bounds(scaled, k, b.eps, n=system.vectors.shape[0], residuals=scaled_residuals)

    def _well_conditioned(self, system, k: int, residuals) -> bool:
        return bool(np.all(self._bounds(system, k, residuals) <= CONDITION_TOL))

    def _fit_inverse(self, Z: np.ndarray, X: np.ndarray) -> None:
        """scikit-learn's pre-image map: dual_coef_ = (K(Z, Z) + αI)⁻¹ X, same kernel on the components."""
        K = self._component_kernel(Z, Z)
        K.flat[:: K.shape[0] + 1] += self.alpha
        self.dual_coef_ = scipy.linalg.solve(K, X, assume_a="pos", overwrite_a=True)
        self.X_transformed_fit_ = Z

    def _component_kernel(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """exp(−|a − b|² / 2σ_X²) in float64, as 1 + expm1 (σ_X² beyond the float range gives 1)."""
        sq = cdist(A, B, "sqeuclidean")
        with np.errstate(over="ignore"):
            two_s2 = 2.0 * np.float64(self.sigma_x_) ** 2
        return 1.0 + np.expm1(-sq / two_s2)

    # --- using the fit ---------------------------------------------------------------------------------------

    def transform(self, X):
        """Project X, shape (M, d) (dense or scipy.sparse), on the fitted components.

        Returns
        -------
        ndarray, shape (M, n_components_)
            float64 (nearest float of the working-precision result).
        """
        check_is_fitted(self, "alphas_")
        X = self._validate(X, reset=False)
        b = get_backend(self.backend_, self.dps_ if self.backend_ == "mp" else None)
        cross = gaussian_cross_gram(X, self.X_fit_, self._sigma_x, backend=b).deviation
        n = self.X_fit_.shape[0]
        col_means = b.internal(self._train_col_means)
        centered = cross - (cross.sum(axis=1) / n)[:, None] - col_means[None, :] + col_means.sum() / n
        return b.to_floats(centered.dot(b.internal(self.alphas_)))

    def fit_transform(self, X, y=None):
        """Fit on X and return its components √λ_i v_i, shape (N, n_components_), float64."""
        self.fit(X)
        return self._fit_components.copy()

    @available_if(_learns_inverse)
    def inverse_transform(self, X):
        """Pre-images of components X, shape (M, n_components_), by the map learnt with ``fit_inverse_transform``
        (scikit-learn's kernel ridge regression; approximate by construction). The method exists only when
        ``fit_inverse_transform=True``.

        Returns
        -------
        ndarray, shape (M, d)
        """
        check_is_fitted(self, "dual_coef_")
        Z = check_data(np.asarray(X, dtype=np.float64), name="X", min_rows=1)
        if Z.shape[1] != self.X_transformed_fit_.shape[1]:
            raise ValueError(f"X has {Z.shape[1]} columns; the fit has {self.X_transformed_fit_.shape[1]} components")
        return self._component_kernel(Z, self.X_transformed_fit_) @ self.dual_coef_

    @property
    def _n_features_out(self) -> int:
        return len(self.eigenvalues_)


def _float64_top(A: np.ndarray, m: int | None):
    """The m leading eigenpairs of a symmetric float64 matrix (all when None), descending, signs fixed.

    LAPACK's subset driver computes only those; for N > 200 and m < 10 the Lanczos solver (ARPACK, as
    scikit-learn's "auto"), whose residual norms are returned for the error bound (None for LAPACK).
    """
    n = A.shape[0]
    lanczos = m is not None and n > LANCZOS_MIN_N and m < LANCZOS_MAX_K
    if lanczos:
        v0 = np.random.default_rng(0).uniform(-1, 1, n)  # fixed start: the same fit every time
        values, vectors = scipy.sparse.linalg.eigsh(A, k=m, which="LA", tol=0, v0=v0)
    elif m is None or m >= n:
        values, vectors = scipy.linalg.eigh(A)
    else:
        values, vectors = scipy.linalg.eigh(A, subset_by_index=[n - m, n - 1], driver="evr")
    order = np.argsort(values)[::-1]
    values, vectors = values[order], fix_signs(vectors[:, order])
    residuals = np.linalg.norm(A @ vectors - vectors * values[None, :], axis=0) if lanczos else None
    return values, vectors, residuals


def _float(b, value) -> float:
    """Nearest float, inf beyond the float64 range."""
    try:
        return float(b.to_float(value))
    except OverflowError:
        return math.inf
