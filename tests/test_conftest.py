"""The suite keeps out of the user's cache: studies run without a store, in this process and through the CLI in a
subprocess, land in the session's private cache (tests/conftest.py, ``private_cache``), never in the user's."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing

import numpy as np

from precise_kpca.datasets.paths import user_cache_root
from precise_kpca.studies.curves import convergence_curve
from precise_kpca.studies.store import data_hash, default_path

from .conftest import REPO_ROOT, USER_CACHE


def _rows(path, digest: str) -> int:
    """Points of data set ``digest`` in the store at ``path`` (read-only; 0 when there is no such file)."""
    if not path.is_file():
        return 0
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return db.execute("SELECT COUNT(*) FROM points WHERE data_hash = ?", (digest,)).fetchone()[0]


def test_default_store_and_user_cache_are_the_sessions(private_cache):
    assert default_path().is_relative_to(private_cache) and user_cache_root().is_relative_to(private_cache)
    assert not default_path().is_relative_to(USER_CACHE) and not user_cache_root().is_relative_to(USER_CACHE)


def test_studies_without_a_store_write_to_the_private_store(private_cache, tmp_path):
    X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.5], [3.5, 1.0], [0.25, 3.0]])
    digest = data_hash(X)
    convergence_curve(X, [0], measures="metric", executor="serial", progress=False, name="isolation-probe")
    np.save(tmp_path / "probe.npy", X)
    done = subprocess.run([sys.executable, "-m", "precise_kpca", "curves", str(tmp_path / "probe.npy"),
                           "--log2-sigma", "1", "--measures", "metric", "--no-naive", "--executor", "serial",
                           "--progress", "never", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert _rows(private_cache / "precise_kpca" / "results.sqlite", digest) == 2  # σ = 1 here, σ = 2 by the CLI
    assert _rows(USER_CACHE / "results.sqlite", digest) == 0
