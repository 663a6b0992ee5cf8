"""The tests' independent eigensystem reference: ``mpmath``'s ``eigsy`` (Jacobi rotations; nothing of precise_kpca)
in a private context. Every test that compares with an mp eigensystem (values and vectors) of a whole matrix takes
it from here."""
from __future__ import annotations

import mpmath
import numpy as np


def eigsy_descending(ctx, rows) -> tuple[list, list]:
    """Eigenvalues (descending) and unit eigenvectors (a list of columns, each a list) by ``ctx.eigsy``.

    Parameters
    ----------
    ctx : mpmath.MPContext
        The private context, at the reference's precision.
    rows : sequence of sequences, or a ``ctx`` matrix
        The symmetric matrix; each entry is read as a ``ctx`` number (exact for floats, ints and ``ctx``'s own mpf:
        the caller rounds anything else once).
    """
    E, Q = ctx.eigsy(ctx.matrix(rows))
    n = len(rows)
    order = sorted(range(n), key=lambda i: -E[i])
    return [E[i] for i in order], [[Q[r, i] for r in range(n)] for i in order]


def reference(A: np.ndarray, dps: int):
    """(context, eigenvalues descending, sign-normalised unit eigenvectors) from mpmath.eigsy at ``dps``.

    Each vector's largest-magnitude entry (first on ties) is positive, the convention of
    :func:`precise_kpca.numerics.eigen.fix_signs`.
    """
    ctx = mpmath.MPContext()
    ctx.dps = dps
    values, vectors = eigsy_descending(ctx, [[ctx.mpf(x) for x in row] for row in A])
    signed = []
    for q in vectors:
        big = max(range(len(q)), key=lambda i: (abs(q[i]), -i))
        signed.append([x if q[big] > 0 else -x for x in q])
    return ctx, values, signed
