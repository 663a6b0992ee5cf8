"""The study cost model (studies/cost.py), the plan printed before a long run and its confirmation (cli/confirm.py),
``onset`` through the results store, and progress on the long commands."""
from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from precise_kpca.cli import main
from precise_kpca.studies import cost


def _law(route, n, d, log2_sigma):
    """Known costs the fit must recover: overhead, N²d and N³ terms, the enclosure's regimes apart."""
    if route == "binary128-enclosure":
        return (0.05 + 1e-8 * n * n * d + (2e-8 if log2_sigma <= 8 else 5e-9) * n**3)
    return 1e-3 + 3e-10 * n**3


def _table() -> pd.DataFrame:
    rows = [dict(route=route, measure="eigenvalue", n=n, d=d, log2_sigma=p, seconds=_law(route, n, d, p))
            for route in ("binary128-enclosure", "naive") for n in (100, 300, 900) for d in (5, 50)
            for p in (-2, 4, 12, 30)]
    return pd.DataFrame(rows)


def test_fit_recovers_the_cost_laws_per_route_and_regime():
    model = cost.fit_cost_model(_table(), "synthetic")
    rel = 1e6 * np.finfo(float).eps  # exact laws: NNLS recovers them up to the rounding of its QR steps
    for route, n, d, p in (("binary128-enclosure", 2000, 20, 0), ("binary128-enclosure", 2000, 20, 20),
                           ("binary128-enclosure", 50, 3, 4), ("naive", 5000, 7, 3)):
        assert model.seconds(route, n, d, p) == pytest.approx(_law(route, n, d, p), rel=rel)
    c0, c2, c3 = model.fits[("naive", None)]
    assert c2 == pytest.approx(0, abs=1e-20) and c3 == pytest.approx(3e-10, rel=rel)
    # a route the table lacks is costed as the costliest known one (a cautious forecast)
    assert model.seconds("refined-enclosure", 500, 5, 4) == max(model.seconds(r, 500, 5, 4)
                                                                for r in ("binary128-enclosure", "naive"))
    with pytest.raises(ValueError, match="empty"):
        cost.fit_cost_model(_table().iloc[:0])


def test_package_calibration_table_has_a_source_and_every_study_route():
    table, source = cost.read_calibration()
    assert source.startswith("source: benchmarks/calibrate_cost.py") and "CPUs" in source
    assert {"arb-ball", "naive"} <= set(table["route"]) and (table["seconds"] > 0).all()
    assert table["n"].nunique() >= 2 and table["d"].nunique() >= 2
    model = cost.default_model()
    assert all(math.isfinite(model.seconds(r, 1000, 10, 4)) for r in table["route"].unique())


