"""Eigenpairs of the exact integer Gram S to a chosen grid, across its exactly repeated eigenvalues.

S (:class:`~precise_kpca.numerics.linear_exact.ExactLinear`'s ``small``) is an integer symmetric matrix whose
repeated eigenvalues are known exactly: 0 of multiplicity size − rank (exact integer rank) and the ties of the
integer characteristic polynomial (:func:`~precise_kpca.certify.linear_enclosure.tied_linear_eigenvalues_cached`).

Method: Ogita–Aishima's refinement (RefSyEv; Ogita & Aishima 2018, Japan J. Indust. Appl. Math. 35) with the
clusters given exactly. With R = I − X̂ᵀX̂, T = X̂ᵀSX̂ and λ̃_i = T_ii/(1 − R_ii), X̂ ← X̂(I + Ẽ) where
Ẽ_ij = (T_ij − λ̃_j (X̂ᵀX̂)_ij)/(λ̃_j − λ̃_i) between clusters (Newton) and Ẽ_ij = R_ij/2 inside one (and on the
diagonal). Inside an exactly repeated eigenvalue μ the block T_JJ is μ(I − R_JJ) up to second order in X̂'s error,
so the orthogonalisation alone converges quadratically to the eigenspace — and any orthonormal basis of it is an
eigenbasis. The general refinement (:mod:`precise_kpca.numerics.eigen_refine`) does not know such clusters are
exact, rotates them by float64 eigensolves and stalls (splice, 287×287 with a 93-fold zero: 2^-98 of the 2^-256
asked; its mpmath eigsy fallback ran over 1150 s). Distinct eigenvalues closer than float64 separates (within
2^-40 ‖S‖) form a cluster too, split by a Rayleigh–Ritz step each iteration (the pencil of its exact g×g products,
solved by mpmath at twice the grid), Ogita & Aishima's clustered variant (2019).

Every product is exact (python-flint ``fmpz_mat``); Ẽ is the exact rational rounded to a grid finer than the next
basis, so convergence is quadratic until the grid ``bits`` asked for. Nothing here is trusted: the caller
certifies the pairs (residual and orthogonality, exactly).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import flint
import mpmath
import numpy as np

from ..arith.dyadic import Dyadic
from ..errors import NoConvergence

_START_BITS = 64  # float64 eigenvectors on the grid 2^-64 (their own error is 2^-53 of ‖S‖/gap)
_SEPARATED_BITS = 40  # eigenvalues within 2^-40 ‖S‖ in float64 form one cluster: Newton from float64 cannot split them
_GRID_GUARD = 16  # bits of Ẽ, λ̃ and the Ritz rotations beyond the next basis's grid
_MAX_ITERATIONS = 16  # quadratic from 2^-13: 2^-4000 after 9; more means a cluster is not what was assumed


def refine_exact_clusters(small: flint.fmpz_mat, rank: int, ties: Callable[[], Sequence],
                          bits: int) -> tuple[Dyadic, list]:
    """Approximate eigenpairs of S, refined to about 2^-(bits + 24) of an orthonormal eigenbasis.

    Parameters
    ----------
    small : flint.fmpz_mat, shape (n, n)
        The exact symmetric S, positive semidefinite.
    rank : int
        rank(S), exact: eigenvalues rank..n−1 are exactly 0.
    ties : callable
        Returns the exact runs [a, z) of equal nonzero eigenvalues (0-based, descending); called only where
        float64 sees two nonzero eigenvalues within 2^-40 ‖S‖ (an integer characteristic polynomial costs
        seconds at n = 287).
    bits : int
        Grid wanted.

    Returns
    -------
    (Dyadic, list of Fraction)
        Q̂ (n×n, columns in descending order of λ̂) and λ̂ (exactly 0 beyond the rank), each rounded to
        ``bits + 16`` significant bits of its largest entry.

    Raises
    ------
    NoConvergence
        The corrections stopped shrinking (not seen: a cluster float64 does not see would do it).
    """
    n = small.nrows()
    entries = [int(v) for v in small.entries()]
    shift = max(0, max(abs(v) for v in entries).bit_length() - 64)  # float64 holds S·2^-shift (no overflow)
    w, V = np.linalg.eigh(np.array([float(v >> shift) for v in entries]).reshape(n, n))
    order = np.argsort(-w, kind="stable")
    w, V = w[order], V[:, order]
    scale = float(np.max(np.abs(w)))
    clusters, rotated = _clusters(w, rank, ties, scale * 2.0**-_SEPARATED_BITS)
    cluster = np.empty(n, dtype=int)
    for a, z in clusters:
        cluster[a:z] = a
    apart = cluster[:, None] != cluster[None, :]
    gaps = np.abs(w[:, None] - w[None, :])[apart]
    min_gap = float(np.min(gaps)) if gaps.size else scale
    below_gap = max(0, -math.floor(math.log2(min_gap)) - shift)  # λ̃'s grid this far below Ẽ's: its error / gap
    final = bits + 24 + 8 + math.ceil(math.log2(n)) // 2  # the rounding noise of R is √n grid steps
    p = _START_BITS
    X = flint.fmpz_mat(n, n, [int(v) for v in np.rint(np.ldexp(V, p)).ravel()])
    previous = 0
    for _ in range(_MAX_ITERATIONS):
        if rotated:  # Rayleigh–Ritz inside the clusters float64 cannot split; the exact products of the result
            X = _ritz_rotated(X, *_products(small, X), rotated, p)
        g, t = _products(small, X)
        e_bits = min(final, 2 * p) + _GRID_GUARD  # the next grid is at most twice the current one
        E, size_bits, lam = _correction(g, t, apart, e_bits, e_bits + below_gap, p)
        if size_bits <= previous:
            raise NoConvergence(f"the linear eigenvectors' corrections stopped shrinking at 2^-{previous} "
                                f"({bits} bits asked)")
        if size_bits >= bits + 24:  # Ẽ measures X̂'s distance to an orthonormal eigenbasis
            break
        previous = size_bits
        # Newton squares the error (times a constant: splice 2^8..2^15, not its ‖S‖/gap = 2^21): a grid that fine
        nxt = min(final, 2 * p, max(p, 2 * size_bits))
        X, p = _updated(X, E, p, e_bits, nxt), nxt
    else:
        raise NoConvergence(f"the linear eigenvectors reached 2^-{previous} of {bits} bits in {_MAX_ITERATIONS} "
                            "iterations")
    rounded = Dyadic(flint.fmpz_mat(n, 1, [int(v) for v in lam]), -(e_bits + below_gap)).rounded(bits + 16)
    values = [rounded.entry(i, 0) if i < rank else Fraction(0) for i in range(n)]
    descending = sorted(range(n), key=lambda i: -values[i])
    if descending != list(range(n)):
        X = X * flint.fmpz_mat(n, n, [int(descending[j] == i) for i in range(n) for j in range(n)])
        values = [values[i] for i in descending]
    return Dyadic(X, -p).rounded(bits + 16), values


def _clusters(w: np.ndarray, rank: int, ties: Callable[[], Sequence], close: float):
    """Intervals of positions (float64 eigenvalues ``w`` descending) that Newton must not split, and those of them
    that need a Rayleigh–Ritz rotation: the zero eigenvalue's, the exact ties' and float64's near ties, merged
    where they overlap; a cluster that is one exactly repeated eigenvalue needs no rotation (any orthonormal basis of
    the eigenspace is an eigenbasis)."""
    n = len(w)
    near = [(i, i + 2) for i in range(n - 1) if w[i] - w[i + 1] <= close]
    exact = [(rank, n)] if rank < n else []
    if any(z <= rank for _, z in near):  # a nonzero pair float64 cannot split: exactly tied?
        exact += list(ties())
    merged = []
    for a, z in sorted(near + exact):
        if merged and a < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], z))
        else:
            merged.append((a, z))
    runs = set(exact)
    rotated = [(a, z) for a, z in merged if (a, z) not in runs]
    singles = sorted(set(range(n)) - {i for a, z in merged for i in range(a, z)})
    return sorted(merged + [(i, i + 1) for i in singles]), rotated


def _products(small: flint.fmpz_mat, X: flint.fmpz_mat) -> tuple[np.ndarray, np.ndarray]:
    """g = 2^(2p) X̂ᵀX̂ and t = 2^(2p) X̂ᵀSX̂ (X̂ = 2^-p X), exact, as object arrays of ints."""
    n = X.nrows()
    return _objects(X.transpose() * X, n), _objects(X.transpose() * (small * X), n)


def _ritz_rotated(X: flint.fmpz_mat, g: np.ndarray, t: np.ndarray, rotated, p: int) -> flint.fmpz_mat:
    """X̂ with each cluster's columns replaced by its Ritz vectors (the pencil (t_JJ, g_JJ) solved by mpmath at
    twice the grid's bits), on the same grid."""
    ctx = mpmath.MPContext()
    ctx.prec = 2 * p + 64
    n = X.nrows()
    q_bits = p + _GRID_GUARD
    Q = flint.fmpz_mat(n, n)
    for i in range(n):
        Q[i, i] = 1 << q_bits
    unit = ctx.mpf(2) ** (-2 * p)
    for a, z in rotated:
        G = ctx.matrix([[ctx.mpf(int(v)) * unit for v in row] for row in g[a:z, a:z]])
        T = ctx.matrix([[ctx.mpf(int(v)) * unit for v in row] for row in t[a:z, a:z]])
        inverse = ctx.inverse(ctx.cholesky(G))  # L⁻¹ with G = L Lᵀ: L⁻¹ T L⁻ᵀ is symmetric
        values, W = ctx.eigsy(inverse * T * inverse.T)
        columns = sorted(range(z - a), key=lambda k: -values[k])
        rotation = inverse.T * W
        for i in range(z - a):
            for j, k in enumerate(columns):
                Q[a + i, a + j] = int(ctx.nint(ctx.ldexp(rotation[i, k], q_bits)))
    return _rounded(X * Q, q_bits)


