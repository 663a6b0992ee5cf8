"""Hypothesis strategies for data sets that stress the numerics.

* :func:`data_sets` — random data, sometimes with a far outlier, a near-duplicate or an exact duplicate row.
* :func:`hard_data_sets` — small data (N ≤ 12, d ≤ 6) from families chosen for what they break (see FAMILIES).
* :func:`sigma_exponents` — log2 σ from −4 to 100, weighted towards the regime boundaries.

Every hard data set is valid input (N ≥ 3, finite, median distance > 0); its entries are exact by construction
(integers, copies, sign flips and power-of-two multiples of floats), so a symmetry or a rank deficiency of the
real data is exact, not approximate.
"""
from __future__ import annotations

import math
from itertools import permutations

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

FAMILIES = {
    "symmetric": "a point set closed under coordinate permutations and sign flips: exact ties (a 3- or 4-cycle, or "
                 "swap + flip, acts on a plane by a rotation) in both the linear and the Gaussian spectra; "
                 "basis-dependent eigenvectors that must be refused, and groups holding a whole tie that must not",
    "polygon": "a regular n-gon (plus a centre or a second ring): the square is an exact tie, other n a near-tie "
               "of rounding size (a gap of ~1e-16 relative, resolvable at high precision, not a tie)",
    "one-hot": "tic-tac-toe-like rows (c cells × s states, one-hot) closed under permutations of the cells: "
               "integer 0/1 data, rank-deficient (each cell's block sums to 1), ties from the cell symmetry",
    "duplicates": "exact duplicate rows: zero distances beside the diagonal, repeated Gaussian eigenvalue 0",
    "wide": "N ≤ d + 1: rank(HX) = N − 1, the structured spectrum's rest block is empty (issue 19's crash)",
    "rank-deficient": "a column an exact power-of-two multiple of another (or, on integers, their sum): exact zero "
                      "linear eigenvalues inside the top min(N − 1, d), so k can exceed the rank",
    "outlier": "one row scaled by 1e6: ρ ~ 1e6, huge u at small σ, λ₁ ≫ the others (graded spectra)",
    "integer": "small integers: ties, duplicates and exact zeros by coincidence",
}

# (generators, group order, coordinates used); generators act on coordinates: ("swap", i, j), ("flip", j),
# ("cycle", c) = cyclic shift of the first c coordinates
_GROUPS = [
    ([("flip", 0)], 2, 1),
    ([("swap", 0, 1)], 2, 2),
    ([("cycle", 3)], 3, 3),  # a rotation by 120° of the plane ⊥ (1, 1, 1): a tie
    ([("cycle", 4)], 4, 4),
    ([("swap", 0, 1), ("flip", 0)], 8, 2),  # the square's dihedral group D4: a tie in the (x₀, x₁) plane
    ([("flip", 0), ("flip", 1)], 4, 2),  # abelian: aligned eigenvectors, no forced tie
]


