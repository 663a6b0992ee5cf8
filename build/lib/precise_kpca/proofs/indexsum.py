"""General-N matrix algebra with KroneckerDelta sums.

Entries of matrices built from the centering matrix ``H = I - 11^T/N`` are written as symbolic sums over a
symbolic index range ``1..N``; sympy evaluates the delta sums. Every free index is understood to lie in
``1..N``, which is what :func:`in_range` imposes on sympy's case split. Sums of an opaque matrix ``K`` are
replaced by row sums ``R(a)``, column sums ``C(b)`` and the total ``T`` (the bookkeeping of Eq. 7).
"""
from __future__ import annotations

from typing import Callable

import sympy as sp
from sympy.core.relational import GreaterThan

N = sp.Symbol("N", integer=True, positive=True)
i, j, k, l, n, m = sp.symbols("i j k l n m", integer=True, positive=True)
K = sp.IndexedBase("K")
R = sp.Function("R")  # row sum:    R(a) = sum_l K[a, l]
C = sp.Function("C")  # column sum: C(b) = sum_k K[k, b]
T = sp.Symbol("T")  # total:      T    = sum_{k,l} K[k, l]

Entry = Callable[[sp.Expr, sp.Expr], sp.Expr]


def centering(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """Entry (a, b) of H = I - 11^T / N."""
    return sp.KroneckerDelta(a, b) - 1 / N


def identity(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """Entry (a, b) of the identity."""
    return sp.KroneckerDelta(a, b)


def in_range(expr: sp.Expr) -> sp.Expr:
    """Resolve sympy's case split ``N >= index`` as true: every index lies in 1..N."""
    cases = {r: sp.true for r in expr.atoms(GreaterThan) if r.lhs == N}
    return expr.subs(cases)


def index_sum(summand: sp.Expr, *indices: sp.Symbol) -> sp.Expr:
    """``sum_{indices=1..N} summand`` evaluated (delta sums done, indices in range)."""
    limits = [(x, 1, N) for x in indices]
    return in_range(sp.Sum(sp.expand(summand), *limits).doit())


def _opaque_sum(s: sp.Sum) -> sp.Expr:
    """Replace one sum over K (or over already-replaced sums) by R, C or T."""
    (v, lo, hi), = s.limits
    if (lo, hi) != (1, N):
        raise ValueError(f"unexpected range in {s}")
    coeff, core = s.function.as_independent(v, as_Add=False)
    if isinstance(core, sp.Indexed) and core.base == K:
        a, b = core.indices
        if b == v and a != v:
            return coeff * R(a)
        if a == v and b != v:
            return coeff * C(b)
    if isinstance(core, sp.Function) and core.func in (R, C) and core.args == (v,):
        return coeff * T
    if isinstance(core, sp.Add):
        return sp.Add(*[_opaque_sum(sp.Sum(coeff * term, (v, 1, N))) for term in core.args])
    raise ValueError(f"cannot express {s} through row/column sums")


def opaque_sums(expr: sp.Expr) -> sp.Expr:
    """Rewrite every sum of K entries through row sums R, column sums C and the total T."""
    return sp.expand(expr.replace(lambda e: isinstance(e, sp.Sum), _opaque_sum))


def sandwich(left: Entry, right: Entry, a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """Entry (a, b) of ``A K B`` where A, B have entries ``left``, ``right``, through R, C, T."""
    summand = left(a, k) * K[k, l] * right(l, b)
    return opaque_sums(index_sum(summand, k, l))


def symmetrize(expr: sp.Expr) -> sp.Expr:
    """Impose K = K^T: column sums equal row sums and K[b, a] = K[a, b] (a before b in sort order)."""
    expr = expr.replace(lambda e: isinstance(e, sp.Function) and e.func == C, lambda e: R(*e.args))
    swap = {}
    for e in expr.atoms(sp.Indexed):
        if e.base == K:
            a, b = e.indices
            if sp.default_sort_key(b) < sp.default_sort_key(a):
                swap[e] = K[b, a]
    return sp.expand(expr.xreplace(swap))
