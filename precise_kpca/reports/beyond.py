"""Issue 24's study: the eigenprojection predictor against ρ (Tables III/IV protocol), Theorem 1's constant, and
the repeated-eigenvalue certificates, as tables for ``precise-kpca study beyond`` and ``notebooks/beyond.ipynb``.

Curve points go through the results store (:func:`precise_kpca.studies.convergence_curve`, keyed as every other
study), so a rerun computes only what is missing; large sets are subsampled (seeded, ``max_rows``) and each row
says how many rows were used. Every number is rigorous except the regressions' r² (statistics of rigorous
numbers) and the adversarial search (float64, then its best configuration is certified).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd

from ..asymptotics.cka_constant import adversarial_search, ratio_interval, sup_bounds, unit_vectors_and_origins
from ..asymptotics.predictor import KS, comparison, features
from ..asymptotics.repeated import cross_family, tie_splitting
from ..asymptotics.symmetry import board_moves, dihedral_certificate, pairs_in_spectrum, square_moves, square_orbits
from ..measures import measure
from ..measures.onset import PAPER_FIT_LOG2_SIGMA, PAPER_GRID, TOLERANCE_LOG2
from ..studies import convergence_curve
from .study import StudyData
from .tables import capped_log2, onset_detail, weakest_guarantee

CURVE_DIGITS = 8
"""Digits requested per curve point: the study's default, so ``reproduce`` and this study share stored points."""
SQUARE_POINTS = ((3, 1), (2, 0), (5, 5), (7, 2))
PAIR_LOG2_SIGMAS = (-2, 0, 4)
"""σ of the per-σ pair certificate (:func:`pairs_tables`)."""


def onsets_and_values(curve: pd.DataFrame) -> pd.DataFrame:
    """Per k: the paper-protocol onset (grid −4…8, asymptote through 2⁷, "256+" as 256 in ``log2_onset``) and
    the log2 normalized EigenDist at 2⁷ (Table IV), from a curve frame of the eigenprojection measure.

    The onset reads the points from 2⁸ down to the first outside the ±0.25 band (and the fit at 2⁷):
    ``guarantee`` and ``onset_digits`` are the weakest over those points alone (an undetermined point below the
    decisive one does not enter), and ``onset_margin`` is the least distance of their deviations from the band's
    edge (log2 units): the onset is proven when the guarantee is rigorous and the margin exceeds the intervals'
    widths (~10^−digits)."""
    rows = []
    for k, part in curve.groupby("k"):
        part = part[part["log2_sigma"].isin(PAPER_GRID)].sort_values("log2_sigma")
        detail = onset_detail(part, PAPER_GRID, PAPER_FIT_LOG2_SIGMA)
        onset = detail["onset"]
        lowest = min(PAPER_GRID) if detail["decisive"] is None else detail["decisive"]
        read = part[(part["log2_sigma"] >= lowest) | (part["log2_sigma"] == PAPER_FIT_LOG2_SIGMA)]
        margin = min((abs(abs(detail["deviations"][int(p)][0]) - TOLERANCE_LOG2) for p in read["log2_sigma"]
                      if p != PAPER_FIT_LOG2_SIGMA), default=math.nan)
        at7 = part[part["log2_sigma"] == PAPER_FIT_LOG2_SIGMA].iloc[0]
        rows.append(dict(k=int(k), onset=onset, log2_onset=math.nan if math.isnan(onset) else capped_log2(onset),
                         onset_margin=margin, onset_digits=int(read["certified_digits"].min()),
                         normalized_2_7=float(at7["normalized"]), value_2_7=float(at7["value"]),
                         digits_2_7=int(at7["certified_digits"]), guarantee=weakest_guarantee(read["guarantee"])))
    return pd.DataFrame(rows)


