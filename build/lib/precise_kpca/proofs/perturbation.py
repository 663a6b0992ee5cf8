"""Eq. 15 and Theorem 3: the scaled centered Gaussian Gram as an analytic perturbation of linear PCA.

Exact split: ``σ_X² e^{-u} = σ_X² + K_E + G`` with ``G = σ_X²(e^{-u} - 1 + u)``, and H kills the constant, so
``σ_X² H K_G H = L + H G H``, ``L = H K_lin H`` (Lemma 2). Entrywise
``G = ε² D^{∘2}/8 - ε⁴ D^{∘3}/48 + O(ε⁶)`` (D the squared distances), so
``σ_X² H K_G H = L + ε² M + ε⁴ M₂ + ...``, ``M = H D^{∘2} H/8``, ``M₂ = -H D^{∘3} H/48`` — Eq. 15 with its
O(ε²) term explicit. First-order perturbation: simple λ_i shifts by ``w_i^T M w_i`` and w_i moves by
``Σ_{j≠i} (w_j^T M w_i)/(λ_i - λ_j) w_j`` (null space of L included, λ_j = 0); the null eigenvalue of L
(multiplicity N - rank ≥ 1, so Theorem 3's "no repeated eigenvalues" fails whenever N ≥ d + 2) splits at
order ε² into the eigenvalues of the compression of M onto null(L). Cross-checked against the mp backend.
"""
from __future__ import annotations

from typing import Callable

import sympy as sp

from . import gram
from .bounds import taylor_sandwich
from .expansions import constant_term_residue
from .mpcheck import context, convert, matrix, sample_points, sigma_x
from .result import ClaimResult, report, verdict

eps, Dsym, t, nu = sp.symbols("epsilon D t nu", positive=True)
# Claimed ε-coefficients of the entrywise residual G as functions of the squared distance D.
RESIDUAL_COEFFICIENTS = {0: 0, 2: Dsym**2 / 8, 4: -(Dsym**3) / 48}

Shift = Callable[[sp.Matrix, sp.Matrix, int], sp.Expr]
Correction = Callable[[sp.Matrix, sp.Matrix, int], sp.Matrix]


def residual_mismatches(claimed: dict[int, sp.Expr] = RESIDUAL_COEFFICIENTS) -> list[int]:
    """Powers of ε where the series of ``σ_X²(e^{-u} - 1 + u)`` (σ_X = 1/ε, u = ε²D/2) differs from claimed."""
    u = eps**2 * Dsym / 2
    series = sp.expand(sp.series((sp.exp(-u) - 1 + u) / eps**2, eps, 0, 6).removeO())
    return [p for p, coeff in claimed.items() if sp.simplify(series.coeff(eps, p) - coeff) != 0]


def split_defect() -> sp.Expr:
    """``σ_X² e^{-u} - (σ_X² + K_E + G)`` with ``K_E = -α²/2 = -σ_X² u``: zero iff the split is exact."""
    sx, u = sp.symbols("sigma_X u", positive=True)
    return sp.simplify(sx**2 * sp.exp(-u) - (sx**2 + (-sx**2 * u) + sx**2 * (sp.exp(-u) - 1 + u)))


def standard_shift(L: sp.Matrix, M: sp.Matrix, i: int) -> sp.Expr:
    """First-order eigenvalue shift w_i^T M w_i (L diagonal, so w_i = e_i)."""
    return M[i, i]


def standard_correction(L: sp.Matrix, M: sp.Matrix, i: int) -> sp.Matrix:
    """First-order eigenvector correction Σ_{j≠i} M_ji/(λ_i - λ_j) e_j (L diagonal)."""
    return sp.Matrix([0 if j == i else M[j, i] / (L[i, i] - L[j, j]) for j in range(L.rows)])


def first_order_residual(shift: Shift = standard_shift, correction: Correction = standard_correction,
                         size: int = 3) -> sp.Matrix:
    """Order-t part of ``(L + tM)(w + t w') - (λ + t λ')(w + t w')`` for symbolic distinct λ, symmetric M."""
    L = sp.diag(*sp.symbols(f"l0:{size}"))
    M = gram.symmetric_gram(size, "m")
    residuals = []
    for i in range(size):
        w = sp.eye(size)[:, i]
        r = (L - L[i, i] * sp.eye(size)) * correction(L, M, i) + (M - shift(L, M, i) * sp.eye(size)) * w
        residuals.append(r.applyfunc(sp.simplify))
    return sp.Matrix.hstack(*residuals)


def null_split_defect(size: int = 3) -> sp.Expr:
    """Lowest t-order of ``det(L + t(M - νI))``, L = diag(l, 0, ..), minus ``l det(M₀ - νI) t^{size-1}``.

    Zero means the eigenvalues of L + tM leaving 0 are ``t ν`` with ν the eigenvalues of the compression
    M₀ of M onto null(L), to leading order.
    """
    l0 = sp.Symbol("l0", positive=True)
    L = sp.diag(l0, *([0] * (size - 1)))
    M = gram.symmetric_gram(size, "m")
    det = sp.expand((L + t * (M - nu * sp.eye(size))).det())
    lowest = [det.coeff(t, p) for p in range(size - 1)]
    M0 = M[1:, 1:]
    leading = det.coeff(t, size - 1) - l0 * (M0 - nu * sp.eye(size - 1)).det()
    return sp.expand(sum(abs(x) for x in lowest) + leading)


