"""The results store can be trusted (issue 22): another code version's points are recomputed, a flipped digit is
caught by the row checksum, a truncated or page-corrupted file is refused with the repair path, two concurrent
sweeps compute every point once, and after SIGKILL the ``.sqlite`` file alone holds every committed point.

The reference values are the sweep's own first run from an empty store (the store must hand back what was computed,
bit for bit); the counts of computations come from the children's own logs, not from the store's counters.
"""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from precise_kpca.errors import StoreCorrupted, StoreError
from precise_kpca.studies import ResultsStore, convergence_curve
from precise_kpca.studies import store as store_module
from precise_kpca.studies.store import POINT_COLUMNS, row_checksum
from precise_kpca.studies.versions import engine_of, route_version

from ..conftest import REPO_ROOT

X = np.random.default_rng(11).normal(size=(12, 3))
GRID = range(-2, 6)


def _sweep(path, grid=GRID):
    return convergence_curve(X, grid, measures=("metric",), digits=8, store=path, executor="serial", progress=False)


def _raw_rows(path) -> list[dict]:
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT rowid, * FROM points ORDER BY rowid")]


def _rewrite(path, rowid: int, *, reseal: bool, **changes) -> None:
    """Change columns of one row; ``reseal``: recompute its checksum (a row written by another, valid copy)."""
    row = next(r for r in _raw_rows(path) if r["rowid"] == rowid)
    row.update(changes)
    sets = dict(changes, **({"checksum": row_checksum(row)} if reseal else {}))
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE points SET {', '.join(f'{c}=?' for c in sets)} WHERE rowid=?", [*sets.values(), rowid])


def test_every_row_records_the_code_version_of_its_route(tmp_path):
    _sweep(tmp_path / "s.sqlite")
    rows = _raw_rows(tmp_path / "s.sqlite")
    assert len(rows) == len(GRID)
    for row in rows:
        assert row["code_version"] == route_version(engine_of(row["route"])) != ""
        assert row["checksum"] == row_checksum(row)


def test_points_of_another_code_version_are_recomputed_not_reused(tmp_path):
    """The audit's case: a store filled by a copy whose values were 1.5x too large was served as 'reused 8'."""
    path = tmp_path / "s.sqlite"
    first = _sweep(path)
    for row in _raw_rows(path):  # another copy of the code wrote these rows, each with a valid checksum
        _rewrite(path, row["rowid"], reseal=True, code_version="0" * 16, value=row["value"] * 1.5,
                 value_text=repr(row["value"] * 1.5))
    again = _sweep(path)
    assert again.attrs == {"computed": len(GRID), "reused": 0}
    assert list(again["value_text"]) == list(first["value_text"])
    assert _sweep(path).attrs == {"computed": 0, "reused": len(GRID)}  # the current code's rows are reused


def test_a_flipped_digit_is_detected_named_and_recomputed(tmp_path):
    path = tmp_path / "s.sqlite"
    first = _sweep(path)
    victim = _raw_rows(path)[3]
    text = victim["value_text"]
    flipped = text[:5] + str((int(text[5]) + 1) % 10) + text[6:]
    _rewrite(path, victim["rowid"], reseal=False, value_text=flipped)

    report = store_module.check(path)
    assert not report.ok and len(report.bad_rows) == 1 and report.bad_rows[0].startswith(f"{victim['rowid']} (")
    with ResultsStore(path) as store, pytest.raises(StoreCorrupted, match=rf"\b{victim['rowid']}\b"):
        store.frame()  # never exported
    with pytest.warns(RuntimeWarning, match=rf"1 row\(s\) fail their checksum.*{victim['rowid']}"):
        again = _sweep(path)
    assert again.attrs == {"computed": 1, "reused": len(GRID) - 1}
    assert list(again["value_text"]) == list(first["value_text"])
    assert store_module.check(path).ok


def test_a_value_that_disagrees_with_its_text_is_reported_even_with_a_valid_checksum(tmp_path):
    path = tmp_path / "s.sqlite"
    _sweep(path)
    victim = _raw_rows(path)[0]
    _rewrite(path, victim["rowid"], reseal=True, value=victim["value"] * (1 + 2.0**-40))
    report = store_module.check(path)
    assert [line.split(" ")[0] for line in report.bad_rows] == [str(victim["rowid"])]


