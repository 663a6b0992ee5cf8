"""Fast arbitrary-precision symmetric eigensystems by cluster-aware mixed-precision refinement.

Algorithm (Ogita & Aishima 2018, with the cluster treatment of Ogita & Aishima 2019):

1. ``X₀``: float64 LAPACK eigenvectors of ``A`` rounded to float64, held as a fixed-point integer matrix.
2. Each iteration forms, *exactly* with python-flint ``fmpz_mat`` products on fixed-point integers,
   ``S = XᵀAX`` and ``G = XᵀX`` (``R = G - I``), the Rayleigh quotients ``θᵢ = Sᵢᵢ / Gᵢᵢ`` in full
   precision, and a float64 correction ``W``:

   - pairs ``(i, j)`` whose gap ``|θᵢ - θⱼ|`` is well above the coupling ``|Sᵢⱼ - θⱼRᵢⱼ|`` get the
     first-order Newton correction ``Eᵢⱼ = (Sᵢⱼ - θⱼRᵢⱼ) / (θⱼ - θᵢ)`` (quadratic convergence);
   - the rest are grouped into clusters: inside a cluster ``Eᵢⱼ = -Rᵢⱼ/2`` (orthogonalise), then the
     cluster is rotated by the float64 eigenvectors of its shifted, rescaled block ``(S - μG)_JJ``
     (computed exactly from the integers, so the block is known to full relative accuracy).

   ``X ← X (I + E) Q`` is one more exact product with ``W`` scaled to integers. On graded spectra
   (eigenvalue groups decades apart) each iteration resolves the next group, then converges quadratically.
3. Precision: ``X`` starts at 64 bits and its bits roughly double per iteration up to the target; ``A`` is
   held at the bits the tier needs, so early iterations are cheap.
4. Stopping and error bounds use the ``S, G`` of the returned basis (no extra product):
   Ostrowski (``λᵢ(XᵀAX) = ϑᵢ λᵢ(A)``, ``ϑᵢ ∈ [1-ω, 1+ω]``, ``ω ≥ ‖G - I‖₂``) plus Weyl
   (``|λᵢ(S) - θᵢ| ≤ ‖S - Θ‖₂``) bound every eigenvalue; Davis–Kahan's sin θ theorem bounds each
   eigenvector (or, for a cluster, its invariant subspace) by its residual over its gap.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import flint
import mpmath
import numpy as np
from mpmath import libmp
from threadpoolctl import threadpool_limits

from .eigen_fixed import (
    float_to_integers,
    mpf_matrix_to_integers,
    ratio_to_mpf_tuple,
    round_shift,
    to_float_array,
    to_fmpz_mat,
)

LOG2_10 = math.log2(10)
_START_BITS = 64  # float64 eigenvectors fit in 64-bit fixed point (smaller entries lose only absolute 2**-64)
_W_GUARD = 24  # fractional bits of the integer correction W beyond the target accuracy
# A pair is clustered unless its first-order correction |F_ij / gap| is below 2**-16: a larger one would
# leave an error above the 2**-53 relative accuracy of the float64 rotation of the cluster's block.
_CLUSTER_FACTOR = 2.0**16
_NORM_SAFETY = 1 + 2.0**-40  # covers float64 rounding in the Frobenius norms of the bounds
_MAX_ITERATIONS = 40


@dataclass
class RefinedEigensystem:
    """Result of :func:`refine_eigensystem`.

    Attributes
    ----------
    values : ndarray of mpmath mpf, shape (N,)
        Eigenvalues, descending.
    vectors : ndarray of mpmath mpf, shape (N, m)
        Unit eigenvectors as columns (``m = k`` for tier 1, ``N`` for tier 2); the largest-magnitude
        component of each is positive (first index on ties).
    value_error_bounds : ndarray of mpmath mpf, shape (N,)
        Absolute bounds ``|values[i] - λᵢ(A)|`` (λ sorted descending).
    vector_error_bounds : ndarray of float, shape (m,)
        Bounds on ``‖vectors[:, i] - vᵢ‖₂`` for a unit eigenvector ``vᵢ`` of ``A``; for a member of a
        cluster (see ``clusters``) the bound is on the distance to the cluster's invariant subspace.
    iterations : int
    precision_bits_used : int
        Largest fixed-point precision (bits below ``max |A|``) of the matrices multiplied.
    clusters : list of tuple of int
        Index ranges ``(start, stop)`` of eigenvalues whose bounds do not separate them.
    history : list of dict
        Per iteration: bits of A and X, the largest first-order correction, number of clustered indices.
    """

    values: np.ndarray
    vectors: np.ndarray
    value_error_bounds: np.ndarray
    vector_error_bounds: np.ndarray
    iterations: int
    precision_bits_used: int
    clusters: list = field(default_factory=list)
    history: list = field(default_factory=list)


@dataclass
class _Products:
    """Exact ``S = XᵀAX`` and ``G = XᵀX`` of the current basis and their float64 read-outs."""

    s_entries: list  # integers, S = s * 2**-s_scale (in units of the fixed-point A)
    g_entries: list  # integers, G = g * 2**-g_scale
    s_scale: int
    g_scale: int
    S: np.ndarray  # float64, symmetrised, in units of the fixed-point A
    R: np.ndarray  # float64, G - I
    theta_hi: np.ndarray  # Rayleigh quotients as double-double (hi + lo)
    theta_lo: np.ndarray
    p_rounding: float  # bound on ‖XᵀP_rounded - XᵀAX‖₂ from rounding P = AX


def refine_eigensystem(A, *, dps: int, tier: int = 1, k: int | None = None, max_bits: int | None = None):
    """Eigenvalues and eigenvectors of a symmetric mpf matrix to ``dps`` digits, with error bounds.

    Parameters
    ----------
    A : ndarray of mpmath mpf, shape (N, N)
        Symmetric matrix (entries read exactly; any mpmath context). A nonsymmetric input is
        symmetrised and the asymmetry is added to the error bounds.
    dps : int
        Target decimal digits.
    tier : {1, 2}
        1: every eigenvalue to ``dps`` digits relative to ``‖A‖₂`` and the top ``k`` eigenvectors to
        ``dps`` digits. 2: every eigenpair to ``dps`` digits relative to its own eigenvalue, as far as the
        precision carried by ``A``'s entries allows (eigenvalues below that noise get absolute bounds).
    k : int, optional
        Number of leading eigenvectors returned by tier 1 (default ``min(N, 10)``); tier 2 returns all.
    max_bits : int, optional
        Cap on the fixed-point bits used for ``A`` (default: tier 1 what ``dps`` needs, tier 2 all the
        bits the entries carry).

    Returns
    -------
    RefinedEigensystem
    """
    A = np.asarray(A, dtype=object)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    if tier not in (1, 2):
        raise ValueError(f"tier must be 1 or 2, got {tier!r}")
    if not isinstance(dps, (int, np.integer)) or dps < 1:
        raise ValueError(f"dps must be a positive integer, got {dps!r}")
    n = A.shape[0]
    k = min(n, 10) if k is None else int(k)
    if tier == 1 and not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and N={n}, got {k}")
    target_bits = math.ceil(dps * LOG2_10)
    log2n = max(1, math.ceil(math.log2(n)))
    if tier == 1:
        # the top-k vectors need A to target/gap: add the bits of their relative gaps (from float64)
        a_bits = target_bits + 2 * log2n + 24 + _gap_bits(A, k)
        if max_bits is not None:
            a_bits = min(a_bits, max_bits)
    else:
        a_bits = max_bits
    ints, exp2, a_bits = mpf_matrix_to_integers(A, a_bits)
    threads = flint.ctx.threads
    flint.ctx.threads = len(os.sched_getaffinity(0))
    try:
        # the float64 work is many small LAPACK calls: threaded BLAS only spins on a shared machine
        with threadpool_limits(limits=1):
            return _Refiner(ints, n, exp2, a_bits, dps, tier, k).run()
    finally:
        flint.ctx.threads = threads


class _Refiner:
    """State of one refinement: fixed-point A, basis X, precision schedule."""

    def __init__(self, ints, n, exp2, a_bits, dps, tier, k):
        self.n, self.exp2, self.a_bits, self.dps, self.tier, self.k = n, exp2, a_bits, dps, tier, k
        A = to_fmpz_mat(ints, n, n)
        At = A.transpose()
        self.asym = 0.0
        if A != At:
            # 2A_sym = A + Aᵀ exactly; the skew part is a perturbation of norm ≤ ‖A - Aᵀ‖_F / 2
            skew = to_float_array((A - At).entries(), a_bits + 1, (n, n))
            self.asym = float(np.linalg.norm(skew)) * _NORM_SAFETY
            A = A + At
            ints = [int(v) for v in A.entries()]
            self.exp2 -= 1
            self.a_bits += 1
        self.a_ints = ints
        self.A_full = A
        self._a_cache = {self.a_bits: A}
        # A is a_bits integers times 2**exp2; "normalised" units below are 2**(exp2 + a_bits) ≈ max |A|
        self.A_float = to_float_array(ints, self.a_bits, (n, n))
        # rounding A to fixed point is a symmetric perturbation with ‖ΔA‖₂ ≤ ‖ΔA‖_F ≤ n 2**-(a_bits+1)
        self.a_rounding = n * 2.0 ** -(self.a_bits + 1) + self.asym
        self.target = 10.0 ** -dps
        # Eigenvalues within a few hundred roundings of A's fixed point are noise; for tier 1 so is everything
        # far below the absolute target. They form one cluster whose block is rotated, never split.
        self.noise = 2.0**8 * self.a_rounding
        w, V = np.linalg.eigh(self.A_float)
        self.V0 = V[:, np.argsort(-w, kind="stable")]
        self.a_norm = float(np.max(np.abs(w)))
        if tier == 1:
            self.noise = max(self.noise, 2.0**24 * self.target * self.a_norm)
        self.history = []

    # -- products ---------------------------------------------------------------------------------
    def _a_at(self, bits):
        """A rounded to ``bits`` fractional bits (cached); returns (matrix, bits actually used)."""
        bits = min(bits, self.a_bits)
        if bits not in self._a_cache:
            self._a_cache[bits] = to_fmpz_mat(round_shift(self.a_ints, self.a_bits - bits), self.n, self.n)
        return self._a_cache[bits], bits

    def _products(self, X, x_bits, a_bits):
        n = self.n
        A, a_bits = self._a_at(a_bits)
        Xt = X.transpose()
        P = A * X  # scale 2**-(a_bits + x_bits)
        # keep P to a_bits + 16 fractional bits: S then costs x_bits + a_bits + 16 instead of 2 x_bits + a_bits
        p_bits = a_bits + 16
        cut = x_bits - 16
        if cut > 0:
            P = to_fmpz_mat(round_shift(P.entries(), cut), n, n)
        else:
            p_bits = a_bits + x_bits
        s_ent = (Xt * P).entries()  # scale 2**-(x_bits + p_bits)
        g_ent = (Xt * X).entries()  # scale 2**-(2 x_bits)
        s_scale, g_scale = x_bits + p_bits, 2 * x_bits
        S = to_float_array(s_ent, s_scale, (n, n))
        S = (S + S.T) / 2
        G = to_float_array(g_ent, g_scale, (n, n))
        R = G - np.eye(n)
        # the diagonal of G - I loses bits in float64 (G_ii ≈ 1): take it from the integers
        one = 1 << g_scale
        diag_r = [g_ent[i * (n + 1)] - one for i in range(n)]
        R[np.diag_indices(n)] = to_float_array(diag_r, g_scale, (n,))
        theta_hi, theta_lo = self._rayleigh(s_ent, g_ent, s_scale, g_scale)
        # ‖Xᵀ ΔP‖₂ ≤ ‖X‖₂ ‖ΔP‖_F, ‖X‖₂ ≤ sqrt(1 + ω) ≤ 2, ΔP entries ≤ 2**-(p_bits+1) in units of A's scale
        p_rounding = 2.0 * n * 2.0 ** -(p_bits + 1) if cut > 0 else 0.0
        return _Products(s_ent, g_ent, s_scale, g_scale, S, R, theta_hi, theta_lo, p_rounding)

    def _rayleigh(self, s_ent, g_ent, s_scale, g_scale):
        """θᵢ = Sᵢᵢ / Gᵢᵢ as double-double, exact to about 2**-(s_scale)."""
        n = self.n
        q_bits = s_scale + 8
        hi = np.empty(n)
        lo = np.empty(n)
        for i in range(n):
            s, g = int(s_ent[i * (n + 1)]), int(g_ent[i * (n + 1)])
            q = _round_div(s << (q_bits - s_scale + g_scale), g)  # θ * 2**q_bits
            h = _int_to_float(q, q_bits)
            hi[i] = h
            lo[i] = _int_to_float(q - _float_to_int(h, q_bits), q_bits)
        return hi, lo

    # -- one correction ---------------------------------------------------------------------------
    def _correction(self, pr: _Products):
        """Float64 ``W - I`` and the column order of ``W`` (by predicted eigenvalue), with diagnostics.

        ``W - I`` rather than ``W``: the diagonal corrections ``-Rᵢᵢ/2`` are far below float64's
        resolution of 1, so the identity is added in the integers.
        """
        n = self.n
        th, tl = pr.theta_hi, pr.theta_lo
        order = np.lexsort((-tl, -th))
        # Newton correction E_ij = (S_ij - θ_j R_ij) / (θ_j - θ_i), written as T_ij / (θ_j - θ_i) - R_ij / 2
        # with the symmetric T = S - (θ_i + θ_j) R / 2: the orthogonalising -R/2 then survives when the
        # gap is below float64's resolution of θ. Gaps are double-double differences.
        mid = (th[:, None] + th[None, :]) / 2
        mR = mid * pr.R
        T = pr.S - mR
        np.fill_diagonal(T, 0.0)
        gap = (th[None, :] - th[:, None]) + (tl[None, :] - tl[:, None])
        # T's own float64 rounding counts as coupling: it must stay small against the gap too
        coupling = np.abs(T) + 2.0**-50 * (np.abs(pr.S) + np.abs(mR))
        clustered = np.abs(gap) <= _CLUSTER_FACTOR * coupling
        noise = np.abs(th) <= self.noise
        clustered |= noise[:, None] & noise[None, :]
        np.fill_diagonal(clustered, False)
        clusters = _interval_clusters(clustered[np.ix_(order, order)])
        with np.errstate(divide="ignore", invalid="ignore"):
            E = np.where(clustered | np.eye(n, dtype=bool), 0.0, T / gap) - pr.R / 2
        sep = ~clustered
        np.fill_diagonal(sep, False)
        e_max = float(np.max(np.abs(E[sep]), initial=0.0))
        W = E  # modified in place from here on
        predicted = th.copy()
        in_cluster = 0
        for start, stop in clusters:
            J = order[start:stop]
            if len(J) < 2:
                continue
            in_cluster += len(J)
            # E inside J was set to -R/2 only where the pair itself was flagged: do the whole block
            W[np.ix_(J, J)] = -pr.R[np.ix_(J, J)] / 2
            mu, block = self._shifted_block(pr, J)
            scale = np.max(np.abs(block))
            # A block already diagonal to the target is left alone: its float64 rotation would cost
            # orthogonality (2**-53) that the next iterations would have to restore.
            if np.max(np.abs(block - np.diag(np.diag(block))), initial=0.0) <= self._block_tol(th[J]):
                continue
            nu, Q = np.linalg.eigh(block / scale)
            # (I + E)[:, J] Q - I[:, J]
            rotated = W[:, J] @ Q
            rotated[J, :] += Q - np.eye(len(J))
            W[:, J] = rotated
            predicted[J] = mu + nu * scale
        new_order = np.argsort(-predicted, kind="stable")
        return W[:, new_order], new_order, e_max, in_cluster

    def _block_tol(self, theta_block) -> float:
        """Off-diagonal size below which a cluster's block needs no rotation (normalised units)."""
        if self.tier == 1:
            return 2.0**-10 * self.target * self.a_norm
        floor = self.a_rounding * 2.0**24
        return 2.0**-10 * max(self.target * float(np.min(np.abs(theta_block))), floor)

    def _shifted_block(self, pr: _Products, J):
        """(S - μG)_JJ exactly from the integers (μ a float64 near the cluster), then rounded to float64."""
        mu = float(np.mean(pr.theta_hi[J]))
        m_num, m_den = mu.as_integer_ratio()  # μ = m_num / m_den, m_den a power of two
        d_bits = m_den.bit_length() - 1
        n = self.n
        # S * 2**-s_scale - μ G * 2**-g_scale over the common scale 2**-(s_scale + d_bits)
        shift_g = pr.s_scale - pr.g_scale
        idx = [i * n + j for i in J for j in J]
        vals = [(int(pr.s_entries[t]) << d_bits) - ((m_num * int(pr.g_entries[t])) << shift_g) for t in idx]
        block = to_float_array(vals, pr.s_scale + d_bits, (len(J), len(J)))
        return mu, (block + block.T) / 2

    # -- bounds -----------------------------------------------------------------------------------
    def _bounds(self, pr: _Products):
        """Eigenvalue and eigenvector bounds (normalised units) from the exact S and G."""
        n = self.n
        th = pr.theta_hi
        omega = float(np.linalg.norm(pr.R)) * _NORM_SAFETY
        if omega >= 0.5:
            return None
        offd = pr.S.copy()
        offd[np.diag_indices(n)] = th * np.diag(pr.R)  # S_ii - θ_i = θ_i R_ii
        rho = float(np.linalg.norm(offd)) * _NORM_SAFETY + pr.p_rounding
        vb = rho + (np.abs(th) + rho) * omega / (1 - omega) + self.a_rounding
        # residual columns (S - θ_j G) e_j without the (zero) diagonal; ‖G^-1/2 - I‖ terms add ~ω‖A‖
        F = pr.S - pr.R * th[None, :]
        np.fill_diagonal(F, 0.0)
        a_norm = float(np.max(np.abs(th))) + rho
        order = np.lexsort((-pr.theta_lo, -th))
        res = np.linalg.norm(F, axis=0) * _NORM_SAFETY + 2 * omega * (a_norm + np.abs(th)) + pr.p_rounding
        groups = _bound_clusters(th[order], vb[order], res[order])
        vec = np.empty(n)
        for start, stop in groups:
            J = order[start:stop]
            others = np.setdiff1d(order, J, assume_unique=True)
            if len(J) > 1:
                rest = F[np.ix_(others, J)] if len(others) else np.zeros((0, len(J)))
                r = float(np.linalg.norm(rest)) * _NORM_SAFETY + 2 * omega * (a_norm + np.max(np.abs(th[J])))
                r += pr.p_rounding
            else:
                r = res[J[0]]
            if len(others):
                lo = np.min(th[J] - vb[J])
                hi = np.max(th[J] + vb[J])
                dist = np.maximum(th[others] - vb[others] - hi, lo - th[others] - vb[others])
                gap = float(np.min(dist))
            else:
                gap = np.inf
            sin = r / gap if gap > 0 else np.inf
            vec[J] = min(math.sqrt(2) * sin + omega, 2.0)
        return order, vb, vec, groups

    def _wanted(self, pr: _Products) -> np.ndarray:
        """Target absolute accuracy of each eigenvalue (normalised units)."""
        th_abs = np.abs(pr.theta_hi)
        if self.tier == 1:
            return np.full(self.n, self.target * max(float(np.max(th_abs)), 2.0**-self.a_bits))
        # eigenvalues within 10**dps of the noise of A's fixed point cannot carry dps relative digits
        return np.maximum(self.target * th_abs, self.a_rounding * 2.0**24)

    def _done(self, pr: _Products, order, vb, vec) -> bool:
        if self.tier == 1:
            vectors_ok = np.all(vec[order[: self.k]] <= self.target)
        else:
            meaningful = np.abs(pr.theta_hi) > self.a_rounding * 2.0**24 / self.target
            vectors_ok = np.all(vec[meaningful] <= self.target)
        return bool(np.all(vb <= self._wanted(pr)) and vectors_ok)

    # -- driver -----------------------------------------------------------------------------------
    def run(self) -> RefinedEigensystem:
        n = self.n
        x_bits = _START_BITS
        X = to_fmpz_mat(float_to_integers(self.V0, x_bits), n, n)
        x_cap = self.a_bits + 16
        bits_used = 0
        best = None  # (score, X, x_bits, products, bounds, iteration) of the best checked basis
        stall = 0
        for it in range(_MAX_ITERATIONS + 1):
            a_bits = min(self.a_bits, x_bits + 48)
            pr = self._products(X, x_bits, a_bits)
            bits_used = max(bits_used, x_bits, a_bits)
            bnd = self._bounds(pr) if a_bits == self.a_bits else None
            if bnd is not None:
                order, vb, vec, _ = bnd
                score = float(np.max(vb / self._wanted(pr)))
                done = self._done(pr, order, vb, vec)
                if best is None or done or score < best[0]:
                    best, stall = (score, X, x_bits, pr, bnd, it), 0
                else:
                    stall += 1  # bounds stopped improving: the precision of A is exhausted
                if done or stall >= 3 or it == _MAX_ITERATIONS:
                    break
            W, new_order, e_max, in_cluster = self._correction(pr)
            self.history.append(
                {"a_bits": a_bits, "x_bits": x_bits, "max_correction": e_max, "clustered": in_cluster}
            )
            # precision doubles per iteration: convergence is at most quadratic, and graded spectra
            # need the higher precision to resolve their next eigenvalue group
            new_bits = min(x_cap, 2 * x_bits)
            w_bits = new_bits + _W_GUARD
            w_ints = float_to_integers(W, w_bits)
            one = 1 << w_bits
            for c, i in enumerate(new_order):
                w_ints[i * n + c] += one
            Wm = to_fmpz_mat(w_ints, n, n)
            X = to_fmpz_mat(round_shift((X * Wm).entries(), x_bits + w_bits - new_bits), n, n)
            x_bits = new_bits
        _, X, x_bits, pr, (order, vb, vec, groups), it = best
        return self._result(X, x_bits, pr, order, vb, vec, groups, it, bits_used)

    def _result(self, X, x_bits, pr, order, vb, vec, groups, iterations, bits_used):
        n = self.n
        unit_exp = self.exp2 + self.a_bits  # normalised unit 2**unit_exp
        out_prec = max(x_bits, self.a_bits) + 16
        values = np.empty(n, dtype=object)
        bounds = np.empty(n, dtype=object)
        for pos, i in enumerate(order):
            s, g = int(pr.s_entries[i * (n + 1)]), int(pr.g_entries[i * (n + 1)])
            # θ = (s 2**-s_scale) / (g 2**-g_scale) in normalised units
            tup = ratio_to_mpf_tuple(s, g, out_prec)
            values[pos] = mpmath.mp.make_mpf(libmp.mpf_shift(tup, pr.g_scale - pr.s_scale + unit_exp))
            bounds[pos] = mpmath.mp.make_mpf(libmp.mpf_shift(libmp.from_float(float(vb[i])), unit_exp))
        cols = order if self.tier == 2 else order[: self.k]
        entries = X.entries()
        vectors = np.empty((n, len(cols)), dtype=object)
        t_bits = x_bits + 16
        for c, j in enumerate(cols):
            g = int(pr.g_entries[j * (n + 1)])
            root = math.isqrt(g << (2 * t_bits))  # ≈ sqrt(G_jj) 2**(x_bits + t_bits)
            col = [_round_div(int(entries[i * n + j]) << (2 * t_bits), root) for i in range(n)]
            big = max(range(n), key=lambda i: (abs(col[i]), -i))
            sign = -1 if col[big] < 0 else 1
            for i in range(n):
                vectors[i, c] = mpmath.mp.make_mpf(libmp.from_man_exp(sign * col[i], -t_bits))
        clusters = [(s, t) for s, t in groups if t - s > 1]
        return RefinedEigensystem(
            values=values,
            vectors=vectors,
            value_error_bounds=bounds,
            vector_error_bounds=np.array([float(vec[j]) for j in cols]),
            iterations=iterations,
            precision_bits_used=bits_used,
            clusters=clusters,
            history=self.history,
        )


