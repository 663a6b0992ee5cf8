"""Pairwise-distance geometry of a data set (paper Eq. 4 and Theorem 2).

Two readings of "median distance between rows" exist:

* ``median="full"`` (default, paper-compatible): the median of all N² entries of the distance matrix,
  the N diagonal zeros included. This reproduces the paper's Table I ρ values.
* ``median="pairs"``: the median of the N(N−1)/2 distances between distinct rows.

The full median is smaller: the N zeros push it down by about N/2 positions among N² entries.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import pdist, squareform

from ..backends import Backend, Float64Backend
from ..validation import check_data
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
        d_X, the median pairwise distance (see module docstring for ``median``).
    diameter : float
        Largest pairwise distance.
    min_distance : float
        Smallest distance between two rows (0 when X has duplicate rows).
    min_nonzero_distance : float
        Smallest nonzero distance between two rows.
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

    float64: direct differences (SciPy ``pdist``), relative error a few ulps per entry, no Gram-based
    cancellation. mp: exact integers from :class:`ExactData`, each rounded once to the working precision.
    """
    if isinstance(backend, Float64Backend):
        return squareform(pdist(X, "sqeuclidean"))
    exact = exact or ExactData.from_float64(X)
    return backend.from_scaled_integers(exact.squared_distance_integers, 2 * exact.exp2)


def median_distance(sq: np.ndarray, backend: Backend, median: str = "full", exact: ExactData | None = None):
    """Median pairwise distance d_X from a squared-distance matrix, as a backend scalar.

    With ``exact`` the order statistics are found among the exact integers (cheaper to sort than mpf, and
    exact) and only the chosen entries are converted.

    Raises
    ------
    ValueError
        If the median is 0 (all rows identical, or at least half of the entries are duplicate pairs).
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
    backend = Float64Backend()
    sq = squared_distances(X, backend)
    d_x = float(median_distance(sq, backend, check_median(median)))
    pair_values = np.sqrt(sq[np.triu_indices(X.shape[0], 1)])
    diameter = float(pair_values.max())
    min_distance = float(pair_values.min())
    nonzero = pair_values[pair_values > 0]
    min_nonzero = float(nonzero.min())
    return Geometry(
        n=X.shape[0],
        d=X.shape[1],
        median_distance=d_x,
        diameter=diameter,
        min_distance=min_distance,
        min_nonzero_distance=min_nonzero,
        eccentricity=diameter / d_x,
        eta=diameter / min_distance if min_distance > 0 else math.inf,
        eta_nonzero=diameter / min_nonzero,
        median=median,
    )
