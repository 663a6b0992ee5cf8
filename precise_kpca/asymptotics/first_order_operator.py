"""E₁, the first-order term of σ_X² H K_G H = L + ε² E₁ + O(ε⁴) (ε = 1/σ_X), exactly, and its null block's top
eigenvalue, rigorously.

E₁ = H D^{∘2} H / 8 with D the exact squared distances (proofs/perturbation). Everything here is in the S-units of
:mod:`precise_kpca.numerics.linear_exact`: Z = N·M − 1sᵀ (M the integer mantissas, X = M·2^e), L_S = Z Zᵀ and
E₁_S = N²2^(−2e)·E₁, a rational multiple of an integer operator, applied exactly to exact dyadic blocks:

* ``"features"`` — the squared distances of Z's rows are a_i + a_j − 2G_ij (a_i = |z_i|², G = Z Zᵀ), so
  H(D_Z∘D_Z)H = 2HΨH with Ψ = ΞΞᵀ − 2(AG + GA), A = diag(a) and Ξ = [a, z_k², z_k², 2 z_k z_l (k < l)] (then
  ΞΞᵀ = aaᵀ + 2 G∘G; the a_i² terms die under H). With centered factors,
  (NH)Ψ(NH) = U J Uᵀ, U = [Ξ_N, B_N, Z], Ξ_N = NHΞ, B_N = NHAZ, J = [[I, 0, 0], [0, 0, −2N], [0, −2N, 0]], and
  E₁_S = 2^(2e)/(4N⁴)·U J Uᵀ: Ξ has q = (d + 1)(d + 2)/2 columns, U has q + 2d, and a product costs O(N·q·m).
* ``"dense"`` — E₁_S = 2^(2e)/8·(NH) Q (NH) with Q = D_int∘D_int, D_int the exact squared distances of the
  mantissas (N×N integers). Chosen when U would have more than N columns.

Norm: ‖E₁_S‖₂ ≤ ‖E₁_S‖_F, exact: tr((JΓ)²), Γ = UᵀU (features), or ‖Q‖_F² − 2‖Q1‖²/N + (1ᵀQ1)²/N² (dense).

Null block. ker L = null(Zᵀ) ∋ 1 (projector P₀). As ZᵀP₀ = 0 and P₀1 = 0, P₀E₁_SP₀ = 2^(2e)/(4N⁴)·P₀Ξ_NΞ_NᵀP₀ ⪰ 0
(G∘G ⪰ 0 by Schur's product theorem): its top eigenvalue ν is the null part of the eigenvalue limit. It is
enclosed

* (features) as 2^(2e)/(4N⁴)·λ_max(K), K = Ξ_NᵀP₀Ξ_N = Ξ_NᵀΞ_N − YᵀC⁻¹Y (Y = Z_BᵀΞ_N, C = Z_BᵀZ_B, Z_B independent
  columns of Z) an exact rational q×q matrix: rounded to fixed point (its rounding is ``delta``) and its float64
  eigensystem certified by :func:`precise_kpca.certify.eigen_enclosure.enclose_eigensystem` (Weyl after an exactly
  orthogonal similarity, Kato–Temple, Li–Li);
* (dense, N·q ≤ 2^22) the same λ_max from M = P₀Ξ_N = Ξ_N − Z_B C⁻¹Y in Arb balls on the exact integers (an exact
  rational M carries denominators of thousands of bits), through the smaller of MᵀM and MMᵀ (one nonzero spectrum):
  the exactly symmetric midpoint matrix is certified as above and widened by Weyl (‖ball radii‖_F);
* (dense, larger) with B = P₁QP₁ ⪰ 0, P₁ the projector on null([1, Z]ᵀ), ν = 2^(2e)N²/8·λ_max(B): for the exact vector
  v = P₁y (y a float64 approximation of B's top eigenvector) θ = vᵀBv/vᵀv ≤ λ_max (Courant–Fischer) and, with
  ε² = ‖Bv‖²/‖v‖² − θ² and α² = ‖B‖_F² − 2‖Bv‖²/‖v‖² + θ² ≥ λ₂² (the Frobenius norm of B deflated by v),
  λ_max ≤ θ + ε²/(θ − α) when α < θ (Kato–Temple, Parlett Thm 10.5.1), else λ_max ≤ ‖B‖_F. All exact rationals.

Hand-written because no library applies H D^{∘2} H exactly to multi-hundred-bit blocks or certifies the top
eigenvalue of a compression to an exact null space; the approximations (float64 eigensystems) are never trusted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh

from ..arith.balls import radius_fraction
from ..arith.dyadic import Dyadic
from ..arith.fixed import FixedMatrix
from ..arith.rounding import sqrt_up
from ..backends.base import as_fraction
from ..certify.eigen_enclosure import enclose_eigensystem
from ..numerics.linear_exact import ExactLinear, exact_linear
from ..certify.perturbed_enclosure import _pivot_columns
from ..certify.ritz import ritz_pencil
from ..errors import InsufficientPrecision, InternalCheckFailed
from ..numerics import theorems
from ..numerics.data import data_state
from ..numerics.exact import ExactData

ROUTES = ("features", "dense")
_NULL_BITS = 160  # fixed-point bits of the null-block matrix K below its largest entry (rounding ~2**-160 ‖K‖)
_COMPRESSION_MAX_ENTRIES = 1 << 22  # largest N·q of the feature matrix the dense route's null block is built from
_SOLVE_DOUBLINGS = 4  # Arb precisions tried for C⁻¹Y in the dense route's compression (each twice the last)
_DENSE_EIGH_MAX_N = 64  # below this the approximate top vector comes from a dense eigh, above from Lanczos


@dataclass(frozen=True, eq=False)
class FirstOrderOperator:
    """E₁_S = ``scale`` · (an exact integer operator), its Frobenius bound and its null block's top eigenvalue.

    Attributes
    ----------
    exact : ExactLinear
    route : {"features", "dense"}
    scale : Fraction
        E₁_S v = scale · :meth:`apply` (v).
    frobenius : Fraction
        Upper bound on ‖E₁_S‖_F (hence on ‖E₁_S‖₂).
    null_top : tuple of Fraction
        (lo, hi) enclosing ν = λ_max(P₀E₁_SP₀) (S-units; exactly 0 when ker L = span 1).
    null_method : str
        How ``null_top`` was enclosed.
    """

    exact: ExactLinear
    route: str
    scale: Fraction
    frobenius: Fraction
    null_top: tuple
    null_method: str
    _factor: flint.fmpz_mat
    _factor_t: flint.fmpz_mat | None
    _middle: flint.fmpz_mat | None

    def apply(self, v: Dyadic) -> Dyadic:
        """The integer operator times v, exactly (N×m): E₁_S v = scale · apply(v)."""
        if self.route == "features":
            return Dyadic(self._factor * (self._middle * (self._factor_t * v.ints)), v.exp2)
        return Dyadic(_center(self._factor * _center(v.ints)), v.exp2)


def first_order_operator(X: np.ndarray, route: str | None = None) -> FirstOrderOperator:
    """The :class:`FirstOrderOperator` of validated float64 data (cached per data set and route).

    Parameters
    ----------
    X : ndarray, shape (N, d)
    route : {"features", "dense"}, optional
        Default: ``"features"`` when U has at most N columns (module docstring), else ``"dense"``.
    """
    if route is not None and route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
    state = data_state(X)
    n, d = state.shape
    if route is None:
        route = "features" if _feature_count(d) + 2 * d <= n else "dense"
    return state.derived(_operator_cached, route, keep=4)


def _feature_count(d: int) -> int:
    return 1 + 2 * d + d * (d - 1) // 2


def _operator_cached(X: np.ndarray, route: str) -> FirstOrderOperator:
    exact = exact_linear(X)
    if route == "features":
        return _features_operator(exact)
    return _dense_operator(X, exact)


# -- features ------------------------------------------------------------------------------------------------
def _feature_blocks(exact: ExactLinear) -> tuple[np.ndarray, np.ndarray]:
    """(Ξ_N, B_N) as integer object arrays: NHΞ (N×q) and NHAZ (N×d) of the module docstring."""
    n, d = exact.n, exact.d
    z = exact.z.to_int_array()
    a = (z * z).sum(axis=1)
    rows, cols = np.triu_indices(d, 1)
    xi = np.hstack([a[:, None], z * z, z * z, 2 * z[:, rows] * z[:, cols]])
    return _center_array(xi, n), _center_array(a[:, None] * z, n)


def _features_operator(exact: ExactLinear) -> FirstOrderOperator:
    n, d = exact.n, exact.d
    xi_n, b_n = _feature_blocks(exact)
    u = _fmpz(np.hstack([xi_n, b_n, exact.z.to_int_array()]))
    q = xi_n.shape[1]
    middle = flint.fmpz_mat(q + 2 * d, q + 2 * d)
    for i in range(q):
        middle[i, i] = 1
    for k in range(d):
        middle[q + k, q + d + k] = middle[q + d + k, q + k] = -2 * n
    scale = _features_scale(exact)
    u_t = u.transpose()
    gram = u_t * u  # Γ = UᵀU holds every product below: the Frobenius norm and the null block
    jg = middle * gram
    frob2 = sum((x * y for x, y in zip(jg.entries(), jg.transpose().entries())), flint.fmpz(0))
    null_top, method = _features_null_top(exact, gram.table(), q)
    return FirstOrderOperator(exact=exact, route="features", scale=scale,
                              frobenius=scale * sqrt_up(Fraction(int(frob2))),
                              null_top=(scale * null_top[0], scale * null_top[1]), null_method=method, _factor=u,
                              _factor_t=u_t, _middle=middle)


def _features_scale(exact: ExactLinear) -> Fraction:
    """E₁_S = this × U J Uᵀ, and P₀E₁_SP₀ = this × P₀Ξ_NΞ_NᵀP₀."""
    return Fraction(2) ** (2 * exact.exp2) / (4 * exact.n**4)


def _features_null_top(exact: ExactLinear, gram: list, q: int) -> tuple[tuple, str]:
    """λ_max(K), K = Ξ_NᵀΞ_N − YᵀC⁻¹Y, from the blocks of Γ = UᵀU (Y = Z_BᵀΞ_N and C = Z_BᵀZ_B: Z's columns are
    U's last d). K = (P₀Ξ_N)ᵀ(P₀Ξ_N) without an exact solve (:func:`~precise_kpca.certify.ritz.ritz_pencil`): the
    exact T = (Ξ_N − Z_B M)ᵀ(Ξ_N − Z_B M) = K + D, 0 ⪯ D, ‖D‖₂ ≤ excess, so λ_max(K) ∈ [λ_max(T) − excess,
    λ_max(T)]."""
    if exact.rank >= exact.n - 1:
        return (Fraction(0), Fraction(0)), "ker L = span(1): the null block is 0"
    pivots = [q + exact.d + j for j in _pivot_columns(exact.small, exact.rank)]
    block = flint.fmpz_mat([row[:q] for row in gram[:q]])
    y = flint.fmpz_mat([gram[i][:q] for i in pivots])
    c = flint.fmpz_mat([[gram[i][j] for j in pivots] for i in pivots])
    fit = ritz_pencil(Dyadic(c, 0), Dyadic(y, 0), prec=_NULL_BITS, square=Dyadic(block, 0), values=False,
                      excess_bits=2 * _NULL_BITS)
    if fit is None:
        raise InternalCheckFailed("the range basis Z_B of the linear Gram is singular")
    t = fit.residual_gram
    lo, hi = _top_eigenvalue(t.ints * t.scale.numerator, t.scale.denominator)
    return (max(lo - fit.excess, Fraction(0)), hi), "features: exact q×q compression, certified float64 eigensystem"


def _compressed_null_top(exact: ExactLinear, prec: int | None = None) -> tuple[Fraction, Fraction]:
    """λ_max(P₀Ξ_NΞ_NᵀP₀) for the dense route: M = P₀Ξ_N = Ξ_N − Z_B C⁻¹Z_BᵀΞ_N in Arb balls (exact inputs; an exact
    rational M carries denominators of thousands of bits), then the smaller of its two Gram matrices.

    ``prec`` (bits) defaults to twice the entries' size plus ``_NULL_BITS``; it doubles while C's ball inverse fails.
    """
    xi_n = _fmpz(_feature_blocks(exact)[0])
    z_b, c = _range_basis(exact)
    y = z_b.transpose() * xi_n
    if prec is None:
        prec = 2 * max(abs(int(v)).bit_length() for v in xi_n.entries()) + _NULL_BITS
    for _ in range(_SOLVE_DOUBLINGS):
        with flint.ctx.workprec(prec):
            try:
                m = flint.arb_mat(xi_n) - flint.arb_mat(z_b) * flint.arb_mat(c).solve(flint.arb_mat(y))
            except ZeroDivisionError:  # C is exactly nonsingular: its ball inverse needs more bits (ill-conditioned)
                prec *= 2
                continue
            gram = m.transpose() * m if m.ncols() <= m.nrows() else m * m.transpose()
            return _top_eigenvalue_of_ball(gram)
    raise InsufficientPrecision(f"the null block's compression: Z_BᵀZ_B not inverted in Arb at {prec // 2} bits",
                                needed_dps=int(prec / math.log2(10)))


def _top_eigenvalue_of_ball(gram: flint.arb_mat) -> tuple[Fraction, Fraction]:
    """Enclosure of λ_max for every symmetric matrix in the ball matrix (midpoints rounded, radii in delta)."""
    size = gram.nrows()
    entries = gram.entries()
    mids = [tuple(int(v) for v in x.mid().man_exp()) for x in entries]
    common = min(min(e for _, e in mids), 0)
    k_int = flint.fmpz_mat(size, size, [m << (e - common) for m, e in mids])  # midpoints exactly, over 2^-common
    radius = max(radius_fraction(x) for x in entries)
    lo, hi = _top_eigenvalue(k_int, 1 << -common)
    lo, hi = theorems.weyl(lo, hi, size * radius)  # ‖true − mid‖₂ ≤ ‖·‖_F ≤ size · max radius
    return max(lo, Fraction(0)), hi


def _top_eigenvalue(k_int: flint.fmpz_mat, den: int) -> tuple[Fraction, Fraction]:
    """Enclosure of λ_max of the exact symmetric matrix k_int/den (module docstring)."""
    size = k_int.nrows()
    entries = [int(v) for v in k_int.entries()]
    top = max(abs(v) for v in entries)
    if top == 0:
        return Fraction(0), Fraction(0)
    shift = _NULL_BITS - (top.bit_length() - den.bit_length())
    # floor(v·2^shift/den): each entry rounded down by less than one unit of the grid 2^-shift
    ints = [(v << shift) // den if shift >= 0 else v // (den << -shift) for v in entries]
    ints = np.array(ints, dtype=object).reshape(size, size)
    ints = np.triu(ints) + np.triu(ints, 1).T  # k is symmetric: one rounding per pair keeps A_hp symmetric
    a_hp = FixedMatrix.from_integers(ints, -_NULL_BITS)
    delta = Fraction(size) * Fraction(2) ** -_NULL_BITS
    values, vectors = np.linalg.eigh(a_hp.to_float64())
    enclosure = enclose_eigensystem(a_hp, delta, values[::-1].copy(), vectors[:, ::-1].copy(), k=1)
    unit = Fraction(2) ** (_NULL_BITS - shift)
    lo, hi = (as_fraction(v) * unit for v in (enclosure.lower[0], enclosure.upper[0]))
    return max(lo, Fraction(0)), hi


# -- dense ---------------------------------------------------------------------------------------------------
def _dense_operator(X: np.ndarray, exact: ExactLinear) -> FirstOrderOperator:
    n = exact.n
    sq = ExactData.from_float64(X).squared_distance_integers
    q_ints = sq * sq
    q = _fmpz(q_ints)
    ones = flint.fmpz_mat(n, 1, [1] * n)
    q1 = q * ones
    total = sum(q1.entries(), flint.fmpz(0))
    q_frob2 = sum(int(v) * int(v) for v in q_ints.ravel())
    hqh2 = Fraction(q_frob2) - Fraction(2 * int(sum(v * v for v in q1.entries())), n) + Fraction(int(total) ** 2, n * n)
    scale = Fraction(2) ** (2 * exact.exp2) / 8
    null_top, method = _dense_null_top(exact, q, q_ints, Fraction(q_frob2), scale * n * n)
    return FirstOrderOperator(exact=exact, route="dense", scale=scale, frobenius=scale * n * n * sqrt_up(hqh2),
                              null_top=null_top, null_method=method, _factor=q, _factor_t=None, _middle=None)


def _dense_null_top(exact: ExactLinear, q: flint.fmpz_mat, q_ints: np.ndarray, q_frob2: Fraction,
                    unit: Fraction) -> tuple[tuple, str]:
    n = exact.n
    if exact.rank >= n - 1:
        return (Fraction(0), Fraction(0)), "ker L = span(1): the null block is 0"
    if n * _feature_count(exact.d) <= _COMPRESSION_MAX_ENTRIES:
        lo, hi = _compressed_null_top(exact)
        scale = _features_scale(exact)
        return (scale * lo, scale * hi), "dense: exact N×N compression of the features, certified float64 eigensystem"
    z_b, _ = _range_basis(exact)
    basis = _hstack_fmpz([flint.fmpz_mat(n, 1, [1] * n), z_b])  # U = [1, Z_B]: P₁ = I − U (UᵀU)⁻¹ Uᵀ
    gram = flint.fmpq_mat(basis.transpose() * basis)
    qu = q * basis
    uqu = flint.fmpq_mat(basis.transpose() * qu)
    m = gram.solve(uqu)
    frob2 = (q_frob2 - 2 * _trace(gram.solve(flint.fmpq_mat(qu.transpose() * qu))) + _trace(m * m))
    trace_b = -_trace(m)  # tr Q = 0
    if trace_b == 0:
        return (Fraction(0), Fraction(0)), "dense: trace of the PSD null block is 0"
    y = _approximate_top_vector(q_ints, basis)
    v_den = _project(basis, gram, y)  # v = P₁ y as an integer vector (a positive multiple)
    qv = q * v_den
    vv = _dot(v_den, v_den)
    theta = _dot(v_den, qv) / vv
    uqv = flint.fmpq_mat(basis.transpose() * qv)
    bv2 = (_dot(qv, qv) - _fraction((uqv.transpose() * gram.solve(uqv))[0, 0])) / vv  # ‖Bv‖²/‖v‖², Bv = P₁Qv
    eps2 = max(bv2 - theta * theta, Fraction(0))
    alpha2 = frob2 - 2 * bv2 + theta * theta
    frob = sqrt_up(max(frob2, Fraction(0)))
    lower = max(theta, frob2 / trace_b)  # Σν² ≤ ν₁ Σν for ν ⪰ 0
    alpha = sqrt_up(max(alpha2, Fraction(0)))
    bound = theorems.kato_temple(theta, theta, eps2, alpha)  # None: θ not above α
    if bound is not None:
        upper, method = min(frob, bound[1]), "dense: Rayleigh quotient and Kato–Temple"
    else:
        upper, method = frob, "dense: Rayleigh quotient and Frobenius norm (top not isolated)"
    if upper < lower:
        raise InternalCheckFailed(f"null-block enclosure [{float(lower):.6g}, {float(upper):.6g}] is empty")
    return (unit * lower, unit * upper), method


def _approximate_top_vector(q_ints: np.ndarray, basis: flint.fmpz_mat) -> np.ndarray:
    """float64 approximation of the top eigenvector of P₁QP₁ (never trusted: only its exact projection is used)."""
    n = q_ints.shape[0]
    qf = _scaled_floats(q_ints)
    orth, _ = np.linalg.qr(_scaled_floats(np.array(basis.table(), dtype=object)))

    def project(v):
        return v - orth @ (orth.T @ v)

    if n <= _DENSE_EIGH_MAX_N:
        full = project(project(qf).T)
        values, vectors = np.linalg.eigh((full + full.T) / 2)
        return vectors[:, -1]
    op = LinearOperator((n, n), matvec=lambda v: project(qf @ project(v)), dtype=np.float64)
    _, vectors = eigsh(op, k=1, which="LA", tol=0, ncv=min(n, 40))
    return vectors[:, 0]


def _scaled_floats(ints: np.ndarray) -> np.ndarray:
    """An integer array times a power of two (largest entry near 1), in float64: an approximation for eigh."""
    top = max((abs(int(v)).bit_length() for v in ints.ravel()), default=0)
    return np.array([math.ldexp(float(int(v) >> max(top - 64, 0)), -min(top, 64)) for v in ints.ravel()]
                    ).reshape(ints.shape)


def _project(basis: flint.fmpz_mat, gram: flint.fmpq_mat, y: np.ndarray) -> flint.fmpz_mat:
    """An integer vector, a positive multiple of P₁y for the exact value of the float64 y."""
    yd = Dyadic.from_float64(y)
    coefficients = gram.solve(flint.fmpq_mat(basis.transpose() * yd.ints))
    den = flint.fmpz(1)
    for c in coefficients.entries():
        den = den * c.q // flint.fmpz.gcd(den, c.q)
    integer = flint.fmpz_mat(coefficients.nrows(), 1, [int(c.p) * int(den // c.q) for c in coefficients.entries()])
    return yd.ints * den - basis * integer


# -- shared helpers -------------------------------------------------------------------------------------------
def _range_basis(exact: ExactLinear) -> tuple[flint.fmpz_mat, flint.fmpz_mat]:
    """(Z_B, Z_BᵀZ_B): r independent columns spanning range(L) (columns of Z, or of L_S = ZZᵀ when d > N)."""
    pivots = _pivot_columns(exact.small, exact.rank)
    source = exact.z.ints if exact.tall else exact.small
    z_b = flint.fmpz_mat([[source[i, j] for j in pivots] for i in range(exact.n)])
    return z_b, z_b.transpose() * z_b


def _center(m: flint.fmpz_mat) -> flint.fmpz_mat:
    """(NH)·m = N m − 1(1ᵀm), exactly."""
    n = m.nrows()
    ones = flint.fmpz_mat(1, n, [1] * n)
    sums = ones * m
    return m * n - ones.transpose() * sums


def _center_array(a: np.ndarray, n: int) -> np.ndarray:
    return n * a - a.sum(axis=0)[None, :]


def _fmpz(a: np.ndarray) -> flint.fmpz_mat:
    return flint.fmpz_mat(a.shape[0], a.shape[1], [int(v) for v in a.ravel()])


def _hstack_fmpz(parts) -> flint.fmpz_mat:
    tables = [p.table() for p in parts]
    return flint.fmpz_mat([[v for t in tables for v in t[i]] for i in range(parts[0].nrows())])


def _trace(m: flint.fmpq_mat) -> Fraction:
    return sum((_fraction(m[i, i]) for i in range(m.nrows())), Fraction(0))


def _dot(a: flint.fmpz_mat, b: flint.fmpz_mat) -> Fraction:
    return Fraction(int((a.transpose() * b)[0, 0]))


def _fraction(x) -> Fraction:
    return Fraction(int(x.p), int(x.q)) if hasattr(x, "q") else Fraction(int(x))



