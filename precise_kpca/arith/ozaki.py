"""Exact high-precision matrix products on float64 BLAS (Ozaki scheme I) of :class:`~.fixed.FixedMatrix` operands.

A product of two fixed-point matrices is a sum of exact slice GEMMs: with ``b <= digit_bits_for(inner)`` the float64
GEMM of two digit slices is exact (every partial sum is an integer of magnitude at most ``inner * 2**(2b-2) <=
2**53``, whatever the summation order or FMA use of the BLAS); wider digits (up to ``chunked_digit_bits(inner)``)
split the inner dimension into chunks for which that holds and sum the chunks' GEMMs in int64. The GEMMs of one
level ``l + m`` are summed in int64 and carried into balanced digits, least significant level first.

Guarantees. ``matmul(a, b)`` and ``column_dots`` are exact; ``matmul(..., bits=p)`` rounds to nearest on a stated
grid (ties toward +∞) and skips slice products whose total is below a quarter of that grid, with the error
accumulated in :attr:`~.fixed.FixedMatrix.error_bound`. Exact products keep the exponent within one digit of the
least; ``matmul(..., bits=p)`` chooses it to the bit.

Threads: slice GEMMs below ``2**25`` multiply-adds run on one BLAS thread (scoped with threadpoolctl); larger ones
use the caller's BLAS setting.

API: :func:`matmul`, :func:`matmul_transpose_self`, :func:`column_dots`.
"""
from __future__ import annotations

import contextlib
from fractions import Fraction

import numpy as np
from threadpoolctl import ThreadpoolController

from .fixed import FixedMatrix, _check_bits, _pow2, chunked_digit_bits, digit_bits_for
from .integer_digits import normalize, split_low, split_top, to_levels
from .rounding import float_up

_STACK_BYTES = 1 << 26  # thin products whose slice GEMM results all fit in this many bytes do them side by side
_THIN = 64  # at most this many columns of b (rows of a) make a product thin
_SMALL_GEMM = 1 << 25  # slice GEMMs with fewer multiply-adds run on one BLAS thread
_controller = None


