"""Figs 3–8 of the paper as PNG files, from the study's curves (extended past 2⁷, float64-naive overlaid)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import paper
from .tables import MIN_FIT_POINTS, at_sigma, regress

SAMPLE_SIZE = 6
"""Data sets per curve figure (the paper shows six)."""


def sample_datasets(curves: pd.DataFrame, size: int = SAMPLE_SIZE) -> list[str]:
    """Up to ``size`` data sets spread evenly over the range of ρ (by rank), increasing ρ."""
    ordered = curves.drop_duplicates("dataset").sort_values("rho")["dataset"].tolist()
    if len(ordered) <= size:
        return ordered
    picks = np.unique(np.round(np.linspace(0, len(ordered) - 1, size)).astype(int))
    return [ordered[i] for i in picks]


def write_figures(curves: pd.DataFrame, out_dir, *, datasets=None, dpi: int = 120) -> dict[str, Path]:
    """Write ``fig3.png`` … ``fig8.png`` into ``out_dir``.

    Fig 3 metric, Fig 5 eigenvalue, Fig 6 eigenprojection k=1, Fig 8 eigenprojection k=2 and the largest k
    (the paper: 5) — curves on the sample data sets; Figs 4 and 7 the certified value at σ = 2⁷ against ρ over
    all data sets, with our and the paper's least-squares lines. A figure without data is skipped.

    Returns
    -------
    dict of str to pathlib.Path
        Figure name (``"fig3"`` …) to file.
    """
    import matplotlib.pyplot as plt

    from ..plots.paper import plot_measure_across, plot_rho_scatter

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    datasets = datasets or sample_datasets(curves)
    ks = sorted(int(k) for k in curves.loc[curves["measure"] == "eigenprojection", "k"].dropna().unique())
    figures = {
        "fig3": [("metric", None)],
        "fig5": [("eigenvalue", None)],
        "fig6": [("eigenprojection", 1)] if 1 in ks else [],
        "fig8": [("eigenprojection", k) for k in dict.fromkeys([2, ks[-1]]) if k in ks and k > 1] if ks else [],
    }
    written = {}
    for name, panels in figures.items():
        if not panels:
            continue
        fig = plot_measure_across(curves, panels, datasets=datasets,
                                  title=f"{name[:3].capitalize()}. {name[3:]}: certified (solid) vs float64-naive (dashed)")
        written[name] = out_dir / f"{name}.png"
        fig.savefig(written[name], dpi=dpi)
        plt.close(fig)
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
        plt.close(fig)
    return dict(sorted(written.items(), key=lambda item: int(item[0][3:])))
