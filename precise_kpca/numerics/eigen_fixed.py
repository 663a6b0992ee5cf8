"""Reading mpf matrices into exact fixed point (``FixedMatrix``) for the eigen refinement.

A real matrix ``M`` is read as integers ``Z`` with ``M ≈ Z * 2**exp2`` (one rounding per entry, the rule of
:func:`precise_kpca.arith.dyadic.fixed_point_integers`), then cut into Ozaki digit slices through bytes, so the
per-entry Python work is one shift and one ``int.to_bytes`` (:mod:`precise_kpca.arith.integer_digits`, which
:meth:`FixedMatrix.from_integers <precise_kpca.arith.fixed.FixedMatrix.from_integers>` uses too). Integer
matrices too large to exist at once are written row block by row block into one digit array
(:func:`integer_rows_to_fixed`).
"""
from __future__ import annotations

import numpy as np
from mpmath import libmp

from ..arith.dyadic import fixed_point_integers
from ..arith.integer_digits import balanced_digits, least_exponent


def ratio_to_mpf_tuple(num: int, den: int, prec: int):
    """The ``_mpf_`` tuple of ``num / den`` correctly rounded to ``prec`` bits."""
    return libmp.from_rational(int(num), int(den), prec, libmp.round_nearest)


def mpf_matrix_to_fixed(A: np.ndarray, bits: int | None):
    """An mpf matrix rounded to ``bits`` bits below its largest entry, as a ``FixedMatrix``.

    Parameters
    ----------
    A : ndarray of mpmath mpf, shape (N, M)
        Entries are read from their exact ``_mpf_`` tuples.
    bits : int or None
        Bits kept below the largest entry's leading bit; ``None`` keeps the finest bit any entry carries,
        up to the largest mantissa length plus 8 bits.

    Returns
    -------
    F : FixedMatrix
        Exactly ``Z * 2**-bits`` (units ``2**(exp2 + bits)``, about ``max |A|``); exponent 1 (``|Z| <= 2**bits``).
    exp2 : int
    bits : int
    """
    tuples = [getattr(x, "_mpf_", None) for x in A.ravel()]
    if any(t is None for t in tuples):
        raise ValueError("refine_eigensystem needs a matrix of mpmath mpf entries")
    if any(t[1] == 0 and t[3] != 0 for t in tuples):
        raise ValueError("the matrix has nan or infinite entries")
    nonzero = [t for t in tuples if t[1]]
    if not nonzero:
        bits = 1
        return _fixed_from_int_stream([0] * len(tuples), A.shape[0], A.shape[1], -bits, 1, None), 0, bits
    if bits is None:
        top = max(t[2] + t[3] for t in nonzero)
        finest = min(t[2] for t in nonzero)
        bits = min(top - finest, max(t[3] for t in nonzero) + 8)
    ints, e0 = fixed_point_integers(A, bits)
    F = _fixed_from_int_stream(ints, A.shape[0], A.shape[1], -bits, 1, None)
    return F, e0, bits


def integer_rows_to_fixed(row_blocks, nrows: int, ncols: int, exp2: int, max_abs: int, *,
                          digit_bits: int | None = None):
    """``FixedMatrix`` holding exactly ``Z * 2**exp2`` for integers ``Z`` given row block by row block.

    Parameters
    ----------
    row_blocks : iterable of (slice, list of int)
        Row ranges covering ``range(nrows)`` and their entries, row-major; each block is written into the digits
        and can then go, so the integers of the whole matrix never exist at once.
    nrows, ncols, exp2 : int
    max_abs : int
        ``max |Z|`` (or a bound on it: the exponent is the least for the bound).
    digit_bits : int, optional
        Default ``digit_bits_for(max(nrows, ncols))``.
    """
    from ..arith.fixed import FixedMatrix, digit_bits_for

    e = least_exponent(abs(int(max_abs)), exp2)
    b = digit_bits_for(max(nrows, ncols)) if digit_bits is None else int(digit_bits)
    L = -(-(e - exp2) // b)
    digits = np.empty((L, nrows, ncols))
    covered = 0
    for rows, ints in row_blocks:
        count = (rows.stop - rows.start) * ncols
        digits[:, rows] = balanced_digits(ints, count, exp2, e, b).reshape(L, -1, ncols)
        covered += rows.stop - rows.start
    if covered != nrows:
        raise ValueError(f"the row blocks cover {covered} of {nrows} rows")
    return FixedMatrix(digits, e, b)


def _fixed_from_int_stream(ints, nrows, ncols, exp2, e, digit_bits):
    """FixedMatrix of exponent ``e`` holding ``Z * 2**exp2`` (caller guarantees ``|Z 2**exp2| <= 2**(e-1)``)."""
    from ..arith.fixed import FixedMatrix, digit_bits_for

    b = digit_bits_for(max(nrows, ncols)) if digit_bits is None else int(digit_bits)
    return FixedMatrix(balanced_digits(ints, nrows * ncols, exp2, e, b).reshape(-1, nrows, ncols), e, b)
