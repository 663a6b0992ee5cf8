"""notebooks/neighbours.ipynb runs end to end at reduced size, and every number it prints says its guarantee."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "neighbours.ipynb"


def test_notebook_is_stored_without_outputs():
    code = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_neighbours_notebook_prints_guarantees(monkeypatch, tmp_path):
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("PRECISE_KPCA_NB_QUICK", "1")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel imports this checkout, not an installed copy
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "guarantee none: float64; ± is the statistical standard error" in text
    assert re.search(r"D= 50: mean RMSE \S+  \[rigorous, \d+ digits\]", text)
    studies = [line for line in text.splitlines() if re.match(r"^(exact|nystrom|rf-cos|rf-sincos) +rate", line)]
    assert len(studies) == 4 and all(line.count("[rigorous]") == 2 for line in studies)
    assert "certified digits" not in text and "heuristic" not in text
