"""Tables I–IV of the paper, recomputed, side by side with the printed values.

Onsets (Table II) follow :mod:`precise_kpca.measures.onset`: ``paper`` is the paper's protocol (grid −4…8,
asymptote through 2⁷) applied to the certified values, ``naive`` the same protocol on the float64-naive values
(what the paper's float64 computation gives), ``extended`` the asymptote through the largest σ of the study's grid
whose point certifies the requested digits, on those points only (a short or undetermined point is left out). The
regressions (Tables III, IV, the Table II caption, Figs 4 and 7) are ordinary least squares of a log2 quantity on
log2 ρ (``scipy.stats.linregress``, with the standard errors of slope and intercept), with "256+" counted as 256
(:data:`precise_kpca.reports.paper.ONSET_CAP`), fitted on at least :data:`MIN_FIT_POINTS` points.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..measures.onset import PAPER_FIT_LOG2_SIGMA, PAPER_GRID, TOLERANCE_LOG2, onset_from_curve
from ..studies.curves import GUARANTEE_ORDER, NAIVE_BACKEND
from . import paper
from .study import K_COUNTS, StudyData

PROTOCOLS = ("paper", "naive", "extended")


MIN_FIT_POINTS = 3
"""Fewest points a regression is fitted on (and drawn from): two points always lie on a line (r² = 1, no
standard error), so a fit on them says nothing about the dependence."""


@dataclass(frozen=True)
class Fit:
    """Least-squares line y = slope·x + intercept over ``n`` points: coefficient of determination ``r2`` and the
    standard errors ``slope_se``, ``intercept_se`` (``scipy.stats.linregress``)."""

    slope: float
    intercept: float
    r2: float
    n: int
    slope_se: float = math.nan
    intercept_se: float = math.nan


def regress(x, y) -> Fit:
    """Ordinary least squares of y on x by ``scipy.stats.linregress`` (float64), with standard errors.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        n ≥ :data:`MIN_FIT_POINTS` finite values, x not all equal.

    Raises
    ------
    ValueError
        Fewer than :data:`MIN_FIT_POINTS` points, unequal lengths, non-finite values, or all x equal.
    """
    from scipy.stats import linregress

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-d of equal length, got shapes {x.shape} and {y.shape}")
    if len(x) < MIN_FIT_POINTS or not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError(f"a regression needs at least {MIN_FIT_POINTS} finite points, got x={x.tolist()}, "
                         f"y={y.tolist()}")
    if (x == x[0]).all():
        raise ValueError(f"all x are equal ({x[0]}): the slope is undefined")
    fit = linregress(x, y)
    if (y == y[0]).all():  # an exact fit: scipy derives the errors from r, undefined here (NaN), but they are 0
        return Fit(float(fit.slope), float(fit.intercept), float(fit.rvalue) ** 2, len(x), 0.0, 0.0)
    return Fit(float(fit.slope), float(fit.intercept), float(fit.rvalue) ** 2, len(x), float(fit.stderr),
               float(fit.intercept_stderr))


def capped_log2(onset: float) -> float:
    """log2 σ*₀ with "256+" (inf) counted as 256, as the paper's regressions do."""
    return math.log2(paper.ONSET_CAP if math.isinf(onset) else onset)


def paper_self_check() -> pd.DataFrame:
    """Regressions of the *printed* Table II on the printed ρ, next to the slopes and r² the paper prints.

    Evidence for the regression protocol (log2 onset on log2 ρ, "256+" as 256): the printed rows reproduce the
    printed Table II caption and Table III, k = 1.
    """
    rows = []
    rho = [values[0] for values in paper.TABLE_II.values()]
    for column, (measure, k) in enumerate(paper.TABLE_II_MEASURES, start=1):
        fit = regress(np.log2(rho), [capped_log2(values[column]) for values in paper.TABLE_II.values()])
        printed = paper.TABLE_II_REGRESSIONS[(measure, k)]
        rows.append(dict(quantity=f"log2 onset, {_label(measure, k)}", slope=fit.slope, intercept=fit.intercept,
                         r2=fit.r2, n=fit.n, slope_se=fit.slope_se, intercept_se=fit.intercept_se,
                         paper_slope=printed[0], paper_r2=printed[2]))
    rows[-1]["paper_intercept"] = paper.TABLE_III[1][1]
    return pd.DataFrame(rows)


