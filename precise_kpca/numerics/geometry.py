"""Pairwise-distance geometry of a data set (paper Eq. 4 and Theorem 2).

Two readings of "median distance between rows" exist:

* ``median="full"`` (default, paper-compatible): the median of all N² entries of the distance matrix,
  the N diagonal zeros included. This reproduces the paper's Table I ρ values.
* ``median="pairs"``: the median of the N(N−1)/2 distances between distinct rows.

The full median is smaller: the N zeros push it down by about N/2 positions among N² entries.

Any float64 magnitude: :func:`geometry` works on X·2^s (:func:`precise_kpca.validation.scale_exponent`, exact), so
data near 1e307 or 1e-310 get finite, nonzero squared distances; the distances are scaled back exactly. A zero
median is reported as duplicate rows only when the rows are exactly equal.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from scipy.spatial.distance import pdist, squareform

from ..backends import Backend, Float64Backend, MPBackend
from ..validation import check_data, scale_exponent
from .exact import ExactData

MEDIANS = ("full", "pairs")


@dataclass(frozen=True)
class Geometry:
    """Distance geometry of X (floats, correctly computed to float64 accuracy).

    Attributes
    ----------
    n, d : int
        Examples and attributes.
    median_distance : float
        d_X, the median pairwise distance (see module docstring for ``median``). The four distances are floats,
        or exact ``mpmath.mpf`` where the value lies outside the float64 range (data near 1e308 in many
        dimensions).
    diameter : float
        Largest pairwise distance.
    min_distance : float
        Smallest distance between two rows (0 when X has duplicate rows).
    min_nonzero_distance : float
        Smallest nonzero distance between two rows (exact for pairs whose float64 squared distance underflows).
    eccentricity : float
        ρ = diameter / d_X (paper Eq. 4).
    eta : float
        diameter / min_distance (``inf`` when X has duplicate rows).
    eta_nonzero : float
        diameter / min_nonzero_distance: the η of the paper's Theorem 2.
    median : str
        Which median was used.
    """

    n: int
    d: int
    median_distance: float
    diameter: float
    min_distance: float
    min_nonzero_distance: float
    eccentricity: float
    eta: float
    eta_nonzero: float
    median: str


def check_median(median: str) -> str:
    if median not in MEDIANS:
        raise ValueError(f"median must be one of {MEDIANS}, got {median!r}")
    return median


def squared_distances(X: np.ndarray, backend: Backend, exact: ExactData | None = None) -> np.ndarray:
    """Pairwise squared distances |x_i − x_j|², shape (N, N), in the backend's arithmetic.

    Backends with :attr:`~precise_kpca.backends.Backend.exact_input` (mp): exact integers from :class:`ExactData`,
    each rounded once to the working precision. Others (float64): direct differences (SciPy ``pdist``), relative
    error a few ulps per entry, no Gram-based cancellation.
    """
    if not backend.exact_input:
        return squareform(pdist(X, "sqeuclidean"))
    exact = exact or ExactData.from_float64(X)
    return backend.from_scaled_integers(exact.squared_distance_integers, 2 * exact.exp2)


def median_distance(sq: np.ndarray, backend: Backend, median: str = "full", exact: ExactData | None = None, *,
                    rows: np.ndarray | None = None):
    """Median pairwise distance d_X from a squared-distance matrix, as a backend scalar.

    With ``exact`` the order statistics are found among the exact integers (cheaper to sort than mpf, and
    exact) and only the chosen entries are converted. ``rows``: the data behind a float64 ``sq``, so that a zero
    median is blamed on duplicate rows only where the rows are exactly equal.

    Raises
    ------
    ValueError
        If the median is 0 (all rows identical, or at least half of the entries are duplicate pairs), or the
        float64 squared distances underflowed (rows that differ by less than ~2^-511 of the data's magnitude).
    """
    check_median(median)
    n = sq.shape[0]
    upper = np.triu_indices(n, 1)
    if exact is not None:
        order = np.argsort(exact.squared_distance_integers[upper], kind="stable")
        pairs = sq[upper][order]
    else:
        pairs = np.sort(sq[upper])
    if median == "full":
        count = n * n

        def element(k):  # k-th smallest of the N² entries: N zeros, then each pair value twice
            return backend.scalar(0) if k < n else pairs[(k - n) // 2]
    else:
        count = len(pairs)

        def element(k):
            return pairs[k]

    if count % 2:
        value = backend.sqrt(element(count // 2))
    else:
        value = (backend.sqrt(element(count // 2 - 1)) + backend.sqrt(element(count // 2))) / 2
    if not value > 0:
        duplicates = int(sum(1 for p in pairs if not p > 0))
        if rows is not None and duplicates != _duplicate_pairs(rows):
            raise ValueError(
                f"the median pairwise distance of X underflows float64: {duplicates - _duplicate_pairs(rows)} pairs "
                "of distinct rows differ by less than ~2^-511 of the data's largest magnitude; use backend='mp'")
        if duplicates == len(pairs):
            raise ValueError(
                f"all {n} rows of X are identical: the median pairwise distance is 0, so the eccentricity "
                "rho and the standardized bandwidth are undefined"
            )
        raise ValueError(
            f"the median pairwise distance (median={median!r}) is 0: {duplicates} of {len(pairs)} pairs of "
            "rows are duplicates. Remove duplicate rows, use median='pairs', or pass standardized=False"
        )
    return value


def _duplicate_pairs(rows: np.ndarray) -> int:
    """Pairs of exactly equal rows."""
    _, counts = np.unique(rows, axis=0, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def geometry(X, *, median: str = "full") -> Geometry:
    """Median distance, diameter, minimum distances, eccentricity ρ and η of a data set.

    Parameters
    ----------
    X : array_like, shape (N, d)
        Data, one example per row (float64; N >= 3).
    median : {"full", "pairs"}
        ``"full"`` (paper-compatible, diagonal zeros included) or ``"pairs"``.

    Returns
    -------
    Geometry
    """
    X = check_data(X)
    s = scale_exponent(X)
    scaled = np.ldexp(X, s) if s else X  # exact; distances scale by 2^s
    backend = Float64Backend()
    sq = squared_distances(scaled, backend)
    rows, cols = np.triu_indices(X.shape[0], 1)
    pair_sq = sq[rows, cols]
    small = np.flatnonzero(pair_sq < _NORMAL)  # duplicates, or squares that underflowed
    equal = _rows_equal(X, rows[small], cols[small])
    if equal.all():
        d_x = float(median_distance(sq, backend, check_median(median)))
    else:  # some float64 squares lost bits: the median from the exact squared distances
        exact = ExactData.from_float64(scaled)
        mp = MPBackend(20)
        d_x = float(median_distance(mp.from_scaled_integers(exact.squared_distance_integers, 2 * exact.exp2), mp,
                                    check_median(median), exact))
    values = np.sqrt(pair_sq)
    diameter = float(values.max())
    normal = values[pair_sq >= _NORMAL]
    # the exact distances of distinct rows whose float64 squares underflowed (true units)
    tiny = [_exact_distance(X[i], X[j]) for i, j in zip(rows[small][~equal], cols[small][~equal])]
    min_nonzero = min(([_unscaled(float(normal.min()), s)] if normal.size else []) + tiny)
    min_distance = 0.0 if equal.any() else min_nonzero
    ratio = _MP.mpf(_unscaled(diameter, s))
    return Geometry(
        n=X.shape[0],
        d=X.shape[1],
        median_distance=_unscaled(d_x, s),
        diameter=_unscaled(diameter, s),
        min_distance=min_distance,
        min_nonzero_distance=min_nonzero,
        eccentricity=diameter / d_x,
        eta=float(ratio / min_distance) if min_distance > 0 else math.inf,
        eta_nonzero=float(ratio / min_nonzero),
        median=median,
    )


_NORMAL = 2.0**-1022  # smallest normal float64: squares below it lost bits (or are duplicates' zeros)
_MP = mpmath.MPContext()
_MP.prec = 64
_CHUNK = 1 << 16


def _rows_equal(X: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Whether X[rows[t]] == X[cols[t]] exactly, in chunks (the pairs can be many)."""
    out = np.empty(len(rows), dtype=bool)
    for start in range(0, len(rows), _CHUNK):
        part = slice(start, start + _CHUNK)
        out[part] = np.all(X[rows[part]] == X[cols[part]], axis=1)
    return out


def _exact_distance(a: np.ndarray, b: np.ndarray):
    """|a − b| from the exact rationals, rounded once to 64 bits (a float where it is a normal float64)."""
    square = sum((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(a, b))
    return _as_float(_MP.sqrt(_MP.mpf(square.numerator) / square.denominator))


def _unscaled(value: float, s: int):
    """value·2^-s: a float inside the normal float64 range, else the exact mpf."""
    return _as_float(_MP.ldexp(_MP.mpf(value), -s)) if s else value


def _as_float(x):
    as_float = float(x)
    return as_float if _NORMAL <= abs(as_float) < math.inf or x == 0 else mpmath.mp.make_mpf(x._mpf_)
