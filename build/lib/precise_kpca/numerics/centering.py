"""Double centering (paper Eq. 7) and RKHS squared distances (paper Eq. 5), written once for every backend.

Centering removes constants exactly (H 11ᵀ H = 0), so it acts on the stored deviation of a
:class:`SymmetricMatrix` and the offset is dropped without ever being subtracted. H is never formed.
"""
from __future__ import annotations

import numpy as np

from .matrix import SymmetricMatrix, as_symmetric_matrix


def center_array(a: np.ndarray) -> np.ndarray:
    """H A H for a square backend array: A − row means − column means + grand mean (Eq. 7)."""
    n = a.shape[0]
    row_means = a.sum(axis=1) / n
    col_means = a.sum(axis=0) / n
    grand = row_means.sum() / n
    return a - row_means[:, None] - col_means[None, :] + grand


def double_center(K, *, dps=None) -> SymmetricMatrix:
    """Double-centered matrix H K H, H = I − 11ᵀ/N (paper Eq. 7).

    Parameters
    ----------
    K : SymmetricMatrix or array_like, shape (N, N)
        A plain float array uses the float64 backend; a plain object array of mpf needs ``dps``.

    Returns
    -------
    SymmetricMatrix, shape (N, N), offset 0.
    """
    K = as_symmetric_matrix(K, dps=dps)
    return SymmetricMatrix(center_array(K.deviation), K.backend, 0, kind=f"centered {K.kind}", meta=K.meta)


def center_cross(K_new, K_train) -> SymmetricMatrix:
    """Center a kernel between M new points and N training points consistently with H K_train H.

    Entry (i, j) is ⟨Φ(x_new_i) − Φ̄, Φ(x_j) − Φ̄⟩ with Φ̄ the training feature mean; both offsets cancel
    exactly (c_new − c_new − c_train + c_train), so only the deviations are used.

    Parameters
    ----------
    K_new : SymmetricMatrix, shape (M, N)
    K_train : SymmetricMatrix, shape (N, N)
    """
    if K_new.backend is not K_train.backend and K_new.backend.name != K_train.backend.name:
        raise ValueError("K_new and K_train come from different backends")
    a, t = K_new.deviation, K_train.deviation
    n = t.shape[0]
    if a.shape[1] != n:
        raise ValueError(f"K_new has {a.shape[1]} columns but K_train is {n}×{n}")
    train_col_means = t.sum(axis=0) / n
    grand = train_col_means.sum() / n
    new_row_means = a.sum(axis=1) / n
    centered = a - new_row_means[:, None] - train_col_means[None, :] + grand
    return SymmetricMatrix(centered, K_train.backend, 0, kind=f"centered {K_new.kind}")


def rkhs_sq_distances(K, *, dps=None) -> SymmetricMatrix:
    """Squared feature-space distances K_ii + K_jj − 2K_ij (paper Eq. 5); the offset cancels exactly.

    By Lemma 1 the result is the same for K and H K H.
    """
    K = as_symmetric_matrix(K, dps=dps)
    a = K.deviation
    diag = a.diagonal().copy()
    return SymmetricMatrix(diag[:, None] + diag[None, :] - 2 * a, K.backend, 0, kind="rkhs squared distances")
