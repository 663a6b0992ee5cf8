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

Per σ, in the certified spectrum (:func:`pairs_in_spectrum`, D_4). For D_4 the 2-dimensional ψ₁ is the only
irreducible on which r² acts as −I, so the ψ₁ component is the −1 eigenspace of the involution P = P_{r²}, of
dimension (N − χ(r²))/2 = 2m₁. A = σ_X² H K_G H commutes with P, hence M = A(I − P)/2 + c(I + P)/2 has spectrum
{the forced-pair eigenvalues of A (each twice)} ∪ {c, N − 2m₁ times}: entries (A_ij − A_iπ(j))/2 plus c/2 at
(i, i) and (i, π(i)), no square root. A is positive semidefinite: with c = −2^e < 0 the two parts are apart.
Both A and M are enclosed by :func:`~precise_kpca.certify.float64_enclosure.enclose_float64` (a-priori float64 bounds, counting:
each disjoint run of intervals holds exactly as many eigenvalues as it has indices). Every eigenvalue of M above
c/2 is an eigenvalue of A; a run of M's intervals meeting one run of A's alone puts its eigenvalues there. So a run
of A's of size 2 holding a run of M's is a forced pair whose multiplicity is exactly 2 (isolated), a run of size
1 is a simple eigenvalue of a 1-dimensional component, and a run of size 2 holding none is two eigenvalues the
enclosures cannot split that no symmetry ties ("apparent"). A run of M's of odd size, or a forced pair in a run
of A's of size 1, contradicts the theorem: :class:`~precise_kpca.errors.InternalCheckFailed`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from ..arith.rounding import frobenius_up
from ..certify.float64_enclosure import enclose_float64
from ..errors import InsufficientPrecision, InternalCheckFailed
from ..numerics.binary128_gram import kept_words
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
                raise InternalCheckFailed(f"multiplicity of psi_{j} not isolated: {ball}")
            out.append(nearest)
    return tuple(out)


def _exact_quotient(total: int, size: int, label: str) -> int:
    if total % size:
        raise InternalCheckFailed(f"character inner product for {label} is {total}/{size}, not an integer")
    return total // size


# -- the forced pairs in the certified spectrum at one σ ---------------------------------------------------------
@dataclass(frozen=True)
class SpectrumRun:
    """One run of the certified spectrum of A: eigenvalues ``start``…``stop − 1`` (descending) lie in
    [lower, upper] and no others; ``paired`` of them are forced-pair eigenvalues (ψ₁), the rest of
    1-dimensional components (``None``: a run of M's meets this run and another, so the split is unknown)."""

    start: int
    stop: int
    lower: Fraction
    upper: Fraction
    paired: int | None

    @property
    def kind(self) -> str:
        """``simple``, ``pair`` (a forced pair, multiplicity exactly 2), ``apparent`` (two eigenvalues no
        symmetry ties, not split by the enclosures), ``cluster`` (three or more) or ``unattributed``."""
        size = self.stop - self.start
        if self.paired is None:
            return "unattributed"
        if size == 1:
            return "simple"
        if size == 2:
            return "pair" if self.paired == 2 else "apparent"
        return "cluster"


@dataclass(frozen=True)
class PairSpectrum:
    """Where the D_4-forced pairs sit in the certified spectrum of A = σ_X² H K_G H at one σ (module docstring).

    Attributes
    ----------
    sigma : Fraction
    forced_pairs : int
        m₁ from the characters.
    runs : list of SpectrumRun
        The disjoint runs of A's enclosure, descending.
    """

    sigma: Fraction
    forced_pairs: int
    runs: list

    def count(self, kind: str) -> int:
        """Runs of one :attr:`SpectrumRun.kind`."""
        return sum(run.kind == kind for run in self.runs)

    @property
    def exact(self) -> bool:
        """Whether the certified spectrum shows exactly the forced pairs: every run a simple eigenvalue or an
        isolated forced pair."""
        return all(run.kind in ("simple", "pair") for run in self.runs)

    @property
    def pair_indices(self) -> list[int]:
        """Index of the first eigenvalue (descending, 0-based) of every isolated forced pair."""
        return [run.start for run in self.runs if run.kind == "pair"]


