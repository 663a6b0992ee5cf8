"""Figures (matplotlib ``Figure`` objects, no pyplot and no backend switch): convergence curves in the paper's
style."""
from .curves import plot_curves, save_curve_plots

__all__ = ["plot_curves", "save_curve_plots"]
