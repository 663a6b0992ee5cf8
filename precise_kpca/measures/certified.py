"""Measures with certified digits, and ``backend="auto"``.

Certification methods (``Measurement.method`` names the one used):

* ``metric`` — rigorous: ball arithmetic (python-flint ``arb``) on the exact integer form of X; the ball's
  radius bounds the error. The maximum over pairs is the diameter pair's (proofs: the per-pair relative
  dissonance 1 − √((1 − e^{−u})/u) increases with u).
* ``eigenvalue`` and ``eigenprojection`` where the structured path does not apply — rigorous enclosures of the
  float64 eigensystem (:mod:`precise_kpca.measures.enclosed`: binary128 Gram, exact residual products on
  float64 BLAS, Weyl / Kato–Temple / Davis–Kahan); the interval's midpoint is reported with the digits its
  ends agree on. Data sets up to ``TWIN_MAX_N`` rows fall back to the agreement below if that certifies fewer.
* eigen-based measures — agreement of two independent evaluations of the same algorithm at different
  working precisions (float64 and mp, or mp at dps p and p + 20). The higher-precision value is reported
  with one digit fewer than the two agree on. ``auto`` chooses p from the predicted cancellation
  (≈ 2·log10 σ plus the conditioning of the linear eigenvectors) and raises it until the requested digits
  are certified, up to ``MAX_DPS``; if that fails the result says so and a warning is raised.
"""
from __future__ import annotations

import math
import time
import warnings
from fractions import Fraction
from functools import lru_cache

import flint
import mpmath
import numpy as np

from ..backends import Backend, Float64Backend, MPBackend, get_backend
from ..numerics import double_center, eigensystem, gaussian_residual
from ..validation import check_data, parse_sigma
from . import enclosed, structured
from .measurement import Measurement, Route, agreeing_digits, exact_mpf, interval_digits
from .metric import metric_dissonance_ball, metric_dissonance_value
from .spectral import (
    LinearSpectrum,
    linear_groups,
    cka_gap_value,
    eigen_distance,
    eigenvalue_difference_value,
    identity_basis,
    pc_dissonance_value,
    scaled_gaussian_gram,
)

MEASURES = ("metric", "eigenvalue", "eigenprojection", "pc", "cka")
AGGREGATES = ("mean", "max")
MAX_DPS = 400
MAX_ESCALATIONS = 3  # beyond this the problem is ill-posed (e.g. equal eigenvalues), not short of digits
_ESCALATION_DPS = 20
_FLOAT64_DIGITS = 13  # what a float64 evaluation can be expected to certify
_BITS_PER_DIGIT = math.log2(10)
ENCLOSED_MEASURES = ("eigenvalue", "eigenprojection")
TWIN_MAX_N = 400  # above this a multiprecision eigensolver twin takes minutes to hours: enclosures only
# Enclosure digits ≈ _ENCLOSURE_DIGITS − predicted loss: splice σ = 2⁻⁴…2⁶ gave 22–28 at losses 3.2–4.4
# (binary128 Gram: 34 digits, less the residual bounds' own growth); tried first only with this margin.
_ENCLOSURE_DIGITS = 26
_ENCLOSURE_MARGIN = 3


def evaluate(X: np.ndarray, name: str, sigma: Fraction, backend: Backend, *, k=1, tau=1e-6,
             aggregate="mean", median="full", eigensolver_only=False):
    """One evaluation of a measure on one backend: (value, f(0), path) — no certification.

    ``path`` is ``"structured"`` (L + E without an eigensolver on the full Gram, see
    :mod:`precise_kpca.measures.structured`), ``"eigensolver"`` (full eigensystem of σ_X² H K_G H at the
    backend's precision, where E is too large for the structured expansion) or ``"elementwise"``.
    """
    if name == "metric":
        return metric_dissonance_value(X, sigma, backend, median), backend.scalar(1), "elementwise"
    if name == "cka":
        linear = LinearSpectrum(X, backend)
        L = linear.gram()
        n = X.shape[0]
        trace = sum(L[i, i] for i in range(n))
        cka_at_zero = trace / (backend.sqrt(backend.scalar(n - 1)) * backend.sqrt((L * L).sum()))
        return cka_gap_value(backend, scaled_gaussian_gram(X, sigma, backend, linear), L), 1 - cka_at_zero, "elementwise"
    at_zero = backend.scalar(1)
    if name == "eigenprojection":
        at_zero = _eigen_distance_at_zero(X, backend, k, tau, aggregate)
    if not backend.naive and not eigensolver_only:
        ps = structured.perturbed_spectrum(X, sigma, backend, k, median)
        if structured.covers(ps, name, k, tau):
            if name == "eigenvalue":
                return structured.eigenvalue_difference(ps), at_zero, "structured"
            if name == "pc":
                return structured.pc_dissonance(ps, k), at_zero, "structured"
            return structured.eigen_distance(ps, k, tau, aggregate), at_zero, "structured"
    linear = LinearSpectrum(X, backend)
    values, vectors = _full_eigensystem(X, sigma, backend, linear, max(k, _SHARED_VECTORS) + 1)
    if name != "eigenvalue" and not backend.naive:  # the naive overlay reports what float64 gives, uncertified
        _check_vectors_defined(backend, values, linear, k, tau)
    if name == "eigenvalue":
        return eigenvalue_difference_value(values, linear), at_zero, "eigensolver"
    if name == "pc":
        return pc_dissonance_value(backend, values, vectors, linear, k), at_zero, "eigensolver"
    return eigen_distance(backend, vectors, linear, k, tau, aggregate), at_zero, "eigensolver"


