"""Figs 1–8 of the paper as PNG files: Fig 1 from a synthetic data set with exactly null covariance, Fig 2 from
eigenprojection curves under both aggregations, Figs 3–8 from the study's curves (extended past 2⁷, float64-naive
overlaid)."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from . import paper
from .tables import MIN_FIT_POINTS, at_sigma, regress

SAMPLE_SIZE = 6
"""Data sets per curve figure (the paper shows six)."""


def null_covariance_data(n: int = 400, *, seed: int = 0) -> np.ndarray:
    """Fig 1's data: two attributes, the second a noisy parabola of the first, with identity sample covariance.

    Rows come in mirror pairs (t, y), (−t, y), so the first column sums to zero and Σ x(y − ȳ) = 0 exactly: the
    cross-covariance is exactly 0 however y depends on t. Each column is then scaled to unit sample variance
    (1/(N − 1), as the paper), exact up to one float64 rounding per entry (:func:`exact_covariance` says how close).

    Parameters
    ----------
    n : int
        Rows (even, at least 4).
    seed : int
        Seed of ``numpy.random.default_rng`` for t and the noise.

    Returns
    -------
    numpy.ndarray, shape (n, 2)
    """
    if n < 4 or n % 2:
        raise ValueError(f"n must be an even integer of at least 4 (mirror pairs), got {n}")
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1.0, n // 2)
    y = t * t + 0.05 * rng.standard_normal(n // 2)
    X = np.column_stack([np.concatenate([t, -t]), np.concatenate([y, y])])
    X[:, 1] -= X[:, 1].mean()
    return X / X.std(axis=0, ddof=1)  # rounds t and −t to exact negatives: the pairs and the zero cross term stay


def exact_covariance(X) -> list[list[Fraction]]:
    """Sample covariance 1/(N − 1)·Σ (x − x̄)(x − x̄)ᵀ of float64 data in exact rational arithmetic, shape (d, d)."""
    rows = [[Fraction(float(v)) for v in row] for row in np.asarray(X, dtype=float)]
    n, d = len(rows), len(rows[0])
    means = [sum(r[j] for r in rows) / n for j in range(d)]
    return [[sum((r[i] - means[i]) * (r[j] - means[j]) for r in rows) / (n - 1) for j in range(d)]
            for i in range(d)]


def write_fig1(out_dir, *, dpi: int = 120) -> Path:
    """Fig 1 (:func:`null_covariance_data`) as ``fig1.png`` in ``out_dir``."""
    from ..plots.paper import plot_null_covariance

    X = null_covariance_data()
    fig = plot_null_covariance(X, exact_covariance(X))
    path = Path(out_dir) / "fig1.png"
    fig.savefig(path, dpi=dpi)
    return path


def write_fig2(aggregation: pd.DataFrame, k: int, out_dir, *, dpi: int = 120) -> Path | None:
    """Fig 2 from :func:`precise_kpca.reports.study.aggregation_curves` as ``fig2.png`` (None without data)."""
    from ..plots.paper import plot_aggregation

    if aggregation.empty:
        return None
    fig = plot_aggregation(aggregation, k)
    path = Path(out_dir) / "fig2.png"
    fig.savefig(path, dpi=dpi)
    return path


def sample_datasets(curves: pd.DataFrame, size: int = SAMPLE_SIZE) -> list[str]:
    """Up to ``size`` data sets spread evenly over the range of ρ (by rank), increasing ρ."""
    ordered = curves.drop_duplicates("dataset").sort_values("rho")["dataset"].tolist()
    if len(ordered) <= size:
        return ordered
    picks = np.unique(np.round(np.linspace(0, len(ordered) - 1, size)).astype(int))
    return [ordered[i] for i in picks]


def write_figures(curves: pd.DataFrame, out_dir, *, datasets=None, dpi: int = 120,
                  aggregation: pd.DataFrame | None = None, aggregation_k: int | None = None) -> dict[str, Path]:
    """Write ``fig1.png`` … ``fig8.png`` into ``out_dir``.

    Fig 1 the null-covariance data; Fig 2 (when ``aggregation`` has rows, from
    :func:`precise_kpca.reports.study.aggregation_curves` at rank ``aggregation_k``) mean vs max aggregation;
    Fig 3 metric, Fig 5 eigenvalue, Fig 6 eigenprojection k=1, Fig 8 eigenprojection k=2 and the largest k
    (the paper: 5) — curves on the sample data sets; Figs 4 and 7 the certified value at σ = 2⁷ against ρ over
    all data sets, with our and the paper's least-squares lines. A figure without data is skipped.

    Returns
    -------
    dict of str to pathlib.Path
        Figure name (``"fig3"`` …) to file.
    """
    from ..plots.paper import plot_measure_across, plot_rho_scatter

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    datasets = datasets or sample_datasets(curves)
    present = set(zip(curves["measure"], (None if pd.isna(k) else int(k) for k in curves["k"])))
    largest = max((k for measure, k in present if measure == "eigenprojection"), default=1)
    figures = {
        "fig3": [("metric", None)],
        "fig5": [("eigenvalue", None)],
        "fig6": [("eigenprojection", 1)],
        "fig8": [("eigenprojection", k) for k in dict.fromkeys([2, largest]) if k > 1],
    }
    written = {"fig1": write_fig1(out_dir, dpi=dpi)}
    if aggregation is not None and (fig2 := write_fig2(aggregation, aggregation_k, out_dir, dpi=dpi)) is not None:
        written["fig2"] = fig2
    for name, panels in figures.items():
        panels = [panel for panel in panels if panel in present]
        if not panels:
            continue
        fig = plot_measure_across(curves, panels, datasets=datasets,
                                  title=f"{name[:3].capitalize()}. {name[3:]}: certified (solid) vs float64-naive (dashed)")
        written[name] = out_dir / f"{name}.png"
        fig.savefig(written[name], dpi=dpi)
    values = at_sigma(curves, paper.FIT_LOG2_SIGMA)
    for name, measure, printed in (("fig4", "metric", paper.AT_2_7_REGRESSIONS["metric"]),
                                   ("fig7", "eigenprojection", paper.AT_2_7_REGRESSIONS["eigenprojection"])):
        rows = values[values["measure"] == measure]
        rows = rows[rows["k"] == 1] if measure == "eigenprojection" else rows
        rows = rows[np.isfinite(rows["normalized"].astype(float))]
        if rows.empty:
            continue
        x = np.log2(rows["rho"].astype(float).to_numpy())
        y = rows["normalized"].astype(float).to_numpy()
        fit = regress(x, y) if len(x) >= MIN_FIT_POINTS and len(set(x)) >= 2 else None  # fewer: no line
        fig = plot_rho_scatter(
            x, y, rows["dataset"].map(paper.paper_name).tolist(), rows["guarantee"].tolist(),
            fit=None if fit is None else (fit.slope, fit.intercept, fit.r2), paper_fit=printed,
            ylabel=f"normalized log2 {measure} at σ = 2^7",
            title=f"{name[:3].capitalize()}. {name[3:]}: {measure}{' (top eigenvalue)' if measure != 'metric' else ''} "
                  f"at σ = 2^7 vs ρ ({len(rows)} data sets)")
        written[name] = out_dir / f"{name}.png"
        fig.savefig(written[name], dpi=dpi)
    return dict(sorted(written.items(), key=lambda item: int(item[0][3:])))
