"""Test Grams for the tests and benchmarks: centered Gaussian Grams built in exact fixed point.

``A = H K H`` (``H = I - 11ᵀ/N``, ``K = exp(-D / (2 σ_X²))``, ``σ_X = d_X · 2**sigma_exp2``, ``d_X`` the median of
the full N×N distance matrix, diagonal zeros included), rounded once to ``bits + 16`` bits below ``max |A|`` and
accurate to about ``2**-bits`` relative to ``max |A|``:

- :func:`centered_gaussian_gram` returns it as mpf entries (small N: every mpf is a Python object);
- :func:`centered_gaussian_gram_fixed` returns the same values as an ``FixedMatrix`` built row block by row
  block (no mpf objects; N = 5404 at 416 bits in minutes, 4.4 GB of digits), optionally on several processes.

X (float64) is read exactly; squared distances are exact integers (python-flint ``fmpz_mat``); ``K - 1 =
expm1(-u)`` is summed by Horner's rule in binary fixed point with 128 guard bits (gmpy2 integers), so no float64
intermediate enters; the centering is exact (``N² H (K - 1) H`` in integers). It is the core's construction, kept
here (not under ``numerics``: no computing route uses it) so the eigen refinement can be tested and benchmarked
on its own.
"""
from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import gmpy2
import mpmath
import numpy as np
from mpmath import libmp

from .arith.fixed import FixedMatrix, chunked_digit_bits
from .numerics.eigen_fixed import integer_rows_to_fixed
from .numerics.exact import ExactData, _squared_distances
from .numerics.exact_geometry import ExactEccentricity

_BLOCK_ENTRIES = 1 << 18  # entries of one row block of expm1 evaluations (a few seconds of work each)
_MAX_U = 32  # largest |x_i - x_j|²/2σ_X² the Taylor series takes (its rounding grows like exp(u))


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
    gram = _CenteredGram(X, sigma_exp2, bits, workers=1)
    out = np.empty((gram.n, gram.n), dtype=object)
    for rows, ints in gram.rounded_rows():
        out[rows] = np.array([mpmath.mp.make_mpf(libmp.from_man_exp(int(v), gram.exp2)) for v in ints],
                             dtype=object).reshape(-1, gram.n)
    return out


def centered_gaussian_gram_fixed(X: np.ndarray, *, sigma_exp2: int = 10, bits: int = 256,
                                 digit_bits: int | None = None, workers: int = 1) -> FixedMatrix:
    """The matrix of :func:`centered_gaussian_gram` (the same values) as an exact ``FixedMatrix``.

    Parameters
    ----------
    X : ndarray of float64, shape (N, d)
    sigma_exp2, bits : int
        As in :func:`centered_gaussian_gram`.
    digit_bits : int, optional
        Digit width of the result (default ``chunked_digit_bits(N)``, the refinement's own: no re-splitting).
    workers : int
        Processes evaluating ``expm1`` (the dominant cost: about 9 µs per entry of the upper triangle).

    Returns
    -------
    FixedMatrix, shape (N, N)
        ``error_bound`` 0: the rounded matrix is the one represented (its distance to the exact Gram is the
        ``2**-bits`` relative accuracy above, not a rounding of this representation).
    """
    gram = _CenteredGram(X, sigma_exp2, bits, workers=workers)
    b = chunked_digit_bits(gram.n) if digit_bits is None else int(digit_bits)
    return integer_rows_to_fixed(gram.rounded_rows(), gram.n, gram.n, gram.exp2, gram.max_abs, digit_bits=b)


@dataclass(frozen=True)
class _Horner:
    """What one worker needs to evaluate ``K - 1`` at ``2**-F`` on a block of the upper triangle."""

    mantissas: np.ndarray  # N×d Python integers (object array), X = mantissas 2**e
    c_fix: int  # 2**(2e) / (2 σ_X²) at 2**-F
    F: int
    terms: int


_horner: _Horner | None = None  # set in each worker (and in-process for one worker)


def _set_horner(h: _Horner) -> None:
    global _horner
    _horner = h


def _kdev_block(start: int, stop: int) -> list:
    """``K - 1`` at ``2**-F`` (gmpy2 integers, floor-rounded Horner), rows ``[start, stop)``, columns ``[start, N)``."""
    h = _horner
    D = _squared_distances(h.mantissas[start:stop], h.mantissas[start:])  # exact, in units of 2**(2e)
    one = gmpy2.mpz(1) << h.F
    out = []
    for d in D.ravel():
        u = gmpy2.mpz(d) * h.c_fix  # exact D times c at 2**-F
        # expm1(-u) = -u (1 - u/2 (1 - u/3 (...))); the nested floors equal the floor by k 2**F
        acc = one
        for k in range(h.terms, 1, -1):
            acc = one - ((u * acc) >> h.F) // k
        out.append(-((u * acc) >> h.F))
    return out


