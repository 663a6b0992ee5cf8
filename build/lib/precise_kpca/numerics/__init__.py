"""Numerics: exact data, geometry, kernels, centering, eigensystems — each written once for every backend."""
from .centering import center_cross, double_center, rkhs_sq_distances
from .eigen import Eigensystem, eigensystem, principal_components, project
from .geometry import Geometry, geometry
from .kernels import (
    euclidean_gram,
    gaussian_cross_gram,
    gaussian_gram,
    gaussian_residual,
    linear_gram,
    polynomial_gram,
)
from .matrix import SymmetricMatrix

__all__ = [
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
    "linear_gram",
    "polynomial_gram",
    "principal_components",
    "project",
    "rkhs_sq_distances",
]
