"""Independent reference values of every convergence measure: plain mpmath on the exact data.

Nothing here calls precise_kpca. Every quantity is formed from the paper's definitions, in a private
``mpmath.MPContext`` (the global ``mp`` is never touched), from the exact input:

* each float64 entry is the Fraction it denotes; squared distances, the centered data X_c and the linear Gram
  L = X_c X_cᵀ are exact rationals, each rounded once to the working precision;
* d_X is the median of the full N×N distance matrix, the N diagonal zeros included (an even count takes the
  mean of the two middle *distances*), and σ_X = σ·d_X (paper Eq. 1);
* A = σ_X² H K_G H is formed as L + H G H with G = σ_X²(e^{−u} − 1 + u) = σ_X²(expm1(−u) + u),
  u = ‖x_i − x_j‖²/(2σ_X²) (Lemma 2);
* eigensystems come from ``ctx.eigsy`` of A and of L (the linear eigenvalues past the exact rank of X_c are set
  to exact zeros), at ``dps = 2·digits + 2·|log10 σ| + 2·log10 max(ρ, 1) + 20``: E = A − L is
  O((ρ/σ)²)·‖L‖ for large σ, and for small σ the L + HGH form cancels O((ρ/σ)²) of ‖L‖, so this precision leaves
  E-sized differences (the eigen measures) twice the requested digits plus 20 guard digits;
* the measures (paper Eqs. 17–19, Algorithm 1, Theorem 3, 1 − CKA) and their normalizers f(0) (Eq. 16) are
  evaluated as defined. The metric measure uses Eq. 6 distances with the diagonal K_nn = K_mm = 1 exact, so
  d_G² = 2(1 − e^{−u}) = −2 expm1(−u); 1 − CKA cancels (ρ/σ)⁴ and is formed at 4·|log10 σ| instead. f(0) of
  1 − CKA is the σ → 0 limit: K_G tends to 1 on pairs of equal rows and 0 elsewhere (I when no row repeats).

Error model: each result carries an absolute error of a few units of 10^−dps in its natural unit (the measures
are ratios to λ₁ or diam_L, or 1 − a cosine; an eigenvector, and so an angle or a pc, has the unit
λ₁/gap at the edges that define it). A value smaller than the σ-terms of the precision anticipated — small for
another reason, e.g. 1 − CKA ≈ 10⁻³⁴ on a rounded equilateral triangle, small by near-symmetry — is
evaluated once more with the missing digits added (:meth:`_Point.shortfall`), so 2·digits + 20 digits survive.

It is hand-written on purpose: a reference that shared the library's code (its exact integer forms, its
eigensolvers, its structured expansions) would agree with the library's bugs.

Basis dependence: eigenprojection and pc depend on eigenvectors. A value is returned only where the subspaces it
measures are determined: at every edge of Algorithm 1's groups (pc: on both sides of every i < k) the linear and
the Gaussian eigenvalues must differ by more than 10^(−dps/2) times the spectrum's largest eigenvalue; otherwise
``value`` is None and ``ties`` says where. An exact tie is resolved to ~10^−dps by eigsy, far below that floor.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import mpmath
import numpy as np
from mpmath import libmp

from .eigsy_reference import eigsy_descending

MEASURES = ("metric", "eigenvalue", "eigenprojection", "pc", "cka")
GUARD_DIGITS = 20
_POWER = re.compile(r"^\s*(\d+)\s*\*\*\s*\(?\s*([+-]?\d+)\s*\)?\s*$")


@dataclass(frozen=True)
class ReferenceValue:
    """One reference evaluation.

    Attributes
    ----------
    name : str
        The measure.
    value : mpmath.mpf or None
        The measure (global-type mpf, exact copy of the working-precision result); None when it depends on the
        choice of a basis inside a tie (see ``ties``).
    at_zero : mpmath.mpf or None
        The normalizer f(0) of Eq. 16 (None when it is basis-dependent itself).
    dps : int
        Working precision of ``value``; it is accurate to about ``dps − cancellation`` ≥ 2·digits + 20 digits.
    ties : tuple of str
        The eigenvalue pairs at group edges (pc: around each i < k) that are not separated by more than
        10^(−dps/2)·(largest eigenvalue); empty when every measured subspace is determined.
    """

    name: str
    value: object
    at_zero: object
    dps: int
    ties: tuple = ()

    @property
    def determined(self) -> bool:
        return self.value is not None

    @property
    def normalized(self):
        """log2 value − log2 f(0) (Eq. 16) as a global-type mpf; None when either is undetermined or not positive."""
        if self.value is None or self.at_zero is None or not (self.value > 0 and self.at_zero > 0):
            return None
        ctx = mpmath.MPContext()
        ctx.dps = self.dps
        return _export(ctx.log(ctx.mpf(self.value), 2) - ctx.log(ctx.mpf(self.at_zero), 2))


def reference(X, name: str, sigma, *, digits: int = 30, k: int = 1, tau: float = 1e-6,
              aggregate: str = "mean") -> ReferenceValue:
    """The measure ``name`` at standardized bandwidth σ from the exact data, to at least 2·digits + 20 digits.

    Parameters
    ----------
    X : array_like, shape (N, d)
        float64 data (N ≥ 2), read exactly.
    name : {"metric", "eigenvalue", "eigenprojection", "pc", "cka"}
    sigma : int, Fraction, float or str
        σ; a string ``"a**b"`` is the exact power.
    digits : int
        Digits the caller wants to check; the working precision is chosen from it (module docstring).
    k, tau, aggregate
        As in Algorithm 1 (eigenprojection) and Theorem 3 (pc: the first k components).

    Raises
    ------
    ValueError
        Unknown measure, k beyond the rank of X_c, or a zero median distance.
    """
    if name not in MEASURES:
        raise ValueError(f"unknown measure {name!r}; choose one of {MEASURES}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    key = (X.tobytes(), X.shape, _as_fraction(sigma), digits, 4 if name == "cka" else 2)
    point = _point(*key, 0)
    result = point.measure(name, k, tau, aggregate)
    extra = point.shortfall(result, k, tau)
    return _point(*key, extra).measure(name, k, tau, aggregate) if extra else result


def spectra(X, sigma, *, digits: int = 30) -> tuple[list, list]:
    """(μ, λ): all N eigenvalues of A = σ_X² H K_G H and of L, descending, as global-type mpf (λ past the exact
    rank of X_c are exact zeros), at the precision :func:`reference` uses for ``digits``."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    mu, _, lam, _ = _point(X.tobytes(), X.shape, _as_fraction(sigma), digits, 2, 0).spectra
    return [_export(x) for x in mu], [_export(x) for x in lam]