def predictor_table(data: dict[str, StudyData], *, store=None, executor="serial") -> pd.DataFrame:
    """One row per (data set, k): ρ, smallest relative boundary gap, C_k (and its digits), onset, value at 2⁷.

    Curves on log2 σ = −4…8 come from (and go to) the results store ``store``.
    """
    rows = []
    for name, item in data.items():
        ks = [k for k in KS if k <= item.rank]
        curve = convergence_curve(item.X, PAPER_GRID, measures="eigenprojection", k=ks, digits=CURVE_DIGITS,
                                  store=store, executor=executor, progress=False, name=name)
        found = onsets_and_values(curve)
        feats = features(item.X, item.rho, ks)
        for r in found.itertuples():
            rows.append(dict(dataset=name, rows=item.X.shape[0], k=r.k, rho=item.rho, gap=feats.gaps[r.k],
                             C_k=feats.constants[r.k], C_k_digits=feats.digits[r.k], onset=r.onset,
                             log2_onset=r.log2_onset, onset_margin=r.onset_margin, onset_digits=r.onset_digits,
                             normalized_2_7=r.normalized_2_7, value_2_7=r.value_2_7, digits_2_7=r.digits_2_7,
                             first_order_2_7=feats.constants[r.k] / 2.0 ** (2 * PAPER_FIT_LOG2_SIGMA),
                             guarantee=r.guarantee))
    return pd.DataFrame(rows)


def predictor_comparison(table: pd.DataFrame) -> pd.DataFrame:
    """r² of ρ alone, ρ + gap and C_k per target (onset, dissonance at 2⁷, limit) and k, side by side."""
    return comparison(table)


def cka_table(data: dict[str, StudyData]) -> pd.DataFrame:
    """Per data set: certified bounds on C(X) = sup_{σ ≥ ρ/2} (1 − CKA)/(ρ/σ)² (branch and bound over the whole
    range, :func:`~precise_kpca.asymptotics.cka_constant.sup_bounds`) and where the lower one sits."""
    rows = []
    for name, item in data.items():
        found = sup_bounds(item.X)
        rows.append(dict(dataset=name, rows=item.X.shape[0], rho=item.rho, C_lower=found.lower, C_upper=found.upper,
                         at_sigma=str(found.at_sigma), at_rho_over_sigma=item.rho / float(found.at_sigma),
                         ranges=found.evaluations, converged=found.converged))
    return pd.DataFrame(rows)


def cka_family(ms=(5, 20, 80), rho_over_sigma=Fraction(1, 2)) -> pd.DataFrame:
    """The counterexample family X_m of proofs/theorem1, certified: (1 − CKA)/(ρ/σ)² at σ ≈ 2ρ grows with m."""
    rows = []
    for m in ms:
        X = unit_vectors_and_origins(m)
        from ..numerics.geometry import geometry

        sigma = Fraction(geometry(X).eccentricity / float(rho_over_sigma)).limit_denominator(256)
        r = ratio_interval(X, sigma)
        rows.append(dict(m=m, N=2 * m, sigma=str(sigma), lower=r.lower, upper=r.upper, guarantee=r.guarantee))
    return pd.DataFrame(rows)


def cka_search(sizes=((4, 1), (6, 2), (8, 2)), *, restarts: int = 3) -> pd.DataFrame:
    """Adversarial search (heuristic) per (N, d), its best point re-certified at an exact σ near it."""
    from ..numerics.geometry import geometry

    rows = []
    for n, d in sizes:
        X, s, value = adversarial_search(n, d, restarts=restarts)
        sigma = Fraction(geometry(X).eccentricity / (2 * s)).limit_denominator(2**20)
        r = ratio_interval(X, sigma)
        rows.append(dict(N=n, d=d, s=s, float_ratio=value, sigma=str(sigma), lower=r.lower, upper=r.upper,
                         guarantee=r.guarantee))
    return pd.DataFrame(rows)