def pairs_in_spectrum(X, rotation: SignedColumnPermutation, reflection: SignedColumnPermutation, sigma, *,
                      median: str = "full") -> PairSpectrum:
    """Locate the forced pairs of a D_4 symmetry in the certified spectrum of σ_X² H K_G H at ``sigma``.

    Parameters
    ----------
    X : array_like, shape (N, d)
        Distinct rows.
    rotation, reflection : SignedColumnPermutation
        Generators of the D_4 action (order 4 and 2), checked by :func:`dihedral_certificate`.
    sigma : int, float, str or Fraction
        Standardized bandwidth (exact, as :func:`precise_kpca.validation.parse_sigma` reads it).
    median : {"full", "pairs"}

    Raises
    ------
    ValueError
        The generators are not a D_4 symmetry of X.
    InsufficientPrecision
        The a-priori enclosure cannot separate its runs, or M's two parts overlap.
    InternalCheckFailed
        The enclosures contradict the theorem (module docstring).
    """
    X = check_data(X)
    cert = dihedral_certificate(X, rotation, reflection, 4)
    pi = _half_turn(X, rotation)
    n = X.shape[0]
    if n - int((pi == np.arange(n)).sum()) != 4 * cert.forced_pairs:  # one −1 eigenvector per 2-cycle of r²
        raise InternalCheckFailed("the −1 eigenspace of r² does not have dimension 2·m₁")
    quad = kept_words(X, sigma, median=median, linear=True)
    A_f = quad.hi
    delta = Fraction(quad.error_bound) + Fraction(frobenius_up(quad.lo))
    w, V = _descending_eigh(A_f)
    whole = enclose_float64(A_f, delta, w, V)
    M_f, delta_m, c = _odd_block(A_f, pi, delta, float(np.max(np.abs(w))))
    w_m, V_m = _descending_eigh(M_f)
    odd = enclose_float64(M_f, delta_m, w_m, V_m)
    paired = [0] * len(whole.runs)
    unattributed = set()
    for a, z in odd.runs:
        lo, hi = odd.lower[a], odd.upper[a]
        if hi < c / 2:
            continue  # the part at c
        if lo <= c / 2:
            raise InsufficientPrecision(f"the forced-pair part of M and its part at c = {float(c)} overlap")
        if (z - a) % 2:
            raise InternalCheckFailed(f"a run of {z - a} forced-pair eigenvalues: each has even multiplicity")
        meets = [i for i, (s, _) in enumerate(whole.runs) if whole.lower[s] <= hi and lo <= whole.upper[s]]
        if len(meets) == 1:
            paired[meets[0]] += z - a
        else:
            unattributed.update(meets)
    if sum(paired) > 2 * cert.forced_pairs:
        raise InternalCheckFailed("more forced-pair eigenvalues attributed than the characters allow")
    runs = []
    for i, (a, z) in enumerate(whole.runs):
        if paired[i] > z - a:
            raise InternalCheckFailed(f"{paired[i]} forced-pair eigenvalues in a run of {z - a} eigenvalues of A")
        runs.append(SpectrumRun(a, z, whole.lower[a], whole.upper[a], None if i in unattributed else paired[i]))
    return PairSpectrum(Fraction(quad.sigma), cert.forced_pairs, runs)


def _half_turn(X: np.ndarray, rotation: SignedColumnPermutation) -> np.ndarray:
    """The row permutation of r², the involution whose −1 eigenspace is D_4's ψ₁ component."""
    r = row_permutation(X, rotation)
    return r[r]


def _descending_eigh(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, V = np.linalg.eigh(M)
    return w[::-1].copy(), V[:, ::-1].copy()


_UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2  # u = 2⁻⁵³: one float64 rounding is within u relative


def _odd_block(A_f: np.ndarray, pi: np.ndarray, delta: Fraction, top: float) -> tuple[np.ndarray, Fraction, Fraction]:
    """M_f (float64, exactly symmetric) with ‖M − M_f‖_F ≤ delta_M for M = A(I − P)/2 + c(I + P)/2, and c.

    A is positive semidefinite, so c = −2^e ≈ −``top``/4 (``top`` ≈ ‖A‖₂) keeps M's part at c below its forced
    pairs in [0, ‖A‖] while M's norm, and with it the enclosure's widths (~N·u·‖M‖), stays that of A.

    M_f is the upper triangle of fl(fl(A_f − A_f P)/2 + c(I + P)/2), mirrored. Per entry the two roundings are
    at most u(|A_f − A_f P|/2 + |result|) (halving is exact above the subnormals: 2⁻¹⁰⁷⁰ per entry covers
    them); mirroring at most doubles a sum of squares, and (A − A_f)(I − P)/2 has norm ≤ ‖A − A_f‖_F (I − P)/2
    being an orthogonal projector), hence delta_M ≤ √2·(delta + ‖rounding‖_F) ≤ 3/2·(…).
    """
    n = len(pi)
    c = -Fraction(2) ** (math.frexp(top)[1] - 2)  # between −‖A‖/2 and −‖A‖/4 (the caller checks the gap)
    half_diff = (A_f - A_f[:, pi]) * 0.5
    shift = np.zeros((n, n))
    shift[np.arange(n), np.arange(n)] += float(c) / 2
    shift[np.arange(n), pi] += float(c) / 2
    M = half_diff + shift
    M_f = np.triu(M) + np.triu(M, 1).T
    rounding = _UNIT_ROUNDOFF * (np.abs(half_diff) + np.abs(M)) * (1 + 2.0**-40) + 2.0**-1070
    delta_m = Fraction(3, 2) * (delta + Fraction(frobenius_up(rounding)))
    return M_f, delta_m, c


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
