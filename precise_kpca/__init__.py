"""precise_kpca: Gaussian kernel PCA versus linear PCA as σ → ∞, with digits you can trust.

Core API (float64, float64-naive and mp backends)::

    from precise_kpca import geometry, gaussian_gram, double_center, rkhs_sq_distances, eigensystem
    K = gaussian_gram(X, "2**40", backend="mp", dps=60)
    system = eigensystem(double_center(K))
"""
from .backends import BACKEND_NAMES, get_backend
from .numerics import (
    Eigensystem,
    Geometry,
    SymmetricMatrix,
    center_cross,
    double_center,
    eigensystem,
    euclidean_gram,
    gaussian_cross_gram,
    gaussian_gram,
    gaussian_residual,
    geometry,
    linear_gram,
    polynomial_gram,
    principal_components,
    project,
    rkhs_sq_distances,
)

from .asymptotics import eigenprojection_constant, eigenvalue_constant, eta_bound, metric_constant
from .certify.psd import CertificationError, PSDCertificate, certify_kernel_psd, certify_psd, require_psd
from .measures import (
    Measurement,
    convergence_onset,
    eigenprojection_dissonance,
    eigenvalue_difference,
    measure,
    metric_dissonance,
)

from .studies import ResultsStore, convergence_curve

__version__ = "0.1.0"


def __getattr__(name: str):
    # the estimator pulls in scikit-learn (seconds of import): loaded on first use, not by every worker process
    if name == "PreciseKernelPCA":
        from .estimator import PreciseKernelPCA

        return PreciseKernelPCA
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "BACKEND_NAMES",
    "CertificationError",
    "Measurement",
    "PSDCertificate",
    "PreciseKernelPCA",
    "ResultsStore",
    "convergence_curve",
    "certify_kernel_psd",
    "certify_psd",
    "convergence_onset",
    "eigenprojection_constant",
    "eigenprojection_dissonance",
    "eigenvalue_constant",
    "eigenvalue_difference",
    "eta_bound",
    "measure",
    "metric_constant",
    "metric_dissonance",
    "require_psd",
    "Eigensystem",
    "Geometry",
    "SymmetricMatrix",
    "center_cross",
    "double_center",
    "eigensystem",
    "euclidean_gram",
    "gaussian_cross_gram",
    "gaussian_gram",
    "gaussian_residual",
    "geometry",
    "get_backend",
    "linear_gram",
    "polynomial_gram",
    "principal_components",
    "project",
    "rkhs_sq_distances",
]
