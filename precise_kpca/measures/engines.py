"""The engines of the route table (:mod:`.routes`): each computes one measure one way and returns a Measurement.

Every engine has the signature ``engine(X, name, sigma, *, k, digits, tau, aggregate, median, start, route)``; the
rigorous ones return ``guarantee="rigorous"`` (possibly short of the digits asked) or raise
:class:`~precise_kpca.errors.RouteUnavailable` / :class:`~precise_kpca.errors.InsufficientPrecision` /
:class:`~precise_kpca.errors.Undetermined`; the route table decides what follows.
"""
from __future__ import annotations

import math

import mpmath

from ..certify.linear_enclosure import linear_enclosure
from ..errors import InsufficientPrecision, RouteUnavailable
from . import enclosed, refined_enclosed, results, structured_enclosed
from .intervals import eigen_distance_at_zero_interval
from .measurement import Route
from .metric import metric_dissonance_ball

_BITS_PER_DIGIT = math.log2(10)
_NORMALIZER_BITS = 256  # the linear enclosure behind EigenDist(I, w): radius ~2**-256 ‖L‖


def arb_ball(X, name, sigma, *, k, digits, tau, aggregate, median, start, route: Route):
    prec = int((digits + 5) * _BITS_PER_DIGIT) + 16
    lo, hi = results.arb_ends(metric_dissonance_ball(X, sigma, prec=prec, median=median))
    return results.rigorous(name, sigma, None, lo=lo, hi=hi, f0=(results.ONE, results.ONE), start=start,
                            digits=digits, route=route, backend="arb",
                            method="rigorous: python-flint arb balls on exact integer data (diameter pair)")


def structured_enclosure(X, name, sigma, *, k, digits, tau, aggregate, median, start, route: Route):
    from .routes import VECTOR_DIGITS

    # angles need the corrected vectors beyond the expansion's VECTOR_DIGITS; otherwise they are tried when short
    first = name != "eigenvalue" and digits > VECTOR_DIGITS
    m = _structured(X, name, sigma, k, digits, tau, aggregate, median, start, route, corrected=first)
    if m.short and not first:
        m = _structured(X, name, sigma, k, digits, tau, aggregate, median, start, route, corrected=True)
    return m


def _structured(X, name, sigma, k, digits, tau, aggregate, median, start, route, *, corrected: bool):
    cert = structured_enclosed.certificate(X, sigma, median=median, digits=min(digits, _structured_cap()),
                                           corrected=corrected)
    if name == "eigenvalue":
        lo, hi = structured_enclosed.eigenvalue_interval(cert)
        lo, hi = results.fraction_ends(lo, hi)
    elif name == "eigenprojection":
        lo, hi = structured_enclosed.eigen_distance_interval(cert, k, tau, aggregate)
    else:
        lo, hi = structured_enclosed.pc_interval(cert, k)
    detail = f"top block {cert.t}, linear grid {cert.lin.bits} bits" + (", corrected vectors" if corrected else "")
    return _eigen_result(X, name, sigma, k, lo, hi, tau, aggregate, start, digits, _detailed(route, detail),
                         "rigorous enclosure in L's exact frame (structured range)")


def binary128_enclosure(X, name, sigma, *, k, digits, tau, aggregate, median, start, route: Route):
    # a-priori float64 bounds with the top sharpened by exact products first (O(N³) float64, O(N²m) exact); every
    # eigenvalue from exact N×N×N products (widths ~ε²/gap everywhere) only where that falls short
    best, tried = None, None
    for exact_products in (False, True):
        enc = enclosed.spectrum_enclosure(X, sigma, median=median, k_max=max(k, enclosed.SHARED_GROUPS), tau=tau,
                                          exact_products=exact_products)
        if enc is tried:  # the a-priori bounds did not separate: the first attempt was the exact enclosure already
            break
        tried = enc
        try:
            m = _binary128_result(X, name, sigma, k, tau, aggregate, start, digits, route, enc)
        except InsufficientPrecision:
            if exact_products:
                raise
            continue
        if best is None or m.certified_digits > best.certified_digits:
            best = m
        if not best.short:
            break
    if best is None:
        raise InsufficientPrecision(f"{name}: the binary128 enclosures do not separate the groups it needs")
    return best