def _gap_bits(A: np.ndarray, k: int) -> int:
    """Bits of ``‖A‖ / gap`` over the top-k eigenvalues, from float64 (capped at 50: float64's resolution)."""
    w = np.sort(np.linalg.eigvalsh(np.vectorize(float, otypes=[float])(A)))[::-1]
    scale = max(abs(w[0]), abs(w[-1]))
    if scale == 0 or len(w) < 2:
        return 0
    gaps = np.abs(np.diff(w))
    near = np.minimum(np.concatenate(([np.inf], gaps)), np.concatenate((gaps, [np.inf])))[:k]
    return int(math.ceil(min(50.0, max(0.0, math.log2(scale / max(np.min(near), scale * 2.0**-50))))))


def _round_div(a: int, b: int) -> int:
    """round(a / b) for b > 0, ties upward."""
    return (2 * a + b) // (2 * b)


def _int_to_float(v: int, scale: int) -> float:
    """float64 of v * 2**-scale, without overflow for long v."""
    t = max(0, abs(v).bit_length() - 1000)
    return math.ldexp(float(v >> t), t - scale)


def _float_to_int(x: float, scale: int) -> int:
    """Exact integer x * 2**scale (x a float64 whose ulp is at least 2**-scale)."""
    m, e = math.frexp(x)
    mant = int(math.ldexp(m, 53))
    shift = e - 53 + scale
    return mant << shift if shift >= 0 else mant >> -shift


def _interval_clusters(linked: np.ndarray) -> list[tuple[int, int]]:
    """Split positions 0..n-1 (sorted order) into intervals so that every linked pair shares one."""
    n = len(linked)
    idx = np.arange(n)
    reach = np.where(linked.any(axis=1), np.max(np.where(linked, idx[None, :], -1), axis=1), -1)
    reach = np.maximum(reach, idx)
    reach = np.maximum.accumulate(reach)
    stops = np.flatnonzero(reach == idx) + 1
    starts = np.concatenate(([0], stops[:-1]))
    return list(zip(starts.tolist(), stops.tolist()))


def _bound_clusters(theta, vb, res) -> list[tuple[int, int]]:
    """Group consecutive (descending) eigenvalues whose single-vector sin θ bound would exceed 1/4."""
    n = len(theta)
    if n == 0:
        return []
    gaps = theta[:-1] - theta[1:]
    join = gaps <= (vb[:-1] + vb[1:]) + 4 * np.maximum(res[:-1], res[1:])
    stops = np.flatnonzero(~join) + 1
    starts = np.concatenate(([0], stops))
    stops = np.concatenate((stops, [n]))
    return list(zip(starts.tolist(), stops.tolist()))