def _eigen_distance_at_zero(X, backend: Backend, k, tau, aggregate):
    """EigenDist(I, w, λ) of Eq. 19's normalization: σ-independent, cached per data set and backend."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    return _at_zero_cached(X.tobytes(), X.shape, backend.name, backend.dps, k, tau, aggregate)


@lru_cache(maxsize=16)
def _at_zero_cached(data, shape, backend_name, dps, k, tau, aggregate):
    X = np.frombuffer(data, dtype=np.float64).reshape(shape)
    backend = get_backend(backend_name, dps if backend_name == "mp" else None)
    linear = LinearSpectrum(X, backend)
    return eigen_distance(backend, identity_basis(backend, X.shape[0], k), linear, k, tau, aggregate)


_SHARED_VECTORS = 5  # eigenvectors kept per cached eigensystem, so measures with k <= 5 share it


def _full_eigensystem(X, sigma, backend: Backend, linear, k: int):
    """All eigenvalues and the top-k eigenvectors of σ_X² H K_G H (backend form), cached per σ and backend."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    return _full_eigensystem_cached(X.tobytes(), X.shape, sigma, backend.name, backend.dps, min(k, X.shape[0]))


@lru_cache(maxsize=2)
def _full_eigensystem_cached(data, shape, sigma, backend_name, dps, k):
    X = np.frombuffer(data, dtype=np.float64).reshape(shape)
    backend = get_backend(backend_name, dps if backend_name == "mp" else None)
    scaled = scaled_gaussian_gram(X, sigma, backend, LinearSpectrum(X, backend))
    system = eigensystem(scaled, k=k)
    return backend.internal(system.values), backend.internal(system.vectors)


