"""Do Theorems 2–3 carry over to Nyström and random-feature KPCA? Large-σ limits, enclosed from the exact data.

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

Every reported number is an :class:`~precise_kpca.approx.enclosure.Interval` with its guarantee:

* ``guarantee="rigorous"`` (default): Arb ball arithmetic on the exact data and the given random draws
  (:mod:`precise_kpca.approx.rigorous`), the eigenvalues enclosed by
  :func:`~precise_kpca.approx.enclosure.top_eigenvalues`; each σ is re-evaluated at a higher precision until every
  relative error carries ``digits`` digits. The relative error ``|σ_X² λ_l / μ_l − 1|`` is formed from the balls,
  so its cancellation (the error is ~σ⁻² while both terms are O(1)) costs precision, never correctness.
* ``guarantee="heuristic"`` (asked for explicitly): the mp backend at two precisions, the error formed in mp; the
  interval is the span of the two evaluations (widened by the coarser one's unit roundoff): agreement, not proof.

A rate (least-squares slope of log error on log σ) is enclosed from the errors' intervals and reported only when
each fitted error is positive and determined to :data:`RATE_DIGITS` digits; otherwise it is NaN with the reason.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from ..backends import get_backend
from ..backends.base import as_fraction
from ..errors import InsufficientPrecision
from ..measures.measurement import exact_mpf
from ..validation import check_data, parse_sigma
from .enclosure import (Interval, IntervalArray, arb_interval, interval_ball, least_squares_slope,
                        undetermined)
from .kpca import (_center_columns, _cross, _draw_landmarks, _unit_features, empirical_kpca, gaussian_bandwidth,
                   nystrom_kpca, rf_kpca, rff_features)
from .rigorous import KernelProblem

__all__ = ["ConvergenceStudy", "GUARANTEES", "METHODS", "RATE_DIGITS", "large_sigma_convergence", "linear_limit"]

METHODS = ("exact", "nystrom", "rf-cos", "rf-sincos")
GUARANTEES = ("rigorous", "heuristic")
RATE_DIGITS = 2
"""Fewest digits of every fitted error for a rate to be reported (the slope then has about as many)."""

_ATTEMPTS = 6  # precision escalations per σ before a point is reported short
_MAX_BITS = 1 << 14
_GUARD_BITS = 32
_BITS_PER_DIGIT = math.log2(10)
_RATE_BITS = 128  # the rate's arithmetic: far finer than the errors' intervals
# log2 σ coefficient of the bits lost per method: the error ~σ⁻² (σ⁻¹ for cos features) plus the cancellation in
# the centered features (σ⁻¹ relative to their O(1) entries); Nyström's is K_mm's conditioning (see _start_bits)
_SIGMA_BITS = {"exact": 2, "nystrom": 2, "rf-cos": 2, "rf-sincos": 3}
_HEURISTIC_EXTRA_DPS = 20


@dataclass(frozen=True)
class ConvergenceStudy:
    """Relative eigenvalue errors of an approximate KPCA against its linear limit, versus σ, with their intervals.

    Attributes
    ----------
    method : str
        One of :data:`METHODS`.
    route : {"arb-enclosure", "agreement"}
        How the intervals were obtained (``guarantee="rigorous"`` or ``"heuristic"``).
    sigmas : ndarray of float, shape (S,)
        Standardized bandwidths σ (σ_X = d_X·σ).
    limit : IntervalArray, shape (ℓ,)
        Limit eigenvalues μ_l (linear PCA of the sample, or of the random projection).
    scaled_eigenvalues : IntervalArray, shape (S, ℓ)
        ``σ_X² λ_l(σ)``.
    relative_error : IntervalArray, shape (S, ℓ)
        ``|σ_X² λ_l / μ_l − 1|``: ``.lower``, ``.upper``, ``.guarantee`` per entry, ``.digits`` derived from the
        interval, ``.value`` its midpoint.
    gram_error : IntervalArray, shape (S,)
        ``‖σ_X² H (K̃ − K) H‖_F / ‖σ_X² H K H‖_F`` of the approximate Gram K̃ (Nyström ``K_nm K_mm⁻¹ K_mn``, random
        features ``Z Zᵀ``) against the exact Gaussian Gram; undetermined (with the reason) for ``"exact"``, on the
        agreement route, or when not asked for.
    rate : IntervalArray, shape (ℓ,)
        Least-squares slope of log error versus log σ over the last ``fit_points`` bandwidths, enclosed from the
        errors' intervals; NaN with a reason unless every fitted error is positive and has ≥ :data:`RATE_DIGITS`.
    constant : IntervalArray, shape (ℓ,)
        ``error · σ^{−q}`` at the largest σ, q the rate's midpoint rounded to an integer (C in C σ^q).
    fit_points : int
    precision : ndarray of int, shape (S,)
        Bits (arb-enclosure) or decimal digits (agreement, the finer of the two) of each σ's last evaluation.
    seconds : ndarray of float, shape (S,)
    """

    method: str
    route: str
    sigmas: np.ndarray
    limit: IntervalArray
    scaled_eigenvalues: IntervalArray
    relative_error: IntervalArray
    gram_error: IntervalArray
    rate: IntervalArray
    constant: IntervalArray
    fit_points: int
    precision: np.ndarray
    seconds: np.ndarray


def linear_limit(X, *, method: str = "nystrom", n_features: int = 100, random_state=0, n_components: int | None = None,
                 digits: int = 30) -> IntervalArray:
    """Rigorous enclosures of the σ → ∞ limit eigenvalues μ_1..μ_ℓ, descending.

    Parameters
    ----------
    X : array_like, shape (n, d)
    method : {"exact", "nystrom", "rf-cos", "rf-sincos"}
        ``"exact"``, ``"nystrom"``: the sample covariance ``H X Xᵀ H/(n−1)``. ``"rf-*"``: ``eig(C Q)`` of the projection
        defined by the seeded features (``RandomFourierFeatures(n_features, gamma=1/2, kind,
        random_state)``, i.e. ω ~ N(0, I)).
    n_components : int, optional
        Default: as many as the limit can have nonzero (d, or min(d, number of frequencies)).
    digits : int
        Digits asked of each enclosure (the precision is raised until they are reached).

    Returns
    -------
    IntervalArray, shape (ℓ,)
    """
    X = check_data(X)
    _check_method(method)
    # Nyström's limit is the covariance, as for exact KPCA: no landmarks are drawn for it
    problem = KernelProblem(X, "exact" if method == "nystrom" else method, n_features=n_features,
                            random_state=random_state)
    ell = _components(n_components, problem.limit_rank())
    bits = _GUARD_BITS + math.ceil(digits * _BITS_PER_DIGIT)
    for _ in range(_ATTEMPTS):
        with flint.ctx.workprec(bits):
            limit = [arb_interval(m) for m in problem.limit(ell)]
        if min(i.digits for i in limit) >= digits or bits >= _MAX_BITS:
            return IntervalArray.of(limit)
        bits *= 2
    return IntervalArray.of(limit)


def large_sigma_convergence(
    X, sigmas, *, method: str = "nystrom", n_landmarks: int = 10, n_features: int = 100, random_state=0,
    n_components: int | None = None, digits: int = 10, guarantee: str = "rigorous", gram_error: bool = True,
    dps: int | None = None, fit_points: int | None = None, progress=None,
) -> ConvergenceStudy:
    """Measure the σ → ∞ convergence of Nyström / RF-KPCA eigenvalues to their linear limit.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data; ``n_components`` (default d) must not exceed the limit's rank (d, or min(d, frequencies)).
    sigmas : sequence of int, float or str
        Standardized bandwidths (e.g. ``["2**4", "2**8", ...]``), increasing.
    method : {"exact", "nystrom", "rf-cos", "rf-sincos"}
        ``"exact"`` is empirical (U-statistic) KPCA itself, Theorem 3's setting, for comparing constants.
    n_landmarks : int
        m for Nyström (landmarks drawn by ``default_rng(random_state)``).
    n_features : int
        D for random features (seeded by ``random_state``).
    n_components : int, optional
    digits : int
        Digits asked of every relative error (``guarantee="rigorous"``): each σ's precision is raised until they
        are enclosed, at most :data:`_ATTEMPTS` times; a point that stays short says so in its ``reason``.
    guarantee : {"rigorous", "heuristic"}
        Arb enclosures, or the agreement of the mp backend at two precisions (module docstring).
    gram_error : bool
        Also enclose the Gram approximation error (nystrom and random features; O(n²) balls per σ).
    dps : int, optional
        ``guarantee="heuristic"`` only: working precision; default ``30 + 2·m·log10(σ_max)`` for Nyström and
        ``30 + 4·log10(σ_max)`` otherwise, and each σ is evaluated again at ``dps + 20``.
    fit_points : int, optional
        Number of largest bandwidths used for the rate fit (default min(4, len(sigmas))).
    progress : callable, optional
        Wraps the iteration over σ (e.g. ``tqdm``: a bar with ETA, one step per σ); None: silent.

    Returns
    -------
    ConvergenceStudy
    """
    X = check_data(X)
    _check_method(method)
    if guarantee not in GUARANTEES:
        raise ValueError(f"large_sigma_convergence: guarantee must be one of {GUARANTEES}, got {guarantee!r}")
    if dps is not None and guarantee != "heuristic":
        raise ValueError("large_sigma_convergence: dps applies to guarantee='heuristic' only")
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
    problem = KernelProblem(X, method, n_landmarks=n_landmarks, n_features=n_features, random_state=random_state)
    ell = _components(n_components, problem.limit_rank())
    steps = exact_sigmas if progress is None else progress(exact_sigmas)
    if guarantee == "rigorous":
        points, limit = _enclosed_points(problem, steps, ell, digits, gram_error and method != "exact")
        route = "arb-enclosure"
    else:
        dps = _heuristic_dps(exact_sigmas[-1], method, n_landmarks) if dps is None else dps
        draws = dict(m=n_landmarks, n_features=n_features, random_state=random_state)
        mus = [_mp_limit(X, method, n_features, random_state, ell, p) for p in (dps, dps + _HEURISTIC_EXTRA_DPS)]
        limit = IntervalArray.of([_span(a, b, dps) for a, b in zip(*mus)])
        points = [_agreement_point(X, s, method, draws, ell, dps, mus) for s in steps]
        route = "agreement"
    errors = [p.errors for p in points]
    fits = [_rate([e[l] for e in errors], exact_sigmas, fit_points) for l in range(ell)]
    return ConvergenceStudy(
        method=method, route=route, sigmas=np.array([float(s) for s in exact_sigmas]), limit=limit,
        scaled_eigenvalues=IntervalArray.of([p.scaled for p in points]), relative_error=IntervalArray.of(errors),
        gram_error=IntervalArray.of([p.gram for p in points]), rate=IntervalArray.of([f[0] for f in fits]),
        constant=IntervalArray.of([f[1] for f in fits]), fit_points=fit_points,
        precision=np.array([p.precision for p in points]), seconds=np.array([p.seconds for p in points]),
    )


@dataclass(frozen=True)
class _Point:
    scaled: list
    errors: list
    gram: Interval
    precision: int
    seconds: float


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"large_sigma_convergence: method must be one of {METHODS}, got {method!r}")


def _components(n_components, rank: int) -> int:
    ell = rank if n_components is None else n_components
    if isinstance(ell, bool) or not isinstance(ell, (int, np.integer)) or not 1 <= ell <= rank:
        raise ValueError(f"large_sigma_convergence: n_components must be an integer in [1, {rank}] (the number of "
                         f"limit eigenvalues that can be nonzero), got {n_components!r}")
    return int(ell)


def _sigma_text(sigma: Fraction) -> str:
    """``2^k`` for powers of two, else the exact rational."""
    for value, sign in ((sigma, 1), (1 / sigma, -1)):
        if value.denominator == 1 and value.numerator & (value.numerator - 1) == 0:
            return f"2^{sign * (value.numerator.bit_length() - 1)}"
    return str(sigma)


# ---------------------------------------------------------------------------------------------------------
# rigorous route
# ---------------------------------------------------------------------------------------------------------
def _enclosed_points(problem: KernelProblem, sigmas, ell: int, digits: int, gram: bool):
    """Every σ enclosed to ``digits`` digits (or as far as :data:`_ATTEMPTS` escalations reach), and the limit."""
    with flint.ctx.workprec(_GUARD_BITS * 2):
        first = problem.limit(ell)
    spread = float(first[0].mid() / first[-1].lower()) if first[-1].lower() > 0 else 2.0**_GUARD_BITS
    points = [_enclosed_point(problem, s, ell, digits, gram, _start_bits(problem, s, digits, spread))
              for s in sigmas]
    with flint.ctx.workprec(max(p.precision for p in points)):
        limit = IntervalArray.of([arb_interval(m) for m in problem.limit(ell)])
    return points, limit


def _start_bits(problem: KernelProblem, sigma: Fraction, digits: int, spread: float) -> int:
    """First precision tried at σ: the requested digits, the spread μ_1/μ_ℓ and the bits σ costs the method.

    Nyström's landmark Gram has eigenvalues down to ~σ^(−2k), k the least degree with C(d + k, k) ≥ m monomials
    (the landmark span's polynomial degree): its Cholesky factor costs about 2k·log2 σ bits (measured: the
    error's own σ⁻² is inside that).
    """
    log_sigma = max(0.0, math.log2(sigma.numerator) - math.log2(sigma.denominator))
    per_log = _SIGMA_BITS[problem.method]
    if problem.method == "nystrom":
        per_log = 2 * next(k for k in range(1, len(problem.landmarks) + 1)
                           if math.comb(problem.d + k, k) >= len(problem.landmarks))
    return min(_MAX_BITS, int(_GUARD_BITS + digits * _BITS_PER_DIGIT + math.log2(max(spread, 1.0))
                              + math.log2(problem.n) + per_log * log_sigma))


def _enclosed_point(problem: KernelProblem, sigma: Fraction, ell: int, digits: int, gram: bool, bits: int) -> _Point:
    """One σ: raise the precision until every error (and the Gram error) has ``digits`` digits, or give up."""
    start = time.perf_counter()
    reason, result, used = "", None, bits
    for _ in range(_ATTEMPTS):
        try:
            result, used = _enclosed_at(problem, sigma, ell, gram, bits), bits
        except InsufficientPrecision as exc:
            reason, used = f"{exc} (at {bits} bits)", bits if result is None else used
            bits = min(2 * bits, _MAX_BITS)
            continue
        worst = min(i.digits for i in result[1] + ([result[2]] if gram else []))
        if worst >= digits or bits >= _MAX_BITS:
            break
        bits = min(_MAX_BITS, bits + max(_GUARD_BITS, math.ceil((digits - worst) * _BITS_PER_DIGIT) + _GUARD_BITS)
                   if worst > 0 else 2 * bits)
    seconds = time.perf_counter() - start
    if result is None:
        missing = undetermined(f"sigma={_sigma_text(sigma)}: {reason}")
        return _Point([missing] * ell, [missing] * ell, missing, used, seconds)
    scaled, errors, gram_interval = result
    short = f"fewer than {digits} digits at {used} bits"
    errors = [e if e.digits >= digits else Interval(e.lower, e.upper, e.guarantee, short) for e in errors]
    return _Point(scaled, errors, gram_interval, used, seconds)


def _enclosed_at(problem: KernelProblem, sigma: Fraction, ell: int, gram: bool, bits: int):
    """Intervals of σ_X² λ_l, of the relative errors and of the Gram error at one precision."""
    with flint.ctx.workprec(bits):
        mu = problem.limit(ell)
        scaled = problem.scaled_eigenvalues(sigma, ell)
        errors = [_abs(s / m - 1) for s, m in zip(scaled, mu)]
        gram_ball = problem.gram_error(sigma) if gram else None
    gram_interval = arb_interval(gram_ball) if gram else undetermined(_no_gram_reason(problem.method))
    return [arb_interval(s) for s in scaled], [arb_interval(e) for e in errors], gram_interval


def _no_gram_reason(method: str) -> str:
    if method == "exact":
        return "exact KPCA uses the exact Gram: no approximation error"
    return "the Gram error was not asked for"


def _abs(x: flint.arb) -> flint.arb:
    """A ball of |x| whose lower end is ≥ 0 (an interval containing 0 becomes [0, max|x|])."""
    if x > 0 or x < 0:
        return abs(x)
    return flint.arb(0).union(abs(x).upper())


# ---------------------------------------------------------------------------------------------------------
# heuristic route: the mp backend at two precisions
# ---------------------------------------------------------------------------------------------------------
def _heuristic_dps(sigma_max: Fraction, method: str, m: int) -> int:
    log_max = max(0.0, math.log10(sigma_max.numerator) - math.log10(sigma_max.denominator))
    return int(30 + (2 * m if method == "nystrom" else 4) * log_max)


def _mp_limit(X, method, n_features, random_state, ell, dps) -> list:
    """The limit eigenvalues on the mp backend (private-context mpf)."""
    b = get_backend("mp", dps)
    Xc = _center_columns(b.internal(X))
    C = Xc.T @ Xc / (X.shape[0] - 1)
    if method in ("exact", "nystrom"):
        M = C
    else:
        rff = _unit_features(X, n_features, method[3:], random_state)
        P = b.internal(rff.frequencies_)
        if rff.kind == "cos":
            P = P * b.sin(b.internal(rff.phases_))[:, None]
        P = P * b.sqrt(b.scalar(2) / n_features)
        M = P @ C @ P.T  # nonzero spectrum of C Q, Q = PᵀP
    w, _ = b.eigh(M)
    return list(w[:ell])


def _agreement_point(X, sigma, method, draws, ell, dps, mus) -> _Point:
    """σ_X² λ_l and the errors at dps and dps + 20 (mus: the limit at both), spanned into heuristic intervals."""
    start = time.perf_counter()
    runs = []
    for p, mu in zip((dps, dps + _HEURISTIC_EXTRA_DPS), mus):
        scaled = _eigen_at(X, sigma, method, draws, p, ell)
        runs.append((scaled, [abs(s / m - 1) for s, m in zip(scaled, mu)]))
    (scaled_lo, errors_lo), (scaled_hi, errors_hi) = runs
    return _Point([_span(a, b, dps) for a, b in zip(scaled_lo, scaled_hi)],
                  [_span(a, b, dps) for a, b in zip(errors_lo, errors_hi)],
                  undetermined("the agreement route does not compute the Gram error (use guarantee='rigorous')"),
                  dps + _HEURISTIC_EXTRA_DPS, time.perf_counter() - start)


def _span(a, b, dps: int) -> Interval:
    """The two evaluations' span, widened by the coarser one's unit roundoff: a heuristic interval."""
    a, b = as_fraction(a), as_fraction(b)
    slack = max(abs(a), abs(b)) / 2 ** math.ceil(dps * _BITS_PER_DIGIT)  # dyadic: the ends stay exact
    return Interval(exact_mpf(min(a, b) - slack), exact_mpf(max(a, b) + slack), "heuristic",
                    "agreement of two precisions: not an enclosure")


def _eigen_at(X, sigma, method, draws, dps, ell):
    b = get_backend("mp", dps)
    sigma_x = gaussian_bandwidth(X, sigma, backend=b)
    if method == "exact":
        K = _cross(X, X, sigma_x, b)
        res = empirical_kpca(K.deviation, n_components=ell, backend=b)
    elif method == "nystrom":
        idx = _draw_landmarks(X.shape[0], draws["m"], draws["random_state"])
        K_nm = _cross(X, X[idx], sigma_x, b)
        K_mm = K_nm.deviation[idx, :] + K_nm.offset
        # K_mm's eigenvalues reach σ_X^{-2k}: no cut-off, the precision carries them.
        res = nystrom_kpca(K_nm.deviation, K_mm, n_components=ell, rcond=0, backend=b)
    else:
        rff = _unit_features(X, draws["n_features"], method[3:], draws["random_state"])
        res = rf_kpca(rff_features(X, rff, scale=sigma_x, backend=b), n_components=ell, backend=b)
    return [x * sigma_x * sigma_x for x in res.eigenvalues]


# ---------------------------------------------------------------------------------------------------------
# rates
# ---------------------------------------------------------------------------------------------------------
def _rate(errors: list[Interval], sigmas: list[Fraction], fit_points: int) -> tuple[Interval, Interval]:
    """The least-squares slope of ln error on ln σ over the last ``fit_points`` points, and the constant C.

    The slope of ln e on ln σ (:func:`~precise_kpca.approx.enclosure.least_squares_slope`), evaluated on balls of
    the errors' intervals, encloses the slope of every choice of errors inside them.
    """
    fitted, at = errors[-fit_points:], sigmas[-fit_points:]
    for e, s in zip(fitted, at):
        why = _not_fittable(e)
        if why:
            missing = undetermined(f"no rate: the error at sigma={_sigma_text(s)} {why}")
            return missing, missing
    guarantee = "rigorous" if all(e.guarantee == "rigorous" for e in fitted) else "heuristic"
    with flint.ctx.workprec(_RATE_BITS):
        slope = least_squares_slope([interval_ball(s).log() for s in at], [interval_ball(e).log() for e in fitted])
        rate = arb_interval(slope, guarantee)
        power = round(rate.value)
        constant = interval_ball(fitted[-1]) * interval_ball(at[-1] ** -power)
    return rate, arb_interval(constant, guarantee)


def _not_fittable(error: Interval) -> str:
    if error.guarantee == "none":
        return f"is undetermined ({error.reason})"
    if not error.lower > 0:
        return "is not separated from 0"
    if error.digits < RATE_DIGITS:
        return f"has {error.digits} digits (fewer than {RATE_DIGITS})"
    return ""
