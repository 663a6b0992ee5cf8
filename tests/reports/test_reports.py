"""Reports: regressions, Table II logic and explanations on tiny inputs, the reproduce pipeline end to end."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca.cli import main
from precise_kpca.measures.onset import PAPER_GRID
from precise_kpca.reports import paper, regress, subsample
from precise_kpca.reports.study import StudyData
from precise_kpca.reports.tables import (
    capped_log2,
    explain,
    metric_onset_from_rho,
    onsets,
    paper_self_check,
    table_two,
    weakest_guarantee,
)

TINY = ["--log2-sigma", "6:8", "--k", "1", "--digits", "6", "--max-rows", "9", "--progress", "never"]


def _exact_fit(x, y) -> dict:
    """Least squares in exact rational arithmetic: slope, intercept, r², and the squared standard errors."""
    xs, ys = [Fraction(v) for v in x], [Fraction(v) for v in y]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((a - mx) ** 2 for a in xs)
    syy = sum((b - my) ** 2 for b in ys)
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys))
    slope = sxy / sxx
    slope_se2 = (syy - sxy * sxy / sxx) / ((n - 2) * sxx)
    return dict(slope=slope, intercept=my - slope * mx, r2=sxy * sxy / (sxx * syy) if syy else None,
                slope_se2=slope_se2, intercept_se2=slope_se2 * sum(a * a for a in xs) / n, sxx=sxx, syy=syy)


@given(st.lists(st.tuples(st.integers(-1000, 1000), st.integers(-1000, 1000)), min_size=3, max_size=12,
                unique_by=lambda pair: pair[0]))
@settings(max_examples=60, deadline=None)
def test_regress_matches_exact_least_squares(points):
    """Slope, intercept, r² and both standard errors against exact rational least squares (tolerances: multiples
    of eps on each quantity's own scale; squared errors compared, as their roots lose accuracy near zero)."""
    x, y = [float(a) for a, _ in points], [float(b) for _, b in points]
    fit, exact = regress(x, y), _exact_fit(x, y)
    eps, n = Fraction(np.finfo(float).eps), len(x)
    scale = (exact["syy"] / exact["sxx"]) ** 0.5 if exact["syy"] else 1  # the size of a slope on these data
    tol = 64 * n * eps
    assert abs(Fraction(fit.slope) - exact["slope"]) <= tol * (abs(exact["slope"]) + Fraction(scale))
    assert abs(Fraction(fit.intercept) - exact["intercept"]) <= tol * 1000 * (1 + abs(exact["slope"]) + Fraction(scale))
    if exact["r2"] is not None:
        assert abs(Fraction(fit.r2) - exact["r2"]) <= tol
    se_scale = exact["syy"] / (exact["sxx"] * (n - 2)) + eps
    assert abs(Fraction(fit.slope_se) ** 2 - exact["slope_se2"]) <= tol * se_scale
    assert abs(Fraction(fit.intercept_se) ** 2 - exact["intercept_se2"]) <= tol * se_scale * 10**6
    assert fit.n == n


def test_regress_on_constant_y_is_an_exact_fit_with_zero_errors():
    """Hypothesis found it: y all equal gives scipy's r (and from it the standard errors) as NaN; the fit is exact."""
    fit = regress([0.0, 1.0, -1.0], [0.0, 0.0, 0.0])
    assert (fit.slope, fit.intercept, fit.slope_se, fit.intercept_se) == (0.0, 0.0, 0.0, 0.0)
    assert math.isnan(fit.r2)


def test_regress_refuses_fewer_than_three_points_and_equal_x():
    fit = regress([0, 1, 2], [1, 3, 4])  # sxx = 2, sxy = 3, syy = 42/9: residual 1/6, s.e. of slope sqrt(1/12)
    assert (fit.slope, fit.intercept, fit.r2) == pytest.approx((1.5, 7 / 6, 27 / 28), rel=8 * np.finfo(float).eps)
    assert fit.slope_se == pytest.approx(math.sqrt(1 / 12), rel=8 * np.finfo(float).eps)
    with pytest.raises(ValueError, match="all x are equal"):
        regress([1, 1, 1], [0, 2, 3])
    with pytest.raises(ValueError, match="at least 3 finite points"):
        regress([1.0, 2.0], [2.0, 5.0])


def test_a_regression_row_on_two_points_is_not_fitted():
    from precise_kpca.reports.tables import _fit_row

    two = pd.DataFrame(dict(rho=[2.0, 8.0, 4.0], y=[1.0, 3.0, math.nan]))
    row = _fit_row("q", two, "y", (1.0, 0.0, 1.0))
    assert row["n"] == 2 and all(math.isnan(row[c]) for c in ("slope", "intercept", "r2", "slope_se"))
    three = two.fillna(2.5)
    row = _fit_row("q", three, "y", (1.0, 0.0, 1.0))
    assert row["n"] == 3 and row["slope"] == pytest.approx(regress(np.log2([2.0, 8.0, 4.0]), [1.0, 3.0, 2.5]).slope)


def test_printed_table_ii_reproduces_its_caption_and_table_iii_row_one():
    check = paper_self_check()
    assert (check["slope"].round(2) == check["paper_slope"]).all()
    assert (check["r2"].round(2) == check["paper_r2"]).all()
    assert round(check["intercept"].iloc[-1], 2) == paper.TABLE_III[1][1]
    assert capped_log2(math.inf) == 8


@pytest.mark.parametrize("name", list(paper.TABLE_II))
def test_metric_column_follows_from_printed_rho(name):
    rho, metric_onset = paper.TABLE_II[name][:2]
    assert metric_onset_from_rho(rho) == metric_onset


def test_subsample_is_seeded_and_ordered():
    X = np.arange(40.0).reshape(20, 2)
    a, b = subsample(X, 5, seed=3), subsample(X, 5, seed=3)
    assert np.array_equal(a, b) and a.shape == (5, 2)
    assert (np.diff(a[:, 0]) > 0).all()
    assert subsample(X, 50, seed=3) is X
    with pytest.raises(ValueError, match="at least 3"):
        subsample(X, 2, seed=0)


def _curve_rows(dataset, measure, k, values, naive):
    return [dict(dataset=dataset, rho=4.0, n=9, log2_sigma=p, measure=measure, k=k, normalized=v,
                 normalized_lower_text=f"lower at {p}", normalized_upper_text=f"upper at {p}",
                 certified_digits=0 if naive else 10, guarantee="none" if naive else "rigorous",
                 requested_backend="float64-naive" if naive else "auto") for p, v in values.items()]


def test_table_two_and_explanations_on_synthetic_curves():
    """Certified values on the exact −2 asymptote (onset 2⁻⁴); the naive ones break at 2⁸ (onset 256+)."""
    exact = {p: -2.0 * p for p in PAPER_GRID}
    broken = {**exact, 8: -10.0}  # 2^8 is 6 log2 units above its asymptote: float64 round-off
    rows = []
    for measure, k in paper.TABLE_II_MEASURES:
        rows += _curve_rows("wine", measure, k, exact, naive=False) + _curve_rows("wine", measure, k, broken, naive=True)
    curves = pd.DataFrame(rows).astype({"k": "Int64"})
    item = StudyData("wine", np.zeros((9, 2)), 178, 13, 5.0035, 4.0, 2)
    frame = onsets(curves, {"wine": item})
    assert (frame["paper"] == 2.0**-4).all() and (frame["naive"] == math.inf).all()
    assert (frame["naive_decisive"] == 8).all()
    assert frame["naive_deviation"].tolist() == pytest.approx([6.0] * 3)
    assert (frame["naive_value_lower"] == "lower at 8").all() and (frame["naive_value_upper"] == "upper at 8").all()
    assert (frame["paper_value_lower"] == "").all()  # no certified point leaves the band
    assert (frame["paper_guarantee"] == "rigorous").all() and (frame["naive_guarantee"] == "none").all()
    table = table_two(frame, {"wine": item})
    assert (table["naive_value_lower"] == "lower at 8").all() and (table["paper_guarantee"] == "rigorous").all()
    assert table["column"].tolist() == ["metric", "eigenvalue", "eigenprojection k=1"]
    assert not table["match"].any()  # the paper prints 4, 4, 4 for wine
    assert table["metric_from_rho"].iloc[0] == 4
    text = explain(table.iloc[0])
    assert "subsampled to 9 rows" in text and "unexplained" not in text
    # the paper's value equal to the naive onset: the explanation is the paper's float64 error
    table.loc[:, "paper"] = math.inf
    table["match"] = table["ours_paper"] == table["paper"]
    table["naive_match"] = table["ours_naive"] == table["paper"]
    text = explain(table.iloc[1])
    assert "numerical error in the paper" in text and "float64-naive leaves the ±0.25 band at log2 σ = 8" in text
    broken_certified = table.assign(paper_decisive=8, paper_deviation=6.0).iloc[1]
    assert "(+6.000, ≥ 10 certified digits, rigorous)" in explain(broken_certified)
    assert explain(table.assign(match=True).iloc[0]) == ""


def _not_reusable(store) -> int:
    """Stored points of a certified request that are not rigorous to the requested digits."""
    from precise_kpca.studies import ResultsStore

    with ResultsStore(store) as db:
        points = db.frame()
    certified = points[points["requested_backend"] != "float64-naive"]
    return int((~((certified["guarantee"] == "rigorous") & (certified["certified_digits"] >= certified["digits"]))).sum())


def test_reproduce_cli_end_to_end_twice(data_dir, tmp_path, capsys):
    """The second run recomputes exactly the stored points that are not rigorous to the requested digits."""
    store, out = tmp_path / "store.sqlite", tmp_path / "report"
    args = ["reproduce", "--datasets", "wine,cpu", "--data-dir", str(data_dir), "--store", str(store), "--out", str(out),
            "--executor", "serial", *TINY]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "Table I: 2/2 data sets match the paper" in first and "reused 0 from the store" in first
    first_points = int(first.split("points: computed ", 1)[1].split(",", 1)[0])
    again = _not_reusable(store)
    assert main(args) == 0
    second = capsys.readouterr().out
    assert f"points: computed {again}, reused {first_points - again} from the store" in second
    curves = pd.read_csv(out / "curves.csv", dtype=str, keep_default_na=False)
    certified = curves[curves["requested_backend"] != "float64-naive"]
    counts = certified["guarantee"].value_counts()
    rigorous = certified[certified["guarantee"] == "rigorous"]
    fewest = min(int(d) for d in rigorous["certified_digits"])
    assert (f"certified points: {len(certified)}, of which {counts.get('rigorous', 0)} rigorous (fewest certified digits "
            f"{fewest}), {counts.get('heuristic', 0)} heuristic, {counts.get('none', 0)} none") in second
    eps = Fraction(np.finfo(float).eps)
    for row in rigorous.itertuples():  # the interval columns made it to the CSV and hold the value (a float midpoint)
        value = Fraction(float(row.value_text))
        assert Fraction(row.lower_text) - abs(value) * eps <= value <= Fraction(row.upper_text) + abs(value) * eps
    for name in ("onsets.csv", "table2.csv"):
        columns = pd.read_csv(out / name).columns
        assert {"paper_value_lower", "paper_value_upper", "paper_guarantee", "naive_guarantee"} <= set(columns), name
    for name in ("onsets.csv", "table2.csv", "onset_deviations.csv", "table1.csv", "curves.csv"):
        cells = pd.read_csv(out / name, dtype=str, keep_default_na=False).to_numpy().ravel()
        assert not any(cell.startswith("{") for cell in cells), name  # tidy: one value per cell, no dict reprs
    deviations = pd.read_csv(out / "onset_deviations.csv")
    assert set(deviations["protocol"]) == {"paper", "naive", "extended"}
    assert set(deviations[deviations["protocol"] == "paper"]["log2_sigma"]) <= set(range(-4, 9))
    for name in ("report.md", "table1.csv", "table2.csv", "table3.csv", "table4.csv", "regressions.csv",
                 "fig1.png", "fig3.png", "fig4.png", "fig5.png", "fig6.png", "fig7.png"):
        assert (out / name).stat().st_size > 0, name
    report = (out / "report.md").read_text(encoding="utf-8")
    _check_provenance(out, report)
    table2 = pd.read_csv(out / "table2.csv")
    mismatches = table2[~table2["match"]]
    assert len(mismatches)  # 9 rows are not the paper's data
    section = report.split("### Mismatches and their explanation", 1)[1].split("## Regressions", 1)[0]
    for row in mismatches.itertuples():
        assert f"**{paper.paper_name(row.dataset)}, {row.column}**" in section
    assert section.count("\n* ") == len(mismatches)
    assert "not available offline and missing here: none." in report  # all 30 sets are in the data directory
    not_run = report.split("Available but not in this run: ", 1)[1].split(".\n", 1)[0].split(", ")
    assert sorted(not_run) == sorted(set(paper.TABLE_II) - {"wine", "cpu"}) and len(not_run) == 28
    assert "**2 of 2** data sets" in report
    reading = report.split("## Reading of k in Algorithm 1", 1)[1].split("\n## ", 1)[0]
    assert "no data set of this run" in reading and "`eigenvectors`" in reading  # wine, cpu: no tie
    from precise_kpca.studies import ResultsStore

    with ResultsStore(store) as db:
        runs = db.runs()
    assert list(runs["computed"]) == [first_points] + ([again] if again else []) and first_points > 0
    assert f"| `serial` | {len(runs)} | {first_points + again} |" in report
    for name in ("wine", "cpu"):
        mine = certified[certified["dataset"] == name]
        cells = [str(len(mine))] + [str((mine["guarantee"] == g).sum()) for g in ("rigorous", "heuristic", "none")]
        assert f"| {name} | {' | '.join(cells)} |" in report


def _check_provenance(out, report: str) -> None:
    """provenance.json covers every file written, by its real sha256; report.md quotes the same record."""
    import hashlib
    import json

    record = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    written = {p.name for p in out.iterdir()} - {"provenance.json"}
    assert set(record["files"]) == written and {"report.md", "curves.csv", "table3.csv"} <= written
    for name, digest in record["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name
    assert "## Provenance" in report and f"git commit {record['library']['commit']}" in report
    assert f"numpy {record['versions']['numpy']}" in report and record["date"] in report


def test_reproduce_cli_rejects_bad_arguments(data_dir, tmp_path, capsys):
    base = ["reproduce", "--data-dir", str(data_dir), "--store", str(tmp_path / "s.sqlite"), "--out", str(tmp_path)]
    assert main(base + ["--datasets", "nosuchset"]) == 2
    assert "unknown data set 'nosuchset'" in capsys.readouterr().err
    assert main(base + ["--max-log2-sigma", "5"]) == 2
    assert "at least 8" in capsys.readouterr().err
    assert main(base + ["--datasets", "wine", "--max-rows", "2"]) == 2


def test_reproduce_cli_on_dask_local_cluster(data_dir, tmp_path, capsys, dask_address):
    args = ["reproduce", "--datasets", "wine", "--data-dir", str(data_dir), "--store", str(tmp_path / "s.sqlite"),
            "--out", str(tmp_path / "out"), "--executor", dask_address, *TINY]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "on dask" in out and "reused 0 from the store" in out
    curves = pd.read_csv(tmp_path / "out" / "curves.csv")
    certified = curves[curves["requested_backend"] != "float64-naive"]
    assert len(certified) == 9 and (certified["certified_digits"] >= 6).all()
    assert all(Fraction(s) == Fraction(2) ** p for s, p in zip(curves["sigma"], curves["log2_sigma"]))


def test_the_weakest_guarantee_decides_an_onset():
    assert weakest_guarantee(["rigorous", "rigorous"]) == "rigorous"
    assert weakest_guarantee(["rigorous", "heuristic", "rigorous"]) == "heuristic"
    assert weakest_guarantee(["heuristic", "none", "rigorous"]) == "none"
    assert weakest_guarantee(["none", "unknown", "heuristic"]) == "unknown"


def _mismatch_row(deviation_at_paper_point):
    return pd.Series(dict(
        match=False, paper=16.0, ours_paper=8.0, ours_naive=8.0, subsampled=False, naive_match=False, n=768,
        rho=8.41, paper_rho=8.41, paper_decisive=2, paper_deviation=-0.671, paper_digits=29, paper_guarantee="heuristic",
        naive_decisive=2,
        naive_deviation=-0.671, paper_deviations={2: (-0.671, 29), 3: (deviation_at_paper_point, 29)},
        naive_deviations={2: (-0.671, 0), 3: (deviation_at_paper_point, 0)}))


def test_a_printed_onset_the_certified_curve_contradicts_is_explained_with_the_point_it_needs():
    text = explain(_mismatch_row(-0.198))
    assert text.startswith("not reproduced") and "log2 σ = 3" in text and "-0.198" in text
    assert "(≥ 29 certified digits, heuristic)" in text
    # mutation: were that point outside the band, the printed onset would follow and this reading must not apply
    assert "not reproduced" not in explain(_mismatch_row(-0.31))


def test_digits_section_counts_guarantees_lists_short_points_and_proves_a_linear_tie():
    """Points per guarantee and the fewest digits among rigorous ones (a heuristic point with fewer digits does not
    count); points below the request or undetermined are listed with their reason; an undetermined point at a k
    that cuts an exactly repeated linear eigenvalue gets the exact proof, one at a k that does not cut it does not."""
    from precise_kpca.reports.markdown import _digits_section
    from precise_kpca.reports.study import StudyPlan

    from ..numerics.test_perturbed_spectrum import SYMMETRIC  # λ_2 = λ_3 exactly

    def row(p, measure, k, digits, guarantee, reason="", value_text="0.25"):
        return dict(dataset="wine", log2_sigma=p, measure=measure, k=k, certified_digits=digits, guarantee=guarantee,
                    reason=reason, value_text=value_text)

    tie = "not determined: linear eigenvalues 1 and 2 coincide"
    short = "the rigorous interval certifies 5 of the 8 digits requested"
    curves = pd.DataFrame([row(4, "eigenprojection", 1, 20, "rigorous"), row(12, "eigenprojection", 1, 14, "rigorous"),
                           row(12, "metric", pd.NA, 9, "heuristic"), row(12, "eigenvalue", pd.NA, 5, "rigorous", short),
                           row(4, "eigenprojection", 2, 0, "none", tie, "nan"),
                           row(12, "eigenprojection", 2, 0, "none", tie, "nan")])
    item = StudyData("wine", SYMMETRIC, 178, 13, 5.0035, 4.0, 2)
    plan = StudyPlan(log2_sigmas=(4, 12), ks=(1, 2), digits=8)
    text = "\n".join(_digits_section(curves, {"wine": item}, plan))
    assert "| wine | 6 | 3 | 1 | 2 | 20 | 5 | 3 |" in text
    assert f"**wine, eigenprojection k=2** at σ = 2^4, 2^12: undetermined — {tie}." in text
    assert f"**wine, eigenvalue** at σ = 2^12: rigorous, 5 digits at most — {short}." in text
    assert "metric" not in text.split("### Points short", 1)[1]  # 9 heuristic digits ≥ 8: not short
    assert "λ_2 = … = λ_3" in text and "k = 2 cuts such a run" in text
    curves.loc[curves["k"] == 2, "k"] = 3  # k = 3 holds the whole run: a refusal there is not the tie's
    text = "\n".join(_digits_section(curves, {"wine": item}, plan))
    assert "λ_2 = … = λ_3" in text and "cuts such a run" not in text
    good = curves[curves["certified_digits"] >= 8]
    assert "Every point carries at least 8 certified digits." in "\n".join(_digits_section(good, {"wine": item}, plan))


def _widened(m, digits: int):
    """The rigorous Measurement m with its interval widened to about 3 digits, reported short of ``digits``."""
    import mpmath

    from precise_kpca.measures.measurement import Measurement, Route, exact_mpf

    wide = mpmath.MPContext()
    wide.prec = 400
    mid = wide.mpf(exact_mpf(m.value))
    lower, upper = (mpmath.mp.make_mpf((mid * (1 + side * wide.mpf(2) ** -12))._mpf_) for side in (-1, 1))
    return Measurement(measure=m.measure, sigma=m.sigma, k=m.k, value=m.value, normalized=m.normalized,
                       backend=m.backend, dps=m.dps, method="test: widened", seconds=m.seconds, lower=lower,
                       upper=upper, guarantee="rigorous", route=Route("binary128-enclosure", "test"),
                       reason="test: the enclosure was widened", requested_digits=digits)


def _undetermined(m, digits: int):
    from precise_kpca.measures.measurement import Measurement, Route

    return Measurement(measure=m.measure, sigma=m.sigma, k=m.k, value=math.nan, normalized=math.nan,
                       backend=m.backend, dps=m.dps, method="test: refused", seconds=m.seconds, guarantee="none",
                       route=Route("binary128-enclosure", "test"), reason="not determined: test tie",
                       requested_digits=digits)


def test_report_lists_a_short_and_an_undetermined_point_with_their_reasons_and_a_rerun_replaces_them(
        data_dir, tmp_path, monkeypatch):
    import precise_kpca.measures as measures
    from precise_kpca.reports import reproduce

    real = measures.measure
    fakes = {("eigenvalue", Fraction(2) ** 7): _widened, ("eigenprojection", Fraction(2) ** 6): _undetermined}

    def faking(X, name, sigma, **options):
        m = real(X, name, sigma, **options)
        fake = fakes.get((name, Fraction(sigma))) if options["backend"] == "auto" else None
        return m if fake is None else fake(m, options["digits"])

    options = dict(out_dir=tmp_path / "out", log2_sigmas=[6, 7, 8], ks=(1,), digits=6, max_rows=9, data_dir=data_dir,
                   store=tmp_path / "s.sqlite", executor="serial", progress=False)
    monkeypatch.setattr(measures, "measure", faking)
    result = reproduce(["wine"], **options)
    short = result.curves[(result.curves["measure"] == "eigenvalue") & (result.curves["log2_sigma"] == 7)
                          & (result.curves["requested_backend"] == "auto")]
    assert list(short["certified_digits"]) == [3] and list(short["guarantee"]) == ["rigorous"]
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    section = report.split("### Points short of the requested digits or undetermined", 1)[1].split("\n## ", 1)[0]
    assert "* **wine, eigenvalue** at σ = 2^7: rigorous, 3 digits at most — test: the enclosure was widened." in section
    assert "* **wine, eigenprojection k=1** at σ = 2^6: undetermined — not determined: test tie." in section
    assert "Exact check for **wine**" in section and "repeated linear eigenvalues: none." in section
    certified = result.curves[result.curves["requested_backend"] == "auto"]
    counts = [str((certified["guarantee"] == g).sum()) for g in ("rigorous", "heuristic", "none")]
    assert counts[2] == "1" and f"| wine | 9 | {' | '.join(counts)} |" in report
    assert "short of the requested 6 digits or undetermined: 2." in report

    monkeypatch.setattr(measures, "measure", real)
    kept = reproduce(["wine"], **options)  # rigorous-but-short and undetermined points are final for this code
    assert kept.stats.computed == 0
    again = reproduce(["wine"], retry_uncertified=True, **options)  # ... until a rerun asks to retry them
    assert again.stats.computed == 2
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "test:" not in report and "| wine | 9 |" in report


def _exact_distinct_counts(X, ks, digits: int = 60) -> dict:
    """Independent reference: mpmath.eigsy of the exact centered covariance (Fractions from the float64 data) at
    ``digits`` digits; eigenvalues closer than 10^(20 − digits) relative are one distinct value."""
    import mpmath

    ctx = mpmath.MPContext()
    ctx.dps = digits
    rows = [[Fraction(float(v)) for v in row] for row in X]
    n, d = len(rows), len(rows[0])
    means = [sum(r[j] for r in rows) / n for j in range(d)]
    cov = [[sum((r[i] - means[i]) * (r[j] - means[j]) for r in rows) for j in range(d)] for i in range(d)]
    values = sorted(ctx.eigsy(ctx.matrix([[ctx.mpf(c.numerator) / c.denominator for c in row] for row in cov]),
                              eigvals_only=True), reverse=True)
    top = values[0]
    nonzero = [v for v in values if v > top * ctx.mpf(10) ** (20 - digits)]
    ends = [i + 1 for i in range(len(nonzero))
            if i + 1 == len(nonzero) or nonzero[i] - nonzero[i + 1] > top * ctx.mpf(10) ** (20 - digits)]
    return {k: ends[k - 1] if k <= len(ends) else None for k in ks}


AXES = np.array([[3.0, 0, 0, 0], [-3.0, 0, 0, 0], [0, 2.0, 0, 0], [0, -2.0, 0, 0], [0, 0, 2.0, 0], [0, 0, -2.0, 0],
                 [0, 0, 0, 1.0], [0, 0, 0, -1.0]])
"""Covariance diag(18, 8, 8, 2) exactly: distinct eigenvalues 18 > 8 (twice) > 2."""


def test_distinct_counts_map_k_distinct_eigenvalues_to_the_eigenvectors_they_span(data_dir):
    from precise_kpca.datasets import load
    from precise_kpca.reports.study import distinct_eigenvector_counts

    assert distinct_eigenvector_counts(AXES, range(1, 6)) == {1: 1, 2: 3, 3: 4, 4: None, 5: None}
    assert _exact_distinct_counts(AXES, range(1, 6)) == {1: 1, 2: 3, 3: 4, 4: None, 5: None}
    ttt = load("tic-tac-toe", data_dir=data_dir)  # the board's symmetry repeats linear eigenvalues exactly
    found = distinct_eigenvector_counts(ttt, range(1, 8))
    assert found == _exact_distinct_counts(ttt, range(1, 8)) and found[2] == 3 and found[5] == 6
    wine = load("wine", data_dir=data_dir)
    assert distinct_eigenvector_counts(wine, range(1, 6)) == {k: k for k in range(1, 6)}


def _ranked_curves() -> pd.DataFrame:
    rows = [dict(dataset=name, measure="eigenprojection", k=float(k), log2_sigma=7, normalized=-float(10 * k),
                 requested_backend="auto", rho=2.0) for name in ("t", "w") for k in (1, 2, 3)]
    rows.append(dict(dataset="t", measure="metric", k=math.nan, log2_sigma=7, normalized=-5.0,
                     requested_backend="auto", rho=2.0))
    return pd.DataFrame(rows)


def test_read_k_relabels_the_eigenvector_count_of_k_distinct_eigenvalues():
    from precise_kpca.reports.tables import read_k

    data = {"t": StudyData("t", AXES, 8, 4, 2.0, 2.0, 4, {1: 1, 2: 3}),
            "w": StudyData("w", AXES, 8, 4, 2.0, 2.0, 4, {1: 1, 2: 2})}
    curves = _ranked_curves()
    distinct = read_k(curves, data, [1, 2], "distinct")
    eig = distinct[distinct["measure"] == "eigenprojection"].set_index(["dataset", "k"])
    assert eig.loc[("t", 2.0), "normalized"] == -30.0 and eig.loc[("t", 2.0), "eigenvectors"] == 3
    assert eig.loc[("w", 2.0), "normalized"] == -20.0 and len(eig) == 4
    assert (distinct["measure"] == "metric").sum() == 1
    counted = read_k(curves, data, [1, 2], "eigenvectors")
    assert sorted(counted.loc[counted["dataset"] == "t", "normalized"]) == [-20.0, -10.0, -5.0]
    with pytest.raises(ValueError, match="k_counts must be one of"):
        read_k(curves, data, [1], "eigenvalues")
    with pytest.raises(ValueError, match="distinct-eigenvalue counts of 't'"):
        read_k(curves, {**data, "t": StudyData("t", AXES, 8, 4, 2.0, 2.0, 4)}, [1, 2], "distinct")


def test_eigenvector_ks_adds_the_distinct_readings_ranks():
    from precise_kpca.reports.study import eigenvector_ks

    item = StudyData("t", AXES, 8, 4, 2.0, 2.0, 4, {1: 1, 2: 3, 3: 4, 4: None})
    assert eigenvector_ks(item, (1, 2, 3, 4)) == [1, 2, 3, 4]
    assert eigenvector_ks(StudyData("t", AXES, 8, 4, 2.0, 2.0, 3, {1: 1, 2: 3}), (1, 2)) == [1, 2, 3]
    assert eigenvector_ks(StudyData("t", AXES, 8, 4, 2.0, 2.0, 1), (1, 2)) == [1]


def test_k_reading_section_names_the_tied_set_and_the_reading_nearer_the_paper():
    from precise_kpca.reports.markdown import _k_reading_section, _reading_distance
    from precise_kpca.reports.study import StudyPlan

    def fits(slope):
        table3 = pd.DataFrame([dict(k=2, source="paper", slope=slope, intercept=0.0, r2=0.5, n=30, paper_slope=0.5,
                                    paper_intercept=0.0, paper_r2=0.5)])
        return {"table3": table3, "table4": pd.DataFrame()}

    data = {"tic-tac-toe": StudyData("tic-tac-toe", AXES, 958, 27, 1.22, 1.22, 18, {1: 1, 2: 3}),
            "wine": StudyData("wine", AXES, 178, 13, 5.0, 5.0, 13, {1: 1, 2: 2})}
    readings = {"eigenvectors": fits(0.8), "distinct": fits(0.5)}
    assert _reading_distance(readings["eigenvectors"]) == pytest.approx(0.1) and _reading_distance(fits(0.5)) == 0
    text = "\n".join(_k_reading_section(data, StudyPlan((7,), (1, 2)), "distinct", readings))
    assert "**tic-tac-toe**: distinct k = 1 → 1 eigenvectors, 2 → 3 eigenvectors" in text and "wine" not in text
    assert "`eigenvectors` 0.100, `distinct` 0.000" in text and "| distinct | Table 3 | 2 | 0.50" in text


def test_fig1_data_have_exactly_null_cross_covariance_unit_variances_and_a_nonlinear_dependence():
    from precise_kpca.reports.figures import exact_covariance, null_covariance_data

    X = null_covariance_data(200, seed=3)
    rows = [(Fraction(float(a)), Fraction(float(b))) for a, b in X]
    n = len(rows)
    mx, my = sum(a for a, _ in rows) / n, sum(b for _, b in rows) / n
    cross = sum((a - mx) * (b - my) for a, b in rows) / (n - 1)
    variances = [sum((r[j] - m) ** 2 for r in rows) / (n - 1) for j, m in ((0, mx), (1, my))]
    assert cross == 0 and all(abs(v - 1) <= 8 * n * Fraction(np.finfo(float).eps) for v in variances)
    assert exact_covariance(X) == [[variances[0], cross], [cross, variances[1]]]
    # the dependence covariance misses: y against x² is nearly linear (r² of the parabola well above 0.9)
    assert regress(X[:, 0] ** 2, X[:, 1]).r2 > 0.9
    with pytest.raises(ValueError, match="n must be an even integer"):
        null_covariance_data(7)


def test_aggregation_curves_and_figures_1_and_2(data_dir, tmp_path):
    from precise_kpca.measures import measure
    from precise_kpca.reports.figures import write_figures
    from precise_kpca.reports.study import aggregation_curves, load_study_data, StudyPlan

    data = load_study_data(["wine", "cpu", "diabetes"], data_dir=data_dir, max_rows=10)
    data["diabetes"] = StudyData("diabetes", data["diabetes"].X[:3], 768, 8, 1.0, 1.0, 2)  # fewest rows, rank 2
    plan = StudyPlan((6, 7, 12), (1, 3), 6)
    frame, k = aggregation_curves(data, plan, progress=False)
    assert k == 3 and set(frame["dataset"]) == {"wine", "cpu"}  # the two smallest sets of rank ≥ 3
    assert sorted(frame["log2_sigma"].unique()) == [6, 7]  # the paper's grid only
    assert len(frame) == 2 * 2 * 2 and set(frame["aggregate"]) == {"mean", "max"}
    row = frame[(frame["dataset"] == "wine") & (frame["aggregate"] == "max") & (frame["log2_sigma"] == 7)].iloc[0]
    m = measure(data["wine"].X, "eigenprojection", 128, k=3, digits=6, aggregate="max")
    assert row["normalized"] == float(m.normalized) and row["guarantee"] == m.guarantee == "rigorous"
    mean = frame[(frame["dataset"] == "wine") & (frame["aggregate"] == "mean") & (frame["log2_sigma"] == 7)]
    assert mean["normalized"].iloc[0] != row["normalized"]  # three groups: the aggregations differ
    assert aggregation_curves(data, StudyPlan((6, 7), (1,), 6), progress=False)[1] is None
    no_curves = pd.DataFrame({c: pd.Series(dtype=float if c in ("k", "rho", "log2_sigma", "normalized") else object)
                              for c in ("dataset", "measure", "k", "rho", "log2_sigma", "normalized",
                                        "requested_backend", "guarantee", "certified_digits")})
    written = write_figures(no_curves, tmp_path, aggregation=frame, aggregation_k=k)
    assert {"fig1", "fig2"} <= set(written) and all(p.stat().st_size > 0 for p in written.values())


def test_figures_of_measures_the_curves_lack_are_not_written(tmp_path):
    """Figs 3 and 5 (metric, eigenvalue) and Fig 8 (k ≥ 2) from eigenprojection k = 1 curves alone: none written."""
    from precise_kpca.reports.figures import write_figures

    rows = [dict(dataset=name, measure="eigenprojection", k=1, rho=rho, log2_sigma=p, normalized=-2.0 * p,
                 requested_backend=backend, guarantee="rigorous" if backend == "auto" else "none",
                 certified_digits=12 if backend == "auto" else 0)
            for name, rho in (("a", 2.0), ("b", 5.0), ("c", 9.0)) for p in (6, 7, 8)
            for backend in ("auto", "float64-naive")]
    written = write_figures(pd.DataFrame(rows), tmp_path)
    assert set(written) == {"fig1", "fig6", "fig7"}
    assert {p.stem for p in tmp_path.glob("*.png")} == {"fig1", "fig6", "fig7"}


def test_time_section_sums_seconds_per_set_and_route():
    """The per-set/per-route table: route names without their descriptions, naive and undetermined points apart,
    sums per cell, costliest set first, and a points row."""
    from precise_kpca.reports.markdown import _time_section

    curves = pd.DataFrame({
        "dataset": ["a", "a", "a", "b", "b", "b"],
        "route": ["binary128-enclosure (Weyl …)", "structured-enclosure (Li–Li …)", None,
                  "binary128-enclosure (Kahan …)", "", None],
        "requested_backend": ["auto", "auto", "float64-naive", "auto", "auto", "float64-naive"],
        "seconds": [1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
    })
    lines = _time_section(curves)
    table = [line for line in lines if line.startswith("|")]
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert header == ["data set", "float64-naive", "undetermined", "binary128-enclosure", "structured-enclosure",
                      "all"]
    assert table[2] == "| b | 32.0 | 16.0 | 8.0 | 0.0 | 56.0 |"
    assert table[3] == "| a | 4.0 | 0.0 | 1.0 | 2.0 | 7.0 |"
    assert table[-1] == "| points | 2 | 1 | 2 | 1 | 6 |"


def test_extended_onset_leaves_out_points_short_of_their_digits():
    """The extended protocol fits through the largest σ whose point certifies the requested digits: a short point
    at the top of the grid (0 digits, its midpoint far off the asymptote) neither anchors the fit nor decides."""
    grid = list(PAPER_GRID) + list(range(10, 31, 2))
    rows = _curve_rows("wine", "eigenvalue", pd.NA, {p: -2.0 * p for p in grid}, naive=False)
    for row in rows:
        row["digits"] = 8
        if row["log2_sigma"] >= 26:
            row.update(normalized=-40.0, certified_digits=0)
    curves = pd.DataFrame(rows).astype({"k": "Int64"})
    item = StudyData("wine", np.zeros((9, 2)), 178, 13, 5.0035, 4.0, 2)
    frame = onsets(curves, {"wine": item})
    assert frame["extended"].iloc[0] == 2.0**-4
    assert frame["extended_digits"].iloc[0] == 10 and set(frame["extended_deviations"].iloc[0]) == set(grid) - {26, 28, 30}
    everything_short = curves.assign(certified_digits=0)
    assert math.isnan(onsets(everything_short, {"wine": item})["extended"].iloc[0])
