"""Curve plots: one panel per (measure, k), naive overlay dashed, slope guide of the measure's order, low-digit points ringed, rigorous points
filled and the others hollow (also in the paper's multi-data-set figures)."""
from __future__ import annotations

import matplotlib.colors
import numpy as np
import pandas as pd
import pytest

from precise_kpca.plots import plot_curves, save_curve_plots
from precise_kpca.plots.curves import GUIDE_OFFSET, LABELS, SLOPES
from precise_kpca.studies.curves import NAIVE_FAILURE
from precise_kpca.plots.paper import plot_measure_across, plot_rho_scatter

HEURISTIC_FROM = 20
"""log2 σ from which the synthetic eigenprojection points are heuristic (the metric ones stay rigorous)."""


def _frame() -> pd.DataFrame:
    """A synthetic curve frame: slope −2 asymptote; the naive copy breaks from log2 σ = 14 on."""
    rows = []
    for measure, k in [("metric", pd.NA), ("eigenprojection", 1), ("eigenprojection", 2)]:
        for p in range(-4, 31):
            normalized = -2.0 * p if p > 0 else -0.1 * (p + 5)
            low = p >= 28 and measure == "metric"
            naive = normalized if p < 14 else (0.0 if p < 25 else -np.inf)
            heuristic = p >= HEURISTIC_FROM and measure == "eigenprojection"
            guarantee = "heuristic" if heuristic else "rigorous"
            for backend, value, digits, certified, kind in [("auto", normalized, 10, 6 if low else 12, guarantee),
                                                            ("float64-naive", naive, 0, 0, "none")]:
                rows.append(dict(log2_sigma=p, sigma=str(2.0**p), measure=measure, k=k, value=2.0**value,
                                 normalized=value, certified_digits=certified, backend="mp", dps=30, seconds=0.1,
                                 value_text="", normalized_text="", requested_backend=backend, digits=digits,
                                 method="", guarantee=kind))
    frame = pd.DataFrame(rows)
    frame["k"] = frame["k"].astype("Int64")
    return frame


def test_panels_overlay_guide_and_marks():
    fig = plot_curves(_frame(), title="synthetic")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == [
        "RKHS metric dissonance (Eq. 17)", "eigenprojection dissonance (Eq. 19), top 1",
        "eigenprojection dissonance (Eq. 19), top 2"]
    metric = axes[0]
    lines = {line.get_label(): line for line in metric.get_lines()}
    assert lines["float64-naive (paper)"].get_linestyle() == "--"
    assert np.isfinite(lines["float64-naive (paper)"].get_ydata()).all()  # −inf points left out
    x, y = lines["slope −2 guide (theory)"].get_data()
    assert (y[1] - y[0]) / (x[1] - x[0]) == pytest.approx(-2)
    assert y[1] == pytest.approx(-60 - GUIDE_OFFSET) and x[1] == 30
    assert list(lines["< 10 certified digits"].get_xdata()) == [28, 29, 30]
    assert "< 10 certified digits" not in {line.get_label() for line in axes[1].get_lines()}
    breaks = [text.get_text() for text in metric.texts]
    assert breaks == ["float64 breaks\nlog2 σ ≥ 14"]
    assert list(lines["rigorous"].get_xdata()) == list(range(-4, 31)) and "heuristic" not in lines
    eigen = {line.get_label(): line for line in axes[1].get_lines()}
    rigorous, heuristic = eigen["rigorous"], eigen["heuristic"]
    assert list(rigorous.get_xdata()) == list(range(-4, HEURISTIC_FROM))
    assert list(heuristic.get_xdata()) == list(range(HEURISTIC_FROM, 31))
    assert _hollow(heuristic) and not _hollow(rigorous)


def _hollow(line) -> bool:
    return matplotlib.colors.to_rgba(line.get_markerfacecolor()) == matplotlib.colors.to_rgba("white")


def _across(frame: pd.DataFrame) -> pd.DataFrame:
    """The synthetic frame as two data sets of a study's curves (``dataset``, ``rho``)."""
    return pd.concat([frame.assign(dataset=name, rho=rho) for name, rho in (("a", 2.0), ("b", 8.0))],
                     ignore_index=True)


