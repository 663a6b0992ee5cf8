"""Independent references for the neighbours' studies: plain mpmath from the exact data and the same draws.

Written from the definitions, not from the library's routes: the Gram is exp(−u) itself (no expm1, no structured
form), the median is taken over all N² squared distances (zeros included) as sorted mpf, Nyström's eigenvalues are
those of the n×n centered Nyström Gram H K_nm K_mm⁻¹ K_mn H (LU inverse, not Cholesky), random-feature eigenvalues
those of the n×n Z_c Z_cᵀ, the random-feature limit is eig(C Q) of the nonsymmetric d×d product (mpmath.eig), and
every symmetric spectrum comes from mpmath.eigsy. Only the random draws (landmark indices, frequencies, phases) are
taken from numpy, as data.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np

from precise_kpca.approx.rff import RandomFourierFeatures


def context(dps: int) -> mpmath.MPContext:
    ctx = mpmath.MPContext()
    ctx.dps = dps
    return ctx


def _matrix(ctx, rows):
    return ctx.matrix([[ctx.mpf(float(v)) for v in row] for row in rows])


def _sq(ctx, a, b):
    return ctx.fsum((ctx.mpf(float(x)) - ctx.mpf(float(y))) ** 2 for x, y in zip(a, b))


def bandwidth_squared(ctx, X: np.ndarray, sigma: Fraction):
    """σ_X² = (σ · median of the N² pairwise distances)², the median of an even count the mean of the middle two."""
    n = len(X)
    distances = sorted([ctx.zero] * n + [ctx.sqrt(_sq(ctx, X[i], X[j])) for i in range(n) for j in range(n) if i != j])
    count = n * n
    d_x = distances[count // 2] if count % 2 else (distances[count // 2 - 1] + distances[count // 2]) / 2
    return (ctx.mpf(sigma.numerator) / sigma.denominator * d_x) ** 2


def _gauss(ctx, A, B, s2):
    return ctx.matrix([[ctx.exp(-_sq(ctx, a, b) / (2 * s2)) for b in B] for a in A])


def _centering(ctx, n):
    return ctx.eye(n) - ctx.ones(n, n) / n


def _top_symmetric(ctx, M, ell):
    values = ctx.eigsy(M, eigvals_only=True)
    return sorted((values[i] for i in range(M.rows)), reverse=True)[:ell]


def _frobenius(ctx, M):
    return ctx.sqrt(ctx.fsum(M[i, j] ** 2 for i in range(M.rows) for j in range(M.cols)))


def reference(X: np.ndarray, method: str, sigma: Fraction, *, ell: int, dps: int, n_landmarks: int = 10,
              n_features: int = 100, seed=0) -> dict:
    """limit μ_l, scaled σ_X² λ_l, errors |σ_X² λ_l / μ_l − 1| and the Gram error, as mpf at ``dps`` digits."""
    ctx = context(dps)
    n, d = X.shape
    s2 = bandwidth_squared(ctx, X, sigma)
    H = _centering(ctx, n)
    K = _gauss(ctx, X, X, s2)
    Xm = _matrix(ctx, X)
    Xc = H * Xm
    C = Xc.T * Xc / (n - 1)
    gram = None
    if method in ("exact", "nystrom"):
        limit = _top_symmetric(ctx, C, ell)
    if method == "exact":
        approx = K
    elif method == "nystrom":
        idx = np.sort(np.random.default_rng(seed).choice(n, size=n_landmarks, replace=False))
        K_nm = _gauss(ctx, X, X[idx], s2)
        approx = K_nm * ctx.inverse(_gauss(ctx, X[idx], X[idx], s2)) * K_nm.T
    else:
        features = RandomFourierFeatures(n_features, gamma=0.5, kind=method[3:], random_state=seed).fit(X)
        W, sigma_x = _matrix(ctx, features.frequencies_), ctx.sqrt(s2)
        proj = Xm * W.T / sigma_x
        norm = ctx.sqrt(ctx.mpf(2) / n_features)
        if features.kind == "cos":
            b = [ctx.mpf(float(v)) for v in features.phases_]
            Z = ctx.matrix([[norm * ctx.cos(proj[i, j] + b[j]) for j in range(proj.cols)] for i in range(n)])
            P = ctx.matrix([[norm * ctx.sin(b[k]) * W[k, j] for j in range(d)] for k in range(W.rows)])
        else:
            Z = ctx.matrix([[norm * f(proj[i, j]) for f in (ctx.cos, ctx.sin) for j in range(proj.cols)]
                            for i in range(n)])
            P = W * norm
        approx = Z * Z.T
        eig = ctx.eig(C * (P.T * P), left=False, right=False)
        limit = sorted((ctx.re(v) for v in eig), reverse=True)[:ell]
    exact_centered = H * K * H
    centered = H * approx * H
    scaled = [v * s2 / (n - 1) for v in _top_symmetric(ctx, centered, ell)]
    if method != "exact":
        gram = _frobenius(ctx, centered - exact_centered) / _frobenius(ctx, exact_centered)
    errors = [abs(s / m - 1) for s, m in zip(scaled, limit)]
    return {"limit": limit, "scaled": scaled, "errors": errors, "gram": gram}


def hkh_eigenvalues(X: np.ndarray, sigma: Fraction, ell: int, dps: int) -> list:
    """The ℓ largest eigenvalues of H K H (not divided by N), scikit-learn's convention."""
    ctx = context(dps)
    H = _centering(ctx, len(X))
    return _top_symmetric(ctx, H * _gauss(ctx, X, X, bandwidth_squared(ctx, X, sigma)) * H, ell)
