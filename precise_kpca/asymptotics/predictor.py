"""A predictor of eigenprojection convergence past the top eigenvalue (issue 24, Build 1): ρ, the linear spectral
gaps at the group boundaries, and the first-order constant C_k, against the certified onsets and dissonances.

Derivation (proofs/predictor). σ_X² H K_G H = L + ε²E₁ + O(ε⁴), ε = 1/(d_X σ). For Algorithm 1's groups g of the
top k linear eigenvalues the largest principal angle is θ_g = ε²‖Y_g‖ + O(ε⁴), ‖Y_g‖ ≤ ‖E₁‖/δ_g with δ_g the
linear gap at the group's boundary, so σ²·EigenDist → C_k = mean_g ‖Y_g‖/d_X² (:mod:`.enclosed_limits`). The
dissonance at σ is ≈ C_k/σ² while this is small; it departs from the σ⁻² asymptote when the angle is no longer
small, C_k/σ² ≈ c, hence

    log2 onset ≈ ½ log2 C_k + const,   log2 EigenDist(2⁷) ≈ log2 C_k − 14,   log2 lim σ²·EigenDist = log2 C_k.

‖E₁‖ ≲ N diam⁴/8 and λ₁ ≈ N d_X²·O(1) give the cheaper surrogate C_k ≈ c·ρ²·(λ₁/δ_min)/something: the ρ + gap
regression ``log2 y = a + b log2 ρ + c log2 (δ_min/λ₁)`` with δ_min the smallest relative boundary gap.

Every input is rigorous: onsets from certified curves (``measure`` with guarantee rigorous; an onset is proven
when each point is), C_k enclosed (:class:`~precise_kpca.asymptotics.constants.EnclosedLimits`), the gaps from
the linear enclosures. The regressions (ordinary least squares of log2 quantities, "256+" counted as 256 as in
Table III) are statistics of those numbers. Hand-written: a few lines of numpy least squares.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..certify.linear_enclosure import linear_enclosure
from ..errors import InsufficientPrecision, Undetermined
from ..measures.spectral import linear_groups
from .constants import limits

KS = (1, 2, 3, 4, 5)
TAU = 1e-6
"""Algorithm 1's equality threshold (the measure's default)."""
_GAP_BITS = 128


def boundary_gaps(X, k: int, tau: float = TAU) -> list[float]:
    """Relative linear gaps (λ_end − λ_(end+1))/λ₁ at each boundary of Algorithm 1's groups of the top k.

    From the linear enclosures at 128 bits (lower end of each gap: λ_end's lower minus λ_(end+1)'s upper, over
    λ₁'s upper), so a reported gap is a proven lower bound; a boundary at the rank has λ_(end+1) = 0.
    """
    lin = linear_enclosure(np.ascontiguousarray(X, dtype=np.float64), _GAP_BITS)
    values = [float(v) for v in lin.values]
    gaps = []
    for _, stop in linear_groups(values, k, tau):
        below = float(lin.upper(stop)) if stop < lin.rank else 0.0
        gaps.append((float(lin.lower(stop - 1)) - below) / float(lin.upper(0)))
    return gaps


@dataclass
class Features:
    """The predictor's inputs for one data set.

    Attributes
    ----------
    rho : float
    gaps : dict of int to float
        k → smallest relative boundary gap among the top-k groups.
    constants : dict of int to float
        k → C_k (σ → ∞ limit of σ²·EigenDist), midpoint of its enclosure; NaN when undetermined.
    digits : dict of int to int
        k → certified digits of C_k.
    notes : list of str
    """

    rho: float
    gaps: dict
    constants: dict
    digits: dict
    notes: list


def features(X, rho: float, ks=KS, *, digits: int = 6) -> Features:
    """ρ, the boundary gaps and the enclosed C_k of X for each k ≤ rank (module docstring)."""
    evaluator = limits(X, "rigorous", digits=digits)
    gaps, constants, certified, notes = {}, {}, {}, []
    rank = linear_enclosure(np.ascontiguousarray(X, dtype=np.float64), _GAP_BITS).rank
    for k in [k for k in ks if k <= rank]:
        gaps[k] = min(boundary_gaps(X, k))
        try:
            c = evaluator.eigenprojection(k)
            constants[k], certified[k] = c.value, c.certified_digits
        except (Undetermined, InsufficientPrecision) as exc:
            constants[k], certified[k] = math.nan, 0
            notes.append(f"k={k}: {exc}")
    return Features(rho, gaps, constants, certified, notes)


def ols_r2(y, *columns) -> tuple[float, np.ndarray]:
    """r² and coefficients (intercept first) of the least-squares fit of y on the columns.

    Raises
    ------
    ValueError
        Fewer points than coefficients + 1.
    """
    y = np.asarray(y, dtype=float)
    design = np.column_stack([np.ones_like(y)] + [np.asarray(c, dtype=float) for c in columns])
    if len(y) <= design.shape[1]:
        raise ValueError(f"{len(y)} points cannot fit {design.shape[1]} coefficients")
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    total = ((y - y.mean()) ** 2).sum()
    return (1.0 - (residual**2).sum() / total if total > 0 else 1.0), coef


PREDICTORS = {
    "rho": lambda t: (np.log2(t["rho"]),),
    "rho+gap": lambda t: (np.log2(t["rho"]), np.log2(t["gap"])),
    "C_k": lambda t: (np.log2(t["C_k"]),),
}
"""Regressors of each predictor (log2 scale): ρ alone (Tables III/IV), ρ with the smallest relative boundary
gap, and the enclosed first-order constant."""
TARGETS = {"onset": "log2_onset", "dissonance at 2^7": "normalized_2_7", "limit": "log2_C_k"}


def comparison(table: pd.DataFrame) -> pd.DataFrame:
    """r² of every predictor for every target and k (rows: target, k, n, and one column per predictor).

    ``table`` has one row per (data set, k) with ``rho, gap, C_k, log2_onset, normalized_2_7``; rows with a
    missing value are left out of that target. The C_k predictor of the limit is the identity (r² = 1) and is
    reported as NaN.
    """
    table = table.assign(log2_C_k=np.log2(table["C_k"].astype(float)))
    rows = []
    for target, column in TARGETS.items():
        for k, part in table.groupby("k"):
            part = part.replace([np.inf, -np.inf], np.nan).dropna(subset=[column, "rho", "gap", "C_k"])
            part = part[part["C_k"] > 0]
            row = dict(target=target, k=int(k), n=len(part))
            for name, regressors in PREDICTORS.items():
                if target == "limit" and name == "C_k":
                    row[name] = math.nan
                    continue
                try:
                    row[name], coef = ols_r2(part[column], *regressors(part))
                    row[f"{name}_coef"] = tuple(round(float(c), 3) for c in coef)
                except ValueError:
                    row[name] = math.nan
            rows.append(row)
    return pd.DataFrame(rows)
