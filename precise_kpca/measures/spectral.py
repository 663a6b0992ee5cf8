"""Eigen-based measures (paper Eq. 18, Algorithm 1, Theorem 3, Theorem 1), written once for every backend.

Everything is built from X in the backend's working precision: the centered linear Gram L = H X Xᵀ H from
exact integers, and the scaled Gaussian Gram σ_X² H K_G H = L + H G H (Lemma 2) with G the cancellation-free
residual. The linear eigensystem comes from the d×d matrix X_cᵀ X_c (its nonzero eigenvalues are those of
L, eigenvectors W = X_c Q Λ^{−1/2}); its remaining N − r eigenvalues are exactly 0. On a finite precision
the differences these measures take do cancel: the measure layer certifies its digits by evaluating twice
at different precisions (see :mod:`precise_kpca.measures.certified`).
"""
from __future__ import annotations

import numpy as np

from ..backends import Backend
from ..certify.angles import largest_angle
from ..numerics import double_center, gaussian_gram, gaussian_residual
from ..numerics.linear_spectrum import LinearSpectrum
from ..numerics.matrix import SymmetricMatrix


def scaled_gaussian_gram(X, sigma, backend: Backend, linear: LinearSpectrum) -> SymmetricMatrix:
    """σ_X² H K_G H, shape (N, N): L + H G H on stable backends, σ_X²·(exp then center) on float64-naive."""
    if backend.naive:
        K = double_center(gaussian_gram(X, sigma, backend=backend))
        s = K.meta["sigma_x"]
        return SymmetricMatrix(K.deviation * (s * s), backend, kind="scaled centered gaussian", meta=K.meta)
    E = double_center(gaussian_residual(X, sigma, backend=backend))
    return SymmetricMatrix(linear.gram() + E.deviation, backend, kind="scaled centered gaussian", meta=E.meta)


def eigenvalue_difference_value(gauss_values, linear: LinearSpectrum):
    """‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ over all N eigenvalues, both sorted descending (Eq. 18)."""
    gaps = [abs(g - l) for g, l in zip(gauss_values, linear.values)]
    return max(gaps) / abs(linear.values[0])


def linear_groups(values, k: int, tau: float) -> list[tuple[int, int]]:
    """Algorithm 1's grouping of the top-k linear eigenvalues: runs with |λ_i − λ_i0| / λ_i0 < τ.

    Raises
    ------
    ValueError
        If one of the top k is zero, negative or NaN: the relative test has no meaning there (k beyond the
        rank of the centered linear Gram).
    """
    for i in range(k):
        if not values[i] > 0:
            raise ValueError(f"linear eigenvalue {i} of the top k={k} is {values[i]}: Algorithm 1 groups positive "
                             "eigenvalues only (is k beyond the rank of the centered linear Gram?)")
    groups, start = [], 0
    while start < k:
        stop = start + 1  # every group holds its first eigenvalue: the loop advances whatever the comparison gives
        while stop < k and abs((values[stop] - values[start]) / values[start]) < tau:
            stop += 1
        groups.append((start, stop))
        start = stop
    return groups


def require_k_within_rank(k: int, linear: LinearSpectrum) -> None:
    """Refuse a measure over the top k eigenvectors (eigenprojection, pc) when k exceeds rank(L).

    Raises
    ------
    ValueError
        Naming k, the rank and the shape: eigenvectors beyond the rank belong to the repeated eigenvalue 0 of
        L and have no linear counterpart.
    """
    if k > linear.rank:
        n, d = linear.centered.shape
        raise ValueError(
            f"k={k} exceeds the rank {linear.rank} of the centered linear Gram (N={n}, d={d}): eigenvectors "
            f"beyond it belong to the repeated eigenvalue 0 and have no linear counterpart; choose k <= {linear.rank}"
        )


def eigen_distance(b: Backend, V: np.ndarray, linear: LinearSpectrum, k: int, tau: float, aggregate: str):
    """EigenDist(v, w, λ) of Algorithm 1 over the top-k linear eigenvalues (radians)."""
    require_k_within_rank(k, linear)
    thetas = [
        largest_angle(b, V[:, i0:i1], linear.vectors[:, i0:i1])
        for i0, i1 in linear_groups(linear.values, k, tau)
    ]
    if aggregate == "max":
        return max(thetas)
    return sum(thetas) / len(thetas)


def identity_basis(b: Backend, n: int, k: int) -> np.ndarray:
    """The first k columns of I_N: Gaussian eigenvectors at σ = 0 (normalization of Eq. 19)."""
    eye = np.array([[b.scalar(int(i == j)) for j in range(k)] for i in range(n)], dtype=b.dtype)
    return eye


def pc_dissonance_value(b: Backend, gauss_values, gauss_vectors, linear: LinearSpectrum, k: int):
    """max_{i<k} ‖σ_X·PC_G,i − PC_L,i‖ / ‖PC_L,i‖ over the training points (Theorem 3).

    Training principal components are √λ v (Section II-A1); σ_X-scaling the Gaussian ones gives √μ v with
    μ = σ_X² λ_G. Signs are aligned (v·w > 0) since eigenvectors have none of their own.
    """
    require_k_within_rank(k, linear)
    worst = b.scalar(0)
    for i in range(k):
        v, w = gauss_vectors[:, i], linear.vectors[:, i]
        if v.dot(w) < 0:
            v = -v
        gap = b.sqrt(max(gauss_values[i], b.scalar(0))) * v - b.sqrt(linear.values[i]) * w
        worst = max(worst, b.sqrt(gap.dot(gap)) / b.sqrt(linear.values[i]))
    return worst


def cka_gap_value(b: Backend, scaled: SymmetricMatrix, linear_gram: np.ndarray):
    """1 − CKA(K_G(σ), K_lin) (Theorem 1 with L = K_lin), from the part of σ_X² HK_GH orthogonal to L.

    With A = L + E: 1 − cos∠(A, L) = sin²/(1 + cos), sin = ‖E − (⟨E,L⟩/‖L‖²) L‖_F / ‖A‖_F — no cancellation.
    """
    A, L = scaled.deviation, linear_gram
    if b.naive and not np.any(A):
        return float("nan")  # float64-naive past its limit: the centered Gram rounded to 0, CKA is undefined
    E = A - L
    ll = (L * L).sum()
    perpendicular = E - ((E * L).sum() / ll) * L
    aa = (A * A).sum()
    sin2 = (perpendicular * perpendicular).sum() / aa
    cos_ = (A * L).sum() / b.sqrt(aa * ll)
    return sin2 / (1 + cos_)