def ties_table(tic_tac_toe: np.ndarray | None) -> pd.DataFrame:
    """The dihedral certificates: tic-tac-toe (D4 on the board) and the square orbits (D4 on R²)."""
    rows = []
    sets = [("square orbits", square_orbits(SQUARE_POINTS), square_moves())]
    if tic_tac_toe is not None:
        sets.insert(0, ("tic-tac-toe", tic_tac_toe, board_moves()))
    for name, X, moves in sets:
        cert = dihedral_certificate(X, *moves, 4)
        rows.append(dict(dataset=name, N=cert.n, group="D4", **{f"m_{k}": v for k, v in cert.one_dim.items()},
                         m_psi1=cert.two_dim[0], forced_pairs=cert.forced_pairs,
                         chi_rotations=cert.rotation_fixed, chi_reflections=cert.reflection_fixed))
    return pd.DataFrame(rows)


def pairs_tables(tic_tac_toe: np.ndarray | None, log2_sigmas=PAIR_LOG2_SIGMAS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The forced pairs in the certified spectrum per σ (:func:`~precise_kpca.asymptotics.symmetry.pairs_in_spectrum`):
    a summary row per (data set, σ) — runs of each kind, and ``exact`` when every run is a simple eigenvalue or an
    isolated forced pair — and one row per run (indices, kind, forced-pair eigenvalues held, interval ends)."""
    sets = [("square orbits", square_orbits(SQUARE_POINTS), square_moves())]
    if tic_tac_toe is not None:
        sets.insert(0, ("tic-tac-toe", tic_tac_toe, board_moves()))
    summary, runs = [], []
    for name, X, moves in sets:
        for p in log2_sigmas:
            found = pairs_in_spectrum(X, *moves, Fraction(2) ** p)
            clusters = [r for r in found.runs if r.kind == "cluster"]
            summary.append(dict(dataset=name, log2_sigma=p, N=X.shape[0], forced_pairs=found.forced_pairs,
                                isolated_pairs=found.count("pair"), simple=found.count("simple"),
                                apparent_pairs=found.count("apparent"), clusters=len(clusters),
                                cluster_eigenvalues=sum(r.stop - r.start for r in clusters),
                                forced_in_clusters=sum(r.paired for r in clusters),
                                unattributed_runs=found.count("unattributed"), exact=found.exact))
            runs += [dict(dataset=name, log2_sigma=p, start=r.start, stop=r.stop, kind=r.kind, paired=r.paired,
                          lower=float(r.lower), upper=float(r.upper)) for r in found.runs]
    return pd.DataFrame(summary), pd.DataFrame(runs)


def tie_measure_table(X: np.ndarray, k: int, log2_sigmas, name: str) -> pd.DataFrame:
    """The eigenprojection with k at a tie's end over σ (determined, rigorous) and with k − 1 (undetermined)."""
    import warnings

    rows = []
    for p in log2_sigmas:
        whole = measure(X, "eigenprojection", Fraction(2) ** p, k=k, digits=6)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            inside = measure(X, "eigenprojection", Fraction(2) ** p, k=k - 1, digits=6)
        rows.append(dict(dataset=name, log2_sigma=p, k=k, value=float(whole.value), lower=float(whole.lower),
                         upper=float(whole.upper), digits=whole.certified_digits, guarantee=whole.guarantee,
                         inside_k=k - 1, inside_value=float(inside.value), inside_reason=inside.reason[:80]))
    return pd.DataFrame(rows)


def splitting_table(log2_sigmas=(8, 12, 16, 20)) -> pd.DataFrame:
    """First-order splitting of a linear tie vs σ_X²(μ − λ): an accidental tie (cross) and a symmetric one."""
    rows = []
    for name, X in (("cross (accidental tie)", cross_family()), ("square orbits (D4 tie)", square_orbits(SQUARE_POINTS))):
        for p in log2_sigmas:
            s = tie_splitting(X, (0, 2), Fraction(2) ** p)
            for i, ((lo, hi), (g_lo, g_hi)) in enumerate(zip(s.shifts, s.scaled)):
                rows.append(dict(dataset=name, log2_sigma=p, index=i, shift_lower=lo, shift_upper=hi,
                                 scaled_lower=g_lo, scaled_upper=g_hi,
                                 relative_difference=((g_lo + g_hi) - (lo + hi)) / (lo + hi)))
    return pd.DataFrame(rows)