def numeric_first_order(n: int = 6, d: int = 3, seed: int = 5, sigma: str = "2**20", dps: int = 60):
    """Library mp eigensystem of σ_X² HK_GH vs first-order predictions from L and M.

    Returns (max eigenvalue residual, eigenvalue bound, max eigenvector residual, vector bound, null
    multiplicity, digits): residuals are ``|(exact - λ_L)/ε² - first order|``; the bounds are
    ``4 ε² (‖M‖²/gap + ‖M₂‖)``, four times the size of the neglected second-order terms.
    """
    from precise_kpca import double_center, eigensystem, euclidean_gram, gaussian_gram, linear_gram

    ctx = context(dps)
    X = sample_points(n, d, seed)
    K = gaussian_gram(X, sigma, backend="mp", dps=dps)
    e2 = 1 / sigma_x(K, ctx) ** 2
    gauss = eigensystem(double_center(K))
    mu = [convert(ctx, x) / e2 for x in gauss.values]
    V = matrix(ctx, gauss.vectors)
    L = matrix(ctx, double_center(linear_gram(X, backend="mp", dps=dps)).values)
    D = -2 * matrix(ctx, euclidean_gram(X, backend="mp", dps=dps).values)
    H = ctx.eye(n) - ctx.ones(n, n) / n
    M = H * D.apply(lambda x: x**2) * H / 8
    M2 = -H * D.apply(lambda x: x**3) * H / 48
    lam, W = ctx.eigsy(L)
    order = sorted(range(n), key=lambda k: -lam[k])
    lam, W = [lam[k] for k in order], _columns(ctx, W, order)
    tiny = 2**10 * ctx.eps * ctx.mnorm(L, 1)
    live = [k for k in range(n) if abs(lam[k]) > tiny]
    null = [k for k in range(n) if k not in live]
    P0 = _columns(ctx, W, null)
    split = sorted(ctx.eigsy(P0.T * M * P0)[0], reverse=True)
    first = [(W[:, k].T * M * W[:, k])[0] for k in live] + split  # ε² coefficients, in descending order
    gaps = [abs(lam[p] - lam[q]) for p in live for q in range(n) if q != p]
    scale = ctx.mnorm(M, 1) ** 2 / min(gaps) + ctx.mnorm(M2, 1)
    value_res = max(abs((mu[k] - lam[k]) / e2 - first[k]) for k in range(n))
    vector_res = ctx.zero
    for k in live:
        v = V[:, k] if (V[:, k].T * W[:, k])[0] > 0 else -V[:, k]
        corr = sum((((W[:, j].T * M * W[:, k])[0] / (lam[k] - lam[j])) * W[:, j] for j in range(n) if j != k),
                   ctx.zeros(n, 1))
        vector_res = max(vector_res, ctx.mnorm((v - W[:, k]) / e2 - corr, 1))
    bound = 4 * e2 * scale
    digits = -ctx.log10(value_res / max(abs(f) for f in first))
    return value_res, bound, vector_res, bound * ctx.mnorm(M, 1) / min(gaps), len(null), float(digits)


def _columns(ctx, A, cols):
    """The sub-matrix of A formed by the columns ``cols`` (in that order)."""
    out = ctx.zeros(A.rows, len(cols))
    for new, old in enumerate(cols):
        for r in range(A.rows):
            out[r, new] = A[r, old]
    return out


def trace_bound_defect(size: int = 4) -> sp.Expr:
    """``tr(HKH) - (1/N) Σ_{a≠b} (1 - K_ab)`` for symbolic symmetric K with unit diagonal (Gaussian Grams)."""
    K = gram.symmetric_gram(size)
    K = K - sp.diag(*K.diagonal()) + sp.eye(size)
    off = sum(1 - K[p, q] for p in range(size) for q in range(size) if p != q)
    return sp.expand(gram.double_centering(K).trace() - off / size)


def claims() -> list[ClaimResult]:
    """Verdicts for Eq. 15 and Theorem 3."""
    mismatches = residual_mismatches()
    split = split_defect()
    constant = constant_term_residue()
    eq15 = ClaimResult(
        "Eq. 15", "exact split + series (sympy)", verdict(not mismatches and split == 0 and constant == 0),
        "σ_X²HK_GH = L + HGH exactly; G = ε²D²/8 - ε⁴D³/48 + O(ε⁶) entrywise, so "
        "K̄_G = ε²(K̄_lin + ε²·HD^{∘2}H/8 - ε⁴·HD^{∘3}H/48 + ...)")
    first = first_order_residual()
    null = null_split_defect()
    value_res, value_bound, vector_res, vector_bound, multiplicity, digits = numeric_first_order()
    trace = trace_bound_defect()
    lower, _ = taylor_sandwich(sp.Rational(1, 2))  # includes 1 - e^{-u} ≤ u
    ok = (first == sp.zeros(*first.shape) and null == 0 and value_res <= value_bound
          and vector_res <= vector_bound and trace == 0 and lower)
    theorem3 = ClaimResult(
        "Theorem 3", "symbolic first-order perturbation + mp eigensystems (N=6, d=3, σ=2^20, dps 60)", verdict(ok),
        f"shift w^TMw, correction Σ w_j^TMw/(λ_i-λ_j) w_j, null space splits as eig(P₀MP₀); mp agrees to "
        f"{digits:.0f} digits (residual {float(value_res):.1e} ≤ {float(value_bound):.1e}); "
        f"null multiplicity {multiplicity}: 'no repeated eigenvalues' fails for N ≥ d+2, conclusion holds; "
        "λ_i ≤ tr K̄_G ≤ (N-1)ρ²/2σ² for all σ")
    return [eq15, theorem3]


if __name__ == "__main__":
    raise SystemExit(report(claims()))