def test_a_truncated_file_is_refused_with_the_repair_path(tmp_path):
    path = tmp_path / "s.sqlite"
    _sweep(path)
    path.write_bytes(b"")
    with pytest.raises(StoreCorrupted, match=r"empty \(0 bytes\).*precise-kpca store repair"):
        ResultsStore(path)
    damaged, kept, dropped = store_module.repair(path)
    assert damaged.exists() and (kept, dropped) == (0, [])
    assert _sweep(path).attrs == {"computed": len(GRID), "reused": 0}  # the repaired store is usable


@pytest.mark.parametrize("size", [1, 50, 99])
def test_a_file_shorter_than_the_sqlite_header_is_refused_not_read_as_empty(tmp_path, size):
    """SQLite reads such a file as an empty database: 'ok (0 points)' for a store truncated to a few bytes."""
    path = tmp_path / "s.sqlite"
    _sweep(path)
    path.write_bytes(path.read_bytes()[:size])
    with pytest.raises(StoreCorrupted, match=rf"not an SQLite database \({size} bytes, no SQLite header\)"):
        ResultsStore(path)
    report = store_module.check(path)
    assert not report.ok and report.unreadable


def test_a_page_corrupted_file_is_refused_and_repair_keeps_every_intact_row(tmp_path):
    path = tmp_path / "s.sqlite"
    first = _sweep(path, range(-4, 60))
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    pages = len(data) // page
    assert pages >= 6
    data[3 * page:3 * page + 200] = b"\xff" * 200  # an interior page's header
    path.write_bytes(bytes(data))

    with pytest.raises(StoreCorrupted, match=r"damaged: SQLite: database disk image is malformed.*store repair"):
        ResultsStore(path).frame()
    report = store_module.check(path)
    assert not report.ok and "precise-kpca store repair" in str(report)
    damaged, kept, dropped = store_module.repair(path)
    assert damaged.exists() and dropped == []
    with ResultsStore(path) as store:
        repaired = store.frame()
    assert store_module.check(path).ok and len(repaired) == kept > 0
    truth = dict(zip(first["sigma"], first["value_text"]))
    assert all(truth[s] == v for s, v in zip(repaired["sigma"], repaired["value_text"]))  # nothing altered
    assert _sweep(path, range(-4, 60)).attrs == {"computed": 64 - kept, "reused": kept}


def test_store_check_and_repair_on_the_command_line(tmp_path):
    path = tmp_path / "s.sqlite"
    _sweep(path)
    victim = _raw_rows(path)[2]
    _rewrite(path, victim["rowid"], reseal=False, digits=victim["digits"] + 1)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    check = subprocess.run([sys.executable, "-m", "precise_kpca.cli", "store", "check", str(path)],
                           capture_output=True, text=True, env=env, timeout=120)
    assert check.returncode != 0 and f"{victim['rowid']} (" in check.stdout + check.stderr
    assert "Traceback" not in check.stderr
    repair = subprocess.run([sys.executable, "-m", "precise_kpca.cli", "store", "repair", str(path)],
                            capture_output=True, text=True, env=env, timeout=120)
    assert repair.returncode == 0, repair.stderr
    assert store_module.check(path).ok and len(_raw_rows(path)) == len(GRID) - 1


CONCURRENT = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from precise_kpca.studies import convergence_curve, curves

    path, log, go = sys.argv[1:4]
    original = curves.compute_point

    def logged(X, task):  # each computation leaves a line in this sweep's log, and takes a while
        with open(log, "a") as f:
            f.write(task.key.sigma + "\\n")
        time.sleep(0.05)
        return original(X, task)

    curves.compute_point = logged
    X = np.random.default_rng(11).normal(size=(12, 3))
    while not os.path.exists(go):
        time.sleep(0.01)
    frame = convergence_curve(X, range(-8, 32), measures=("metric",), digits=8, store=path, executor="serial",
                              progress=False)
    print(frame.attrs["computed"], frame.attrs["reused"], len(frame))