def _label(measure: str, k) -> str:
    return measure if k is None or pd.isna(k) else f"{measure} k={int(k)}"


def table_one(data: dict[str, StudyData], *, data_dir=None) -> pd.DataFrame:
    """Table I: N, attributes after one-hot encoding and ρ, ours and the paper's (manifest), and the match.

    ρ matches when ours rounds to the printed value at the printed precision (two decimals).
    """
    from ..datasets import manifest

    entries = manifest(data_dir).datasets
    rows = []
    for name, item in data.items():
        info = entries.get(name)
        p_n = info.paper_examples if info else None
        p_d = info.paper_attributes_onehot if info else None
        p_rho = info.paper_rho if info else None
        rows.append(dict(
            dataset=name, n=item.n_full, paper_n=p_n, d=item.d, paper_d=p_d, rho=item.rho_full, paper_rho=p_rho,
            n_used=item.X.shape[0], rho_used=item.rho,
            match=p_n == item.n_full and p_d == item.d and p_rho is not None and round(item.rho_full, 2) == p_rho,
        ))
    return pd.DataFrame(rows)


def _curve(curves: pd.DataFrame, dataset: str, measure: str, k, naive: bool) -> pd.DataFrame:
    rows = curves[(curves["dataset"] == dataset) & (curves["measure"] == measure)
                  & ((curves["requested_backend"] == NAIVE_BACKEND) == naive)]
    rows = rows[rows["k"].isna()] if k is None else rows[rows["k"] == k]
    return rows.sort_values("log2_sigma")


def onset_detail(rows: pd.DataFrame, grid, fit: int) -> dict:
    """Onset on the points of ``grid`` present in ``rows``, with the evidence that decides it.

    Returns
    -------
    dict
        ``onset`` (σ*₀, inf for "256+", NaN when the fit point is absent), ``decisive`` (the largest grid log2 σ
        outside the tolerance band, or None), ``deviation`` (its log2 distance to the asymptote), ``value``
        (its normalized log2 measure), ``value_lower``, ``value_upper`` (the ends of that value's interval as
        exact decimal text, ``""`` where it has none), ``min_digits`` (fewest certified digits among the points
        used), ``guarantee`` (the weakest guarantee among them: the onset is proven only when it is
        ``rigorous``) and ``deviations`` ({log2 σ: (log2 distance to the asymptote, certified digits)} over the
        grid).
    """
    used = rows[rows["log2_sigma"].isin(list(grid))]
    xs, ys = used["log2_sigma"].tolist(), used["normalized"].astype(float).tolist()
    if fit not in xs:
        return dict(onset=math.nan, decisive=None, deviation=math.nan, value=math.nan, value_lower="",
                    value_upper="", min_digits=None, guarantee="", deviations={})
    onset = onset_from_curve(xs, ys, fit)
    at_fit = ys[xs.index(fit)]
    deviations = {int(p): (y - (at_fit - 2 * (p - fit)), int(d))
                  for p, y, d in zip(xs, ys, used["certified_digits"].tolist())}
    decisive = deviation = value = None
    lower = upper = ""
    for point in used.sort_values("log2_sigma", ascending=False).itertuples():
        p, y = int(point.log2_sigma), float(point.normalized)
        gap = y - (at_fit - 2 * (p - fit))
        if not abs(gap) < TOLERANCE_LOG2:
            decisive, deviation, value = p, gap, y
            lower, upper = point.normalized_lower_text, point.normalized_upper_text
            break
    return dict(onset=onset, decisive=decisive, deviation=math.nan if deviation is None else deviation,
                value=math.nan if value is None else value, value_lower=lower, value_upper=upper,
                min_digits=int(used["certified_digits"].min()), guarantee=weakest_guarantee(used["guarantee"]),
                deviations=deviations)


