"""Balanced digit slices of Python integers, cut out of their bytes: how :meth:`.fixed.FixedMatrix.from_integers`
and the fixed-point readers of :mod:`precise_kpca.numerics.eigen_fixed` build their digits.

Each integer (offset to be non-negative) is written once with ``int.to_bytes``; the ``b``-bit fields are then cut
out of 64-bit limbs and balanced with NumPy, so the per-entry Python work is one shift, one addition and one
``to_bytes`` (about 3× faster than object-array arithmetic at N = 1000).

The carries (:func:`normalize`, :func:`to_levels`): int64 levels of digits, e.g. sums of exact slice products or
of digits re-gridded to another width, carried into balanced float64 digits, least significant level first.
"""
from __future__ import annotations

import numpy as np

from ..errors import InternalCheckFailed


def max_abs(ints) -> int:
    """``max |Z|`` of a list of integers (0 for none): the longest entry is the largest or the smallest, so two
    comparison passes replace a bit length each."""
    if not ints:
        return 0
    return max(abs(int(max(ints))), abs(int(min(ints))))


def least_exponent(top: int, exp2: int) -> int:
    """The least ``e`` with ``top * 2**exp2 <= 2**(e-1)``: the exponent of a fixed-point matrix of ``max |Z| = top``."""
    return exp2 + (top - 1).bit_length() + 1 if top else exp2 + 1


def balanced_digits(ints, count, exp2, e, b) -> np.ndarray:
    """Balanced ``b``-bit digits, shape ``(L, count)``, of ``Z * 2**exp2`` in a FixedMatrix of exponent ``e``."""
    L = -(-(e - exp2) // b)
    total_bits = b * L  # value = (Z * 2**pre) * 2**(e - b L)
    pre = total_bits - (e - exp2)
    offset = 1 << (total_bits + 1)  # Z' = Z 2**pre + offset >= 0, fits total_bits + 2 bits
    nbytes = -(-(total_bits + 2) // 64) * 8
    raw = b"".join(((int(v) << pre) + offset).to_bytes(nbytes, "little") for v in ints)
    if len(raw) != count * nbytes:
        raise ValueError(f"expected {count} integers, got {len(raw) // nbytes}")
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
        raise InternalCheckFailed("the leading digit overflows: |value| exceeds 2**(e-1)")
    digits[0] = lead
    return digits


# -- carry normalisation of int64 levels into balanced digits --------------------------------------------------------
def split_low(v: np.ndarray, b: int) -> np.ndarray:
    """Balanced low digit of int64 ``v`` in [-2**(b-1), 2**(b-1)); ``v`` becomes the carry (in place)."""
    half = 1 << (b - 1)
    r = v + half
    np.bitwise_and(r, (1 << b) - 1, out=r)
    r -= half
    v -= r
    np.right_shift(v, b, out=v)
    return r


def split_top(v: np.ndarray, b: int) -> np.ndarray:
    """Like :func:`split_low`, but a leading digit may also take +2**(b-1) (so 2**(e-1) needs no new digit)."""
    half = 1 << (b - 1)
    at_half = v == half  # the one value that fits the digit but not [-2**(b-1), 2**(b-1))
    r = split_low(v, b)
    np.putmask(r, at_half, half)
    np.putmask(v, at_half, 0)
    return r


def _finish_top(top: np.ndarray, b: int) -> list[np.ndarray]:
    """Leading digits (most significant first) absorbing the carry ``top``; empty if it is zero."""
    prefix = []
    while top.any():
        prefix.append(split_top(top, b))
    return prefix[::-1]


def normalize(levels: np.ndarray, b: int) -> tuple[np.ndarray, int]:
    """Balanced float64 digits of ``Σ_k levels[k] 2**(-b k)`` and the number of leading digits prepended because
    the carry out of level 0 was nonzero.

    The digits overwrite the int64 levels' memory (same item size): no second array of the full size.
    """
    out = levels.view(np.float64)
    carry = np.zeros(levels.shape[1:], dtype=np.int64)
    for k in range(levels.shape[0] - 1, 0, -1):
        v = levels[k]
        v += carry
        r = split_low(v, b)
        np.copyto(carry, v)
        out[k] = r
    v = levels[0]
    v += carry
    r = split_top(v, b)
    prefix = _finish_top(v.copy(), b) if v.any() else []
    out[0] = r
    if prefix:
        out = np.concatenate([np.stack(prefix).astype(np.float64), out])
    return out, len(prefix)


def to_levels(digits, b, e, *, b_dst, e_dst, n_dst, grid=None) -> tuple[np.ndarray, bool]:
    """int64 levels in units ``2**(e_dst - b_dst (j+1))`` of the value ``(digits, b, e)`` rounded to the grid
    ``2**grid`` (nearest, ties toward +∞; default grid: the last level's unit, exact there).

    Returns the levels (not yet carried) and whether anything was rounded away. The caller guarantees that the
    value fits ``n_dst`` digits below ``e_dst``; source digits above ``e_dst`` are folded into level 0 with
    wrapping int64 shifts, correct because only the (small) total of that level matters.
    """
    base = e_dst - b_dst * n_dst
    grid = base if grid is None else grid
    if grid < base:
        raise ValueError(f"grid 2**{grid} is finer than the last digit's unit 2**{base}")
    levels = np.zeros((n_dst,) + digits.shape[1:], dtype=np.int64)
    inexact = False
    tail = None  # floor-carry of the digits below the grid; their remainders lie in [0, 2**b)
    for l in range(digits.shape[0] - 1, -1, -1):
        p = e - b * (l + 1) - grid  # digit l's unit is 2**p grid units
        if p >= 0:
            p += grid - base
            j, s = n_dst - 1 - p // b_dst, p % b_dst
            if j < 0:
                j, s = 0, p - b_dst * (n_dst - 1)
            if s < 64:
                d = digits[l].astype(np.int64)
                np.left_shift(d, s, out=d)
                levels[j] += d
            continue
        v = digits[l].astype(np.int64)
        if tail is not None:
            v += tail
        if p + b < 0 and l > 0:  # digit l-1 lies below the grid too
            inexact = inexact or bool(np.any(v & ((1 << b) - 1)))
            tail = np.right_shift(v, b, out=v)
            continue
        # the most significant digit reaching below the grid: round(v 2**p + lower part in [0, 2**p))
        s = -p
        inexact = inexact or bool(np.any(v & ((1 << min(s, 63)) - 1))) or s >= 63 and bool(np.any(v))
        if s < 63:
            v += 1 << (s - 1)
            np.right_shift(v, s, out=v)
            np.left_shift(v, grid - base, out=v)
            levels[-1] += v
        tail = None
    return levels, inexact
