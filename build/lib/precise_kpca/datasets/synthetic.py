"""Seeded synthetic data with controlled eccentricity ρ = diam/d_X and η = diam/(min nonzero distance).

All families start from a *unit-median Gaussian cloud*: points ``s·z`` with ``z ~ N(0, I_d)`` and
``s = 1/(√2·m_d)``, ``m_d`` the median of the χ distribution with d degrees of freedom. The distance of two such
points is ``s·√2·χ_d``, so the median pairwise distance d_X is 1 (up to sampling error ~1/√N, and the
N diagonal zeros of the full N×N median, which lower it by a relative ~1/N); for n = 500 the sample d_X is
within 4 % of 1 (d = 2) and within 1 % (d ≥ 10). Scales below are therefore in units of d_X. The cloud alone
has a modest eccentricity ρ₀ that shrinks with d (measured for n = 500: about 4.3 at d = 2, 2.2 at d = 10,
1.3 at d = 100) and an uncontrolled η.

Families (n rows, d columns, ``numpy.random.default_rng(seed)``):

* :func:`gaussian_with_outliers` -- k of the n points shifted by ``radius`` along one random unit direction:
  diam ≈ √(1 + radius²) + e with |e| ≲ √(2 ln(k n)/d) (the cloud's extent along that direction) for radius
  above ρ₀, and d_X ≈ 1 while 2k(n−k)/n² ≪ 1/2 (k ≤ n/20); so ρ ≈ √(1 + radius²) within that e plus the
  few per cent by which d_X deviates from 1, and ρ grows linearly in radius.
* :func:`near_duplicates` -- m points get a twin at distance δ: η = diam/δ ≈ ρ₀/δ (the minimum distance is δ
  once δ is below the cloud's own minimum distance), ρ ≈ ρ₀; δ = 0 gives exact duplicate rows (η = ∞ when the
  zero distance counts, as in ``precise_kpca.geometry``; the cloud's own η when only nonzero distances count).
* :func:`clusters` -- c ≥ 3 tight clusters of relative width ``spread`` on a regular simplex of side 1: most
  pairs lie between clusters, so d_X ≈ √(1 + spread²) and ρ ≈ 1 + O(spread) (low eccentricity), while
  η ≈ (1 + O(spread))/(spread·μ) with μ the unit-median cloud's minimum distance (η ∝ 1/spread).

The formulas are approximations for choosing parameters; compute the exact values with
``precise_kpca.geometry``.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import chi


def unit_median_scale(d: int) -> float:
    """Standard deviation s making the median distance of two N(0, s²·I_d) points equal to 1."""
    return 1.0 / (np.sqrt(2.0) * chi.median(d))


def gaussian(n: int, d: int, *, seed: int = 0) -> np.ndarray:
    """Unit-median Gaussian cloud.

    Parameters
    ----------
    n, d : int
        Rows (n ≥ 3) and columns (d ≥ 1).
    seed : int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray
        Shape (n, d), float64; median pairwise distance ≈ 1, ρ = ρ₀ (see the module notes).
    """
    _check(n, d)
    return unit_median_scale(d) * np.random.default_rng(seed).standard_normal((n, d))


def gaussian_with_outliers(n: int, d: int, *, radius: float, k: int = 1, seed: int = 0) -> np.ndarray:
    """Unit-median cloud whose last k rows are shifted by ``radius`` along one random unit direction.

    The k outliers keep their Gaussian offsets, so they are distinct (a far tight group, not a single point).

    Parameters
    ----------
    n, d : int
        Rows (n ≥ 3) and columns (d ≥ 1).
    radius : float
        Shift, in units of the median distance (≥ 0). For a target ρ > ρ₀ take ``radius = √(ρ² − 1)``.
    k : int
        Number of outliers, 1 ≤ k ≤ n/20 (so that the median stays ≈ 1).
    seed : int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray
        Shape (n, d), float64; ρ ≈ max(ρ₀, √(1 + radius²)).

    Raises
    ------
    ValueError
        Bad n, d, k or radius.
    """
    _check(n, d)
    _check_count("k", k, n, 20)
    _check_finite("radius", radius)
    rng = np.random.default_rng(seed)
    X = unit_median_scale(d) * rng.standard_normal((n, d))
    direction = rng.standard_normal(d)
    X[n - k:] += radius * direction / np.linalg.norm(direction)
    return X


def near_duplicates(n: int, d: int, *, delta: float, pairs: int = 1, seed: int = 0) -> np.ndarray:
    """Unit-median cloud of n − pairs points plus, for each of its first ``pairs`` rows, a twin at distance δ.

    The twin of row i differs from it in coordinate 0 only: ``x[0] + delta`` rounded to float64, so the twin
    distance is exactly ``fl(x[0] + δ) − x[0]`` = δ·(1 + O(ε·|x[0]|/δ)).

    Parameters
    ----------
    n, d : int
        Rows (n ≥ 3) and columns (d ≥ 1).
    delta : float
        Twin distance in units of the median distance (≥ 0; 0 gives exact duplicate rows).
    pairs : int
        Number of twins, 1 ≤ pairs ≤ n/2.
    seed : int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray
        Shape (n, d), float64, twins in the last ``pairs`` rows; η = diam/δ ≈ ρ₀/δ for 0 < δ below the
        cloud's own minimum distance, ρ ≈ ρ₀.

    Raises
    ------
    ValueError
        Bad n, d, pairs or delta.
    """
    _check(n, d)
    _check_count("pairs", pairs, n, 2)
    _check_finite("delta", delta)
    base = gaussian(n - pairs, d, seed=seed)
    twins = base[:pairs].copy()
    twins[:, 0] += delta
    return np.vstack([base, twins])


def clusters(n: int, d: int, *, spread: float, c: int = 4, seed: int = 0) -> np.ndarray:
    """c tight Gaussian clusters centred on the vertices of a regular simplex with unit side.

    Row i belongs to cluster ``i mod c``; centre j is ``e_j/√2`` (hence d ≥ c). Each cluster is a
    unit-median cloud scaled by ``spread``. With the same seed, the offsets are the same for every spread, so
    η·spread is nearly constant.

    Parameters
    ----------
    n, d : int
        Rows (n ≥ 3) and columns (d ≥ c).
    spread : float
        Median within-cluster distance relative to the centre distance (> 0).
    c : int
        Number of clusters, c ≥ 3 (so that most pairs are between clusters and d_X ≈ 1).
    seed : int
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray
        Shape (n, d), float64; ρ ≈ 1 + O(spread), η ∝ 1/spread.

    Raises
    ------
    ValueError
        Bad n, d, c or spread.
    """
    _check(n, d)
    if c < 3 or d < c:
        raise ValueError(f"need c >= 3 clusters and d >= c dimensions, got c = {c}, d = {d}")
    _check_finite("spread", spread, positive=True)
    centres = np.eye(c, d) / np.sqrt(2.0)
    return centres[np.arange(n) % c] + spread * gaussian(n, d, seed=seed)


def _check(n: int, d: int) -> None:
    if n < 3:
        raise ValueError(f"need n >= 3 rows, got {n}")
    if d < 1:
        raise ValueError(f"need d >= 1 columns, got {d}")


def _check_count(name: str, value: int, n: int, divisor: int) -> None:
    """``1 <= value <= n // divisor``, else a ValueError naming the parameter and the bound."""
    if not 1 <= value <= n // divisor:
        raise ValueError(f"{name} must be between 1 and n // {divisor} = {n // divisor} (n = {n}), got {value}")


def _check_finite(name: str, value: float, *, positive: bool = False) -> None:
    """``value`` finite and ``>= 0`` (``> 0`` when ``positive``), else a ValueError naming the parameter."""
    if not (np.isfinite(value) and (value > 0 if positive else value >= 0)):
        raise ValueError(f"{name} must be finite and {'>' if positive else '>='} 0, got {value}")
