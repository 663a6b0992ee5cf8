"""σ → ∞ limits of Theorem 3's measures, rigorously: first-order perturbation theory evaluated on exact data.

With ε² = 1/σ_X² = 1/(d_X²σ²), σ_X² H K_G H = L + ε²E₁ + O(ε⁴) (:mod:`.first_order_operator`). L's nonzero
eigenvalues λ_i (i < r, descending) fall into *blocks* J: single eigenvalues, or runs of exactly equal ones (proven
by :func:`~precise_kpca.certify.linear_enclosure.tied_linear_eigenvalues_cached`); W_J is an orthonormal basis of
the eigenspace, P₀ the projector on ker L. Analytic perturbation theory (Kato II.2) gives the limits

* eigenvalue (Eq. 18): σ²·‖σ_X²λ_G − λ_L‖_∞/‖λ_L‖_∞ → max(max_J |eig(C_JJ)|, ν) / (d_X² λ_1), C = WᵀE₁W and
  ν = λ_max(P₀E₁P₀) (the null block is positive semi-definite);
* eigenprojection (Algorithm 1): for a group g (a union of blocks) the largest principal angle between the
  Gaussian and the linear eigenspaces is ε²‖Y_g‖₂ + O(ε⁴), Y_g = Σ_{j∉g} w_j C_{j,g}(Λ_g − λ_j)⁻¹ + P₀E₁W_gΛ_g⁻¹
  (the reduced resolvent applied to E₁W_g; its second term is the null-space part), so σ²·EigenDist → the mean or
  max over the groups of ‖Y_g‖₂/d_X², with ‖Y_g‖₂² = λ_max(Σ_{j∉g} x_jᵀx_j + Λ_g⁻¹ N_g Λ_g⁻¹),
  x_{j,i} = C_ji/(λ_i − λ_j), N_g = (P₀E₁W_g)ᵀ(P₀E₁W_g).

Every quantity is basis-invariant inside a block, so any orthonormal W_J may be used. Evaluation (S-units; the
limits are ratios, the unit cancels):

* Ŵ = the exact dyadic basis of :func:`~precise_kpca.certify.linear_enclosure.linear_enclosure`; exact products
  P = E₁_SŴ (python-flint), exact r×r rationals Ĝ = ŴᵀŴ, Ĉ = ŴᵀP, F̂ = PᵀP and N̂ = F̂ − (Z_BᵀP)ᵀC_B⁻¹(Z_BᵀP)
  (P₀ = I − Z_B C_B⁻¹ Z_Bᵀ exactly, Z_B a basis of range L);
* W̃_J = Ŵ_J T_J orthonormal (T_J the inverse Cholesky factor of Ĝ_JJ, Arb). Davis–Kahan gives
  s_J ≥ ‖sin Θ(Ŵ_J, W_J)‖₂ (:meth:`~precise_kpca.certify.linear_enclosure.LinearEnclosure.sin_theta`), so for the
  Procrustes-aligned true basis ‖W_J − W̃_J‖₂ = 2 sin(θ_J/2) ≤ τ_J = s_J √(2/(1 + √(1 − s_J²)));
* the true C, N then lie within (Lipschitz bounds in W, e_J ≥ ‖E₁W̃_J‖₂ from F̂, p_g ≥ ‖P₀E₁W̃_g‖₂ from N̂,
  ‖E₁‖₂ ≤ ‖E₁‖_F exact):
  ‖C_JK − C̃_JK‖₂ ≤ τ_J e_K + τ_K e_J + τ_Jτ_K‖E₁‖ and ‖N_g − Ñ_g‖₂ ≤ 2τ_g‖E₁‖p_g + τ_g²‖E₁‖², τ_g² = Σ_{J⊂g} τ_J²,
  applied entrywise (|entry| ≤ spectral norm); the λ_i are the linear enclosures; eigenvalues of C̃_JJ are those
  of the exact pencil (Ĉ_JJ, Ĝ_JJ) (Arb); λ_max of a small symmetric ball matrix is that of its exact symmetric
  midpoint (Arb) widened by the Frobenius norm of the rest (Weyl).

The working precision doubles (``bits`` of the linear basis, and the Arb precision with it) until the interval
certifies the requested digits. Hand-written: no library evaluates perturbation coefficients of an exact matrix
pencil with enclosures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import mpmath
import numpy as np

from ..arith.balls import mid_fraction, radius_fraction
from ..arith.dyadic import Dyadic
from ..certify.linear_enclosure import LinearEnclosure, linear_enclosure, tied_linear_eigenvalues_cached
from ..certify.ritz import ritz_enclosures, ritz_pencil
from ..errors import InsufficientPrecision, InternalCheckFailed
from ..measures.intervals import ball_max, check_k, fraction_ball, linear_groups_exact
from ..measures.measurement import interval_digits
from ..measures.results import arb_ends
from ..numerics.data import data_state
from ..numerics.exact_geometry import ExactEccentricity
from ..numerics.theorems import split_runs
from .first_order_operator import FirstOrderOperator, _range_basis, first_order_operator

_DIGIT_BITS = math.log2(10)
MAX_BITS = 4096
"""Largest grid of the linear basis tried before a limit is reported short of the requested digits."""


@dataclass(frozen=True, eq=False)
class LimitEnclosure:
    """The enclosed first-order data of one data set at one precision (module docstring; S-units).

    Attributes
    ----------
    lin : LinearEnclosure
    op : FirstOrderOperator
    blocks : tuple of (int, int)
        Index ranges of single or exactly repeated nonzero linear eigenvalues.
    c_hat, g_hat : flint.fmpq_mat, shape (r, r)
        Ĉ = ŴᵀE₁_SŴ and Ĝ = ŴᵀŴ, exact.
    c, n : flint.arb_mat, shape (r, r)
        C̃ = TᵀĈT and Ñ = TᵀN̂T.
    e, tau : tuple of flint.arb, one per block
        e_J ≥ ‖E₁W̃_J‖₂ and τ_J ≥ ‖W_J − W̃_J‖₂.
    norm : flint.arb
        ≥ ‖E₁_S‖₂.
    d_x2 : flint.arb
        d_X², the squared median distance (data units).
    prec : int
        Bits of the Arb arithmetic.
    """

    lin: LinearEnclosure
    op: FirstOrderOperator
    blocks: tuple
    c_hat: flint.fmpq_mat
    g_hat: flint.fmpq_mat
    c: flint.arb_mat
    n: flint.arb_mat
    e: tuple
    tau: tuple
    norm: flint.arb
    d_x2: flint.arb
    prec: int

    @property
    def rank(self) -> int:
        return self.lin.rank

    def block_of(self, i: int) -> int:
        return next(b for b, (a, z) in enumerate(self.blocks) if a <= i < z)

    def coupling_radius(self, j: int, k: int) -> flint.arb:
        """Upper bound on ‖C_JK − C̃_JK‖₂ for the blocks J, K (block indices)."""
        tj, tk = self.tau[j], self.tau[k]
        return tj * self.e[k] + tk * self.e[j] + tj * tk * self.norm


def enclose(X: np.ndarray, bits: int, route: str | None = None) -> LimitEnclosure:
    """The :class:`LimitEnclosure` of validated float64 data on a linear basis of ``bits`` bits (cached).

    Raises
    ------
    InsufficientPrecision
        Linear eigenvalues are not separated (nor proven equal) at this precision.
    """
    return data_state(X).derived(_enclose_cached, 64 * math.ceil(max(bits, 64) / 64), route, keep=4)


def _enclose_cached(X: np.ndarray, bits: int, route) -> LimitEnclosure:
    lin = linear_enclosure(X, bits)
    op = first_order_operator(X, route)
    blocks = _blocks(lin)
    w = lin.vectors
    p = op.apply(w)
    s = flint.fmpq(op.scale.numerator, op.scale.denominator)
    g_hat = (w.T @ w).to_fmpq()
    c_hat = (w.T @ p).to_fmpq() * s
    pp = (p.T @ p).to_fmpq()
    prec = 3 * bits + 256
    n_hat, n_excess = _null_part(lin, p, pp, prec)
    with flint.ctx.workprec(prec):
        t = _orthonormalizer(g_hat, blocks)
        tt = t.transpose()
        c = tt * flint.arb_mat(c_hat) * t
        f = tt * flint.arb_mat(pp * (s * s)) * t
        n = tt * _widened_matrix(flint.arb_mat(n_hat * (s * s)), n_excess * Fraction(op.scale) ** 2) * t
        e = tuple(_trace(f, a, z).sqrt() for a, z in blocks)
        tau = tuple(_procrustes(lin.sin_theta(a, z)) for a, z in blocks)
        norm = _ball(op.frobenius)
        d_x2 = _median_distance_squared(X, lin.exact.exp2)
    return LimitEnclosure(lin=lin, op=op, blocks=tuple(blocks), c_hat=c_hat, g_hat=g_hat, c=c, n=n, e=e, tau=tau,
                          norm=norm, d_x2=d_x2, prec=prec)


def _blocks(lin: LinearEnclosure) -> list[tuple[int, int]]:
    """Runs of indices the enclosures do not separate; each must be an exact tie."""
    blocks = split_runs([lin.separated(i) for i in range(1, lin.rank)])
    runs = [b for b in blocks if b[1] - b[0] > 1]
    ties = set(tied_linear_eigenvalues_cached(lin.exact)) if runs else set()
    for a, z in runs:
        if (a, z) not in ties:
            raise InsufficientPrecision(
                f"linear eigenvalues {a}..{z - 1} are not separated by their enclosures (radius "
                f"{float(lin.radius):.3g} at {lin.bits} bits) and are not all equal (exact characteristic polynomial)",
                needed_dps=int(2 * lin.bits / _DIGIT_BITS))
    return blocks


def _null_part(lin: LinearEnclosure, p: Dyadic, pp: flint.fmpq_mat, prec: int) -> tuple[flint.fmpq_mat, Fraction]:
    """(T, excess): T = (P − Z_B C)ᵀ(P − Z_B C) exact, C ≈ C_B⁻¹Z_BᵀP, and (P₀P)ᵀ(P₀P) = T − D with
    0 ⪯ D, ‖D‖₂ ≤ excess ≤ 2^-prec tr T (:func:`~precise_kpca.certify.ritz.ritz_pencil`: no exact solve; P ⊥ 1
    already; (0, 0) when ker L = span 1)."""
    exact = lin.exact
    if exact.rank >= exact.n - 1:
        return flint.fmpq_mat(lin.rank, lin.rank), Fraction(0)
    z_b, c_b = _range_basis(exact)
    fit = ritz_pencil(Dyadic(c_b, 0), Dyadic(z_b.transpose(), 0) @ p, prec=prec, square=pp, values=False,
                      excess_bits=prec)
    if fit is None:
        raise InternalCheckFailed("the range basis Z_B of the linear Gram is singular")
    return fit.residual_gram.to_fmpq(), fit.excess


def _widened_matrix(m: flint.arb_mat, radius: Fraction) -> flint.arb_mat:
    """Every entry of m widened by ±radius (a matrix within ‖·‖₂ ≤ radius of m has its entries within it)."""
    pad = flint.arb(0, _ball(radius).upper()) if radius else flint.arb(0)
    return flint.arb_mat(m.nrows(), m.ncols(), [m[i, j] + pad for i in range(m.nrows()) for j in range(m.ncols())])


def _orthonormalizer(g_hat: flint.fmpq_mat, blocks) -> flint.arb_mat:
    """Block-diagonal T with (ŴT)ᵀ(ŴT) = I on every block: the inverse Cholesky factors of Ĝ's diagonal blocks."""
    r = g_hat.nrows()
    t = flint.arb_mat(r, r)
    for a, z in blocks:
        m = z - a
        low = [[flint.arb(0)] * m for _ in range(m)]
        for j in range(m):
            low[j][j] = (flint.arb(g_hat[a + j, a + j]) - sum((low[j][k] ** 2 for k in range(j)), flint.arb(0))).sqrt()
            for i in range(j + 1, m):
                dot = sum((low[i][k] * low[j][k] for k in range(j)), flint.arb(0))
                low[i][j] = (flint.arb(g_hat[a + i, a + j]) - dot) / low[j][j]
        inv = flint.arb_mat(low).inv()  # lower triangular; T_J = L⁻ᵀ
        for i in range(m):
            for j in range(m):
                t[a + i, a + j] = inv[j, i]
    return t


