"""Checkpoints of the eigen refinement: an interrupted run resumes to the same result; wrong files are refused."""
from __future__ import annotations

import pickle
import weakref

import numpy as np
import pytest

from precise_kpca.numerics.eigen_refine import checkpoint as eigen_checkpoint
from precise_kpca.numerics.eigen_refine import driver
from precise_kpca.testing import centered_gaussian_gram, gaussian_data
from precise_kpca.numerics.eigen_refine import refine_eigensystem


@pytest.fixture(scope="module")
def graded30():
    return centered_gaussian_gram(gaussian_data(30, seed=3), bits=224)


class _Interrupt(Exception):
    pass


def _interrupting_update(after: int):
    """``updated_basis`` that raises on call ``after + 1``: the run dies between two iterations' checkpoints."""
    calls = []
    real = driver.updated_basis

    def update(*args, **kwargs):
        if len(calls) == after:
            raise _Interrupt
        calls.append(1)
        return real(*args, **kwargs)

    return update


def test_interrupted_tier2_resumes_to_the_same_result(graded30, tmp_path, monkeypatch, caplog):
    path = tmp_path / "refine.ckpt"
    whole = refine_eigensystem(graded30, dps=30, tier=2)
    assert whole.iterations >= 3 and whole.resumed is None
    with monkeypatch.context() as m:
        # after the first iteration: the second one's precision depends on the block it rotated (saved state)
        m.setattr(driver, "updated_basis", _interrupting_update(1))
        with pytest.raises(_Interrupt):
            refine_eigensystem(graded30, dps=30, tier=2, checkpoint=path)
    assert path.exists() and not path.with_name(path.name + ".tmp").exists()
    saved = pickle.loads(path.read_bytes())["state"]
    assert saved["iteration"] == 1 and len(saved["history"]) == 1 and saved["seconds"] > 0
    with caplog.at_level("INFO", logger="precise_kpca.numerics.eigen_refine"):
        resumed = refine_eigensystem(graded30, dps=30, tier=2, checkpoint=path)
    assert resumed.resumed == {"iteration": 1, "seconds": saved["seconds"]}
    lines = [r.getMessage() for r in caplog.records]
    assert "resumed after iteration 1" in lines[0]
    assert [f"iteration {i + 1} " in line for i, line in enumerate(lines[1:], start=1)] == [True] * (len(lines) - 1)
    assert len(lines) == 1 + len(whole.history) - 1  # one line per iteration run after the resume
    assert not path.exists()  # removed once the refinement returned
    assert resumed.iterations == whole.iterations
    bits = [(h["a_bits"], h["x_bits"]) for h in whole.history]
    assert [(h["a_bits"], h["x_bits"]) for h in resumed.history] == bits
    assert bits[1][0] < bits[1][1] + 48  # iteration 2 ran at the precision the rotated block set
    assert all(h["seconds"] > 0 for h in resumed.history)
    # deterministic arithmetic: the resumed run reproduces every digit and every bound
    assert list(resumed.values) == list(whole.values)
    assert list(resumed.value_error_bounds) == list(whole.value_error_bounds)
    assert np.array_equal(resumed.vectors, whole.vectors)
    assert np.array_equal(resumed.vector_error_bounds, whole.vector_error_bounds)


def test_resumed_run_frees_the_loaded_state_and_products_before_the_result(graded30, tmp_path, monkeypatch):
    """At N = 5404 each basis is 4.4 GB: a resumed run that kept the loaded basis (and the last products)
    alive while building its result ran out of memory. Weak references tell what is still alive then."""
    path = tmp_path / "refine.ckpt"
    with monkeypatch.context() as m:
        m.setattr(driver, "updated_basis", _interrupting_update(1))
        with pytest.raises(_Interrupt):
            refine_eigensystem(graded30, dps=30, tier=2, checkpoint=path)
    loaded, products, alive_at_result = [], [], []
    real_load, real_products, real_result = eigen_checkpoint.load, driver.products, driver.build_result

    def load(*args, **kwargs):
        state = real_load(*args, **kwargs)
        loaded.append(weakref.ref(state["X"]))
        return state

    def products_(self, *args, **kwargs):
        pr = real_products(self, *args, **kwargs)
        products.append(weakref.ref(pr))
        return pr

    def result(self, kept, *args, **kwargs):
        alive_at_result.append([r() is not None for r in loaded + products])
        return real_result(self, kept, *args, **kwargs)

    monkeypatch.setattr(eigen_checkpoint, "load", load)
    monkeypatch.setattr(driver, "products", products_)
    monkeypatch.setattr(driver, "build_result", result)
    res = refine_eigensystem(graded30, dps=30, tier=2, checkpoint=path)
    # the result is the basis of a later iteration than the loaded one (so the loaded one is garbage)
    assert res.resumed["iteration"] == 1 and res.iterations >= 2 and len(products) >= 2
    assert alive_at_result == [[False] * (1 + len(products))]


def test_checkpoint_of_other_settings_or_matrix_is_refused(graded30, tmp_path, monkeypatch):
    path = tmp_path / "refine.ckpt"
    with monkeypatch.context() as m:
        m.setattr(driver, "updated_basis", _interrupting_update(1))
        with pytest.raises(_Interrupt):
            refine_eigensystem(graded30, dps=30, tier=2, checkpoint=path)
    with pytest.raises(ValueError, match="another matrix or other settings"):
        refine_eigensystem(graded30, dps=25, tier=2, checkpoint=path)
    other = graded30.copy()
    other[0, 1] = other[1, 0] = other[0, 1] * (1 + 2.0**-100)
    with pytest.raises(ValueError, match="another matrix or other settings"):
        refine_eigensystem(other, dps=30, tier=2, checkpoint=path)
    assert path.exists()  # a refused resume leaves the state alone


def test_save_is_whole_or_nothing(tmp_path, monkeypatch):
    path = tmp_path / "state.ckpt"
    eigen_checkpoint.save(path, "key", {"iteration": 1})

    def failing_dump(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pickle, "dump", failing_dump)
    with pytest.raises(OSError):
        eigen_checkpoint.save(path, "key", {"iteration": 2})
    monkeypatch.undo()
    assert eigen_checkpoint.load(path, "key") == {"iteration": 1}
    eigen_checkpoint.remove(path)
    assert not path.exists() and not path.with_name(path.name + ".tmp").exists()
    assert eigen_checkpoint.load(path, "key") is None
