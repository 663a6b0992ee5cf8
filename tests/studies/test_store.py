"""Results store: keys, round trips, exports, location, the reuse rule by guarantee, opening a store of the old
schema, and resuming a sweep killed with SIGKILL."""
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
from precise_kpca.studies.versions import route_version

from ..conftest import REPO_ROOT


def _record(value: float, guarantee: str = "rigorous", certified_digits: int = 12) -> dict:
    return {
        "log2_sigma": 3.0, "value": value, "value_text": repr(value), "normalized": -1.5,
        "normalized_text": "-1.5", "certified_digits": certified_digits, "backend": "mp", "dps": 40,
        "method": "test", "seconds": 0.25, "lower_text": "", "upper_text": "", "normalized_lower_text": "",
        "normalized_upper_text": "", "guarantee": guarantee, "route": "", "reason": "",
        "code_version": route_version(None),
    }


def _keys(store, backend: str, count: int) -> list[PointKey]:
    h = store.register_data(np.eye(3), "eye")
    guarantee = "none" if backend == "float64-naive" else "heuristic" if backend in ("float64", "mp") else "rigorous"
    return [PointKey(h, "metric", NO_K, f"{i + 1}/16", backend, 10, requested_guarantee=guarantee)
            for i in range(count)]


def test_a_certified_request_reuses_rigorous_and_undetermined_points_until_retried(tmp_path):
    """``auto`` (a rigorous request): rigorous points (short ones too) and undetermined ones are final for this
    code, heuristic and unknown ones are missing; retrying recomputes all but the rigorous points with the digits."""
    with ResultsStore(tmp_path / "r.sqlite") as store:
        good, short, heuristic, undetermined, unknown, absent = _keys(store, "auto", 6)
        store.put(good, _record(0.5))  # 12 digits ≥ 10
        store.put(short, _record(0.5, certified_digits=9))
        store.put(heuristic, _record(0.5, "heuristic", 14))
        store.put(undetermined, _record(float("nan"), "none", 0))
        store.put(unknown, _record(0.5, "unknown", 15))
        keys = [good, short, heuristic, undetermined, unknown, absent]
        assert store.existing(keys) == {good, short, undetermined}
        assert store.existing(keys, retry_uncertified=True) == {good}


