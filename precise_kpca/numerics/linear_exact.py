"""The linear side of one data set in exact integers: Z, S = ZᵀZ (or Z Zᵀ), its exact rank, and S's approximate
eigensystem at a chosen precision — the one form every linear computation starts from.

Units. X = M·2^e exactly (M integer, :class:`~precise_kpca.numerics.exact.ExactData`); with s the column sums of M,
Z = N·M − 1·sᵀ is an integer matrix and X_c = Z·2^e/N. *S-units*: L_S = Z Zᵀ = L·N²·2^(−2e), an integer matrix, so
the linear side is exact integer arithmetic; a quantity of L's units is one of S-units times 2^(2e)/N²
(:meth:`ExactLinear.to_l_units`).

Small Gram. S = ZᵀZ (d×d) when d ≤ N (*tall*), else Z Zᵀ (N×N): its nonzero eigenvalues are L_S's, its rank r is
computed exactly (integer elimination, python-flint), and L_S has N − r exact zero eigenvalues.

Approximate eigensystem (:meth:`ExactLinear.eigensystem`, not a certificate): S read exactly and refined by
:func:`~precise_kpca.numerics.eigen_refine.refine_eigensystem` to ``dps`` digits with its error bounds; the exact
rank decides which eigenvalues are nonzero, and the precision is raised until each of the r nonzero ones stands
clear of its bound (an integer S has λ_r ≥ 1/λ_1^(r−1): some precision always does). L's unit eigenvectors are
W = X_c q/√λ = Z q/√λ_S (the 2^e/N cancels), formed by :meth:`LinearEigensystem.vectors`. The rigorous enclosures
of the same eigenpairs are :mod:`precise_kpca.certify.linear_enclosure`'s.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import mpmath
import numpy as np
from mpmath import libmp

from ..arith.dyadic import Dyadic, mpf_matrix_to_dyadic
from ..backends import Backend
from ..backends.base import as_fraction
from ..errors import InternalCheckFailed
from .data import Derived, data_state
from .eigen_refine import refine_eigensystem
from .exact import ExactData
from .theorems import split_runs

_LOG10_2 = math.log10(2)
_VECTOR_GUARD_BITS = 16  # bits of q's fixed-point form beyond the working precision, in the exact product Z·q


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per data set (its DataState's)
class ExactLinear(Derived):
    """The exact integer form of the linear side of one data set (σ-independent; module docstring).

    Attributes
    ----------
    n, d : int
    exp2 : int
        X = M·2^exp2.
    z : Dyadic
        Z = N·M − 1·sᵀ (integer N×d, exp2 0): X_c = Z·2^exp2/N.
    small : flint.fmpz_mat
        S = ZᵀZ (tall, d ≤ N) or Z Zᵀ (wide).
    tall : bool
    rank : int
        rank(S) = rank(L), exact.
    to_s_units : tuple (int, int)
        (N², −2·exp2): L_S = L·N²·2^(−2 exp2); a matrix of L's units times N² shifted by −2 exp2 is in S-units.
    """

    n: int
    d: int
    exp2: int
    z: Dyadic
    small: flint.fmpz_mat
    tall: bool
    rank: int

    @property
    def to_s_units(self) -> tuple[int, int]:
        return self.n * self.n, -2 * self.exp2

    def to_l_units(self, x) -> Fraction:
        """A quantity in S-units (int, Fraction or mpf, read exactly) as L's units: x·2^(2 exp2)/N², exact."""
        factor, shift = self.to_s_units
        return as_fraction(x) / factor * Fraction(2) ** -shift

    def apply_l(self, v: Dyadic) -> Dyadic:
        """L_S v = Z (Zᵀ v), exact (N×m)."""
        return self.z @ (self.z.T @ v)

    def trace(self) -> Fraction:
        """trace(L_S) = ‖Z‖_F², exact (computed once per data set)."""
        return self.derived(_trace, keep=8)

    def nonzero_rank(self) -> int:
        """The rank, refusing a zero L (what an eigensystem of L's nonzero part needs).

        Raises
        ------
        ValueError
            Every row of X is the same.
        """
        if self.rank == 0:
            raise ValueError("the centered data are all zero (every row is the same): L has no nonzero eigenvalue")
        return self.rank

    def eigensystem(self, dps: int) -> "LinearEigensystem":
        """S's nonzero eigenpairs refined to at least ``dps`` digits (kept per precision; module docstring).

        Raises
        ------
        ValueError
            Every row of X is the same: L = 0 has no nonzero eigenvalue.
        """
        return self.derived(_eigensystem, int(dps), keep=8)


def _trace(exact: ExactLinear) -> Fraction:
    return exact.z.frobenius_squared()


def exact_linear(X: np.ndarray) -> ExactLinear:
    """The :class:`ExactLinear` of a validated float64 data matrix (one per data set, kept by its
    :class:`~precise_kpca.numerics.data.DataState`)."""
    return data_state(X).derived(_exact_linear, keep=8)