def eigensystems(X, sigma, *, digits: int = 30) -> tuple[list, list, list, list]:
    """(μ, V, λ, W): :func:`spectra` with the unit eigenvectors of A and of L (V[i], W[i]: lists of N global-type
    mpf; arbitrary inside a tie), at the precision :func:`reference` uses for ``digits``."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    mu, V, lam, W = _point(X.tobytes(), X.shape, _as_fraction(sigma), digits, 2, 0).spectra
    return ([_export(x) for x in mu], [[_export(x) for x in v] for v in V], [_export(x) for x in lam],
            [[_export(x) for x in w] for w in W])


def exact_rows(X) -> list[list[Fraction]]:
    """The rows of a float64 matrix as exact Fractions (every float is a dyadic rational)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2 or not np.isfinite(X).all():
        raise ValueError(f"X must be a finite 2-D array with at least 2 rows, got shape {X.shape}")
    return [[Fraction(float(x)) for x in row] for row in X]


def squared_distances(rows) -> list[list[Fraction]]:
    """‖x_i − x_j‖², exact."""
    return [[sum((a - b) ** 2 for a, b in zip(p, q)) for q in rows] for p in rows]


def median_distance(ctx, sq) -> object:
    """d_X: the median of all N² distances, diagonal zeros included; an even count averages the middle two."""
    flat = sorted(x for row in sq for x in row)
    m = len(flat)
    if m % 2:
        d = ctx.sqrt(_mpf(ctx, flat[m // 2]))
    else:
        d = (ctx.sqrt(_mpf(ctx, flat[m // 2 - 1])) + ctx.sqrt(_mpf(ctx, flat[m // 2]))) / 2
    if d == 0:
        raise ValueError("the median distance d_X is 0 (too many duplicate rows): sigma_X is undefined")
    return d


def exact_rank(rows) -> int:
    """Rank of the centered data X_c (= rank of L), by exact Gaussian elimination on Fractions."""
    work = [list(r) for r in _centered(rows)]
    rank, cols = 0, len(work[0])
    for c in range(cols):
        pivot = next((i for i in range(rank, len(work)) if work[i][c] != 0), None)
        if pivot is None:
            continue
        work[rank], work[pivot] = work[pivot], work[rank]
        for i in range(rank + 1, len(work)):
            factor = work[i][c] / work[rank][c]
            if factor:
                work[i] = [a - factor * b for a, b in zip(work[i], work[rank])]
        rank += 1
    return rank


def working_dps(digits: int, sigma: Fraction, log10_rho: float, power: int = 2) -> int:
    """2·digits + power·|log10 σ| + 2·log10 max(ρ, 1) + GUARD_DIGITS (module docstring)."""
    log10_sigma = math.log10(sigma.numerator) - math.log10(sigma.denominator)
    return int(math.ceil(2 * digits + power * abs(log10_sigma) + 2 * max(log10_rho, 0.0) + GUARD_DIGITS))


def linear_groups(values, k: int, tau) -> list[tuple[int, int]]:
    """Algorithm 1, lines 4–12: runs [i0, i) of the top-k linear eigenvalues with |λ_i − λ_i0|/λ_i0 < τ."""
    groups, start = [], 0
    while start < k:
        stop = start + 1
        while stop < k and abs((values[stop] - values[start]) / values[start]) < tau:
            stop += 1
        groups.append((start, stop))
        start = stop
    return groups


class _Point:
    """Everything at one (X, σ, digits): exact data, the scaled Gram and both eigensystems (computed lazily).

    ``power`` is the σ-cancellation exponent of the precision (2, or 4 for 1 − CKA); ``extra`` adds digits.
    """

    def __init__(self, X: np.ndarray, sigma: Fraction, digits: int, power: int, extra: int):
        self.rows = exact_rows(X)
        self.n = len(self.rows)
        self.sq = squared_distances(self.rows)
        self.rank = exact_rank(self.rows)
        rough = mpmath.MPContext()
        rough.dps = 20
        d_x = median_distance(rough, self.sq)
        log10_rho = float(rough.log10(rough.sqrt(_mpf(rough, max(max(r) for r in self.sq))) / d_x))
        ctx = self.ctx = mpmath.MPContext()
        ctx.dps = self.dps = working_dps(digits, sigma, log10_rho, power) + extra
        self.loss = self.dps - 2 * digits - GUARD_DIGITS  # digits the precision sets aside for cancellation
        self.sigma_x2 = (_mpf(ctx, sigma) * median_distance(ctx, self.sq)) ** 2
        self.L = [[_mpf(ctx, x) for x in row] for row in _linear_gram(self.rows)]
        self.A = self._scaled_gram()
        self._spectra = None

    def _u(self, i, j):
        return _mpf(self.ctx, self.sq[i][j]) / (2 * self.sigma_x2)

    def _scaled_gram(self):
        """A = L + H G H, G = σ_X²(expm1(−u) + u) (Lemma 2)."""
        ctx, n = self.ctx, self.n
        G = [[self.sigma_x2 * (ctx.expm1(-self._u(i, j)) + self._u(i, j)) for j in range(n)] for i in range(n)]
        HGH = _double_center(ctx, G)
        return [[self.L[i][j] + HGH[i][j] for j in range(n)] for i in range(n)]

    @property
    def spectra(self):
        """(μ, V, λ, W): eigenvalues descending and unit eigenvectors (columns as lists) of A and of L."""
        if self._spectra is None:
            mu, V = eigsy_descending(self.ctx, self.A)
            lam, W = eigsy_descending(self.ctx, self.L)
            if self.rank and not lam[self.rank - 1] > self.n * self.ctx.eps * lam[0]:
                raise ValueError(f"the smallest nonzero linear eigenvalue is below the working precision "
                                 f"(dps={self.dps}): raise digits")
            lam = lam[:self.rank] + [self.ctx.zero] * (self.n - self.rank)
            self._spectra = mu, V, lam, W
        return self._spectra

    def measure(self, name, k, tau, aggregate) -> ReferenceValue:
        ctx = self.ctx
        if name == "metric":
            return ReferenceValue(name, _export(self._metric()), _export(ctx.one), self.dps)
        if name == "cka":
            return ReferenceValue(name, _export(self._cka_gap(self.A)), _export(self._cka_gap(self._gram_at_zero())),
                                  self.dps)
        mu, V, lam, W = self.spectra
        if name == "eigenvalue":
            worst = max(abs(m - l) for m, l in zip(mu, lam))
            return ReferenceValue(name, _export(worst / lam[0]), _export(ctx.one), self.dps)
        if not 1 <= k <= self.rank:
            raise ValueError(f"k={k} exceeds the rank {self.rank} of the centered linear Gram")
        edges = self._edges(name, k, tau)
        ties = self._ties(mu, lam, edges)
        if name == "pc":
            value = None if ties else max(self._pc_gap(mu[i], V[i], lam[i], W[i]) for i in range(k))
            return ReferenceValue(name, _export(value), _export(ctx.one), self.dps, ties)
        groups = linear_groups(lam, k, ctx.mpf(tau))
        identity = [[ctx.one if r == c else ctx.zero for r in range(self.n)] for c in range(k)]
        linear_ties = self._ties(None, lam, edges)
        value = None if ties else _eigen_dist(ctx, V, W, groups, aggregate)
        at_zero = None if linear_ties else _eigen_dist(ctx, identity, W, groups, aggregate)
        return ReferenceValue(name, _export(value), _export(at_zero), self.dps, ties)

    def _edges(self, name, k, tau) -> list:
        """Where the eigenvectors a measure uses are cut from the rest: Algorithm 1's group edges; pc: 1 … k."""
        if name == "pc":
            return list(range(1, k + 1))
        return sorted({e for g in linear_groups(self.spectra[2], k, self.ctx.mpf(tau)) for e in g})

    def shortfall(self, result: ReferenceValue, k, tau) -> int:
        """Digits missing for ``result`` (module docstring, error model): log10(unit/|x|) beyond ``self.loss`` for the
        value and f(0), with unit 1, or top/gap at the measure's edges for eigenprojection and pc."""
        ctx, unit = self.ctx, self.ctx.one
        if result.name in ("eigenprojection", "pc"):
            mu, _, lam, _ = self.spectra
            tie = ctx.mpf(10) ** (-(self.dps // 2))  # a gap below this is a tie: refused, not resolved
            for values in (mu, lam):
                for e in self._edges(result.name, k, tau):
                    if 0 < e < self.n:
                        unit = max(unit, abs(values[0]) / max(values[e - 1] - values[e], tie * abs(values[0])))
        floor = ctx.mpf(10) ** -self.dps
        missing = [ctx.log10(unit / max(abs(ctx.mpf(x)), floor)) - self.loss
                   for x in (result.value, result.at_zero) if x is not None]
        return max([0] + [int(ctx.ceil(m)) for m in missing])

    def _ties(self, mu, lam, edges) -> tuple:
        """The edges e (between eigenvalues e − 1 and e) where μ or λ are not separated by 10^(−dps/2)·top."""
        out = []
        for label, values in (("Gaussian", mu), ("linear", lam)):
            if values is None:
                continue
            floor = abs(values[0]) * self.ctx.mpf(10) ** (-(self.dps // 2))
            for e in edges:
                if 0 < e < self.n and not values[e - 1] - values[e] > floor:
                    out.append(f"{label} eigenvalues {e - 1} and {e} differ by "
                               f"{mpmath.nstr(values[e - 1] - values[e], 3)} <= 10^-{self.dps // 2} x the largest")
        return tuple(out)

    def _pc_gap(self, mu, v, lam, w):
        """‖√μ v − √λ w‖ / √λ with v's sign aligned to w (Theorem 3's scaled principal components)."""
        ctx = self.ctx
        if ctx.fsum(a * b for a, b in zip(v, w)) < 0:
            v = [-a for a in v]
        sqrt_mu = ctx.sqrt(max(mu, ctx.zero))
        diff = [sqrt_mu * a - ctx.sqrt(lam) * b for a, b in zip(v, w)]
        return ctx.sqrt(ctx.fsum(x * x for x in diff)) / ctx.sqrt(lam)

    def _metric(self):
        """Eq. 17: max over pairs |σ_X d_G − d_L| / diam_L, d_G² = K_nn + K_mm − 2K_nm = −2 expm1(−u) (Eq. 6)."""
        ctx, n = self.ctx, self.n
        sigma_x = ctx.sqrt(self.sigma_x2)
        worst, diameter = ctx.zero, ctx.zero
        for i in range(n):
            for j in range(i + 1, n):
                d_l = ctx.sqrt(_mpf(ctx, self.sq[i][j]))
                d_g = ctx.sqrt(-2 * ctx.expm1(-self._u(i, j)))
                worst, diameter = max(worst, abs(sigma_x * d_g - d_l)), max(diameter, d_l)
        return worst / diameter

    def _cka_gap(self, K):
        """1 − ⟨K, L⟩ / (‖K‖_F ‖L‖_F) for a centered K (Theorem 1 with L the linear Gram)."""
        ctx = self.ctx
        def inner(P, Q):
            return ctx.fsum(p * q for rp, rq in zip(P, Q) for p, q in zip(rp, rq))
        return 1 - inner(K, self.L) / ctx.sqrt(inner(K, K) * inner(self.L, self.L))

    def _gram_at_zero(self):
        """H K_G(σ → 0) H: K_G tends to 1 on equal rows (the diagonal and duplicates) and 0 elsewhere."""
        ctx = self.ctx
        K0 = [[ctx.one if p == q else ctx.zero for q in self.rows] for p in self.rows]
        return _double_center(ctx, K0)


@lru_cache(maxsize=8)
def _point(data: bytes, shape: tuple, sigma: Fraction, digits: int, power: int, extra: int) -> _Point:
    return _Point(np.frombuffer(data, dtype=np.float64).reshape(shape), sigma, digits, power, extra)


def _eigen_dist(ctx, V, W, groups, aggregate):
    """EigenDist of Algorithm 1: per group, the largest principal angle between span V_J and span W_J."""
    thetas = [_largest_angle(ctx, V[a:z], W[a:z]) for a, z in groups]
    return max(thetas) if aggregate == "max" else ctx.fsum(thetas) / len(thetas)


def _largest_angle(ctx, V, W):
    """θ_max = atan2(sin, cos): cos = σ_min(W_Jᵀ V_J), sin = σ_max(V_J − W_J W_Jᵀ V_J) (no 1 − cos² cancellation).

    V, W: lists of g orthonormal vectors (each a list of N numbers).
    """
    Vm = ctx.matrix([list(col) for col in V]).T  # N × g
    Wm = ctx.matrix([list(col) for col in W]).T
    overlap = Wm.T * Vm
    outside = Vm - Wm * overlap
    cos_ = min(ctx.svd_r(overlap, compute_uv=False))
    sin_ = max(ctx.svd_r(outside, compute_uv=False))
    return ctx.atan2(sin_, cos_)


def _double_center(ctx, M):
    """H M H, H = I − 11ᵀ/N, from row, column and total means."""
    n = len(M)
    rows = [ctx.fsum(r) / n for r in M]
    cols = [ctx.fsum(M[i][j] for i in range(n)) / n for j in range(n)]
    total = ctx.fsum(rows) / n
    return [[M[i][j] - rows[i] - cols[j] + total for j in range(n)] for i in range(n)]


def _centered(rows):
    n = len(rows)
    means = [sum(col) / n for col in zip(*rows)]
    return [[x - m for x, m in zip(row, means)] for row in rows]


def _linear_gram(rows):
    """L = X_c X_cᵀ, exact."""
    c = _centered(rows)
    return [[sum(a * b for a, b in zip(p, q)) for q in c] for p in c]


def _mpf(ctx, x: Fraction):
    """x rounded once to the context's precision."""
    x = Fraction(x)
    return ctx.make_mpf(libmp.from_rational(x.numerator, x.denominator, ctx.prec, libmp.round_nearest))


def _export(x):
    """A global-type mpf with exactly the value of a private context's mpf (no rounding); None stays None."""
    return None if x is None else mpmath.mp.make_mpf(x._mpf_)


def _as_fraction(sigma) -> Fraction:
    if isinstance(sigma, str):
        match = _POWER.match(sigma)
        if match:
            return Fraction(int(match.group(1))) ** int(match.group(2))
    value = Fraction(sigma)
    if value <= 0:
        raise ValueError(f"sigma must be positive, got {sigma!r}")
    return value
