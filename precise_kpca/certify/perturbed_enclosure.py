"""Rigorous enclosures of the top eigenpairs of A = L + E where E is small: the structured range, σ large.

A float64 eigensystem of A = σ_X² H K_G H has absolute errors eps·‖L‖, larger than the E-sized differences the
measures take once σ is large (past σ ≈ 2^14 on most data sets). Here the certificate is built from E-sized
quantities only, in the S-units of :mod:`~precise_kpca.numerics.linear_exact` (A_S = L_S + E_S, L_S = Z Zᵀ exact
integers):

* E_S = N²2^(−2e)·E_hp + ΔE with E_hp the binary128 words of
  :func:`~precise_kpca.numerics.binary128_gram.centered_residual_words` held exactly (Ozaki fixed point) and
  ‖ΔE‖_F ≤ δ (the builder's rigorous bound); where E is below float64's range the words hold E·2^−x and the
  shift −2e is −2e + x throughout. Every statement below is proven for the exact A_S.
* Approximate top eigenvectors V̂ (exact dyadic N×t, ≈ Ŵx + z from the structured perturbation expansion; not
  trusted) are multiplied exactly: L_S V̂ = Z(ZᵀV̂) (python-flint) and E_hp V' (Ozaki, float64 BLAS) with V' = V̂
  rounded to ``product_bits``; what is left, U = E_S V̂ − K with K = L_S V̂ + N²2^(−2e) E_hp V', obeys
  ‖U_j‖ ≤ e_hp‖V̂_j − V'_j‖ + δ‖V̂_j‖ (e_hp ≥ ‖N²2^(−2e) E_hp‖₂). The cost of the product is then set by the digits
  wanted, not by σ (V̂ needs ~log2(‖L‖/‖E‖) more bits than V' at large σ).
* *Weyl*: |μ_i − λ_i| ≤ ‖E_S‖₂ ≤ e2 for every index i (μ of A_S, λ of L_S, both descending); with the linear
  enclosures this isolates each top eigenvalue, or each run of close ones.
* *Kato–Temple* (singletons; Parlett, The Symmetric Eigenvalue Problem, Thm 10.5.1) with the Rayleigh quotient
  enclosed in [θ_K ∓ ‖U‖/‖v‖] (θ_K = vᵀK/vᵀv) and the residual ε ≤ (‖K − θ_K v‖ + ‖U‖)/‖v‖: for the only eigenvalue
  in (α, β), θ − ε²/(β − θ) ≤ μ ≤ θ + ε²/(θ − α), both ends monotone in θ when ε < min(θ − α, β − θ).
* *Li–Li* (runs of close eigenvalues; Li & Li, LAA 395 (2005) 183–190): Ritz values of span V̂_J enclosed by Arb
  from the exact pencil (H_K symmetrised, G = V̂_JᵀV̂_J) widened by ‖V̂_J‖₂‖U_J‖_F/λ_min(G), the residual
  ε_J ≤ (‖(I − P)K_J‖_F + ‖U_J‖_F)/√λ_min(G), and eigenvalues within 2ε²/(η + √(η² + 4ε²)) of them. Both from the
  g×g products without an exact solve (:func:`.ritz.ritz_pencil`: ‖(I − P)K_J‖_F ≤ ‖K_J − V̂_J C‖_F, any C).
* *Davis–Kahan sin Θ* (Davis & Kahan 1970) for any index group: ‖sin Θ(span V̂_J, V_J)‖₂ ≤ ε_J/η, η the distance
  from the group's Ritz values to the enclosures of every other eigenvalue.
* The eigenvalues beyond the top block: μ_i ≤ min(λ_t + e2, trace(A_S) − Σ_{i<t} μ_i) for i ≥ t (A is positive
  semi-definite: the Gaussian kernel is), trace(A_S) ≤ trace(L_S) + trace(N²2^(−2e)E_hp) + √N δ; and when the top
  block is all of L's rank, μ_r ≤ ‖P₀ E_S P₀‖_F (Courant–Fischer on ker L, :func:`null_block_bound`).

Everything is exact rational arithmetic (Fractions, fmpq) with directed square roots, Arb for Ritz values.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from ..arith import ozaki
from ..arith.dyadic import Dyadic
from ..arith.fixed import FixedMatrix
from ..arith.rounding import sqrt_down, sqrt_up
from ..errors import InsufficientPrecision, InternalCheckFailed
from ..numerics import theorems
from ..numerics.linear_exact import ExactLinear
from .linear_enclosure import LinearEnclosure
from .ritz import ritz_pencil

_E_BITS = 120  # fixed-point bits of E_hp = hi + lo below max|E| (the words carry ~106)
_RITZ_PREC = 256  # bits of the Arb arithmetic on Ritz values (enclosure widths are far below this)


@dataclass(frozen=True)
class ResidualOperator:
    """E in S-units: E_S = factor·2^shift·E_hp + ΔE, ‖ΔE‖_F ≤ delta.

    Attributes
    ----------
    fixed : FixedMatrix, shape (N, N)
        E_hp exactly (L-units), symmetric.
    factor, shift : int
        N² and −2e (the S-units of :class:`~precise_kpca.numerics.linear_exact.ExactLinear`), plus the words' ``exp2``.
    delta : Fraction
        Bound on ‖E_S − factor·2^shift·E_hp‖_F for the exact E of the exact X and σ.
    frobenius : Fraction
        Upper bound on ‖factor·2^shift·E_hp‖_F.
    trace : Fraction
        trace(factor·2^shift·E_hp), exact.
    """

    fixed: FixedMatrix
    factor: int
    shift: int
    delta: Fraction
    frobenius: Fraction
    trace: Fraction

    @property
    def n(self) -> int:
        return self.fixed.shape[0]

    def apply(self, v: Dyadic) -> Dyadic:
        """factor·2^shift·E_hp·v, exactly."""
        return self.apply_fixed(v.to_fixed())

    def apply_fixed(self, v: FixedMatrix) -> Dyadic:
        """factor·2^shift·E_hp·v for v already in fixed point, exactly."""
        return Dyadic.from_fixed(ozaki.matmul(self.fixed, v)).scaled(self.factor, self.shift)

    @property
    def spectral_bound(self) -> Fraction:
        """e2 ≥ ‖E_S‖₂ for the exact E_S (Frobenius of E_hp plus delta)."""
        return self.frobenius + self.delta


def residual_operator(X: np.ndarray, sigma, exact: ExactLinear, median: str = "full") -> ResidualOperator:
    """E_S at bandwidth σ (exact Fraction) from the binary128 builder, with its bound.

    Raises
    ------
    ValueError
        Where the builder refuses σ (outside the binary128 range) or the data.
    """
    from ..numerics.binary128_gram import kept_words

    words = kept_words(X, sigma, median=median, linear=False)  # E of this σ, shared with 1 − CKA
    fixed = FixedMatrix.from_words([words.hi, words.lo], bits=_E_BITS)
    factor, shift = exact.to_s_units
    shift += words.exp2  # the words hold E·2^−exp2 where E is below float64's range
    scale = Fraction(factor) * Fraction(2) ** shift
    n = fixed.shape[0]
    delta_l = Fraction(words.error_bound) + n * Fraction(fixed.error_bound)
    ints, exp2 = ozaki.column_dots(fixed, fixed)
    frob = sqrt_up(Fraction(sum(int(v) for v in ints)) * Fraction(2) ** exp2)
    return ResidualOperator(fixed=FixedMatrix(fixed.digits, fixed.exponent, fixed.digit_bits),
                            factor=factor, shift=shift, delta=delta_l * scale, frobenius=frob * scale,
                            trace=_fixed_trace(fixed) * scale)


def _fixed_trace(fixed: FixedMatrix) -> Fraction:
    acc = 0
    for level in fixed.digits:
        acc = (acc << fixed.digit_bits) + int(np.trace(level))  # digits are integers below 2**27: exact sums
    return Fraction(acc) * Fraction(2) ** fixed.ulp_exp2


@dataclass(frozen=True)
class TopEnclosure:
    """Enclosures of A_S's top t eigenvalues, the products behind them, and a bound on all the others.

    Attributes
    ----------
    t : int
    lower, upper : tuple of Fraction, length t
        lower[i] ≤ μ_i(A_S) ≤ upper[i] (descending, S-units).
    rest_upper : Fraction
        μ_i ≤ rest_upper for every i ≥ t (and μ_i ≥ 0).
    e2 : Fraction
        ≥ ‖E_S‖₂.
    vectors : Dyadic, shape (N, t)
        V̂, the exact basis the products are of.
    products : Dyadic, shape (N, t)
        K = L_S V̂ + N²2^(−2e) E_hp V'.
    unknown : tuple of Fraction, length t
        ‖A_S V̂_j − K_j‖ ≤ unknown[j].
    methods : tuple of str
        "kato-temple" or "block" per eigenvalue.
    runs : tuple of (int, int)
        The runs [a, z) of eigenvalues enclosed together (Weyl intervals that overlap).
    """

    t: int
    lower: tuple
    upper: tuple
    rest_upper: Fraction
    e2: Fraction
    vectors: Dyadic
    products: Dyadic
    unknown: tuple
    methods: tuple
    runs: tuple

    def bounds(self, i: int) -> tuple[Fraction, Fraction]:
        """(lower, upper) of μ_i for any index."""
        if i < self.t:
            return self.lower[i], self.upper[i]
        return Fraction(0), self.rest_upper

    def group_sin_theta(self, start: int, stop: int) -> Fraction:
        """Davis–Kahan bound on ‖sin Θ(span V̂[:, start:stop], V_[start, stop))‖₂ (V: A_S's invariant subspace).

        Raises
        ------
        InsufficientPrecision
            The group's Ritz values are not separated from the other eigenvalues' enclosures.
        """
        if not 0 <= start < stop <= self.t:
            raise ValueError(f"group [{start}, {stop}) must lie in the top block of {self.t} eigenvalues")
        ritz, eps = _ritz(self.vectors.columns(start, stop), self.products.columns(start, stop),
                          self.unknown[start:stop])
        eta = theorems.davis_kahan_gap(ritz[-1][0], ritz[0][1], self.bounds(start - 1)[0] if start > 0 else None,
                                       self.bounds(stop)[1])
        if not (eta > 0 and eps < eta):
            raise InsufficientPrecision(
                f"Gaussian eigenvectors {start}..{stop - 1}: the enclosures do not separate them from the "
                f"neighbouring eigenvalues (residual {float(eps):.3g}, gap {float(eta):.3g})")
        return theorems.sin_theta(eps, eta)


def enclose_top(lin: LinearEnclosure, eop: ResidualOperator, vectors: Dyadic, *, product_bits: int) -> TopEnclosure:
    """Enclose the top t = vectors.shape[1] eigenvalues of A_S (module docstring).

    Parameters
    ----------
    lin : LinearEnclosure
    eop : ResidualOperator
    vectors : Dyadic, shape (N, t)
        Approximate eigenvectors of the top t eigenvalues (any accuracy: the bounds say what it was).
    product_bits : int
        Bits of V' in the E product (about the relative accuracy wanted of the E-sized results, plus a margin).

    Raises
    ------
    InsufficientPrecision
        Weyl's bounds do not isolate the top block from the rest, or a run from its neighbours.
    """
    t = vectors.shape[1]
    if not 1 <= t <= lin.rank:
        raise ValueError(f"the top block must have 1 to {lin.rank} vectors, got {t}")
    e2 = eop.spectral_bound
    weyl = [theorems.weyl(lin.lower(i), lin.upper(i), e2) for i in range(t + 1)]
    weyl = [(max(lo, Fraction(0)), hi) for lo, hi in weyl]  # A_S is positive semi-definite
    if not weyl[t - 1][0] > weyl[t][1]:
        raise InsufficientPrecision(
            f"‖E‖ ≤ {float(e2):.3g} (S-units) is not below half the gap between linear eigenvalues {t - 1} and {t}: "
            "the top block is not isolated")
    rounded = vectors.rounded(product_bits)
    products = lin.exact.apply_l(vectors) + eop.apply(rounded)
    tail = (vectors - rounded).column_squares()
    norms = vectors.column_squares()
    e_hp = eop.frobenius
    unknown = tuple(e_hp * sqrt_up(r) + eop.delta * sqrt_up(v) for r, v in zip(tail, norms))
    lower, upper, methods = [None] * t, [None] * t, [None] * t
    runs = theorems.overlap_runs([lo for lo, _ in weyl[:t]], [hi for _, hi in weyl[:t]])
    for a, z in runs:
        above = weyl[a - 1][0] if a > 0 else None  # μ_{a−1} ≥ this
        below = weyl[z][1]  # μ_z ≤ this
        if z - a == 1:
            lo, hi = _kato_temple(vectors.columns(a, z), products.columns(a, z), unknown[a], below, above, a)
            lower[a], upper[a], methods[a] = lo, hi, "kato-temple"
        else:
            for i, (lo, hi) in zip(range(a, z), _block(vectors.columns(a, z), products.columns(a, z),
                                                        unknown[a:z], below, above, a, z)):
                lower[i], upper[i], methods[i] = lo, hi, "block"
    for i in range(t):
        if not (weyl[i][0] <= upper[i] and lower[i] <= weyl[i][1]):
            raise InternalCheckFailed(f"the enclosure [{float(lower[i]):.6g}, {float(upper[i]):.6g}] of eigenvalue {i} "
                                      f"misses its Weyl interval [{float(weyl[i][0]):.6g}, {float(weyl[i][1]):.6g}]")
        lower[i], upper[i] = max(lower[i], weyl[i][0]), min(upper[i], weyl[i][1])
    trace = lin.exact.trace() + eop.trace + sqrt_up(Fraction(eop.n)) * eop.delta
    rest = min(weyl[t][1], trace - sum(lower))
    if t == lin.rank and lin.exact.tall:
        rest = min(rest, null_block_bound(lin.exact, eop))
    return TopEnclosure(t=t, lower=tuple(lower), upper=tuple(upper), rest_upper=rest, e2=e2, vectors=vectors,
                        products=products, unknown=unknown, methods=tuple(methods), runs=tuple(runs))


def null_block_bound(exact: ExactLinear, eop: ResidualOperator) -> Fraction:
    """Upper bound on μ_r(A_S) (0-based: the largest eigenvalue beyond L's rank r), from Courant–Fischer.

    μ_r ≤ λ_max(P₀ A_S P₀) for P₀ the orthogonal projector onto range(Z)^⊥ = ker(L), where L vanishes exactly:
    P₀ A_S P₀ = P₀ E_S P₀. Its Frobenius norm is E-sized arithmetic on exact products,
    ‖P₀EP₀‖_F² = ‖E‖_F² − 2 tr(C⁻¹YᵀY) + tr(C⁻¹FC⁻¹F), Y = E Z_B, F = Z_BᵀY, C = Z_BᵀZ_B, with Z_B independent
    columns of Z (pivots of S's exact row reduction); C⁻¹ enters through Arb solves. Cost O(N²r) on BLAS.
    """
    if not exact.tall:
        raise InsufficientPrecision("the null-block bound needs d ≤ N")
    z_b, z_b_fixed, c = exact.derived(_pivot_basis, keep=8)
    y = eop.apply_fixed(z_b_fixed)
    gram, f = (y.T @ y).to_fmpq(), (z_b.T @ y).to_fmpq()
    e2 = eop.frobenius
    with flint.ctx.workprec(_RITZ_PREC):
        cb = flint.arb_mat(c)
        first = cb.solve(flint.arb_mat(gram)).trace()
        m = cb.solve(flint.arb_mat(f))
        second = (m * m).trace()
        frob2 = flint.arb(flint.fmpq(e2.numerator, e2.denominator)) ** 2 - 2 * first + second
        if not frob2.is_finite():
            raise InsufficientPrecision("the null-block Frobenius norm was not enclosed")
        upper = frob2.upper()
        upper = flint.arb(0) if upper < 0 else upper
        bound = upper.sqrt().upper()
        man, exp = (int(v) for v in bound.man_exp())
    return Fraction(man) * Fraction(2) ** exp + eop.delta


def _pivot_basis(exact: ExactLinear) -> tuple[Dyadic, FixedMatrix, flint.fmpq_mat]:
    """Z_B (independent columns of Z; also in fixed point, for the products with E) and C = Z_BᵀZ_B, exact:
    σ-independent, one per data set."""
    pivots = _pivot_columns(exact.small, exact.rank)
    z_b = Dyadic(flint.fmpz_mat([[exact.z.ints[i, j] for j in pivots] for i in range(exact.n)]), 0)
    return z_b, z_b.to_fixed(), flint.fmpq_mat([[exact.small[i, j] for j in pivots] for i in pivots])


def _pivot_columns(small: flint.fmpz_mat, rank: int) -> list[int]:
    """Columns of a maximal independent set of S's columns (hence of Z's: S = ZᵀZ has Z's null space)."""
    reduced, _, found = small.rref()
    if found != rank:
        raise InternalCheckFailed(f"row reduction found rank {found}, elimination {rank}")
    pivots, col = [], 0
    for i in range(rank):
        while reduced[i, col] == 0:
            col += 1
        pivots.append(col)
    return pivots


def _kato_temple(v: Dyadic, k: Dyadic, unknown: Fraction, alpha: Fraction, beta, index: int):
    """Kato–Temple enclosure of the only eigenvalue in (alpha, beta) (beta None: +∞) from one column."""
    vv = (v.T @ v).entry(0, 0)
    vk = (v.T @ k).entry(0, 0)
    kk = (k.T @ k).entry(0, 0)
    theta = vk / vv
    norm_v = sqrt_down(vv)
    tau = unknown / norm_v
    r2 = kk - vk * vk / vv  # ‖K − θ_K v‖², exact
    if r2 < 0:
        raise InternalCheckFailed(f"negative squared residual {float(r2):.3g} of eigenvector {index}: an inexact product")
    eps = (sqrt_up(r2) + unknown) / norm_v
    lo_t, hi_t = theta - tau, theta + tau
    room_below = lo_t - alpha
    room_above = beta - hi_t if beta is not None else None
    if not (room_below > eps and (room_above is None or room_above > eps)):
        raise InsufficientPrecision(
            f"Gaussian eigenvalue {index}: the residual {float(eps):.3g} of its approximate eigenvector is not below "
            f"the distance {float(min(room_below, room_above) if room_above is not None else room_below):.3g} to "
            "its neighbours' Weyl bounds")
    return theorems.kato_temple(lo_t, hi_t, eps * eps, alpha, beta)  # its hypotheses: the rooms just checked


def _ritz(v: Dyadic, k: Dyadic, unknown) -> tuple[list, Fraction]:
    """Enclosures of the Ritz values of A_S on span v (descending) and the Ritz residual bound ε."""
    g = v.shape[1]
    gram, hk = v.T @ v, v.T @ k
    identity = Dyadic(flint.fmpz_mat(g, g, [int(i == j) for i in range(g) for j in range(g)]), 0)
    omega = sqrt_up((gram - identity).frobenius_squared())
    if not omega < 1:
        raise InternalCheckFailed(f"approximate eigenvectors far from orthonormal (ω ≤ {float(omega):.3g})")
    u_frob = sqrt_up(sum(x * x for x in unknown))
    lam_min = 1 - omega
    pencil = ritz_pencil(gram, hk, prec=_RITZ_PREC, square=k.T @ k)  # ‖(I − P)K‖_F² ≤ pencil.residual2
    if pencil is None:
        raise InsufficientPrecision("Arb could not enclose the Ritz values of an eigenvector group")
    shift = sqrt_up(1 + omega) * u_frob / lam_min  # ‖G^(−1/2) sym(VᵀU) G^(−1/2)‖₂
    ritz = [(lo - shift, hi + shift) for lo, hi in pencil.values]
    eps = (sqrt_up(pencil.residual2) + u_frob) / sqrt_down(lam_min)
    return ritz, eps


def _block(v: Dyadic, k: Dyadic, unknown, below: Fraction, above, start: int, stop: int):
    """Li–Li enclosures of eigenvalues start..stop−1 from the Ritz values of span v."""
    ritz, eps = _ritz(v, k, unknown)
    bounds = theorems.li_li(ritz, eps, above, below)
    if bounds is None:
        raise InsufficientPrecision(
            f"Gaussian eigenvalues {start}..{stop - 1}: their Ritz values are not separated from the neighbours' "
            f"Weyl bounds (residual {float(eps):.3g})")
    return bounds


def eigenvalue_gap_interval(lin: LinearEnclosure, top: TopEnclosure) -> tuple[Fraction, Fraction, bool]:
    """Interval of max_i |μ_i − λ_i| / λ_1 (Eq. 18) and whether its upper end is set by the top block.

    Indices i < t use the enclosures; every other index is bounded by max(rest_upper, λ_t) (μ_i, λ_i ≥ 0).
    """
    lo_all, hi_all = Fraction(0), Fraction(0)
    for i in range(top.t):
        m_lo, m_hi = top.lower[i], top.upper[i]
        l_lo, l_hi = lin.lower(i), lin.upper(i)
        lo_all = max(lo_all, m_lo - l_hi, l_lo - m_hi)
        hi_all = max(hi_all, m_hi - l_lo, l_hi - m_lo)
    rest = max(top.rest_upper, lin.upper(top.t))
    decided = rest <= lo_all
    hi_all = max(hi_all, rest)
    return lo_all / lin.upper(0), hi_all / lin.lower(0), decided


__all__ = ["ResidualOperator", "TopEnclosure", "eigenvalue_gap_interval", "enclose_top", "residual_operator"]
