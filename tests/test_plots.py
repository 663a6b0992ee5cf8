"""Curve plots: one panel per (measure, k), naive overlay dashed, −2 guide, low-digit points ringed."""
from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest

from precise_kpca.plots import plot_curves, save_curve_plots
from precise_kpca.plots.curves import GUIDE_OFFSET


def _frame() -> pd.DataFrame:
    """A synthetic curve frame: slope −2 asymptote; the naive copy breaks from log2 σ = 14 on."""
    rows = []
    for measure, k in [("metric", pd.NA), ("eigenprojection", 1), ("eigenprojection", 2)]:
        for p in range(-4, 31):
            normalized = -2.0 * p if p > 0 else -0.1 * (p + 5)
            low = p >= 28 and measure == "metric"
            naive = normalized if p < 14 else (0.0 if p < 25 else -np.inf)
            for backend, value, digits, certified in [("auto", normalized, 10, 6 if low else 12),
                                                      ("float64-naive", naive, 0, 0)]:
                rows.append(dict(log2_sigma=p, sigma=str(2.0**p), measure=measure, k=k, value=2.0**value,
                                 normalized=value, certified_digits=certified, backend="mp", dps=30, seconds=0.1,
                                 value_text="", normalized_text="", requested_backend=backend, digits=digits,
                                 method=""))
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
    x, y = lines["slope −2 guide"].get_data()
    assert (y[1] - y[0]) / (x[1] - x[0]) == pytest.approx(-2)
    assert y[1] == pytest.approx(-60 - GUIDE_OFFSET) and x[1] == 30
    assert list(lines["< 10 certified digits"].get_xdata()) == [28, 29, 30]
    assert "< 10 certified digits" not in {line.get_label() for line in axes[1].get_lines()}
    breaks = [text.get_text() for text in metric.texts]
    assert breaks == ["float64 breaks\nlog2 σ ≥ 14"]
    matplotlib.pyplot.close(fig)


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
    matplotlib.pyplot.close(fig)
    with pytest.raises(ValueError, match="no certified points"):
        plot_curves(frame[frame["requested_backend"] == "float64-naive"])