def _check_vectors_defined(b: Backend, values, linear, k, tau):
    """Eigenvectors of a repeated eigenvalue are arbitrary: refuse to measure angles to them.

    Every group boundary of Algorithm 1 among the top k must separate Gaussian eigenvalues by more than
    10^(−dps/2)·‖A‖; otherwise two evaluations could agree on an arbitrary basis and "certify" it.
    """
    floor = abs(values[0]) * b.scalar(10) ** (-(b.dps // 2))
    for start, stop in linear_groups(linear.values, k, tau):
        for edge in (start, stop):
            if 0 < edge < len(values) and not values[edge - 1] - values[edge] > floor:
                raise ArithmeticError(
                    f"Gaussian eigenvalues {edge - 1} and {edge} coincide to {b.dps // 2} digits: their "
                    "eigenvectors (and the angles measured to them) are not determined"
                )


def measure(X, name: str, sigma, *, k: int = 1, digits: int = 10, backend="auto", dps=None, tau=1e-6,
            aggregate="mean", median="full") -> Measurement:
    """Evaluate a convergence measure at bandwidth σ with certified digits.

    Parameters
    ----------
    X : array_like, shape (N, d)
    name : {"metric", "eigenvalue", "eigenprojection", "pc", "cka"}
        Eq. 17, Eq. 18, Algorithm 1 / Eq. 19, Theorem 3 principal components, 1 − CKA(K_G, K_lin).
    sigma : int, float, str or Fraction
        Standardized bandwidth (σ_X = d_X·σ).
    k : int
        Top eigenvalues for ``eigenprojection`` and ``pc``.
    digits : int
        Significant digits to certify.
    backend : {"auto", "float64", "mp", "arb", "float64-naive"}
        ``auto`` picks the cheapest path that certifies ``digits``; an explicit backend is evaluated as
        asked and certified against a second evaluation at higher precision; ``float64-naive`` is the
        paper's computation, uncertified (``certified_digits == 0``).
    dps : int, optional
        Working precision for ``backend="mp"``.

    Returns
    -------
    Measurement
    """
    X = check_data(X)
    exact_sigma = parse_sigma(sigma)
    _check_options(name, k, digits, aggregate, tau)
    start = time.perf_counter()
    options = dict(k=k, tau=tau, aggregate=aggregate, median=median)
    k_field = k if name in ("eigenprojection", "pc") else None
    if backend == "float64-naive":
        b = get_backend("float64-naive")
        value, at_zero, _ = evaluate(X, name, exact_sigma, b, **options)
        return _unchecked(name, exact_sigma, k_field, b, value, at_zero, start,
                          "uncertified: the paper's float64 computation (exp, then center)",
                          Route("naive", "none: the paper's float64 computation (exp, then center)"))
    if name == "metric" and backend in ("auto", "arb"):
        return _metric_rigorous(X, exact_sigma, digits, median, start)
    if backend == "arb":
        raise ValueError(f"backend='arb' (rigorous balls) is available for the metric measure only, not {name!r}")
    if backend == "auto":
        return _auto(X, name, exact_sigma, digits, options, k_field, start)
    first = get_backend(backend, dps)
    second = MPBackend(max(first.dps, 15) + _ESCALATION_DPS)
    return _by_agreement(X, name, exact_sigma, first, second, digits, options, k_field, start, escalate=False)


def _check_options(name, k, digits, aggregate, tau):
    if name not in MEASURES:
        raise ValueError(f"unknown measure {name!r}; choose one of {MEASURES}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer (top eigenvalues), got {k!r}")
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 1 <= digits <= 300:
        raise ValueError(f"digits must be an integer from 1 to 300, got {digits!r}")
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    if not 0 < tau < 1:
        raise ValueError(f"tau must be in (0, 1), got {tau!r}")


def _metric_rigorous(X, sigma, digits, median, start) -> Measurement:
    prec = int((digits + 5) * _BITS_PER_DIGIT) + 16
    ball = metric_dissonance_ball(X, sigma, prec=prec, median=median)
    lo, hi = _arb_ends(ball)
    ctx = MPBackend(max(15, interval_digits(lo, hi) + 2))
    return _rigorous("metric", sigma, None, ctx, lo, hi, _ONE, _ONE, start, digits,
                     Route("arb-ball", "ball arithmetic on exact integer data", "diameter pair"),
                     "rigorous: python-flint arb balls on exact integer data (diameter pair)", name_backend="arb")


def _arb_ends(ball) -> tuple:
    """The ends of an arb ball as exact global-type mpf."""
    return tuple(mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(*map(int, end.man_exp())))
                 for end in (ball.lower(), ball.upper()))


def predicted_loss_digits(X: np.ndarray, sigma: Fraction, median: str = "full") -> float:
    """Digits a full eigensolver loses on the eigen measures: they are E-sized differences of eigenpairs of
    L + E known to eps·‖L‖, so about log10(λ_1 / ‖E‖_F) (E from a cheap float64 evaluation)."""
    float64 = Float64Backend()
    try:
        E = double_center(gaussian_residual(X, sigma, backend=float64, median=median)).deviation
    except ValueError:  # σ beyond the float64 range: E is far below ‖L‖·eps, bound the loss by σ instead
        log10_sigma = (math.log2(sigma.numerator) - math.log2(sigma.denominator)) * math.log10(2)
        return 2 * log10_sigma + 10
    centered = X - X.mean(axis=0)
    top = np.linalg.eigvalsh(centered.T @ centered).max()
    return max(0.0, math.log10(top / max(float(np.sqrt((E * E).sum())), 1e-300))) + 1


def _auto(X, name, sigma, digits, options, k_field, start) -> Measurement:
    """Structured path where it applies (float64 E, certified by an mp twin); else a full eigensolver at the
    precision the predicted cancellation needs."""
    float64 = Float64Backend()
    route = _eigen_route(X, name, sigma, digits, options) if name in ENCLOSED_MEASURES else "structured"
    if route != "structured":
        result = _enclosed(X, name, sigma, digits, options, k_field, start)
        if result.certified_digits >= digits:
            return result
        if route == "enclosure" and X.shape[0] > TWIN_MAX_N:
            warnings.warn(f"{name} at sigma={sigma}: {result.method}", RuntimeWarning, stacklevel=3)
            return result
    if name != "cka":
        try:
            value, _, path = evaluate(X, name, sigma, float64, **options)
        except ArithmeticError:
            value, path = None, "eigensolver"  # decided again, at higher precision, below
        if path == "structured":
            if digits <= _FLOAT64_DIGITS:
                second = MPBackend(_twin_dps(digits))
                return _by_agreement(X, name, sigma, float64, second, digits, options, k_field, start,
                                     escalate=True, first_value=value)
            first = MPBackend(_twin_dps(digits))
            return _by_agreement(X, name, sigma, first, MPBackend(first.dps + _ESCALATION_DPS), digits, options,
                                 k_field, start, escalate=True)
    need = digits + predicted_loss_digits(X, sigma, options["median"])
    # Optimistic on purpose: the second evaluation checks the first, and a shortfall escalates.
    first: Backend = float64 if need <= _FLOAT64_DIGITS else MPBackend(int(math.ceil(need)) + 6)
    second = MPBackend(max(30, int(math.ceil(need)) + 12, first.dps + 10))
    return _by_agreement(X, name, sigma, first, second, digits, options, k_field, start, escalate=True)


def _eigen_route(X, name, sigma, digits, options) -> str:
    """``"structured"``, ``"enclosure"`` (the structured path does not apply) or ``"enclosure first"``: it
    applies, but its mp twin is predicted to cost more than the enclosure, which is predicted to certify
    ``digits`` (the structured path remains the fallback).

    Cost model: the twin's resolvent series applies the N×N residual to t columns about ``terms`` times
    (≈ terms·t·N² work), the enclosure is a float64 eigensystem plus exact residual products (≈ N³); measured
    on splice (N = 3190) at σ = 2⁸, t = 194 and 44 terms: 1985 s against 580–1010 s at σ = 2⁻²…2⁶.
    """
    try:
        ps = structured.perturbed_spectrum(X, sigma, Float64Backend(), options["k"], options["median"])
        if not structured.covers(ps, name, options["k"], options["tau"]):
            return "enclosure"
    except (ArithmeticError, ValueError):
        return "enclosure"
    n = X.shape[0]
    twin_terms = ps.series_terms(10.0 ** -_twin_dps(digits))
    if n <= TWIN_MAX_N or twin_terms * ps.rank <= n:
        return "structured"
    predicted = _ENCLOSURE_DIGITS - predicted_loss_digits(X, sigma, options["median"])
    return "enclosure first" if predicted >= digits + _ENCLOSURE_MARGIN else "structured"


def _twin_dps(digits: int) -> int:
    """Precision of the structured path's first mp evaluation (see :func:`_auto`)."""
    return max(30, digits + 15) if digits <= _FLOAT64_DIGITS else digits + 10


def _enclosed(X, name, sigma, digits, options, k_field, start) -> Measurement:
    """The eigen measure from rigorous enclosures of the float64 eigensystem (see the module docstring)."""
    k, tau, aggregate = options["k"], options["tau"], options["aggregate"]
    ctx = MPBackend(enclosed.LINEAR_DPS)
    try:
        enc = enclosed.spectrum_enclosure(X, sigma, median=options["median"], k_max=max(k, _SHARED_VECTORS),
                                          tau=tau)
        if name == "eigenvalue":
            lo, hi = enclosed.eigenvalue_interval(enc, X)
            at_zero = ctx.scalar(1)
        else:
            lo, hi = enclosed.eigen_distance_interval(enc, X, k, tau, aggregate)
            at_zero = _eigen_distance_at_zero(X, ctx, k, tau, aggregate)
    except ArithmeticError as exc:
        return _undetermined(name, sigma, k_field, ctx, exc, start)
    method = ("rigorous enclosure: float64 eigensystem of the binary128 Gram, exact residual products "
              f"(interval [{mpmath.nstr(lo, 5)}, {mpmath.nstr(hi, 5)}])")
    route = Route("binary128-enclosure", "Weyl, Kato-Temple, Li-Li, Davis-Kahan on exact residual products")
    f0 = exact_mpf(ctx.export(at_zero))
    # EigenDist(I, w) of the normalization is a point value of the mp linear spectrum here, not an enclosure
    return _rigorous(name, sigma, k_field, ctx, lo, hi, f0, f0, start, digits, route, method,
                     f0_enclosed=name == "eigenvalue")


def _by_agreement(X, name, sigma, first, second, digits, options, k_field, start, *, escalate,
                  first_value=None) -> Measurement:
    try:
        v1 = first_value if first_value is not None else evaluate(X, name, sigma, first, **options)[0]
    except ArithmeticError as exc:
        if not (escalate and isinstance(first, Float64Backend)):
            return _undetermined(name, sigma, k_field, first, exc, start)
        # float64 cannot resolve e.g. an eigenvalue gap: the agreement starts from the second precision
        first, second = second, MPBackend(second.dps + _ESCALATION_DPS)
        try:
            v1 = evaluate(X, name, sigma, first, **options)[0]
        except ArithmeticError as exc:
            return _undetermined(name, sigma, k_field, first, exc, start)
    escalations = 0
    while True:
        try:
            v2, at_zero, path = evaluate(X, name, sigma, second, **options)
        except ArithmeticError as exc:
            return _undetermined(name, sigma, k_field, second, exc, start)
        agree = min(agreeing_digits(first.export(v1), second.export(v2)) - 1, first.dps)
        if agree >= digits or not escalate or escalations == MAX_ESCALATIONS or second.dps + _ESCALATION_DPS > MAX_DPS:
            break
        escalations += 1
        first, v1 = second, v2
        second = MPBackend(second.dps + _ESCALATION_DPS)
    method = f"agreement of {path} evaluations at {first.name}(dps={first.dps}) and mp(dps={second.dps})"
    route = Route("agreement", "two evaluations at different precisions agree (heuristic)",
                  f"{path} at {first.name}(dps={first.dps}) and mp(dps={second.dps})")
    m = _heuristic(name, sigma, k_field, second, first.export(v1), second.export(v2), at_zero, start, digits, route,
                   method)
    if m.short:
        warnings.warn(f"{name} at sigma={sigma}: {m.method}", RuntimeWarning, stacklevel=3)
    return m


def _undetermined(name, sigma, k, b: Backend, reason: Exception, start, digits=None) -> Measurement:
    method = f"FAILED to certify: the value is not determined ({reason})"
    warnings.warn(f"{name} at sigma={sigma}: {method}", RuntimeWarning, stacklevel=4)
    return Measurement(measure=name, sigma=sigma, k=k, value=math.nan, normalized=math.nan, backend=b.name,
                       dps=b.dps, method=method, seconds=time.perf_counter() - start, guarantee="none",
                       reason=f"not determined: {reason}", requested_digits=digits)


_ONE = mpmath.mpf(1)


def _rigorous(name, sigma, k, b: Backend, lo, hi, f0_lo, f0_hi, start, digits, route: Route, method,
              name_backend=None, f0_enclosed=True) -> Measurement:
    """A rigorous result: [lo, hi] encloses the value; [f0_lo, f0_hi] encloses the normalizer f(0) when
    ``f0_enclosed`` (then the normalized value gets a rigorous interval too), else it is a point value."""
    lo, hi = exact_mpf(lo), exact_mpf(hi)
    with mpmath.workprec(max(_mpf_bits(lo), _mpf_bits(hi)) + 2):
        value = (lo + hi) / 2  # exact: the midpoint of two dyadic ends, within this precision
    n_lo = n_hi = None
    if f0_enclosed and lo > 0:
        n_lo, n_hi = _log2_ratio_interval(lo, hi, f0_lo, f0_hi)
    certified = interval_digits(lo, hi)
    reason = ""
    if digits is not None and certified < digits:
        reason = f"the rigorous interval certifies {certified} of the {digits} digits requested"
        method = f"FAILED to certify {digits} digits ({certified} certified): " + method
    return Measurement(measure=name, sigma=sigma, k=k, value=_public(value, certified),
                       normalized=_normalized_point(value, f0_lo, f0_hi), backend=name_backend or b.name, dps=b.dps,
                       method=method, seconds=time.perf_counter() - start, lower=lo, upper=hi, normalized_lower=n_lo,
                       normalized_upper=n_hi, guarantee="rigorous", route=route, reason=reason,
                       requested_digits=digits)


def _heuristic(name, sigma, k, b: Backend, v1, v2, at_zero, start, digits, route: Route, method) -> Measurement:
    """Agreement of two evaluations: the interval is v2 ∓ 10·|v1 − v2| (one digit fewer than they agree on)."""
    ctx = mpmath.MPContext()
    v1, v2 = exact_mpf(v1), exact_mpf(v2)
    ctx.prec = max(_mpf_bits(v1), _mpf_bits(v2)) + 16
    a, c = ctx.mpf(v1), ctx.mpf(v2)
    spread = 10 * abs(a - c)
    lo, hi = (mpmath.mp.make_mpf(x._mpf_) for x in (c - spread, c + spread))
    certified = interval_digits(lo, hi)
    reason = ""
    if digits is not None and certified < digits:
        reason = f"the two evaluations agree on {certified} of the {digits} digits requested"
        method = f"FAILED to certify {digits} digits ({certified} certified): " + method
    f0 = exact_mpf(b.export(at_zero))
    return Measurement(measure=name, sigma=sigma, k=k, value=_public(v2, certified),
                       normalized=_normalized_point(v2, f0, f0), backend=b.name, dps=b.dps, method=method,
                       seconds=time.perf_counter() - start, lower=lo, upper=hi, guarantee="heuristic", route=route,
                       reason=reason, requested_digits=digits)


def _unchecked(name, sigma, k, b: Backend, value, at_zero, start, method, route: Route) -> Measurement:
    """guarantee="none": the value as computed (the paper's float64 arithmetic), nothing checked."""
    value, f0 = float(value), float(at_zero)
    normalized = math.log2(value) - math.log2(f0) if value > 0 else (-math.inf if value == 0 else math.nan)
    return Measurement(measure=name, sigma=sigma, k=k, value=value, normalized=normalized, backend=b.name,
                       dps=b.dps, method=method, seconds=time.perf_counter() - start, guarantee="none", route=route)


def _mpf_bits(x) -> int:
    t = getattr(x, "_mpf_", None)
    return max(int(t[3]), 1) if t is not None else 53


def _public(value, certified):
    """A float where that holds every certified digit (≤ 15) and the value is in range, else the exact mpf."""
    as_float = float(value)
    fits = certified <= 15 and as_float != 0 and math.isfinite(as_float)
    return as_float if fits else exact_mpf(value)


def _normalized_point(value, f0_lo, f0_hi):
    """log2 value − log2 f(0) (Eq. 16) as a float, f(0) the midpoint of its interval; NaN without f(0)."""
    if f0_lo is None:
        return math.nan
    ctx = mpmath.MPContext()
    ctx.prec = 113
    v = ctx.mpf(exact_mpf(value))
    if not v > 0:
        return -math.inf if v == 0 else math.nan
    f0 = (ctx.mpf(exact_mpf(f0_lo)) + ctx.mpf(exact_mpf(f0_hi))) / 2
    return float(ctx.log(v, 2) - ctx.log(f0, 2))


def _log2_ratio_interval(lo, hi, f0_lo, f0_hi):
    """Rigorous ends of log2(x/f) over x ∈ [lo, hi], f ∈ [f0_lo, f0_hi] (arb balls on the exact dyadic ends)."""
    ends = [exact_mpf(x) for x in (lo, hi, f0_lo, f0_hi)]
    with flint.ctx.workprec(max(map(_mpf_bits, ends)) + 64):
        a, b, c, d = (_to_arb(x) for x in ends)
        log2 = flint.arb(2).log()
        return _arb_ends((a / d).log() / log2)[0], _arb_ends((b / c).log() / log2)[1]


def _to_arb(x):
    sign, man, exp, _ = x._mpf_
    return flint.arb(-int(man) if sign else int(man)) * flint.arb(2) ** int(exp)


def metric_dissonance(X, sigma, *, backend="auto", digits=15, **kwargs) -> Measurement:
    """Relative RKHS metric dissonance (Eq. 17), certified. See :func:`measure`."""
    return measure(X, "metric", sigma, backend=backend, digits=digits, **kwargs)


def eigenvalue_difference(X, sigma, *, backend="auto", digits=15, **kwargs) -> Measurement:
    """‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ (Eq. 18), certified. See :func:`measure`."""
    return measure(X, "eigenvalue", sigma, backend=backend, digits=digits, **kwargs)


def eigenprojection_dissonance(X, sigma, *, k=1, tau=1e-6, aggregate="mean", backend="auto", digits=15,
                               **kwargs) -> Measurement:
    """EigenDist of Algorithm 1 (radians) over the top-k linear eigenvalues, certified. See :func:`measure`."""
    return measure(X, "eigenprojection", sigma, k=k, tau=tau, aggregate=aggregate, backend=backend,
                   digits=digits, **kwargs)