def weakest_guarantee(guarantees) -> str:
    """The weakest of some guarantees (rigorous > heuristic > none > anything else, e.g. ``unknown``)."""
    rank = {g: i for i, g in enumerate(GUARANTEE_ORDER)}
    return max(guarantees, key=lambda g: rank.get(g, len(rank)))


def onsets(curves: pd.DataFrame, data: dict[str, StudyData]) -> pd.DataFrame:
    """σ*₀ per (data set, measure, k) under the three protocols, with the deciding evidence.

    Columns: ``dataset, measure, k`` then, per protocol P in ``paper, naive, extended``: ``P`` (σ*₀),
    ``P_decisive, P_deviation, P_value, P_value_lower, P_value_upper`` (see :func:`onset_detail`),
    ``P_digits`` and ``P_guarantee``.
    """
    rows = []
    for (name, measure, k), _ in curves.groupby(["dataset", "measure", "k"], dropna=False, sort=False):
        k = None if pd.isna(k) else int(k)
        certified = _curve(curves, name, measure, k, naive=False)
        naive = _curve(curves, name, measure, k, naive=True)
        # the extended asymptote and grid: points that certify the requested digits (a short point's interval
        # does not fix its value; the fit through one would move every deviation)
        determined = certified[certified["certified_digits"] >= certified["digits"]] \
            if "digits" in certified else certified
        grid = sorted(determined["log2_sigma"])
        row = dict(dataset=name, measure=measure, k=k, rho=data[name].rho)
        for protocol, source, points, fit in (
            ("paper", certified, PAPER_GRID, PAPER_FIT_LOG2_SIGMA),
            ("naive", naive, PAPER_GRID, PAPER_FIT_LOG2_SIGMA),
            ("extended", determined, grid, max(grid, default=None)),
        ):
            detail = onset_detail(source, points, fit)
            row.update({protocol: detail["onset"], f"{protocol}_decisive": detail["decisive"],
                        f"{protocol}_deviation": detail["deviation"], f"{protocol}_value": detail["value"],
                        f"{protocol}_value_lower": detail["value_lower"],
                        f"{protocol}_value_upper": detail["value_upper"],
                        f"{protocol}_digits": detail["min_digits"], f"{protocol}_guarantee": detail["guarantee"],
                        f"{protocol}_deviations": detail["deviations"]})
        rows.append(row)
    return pd.DataFrame(rows)


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame without its dict-valued evidence columns (``P_deviations``): one value per cell, for CSV.
    :func:`deviations_table` holds that evidence in long form."""
    return frame.drop(columns=[c for c in frame.columns if c.endswith("_deviations")])


def deviations_table(onset_frame: pd.DataFrame) -> pd.DataFrame:
    """The onsets' per-σ evidence in long form: one row per (data set, measure, k, protocol, log2 σ) with the
    ``deviation`` from the asymptote (log2 units) and the point's ``certified_digits``."""
    rows = []
    for _, row in onset_frame.iterrows():
        for protocol in PROTOCOLS:
            for p, (deviation, digits) in sorted((row.get(f"{protocol}_deviations") or {}).items()):
                rows.append(dict(dataset=row["dataset"], measure=row["measure"], k=row["k"], protocol=protocol,
                                 log2_sigma=p, deviation=deviation, certified_digits=digits))
    columns = ["dataset", "measure", "k", "protocol", "log2_sigma", "deviation", "certified_digits"]
    return pd.DataFrame(rows, columns=columns)


def metric_onset_from_rho(rho: float) -> float:
    """Paper-protocol metric onset from ρ alone, by the proven closed form of the relative metric dissonance,
    1 − √((1 − e^{−v})/v) with v = ρ²/2σ² (proofs/theorem2): a check on the whole data set at no cost."""
    values = []
    for p in PAPER_GRID:
        v = rho * rho / (2 * 4.0**p)
        values.append(math.log2(1 - math.sqrt(-math.expm1(-v) / v)))
    return onset_from_curve(list(PAPER_GRID), values, PAPER_FIT_LOG2_SIGMA)


