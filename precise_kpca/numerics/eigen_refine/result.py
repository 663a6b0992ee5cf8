"""Result stage: what a checked basis keeps, its orthonormalisation, and the returned eigensystem (mpf values,
vectors and bounds in A's units)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import mpmath
import numpy as np
from mpmath import libmp

from ...arith import ozaki
from ...arith.fixed import FixedMatrix
from .. import theorems
from ..eigen_fixed import ratio_to_mpf_tuple
from . import helpers
from .bounds import vector_bounds
from .helpers import _exact, _exp_of, _round_div
from .rounding import _DIAGONAL_ENOUGH, _NORM_SAFETY, _OUT_GUARD_BITS


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
        Per iteration: bits of A and X, the largest first-order correction, number of clustered indices, and
        the largest ratio of a bound to its target at the check before the correction (None: no check), and the
        iteration's wall-clock seconds (products to update).
    input_error : mpmath mpf
        The ``input_error`` argument (A's units): ``value_error_bounds`` and ``vector_error_bounds`` hold for any
        matrix within it of the input; 0 for an input taken as exact.
    given_value_error_bounds, given_vector_error_bounds : ndarray
        The same bounds for the input matrix itself (equal to the above when ``input_error`` is 0): what the
        refinement achieved, as opposed to what the input's accuracy allows.
    resumed : dict or None
        For a run resumed from a ``checkpoint``: ``{"iteration": i, "seconds": s}``, the iteration it resumed at
        and the seconds the earlier calls had spent up to their last checkpoint (None: not resumed).
    """

    values: np.ndarray
    vectors: np.ndarray
    value_error_bounds: np.ndarray
    vector_error_bounds: np.ndarray
    iterations: int
    precision_bits_used: int
    clusters: list = field(default_factory=list)
    history: list = field(default_factory=list)
    input_error: object = 0
    given_value_error_bounds: np.ndarray | None = None
    given_vector_error_bounds: np.ndarray | None = None
    resumed: dict | None = None


@dataclass
class Kept:
    """What the result needs of a checked basis (see :func:`keep`)."""

    basis: FixedMatrix  # tier 1: a copy of the returned columns; tier 2: the basis
    take: np.ndarray  # the returned columns of ``basis``
    cols: np.ndarray  # their indices in the checked basis
    x_bits: int
    R_cols: np.ndarray  # their block of G - I
    s_diag: list
    g_diag: list
    s_exp: int
    g_exp: int
    order: np.ndarray
    vb: np.ndarray  # bounds for A as given
    vec: np.ndarray
    true_vb: np.ndarray  # with the input_error (equal to the above without one)
    true_vec: np.ndarray
    groups: list


def keep(ref, X, x_bits, pr, bnd) -> Kept:
    """What the result needs of a checked basis, so that its products (and for tier 1 the basis) can go:
    the returned columns (tier 1: a copy of the top k), their block of ``G - I``, the exact diagonals of S
    and G, the bounds for A and, with an ``input_error``, for A_true (Weyl on the values; the vectors see
    the error in their residuals and in the gaps to the widened enclosures)."""
    order, vb, vec, groups = bnd
    cols = order if ref.tier == 2 else order[: ref.k]
    true_vb, true_vec = vb, vec
    if ref.input_error:
        true_vb = theorems.weyl(-vb, vb, ref.input_error)[1] * _NORM_SAFETY
        gdiag = 1.0 + np.diag(pr.R)
        true_vec = vector_bounds(ref, pr, order, true_vb, 1.0 / np.sqrt(gdiag), float(np.min(gdiag)),
                                       extra=ref.input_error)
    basis, take = (X, cols) if ref.tier == 2 else (X.take_columns(cols), np.arange(len(cols)))
    return Kept(basis, take, cols, x_bits, pr.R[np.ix_(cols, cols)], pr.s_diag, pr.g_diag, pr.s_exp, pr.g_exp,
                 order, vb, vec, true_vb, true_vec, groups)


