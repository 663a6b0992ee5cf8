"""The route table: which engine computes a measure, what certifies it, and in which order — decided here only.

A :class:`Plan` is inspectable before anything heavy runs (``precise-kpca plan`` prints it); :func:`run` executes
it. Routes:

========================  =========================================  ==========  ===================================
engine                    measures                                   guarantee   applies
========================  =========================================  ==========  ===================================
``arb-ball``              metric                                     rigorous    every σ (closed form in ρ²/σ²)
``structured-enclosure``  eigenvalue, eigenprojection, pc            rigorous    a linear top block clear of ‖E‖
``binary128-enclosure``   eigenvalue, eigenprojection, pc            rigorous    every σ the binary128 Gram holds;
                                                                                 digits ≈ 26 − log10(‖L‖/‖E‖)
``refined-enclosure``     eigenvalue, eigenprojection, pc            rigorous    N ≤ REFINED_MAX_N; near-ties and
                                                                                 digits beyond binary128's
``frobenius-enclosure``   cka                                        rigorous    every σ the binary128 E holds
``agreement``             all but metric                             heuristic   only with ``guarantee="heuristic"``
========================  =========================================  ==========  ===================================

Order: the structured route first where it applies (no N³ eigensolver; ≥ 25 digits on eigenvalues), the binary128
enclosure first where the structured expansion does not apply, its top block does not hold the k vectors asked
for, or its bound on the eigenvalues past the block is predicted not to decide Eq. 18 (then every eigen measure of
that σ takes the binary128 enclosure, which they share), each the other's fallback. The binary128 enclosure
certifies every eigenvalue by a-priori float64 bounds and sharpens the top rank(L) + 1 by exact products first
(O(N³) float64 and O(N²·rank) exact work); only when that is short does it certify every eigenvalue by exact
N×N×N products (kc1, N = 2109: 219 s of 437 s on a loaded machine); the refined enclosure last (an N³ refinement at up to REFINED_MAX_DPS digits,
:mod:`.refined_enclosed`). A route that certifies fewer digits than requested hands over to the next; the best
rigorous result is kept. A value that depends on an arbitrary basis (:class:`~precise_kpca.errors.Undetermined`)
stops the plan: no route can give it.

Thresholds (the only ones; each with where it was measured):

* :data:`ENCLOSURE_DIGITS` = 26 — the binary128 enclosure's digits before the cancellation loss
  log10(λ_1/‖E‖_F): splice σ = 2⁻⁴…2⁶ gave 22–28 at losses 3.2–4.4 (binary128 Gram: 34 digits, less the residual
  bounds' own growth).
* :data:`STRUCTURED_DIGITS` = 25 — the structured enclosure's ceiling: E in binary128 carries ~30 digits relative to
  ‖E‖ (its rigorous bound, ``binary128_gram``), a few of which the Kato–Temple and Davis–Kahan constants use.
* :data:`VECTOR_DIGITS` = 12 — digits of eigenvector angles from the structured route's float64 expansion (wine,
  σ = 2²⁰ and 2⁴⁰: 12–13 digits on eigenprojection and pc, 27 on eigenvalue); beyond it the route is tried but
  expected short.
* :data:`REFINED_MAX_N` = 400 — the refined route's rows: one σ costs 7–11 s of one core at N = 400 and 50 digits
  (``benchmarks/refined_bench.py``), 73–154 s at N = 1000, and it grows as N³ and with the escalated precision: on
  tic-tac-toe (N = 958, σ = 2⁻⁴, the binary128 enclosure short) the escalation had not finished after 44 min on a
  loaded machine. Past 400 rows a short point stays short (rigorous, with its warning) instead.
* :data:`REFINED_MAX_DPS` = 200 — the refined route's highest precision: separates Gaussian eigenvalues down to
  ~1e-190 of λ_1 (3.6 s of one core at N = 100); the angles' ball arithmetic (``intervals.ANGLE_PREC``) carries
  ~94 digits, so past ~100 the escalation only separates.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..errors import InsufficientPrecision, NoConvergence, RouteUnavailable, Undetermined
from ..numerics.data import data_state
from . import results
from .measurement import Measurement, Route

ENCLOSURE_DIGITS = 26
STRUCTURED_DIGITS = 25
VECTOR_DIGITS = 12
REFINED_MAX_N = 400
REFINED_MAX_DPS = 200
EIGEN_MEASURES = ("eigenvalue", "eigenprojection", "pc")
GUARANTEES_ASKED = ("rigorous", "heuristic")

_ROUTES = {
    "arb-ball": Route("arb-ball", "ball arithmetic on exact integer data (diameter pair)"),
    "structured-enclosure": Route("structured-enclosure",
                                  "Weyl, Kato-Temple, Li-Li, Davis-Kahan in L's exact frame; exact products"),
    "binary128-enclosure": Route("binary128-enclosure",
                                 "Weyl or Kahan's cluster theorem and counting, Kato-Temple, Li-Li, Davis-Kahan on "
                                 "exact residual products of the float64 eigensystem of the binary128 Gram"),
    "refined-enclosure": Route("refined-enclosure",
                               "refinement bounds (Weyl, Li-Li) and Rayleigh-Ritz with Davis-Kahan on exact products "
                               "of the arb-enclosed Gram"),
    "frobenius-enclosure": Route("frobenius-enclosure", "exact Frobenius sums and ball arithmetic"),
    "agreement": Route("agreement", "two evaluations at different precisions agree (heuristic)"),
}


@dataclass(frozen=True)
class Step:
    """One route of a plan: its engine and why it is where it is."""

    engine: str
    why: str

    @property
    def route(self) -> Route:
        return _ROUTES[self.engine]


@dataclass(frozen=True)
class Plan:
    """Ordered routes for one measurement, with the cheap probes they were chosen from.

    Attributes
    ----------
    measure, sigma, k, digits, guarantee
        The request.
    steps : tuple of Step
        Rigorous routes in order; ``agreement`` last when the caller accepts heuristic digits.
    probe : dict
        ``loss_digits`` (predicted log10(λ_1/‖E‖_F)), ``top_block`` (linear eigenvalues clear of ‖E‖, float64
        estimate) where they were needed.
    """

    measure: str
    sigma: Fraction
    k: int | None
    digits: int
    guarantee: str
    steps: tuple
    probe: dict = field(default_factory=dict)

    def describe(self) -> str:
        lines = [f"{self.measure}" + (f" (k={self.k})" if self.k else "") + f" at sigma={self.sigma}: "
                 f"{self.digits} digits, guarantee {self.guarantee}"]
        if self.probe:
            lines.append("  probe: " + ", ".join(f"{key}={value:.3g}" if isinstance(value, float) else f"{key}={value}"
                                                 for key, value in self.probe.items()))
        lines += [f"  {i + 1}. {step.engine}: {step.why}" for i, step in enumerate(self.steps)]
        return "\n".join(lines)


def plan(X: np.ndarray, name: str, sigma: Fraction, *, k: int = 1, digits: int = 10, guarantee: str = "rigorous",
         tau: float = 1e-6, median: str = "full") -> Plan:
    """The routes for one measurement (cheap: a float64 probe of ‖E‖ and of the linear spectrum).

    Parameters
    ----------
    X : ndarray, shape (N, d)
        Validated data.
    name : str
        Measure name.
    sigma : Fraction
    k : int
    digits : int
    guarantee : {"rigorous", "heuristic"}
        ``"heuristic"`` appends the agreement route as the last resort.
    tau : float
    median : str
    """
    if guarantee not in GUARANTEES_ASKED:
        raise ValueError(f"guarantee must be one of {GUARANTEES_ASKED}, got {guarantee!r}")
    k_field = k if name in ("eigenprojection", "pc") else None
    probe: dict = {}
    if name == "metric":
        steps = [Step("arb-ball", "closed form R(ρ²/2σ²) of the diameter pair, enclosed in ball arithmetic")]
    elif name == "cka":
        steps = [Step("frobenius-enclosure", "1 − CKA from exact Frobenius sums of L and the binary128 E")]
    else:
        probe_ = _probe(X, sigma, median)
        loss, top = probe_.loss_digits, probe_.top_block
        probe = {"loss_digits": loss, "top_block": top, "structured_decides_eigenvalue": probe_.decides_eigenvalue}
        needed = k if name in ("eigenprojection", "pc") else 1
        enclosure = ENCLOSURE_DIGITS - loss
        probe["enclosure_digits"] = enclosure
        structured_why = (f"linear top block of {top} clear of ‖E‖ holds the {needed} eigenvector(s) needed"
                          if top >= needed else f"top block {top} < {needed} needed: expected unavailable")
        enclosure_why = f"predicted {enclosure:.0f} digits (26 less the cancellation loss {loss:.1f})"
        structured, binary = Step("structured-enclosure", structured_why), Step("binary128-enclosure", enclosure_why)
        vector_limited = name != "eigenvalue" and digits > VECTOR_DIGITS
        # where the structured bound on the eigenvalues past the top block cannot decide Eq. 18, the eigenvalue
        # measure needs the enclosure of the whole spectrum; the vectors' measures then share it (one per σ)
        shared = not probe_.decides_eigenvalue and enclosure >= digits
        if name == "eigenvalue" and not probe_.decides_eigenvalue:
            structured = Step("structured-enclosure", structured_why + "; its bound on the eigenvalues past the "
                                                                      "block is predicted not to decide Eq. 18")
        if top >= needed and not (vector_limited and enclosure >= digits) and not shared:
            steps = [structured, binary]
        else:
            steps = [binary, structured]
        if X.shape[0] <= REFINED_MAX_N:
            steps.append(Step("refined-enclosure", f"N = {X.shape[0]} ≤ {REFINED_MAX_N}: what the others leave short, "
                                                   f"refined at up to {REFINED_MAX_DPS} digits"))
    if guarantee == "heuristic" and name != "metric":
        steps.append(Step("agreement", "asked for: two evaluations at different precisions (heuristic)"))
    return Plan(measure=name, sigma=sigma, k=k_field, digits=digits, guarantee=guarantee, steps=tuple(steps),
                probe=probe)


@dataclass(frozen=True)
class _Probe:
    """float64 predictions behind a plan (never trusted: a wrong one costs time, not a bound).

    Attributes
    ----------
    loss_digits : float
        log10(λ_1/‖E‖_F) + 1: the digits the binary128 enclosure loses to cancellation.
    top_block : int
        Linear eigenvalues clear of ‖E‖ (the structured route's top block).
    decides_eigenvalue : bool
        Whether the structured route's bound on the eigenvalues beyond its top block (the trace, and ‖P₀EP₀‖_F
        when the block is all of L's rank) is predicted below the top block's largest |μ_i − λ_i| (first order,
        w_iᵀEw_i), so that it certifies Eq. 18.
    """

    loss_digits: float
    top_block: int
    decides_eigenvalue: bool


def _probe(X: np.ndarray, sigma: Fraction, median: str) -> _Probe:
    return data_state(X).derived(_probe_cached, sigma, median, keep=64)


def _probe_cached(X, sigma, median) -> _Probe:
    from ..backends import Float64Backend
    from ..numerics import double_center, gaussian_residual
    from ..numerics.perturbed_spectrum import top_block_size

    values, W = _linear_basis(X)
    top = float(values[0])
    try:
        E = double_center(gaussian_residual(X, sigma, backend=Float64Backend(), median=median)).deviation
    except ValueError:  # σ beyond the float64 range: E is far below eps·‖L‖; bound it by σ
        log2_sigma = math.log2(sigma.numerator) - math.log2(sigma.denominator)
        return _Probe(2 * log2_sigma * math.log10(2) + 10, len(values), True)
    e_norm = float(np.linalg.norm(E))
    loss = max(0.0, math.log10(top / max(e_norm, 1e-300))) + 1
    t = top_block_size([float(v) for v in values], e_norm)
    return _Probe(loss, t, t > 0 and _decides_eigenvalue(values, W, E, t, e_norm, X.shape[1] <= X.shape[0]))


def _linear_basis(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 nonzero eigenvalues of L = X_c X_cᵀ (descending) and orthonormal eigenvectors, shape (N, r)."""
    centered = X - X.mean(axis=0)
    tall = X.shape[1] <= X.shape[0]
    values, vectors = np.linalg.eigh(centered.T @ centered if tall else centered @ centered.T)
    values, vectors = values[::-1], vectors[:, ::-1]
    keep = values > X.shape[0] * 2.0**-52 * values[0]
    values, vectors = values[keep], vectors[:, keep]
    return values, (centered @ vectors / np.sqrt(values) if tall else vectors)


def _decides_eigenvalue(values, W, E, t: int, e_norm: float, tall: bool) -> bool:
    """float64 prediction of :func:`~precise_kpca.certify.perturbed_enclosure.eigenvalue_gap_interval`'s
    ``decided`` (see :class:`_Probe`)."""
    EW = E @ W
    shifts = np.einsum("ij,ij->j", W[:, :t], EW[:, :t])
    below = float(values[t]) if t < len(values) else 0.0
    rest = min(below + e_norm, float(values[t:].sum() + np.trace(E) - shifts.sum()))
    if t == len(values) and tall:
        null2 = e_norm**2 - 2 * float(np.sum(EW * EW)) + float(np.sum((W.T @ EW) ** 2))
        rest = min(rest, math.sqrt(max(null2, 0.0)))
    return max(rest, below) <= float(np.max(np.abs(shifts)))


def run(X: np.ndarray, the_plan: Plan, *, tau: float = 1e-6, aggregate: str = "mean", median: str = "full",
        start: float | None = None) -> Measurement:
    """Execute a plan: each route in turn until one certifies the requested digits (see the module docstring)."""
    from . import engines

    start = time.perf_counter() if start is None else start
    name, sigma, k, digits = the_plan.measure, the_plan.sigma, the_plan.k, the_plan.digits
    best, notes = None, []
    for step in the_plan.steps:
        try:
            m = engines.ENGINES[step.engine](X, name, sigma, k=k or 1, digits=digits, tau=tau, aggregate=aggregate,
                                             median=median, start=start, route=step.route)
        except Undetermined as exc:
            return results.undetermined(name, sigma, k, reason=f"not determined: {exc}", start=start, digits=digits,
                                        route=step.route)
        except (RouteUnavailable, InsufficientPrecision, NoConvergence) as exc:
            notes.append(f"{step.engine}: {exc}")
            continue
        if m.guarantee == "heuristic" or not m.short:
            return m if not notes or not m.short else _with_notes(m, notes)
        notes.append(f"{step.engine}: {m.certified_digits} digits")
        if best is None or m.certified_digits > best.certified_digits:
            best = m
    if best is not None:
        import warnings

        best = _with_notes(best, notes)
        warnings.warn(f"{name} at sigma={sigma}: {best.reason}", RuntimeWarning, stacklevel=3)
        return best
    tie = _linear_tie(X, name, k or 1, tau)
    if tie is not None:
        return results.undetermined(name, sigma, k, reason=f"not determined: {tie}", start=start, digits=digits)
    reason = "no rigorous route applies: " + "; ".join(notes + _untried(X, name))
    return results.undetermined(name, sigma, k, reason=reason, start=start, digits=digits)


def _untried(X: np.ndarray, name: str) -> list[str]:
    """The route the plan left out and what it would take: a refusal names its remedy."""
    n = X.shape[0]
    if name not in EIGEN_MEASURES or n <= REFINED_MAX_N:
        return []
    return [f"refined-enclosure (arb Gram refined up to {REFINED_MAX_DPS} digits, which separates near-ties) not "
            f"tried: N = {n} > REFINED_MAX_N = {REFINED_MAX_N} (its cost grows as N³: 73–154 s per σ at N = 1000 "
            f"and 50 digits); a row subsample of at most {REFINED_MAX_N} rows is within its reach"]


def _linear_tie(X: np.ndarray, name: str, k: int, tau: float) -> Undetermined | None:
    """The exact linear tie that leaves an eigenvector measure undetermined at every σ, where no route got as far
    as checking it (a route can fail first on the Gaussian side: tic-tac-toe at σ = 2⁻⁴, whose shared enclosure of
    every group up to k = 5 meets the board's forced Gaussian pairs, reported k = 2 as "no route applies" although
    linear eigenvalues 1 and 2 are exactly equal). The linear side is σ-independent and cached per data set."""
    if name not in ("eigenprojection", "pc"):
        return None
    from .enclosed import linear_for
    from .intervals import linear_groups_exact

    lin = linear_for(X)
    if k > lin.rank:
        return None
    try:
        groups = linear_groups_exact(lin, k, tau) if name == "eigenprojection" else [(i, i + 1) for i in range(k)]
        for s, t in groups:
            lin.sin_theta(s, t)  # raises Undetermined where an edge of the group cuts an exact tie
    except Undetermined as exc:
        return exc
    except InsufficientPrecision:
        return None
    return None


def _with_notes(m: Measurement, notes) -> Measurement:
    from dataclasses import replace

    reason = m.reason + (" (routes tried: " + "; ".join(notes) + ")" if notes else "")
    return replace(m, reason=reason)


__all__ = ["ENCLOSURE_DIGITS", "Plan", "REFINED_MAX_DPS", "REFINED_MAX_N", "STRUCTURED_DIGITS", "Step",
           "VECTOR_DIGITS", "plan", "run"]
