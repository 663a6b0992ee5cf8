"""The linear side of σ_X² H K_G H = L + E, rigorously: L's eigenvalues enclosed, its eigenvectors as exact dyadic
bases with proven subspace bounds.

Units and the exact form. Z = N·X_c·2^(−e), S = ZᵀZ (d ≤ N) or Z Zᵀ and rank(S) = rank(L), exact, are the data
set's :class:`~precise_kpca.numerics.linear_exact.ExactLinear`. Everything here is in its *S-units*,
L_S = Z Zᵀ = L·N²·2^(−2e): an integer matrix, so the whole linear side is exact integer arithmetic, and the Gaussian
side scales E by the same factor (``N²·2^(−2e)`` is an integer times a power of two: dyadic stays dyadic). Every
measure is a ratio or an angle, so the unit cancels. L_S has N − r exact zero eigenvalues.

Approximation (not trusted): S's eigensystem refined by Newton's method with its exact clusters (the zero
eigenvalue of multiplicity size − r, the exact ties; :func:`.linear_refine.refine_exact_clusters`), rounded to a
dyadic grid of ``bits`` bits: Q̂
(d×d), λ̂; the N-space basis Ŵ = Z·round(Q̂_r Λ̂_r^(−1/2)) (tall case) or Q̂_r (wide case) is then an exact dyadic
N×r matrix (the 2^e/N of X_c cancels against √λ: w = X_c q/√λ_C = Z q/√λ_S).

Certificates (exact rationals, directed square roots):

1. *Eigenvalues* — Weyl after an exactly orthogonal similarity (Theorem 2 of :mod:`.eigen_enclosure`): with
   R = S Q̂ − Q̂ Λ̂ and ω ≥ ‖Q̂ᵀQ̂ − I‖₂ (Frobenius), every eigenvalue of S lies within
   ρ = (‖R‖_F + (1 − √(1 − ω))(λ̂_max − λ̂_min)) / √(1 − ω) of the λ̂ of the same index.
2. *Subspaces* — Davis–Kahan on exact g×g products (:func:`.eigen_enclosure.ritz_subspace_sin_theta`): for a group
   J, G = Ŵ_JᵀŴ_J, H = TᵀT, Q = TᵀS T with T = ZᵀŴ_J (tall case; L_S Ŵ_J = Z T) bound ‖sin Θ(span Ŵ_J, W_J)‖₂
   against the enclosures of all of L_S's eigenvalues (the zeros exact).
3. *Ties* — where enclosures overlap, the integer characteristic polynomial of S decides exactly whether the
   eigenvalues are equal (:func:`_integer_ties`; public as :func:`.linear_ties.tied_linear_eigenvalues`).

Hand-written because no library encloses eigenpairs of an exact integer matrix at a chosen precision with bounds
of this kind (Arb's ``acb_mat_eig_simple`` needs simple eigenvalues and costs O(d³) ball operations at full
precision per call; here the refinement starts from float64 and only the certificate is trusted).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numpy as np

from ..arith.dyadic import Dyadic
from ..arith.rounding import sqrt_up
from ..errors import InsufficientPrecision, InternalCheckFailed, Undetermined
from ..numerics import theorems
from ..numerics.data import Derived, data_state
from ..numerics.linear_exact import ExactLinear, exact_linear
from .eigen_enclosure import ritz_subspace_sin_theta
from .linear_refine import refine_exact_clusters

_DIGIT_BITS = math.log2(10)


@dataclass(frozen=True, eq=False)
class LinearEnclosure(Derived):
    """L's eigenvalues enclosed and an exact dyadic eigenvector basis, at one precision (S-units throughout).

    Attributes
    ----------
    exact : ExactLinear
    bits : int
        Grid bits of the approximations (their relative accuracy is about 2**-bits).
    values : tuple of Fraction, length r
        λ̂_i (dyadic), descending: approximations of L_S's nonzero eigenvalues.
    radius : Fraction
        |λ_i − λ̂_i| ≤ radius for every i < r (and the eigenvalues beyond r are exactly 0).
    vectors : Dyadic, shape (N, r)
        Ŵ: exact dyadic, close to orthonormal eigenvectors of L_S.
    ties : tuple of (int, int) or None
        Exact ties [a, z) among the nonzero eigenvalues, when they were decided (None: not needed yet).
    """

    exact: ExactLinear
    bits: int
    values: tuple
    radius: Fraction
    vectors: Dyadic
    _sin_cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def rank(self) -> int:
        return self.exact.rank

    def lower(self, i: int) -> Fraction:
        """Lower end of λ_i's enclosure (0-based, descending; exactly 0 beyond the rank)."""
        return max(self.values[i] - self.radius, Fraction(0)) if i < self.rank else Fraction(0)

    def upper(self, i: int) -> Fraction:
        return self.values[i] + self.radius if i < self.rank else Fraction(0)

    def separated(self, i: int) -> bool:
        """Whether λ_{i−1} > λ_i is proven (i ≥ 1; index i = rank compares with the exact zero)."""
        if i <= 0 or i > self.rank:
            return True
        return self.lower(i - 1) > self.upper(i)

    def sin_theta(self, start: int, stop: int) -> Fraction:
        """Upper bound on ‖sin Θ(span Ŵ[:, start:stop], W_[start, stop))‖₂ (W: L's invariant subspace).

        Raises
        ------
        Undetermined
            The group's edge falls inside an exact tie (the subspace W is not unique).
        InsufficientPrecision
            The enclosures do not separate the group from the other eigenvalues at this precision.
        """
        key = (start, stop)
        if key not in self._sin_cache:
            self._sin_cache[key] = self._sin_theta(start, stop)
        return self._sin_cache[key]

    def _sin_theta(self, start: int, stop: int) -> Fraction:
        if not 0 <= start < stop <= self.rank:
            raise ValueError(f"group [{start}, {stop}) must lie within the rank {self.rank} of the linear Gram")
        for edge in (start, stop):
            if not self.separated(edge):
                self._raise_unseparated(edge)
        w = self.vectors.columns(start, stop)
        gram = (w.T @ w).to_fmpq()
        if self.exact.tall:
            t = self.exact.z.T @ w
            rayleigh = (t.T @ t).to_fmpq()
            square = (t.T @ Dyadic(self.exact.small, 0) @ t).to_fmpq()
        else:
            p = Dyadic(self.exact.small, 0) @ w
            rayleigh, square = (w.T @ p).to_fmpq(), (p.T @ p).to_fmpq()
        count = min(self.exact.n, self.rank + 1)  # one exact zero stands for all N − r of them
        lower = [self.lower(i) for i in range(count)]
        upper = [self.upper(i) for i in range(count)]
        bound = ritz_subspace_sin_theta(gram, rayleigh, square, 0, lower, upper, start, stop)
        if bound is None or not bound < 1:
            raise InsufficientPrecision(
                f"linear eigenvector group [{start}, {stop}) is not separated from the other eigenvalues by "
                f"enclosures of radius {float(self.radius):.3g} at {self.bits} bits",
                needed_dps=int(2 * self.bits / _DIGIT_BITS))
        return bound

    def _raise_unseparated(self, edge: int):
        ties = tied_linear_eigenvalues_cached(self.exact)
        for a, z in ties:
            if a < edge < z:
                raise Undetermined(
                    f"linear eigenvalues {edge - 1} and {edge} are equal: the top-{edge} linear eigenvectors are any "
                    "basis of a repeated eigenspace, so a quantity that separates them has no value",
                    proof=f"exact: a root of multiplicity {z - a} of the integer characteristic polynomial "
                          f"(eigenvalues {a}..{z - 1})")
        gap = float(self.values[edge - 1] - self.values[edge]) if edge < self.rank else float(self.values[edge - 1])
        raise InsufficientPrecision(
            f"linear eigenvalues {edge - 1} and {edge} differ by {gap:.3g} (S-units, relative "
            f"{gap / float(self.values[0]):.3g}), within the enclosure radius {float(self.radius):.3g} at "
            f"{self.bits} bits; they are proven distinct (exact characteristic polynomial)",
            needed_dps=int(math.ceil(-math.log10(max(gap / float(self.values[0]), 1e-300)))) + 20)

    def to_l_units(self, x: Fraction) -> Fraction:
        """A quantity in S-units as L's units (× 2^(2e)/N²)."""
        return self.exact.to_l_units(x)


