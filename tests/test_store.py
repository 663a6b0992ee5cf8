"""Results store: keys, round trips, exports, location, and resuming a sweep killed with SIGKILL."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

from precise_kpca.studies import ResultsStore, convergence_curve
from precise_kpca.studies.store import ENV_VAR, NO_K, PointKey, data_hash, default_path


def _record(value: float) -> dict:
    return {
        "log2_sigma": 3.0, "value": value, "value_text": repr(value), "normalized": -1.5,
        "normalized_text": "-1.5", "certified_digits": 12, "backend": "mp", "dps": 40, "method": "test",
        "seconds": 0.25,
    }


def test_existing_can_skip_points_that_failed_to_certify(tmp_path):
    """Retrying failures: a point that certified fewer digits than its key asked counts as missing; points of a
    backend that never certifies (the float64-naive overlay) still count."""
    with ResultsStore(tmp_path / "r.sqlite") as store:
        h = store.register_data(np.eye(3), "eye")
        good, short, naive = (PointKey(h, "metric", NO_K, "1/16", backend, 10)
                              for backend in ("auto", "mp", "float64-naive"))
        store.put(good, _record(0.5))  # 12 digits ≥ 10
        store.put(short, dict(_record(0.5), certified_digits=9))
        store.put(naive, dict(_record(0.5), certified_digits=0))
        keys = [good, short, naive]
        assert store.existing(keys) == {good, short, naive}
        assert store.existing(keys, certified_only=True, uncertified_backends=("float64-naive",)) == {good, naive}
        assert store.existing(keys, certified_only=True) == {good}


def test_data_hash_covers_shape_and_bytes():
    X = np.arange(12.0).reshape(4, 3)
    assert data_hash(X) == data_hash(X.copy(order="F"))  # same values, layout does not matter
    assert data_hash(X) != data_hash(X.reshape(3, 4))
    Y = X.copy()
    Y[2, 1] = np.nextafter(Y[2, 1], np.inf)
    assert data_hash(X) != data_hash(Y)


def test_put_existing_frame_round_trip(tmp_path):
    path = tmp_path / "r.sqlite"
    X = np.eye(3)
    with ResultsStore(path) as store:
        key = PointKey(store.register_data(X, "eye"), "metric", NO_K, "1/16", "auto", 10)
        other = PointKey(key.data_hash, "eigenprojection", 2, "1/16", "auto", 10)
        assert store.existing([key, other]) == set()
        store.put(key, _record(0.5))
        store.put(other, _record(0.25))
        store.put(other, _record(0.125))  # same key: replaced, not duplicated
        assert store.existing([key, other, PointKey(key.data_hash, "metric", NO_K, "1/16", "auto", 11)]) == {key, other}
        # committed at once: a second connection sees both rows
        assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM points").fetchone()[0] == 2
        frame = store.frame([other, key])
    assert list(frame["measure"]) == ["eigenprojection", "metric"]  # order of the keys asked for
    assert frame["k"].iloc[0] == 2 and pd.isna(frame["k"].iloc[1])
    assert list(frame["value"]) == [0.125, 0.5]
    assert set(frame["data_name"]) == {"eye"}


def test_exports_csv_and_parquet(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        digest = store.register_data(np.eye(3), "eye")
        for i, sigma in enumerate(["1/2", "1", "2"]):
            store.put(PointKey(digest, "metric", NO_K, sigma, "auto", 10), _record(2.0**-i))
        csv = pd.read_csv(store.export_csv(tmp_path / "points.csv"))
        parquet = pd.read_parquet(store.export_parquet(tmp_path / "points.parquet"))
    assert len(csv) == len(parquet) == 3
    assert list(csv["sigma"]) == list(parquet["sigma"]) == ["1/2", "1", "2"]
    assert list(parquet["value"]) == [1.0, 0.5, 0.25]


def test_location_argument_env_var_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env" / "store.sqlite"))
    assert default_path() == tmp_path / "env" / "store.sqlite"
    with ResultsStore() as store:
        assert store.path == tmp_path / "env" / "store.sqlite" and store.path.is_file()
    monkeypatch.delenv(ENV_VAR)
    assert default_path().name == "results.sqlite" and "precise_kpca" in str(default_path())
    with ResultsStore(tmp_path / "arg.sqlite") as store:
        assert store.path == tmp_path / "arg.sqlite"


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "not.sqlite"
    bad.write_text("this is not sqlite " * 200)
    with pytest.raises(ValueError, match="cannot open results store.*not.sqlite"):
        ResultsStore(bad)


SWEEP = textwrap.dedent("""
    import sys
    import numpy as np
    from precise_kpca.studies import convergence_curve

    if __name__ == "__main__":
        X = np.random.default_rng(11).normal(size=(10, 3))
        convergence_curve(X, range(-4, 60), measures=("eigenvalue",), digits=8, store=sys.argv[1],
                          executor="serial", progress=False)
""")


def _rows(path) -> int:
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM points").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet
        return 0


def test_sweep_killed_with_sigkill_resumes_without_recomputing(tmp_path):
    path = tmp_path / "killed.sqlite"
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP)
    # the context manager waits for the child and closes its stderr pipe however the block ends
    with subprocess.Popen([sys.executable, str(script), str(path)], stderr=subprocess.PIPE) as child:
        deadline = time.monotonic() + 60
        while _rows(path) < 3 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        else:
            pytest.fail(f"the sweep ended before it could be killed: {child.stderr.read()!r}")
    assert child.returncode == -signal.SIGKILL

    with ResultsStore(path) as store:
        assert store.integrity_ok()
        before = store.frame()
    landed = len(before)
    assert 3 <= landed < 64
    assert before[["value_text", "backend", "method"]].notna().all().all()  # whole rows only
    assert (before["certified_digits"] >= 8).all()

    X = np.random.default_rng(11).normal(size=(10, 3))
    frame = convergence_curve(X, range(-4, 60), measures=("eigenvalue",), digits=8, store=path, executor="serial",
                              progress=False)
    assert frame.attrs == {"computed": 64 - landed, "reused": landed}
    assert list(frame["log2_sigma"]) == list(range(-4, 60))
    with ResultsStore(path) as store:
        after = store.frame()
    kept = after.merge(before, on=["sigma"], suffixes=("", "_before"))
    assert len(kept) == landed and (kept["created"] == kept["created_before"]).all()  # not recomputed


def test_runs_record_each_sweep_as_it_goes(tmp_path):
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        first = store.start_run("local", ["wine", "cpu"])
        store.update_run(first, 3, 12.5, 7.0)
        second = store.start_run("serial", ["wine"])
        runs = store.runs()
    assert list(runs["run_id"]) == [first, second]
    assert runs.iloc[0][["executor", "datasets", "computed", "point_seconds", "wall_seconds"]].tolist() == [
        "local", "wine,cpu", 3, 12.5, 7.0]
    assert runs.iloc[1][["computed", "point_seconds", "wall_seconds"]].tolist() == [0, 0.0, 0.0]
