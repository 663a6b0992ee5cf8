"""Theorem 1 (Gaussian CKA) with L = K_lin: the rate is O(σ⁻⁴), and no data-independent constant C exists.

With A = σ_X² H K_G H = L + E (Eq. 15), x = ⟨E, L⟩, y = ‖E‖², ℓ = ‖L‖ (Frobenius):

    1 − CKA(K_G, K_lin) = p² ℓ / (a (a ℓ + c)),  a² = ℓ² + 2x + y,  c = ℓ² + x,  p² = y − x²/ℓ²   (identity)

and E = ε² E₁ + O(ε⁴) (ε = 1/σ_X) gives 1 − CKA = ε⁴ ‖E₁,⊥‖² / (2ℓ²) + O(ε⁶): the residual of Eq. 3 is O(σ⁻⁴)
for L = K_lin (the angle between A and L is O(σ⁻²), and 1 − cos is its square over two). So for each data set
C(X) = sup_{σ ≥ ρ/2} (1 − CKA)/(ρ/σ)² is finite (a continuous function of σ that tends to 0).

Counterexample to a uniform C. X_m = m unit vectors e_1..e_m ∪ m copies of the origin (N = 2m, d = m). The
squared distances are 2 (e_i, e_j), 1 (e_i, 0), 0 (0, 0); with q = e^{−1/(2σ_X²)} every Gram is a 2×2 block
matrix of blocks αI + βJ (J all ones), an algebra closed under products, so CKA has a closed form in (m, q).
(1 − CKA)/(ρ/σ)² does not involve d_X (ρ/σ = diam/σ_X), and with diam² = 2, q = e^{−s²} for ρ/σ = 2s.
Sympy: CKA_m(q) → 0 as m → ∞ for every q ∈ (0, 1). Hence at ρ/σ = 2s the ratio tends to 1/(4s²): above any C
once s < 1/(2√C), inside the theorem's range ρ/σ ≤ 2. The paper's spot check (≤ 0.0135 on 24 sets) is a
property of those sets.

C(X) over the continuum (the lemma behind :func:`precise_kpca.measures.cka_enclosed.cka_upper_over`). With
g(u) = (e^{−u} − 1 + u)/u the uncentered residual is G_ij = (D_ij/2)·g(D_ij t/2), t = 1/σ_X². Then
g′(u) = (1 − e^{−u}(1 + u))/u² and 0 ≤ g′ ≤ 1/2 on u > 0: the numerator k(u) = 1 − e^{−u}(1 + u) has k(0) = 0
and k′ = u e^{−u} ≥ 0; and h(u) = u²/2 − k(u) has h(0) = 0 and h′ = u(1 − e^{−u}) ≥ 0. So on t ∈ [t_b, t_a]
the entries move by at most D_ij²(t_a − t_b)/8, monotonically: one perturbation bound covers the whole range.
"""
from __future__ import annotations

import sympy as sp

from .result import REFUTED, ClaimResult, report, verdict

m, q, s = sp.symbols("m q s", positive=True)
x, y, ell, x1, y1, eps = sp.symbols("x y ell x1 y1 epsilon", positive=True)


def identity_defect() -> sp.Expr:
    """1 − c/(aℓ) minus p²ℓ/(a(aℓ + c)); zero iff the cancellation-free form holds."""
    a = sp.sqrt(ell**2 + 2 * x + y)
    c = ell**2 + x
    p2 = y - x**2 / ell**2
    return sp.simplify(1 - c / (a * ell) - p2 * ell / (a * (a * ell + c)))


def leading_order(order: int = 4) -> sp.Expr:
    """ε^order coefficient of 1 − CKA for E = ε²E₁ (x = ε²x1, y = ε⁴y1) minus (y1 − x1²/ℓ²)/(2ℓ²)."""
    a = sp.sqrt(ell**2 + 2 * eps**2 * x1 + eps**4 * y1)
    value = 1 - (ell**2 + eps**2 * x1) / (a * ell)
    series = sp.series(value, eps, 0, order + 1).removeO()
    lower = [sp.simplify(series.coeff(eps, k)) for k in range(order)]
    if any(c != 0 for c in lower):
        return sp.Integer(1)
    return sp.simplify(series.coeff(eps, order) - (y1 - x1**2 / ell**2) / (2 * ell**2))


