"""Balanced digit slices of Python integers, cut out of their bytes: how :meth:`.ozaki.FixedMatrix.from_integers`
and the fixed-point readers of :mod:`precise_kpca.numerics.eigen_fixed` build their digits.

Each integer (offset to be non-negative) is written once with ``int.to_bytes``; the ``b``-bit fields are then cut
out of 64-bit limbs and balanced with NumPy, so the per-entry Python work is one shift, one addition and one
``to_bytes`` (about 3× faster than object-array arithmetic at N = 1000).
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
