"""Convergence onset σ*₀ (paper Section IV-A4, Table II).

The paper's wording leaves three choices open; the reading that reproduces Table II is ``protocol="paper"``:

* the asymptote is a(σ) = f(2⁷)·(2⁷/σ)², extrapolated from σ = 2⁷;
* "deviates by less than 25 %" is measured on the plotted log2 scale: |log2 f(σ) − log2 a(σ)| < 0.25;
* the tested grid is σ = 2^p, p = −4…8 (2⁸ included), and σ*₀ is the smallest grid σ from which every
  larger grid σ complies; if none does (2⁸ fails), σ*₀ = ∞ (the paper's "256+").

Evidence: the metric measure depends on ρ/σ only (proofs/theorem2), so Table II's first column can be
recomputed from the printed ρ alone: this reading gives 30/30 rows; a ratio threshold gives 24/30, a 0.2 or
0.3 log threshold 20/30 and 29/30, and excluding 2⁸ from the grid turns the four "256+" rows into 128.
``protocol="extended"`` fits the asymptote at the largest grid σ instead (default grid −4…40), where the
values are certified rather than limited by float64.

An undetermined point (NaN: a value that depends on a basis inside a tie) neither complies nor deviates. The
onset does not depend on points below the largest one that deviates; if the scan from the top reaches a NaN
first (or the fit point is NaN), the onset is undetermined: :func:`onset_from_curve` returns NaN and
:func:`convergence_onset` raises :class:`~precise_kpca.errors.Undetermined`.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import Undetermined

PAPER_GRID = tuple(range(-4, 9))
PAPER_FIT_LOG2_SIGMA = 7
EXTENDED_GRID = tuple(range(-4, 41))
TOLERANCE_LOG2 = 0.25


def onset_from_curve(log2_sigmas: Sequence[float], log2_values: Sequence[float], fit_log2_sigma: float,
                     tolerance: float = TOLERANCE_LOG2) -> float:
    """σ*₀ from a curve of log2 measure values (normalized or not: the shift cancels).

    Returns
    -------
    float
        σ*₀ = 2^p for the smallest grid p from which all larger grid points lie within ``tolerance`` (log2
        units) of the 1/σ² asymptote through ``fit_log2_sigma``; ``math.inf`` when even the last one fails;
        NaN when a NaN value (an undetermined point) is reached before a deviating one, or sits at the fit.
    """
    points = sorted(zip(log2_sigmas, log2_values))
    fit = dict(points).get(fit_log2_sigma)
    if fit is None:
        raise ValueError(f"the curve has no point at log2 sigma = {fit_log2_sigma} to fit the asymptote")
    if math.isnan(fit):
        return math.nan
    onset = math.inf
    for p, value in reversed(points):
        if math.isnan(value):
            return math.nan
        asymptote = fit - 2 * (p - fit_log2_sigma)
        if not abs(value - asymptote) < tolerance:
            break
        onset = 2.0**p
    return onset


def convergence_onset(X, measure: str, *, k: int = 1, protocol: str = "paper", digits: int = 6,
                      grid: Sequence[int] | None = None, backend: str = "auto") -> float:
    """Convergence-onset bandwidth σ*₀ of a measure on a data set (float; ``math.inf`` for "256+").

    Parameters
    ----------
    X : array_like, shape (N, d)
    measure : {"metric", "eigenvalue", "eigenprojection", "pc", "cka"}
    k : int
        Top eigenvalues (eigenprojection).
    protocol : {"paper", "extended"}
        ``paper``: grid −4…8 fitted at 2⁷ (see module docstring); ``extended``: grid −4…40 (or ``grid``)
        fitted at its largest σ.
    digits : int
        Certified digits per point (the onset only needs a few).
    backend : str
        ``"auto"`` (certified) or ``"float64-naive"`` to recompute what the paper's float64 gave.

    Raises
    ------
    Undetermined
        When the onset depends on points whose value is undetermined (module docstring); the message names
        their bandwidths and why they are undetermined.
    """
    from .certified import measure as measure_at

    if protocol == "paper":
        grid, fit = PAPER_GRID, PAPER_FIT_LOG2_SIGMA
    elif protocol == "extended":
        grid = tuple(grid or EXTENDED_GRID)
        fit = max(grid)
    else:
        raise ValueError(f"protocol must be 'paper' or 'extended', got {protocol!r}")
    values, undetermined = [], {}
    for p in grid:
        m = measure_at(X, measure, f"2**{p}", k=k, digits=digits, backend=backend)
        values.append(float(m.normalized))
        if math.isnan(values[-1]):
            undetermined[p] = m.reason or "normalized value is NaN"
    onset = onset_from_curve(list(grid), values, fit)
    if math.isnan(onset):
        where = ", ".join(f"2**{p}" for p in sorted(undetermined))
        raise Undetermined(f"the convergence onset of {measure} (k={k}, protocol {protocol!r}) depends on points "
                           f"that are not determined, at sigma = {where}", proof=next(iter(undetermined.values())))
    return onset
