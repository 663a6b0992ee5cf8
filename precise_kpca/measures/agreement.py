"""The heuristic route: agreement of two evaluations of the same algorithm at two precisions.

mpmath calls this rule (its ``autoprec``) "easily fooled": two evaluations that share an algorithm share its
arbitrary choices (a basis inside a repeated eigenvalue) and can agree on a wrong value. It is kept because it
reaches measures and precisions the rigorous routes do not, and it is used **only when the caller asks for it**
(``guarantee="heuristic"``, or an explicit ``backend="float64"``/``"mp"``); its results say
``guarantee="heuristic"``.

:func:`evaluate` is one evaluation of a measure on one backend (also the paper's float64-naive computation);
:func:`by_agreement` compares two, escalating the second precision until the requested digits agree.
"""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np

from ..backends import Backend, Float64Backend, MPBackend, get_backend
from ..errors import InsufficientPrecision
from ..numerics import double_center, eigensystem, gaussian_residual
from ..numerics.data import data_state
from ..numerics.linear_spectrum import LinearSpectrum
from . import results, structured
from .measurement import Route, agreeing_digits
from .metric import metric_dissonance_value
from .spectral import (
    cka_gap_value,
    eigen_distance,
    eigenvalue_difference_value,
    identity_basis,
    linear_groups,
    pc_dissonance_value,
    scaled_gaussian_gram,
)

MAX_DPS = 400
MAX_ESCALATIONS = 3  # beyond this the problem is ill-posed (e.g. equal eigenvalues), not short of digits
ESCALATION_DPS = 20
FLOAT64_DIGITS = 13  # what a float64 evaluation can be expected to agree on


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
        from .cka_enclosed import cka_at_zero_interval

        linear = LinearSpectrum(X, backend)
        f0_lo, f0_hi = cka_at_zero_interval(X)  # the σ → 0 limit (repeated rows included), exact data
        at_zero = backend.scalar(results.exact_midpoint(f0_lo, f0_hi))
        return cka_gap_value(backend, scaled_gaussian_gram(X, sigma, backend, linear), linear.gram()), at_zero, \
            "elementwise"
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
    values, vectors = _full_eigensystem(X, sigma, backend, linear, max(k, SHARED_VECTORS) + 1)
    if name != "eigenvalue" and not backend.naive:  # the naive overlay reports what float64 gives, uncertified
        _check_vectors_defined(backend, values, linear, k, tau, singletons=name == "pc")
    if name == "eigenvalue":
        return eigenvalue_difference_value(values, linear), at_zero, "eigensolver"
    if name == "pc":
        return pc_dissonance_value(backend, values, vectors, linear, k), at_zero, "eigensolver"
    return eigen_distance(backend, vectors, linear, k, tau, aggregate), at_zero, "eigensolver"


def _eigen_distance_at_zero(X, backend: Backend, k, tau, aggregate):
    """EigenDist(I, w, λ) of Eq. 19's normalization: σ-independent, cached per data set and backend."""
    return data_state(X).derived(_at_zero_cached, backend.name, backend.dps, k, tau, aggregate, keep=16)


def _at_zero_cached(X, backend_name, dps, k, tau, aggregate):
    backend = get_backend(backend_name, dps if backend_name == "mp" else None)
    linear = LinearSpectrum(X, backend)
    return eigen_distance(backend, identity_basis(backend, X.shape[0], k), linear, k, tau, aggregate)


SHARED_VECTORS = 5  # eigenvectors kept per cached eigensystem, so measures with k <= 5 share it


def _full_eigensystem(X, sigma, backend: Backend, linear, k: int):
    """All eigenvalues and the top-k eigenvectors of σ_X² H K_G H (backend form), cached per σ and backend."""
    state = data_state(X)
    return state.derived(_full_eigensystem_cached, sigma, backend.name, backend.dps, min(k, state.shape[0]), keep=2)


def _full_eigensystem_cached(X, sigma, backend_name, dps, k):
    backend = get_backend(backend_name, dps if backend_name == "mp" else None)
    scaled = scaled_gaussian_gram(X, sigma, backend, LinearSpectrum(X, backend))
    system = eigensystem(scaled, k=k)
    return backend.internal(system.values), backend.internal(system.vectors)


