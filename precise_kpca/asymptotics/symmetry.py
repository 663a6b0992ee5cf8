"""Exact eigenvalue ties of every Gaussian Gram forced by a dihedral symmetry of the data, certified by characters.

Theorem (proofs/symmetry). Let P be the permutation matrix of a row permutation π and Q a signed permutation of
the columns with P X = X Q exactly (row π(i) of X is row i times Q). Then squared distances are invariant,
D_{π(i)π(j)} = D_ij, the median distance d_X is unchanged, P1 = 1 commutes with H, and so P commutes with
H K_G(σ) H for **every** σ > 0 and with L = X_c X_cᵀ. If such (P_g) realise the dihedral group
D_m = ⟨r, s | r^m = s² = (sr)² = 1⟩, Rᴺ splits into isotypic components; every irreducible representation of D_m
is absolutely irreducible (real type), so on the component of a 2-dimensional irreducible ψ_j (multiplicity m_j
in the permutation representation) every commuting symmetric matrix is B_j ⊗ I₂ in a suitable basis (Schur):
its 2m_j eigenvalues come in m_j exactly equal pairs. The m_j are character inner products,
m_j = (1/2m) Σ_a χ(r^a)·2cos(2πja/m) (reflections have ψ_j-character 0), χ(g) = number of rows g fixes.

Certificate (exact): the generators are checked entrywise (float64 equality of X[π] and XQ: a signed permutation
rounds nothing), the defining relations are checked on the permutations (so g ↦ P_g is a representation of
D_m), the fixed points are counted exactly and each m_j is the unique integer in an Arb ball of width < 1.
Hand-written: no library decomposes a permutation representation given by data matching.

Eigenvalues of different components may still coincide by accident; the certificate proves lower bounds on the
multiplicities (≥ 2 for the 2·Σm_j eigenvalues of the 2-dimensional components), never upper bounds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import flint
import numpy as np

from ..validation import check_data


@dataclass(frozen=True)
class SignedColumnPermutation:
    """Q with (XQ)[:, columns[j]] = signs[j]·X[:, j].

    Attributes
    ----------
    columns : tuple of int, length d
    signs : tuple of int (±1), length d
    """

    columns: tuple
    signs: tuple

    def __post_init__(self):
        d = len(self.columns)
        if sorted(self.columns) != list(range(d)):
            raise ValueError(f"columns must be a permutation of 0..{d - 1}, got {self.columns}")
        if len(self.signs) != d or any(s not in (1, -1) for s in self.signs):
            raise ValueError(f"signs must be {d} values ±1, got {self.signs}")

    def apply(self, X: np.ndarray) -> np.ndarray:
        """XQ, shape (N, d): exact (moves and sign flips only)."""
        out = np.empty_like(X)
        out[:, list(self.columns)] = X * np.asarray(self.signs, dtype=np.float64)[None, :]
        return out + 0.0  # −0.0 → 0.0: rows are matched by their bytes


def row_permutation(X: np.ndarray, q: SignedColumnPermutation) -> np.ndarray:
    """π with X[π[i]] = (XQ)[i] exactly, shape (N,).

    Raises
    ------
    ValueError
        If X has repeated rows (π would not be unique) or a row of XQ is not a row of X (not a symmetry; the
        message names the row).
    """
    X = check_data(X)
    if q.apply(X).shape[1] != X.shape[1]:
        raise ValueError("the column permutation does not match X's columns")
    index = {row.tobytes(): i for i, row in enumerate(X)}
    if len(index) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0] - len(index)} repeated rows: remove duplicates before matching rows")
    moved = q.apply(X)
    pi = np.empty(X.shape[0], dtype=np.int64)
    for i, row in enumerate(moved):
        j = index.get(row.tobytes())
        if j is None:
            raise ValueError(f"row {i} of X moved by the column permutation is not a row of X: not a symmetry")
        pi[i] = j
    return pi


@dataclass(frozen=True)
class DihedralCertificate:
    """Ties forced by a D_m action on the rows (module docstring).

    Attributes
    ----------
    m : int
        Order of the rotation r (|D_m| = 2m).
    n : int
        Rows.
    rotation_fixed : tuple of int, length m
        χ(r^a), a = 0..m−1: rows fixed by r^a.
    reflection_fixed : tuple of int, length m
        χ(s r^a).
    one_dim : dict of str to int
        Multiplicities of the 1-dimensional irreducibles (``trivial``, ``sign`` and, m even, ``r-1,s+1``,
        ``r-1,s-1``).
    two_dim : tuple of int
        m_j for ψ_j, j = 1..⌊(m−1)/2⌋.
    """

    m: int
    n: int
    rotation_fixed: tuple
    reflection_fixed: tuple
    one_dim: dict
    two_dim: tuple

    @property
    def forced_pairs(self) -> int:
        """Σ m_j: pairs of exactly equal eigenvalues of every commuting symmetric matrix (H K_G H at any σ, L)."""
        return sum(self.two_dim)

    def multiplicity_profile(self) -> dict[int, int]:
        """{multiplicity: count} of a commuting matrix without accidental ties: N − 2Σm_j simple, Σm_j double."""
        pairs = self.forced_pairs
        return {1: self.n - 2 * pairs, 2: pairs}


def dihedral_certificate(X, rotation: SignedColumnPermutation, reflection: SignedColumnPermutation,
                         m: int) -> DihedralCertificate:
    """Certify the D_m action generated by ``rotation`` (order m) and ``reflection`` on the rows of X.

    Parameters
    ----------
    X : array_like, shape (N, d)
        Distinct rows.
    rotation, reflection : SignedColumnPermutation
        Column moves r and s with P_r X = X Q_r, P_s X = X Q_s.
    m : int
        The order of r, m ≥ 2.

    Raises
    ------
    ValueError
        A generator is not a symmetry of X, or the row permutations violate r^m = s² = (sr)² = 1 (then they do
        not represent D_m; the message says which relation fails).
    """
    if not isinstance(m, int) or m < 2:
        raise ValueError(f"m must be an integer ≥ 2, got {m!r}")
    X = check_data(X)
    r, s = row_permutation(X, rotation), row_permutation(X, reflection)
    identity = np.arange(X.shape[0])
    powers = [identity]
    for _ in range(m):
        powers.append(r[powers[-1]])
    for label, ok in (("r^m = 1", np.array_equal(powers[m], identity)), ("s^2 = 1", np.array_equal(s[s], identity)),
                      ("(sr)^2 = 1", np.array_equal(s[r[s[r]]], identity))):
        if not ok:
            raise ValueError(f"the row permutations violate {label}: they do not represent D_{m}")
    rot = tuple(int((p == identity).sum()) for p in powers[:m])
    ref = tuple(int((s[p] == identity).sum()) for p in powers[:m])
    return DihedralCertificate(m=m, n=X.shape[0], rotation_fixed=rot, reflection_fixed=ref,
                               one_dim=_one_dim(rot, ref, m), two_dim=_two_dim(rot, m))


def _one_dim(rot, ref, m: int) -> dict[str, int]:
    """⟨χ, ψ⟩ for ψ(r) = ±1, ψ(s) = ±1 (r ↦ −1 only for m even): exact integer sums."""
    labels = {(1, 1): "trivial", (1, -1): "sign", (-1, 1): "r-1,s+1", (-1, -1): "r-1,s-1"}
    out = {}
    for (cr, cs), label in labels.items():
        if cr == -1 and m % 2:
            continue
        total = sum(cr**a * (rot[a] + cs * ref[a]) for a in range(m))
        out[label] = _exact_quotient(total, 2 * m, label)
    return out


def _two_dim(rot, m: int) -> tuple[int, ...]:
    """m_j = (1/2m) Σ_a χ(r^a) 2cos(2πja/m), each the unique integer in an Arb ball."""
    out = []
    with flint.ctx.workprec(128 + 2 * max(rot).bit_length()):
        for j in range(1, (m - 1) // 2 + 1):
            total = sum((rot[a] * 2 * (flint.arb.pi() * 2 * j * a / m).cos() for a in range(m)), flint.arb(0))
            ball = total / (2 * m)
            nearest = int(round(float(ball.mid())))
            if not (ball.rad() < 0.25 and ball.overlaps(flint.arb(nearest))):
                raise ArithmeticError(f"multiplicity of psi_{j} not isolated: {ball}")  # a bug, never data
            out.append(nearest)
    return tuple(out)


def _exact_quotient(total: int, size: int, label: str) -> int:
    if total % size:
        raise ArithmeticError(f"character inner product for {label} is {total}/{size}, not an integer")
    return total // size


# -- the two symmetric families ----------------------------------------------------------------------------
def board_moves(values: int = 3) -> tuple[SignedColumnPermutation, SignedColumnPermutation]:
    """Rotation by 90° and the left-right mirror of a 3×3 board, on one-hot columns 3·cell + value.

    Cells are row-major (cell = 3i + j): the rotation sends (i, j) to (j, 2 − i), the mirror to (i, 2 − j).
    """
    def lift(cell_map):
        return SignedColumnPermutation(tuple(values * cell_map(c // values) + c % values for c in range(9 * values)),
                                       (1,) * (9 * values))

    def rotate(c):
        i, j = divmod(c, 3)
        return 3 * j + (2 - i)

    def mirror(c):
        i, j = divmod(c, 3)
        return 3 * i + (2 - j)

    return lift(rotate), lift(mirror)


def square_moves() -> tuple[SignedColumnPermutation, SignedColumnPermutation]:
    """r(x, y) = (−y, x) and s(x, y) = (x, −y) on R²: D_4, the symmetries of the square."""
    return SignedColumnPermutation((1, 0), (1, -1)), SignedColumnPermutation((0, 1), (1, -1))


def square_orbits(points, scale: float = 1.0) -> np.ndarray:
    """The union of the D_4 orbits of integer points (a, b), times ``scale`` (a power of two keeps it exact).

    Parameters
    ----------
    points : sequence of (int, int)
    scale : float

    Returns
    -------
    ndarray, shape (N, 2)
        Distinct rows, in a fixed order.
    """
    rows = set().union(*(_orbit(a, b) for a, b in points))
    if len(rows) < 3:
        raise ValueError(f"points {list(points)} give {len(rows)} distinct rows; need at least 3")
    return np.array(sorted(rows), dtype=np.float64) * scale


def _orbit(a, b) -> frozenset:
    x, y = int(a), int(b)
    out = set()
    for _ in range(4):
        x, y = -y, x
        out.update({(x, y), (x, -y)})
    return frozenset(out)


def generic_square_profile(points) -> dict[int, int]:
    """Expected {multiplicity: count} of a centered Gaussian Gram of :func:`square_orbits` without accidental
    ties, from orbit sizes alone (independent of the characters): the permutation representation on a free
    orbit (8 points) is the regular one and holds ψ₁ twice, an orbit of 4 (on an axis or a diagonal) holds it
    once, the origin not at all."""
    orbits = {_orbit(a, b) for a, b in points}
    pairs = sum({8: 2, 4: 1, 1: 0}[len(o)] for o in orbits)
    return {1: sum(len(o) for o in orbits) - 2 * pairs, 2: pairs}
