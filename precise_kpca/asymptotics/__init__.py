"""σ → ∞ constants of Theorems 2 and 3 (sharp metric constant 1/8, first-order spectral limits, enclosed
rigorously) and the η-tightness study (issue 5)."""
from .constants import (
    METRIC_LIMIT,
    CheckedLimits,
    Constant,
    EnclosedLimits,
    FirstOrder,
    eigenprojection_constant,
    eigenvalue_constant,
    eta_bound,
    metric_constant,
)
from ..numerics.exact_geometry import ExactEccentricity

__all__ = [
    "METRIC_LIMIT",
    "CheckedLimits",
    "Constant",
    "EnclosedLimits",
    "ExactEccentricity",
    "FirstOrder",
    "eigenprojection_constant",
    "eigenvalue_constant",
    "eta_bound",
    "metric_constant",
]
