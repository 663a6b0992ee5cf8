"""Eigen measures certified by rigorous enclosures of a float64 eigensystem (large N, below the structured range).

Where E = σ_X² H K_G H − L is too large for the structured expansion, the eigen measures need the whole
eigensystem of A = σ_X² H K_G H. A multiprecision eigensolver costs O(N³) multiprecision operations — hours at
N in the thousands. Instead:

1. A is built in binary128 (:func:`~precise_kpca.numerics.binary128_gram.scaled_gaussian_gram_words`) as float64
   words hi + lo with a rigorous bound on ‖A − (hi + lo)‖_F;
2. the float64 eigensystem of hi is certified: every eigenvalue of A in an interval, and a sin Θ bound for each
   top eigenvector group of Algorithm 1 — either all of it by exact N×N×N products on float64 BLAS
   (:func:`~precise_kpca.certify.eigen_enclosure.enclose_eigensystem`, ``exact_products=True``), or every
   eigenvalue from a-priori bounds of three float64 GEMMs (Kahan's cluster theorem and counting,
   :func:`~precise_kpca.certify.float64_enclosure.enclose_float64`) with only the top rank(L) + 1 sharpened by exact
   N×N×m products of their Newton-corrected vectors (Kato–Temple, Li–Li: :func:`~precise_kpca.certify.
   float64_enclosure.sharpen_top`) — all that Eq. 18 reads (:func:`eigenvalue_interval`) and the groups' vectors;
3. the measure is evaluated in interval form from those enclosures and the rigorous linear enclosure
   (:mod:`precise_kpca.certify.linear_enclosure`), in ball arithmetic (:mod:`.intervals`).

Guarantee: rigorous, given IEEE float64 BLAS (the products are exact integer arithmetic in float64, the a-priori
bounds hold for any summation order), correctly rounded binary128 arithmetic and SLEEF's documented 1-ulp expm1
(see the quad builder).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from ..arith.dyadic import Dyadic
from ..arith.fixed import FixedMatrix, digit_bits_for
from ..arith.ozaki import matmul
from ..arith.rounding import frobenius_up, sqrt_up
from ..backends.base import as_fraction
from ..certify.eigen_enclosure import enclose_eigensystem, fmpq_matrix, ritz_subspace_sin_theta
from ..certify.float64_enclosure import certify_tail, enclose_float64, enclose_top_block, sharpen_top
from ..certify.linear_enclosure import LinearEnclosure, linear_enclosure
from ..errors import InsufficientPrecision, RouteUnavailable
from ..numerics.binary128_gram import kept_words
from ..numerics.data import data_state
from .intervals import aggregate as aggregate_balls
from .intervals import check_k, group_angle, linear_groups_exact, pc_interval_of

_A_BITS = 120  # at least these fixed-point bits for A = hi + lo (106 carried), each word rounded to them apart
_VECTOR_BITS = 128  # float64 eigenvectors and their Newton corrections fit this grid exactly in practice
_RESIDUAL_BITS = 110  # A_hp x̂ for the Newton residual: r ~ 2^-45 of it keeps ~65 bits before its one rounding
# to float64 (its accuracy is not assumed: the corrected basis is certified from exact products)
_SAME = 2.0**-40  # eigenvalues this close (relative to ‖A‖) are one group: no Newton coupling between them
MAX_K = 10
SHARED_GROUPS = 5  # groups of every k ≤ this are enclosed per σ, so measures with k ≤ 5 share one enclosure


@dataclass(frozen=True)
class SpectrumEnclosure:
    """What the eigen measures at one σ need: eigenvalue intervals and the top groups' bases with sin Θ bounds.

    Attributes
    ----------
    lower, upper : ndarray of mpmath mpf or Fraction (exact), shape (N,)
        Enclosures of A's eigenvalues, descending.
    vectors, correction : ndarray of float64, shape (N, m)
        The float64 eigenvectors of the top m eigenvalues and one Newton correction: the basis measured is
        vectors + correction (the exact sum of the two words).
    sin_theta : dict of (int, int) to (bool, float or None)
        Per group [start, stop): whether the bound is for the corrected basis (vectors + correction) or the plain
        float64 vectors, and the bound on ‖sin Θ‖₂ between that basis's span and A's invariant subspace; None
        when the enclosures cannot separate the group.
    seconds : dict
    exact_products : bool
        True when every eigenvalue was certified from exact products, False for the a-priori bounds with the top
        sharpened (see :func:`spectrum_enclosure`).
    """

    lower: np.ndarray
    upper: np.ndarray
    vectors: np.ndarray
    correction: np.ndarray
    sin_theta: dict
    seconds: dict
    exact_products: bool = True


LINEAR_BITS = 256  # the linear enclosure's grid: radius ~2**-256 ‖L‖, far below any enclosure width here


def linear_for(X: np.ndarray) -> LinearEnclosure:
    """The rigorous linear enclosure the binary128 route compares with (S-units; see :func:`_to_s_units`)."""
    return linear_enclosure(X, LINEAR_BITS)


def needed_groups(X: np.ndarray, k_max: int, tau: float) -> tuple[tuple[int, int], ...]:
    """Algorithm 1's groups of every k ≤ k_max, and the singletons of the pc measure (i, i + 1) for i < k_max."""
    lin = linear_for(X)
    k_max = min(k_max, lin.rank)
    groups = {g for k in range(1, k_max + 1) for g in linear_groups_exact(lin, k, tau)}
    return tuple(sorted(groups | {(i, i + 1) for i in range(k_max)}))


