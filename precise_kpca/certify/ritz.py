"""Rayleigh–Ritz from exact g×g products, without exact rational solves: Ritz values and the residual bound.

For a basis V (N×g, full column rank) and K ≈ AV, the enclosures of :mod:`.perturbed_enclosure`,
:mod:`.eigen_enclosure`, :mod:`.angles` and the refined and first-order routes read three exact g×g products,
G = VᵀV, H = VᵀK and Q = KᵀK. Solving G⁻¹H in exact rationals cost most of their time (the denominators grow to
~g times the entries' bits: 192 s of 196 s for g = 100 on a 500×100 data set); this module never does.

* *Ritz values* are the eigenvalues of the pencil (sym H, G). The pencil is shifted exactly first, H' = sym H − cG
  with c a dyadic at the trace ratio tr H / tr G (the mean Ritz value to within ω·‖H'‖, ω = ‖G − I‖), so every
  later rounding is relative to the cluster's spread, not to its size (a Gaussian tie splits 10⁻¹²¹ of its
  value). Arb then solves G X = 2^-j H' (entries ~1) at ``prec + 64`` bits and encloses X's eigenvalues; c and
  2^j are undone exactly. Sorting lower and upper ends separately is valid: the i-th largest eigenvalue is monotone
  in every entry.
* *The residual* ‖(I − P_V)K‖_F, P_V the orthogonal projector onto span V: for ANY g×g matrix C,
  T = (K − VC)ᵀ(K − VC) = Q − HᵀC − CᵀH + CᵀGC is exact from the products with integer multiplications only, and
  T = K̃ᵀK̃ + D with K̃ = (I − P_V)K and D = (G⁻¹H − C)ᵀG(G⁻¹H − C) ⪰ 0 (K − VC = K̃ + V(G⁻¹H − C), the two parts
  orthogonal), so ‖(I − P_V)K‖_F² ≤ tr T and ‖D‖₂ ≤ ‖G‖₂‖G⁻¹H − C‖_F². C is cI plus the dyadic rounding of the
  Arb solve's midpoints of G⁻¹(H − cG), so that bound on D (the *excess*) is known from the balls; the working
  precision is raised until it is below 2^-20 of tr T (or of the precision asked for, where T itself is the
  result: the null-space part of the first-order limits, the principal angles). Every T is valid: the precision
  only buys tightness.
* Where a bound needs G⁻¹ itself (the residual of V_o = V G^(−1/2): ‖(I − P_V)K G^(−1/2)‖_F² ≤ tr T / λ_min(G)),
  :func:`gram_lower_bound` gives λ_min(G) ≥ 1 − ‖G − I‖_F, or Arb's enclosure where G is not near I.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint

from ..arith.balls import ends_fraction, radius_fraction
from ..arith.dyadic import Dyadic
from ..errors import InternalCheckFailed

_GUARD = 64  # bits of the Arb arithmetic beyond the precision asked for (relative to the cluster's spread)
_EXCESS_BITS = 20  # the residual bound may exceed ‖K − V G⁻¹H‖_F² by this fraction of itself (ε², not ε)
_MAX_ROUNDS = 4  # precision escalations of the residual's solve before the (valid, looser) bound is kept
_EIG_DOUBLINGS = 2  # doublings of the Ritz values' precision before wide (valid) enclosures are kept


@dataclass(frozen=True)
class _Scaled:
    """The exact matrix ``ints · scale`` (an integer matrix on one rational scale)."""

    ints: flint.fmpz_mat
    scale: Fraction

    @classmethod
    def of(cls, m) -> "_Scaled":
        """From a :class:`~precise_kpca.arith.dyadic.Dyadic` or a ``flint.fmpq_mat``, exactly."""
        if isinstance(m, cls):
            return m
        if isinstance(m, Dyadic):
            return cls(m.ints, Fraction(2) ** m.exp2)
        den = 1
        for x in m.entries():
            den = math.lcm(den, int(x.q))
        return cls(flint.fmpz_mat(m.nrows(), m.ncols(), [int(x.p) * (den // int(x.q)) for x in m.entries()]),
                   Fraction(1, den))

    def to_fmpq(self) -> flint.fmpq_mat:
        scale = flint.fmpq(self.scale.numerator, self.scale.denominator)
        return flint.fmpq_mat(self.ints) * scale

    def trace(self) -> Fraction:
        return sum((int(self.ints[i, i]) for i in range(self.ints.nrows())), 0) * self.scale

    def max_abs(self) -> Fraction:
        return max((abs(int(v)) for v in self.ints.entries()), default=0) * self.scale


def _combination(terms) -> _Scaled:
    """Σ coefficient·matrix over (Fraction, _Scaled) pairs, exactly, on the coarsest common scale."""
    scales = [c * m.scale for c, m in terms if c]
    num = math.gcd(*(s.numerator for s in scales))
    den = math.lcm(*(s.denominator for s in scales))
    unit = Fraction(num, den)
    ints = None
    for c, m in terms:
        if c:
            factor = c * m.scale / unit  # an integer by construction
            part = m.ints * int(factor)
            ints = part if ints is None else ints + part
    return _Scaled(ints, unit)


def _identity(g: int) -> _Scaled:
    return _Scaled(flint.fmpz_mat(g, g, [int(i == j) for i in range(g) for j in range(g)]), Fraction(1))


def floor_log2(x: Fraction) -> int:
    """⌊log2 x⌋ of a positive rational, exactly."""
    p, q = x.numerator, x.denominator
    e = p.bit_length() - q.bit_length()
    return e if (p << max(-e, 0)) >= (q << max(e, 0)) else e - 1


def _dyadic_round(x: Fraction, exp2: int) -> Fraction:
    """x rounded to the nearest multiple of 2^exp2."""
    step = Fraction(2) ** exp2
    return round(x / step) * step


def _arb(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


def _arb_matrix(m: _Scaled, scale: Fraction) -> flint.arb_mat:
    """The ball matrix of m·scale at the context's precision (entries rounded once, radii included)."""
    return flint.arb_mat(m.ints) * _arb(m.scale * scale)




