"""Intervals with a guarantee, and rigorous enclosures of the top eigenvalues of symmetric ball matrices.

The neighbours' studies (:mod:`precise_kpca.approx.convergence`, :mod:`precise_kpca.approx.rigorous`) report every
number as an :class:`Interval`: exact ends, a guarantee (``"rigorous"``, ``"heuristic"`` or ``"none"``, as in
:mod:`precise_kpca.measures.measurement`) and the digits the ends support.

:func:`top_eigenvalues` encloses the ℓ largest eigenvalues of every symmetric matrix in an Arb ball matrix ``A``
(p×p). It is hand-written because Arb's general ``acb_mat.eig`` runs multiprecision QR sweeps on the whole
matrix (40 s for p = 200 at 300 bits), while these studies need only the top ℓ ≤ d eigenvalues of p ≈ N, D or m
at a few hundred bits: here the p×p work is a handful of ``arb_mat`` products (C speed) and only an ℓ×ℓ block goes
to ``acb_mat.eig``. Steps:

1. an approximate eigenbasis V: float64 ``eigh`` of A's midpoint, refined by Ogita & Aishima's iteration
   (Japan J. Indust. Appl. Math. 35 (2018) 1007–1035) with ``arb_mat`` products at the working precision and the
   correction matrix in float64 (each step gains ~16 digits; nothing below relies on V's accuracy);
2. in ball arithmetic over A's balls: ``B = VᵀAV``, ``G = VᵀV`` and ``ω ≥ ‖G − I‖_F ≥ ‖G − I‖₂``;
3. *Ostrowski* (Horn & Johnson, Matrix Analysis, Thm 4.5.9): for square nonsingular V,
   ``λ_k(VᵀAV) = θ_k λ_k(A)`` with ``θ_k ∈ [λ_min(G), λ_max(G)] ⊂ [1 − ω, 1 + ω]`` (ω < 1);
4. for a split ``B = [[B₁₁, B₁₂], [B₂₁, B₂₂]]`` after t ≥ ℓ rows: the eigenvalues of B₁₁ (t×t) are enclosed by
   Arb (``acb_mat.eig``, Rump's method, multiple eigenvalues allowed), ``λ_max(B₂₂) ≤ max_i (B₂₂)_ii +
   ‖B₂₂ − diag‖_F`` (Weyl), and if every eigenvalue of B₁₁ exceeds λ_max(B₂₂) by η > 0, *Li & Li's* quadratic
   residual bound (LAA 395 (2005) 183–190) gives ``|λ_j(B) − λ_j(B₁₁)| ≤ 2e²/(η + √(η² + 4e²)) ≤ e²/η`` for
   j ≤ t, with ``e ≥ ‖B₁₂‖_F ≥ ‖B₁₂‖₂``. t grows from ℓ until such a gap is found.

Every step after (1) is ball arithmetic (python-flint, directed rounding of the radii), so the enclosures hold for
every matrix in the ball, in particular for the exact matrix the ball was computed from. The theorems are those of
:mod:`precise_kpca.numerics.theorems` (``ostrowski`` and ``li_li_radius`` in its ball arithmetic).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction

import flint
import numpy as np

from ..backends.base import as_fraction
from ..errors import InsufficientPrecision
from ..measures.measurement import GUARANTEES, exact_mpf, interval_digits
from ..numerics import theorems

__all__ = ["Interval", "IntervalArray", "arb_interval", "basis_enclosures", "cholesky", "frobenius_upper",
           "interval_ball", "least_squares_slope", "top_eigenvalues", "undetermined"]

_REFINE_STEPS = 40  # Ogita–Aishima steps at most: ~16 digits each, far beyond any precision used here
_SPLIT_EXTRA = 8  # split indices tried beyond ℓ when the ℓ-th eigenvalue is not separated from the next
_FIRST_BITS = 96  # precision of the first refinement step (float64 vectors) and margin of the later ones
_MAG_BITS = 64  # more than the 30 bits of an Arb radius


@dataclass(frozen=True)
class Interval:
    """A reported number: exact interval ends, what they guarantee, and why it is missing or short.

    Attributes
    ----------
    lower, upper : mpmath.mpf
        Exact (dyadic) ends; NaN when the value is undetermined.
    guarantee : {"rigorous", "heuristic", "none"}
        ``"rigorous"``: an enclosure of the exact value; ``"heuristic"``: the span of two evaluations at different
        precisions; ``"none"``: nothing is known (NaN ends, ``reason`` says why).
    reason : str
    """

    lower: object
    upper: object
    guarantee: str
    reason: str = ""

    def __post_init__(self):
        if self.guarantee not in GUARANTEES:
            raise ValueError(f"guarantee must be one of {GUARANTEES}, got {self.guarantee!r}")

    @property
    def value(self) -> float:
        """Nearest float to the midpoint (NaN for guarantee ``"none"``)."""
        if self.guarantee == "none":
            return math.nan
        return float((self.lower + self.upper) / 2)

    @property
    def digits(self) -> int:
        """Significant digits every point of the interval shares with its midpoint (0 for ``"none"``)."""
        return 0 if self.guarantee == "none" else interval_digits(self.lower, self.upper)

    def text(self, max_digits: int = 5) -> str:
        """The value with no more significant digits than the interval supports.

        ``"nan"`` when undetermined; the midpoint to ``min(digits, max_digits)`` significant digits when the
        interval supports at least one; otherwise the interval itself, ends rounded outward to 2 digits.
        """
        if self.guarantee == "none":
            return "nan"
        digits = min(self.digits, max_digits)
        if digits >= 1:
            return f"{self.value:.{digits - 1}e}"
        ends = [_decimal(end, rounding) for end, rounding in ((self.lower, ROUND_FLOOR), (self.upper, ROUND_CEILING))]
        return f"[{ends[0]}, {ends[1]}]"


def _decimal(x, rounding: str) -> str:
    """An exact mpf rounded to 2 significant decimal digits in the given direction."""
    sign, man, exp, _ = x._mpf_
    value = Fraction(-int(man) if sign else int(man)) * Fraction(2) ** int(exp)
    if value == 0:
        return "0"
    context = Context(prec=2, rounding=rounding)
    return format(context.divide(Decimal(value.numerator), Decimal(value.denominator)), ".1e")


def undetermined(reason: str) -> Interval:
    """An interval with no value: NaN ends, guarantee ``"none"``."""
    nan = exact_mpf(math.nan)
    return Interval(nan, nan, "none", reason)


def arb_interval(x: flint.arb, guarantee: str = "rigorous", reason: str = "") -> Interval:
    """The exact ends of an Arb ball as an :class:`Interval` (undetermined when the ball is not finite)."""
    if not x.is_finite():
        return undetermined(reason or "the enclosure is not finite")
    with flint.ctx.workprec(x.bits() + _MAG_BITS):  # mid() rounds to the working precision: make it exact
        mid, rad = _exact_point(x.mid()), _exact_point(x.rad())
    return Interval(exact_mpf(mid - rad), exact_mpf(mid + rad), guarantee, reason)


def _exact_point(x: flint.arb) -> Fraction:
    man, exp = (int(v) for v in x.man_exp())
    return Fraction(man) * Fraction(2) ** exp


@dataclass(frozen=True)
class IntervalArray:
    """An array of :class:`Interval`, read field by field.

    Attributes
    ----------
    entries : ndarray of Interval
    """

    entries: np.ndarray

    @classmethod
    def of(cls, intervals) -> "IntervalArray":
        """From a (nested, rectangular) list of :class:`Interval`."""
        return cls(np.asarray(intervals, dtype=object))

    @property
    def shape(self) -> tuple:
        return self.entries.shape

    def _field(self, get, otype):
        return np.vectorize(get, otypes=[otype])(self.entries) if self.entries.size else np.empty(self.shape, otype)

    @property
    def lower(self) -> np.ndarray:
        """Lower ends (mpf), same shape."""
        return self._field(lambda i: i.lower, object)

    @property
    def upper(self) -> np.ndarray:
        """Upper ends (mpf), same shape."""
        return self._field(lambda i: i.upper, object)

    @property
    def guarantee(self) -> np.ndarray:
        """Guarantee per entry (str)."""
        return self._field(lambda i: i.guarantee, object)

    @property
    def reason(self) -> np.ndarray:
        """Reason per entry (str, empty when there is none)."""
        return self._field(lambda i: i.reason, object)

    @property
    def value(self) -> np.ndarray:
        """Midpoints as floats (NaN where undetermined)."""
        return self._field(lambda i: i.value, float)

    @property
    def digits(self) -> np.ndarray:
        """Digits per entry derived from the interval (:func:`~precise_kpca.measures.measurement.interval_digits`)."""
        return self._field(lambda i: i.digits, int)

    def __getitem__(self, index):
        item = self.entries[index]
        return IntervalArray(item) if isinstance(item, np.ndarray) else item


def interval_ball(x) -> flint.arb:
    """A ball containing an :class:`Interval` (its exact ends) or an exact rational, at the working precision."""
    if isinstance(x, Interval):
        return interval_ball(as_fraction(x.lower)).union(interval_ball(as_fraction(x.upper)))
    return flint.arb(flint.fmpq(x.numerator, x.denominator))




def least_squares_slope(x: list[flint.arb], y: list[flint.arb]) -> flint.arb:
    """Slope of the least-squares line of y on x, ``Σ c_j y_j`` with ``c_j = (x_j − x̄)/Σ(x − x̄)²``.

    On balls it encloses the slope of every choice of points in them (squares as products: ``**`` of a ball
    around 0 is NaN in Arb).
    """
    mean = sum(x[1:], x[0]) / len(x)
    spread = sum(((v - mean) * (v - mean) for v in x), flint.arb(0))
    return sum((((v - mean) / spread) * w for v, w in zip(x, y)), flint.arb(0))


# ---------------------------------------------------------------------------------------------------------
# ball linear algebra
# ---------------------------------------------------------------------------------------------------------
def frobenius_upper(entries) -> flint.arb:
    """An exact upper bound on ``sqrt(Σ |x|²)`` over Arb balls (every point of every ball)."""
    total = flint.arb(0)
    for x in entries:
        bound = x.abs_upper()
        total += bound * bound
    return total.sqrt().upper()


def cholesky(A: flint.arb_mat) -> flint.arb_mat:
    """Lower-triangular L with ``L Lᵀ = A`` for every symmetric matrix in the ball A (ball arithmetic).

    Raises
    ------
    InsufficientPrecision
        A pivot is not provably positive at the working precision (A singular, indefinite, or too ill-conditioned
        for it).
    """
    p = A.nrows()
    L = [[flint.arb(0)] * p for _ in range(p)]
    for j in range(p):
        pivot = A[j, j] - sum((L[j][k] * L[j][k] for k in range(j)), flint.arb(0))
        if not pivot > 0:
            raise InsufficientPrecision(f"Cholesky pivot {j} of a {p}x{p} matrix is not provably positive ({pivot})")
        L[j][j] = pivot.sqrt()
        for i in range(j + 1, p):
            L[i][j] = (A[i, j] - sum((L[i][k] * L[j][k] for k in range(j)), flint.arb(0))) / L[j][j]
    return flint.arb_mat(L)


def top_eigenvalues(A: flint.arb_mat, ell: int) -> list[flint.arb]:
    """Enclosures of the ℓ largest eigenvalues (descending) of every symmetric matrix in the ball A.

    Works at the current flint precision (``flint.ctx.workprec``); see the module docstring for the method.

    Parameters
    ----------
    A : flint.arb_mat, shape (p, p)
        Symmetric ball matrix (entries (i, j) and (j, i) enclose the same number).
    ell : int
        1 ≤ ℓ ≤ p.

    Returns
    -------
    list of flint.arb, length ℓ

    Raises
    ------
    InsufficientPrecision
        For no split after t = ℓ … ℓ + 8 rows (the basis refined for the top t columns each time) is the basis
        provably nonsingular and the top t eigenvalues separated from the rest at this precision.
    """
    p = A.nrows()
    if not 1 <= ell <= p:
        raise ValueError(f"top_eigenvalues: ell must be in [1, {p}], got {ell}")
    mid = A.mid()
    for t in range(ell, min(p, ell + _SPLIT_EXTRA) + 1):
        top = basis_enclosures(A, _refined_basis(mid, t), t)
        if top is not None:
            return top[:ell]
    raise InsufficientPrecision(f"the top {ell} eigenvalues of a {p}x{p} matrix are not separated from the rest "
                                f"at {flint.ctx.prec} bits")


def basis_enclosures(A: flint.arb_mat, V: flint.arb_mat, t: int) -> list[flint.arb] | None:
    """Enclosures of the t largest eigenvalues of every symmetric matrix in A from any square basis V (steps 2–4).

    Parameters
    ----------
    A : flint.arb_mat, shape (p, p)
    V : flint.arb_mat, shape (p, p)
        Exact entries; columns ordered by descending approximate eigenvalue.
    t : int
        The split: the first t columns against the rest.

    Returns
    -------
    list of flint.arb or None
        None when ω ≥ 1 or the split does not separate the top t eigenvalues.
    """
    p = A.nrows()
    Vt = V.transpose()
    B, G = Vt * A * V, Vt * V
    omega = frobenius_upper(G[i, j] - (1 if i == j else 0) for i in range(p) for j in range(p))
    top = _split_enclosures(B, t) if omega < 1 else None
    if top is None:
        return None
    return [flint.arb.union(*theorems.ostrowski(lam.lower(), lam.upper(), omega, arith=theorems.BALL)) for lam in top]


def _split_enclosures(B: flint.arb_mat, t: int) -> list[flint.arb] | None:
    """Enclosures of B's t largest eigenvalues from the split after t rows (module docstring, step 4), or None."""
    p = B.nrows()
    top = _block_eigenvalues(flint.arb_mat([[B[i, j] for j in range(t)] for i in range(t)]))
    if top is None:
        return None
    if t == p:
        return top
    off = frobenius_upper(B[i, j] for i in range(t, p) for j in range(t, p) if i != j)
    rest_max = max((B[i, i].upper() for i in range(t, p)), key=_exact_point) + off
    eta = min((lam.lower() for lam in top), key=_exact_point) - rest_max
    if not eta > 0:
        return None
    e = frobenius_upper(B[i, j] for i in range(t) for j in range(t, p))
    radius = theorems.li_li_radius(e, eta, arith=None).upper()
    return [lam + flint.arb(0, radius) for lam in top]