def _orthonormalised(ref, Y, R, x_bits):
    """Columns ``Y`` (with ``R = YᵀY - I`` in float64), orthonormalised when R is off zero by more than the
    target (e.g. a cluster rotated last, orthogonal only to 2**-53): ``Y ← Y (I + K)`` with ``I + K`` the
    series of ``G^{-1/2}`` to ``R⁴`` (float64, R tiny) applied as an exact fixed-point product. Returns the
    columns and how far each normalised column moved (added to its vector bound; a column inside its
    group's invariant subspace stays inside it)."""
    R = R.copy()
    np.fill_diagonal(R, 0.0)  # the diagonal is removed by the normalisation
    if float(np.max(np.abs(R), initial=0.0)) <= _DIAGONAL_ENOUGH * ref.target:
        return Y, np.zeros(Y.shape[1])
    R2 = R @ R
    K = -R / 2 + 3 * R2 / 8 - 5 * (R2 @ R) / 16 + 35 * (R2 @ R2) / 128
    # ‖x̂' - x̂‖ ≤ 2 ‖K e‖ (1 + ω) for the normalised columns
    moved = 2.5 * np.linalg.norm(K, axis=0)
    top = float(np.max(np.abs(K)))
    Kf = FixedMatrix.from_float64(K, bits=x_bits + 40 + _exp_of(top), digit_bits=Y.digit_bits)
    YK = ozaki.matmul(Y, Kf, grid=-(x_bits + 32))
    Z = Y + YK
    del YK
    return _exact(Z.rounded(Z.exponent + x_bits + 32)), moved


def build_result(ref, kept, iterations, bits_used):
    n = ref.n
    unit_exp = ref.unit_exp  # normalised unit
    x_bits, order, groups = kept.x_bits, kept.order, kept.groups
    out_prec = max(x_bits, ref.a_bits) + _OUT_GUARD_BITS
    values = np.empty(n, dtype=object)
    bounds = np.empty(n, dtype=object)
    given_vb, given_vec = kept.vb, kept.vec
    vb, vec = kept.true_vb, kept.true_vec
    given_bounds = np.empty(n, dtype=object)
    for pos, i in enumerate(order):
        s, g = kept.s_diag[i], kept.g_diag[i]
        # θ = (s 2**s_exp) / (g 2**g_exp) in normalised units
        tup = ratio_to_mpf_tuple(s, g, out_prec)
        values[pos] = mpmath.mp.make_mpf(libmp.mpf_shift(tup, kept.s_exp - kept.g_exp + unit_exp))
        # the rounding of the quotient to out_prec bits is covered by the 2**-100 |θ| in the bounds
        bounds[pos] = mpmath.mp.make_mpf(libmp.mpf_shift(libmp.from_float(float(vb[i])), unit_exp))
        given_bounds[pos] = (bounds[pos] if given_vb is vb else
                             mpmath.mp.make_mpf(libmp.mpf_shift(libmp.from_float(float(given_vb[i])), unit_exp)))
    cols = kept.cols
    Y = kept.basis.take_columns(kept.take)
    kept.basis = None  # tier 2: the whole basis, one copy at a time
    Xc, moved = _orthonormalised(ref, Y, kept.R_cols, x_bits)
    del Y
    vectors = np.empty((n, len(cols)), dtype=object)
    t_bits = x_bits + 16
    g_cols, g_exp = ozaki.column_dots(Xc, Xc)
    vec_out = np.empty(len(cols))
    given_vec_out = np.empty(len(cols))
    chunk = max(1, helpers._CHUNK_ENTRIES // n)  # columns read out to Python integers at a time
    for c, j in enumerate(cols):
        if c % chunk == 0:
            ints, x_exp = Xc.take_columns(slice(c, c + chunk)).to_integers()
        g = int(g_cols[c])  # ‖x_j‖² = g 2**g_exp, x = ints 2**x_exp with g_exp = 2 x_exp
        root = math.isqrt(g << (2 * t_bits))  # ≈ ‖x_j‖ 2**(-x_exp + t_bits)
        col = [_round_div(int(v) << (2 * t_bits), root) for v in ints[:, c % chunk]]
        big = max(range(n), key=lambda i: (abs(col[i]), -i))
        sign = -1 if col[big] < 0 else 1
        for i in range(n):
            vectors[i, c] = mpmath.mp.make_mpf(libmp.from_man_exp(sign * col[i], -t_bits))
        # rounding of the normalisation: ≤ (1 + √n) 2**-(t_bits-1) in norm
        rounding = float(moved[c]) + (1 + math.sqrt(n)) * 2.0 ** -(t_bits - 1)
        vec_out[c] = float(vec[j]) + rounding
        given_vec_out[c] = float(given_vec[j]) + rounding
    clusters = [(s, t) for s, t in groups if t - s > 1]
    return RefinedEigensystem(
        values=values,
        vectors=vectors,
        value_error_bounds=bounds,
        vector_error_bounds=vec_out,
        iterations=iterations,
        precision_bits_used=bits_used,
        clusters=clusters,
        history=ref.history,
        input_error=mpmath.mp.make_mpf(libmp.mpf_shift(libmp.from_float(ref.input_error), unit_exp)),
        given_value_error_bounds=given_bounds,
        given_vector_error_bounds=given_vec_out,
    )