def _mid_rad(x: flint.arb) -> tuple[int, int, Fraction]:
    """(man, exp, radius) of a ball: its midpoint man·2^exp and an upper bound on its radius."""
    man, exp = (int(v) for v in x.mid().man_exp())
    return man, exp, radius_fraction(x)


@dataclass(frozen=True)
class RitzPencil:
    """Ritz values of a basis and, when K's Gram was given, the residual bound.

    Attributes
    ----------
    values : list of (Fraction, Fraction)
        Enclosures of the eigenvalues of the pencil (sym H, G), descending.
    residual_gram : _Scaled or None
        T = (K − VC)ᵀ(K − VC) for the C of the module docstring, exact (None without Q): T ⪰ K̃ᵀK̃ for
        K̃ = (I − P_V)K, and T − K̃ᵀK̃ = (G⁻¹H − C)ᵀG(G⁻¹H − C) has norm ≤ ``excess``.
    excess : Fraction
        ≥ ‖G‖₂‖G⁻¹H − C‖_F² (0 where C = G⁻¹H exactly).
    """

    values: list | None
    residual_gram: _Scaled | None = None
    excess: Fraction = Fraction(0)

    @property
    def residual2(self) -> Fraction:
        """‖K − VC‖_F² = tr T ≥ ‖(I − P_V)K‖_F²."""
        return self.residual_gram.trace()