def _check_vectors_defined(b: Backend, values, linear, k, tau, singletons=False):
    """Eigenvectors of a repeated eigenvalue are arbitrary: refuse to measure angles to them.

    Every group boundary of Algorithm 1 among the top k (every index up to k for the pc measure, which takes
    single eigenvectors) must separate Gaussian eigenvalues by more than 10^(−dps/2)·‖A‖; otherwise two
    evaluations could agree on an arbitrary basis and "certify" it.
    """
    floor = abs(values[0]) * b.scalar(10) ** (-(b.dps // 2))
    edges = [(i, i + 1) for i in range(k)] if singletons else linear_groups(linear.values, k, tau)
    for start, stop in edges:
        for edge in (start, stop):
            if 0 < edge < len(values) and not values[edge - 1] - values[edge] > floor:
                raise InsufficientPrecision(
                    f"Gaussian eigenvalues {edge - 1} and {edge} coincide to {b.dps // 2} digits: their "
                    "eigenvectors (and the angles measured to them) are not determined at this precision")



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



def by_agreement(X, name, sigma, first, second, digits, options, k_field, start, *, escalate,
                  first_value=None) -> Measurement:
    try:
        v1 = first_value if first_value is not None else evaluate(X, name, sigma, first, **options)[0]
    except ArithmeticError as exc:
        if not (escalate and first.fixed_precision):
            return _not_determined(name, sigma, k_field, exc, start, digits)
        # float64 cannot resolve e.g. an eigenvalue gap: the agreement starts from the second precision
        first, second = second, MPBackend(second.dps + ESCALATION_DPS)
        try:
            v1 = evaluate(X, name, sigma, first, **options)[0]
        except ArithmeticError as exc:
            return _not_determined(name, sigma, k_field, exc, start, digits)
    escalations = 0
    while True:
        try:
            v2, at_zero, path = evaluate(X, name, sigma, second, **options)
        except ArithmeticError as exc:
            return _not_determined(name, sigma, k_field, exc, start, digits)
        agree = min(agreeing_digits(first.export(v1), second.export(v2)) - 1, first.dps)
        if agree >= digits or not escalate or escalations == MAX_ESCALATIONS or second.dps + ESCALATION_DPS > MAX_DPS:
            break
        escalations += 1
        first, v1 = second, v2
        second = MPBackend(second.dps + ESCALATION_DPS)
    method = f"agreement of {path} evaluations at {first.name}(dps={first.dps}) and mp(dps={second.dps})"
    route = Route("agreement", "two evaluations at different precisions agree (heuristic)",
                  f"{path} at {first.name}(dps={first.dps}) and mp(dps={second.dps})")
    m = results.heuristic(name, sigma, k_field, first=first.export(v1), second=second.export(v2),
                          at_zero=second.export(at_zero), start=start, digits=digits, route=route, method=method,
                          backend=second.name, dps=second.dps, first_dps=first.dps)
    if m.short:
        warnings.warn(f"{name} at sigma={sigma}: {m.method}", RuntimeWarning, stacklevel=3)
    return m



def _not_determined(name, sigma, k_field, exc, start, digits):
    route = Route("agreement", "two evaluations at different precisions agree (heuristic)")
    return results.undetermined(name, sigma, k_field, reason=f"not determined: {exc}", start=start, digits=digits,
                                route=route)


def heuristic_auto(X, name, sigma, digits, options, k_field, start):
    """The old ``auto``: the structured path where it applies (float64 E against an mp twin), else a full
    eigensolver at the precision the predicted cancellation needs; both certified by agreement only."""
    float64 = Float64Backend()
    if name != "cka":
        try:
            value, _, path = evaluate(X, name, sigma, float64, **options)
        except ArithmeticError:
            value, path = None, "eigensolver"  # decided again, at higher precision, below
        if path == "structured":
            if digits <= FLOAT64_DIGITS:
                return by_agreement(X, name, sigma, float64, MPBackend(_twin_dps(digits)), digits, options, k_field,
                                    start, escalate=True, first_value=value)
            first = MPBackend(_twin_dps(digits))
            return by_agreement(X, name, sigma, first, MPBackend(first.dps + ESCALATION_DPS), digits, options,
                                k_field, start, escalate=True)
    need = digits + predicted_loss_digits(X, sigma, options["median"])
    # Optimistic on purpose: the second evaluation checks the first, and a shortfall escalates.
    first = float64 if need <= FLOAT64_DIGITS else MPBackend(int(math.ceil(need)) + 6)
    second = MPBackend(max(30, int(math.ceil(need)) + 12, first.dps + 10))
    return by_agreement(X, name, sigma, first, second, digits, options, k_field, start, escalate=True)


def _twin_dps(digits: int) -> int:
    """Precision of the structured path's first mp evaluation (see :func:`heuristic_auto`)."""
    return max(30, digits + 15) if digits <= FLOAT64_DIGITS else digits + 10