def tied_linear_eigenvalues_cached(exact: ExactLinear) -> tuple:
    return exact.derived(_ties, keep=8)


def _ties(exact: ExactLinear) -> tuple:
    return tuple(_integer_ties(exact.small, exact.rank))


def _integer_ties(small: flint.fmpz_mat, rank: int) -> list[tuple[int, int]]:
    poly = small.charpoly()
    coefficients = poly.coeffs()
    zeros = next(i for i, c in enumerate(coefficients) if c != 0)
    nonzero = flint.fmpz_poly(coefficients[zeros:])  # the factor whose roots are the nonzero eigenvalues
    if nonzero.degree() != rank:
        raise InternalCheckFailed(f"the characteristic polynomial has {nonzero.degree()} nonzero roots, the rank "
                                  f"is {rank}")
    if nonzero.gcd(nonzero.derivative()).degree() == 0:  # squarefree: no tie, no root to isolate (12 s on splice)
        return []
    roots = [(root, multiplicity) for root, multiplicity in poly.complex_roots() if not root.contains(0)]
    roots.sort(key=lambda item: float(item[0].real.mid()), reverse=True)
    runs, start = [], 0
    for _, multiplicity in roots:
        if multiplicity > 1:
            runs.append((start, start + multiplicity))
        start += multiplicity
    if start != rank:
        raise InternalCheckFailed(f"the characteristic polynomial has {start} nonzero roots, the rank is {rank}")
    return runs


