"""Products stage: ``P = AX``, ``S = XᵀP``, ``G = XᵀX`` of the current basis by Ozaki-scheme products, column
panel by column panel (no N×N fixed-point product is kept), read out as float64 words, with the exact diagonals
and the double-double Rayleigh quotients."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...arith import ozaki
from ...arith.fixed import FixedMatrix
from ...errors import InternalCheckFailed
from .helpers import _float_to_int, _int_to_float, _round_div, _symmetrise_words

_PANEL_BYTES = 1 << 31  # about the working set of one column panel of the N×N products (int64 levels and digits):
# at N = 5404 four panels of 1351 columns, whose slice GEMMs run at 98 % of the full width's speed (414: 80 %)
_SUB_PANELS = 4  # sub-panels per column panel for the triangular tiles of S and G (see _sub_panels)


@dataclass
class Products:
    """Read-outs of ``S ≈ XᵀAX`` and ``G ≈ XᵀX`` of the current basis (fixed-point products, computed column
    panel by column panel and not kept: ``S_fix``, ``G_fix`` below name those products; their tiles above the
    diagonal blocks are computed, the tiles below are the transposes, so only diagonal blocks are averaged)."""

    s_diag: list  # exact diagonal of S_fix: integers, S_fix_ii = s * 2**s_exp
    g_diag: list  # exact diagonal of XᵀX (column dots): integers, G_ii = g * 2**g_exp
    s_exp: int
    g_exp: int
    S: np.ndarray  # float64 of (S_fix + S_fixᵀ)/2, normalised units
    R: np.ndarray  # float64, G - I (diagonal from the exact column dots; off it the faithful G_fix)
    theta_hi: np.ndarray  # Rayleigh quotients S_fix_ii / G_ii as double-double (hi + lo)
    theta_lo: np.ndarray
    delta_s: float  # entrywise error bound of S_fix (against XᵀA_usedX: P's rounding included)
    delta_g: float  # entrywise error bound of G_fix off the diagonal (the diagonal is exact)
    # second words (for the shifted cluster blocks): (S_fix + S_fixᵀ)/2 ≈ S + s_lo and G_fix ≈ R + g_lo off the
    # diagonal, within about 2**-98 relative (FixedMatrix.to_double_word); all four arrays exactly symmetric
    s_lo: np.ndarray | None = None
    g_lo: np.ndarray | None = None


def a_at(ref, bits):
    """A to at least ``bits`` fractional bits, treated as exact: its leading digits (a view, no copy: A is
    GBs at N = 5404), truncated rather than rounded, which is as good for a step that is not checked.
    Returns (matrix, bits)."""
    A = ref.A_full
    bits = min(bits, ref.a_bits)
    keep = -(-(bits + A.exponent) // A.digit_bits)
    if keep < A.n_digits:
        A = FixedMatrix(A.digits[:keep], A.exponent, A.digit_bits)
    return A, bits


def products(ref, X, x_bits, a_bits):
    """The read-outs of ``S`` and ``G`` for the basis ``X`` (``x_bits`` bits) against A to ``a_bits`` bits
    (``ref``: the refinement's state, see :class:`.driver._Refiner`)."""
    n = ref.n
    A, a_bits = a_at(ref, a_bits)
    log2n = max(1, math.ceil(math.log2(n)))
    # P = AX kept to a_bits + 16 + log2 n fractional bits (its rounding enters S's error bound); S, G to
    # the accuracy the correction (or the bounds) can use
    if ref.tier == 1 and a_bits == ref.a_bits:
        # tier 1's a_bits already hold 2 log2 n + 8 guard bits beyond target and gaps: S's error
        # N² 2**-a_bits (from P's rounding) stays below the target by those guard bits
        p_frac = s_frac = g_frac = a_bits
    elif a_bits == ref.a_bits:
        # tier 2 at full precision: S's error N² 2**-(a_bits + log2 n) is below A's own rounding
        p_frac, s_frac, g_frac = a_bits + log2n, a_bits, a_bits
    else:
        p_frac, s_frac, g_frac = a_bits + 16 + log2n, a_bits + 8 + log2n, a_bits + 16 + log2n
    g_frac = min(2 * x_bits + 8, g_frac)
    # Column panel J of X: P_J = A X_J; then, sub-panel K by sub-panel K of J, the tiles of S = XᵀP and
    # G = XᵀX above and on the diagonal (rows [0, K.stop)), each rounded on its product's one grid and read
    # out at once (no N×N fixed-point product is kept: at N = 5404 each is GBs). The tiles below the
    # diagonal are the transposed tiles above it: every entry is still one of S_fix's or G_fix's, within
    # delta_s or delta_g of XᵀA_usedX or XᵀX, and S costs about half of a full XᵀP.
    s_hi, s_lo, R, g_lo = (np.empty((n, n)) for _ in range(4))
    s_parts = []
    delta_s = delta_g = 0.0
    for J in _panels(n, n, A.n_digits + X.n_digits):
        P_J = ozaki.matmul(A, _columns(X, J), grid=-p_frac)
        for K in _sub_panels(J):
            X_up = _columns(X, slice(0, K.stop)).T
            S_K = ozaki.matmul(X_up, _columns(P_J, slice(K.start - J.start, K.stop - J.start)), grid=-s_frac)
            s_parts.append(_diag_integers(FixedMatrix(S_K.digits[:, K], S_K.exponent, S_K.digit_bits)))
            delta_s = max(delta_s, float(S_K.error_bound))
            hi, lo = S_K.to_double_word()
            del S_K
            _set_upper_tile(s_hi, s_lo, K, hi, lo)
            G_K = ozaki.matmul(X_up, _columns(X, K), grid=-g_frac)
            delta_g = max(delta_g, float(G_K.error_bound))
            hi, lo = G_K.to_double_word()
            del G_K, X_up
            _set_upper_tile(R, g_lo, K, hi, lo)
        del P_J
    # the panels' diagonals on the finest of their grids
    s_exp = min(e for _, e in s_parts)
    s_diag = [int(v) << (e - s_exp) for ints, e in s_parts for v in ints]
    del s_parts
    g_diag, g_exp = ozaki.column_dots(X, X)
    g_diag = [int(v) for v in g_diag]
    _symmetrise_words(s_hi, s_lo)
    S = s_hi
    np.fill_diagonal(R, 0.0)
    one = 1 << -g_exp if g_exp < 0 else None
    if one is None:
        raise InternalCheckFailed("XᵀX has no fractional bits: the basis is not normalised")
    R[np.diag_indices(n)] = [_int_to_float(g - one, -g_exp) for g in g_diag]
    theta_hi, theta_lo = _rayleigh(s_diag, s_exp, g_diag, g_exp)
    return Products(s_diag, g_diag, s_exp, g_exp, S, R, theta_hi, theta_lo, delta_s, delta_g, s_lo, g_lo)


def _panels(n_cols: int, rows: int, levels: int) -> list[slice]:
    """Column panels whose product working set (``levels`` int64 digit levels of ``rows`` rows, plus their
    rounding) stays near ``_PANEL_BYTES``; at least 64 columns wide so that the slice GEMMs stay efficient."""
    width = max(64, _PANEL_BYTES // (16 * max(1, rows) * max(1, levels)))
    count = -(-n_cols // width)
    edges = [n_cols * p // count for p in range(count + 1)]  # equal widths: no thin last panel
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]


def _sub_panels(J: slice) -> list[slice]:
    """``J`` cut into up to ``_SUB_PANELS`` column ranges of at least 128 columns (for the triangular tiles of S
    and G: with p sub-panels in all they cost (p + 1) / 2p of full products, and GEMMs this wide stay efficient)."""
    width = J.stop - J.start
    count = max(1, min(_SUB_PANELS, width // 128))
    edges = [J.start + width * p // count for p in range(count + 1)]
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]


def _set_upper_tile(hi_out: np.ndarray, lo_out: np.ndarray, K: slice, hi: np.ndarray, lo: np.ndarray) -> None:
    """Write the tile of rows ``[0, K.stop)`` and columns K, and its transpose left of the diagonal block."""
    for M, tile in ((hi_out, hi), (lo_out, lo)):
        M[: K.stop, K] = tile
        M[K, : K.start] = tile[: K.start].T


def _columns(F: FixedMatrix, cols: slice) -> FixedMatrix:
    """Columns ``cols`` of ``F`` as a view of its digits (the slice GEMMs read strided operands in place)."""
    return FixedMatrix(F.digits[:, :, cols], F.exponent, F.digit_bits, F.error_bound)


def _diag_integers(F: FixedMatrix) -> tuple[list, int]:
    """Exact diagonal of a fixed-point matrix: integers ``d`` with ``F_ii = d * 2**ulp_exp2``."""
    n = min(F.shape)
    idx = np.arange(n)
    d = F.digits[:, idx, idx].astype(np.int64)
    acc = [0] * n
    b = F.digit_bits
    for row in d.tolist():
        acc = [(a << b) + v for a, v in zip(acc, row)]
    return acc, F.ulp_exp2


def _rayleigh(s_diag, s_exp, g_diag, g_exp):
    """θᵢ = (sᵢ 2**s_exp) / (gᵢ 2**g_exp) as double-double, relative accuracy about 2**-104."""
    n = len(s_diag)
    hi = np.empty(n)
    lo = np.empty(n)
    for i in range(n):
        s, g = int(s_diag[i]), int(g_diag[i])
        if s == 0:
            hi[i] = lo[i] = 0.0
            continue
        # q = round(s / g * 2**shift) with ~120 significant bits
        shift = 120 - (abs(s).bit_length() - g.bit_length())
        q = _round_div(s << shift, g) if shift >= 0 else _round_div(s, g << -shift)
        scale = shift - s_exp + g_exp  # θ = q 2**-scale
        h = _int_to_float(q, scale)
        hi[i] = h
        lo[i] = _int_to_float(q - _float_to_int(h, scale), scale) if h != 0 else 0.0
    return hi, lo
