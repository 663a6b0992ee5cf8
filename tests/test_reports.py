"""Reports: regressions, Table II logic and explanations on tiny inputs, the reproduce pipeline end to end."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

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
)

TINY = ["--log2-sigma", "6:8", "--k", "1", "--digits", "6", "--max-rows", "9", "--progress", "never"]


def test_regress_matches_hand_computation():
    fit = regress([0, 1, 2], [1, 3, 4])  # sxx = 2, sxy = 3, syy = 42/9
    assert fit.slope == pytest.approx(1.5, rel=4 * np.finfo(float).eps)
    assert fit.intercept == pytest.approx(7 / 6, rel=4 * np.finfo(float).eps)
    assert fit.r2 == pytest.approx(27 / 28, rel=4 * np.finfo(float).eps)
    assert fit.n == 3
    with pytest.raises(ValueError, match="all x are equal"):
        regress([1, 1], [0, 2])
    with pytest.raises(ValueError, match="at least two finite points"):
        regress([1.0], [2.0])


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
                 certified_digits=0 if naive else 10,
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
    table = table_two(frame, {"wine": item})
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
    assert explain(table.assign(match=True).iloc[0]) == ""


def test_reproduce_cli_end_to_end_twice(data_dir, tmp_path, capsys):
    store, out = tmp_path / "store.sqlite", tmp_path / "report"
    args = ["reproduce", "--datasets", "wine,cpu", "--data-dir", str(data_dir), "--store", str(store), "--out", str(out),
            "--executor", "serial", *TINY]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "Table I: 2/2 data sets match the paper" in first and "reused 0 from the store" in first
    first_points = int(first.split("points: computed ", 1)[1].split(",", 1)[0])
    assert main(args) == 0
    second = capsys.readouterr().out
    assert "points: computed 0," in second
    for name in ("report.md", "table1.csv", "table2.csv", "table3.csv", "table4.csv", "regressions.csv",
                 "fig3.png", "fig4.png", "fig5.png", "fig6.png", "fig7.png"):
        assert (out / name).stat().st_size > 0, name
    report = (out / "report.md").read_text(encoding="utf-8")
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
    from precise_kpca.studies import ResultsStore

    with ResultsStore(store) as db:
        runs = db.runs()
    assert len(runs) == 1 and runs["computed"].iloc[0] == first_points > 0  # the rerun computed nothing
    assert f"| `serial` | 1 | {first_points} |" in report


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


def _mismatch_row(deviation_at_paper_point):
    return pd.Series(dict(
        match=False, paper=16.0, ours_paper=8.0, ours_naive=8.0, subsampled=False, naive_match=False, n=768,
        rho=8.41, paper_rho=8.41, paper_decisive=2, paper_deviation=-0.671, paper_digits=29, naive_decisive=2,
        naive_deviation=-0.671, paper_deviations={2: (-0.671, 29), 3: (deviation_at_paper_point, 29)},
        naive_deviations={2: (-0.671, 0), 3: (deviation_at_paper_point, 0)}))


def test_a_printed_onset_the_certified_curve_contradicts_is_explained_with_the_point_it_needs():
    text = explain(_mismatch_row(-0.198))
    assert text.startswith("not reproduced") and "log2 σ = 3" in text and "-0.198" in text and "29" in text
    # mutation: were that point outside the band, the printed onset would follow and this reading must not apply
    assert "not reproduced" not in explain(_mismatch_row(-0.31))


def test_digits_section_lists_short_points_and_proves_a_linear_tie():
    """Points below the request are listed with their reason; a 'not determined' refusal at a k that cuts an
    exactly repeated linear eigenvalue gets the exact proof, one at a k that does not cut it does not."""
    from precise_kpca.reports.markdown import _digits_section
    from precise_kpca.reports.study import StudyPlan

    from .test_perturbed_spectrum import SYMMETRIC  # λ_2 = λ_3 exactly

    def row(p, k, digits, method):
        return dict(dataset="wine", log2_sigma=p, measure="eigenprojection", k=k, certified_digits=digits,
                    method=method)

    refused = "FAILED to certify: the value is not determined (linear eigenvalues 1 and 2 coincide)"
    curves = pd.DataFrame([row(4, 1, 20, "ok"), row(12, 1, 14, "ok"), row(4, 2, 0, refused), row(12, 2, 0, refused)])
    item = StudyData("wine", SYMMETRIC, 178, 13, 5.0035, 4.0, 2)
    plan = StudyPlan(log2_sigmas=(4, 12), ks=(1, 2), digits=8)
    text = "\n".join(_digits_section(curves, {"wine": item}, plan))
    assert "| wine | 4 | 0 | 0 | 2 |" in text
    assert "**wine, eigenprojection k=2** at σ = 2^4, 2^12: 0 digits at most" in text
    assert "λ_2 = … = λ_3" in text and "k = 2 cuts such a run" in text
    curves.loc[curves["k"] == 2, "k"] = 3  # k = 3 holds the whole run: a refusal there is not the tie's
    text = "\n".join(_digits_section(curves, {"wine": item}, plan))
    assert "λ_2 = … = λ_3" in text and "cuts such a run" not in text
    good = curves[curves["certified_digits"] >= 8]
    assert "Every point carries at least 8 certified digits." in "\n".join(_digits_section(good, {"wine": item}, plan))
