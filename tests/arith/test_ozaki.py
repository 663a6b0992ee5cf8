"""Exactness and error bounds of the Ozaki-scheme fixed-point matrices against Python-integer references."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.arith import fixed, ozaki
from precise_kpca.arith.fixed import FixedMatrix, chunked_digit_bits, digit_bits_for
from precise_kpca.arith.ozaki import column_dots, matmul, matmul_transpose_self

FAST = settings(max_examples=30, deadline=None)


def scaled_ints(m: FixedMatrix, exp2: int) -> np.ndarray:
    """The exact value of ``m`` as Python ints in units of ``2**exp2`` (which must divide every entry)."""
    ints, e = m.to_integers()
    assert e >= exp2
    return ints * (1 << (e - exp2))


def fractions(m: FixedMatrix) -> np.ndarray:
    ints, e = m.to_integers()
    return ints * Fraction(2) ** e


def same_value(m: FixedMatrix, ints: np.ndarray, exp2: int) -> bool:
    low = min(m.ulp_exp2, exp2)
    return bool(np.all(scaled_ints(m, low) == ints * (1 << (exp2 - low))))


def max_error(c: FixedMatrix, ints: np.ndarray, exp2: int) -> Fraction:
    """max |c - ints 2**exp2| exactly."""
    low = min(c.ulp_exp2, exp2)
    diff = scaled_ints(c, low) - ints * (1 << (exp2 - low))
    return max((abs(int(v)) for v in diff.ravel()), default=0) * Fraction(2) ** low


def round_half_up(x: Fraction, grid_exp2: int) -> Fraction:
    g = Fraction(2) ** grid_exp2
    return math.floor(x / g + Fraction(1, 2)) * g


@st.composite
def int_matrices(draw, shape, max_bits=300):
    """Python-int matrices mixing zeros, small and huge entries of both signs."""
    rows, cols = shape
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    bits = draw(st.integers(1, max_bits))
    kind = draw(st.sampled_from(["uniform", "magnitudes", "sparse", "extreme"]))
    out = np.empty(shape, dtype=object)
    for i in range(rows):
        for j in range(cols):
            width = bits if kind != "magnitudes" else int(rng.integers(0, bits + 1))
            v = int.from_bytes(rng.bytes(width // 8 + 1), "little") % (1 << width) if width else 0
            if kind == "sparse" and rng.random() < 0.7:
                v = 0
            if kind == "extreme":
                v = (1 << bits) - 1 if rng.random() < 0.5 else 1 << (bits - 1)
            out[i, j] = -v if rng.random() < 0.5 else v
    return out


@st.composite
def product_case(draw):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 6))
    k = draw(st.sampled_from([1, 2, 3, 17, 128, 129, 300]))
    a = draw(int_matrices((n, k)))
    b = draw(int_matrices((k, m)))
    ea = draw(st.integers(-150, 150))  # products stay within float64's range (error bounds are float64)
    eb = draw(st.integers(-150, 150))
    da = draw(st.one_of(st.none(), st.integers(2, 27)))
    db = draw(st.one_of(st.none(), st.integers(2, 27)))
    return a, ea, da, b, eb, db


def _operands(case):
    """The two fixed-point operands of a product case and their exact product (Fractions)."""
    a_int, ea, da, b_int, eb, db = case
    a = FixedMatrix.from_integers(a_int, ea, digit_bits=da)
    b = FixedMatrix.from_integers(b_int, eb, digit_bits=db)
    return a, b, a_int.dot(b_int) * Fraction(2) ** (ea + eb)


def test_digit_bits_rule():
    for inner in [1, 2, 127, 128, 129, 200, 1000, 5404, 2**20]:
        b = digit_bits_for(inner)
        assert inner * 2 ** (2 * (b - 1)) <= 2**53 or b == 1
        assert b == 27 or inner * 2 ** (2 * b) > 2**53
    assert (digit_bits_for(200), digit_bits_for(5404)) == (23, 21)
    with pytest.raises(ValueError, match="exceeds 2\\*\\*53"):
        digit_bits_for(2**53 + 1)


@FAST
@given(product_case())
def test_matmul_exact(case):
    a_int, ea, da, b_int, eb, db = case
    a = FixedMatrix.from_integers(a_int, ea, digit_bits=da)
    b = FixedMatrix.from_integers(b_int, eb, digit_bits=db)
    assert same_value(a, a_int, ea) and same_value(b, b_int, eb)
    c = matmul(a, b)
    assert c.shape == (a_int.shape[0], b_int.shape[1])
    assert c.error_bound == 0.0
    assert np.max(np.abs(c.digits)) <= 2.0 ** (c.digit_bits - 1)
    assert same_value(c, a_int.dot(b_int), ea + eb)
    # transposed operands are views with Fortran-ordered slices
    assert same_value(matmul(b.T, a.T), a_int.dot(b_int).T, ea + eb)
    assert same_value(matmul(b.T, b), b_int.T.dot(b_int), 2 * eb)  # the symmetric schedule


@pytest.mark.parametrize("sign", ["positive", "alternating"])
def test_matmul_exact_at_the_digit_width_limit(sign):
    # inner 128 allows 24-bit digits: every slice GEMM entry reaches exactly 2**53 with maximal digits
    k, b = 128, 24
    assert digit_bits_for(k) == b
    top = 2.0 ** (b - 1)
    da = np.full((3, 4, k), top)
    db = np.full((3, k, 5), top)
    if sign == "alternating":
        da[1] *= -1
        db[:, ::2, :] *= -1
        db[:, :, 1] = -top
    a = FixedMatrix(da, 0, b)
    b_ = FixedMatrix(db, 0, b)
    a_int, ea = a.to_integers()
    b_int, eb = b_.to_integers()
    assert same_value(matmul(a, b_), a_int.dot(b_int), ea + eb)
    # 27-bit digits are too wide for inner 128: both operands are re-split exactly first
    wide = FixedMatrix.from_integers(a_int, ea, digit_bits=27)
    assert same_value(matmul(wide, b_), a_int.dot(b_int), ea + eb)


@pytest.mark.parametrize("width", [22, 27])
def test_wide_digits_chunk_the_inner_dimension(width):
    # inner 4100 > 2048: 22-bit digits (wider ones re-split to 22) on chunks of at most 2048, every chunk's slice
    # products of near-maximal digits close to 2**53, summed in int64: still exact, also symmetric and column dots
    k = 4100
    assert chunked_digit_bits(k) == 22 and digit_bits_for(k) == 21
    rng = np.random.default_rng(width)
    top = 2.0 ** (width - 1)
    # near-maximal digits with full significands: a chunk longer than 2048 would round in float64
    da = top - rng.integers(0, 1000, (3, 5, k))
    db = top - rng.integers(0, 1000, (3, k, 4))
    da[1, :, ::3] *= -1
    db[2, 1::2] *= -1
    a, b = FixedMatrix(da, 0, width), FixedMatrix(db, 0, width)
    (ai, ea), (bi, eb) = a.to_integers(), b.to_integers()
    assert same_value(matmul(a, b), ai.dot(bi), ea + eb)
    assert same_value(matmul(b.T, b), bi.T.dot(bi), 2 * eb)
    c = matmul(a, b, grid=ea + eb + 30)
    assert max_error(c, ai.dot(bi), ea + eb) <= c.error_bound
    ints, exp2 = column_dots(b, b)
    assert all(int(v) * Fraction(2) ** exp2 == sum(x * x for x in bi[:, j]) * Fraction(2) ** (2 * eb)
               for j, v in enumerate(ints))


@pytest.mark.parametrize("thin", [0, 64])
@pytest.mark.parametrize("bits", [None, 70])
def test_matmul_slice_schedules_agree(monkeypatch, thin, bits):
    # thin=0 forces one GEMM per slice pair; 64 lets thin products stack slices side by side (either operand)
    monkeypatch.setattr(ozaki, "_THIN", thin)
    rng = np.random.default_rng(2)
    X = FixedMatrix.from_float64(rng.normal(size=(70, 5)) * np.exp2(rng.integers(-20, 20, (70, 5))), bits=100)
    W = FixedMatrix.from_float64(rng.normal(size=(70, 70)), bits=80)
    (ix, ex), (iw, ew) = X.to_integers(), W.to_integers()
    cases = [(W, X, iw.dot(ix), ew + ex), (X.T, W, ix.T.dot(iw), ex + ew), (X.T, X, ix.T.dot(ix), 2 * ex),
             (W.T, W, iw.T.dot(iw), 2 * ew)]
    for a, b, ints, exp2 in cases:
        c = matmul(a, b, bits=bits)
        err = max_error(c, ints, exp2)
        assert err <= c.error_bound and (bits is not None or err == 0)
    assert ozaki._is_transpose_of(W.T, W) and not ozaki._is_transpose_of(W, W)
    g, _ = matmul_transpose_self(X, bits=bits).to_integers()
    assert np.all(g == g.T)


@FAST
@given(product_case(), st.integers(1, 200))
def test_matmul_truncated_within_bound(case, bits):
    a, b, exact = _operands(case)
    c = matmul(a, b, bits=bits)
    err = max((abs(x) for x in (fractions(c) - exact).ravel()), default=0)
    grid = Fraction(2) ** (c.exponent - bits)
    assert err <= c.error_bound
    assert c.error_bound <= Fraction(3, 4) * grid
    assert c.n_digits == -(-bits // c.digit_bits)
    assert all(x / grid == int(x / grid) for x in fractions(c).ravel())  # on the stated grid
    top = max((abs(x) for x in exact.ravel()), default=0)
    assert top <= Fraction(2) ** (c.exponent - 1)


def test_matmul_truncated_is_tight_and_skips_work():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(40, 300))
    B = rng.normal(size=(300, 7))
    a = FixedMatrix.from_float64(A, bits=160)
    b = FixedMatrix.from_float64(B, bits=160)
    exact = fractions(a).dot(fractions(b))
    c = matmul(a, b, bits=60)
    top = max(abs(x) for x in exact.ravel())
    assert Fraction(2) ** (c.exponent - 3) < top <= Fraction(2) ** (c.exponent - 1)  # exponent within 2 bits
    err = max(abs(x) for x in (fractions(c) - exact).ravel())
    assert err <= c.error_bound <= 0.75 * 2.0 ** (c.exponent - 60)
    assert err > 0.25 * 2.0 ** (c.exponent - 60)  # a real rounding happened: the bound is not vacuous


@FAST
@given(product_case(), st.integers(-400, 300))
def test_matmul_on_a_grid_within_bound(case, grid):
    a, b, exact = _operands(case)
    c = matmul(a, b, grid=grid)
    g = Fraction(2) ** grid
    err = max((abs(x) for x in (fractions(c) - exact).ravel()), default=0)
    assert err <= c.error_bound <= Fraction(3, 4) * g
    assert all(x / g == int(x / g) for x in fractions(c).ravel())  # on the absolute grid
    if c.error_bound <= g / 2:  # no slice product skipped: the exact product rounded to nearest (ties up)
        assert all(v == round_half_up(x, grid) for v, x in zip(fractions(c).ravel(), exact.ravel()))
    assert max((abs(x) for x in exact.ravel()), default=0) <= Fraction(2) ** (c.exponent - 1)


@pytest.mark.parametrize("seed", range(4))
def test_matmul_on_a_grid_rounds_exactly_with_low_levels_left_out(seed):
    # two 10-bit digits per operand: grids just above the last product level leave it out (floor-carried)
    # without skipping it, and the result must still be the exact product rounded to nearest, ties up
    rng = np.random.default_rng(seed)
    a_int = np.array([[int(v) for v in row] for row in rng.integers(-2**19, 2**19, (4, 3))], dtype=object)
    b_int = np.array([[int(v) for v in row] for row in rng.integers(-2**19, 2**19, (3, 5))], dtype=object)
    a_int[0, 0] = b_int[0, 0] = 2**19 - 1  # ties and full-width digits
    a = FixedMatrix.from_integers(a_int, -20, digit_bits=10)
    b = FixedMatrix.from_integers(b_int, -20, digit_bits=10)
    exact = a_int.dot(b_int) * Fraction(2) ** -40
    base = a.exponent + b.exponent - 20
    checked = 0
    for grid in range(base - 12, base + 3):
        c = matmul(a, b, grid=grid)
        if c.error_bound <= Fraction(2) ** (grid - 1):
            checked += 1
            assert all(v == round_half_up(x, grid) for v, x in zip(fractions(c).ravel(), exact.ravel()))
    assert checked >= 5


def test_matmul_column_panels_on_one_grid_agree():
    # panels of a product on one absolute grid hold the whole product's entries (the refinement's panels)
    rng = np.random.default_rng(4)
    a = FixedMatrix.from_float64(rng.normal(size=(50, 80)), bits=120)
    # columns of very different sizes: the panels' own exponents differ, their grid does not
    b = FixedMatrix.from_float64(rng.normal(size=(80, 30)) * np.exp2(-np.arange(30) * 3.0), bits=150)
    whole = fractions(matmul(a, b, grid=-90))
    for cols in (slice(0, 7), slice(7, 20), slice(20, 30)):
        part = matmul(a, FixedMatrix(b.digits[:, :, cols], b.exponent, b.digit_bits), grid=-90)
        assert np.all(fractions(part) == whole[:, cols])
    with pytest.raises(ValueError, match="bits or grid"):
        matmul(a, b, bits=10, grid=-90)


def test_rounded_to_a_given_exponent():
    rng = np.random.default_rng(6)
    x = FixedMatrix.from_float64(rng.normal(size=(6, 5)) * 0.2, bits=90)
    y = x.rounded(40, exponent=x.exponent + 3)  # the grid 2**(exponent + 3 - 40), held with a larger exponent
    assert y.exponent == x.exponent + 3 and y.n_digits == -(-40 // y.digit_bits)
    g = Fraction(2) ** (x.exponent + 3 - 40)
    assert all(v == round_half_up(u, x.exponent + 3 - 40) for v, u in zip(fractions(y).ravel(), fractions(x).ravel()))
    assert y.error_bound <= x.error_bound + g / 2
    with pytest.raises(ValueError, match="does not fit"):
        (x.scaled2(8)).rounded(40, exponent=x.exponent)


def test_to_double_word():
    rng = np.random.default_rng(9)
    x = FixedMatrix.from_float64(rng.normal(size=(7, 6)) * np.exp2(rng.integers(-60, 0, (7, 6))), bits=200)
    hi, lo = x.to_double_word()
    assert np.array_equal(hi, x.to_float64())
    exact = fractions(x)
    for h, l, v in zip(hi.ravel(), lo.ravel(), exact.ravel()):
        assert abs(Fraction(h) + Fraction(l) - v) <= 3 * x.n_digits**2 * Fraction(2) ** -106 * abs(v)
        assert abs(l) <= abs(h) * 2.0**-52


@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_from_words_row_blocks(monkeypatch, block):
    # from_words works by row blocks (bounded memory at N = 5404): every blocking gives the same matrix
    rng = np.random.default_rng(8)
    hi = rng.normal(size=(9, 7)) * np.exp2(rng.integers(-40, 4, (9, 7)))
    lo = hi * 2.0**-53 * rng.uniform(-1, 1, (9, 7))
    whole = FixedMatrix.from_words([hi, lo], bits=100)
    monkeypatch.setattr(fixed, "_BLOCK_ENTRIES", block)
    part = FixedMatrix.from_words([hi, lo], bits=100)
    assert part.exponent == whole.exponent and part.error_bound == whole.error_bound
    assert np.array_equal(part.digits, whole.digits)


@FAST
@given(
    st.lists(st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False), min_size=1, max_size=12),
    st.integers(1, 120),
    st.integers(1, 27),
)
def test_from_float64_rounds_to_nearest_on_the_grid(values, bits, digit_bits):
    a = np.array(values).reshape(1, -1)
    m = FixedMatrix.from_float64(a, bits=bits, digit_bits=digit_bits)
    top = float(np.max(np.abs(a)))
    if top:
        assert top <= 2.0 ** (m.exponent - 1) and (top > 2.0 ** (m.exponent - 2))
    got = fractions(m)[0]
    errors = [abs(g - Fraction(v)) for g, v in zip(got, values)]
    for g, v in zip(got, values):
        assert g == round_half_up(Fraction(v), m.exponent - bits)
    assert m.error_bound == float(max(errors))
    assert np.max(np.abs(m.digits)) <= 2.0 ** (digit_bits - 1)


def test_from_float64_exact_and_round_trip():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(9, 5)) * np.exp2(rng.integers(-40, 40, size=(9, 5)))
    A[0, 0] = 0.0
    A[1, 1] = -(2.0**40)  # the largest entry a negative power of two
    m = FixedMatrix.from_float64(A, bits=40 + 40 + 60)
    assert m.error_bound == 0.0
    assert m.exponent == 41
    assert np.array_equal(m.to_float64(), A)
    assert np.all(fractions(m) == np.vectorize(Fraction, otypes=[object])(A))


@FAST
@given(st.integers(1, 150), st.integers(2, 27), st.integers(0, 2**32 - 1))
def test_rounded(bits, digit_bits, seed):
    rng = np.random.default_rng(seed)
    a_int = np.array([[int(x) for x in row] for row in rng.integers(-(2**62), 2**62, size=(3, 4))], dtype=object)
    a_int = a_int * a_int * a_int  # ~186-bit entries
    a_int[0, 0] = 0
    a_int[1, 0] = -(1 << 185) - (1 << 120)  # ties below the grid at many widths
    m = FixedMatrix.from_integers(a_int, -100, digit_bits=digit_bits)
    r = m.rounded(bits)
    assert r.exponent == m.exponent
    exact = fractions(m)
    got = fractions(r)
    for g, x in zip(got.ravel(), exact.ravel()):
        assert g == round_half_up(x, m.exponent - bits)
    err = max(abs(g - x) for g, x in zip(got.ravel(), exact.ravel()))
    assert err <= r.error_bound <= 2.0 ** (m.exponent - bits - 1)


def neighbours(x: Fraction) -> tuple[float, float]:
    f = float(x)
    return (f, math.nextafter(f, math.inf)) if Fraction(f) <= x else (math.nextafter(f, -math.inf), f)


@FAST
@given(product_case())
def test_to_float64_faithful_and_words(case):
    a_int, ea, da, b_int, eb, db = case
    c = matmul(FixedMatrix.from_integers(a_int, ea % 200 - 100, digit_bits=da),
               FixedMatrix.from_integers(b_int, eb % 200 - 100, digit_bits=db))
    exact = fractions(c)
    f = c.to_float64()
    for x, y in zip(exact.ravel(), f.ravel()):
        assert float(y) in neighbours(x)
    for count in (2, 3):
        words = c.to_words(count)
        total = sum((np.vectorize(Fraction, otypes=[object])(w) for w in words))
        for x, y in zip(exact.ravel(), total.ravel()):
            assert abs(x - y) <= abs(x) * Fraction(2) ** (-52 * count)


def test_to_float64_nearest_on_generic_data():
    rng = np.random.default_rng(7)
    a = FixedMatrix.from_float64(rng.normal(size=(30, 200)), bits=120)
    b = FixedMatrix.from_float64(rng.normal(size=(200, 30)), bits=120)
    c = matmul(a, b)
    for x, y in zip(fractions(c).ravel(), c.to_float64().ravel()):
        assert float(y) == float(x)  # Python's float(Fraction) is correctly rounded


def _random_words(seed: int, count: int, shift: int) -> list:
    """``count`` 4×5 float64 words, each 2^-shift…2^-59 of the one before with random signs (entry (0, 0) zero)."""
    rng = np.random.default_rng(seed)
    hi = rng.normal(size=(4, 5)) * np.exp2(rng.integers(-20, 20, size=(4, 5)))
    words = [hi]
    for _ in range(count - 1):
        words.append(words[-1] * 2.0 ** -rng.integers(shift, 60) * rng.choice([-1.0, 1.0], size=hi.shape))
    words[0][0, 0] = 0.0
    return words


@FAST
@given(st.integers(1, 3), st.integers(1, 160), st.integers(2, 27), st.integers(0, 2**32 - 1))
def test_from_words_rounds_the_exact_sum(count, bits, digit_bits, seed):
    words = _random_words(seed, count, 40)
    if count > 1:  # an exact tie of the grid, broken by the lower words in either direction or not at all
        words[0][1, 1] = 1.5 * 2.0**-60
        words[1][1, 1] = 0.0
    m = FixedMatrix.from_words(words, bits=bits, digit_bits=digit_bits)
    exact = sum(np.vectorize(Fraction, otypes=[object])(w) for w in words)
    for g, x in zip(fractions(m).ravel(), exact.ravel()):
        assert g == round_half_up(x, m.exponent - bits)
    assert max(abs(x) for x in exact.ravel()) <= Fraction(2) ** (m.exponent - 1)


@FAST
@given(st.integers(1, 3), st.integers(1, 7), st.integers(2, 27), st.integers(0, 2**32 - 1),
       st.sampled_from([1, 3, 1 << 20]))
def test_from_words_apart_rounds_each_word(count, digits, digit_bits, seed, block):
    # each word rounded to nearest (ties up) on the grid of the digits kept, apart: the matrix is that sum exactly,
    # its error_bound at least every entry's error and at most half a grid per word, whatever the row blocks
    words = _random_words(seed, count, 1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fixed, "_BLOCK_ENTRIES", block)
        m = FixedMatrix.from_words_apart(words, digits=digits, digit_bits=digit_bits)
    grid = m.exponent - digits * digit_bits
    exact = sum(np.vectorize(Fraction, otypes=[object])(w) for w in words)
    rounded = sum(np.vectorize(lambda x: round_half_up(Fraction(x), grid), otypes=[object])(w) for w in words)
    got = fractions(m)
    assert all(g == r for g, r in zip(got.ravel(), rounded.ravel()))
    assert max(abs(g - x) for g, x in zip(got.ravel(), exact.ravel())) <= Fraction(m.error_bound)
    assert Fraction(m.error_bound) <= count * Fraction(2) ** (grid - 1)
    assert max(sum(abs(Fraction(w[i, j])) for w in words) for i in range(4) for j in range(5)) \
        <= Fraction(2) ** (m.exponent - 1) * (1 + Fraction(1, 2**50))


@pytest.mark.parametrize("count", [2, 3])
def test_from_words_sum_just_below_a_tie(count):
    # hi's and lo's parts below the guard grid u (one digit below the grid) are u/2 and (1/2 - 2**-54) u: their
    # float sum rounds to exactly u, the exact sum is below it, and the total lies just below a rounding tie
    b, bits = 10, 20
    grid = 2.0 ** (1 - bits)
    u = grid * 2.0**-b
    K = math.floor(0.75 / grid)
    hi = (K * 2**b + 2 ** (b - 1) - 1) * u + u / 2
    lo = (0.5 - 2.0**-54) * u
    words = [np.array([[hi]]), np.array([[lo]])] + [np.zeros((1, 1))] * (count - 2)
    m = FixedMatrix.from_words(words, bits=bits, digit_bits=b)
    assert m.exponent == 1
    assert fractions(m)[0, 0] == K * Fraction(grid) == round_half_up(Fraction(hi) + Fraction(lo), 1 - bits)


def test_to_float64_nearest_just_above_midpoints():
    # 2**k (1 + 2**-53 + 2**-80): a float64 midpoint plus a little, which a plain float sum rounds down
    for k in (0, -7, 30):
        for sign in (1, -1):
            ints = np.array([[sign * ((1 << 80) + (1 << 27) + 1)]], dtype=object)
            m = FixedMatrix.from_integers(ints, k - 80, digit_bits=20)
            exact = Fraction(int(ints[0, 0])) * Fraction(2) ** (k - 80)
            assert m.to_float64()[0, 0] == float(exact)


def test_from_words_double_word_round_trip():
    rng = np.random.default_rng(11)
    a = FixedMatrix.from_float64(rng.normal(size=(6, 6)), bits=60)
    c = matmul(a, a.T)
    for count in (2, 3):
        back = FixedMatrix.from_words(c.to_words(count), bits=150)
        assert np.all(fractions(back) == fractions(c)) or count == 2
    back = FixedMatrix.from_words(c.to_words(3), bits=150)
    assert back.error_bound == 0.0 and np.all(fractions(back) == fractions(c))


@FAST
@given(product_case())
def test_add_sub_neg_transpose_scale(case):
    a_int, ea, da, b_int, eb, db = case
    k = a_int.shape[1]
    other = b_int[:, :1].T.repeat(a_int.shape[0], axis=0)[:, :k] if b_int.shape[0] == k else a_int
    a = FixedMatrix.from_integers(a_int, ea, digit_bits=da)
    b = FixedMatrix.from_integers(other, eb, digit_bits=db)
    fa, fb = fractions(a), fractions(b)
    assert np.all(fractions(a + b) == fa + fb)
    assert np.all(fractions(a - b) == fa - fb)
    assert np.all(fractions(-a) == -fa)
    assert np.all(fractions(a.T) == fa.T)
    assert np.all(fractions(a.scaled2(-37)) == fa * Fraction(2) ** -37)
    assert np.all(fractions(a.take_columns([0, -1])) == fa[:, [0, -1]])
    assert np.all(fractions(a.with_digit_bits(2)) == fa)
    zero = a - a
    assert np.all(fractions(zero) == 0) and zero.max_abs_bound() <= 2.0 ** (zero.exponent - 2 * zero.digit_bits)
    bound = a.max_abs_bound()
    top = max(abs(x) for x in fa.ravel())
    assert top <= bound <= math.nextafter(float(top + Fraction(2) ** (a.exponent - 2 * a.digit_bits + 1)), math.inf)


@pytest.mark.parametrize("b", [2, 5, 21])
def test_extreme_digits_survive_every_operation(b):
    # all digits +2**(b-1): the largest value the digits hold, above 2**(exponent-1); rounding it up needs a
    # carry into a new leading digit
    top = 2.0 ** (b - 1)
    digits = np.full((4, 2, 3), top)
    digits[:, 1, :] *= -1
    m = FixedMatrix(digits, 3, b)
    exact = fractions(m)
    for bits in range(1, 4 * b + 1):
        r = m.rounded(bits)
        assert np.max(np.abs(r.digits)) <= top
        for g, x in zip(fractions(r).ravel(), exact.ravel()):
            assert g == round_half_up(x, m.exponent - bits)
    assert np.all(fractions(m.with_digit_bits(max(1, b - 3))) == exact)
    assert np.all(fractions(m + m) == 2 * exact)
    ints, exp2 = m.to_integers()
    assert np.all(fractions(FixedMatrix.from_integers(ints, exp2, digit_bits=b)) == exact)
    words = m.to_words(3)
    assert np.all(sum(np.vectorize(Fraction, otypes=[object])(w) for w in words) == exact)


@FAST
@given(st.integers(1, 300), st.integers(1, 5), st.integers(2, 27), st.integers(0, 2**32 - 1))
def test_column_dots_exact(n, m, digit_bits, seed):
    rng = np.random.default_rng(seed)
    a = FixedMatrix.from_float64(rng.normal(size=(n, m)) * np.exp2(rng.integers(-30, 30, (n, m))), bits=200,
                                 digit_bits=digit_bits)
    b = FixedMatrix.from_float64(-rng.normal(size=(n, m)), bits=90, digit_bits=27)
    ints, exp2 = column_dots(a, b)
    fa, fb = fractions(a), fractions(b)
    for j in range(m):
        assert Fraction(int(ints[j])) * Fraction(2) ** exp2 == sum(fa[:, j] * fb[:, j])


def test_error_bounds_propagate_through_products():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(20, 30))
    B = rng.normal(size=(30, 4))
    a = FixedMatrix.from_float64(A, bits=20)  # rounds: error_bound > 0
    b = FixedMatrix.from_float64(B, bits=25)
    assert a.error_bound > 0 and b.error_bound > 0
    ideal = np.vectorize(Fraction, otypes=[object])(A).dot(np.vectorize(Fraction, otypes=[object])(B))
    for c in (matmul(a, b), matmul(a, b, bits=30), (a @ b).rounded(12)):
        err = max(abs(x) for x in (fractions(c) - ideal).ravel())
        assert err <= c.error_bound


def test_errors_name_the_shapes():
    a = FixedMatrix.from_float64(np.ones((3, 4)), bits=10)
    b = FixedMatrix.from_float64(np.ones((5, 2)), bits=10)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(5, 2\)"):
        matmul(a, b)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(5, 2\)"):
        column_dots(a, b)
    with pytest.raises(ValueError, match=r"\(3, 4\) and \(5, 2\)"):
        a + b
    with pytest.raises(ValueError, match="bits"):
        matmul(a, a.T, bits=0)
    with pytest.raises(ValueError, match="digit_bits"):
        FixedMatrix.from_float64(np.ones((2, 2)), bits=10, digit_bits=28)
    with pytest.raises(ValueError, match="nan or infinite"):
        FixedMatrix.from_float64(np.array([[np.nan]]), bits=10)
    with pytest.raises(ValueError, match=r"different shapes"):
        FixedMatrix.from_words([np.ones((2, 2)), np.ones((2, 3))], bits=10)


@FAST
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 10), st.integers(2, 27), st.integers(-300, 300),
       st.integers(0, 52), st.integers(0, 2**32 - 1))
def test_from_digit_sums_carries_exactly(n, m, count, b, exponent, width, seed):
    rng = np.random.default_rng(seed)
    digits = rng.integers(-(2**width), 2**width, size=(count, n, m), endpoint=False).astype(np.float64)
    a = FixedMatrix.from_digit_sums(digits, exponent, b)
    exact = [sum(int(digits[l, i, j]) * Fraction(2) ** (exponent - b * (l + 1)) for l in range(count))
             for i in range(n) for j in range(m)]
    assert list(fractions(a).ravel()) == exact
    assert np.all(np.abs(a.digits) <= 2 ** (b - 1)) and np.array_equal(a.digits, np.round(a.digits))
    lead = (a.exponent - exponent) // b
    assert a.exponent == exponent + b * lead and a.n_digits == count + lead and a.error_bound == 0
    if max(abs(v) for v in exact) <= Fraction(2) ** (exponent - 1):  # fits: no leading digit prepended
        assert lead == 0


@pytest.mark.parametrize("digits", [np.zeros((2, 2)), np.full((1, 2, 2), 0.5), np.full((1, 1, 1), 2.0**52)])
def test_from_digit_sums_rejects_what_it_cannot_carry(digits):
    with pytest.raises(ValueError, match="digits"):
        FixedMatrix.from_digit_sums(digits, 0, 20)
