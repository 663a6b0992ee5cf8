"""precise-kpca: dispatcher, ranges, the curves / onset / geometry commands, and error handling (exit 2)."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from precise_kpca.cli import COMMANDS, command_module, join_negative_values, main
from precise_kpca.cli.common import UsageError, parse_list, parse_positive_ints, parse_range
from precise_kpca.numerics import geometry
from precise_kpca.studies.curves import COLUMNS


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "small.npy"
    np.save(path, np.random.default_rng(8).normal(size=(8, 3)))
    return path


def test_ranges_and_lists():
    assert parse_range("-4:40") == list(range(-4, 41))
    assert parse_range("-4:40:2") == list(range(-4, 41, 2))
    assert parse_range("3:1:-1") == [3, 2, 1]
    assert parse_range("7") == [7]
    assert parse_range("-2:0, 5, 8:9") == [-2, -1, 0, 5, 8, 9]
    for bad in ("1:5:0", "5:1", "a:b", "1.5", ""):
        with pytest.raises(UsageError):
            parse_range(bad)
    assert parse_list("metric, eigenvalue", what="measure", choices=("metric", "eigenvalue")) == ["metric", "eigenvalue"]
    with pytest.raises(UsageError, match="unknown measure 'x'"):
        parse_list("metric,x", what="measure", choices=("metric",))
    assert parse_positive_ints("1,2,5", what="--k") == [1, 2, 5]
    with pytest.raises(UsageError):
        parse_positive_ints("0,1", what="--k")


def test_negative_values_are_joined_to_their_option():
    assert join_negative_values(["curves", "wine", "--log2-sigma", "-4:40", "--k", "1"]) == [
        "curves", "wine", "--log2-sigma=-4:40", "--k", "1"]
    assert join_negative_values(["--log2-sigma=-4:2"]) == ["--log2-sigma=-4:2"]


def test_every_command_is_a_module_with_add_parser_and_run():
    for name in COMMANDS:
        module = command_module(name)
        assert callable(module.add_parser) and callable(module.run)
    assert {"curves", "onset", "geometry", "data"} <= set(COMMANDS)


def test_geometry_prints_the_numbers(data_file, capsys):
    assert main(["geometry", str(data_file)]) == 0
    out = capsys.readouterr().out
    g = geometry(np.load(data_file))
    assert "N  " in out and f"{g.eccentricity:.6g}" in out and f"{g.eta_nonzero:.6g}" in out
    assert f"{g.median_distance:.10g}" in out and f"{g.diameter:.10g}" in out


def test_curves_writes_tables_and_plots_and_resumes(data_file, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["curves", str(data_file), "--log2-sigma", "-3:1", "--measures", "metric,eigenprojection", "--k", "1,2",
            "--digits", "8", "--out", str(out), "--store", str(tmp_path / "s.sqlite"), "--executor", "serial"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    text = [c for c in COLUMNS if c.endswith("_text") or c in ("sigma", "guarantee", "route", "reason", "method", "tau",
                                                               "median", "aggregate", "requested_guarantee",
                                                               "code_version")]
    frame = pd.read_csv(out / "curves.csv", dtype=dict.fromkeys(text, str), keep_default_na=False,
                        na_values={c: ["", "NaN", "nan"] for c in COLUMNS if c not in text})
    assert len(frame) == 2 * 3 * 5  # (metric + eigenprojection k=1,2) × 5 σ, certified and naive
    assert list(frame.columns) == COLUMNS
    pd.testing.assert_frame_equal(pd.read_parquet(out / "curves.parquet").drop(columns="k"), frame.drop(columns="k"))
    assert {p.name for p in out.glob("*.png")} == {"curves.png", "curve_metric.png", "curve_eigenprojection_k1.png",
                                                   "curve_eigenprojection_k2.png"}
    certified = frame[frame["requested_backend"] == "auto"]
    assert (certified["certified_digits"] >= 8).all() and (certified["guarantee"] == "rigorous").all()
    fewest = certified["certified_digits"].min()
    assert f"15 certified points, of which 15 rigorous (fewest certified digits {fewest}), 0 heuristic, 0 none" in printed
    assert "computed 30, reused 0" in printed
    metric = certified[certified["measure"] == "metric"]
    assert f"metric            -       5         5{metric['certified_digits'].min():>18}" in printed
    for column in ("lower_text", "upper_text", "normalized_lower_text", "normalized_upper_text", "guarantee", "route",
                   "reason"):
        assert column in frame.columns
    _check_ends_round_trip(tmp_path / "s.sqlite", frame)
    import hashlib
    import json

    record = json.loads((out / "provenance.json").read_text())
    assert set(record["files"]) == {"curves.csv", "curves.parquet"} | {p.name for p in out.glob("*.png")}
    assert record["files"]["curves.csv"] == hashlib.sha256((out / "curves.csv").read_bytes()).hexdigest()
    assert main(argv + ["--no-naive"]) == 0
    assert "0 float64-naive; computed 0, reused 15" in capsys.readouterr().out


def _check_ends_round_trip(store, frame):
    """The CSV's interval texts are the store's, and read exactly (Fractions) they enclose the stored value."""
    from fractions import Fraction

    from precise_kpca.studies import ResultsStore

    with ResultsStore(store) as db:
        stored = db.frame()
    ends = ["lower_text", "upper_text", "normalized_lower_text", "normalized_upper_text"]
    merged = frame.merge(stored, on=["sigma", "measure", "requested_backend"], suffixes=("", "_stored"))
    merged = merged[merged["k"].fillna(0).astype(int) == merged["k_stored"].fillna(0).astype(int)]
    assert len(merged) == len(frame)
    for column in ends + ["guarantee", "route", "reason"]:
        assert (merged[column] == merged[f"{column}_stored"]).all(), column
    rigorous = merged[merged["guarantee"] == "rigorous"]
    assert (rigorous["lower_text"] != "").all()
    for row in rigorous.itertuples():
        assert Fraction(row.lower_text) < Fraction(row.upper_text)


@pytest.mark.parametrize("argv, message", [
    (["curves", "{data}", "--log2-sigma", "1:x"], "cannot read '1:x'"),
    (["curves", "{data}", "--measures", "metric,entropy"], "unknown measure 'entropy'"),
    (["curves", "{data}", "--k", "0"], "--k must be positive"),
    (["curves", "{data}", "--digits", "0"], "--digits must be a positive integer"),
    (["curves", "{data}", "--executor", "threads", "--log2-sigma", "0"], "unknown executor 'threads'"),
    (["curves", "no_such_set"], "unknown data set 'no_such_set'"),
    (["curves", "{data}", "--backend", "abacus", "--log2-sigma", "0", "--executor", "serial"], "abacus"),
    (["geometry", "{missing}"], "missing.csv"),
    (["onset", "{data}", "--measure", "entropy"], "unknown measure 'entropy'"),
    (["onset", "{data}", "--digits", "0"], "--digits must be a positive integer"),
])
def test_bad_arguments_and_data_exit_2_with_a_message(argv, message, data_file, tmp_path, capsys):
    argv = [a.format(data=data_file, missing=tmp_path / "missing.csv") for a in argv]
    argv += ["--out", str(tmp_path / "o"), "--store", str(tmp_path / "s.sqlite")] if argv[0] == "curves" else []
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"precise-kpca {argv[0]}: error: ") and message in err and "Traceback" not in err


@pytest.mark.parametrize("backend", ["auto", "float64-naive"])
def test_onset_prints_the_leads_onset(backend, data_file, tmp_path, capsys):
    from precise_kpca.measures import convergence_onset

    assert main(["onset", str(data_file), "--measure", "eigenprojection", "--k", "2", "--backend", backend,
                 "--store", str(tmp_path / "s.sqlite"), "--executor", "serial"]) == 0
    out = capsys.readouterr().out
    expected = convergence_onset(np.load(data_file), "eigenprojection", k=2, protocol="paper", backend=backend)
    shown = "256+" if math.isinf(expected) else f"{expected:g} (log2 = {math.log2(expected):g})"
    assert f"eigenprojection k=2 onset sigma*_0 = {shown}" in out and f"[protocol paper, backend {backend}]" in out


def test_console_script_exit_status_without_traceback(tmp_path):
    done = subprocess.run([sys.executable, "-m", "precise_kpca.cli", "geometry", str(tmp_path / "none.npy")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "error:" in done.stderr and "Traceback" not in done.stderr
    usage = subprocess.run([sys.executable, "-m", "precise_kpca.cli", "curves"], capture_output=True, text=True)
    assert usage.returncode == 2 and "DATA" in usage.stderr