def table_two(onset_frame: pd.DataFrame, data: dict[str, StudyData]) -> pd.DataFrame:
    """Table II: per data set and column (metric, eigenvalue, eigenprojection k=1) the paper's onset and ours
    under each protocol; ``metric_from_rho`` adds the metric onset of the whole set from its ρ.

    Columns: ``dataset, column, paper, paper_rho, rho, n, subsampled, ours_paper, ours_naive, ours_extended,
    match`` (``ours_paper == paper``) and ``naive_match`` (``ours_naive == paper``); the evidence columns of
    :func:`onsets` are carried along.
    """
    rows = []
    for name, item in data.items():
        printed = paper.TABLE_II.get(name)
        for column, (measure, k) in enumerate(paper.TABLE_II_MEASURES, start=1):
            found = onset_frame[(onset_frame["dataset"] == name) & (onset_frame["measure"] == measure)]
            found = found[found["k"].isna()] if k is None else found[found["k"] == k]
            if found.empty:
                continue
            o = found.iloc[0]
            expected = printed[column] if printed else math.nan
            row = dict(dataset=name, column=_label(measure, k), measure=measure, k=k, paper=float(expected),
                       paper_rho=printed[0] if printed else math.nan, rho=item.rho, n=item.X.shape[0],
                       subsampled=item.subsampled, ours_paper=o["paper"], ours_naive=o["naive"],
                       ours_extended=o["extended"])
            row.update({c: o[c] for c in o.index if c.split("_")[0] in PROTOCOLS and "_" in c})
            if measure == "metric":
                row["metric_from_rho"] = metric_onset_from_rho(item.rho_full)
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["match"] = frame["ours_paper"] == frame["paper"]
    frame["naive_match"] = frame["ours_naive"] == frame["paper"]
    return frame


def explain(row: pd.Series) -> str:
    """Why an onset cell differs from the paper (empty string for a match), from the row's evidence."""
    if row["match"]:
        return ""
    if math.isnan(row["paper"]):
        return "not in the paper"
    ours, naive = row["ours_paper"], row["ours_naive"]
    parts = []
    if row["subsampled"]:
        parts.append(f"data subsampled to {row['n']} rows (ρ = {row['rho']:.3g}, paper ρ = {row['paper_rho']:g}): "
                     "not the paper's data")
    if row["naive_match"]:
        parts.append(
            f"numerical error in the paper: the paper's float64 computation (float64-naive) gives "
            f"{_onset_text(naive)}, as printed, while the certified values give {_onset_text(ours)}"
            + _decisive_text(row))
    elif not parts:
        deviation = row["paper_deviation"]
        if row["paper_decisive"] is not None and not pd.isna(row["paper_decisive"]) and \
                abs(abs(deviation) - TOLERANCE_LOG2) < 0.1:
            parts.append(f"protocol reading: the decisive point log2 σ = {int(row['paper_decisive'])} lies "
                         f"{deviation:+.3f} log2 units from the asymptote, at the 25 % (0.25 log2) threshold")
        elif _paper_point_inside(row):
            parts.append(_paper_point_text(row))
        else:
            parts.append(f"unexplained: certified {_onset_text(ours)}, float64-naive {_onset_text(naive)}"
                         + _decisive_text(row))
    return "; ".join(parts)


def _paper_point(row):
    """log2 σ that must leave the band for the paper's onset (one grid step below it), or None."""
    paper = row["paper"]
    if math.isnan(paper) or math.isinf(paper) or paper <= 0:
        return None
    return int(round(math.log2(paper))) - 1


def _paper_point_inside(row) -> bool:
    p = _paper_point(row)
    found = row.get("paper_deviations", {}) or {}
    return p is not None and p in found and abs(found[p][0]) < TOLERANCE_LOG2


def _paper_point_text(row) -> str:
    """The paper's onset needs a point outside the band that the certified curve keeps inside it."""
    p = _paper_point(row)
    deviation, digits = row["paper_deviations"][p]
    naive = (row.get("naive_deviations", {}) or {}).get(p)
    naive_text = f"float64-naive gives {naive[0]:+.3f} there too" if naive is not None else "no float64-naive point"
    return (f"not reproduced: the printed onset {_onset_text(row['paper'])} needs log2 σ = {p} outside the ±0.25 band, "
            f"but the certified deviation there is {deviation:+.3f} ({_digits_text(digits, row['paper_guarantee'])}) "
            f"and {naive_text}, so "
            "no float64 rounding explains it; the cause lies outside the arithmetic (data version or protocol detail)")