@st.composite
def data_sets(draw, min_rows=3, max_rows=8, max_dim=4, allow_duplicates=True):
    """Random N×d float64 data, sometimes with a far outlier, a near-duplicate or an exact duplicate row."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(1, max_dim))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    twist = draw(st.sampled_from(["plain", "outlier", "near-duplicate"] + (["duplicate"] if allow_duplicates else [])))
    if twist == "outlier":
        X[-1] *= draw(st.sampled_from([1e2, 1e4, 1e6]))
    elif twist == "near-duplicate":
        X[-1] = X[0] * (1 + draw(st.sampled_from([1e-6, 1e-10, 2**-50])))
    elif twist == "duplicate" and n >= 5:  # keep the median distance nonzero
        X[-1] = X[0]
    return X


@st.composite
def hard_data_sets(draw, families=tuple(FAMILIES), max_rows: int = 12, max_dim: int = 6):
    """A small N×d float64 data set (3 ≤ N ≤ max_rows ≤ 12, d ≤ max_dim ≤ 6) from one of ``families``.

    Parameters
    ----------
    families : sequence of str
        Keys of :data:`FAMILIES` (what each stresses is documented there).
    """
    family = draw(st.sampled_from(list(families)))
    X = draw(_BUILDERS[family](max_rows, max_dim))
    assume(_median_positive(X))
    return np.ascontiguousarray(X, dtype=np.float64)


def sigma_exponents(low: int = -4, high: int = 100):
    """log2 σ in [low, high]: uniform, plus the boundaries (the paper's grid ends 7 and 8, float64's limit ~14,
    the structured range 20–40, the extremes)."""
    marks = [p for p in (low, 0, 7, 8, 14, 20, 40, high) if low <= p <= high]
    return st.one_of(st.sampled_from(marks), st.integers(low, high))


def _small_values(draw, shape, integer: bool):
    if integer:
        return np.array(draw(st.lists(st.integers(-3, 3), min_size=math.prod(shape), max_size=math.prod(shape))),
                        dtype=np.float64).reshape(shape)
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1))).normal(size=shape)


@st.composite
def _symmetric(draw, max_rows, max_dim):
    generators, order, needed = draw(st.sampled_from([g for g in _GROUPS if g[1] <= max_rows and g[2] <= max_dim]))
    d = draw(st.integers(needed, max_dim))
    base = _small_values(draw, (draw(st.integers(1, max_rows // order)), d), draw(st.booleans()))
    points = _closure(base, generators)  # at most (base rows) × order ≤ max_rows
    assume(3 <= len(points) <= max_rows)
    return points


def _closure(base: np.ndarray, generators) -> np.ndarray:
    """The orbit of the base rows under the group the coordinate maps generate (exact: copies and negations)."""
    seen = {tuple(row) for row in base}
    frontier = list(seen)
    while frontier:
        row = np.array(frontier.pop())
        for g in generators:
            image = tuple(_apply(g, row))
            if image not in seen:
                seen.add(image)
                frontier.append(image)
    return np.array(sorted(seen), dtype=np.float64)


def _apply(generator, row: np.ndarray) -> np.ndarray:
    out = row.copy()
    if generator[0] == "swap":
        _, i, j = generator
        out[[i, j]] = row[[j, i]]
    elif generator[0] == "flip":
        out[generator[1]] = -row[generator[1]]
    else:
        c = generator[1]
        out[:c] = np.roll(row[:c], 1)
    return out


@st.composite
def _polygon(draw, max_rows, max_dim):
    n = draw(st.integers(3, 8))
    radius = draw(st.sampled_from([1.0, 3.0, 1e-3]))
    angles = 2 * np.pi * np.arange(n) / n
    ring = radius * np.column_stack([np.cos(angles), np.sin(angles)])
    extra = draw(st.sampled_from(["none", "centre", "second ring"]))
    if extra == "centre":
        ring = np.vstack([ring, np.zeros((1, 2))])
    elif extra == "second ring" and 2 * n <= max_rows:
        ring = np.vstack([ring, 2 * ring])  # ×2 is exact: the same symmetry
    padding = draw(st.integers(0, max_dim - 2))  # zero columns: the same geometry, more attributes
    return np.hstack([ring, np.zeros((len(ring), padding))])


@st.composite
def _one_hot(draw, max_rows, max_dim):
    cells, states = draw(st.sampled_from([(c, s) for c in (1, 2, 3) for s in (2, 3, 4, 5, 6) if c * s <= max_dim]))
    boards = [tuple(int(x) for x in np.base_repr(i, states).zfill(cells)) for i in range(states**cells)]
    orbits = sorted({tuple(sorted(set(_cell_permutations(b)))) for b in boards})
    chosen = draw(st.lists(st.sampled_from(orbits), min_size=1, max_size=len(orbits), unique=True))
    rows = sorted({b for orbit in chosen for b in orbit})
    assume(3 <= len(rows) <= max_rows)
    return np.array([[float(b[c] == s) for c in range(cells) for s in range(states)] for b in rows])


def _cell_permutations(board):
    return [tuple(board[i] for i in p) for p in permutations(range(len(board)))]


@st.composite
def _duplicates(draw, max_rows, max_dim):
    n = draw(st.integers(5, max_rows))
    X = _small_values(draw, (n, draw(st.integers(1, max_dim))), False)
    order = draw(st.permutations(range(n)))
    for c in range(draw(st.integers(1, 2))):
        X[order[2 * c + 1]] = X[order[2 * c]]
    return X


@st.composite
def _wide(draw, max_rows, max_dim):
    d = draw(st.integers(2, max_dim))
    return _small_values(draw, (draw(st.integers(3, min(d + 1, max_rows))), d), draw(st.booleans()))


@st.composite
def _rank_deficient(draw, max_rows, max_dim):
    d = draw(st.integers(2, max_dim))
    integer = draw(st.booleans())
    X = _small_values(draw, (draw(st.integers(d + 2, max(d + 2, max_rows))), d), integer)
    i, j, *rest = draw(st.permutations(range(d)))
    if integer and rest and draw(st.booleans()):
        X[:, j] = X[:, i] + X[:, rest[0]]  # small integers: the sum is exact
    else:
        X[:, j] = draw(st.sampled_from([2.0, -0.5, 4.0, 0.25])) * X[:, i]  # powers of two: exact
    return X


@st.composite
def _outlier(draw, max_rows, max_dim):
    X = _small_values(draw, (draw(st.integers(3, max_rows)), draw(st.integers(1, max_dim))), False)
    i = draw(st.integers(0, len(X) - 1))
    rest = float(np.abs(np.delete(X, i, axis=0)).max())
    X[i] *= 1e6
    # a row of tiny entries stays near the others when scaled: its first coordinate is put 1e6 × the others' size away
    if np.abs(X[i]).max() < 1e6 * rest:
        X[i, 0] = math.copysign(1e6 * rest, X[i, 0]) if rest else 1e6
    return X


@st.composite
def _integer(draw, max_rows, max_dim):
    return _small_values(draw, (draw(st.integers(3, max_rows)), draw(st.integers(1, max_dim))), True)


_BUILDERS = {"symmetric": _symmetric, "polygon": _polygon, "one-hot": _one_hot, "duplicates": _duplicates,
             "wide": _wide, "rank-deficient": _rank_deficient, "outlier": _outlier, "integer": _integer}


def _median_positive(X: np.ndarray) -> bool:
    """The full median (N² entries, zeros of equal rows included) is positive: at most N²//2 zero entries."""
    n = len(X)
    _, counts = np.unique(X, axis=0, return_counts=True)
    return int((counts**2).sum()) <= (n * n) // 2
