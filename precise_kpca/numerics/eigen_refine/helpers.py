"""Small exact and chunked helpers of the eigen refinement: exact fixed-point operands, float and integer
conversions without overflow, and the row chunks that keep the N×N float64 work in bounded memory."""
from __future__ import annotations

import math

import numpy as np

from ...arith.fixed import FixedMatrix

_CHUNK_ENTRIES = 1 << 21  # entries of one row chunk of the N×N float64 work in bounds and corrections


def _exact(F: FixedMatrix) -> FixedMatrix:
    """The same value with ``error_bound`` 0: a rounded matrix taken as the exact operand it now is."""
    return FixedMatrix(F.digits, F.exponent, F.digit_bits, 0.0)


def _exp_of(x: float) -> int:
    """The least e with x <= 2**(e-1) (x > 0)."""
    f, t = math.frexp(x)
    return t if f == 0.5 else t + 1


def _row_chunks(n_rows: int, n_cols: int) -> list[slice]:
    """Row slices of about ``_CHUNK_ENTRIES`` entries (float64 temporaries of 16 MB)."""
    step = max(1, _CHUNK_ENTRIES // max(1, n_cols))
    return [slice(i, min(n_rows, i + step)) for i in range(0, n_rows, step)]


def _scaled_rows(M: np.ndarray, c: np.ndarray, rows, cols=None) -> np.ndarray:
    """Rows ``rows`` (a slice or indices) of ``c M c`` (columns ``cols``, default all), zero on M's diagonal.

    ``rows`` and ``cols`` index the same positions: with ``cols`` given, the diagonal entries are those where
    ``rows[r] == cols[k]``.
    """
    r_idx = np.arange(M.shape[0])[rows]
    if cols is None:
        out = M[rows] * c[r_idx, None] * c[None, :]
        out[np.arange(len(r_idx)), r_idx] = 0.0
        return out
    out = M[np.ix_(r_idx, cols)] * c[r_idx, None] * c[None, cols]
    out[r_idx[:, None] == np.asarray(cols)[None, :]] = 0.0
    return out


def _symmetrise_words(hi: np.ndarray, lo: np.ndarray) -> None:
    """In place: ``(hi, lo)`` ← ``(H + Hᵀ)/2`` for ``H = hi + lo`` as a double word, exactly symmetric.

    ``hi`` becomes ``fl(hi + hiᵀ)/2`` (what ``(S + S.T) / 2`` gives), ``lo`` the TwoSum error of that sum plus
    ``(lo + loᵀ)``, halved (one rounding of the low word: about 2**-105 relative). Block pairs ``(I, J)``,
    ``(J, I)`` are read together before either is written.
    """
    n = hi.shape[0]
    step = max(1, int(math.isqrt(_CHUNK_ENTRIES)))
    for i in range(0, n, step):
        I = slice(i, min(n, i + step))
        for j in range(i, n, step):
            J = slice(j, min(n, j + step))
            a, b = hi[I, J], hi[J, I].T
            s = a + b
            bb = s - a
            low = ((a - (s - bb)) + (b - bb) + (lo[I, J] + lo[J, I].T)) / 2
            s /= 2
            hi[I, J], hi[J, I] = s, s.T
            lo[I, J], lo[J, I] = low, low.T


def _abs_matvec(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``|M| @ v`` by row chunks (no N×N ``|M|``)."""
    out = np.empty(M.shape[0])
    for I in _row_chunks(M.shape[0], M.shape[1]):
        out[I] = np.abs(M[I]) @ v
    return out


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


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
