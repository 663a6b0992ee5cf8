"""Error-free transformations of float64 arrays (Dekker's TwoProduct with Veltkamp's splitting, TwoSum chains):
float results whose exact sum is the exact result."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's TwoProduct, elementwise: ``a·b = hi + lo`` exactly, ``hi = fl(a·b)``.

    Exact barring underflow (then ``|error| <= 2**-1071`` per entry); needs ``|a|, |b| < 2**995`` so that
    Veltkamp's splitting does not overflow.
    """
    hi = a * b
    a1, a2 = veltkamp(a)
    b1, b2 = veltkamp(b)
    lo = ((a1 * b1 - hi) + a1 * b2 + a2 * b1) + a2 * b2
    return hi, lo


def veltkamp(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a = hi + lo exactly with hi, lo of at most 26 significant bits each."""
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def floor_of_sum(rests: list[np.ndarray]) -> np.ndarray:
    """Exact ``floor(Σ rests)`` (int64) for float64 arrays with small entries.

    A ``TwoSum`` chain gives ``Σ rests = s + Σ q`` exactly with ``s`` the float sum; ``floor(s)`` is the answer
    unless ``s`` lies within ``Σ|q|`` of an integer (for an integer ``s`` with a single error term, its sign
    decides). The remaining entries are summed as exact fractions.
    """
    s = rests[0].copy()
    qs = []
    for r in rests[1:]:
        t = s + r
        bv = t - s
        qs.append((s - (t - bv)) + (r - bv))
        s = t
    result = np.floor(s)
    if not qs:
        return result.astype(np.int64)
    if len(qs) == 1:
        # one error term, |q| <= ulp(s)/2: a non-integer s is at least ulp(s) from every integer
        result -= (s == result) & (qs[0] < 0)
        return result.astype(np.int64)
    q_abs = np.zeros(s.shape)
    for q in qs:
        q_abs += np.abs(q)
    q_abs *= 1 + len(qs) * 2.0**-50
    dist = np.minimum(s - result, result + 1 - s)
    ambiguous = (q_abs > 0) & (dist <= q_abs)
    for index in zip(*np.nonzero(ambiguous)):
        exact = sum((Fraction(float(r[index])) for r in rests), Fraction(0))
        result[index] = math.floor(exact)
    return result.astype(np.int64)
