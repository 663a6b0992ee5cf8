"""An independent reference for Theorem 3's σ → ∞ limits: the first-order formulas evaluated densely in mpmath.

Nothing here shares code with :mod:`precise_kpca.asymptotics`: L = −HDH/2 and E₁ = H D^{∘2} H/8 are formed
entrywise from X (float64 entries are read exactly) in a private mpmath context, L is diagonalized by
``mpmath.eigsy`` at that precision, and the formulas are applied as written:

* eigenvalue: max(max over tie clusters J of |eig(W_Jᵀ E₁ W_J)|, λ_max(P₀E₁P₀)) / (d_X² λ_1);
* eigenprojection of a group g: ‖Y_g‖₂/d_X², column i of Y_g = Σ_{j∉g, λ_j≠0} w_j (w_jᵀE₁w_i)/(λ_i − λ_j)
  + P₀E₁w_i/λ_i, aggregated over Algorithm 1's groups.

Eigenvalues whose difference is below 10^(10−dps)·λ_1 count as equal (ties) or as zero. eigsy's eigenvectors carry
errors up to about 10^(−dps)·λ_1/gap, so :attr:`Reference.accuracy` (the relative accuracy of the limits) is taken
as 10^(10−dps)·(λ_1/g)², g the smallest gap of the nonzero spectrum to its neighbours and to 0, and 10 digits for the
roundings of eigsy's iterations and the sums (observed: 3 at dps 80 on three points).
"""
from __future__ import annotations

import mpmath

from .eigsy_reference import eigsy_descending


class Reference:
    """First-order data of X at ``dps`` digits (see the module docstring).

    Attributes
    ----------
    ctx : mpmath.MPContext
    values : list of mpf
        Nonzero eigenvalues of L, descending.
    clusters : list of (int, int)
        Runs of equal nonzero eigenvalues.
    accuracy : mpf
        Relative accuracy of the limits (module docstring).
    """

    def __init__(self, X, dps: int, *, drop_null: bool = False):
        self.ctx = ctx = mpmath.MPContext()
        ctx.dps = dps
        self.drop_null = drop_null
        n, d = X.shape
        x = [[ctx.mpf(float(v)) for v in row] for row in X]
        sq = [[ctx.fsum((x[i][k] - x[j][k]) ** 2 for k in range(d)) for j in range(n)] for i in range(n)]
        h = ctx.eye(n) - ctx.ones(n, n) / n
        dm = ctx.matrix(sq)
        self.L = -h * dm * h / 2
        self.E = h * ctx.matrix([[v * v for v in row] for row in sq]) * h / 8
        self.d_x2 = _median_distance(ctx, sq) ** 2
        values, vectors = eigsy_descending(ctx, self.L)
        tol = ctx.mpf(10) ** (10 - dps) * abs(values[0])
        self.values = [v for v in values if v > tol]
        self.W = [ctx.matrix(w) for w in vectors[:len(self.values)]]
        self.n = n
        self.null = ctx.eye(n) - sum((w * w.T for w in self.W), ctx.zeros(n, n))
        self.clusters, start = [], 0
        for i in range(1, len(self.values) + 1):
            if i == len(self.values) or self.values[i - 1] - self.values[i] > tol:
                self.clusters.append((start, i))
                start = i
        tops = [self.values[a] for a, _ in self.clusters]
        smallest = min(tops[-1:] + [tops[i] - tops[i + 1] for i in range(len(tops) - 1)])
        self.accuracy = ctx.mpf(10) ** (10 - dps) * (self.values[0] / smallest) ** 2

    def coupling(self, j: int, i: int):
        return (self.W[j].T * self.E * self.W[i])[0, 0]

    def null_top(self):
        """λ_max(P₀E₁P₀)."""
        null_block = self.null * self.E * self.null
        return max(self.ctx.eigsy((null_block + null_block.T) / 2, eigvals_only=True))

    def eigenvalue_limit(self):
        ctx = self.ctx
        top = ctx.mpf(0)
        for a, z in self.clusters:
            block = ctx.matrix([[self.coupling(j, i) for i in range(a, z)] for j in range(a, z)])
            top = max([top] + [abs(v) for v in ctx.eigsy(block, eigvals_only=True)])
        if not self.drop_null:
            top = max(top, self.null_top())
        return top / (self.d_x2 * self.values[0])

    def groups(self, k: int, tau=1e-6):
        groups, start = [], 0
        while start < k:
            stop = start
            while stop < k and abs((self.values[stop] - self.values[start]) / self.values[start]) < tau:
                stop += 1
            groups.append((start, stop))
            start = stop
        return groups

    def splits_a_tie(self, k: int) -> bool:
        return any(a < stop < z for a, z in self.clusters for _, stop in self.groups(k))

    def group_coefficient(self, start: int, stop: int):
        """‖Y_g‖₂ for g = [start, stop)."""
        ctx = self.ctx
        columns = []
        for i in range(start, stop):
            y = ctx.zeros(self.n, 1)
            for j in range(len(self.values)):
                if not start <= j < stop:
                    y += self.W[j] * (self.coupling(j, i) / (self.values[i] - self.values[j]))
            if not self.drop_null:
                y += self.null * self.E * self.W[i] / self.values[i]
            columns.append(y)
        gram = ctx.matrix([[(a.T * b)[0, 0] for b in columns] for a in columns])
        return ctx.sqrt(max(ctx.eigsy(gram, eigvals_only=True)))

    def eigenprojection_limit(self, k: int, aggregate: str = "mean"):
        values = [self.group_coefficient(s, t) / self.d_x2 for s, t in self.groups(k)]
        return max(values) if aggregate == "max" else self.ctx.fsum(values) / len(values)


def _median_distance(ctx, sq):
    """The median of all N² entries of the distance matrix (the ``median="full"`` convention)."""
    distances = sorted(ctx.sqrt(v) for row in sq for v in row)
    count = len(distances)
    if count % 2:
        return distances[count // 2]
    return (distances[count // 2 - 1] + distances[count // 2]) / 2