""")


def test_two_concurrent_sweeps_compute_every_point_once(tmp_path):
    path, go = tmp_path / "shared.sqlite", tmp_path / "go"
    script = tmp_path / "sweep.py"
    script.write_text(CONCURRENT)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), OPENBLAS_NUM_THREADS="1")
    logs = [tmp_path / f"log{i}" for i in range(2)]
    children = [subprocess.Popen([sys.executable, str(script), str(path), str(log), str(go)], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for log in logs]
    time.sleep(3)  # both imported and waiting
    go.touch()
    outputs = [child.communicate(timeout=300) for child in children]
    assert [child.returncode for child in children] == [0, 0], [err for _, err in outputs]
    computed = [log.read_text().split() if log.exists() else [] for log in logs]
    everything = computed[0] + computed[1]
    assert len(everything) == len(set(everything)) == 40  # each point computed by exactly one sweep
    for (out, _), mine in zip(outputs, computed):
        assert out.split() == [str(len(mine)), str(40 - len(mine)), "40"]
    assert len(_raw_rows(path)) == 40


KILLED = textwrap.dedent("""
    import sys, time
    import numpy as np
    from precise_kpca.studies import convergence_curve, curves

    path, marker = sys.argv[1:3]
    original, calls = curves.compute_point, []

    def stalls_at_the_fifth(X, task):  # the first four points are stored when the fifth hangs
        calls.append(task)
        if len(calls) == 5:
            open(marker, "w").close()
            time.sleep(600)
        return original(X, task)

    curves.compute_point = stalls_at_the_fifth
    X = np.random.default_rng(11).normal(size=(12, 3))
    convergence_curve(X, range(-2, 6), measures=("metric",), digits=8, store=path, executor="serial",
                      progress=False)
""")


def test_after_sigkill_the_sqlite_file_alone_holds_every_committed_point(tmp_path):
    path, marker = tmp_path / "live" / "s.sqlite", tmp_path / "stalled"
    path.parent.mkdir()
    script = tmp_path / "sweep.py"
    script.write_text(KILLED)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), OPENBLAS_NUM_THREADS="1")
    with subprocess.Popen([sys.executable, str(script), str(path), str(marker)], env=env,
                          stderr=subprocess.PIPE) as child:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.poll() is None, child.stderr.read()
        os.kill(child.pid, signal.SIGKILL)
    copy = tmp_path / "copy" / "s.sqlite"
    copy.parent.mkdir()
    shutil.copyfile(path, copy)  # the main file only: no -wal, no -shm
    assert not copy.with_name("s.sqlite-wal").exists()
    copied = _raw_rows(copy)
    live = _raw_rows(path)  # through the live log too
    assert len(copied) == len(live) == 4
    assert all(row["checksum"] == row_checksum(row) for row in copied)
    assert _sweep(copy).attrs == {"computed": len(GRID) - 4, "reused": 4}


def test_a_finished_sweep_leaves_no_point_in_the_log(tmp_path):
    path = tmp_path / "s.sqlite"
    with ResultsStore(path) as store:  # kept open: only the sweep's own checkpoint moves the points
        convergence_curve(X, GRID, measures=("metric",), digits=8, store=store, executor="serial", progress=False)
        copy = tmp_path / "copy.sqlite"
        shutil.copyfile(path, copy)
        assert len(_raw_rows(copy)) == len(GRID)


def test_a_store_under_a_file_is_refused_clearly(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="is a file, not a folder"):
        ResultsStore(blocker / "s.sqlite")


def test_row_checksum_covers_every_point_column():
    row = {c: (1.5 if c in ("value", "normalized", "log2_sigma", "seconds", "created") else 3 if c in (
        "k", "digits", "requested_dps", "certified_digits", "dps") else "t") for c in POINT_COLUMNS}
    base = row_checksum(row)
    for column in POINT_COLUMNS:
        changed = dict(row, **{column: row[column] * 2})
        assert row_checksum(changed) != base, column


def test_every_engine_of_the_route_table_has_its_own_code_version():
    """An engine missing from ENGINE_MODULES would be versioned as "every route": a change of its module would
    still invalidate its points, but so would any other route's change; each engine names its module."""
    from precise_kpca.measures.engines import ENGINES
    from precise_kpca.studies.versions import ENGINE_MODULES

    assert set(ENGINES) <= set(ENGINE_MODULES), set(ENGINES) - set(ENGINE_MODULES)
    assert route_version("refined-enclosure") != route_version("binary128-enclosure")
