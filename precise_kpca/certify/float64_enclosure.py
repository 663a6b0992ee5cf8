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

ω of a block comes from fl(V_JᵀV_J) − I with the a-priori bound γ_N(|V_J|ᵀ|V_J|); spectral norms through
:func:`.eigen_enclosure._spectral_up` (Schatten norms from float64 GEMMs with their bounds).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InsufficientPrecision, InternalCheckFailed
from .eigen_enclosure import _float_up, _frobenius_up, _spectral_up, _sqrt_down, _sqrt_up

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
    coefficient = _float_up(gamma / (1 - gamma) ** 2 * (1 + Fraction(1, 2**40)))
    err_entries = coefficient * bound + 2.0**-52 * (np.abs(V) * np.abs(w)[None, :] + np.abs(R))
    col_err = np.array([_frobenius_up(err_entries[:, [j]]) for j in range(n)])  # ‖error in column j‖
    col_r = np.array([_frobenius_up(R[:, [j]]) for j in range(n)])
    norms2 = np.einsum("ij,ij->j", V, V)
    runs = _initial_runs(w, col_r, col_err, norms2, delta)
    radii = {}
    for _ in range(_MAX_MERGES):
        radii = {run: _run_radius(V, R, err_entries, w, run, delta, gamma) for run in runs}
        merged = _merge(runs, radii, w)
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


def _initial_runs(w, col_r, col_err, norms2, delta) -> list[tuple[int, int]]:
    """Runs from the single-vector residual intervals (overlapping ones joined)."""
    radius = [(float(r) + float(e)) / np.sqrt(max(n2, 0.25)) * (1 + 2.0**-40) + float(delta) * 1.01
              for r, e, n2 in zip(col_r, col_err, norms2)]
    runs, start = [], 0
    for i in range(1, len(w) + 1):
        if i == len(w) or w[i - 1] - radius[i - 1] > w[i] + radius[i]:
            runs.append((start, i))
            start = i
    return runs


def _run_radius(V, R, err_entries, w, run, delta, gamma) -> Fraction:
    """ρ_J of the module docstring (2.) for the run [a, z), for A (delta included)."""
    a, z = run
    cols = slice(a, z)
    Vj = V[:, cols]
    G = Vj.T @ Vj - np.eye(z - a)
    g_err = Fraction(_frobenius_up(np.abs(Vj).T @ np.abs(Vj))) * gamma / (1 - gamma) * (1 + Fraction(1, 2**40))
    omega = _spectral_up(G, g_err, levels=1 if z - a > 1 else 0)
    if not omega < 1:
        raise InsufficientPrecision(f"eigenvectors {a}..{z - 1} are far from orthonormal (ω ≤ {float(omega):.3g})")
    r_err = Fraction(_frobenius_up(err_entries[:, cols]))
    residual = _spectral_up(R[:, cols], r_err, levels=1 if z - a > 1 else 0)
    residual += delta * _sqrt_up(1 + omega)  # ‖(A − A_f)V_J‖₂ ≤ δ‖V_J‖₂
    spread = Fraction(float(w[a])) - Fraction(float(w[z - 1]))
    # ‖AQ − QH‖ ≤ ‖R_J‖‖G^(−1/2)‖ + ‖V_J‖·spread·‖G^(−1/2) − I‖, ‖G^(−1/2)‖ ≤ 1/√(1 − ω) ≤ 1/(1 − ω),
    # ‖G^(−1/2) − I‖ ≤ (1 − √(1 − ω))/√(1 − ω) ≤ ω/((2 − ω)(1 − ω)), ‖V_J‖ ≤ √(1 + ω) ≤ 1 + ω
    return residual / (1 - omega) + (1 + omega) * spread * omega / ((2 - omega) * (1 - omega))


def _merge(runs, radii, w) -> list[tuple[int, int]]:
    """Runs whose intervals overlap joined (one pass). A run joined in this pass has no radius yet: the larger of
    its parts' stands in for the next comparison (a grouping choice only: the caller recomputes every radius and
    repeats until no run joins, so the enclosures never rest on it)."""
    out, out_radius = [runs[0]], radii[runs[0]]
    for run in runs[1:]:
        prev = out[-1]
        prev_lo = Fraction(float(w[prev[1] - 1])) - out_radius
        this_hi = Fraction(float(w[run[0]])) + radii[run]
        if this_hi >= prev_lo:
            out[-1], out_radius = (prev[0], run[1]), max(out_radius, radii[run])
        else:
            out.append(run)
            out_radius = radii[run]
    return out


def _group_sin(V, R, err_entries, w, s, t, runs, lower, upper, delta, gamma):
    """Davis–Kahan bound for the group [s, t) (None where the runs do not separate it)."""
    if any(a < s < z or a < t < z for a, z in runs):
        return None  # the group's edge cuts a run: its subspace is not separated
    cols = slice(s, t)
    Vj = V[:, cols]
    G = Vj.T @ Vj - np.eye(t - s)
    g_err = Fraction(_frobenius_up(np.abs(Vj).T @ np.abs(Vj))) * gamma / (1 - gamma) * (1 + Fraction(1, 2**40))
    omega = _spectral_up(G, g_err, levels=1 if t - s > 1 else 0)
    residual = _spectral_up(R[:, cols], Fraction(_frobenius_up(err_entries[:, cols])), levels=1 if t - s > 1 else 0)
    residual += delta * _sqrt_up(1 + omega)
    gaps = []
    if s > 0:
        gaps.append(lower[s - 1] - upper[s])
    if t < len(w):
        gaps.append(lower[t - 1] - upper[t])
    # the group's eigenvalues lie in [lower[t−1], upper[s]]; the others outside [upper[t], lower[s−1]]
    eta = min(gaps) if gaps else None
    if eta is None:
        return Fraction(0)
    if not eta > 0:
        return None
    sigma_min = _sqrt_down(1 - omega) if omega < 1 else Fraction(0)
    if not sigma_min > 0:
        return None
    bound = residual / (sigma_min * eta)
    return bound if bound < 1 else None


__all__ = ["Float64Enclosure", "enclose_float64"]
