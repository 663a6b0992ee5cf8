"""Symmetric eigensystems and kernel PCA (paper Section II-A1), written once for every backend."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..backends import Backend
from .eigen_refine import refine_eigensystem
from .matrix import SymmetricMatrix, as_symmetric_matrix

_WARN_SECONDS = 60.0  # warn before eigensystems longer than a minute


@dataclass
class Eigensystem:
    """Eigenvalues (descending) and orthonormal eigenvectors (columns) of a symmetric matrix.

    Attributes
    ----------
    values : ndarray, shape (N,)
        float64, or object array of global-type ``mpmath.mpf``.
    vectors : ndarray, shape (N, k)
        The k leading eigenvectors (all N by default); column i belongs to ``values[i]``; sign fixed so that its largest-magnitude entry is positive
        (the first such entry on ties), which makes results deterministic across backends.
    backend : Backend
    """

    values: np.ndarray
    vectors: np.ndarray
    backend: Backend

    @property
    def dps(self) -> int:
        return self.backend.dps

    def kpca_coefficients(self, n_components: int) -> np.ndarray:
        """Kernel-PCA coefficients α^i = v_i / √λ_i, normalized so that λ_i α^i·α^i = 1 (Section II-A1).

        Returns
        -------
        ndarray, shape (N, n_components)

        Raises
        ------
        ValueError
            If a requested eigenvalue is not positive beyond rounding (N·eps·λ_max): the component carries
            no variance and α would be noise.
        """
        b = self.backend
        values = b.internal(self.values[:n_components])
        floor = len(self.values) * b.eps * abs(b.internal(self.values[0]))
        for i, lam in enumerate(values):
            if not lam > floor:
                raise ValueError(
                    f"component {i} has eigenvalue {b.to_float(lam):.3g}, which is not positive beyond rounding "
                    f"(N·eps·λ_max = {b.to_float(floor):.3g}): ask for at most as many components as the "
                    "centered Gram has positive eigenvalues"
                )
        vectors = b.internal(self.vectors[:, :n_components])
        return b.export(vectors / b.sqrt(values)[None, :])


def fix_signs(vectors: np.ndarray) -> np.ndarray:
    """Flip columns so that each one's largest-magnitude entry (first on ties) is positive."""
    magnitudes = np.abs(vectors)
    rows = np.array([max(range(len(col)), key=lambda r, c=col: (c[r], -r)) for col in magnitudes.T])
    signs = np.array([1 if vectors[r, j] >= 0 else -1 for j, r in enumerate(rows)])
    return vectors * signs[None, :]


METHODS = ("auto", "refine", "mpmath")


def eigensystem(K, *, dps=None, k=None, method="auto", tier=1) -> Eigensystem:
    """Eigen-decomposition of a symmetric matrix on its backend.

    Parameters
    ----------
    K : SymmetricMatrix or array_like, shape (N, N)
    k : int, optional
        Number of leading eigenvectors wanted (default all N); every eigenvalue is always returned.
    method : {"auto", "refine", "mpmath"}
        mp backend only. ``refine`` (the default under ``auto``): float64 LAPACK eigenvectors refined by
        exact fixed-point products (:mod:`precise_kpca.numerics.eigen_refine`), all eigenvalues to ``dps``
        digits relative to ‖K‖ and the top-k vectors to ``dps`` digits. ``mpmath``: ``mpmath.eigsy``
        (Jacobi/QR in pure Python, ~100× slower than ``refine`` at N = 200). float64 always uses LAPACK.
    tier : {1, 2}
        Accuracy asked of ``refine`` (ignored otherwise). 1 (default): every eigenvalue to ``dps`` digits
        relative to ‖K‖₂ and the top-k eigenvectors to ``dps`` digits (absolute, unit vectors) — what the
        measures need; tiny eigenvalues of a graded spectrum then carry only absolute accuracy. 2: every
        eigenpair to ``dps`` digits relative to its own eigenvalue, as far as the precision of K's entries
        allows (slower: the graded spectrum is resolved level by level).

    Returns
    -------
    Eigensystem
        ``vectors`` has shape (N, k).
    """
    K = as_symmetric_matrix(K, dps=dps)
    b = K.backend
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"eigensystem needs a square matrix, got shape {K.shape}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    n = K.n
    k = n if k is None else int(k)
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and N={n}, got {k}")
    if b.fixed_precision or method == "mpmath":  # a fixed precision has nothing to refine towards
        _warn_if_slow(b, n)
        values, vectors = b.eigh(K.internal)
        return Eigensystem(b.export(values), b.export(fix_signs(vectors[:, :k])), b)
    if tier not in (1, 2):
        raise ValueError(f"tier must be 1 or 2, got {tier!r}")
    refined = refine_eigensystem(K.internal, dps=b.dps, tier=tier, k=k)
    return Eigensystem(refined.values, refined.vectors[:, :k], b)


def _warn_if_slow(b: Backend, n: int) -> None:
    seconds = b.eigh_seconds(n)
    if seconds > _WARN_SECONDS:
        warnings.warn(
            f"{b.name} eigensystem of an {n}×{n} matrix at dps={b.dps}: estimated {seconds / 60:.0f} min "
            f"({b.eigh_seconds(100):.1f} s at N=100, scaling like N³)",
            RuntimeWarning,
            stacklevel=3,
        )


def principal_components(K_centered: SymmetricMatrix, system: Eigensystem, n_components: int) -> np.ndarray:
    """Kernel principal components of the training points: ⟨Φ(x_i) − Φ̄, V^k⟩ = (K̄ α^k)_i = √λ_k v_k,i.

    Returns
    -------
    ndarray, shape (N, n_components), public form.
    """
    b = system.backend
    alphas = b.internal(system.kpca_coefficients(n_components))
    return b.export(K_centered.deviation.dot(alphas))


def project(K_new_centered: SymmetricMatrix, system: Eigensystem, n_components: int) -> np.ndarray:
    """Kernel principal components of new points from their centered cross kernel (M×N).

    Returns
    -------
    ndarray, shape (M, n_components), public form.
    """
    b = system.backend
    alphas = b.internal(system.kpca_coefficients(n_components))
    return b.export(K_new_centered.deviation.dot(alphas))
