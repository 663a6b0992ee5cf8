"""Packaging: true dependency floors, the package list, proofs/ installed as precise_kpca.proofs, the extras'
messages, ``python -m precise_kpca``, and a CLI whose start-up imports nothing heavy."""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from precise_kpca import extras
from precise_kpca.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
HEAVY = ("numpy", "pandas", "scipy", "sklearn", "mpmath", "matplotlib", "flint", "sympy", "gmpy2")


def _requirements(extra: str | None = None) -> dict[str, Requirement]:
    project = PYPROJECT["project"]
    texts = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    found = {}
    for text in texts:
        requirement = Requirement(text)
        if requirement.name != "precise_kpca":
            found[requirement.name.lower().replace("_", "-")] = requirement
    return found


def _floor(requirement: Requirement) -> Version | None:
    floors = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==", "~=")]
    return max(floors) if floors else None


def _ours() -> dict[str, Requirement]:
    ours = _requirements()
    for extra in ("dask", "parquet", "notebooks", "proofs"):
        ours.update(_requirements(extra))
    return ours


def test_installed_versions_satisfy_the_floors():
    core = set(_requirements())
    for name, requirement in _ours().items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            if name in core:
                raise
            continue  # an extra not installed here (CI installs them all with [test])
        assert requirement.specifier.contains(installed, prereleases=True), f"{name} {installed} vs {requirement}"


def test_floors_respect_what_the_dependencies_themselves_require():
    """Where the installed release of a dependency is our floor, every floor it puts on another of our
    dependencies is at most ours (numpy-quaddtype 1.0 needs numpy 2.4, so numpy>=1.26 was false)."""
    ours = _ours()
    checked = 0
    for name, requirement in ours.items():
        try:
            installed = Version(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            continue  # an extra not installed here
        if installed != _floor(requirement):
            continue  # a newer release is installed: its own requirements say nothing about our floor's
        for text in importlib.metadata.requires(name) or []:
            theirs = Requirement(text)
            other = theirs.name.lower().replace("_", "-")
            if other in ours and (theirs.marker is None or theirs.marker.evaluate()) and _floor(theirs):
                checked += 1
                assert _floor(ours[other]) >= _floor(theirs), f"{name} needs {theirs}; we say {ours[other]}"
    assert checked >= 1  # numpy-quaddtype's numpy floor at least


def test_the_package_list_is_every_package_folder():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "precise_kpca").rglob("__init__.py")}
    assert listed == found | {"precise_kpca.proofs"}
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"precise_kpca.proofs": "proofs"}
    assert (ROOT / "proofs" / "__init__.py").is_file()  # stays a top-level folder of the repository


def test_core_install_has_no_heavy_optional_part():
    core = set(_requirements())
    assert not core & {"pyarrow", "dask", "distributed", "sympy", "ipywidgets"}
    test_extra = PYPROJECT["project"]["optional-dependencies"]["test"]
    assert "precise_kpca[dask,parquet,notebooks,proofs]" in test_extra  # the README's test command pulls them all


def test_a_missing_extra_names_itself(monkeypatch):
    monkeypatch.setattr(extras, "has_extra", lambda extra: False)
    from precise_kpca.studies.executors import DaskExecutor
    from precise_kpca.studies.store import ResultsStore

    with pytest.raises(extras.MissingExtra, match=r"dask.distributed: pip install 'precise_kpca\[dask\]'"):
        DaskExecutor("dask://127.0.0.1:8786")
    with ResultsStore(":memory:") as store, pytest.raises(extras.MissingExtra, match=r"precise_kpca\[parquet\]"):
        store.export_parquet("points.parquet")


def test_cli_help_lines_are_the_commands_own():
    stubs = build_parser("")._subparsers._group_actions[0].choices
    full = build_parser(None)._subparsers._group_actions[0]
    helps = {action.dest: action.help for action in full._choices_actions}
    for name, (_, help_text) in COMMANDS.items():
        assert helps[name] == help_text, name
        assert name in stubs


@pytest.mark.parametrize("argv", [["--help"], *[[name, "--help"] for name in COMMANDS], ["data", "fetch", "--help"]])
def test_cli_start_up_imports_nothing_heavy(argv):
    """What makes ``precise-kpca --help`` fast: neither it nor any ``CMD --help`` imports NumPy and the like."""
    script = ("import sys\nfrom precise_kpca.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n"
              "    pass\nprint(sorted({m.split('.')[0] for m in sys.modules} & set(%r)), file=sys.stderr)" % (HEAVY,))
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, cwd=ROOT)
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
    assert "usage: precise-kpca" in done.stdout


def test_neighbours_choices_are_the_library_s():
    from precise_kpca.approx.convergence import GUARANTEES, METHODS
    from precise_kpca.cli import neighbours

    assert neighbours.METHODS == tuple(METHODS)
    assert neighbours.GUARANTEES == tuple(GUARANTEES)


def test_python_dash_m_runs_the_cli():
    done = subprocess.run([sys.executable, "-m", "precise_kpca", "--version"], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0 and done.stdout.startswith("precise-kpca ")