def spectrum_enclosure(X: np.ndarray, sigma, *, median: str = "full", k_max: int = 5, tau: float = 1e-6,
                       exact_products: bool = True) -> SpectrumEnclosure:
    """Enclosures of A = σ_X² H K_G H's eigenvalues and of its top eigenvector groups (cached per σ).

    Parameters
    ----------
    X : ndarray, shape (N, d)
    sigma : Fraction
    median : {"full", "pairs"}
    k_max : int
        Groups of Algorithm 1 for every k ≤ k_max are bounded.
    tau : float
        Algorithm 1's grouping tolerance.
    exact_products : bool
        True: every eigenvalue certified from exact N×N×N products (:func:`enclose_eigensystem`, widths ~ε²/gap);
        False: from a-priori bounds of float64 GEMMs (:func:`~precise_kpca.certify.float64_enclosure.enclose_float64`,
        widths ~N·u·‖A‖, three GEMMs instead of tens), the top rank(L) + 1 sharpened to ~ε²/gap by exact products of
        their Newton-corrected vectors (N×N×m). The top groups get the exact Newton-corrected bound either way.
    """
    return data_state(X).derived(_enclosure_cached, sigma, median, k_max, tau, exact_products, keep=2)


PARTIAL_MIN_N = 500  # from here the top eigenpairs come from Lanczos (eigsh) and the tail from the Cholesky
# certificate instead of a full eigh and the a-priori enclosure: at N = 1000 0.05 + 0.04 s against 0.4 + 0.4 s (and
# stock, N = 950, σ = 2: 4 s against 11 s, its dense tail merging a-priori runs for 64 passes); equal at N = 506
_TAIL_MARGIN = 2.0**-20  # the tail threshold α sits this far (relative) above the first eigenvalue past the block