def ritz_pencil(gram, cross, *, prec: int, square=None, values: bool = True,
                excess_bits: int = _EXCESS_BITS) -> RitzPencil | None:
    """Enclose the Ritz values of span V (and bound ‖(I − P_V)K‖_F² when ``square`` is given).

    Parameters
    ----------
    gram, cross : Dyadic or flint.fmpq_mat, shape (g, g)
        Exact G = VᵀV (positive definite) and H = VᵀK (symmetrised for the Ritz values; as is for the residual,
        where it may be g×q: K of q columns, and the residual is then not shifted).
    prec : int
        Bits of the enclosures relative to the Ritz values' spread (Arb works at ``prec + 64`` and more).
    square : Dyadic or flint.fmpq_mat, shape (q, q), optional
        Exact Q = KᵀK.
    values : bool
        False: the residual bound alone (``RitzPencil.values`` is None; no eigensolver).
    excess_bits : int
        The working precision is raised (at most :data:`_MAX_ROUNDS` times) until ``excess`` ≤ 2^-excess_bits of
        the residual bound: 20 where ‖(I − P_V)K‖_F enters a bound, more where T is itself the result.

    Returns
    -------
    RitzPencil or None
        None when Arb cannot enclose the eigenvalues or G is numerically singular at the working precision.

    Raises
    ------
    InternalCheckFailed
        The exact ‖K − VC‖_F² is negative (the products are not those of one V and one K).
    """
    G, H = _Scaled.of(gram), _Scaled.of(cross)
    Q = None if square is None else _Scaled.of(square)
    g, q = G.ints.nrows(), H.ints.ncols()  # H may be g×q (K of q columns) for the residual alone
    want, values, c = values, None, Fraction(0)
    blocks = [None]
    if g == q:  # the shift, also for the residual alone: C − cI is cluster-sized
        sym = _combination([(Fraction(1, 2), H), (Fraction(1, 2), _Scaled(H.ints.transpose(), H.scale))])
        mean = sym.trace() / G.trace()  # the mean Ritz value to within ω‖sym H − mean·G‖
        near = _combination([(Fraction(1), sym), (-mean, G)]).max_abs()
        c = _dyadic_round(mean, floor_log2(near) - prec - _GUARD) if near else mean
        blocks = [_combination([(Fraction(1), sym), (-c, G)])]
        if want and not near:  # sym H = mean·G exactly
            values = [(mean, mean)] * g
    if Q is not None:
        blocks.append(_combination([(Fraction(1), H), (-c, G)]) if c else H)
    units = [Fraction(2) ** floor_log2(b.max_abs()) if b is not None and b.max_abs() else None for b in blocks]
    if Q is None and (values is not None or not want):
        return RitzPencil(values, None)
    if Q is not None and units[1] is None:  # H = cG exactly: C = cI is G⁻¹H
        exact = _combination([(c, _identity(g))]) if c else _Scaled(flint.fmpz_mat(g, q), Fraction(1))
        return RitzPencil(values, _residual(G, H, Q, exact))
    if want and values is None:
        values = _ritz_values(G, blocks[0], units[0], c, prec)
        if values is None:
            return None
    if Q is None:
        return RitzPencil(values, None)
    wp = prec + _GUARD
    for _ in range(_MAX_ROUNDS + 1):
        with flint.ctx.workprec(wp):
            try:
                x = _arb_matrix(G, Fraction(1)).solve(_arb_matrix(blocks[1], 1 / units[1]))  # entries ~1
            except ZeroDivisionError:
                return None
            mids = [_mid_rad(x[i, k]) for i in range(g) for k in range(q)]
        C, err2 = _rounded(mids, (g, q), wp, c, units[1])
        gram = _residual(G, H, Q, C)
        residual2, excess = gram.trace(), _frobenius_up(G) * err2  # excess ≥ ‖V(G⁻¹H − C)‖_F²
        if excess <= residual2 / 2 ** excess_bits:
            break
        wp += max(32, (floor_log2(excess / residual2) + excess_bits) // 2 + 32) if residual2 else wp
    return RitzPencil(values, gram, excess)


def _ritz_values(G: _Scaled, shifted: _Scaled, unit: Fraction, c: Fraction, prec: int):
    """Enclosures (descending) of the eigenvalues of G⁻¹·shifted, plus c, at ``prec + 64`` bits, or twice or four
    times that where they come out wider than 2^-prec of the shifted entries (Arb's eigenvector step can fail a
    simple eigenvalue beside an exact double one: 2^-8 of the spread at 256 bits, 2^-1000 at 1024); None if Arb
    encloses none of them."""
    wp, values = prec + _GUARD, None
    for _ in range(_EIG_DOUBLINGS + 1):
        with flint.ctx.workprec(wp):
            try:
                x = _arb_matrix(G, Fraction(1)).solve(_arb_matrix(shifted, 1 / unit))  # entries ~1
            except ZeroDivisionError:
                return values
            found = _eigenvalues(x, c, unit)
        values = found or values
        if found is not None and max(hi - lo for lo, hi in found) <= unit / 2 ** prec:
            break
        wp *= 2
    return values


def _rounded(mids, shape: tuple, wp: int, c: Fraction, unit: Fraction) -> tuple[_Scaled, Fraction]:
    """C = cI + unit·(the midpoints on a grid wp bits below the largest) and a bound on ‖G⁻¹H − C‖_F²."""
    top = max((abs(m).bit_length() + e for m, e, _ in mids if m), default=0)
    grid = top - wp
    ints, err2 = [], Fraction(0)
    half = Fraction(2) ** (grid - 1)
    for man, exp, rad in mids:
        if exp >= grid:
            ints.append(man << (exp - grid))
            err2 += rad * rad
        else:
            shift = grid - exp
            ints.append((man + (1 << (shift - 1))) >> shift)  # nearest: within half a grid step
            err2 += (rad + half) ** 2
    rounded = _Scaled(flint.fmpz_mat(*shape, ints), Fraction(2) ** grid * unit)
    if not c:
        return rounded, err2 * unit * unit
    return _combination([(c, _identity(shape[0])), (Fraction(1), rounded)]), err2 * unit * unit


def _eigenvalues(x: flint.arb_mat, c: Fraction, unscale: Fraction):
    """Enclosures (descending) of the eigenvalues of x, times ``unscale``, plus c."""
    try:
        eig = flint.acb_mat(x).eig(multiple=True)
    except ValueError:
        return None
    ends = [ends_fraction(z.real) for z in eig]
    lows = sorted((a * unscale + c for a, _ in ends), reverse=True)
    highs = sorted((b * unscale + c for _, b in ends), reverse=True)
    return list(zip(lows, highs))


def _residual(G: _Scaled, H: _Scaled, Q: _Scaled, C: _Scaled) -> _Scaled:
    """(K − VC)ᵀ(K − VC) = Q − HᵀC − CᵀH + CᵀGC, exact (integer products on the common scales)."""
    hc = _Scaled(H.ints.transpose() * C.ints, H.scale * C.scale)
    cgc = _Scaled(C.ints.transpose() * (G.ints * C.ints), G.scale * C.scale ** 2)
    gram = _combination([(Fraction(1), Q), (Fraction(-1), hc), (Fraction(-1), _Scaled(hc.ints.transpose(), hc.scale)),
                         (Fraction(1), cgc)])
    if gram.trace() < 0:
        raise InternalCheckFailed(f"negative squared residual {float(gram.trace()):.3g}: the products are not exact")
    return gram


def _frobenius_up(m: _Scaled) -> Fraction:
    """An upper bound on ‖m‖_F (≥ ‖m‖₂)."""
    total = sum((int(v) ** 2 for v in m.ints.entries()), 0)
    return Fraction(math.isqrt(total) + 1) * m.scale


def gram_lower_bound(gram) -> Fraction:
    """A lower bound on λ_min(G) for an exact symmetric G: 1 − ‖G − I‖_F where that is positive (G ≈ I), else
    Arb's enclosure of G's eigenvalues (0 if Arb cannot isolate them).

    Parameters
    ----------
    gram : Dyadic or flint.fmpq_mat, shape (g, g)
    """
    G = _Scaled.of(gram)
    identity = _identity(G.ints.nrows())
    omega = _frobenius_up(_combination([(Fraction(1), G), (Fraction(-1), identity)]))
    if omega < 1:
        return 1 - omega
    found = ritz_pencil(identity, G, prec=_GUARD)
    return max(found.values[-1][0], Fraction(0)) if found is not None else Fraction(0)


def ritz_enclosures(C: flint.fmpq_mat, prec: int):
    """Enclosures (descending) of the eigenvalues of a symmetric exact C (the pencil (C, I)); None if Arb cannot
    enclose them."""
    found = ritz_pencil(_identity(C.nrows()), C, prec=prec)
    return None if found is None else found.values


__all__ = ["RitzPencil", "floor_log2", "gram_lower_bound", "ritz_enclosures", "ritz_pencil"]
