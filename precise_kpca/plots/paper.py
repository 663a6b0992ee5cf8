"""The paper's multi-data-set figures: curves of one measure over several data sets (Figs 3, 5, 6, 8) and
large-σ values against ρ with a least-squares line (Figs 4, 7); Fig 1's null-covariance data and Fig 2's two
aggregations.

Curves: certified values solid, the float64-naive recomputation (the paper's arithmetic) dashed in the same
colour, the paper's largest reliable σ = 2⁷ marked, a slope guide of the measure's theoretical order
(:data:`~precise_kpca.plots.curves.SLOPES`). Rigorous points are filled markers, the others hollow, in every
figure; the legend says which is which, and gives each data set's ρ (of the rows used, said so when they are a
subsample). Figures are made without pyplot (:mod:`precise_kpca.plots.curves`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..studies.curves import NAIVE_BACKEND
from .curves import LABELS, SLOPES, draw_guarantee_markers, hollow_label

PAPER_LIMIT_LOG2_SIGMA = 7


def draw_measure_across(ax, curves: pd.DataFrame, measure: str, k=None, *, datasets=None) -> None:
    """Draw one measure (one k) for several data sets on ``ax``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    curves : pandas.DataFrame
        Curve rows with ``dataset`` and ``rho`` columns (:func:`precise_kpca.reports.study.collect_curves`).
    measure : str
    k : int, optional
        Rank (eigenprojection).
    datasets : sequence of str, optional
        Which data sets, in legend order (default: all, by increasing ρ).
    """
    rows = curves[curves["measure"] == measure]
    rows = rows[rows["k"].isna()] if k is None else rows[rows["k"] == k]
    if datasets is None:
        datasets = rows.drop_duplicates("dataset").sort_values("rho")["dataset"].tolist()
    drawn: set[str] = set()
    for index, name in enumerate(datasets):
        mine = rows[rows["dataset"] == name].sort_values("log2_sigma")
        if mine.empty:
            continue
        color = f"C{index % 10}"
        certified = mine[(mine["requested_backend"] != NAIVE_BACKEND) & np.isfinite(mine["normalized"])]
        naive = mine[(mine["requested_backend"] == NAIVE_BACKEND) & np.isfinite(mine["normalized"])]
        ax.plot(certified["log2_sigma"], certified["normalized"], "-", lw=1.3, color=color,
                label=f"{name} ({_rho_label(mine)})")
        drawn.update(draw_guarantee_markers(ax, certified["log2_sigma"], certified["normalized"],
                                            certified["guarantee"], color=color, ms=2.5, labels=False))
        ax.plot(naive["log2_sigma"], naive["normalized"], "--", lw=1.0, color=color, alpha=0.8)
    finite = rows[np.isfinite(rows["normalized"]) & (rows["requested_backend"] != NAIVE_BACKEND)]
    slope = SLOPES.get(measure)
    if len(finite) and slope is not None:
        x_max = finite["log2_sigma"].max()
        y_end = finite[finite["log2_sigma"] == x_max]["normalized"].min() - 3
        x_start = max(finite["log2_sigma"].min(), x_max - 12)
        ax.plot([x_start, x_max], [y_end - slope * (x_max - x_start), y_end], color="0.4", lw=1, ls="-.",
                label=f"slope {slope} (theory)".replace("-", "−"))
    ax.axvline(PAPER_LIMIT_LOG2_SIGMA, color="0.6", lw=0.8, ls=":")
    ax.plot([], [], "--", color="0.3", lw=1.0, label="float64-naive (paper's arithmetic)")
    if "rigorous" in drawn:
        ax.plot([], [], "o", color="0.3", ms=4, label="rigorous")
    if drawn - {"rigorous"}:
        ax.plot([], [], "o", color="0.3", mfc="white", ms=4, label=hollow_label(drawn))
    ax.set_title(LABELS.get(measure, measure) + ("" if k is None else f", top {k}"), fontsize=9)
    ax.set_xlabel("log2 σ (standardized bandwidth); dotted: paper's limit 2^7")
    ax.set_ylabel("normalized log2 measure (Eq. 16)")
    ax.grid(True, lw=0.4, alpha=0.5)
    ax.legend(fontsize=6.5, loc="lower left")


def _rho_label(rows: pd.DataFrame) -> str:
    """``ρ=…`` of the rows used, with the row count when the curve frame says they are a subsample."""
    rho = f"ρ={rows['rho'].iloc[0]:.3g}"
    if "n_full" in rows and rows["n"].iloc[0] < rows["n_full"].iloc[0]:
        return f"{rho} of a {int(rows['n'].iloc[0])}-row subsample"
    return rho


def plot_measure_across(curves: pd.DataFrame, panels, *, datasets=None, title: str | None = None):
    """A figure with one panel per ``(measure, k)`` of ``panels``, all data sets on each (Figs 3, 5, 6, 8).

    Returns
    -------
    matplotlib.figure.Figure
    """
    panels = list(panels)
    if not panels:
        raise ValueError("no panels to plot")
    fig = Figure(figsize=(5.6 * len(panels), 4.4), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)
    for ax, (measure, k) in zip(axes[0], panels):
        draw_measure_across(ax, curves, measure, k, datasets=datasets)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_rho_scatter(log2_rho, log2_values, labels, guarantees, *, fit=None, paper_fit=None, ylabel: str,
                     title: str):
    """log2 measure at large σ against log2 ρ, one labelled point per data set, with least-squares lines (Figs 4, 7).

    Parameters
    ----------
    log2_rho, log2_values : array_like, shape (n,)
    labels : sequence of str
    guarantees : sequence of str
        Each point's guarantee: rigorous points filled, the others hollow.
    fit : (slope, intercept, r2), optional
        Our least-squares line.
    paper_fit : (slope, intercept or None, r2), optional
        The paper's printed fit; drawn when its intercept is printed, otherwise quoted in the legend.
    ylabel, title : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    x, y = np.asarray(log2_rho, dtype=float), np.asarray(log2_values, dtype=float)
    fig = Figure(figsize=(5.6, 4.4), layout="constrained")
    ax = fig.subplots()
    draw_guarantee_markers(ax, x, y, guarantees, color="C0", ms=4, labels=True)
    for xi, yi, label in zip(x, y, labels):
        ax.annotate(label, (xi, yi), fontsize=6, xytext=(3, 2), textcoords="offset points")
    span = np.array([x.min(), x.max()]) if len(x) else np.array([0.0, 1.0])
    if fit is not None:
        ax.plot(span, fit[0] * span + fit[1], "-", color="C1",
                label=f"ours: slope {fit[0]:.2f}, intercept {fit[1]:.2f}, r² = {fit[2]:.2f}")
    if paper_fit is not None:
        slope, intercept, r2 = paper_fit[:3]
        if intercept is None:
            ax.plot([], [], " ", label=f"paper: slope {slope:.2f}, r² = {r2:.2f}")
        else:
            ax.plot(span, slope * span + intercept, "--", color="C2",
                    label=f"paper: slope {slope:.2f}, intercept {intercept:.2f}, r² = {r2:.2f}")
    ax.set_xlabel("log2 ρ (Eq. 4)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, lw=0.4, alpha=0.5)
    ax.legend(fontsize=7, loc="upper left")
    return fig


def plot_null_covariance(X, covariance) -> Figure:
    """Fig 1: two attributes with identity sample covariance that co-vary nonlinearly.

    Parameters
    ----------
    X : array_like, shape (N, 2)
    covariance : 2×2 nested sequence of fractions.Fraction
        The exact sample covariance of X (quoted in the title).

    Returns
    -------
    matplotlib.figure.Figure
    """
    X = np.asarray(X, dtype=float)
    fig = Figure(figsize=(4.8, 4.4), layout="constrained")
    ax = fig.subplots()
    ax.plot(X[:, 0], X[:, 1], "o", ms=2.5, color="C0", alpha=0.7)
    off = float(abs(covariance[0][1]))
    diag = max(abs(float(covariance[i][i]) - 1) for i in range(2))
    ax.set_title("Fig. 1. Nonlinearly co-varying attributes with null covariance\n"
                 f"exact sample covariance: off-diagonal {off:g}, |diagonal − 1| ≤ {diag:.1e}", fontsize=9)
    ax.set_xlabel("attribute 1")
    ax.set_ylabel("attribute 2")
    ax.grid(True, lw=0.4, alpha=0.5)
    return fig


def plot_aggregation(frame: pd.DataFrame, k: int) -> Figure:
    """Fig 2: eigenprojection dissonance with the mean (left) and the max (right) aggregation of Algorithm 1.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows ``dataset, rho, aggregate, log2_sigma, normalized, guarantee`` (rigorous points filled).
    k : int
        The rank shown.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = Figure(figsize=(11.2, 4.4), layout="constrained")
    axes = fig.subplots(1, 2, squeeze=False, sharey=True)
    for ax, aggregate in zip(axes[0], ("mean", "max")):
        mine = frame[frame["aggregate"] == aggregate]
        for index, (name, rows) in enumerate(mine.groupby("dataset", sort=False)):
            rows = rows[np.isfinite(rows["normalized"].astype(float))].sort_values("log2_sigma")
            color = f"C{index % 10}"
            ax.plot(rows["log2_sigma"], rows["normalized"], "-", lw=1.3, color=color,
                    label=f"{name} (ρ={rows['rho'].iloc[0]:.3g})" if len(rows) else name)
            draw_guarantee_markers(ax, rows["log2_sigma"], rows["normalized"], rows["guarantee"], color=color,
                                   ms=2.5, labels=False)
        ax.set_title(f"{aggregate} of the principal angles (Alg. 1, line 13), top {k}", fontsize=9)
        ax.set_xlabel("log2 σ (standardized bandwidth)")
        ax.grid(True, lw=0.4, alpha=0.5)
        ax.legend(fontsize=7, loc="lower left")
    axes[0][0].set_ylabel("normalized log2 eigenprojection dissonance (Eq. 19)")
    fig.suptitle("Fig. 2. Mean vs max aggregation (filled: rigorous)", fontsize=10)
    return fig
