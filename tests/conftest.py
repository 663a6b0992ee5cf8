"""Shared fixtures.

The paper's data sets live outside the project (``../shared/datasets`` next to the checkout, or the folder
named by ``PRECISE_KPCA_DATA``). Tests that need them skip with a reason where the folder is absent, except
under CI (``CI=true``), where its absence is a failure.

Under CI the hypothesis examples are derandomized (the ``ci`` profile): a run on main checks the same examples
every time, so a landing never depends on a lucky draw; local runs keep exploring new examples, and a failure
prints the blob that reproduces it.

No test writes to the user's cache: every test runs with ``$PRECISE_KPCA_STORE`` (the default results store) and
``$XDG_CACHE_HOME`` (platformdirs' user cache: the default data and OpenML folders) inside one temporary folder
of the session, which the CLI's subprocesses inherit (:func:`private_cache`).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

REPO_ROOT = Path(__file__).resolve().parent.parent
USER_CACHE = Path(platformdirs.user_cache_dir("precise_kpca"))
"""The user's own cache folder of precise_kpca, as resolved before any test runs (no test may write there)."""


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory) -> Iterator[Path]:
    """The session's stand-in for the user cache: the default results store and platformdirs' cache live there.

    Session-scoped, so that it is in place before any module- or session-scoped fixture runs a study.
    """
    root = tmp_path_factory.mktemp("user-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(root))
        patch.setenv("PRECISE_KPCA_STORE", str(root / "precise_kpca" / "results.sqlite"))
        yield root


def shared_data_dir() -> Path | None:
    """The folder holding the paper's ARFF files and ``manifest.json``, or None."""
    env = os.environ.get("PRECISE_KPCA_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "datasets")
    for path in candidates:
        if (path / "manifest.json").is_file():
            return path
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """Path of the shared data sets; skips (or fails under CI=true) where it is absent."""
    path = shared_data_dir()
    if path is None:
        message = (
            "the paper's data sets are absent: expected ../shared/datasets/manifest.json next to the "
            "checkout or PRECISE_KPCA_DATA pointing at such a folder"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: the data must be present)")
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def dask_address():
    """Address of a two-worker Dask LocalCluster (skips where dask.distributed is missing)."""
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    try:
        yield "dask://" + cluster.scheduler_address.removeprefix("tcp://")
    finally:
        cluster.close()