def _decisive_text(row) -> str:
    certified, naive = row["paper_decisive"], row["naive_decisive"]
    text = []
    for label, p, deviation, digits in (("certified", certified, row["paper_deviation"], row["paper_digits"]),
                                        ("float64-naive", naive, row["naive_deviation"], None)):
        if p is not None and not pd.isna(p):
            text.append(f"{label} leaves the ±0.25 band at log2 σ = {int(p)} ({deviation:+.3f}"
                        + (f", {_digits_text(int(digits), row['paper_guarantee'])})" if digits is not None else ")"))
    return " (" + "; ".join(text) + ")" if text else ""


def _digits_text(digits: int, guarantee: str) -> str:
    """The digits behind an onset's evidence and the weakest guarantee of the curve's points."""
    return f"≥ {digits} certified digits, {guarantee}"


def _onset_text(onset: float) -> str:
    if math.isnan(onset):
        return "n/a"
    return "256+" if math.isinf(onset) else f"{onset:g}"


def onset_text(onset: float) -> str:
    """σ*₀ as the paper prints it (``256+`` for no onset, ``n/a`` when undefined)."""
    return _onset_text(onset)


def read_k(curves: pd.DataFrame, data: dict[str, StudyData], ks, k_counts: str = "eigenvectors") -> pd.DataFrame:
    """The study's curves with the eigenprojection rank k read one way (:data:`precise_kpca.reports.study.K_COUNTS`).

    ``"eigenvectors"``: the rows of rank k in ``ks`` as stored. ``"distinct"``: for each data set and k in
    ``ks``, the rows of the eigenvector count the top k distinct linear eigenvalues span
    (:attr:`StudyData.distinct_ks`), relabelled k; a data set with fewer distinct eigenvalues has no row for k.
    Other measures pass unchanged. Either way the column ``eigenvectors`` says which stored rank a row is.

    Raises
    ------
    ValueError
        Unknown ``k_counts``, or ``"distinct"`` on data whose :attr:`StudyData.distinct_ks` is not filled for ``ks``.
    """
    if k_counts not in K_COUNTS:
        raise ValueError(f"k_counts must be one of {', '.join(K_COUNTS)}, got {k_counts!r}")
    ks = sorted(set(int(k) for k in ks))
    ranked = curves["measure"] == "eigenprojection"
    other = curves[~ranked].assign(eigenvectors=curves.loc[~ranked, "k"])
    eig = curves[ranked]
    if k_counts == "eigenvectors":
        chosen = eig[eig["k"].isin(ks)].assign(eigenvectors=eig["k"])
        return pd.concat([other, chosen], ignore_index=True)
    parts = [other]
    for name in eig["dataset"].unique():
        counts = data[name].distinct_ks
        if not set(ks) <= set(counts):
            raise ValueError(f"k_counts='distinct' needs the distinct-eigenvalue counts of {name!r} for k = {ks} "
                             "(reports.study.with_distinct_counts)")
        mine = eig[eig["dataset"] == name]
        for k in ks:
            if counts[k] is not None:
                part = mine[mine["k"] == counts[k]].copy()
                part["k"] = k  # in place: the column keeps its dtype (the store's nullable Int64)
                parts.append(part.assign(eigenvectors=counts[k]))
    return pd.concat(parts, ignore_index=True)


def at_sigma(curves: pd.DataFrame, log2_sigma: int, *, naive: bool = False) -> pd.DataFrame:
    """Normalized log2 measures at one σ (certified or naive): rows ``dataset, measure, k, rho, normalized,
    certified_digits, guarantee``."""
    rows = curves[(curves["log2_sigma"] == log2_sigma) & ((curves["requested_backend"] == NAIVE_BACKEND) == naive)]
    return rows[["dataset", "measure", "k", "rho", "normalized", "certified_digits", "guarantee"]].reset_index(drop=True)


