"""Test matrices for the eigen refinement: centered Gaussian Grams built in exact fixed point.

``centered_gaussian_gram(X, sigma_exp2=10, bits=...)`` returns ``A = H K H`` (``H = I - 11ᵀ/N``,
``K = exp(-D / (2 σ_X²))``, ``σ_X = d_X · 2**sigma_exp2``, ``d_X`` the median of the full N×N distance
matrix, diagonal zeros included) as mpf entries rounded to ``bits + 16`` bits below ``max |A|`` and accurate to about ``2**-bits``
relative to ``max |A|``.
X (float64) is read exactly; squared distances are exact integers; ``K - 1 = expm1(-u)`` is summed
in binary fixed point, so no float64 intermediate enters. It is the core's construction, kept here so
the eigen module can be tested and benchmarked on its own.
"""
from __future__ import annotations

import flint
import mpmath
import numpy as np
from mpmath import libmp


def _exact_integers(X: np.ndarray) -> tuple[list[list[int]], int]:
    ratios = [[float(v).as_integer_ratio() for v in row] for row in X]
    den = max(d for row in ratios for _, d in row)
    return [[n * (den // d) for n, d in row] for row in ratios], -(den.bit_length() - 1)


def centered_gaussian_gram(X: np.ndarray, *, sigma_exp2: int = 10, bits: int = 256) -> np.ndarray:
    """Centered Gaussian Gram ``H K H`` of the rows of ``X`` as an N×N object array of mpf.

    Parameters
    ----------
    X : ndarray of float64, shape (N, d)
    sigma_exp2 : int
        ``σ = 2**sigma_exp2`` in units of the median distance.
    bits : int
        Accuracy of the entries relative to ``max |A|`` (fixed-point arithmetic carries 128 guard bits).

    Returns
    -------
    ndarray of mpmath mpf, shape (N, N)
    """
    n = len(X)
    M, e = _exact_integers(np.asarray(X, dtype=float))
    Mf = flint.fmpz_mat(M)
    gram = Mf * Mf.transpose()
    g = np.array([int(v) for v in gram.entries()], dtype=object).reshape(n, n)
    norms = np.diag(g).copy()
    D = norms[:, None] + norms[None, :] - 2 * g  # |x_i - x_j|² = D * 2**(2e), exact
    # median of the full distance matrix (sqrt is monotone: take the middle squared distances)
    flat = sorted(D.ravel().tolist())
    mid = len(flat) // 2
    ctx = mpmath.MPContext()
    ctx.prec = bits + 96
    if len(flat) % 2:
        d_med = ctx.sqrt(flat[mid])
    else:
        d_med = (ctx.sqrt(flat[mid - 1]) + ctx.sqrt(flat[mid])) / 2
    d_med = ctx.ldexp(d_med, e)
    # u = D * c with c = 2**(2e) / (2 σ_X²); F fractional bits of fixed point, enough for c itself to
    # carry bits + 128 significant bits (centering cancels about log2(max u / max |A|) of them)
    c = ctx.ldexp(1, 2 * e) / (2 * (d_med * ctx.ldexp(1, sigma_exp2)) ** 2)
    F = bits + 128 - int(ctx.mag(c))
    c_fix = int(ctx.nint(ctx.ldexp(c, F)))
    one = 1 << F
    u = (D * c_fix)  # fixed point at 2**-F
    # expm1(-u) = -u (1 - u/2 (1 - u/3 (...))) by Horner in fixed point
    umax = max(u.ravel().tolist())
    terms = 2
    while (umax ** terms) >> (F * (terms - 1)) > 0 and terms < 200:
        terms += 1
    acc = np.full((n, n), one, dtype=object)
    for k in range(terms, 0, -1):
        acc = one - (u * acc) // (k * one) if k > 1 else (u * acc) // one
    kdev = -acc  # K - 1 at 2**-F
    row = kdev.sum(axis=1)
    tot = row.sum()
    num = n * n * kdev - n * row[:, None] - n * row[None, :] + tot  # N² · H (K-1) H, exact
    # one rounding, to bits + 16 bits below the largest entry
    top = max(abs(v) for v in num.ravel().tolist()).bit_length()
    shift = max(0, top - (bits + 16))
    den = n * n << shift
    A = (2 * num + den) // (2 * den)
    return np.array(
        [mpmath.mp.make_mpf(libmp.from_man_exp(int(v), shift - F)) for v in A.ravel()], dtype=object
    ).reshape(n, n)


def gaussian_data(n: int, d: int = 5, seed: int = 0) -> np.ndarray:
    """Standard normal data ``rng.normal(size=(n, d))`` as in the benchmarks."""
    return np.random.default_rng(seed).normal(size=(n, d))
