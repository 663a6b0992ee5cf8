"""Convergence-curve figures in the style of the paper's Figs 3, 5, 6 and 8.

x = log2 σ, y = normalized log2 measure (Eq. 16), one panel per measure (and per k), a slope guide of the
measure's theoretical order (:data:`SLOPES`) just below the largest-σ certified point, and the float64-naive curve
(the paper's computation) dashed on top, so the reader sees where float64 breaks; a naive point float64 cannot
evaluate at all (σ_X² overflows) is a cross on the top edge. Rigorous points (an enclosure proves their interval)
are filled markers, the others hollow (:func:`draw_guarantee_markers`); points certified to fewer digits than
requested are ringed in red.

Figures are :class:`matplotlib.figure.Figure` objects made without pyplot, so importing this module selects no
backend and leaves a notebook's own (inline, widget) alone; ``Figure.savefig`` writes PNG by itself.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..studies.curves import NAIVE_BACKEND, NAIVE_FAILURE

SLOPES = {"metric": -2, "eigenvalue": -2, "eigenprojection": -2, "pc": -2, "cka": -4}
"""Slope of each normalized log2 measure in log2 σ as σ → ∞: the metric dissonance is (ρ/σ)²/8 + O(σ⁻⁴)
(proofs/theorem2), the eigenvalue difference and the eigenprojection and principal-component dissonances are
O(σ⁻²) (Theorem 3), and 1 − CKA is O(σ⁻⁴) (the σ⁻² term of the centered Gram is the linear Gram itself)."""

LABELS = {
    "metric": "RKHS metric dissonance (Eq. 17)",
    "eigenvalue": "eigenvalue difference (Eq. 18)",
    "eigenprojection": "eigenprojection dissonance (Eq. 19)",
    "pc": "principal-component dissonance",
    "cka": "Gaussian vs linear CKA",
}
GUIDE_OFFSET = 4.0
"""The slope guide runs parallel to the ideal asymptote through the last point, this many log2 units below."""
BREAK_BITS = 0.1
"""The naive curve counts as broken where it differs from the certified one by more than this (log2 units,
about 7 %), or is not finite."""


def _panels(frame: pd.DataFrame) -> list[tuple[str, object]]:
    certified = frame[frame["requested_backend"] != NAIVE_BACKEND]
    return list(dict.fromkeys(zip(certified["measure"], certified["k"])))


def _title(measure: str, k) -> str:
    label = LABELS.get(measure, measure)
    return label if pd.isna(k) else f"{label}, top {k}"


def _select(frame: pd.DataFrame, measure: str, k, naive: bool) -> pd.DataFrame:
    rows = frame[(frame["measure"] == measure) & ((frame["requested_backend"] == NAIVE_BACKEND) == naive)]
    rows = rows[rows["k"].isna()] if pd.isna(k) else rows[rows["k"] == k]
    return rows.sort_values("log2_sigma")


def _break_point(certified: pd.DataFrame, naive: pd.DataFrame) -> float | None:
    """Smallest log2 σ from which the naive curve is broken at every larger σ, or None."""
    joined = certified.merge(naive, on="log2_sigma", suffixes=("", "_naive"))
    bad = ~np.isfinite(joined["normalized_naive"]) | ((joined["normalized"] - joined["normalized_naive"]).abs() > BREAK_BITS)
    if not bad.iloc[-1:].all() or joined.empty:
        return None
    good = np.flatnonzero(~bad.to_numpy())
    first_bad = good[-1] + 1 if len(good) else 0
    return float(joined["log2_sigma"].iloc[first_bad])


def draw_guarantee_markers(ax, x, y, guarantees, *, color, ms: float, labels: bool) -> list[str]:
    """Point markers filled where the guarantee is rigorous, hollow elsewhere; with ``labels``, legend entries
    ``"rigorous"`` and the other guarantees drawn (``"heuristic"``).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, y, guarantees : array_like, shape (n,)
    color : matplotlib colour
    ms : float
        Marker size.
    labels : bool

    Returns
    -------
    set of str
        The guarantees drawn.
    """
    x, y, guarantees = np.asarray(x, dtype=float), np.asarray(y, dtype=float), np.asarray(guarantees, dtype=object)
    rigorous = guarantees == "rigorous"
    for chosen, face, label in ((rigorous, color, "rigorous"), (~rigorous, "white", hollow_label(guarantees))):
        if chosen.any():
            ax.plot(x[chosen], y[chosen], "o", color=color, mfc=face, mec=color, ms=ms, zorder=3.5,
                    label=label if labels else None)
    return set(guarantees)


def hollow_label(guarantees) -> str:
    """Legend text of the hollow markers: the guarantees other than rigorous, e.g. ``"heuristic"``."""
    return " / ".join(sorted(set(guarantees) - {"rigorous"}))


def draw_panel(ax, frame: pd.DataFrame, measure: str, k, *, digits: int | None = None) -> None:
    """Draw one measure's curve (and overlay, guide, low-digit marks) on ``ax``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    frame : pandas.DataFrame
        Output of :func:`precise_kpca.studies.convergence_curve`.
    measure : str
    k : int or missing
    digits : int, optional
        Requested digits; default the ``digits`` column.
    """
    certified = _select(frame, measure, k, naive=False)
    certified = certified[np.isfinite(certified["normalized"])]
    naive = _select(frame, measure, k, naive=True)
    x, y = certified["log2_sigma"].to_numpy(float), certified["normalized"].to_numpy(float)
    ax.plot(x, y, "-", color="C0", lw=1.6, zorder=3)
    draw_guarantee_markers(ax, x, y, certified["guarantee"], color="C0", ms=3.5, labels=True)
    wanted = certified["digits"] if digits is None else digits
    low = certified[certified["certified_digits"] < wanted]
    if len(low):
        ax.plot(low["log2_sigma"], low["normalized"], "o", ms=9, mfc="none", mec="red", mew=1.5, zorder=4,
                label=f"< {int(np.max(wanted))} certified digits")
    if len(naive):
        shown = naive[np.isfinite(naive["normalized"])]
        ax.plot(shown["log2_sigma"], shown["normalized"], "--", color="C1", lw=1.3, label="float64-naive (paper)",
                zorder=5)
        reasons = naive["reason"] if "reason" in naive else pd.Series("", index=naive.index)
        failed = naive[reasons.astype(str).str.startswith(NAIVE_FAILURE)]
        if len(failed):
            ax.plot(failed["log2_sigma"], np.full(len(failed), 1.0), "x", color="C1", ms=6, clip_on=False,
                    transform=ax.get_xaxis_transform(), zorder=6, label="float64-naive: overflows")
        broken = _break_point(certified, naive)
        if broken is not None:
            ax.axvline(broken, color="C1", lw=0.8, ls=":", zorder=1)
            ax.annotate(f"float64 breaks\nlog2 σ ≥ {broken:g}", (broken, 0.97), xycoords=("data", "axes fraction"),
                        ha="right", va="top", fontsize=7, color="C1", xytext=(-3, 0), textcoords="offset points")
    slope = SLOPES.get(measure)
    if len(x) >= 2 and slope is not None:
        start = x[-1] - max((x[-1] - x[0]) / 2, 1.0)
        end_y = y[-1] - GUIDE_OFFSET
        ax.plot([start, x[-1]], [end_y - slope * (x[-1] - start), end_y], color="0.45", lw=1, ls="-.", zorder=1,
                label=f"slope {slope} guide (theory)".replace("-", "−"))
    ax.set_title(_title(measure, k), fontsize=9)
    ax.set_xlabel("log2 σ (standardized bandwidth)")
    ax.set_ylabel("normalized log2 measure")
    ax.grid(True, lw=0.4, alpha=0.5)
    ax.legend(fontsize=7, loc="lower left")


def plot_curves(frame: pd.DataFrame, *, title: str | None = None, digits: int | None = None):
    """One figure with a panel per (measure, k) of a curve frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`precise_kpca.studies.convergence_curve` (naive overlay rows optional).
    title : str, optional
        Figure title (e.g. the data-set name).
    digits : int, optional
        Requested digits; points below are ringed. Default: the frame's ``digits`` column.

    Returns
    -------
    matplotlib.figure.Figure
    """
    panels = _panels(frame)
    if not panels:
        raise ValueError("the curve frame has no certified points to plot")
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig = Figure(figsize=(4.6 * cols, 3.8 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, (measure, k) in zip(axes.ravel(), panels):
        draw_panel(ax, frame, measure, k, digits=digits)
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def save_curve_plots(frame: pd.DataFrame, out_dir, *, title: str | None = None, digits: int | None = None,
                     dpi: int = 130) -> list[Path]:
    """Write ``curves.png`` (all panels) and ``curve_<measure>[_k<k>].png`` (one each) into ``out_dir``.

    Returns
    -------
    list of pathlib.Path
        The files written, combined figure first.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    fig = plot_curves(frame, title=title, digits=digits)
    paths.append(out_dir / "curves.png")
    fig.savefig(paths[-1], dpi=dpi)
    for measure, k in _panels(frame):
        fig = Figure(figsize=(5.2, 4.0), layout="constrained")
        ax = fig.subplots()
        draw_panel(ax, frame, measure, k, digits=digits)
        if title:
            ax.set_title(f"{title}: {_title(measure, k)}", fontsize=9)
        paths.append(out_dir / (f"curve_{measure}" + ("" if pd.isna(k) else f"_k{int(k)}") + ".png"))
        fig.savefig(paths[-1], dpi=dpi)
    return paths
