"""The notebooks run top to bottom at reduced sizes (environment variables they read), and are stored without outputs."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
REDUCED = {
    "quickstart.ipynb": {"PRECISE_KPCA_NB_ROWS": "20"},
    "paper_figures.ipynb": {"PRECISE_KPCA_NB_ROWS": "9", "PRECISE_KPCA_NB_MAX_LOG2": "10", "PRECISE_KPCA_NB_KS": "1,2",
                            "PRECISE_KPCA_NB_DATASETS": "wine,banknote-authentication"},
    "beyond.ipynb": {"PRECISE_KPCA_NB_ROWS": "20", "PRECISE_KPCA_NB_SEARCH": "4x1",
                     "PRECISE_KPCA_NB_DATASETS": "wine,balloon,banknote-authentication,cpu"},
}


@pytest.mark.parametrize("name", sorted(REDUCED))
def test_notebook_is_stored_without_outputs(name):
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, name


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REDUCED))
def test_notebook_runs_at_reduced_size(name, data_dir, monkeypatch, tmp_path):
    for key, value in REDUCED[name].items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PRECISE_KPCA_DATA", str(data_dir))
    monkeypatch.setenv("PRECISE_KPCA_STORE", str(tmp_path / "store.sqlite"))  # never the user cache
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    images = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    if name == "paper_figures.ipynb":
        assert len(images) >= 5  # Figs 3-8 (Fig 8 needs k >= 2)
    if name == "beyond.ipynb":
        assert len(images) == 1  # onset against log2 ρ and ½ log2 C_k
