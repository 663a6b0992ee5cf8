"""precise_kpca: Gaussian kernel PCA versus linear PCA as σ → ∞, with digits you can trust.

Core API (float64, float64-naive and mp backends)::

    from precise_kpca import geometry, gaussian_gram, double_center, rkhs_sq_distances, eigensystem
    K = gaussian_gram(X, "2**40", backend="mp", dps=60)
    system = eigensystem(double_center(K))

Names are imported on first use (PEP 562), so that ``import precise_kpca.cli`` and ``precise-kpca --help``
do not pay for NumPy, SciPy, mpmath and scikit-learn.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "BACKEND_NAMES": "backends",
    "get_backend": "backends",
    **dict.fromkeys(
        ["Eigensystem", "Geometry", "SymmetricMatrix", "center_cross", "double_center", "eigensystem",
         "euclidean_gram", "gaussian_cross_gram", "gaussian_gram", "gaussian_residual", "geometry", "linear_gram",
         "polynomial_gram", "principal_components", "project", "rkhs_sq_distances"],
        "numerics",
    ),
    **dict.fromkeys(["eigenprojection_constant", "eigenvalue_constant", "eta_bound", "metric_constant"],
                    "asymptotics"),
    "PreciseKernelPCA": "estimator",
    **dict.fromkeys(["CertificationError", "PSDCertificate", "certify_kernel_psd", "certify_psd", "require_psd"],
                    "certify.psd"),
    **dict.fromkeys(["Measurement", "convergence_onset", "eigenprojection_dissonance", "eigenvalue_difference",
                     "measure", "metric_dissonance"], "measures"),
    **dict.fromkeys(["ResultsStore", "convergence_curve"], "studies"),
}
"""Public name -> the subpackage or module (relative to this package) that defines it."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value  # later look-ups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