def _binary128_result(X, name, sigma, k, tau, aggregate, start, digits, route, enc):
    if name == "eigenvalue":
        lo, hi = results.fraction_ends(*enclosed.eigenvalue_interval(enc, X))
    elif name == "eigenprojection":
        lo, hi = enclosed.eigen_distance_interval(enc, X, k, tau, aggregate)
    else:
        lo, hi = enclosed.pc_interval(enc, X, k)
    detail = "every eigenvalue from exact products" if enc.exact_products else \
        "a-priori float64 bounds, the top sharpened by exact products"
    return _eigen_result(X, name, sigma, k, lo, hi, tau, aggregate, start, digits, _detailed(route, detail),
                         "rigorous enclosure of the float64 eigensystem of the binary128 Gram")


def frobenius_enclosure(X, name, sigma, *, k, digits, tau, aggregate, median, start, route: Route):
    from .cka_enclosed import cka_interval

    enc = cka_interval(X, sigma, median=median)
    return results.rigorous(name, sigma, None, lo=enc.lower, hi=enc.upper, f0=(enc.f0_lower, enc.f0_upper),
                            start=start, digits=digits, route=route,
                            method="rigorous: exact Frobenius sums of L and the binary128 E, ball arithmetic")


def agreement(X, name, sigma, *, k, digits, tau, aggregate, median, start, route: Route):
    from .agreement import heuristic_auto

    k_field = k if name in ("eigenprojection", "pc") else None
    return heuristic_auto(X, name, sigma, digits, dict(k=k, tau=tau, aggregate=aggregate, median=median), k_field,
                          start)


def refined_enclosure(X, name, sigma, *, k, digits, tau, aggregate, median, start, route: Route):
    from .routes import REFINED_MAX_DPS, REFINED_MAX_N

    if X.shape[0] > REFINED_MAX_N:
        raise RouteUnavailable(f"N = {X.shape[0]} rows exceed the refined route's limit of {REFINED_MAX_N}",
                               remedy="the binary128 and structured enclosures cover every N")

    def attempt(dps):
        enc = refined_enclosed.spectrum_enclosure(X, sigma, dps=dps, median=median,
                                                  block=1 if name == "eigenvalue" else k)
        if name == "eigenvalue":
            lo, hi = results.fraction_ends(*refined_enclosed.eigenvalue_interval(enc),
                                           prec=math.ceil((dps + 20) * _BITS_PER_DIGIT))
        elif name == "eigenprojection":
            lo, hi = refined_enclosed.eigen_distance_interval(enc, k, tau, aggregate)
        else:
            lo, hi = refined_enclosed.pc_interval(enc, k)
        detail = f"tier-1 refinement at {dps} digits, block {enc.block} ({enc.seconds['gram']:.1f} s Gram, " \
                 f"{enc.seconds['refinement']:.1f} s refinement)"
        return _eigen_result(X, name, sigma, k, lo, hi, tau, aggregate, start, digits, _detailed(route, detail),
                             "rigorous enclosure of the refined eigensystem of the arb-enclosed Gram")

    return refined_enclosed.escalate(attempt, digits, max_dps=REFINED_MAX_DPS)


def _eigen_result(X, name, sigma, k, lo, hi, tau, aggregate, start, digits, route, method):
    k_field = k if name in ("eigenprojection", "pc") else None
    if name == "eigenprojection":
        f0 = eigen_distance_at_zero_interval(linear_enclosure(X, _NORMALIZER_BITS), k, tau, aggregate)
    else:
        f0 = (results.ONE, results.ONE)
    method += f" (interval [{mpmath.nstr(lo, 5)}, {mpmath.nstr(hi, 5)}])"
    return results.rigorous(name, sigma, k_field, lo=lo, hi=hi, f0=f0, start=start, digits=digits, route=route,
                            method=method)


def _detailed(route: Route, detail: str) -> Route:
    return Route(route.engine, route.certificate, detail)


def _structured_cap() -> int:
    from .routes import STRUCTURED_DIGITS

    return STRUCTURED_DIGITS


ENGINES = {
    "arb-ball": arb_ball,
    "structured-enclosure": structured_enclosure,
    "binary128-enclosure": binary128_enclosure,
    "frobenius-enclosure": frobenius_enclosure,
    "agreement": agreement,
    "refined-enclosure": refined_enclosure,
}

__all__ = ["ENGINES"]
