"""Executors: serial, local process pool and Dask (LocalCluster on loopback) run every task exactly once."""
from __future__ import annotations

import os

import numpy as np
import pytest

from precise_kpca.studies import (
    DaskExecutor,
    LocalExecutor,
    SerialExecutor,
    TaskError,
    convergence_curve,
    get_executor,
)


def scaled_with_pid(shared, task):
    """Module-level (picklable) task function: the shared array's sum times the task, and the worker's pid."""
    if task == 13:
        raise ArithmeticError("unlucky task")
    return float(np.sum(shared)) * task, os.getpid()


def _executors(dask_address):
    return [SerialExecutor(), LocalExecutor(workers=2), DaskExecutor(dask_address)]


def test_every_executor_runs_each_task_once(dask_address):
    shared = np.arange(4.0)  # sum 6
    tasks = list(range(1, 9))
    for executor in _executors(dask_address):
        results = dict(executor.run(scaled_with_pid, shared, tasks))
        assert sorted(results) == tasks, executor
        assert {t: v for t, (v, _) in results.items()} == {t: 6.0 * t for t in tasks}, executor
        pids = {pid for _, pid in results.values()}
        if isinstance(executor, SerialExecutor):
            assert pids == {os.getpid()}
        else:
            assert os.getpid() not in pids, executor


def test_a_failing_task_is_named(dask_address):
    for executor in _executors(dask_address):
        with pytest.raises(TaskError, match="unlucky task") as info:
            list(executor.run(scaled_with_pid, np.ones(2), [1, 13, 2]))
        assert info.value.task == 13


def test_local_executor_with_one_task_runs_in_process():
    results = list(LocalExecutor(workers=2).run(scaled_with_pid, np.ones(3), [2]))
    assert results == [(2, (6.0, os.getpid()))]


def test_get_executor_specs():
    assert isinstance(get_executor(None), LocalExecutor)
    assert isinstance(get_executor("local"), LocalExecutor)
    assert isinstance(get_executor("serial"), SerialExecutor)
    dask = get_executor("dask://127.0.0.1:8786")
    assert isinstance(dask, DaskExecutor) and dask.address == "tcp://127.0.0.1:8786"
    executor = SerialExecutor()
    assert get_executor(executor) is executor
    for bad in ("threads", "dask://", "dask://nohostport", 3):
        with pytest.raises(ValueError):
            get_executor(bad)
    with pytest.raises(ValueError, match="workers"):
        LocalExecutor(workers=0)


def test_unreachable_dask_scheduler_is_a_clear_error():
    executor = DaskExecutor("dask://127.0.0.1:9", timeout=1)
    with pytest.raises(ValueError, match="cannot reach the dask scheduler"):
        list(executor.run(scaled_with_pid, np.ones(3), [1, 2]))


def test_dask_sweep_streams_into_the_store_and_matches_serial(dask_address, tmp_path):
    X = np.random.default_rng(5).normal(size=(8, 2))
    options = dict(measures=("metric", "eigenvalue"), digits=8, progress=False)
    on_dask = convergence_curve(X, [-1, 3, 20], store=tmp_path / "dask.sqlite", executor=dask_address, **options)
    serial = convergence_curve(X, [-1, 3, 20], store=False, executor="serial", **options)
    assert on_dask.attrs["computed"] == 6
    assert list(on_dask["value_text"]) == list(serial["value_text"])
    again = convergence_curve(X, [-1, 3, 20], store=tmp_path / "dask.sqlite", executor=dask_address, **options)
    recomputed = int((on_dask["guarantee"] != "rigorous").sum())  # the store reuses rigorous points only
    assert again.attrs == {"computed": recomputed, "reused": 6 - recomputed} and recomputed < 6


def test_pool_workers_do_not_outlive_a_killed_parent(tmp_path):
    """SIGKILL the parent of a pool running a long task: its workers must exit, not run on as orphans."""
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    pids_file = tmp_path / "pids"
    script = textwrap.dedent(f"""
        import os, time
        from precise_kpca.studies.executors import LocalExecutor

        def slow(shared, task):
            with open({str(pids_file)!r}, "a") as f:
                f.write(f"{{os.getpid()}}\\n")
            time.sleep(120)
            return task

        if __name__ == "__main__":
            for _ in LocalExecutor(workers=2).run(slow, None, [1, 2]):
                pass
    """)
    path = tmp_path / "sweep.py"
    path.write_text(script)
    parent = subprocess.Popen([sys.executable, str(path)])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not pids_file.exists() or len(pids_file.read_text().split()) < 2):
        time.sleep(0.2)
    workers = [int(p) for p in pids_file.read_text().split()]
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = [p for p in workers if _running(p)]
    assert not alive, f"orphaned workers still running: {alive}"


def _running(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie has exited
        return f.read().split()[2] != "Z"
