"""Repeated eigenvalues forced by a symmetry of the data (issue 24, Build 2c).

Claim. If a row permutation P and an orthogonal Q satisfy P X = X Q, then P commutes with H K_G(σ) H for every
σ and with L = X_c X_cᵀ; for a dihedral group acting so, every eigenvalue of the isotypic component of a
2-dimensional irreducible ψ has even multiplicity, and that component has dimension 2⟨χ, ψ⟩ (χ = fixed-point
count). Checked here:

* symbolically on a generic D₄ orbit {g·(a, b)} ⊂ R² (a, b, σ_X symbols): P_g D P_gᵀ = D for the generators,
  hence P_g K_G P_gᵀ = K_G entrywise (K_G = exp(−D/2σ_X²)), P_g H = H P_g, and P_g L P_gᵀ = L;
* the D₄ character table is orthonormal (exact rationals) and the regular representation (a free orbit) holds
  ψ₁ with multiplicity 2, an orbit of 4 once: the counts the certificate of
  :mod:`precise_kpca.asymptotics.symmetry` uses;
* Schur's step symbolically: a matrix commuting with the two ψ₁ matrices ρ(r) = [[0, −1], [1, 0]],
  ρ(s) = diag(1, −1) is a scalar multiple of I₂ (solve the linear commutation equations), so within the ψ₁
  component every commuting symmetric matrix is B ⊗ I₂ and its eigenvalues are doubled.
"""
from __future__ import annotations

import sympy as sp

from .result import ClaimResult, report, verdict

a, b, sx = sp.symbols("a b sigma_X", positive=True)


def _orbit():
    """The 8 points of a generic D₄ orbit in the order g·(a, b), g = r^k s^e, and the generators as maps."""
    rot = lambda p: (-p[1], p[0])  # noqa: E731
    ref = lambda p: (p[0], -p[1])  # noqa: E731
    points = []
    p = (a, b)
    for _ in range(4):
        points += [p, ref(p)]
        p = rot(p)
    return points, rot, ref


def _permutation(points, move) -> sp.Matrix:
    n = len(points)
    P = sp.zeros(n, n)
    for i, p in enumerate(points):
        q = move(p)
        P[points.index(q), i] = 1  # column i → row of the image: (P X)_image = x_i Q
    return P


def commutation() -> tuple[bool, str]:
    """P D Pᵀ = D, P K_G Pᵀ = K_G, P H = H P and P L Pᵀ = L for the rotation and the reflection."""
    points, rot, ref = _orbit()
    n = len(points)
    X = sp.Matrix([[x, y] for x, y in points])
    D = sp.Matrix(n, n, lambda i, j: (X[i, 0] - X[j, 0]) ** 2 + (X[i, 1] - X[j, 1]) ** 2)
    K = D.applyfunc(lambda v: sp.exp(-v / (2 * sx**2)))
    H = sp.eye(n) - sp.ones(n, n) / n
    L = H * X * X.T * H
    ok = True
    for move in (rot, ref):
        P = _permutation(points, move)
        ok &= (P * D * P.T - D).expand() == sp.zeros(n, n)
        ok &= (P * K * P.T - K).applyfunc(sp.simplify) == sp.zeros(n, n)
        ok &= P * H == H * P
        ok &= (P * L * P.T - L).applyfunc(sp.expand) == sp.zeros(n, n)
    return bool(ok), f"generic orbit of (a, b), N = {n}: D, K_G(σ_X), H, L all commute with both generators"


# D₄ classes: e, r², {r, r³}, {s, sr²}, {sr, sr³}; sizes 1, 1, 2, 2, 2
CLASS_SIZES = (1, 1, 2, 2, 2)
CHARACTERS = {
    "trivial": (1, 1, 1, 1, 1), "sign": (1, 1, 1, -1, -1), "r-1,s+1": (1, 1, -1, 1, -1),
    "r-1,s-1": (1, 1, -1, -1, 1), "psi1": (2, -2, 0, 0, 0),
}


def orthonormality(characters=CHARACTERS) -> tuple[bool, str]:
    """⟨χ_i, χ_j⟩ = δ_ij over D₄ (exact)."""
    names = list(characters)
    ok = all(sp.Rational(sum(c * x * y for c, x, y in zip(CLASS_SIZES, characters[p], characters[q])), 8)
             == (1 if p == q else 0) for p in names for q in names)
    return ok, "5 irreducible characters of D4, exact inner products"


def orbit_multiplicities(characters=CHARACTERS) -> tuple[bool, str]:
    """ψ₁ occurs twice in a free orbit (χ = (8,0,0,0,0)) and once in orbits of 4 on an axis or a diagonal."""
    psi = characters["psi1"]
    free = (8, 0, 0, 0, 0)
    axis = (4, 0, 0, 2, 0)  # an axis point is fixed by one of s, sr² ...
    diagonal = (4, 0, 0, 0, 2)  # ... a diagonal point by one of sr, sr³
    mult = [sp.Rational(sum(c * x * y for c, x, y in zip(CLASS_SIZES, chi, psi)), 8) for chi in (free, axis, diagonal)]
    return mult == [2, 1, 1], f"multiplicity of psi1: free orbit {mult[0]}, axis {mult[1]}, diagonal {mult[2]}"


def schur_scalar() -> tuple[bool, str]:
    """The commutant of ψ₁ is the scalars: M ρ(g) = ρ(g) M for g = r, s forces M = c·I₂."""
    m = sp.symbols("m0:4")
    M = sp.Matrix(2, 2, m)
    r = sp.Matrix([[0, -1], [1, 0]])
    s = sp.Matrix([[1, 0], [0, -1]])
    equations = list(M * r - r * M) + list(M * s - s * M)
    solution = sp.solve(equations, m, dict=True)[0]
    reduced = M.subs(solution)
    ok = reduced[0, 1] == 0 and reduced[1, 0] == 0 and sp.simplify(reduced[0, 0] - reduced[1, 1]) == 0
    return bool(ok), "M r = r M and M s = s M solve to M = c I2"


def claims() -> list[ClaimResult]:
    rows = []
    for label, check, method in (
        ("Issue 24: symmetry commutes with every Gaussian Gram", commutation, "symbolic generic D4 orbit"),
        ("Issue 24: D4 characters", orthonormality, "exact character inner products"),
        ("Issue 24: psi1 multiplicity per orbit type", orbit_multiplicities, "exact character inner products"),
        ("Issue 24: Schur (ties within psi1 component)", schur_scalar, "sympy solve of commutation equations"),
    ):
        ok, evidence = check()
        rows.append(ClaimResult(label, method, verdict(ok), evidence))
    return rows


if __name__ == "__main__":
    raise SystemExit(report(claims()))
