"""σ → ∞ constants of Theorems 2 and 3 (sharp metric constant 1/8, first-order spectral limits)."""
from .constants import (
    METRIC_LIMIT,
    Constant,
    FirstOrder,
    eigenprojection_constant,
    eigenvalue_constant,
    eta_bound,
    metric_constant,
)

__all__ = [
    "METRIC_LIMIT",
    "Constant",
    "FirstOrder",
    "eigenprojection_constant",
    "eigenvalue_constant",
    "eta_bound",
    "metric_constant",
]
