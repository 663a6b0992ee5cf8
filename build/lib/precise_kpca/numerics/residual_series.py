"""The centered Gaussian residual E(σ) = H G H as a power series with σ-independent exact coefficients.

G = σ_X²(e^{−u} − 1 + u), u = D/(2σ_X²), so with q = 1/(2σ_X²)

    E(σ) = Σ_{j≥2} a_j(σ) M_j,   a_j = (−1)^j q^{j−1} / (2·j!),   M_j = H D^{∘j} H,

where D is the exact integer squared-distance matrix. N²·M_j is an integer matrix (centering only divides
by N), computed exactly once per data set and kept as a fixed-point python-flint ``fmpz_mat``; for each σ
the operator E is one integer combination of them (C-speed), never N² high-precision exponentials. The
series is used where u_max = ρ²/(2σ²) ≤ 1/4: its terms then fall by at least 4× each, and the truncation
is below the working eps.
"""
from __future__ import annotations

import math

import flint
import numpy as np
from mpmath import libmp

from ..backends import MPBackend
from ..backends.mp import FixedPointOperator
from .exact import ExactData
from .geometry import check_median, median_distance

SERIES_LIMIT = 0.25
_GUARD_BITS = 32


class ResidualSeries:
    """σ-independent pieces of E(σ) for one data set on one mp backend.

    Parameters
    ----------
    X : ndarray, shape (N, d)
        Validated float64 data.
    backend : MPBackend
    median : {"full", "pairs"}
    """

    def __init__(self, X: np.ndarray, backend: MPBackend, median: str = "full"):
        self.backend = backend
        self.n = X.shape[0]
        exact = ExactData.from_float64(X)
        self.integers = exact.squared_distance_integers
        self.exp2 = 2 * exact.exp2  # D = integers · 2**exp2
        sq = backend.from_scaled_integers(self.integers, self.exp2)
        self.median_distance = median_distance(sq, backend, check_median(median), exact)
        self.d_max = backend.from_scaled_integers(np.array([self.integers.max()], dtype=object), self.exp2)[0]
        self.bits = backend.prec + _GUARD_BITS + 2 * self.n.bit_length()
        self._powers: dict[int, tuple[flint.fmpz_mat, int]] = {}
        self._power = self.integers  # D^{∘1}; _computed is its exponent
        self._computed = 1

    def u_max(self, sigma_x):
        """Largest u = D/(2σ_X²) (backend scalar)."""
        return self.d_max / (2 * sigma_x * sigma_x)

    def _centered_power(self, j: int) -> tuple[flint.fmpz_mat, int]:
        """(Z, e) with H D^{∘j} H ≈ Z·2**e, Z rounded to ``bits`` bits below its largest entry."""
        while self._computed < j:
            self._power = self._power * self.integers
            self._computed += 1
            p, n = self._power, self.n
            rows = p.sum(axis=1)
            exact = n * n * p - n * rows[:, None] - n * rows[None, :] + rows.sum()  # N²·H P H, exact
            top = max(abs(int(v)).bit_length() for v in (exact.max(), exact.min()))
            shift = max(0, top - self.bits)
            half = (1 << (shift - 1)) if shift else 0
            rounded = [(int(v) + half) >> shift for v in exact.ravel()]
            # value = rounded · 2**shift / N² · 2**(j·exp2): keep 1/N² in the coefficient
            self._powers[self._computed] = (flint.fmpz_mat(n, n, rounded), shift + self._computed * self.exp2)
        return self._powers[j]

    def operator(self, sigma) -> "SeriesOperator":
        """E(σ) for a standardized bandwidth σ (exact Fraction), as a fixed-point operator."""
        b, ctx = self.backend, self.backend.ctx
        sigma_x = b.scalar(sigma) * self.median_distance
        u_max = self.u_max(sigma_x)
        if u_max > SERIES_LIMIT:
            raise ValueError(f"u_max = {b.to_float(u_max):.3g} > {SERIES_LIMIT}: the series does not apply")
        q = 1 / (2 * sigma_x * sigma_x)
        terms = 2
        while u_max ** (terms - 1) / ctx.factorial(terms + 1) * 2 > b.eps / 16:
            terms += 1
        combined, exponent = None, None
        for j in range(2, terms + 1):
            Z, e = self._centered_power(j)
            coefficient = (-1) ** j * q ** (j - 1) / (2 * ctx.factorial(j)) / (self.n * self.n)
            # coefficient·2**e as an integer multiplier at a common exponent, with `bits` bits
            if exponent is None:
                exponent = int(ctx.floor(ctx.log(abs(coefficient), 2))) + e - self.bits
            multiplier = int(ctx.nint(coefficient * ctx.mpf(2) ** (e - exponent)))
            term = Z * multiplier
            combined = term if combined is None else combined + term
        return SeriesOperator(combined, exponent, b)


class SeriesOperator(FixedPointOperator):
    """E(σ) as an exact integer matrix times a power of two (see :class:`ResidualSeries`)."""

    def __init__(self, integers: flint.fmpz_mat, exp2: int, backend: MPBackend):
        n = integers.nrows()
        super().__init__(None, backend, shape=(n, n))
        self._integers = (integers, exp2)

    @property
    def frobenius(self) -> float:
        Z, e = self._integers
        entries = Z.entries()
        top = max(abs(int(v)).bit_length() for v in (max(entries), min(entries)))
        shift = max(0, top - 60)
        return math.ldexp(math.sqrt(sum(float(int(v) >> shift) ** 2 for v in entries)), shift + e)

    def to_float64(self) -> np.ndarray:
        Z, e = self._integers
        n = Z.nrows()
        values = [libmp.to_float(libmp.from_man_exp(int(v), e)) for v in Z.entries()]
        return np.array(values, dtype=np.float64).reshape(n, n)