def _objects(m: flint.fmpz_mat, n: int) -> np.ndarray:
    return np.array([int(v) for v in m.entries()], dtype=object).reshape(n, n)


def _correction(g: np.ndarray, t: np.ndarray, apart: np.ndarray, e_bits: int, lam_bits: int,
                p: int) -> tuple[flint.fmpz_mat, int, np.ndarray]:
    """2^e_bits Ẽ (rounded) from g = 2^(2p) X̂ᵀX̂ and t = 2^(2p) X̂ᵀSX̂, −log2 max |Ẽ| (to the bit), and the
    Rayleigh quotients λ̃ rounded to the grid 2^-lam_bits (as integers)."""
    n = len(g)
    two_p = 2 * p
    lam = np.array([_round_div(int(t[i, i]) << lam_bits, int(g[i, i])) for i in range(n)], dtype=object)
    den = (lam[None, :] - lam[:, None]) << two_p  # 2^(2p + lam_bits)(λ̃_j − λ̃_i)
    den[~apart] = 1
    num = ((t << lam_bits) - lam[None, :] * g) << e_bits  # 2^(2p + lam_bits + e_bits)(T_ij − λ̃_j G_ij)
    newton = (2 * num + den) // (2 * den)  # nearest of the quotient
    # R/2 inside a cluster and on the diagonal: (δ_ij − G_ij)/2
    half = ((np.diag(np.full(n, 1 << two_p, dtype=object)) - g) << e_bits)
    orth = (half + (1 << two_p)) >> (two_p + 1)
    E = np.where(apart, newton, orth)
    top = max(abs(int(v)) for v in E.ravel())
    size_bits = e_bits - top.bit_length() if top else e_bits
    return flint.fmpz_mat(n, n, [int(v) for v in E.ravel()]), size_bits, lam


def _round_div(a: int, b: int) -> int:
    return (2 * a + b) // (2 * b)


def _updated(X: flint.fmpz_mat, E: flint.fmpz_mat, p: int, e_bits: int, nxt: int) -> flint.fmpz_mat:
    """X̂(I + Ẽ) on the grid 2^-nxt (X̂ = 2^-p X, Ẽ = 2^-e_bits E), rounded to nearest."""
    return _rounded(X * (2**e_bits) + X * E, p + e_bits - nxt)


def _rounded(M: flint.fmpz_mat, shift: int) -> flint.fmpz_mat:
    """M·2^-shift rounded to nearest integers (shift > 0)."""
    half = flint.fmpz(1) << (shift - 1)
    return flint.fmpz_mat(M.nrows(), M.ncols(), [(v + half) >> shift for v in M.entries()])
