"""Eq. 7, Lemma 1 (double centering is an isometry of the feature embedding) and the Note after it.

General N, two ways:

* structural: ``H (e_n - e_m) = e_n - e_m`` (a KroneckerDelta sum), and H is symmetric, so
  ``(e_n-e_m)^T H K H (e_n-e_m) = (e_n-e_m)^T K (e_n-e_m)``, which is Eq. 6 for symmetric K;
* the paper's bookkeeping: Eq. 7 entries through row sums R, column sums C and total T, inserted in Eq. 5;
  the defect vanishes once K = K^T (C = R).

Explicit fully symbolic N = 2..6 on top. The Note: with single centering Eq. 5 changes by
``(R_n - R_m)/N`` — nonzero unless the two row sums agree (K = [[3,1],[1,5]]: 5 instead of 6).
"""
from __future__ import annotations

import sympy as sp

from . import gram
from .indexsum import C, K, R, T, N, Entry, centering, i, identity, index_sum, j, m, n, sandwich, symmetrize
from .result import REFUTED, VERIFIED, ClaimResult, report, verdict

EXPLICIT_SIZES = range(2, 7)
NOTE_EXAMPLE = ((3, 1), (1, 5))


def eq7_paper(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """Eq. 7 as printed: K_ab - R_a/N - C_b/N + T/N^2."""
    return K[a, b] - R(a) / N - C(b) / N + T / N**2


def eq7_defect(claimed: Entry = eq7_paper) -> sp.Expr:
    """(HKH)_ij minus the claimed entry formula, general N (zero iff the formula is right)."""
    return sp.expand(sandwich(centering, centering, i, j) - claimed(i, j))


def difference_image(operator: Entry) -> sp.Expr:
    """``(A (e_n - e_m))_i - (e_n - e_m)_i`` for the N x N operator with entries ``operator``, general N."""
    diff = lambda a: sp.KroneckerDelta(a, n) - sp.KroneckerDelta(a, m)  # noqa: E731
    return sp.expand(index_sum(operator(i, j) * diff(j), j) - diff(i))


def distance_defect(left: Entry, right: Entry) -> sp.Expr:
    """Eq. 5 distance in ``A K B`` minus that in K, general N, for symmetric K (through R and T)."""
    dist = lambda A: A(n, n) + A(m, m) - 2 * A(n, m)  # noqa: E731
    centered = lambda a, b: sandwich(left, right, a, b)  # noqa: E731
    return symmetrize(dist(centered) - dist(lambda a, b: K[a, b]))


def explicit_defects(center: gram.Centering, sizes=EXPLICIT_SIZES) -> dict[int, int]:
    """Number of pairs whose Eq. 5 distance changes under ``center``, per N, for fully symbolic symmetric K."""
    return {size: len(gram.distance_defects(gram.symmetric_gram(size), center)) for size in sizes}


def note_example(center: gram.Centering) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]:
    """For the Note's K: Eq. 5 distance in K; in center(K) with K_nm, with K_mn; and the quadratic form.

    The quadratic form ``(e_1 - e_2)^T center(K) (e_1 - e_2)`` is what Eq. 5 computes for a symmetric matrix.
    """
    K2 = sp.Matrix(NOTE_EXAMPLE)
    A = center(K2)
    diff = sp.Matrix([1, -1])
    quadratic = (diff.T * A * diff)[0, 0]
    return gram.sq_distance(K2, 0, 1), gram.sq_distance(A, 0, 1), gram.sq_distance(A.T, 0, 1), quadratic


def claims() -> list[ClaimResult]:
    """Verdicts for Eq. 7, Lemma 1 and the Note."""
    results = []
    eq7 = eq7_defect()
    results.append(ClaimResult(
        "Eq. 7", "KroneckerDelta sums, general N", verdict(eq7 == 0),
        f"(HKH)_ij - [K_ij - R_i/N - C_j/N + T/N^2] = {eq7}"))

    fixes = difference_image(centering)
    general = distance_defect(centering, centering)
    explicit = explicit_defects(gram.double_centering)
    holds = fixes == 0 and general == 0 and not any(explicit.values())
    results.append(ClaimResult(
        "Lemma 1", "KroneckerDelta sums (general N) + explicit symbolic K, N=2..6", verdict(holds),
        f"H(e_n-e_m)-(e_n-e_m) = {fixes}; general-N Eq.5 defect of HKH = {general}; "
        f"pairs changed for N=2..6: {sum(explicit.values())}"))

    row = distance_defect(identity, centering)
    col = distance_defect(centering, identity)
    single = explicit_defects(gram.row_centering, sizes=(2, 3))
    before, after, after_t, quadratic = note_example(gram.row_centering)
    breaks = row != 0 and col != 0 and all(single.values()) and after != before
    results.append(ClaimResult(
        "Lemma 1, Note", "general-N defect + K=[[3,1],[1,5]]",
        VERIFIED if breaks else REFUTED,
        f"Eq.5 defect of KH = {row}, of HK = {col} (general N); K=[[3,1],[1,5]]: {before} -> {after} "
        f"(or {after_t} with K_mn); yet (e_1-e_2)^T KH (e_1-e_2) = {quadratic}: only Eq. 5 on a non-symmetric KH fails"))
    return results


if __name__ == "__main__":
    raise SystemExit(report(claims()))
