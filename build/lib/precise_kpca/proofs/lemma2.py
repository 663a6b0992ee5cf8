"""Lemma 2 (H K_E H = H K_lin H) and Corollary 1 (Euclidean and linear embeddings are isometric).

General N and dimension: ``|x_a - x_b|^2 = s_a + s_b - 2 x_a.x_b`` with ``s_a = |x_a|^2`` (per coordinate, so
for a symbolic number of coordinates), hence ``-D/2 = X X^T - (s 1^T + 1 s^T)/2``, and double centering kills
both rank-one parts because ``H 1 = 0`` (KroneckerDelta sums). Explicit symbolic points (N, d) = (3, 2),
(4, 3) on top. Corollary 1: Eq. 5 gives ``|x_a - x_b|^2`` for both K_E and K_lin, in every dimension.
"""
from __future__ import annotations

from itertools import combinations

import sympy as sp

from . import gram
from .indexsum import Entry, centering, i, index_sum, j, k, l
from .result import ClaimResult, report, verdict

EXPLICIT_SHAPES = ((3, 2), (4, 3))
EUCLIDEAN_SCALE = sp.Rational(-1, 2)  # Eq. 2b: E(x, y) = -|x - y|^2 / 2

x = sp.IndexedBase("x")
s = sp.IndexedBase("s")
c, dim = sp.symbols("c d", integer=True, positive=True)


def coordinate_sum(summand: sp.Expr) -> sp.Expr:
    """``sum_{c=1..d} summand`` over a symbolic number d of coordinates."""
    return sp.Sum(summand, (c, 1, dim))


def distance_expansion_defect() -> sp.Expr:
    """``|x_a-x_b|^2 - (|x_a|^2 + |x_b|^2 - 2 x_a.x_b)`` for symbolic dimension (linearity of the sum)."""
    a, b = i, j
    lhs = (x[a, c] - x[b, c]) ** 2
    rhs = x[a, c] ** 2 + x[b, c] ** 2 - 2 * x[a, c] * x[b, c]
    return coordinate_sum(sp.expand(lhs - rhs)).doit()


def rank_one_residue(left: Entry, right: Entry) -> tuple[sp.Expr, sp.Expr]:
    """Entries (i, j) of ``A (s 1^T) B`` and ``A (1 s^T) B``, general N; both zero means A, B kill them."""
    col = index_sum(left(i, k) * s[k] * right(l, j), k, l)
    row = index_sum(left(i, k) * s[l] * right(l, j), k, l)
    return sp.simplify(col), sp.simplify(row)


def symbolic_points(size: int, d: int) -> sp.Matrix:
    """N x d matrix of independent real symbols."""
    return sp.Matrix(size, d, lambda a, b: sp.Symbol(f"x_{a}{b}", real=True))


def sq_distance_matrix(X: sp.Matrix) -> sp.Matrix:
    """D_ab = |x_a - x_b|^2 computed by direct differences."""
    return sp.Matrix(X.rows, X.rows, lambda a, b: sum((X[a, q] - X[b, q]) ** 2 for q in range(X.cols)))


def explicit_defect(size: int, d: int, scale=EUCLIDEAN_SCALE, center: gram.Centering = gram.double_centering):
    """``center(scale * D) - center(X X^T)`` for symbolic points; the zero matrix iff Lemma 2 holds."""
    X = symbolic_points(size, d)
    return (center(scale * sq_distance_matrix(X)) - center(X * X.T)).applyfunc(sp.expand)


def general_distance_defects(scale=EUCLIDEAN_SCALE) -> tuple[sp.Expr, sp.Expr]:
    """Eq. 5 distance of K_E and of K_lin minus |x_a - x_b|^2, symbolic dimension (both zero: Corollary 1).

    Every term is a sum over the d coordinates, so each difference is one coordinate sum of a summand.
    """
    a, b = i, j
    sq = lambda p, q: (x[p, c] - x[q, c]) ** 2  # noqa: E731
    dot = lambda p, q: x[p, c] * x[q, c]  # noqa: E731
    euclid = scale * (sq(a, a) + sq(b, b) - 2 * sq(a, b)) - sq(a, b)
    linear = dot(a, a) + dot(b, b) - 2 * dot(a, b) - sq(a, b)
    return coordinate_sum(sp.expand(euclid)).doit(), coordinate_sum(sp.expand(linear)).doit()


def corollary1_defects(size: int, d: int, scale=EUCLIDEAN_SCALE) -> list[sp.Expr]:
    """Eq. 5 distances of ``scale * D`` minus those of X X^T, all pairs (nonzero entries only)."""
    X = symbolic_points(size, d)
    E, L = scale * sq_distance_matrix(X), X * X.T
    diffs = (sp.expand(gram.sq_distance(E, a, b) - gram.sq_distance(L, a, b))
             for a, b in combinations(range(size), 2))
    return [e for e in diffs if e != 0]


def claims() -> list[ClaimResult]:
    """Verdicts for Lemma 2 and Corollary 1."""
    expansion = distance_expansion_defect()
    col, row = rank_one_residue(centering, centering)
    explicit = [explicit_defect(size, d) == sp.zeros(size, size) for size, d in EXPLICIT_SHAPES]
    lemma2 = ClaimResult(
        "Lemma 2", "KroneckerDelta sums (general N, d) + symbolic points (N,d)=(3,2),(4,3)",
        verdict(expansion == 0 and col == 0 and row == 0 and all(explicit)),
        f"D = s1^T + 1s^T - 2XX^T (defect {expansion}); H(s1^T)H = {col}, H(1s^T)H = {row}; "
        f"explicit H(-D/2)H = HXX^TH: {all(explicit)}")
    euclid, linear = general_distance_defects()
    defects = [corollary1_defects(size, d) for size, d in EXPLICIT_SHAPES]
    cor1 = ClaimResult(
        "Corollary 1", "Eq. 5 on K_E and K_lin (general d) + explicit points + Lemma 1",
        verdict(euclid == 0 and linear == 0 and not any(defects)),
        f"Eq.5 distance minus |x_a-x_b|^2: K_E {euclid}, K_lin {linear} (symbolic d); "
        f"explicit nonzero defects: {sum(map(len, defects))}; Lemma 1 carries it to the centered Grams")
    return [lemma2, cor1]


if __name__ == "__main__":
    raise SystemExit(report(claims()))
