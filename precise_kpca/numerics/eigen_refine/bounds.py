"""Bounds stage: eigenvalue enclosures (Ostrowski, Weyl, Li–Li through sorted interval ends) and eigenvector
bounds (Davis–Kahan, one virtual Newton step) from the ``S``, ``G`` of a basis, in normalised units.

The theorems are :mod:`precise_kpca.numerics.theorems`' in its ``FLOAT64`` arithmetic (elementwise, rounded to
nearest); what makes their results bounds stays here: the safety factors and allowances of
:mod:`.rounding` (float64 roundings of the norms, read-outs, double-double differences of θ), the a-priori error
analysis of this float64 discipline.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from .. import theorems
from .helpers import _abs_matvec, _row_chunks, _scaled_rows, _two_sum
from .products import Products
from .rounding import (_DD_ENDS, _DD_GAP, _DD_PAIR, _EPS, _GAP_ROUNDING, _LINK_MARGIN, _NOISE_MARGIN, _NORM_SAFETY,
                       _OUT_GUARD_BITS, _READOUT_SAFETY, _SCALED_ROUNDING, _SHORT_ROUNDING)

_LOG = logging.getLogger(__name__)


def bounds(ref, pr: Products):
    """Eigenvalue and eigenvector bounds (normalised units) from the fixed-point S and G.

    Returns ``(order, vb, vec, groups)`` or None when XᵀX is too far from I: ``order`` sorts the basis
    by Rayleigh quotient (descending), ``vb[i]`` bounds the eigenvalue at position ``pos(i)`` around
    ``θ_i``, ``vec[i]`` the vector (or its group's subspace), ``groups`` the position ranges whose
    bounds do not separate them.

    Chain (each step rigorous; ``c = diag(G)^{-1/2}``, Ŝ = cSc with diagonal θ, Ĝ = cGc unit diagonal):

    1. groups ``g`` of indices linked by ``|Ĝ_ij|`` above the target (clusters rotated last time);
       ``D = I + F_in`` the block diagonal of Ĝ, ``ω_in ≥ max_g ‖F_g‖``; ``C = D^{-1/2}``,
       ``CĜC = I + CF_outC`` with ``‖CF_outC‖ ≤ ω' = (‖F_out‖ + NδG/min G_ii) / (1 - ω_in)``.
       Ostrowski: ``λᵢ(CŜC) = ϑᵢ λᵢ(A_hp)``, ``ϑᵢ ∈ [1 - ω', 1 + ω']``.
    2. ``CŜC = C(Θ + E_in)C + CE_outC + CΔSC``; the block-diagonal part has, block by block, the
       eigenvalues of the pencil ``(Θ_g + E_g, I + F_g)``: by Ostrowski and Weyl inside the block each
       lies within ``r = e_g + ω_g/(1 - ω_g) (|θ| + e_g)`` of its θ (sorted within the block).
    3. Weyl: ``‖CE_outC‖ ≤ η_out = ‖E_out‖ / (1 - ω_in)``, ``‖CΔSC‖ ≤ NδS / (min G_ii (1 - ω_in))``.
    4. Li–Li (quadratic) per group ``g`` whose intervals are separated by ``η_g > 0`` from the others
       widened by η_out: ``|λⱼ - λⱼ(diag(H₁, H₂))| ≤ 2ε²/(η + √(η² + 4ε²))``, ``ε = ‖E_out[:, g]‖ / (1 - ω_in)``.
    Sorted ends: if eigenvalues are matched one-to-one to intervals, the i-th largest lies between the
    i-th largest lower end and the i-th largest upper end; every argument's sorted ends are intersected.
    """
    n = ref.n
    th, tl = pr.theta_hi, pr.theta_lo
    gdiag = 1.0 + np.diag(pr.R)
    g_min = float(np.min(gdiag))
    if not g_min > 0.5:
        return None
    c = 1.0 / np.sqrt(gdiag)
    # pairs left out of the groups enter through Φ to first order (as coupling) and φ² ‖Ŝ‖: keep
    # φ ≤ ‖F_out‖_F small against the square root of the finest accuracy wanted
    th_abs = np.abs(th)
    th_max = float(np.max(th_abs))
    wanted = float(np.min(wanted_accuracy(ref, pr)))
    link_tol = _LINK_MARGIN * math.sqrt(wanted / max(th_max, wanted)) / n
    # Ĝ = cGc and Ŝ = cSc (zero diagonals) by row chunks: N×N float64 temporaries are 233 MB each at N = 5404
    chunks = _row_chunks(n, n)
    groups = _link_groups(pr, c, link_tol, chunks)
    norms = _group_norms(pr, c, groups, chunks, g_min)
    om_in = float(np.max(norms.om_g))
    e_in = float(np.max(norms.e_g))
    if not om_in < 0.25:
        return None
    phi = norms.phi / (1 - om_in) * _NORM_SAFETY
    dphi = n * pr.delta_g / g_min / (1 - om_in) * _NORM_SAFETY  # the error of G, also off the groups
    if not phi + dphi < 0.25:
        return None
    r = _member_radii(pr, c, groups, norms, g_min)
    eta_small, eta_out, eta_delta = _remainders(pr, norms, th_max, e_in, om_in, phi, dphi, g_min)
    order = np.lexsort((-tl, -th))
    lo_off, hi_off = _sorted_offsets(pr, order, r, eta_out, groups, norms.col_out, om_in)
    # offsets are relative to θ at each position; Weyl: S's error, the second-order remainder and A's rounding
    for norm in (eta_delta, eta_small, ref.a_rounding):
        lo_off, hi_off = theorems.weyl(lo_off, hi_off, norm)
    # radius around θ_(i) + the rounding of the returned θ to max(x_bits, a_bits) + 16 bits
    rad = np.maximum(-lo_off, hi_off)
    rad += th_abs[order] * 2.0 ** -(ref.a_bits + _OUT_GUARD_BITS - 1)
    vb = np.empty(n)
    vb[order] = rad * _NORM_SAFETY
    if _LOG.isEnabledFor(logging.DEBUG):
        ratio = vb / wanted_accuracy(ref, pr)
        worst = int(np.argmax(ratio))
        _LOG.debug("bounds: groups %d (largest %d), om_in %.2e, phi %.2e, eta_small %.2e, eta_out %.2e, "
                   "eta_delta %.2e, max r %.2e, a_rounding %.2e; vb/wanted max %.2e at pos %d (θ %.2e, r %.2e, "
                   "group size %d)", groups.count, groups.sizes.max(), om_in, phi, eta_small, eta_out, eta_delta,
                   r.max(), ref.a_rounding, ratio[worst], int(np.flatnonzero(order == worst)[0]), th[worst],
                   r[worst], groups.sizes[groups.labels[worst]])
    vec = vector_bounds(ref, pr, order, vb, c, g_min)  # Davis–Kahan
    return order, vb, vec, _overlap_groups(th[order], tl[order], vb[order])


@dataclass
class _Groups:
    """Indices linked by non-orthogonality (step 1 of :func:`bounds`): ``labels[i]`` the group of index i."""

    count: int
    labels: np.ndarray
    sizes: np.ndarray


@dataclass
class _GroupNorms:
    """Norm bounds of the c-scaled S and G inside and across the groups (steps 1–3 of :func:`bounds`)."""

    e_out: float  # ≥ ‖E_out‖_F, the cross-group part of Ŝ
    phi: float  # ≥ ‖F_out‖_F, the cross-group part of Ĝ (before the (1 - ω_in) of C)
    om_g: np.ndarray  # per group ≥ ‖F_g‖ (G's error δG included)
    e_g: np.ndarray  # per group ≥ ‖E_g‖
    col_out: np.ndarray  # per column: squared first-order coupling T = E - (FΘ + ΘF)/2 to the other groups


def _link_groups(pr: Products, c, link_tol: float, chunks) -> _Groups:
    """Groups of indices linked by ``|Ĝ_ij| > link_tol`` (connected components of the sparse link graph)."""
    n = len(c)
    indices, counts = [], []
    for I in chunks:
        link = np.abs(_scaled_rows(pr.R, c, I)) > link_tol
        counts.append(np.count_nonzero(link, axis=1))
        indices.append(np.nonzero(link)[1].astype(np.int32))
    del link
    indptr = np.concatenate(([0], np.cumsum(np.concatenate(counts))))
    indices = np.concatenate(indices)
    graph = csr_matrix((np.ones(len(indices), dtype=bool), indices, indptr), shape=(n, n))
    n_groups, labels = connected_components(graph, directed=False)
    del graph, indices, indptr, counts
    return _Groups(n_groups, labels, np.bincount(labels, minlength=n_groups))


def _group_norms(pr: Products, c, groups: _Groups, chunks, g_min: float) -> _GroupNorms:
    """Cross-group pairs: ``‖E_out‖_F``, ``‖F_out‖_F`` and, per column, their first-order coupling
    ``T = E - (FΘ + ΘF)/2`` with its float64 rounding; inside the groups: per group ``‖F_g‖``, ``‖E_g‖``."""
    n, th, labels = len(c), pr.theta_hi, groups.labels
    safety, rel = _NORM_SAFETY, _READOUT_SAFETY
    e_out2 = phi2 = 0.0
    col_out, col_fin, col_ein = np.zeros(n), np.zeros(n), np.zeros(n)
    for I in chunks:
        G_I = _scaled_rows(pr.R, c, I)
        S_I = _scaled_rows(pr.S, c, I)
        same = labels[I, None] == labels[None, :]
        col_fin += np.sum(np.where(same, G_I, 0.0) ** 2, axis=0)
        col_ein += np.sum(np.where(same, S_I, 0.0) ** 2, axis=0)
        G_I[same] = 0.0
        S_I[same] = 0.0
        del same
        FH = G_I * ((th[I, None] + th[None, :]) / 2)
        T_out = np.abs(S_I - FH) + _SHORT_ROUNDING * (np.abs(S_I) + np.abs(FH))
        col_out += np.sum(T_out**2, axis=0)
        e_out2 += float(np.sum(S_I**2))
        phi2 += float(np.sum(G_I**2))
        del G_I, S_I, FH, T_out
    e_out = math.sqrt(e_out2) * safety * rel
    phi = math.sqrt(phi2) * safety * rel
    om_g = np.sqrt(np.bincount(labels, weights=col_fin, minlength=groups.count)) * safety * rel
    om_g += groups.sizes * pr.delta_g / g_min
    e_g = np.sqrt(np.bincount(labels, weights=col_ein, minlength=groups.count)) * safety * rel
    return _GroupNorms(e_out, phi, om_g, e_g, col_out)


def _member_radii(pr: Products, c, groups: _Groups, norms: _GroupNorms, g_min: float) -> np.ndarray:
    """Step 2: each θ's radius inside its group's pencil (Ostrowski and Weyl, then second order); 0 for a
    singleton (intervals are centred on the exact θ = S_ii/G_ii; its double-double only enters differences of
    distinct θ, each with its own 2**-104 allowance)."""
    labels, sizes = groups.labels, groups.sizes
    big = sizes[labels] > 1
    og = norms.om_g[labels]
    eg = norms.e_g[labels]
    # λ(Θ_g + E_g) within e_g of θ (Weyl), the pencil's within ω_g/(1 - ω_g) of that (Ostrowski)
    r = np.where(big, eg + theorems.ostrowski_radius(np.abs(pr.theta_hi) + eg, og), 0.0) * _NORM_SAFETY
    # second order inside the groups (a float64 rotation leaves ω_g ≈ 2**-53: ω_g |θ| can exceed the target)
    for gidx in np.flatnonzero(sizes > 1):
        members = np.flatnonzero(labels == gidx)
        r[members] = np.minimum(r[members], group_second_order(
            pr, members, c, float(norms.om_g[gidx]), float(norms.e_g[gidx]), g_min))
    return r


def _remainders(pr: Products, norms: _GroupNorms, th_max, e_in, om_in, phi, dphi, g_min):
    """Step 3: ``(η_small, η_out, η_delta)``: what ``Z = (I+Φ)^{-1/2} CŜC (I+Φ)^{-1/2} = B + C T_out C + small``
    adds beyond the block-diagonal B (second order in Φ, G's error), Weyl's ``‖C T_out C‖`` and S's error."""
    n, safety = len(norms.col_out), _NORM_SAFETY
    ph = phi + dphi
    e_out = norms.e_out
    m_norm = (th_max + e_in + e_out) / (1 - om_in) * safety
    kappa = 0.375 * ph * ph / (1 - ph)
    rem = m_norm * (ph * ph / 4 + 2 * kappa + kappa * ph + kappa * kappa)
    o2 = phi * (e_in + om_in / (1 - om_in) * (th_max + e_in)) / (1 - om_in)
    eta_small = (ph * e_out / (1 - om_in) + rem + o2 + dphi * m_norm) * safety
    eta_out = math.sqrt(float(np.sum(norms.col_out))) * safety / (1 - om_in) * safety
    eta_delta = n * pr.delta_s / (g_min * (1 - om_in)) * safety
    return eta_small, eta_out, eta_delta


def _sorted_offsets(pr: Products, order, r, eta_out, groups: _Groups, col_out, om_in):
    """Step 4 and the sorted ends: offsets from θ_(i) of the i-th lower and upper ends, the global Weyl
    argument (radii ``r + η_out``) intersected with Li–Li's per separated group."""
    th, tl, labels = pr.theta_hi, pr.theta_lo, groups.labels
    w_lo, w_hi = theorems.weyl(-r, r, eta_out)
    lo_off, hi_off = _sorted_ends(th, tl, order, -w_lo, w_hi)
    eps_g = np.sqrt(np.bincount(labels, weights=col_out, minlength=groups.count)) * _NORM_SAFETY / (1 - om_in)
    eta_g = _group_gaps(len(th), th, tl, r, eta_out, labels, groups.count)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q_g = np.where(eta_g > 0, theorems.li_li_radius(eps_g, eta_g, arith=theorems.FLOAT64), np.inf)
    q_g *= _NORM_SAFETY
    for gidx in np.flatnonzero((eta_g > 0) & (q_g < eta_out)):
        members = labels == gidx
        # λ(diag(H₁, H₂)): the group's within r of θ, the others' within r + η_out; Li–Li moves each by q_g
        lo2, hi2 = theorems.weyl(np.where(members, -r, w_lo), np.where(members, r, w_hi), q_g[gidx])
        lo2, hi2 = _sorted_ends(th, tl, order, -lo2, hi2)
        lo_off = np.maximum(lo_off, lo2)
        hi_off = np.minimum(hi_off, hi2)
    return lo_off, hi_off


def group_second_order(pr, J, c, om, e, g_min):
    """Radii of the group's pencil ``(Θ + E, I + F)`` (indices ``J`` of ``cSc``, ``cGc``) around its θ, second
    order in F.

    With ``K = (I+F)^{-1/2} - I = -F/2 + K₂``, ``‖K₂‖ ≤ κ = 3ω²/(8(1-ω))``, the pencil's eigenvalues are those
    of ``Z = Θ + T + Q``: ``T = E - (FΘ + ΘF)/2`` (symmetric, zero diagonal) and
    ``‖Q‖ ≤ ωe + (2κ + (ω/2 + κ)²)(max|θ| + e)``, ``Q = -(FE + EF)/2 + K₂M + MK₂ + KMK``. Weyl gives every
    eigenvalue within ``‖T‖ + ‖Q‖``; Li–Li per member ``i`` whose θ is separated from the others' Weyl
    intervals by ``η > 0`` gives ``2ε²/(η + √(η² + 4ε²))``, ``ε = ‖T e_i‖`` (the others keep ``‖T‖`` more);
    the arguments' sorted ends are intersected. ``ω``, ``e``: the group's ``‖F‖``, ``‖E‖`` bounds.
    Returns the radius per member (order of ``J``), valid like the Ostrowski radii it may replace.
    """
    safety = _NORM_SAFETY
    th, tl = pr.theta_hi[J], pr.theta_lo[J]
    m = len(J)
    th_top = float(np.max(np.abs(th)))
    # ε_i² = Σ_j T_ij² by row chunks of T (a rotated cluster's group can be nearly N wide); T is symmetric in
    # exact arithmetic, and its rows as computed bound the true entries as well as its columns would
    eps = np.empty(m)
    for rows in _row_chunks(m, m):
        Jr = J[rows]
        E = _scaled_rows(pr.S, c, Jr, J)
        F = _scaled_rows(pr.R, c, Jr, J)
        FH = F * ((th[rows, None] + th[None, :]) / 2)
        # float64 read-outs and scaling (2**-48 relative, as in _bounds) and the rounding here, and G's error
        # δG times the θ it meets
        T = np.abs(E - FH) + _SCALED_ROUNDING * (np.abs(E) + np.abs(FH)) + th_top * pr.delta_g / g_min
        T[np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop)] = 0.0
        eps[rows] = np.sum(T * T, axis=1)
        del E, F, FH, T
    t_norm = math.sqrt(float(np.sum(eps))) * safety
    eps = np.sqrt(eps) * safety
    kappa = 0.375 * om * om / (1 - om)
    q_rem = (om * e + (2 * kappa + (om / 2 + kappa) ** 2) * (th_top + e)) * safety
    local = np.lexsort((-tl, -th))
    w_lo, w_hi = theorems.weyl(np.zeros(m), np.zeros(m), t_norm)  # λ(Θ + T) within ‖T‖ of the θ
    lo_off, hi_off = _sorted_ends(th, tl, local, -w_lo, w_hi)
    # η_i: distance from θ_i to the other θ_j (double-double, with the allowance of _group_gaps) less ‖T‖
    eta = np.full(m, np.inf)
    chunk = max(1, 2_000_000 // m)
    for a in range(0, m, chunk):
        rows = slice(a, min(m, a + chunk))
        d = np.abs((th[rows, None] - th[None, :]) + (tl[rows, None] - tl[None, :]))
        d = d * (1 - _SHORT_ROUNDING) - _DD_ENDS * (np.abs(th[rows, None]) + np.abs(th[None, :]))
        d[np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop)] = np.inf
        eta[rows] = np.min(d, axis=1) - t_norm
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.where(eta > 0, theorems.li_li_radius(eps, eta, arith=theorems.FLOAT64), np.inf) * safety
    for i in np.flatnonzero(q < t_norm):
        # λ(diag(θ_i, H₂)): θ_i itself, the others within ‖T‖ (Weyl); Li–Li moves each by q_i
        own = np.arange(m) == i
        lo2, hi2 = theorems.weyl(np.where(own, 0.0, w_lo), np.where(own, 0.0, w_hi), q[i])
        lo2, hi2 = _sorted_ends(th, tl, local, -lo2, hi2)
        lo_off = np.maximum(lo_off, lo2)
        hi_off = np.minimum(hi_off, hi2)
    lo_off, hi_off = theorems.weyl(lo_off, hi_off, q_rem)  # the remainder Q
    out = np.empty(m)
    out[local] = np.maximum(-lo_off, hi_off) * safety
    return out


def _group_gaps(n, th, tl, r, eta_out, labels, n_groups):
    """η_g: least distance between a group's intervals and the others' intervals widened by η_out."""
    eta = np.full(n_groups, np.inf)
    chunk = max(1, 2_000_000 // max(n, 1))
    for s in range(0, n, chunk):
        rows = slice(s, min(n, s + chunk))
        d = np.abs((th[rows, None] - th[None, :]) + (tl[rows, None] - tl[None, :]))
        d = d * (1 - _SHORT_ROUNDING) - _DD_ENDS * (np.abs(th[rows, None]) + np.abs(th[None, :]))
        d = d - r[rows, None] - r[None, :] - eta_out
        d[labels[rows, None] == labels[None, :]] = np.inf
        np.minimum.at(eta, labels[rows], np.min(d, axis=1))
    return eta


def vector_bounds(ref, pr, order, vb, c, g_min, extra=0.0):
    """‖x̂ - v‖ bounds: sin θ of a vector, or of its group's invariant subspace (Davis–Kahan).

    ``A x - θ x = X G⁻¹ Xᵀ(A x - θ x)``, so ``‖A x - θ x‖ ≤ √(1+ω)/(1-ω) ‖(S - θG) e‖``. For a group
    ``Y = X_J`` of overlapping positions, ``K = G_JJ⁻¹ S_JJ`` gives ``Xᵀ(AY - YK) = (S - GΘ)_oJ -
    G_oJ G_JJ⁻¹ (S - GΘ)_JJ`` (zero on the rows J) and ``λ(K)`` lies within ``e + ω_J/(1-ω_J)(|θ| + e)``
    of the θ_J (Ostrowski and Weyl on the c-scaled block). ``extra`` bounds a further perturbation of A (its
    enclosures ``vb`` must already contain it).
    """
    n = ref.n
    th, tl = pr.theta_hi, pr.theta_lo
    omega_g = float(np.linalg.norm(pr.R)) * _NORM_SAFETY + n * pr.delta_g
    vec = np.full(n, 2.0)
    if not omega_g < 0.5:
        return vec
    lift = math.sqrt(1 + omega_g) / (1 - omega_g) * _NORM_SAFETY
    tho, tlo, vbo = th[order], tl[order], vb[order]
    pos = np.empty(n, dtype=int)
    pos[order] = np.arange(n)
    wanted = np.zeros(n, dtype=bool)
    wanted[pos[order[: ref.k]] if ref.tier == 1 else np.arange(n)] = True
    for a, b in _overlap_groups(tho, tlo, vbo):
        if not wanted[a:b].any():
            continue
        J = order[a:b]
        thJ = th[J]
        # |(S - G Θ_J)| on the columns J, plus the read-out, cancellation and fixed-point errors
        Fa = np.abs(pr.S[:, J] - pr.R[:, J] * thJ[None, :])
        Fa += _SHORT_ROUNDING * (np.abs(pr.S[:, J]) + np.abs(pr.R[:, J] * thJ[None, :]))
        Fa += pr.delta_s + np.abs(thJ)[None, :] * pr.delta_g
        Fa[J, np.arange(len(J))] = 0.0  # S_jj - θ_j G_jj = 0 for the exact θ_j (double-double error: 2**-50 term)
        if b - a == 1:
            res = float(np.linalg.norm(Fa)) * _NORM_SAFETY * lift
            # distance from θ_j to the other eigenvalues: all above are ≥ θ_(a-1) - vb, below ≤ θ_(b) + vb
            lo_mu = hi_mu = 0.0
        else:
            in_j = np.zeros(n, dtype=bool)
            in_j[J] = True
            RJ = np.abs(pr.R[np.ix_(J, J)]) * c[J][:, None] * c[J][None, :]
            np.fill_diagonal(RJ, 0.0)
            om_j = float(np.linalg.norm(RJ)) * _NORM_SAFETY + len(J) * pr.delta_g / g_min
            if not om_j < 0.5:
                continue
            g_oj = float(np.linalg.norm(np.abs(pr.R[np.ix_(~in_j, J)]) + pr.delta_g)) * _NORM_SAFETY
            res = float(np.linalg.norm(Fa[~in_j])) + g_oj * float(np.linalg.norm(Fa[in_j])) / (1 - om_j)
            res *= _NORM_SAFETY * lift
            # λ(K): the pencil (S_JJ, G_JJ) scaled by c: within e + ω/(1-ω)(|θ| + e) of the θ_J
            e_j = float(np.linalg.norm(Fa[in_j] * c[J][:, None] * c[J][None, :])) * _NORM_SAFETY
            spread = e_j + theorems.ostrowski_radius(float(np.max(np.abs(thJ))) + e_j, om_j)
            lo_mu = ((tho[b - 1] - tho[a]) + (tlo[b - 1] - tlo[a])) - spread  # relative to θ_(a)
            hi_mu = spread
        # A itself differs from the fixed-point A_hp by ‖ΔA‖₂ ≤ a_rounding: ‖ΔA Y‖ ≤ a_rounding ‖Y‖
        # (extra: a further perturbation ‖A_true - A‖₂ ≤ extra, the input's own error)
        res += (ref.a_rounding + extra) * math.sqrt(1 + omega_g) * _NORM_SAFETY
        # Davis–Kahan's gap from λ(K) ∈ θ_(a) + [lo_mu, hi_mu] to the eigenvalues above, ≥ θ_(a-1) - vb_(a-1), in
        # offsets from θ_(a), and to those below, ≤ θ_(b) + vb_(b), in offsets from θ_(b)
        d = []
        if a > 0:
            d.append(theorems.davis_kahan_gap(lo_mu, hi_mu, above=((tho[a - 1] - tho[a]) + (tlo[a - 1] - tlo[a]))
                                              - vbo[a - 1]))
        if b < n:
            to_b = (tho[b] - tho[a]) + (tlo[b] - tlo[a])
            d.append(theorems.davis_kahan_gap(lo_mu - to_b, hi_mu - to_b, below=vbo[b]))
        gap = min(d) * (1 - _GAP_ROUNDING) - _DD_GAP * abs(tho[a]) if d else np.inf
        if not gap > 0:
            continue
        sin = theorems.sin_theta(res, gap) if np.isfinite(gap) else 0.0
        if b - a == 1:
            # unit x̂ = x/‖x‖: ‖x̂ - v‖ = 2 sin(φ/2) ≤ √2 sin φ (sign of v chosen), ‖x‖² = G_jj ≥ g_min
            bound = math.sqrt(2) * sin / math.sqrt(g_min)
            if bound * _NORM_SAFETY > ref.target and np.isfinite(gap):
                bound = min(bound, newton_vector_bound(ref, pr, J[0], gap, g_min, omega_g, lift, extra))
        else:
            # distance of a unit vector of span Y to the invariant subspace ≤ ‖sin Θ‖, σ_min(Y)² ≥ 1 - ω
            bound = sin / math.sqrt(1 - omega_g)
        vec[J] = min(bound * _NORM_SAFETY, 2.0)
        if bound > ref.target:
            _LOG.debug("vector pos %d:%d res %.2e gap %.2e bound %.2e", a, b, res, gap, bound)
    return vec


def newton_vector_bound(ref, pr, j, gap, g_min, omega_g, lift, extra) -> float:
    """‖x̂ⱼ - v‖ through one virtual Newton step: second order in the residual instead of first.

    ``y = X u``, ``u = eⱼ + f`` with ``fᵢ = -rᵢ / (Gᵢᵢ(θᵢ - θⱼ))`` (``r = (S - θⱼG)eⱼ``; any float64 ``f``
    is admissible, only the bounds below must be rigorous). ``Xᵀ(A - θⱼ)y = z = (S - θⱼG)u`` is bounded
    entrywise from the float64 ``z̃`` (read-out, product and rounding errors as in the residuals above), so
    ``sin∠(y, v) ≤ (lift ‖z‖ + ‖ΔA‖ ‖y‖) / (‖y‖ gap)`` (Davis–Kahan, same shift θⱼ and gap) and
    ``sin∠(xⱼ, y) ≤ ‖X f‖ / ‖xⱼ‖``; the angles add, and ``‖x̂ - v‖ ≤ φ``.
    """
    n = ref.n
    th, tl = pr.theta_hi, pr.theta_lo
    tj = th[j]
    rs = pr.S[:, j] - pr.R[:, j] * tj
    rs[j] = 0.0
    err_r = _SHORT_ROUNDING * (np.abs(pr.S[:, j]) + np.abs(pr.R[:, j]) * abs(tj)) + pr.delta_s + abs(tj) * pr.delta_g
    err_r[j] = 0.0  # S_jj - θ_j G_jj = 0 for the exact θ_j
    g = 1.0 + np.diag(pr.R)
    d = g * ((th - tj) + (tl - tl[j]))
    # |G_ii(θ_i - θ_j) - d_i|: float64 G_ii and difference, double-double θ (2**-100 covers both θ)
    d_err = _SHORT_ROUNDING * np.abs(d) + _DD_PAIR * (np.abs(th) + abs(tj)) * g
    d[j] = 0.0  # G_jj(θ_j - θ_j)
    f = -rs / np.where(np.arange(n) == j, np.inf, d)
    f_abs = np.abs(f)
    # off-diagonal part of (S - θ_j G) f, the diagonal entries removed again
    off = (pr.S @ f - np.diag(pr.S) * f) - tj * (pr.R @ f - np.diag(pr.R) * f)
    z = rs + d * f + off
    m_abs = _abs_matvec(pr.S, f_abs) + abs(tj) * _abs_matvec(pr.R, f_abs)
    gamma = (n + 8) * _EPS
    z_err = (err_r + d_err * f_abs + _SHORT_ROUNDING * m_abs + (pr.delta_s + abs(tj) * pr.delta_g) * float(np.sum(f_abs))
             + gamma * (np.abs(rs) + np.abs(d) * f_abs + 2 * m_abs))
    z_norm = float(np.linalg.norm(np.abs(z) + z_err)) * _NORM_SAFETY
    f_norm = float(np.linalg.norm(f)) * _NORM_SAFETY
    x_f = math.sqrt(1 + omega_g) * f_norm  # ≥ ‖X f‖
    y_low = math.sqrt(g_min) - x_f
    if not y_low > 0:
        return 2.0
    y_high = math.sqrt(1 + omega_g) * math.sqrt(1 + f_norm**2)
    res = (lift * z_norm + (ref.a_rounding + extra) * y_high) * _NORM_SAFETY
    sin_y = theorems.sin_theta(res, gap, y_low)  # σ_min of the one column y: ‖y‖ ≥ y_low
    s = (x_f / math.sqrt(g_min) + sin_y) * _NORM_SAFETY
    _LOG.debug("newton %d: ‖Xf‖ part %.2e, residual part %.2e (z %.2e, A rounding + extra %.2e)", j,
               x_f / math.sqrt(g_min), sin_y, lift * z_norm, (ref.a_rounding + extra) * y_high)
    if not s < 0.5:
        return 2.0
    return s * (1 + s * s)  # asin s ≤ s (1 + s²) for s ≤ 1/2


def wanted_accuracy(ref, pr: Products) -> np.ndarray:
    """Target absolute accuracy of each eigenvalue (normalised units)."""
    th_abs = np.abs(pr.theta_hi)
    if ref.tier == 1:
        return np.full(ref.n, ref.target * max(float(np.max(th_abs)), 2.0**-ref.a_bits))
    # eigenvalues within 10**dps of the noise of A's fixed point cannot carry dps relative digits
    return np.maximum(ref.target * th_abs, ref.resolution * _NOISE_MARGIN)


def _sorted_ends(th, tl, order, r_lo, r_hi):
    """Offsets from θ_(i) of the i-th largest lower end θ_k - r_lo_k and upper end θ_k + r_hi_k.

    The ends are formed and ordered in double-double; where the i-th end belongs to position i itself the
    offset is exactly ∓r, otherwise the double-double difference gets a 2**-103 allowance of the θ involved
    (a misordering of ends closer than that changes an end by no more).
    """
    out = []
    for sign, rad in ((-1.0, r_lo), (1.0, r_hi)):
        s, e = _two_sum(th, sign * rad)
        e = e + tl
        hi = s + e
        lo = e - (hi - s)
        k = np.lexsort((-lo, -hi))
        slack = _DD_ENDS * (np.abs(th[k]) + rad[k] + np.abs(th[order]))
        off = ((hi[k] - th[order]) + (lo[k] - tl[order]))
        off = off - slack if sign < 0 else off + slack
        own = k == order
        off[own] = sign * rad[k[own]]
        out.append(off)
    return out[0], out[1]


def _overlap_groups(th, tl, vb) -> list[tuple[int, int]]:
    """Runs of consecutive positions (descending θ) whose intervals θ ± vb overlap: neighbours are apart where the
    double-double gap of their θ, less its allowance, exceeds the sum of their radii."""
    if len(th) == 0:
        return []
    gaps = (th[:-1] - th[1:]) + (tl[:-1] - tl[1:])
    return theorems.split_runs(~(gaps * (1 - _GAP_ROUNDING) <= vb[:-1] + vb[1:]))
