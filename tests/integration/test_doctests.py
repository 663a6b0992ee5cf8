"""The docstring examples of the package (and of proofs/) run as tests, so ``python -m pytest -q`` checks them.

Only the modules whose source holds a ``>>>`` prompt are imported, one test per module: collecting costs nothing,
and a module needs no more than what its own examples import. A module with a prompt whose examples never run
(a prompt outside any docstring, or every example skipped) fails: an example that is shown is checked.
"""
from __future__ import annotations

import doctest
import importlib

import pytest

from ..conftest import REPO_ROOT

PACKAGES = ("precise_kpca", "proofs")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(REPO_ROOT).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    assert "precise_kpca.estimator" in MODULES  # the scan reads the package's files


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in doctest.DocTestFinder().find(module):
        runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted > 0, f"{name} shows a >>> prompt but no example of it runs"
    assert failed == 0, f"{failed} of {attempted} examples of {name} failed (their output is printed above)"
