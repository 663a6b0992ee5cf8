"""Exact eccentricity ρ² = diam²/d_X² of float64 data, without forming all N² exact distances.

The relative metric dissonance (Eq. 17) is R(v) = 1 − √((1 − e^{−v})/v), v = ρ²/2σ² (proofs/theorem2), so the
metric measure and Theorem 2's constant C(σ) = R(v)/2v need ρ² only. ρ² is a ratio of exact squared distances: the diameter pair's and the one or two at the median
position. :class:`ExactEccentricity` finds those pairs without forming all N² exact integers: SciPy's float64
squared distances have relative error at most (d + 2)·u (d differences of exact inputs, d squares, d − 1 additions
of positive terms; u = 2⁻⁵³), so only the pairs whose float value lies within a safe window of the float maximum
(median) can be the exact maximum (order statistic); those are recomputed exactly and the order statistic is
accepted only when the window provably separates it (else the window widens, finally to all pairs).
One exact pass then serves every σ: each bandwidth costs one ball evaluation.
"""
from __future__ import annotations

import flint
import numpy as np
from scipy.spatial.distance import pdist

from ..validation import check_data
from .exact import ExactData
from .geometry import check_median

_U = 2.0**-53


class ExactEccentricity:
    """ρ² = diam²/d_X² from exact squared distances (integers times a power of two).

    Parameters
    ----------
    X : array_like, shape (N, d)
    median : {"full", "pairs"}
        As in :func:`precise_kpca.numerics.geometry`.

    Attributes
    ----------
    diameter_sq : int
        Exact diam² in units of 2^(2e) (``ExactData`` exponent e).
    median_sq : tuple of int
        The one or two exact squared distances whose square roots average to d_X (same units).
    """

    def __init__(self, X, median: str = "full"):
        X = check_data(X)
        self.median = check_median(median)
        self._exact = ExactData.from_float64(X)
        n, d = X.shape
        self.n = n
        m = self._exact.mantissas
        span = int(m.max() - m.min()) if m.size else 0
        # small integer mantissas (one-hot, counts): float64 sums of squares are exact integers
        self._float_exact = d * span * span < 2**53
        floats = pdist(m.astype(np.float64), "sqeuclidean") if self._float_exact else pdist(X, "sqeuclidean")
        self._rows, self._cols = np.triu_indices(n, 1)  # pdist's condensed order
        self._floats = floats
        self._scale = 1.0 if self._float_exact else 2.0 ** (2 * self._exact.exp2)
        self._tol = 2 * (d + 2) * _U  # ≥ the relative error of every float entry, with a factor 2 to spare
        self.diameter_sq = max(self._exact_pairs(np.flatnonzero(floats >= floats.max() * (1 - 4 * self._tol))))
        self.median_sq = tuple(self._order_statistic(r) for r in self._median_ranks())
        if not any(self.median_sq):
            raise ValueError(f"the median pairwise distance (median={median!r}) of the {n} rows is 0: "
                             "rho is undefined (too many duplicate rows)")

    def _median_ranks(self) -> list[int | None]:
        """Ranks (0-based, among the N(N−1)/2 pairs) of the median's one or two entries; None for a diagonal 0."""
        n, count = self.n, (self.n * self.n if self.median == "full" else len(self._floats))
        positions = [count // 2] if count % 2 else [count // 2 - 1, count // 2]
        if self.median == "pairs":
            return positions
        return [None if k < n else (k - n) // 2 for k in positions]  # N zeros, then each pair twice

    def _exact_pairs(self, index: np.ndarray) -> list[int]:
        if self._float_exact:
            return [int(v) for v in self._floats[index]]
        m = self._exact.mantissas
        diffs = m[self._rows[index]] - m[self._cols[index]]
        return [int(v) for v in (diffs * diffs).sum(axis=1)]

    def _order_statistic(self, rank: int | None) -> int:
        """The exact ``rank``-th smallest pair value (0 for a diagonal zero)."""
        if rank is None:
            return 0
        f = np.partition(self._floats, rank)[rank]
        if self._float_exact:
            return int(f)
        width = 4 * self._tol
        while width < 1:
            low, high = f * (1 - width), f * (1 + width)
            inside = np.flatnonzero((self._floats >= low) & (self._floats <= high))
            below = int(np.count_nonzero(self._floats < low))
            values = sorted(self._exact_pairs(inside))
            if 0 <= rank - below < len(values):
                candidate = values[rank - below]
                scale = self._scale
                # pairs below the window are exactly < low/(1 − tol), above it exactly > high/(1 + tol)
                if low / (1 - self._tol) <= candidate * scale <= high / (1 + self._tol) or f == 0:
                    return candidate
            width *= 16
        return sorted(self._exact_pairs(np.arange(len(self._floats))))[rank]

    def rho_squared(self) -> flint.arb:
        """ρ² as an arb ball at the current flint precision."""
        diam2 = flint.arb(self.diameter_sq)
        roots = [flint.arb(v).sqrt() for v in self.median_sq]
        d_x = sum(roots[1:], roots[0]) / len(roots)
        return diam2 / (d_x * d_x)

    def rho(self) -> float:
        """ρ rounded to float64 (from a 128-bit ball)."""
        with flint.ctx.workprec(128):
            return float(self.rho_squared().sqrt().mid())