def _exact_linear(X: np.ndarray) -> ExactLinear:
    n, d = X.shape
    exact = ExactData.from_float64(X)
    z = Dyadic.from_int_array(exact.centered_integers)
    tall = d <= n
    small = (z.T @ z).ints if tall else (z @ z.T).ints
    return ExactLinear(n=n, d=d, exp2=exact.exp2, z=z, small=small, tall=tall, rank=small.rank())


@dataclass(frozen=True, eq=False)
class LinearEigensystem:
    """S's r nonzero eigenpairs, approximate (refined, with the refinement's error bounds), in S-units.

    Attributes
    ----------
    exact : ExactLinear
    dps : int
        Digits the refinement was asked for (at least the requested ones; more where a small eigenvalue needed it).
    values : ndarray of mpf, shape (r,)
        λ_S, descending, all positive.
    bounds : ndarray of mpf, shape (r,)
        |values[i] − λ_i(S)| ≤ bounds[i].
    q : ndarray of mpf, shape (d, r) tall or (N, r) wide
        Their unit eigenvectors (wide: L's own, W = q).
    clusters : list of tuple of int
        Index ranges (start, stop) of eigenvalues not separated by their bounds (singletons included).
    """

    exact: ExactLinear
    dps: int
    values: np.ndarray
    bounds: np.ndarray
    q: np.ndarray
    clusters: list

    def l_values(self, b: Backend) -> np.ndarray:
        """L's nonzero eigenvalues λ_S·2^(2e)/N² in ``b``, each rounded once from the exact product."""
        return np.array([b.scalar(self.exact.to_l_units(v)) for v in self.values], dtype=b.dtype)

    def vectors(self, b: Backend) -> np.ndarray:
        """W, shape (N, r): L's unit eigenvectors in ``b``.

        Wide: q. Tall, exact input: Z·q as one exact integer product (q in fixed point at the working precision
        and 16 bits more), each entry rounded once, then divided by √λ_S. Tall, float64: the float matrix Z times
        q/√λ_S (each rounded to 53 bits from the exact mpf) by BLAS — columns orthonormal to ~u·√(λ_1/λ_i). In
        the tall case q's error reaches W amplified by up to √(λ_1/λ_i): a caller needing every column to its
        working precision asks for log10(λ_1/λ_r) more digits (as :func:`~precise_kpca.measures.structured.linear_dps`
        does).
        """
        if not self.exact.tall:
            return b.internal(self.q)
        roots = [b.sqrt(b.scalar(v)) for v in self.values]
        if b.exact_input:
            q = mpf_matrix_to_dyadic(self.q, b.prec + _VECTOR_GUARD_BITS)
            product = self.exact.z @ q
            return b.from_scaled_integers(product.to_int_array(), product.exp2) / np.array(roots, dtype=object)
        basis = np.array([[_ratio_53(v, a) for v, a in zip(row, self.values)] for row in self.q])
        return np.array(self.exact.z.to_int_array(), dtype=np.float64) @ basis


def _ratio_53(v, a) -> float:
    """v/√a, the root and the quotient each rounded to nearest at 53 bits (v, a mpf read exactly)."""
    return libmp.to_float(libmp.mpf_div(v._mpf_, libmp.mpf_sqrt(a._mpf_, 53, libmp.round_nearest), 53,
                                        libmp.round_nearest))


def _eigensystem(exact: ExactLinear, dps: int) -> LinearEigensystem:
    r, size = exact.nonzero_rank(), exact.small.nrows()
    entries = np.array([mpmath.mp.make_mpf(libmp.from_int(int(v))) for v in exact.small.entries()],
                       dtype=object).reshape(size, size)  # exact: S's integers, no rounding
    # λ_r ≥ 1/λ_1^(r−1) ≥ trace^(1−r) (the product of the nonzero eigenvalues is a positive integer): at this many
    # digits every nonzero eigenvalue is resolved, so needing more means a wrong rank or bound
    enough = dps + r * math.ceil(exact.trace().numerator.bit_length() * _LOG10_2) + 10
    work = dps
    while True:
        system = refine_eigensystem(entries, dps=work, tier=1, k=size)
        values, bounds = system.values, system.value_error_bounds
        for i in range(r, size):
            if not abs(values[i]) <= bounds[i]:
                raise InternalCheckFailed(f"refined eigenvalue {i} of the rank-{r} Gram S is {float(values[i]):.3g}, "
                                          f"not within its bound {float(bounds[i]):.3g} of 0")
        if all(values[i] > 2 * bounds[i] for i in range(r)):
            break
        if work >= enough:
            raise InternalCheckFailed(f"eigenvalue {r - 1} of the rank-{r} Gram S is not resolved at {work} digits, "
                                      f"beyond the {enough} its integer entries guarantee")
        work = min(2 * work, enough)
    return LinearEigensystem(exact=exact, dps=work, values=values[:r], bounds=bounds[:r], q=system.vectors[:, :r],
                             clusters=_clusters(values[:r], bounds[:r]))


def _clusters(values, bounds) -> list[tuple[int, int]]:
    """Runs of eigenvalues (descending) whose gaps do not exceed twice their two bounds (singletons included)."""
    return split_runs([values[i - 1] - values[i] > 2 * (bounds[i - 1] + bounds[i]) for i in range(1, len(values))])
