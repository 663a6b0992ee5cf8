"""Fixed-point integer matrices for exact high-precision products (python-flint ``fmpz_mat``).

A real matrix ``M`` is held as an integer matrix ``Z`` (``fmpz_mat``) with ``M == Z * 2**-scale``.
Products of such matrices are exact integer products (FLINT's multimodular matrix product), so the
only roundings in the eigen refinement are the explicit ones made here: :func:`round_shift` (a
round-to-nearest division by a power of two) and the float64 read-outs of small corrections.
Matrices stay ``fmpz_mat`` between iterations; Python integers are only touched entrywise where a
rounding shift or a float64 read-out is needed.
"""
from __future__ import annotations

import flint
import numpy as np
from mpmath import libmp

from ..backends.mp import fixed_point_integers

_FLOAT_MAX_BITS = 1000  # int -> float conversion overflows past 2**1024


def mpf_matrix_to_integers(A: np.ndarray, bits: int | None) -> tuple[list, int, int]:
    """Read an mpf matrix exactly and round it to a common binary fixed point.

    Parameters
    ----------
    A : ndarray of mpmath mpf, shape (N, N)
        Entries are read from their exact ``_mpf_`` (sign, mantissa, exponent, bit count) tuples.
    bits : int or None
        Bits kept below the largest entry's leading bit; ``None`` keeps the finest bit any entry carries
        below that leading bit, up to the largest mantissa length plus 8 bits.

    Returns
    -------
    ints : list of int
        Row-major integers ``Z`` with ``A ≈ Z * 2**exp2`` (round to nearest, ties away from zero).
    exp2 : int
    bits : int
        The number of bits actually used (``max |Z| < 2**bits``).
    """
    tuples = [getattr(x, "_mpf_", None) for x in A.ravel()]
    if any(t is None for t in tuples):
        raise ValueError("refine_eigensystem needs a matrix of mpmath mpf entries")
    if any(t[1] == 0 and t[3] != 0 for t in tuples):
        raise ValueError("the matrix has nan or infinite entries")
    nonzero = [t for t in tuples if t[1]]
    if not nonzero:
        return [0] * len(tuples), 0, 1
    top = max(t[2] + t[3] for t in nonzero)
    if bits is None:
        finest = min(t[2] for t in nonzero)
        bits = min(top - finest, max(t[3] for t in nonzero) + 8)
    ints, exp2 = fixed_point_integers(A, bits)
    return ints, exp2, bits


def to_fmpz_mat(ints, nrows: int, ncols: int) -> flint.fmpz_mat:
    """Build an ``fmpz_mat`` from a row-major sequence of integers."""
    return flint.fmpz_mat(nrows, ncols, list(ints))


def round_shift(entries, t: int) -> list:
    """Entrywise ``round(v / 2**t)`` (ties upward) of a list of fmpz/int; identity for ``t <= 0``."""
    if t <= 0:
        return list(entries) if t == 0 else [v << -t for v in entries]
    half = 1 << (t - 1)
    return [(v + half) >> t for v in entries]


def to_float_array(entries, scale: int, shape) -> np.ndarray:
    """float64 array of ``v * 2**-scale`` for integers ``v`` (each correctly rounded up to underflow).

    Integers longer than about 1000 bits are first shifted (their dropped bits lie below 2**-1000 of the
    largest entry, far below float64 resolution of the entries that matter).
    """
    longest = max((abs(int(v)).bit_length() for v in _extremes(entries)), default=0)
    t = max(0, longest - _FLOAT_MAX_BITS)
    if t:
        values = np.array([float(v >> t) for v in entries])
    else:
        values = np.array([float(v) for v in entries])
    return np.ldexp(values, t - scale).reshape(shape)


def _extremes(entries):
    # The longest entry is the largest or the smallest: two comparisons passes instead of a bit length each.
    if not entries:
        return []
    return [max(entries), min(entries)]


def float_to_integers(W: np.ndarray, scale: int) -> list:
    """Row-major integers ``round(W * 2**scale)``, exact for float64 input (via ``ldexp`` in pieces)."""
    out = np.ldexp(W, min(scale, 900)).ravel().tolist()
    rest = scale - min(scale, 900)
    if rest:
        return [int(v) << rest for v in out]
    return [int(round(v)) for v in out]


def ratio_to_mpf_tuple(num: int, den: int, prec: int):
    """The ``_mpf_`` tuple of ``num / den`` correctly rounded to ``prec`` bits."""
    return libmp.from_rational(int(num), int(den), prec, libmp.round_nearest)