# -- products -----------------------------------------------------------------------------------------------
def _common_width(widths: tuple[int, int], totals: tuple[int, int], inner: int) -> int:
    """The digit width of a product: the narrower operand's, at most ``chunked_digit_bits(inner)``, and narrow
    enough that a level's int64 sum of at most ``min(La, Lb)`` slice products (``inner 2**(2b-2)`` each, for
    ``L = ceil(total bits / b)`` digits) stays below ``2**62``."""
    bd = min(*widths, chunked_digit_bits(inner))
    while bd > digit_bits_for(inner) and (min(-(-t // bd) for t in totals) + 1) * inner << (2 * bd - 2) >= 1 << 62:
        bd -= 1
    return bd


def _chunk(inner: int, bd: int) -> int:
    """The longest inner-dimension chunk whose slice GEMMs of ``bd``-bit digits are exact: c 2**(2(bd-1)) <= 2**53."""
    return min(inner, 1 << (53 - 2 * (bd - 1)))


def _common_split(a: FixedMatrix, b: FixedMatrix, inner: int) -> tuple[FixedMatrix, FixedMatrix, int]:
    bd = _common_width((a.digit_bits, b.digit_bits), (a.digit_bits * a.n_digits, b.digit_bits * b.n_digits), inner)
    return a.with_digit_bits(bd), b.with_digit_bits(bd), bd


class _SliceProducts:
    """The exact slice GEMMs ``A[l] @ B[m]`` of a product, delivered level by level (``l + m == k``).

    Digits wider than ``digit_bits_for(inner)`` split the inner dimension into chunks of ``chunk`` (each chunk's
    GEMM exact in float64) whose results are summed in int64. Thin products (few columns of ``B`` or few rows of
    ``A``, unchunked) compute all GEMMs first, as one GEMM per slice of the wide operand against the side-by-side
    slices of the thin one, so the wide operand is read once instead of once per slice of the thin one.
    Symmetric products ``aᵀa`` compute one GEMM per pair ``l <= m`` and add it with its transpose for the pair
    ``(m, l)``.
    """

    def __init__(self, A: np.ndarray, B: np.ndarray, kmax: int, symmetric: bool, chunk: int):
        self.A, self.B, self.symmetric = A, B, symmetric
        La, Lb = A.shape[0], B.shape[0]
        n, inner, m = A.shape[1], A.shape[2], B.shape[2]
        count = -(-inner // chunk)  # equal chunks: no short last GEMM
        self.chunks = [slice(inner * c // count, inner * (c + 1) // count) for c in range(count)]
        self.cache = {}
        self.buf = None
        if len(self.chunks) > 1 or symmetric or La * Lb * n * m * 8 > _STACK_BYTES or min(n, m) > _THIN:
            return
        if m <= n:
            side_by_side = np.ascontiguousarray(B.transpose(1, 0, 2)).reshape(inner, Lb * m)
            for l in range(min(La, kmax + 1)):
                w = min(Lb, kmax - l + 1)
                g = A[l] @ side_by_side[:, : w * m]
                self.cache.update({(l, j): g[:, j * m : (j + 1) * m] for j in range(w)})
        else:
            stacked = np.ascontiguousarray(A).reshape(La * n, inner)
            for j in range(min(Lb, kmax + 1)):
                h = min(La, kmax - j + 1)
                g = stacked[: h * n] @ B[j]
                self.cache.update({(l, j): g[l * n : (l + 1) * n] for l in range(h)})

    def add(self, l: int, m: int, acc: np.ndarray, both: bool = False) -> None:
        """acc += A[l] @ B[m] (and its transpose if ``both``), exactly: int64, every chunk's GEMM entry an
        integer of magnitude <= 2**53."""
        g = self.cache.pop((l, m), None)
        for part in [g] if g is not None else (self._gemm(l, m, c) for c in self.chunks):
            np.add(acc, part, out=acc, dtype=np.int64, casting="unsafe")
            if both:
                np.add(acc, part.T, out=acc, dtype=np.int64, casting="unsafe")

    def _gemm(self, l: int, m: int, c: slice) -> np.ndarray:
        """A[l] @ B[m] over the inner chunk c, into a reused buffer."""
        if self.buf is None:
            self.buf = np.empty((self.A.shape[1], self.B.shape[2]))
        return np.matmul(self.A[l][:, c], self.B[m][c], out=self.buf)

    def add_level(self, k: int, acc: np.ndarray) -> None:
        """acc += Σ_{l+m=k} A[l] @ B[m] (int64)."""
        La, Lb = self.A.shape[0], self.B.shape[0]
        for l in range(max(0, k - Lb + 1), min(La, k + 1)):
            m = k - l
            if self.symmetric and l > m:
                continue
            self.add(l, m, acc, both=self.symmetric and l < m)


def _one_thread_if_small(work: int):
    """Single-threaded BLAS for small slice GEMMs (scoped): there, starting and synchronising BLAS threads costs
    more than it saves, and on a shared machine spinning threads cost far more."""
    global _controller
    if work >= _SMALL_GEMM:
        return contextlib.nullcontext()
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")


def _product_digits(slices: _SliceProducts, b: int, base: int, kmax: int, grid: int | None = None):
    """Balanced digits and exponent of ``2**base Σ_{l+m<=kmax} A[l] @ B[m] 2**(-b(l+m))``, leading zero digits
    dropped, and whether a nonzero remainder was left out (see ``grid``).

    One int64 accumulator is filled level by level, least significant first; once a level is complete its low
    digit is split off and the rest is the carry into the next level.

    ``grid``: the value is only wanted rounded to nearest on ``2**grid`` (ties upward). Levels below the last one
    whose unit is at most ``2**(grid-1)`` are then carried by floor division and not kept: the value is the kept
    digits plus a remainder in ``[0, u)``, ``u`` the last kept unit, and since the kept digits and every rounding
    threshold ``(j + ½) 2**grid`` are multiples of ``u``, that remainder cannot change the rounding.
    """
    A, B = slices.A, slices.B
    La, Lb, inner = A.shape[0], B.shape[0], A.shape[2]
    n, m = A.shape[1], B.shape[2]
    # leading digits above level 0: |value| <= inner 2**(2b-2) Σ_l 2**(-bl) Σ_m 2**(-bm) level-0 units must
    # stay within the range 2**(b(t+1)-1) of t digits above level 0 plus the digits below
    bound = (inner << (2 * b - 2)) * _geometric(b, La) * _geometric(b, Lb)
    t = 1
    while bound > 1 << (b * (t + 1) - 1):
        t += 1
    # level k's digit has unit 2**(base - b k): keep levels up to the first whose unit is at most 2**(grid-1)
    keep = kmax if grid is None else min(kmax, max(0, -(-(base - grid + 1) // b)))
    out = np.empty((keep + 1 + t, n, m))
    acc = np.zeros((n, m), dtype=np.int64)
    left_out = False
    for k in range(kmax, -1, -1):
        slices.add_level(k, acc)
        if k > keep:
            left_out = left_out or bool(np.any(np.bitwise_and(acc, (1 << b) - 1)))
            np.right_shift(acc, b, out=acc)
        else:
            out[k + t] = split_low(acc, b)
    for i in range(t - 1, 0, -1):
        out[i] = split_low(acc, b)
    out[0] = split_top(acc, b)
    if acc.any():
        raise RuntimeError("internal error: carry out of the product's leading digit despite the bound")
    # digit i has unit 2**(base - b(i - t)) = 2**(e - b(i+1))
    e = base + b * (t + 1)
    lead = 0
    while lead < out.shape[0] - 1 and not out[lead].any():
        lead += 1
    return out[lead:], e - b * lead, left_out


def _propagated(a: FixedMatrix, b: FixedMatrix, inner: int) -> Fraction:
    """Bound on the product's error inherited from the operands' error bounds."""
    da, db = Fraction(a.error_bound), Fraction(b.error_bound)
    if not da and not db:
        return Fraction(0)
    ma, mb = Fraction(a.max_abs_bound()), Fraction(b.max_abs_bound())
    return inner * (ma * db + da * mb + da * db)


def matmul(a: FixedMatrix, b: FixedMatrix, *, bits: int | None = None, grid: int | None = None) -> FixedMatrix:
    """The product ``a @ b``: exact, or rounded to a grid with a rigorous error bound.

    Parameters
    ----------
    a : FixedMatrix, shape (n, k)
    b : FixedMatrix, shape (k, m)
    bits : int, optional
        ``None`` (and no ``grid``): the exact product (``La + Lb - 1`` levels of digits, plus carries).
        Otherwise the result's exponent ``E`` is the least with ``B + ¾ 2**(E-bits) <= 2**(E-1)``, ``B`` an
        exact bound on ``max |a @ b|`` from the leading slice product; slice GEMMs of the levels whose total
        contribution is below ``¼ 2**(E-bits)`` are skipped, and the sum of the others is rounded to the grid
        ``2**(E-bits)`` (nearest, ties toward +∞).
    grid : int, optional
        Instead of ``bits``: round to the absolute grid ``2**grid``, ``E`` the least with
        ``B + ¾ 2**grid <= 2**(E-1)``. Column panels of one product computed on one grid hold the entries of the
        whole product rounded on it (their exponents may differ).

    Returns
    -------
    FixedMatrix, shape (n, m)
        ``error_bound`` = inherited error ``k (|a| δb + δa |b| + δa δb)`` + skipped terms' bound + half the grid
        if the rounding was inexact: at most ``¾`` of the grid plus the inherited part.

    Notes
    -----
    Both operands are first re-split (exactly) to the common digit width ``min(their widths,
    chunked_digit_bits(k))`` (narrower if a level's int64 sum could reach ``2**62``). Each slice product is one
    float64 GEMM, or for digits wider than ``digit_bits_for(k)`` one per chunk of the inner dimension, exact by
    that width.
    """
    if not isinstance(a, FixedMatrix) or not isinstance(b, FixedMatrix):
        raise ValueError(f"matmul needs two FixedMatrix operands, got {type(a).__name__} and {type(b).__name__}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: a has shape {a.shape} and b has shape {b.shape}: inner dimensions differ")
    if bits is not None and grid is not None:
        raise ValueError("matmul: give bits or grid, not both")
    if bits is not None:
        bits = _check_bits(bits)
    if grid is not None:
        if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)):
            raise ValueError(f"grid must be an integer, got {grid!r}")
        grid = int(grid)
    inner = a.shape[1]
    inherited = _propagated(a, b, inner)
    symmetric = _is_transpose_of(a, b)
    if symmetric:  # re-split once, and keep the two operands views of one array
        total = b.digit_bits * b.n_digits
        b = b.with_digit_bits(_common_width((b.digit_bits, b.digit_bits), (total, total), inner))
        a, bd = b.T, b.digit_bits
    else:
        a, b, bd = _common_split(a, b, inner)
    with _one_thread_if_small(a.shape[0] * inner * b.shape[1]):
        return _matmul(a, b, bd, bits, grid, symmetric, inherited)


def _matmul(a: FixedMatrix, b: FixedMatrix, bd: int, bits: int | None, grid: int | None, symmetric: bool,
            inherited: Fraction):
    """:func:`matmul` on validated operands already re-split to the common digit width ``bd``."""
    inner = a.shape[1]
    A, B = a.digits, b.digits
    La, Lb = A.shape[0], B.shape[0]
    base = a.exponent + b.exponent - 2 * bd  # unit of the level-0 slice product A[0] @ B[0]
    chunk = _chunk(inner, bd)
    if bits is None and grid is None:
        kmax = La + Lb - 2
        digits, e, _ = _product_digits(_SliceProducts(A, B, kmax, symmetric, chunk), bd, base, kmax)
        return FixedMatrix(digits, e, bd, float_up(inherited))
    p0 = np.zeros((A.shape[1], B.shape[2]), dtype=np.int64)
    _SliceProducts(A, B, 0, False, chunk).add(0, 0, p0)
    gemm_bound = inner << (2 * bd - 2)  # |entries of one slice GEMM|
    # every pair (l, m) != (0, 0) adds at most gemm_bound 2**(-bd(l+m)) units of 2**base
    others = _geometric(bd, La) * _geometric(bd, Lb) - 1
    bound = (Fraction(int(np.max(np.abs(p0), initial=0))) + gemm_bound * others) * _pow2(base)
    if grid is None:
        E = _result_exponent(bound, bits)
        grid = E - bits
    else:
        E = _exponent_on_grid(bound, grid)
        bits = E - grid
    # skip the least significant levels while their total stays within a quarter of the grid
    kmax, skipped = La + Lb - 2, Fraction(0)
    while kmax > 0:
        more = skipped + _pairs_at(kmax, La, Lb) * gemm_bound * _pow2(base - bd * kmax)
        if more > _pow2(grid - 2):
            break
        kmax, skipped = kmax - 1, more
    slices = _SliceProducts(A, B, kmax, symmetric, chunk)
    slices.cache.setdefault((0, 0), p0)
    del p0
    digits, e, left_out = _product_digits(slices, bd, base, kmax, grid)
    del slices
    n = -(-bits // bd)
    levels, inexact = to_levels(digits, bd, e, b_dst=bd, e_dst=E, n_dst=n, grid=grid)
    inexact = inexact or left_out
    del digits
    out, prefix = normalize(levels, bd)
    error = inherited + skipped + (_pow2(grid - 1) if inexact else 0)
    return FixedMatrix(out, E + bd * prefix, bd, float_up(error))


def _is_transpose_of(a: FixedMatrix, b: FixedMatrix) -> bool:
    """Whether ``a`` is ``b.T`` over the same memory (then ``a @ b`` is symmetric: half the slice GEMMs)."""
    da, db = a.digits, b.digits.transpose(0, 2, 1)
    return (
        a.exponent == b.exponent
        and a.digit_bits == b.digit_bits
        and da.shape == db.shape
        and da.strides == db.strides
        and da.__array_interface__["data"][0] == db.__array_interface__["data"][0]
    )


def matmul_transpose_self(a: FixedMatrix, *, bits: int | None = None) -> FixedMatrix:
    """``aᵀa`` (shape (m, m) for ``a`` of shape (n, m)); same as ``matmul(a.T, a, bits=bits)``, which also
    recognises the pair and computes only the slice GEMMs ``l <= m``."""
    return matmul(a.T, a, bits=bits)


def _geometric(b: int, n: int) -> Fraction:
    """Σ_{l<n} 2**(-b l)."""
    return (1 - _pow2(-b * n)) / (1 - _pow2(-b))


def _pairs_at(k: int, La: int, Lb: int) -> int:
    """Number of digit pairs (l, m), l < La, m < Lb, with l + m == k."""
    return max(0, min(La - 1, k) - max(0, k - Lb + 1) + 1)


def _result_exponent(bound: Fraction, bits: int) -> int:
    """The least E with bound + ¾ 2**(E-bits) <= 2**(E-1)."""
    if bound == 0:
        return 0
    E = bound.numerator.bit_length() - bound.denominator.bit_length()  # 2**(E-1) <= 2 bound... start low
    while bound + Fraction(3, 4) * _pow2(E - bits) > _pow2(E - 1):
        E += 1
    return E


def _exponent_on_grid(bound: Fraction, grid: int) -> int:
    """The least E > grid with bound + ¾ 2**grid <= 2**(E-1)."""
    total = bound + Fraction(3, 4) * _pow2(grid)
    E = max(grid + 1, total.numerator.bit_length() - total.denominator.bit_length())
    while total > _pow2(E - 1):
        E += 1
    return E


def column_dots(a: FixedMatrix, b: FixedMatrix) -> tuple[np.ndarray, int]:
    """Exact ``diag(aᵀ b)``: for each column j, ``Σ_i a[i, j] b[i, j]``.

    Parameters
    ----------
    a, b : FixedMatrix, shape (n, m)

    Returns
    -------
    ints : ndarray of Python int (object), shape (m,)
    exp2 : int
        ``diag(aᵀ b) == ints * 2**exp2`` exactly.
    """
    if a.shape != b.shape:
        raise ValueError(f"column_dots: a has shape {a.shape} and b has shape {b.shape}; they must be equal")
    n, m = a.shape
    a, b, bd = _common_split(a, b, n)
    La, Lb = a.n_digits, b.n_digits
    levels = np.zeros((La + Lb - 1, m), dtype=np.int64)
    chunk = _chunk(n, bd)
    for l in range(La):
        for k in range(Lb):
            for c in range(0, n, chunk):
                # products exact, partial sums integers <= chunk 2**(2bd-2) <= 2**53: exact in any order
                rows = slice(c, c + chunk)
                levels[l + k] += np.einsum("ij,ij->j", a.digits[l][rows], b.digits[k][rows]).astype(np.int64)
    acc = np.zeros(m, dtype=object)
    for row in levels:
        acc = acc * (1 << bd) + row.astype(object)
    return acc, a.exponent + b.exponent - 2 * bd - bd * (La + Lb - 2)