def _fit_row(quantity, frame, column, paper_values, **extra) -> dict:
    """One regression row: our fit of ``column`` on log2 ρ (NaN, not fitted, on fewer than
    :data:`MIN_FIT_POINTS` finite points or a single ρ) beside the printed one."""
    finite = frame[np.isfinite(frame[column].astype(float))]
    row = dict(quantity=quantity, **extra, n=len(finite), slope=math.nan, intercept=math.nan, r2=math.nan,
               slope_se=math.nan, intercept_se=math.nan)
    if len(finite) >= MIN_FIT_POINTS and finite["rho"].nunique() >= 2:
        fit = regress(np.log2(finite["rho"].astype(float)), finite[column].astype(float))
        row.update(slope=fit.slope, intercept=fit.intercept, r2=fit.r2, slope_se=fit.slope_se,
                   intercept_se=fit.intercept_se)
    slope, intercept, r2 = paper_values[:3]
    row.update(paper_slope=slope, paper_intercept=math.nan if intercept is None else intercept, paper_r2=r2)
    return row


def regressions(curves: pd.DataFrame, onset_frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Tables III and IV and the regressions of the Table II caption and Figs 4 and 7.

    Returns
    -------
    dict of str to DataFrame
        ``"table3"``: per k, log2 eigenprojection onset on log2 ρ (source ``paper`` = paper protocol on
        certified values, ``naive``, ``extended``); ``"table4"``: per k, log2 normalized eigenprojection
        dissonance at σ = 2⁷ (certified and naive); ``"table2_caption"``: the three Table II columns;
        ``"at_2_7"``: metric, eigenvalue, eigenprojection k=1 at 2⁷ (Figs 4 and 7). Each row has ``slope,
        intercept, r2, n`` and the printed ``paper_slope, paper_intercept, paper_r2`` (NaN where not printed).
    """
    capped = onset_frame.copy()
    for protocol in PROTOCOLS:
        capped[f"log2_{protocol}"] = [capped_log2(v) if not math.isnan(v) else math.nan for v in capped[protocol]]
    eig = capped[capped["measure"] == "eigenprojection"]
    table3 = [
        _fit_row(f"log2 onset, eigenprojection k={k}", eig[eig["k"] == k], f"log2_{source}", paper.TABLE_III[k],
                 k=k, source=source)
        for source in PROTOCOLS for k in sorted(eig["k"].dropna().unique().astype(int)) if k in paper.TABLE_III
    ]
    caption = []
    for measure, k in paper.TABLE_II_MEASURES:
        rows = capped[capped["measure"] == measure]
        rows = rows[rows["k"].isna()] if k is None else rows[rows["k"] == k]
        for source in PROTOCOLS:
            caption.append(_fit_row(f"log2 onset, {_label(measure, k)}", rows, f"log2_{source}",
                                    paper.TABLE_II_REGRESSIONS[(measure, k)], source=source))
    table4, at_7 = [], []
    for naive in (False, True):
        source = "naive" if naive else "certified"
        values = at_sigma(curves, paper.FIT_LOG2_SIGMA, naive=naive)
        for k in sorted(values["k"].dropna().unique().astype(int)):
            if k in paper.TABLE_IV:
                rows = values[(values["measure"] == "eigenprojection") & (values["k"] == k)]
                table4.append(_fit_row(f"log2 eigenprojection dissonance at 2^7, k={k}", rows, "normalized",
                                       paper.TABLE_IV[k], k=k, source=source))
        for measure in ("metric", "eigenvalue", "eigenprojection"):
            rows = values[values["measure"] == measure]
            rows = rows[rows["k"] == 1] if measure == "eigenprojection" else rows
            at_7.append(_fit_row(f"log2 {measure}{' k=1' if measure == 'eigenprojection' else ''} at 2^7", rows,
                                 "normalized", paper.AT_2_7_REGRESSIONS[measure], source=source))
    return {"table3": pd.DataFrame(table3), "table4": pd.DataFrame(table4),
            "table2_caption": pd.DataFrame(caption), "at_2_7": pd.DataFrame(at_7)}
