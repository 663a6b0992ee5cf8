"""Rigorous enclosures of a float64 symmetric eigensystem from float64 BLAS alone: O(N³) float64 work, no exact
N×N×N products.

:func:`~.eigen_enclosure.enclose_eigensystem` certifies a float64 eigensystem with exact (Ozaki) products: ~24
float64 GEMMs of N×N×N at N = 2000, tens of minutes at N = 5404. When the quantities needed are O(‖A‖)-sized (the
eigen measures below the structured range), eigenvalues known to ~N·u·‖A‖ suffice, and a-priori error bounds of
ordinary float64 GEMMs give them at the cost of three GEMMs and the eigensolver. Hand-written because LAPACK
returns no error bounds and no library turns its eigensystem into rigorous enclosures.

Setting. ``A`` (exact, symmetric) is known as the float64 matrix ``A_f`` with ‖A − A_f‖_F ≤ delta. ``(w, V)`` is
any float64 approximation of ``A_f``'s eigensystem (eigenvalues descending). u = 2⁻⁵³, γ_n = nu/(1 − nu).

1. *Residuals.* R̃ = fl(fl(A_f V) − fl(V·diag(w))) differs from R = A_f V − V diag(w) entrywise by at most
   γ_N (|A_f||V|) + u|V||w| + u|R̃|/(1 − u) (any summation order, with or without FMA: Higham, Accuracy and
   Stability, §3.5), with |A_f||V| ≤ fl(|A_f||V|)/(1 − γ_N); so every column's ‖r_i‖ and every block's ‖R_J‖_F
   have rigorous upper bounds from float64 data. ‖(A − A_f)V_J‖₂ ≤ delta‖V_J‖₂ moves them to A.
2. *Clusters* (Kahan's theorem, Parlett, The Symmetric Eigenvalue Problem, Thm 11.5.1): for Q with orthonormal
   columns and symmetric H there are m eigenvalues α_1 … α_m of A (distinct indices) with |α_j − θ_j| ≤ ‖AQ − QH‖₂,
   θ_j the eigenvalues of H. With Q = V_J G^(−1/2) (G = V_JᵀV_J, ω ≥ ‖G − I‖₂ < 1) and H = diag(w_J):
   AQ − QH = R_J G^(−1/2) + V_J (diag(w_J) G^(−1/2) − G^(−1/2) diag(w_J)), whose norm is at most
   ρ_J = ‖R_J‖₂/(1 − ω) + (1 + ω)·spread_J·ω/((2 − ω)(1 − ω)) (the commutator with G^(−1/2) − I, shifted to the
   run's midpoint; spread_J = max w_J − min w_J). For one vector this is the residual bound
   min_j |μ_j − w_i| ≤ ‖r_i‖/‖v_i‖ ≤ ‖r_i‖/(1 − ω).
3. *Counting.* Runs J are grown until their intervals [min w_J − ρ_J, max w_J + ρ_J] are pairwise disjoint; each
   holds at least |J| eigenvalues (2.) and they hold N in all, so each holds exactly |J|, in index order: the
   eigenvalues of indices J lie in that run's interval.
4. *Subspaces* (Davis–Kahan sin Θ, as in :func:`.eigen_enclosure.ritz_subspace_sin_theta`): for a group J inside
   the top runs, ‖sin Θ(span V_J, V_J(A))‖₂ ≤ ‖R_J‖₂/(σ_min(V_J)·η) with η the distance from the group's interval
   to the other runs' intervals.
5. *The top eigenvalues, sharpened* (:func:`sharpen_top`): widths ~N·u·‖A‖ are too wide for E-sized differences,
   but only a few eigenvalues need more (Eq. 18 reads the top rank(L) + 1). Given exact products K = A_hp v of an
   exact basis v of their approximate eigenvectors, Kato–Temple (runs of one) and Li–Li (longer runs) of
   :mod:`.perturbed_enclosure` enclose them to ~ε²/gap, isolated by the a-priori enclosures of the runs around
   them (3.: each run holds exactly its own eigenvalues). O(N²m) exact work instead of O(N³).

6. *The tail below a threshold, without the tail's eigenpairs* (:func:`certify_tail`, a certified inertia count):
   for a float64 basis Q (N×m) of approximate top eigenvectors, τ ≥ 0 and α > 0, if M = αI − A + τQQᵀ is
   positive definite then λ_m(A) < α (0-based: every eigenvalue but the top m), by Courant–Fischer on
   {x : Qᵀx = 0}, of dimension ≥ N − m, where xᵀMx = α‖x‖² − xᵀAx. M is formed in float64 as M̃ with
   ‖M − M̃‖_F ≤ ε = delta + τγ_m‖Q‖_F² + γ_3‖τ|fl(QQᵀ)| + |A_f| + αI‖_F (|fl(QQᵀ) − QQᵀ| ≤ γ_m|Q||Q|ᵀ,
   ‖|Q||Q|ᵀ‖_F ≤ ‖Q‖_F², at most three roundings per entry), and the floating-point Cholesky factorization of
   B̃ = fl(M̃ − sI) is run: if it completes, R̂ᵀR̂ = B̃ + ΔB with |ΔB| ≤ γ_{N+1}|R̂|ᵀ|R̂| (Higham, Accuracy and
   Stability, Thm 10.3: any ordering of the inner products, blocked or not, without fast matrix multiplication),
   so B̃ ⪰ −γ_{N+1}‖R̂‖_F² I and M ⪰ (s − ε − u·max|B̃_ii| − γ_{N+1}‖R̂‖_F²) I, positive when s exceeds the three
   (Rump's shifted-Cholesky test, BIT 46 (2006) 433–452). One Cholesky (N³/3 flops) and one N×N×m GEMM replace
   the full eigensystem and its three GEMMs.

ω of a block comes from fl(V_JᵀV_J) − I with the a-priori bound γ_N(|V_J|ᵀ|V_J|); spectral norms through
:func:`~precise_kpca.arith.rounding.spectral_up` (Schatten norms from float64 GEMMs with their bounds).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..arith.dyadic import Dyadic
from ..arith.rounding import float_up, frobenius_up, spectral_up, sqrt_down, sqrt_up
from ..errors import InsufficientPrecision, InternalCheckFailed
from ..numerics import theorems
from . import perturbed_enclosure

_U = Fraction(1, 2**53)
_MAX_MERGES = 64  # run-merging passes before the enclosure gives up (each pass merges at least one pair)


def _gamma(n: int) -> Fraction:
    return n * _U / (1 - n * _U)


@dataclass(frozen=True)
class Float64Enclosure:
    """Enclosures of all eigenvalues and of top eigenvector groups (module docstring).

    Attributes
    ----------
    lower, upper : list of Fraction, length N
        lower[i] ≤ λ_i(A) ≤ upper[i], descending.
    runs : list of (int, int)
        The disjoint runs of the counting argument.
    group_sin : dict of (int, int) to Fraction
        ‖sin Θ‖₂ bounds of the requested groups (absent where the runs do not separate the group).
    """

    lower: list
    upper: list
    runs: list
    group_sin: dict


def enclose_float64(A_f: np.ndarray, delta, w: np.ndarray, V: np.ndarray, *, groups=()) -> Float64Enclosure:
    """Certify ``(w, V)`` as an eigensystem of the symmetric A with ‖A − A_f‖_F ≤ delta (module docstring).

    Parameters
    ----------
    A_f : ndarray of float64, shape (N, N)
        Exactly symmetric.
    delta : float or Fraction
    w : ndarray of float64, shape (N,)
        Descending.
    V : ndarray of float64, shape (N, N)
    groups : sequence of (start, stop)
        Index groups whose invariant subspaces get a sin Θ bound.

    Raises
    ------
    InsufficientPrecision
        The runs cannot be separated (a cluster of the whole spectrum with no room).
    """
    n = len(w)
    if not np.array_equal(A_f, A_f.T):
        raise InternalCheckFailed("A_f must be exactly symmetric")
    delta = Fraction(delta)
    gamma = _gamma(n)
    R = A_f @ V - V * w[None, :]
    bound = np.abs(A_f) @ np.abs(V)  # fl(|A_f||V|)
    # γ_N|A_f||V| ≤ γ_N fl(|A_f||V|)/(1 − γ_N); the float64 evaluation of this sum of three terms rounds down by
    # at most a few units: the coefficients carry that margin
    coefficient = float_up(gamma / (1 - gamma) ** 2 * (1 + Fraction(1, 2**40)))
    err_entries = coefficient * bound + 2.0**-52 * (np.abs(V) * np.abs(w)[None, :] + np.abs(R))
    col_err = _column_frobenius_up(err_entries)  # ‖error in column j‖
    col_r = _column_frobenius_up(R)
    norms2 = np.einsum("ij,ij->j", V, V)
    runs = _initial_runs(w, col_r, col_err, norms2, delta)
    single = _single_radii(col_r, col_err, norms2, delta, gamma)
    known = {}  # a run's radius depends on the run alone: passes recompute only the runs they merged
    for _ in range(_MAX_MERGES):
        for a, z in runs:
            if (a, z) not in known:
                known[(a, z)] = Fraction(float(single[a])) if z - a == 1 else \
                    _run_radius(V, R, err_entries, w, (a, z), delta, gamma)
        radii = {run: known[run] for run in runs}
        merged = _merge(runs, {run: float_up(rho) for run, rho in radii.items()}, w)
        if merged == runs:
            break
        runs = merged
    else:
        raise InsufficientPrecision("the float64 eigensystem's runs did not separate")
    lower, upper = [None] * n, [None] * n
    for (a, z), rho in radii.items():
        lo, hi = Fraction(float(w[z - 1])) - rho, Fraction(float(w[a])) + rho
        for i in range(a, z):
            lower[i], upper[i] = lo, hi
    sines = {}
    for s, t in groups:
        sines_st = _group_sin(V, R, err_entries, w, s, t, runs, lower, upper, delta, gamma)
        if sines_st is not None:
            sines[(s, t)] = sines_st
    return Float64Enclosure(lower=lower, upper=upper, runs=runs, group_sin=sines)


def _column_frobenius_up(M: np.ndarray) -> np.ndarray:
    """Upper bounds on the Euclidean norm of every column of a float64 array, shape (m,): the bound of
    :func:`~precise_kpca.arith.rounding.frobenius_up` (each column scaled by the power of two of its largest entry,
    sum of squares inflated by γ_{n+1} with room for the inflation's own rounding and 2⁻¹⁰⁰⁰ per entry for underflow,
    square root rounded up) applied to all columns at once."""
    n = M.shape[0]
    top = np.max(np.abs(M), axis=0, initial=0.0)
    e = np.frexp(top)[1]
    scaled = np.ldexp(M, -e[None, :])  # max |entry| per column in [1/2, 1)
    s = np.einsum("ij,ij->j", scaled, scaled) + n * 2.0**-1000
    s *= 1 + (n + 4) * 2.0**-51
    return np.where(top == 0, 0.0, np.ldexp(np.nextafter(np.sqrt(s), np.inf), e))


def _initial_runs(w, col_r, col_err, norms2, delta) -> list[tuple[int, int]]:
    """Runs from the single-vector residual intervals (overlapping ones joined)."""
    radius = [(float(r) + float(e)) / np.sqrt(max(n2, 0.25)) * (1 + 2.0**-40) + float(delta) * 1.01
              for r, e, n2 in zip(col_r, col_err, norms2)]
    return theorems.overlap_runs([v - r for v, r in zip(w, radius)], [v + r for v, r in zip(w, radius)])


_INFLATE = 1 + 2.0**-44  # ≥ (1 + 2⁻⁵²)^k for the k < 64 roundings of one radius in float64 (all terms ≥ 0)


def _single_radii(col_r, col_err, norms2, delta, gamma) -> np.ndarray:
    """ρ_J of :func:`_run_radius` for every run of one vector, shape (N,), in float64 rounded upward: the spread-0
    case of :func:`precise_kpca.numerics.theorems.kahan_cluster_radius`, vectorised in float64 with directed margins.

    For one vector the spread is 0 and the norms are scalars: ω = |fl(vᵀv) − 1| + fl(vᵀv)·γ_N/(1 − γ_N)
    (fl(vᵀv) − 1 is exact near 1, Sterbenz), residual = ‖r‖ + its error + δ√(1 + ω), ρ = residual/(1 − ω). Each
    sum and product of nonnegative terms is inflated by :data:`_INFLATE`, and 1 − ω deflated, so every float
    result bounds its exact counterpart from the right side.
    """
    g = float_up(gamma / (1 - gamma) * (1 + Fraction(1, 2**40)))
    omega = (np.abs(norms2 - 1) + norms2 * g) * _INFLATE
    if not np.all(omega < 1):
        j = int(np.argmax(omega))
        raise InsufficientPrecision(f"eigenvector {j} is far from orthonormal (ω ≤ {float(omega[j]):.3g})")
    residual = (col_r + col_err + float_up(delta) * np.sqrt(1 + omega) * _INFLATE) * _INFLATE
    return np.nextafter(residual / ((1 - omega) / _INFLATE) * _INFLATE, np.inf)


def _run_radius(V, R, err_entries, w, run, delta, gamma) -> Fraction:
    """ρ_J of the module docstring (2.) for the run [a, z), for A (delta included)."""
    a, z = run
    cols = slice(a, z)
    Vj = V[:, cols]
    G = Vj.T @ Vj - np.eye(z - a)
    g_err = Fraction(frobenius_up(np.abs(Vj).T @ np.abs(Vj))) * gamma / (1 - gamma) * (1 + Fraction(1, 2**40))
    omega = spectral_up(G, g_err, levels=1 if z - a > 1 else 0)
    if not omega < 1:
        raise InsufficientPrecision(f"eigenvectors {a}..{z - 1} are far from orthonormal (ω ≤ {float(omega):.3g})")
    r_err = Fraction(frobenius_up(err_entries[:, cols]))
    residual = spectral_up(R[:, cols], r_err, levels=1 if z - a > 1 else 0)
    residual += delta * sqrt_up(1 + omega)  # ‖(A − A_f)V_J‖₂ ≤ δ‖V_J‖₂
    return theorems.kahan_cluster_radius(residual, omega, Fraction(float(w[a])) - Fraction(float(w[z - 1])))


def _merge(runs, radii_up, w) -> list[tuple[int, int]]:
    """Runs whose intervals may overlap joined (one pass; the next pass recomputes the joined runs' radii).

    Decided in float64 with the radii rounded up and the interval ends rounded outward, so two runs stay apart
    only when their exact intervals are disjoint (joining more is always allowed: Kahan's theorem holds for any
    set of vectors, with the radius of the union).
    """
    out = [runs[0]]
    for prev, run in zip(runs, runs[1:]):
        prev_lo = np.nextafter(w[prev[1] - 1] - radii_up[prev], -np.inf)  # the low end of what out[-1] ends with
        this_hi = np.nextafter(w[run[0]] + radii_up[run], np.inf)
        if this_hi >= prev_lo:
            out[-1] = (out[-1][0], run[1])
        else:
            out.append(run)
    return out


def _group_sin(V, R, err_entries, w, s, t, runs, lower, upper, delta, gamma):
    """Davis–Kahan bound for the group [s, t) (None where the runs do not separate it)."""
    if any(a < s < z or a < t < z for a, z in runs):
        return None  # the group's edge cuts a run: its subspace is not separated
    cols = slice(s, t)
    Vj = V[:, cols]
    G = Vj.T @ Vj - np.eye(t - s)
    g_err = Fraction(frobenius_up(np.abs(Vj).T @ np.abs(Vj))) * gamma / (1 - gamma) * (1 + Fraction(1, 2**40))
    omega = spectral_up(G, g_err, levels=1 if t - s > 1 else 0)
    residual = spectral_up(R[:, cols], Fraction(frobenius_up(err_entries[:, cols])), levels=1 if t - s > 1 else 0)
    residual += delta * sqrt_up(1 + omega)
    # the group's eigenvalues lie in [lower[t−1], upper[s]]; the others outside [upper[t], lower[s−1]]
    eta = theorems.davis_kahan_gap(lower[t - 1], upper[s], lower[s - 1] if s > 0 else None,
                                   upper[t] if t < len(w) else None)
    if eta is None:
        return Fraction(0)
    if not eta > 0:
        return None
    sigma_min = sqrt_down(1 - omega) if omega < 1 else Fraction(0)
    if not sigma_min > 0:
        return None
    bound = theorems.sin_theta(residual, eta, sigma_min)
    return bound if bound < 1 else None


def sharpen_top(enc: Float64Enclosure, v: Dyadic, k: Dyadic, unknown) -> Float64Enclosure:
    """The top m = v.shape[1] eigenvalues of A, sharpened from exact products (module docstring, 5.).

    Parameters
    ----------
    enc : Float64Enclosure
        A-priori enclosures of all N eigenvalues and their runs.
    v : Dyadic, shape (N, m)
        Exact basis: column j approximates the eigenvector of eigenvalue j (any accuracy: the bounds say what it was).
    k : Dyadic, shape (N, m)
        K with ‖A v_j − K_j‖ ≤ unknown[j] (K = A_hp v exactly, unknown[j] ≥ ‖A − A_hp‖₂‖v_j‖).
    unknown : sequence of Fraction, length m

    Returns
    -------
    Float64Enclosure
        The same runs and group bounds; lower/upper of every run inside [0, m) replaced by their intersection with
        the Kato–Temple or Li–Li enclosure, where those isolate it (a run they do not isolate keeps its own).
    """
    m = v.shape[1]
    lower, upper = list(enc.lower), list(enc.upper)
    for a, z in enc.runs:
        if z > m or z >= len(lower):  # beyond the products, or the bottom run (no enclosure below it)
            continue
        above = enc.lower[a - 1] if a > 0 else None  # μ_{a−1} ≥ above
        below = enc.upper[z]  # μ_z ≤ below
        try:
            if z - a == 1:
                sharp = [perturbed_enclosure._kato_temple(v.columns(a, z), k.columns(a, z), unknown[a], below,
                                                          above, a)]
            else:
                sharp = perturbed_enclosure._block(v.columns(a, z), k.columns(a, z), unknown[a:z], below, above, a, z)
        except InsufficientPrecision:
            continue
        for i, (lo, hi) in zip(range(a, z), sharp):
            lower[i], upper[i] = max(lo, lower[i]), min(hi, upper[i])
            if lower[i] > upper[i]:
                raise InternalCheckFailed(f"the sharpened enclosure of eigenvalue {i} misses its a-priori one")
    return Float64Enclosure(lower=lower, upper=upper, runs=enc.runs, group_sin=enc.group_sin)


def certify_tail(A_f: np.ndarray, delta, Q: np.ndarray, alpha: float, tau: float) -> None:
    """Prove λ_m(A) < α (every eigenvalue of A but the top m = Q.shape[1]) for every symmetric A with
    ‖A − A_f‖_F ≤ delta (module docstring, 6.).

    Parameters
    ----------
    A_f : ndarray of float64, shape (N, N)
        Exactly symmetric.
    delta : float or Fraction
    Q : ndarray of float64, shape (N, m)
        Any basis (approximate top eigenvectors make M well conditioned: its eigenvalues ≈ α − λ_j beyond the top
        and ≈ τ + α − λ_j on span Q).
    alpha, tau : float
        α > 0, τ ≥ 0.

    Raises
    ------
    InsufficientPrecision
        The Cholesky factorization of the shifted M̃ breaks down, or its shift does not cover the errors (α is
        within the rounding level of an eigenvalue beyond the top m).
    """
    import scipy.linalg

    n, m = Q.shape
    if not (alpha > 0 and tau >= 0):
        raise ValueError(f"alpha must be positive and tau non-negative, got {alpha!r}, {tau!r}")
    M = Q @ Q.T
    M *= tau
    size = frobenius_up(np.abs(M) + np.abs(A_f))
    M -= A_f
    M[np.diag_indices(n)] += alpha
    q2 = float(np.sum(_column_frobenius_up(Q) ** 2)) * _INFLATE
    eps = (float_up(Fraction(delta)) + tau * float(_gamma(m)) * q2 * _INFLATE
           + float(_gamma(3)) * (size + alpha * math.sqrt(n)) * _INFLATE) * _INFLATE
    g = float(_gamma(n + 1))
    trace = float(np.sum(np.abs(np.diag(M)))) * _INFLATE
    shift = 2 * (eps + g * trace * _INFLATE + 2.0**-52 * float(np.max(np.abs(np.diag(M)))))
    M[np.diag_indices(n)] -= shift
    diagonal = float(np.max(np.abs(np.diag(M))))
    try:
        R = scipy.linalg.cholesky(M, lower=False, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise InsufficientPrecision(f"αI − A + τQQᵀ is not certified positive definite (α = {alpha:.6g}): the "
                                    "threshold is within rounding of an eigenvalue beyond the top block") from exc
    # + 2⁻¹⁰⁰⁰ per entry: underflow in the factorization, which Higham's bound leaves out
    needed = (eps + 2.0**-52 * diagonal + g * frobenius_up(R) ** 2 * _INFLATE + n * n * 2.0**-1000) * _INFLATE
    if not shift > needed:
        raise InsufficientPrecision(f"the Cholesky shift {shift:.3g} does not cover its error bound {needed:.3g}")


def enclose_top_block(v: Dyadic, k: Dyadic, unknown, alpha: Fraction) -> list[tuple[Fraction, Fraction]]:
    """Enclosures of A's top m = v.shape[1] eigenvalues, descending, given λ_m(A) < α (:func:`certify_tail`): the
    Li–Li bound around the Ritz values of span v (:mod:`.perturbed_enclosure`, exact products K = A_hp v with
    ‖A v_j − K_j‖ ≤ unknown[j]), the block isolated below by α and unbounded above.

    Raises
    ------
    InsufficientPrecision
        The Ritz values are not above α by more than the residual.
    """
    return perturbed_enclosure._block(v, k, unknown, alpha, None, 0, v.shape[1])


__all__ = ["Float64Enclosure", "certify_tail", "enclose_float64", "enclose_top_block", "sharpen_top"]
