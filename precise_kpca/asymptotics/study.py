"""Issue 5: is Theorem 2's η tight? The per-data-set study and the cross-data-set table.

Per data set (:func:`eta_study`): C(σ) = dissonance/(ρ/σ)² on σ = 2^−4 … 2^60 (rigorous arb balls, one exact
pass for ρ², see :mod:`.eccentricity`), its supremum over the grid and its limit 1/8, the paper's bound
(ρ/σ)²η and its overshoot bound/dissonance = η/C(σ) ≥ 8η, and Theorem 3's limits σ²×(Eq. 18) and σ²×EigenDist
(k = 1..5) with their ratios to ρ², each with its interval and guarantee (rigorous by default:
:class:`.constants.EnclosedLimits`). Across data sets (:func:`cross_table`, :func:`slopes`): the table and the
log-log slopes against ρ of the limits and of the values at the paper's σ = 2^7 (Figs. 4 and 7).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numpy as np
import pandas as pd

from ..backends import Float64Backend
from ..datasets import synthetic
from ..measures import evaluate
from ..measures.metric import dissonance_ball
from ..numerics.exact_geometry import ExactEccentricity
from ..numerics.geometry import geometry
from ..errors import InsufficientPrecision, Undetermined
from ..validation import check_data
from .constants import LIMIT_DIGITS, METRIC_LIMIT, CheckedLimits, Constant, limits

LOG2_SIGMAS = tuple(range(-4, 61))
PAPER_LOG2_SIGMA = 7
KS = (1, 2, 3, 4, 5)
PAPER_SPECTRAL_MAX_N = 2000  # float64 eigensystems of the N×N Gram at σ = 2^7 beyond this take minutes


@dataclass
class EtaStudy:
    """The η-tightness study of one data set.

    Attributes
    ----------
    name : str
    n, d : int
    rho, eta : float
        Eccentricity (exact data, rounded) and the paper's η = diameter / min nonzero distance.
    curve : pandas.DataFrame
        Per σ: ``log2_sigma``, ``C`` (certified digits ``C_digits``), ``dissonance`` = C (ρ/σ)², ``eta_bound``
        = (ρ/σ)² η and ``overshoot`` = eta_bound / dissonance.
    spectral : pandas.DataFrame
        Per k: ``eigenprojection`` limit constant, its interval ``lower``/``upper``, ``digits`` (certified by the
        interval), ``guarantee``, ``ratio_to_rho2``; empty when not computed.
    eigenvalue : Constant or None
        lim σ² × Eq. 18 (with its interval and guarantee).
    paper : dict
        Values at σ = 2^7: ``metric`` (certified ball), ``eigenvalue``/``eigenprojection`` (float64 stable
        form, uncertified; absent when N > ``PAPER_SPECTRAL_MAX_N``).
    notes : list of str
    """

    name: str
    n: int
    d: int
    rho: float
    eta: float
    curve: pd.DataFrame
    spectral: pd.DataFrame
    eigenvalue: Constant | None
    paper: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def limit_C(self) -> float:
        return float(METRIC_LIMIT)

    @property
    def sup_C(self) -> float:
        """max of C over the σ grid (C increases, so the largest σ; < 1/8 always)."""
        return float(self.curve["C"].max())

    @property
    def overshoot_limit(self) -> float:
        """lim_{σ→∞} (paper's bound)/(true dissonance) = η / (1/8)."""
        return self.eta / float(METRIC_LIMIT)

    def summary(self) -> dict:
        """One row of the cross-data-set table."""
        row = dict(data=self.name, N=self.n, d=self.d, rho=self.rho, eta=self.eta, lim_C=self.limit_C,
                   sup_C=self.sup_C, overshoot_limit=self.overshoot_limit,
                   overshoot_max=float(self.curve["overshoot"].max()),
                   metric_2_7=self.paper.get("metric", math.nan))
        if self.eigenvalue is not None:
            row.update(eigenvalue=self.eigenvalue.value, eigenvalue_digits=self.eigenvalue.certified_digits,
                       eigenvalue_guarantee=self.eigenvalue.guarantee,
                       eigenvalue_over_rho2=self.eigenvalue.value / self.rho**2)
        if len(self.spectral):
            first = self.spectral.iloc[0]
            row.update(eigenprojection=first["eigenprojection"], eigenprojection_digits=first["digits"],
                       eigenprojection_guarantee=first["guarantee"], eigenprojection_over_rho2=first["ratio_to_rho2"])
            for _, r in self.spectral.iterrows():
                row[f"eigenprojection_k{int(r['k'])}"] = r["eigenprojection"]
        row.update({f"{key}_2_7": value for key, value in self.paper.items() if key != "metric"})
        return row


def metric_constant_ball(ecc: ExactEccentricity, log2_sigma: int, digits: int = 15) -> flint.arb:
    """Rigorous enclosure of C(σ) = R(v)/2v at σ = 2^p (v = ρ²/2σ²), ≥ ``digits`` correct digits."""
    sigma = Fraction(2) ** log2_sigma
    with flint.ctx.workprec(int(digits * math.log2(10)) + 40):
        v = ecc.rho_squared() * sigma.denominator**2 / (2 * sigma.numerator**2)
        return dissonance_ball(ecc, sigma, int(digits * math.log2(10)) + 40) / (2 * v)


def ball_to_float(ball: flint.arb) -> tuple[float, int]:
    """A ball's midpoint as a float and its certified significant digits (≤ 15)."""
    digits = max(0, int(ball.rel_accuracy_bits() / math.log2(10)) - 1)
    return float(ball.mid()), min(digits, 15)


def metric_curve(X, log2_sigmas=LOG2_SIGMAS, *, eccentricity: ExactEccentricity | None = None) -> pd.DataFrame:
    """C(σ) on σ = 2^p with certified digits, the paper's bound and its overshoot."""
    X = check_data(X)
    ecc = eccentricity or ExactEccentricity(X)
    rho2 = ecc.rho() ** 2
    eta = geometry(X).eta_nonzero
    rows = []
    for p in log2_sigmas:
        value, digits = ball_to_float(metric_constant_ball(ecc, p))
        scale = rho2 * 2.0 ** (-2 * p)
        rows.append(dict(log2_sigma=p, C=value, C_digits=digits, dissonance=value * scale,
                         eta_bound=scale * eta, overshoot=eta / value))
    return pd.DataFrame(rows)


def eta_study(X, name: str = "data", *, log2_sigmas=LOG2_SIGMAS, ks=KS, spectral: bool = True,
              paper_spectral: bool = True, guarantee: str = "rigorous", limit_digits: int = LIMIT_DIGITS,
              progress=None) -> EtaStudy:
    """The study of one data set (module docstring).

    Parameters
    ----------
    X : array_like, shape (N, d)
    name : str
    log2_sigmas : sequence of int
        Grid of σ = 2^p for C(σ).
    ks : sequence of int
        k for the eigenprojection limits (those above the rank are skipped, with a note).
    spectral : bool
        Compute Theorem 3's limits (first-order perturbation; seconds to a minute for N in the hundreds).
    paper_spectral : bool
        Also evaluate the eigen measures at σ = 2^7 in float64 (N ≤ ``PAPER_SPECTRAL_MAX_N``; uncertified).
    guarantee : {"rigorous", "heuristic"}
        How the limits are certified: enclosures (:class:`.constants.EnclosedLimits`) or the agreement of two
        evaluations (:class:`.constants.CheckedLimits`).
    limit_digits : int
        Digits requested of the rigorous limits.
    progress : callable, optional
        ``progress(steps, desc)`` wraps each loop (the σ grid of C(σ), then the ranks k of the limits), e.g. a
        ``tqdm`` bar with ETA; None: silent.

    Returns
    -------
    EtaStudy
    """
    X = check_data(X)
    g = geometry(X)
    ecc = ExactEccentricity(X)
    rho = ecc.rho()
    wrap = progress or (lambda steps, desc: steps)
    curve = metric_curve(X, wrap(list(log2_sigmas), "C(σ) grid"), eccentricity=ecc)
    paper = {"metric": _metric_at(ecc, rho, PAPER_LOG2_SIGMA)}
    notes: list[str] = []
    eigenvalue, table = None, pd.DataFrame(columns=SPECTRAL_COLUMNS)
    if spectral:
        eigenvalue, table = _spectral_limits(X, wrap(list(ks), "Theorem 3 limits (k)"), rho, guarantee,
                                             limit_digits, notes)
    if paper_spectral and g.n <= PAPER_SPECTRAL_MAX_N:
        sigma = Fraction(2) ** PAPER_LOG2_SIGMA
        b = Float64Backend()
        paper["eigenvalue"] = float(evaluate(X, "eigenvalue", sigma, b)[0])
        for k in ks[:1]:
            paper[f"eigenprojection_k{k}"] = float(evaluate(X, "eigenprojection", sigma, b, k=k)[0])
    return EtaStudy(name, g.n, g.d, rho, g.eta_nonzero, curve, table, eigenvalue, paper, notes)


SPECTRAL_COLUMNS = ["k", "eigenprojection", "lower", "upper", "digits", "guarantee", "ratio_to_rho2"]


def _spectral_limits(X, ks, rho: float, guarantee: str, digits: int, notes: list) -> tuple[Constant, pd.DataFrame]:
    """Theorem 3's limits: the eigenvalue constant and one row per k (notes say why a k is left out)."""
    evaluator = limits(X, guarantee, digits=digits)
    eigenvalue = evaluator.eigenvalue()
    rows = []
    for k in ks:
        try:
            c = evaluator.eigenprojection(k)
        except (ValueError, Undetermined, InsufficientPrecision) as exc:
            notes.append(f"k={k}: {exc}")
            continue
        rows.append(dict(k=k, eigenprojection=c.value, lower=c.lower, upper=c.upper, digits=c.certified_digits,
                         guarantee=c.guarantee, ratio_to_rho2=c.value / rho**2))
    repeated = _repeated(evaluator)
    if repeated:
        notes.append(f"exactly repeated linear eigenvalues (index ranges) {repeated}")
    notes.append(f"spectral limits ({eigenvalue.guarantee}): {eigenvalue.method}")
    return eigenvalue, pd.DataFrame(rows, columns=SPECTRAL_COLUMNS)


def _repeated(evaluator) -> list[tuple[int, int]]:
    if isinstance(evaluator, CheckedLimits):
        return [(s, t - 1) for s, t in evaluator.primary.clusters if t - s > 1]
    return [(s, t - 1) for s, t in evaluator.repeated]


def _metric_at(ecc: ExactEccentricity, rho: float, log2_sigma: int) -> float:
    value, _ = ball_to_float(metric_constant_ball(ecc, log2_sigma))
    return value * rho**2 * 2.0 ** (-2 * log2_sigma)


def cross_table(studies) -> pd.DataFrame:
    """One row per :class:`EtaStudy` (see :meth:`EtaStudy.summary`)."""
    return pd.DataFrame([s.summary() for s in studies])


SLOPE_COLUMNS = {
    "metric dissonance at 2^7 (Fig. 4: 1.74)": "metric_2_7",
    "lim σ²·metric dissonance = ρ²/8": "metric_limit",
    "eigenvalue at 2^7 (Sec. IV-B: 1.71/1.74)": "eigenvalue_2_7",
    "lim σ²·eigenvalue (Eq. 18)": "eigenvalue",
    "eigenprojection k=1 at 2^7 (Fig. 7: 2.05)": "eigenprojection_k1_2_7",
    **{f"lim σ²·eigenprojection k={k}": f"eigenprojection_k{k}" for k in KS},
}


def slopes(table: pd.DataFrame) -> pd.DataFrame:
    """Least-squares slope, intercept and r² of log2(quantity) against log2 ρ, per quantity of the table.

    Missing or non-positive values are left out (``count`` says how many sets entered).
    """
    table = table.assign(metric_limit=table["rho"] ** 2 / 8)
    rows = []
    for label, column in SLOPE_COLUMNS.items():
        if column not in table:
            continue
        ok = table[column].notna() & (table[column] > 0)
        x, y = np.log2(table.loc[ok, "rho"].astype(float)), np.log2(table.loc[ok, column].astype(float))
        if len(x) < 3:
            continue
        slope, intercept = np.polyfit(x, y, 1)
        r2 = 1 - np.sum((y - (slope * x + intercept)) ** 2) / np.sum((y - y.mean()) ** 2)
        rows.append(dict(quantity=label, slope=slope, intercept=intercept, r2=r2, count=int(ok.sum())))
    return pd.DataFrame(rows)


def stress_sets(seed: int = 0) -> dict[str, np.ndarray]:
    """Synthetic families that stress the η bound (names say the knob)."""
    s = synthetic
    return {
        "outlier r=10": s.gaussian_with_outliers(200, 5, radius=10.0, seed=seed),
        "outlier r=1000": s.gaussian_with_outliers(200, 5, radius=1000.0, seed=seed),
        "tight clusters 1e-3": s.clusters(200, 5, spread=1e-3, seed=seed),
        "near-duplicates 1e-9": s.near_duplicates(200, 5, delta=1e-9, seed=seed),
        "near-duplicates 1e-14": s.near_duplicates(200, 5, delta=1e-14, seed=seed),
        "low dim d=1": s.gaussian(200, 1, seed=seed),
        "high dim d=500": s.gaussian(100, 500, seed=seed),
    }

