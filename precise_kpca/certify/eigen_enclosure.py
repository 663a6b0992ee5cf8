"""Rigorous a-posteriori enclosures of a float64 symmetric eigensystem from a few exact products.

Certifying eigen measures at N in the thousands by a second, high-precision eigensystem costs O(N³) in
multiprecision. Here the float64 eigensystem ``(λ̂, X̂)`` itself is certified: everything below follows from
two N×N Ozaki products (``P = A_hp X̂`` exact, ``G = X̂ᵀX̂`` to 2⁻⁸⁰ with a rigorous error bound;
:mod:`precise_kpca.arith.ozaki`, float64 BLAS underneath), three exact column dot products (``‖x̂ᵢ‖²``,
``x̂ᵢᵀPᵢ``, ``‖Pᵢ‖²``) and a few float64 GEMMs with a-priori error bounds (spectral norms of R and G − I).

Setting. The exact symmetric ``A`` (N×N) is known as ``A_hp`` (exact fixed point, symmetric) with
``‖A − A_hp‖_F ≤ delta``. All bounds are first proven for ``A_hp`` and then moved to ``A`` by Weyl
(``|λᵢ(A) − λᵢ(A_hp)| ≤ ‖A − A_hp‖₂ ≤ delta``); eigenvalues are indexed in descending order. ``X̂`` is the
matrix actually multiplied (the float64 vectors, exact in fixed point unless they need more than
``max_vector_bits`` bits; any rounding ``F`` is carried into the subspace bounds).

Exact quantities (python integers / ``Fraction``): with ``rᵢ = A_hp x̂ᵢ − λ̂ᵢ x̂ᵢ``,
``‖rᵢ‖² = ‖Pᵢ‖² − 2λ̂ᵢ x̂ᵢᵀPᵢ + λ̂ᵢ²‖x̂ᵢ‖²`` and the Rayleigh quotient ``θᵢ = x̂ᵢᵀPᵢ / ‖x̂ᵢ‖²`` are exact
rationals; the residual of the normalised vector at its Rayleigh quotient is
``εᵢ² = (‖rᵢ‖² − (θᵢ − λ̂ᵢ)²‖x̂ᵢ‖²) / ‖x̂ᵢ‖²``, also exact. ``R = A_hp X̂ − X̂Λ̂`` itself is formed as an exact
fixed-point difference (``X̂Λ̂`` from Dekker's exact two-product words) and read out in float64 with a bound on
the read-out error; its spectral norm, and ω ≥ ‖X̂ᵀX̂ − I‖₂, are bounded by Schatten norms
``‖M‖₂ ≤ ‖(MᵀM)ᵀ(MᵀM)‖_F^{1/4}`` (float64 GEMMs, error ≤ γ_n|M|ᵀ|M| entrywise): a factor ~N^{1/8} above the
spectral norm instead of the Frobenius norm's ~N^{1/2}.

Theorems used (each implemented once, in :mod:`precise_kpca.numerics.theorems`):

1. *Weyl*: ``|λᵢ(M) − λᵢ(M')| ≤ ‖M − M'‖₂`` for symmetric M, M' (eigenvalues sorted alike).
2. *Global enclosure* (Weyl after an exactly orthogonal similarity; sharper than Ostrowski + Weyl on
   ``X̂ᵀA X̂ − Λ̂ = (X̂ᵀX̂ − I)Λ̂ + X̂ᵀR``, which costs ``ω max|λ̂| + ω|λᵢ|``): with ``G = X̂ᵀX̂``,
   ``ω ≥ ‖G − I‖₂ < 1`` and ``W = X̂G^{-1/2}`` (orthonormal), ``WᵀA_hp W`` has A_hp's eigenvalues and
   ``WᵀA_hp W − Λ̂ = WᵀR G^{-1/2} + [S, Λ̂] G^{-1/2}`` with ``S = G^{1/2} − I``, ``‖S‖₂ ≤ s = 1 − √(1 − ω)``
   and ``‖[S, Λ̂]‖₂ ≤ ‖S‖₂ (λ̂₁ − λ̂_N)`` (shift Λ̂ by its midpoint). Hence every
   ``|λᵢ(A_hp) − λ̂ᵢ| ≤ ρ = (‖R‖₂ + s (λ̂₁ − λ̂_N)) / √(1 − ω)``, width ~ ``‖R‖₂ + ω‖A‖/2``
   (the difference of the two symmetric matrices is symmetric, so Weyl applies).
3. *Kato–Temple* (Kato 1949; Parlett, The Symmetric Eigenvalue Problem, Thm 10.5.1): for a unit u with
   Rayleigh quotient θ and residual ε = ‖(A − θ)u‖, if ``α < θ < β`` and the eigenvalue λ is the only one
   of A in ``(α, β)`` (all others ≤ α or ≥ β), then ``θ − ε²/(β − θ) ≤ λ ≤ θ + ε²/(θ − α)``. Used for
   eigenvalues isolated by the global enclosures: ``α = hiᵢ₊₁``, ``β = loᵢ₋₁`` (±∞ at the ends).
4. *Quadratic residual bound for blocks* (Li & Li, LAA 395 (2005) 183–190, sharpening Mathias, SIMAX 19
   (1998)): for symmetric ``[[H₁, Eᵀ], [E, H₂]]`` and ``η = min |λ(H₁) − λ(H₂)| > 0``, the sorted
   eigenvalues satisfy ``|λⱼ − λⱼ(diag(H₁, H₂))| ≤ 2‖E‖² / (η + √(η² + 4‖E‖²))``. For a run J = [s, t) of
   eigenvalues whose global enclosures overlap each other but no others, take U = Y M^{-1/2}
   (``Y = X̂_J``, ``M = YᵀY``), ``H₁ = UᵀA_hp U`` (eigenvalues μ: the Ritz values, i.e. those of
   ``M⁻¹YᵀA_hp Y``, enclosed with Arb), ``‖E‖ = ‖(I − UUᵀ)A_hp U‖ ≤ ‖R_J‖₂ / σ_min(Y) =: ε`` (any
   ``AU − UK`` bounds it; K = M^{1/2}Λ̂_J M^{-1/2} gives ``R_J M^{-1/2}``). By Weyl the eigenvalues of
   ``diag(H₁, H₂)`` are within ε of A_hp's, so if every μ lies in ``(hi_t + ε, lo_{s−1} − ε)`` the μ fill
   exactly the positions J and ``η ≥ min_μ dist(μ, outside that interval)``.
5. *Davis–Kahan sin Θ* (Davis & Kahan 1970; Bhatia, Matrix Analysis, §VII.3, in its Sylvester-equation
   form ``‖Z‖ ≤ ‖ΛZ − ZK‖/δ`` for Hermitian Λ, K with spectra separated by an interval and δ): for
   symmetric A and diagonal ``Λ̂_J`` with eigenvalues in ``[a, b]``, and the
   eigenvalues of A outside J in ``ℝ \\ (a − δ, b + δ)``, the complementary eigenvectors satisfy
   ``‖V_⊥ᵀY‖₂ ≤ ‖AY − YΛ̂_J‖₂ / δ``. Principal angles depend on the span only:
   ``‖sin Θ(span Y, span V_J)‖₂ = ‖V_⊥ᵀY M^{-1/2}‖₂ ≤ (‖R_J‖₂ + delta√(1+ω)) / (σ_min(Y) δ)``, with
   ``σ_min(Y)² ≥ 1 − ω`` (Cauchy interlacing on G).

Rounding: every scalar step is exact rational arithmetic (``Fraction``, python integers) or an explicit
directed rounding (:mod:`precise_kpca.arith.rounding`: square roots rounded up/down via ``isqrt``; results
rounded outward to ``prec``-bit mpf). float64 enters only through explicit a-priori bounds: faithful read-outs
of G and R (≤ 2 ulp per entry, plus digits flushed below 2⁻¹⁰⁷⁴), Frobenius norms (relative error ≤ (n + 4)·2⁻⁵¹
for n squares, covered by a round-up margin) and GEMMs (``|fl(MᵀM) − MᵀM| ≤ γ_n|M|ᵀ|M|`` for any summation order, with or
without FMA; BLAS dgemm uses no Strassen-type algorithm). Ritz values of blocks are enclosed by Arb
(python-flint ``acb_mat.eig``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction

import flint
import mpmath
import numpy as np
from mpmath import libmp

from ..arith import ozaki
from ..arith.dyadic import Dyadic
from ..arith.eft import two_product
from ..arith.fixed import FixedMatrix, digit_bits_for
from ..arith.rounding import float_down, float_up, frobenius_up, spectral_up, sqrt_down, sqrt_up
from ..backends.base import as_fraction
from ..errors import InternalCheckFailed
from ..numerics import theorems
from .ritz import gram_lower_bound, ritz_pencil

__all__ = ["EigenEnclosure", "GroupBound", "enclose_eigensystem"]

_MAX_K = 10
_COLUMN_BLOCK = 512  # columns of R formed at a time
_GRAM_BITS = 80  # X̂ᵀX̂ to 2**-80: its rounding adds ~N·2**-81 to ω ~ 1e-14, and saves half of its GEMMs
_PRODUCT_BITS = 128  # grid of X̂Λ̂ below its largest entry: rounding ~2**-129 ‖A‖, far below the residual


@dataclass(frozen=True)
class GroupBound:
    """Davis–Kahan bound for one index group ``[start, stop)``.

    Attributes
    ----------
    start, stop : int
    sin_theta : float or None
        Upper bound on ``‖sin Θ(span X̂[:, start:stop], V)‖₂`` (V: A's invariant subspace of eigenvalues
        ``start..stop-1``), rounded up; None when nothing below 1 can be proven (see ``reason``).
    gap : float or None
        Lower bound on the separation δ of ``λ̂[start:stop]`` from A's other eigenvalues (rounded down);
        None when the enclosures do not separate them.
    residual : float
        Upper bound on ``‖A X̂_J − X̂_J Λ̂_J‖₂`` (rounded up).
    reason : str
        Empty when ``sin_theta`` is a bound, else why there is none.
    """

    start: int
    stop: int
    sin_theta: float | None
    gap: float | None
    residual: float
    reason: str = ""


@dataclass(frozen=True)
class EigenEnclosure:
    """Rigorous enclosures of the eigenvalues of A and of the top eigenvector groups.

    Per-vector quantities refer to X̂ as read (X̂ itself unless ``max_vector_bits`` rounded it).

    Attributes
    ----------
    lower, upper : ndarray of mpmath mpf, shape (N,)
        ``lower[i] ≤ λᵢ(A) ≤ upper[i]``, eigenvalues descending; ``prec``-bit mpf rounded outward.
    method : tuple of str, length N
        Bound used per eigenvalue: ``"global"`` (theorem 2), ``"kato-temple"`` or ``"block"``
        (Rayleigh–Ritz with the Li–Li quadratic bound).
    rayleigh : ndarray of mpmath mpf, shape (N,)
        Rayleigh quotients ``x̂ᵢᵀA_hp x̂ᵢ / x̂ᵢᵀx̂ᵢ`` rounded to nearest (|θᵢ(A) − θᵢ(A_hp)| ≤ delta).
    rayleigh_residuals : ndarray of float, shape (N,)
        Upper bounds on ``‖(A − θᵢ) uᵢ‖₂``, ``uᵢ = x̂ᵢ / ‖x̂ᵢ‖`` (exact for A_hp, + delta).
    residual_norms : ndarray of float, shape (N,)
        Upper bounds on ``‖A x̂ᵢ − λ̂ᵢ x̂ᵢ‖₂``.
    residual_frobenius : float
        Upper bound on ``‖A X̂ − X̂ Λ̂‖_F``.
    residual_spectral : float
        Upper bound on ``‖A X̂ − X̂ Λ̂‖₂``.
    omega : float
        Upper bound on ``‖X̂ᵀX̂ − I‖₂``.
    global_radius : float
        ρ: ``|λᵢ(A_hp) − λ̂ᵢ| ≤ ρ`` for every i (theorem 2, before delta).
    delta : float
        The given bound on ``‖A − A_hp‖_F``.
    groups : tuple of GroupBound
    norm_bounds : tuple of float
        ``(lo, hi)`` with ``lo ≤ ‖A‖₂ ≤ hi``.
    k : int
    seconds : dict
        Wall time of the products and of the bounds.
    """

    lower: np.ndarray
    upper: np.ndarray
    method: tuple
    rayleigh: np.ndarray
    rayleigh_residuals: np.ndarray
    residual_norms: np.ndarray
    residual_frobenius: float
    residual_spectral: float
    omega: float
    global_radius: float
    delta: float
    groups: tuple
    norm_bounds: tuple
    k: int
    seconds: dict = field(default_factory=dict)

    def radii(self) -> np.ndarray:
        """Half-widths ``(upper − lower) / 2``, shape (N,), rounded up to float."""
        return np.array([float_up((Fraction(*_mpf_ratio(h)) - Fraction(*_mpf_ratio(lo))) / 2)
                         for lo, h in zip(self.lower, self.upper)])

    @property
    def digits_relative_to_norm(self) -> dict:
        """Certified digits ``−log10(radius / ‖A‖₂)`` (with the lower bound of ‖A‖₂): min over all N
        eigenvalues, over the top k, and the median."""
        norm = self.norm_bounds[0]
        digits = -np.log10(np.maximum(self.radii(), 1e-300) / norm) if norm > 0 else np.zeros(len(self.lower))
        return {"all": float(np.min(digits)), "top_k": float(np.min(digits[: self.k])),
                "median": float(np.median(digits))}

    def ball(self, i: int) -> flint.arb:
        """Enclosure of λᵢ(A) as an Arb ball containing ``[lower[i], upper[i]]`` (compare or print it at a
        working precision of ~``prec`` bits: at 53 bits a rational converts to a ball wider than this one)."""
        ends = (self.lower[i], self.upper[i])
        with flint.ctx.workprec(max(v._mpf_[3] for v in ends) + 2):  # the dyadic endpoints convert exactly
            lo, hi = (flint.arb(flint.fmpq(*_mpf_ratio(v))) for v in ends)
            return lo.union(hi)


def enclose_eigensystem(A_hp, delta, values, vectors, *, k: int, groups=None, max_vector_bits: int | None = None,
                        max_block: int = 16, prec: int = 160) -> EigenEnclosure:
    """Certify a float64 eigensystem of the symmetric matrix A known as ``A_hp`` ± ``delta``.

    Parameters
    ----------
    A_hp : FixedMatrix, shape (N, N)
        Exactly symmetric fixed-point matrix; its value is used as is (``A_hp.error_bound``, the rounding of
        its construction, is the caller's to include in ``delta``).
    delta : float, int or Fraction
        Non-negative bound on ``‖A − A_hp‖_F`` for the exact symmetric A.
    values : ndarray of float64, shape (N,)
        Approximate eigenvalues λ̂, descending.
    vectors : ndarray of float64, shape (N, N)
        Approximate orthonormal eigenvectors X̂ as columns (e.g. from ``numpy.linalg.eigh``, reordered).
    k : int
        Number of top eigenvectors the caller uses (1 ≤ k ≤ min(10, N)).
    groups : sequence of (start, stop), optional
        Index groups among the top k whose invariant subspaces are bounded (default: each of the top k).
    max_vector_bits : int, optional
        Fixed-point bits kept for X̂ below its largest entry (default: three Ozaki digits, ≥ 63 bits). X̂ is read
        exactly when it fits; otherwise the certified basis is X̂ rounded to that grid (the eigenvalue bounds do
        not depend on the basis, the subspace bounds carry the difference).
    max_block : int
        Largest run of overlapping global enclosures given the block (Rayleigh–Ritz) bound.
    prec : int
        Bits of the mpf endpoints (rounded outward) and of the Arb arithmetic for Ritz values.

    Returns
    -------
    EigenEnclosure

    Raises
    ------
    TypeError, ValueError
        Malformed input (shapes, order, non-finite or non-float64 values, asymmetric A_hp, bad k or groups) or
        vectors too far from orthonormal (ω ≥ 1) for any bound.

    Notes
    -----
    Cost: the Ozaki products ``A_hp X̂`` (exact) and ``X̂ᵀX̂`` (to 2⁻⁸⁰), at most (digits of A_hp + digits of
    X̂)·(digits of X̂) float64 N×N GEMMs (24 for a 120-bit A_hp at N = 2000), plus O(N²) work and a few
    float64 GEMMs for the norms. Eigenvalue enclosures hold for all N eigenvalues; widths are ~ε²/gap (Kato–Temple,
    block) where the global enclosures isolate a run of at most ``max_block`` eigenvalues, else ρ + delta.
    """
    start_time = time.perf_counter()
    values, vectors, delta, k, groups = _validate(A_hp, delta, values, vectors, k, groups)
    if max_vector_bits is None:
        # a fourth digit would cost a third more GEMMs for entries below 2**-10 of the largest, whose rounding
        # at 2**-63 is far below the residuals
        max_vector_bits = 3 * digit_bits_for(len(values))
    p = _products(A_hp, values, vectors, max_vector_bits)
    products = time.perf_counter()
    enc = _bounds(A_hp, p, Fraction(delta), k, groups, max_block, prec)
    return replace(enc, seconds={"products": products - start_time, "bounds": time.perf_counter() - products})


@dataclass(frozen=True)
class _Products:
    """What the bounds read of the products (step 1 of :func:`enclose_eigensystem`): X̂ as multiplied (exact fixed
    point), F = X̂ − X, the exact column dots ‖x̂ᵢ‖², x̂ᵢᵀPᵢ, ‖Pᵢ‖² (P = A_hp X̂), ω ≥ ‖X̂ᵀX̂ − I‖₂, the float64
    residual R̃ with ‖R − R̃‖_F ≤ r_err, and λ̂ exactly."""

    X: FixedMatrix
    F: np.ndarray
    xx: list
    xp: list
    pp: list
    omega: float
    R: np.ndarray
    r_err: Fraction
    lam: list


def _products(A_hp, values, vectors, max_vector_bits: int) -> _Products:
    """The Ozaki products ``X̂ᵀX̂`` and ``A_hp X̂`` and what the bounds read of them (module docstring)."""
    X = FixedMatrix.from_float64(vectors, bits=min(_exact_bits(vectors), max_vector_bits))
    # A float64 rounded to a coarser grid is a float64 again, so to_float64 (faithful) returns it exactly;
    # F = X̂ − (what was multiplied) is then exact too (a float minus its rounding to a coarser grid).
    F = vectors - X.to_float64() if X.error_bound else np.zeros_like(vectors)
    X = replace(X, error_bound=0.0)  # its value is the certified basis: products must not inherit F as error
    xx = _fractions(*ozaki.column_dots(X, X))
    omega = _omega(ozaki.matmul(X.T, X, bits=_GRAM_BITS), xx)
    if not omega < 1:
        raise ValueError(f"the vectors are far from orthonormal (‖X̂ᵀX̂ − I‖₂ ≤ {omega:.3g} is not < 1)")
    P = ozaki.matmul(A_hp, X)
    xp = _fractions(*ozaki.column_dots(X, P))
    pp = _fractions(*ozaki.column_dots(P, P))
    R, r_err = _residual_matrix(P, X, vectors - F, values)
    return _Products(X=X, F=F, xx=xx, xp=xp, pp=pp, omega=omega, R=R, r_err=r_err,
                     lam=[Fraction(float(v)) for v in values])


def _bounds(A_hp, p: _Products, d: Fraction, k: int, groups, max_block: int, prec: int) -> EigenEnclosure:
    """Theorems 1–5 of the module docstring on the exact scalars of the products (``seconds`` left empty)."""
    n, lam, xx, om = len(p.lam), p.lam, p.xx, Fraction(p.omega)
    rr = [q - 2 * lv * r + lv * lv * x for q, r, x, lv in zip(p.pp, p.xp, xx, lam)]  # ‖rᵢ‖², exact
    if min(rr) < 0:
        raise InternalCheckFailed("negative squared residual: the products are not exact")
    theta = [q / x for q, x in zip(p.xp, xx)]
    eps2 = [(r - (t - lv) ** 2 * x) / x for r, t, lv, x in zip(rr, theta, lam, xx)]

    def residual_norm(s, t):  # ‖A_hp X̂_J − X̂_J Λ̂_J‖₂ ≤ min(exact Frobenius, spectral bound of the float64 R)
        return min(sqrt_up(sum(rr[s:t])), spectral_up(p.R[:, s:t], p.r_err, levels=1))

    residual_all = residual_norm(0, n)
    rho = theorems.global_radius(residual_all, om, lam[0] - lam[-1])
    new_lo, new_hi, method = _quadratic_bounds(
        A_hp, p.X, [v - rho for v in lam], [v + rho for v in lam], theta, eps2, residual_norm, om, max_block, prec
    )
    lo_a, hi_a = (list(ends) for ends in zip(*(theorems.weyl(lo, hi, d) for lo, hi in zip(new_lo, new_hi))))
    group_bounds = tuple(_davis_kahan(s, t, lam, residual_norm(s, t), om, d, lo_a, hi_a, p.F) for s, t in groups)
    return EigenEnclosure(
        lower=np.array([_mpf(v, prec, libmp.round_floor) for v in lo_a], dtype=object),
        upper=np.array([_mpf(v, prec, libmp.round_ceiling) for v in hi_a], dtype=object),
        method=tuple(method),
        rayleigh=np.array([_mpf(t, prec, libmp.round_nearest) for t in theta], dtype=object),
        rayleigh_residuals=np.array([float_up(sqrt_up(e) + d) for e in eps2]),
        residual_norms=np.array([float_up(sqrt_up(r) + d * sqrt_up(x)) for r, x in zip(rr, xx)]),
        residual_frobenius=float_up(sqrt_up(sum(rr)) + d * sqrt_up(1 + om) * sqrt_up(Fraction(n))),
        residual_spectral=float_up(residual_all + d * sqrt_up(1 + om)),
        omega=p.omega,
        global_radius=float_up(rho),
        delta=float_up(d),
        groups=group_bounds,
        norm_bounds=(float_down(max(lo_a[0], -hi_a[-1], Fraction(0))), float_up(max(hi_a[0], -lo_a[-1]))),
        k=k,
    )


# -- validation -------------------------------------------------------------------------------------------
def _validate(A_hp, delta, values, vectors, k, groups):
    if not isinstance(A_hp, FixedMatrix):
        raise TypeError(f"A_hp must be an FixedMatrix, got {type(A_hp).__name__}")
    values = np.asarray(values)
    vectors = np.asarray(vectors)
    if values.dtype != np.float64 or vectors.dtype != np.float64:
        raise TypeError("values and vectors must be float64 arrays (they are read as exact binary numbers)")
    if values.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {values.shape}")
    n = len(values)
    if n == 0:
        raise ValueError("the eigensystem is empty")
    if tuple(A_hp.shape) != (n, n) or vectors.shape != (n, n):
        raise ValueError(f"shapes disagree: A_hp {tuple(A_hp.shape)}, values ({n},), vectors {vectors.shape}; "
                         "expected (N, N), (N,), (N, N)")
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(vectors))):
        raise ValueError("values and vectors must be finite")
    if np.max(np.abs(values)) >= 2.0**900:
        raise ValueError("values must be below 2**900 in magnitude (exact two-products of X̂Λ̂ in float64)")
    if np.any(np.diff(values) > 0):
        raise ValueError("values must be sorted in descending order (with the vectors' columns alike)")
    if isinstance(delta, bool) or not isinstance(delta, (int, float, Fraction, np.floating, np.integer)):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    if not (math.isfinite(delta) and delta >= 0):
        raise ValueError(f"delta must be finite and non-negative, got {delta!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= min(_MAX_K, n):
        raise ValueError(f"k must be an integer from 1 to min({_MAX_K}, N={n}), got {k!r}")
    k = int(k)
    groups = [(i, i + 1) for i in range(k)] if groups is None else [tuple(int(v) for v in g) for g in groups]
    for g in groups:
        if len(g) != 2 or not 0 <= g[0] < g[1] <= k:
            raise ValueError(f"group {g} must be (start, stop) with 0 <= start < stop <= k={k}")
    if not _is_symmetric(A_hp):
        raise ValueError("A_hp must be exactly symmetric")
    return values, vectors, delta, k, groups


def _is_symmetric(A_hp) -> bool:
    digits = A_hp.digits
    # equal digits are equal values; unequal digits may still be one value (non-canonical digits): decide exactly
    return np.array_equal(digits, digits.transpose(0, 2, 1)) or not (A_hp - A_hp.T).digits.any()


def _exact_bits(a: np.ndarray) -> int:
    """Grid bits for ``FixedMatrix.from_float64`` that hold every entry of the float64 array exactly."""
    nz = a[a != 0]
    if nz.size == 0:
        return 1
    mant, ex = np.frexp(nz)  # nz = mant * 2**ex, 1/2 <= |mant| < 1
    m = np.abs(np.ldexp(mant, 53)).astype(np.int64)
    trailing = np.frexp((m & -m).astype(np.float64))[1] - 1
    lowest = ex - 53 + trailing  # exponent of each entry's lowest set bit
    f, t = math.frexp(float(np.max(np.abs(nz))))
    top = t if f == 0.5 else t + 1  # from_float64's exponent: the least e with max|a| <= 2**(e-1)
    return int(top - np.min(lowest))


# -- exact scalars ----------------------------------------------------------------------------------------
def _fractions(ints, exp2) -> list:
    scale = Fraction(2) ** exp2
    return [int(v) * scale for v in ints]


def _mpf(x: Fraction, prec: int, rounding):
    return mpmath.mp.make_mpf(libmp.from_rational(x.numerator, x.denominator, prec, rounding))


def _mpf_ratio(v) -> tuple[int, int]:
    sign, man, exp, _ = v._mpf_
    man = -int(man) if sign else int(man)
    return (man << exp, 1) if exp >= 0 else (man, 1 << -exp)


# -- bounds -----------------------------------------------------------------------------------------------
def _omega(G, xx) -> float:
    """ω ≥ ‖X̂ᵀX̂ − I‖₂ from G = X̂ᵀX̂ rounded with a rigorous ``error_bound``; the diagonal Gᵢᵢ − 1 comes from
    the exact column dots."""
    E = G.to_float64()
    np.fill_diagonal(E, [float(x - 1) for x in xx])
    # G's rounding, the faithful read-out (≤ 2 ulp per entry) and digits flushed below 2**-1074
    err = (Fraction(frobenius_up(E)) * Fraction(2) ** -51
           + E.shape[0] * (Fraction(G.error_bound) + Fraction(2) ** -1060))
    return float_up(spectral_up(E, err, levels=2))


def _residual_matrix(P, X, x, values):
    """float64 R̃ ≈ R = A_hp X̂ − X̂ Λ̂ and a bound on ‖R − R̃‖_F, in column blocks (memory ~ a few N × 512).

    X̂Λ̂ enters as Dekker's exact two-product words (error ≤ 2**-1071 per entry, from underflow only), rounded
    once to a 128-bit grid by ``from_words`` (error recorded in its ``error_bound``); R is then an exact
    fixed-point difference, read out faithfully (≤ 2 ulp).
    """
    n = x.shape[0]
    out = np.empty_like(x)
    entry_err = Fraction(0)
    for start in range(0, n, _COLUMN_BLOCK):
        cols = np.arange(start, min(n, start + _COLUMN_BLOCK))
        hi, lo = two_product(x[:, cols], values[None, cols])
        XL = FixedMatrix.from_words([hi, lo], bits=_PRODUCT_BITS, digit_bits=P.digit_bits)
        out[:, cols] = (P.take_columns(cols) - XL).to_float64()
        entry_err = max(entry_err, Fraction(XL.error_bound))
    err = Fraction(frobenius_up(out)) * Fraction(2) ** -51 + n * (entry_err + Fraction(2) ** -1060)
    return out, err


def _quadratic_bounds(A_hp, X, lo, hi, theta, eps2, residual_norm, om, max_block, prec):
    """Sharpen the global enclosures ``[lo, hi]`` of A_hp's eigenvalues where they isolate runs: Kato–Temple for
    single eigenvalues, the Li–Li block bound for runs of at most ``max_block``. Returns (lo, hi, method)."""
    n = len(lo)
    new_lo, new_hi = list(lo), list(hi)
    method = ["global"] * n
    for s, t in theorems.overlap_runs(lo, hi):
        if t - s == 1:
            bound = theorems.kato_temple(theta[s], theta[s], eps2[s], hi[s + 1] if s + 1 < n else None,
                                         lo[s - 1] if s > 0 else None)
            bound = None if bound is None else [bound]
            tag = "kato-temple"
        elif t - s <= max_block:
            bound = _block(A_hp, X.take_columns(np.arange(s, t)), s, residual_norm(s, t), om, lo, hi, prec)
            tag = "block"
        else:
            continue
        if bound is None:
            continue
        for i, (b_lo, b_hi) in zip(range(s, t), bound):
            if b_lo > new_lo[i] or b_hi < new_hi[i]:
                new_lo[i], new_hi[i] = max(b_lo, new_lo[i]), min(b_hi, new_hi[i])
                method[i] = tag
            if new_lo[i] > new_hi[i]:  # two rigorous enclosures of one eigenvalue cannot be disjoint
                raise InternalCheckFailed(f"empty enclosure of eigenvalue {i}: A_hp is not symmetric or a bound is wrong")
    return new_lo, new_hi, method


def _block(A_hp, Y, s, residual, om, lo, hi, prec):
    """Li–Li bound around the Ritz values of span Y = X̂[:, s:t]; None when they are not separated."""
    n, t = len(lo), s + Y.shape[1]
    H = Dyadic.from_fixed(ozaki.matmul(Y.T, ozaki.matmul(A_hp, Y)))
    M = Dyadic.from_fixed(ozaki.matmul(Y.T, Y))
    pencil = ritz_pencil(M, H, prec=prec)
    if pencil is None:
        return None
    eps = residual / sqrt_down(1 - om)  # ‖R_J‖₂ / σ_min(Y), σ_min(Y)² ≥ 1 − ω
    return theorems.li_li(pencil.values, eps, lo[s - 1] if s > 0 else None, hi[t] if t < n else None)


def ritz_subspace_sin_theta(G: flint.fmpq_mat, H: flint.fmpq_mat, Q: flint.fmpq_mat, delta, lower, upper,
                            start: int, stop: int, prec: int = 160) -> Fraction | None:
    """Davis–Kahan bound on ‖sin Θ‖₂ between span V (any basis, g = stop − start columns) and A's invariant
    subspace of eigenvalues start..stop−1, from exact g×g products.

    Parameters
    ----------
    G, H, Q : flint.fmpq_mat, shape (g, g)
        Exact VᵀV, VᵀP and PᵀP for P = A_hp V.
    delta : float or Fraction
        Bound on ‖A − A_hp‖₂.
    lower, upper : sequence, length N
        Enclosures of all of A's eigenvalues, descending (int, float, Fraction or mpf: read exactly).

    Returns
    -------
    Fraction or None
        ε/η with ε ≥ ‖A V_o − V_o (V_oᵀ A_hp V_o)‖₂ + delta (V_o = V G^{−1/2}: the residual of the Ritz pairs,
        (I − P_V) A_hp V G^{−1/2}, so ‖·‖_F² ≤ ‖(I − P_V) A_hp V‖_F² / λ_min(G) with λ_min(G) ≥ 1 − ‖G − I‖_F and
        the numerator bounded by :func:`.ritz.ritz_pencil` without an exact solve) and η the distance from the
        Ritz values' enclosures to the neighbouring eigenvalues' (``lower[start − 1]`` above, ``upper[stop]``
        below: the eigenvalues are sorted, so every other one lies beyond these); None if η ≤ 0, ε ≥ η or
        ‖G − I‖_F ≥ 1.
    """
    lam_min = gram_lower_bound(G)
    pencil = ritz_pencil(G, H, prec=prec, square=Q)
    if pencil is None or not lam_min > 0:
        return None
    ritz = pencil.values
    eps = sqrt_up(pencil.residual2 / lam_min) + Fraction(delta)
    eta = theorems.davis_kahan_gap(ritz[-1][0], ritz[0][1], as_fraction(lower[start - 1]) if start > 0 else None,
                                   as_fraction(upper[stop]) if stop < len(lower) else None)
    if eta is None:
        return Fraction(0)
    if eta <= 0 or eps >= eta:
        return None
    return theorems.sin_theta(eps, eta)


def fmpq_matrix(fixed) -> flint.fmpq_mat:
    ints, exp2 = fixed.to_integers()
    scale = flint.fmpq(2) ** exp2 if exp2 >= 0 else flint.fmpq(1, 2 ** -exp2)
    return flint.fmpq_mat(fixed.shape[0], fixed.shape[1], [flint.fmpq(int(v)) * scale for v in ints.ravel()])


def _davis_kahan(s, t, lam, residual_hp, om, d, lo_a, hi_a, F) -> GroupBound:
    n = len(lam)
    residual = residual_hp + d * sqrt_up(1 + om)  # ‖A X̂_J − X̂_J Λ̂_J‖₂ (‖X̂_J‖₂² ≤ 1 + ω)
    res_float = float_up(residual)
    gap = theorems.davis_kahan_gap(lam[t - 1], lam[s], lo_a[s - 1] if s > 0 else None, hi_a[t] if t < n else None)
    if gap is None:
        return GroupBound(s, t, 0.0, None, res_float, "")  # the whole space: no angle
    if gap <= 0:
        return GroupBound(s, t, None, None, res_float,
                          f"eigenvalues {s}..{t - 1} are not separated from the others by the enclosures")
    f = Fraction(frobenius_up(F[:, s:t]))
    denominator = sqrt_down(1 - om) - f
    sin = (theorems.sin_theta(residual, gap) + f) / denominator if denominator > 0 else None
    if sin is None or sin >= 1:
        return GroupBound(s, t, None, float_down(gap), res_float,
                          f"residual {res_float:.3g} is too large for the gap {float(gap):.3g} (bound ≥ 1)")
    return GroupBound(s, t, float_up(sin), float_down(gap), res_float, "")
