"""Independent eigensystem references for the refinement tests: mpmath.eigsy at a given precision."""
from __future__ import annotations

import mpmath
import numpy as np


def reference(A: np.ndarray, dps: int):
    """(context, eigenvalues descending, sign-normalised unit eigenvectors) from mpmath.eigsy at ``dps``.

    Each vector's largest-magnitude entry (first on ties) is positive, the convention of
    :func:`precise_kpca.numerics.eigen.fix_signs`.
    """
    ctx = mpmath.MPContext()
    ctx.dps = dps
    E, Q = ctx.eigsy(ctx.matrix([[ctx.mpf(x) for x in row] for row in A]))
    n = A.shape[0]
    order = sorted(range(n), key=lambda i: -E[i])
    vectors = []
    for j in order:
        q = [Q[i, j] for i in range(n)]
        big = max(range(n), key=lambda i: (abs(q[i]), -i))
        vectors.append([x if q[big] > 0 else -x for x in q])
    return ctx, [E[i] for i in order], vectors