def test_multi_data_set_figures_mark_heuristic_points_hollow_and_say_so():
    curves = _across(_frame())
    fig = plot_measure_across(curves, [("metric", None), ("eigenprojection", 1)])
    metric, eigen = fig.axes
    assert "heuristic" not in {line.get_label() for line in metric.get_lines()}
    labels = {line.get_label(): line for line in eigen.get_lines()}
    assert not _hollow(labels["rigorous"]) and _hollow(labels["heuristic"])  # the legend's entries
    hollow = [line for line in eigen.get_lines() if len(line.get_xdata()) and _hollow(line)]
    assert [list(line.get_xdata()) for line in hollow] == [list(range(HEURISTIC_FROM, 31))] * 2  # one per data set
    fig = plot_rho_scatter([1.0, 3.0, 4.0], [-20.0, -16.0, -14.0], ["a", "b", "c"], ["rigorous", "heuristic", "rigorous"],
                           ylabel="y", title="t")
    points = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert list(points["rigorous"].get_xdata()) == [1.0, 4.0] and list(points["heuristic"].get_xdata()) == [3.0]
    assert _hollow(points["heuristic"]) and not _hollow(points["rigorous"])


def test_save_writes_readable_pngs(tmp_path):
    paths = save_curve_plots(_frame(), tmp_path / "out", title="synthetic")
    assert [p.name for p in paths] == ["curves.png", "curve_metric.png", "curve_eigenprojection_k1.png",
                                       "curve_eigenprojection_k2.png"]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def test_without_overlay_and_without_certified_points():
    frame = _frame()
    fig = plot_curves(frame[frame["requested_backend"] == "auto"])
    assert all("float64-naive (paper)" not in {l.get_label() for l in ax.get_lines()} for ax in fig.axes)
    with pytest.raises(ValueError, match="no certified points"):
        plot_curves(frame[frame["requested_backend"] == "float64-naive"])


def test_slope_guides_follow_each_measures_theory():
    frame = _frame()
    cka = frame[frame["measure"] == "metric"].assign(measure="cka", normalized=lambda f: 2 * f["normalized"])
    for measure, slope in (("metric", -2), ("cka", -4)):
        fig = plot_curves(pd.concat([frame, cka]) if measure == "cka" else frame)
        ax = next(a for a in fig.axes if a.get_title().startswith(LABELS[measure]))
        guide = next(line for line in ax.get_lines() if "guide" in line.get_label())
        x, y = guide.get_data()
        assert guide.get_label() == f"slope −{-slope} guide (theory)"
        assert (y[1] - y[0]) / (x[1] - x[0]) == pytest.approx(slope)
    assert SLOPES == {"metric": -2, "eigenvalue": -2, "eigenprojection": -2, "pc": -2, "cka": -4}


def test_naive_points_float64_cannot_evaluate_are_crosses_on_the_top_edge():
    frame = _frame().assign(reason="")
    naive = (frame["requested_backend"] == "float64-naive") & (frame["log2_sigma"] >= 29)
    frame.loc[naive, ["normalized", "reason"]] = [np.nan, NAIVE_FAILURE + ": 2σ_X² overflows float64"]
    ax = plot_curves(frame).axes[0]
    crosses = next(line for line in ax.get_lines() if line.get_label() == "float64-naive: overflows")
    assert list(crosses.get_xdata()) == [29, 30] and list(crosses.get_ydata()) == [1.0, 1.0]  # axes fraction


def test_importing_the_plots_selects_no_backend(tmp_path):
    """No pyplot, no matplotlib.use(): a notebook's backend stays what it was (a subprocess: a fresh matplotlib)."""
    script = (
        "import sys, matplotlib\n"
        "matplotlib.use('svg')\n"
        "import precise_kpca.plots, precise_kpca.plots.paper, precise_kpca.reports, precise_kpca.cli.eta\n"
        "from precise_kpca.reports.figures import write_figures\n"
        "assert matplotlib.get_backend() == 'svg', matplotlib.get_backend()\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
        "print('ok')\n"
    )
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.strip() == "ok", done.stderr
