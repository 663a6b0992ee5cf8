"""Provenance: versions from each library's own attribute, the commit from git itself, file hashes from hashlib."""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess

import flint
import mpmath
import numpy
import pandas as pd
import scipy

from precise_kpca import __version__
from precise_kpca.reports import provenance as prov

from ..conftest import REPO_ROOT


def _head() -> str | None:
    done = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def test_provenance_records_versions_commit_date_and_machine():
    info = prov.provenance()
    assert info["library"]["version"] == __version__
    assert info["library"]["commit"] == _head()
    versions = info["versions"]
    assert (versions["numpy"], versions["scipy"], versions["mpmath"], versions["python-flint"], versions["pandas"]) == (
        numpy.__version__, scipy.__version__, mpmath.__version__, flint.__version__, pd.__version__)
    written = datetime.datetime.fromisoformat(info["date"])
    assert written.tzinfo is not None
    assert abs(datetime.datetime.now(datetime.timezone.utc) - written) < datetime.timedelta(minutes=5)
    assert info["machine"]["cpu_count"] == os.cpu_count() and 1 <= info["machine"]["usable_cpus"] <= os.cpu_count()
    assert info["machine"]["platform"]


def test_outside_a_checkout_the_commit_is_said_to_be_missing(monkeypatch):
    monkeypatch.setattr(prov, "_git", lambda *args: None)
    info = prov.provenance()
    assert info["library"] == {"name": "precise_kpca", "version": __version__, "commit": None, "dirty": None}
    text = "\n".join(prov.markdown_lines(info))
    assert "git commit not available (not a git checkout)" in text


def test_a_modified_work_tree_is_flagged(monkeypatch):
    answers = {("rev-parse", "HEAD"): "abc123", ("status", "--porcelain", "--untracked-files=no"): " M x.py"}
    monkeypatch.setattr(prov, "_git", lambda *args: answers[args])
    info = prov.provenance()
    assert info["library"]["commit"] == "abc123" and info["library"]["dirty"] is True
    assert "git commit abc123 (work tree modified)" in "\n".join(prov.markdown_lines(info))


def test_sidecar_hashes_each_file(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "sub" / "b.csv"
    b.parent.mkdir()
    a.write_text("x,y\n1,2\n")
    b.write_bytes(b"\x00" * 3_000_000)  # larger than one read block
    path = prov.write_provenance(tmp_path, [a, b])
    record = json.loads(path.read_text())
    assert path.name == "provenance.json"
    assert record["files"] == {"a.csv": hashlib.sha256(a.read_bytes()).hexdigest(),
                               os.path.join("sub", "b.csv"): hashlib.sha256(b.read_bytes()).hexdigest()}
    a.write_text("x,y\n1,3\n")  # a changed file no longer matches its recorded hash
    assert prov.sha256(a) != record["files"]["a.csv"]