# -- the family X_m: block matrices [[αI + βJ, ...], ...] with m×m blocks ----------------------------------
def _mul(A, B):
    out = [[None, None], [None, None]]
    for i in range(2):
        for j in range(2):
            alpha = beta = 0
            for k in range(2):
                (a1, b1), (a2, b2) = A[i][k], B[k][j]
                alpha += a1 * a2
                beta += a1 * b2 + b1 * a2 + m * b1 * b2  # J² = mJ
            out[i][j] = (sp.expand(alpha), sp.expand(beta))
    return out


def _inner(A, B):
    """Frobenius ⟨A, B⟩ = Σ tr(A_ik B_ki) with tr I = tr J = m, tr J² = m²."""
    total = 0
    for i in range(2):
        for k in range(2):
            (a1, b1), (a2, b2) = A[i][k], B[k][i]
            total += m * (a1 * a2 + a1 * b2 + b1 * a2) + m**2 * b1 * b2
    return sp.expand(total)


def family_cka() -> sp.Expr:
    """CKA(K_G, K_lin) of X_m in closed form (m, q)."""
    c = -1 / (2 * m)
    H = [[(1, c), (0, c)], [(0, c), (1, c)]]  # I − J_{2m}/(2m)
    K = [[(1 - q**2, q**2), (0, q)], [(0, q), (0, 1)]]
    G = [[(1, 0), (0, 0)], [(0, 0), (0, 0)]]
    A, L = _mul(_mul(H, K), H), _mul(_mul(H, G), H)
    return _inner(A, L) / sp.sqrt(_inner(A, A) * _inner(L, L))


def family_ratio(mm: int, ss) -> sp.Expr:
    """(1 − CKA)/(ρ/σ)² of X_mm at ρ/σ = 2·ss, exactly (q = e^{−ss²})."""
    return ((1 - family_cka()) / (4 * s**2)).subs({m: mm, q: sp.exp(-s**2)}).subs(s, ss)


def family_limit() -> sp.Expr:
    """lim_{m→∞} CKA_m(q) (0 refutes a uniform constant)."""
    return sp.limit(family_cka(), m, sp.oo)


u = sp.symbols("u", positive=True)


def residual_slope() -> bool:
    """g′ = k/u² with k(0) = 0, k′ = u e^{−u} ≥ 0, and h = u²/2 − k with h(0) = 0, h′ = u(1 − e^{−u}) ≥ 0."""
    g = (sp.exp(-u) - 1 + u) / u
    k = 1 - sp.exp(-u) * (1 + u)
    h = u**2 / 2 - k
    return (sp.simplify(sp.diff(g, u) - k / u**2) == 0 and k.subs(u, 0) == 0
            and sp.simplify(sp.diff(k, u) - u * sp.exp(-u)) == 0 and h.subs(u, 0) == 0
            and sp.simplify(sp.diff(h, u) - u * (1 - sp.exp(-u))) == 0)


def claims() -> list[ClaimResult]:
    rate = identity_defect() == 0 and leading_order() == 0
    limit = family_limit()
    witness = family_ratio(2000, sp.Rational(1, 8))
    return [
        ClaimResult("Theorem 1 (L = K_lin), rate", "sympy identity and ε-series", verdict(rate, sharper=True),
                    "1 − CKA = p²ℓ/(a(aℓ+c)) exactly; = ε⁴‖E₁⊥‖²/(2ℓ²) + O(ε⁶): O(σ⁻⁴), not only O(σ⁻²)"),
        ClaimResult("Theorem 1 (L = K_lin), uniform C", "closed form on X_m (m unit vectors + m origins)", REFUTED,
                    f"lim_(m→∞) CKA_m(q) = {limit}; at ρ/σ = 1/4, m = 2000: (1−CKA)/(ρ/σ)² = "
                    f"{sp.N(witness, 6)} (paper's spot check 0.0135)", asserted=False),
        ClaimResult("Theorem 1, C(X) certified over σ ≥ ρ/2", "sympy derivative identities and signs",
                    verdict(residual_slope()),
                    "G(σ) = (D/2)∘g(Dt/2) moves monotonically with 0 ≤ g′ ≤ 1/2: ‖E(σ) − E(σ_b)‖ ≤ ‖D∘D‖(t_a − t_b)/8 "
                    "on [σ_a, σ_b], so branch and bound encloses sup_σ (1 − CKA)/(ρ/σ)²"),
    ]


if __name__ == "__main__":
    raise SystemExit(report(claims()))