def test_a_request_for_agreement_digits_reuses_heuristic_points_unless_retrying(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        heuristic, short, rigorous = _keys(store, "mp", 3)
        store.put(heuristic, _record(0.5, "heuristic", 12))
        store.put(short, _record(0.5, "heuristic", 9))
        store.put(rigorous, _record(0.5))
        assert store.existing([heuristic, short, rigorous]) == {heuristic, rigorous}
        assert store.existing([heuristic, short, rigorous], retry_uncertified=True) == {rigorous}


def test_float64_naive_points_are_reused_whatever_they_carry(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        none, unknown = _keys(store, "float64-naive", 2)
        store.put(none, _record(0.5, "none", 0))
        store.put(unknown, _record(0.5, "unknown", 0))
        assert store.existing([none, unknown]) == store.existing([none, unknown], retry_uncertified=True) == {
            none, unknown}


OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS data (
    data_hash TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    n INTEGER NOT NULL,
    d INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
    data_hash TEXT NOT NULL,
    measure TEXT NOT NULL,
    k INTEGER NOT NULL,
    sigma TEXT NOT NULL,
    requested_backend TEXT NOT NULL,
    digits INTEGER NOT NULL,
    log2_sigma REAL NOT NULL,
    value REAL,
    value_text TEXT NOT NULL,
    normalized REAL,
    normalized_text TEXT NOT NULL,
    certified_digits INTEGER NOT NULL,
    backend TEXT NOT NULL,
    dps INTEGER NOT NULL,
    method TEXT NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (data_hash, measure, k, sigma, requested_backend, digits)
);
"""
"""The schema of stores written before guarantees were recorded (precise_kpca 3013899), as a literal."""


def test_a_store_of_the_old_schema_opens_and_its_rows_are_replaced(tmp_path):
    """Rows stored before code versions were recorded are kept, read back, and recomputed (naive ones too: the code
    that computed them is unknown)."""
    path = tmp_path / "old.sqlite"
    X = np.random.default_rng(5).normal(size=(7, 2))
    h = data_hash(X)
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO data VALUES (?, ?, ?, ?)", (h, "old", 7, 2))
        for backend, digits, certified in (("auto", 10, 15), ("float64-naive", 0, 0)):
            db.execute("INSERT INTO points VALUES (?, 'metric', 0, '1', ?, ?, 0.0, 0.25, '0.25', -2.0, '-2.0', ?, "
                       "'arb', 30, 'old method', 0.5, 1.0)", (h, backend, digits, certified))
    db.close()
    auto, naive = (PointKey(h, "metric", NO_K, "1", backend, digits, requested_guarantee=guarantee)
                   for backend, digits, guarantee in (("auto", 10, "rigorous"), ("float64-naive", 0, "none")))
    for _ in range(2):  # the second opening finds the columns there
        with ResultsStore(path) as store:
            old = store.frame()
            assert store.existing([auto, naive]) == set()  # of unknown guarantee and code version
    assert list(old["guarantee"]) == ["unknown", "unknown"] and (old[["lower_text", "route", "reason"]] == "").all().all()
    assert list(old["value"]) == [0.25, 0.25] and list(old["method"]) == ["old method"] * 2

    frame = convergence_curve(X, [0], measures="metric", digits=10, store=path, executor="serial", progress=False,
                              naive_overlay=True)
    assert frame.attrs == {"computed": 2, "reused": 0}
    certified, naive_row = frame.iloc[0], frame.iloc[1]
    assert certified["requested_backend"] == "auto" and certified["guarantee"] == "rigorous"
    assert certified["lower_text"] and certified["value"] != 0.25 and certified["method"] != "old method"
    assert naive_row["requested_backend"] == "float64-naive" and naive_row["guarantee"] == "none"
    assert naive_row["value"] != 0.25 and naive_row["code_version"] == route_version("naive")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM points").fetchone()[0] == 2  # replaced, not added
    db.close()


def test_a_heuristic_point_is_recomputed_for_a_rigorous_request(tmp_path):
    path = tmp_path / "h.sqlite"
    X = np.random.default_rng(5).normal(size=(7, 2))
    with ResultsStore(path) as store:
        key = PointKey(store.register_data(X, "h"), "metric", NO_K, "1", "auto", 10, median="full")
        store.put(key, _record(0.25, "heuristic", 14))
    frame = convergence_curve(X, [0], measures="metric", digits=10, store=path, executor="serial", progress=False)
    assert frame.attrs == {"computed": 1, "reused": 0}
    assert frame["guarantee"].iloc[0] == "rigorous" and frame["value"].iloc[0] != 0.25


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
        ends = dict(lower_text="1.2" + "7" * 300 + "e-3", upper_text="1.3e-3", normalized_lower_text="-9.5e+0",
                    normalized_upper_text="-9.25e+0", route="arb-ball (balls); detail", reason="short: why")
        store.put(key, dict(_record(0.5), **ends))
        store.put(other, _record(0.25))
        store.put(other, _record(0.125, "heuristic"))  # same key: replaced, not duplicated
        assert store.existing([key, other, PointKey(key.data_hash, "metric", NO_K, "1/16", "auto", 11)]) == {key}
        assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM points").fetchone()[0] == 2
        # committed at once: a second connection sees both rows
        assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM points").fetchone()[0] == 2
        frame = store.frame([other, key])
    assert list(frame["measure"]) == ["eigenprojection", "metric"]  # order of the keys asked for
    assert frame["k"].iloc[0] == 2 and pd.isna(frame["k"].iloc[1])
    assert list(frame["value"]) == [0.125, 0.5]
    assert list(frame["guarantee"]) == ["heuristic", "rigorous"]
    assert frame.iloc[1][list(ends)].to_dict() == ends and (frame.iloc[0][list(ends)] == "").all()
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
    with pytest.raises(ValueError, match="results store .*not.sqlite.* is damaged: not an SQLite database"):
        ResultsStore(bad)


# The metric measure is rigorous at every σ, so every landed point is reusable (the reuse rule is tested above).
SWEEP = textwrap.dedent("""
    import sys
    import numpy as np
    from precise_kpca.studies import convergence_curve

    if __name__ == "__main__":
        X = np.random.default_rng(11).normal(size=(40, 3))
        convergence_curve(X, range(-4, 60), measures=("metric",), digits=8, store=sys.argv[1],
                          executor="serial", progress=False)
""")


def _rows(path) -> int:
    if not path.exists():  # sqlite3.connect would create an empty file, which the store refuses as truncated
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM points").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet
        return 0


def test_sweep_killed_with_sigkill_resumes_without_recomputing(tmp_path):
    path = tmp_path / "killed.sqlite"
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP)
    # the child imports this checkout, not whichever precise_kpca is installed
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    # the context manager waits for the child and closes its stderr pipe however the block ends
    with subprocess.Popen([sys.executable, str(script), str(path)], stderr=subprocess.PIPE, env=env) as child:
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
    assert before[["value_text", "backend", "method", "lower_text", "route"]].notna().all().all()  # whole rows
    assert (before["certified_digits"] >= 8).all() and (before["guarantee"] == "rigorous").all()

    X = np.random.default_rng(11).normal(size=(40, 3))
    frame = convergence_curve(X, range(-4, 60), measures=("metric",), digits=8, store=path, executor="serial",
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