class _CenteredGram:
    """``N² H (K - 1) H`` in exact integers at ``2**-F`` and its rounding to the output grid, by row blocks."""

    def __init__(self, X, sigma_exp2: int, bits: int, workers: int):
        X = np.asarray(X, dtype=float)
        n = len(X)
        self.n = n
        exact = ExactData.from_float64(X)
        geometry = ExactEccentricity(X, "full")
        median_sq = geometry.median_sq
        ctx = mpmath.MPContext()
        ctx.prec = bits + 96
        roots = [ctx.sqrt(v) for v in median_sq]
        d_med = ctx.ldexp(roots[0] if len(roots) == 1 else (roots[0] + roots[1]) / 2, exact.exp2)
        # u = D c with c = 2**(2e) / (2 σ_X²); F fractional bits, enough for c itself to carry bits + 128
        # significant bits (centering cancels about log2(max u / max |A|) of them)
        c = ctx.ldexp(1, 2 * exact.exp2) / (2 * (d_med * ctx.ldexp(1, sigma_exp2)) ** 2)
        F = bits + 128 - int(ctx.mag(c))
        c_fix = int(ctx.nint(ctx.ldexp(c, F)))
        u_max = geometry.diameter_sq * c_fix  # the largest u: the diameter's
        # Taylor terms until u_max**k / k! drops below 2**-F. Each Horner step floors once (≤ 1 unit of 2**-F),
        # amplified by at most exp(u_max) ≤ 2**47 at the end: inside the 128 guard bits
        if u_max > _MAX_U << F:
            raise ValueError(f"sigma_exp2={sigma_exp2}: |x_i - x_j|²/2σ_X² reaches {float(ctx.ldexp(u_max, -F)):.3g} "
                             f"> {_MAX_U}; this builder sums expm1's Taylor series, for wide bandwidths only")
        terms = 2
        while (u_max ** terms) >> (F * (terms - 1)) >= math.factorial(terms):
            terms += 1
        horner = _Horner(exact.mantissas, c_fix, F, terms)
        rows_per_block = max(1, _BLOCK_ENTRIES // n)
        starts = list(range(0, n, rows_per_block))
        kdev = np.empty((n, n), dtype=object)
        if workers <= 1:
            _set_horner(horner)
            blocks = (_kdev_block(s, min(s + rows_per_block, n)) for s in starts)
            self._fill(kdev, starts, blocks, rows_per_block)
            _set_horner(None)
        else:
            with ProcessPoolExecutor(max_workers=workers, initializer=_set_horner, initargs=(horner,)) as pool:
                blocks = pool.map(_kdev_block, starts, [min(s + rows_per_block, n) for s in starts])
                self._fill(kdev, starts, blocks, rows_per_block)
        self.kdev = kdev
        self.row = kdev.sum(axis=1)
        self.total = self.row.sum()
        self._rows_per_block = rows_per_block
        # one rounding, to bits + 16 bits below the largest entry of N² H (K - 1) H
        num_max = max(max(abs(v) for v in num.ravel().tolist()) for _, num in self._centered_rows())
        shift = max(0, num_max.bit_length() - (bits + 16))
        self._den = n * n << shift
        self.exp2 = shift - F
        # the largest rounded |entry| (rounding is monotone)
        self.max_abs = (2 * num_max + self._den) // (2 * self._den)

    def _fill(self, kdev, starts, blocks, rows_per_block):
        n = self.n
        for s, block in zip(starts, blocks):
            e = min(s + rows_per_block, n)
            b = np.empty(len(block), dtype=object)
            b[:] = block
            b = b.reshape(e - s, n - s)
            kdev[s:e, s:] = b
            kdev[s:, s:e] = b.T

    def _centered_rows(self):
        n = self.n
        for s in range(0, n, self._rows_per_block):
            rows = slice(s, min(s + self._rows_per_block, n))
            yield rows, n * n * self.kdev[rows] - n * self.row[rows, None] - n * self.row[None, :] + self.total

    def rounded_rows(self):
        """``(rows, integers)``: the entries ``Z 2**exp2`` of a row block, row-major, rounded to nearest."""
        den = self._den
        for rows, num in self._centered_rows():
            yield rows, ((2 * num + den) // (2 * den)).ravel().tolist()


def gaussian_data(n: int, d: int = 5, seed: int = 0) -> np.ndarray:
    """Standard normal data ``rng.normal(size=(n, d))`` as in the benchmarks."""
    return np.random.default_rng(seed).normal(size=(n, d))
