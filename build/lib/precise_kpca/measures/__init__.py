"""Convergence measures (paper Eqs. 16–19, Algorithm 1, Theorems 1 and 3) with certified digits."""
from .agreement import evaluate
from .certified import (
    MEASURES,
    eigenprojection_dissonance,
    eigenvalue_difference,
    measure,
    metric_dissonance,
    plan,
)
from .measurement import Measurement, agreeing_digits
from .onset import PAPER_GRID, convergence_onset, onset_from_curve

__all__ = [
    "MEASURES",
    "Measurement",
    "PAPER_GRID",
    "agreeing_digits",
    "convergence_onset",
    "eigenprojection_dissonance",
    "eigenvalue_difference",
    "evaluate",
    "measure",
    "metric_dissonance",
    "onset_from_curve",
    "plan",
]