def linear_enclosure(X: np.ndarray, bits: int) -> LinearEnclosure:
    """L's eigenvalues enclosed and an exact eigenvector basis on a grid of ``bits`` bits (cached; ``bits`` is
    rounded up to a multiple of 64 so neighbouring requests share one).

    Parameters
    ----------
    X : ndarray, shape (N, d)
        Validated float64 data.
    bits : int
        Relative accuracy wanted of the approximations (their certificates say what was reached).
    """
    return data_state(X).derived(_linear_cached, 64 * math.ceil(max(bits, 64) / 64), keep=8)


def _linear_cached(X: np.ndarray, bits: int) -> LinearEnclosure:
    exact = exact_linear(X)
    q, values = refine_exact_clusters(exact.small, exact.nonzero_rank(), lambda: tied_linear_eigenvalues_cached(exact), bits)
    radius = _global_radius(exact.small, q, values)
    r = exact.rank
    nonzero = values[:r]
    if exact.tall:  # Ŵ = Z Q̂_r Λ̂^(−1/2): the inverse square roots rounded to dyadics, the products exact
        roots = [_inverse_sqrt(v, bits + 16) for v in nonzero]
        common = min(_exp2_of(x) for x in roots)
        vectors = exact.z @ q.columns(0, r).scale_columns([x * Fraction(2) ** -common for x in roots], common)
    else:
        vectors = q.columns(0, r)
    for i in range(r, len(values)):
        if not abs(values[i]) <= radius:  # S has exactly size − r zero eigenvalues
            raise InternalCheckFailed(f"approximate eigenvalue {i} = {float(values[i]):.3g} of the rank-{r} Gram is "
                                      f"not within the enclosure radius {float(radius):.3g} of 0")
    return LinearEnclosure(exact=exact, bits=bits, values=tuple(nonzero), radius=radius, vectors=vectors)


def _global_radius(small: flint.fmpz_mat, q: Dyadic, values: list) -> Fraction:
    """ρ of the module docstring (1.) for S with approximate eigenpairs (values, q)."""
    size = small.nrows()
    common = min(_exp2_of(v) for v in values)
    diag = flint.fmpz_mat(size, size)
    for i, v in enumerate(values):
        diag[i, i] = int(v * Fraction(2) ** -common)
    lam = Dyadic(diag, common)
    residual = Dyadic(small, 0) @ q - q @ lam
    gram = q.T @ q
    identity = Dyadic(flint.fmpz_mat(size, size, [int(i == j) for i in range(size) for j in range(size)]), 0)
    omega = sqrt_up((gram - identity).frobenius_squared())
    if not omega < 1:
        raise InternalCheckFailed(f"the refined linear eigenvectors are far from orthonormal (ω ≤ {float(omega):.3g})")
    # no square root: a directed one would limit ρ to its 2**-64 relative accuracy
    return theorems.global_radius(sqrt_up(residual.frobenius_squared()), omega, max(values) - min(values), arith=None)


def _exp2_of(x: Fraction) -> int:
    """The exponent of the lowest bit of a dyadic rational (its denominator's log2, negated)."""
    if x.denominator & (x.denominator - 1):
        raise InternalCheckFailed(f"{x} is not dyadic")
    return -(x.denominator.bit_length() - 1)


def _inverse_sqrt(v: Fraction, bits: int) -> Fraction:
    """A dyadic within a relative 2**-bits of 1/√v (v > 0), from integer square roots."""
    shift = 2 * bits + v.numerator.bit_length() - v.denominator.bit_length() + 2
    shift += shift % 2  # even, so that √(2^shift) is a power of two
    scaled = (v.denominator << shift) // v.numerator if shift >= 0 else v.denominator // (v.numerator << -shift)
    root = math.isqrt(scaled)  # ≈ 2^(shift/2)/√v, at least 2^bits
    return Fraction(root, 1 << (shift // 2)) if shift >= 0 else Fraction(root * (1 << (-shift // 2)))