def _block_eigenvalues(B11: flint.arb_mat) -> list[flint.arb] | None:
    """Descending enclosures of the (real) eigenvalues of a small symmetric ball matrix, None if Arb cannot.

    Sorting lower and upper ends separately is valid: each ball holds one eigenvalue (with multiplicity), and the
    j-th largest of the lower (upper) ends is below (above) the j-th largest eigenvalue.
    """
    try:
        eig = flint.acb_mat(B11).eig(multiple=True)
    except ValueError:
        return None
    lows = sorted((z.real.lower() for z in eig), key=_exact_point, reverse=True)
    highs = sorted((z.real.upper() for z in eig), key=_exact_point, reverse=True)
    return [lo.union(hi) for lo, hi in zip(lows, highs)]


def _refined_basis(M: flint.arb_mat, block: int) -> flint.arb_mat:
    """Approximate orthonormal eigenvectors of the symmetric point matrix M, columns by descending eigenvalue.

    float64 ``eigh``, then Ogita–Aishima steps ``V ← V + V Ẽ`` with ``R = I − VᵀV``, ``S = VᵀMV`` at the working
    precision, ``λ̃_i = S_ii``, ``Ẽ_ij = (S_ij + λ̃_j R_ij) / (λ̃_j − λ̃_i)`` for pairs that involve one of the top
    ``block`` columns and are further apart than ``δ = 2(‖S − diag λ̃‖_F + ‖M‖_F ‖R‖_F)``, ``R_ij / 2`` otherwise.
    The columns below the block form one cluster, only orthonormalized: their eigenvalues may lie far below
    float64's resolution of ‖M‖ (the σ⁻²-small part of a Gaussian Gram), where Newton steps from float64 vectors
    diverge, and the bounds need from them only orthonormality and decoupling from the block. Ẽ is computed in
    float64 from R and S scaled by a power of two (their entries fall below float64's range past ~1000 bits), which
    slows the iteration to ~16 digits per step; it stops when Ẽ falls below the working precision or stops
    shrinking (or after 40 steps: ~640 digits).
    """
    p = M.nrows()
    dense = _to_float(M)
    _, V0 = np.linalg.eigh(dense)
    V = flint.arb_mat(np.ascontiguousarray(V0[:, ::-1]).tolist())
    norm = float(np.linalg.norm(dense))
    index = np.arange(p)
    in_block = (index[:, None] < block) | (index[None, :] < block)
    np.fill_diagonal(in_block, False)
    target = flint.ctx.prec
    work = _FIRST_BITS  # products need only about twice the bits V already has: cheap early steps
    previous = 0.0  # log2 of the last correction's largest entry
    for _ in range(_REFINE_STEPS):
        shift = max(0, -math.floor(previous))  # the next R and S are near 2^previous: scaled back near 1
        with flint.ctx.workprec(work):
            Vt = V.transpose()
            R, S = _identity(p) - Vt * V, Vt * (M * V)
            scale = flint.arb(2) ** shift
            R_scaled, S_scaled = _to_float(R * scale), _to_float(S * scale)  # the cluster's S may overflow: unused
        S_off = _to_float(S)
        lam = np.diag(S_off).copy()
        np.fill_diagonal(S_off, 0.0)
        delta = 2 * (np.linalg.norm(S_off) + norm * np.linalg.norm(R_scaled) * 2.0 ** -shift)
        gaps = lam[None, :] - lam[:, None]  # λ̃_j − λ̃_i
        newton = (np.abs(gaps) > delta) & in_block
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            E = np.where(newton, (S_scaled + lam[None, :] * R_scaled) / gaps, R_scaled / 2)  # Ẽ · 2^shift
        largest = float(np.max(np.abs(E)))
        size = math.log2(largest) - shift if largest > 0 else -math.inf  # log2 max |Ẽ|
        if size < 4 - target or (size >= previous and previous < 0):
            break
        work = min(target, max(work, 2 * math.ceil(-size) + _FIRST_BITS))
        with flint.ctx.workprec(work):
            V = (V + V * (flint.arb_mat(E.tolist()) * flint.arb(2) ** -shift)).mid()
        previous = size
    return V


def _identity(p: int) -> flint.arb_mat:
    eye = flint.arb_mat(p, p)
    for i in range(p):
        eye[i, i] = 1
    return eye


def _to_float(M: flint.arb_mat) -> np.ndarray:
    """Nearest floats of the midpoints, shape (rows, cols)."""
    return np.array([float(x.mid()) for x in M.entries()]).reshape(M.nrows(), M.ncols())
