"""Provenance of written results: what produced them, so a table or figure can be traced back to its code.

:func:`provenance` collects the library version, the git commit of the checkout the package runs from (with a
``dirty`` flag when the work tree differs from it; None outside a checkout or without git), the versions of the
numeric libraries the digits depend on (numpy, scipy, mpmath, python-flint) and of Python, the date (UTC, ISO
8601) and the machine (platform, processor, CPU count and the CPUs this process may use).
:func:`write_provenance` stores it as ``provenance.json`` beside the files it covers, with each file's sha256,
so a CSV read later is tied to the run that wrote it (a sidecar rather than a header comment, which CSV readers
would take for data). Hand-written because no library records this set of facts; each fact comes from the
standard library (``importlib.metadata``, ``platform``, ``subprocess`` for git).
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

FILE_NAME = "provenance.json"
LIBRARIES = ("numpy", "scipy", "mpmath", "python-flint", "pandas")
"""Distributions whose versions are recorded (those whose arithmetic or tables the results pass through)."""
GIT_TIMEOUT = 10.0
"""Seconds allowed to each git call (a hung filesystem must not hang a report)."""


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    """Output of ``git -C <package folder> ARGS``, or None where git or a checkout is missing."""
    folder = Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state() -> dict:
    """``{"commit": sha or None, "dirty": bool or None}`` of the checkout this package is imported from."""
    commit = _git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def provenance() -> dict:
    """What produced a result, now.

    Returns
    -------
    dict
        ``library`` (name, version, git commit and dirty flag), ``versions`` ({distribution: version or None}
        for :data:`LIBRARIES` and ``python``), ``date`` (UTC, ISO 8601), ``machine`` (``platform``,
        ``processor``, ``cpu_count``, ``usable_cpus``) and ``command`` (``sys.argv``).
    """
    from .. import __version__

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "library": {"name": "precise_kpca", "version": __version__, **git_state()},
        "versions": {**{name: _version(name) for name in LIBRARIES}, "python": platform.python_version()},
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpu_count": os.cpu_count(), "usable_cpus": usable},
        "command": list(sys.argv),
    }


def sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_provenance(out_dir, files, info: dict | None = None) -> Path:
    """Write ``provenance.json`` into ``out_dir``: :func:`provenance` (or ``info``) and the sha256 of each file.

    Parameters
    ----------
    out_dir : path-like
    files : iterable of path-like
        The files this provenance covers (named relative to ``out_dir``).
    info : dict, optional
        A :func:`provenance` taken earlier (e.g. the one quoted in ``report.md``).

    Returns
    -------
    pathlib.Path
    """
    out_dir = Path(out_dir)
    record = dict(info or provenance())
    record["files"] = {os.path.relpath(Path(f), out_dir): sha256(Path(f)) for f in files}
    path = out_dir / FILE_NAME
    path.write_text(json.dumps(record, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def markdown_lines(info: dict) -> list[str]:
    """A ``## Provenance`` section for ``report.md`` from a :func:`provenance` record."""
    library, machine = info["library"], info["machine"]
    commit = library["commit"] or "not available (not a git checkout)"
    if library["commit"] and library["dirty"]:
        commit += " (work tree modified)"
    versions = ", ".join(f"{name} {version or 'absent'}" for name, version in info["versions"].items())
    return ["## Provenance", "",
            f"* precise_kpca {library['version']}, git commit {commit}.",
            f"* {versions}.",
            f"* Written {info['date']} on {machine['platform']} ({machine['processor']}), "
            f"{machine['cpu_count']} CPUs ({machine['usable_cpus']} usable).",
            f"* Every file of this directory is listed with its sha256 in `{FILE_NAME}`.", ""]