def _enclosure_cached(X: np.ndarray, sigma, median: str, k_max: int, tau: float,
                      exact_products: bool) -> SpectrumEnclosure:
    import time

    shape = X.shape
    groups = needed_groups(X, k_max, tau)
    m = max(stop for _, stop in groups)
    if exact_products and m > MAX_K:
        raise RouteUnavailable(f"the binary128 enclosure bounds eigenvector groups within the top {MAX_K} eigenpairs; "
                               f"k={k_max} needs the top {m}", remedy="guarantee='heuristic' accepts two precisions")
    start = time.perf_counter()
    quad = kept_words(X, sigma, median=median, linear=True)  # shares its first pass with 1 − CKA's E
    built = time.perf_counter()
    n, rank = shape[0], linear_for(X).rank
    w, V = _eigenpairs(quad.hi, None if exact_products or n < PARTIAL_MIN_N else rank + 1)
    solved = time.perf_counter()
    A_hp = FixedMatrix.from_words_apart([quad.hi, quad.lo], digits=-(-_A_BITS // digit_bits_for(n)))
    # ‖A − A_hp‖_F ≤ the builder's bound + N × the fixed-point read's largest entry error
    delta = Fraction(quad.error_bound) + n * Fraction(A_hp.error_bound)  # exact: a float sum could round down
    # A_f = the high words; ‖A − A_f‖_F ≤ the builder's bound + ‖lo‖_F
    delta_f = Fraction(quad.error_bound) + Fraction(frobenius_up(quad.lo))
    plain = {g: None for g in groups}
    if exact_products:
        enc = enclose_eigensystem(A_hp, delta, w, V, k=min(max(m, 1), MAX_K, n), groups=groups)
        lower, upper = enc.lower, enc.upper
        plain = {(g.start, g.stop): g.sin_theta for g in enc.groups}
        top = _Top(A_hp, delta, w, V, m)
    else:
        try:
            f64 = enclose_float64(quad.hi, delta_f, w, V, groups=groups) if len(w) == n else None
        except InsufficientPrecision:  # the a-priori runs merge without end (dense tails): certify the tail instead
            f64 = None
        if f64 is not None:
            # Eq. 18 reads the eigenvalues 0..rank(L): their vectors are corrected and multiplied exactly too
            top = _Top(A_hp, delta, w, V, _sharpened_count(f64.runs, max(m, rank + 1)))
            exact = top.exact
            if exact is not None:
                f64 = sharpen_top(f64, *exact)
            lower, upper = f64.lower, f64.upper
            plain = {g: (float(f64.group_sin[g]) * (1 + 2.0**-50) if g in f64.group_sin else None) for g in groups}
        else:
            try:
                lower, upper, top = _certified_top(quad.hi, delta_f, A_hp, delta, w, V, rank)
            except InsufficientPrecision:  # cached under this key too: the measures of this σ ask in turn
                return data_state(X).derived(_enclosure_cached, sigma, median, k_max, tau, True, keep=2)
    del quad
    enclosed = time.perf_counter()
    # each bound is for the basis it was proven for: the corrected one where it has a bound, else the plain one
    sin_theta = {g: (False, bound) for g, bound in plain.items()}
    for group, bound in _group_bounds(top, delta, lower, upper, groups).items():
        plain = sin_theta[group][1]
        if bound is not None and (plain is None or bound < plain):
            sin_theta[group] = (True, bound)
    seconds = {"gram": built - start, "eigh": solved - built, "enclosure": enclosed - solved,
               "refinement": time.perf_counter() - enclosed}
    return SpectrumEnclosure(lower=np.array(lower, dtype=object), upper=np.array(upper, dtype=object),
                             vectors=V[:, :m].copy(), correction=top.correction[:, :m].copy(), sin_theta=sin_theta,
                             seconds=seconds, exact_products=exact_products)


def _eigenpairs(A_f: np.ndarray, count: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending) and eigenvectors of A_f: all of them (``count`` None), or the top ``count`` by
    Lanczos (ARPACK, a fixed start vector: the same numbers on every run) where that is far fewer than N."""
    n = A_f.shape[0]
    if count is None or 4 * count > n:
        w, V = np.linalg.eigh(A_f)
    else:
        from scipy.sparse.linalg import eigsh

        start = np.random.default_rng(0).normal(size=n)
        w, V = eigsh(A_f, k=count + _EXTRA_PAIRS, which="LA", tol=0, v0=start)
        order = np.argsort(w)
        w, V = w[order], V[:, order]
    return w[::-1].copy(), V[:, ::-1].copy()


_EXTRA_PAIRS = 8  # Lanczos pairs past those certified: their span leaves the Newton step's complement solve better
# conditioned (the complement's top eigenvalue falls further below the block's)


def _certified_top(A_f, delta_f, A_hp, delta, w, V, rank: int):
    """Enclosures of the top r = rank(L) eigenvalues of A and one bound for all the others, from the top eigenpairs
    alone (any N×c basis V, c > r, approximating the top eigenvectors).

    The tail: λ_r(A) < α by :func:`~precise_kpca.certify.float64_enclosure.certify_tail`, for α just above μ̂_r
    (a few times the certificate's rounding level), else in the middle of the gap below μ̂_{r−1}; A is positive
    semi-definite (a Gaussian Gram, centred), so every μ_i with i ≥ r lies in [0, α] — all Eq. 18 reads of them.
    The top block: Li–Li on exact products of the Newton-corrected top r vectors, isolated below by α.

    Returns
    -------
    lower, upper : list of Fraction, length r + 1
        Index r stands for every eigenvalue past the block.
    top : _Top

    Raises
    ------
    InsufficientPrecision
        No threshold is certified, or the block's Ritz values are not clear of it.
    """
    r, n = rank, V.shape[0]
    mid = (w[r - 1] + w[r]) / 2
    near = w[r] + max(_TAIL_MARGIN * abs(w[r]), 8 * (n + 1) * 2.0**-53 * (r + 1) * w[0])
    for alpha in dict.fromkeys((float(min(near, mid)), float(mid))):
        if not alpha > 0:
            continue
        try:
            certify_tail(A_f, delta_f, V[:, :r], alpha, 2 * float(w[0]))
            break
        except InsufficientPrecision:
            continue
    else:
        raise InsufficientPrecision(f"the eigenvalues past rank(L) = {r} are not certified below the top block")
    top = _Top(A_hp, delta, w, V, r, A_f=A_f if V.shape[1] < n else None)
    exact = top.exact
    if exact is None:
        raise InsufficientPrecision("the corrected top vectors do not fit the fixed-point grid")
    block = enclose_top_block(*exact, Fraction(alpha))
    return [lo for lo, _ in block] + [Fraction(0)], [hi for _, hi in block] + [Fraction(alpha)], top


_MAX_SHARPENED_RUN = 64  # a cluster of the a-priori enclosures at the edge of the top this long is left a-priori


def _sharpened_count(runs, wanted: int) -> int:
    """The number m ≥ ``wanted`` of top eigenvalues to sharpen: ``wanted`` moved to the end of the a-priori run it
    falls in (a run is sharpened whole or not at all), unless that run is longer than :data:`_MAX_SHARPENED_RUN`."""
    for a, z in runs:
        if a < wanted < z:
            return z if z - a <= _MAX_SHARPENED_RUN else wanted
    return wanted


class _Top:
    """The top m float64 eigenvectors after one Newton step, held exactly, and their exact products with A_hp.

    Attributes
    ----------
    correction : ndarray, shape (N, m)
    basis, product : FixedMatrix or None
        v = x̂ + c exactly and A_hp v exactly; None when the two words do not fit the grid exactly.
    """

    def __init__(self, A_hp: FixedMatrix, delta, w: np.ndarray, V: np.ndarray, m: int, A_f=None):
        self.delta = Fraction(delta)
        # V holds every eigenvector, or (A_f given) the top ones only: then the step's part outside span V is solved
        self.correction = _newton_correction(A_hp, w, V, m) if A_f is None else \
            _newton_correction(A_hp, w, V, m, A_f=A_f)
        v = FixedMatrix.from_words([V[:, :m], self.correction], bits=_VECTOR_BITS)
        self.basis = self.product = None
        if not v.error_bound:  # else the words did not fit the grid: the span measured would not be the one bounded
            self.basis, self.product = v, matmul(A_hp, v)

    @property
    def exact(self) -> tuple | None:
        """(v, A_hp v, bounds on ‖A − A_hp‖₂‖v_j‖) as exact dyadics, for
        :func:`~precise_kpca.certify.float64_enclosure.sharpen_top`; None without a basis."""
        if self.basis is None:
            return None
        v, p = Dyadic.from_fixed(self.basis), Dyadic.from_fixed(self.product)
        return v, p, [self.delta * sqrt_up(x) for x in v.column_squares()]


def _newton_correction(A_hp: FixedMatrix, w: np.ndarray, V: np.ndarray, m: int, *, A_f=None) -> np.ndarray:
    """One Newton step for the top m eigenvectors, shape (N, m): C = −Σ_{j≠i} x̂_j (x̂_jᵀ r_i)/(λ̂_j − λ̂_i).

    The residual r_i = A_hp x̂_i − λ̂_i x̂_i is formed from A_hp x̂_i on a grid of :data:`_RESIDUAL_BITS` below its
    largest entry (the Ozaki product without the slice products below it: half of them) and rounded once, so the
    step removes the float64 eigenvector error up to second order; x̂_i + c_i is then held as two float64 words. Its accuracy is not
    assumed anywhere: :func:`_group_bounds` certifies what it achieves. Where V holds only the top eigenvectors
    (``A_f`` given), the step's part outside span V solves (λ̂_i − PA_fP) c = P r_i (P = I − VVᵀ) by conjugate
    gradients for the first :data:`SHARED_GROUPS` vectors (the angles' groups; the others feed only eigenvalue
    bounds, whose Li–Li radius is quadratic in the residual).
    """
    top = V[:, :m]
    X = FixedMatrix.from_float64(top, bits=_VECTOR_BITS)
    lam = FixedMatrix.from_float64(np.diag(w[:m]), bits=_VECTOR_BITS)
    residual = (matmul(A_hp, X, bits=_RESIDUAL_BITS) - matmul(X, lam)).to_float64()
    gaps = w[:, None] - w[None, :m]  # λ̂_j − λ̂_i
    same = np.abs(gaps) <= _SAME * np.max(np.abs(w))
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = np.where(same, 0.0, -(V.T @ residual) / gaps)
    correction = V @ coef
    if A_f is not None:
        solved = min(m, SHARED_GROUPS)
        correction[:, :solved] += _complement_solve(A_f, V, w[:solved], residual[:, :solved])
    return correction


_CG_STEPS = 60  # conjugate-gradient steps of the complement solve (the block sits well above the complement)


def _complement_solve(A_f: np.ndarray, V: np.ndarray, theta: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Approximately c_j = (θ_j I − P A_f P)⁻¹ P b_j on the complement of span V (P = I − VVᵀ), every column by
    its own conjugate gradients (positive definite there: θ_j lies above every eigenvalue outside span V). The
    iterates are projected back onto the complement at every step (the operator vanishes on span V, where rounding
    would otherwise grow), and each column stops once its residual is at the float64 level."""
    def project(Y):
        return Y - V @ (V.T @ Y)

    R = project(B)
    X = np.zeros_like(R)
    P = R.copy()
    rs = np.einsum("ij,ij->j", R, R)
    target = rs * 2.0**-104
    for _ in range(_CG_STEPS):
        active = rs > target
        if not active.any():
            break
        AP = project(P * theta[None, :] - A_f @ P)
        curvature = np.einsum("ij,ij->j", P, AP)
        active &= curvature > 0
        step = np.where(active, rs / np.where(active, curvature, 1.0), 0.0)
        X += P * step
        R = project(R - AP * step)
        new = np.einsum("ij,ij->j", R, R)
        P = project(R + P * np.where(active, new / np.where(active, rs, 1.0), 0.0))
        rs = np.where(active, new, 0.0)
    return X


def _group_bounds(top: _Top, delta, lower, upper, groups) -> dict:
    """Davis–Kahan ‖sin Θ‖₂ for each group [s, t) of the corrected basis x̂ + c (see
    :func:`~precise_kpca.certify.eigen_enclosure.ritz_subspace_sin_theta`): exact products of the basis and of
    A_hp times it (m×m, each group's g×g blocks read from them), so the Newton step's gain counts for groups of
    close eigenvalues as for single ones."""
    if top.basis is None:
        return {}
    v, p = top.basis, top.product
    G, H, Q = (fmpq_matrix(matmul(a.T, b)) for a, b in ((v, v), (v, p), (p, p)))
    out = {}
    for s, t in groups:
        bound = ritz_subspace_sin_theta(*(_block(M, s, t) for M in (G, H, Q)), delta, lower, upper, s, t)
        out[(s, t)] = None if bound is None else float(bound) * (1 + 2.0**-50)
    return out


def _block(M, s: int, t: int):
    """The diagonal block [s, t) × [s, t) of an fmpq matrix."""
    return flint.fmpq_mat(t - s, t - s, [M[i, j] for i in range(s, t) for j in range(s, t)])


def _to_s_units(X: np.ndarray) -> Fraction:
    """The factor N²·2^(−2e) from A's units (those of the binary128 Gram) to the linear enclosure's S-units."""
    factor, shift = linear_for(X).exact.to_s_units
    return Fraction(factor) * Fraction(2) ** shift


def _mu(enc: SpectrumEnclosure, i: int, scale: Fraction) -> tuple[Fraction, Fraction]:
    return as_fraction(enc.lower[i]) * scale, as_fraction(enc.upper[i]) * scale


def eigenvalue_interval(enc: SpectrumEnclosure, X: np.ndarray) -> tuple[Fraction, Fraction]:
    """Interval of ‖σ_X² λ_G − λ_L‖_∞ / ‖λ_L‖_∞ (Eq. 18) from the eigenvalue enclosures of both sides.

    Only indices 0..r (r = rank L) are read: beyond r, λ_L,i = 0 and 0 ≤ μ_i ≤ μ_r (A is positive semi-definite,
    its eigenvalues descending), so |μ_i − λ_L,i| ≤ μ_r, the term of index r.
    """
    lin, scale = linear_for(X), _to_s_units(X)
    worst_lo = worst_hi = Fraction(0)
    for i in range(min(len(enc.lower), lin.rank + 1)):
        m_lo, m_hi = _mu(enc, i, scale)
        l_lo, l_hi = lin.lower(i), lin.upper(i)
        worst_lo = max(worst_lo, m_lo - l_hi, l_lo - m_hi)
        worst_hi = max(worst_hi, m_hi - l_lo, l_hi - m_lo)
    return worst_lo / lin.upper(0), worst_hi / lin.lower(0)


def _basis(enc: SpectrumEnclosure, start: int, stop: int) -> tuple[Dyadic, Fraction]:
    """The exact basis of group [start, stop) and its sin Θ bound (see ``SpectrumEnclosure.sin_theta``)."""
    corrected, bound = enc.sin_theta.get((start, stop), (False, None))
    if bound is None or not bound < 1:
        raise InsufficientPrecision(f"eigenvector group [{start}, {stop}) is not separated from the rest of the "
                                    "spectrum by the enclosures of the float64 eigensystem")
    v = Dyadic.from_float64(enc.vectors[:, start:stop])
    if corrected:
        v = v + Dyadic.from_float64(enc.correction[:, start:stop])
    return v, Fraction(bound)


def _group_angle(enc: SpectrumEnclosure, lin: LinearEnclosure, start: int, stop: int):
    lin.sin_theta(start, stop)  # an exact linear tie at the group's edge: Undetermined, before the Gaussian side
    return group_angle(*_basis(enc, start, stop), lin, start, stop)


def eigen_distance_interval(enc: SpectrumEnclosure, X: np.ndarray, k: int, tau: float, aggregate: str):
    """Interval of EigenDist (Algorithm 1, radians) from the enclosed groups: (lo, hi) mpf.

    The largest principal angle is a metric on subspaces of one dimension, so the true angle to the linear
    group lies within asin(sin Θ_V) + asin(sin Θ_W) of the angle between the exact bases (a ball).
    """
    lin = linear_for(X)
    check_k(lin, k, "eigenprojection")
    return aggregate_balls([_group_angle(enc, lin, s, t) for s, t in linear_groups_exact(lin, k, tau)],
                           aggregate_name=aggregate)


def pc_interval(enc: SpectrumEnclosure, X: np.ndarray, k: int):
    """Interval of max_{i<k} ‖σ_X PC_G,i − PC_L,i‖ / ‖PC_L,i‖ (Theorem 3) from the enclosures."""
    lin, scale = linear_for(X), _to_s_units(X)
    return pc_interval_of(lin, k, lambda i: _group_angle(enc, lin, i, i + 1), lambda i: _mu(enc, i, scale))


