"""The first-order eigenprojection angle is ‖coupling‖/gap (issue 24, Build 1: the predictor's derivation).

For A(ε) = L + ε²E₁ with L = diag(λ₁, λ₂, 0) (λ₁ > λ₂ > 0) and a symmetric E₁ (symbols e_ij), the top
eigenvector's angle to e₁ is θ₁ = ε²·√(e₁₂²/(λ₁−λ₂)² + e₁₃²/λ₁²) + O(ε⁴) (sympy: tan²θ from the exact
eigenvector's series). So the first-order constant of a group is ‖coupling‖/gap (the reduced resolvent), the
σ → ∞ limit σ²·EigenDist = C_k of :mod:`precise_kpca.asymptotics.enclosed_limits` is a sum of such terms over the
top-k groups, and the dissonance ≈ C_k/σ² reaches O(1) — where the curve leaves its σ⁻² asymptote — at
σ² ≈ C_k/c: log2 onset = ½ log2 C_k + const (a scaling argument, not a theorem: the constant depends on how the
second-order term enters). Checked: the series coefficient, and that the ε⁴ coefficient of θ₁² grows like
1/gap³ (so the first-order regime ends at ε² ≈ gap/‖E₁‖, consistent with the onset scaling).
"""
from __future__ import annotations

import sympy as sp

from .result import ClaimResult, report, verdict

eps, l1, l2 = sp.symbols("epsilon lambda1 lambda2", positive=True)
e11, e12, e13, e22, e23, e33 = sp.symbols("e11 e12 e13 e22 e23 e33", real=True)


def _tan2_series(order: int = 6):
    """tan²θ₁ of the top eigenvector of diag(λ₁, λ₂, 0) + ε²E₁ as a series in ε (Rayleigh–Schrödinger)."""
    E = sp.Matrix([[e11, e12, e13], [e12, e22, e23], [e13, e23, e33]])
    L = sp.diag(l1, l2, 0)
    # v = e1 + ε² v1 + ε⁴ v2 with v ⊥-normalised (v[0] = 1); μ = λ₁ + ε² μ1 + ε⁴ μ2
    v1 = sp.Matrix([0, e12 / (l1 - l2), e13 / l1])
    mu1 = e11
    mu2 = (E * v1)[0]
    v2 = sp.Matrix([0, 0, 0])
    rhs = E * v1 - mu1 * v1 - mu2 * sp.Matrix([1, 0, 0])
    v2[1] = rhs[1] / (l1 - l2)
    v2[2] = rhs[2] / l1
    v = sp.Matrix([1, 0, 0]) + eps**2 * v1 + eps**4 * v2
    mu = l1 + eps**2 * mu1 + eps**4 * mu2
    residual = sp.expand((L + eps**2 * E) * v - mu * v)
    exact_to_order = all(sp.simplify(sp.series(r, eps, 0, 6).removeO()) == 0 for r in residual)
    tan2 = sp.expand(v[1] ** 2 + v[2] ** 2)
    return exact_to_order, sp.series(tan2, eps, 0, order + 1).removeO()


def first_order_angle() -> tuple[bool, str]:
    """θ₁² = ε⁴(e₁₂²/(λ₁−λ₂)² + e₁₃²/λ₁²) + O(ε⁶)."""
    ok, tan2 = _tan2_series()
    leading = sp.simplify(tan2.coeff(eps, 4) - (e12**2 / (l1 - l2) ** 2 + e13**2 / l1**2))
    lower = [sp.simplify(tan2.coeff(eps, k)) for k in range(4)]
    return ok and leading == 0 and all(c == 0 for c in lower), \
        "tan²θ₁ = ε⁴(e12²/(λ1−λ2)² + e13²/λ1²) + O(ε⁶): first-order angle = ‖coupling‖/gap"


def second_order_scale() -> tuple[bool, str]:
    """With e₁₃ = 0, the ε⁶ coefficient of tan²θ₁ is O(1/gap³): the expansion's ratio is ε²‖E₁‖/gap."""
    _, tan2 = _tan2_series()
    g = sp.Symbol("g", positive=True)
    c6 = sp.simplify(tan2.coeff(eps, 6).subs({e13: 0, l2: l1 - g}))
    growth = sp.limit(c6 * g**3, g, 0)
    return growth != 0 and sp.limit(c6 * g**4, g, 0) == 0, f"lim g³·[ε⁶] = {sp.factor(growth)} ≠ 0 (g = λ1 − λ2)"


def claims() -> list[ClaimResult]:
    rows = []
    for label, check in (("Issue 24: first-order angle = coupling/gap", first_order_angle),
                         ("Issue 24: second order scales as 1/gap^3", second_order_scale)):
        ok, evidence = check()
        rows.append(ClaimResult(label, "sympy perturbation series (3×3, symbolic E1)", verdict(ok), evidence))
    return rows


if __name__ == "__main__":
    raise SystemExit(report(claims()))