def _trace(m: flint.arb_mat, a: int, z: int) -> flint.arb:
    return sum((m[i, i] for i in range(a, z)), flint.arb(0)).nonnegative_part()


def _procrustes(s: Fraction) -> flint.arb:
    """τ ≥ 2 sin(θ/2) for sin θ ≤ s: s √(2/(1 + √(1 − s²)))."""
    sb = _ball(s)
    return sb * (2 / (1 + (1 - sb * sb).sqrt())).sqrt()


def _ball(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


def _median_distance_squared(X: np.ndarray, exp2: int) -> flint.arb:
    """d_X² in data units: the median squared distances are integers in units of 2^(2·exp2)."""
    roots = [flint.arb(v).sqrt() for v in ExactEccentricity(X).median_sq]
    d_x = sum(roots[1:], roots[0]) / len(roots)
    return d_x * d_x * flint.arb(2) ** (2 * exp2)


# -- the limits ----------------------------------------------------------------------------------------------
def eigenvalue_limit_ball(enc: LimitEnclosure) -> flint.arb:
    """Ball containing lim σ²·(Eq. 18's ratio) = max(max_J |eig C_JJ|, ν)/(d_X² λ_1)."""
    lin = enc.lin
    with flint.ctx.workprec(enc.prec):
        nu_lo, nu_hi = enc.op.null_top
        top = fraction_ball(nu_lo, nu_hi)
        for b, (a, z) in enumerate(enc.blocks):
            radius = enc.coupling_radius(b, b)
            for shift in _block_shifts(enc, a, z):
                top = ball_max(top, abs(shift + flint.arb(0, radius.upper())))
        return top / (enc.d_x2 * fraction_ball(lin.lower(0), lin.upper(0)))


def _block_shifts(enc: LimitEnclosure, a: int, z: int) -> list[flint.arb]:
    """Balls containing the eigenvalues of C̃_JJ: those of the exact pencil (Ĉ_JJ, Ĝ_JJ)."""
    if z - a == 1:
        return [flint.arb(enc.c_hat[a, a] / enc.g_hat[a, a])]
    idx = range(a, z)
    c = flint.fmpq_mat([[enc.c_hat[i, j] for j in idx] for i in idx])
    g = flint.fmpq_mat([[enc.g_hat[i, j] for j in idx] for i in idx])
    pencil = ritz_pencil(g, c, prec=enc.prec)
    if pencil is None:
        raise InsufficientPrecision(f"the first-order shifts of the repeated linear eigenvalues {a}..{z - 1} were "
                                    "not enclosed")
    return [fraction_ball(lo, hi) for lo, hi in pencil.values]


def angle_coefficient_ball(enc: LimitEnclosure, start: int, stop: int) -> flint.arb:
    """Ball containing ‖Y_g‖₂ for the group g = [start, stop) (lim σ_X²·θ_max of the group).

    Raises
    ------
    Undetermined
        The group's edge cuts an exact tie (the linear eigenvectors are an arbitrary basis there).
    """
    lin = enc.lin
    lin.sin_theta(start, stop)  # a group must not split a block: raises Undetermined / InsufficientPrecision
    group = range(start, stop)
    others = [j for j in range(enc.rank) if not start <= j < stop]
    with flint.ctx.workprec(enc.prec):
        lam = [fraction_ball(lin.lower(i), lin.upper(i)) for i in range(enc.rank)]
        x = [[_widened(enc.c[j, i], enc.coupling_radius(enc.block_of(j), enc.block_of(i))) / (lam[i] - lam[j])
              for i in group] for j in others]
        n_radius = _null_radius(enc, start, stop)
        m = [[sum((row[a] * row[b] for row in x), flint.arb(0))
              + _widened(enc.n[i, k], n_radius) / (lam[i] * lam[k])
              for b, k in enumerate(group)] for a, i in enumerate(group)]
        return _symmetric_top(m, enc.prec).nonnegative_part().sqrt()


def _null_radius(enc: LimitEnclosure, start: int, stop: int) -> flint.arb:
    """‖N_g − Ñ_g‖₂ ≤ 2τ_g‖E₁‖p_g + τ_g²‖E₁‖²."""
    blocks = {enc.block_of(i) for i in range(start, stop)}
    tau2 = sum((enc.tau[b] ** 2 for b in blocks), flint.arb(0))
    tau_g = tau2.sqrt()
    p_g = _trace(enc.n, start, stop).sqrt()
    return 2 * tau_g * enc.norm * p_g + tau2 * enc.norm * enc.norm


def _widened(x: flint.arb, radius: flint.arb) -> flint.arb:
    return x + flint.arb(0, radius.upper())


def _symmetric_top(m: list, prec: int) -> flint.arb:
    """Ball containing λ_max of every symmetric matrix inside the square ball matrix m."""
    g = len(m)
    if g == 1:
        return m[0][0]
    mid = [[mid_fraction(m[i][j]) for j in range(g)] for i in range(g)]
    sym = [[(mid[i][j] + mid[j][i]) / 2 for j in range(g)] for i in range(g)]
    rest = sum(((radius_fraction(m[i][j]) + abs(mid[i][j] - sym[i][j])) ** 2 for i in range(g) for j in range(g)),
               Fraction(0))
    ritz = ritz_enclosures(flint.fmpq_mat([[flint.fmpq(v.numerator, v.denominator) for v in row] for row in sym]),
                           prec)
    if ritz is None:
        raise InsufficientPrecision("the top eigenvalue of a group's first-order matrix was not enclosed")
    lo, hi = ritz[0]
    return fraction_ball(lo, hi) + flint.arb(0, _ball(rest).sqrt().upper())






def eigenprojection_limit_ball(enc: LimitEnclosure, k: int, tau: float, aggregate: str) -> flint.arb:
    """Ball containing lim σ²·EigenDist over the top-k linear eigenvalues, grouped as in Algorithm 1."""
    check_k(enc.lin, k, "eigenprojection")
    groups = linear_groups_exact(enc.lin, k, tau)
    with flint.ctx.workprec(enc.prec):
        balls = [angle_coefficient_ball(enc, s, t) / enc.d_x2 for s, t in groups]
        if aggregate == "max":
            value = balls[0]
            for ball in balls[1:]:
                value = ball_max(value, ball)
            return value
        return sum(balls[1:], balls[0]) / len(balls)


# -- precision schedule --------------------------------------------------------------------------------------
def enclosed_limit(X: np.ndarray, evaluate, digits: int, *, route: str | None = None,
                   max_bits: int = MAX_BITS) -> tuple[tuple, int, str]:
    """The ends (exact mpf) of ``evaluate(enclosure)``'s ball, the bits used and why it is short (or "").

    The linear basis starts with enough bits for ``digits`` and doubles until the interval certifies them or
    ``max_bits`` is passed (then the narrowest interval is returned with the reason). The doubling also stops when
    it no longer halves the interval (its width is then set by a part that does not depend on the basis: the null
    block's enclosure), and when the interval contains 0 and is narrower than 10^(−2·digits): the limits are
    dimensionless, and such a value is 0 to twice the requested digits, which no relative digit can certify.

    Raises
    ------
    InsufficientPrecision
        No precision up to ``max_bits`` separated what the limit needs.
    Undetermined
        The limit does not exist (it depends on a basis inside an exact tie).
    """
    bits = 64 * math.ceil((digits * _DIGIT_BITS + 64) / 64)
    best, failure, width = None, None, None
    while bits <= max_bits:
        try:
            enc = enclose(X, bits, route)
            with flint.ctx.workprec(enc.prec):  # the ends of a ball are rounded at the working precision
                ends = arb_ends(evaluate(enc))
        except InsufficientPrecision as exc:
            failure = exc
        else:
            got = interval_digits(*ends)
            if best is None or got > best[2]:
                best = (ends, bits, got)
            if got >= digits:
                return ends, bits, ""
            if ends[0] <= 0 <= ends[1] and ends[1] - ends[0] < mpmath.mpf(10) ** (-2 * digits):
                return ends, bits, f"the limit is 0 to within {mpmath.nstr(ends[1] - ends[0], 3)}: no relative digit " \
                                   "can be certified"
            if width is not None and 2 * (ends[1] - ends[0]) > width:
                return best[0], best[1], (f"the enclosure certifies {best[2]} of the {digits} digits requested; more "
                                          f"bits do not narrow it (the null block's enclosure: {enc.op.null_method})")
            width = ends[1] - ends[0]
        bits *= 2
    if best is None:
        raise failure
    ends, used, got = best
    return ends, used, f"the enclosure certifies {got} of the {digits} digits requested at up to {max_bits} bits"