def integers_to_fixed(ints, nrows: int, ncols: int, exp2: int, *, digit_bits: int | None = None):
    """``ozaki.FixedMatrix`` holding exactly ``Z * 2**exp2`` for row-major Python integers ``Z``.

    Same value and exponent as ``FixedMatrix.from_integers`` but built through bytes: each integer (offset
    to be non-negative) is written once with ``int.to_bytes``; the digit fields are then cut out of 64-bit
    limbs and balanced with NumPy, so the per-entry Python work is one addition and one ``to_bytes``
    (about 3× faster than object-array arithmetic for N = 1000).
    """
    ints = list(ints)
    if len(ints) != nrows * ncols:
        raise ValueError(f"{len(ints)} integers for a {nrows}×{ncols} matrix")
    top = max((abs(int(v)) for v in _extremes(ints)), default=0)
    # least e with max |value| <= 2**(e-1), as FixedMatrix.from_integers
    e = exp2 + (top - 1).bit_length() + 1 if top else exp2 + 1
    return _fixed_from_int_stream(ints, nrows, ncols, exp2, e, digit_bits)


def mpf_matrix_to_fixed(A: np.ndarray, bits: int | None):
    """:func:`mpf_matrix_to_integers` straight into an ``ozaki.FixedMatrix`` in one pass over the entries.

    Returns
    -------
    F : ozaki.FixedMatrix
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
    top = max(t[2] + t[3] for t in nonzero)
    if bits is None:
        finest = min(t[2] for t in nonzero)
        bits = min(top - finest, max(t[3] for t in nonzero) + 8)
    e0 = top - bits

    def rounded():  # as backends.mp.fixed_point_integers: nearest, ties away from zero
        for sign, man, exp, _ in tuples:
            if not man:
                yield 0
                continue
            k = exp - e0
            v = man << k if k >= 0 else (man + (1 << (-k - 1))) >> -k
            yield -int(v) if sign else int(v)

    F = _fixed_from_int_stream(rounded(), A.shape[0], A.shape[1], -bits, 1, None)
    return F, e0, bits


def _fixed_from_int_stream(ints, nrows, ncols, exp2, e, digit_bits):
    """FixedMatrix of exponent ``e`` holding ``Z * 2**exp2`` (caller guarantees ``|Z 2**exp2| <= 2**(e-1)``)."""
    from ..backends import ozaki

    count = nrows * ncols
    b = ozaki.digit_bits_for(max(nrows, ncols)) if digit_bits is None else int(digit_bits)
    L = -(-(e - exp2) // b)
    total_bits = b * L  # value = (Z * 2**pre) * 2**(e - b L)
    pre = total_bits - (e - exp2)
    offset = 1 << (total_bits + 1)  # Z' = Z 2**pre + offset >= 0, fits total_bits + 2 bits
    nbytes = -(-(total_bits + 2) // 64) * 8
    raw = b"".join(((int(v) << pre) + offset).to_bytes(nbytes, "little") for v in ints)
    if len(raw) != count * nbytes:
        raise ValueError(f"expected {count} integers for a {nrows}×{ncols} matrix")
    limbs = np.frombuffer(raw, dtype=np.uint64).reshape(count, nbytes // 8)
    limbs = np.concatenate([limbs, np.zeros((count, 1), dtype=np.uint64)], axis=1)
    mask = np.uint64((1 << b) - 1)
    # unsigned b-bit fields, least significant first; the offset occupies bit total_bits + 1 (two more fields)
    fields = []
    for l in range(L + 2):
        lo = b * l
        w, sh = divmod(lo, 64)
        v = limbs[:, w] >> np.uint64(sh)
        if sh + b > 64:
            v = v | (limbs[:, w + 1] << np.uint64(64 - sh))
        fields.append((v & mask).astype(np.int64))
    off_field, off_bit = divmod(total_bits + 1, b)
    fields[off_field] -= 1 << off_bit
    # balance from the least significant field up; the fields above the last digit (the sign after the
    # offset is removed) fold into the leading digit
    half = 1 << (b - 1)
    carry = np.zeros(count, dtype=np.int64)
    digits = np.empty((L, count))
    for l in range(L - 1):
        v = fields[l] + carry
        r = ((v + half) & ((1 << b) - 1)) - half
        digits[L - 1 - l] = r
        carry = (v - r) >> b
    lead = fields[L - 1] + carry + (fields[L] << b) + (fields[L + 1] << (2 * b))
    if np.any(np.abs(lead) > half):
        raise ArithmeticError("the leading digit overflows: |value| exceeds 2**(e-1)")
    digits[0] = lead
    return ozaki.FixedMatrix(digits.reshape(L, nrows, ncols), e, b)