def test_read_calibration_refuses_bad_tables(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("# source: test\nroute,n,d,seconds\nnaive,10,2,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks the columns"):
        cost.read_calibration(path)
    path.write_text("route,measure,n,d,log2_sigma,seconds\nnaive,metric,10,2,0,0\n", encoding="utf-8")
    with pytest.raises(ValueError, match="non-positive"):
        cost.read_calibration(path)


def test_estimate_counts_points_per_route_and_sums_their_costs():
    from precise_kpca.measures import plan
    from precise_kpca.studies.curves import sweep_tasks

    X = np.random.default_rng(2).normal(size=(12, 3))
    tasks = sweep_tasks(X, [-2, 20], measures=("metric", "eigenvalue"), digits=8, naive_overlay=True, data_key="h")
    model = cost.fit_cost_model(_table(), "synthetic")
    found = cost.estimate([("x", t) for t in tasks], {"x": X}, reused=3, workers=2, model=model)
    expected = {}
    for t in tasks:
        route = "naive" if t.key.requested_backend == "float64-naive" else \
            plan(X, t.key.measure, t.key.sigma, digits=8).steps[0].engine
        entry = expected.setdefault(route, [0, 0.0])
        entry[0] += 1
        entry[1] += model.seconds(route, 12, 3, t.log2_sigma)
    assert found.by_route.keys() == expected.keys() and found.points == len(tasks) == 8
    for route, (points, seconds) in expected.items():
        assert found.by_route[route][0] == points and found.by_route[route][1] == pytest.approx(seconds)
    assert found.wall_seconds == pytest.approx(found.serial_seconds / 2)
    text = found.describe()
    assert "8 points to compute, 3 reused" in text and "2 worker(s)" in text and "synthetic" in text


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _estimate(seconds):
    return cost.Estimate(points=4, reused=0, workers=1, source="test", by_route={"naive": [4, seconds]})


@pytest.mark.parametrize("yes, terminal, answer, seconds, asked, go", [
    (False, True, "y\n", 600, True, True),
    (False, True, "n\n", 600, True, False),
    (False, True, "\n", 600, True, False),  # the default is no
    (True, True, "n\n", 600, False, True),  # --yes
    (False, False, "n\n", 600, False, True),  # a pipe is never asked
    (False, True, "n\n", 5, False, True),  # a short run only prints its plan
])
def test_confirmer_asks_only_a_terminal_before_a_long_run(yes, terminal, answer, seconds, asked, go):
    import argparse

    from precise_kpca.cli.confirm import confirmer

    stdin = (_Terminal if terminal else io.StringIO)(answer)
    err = io.StringIO()
    assert confirmer(argparse.Namespace(yes=yes), stdin=stdin, stderr=err)(_estimate(seconds)) is go
    assert "plan: 4 points to compute" in err.getvalue()
    assert ("Proceed? [y/N]" in err.getvalue()) is asked


def test_declined_reproduce_computes_nothing(data_dir, tmp_path, capsys, monkeypatch):
    import precise_kpca.cli.confirm as confirm
    from precise_kpca.studies import ResultsStore

    monkeypatch.setattr(confirm, "ASK_SECONDS", 0.0)
    monkeypatch.setattr("sys.stdin", _Terminal("no\n"))
    store = tmp_path / "s.sqlite"
    argv = ["reproduce", "--datasets", "wine", "--data-dir", str(data_dir), "--store", str(store), "--out",
            str(tmp_path / "r"), "--executor", "serial", "--log2-sigma", "6:7", "--k", "1", "--max-rows", "9",
            "--progress", "never"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "plan: 12 points to compute, 0 reused" in captured.err and "declined after the plan" in captured.err
    with ResultsStore(store) as db:
        assert len(db.frame()) == 0
    assert main(argv + ["--yes"]) == 0
    assert "plan: 12 points to compute" in capsys.readouterr().err


def test_onset_goes_through_the_store_and_reuses_curves_points(data_dir, tmp_path, capsys, monkeypatch):
    from precise_kpca.measures import convergence_onset
    from precise_kpca.datasets import load

    store = str(tmp_path / "s.sqlite")
    base = ["--store", store, "--executor", "serial", "--progress", "never", "--digits", "6"]
    assert main(["curves", "wine", "--log2-sigma=-4:8", "--measures", "metric", "--no-naive", "--out",
                 str(tmp_path / "c"), *base]) == 0
    capsys.readouterr()

    def refuse(*args, **kwargs):
        raise AssertionError("onset recomputed a stored point")

    with monkeypatch.context() as patch:
        patch.setattr("precise_kpca.measures.measure", refuse)
        assert main(["onset", "wine", "--measure", "metric", *base]) == 0
    captured = capsys.readouterr()
    expected = convergence_onset(load("wine"), "metric", protocol="paper", digits=6)
    assert f"onset sigma*_0 = {expected:g}" in captured.out and "plan:" not in captured.err  # nothing to plan


def test_long_commands_show_progress(tmp_path, capsys):
    path = tmp_path / "points.npy"
    np.save(path, np.random.default_rng(0).normal(size=(10, 2)))
    assert main(["eta", str(path), "--progress", "always"]) == 0
    err = capsys.readouterr().err
    assert "C(σ) grid" in err and "65/65" in err and "Theorem 3 limits (k)" in err
    assert main(["prove", "theorem2", "--progress", "always"]) in (0, 1)
    assert "proof modules" in capsys.readouterr().err
    assert main(["certify", str(path), "--kernel", "linear", "--progress", "always"]) == 0
    assert "certifying the linear Gram" in capsys.readouterr().err
    assert main(["neighbours", str(path), "--method", "exact", "--sigmas", "4:6", "--progress", "always",
                 "--no-gram-error"]) == 0
    err = capsys.readouterr().err
    assert "exact σ points" in err and "3/3" in err
    assert main(["eta", str(path), "--no-spectral", "--progress", "never"]) == 0
    assert "C(σ) grid" not in capsys.readouterr().err


def test_point_route_names_explicit_backends():
    from precise_kpca.studies.curves import sweep_tasks

    X = np.random.default_rng(3).normal(size=(8, 2))
    explicit = sweep_tasks(X, [0], measures="eigenvalue", backend="float64", data_key="h")[0]
    assert cost.point_route(X, explicit) == "float64"
