"""numerics/data.py: one DataState per data set owns what is derived from X; the per-module caches are gone."""
import ast
import copy as copy_module
import pickle
from pathlib import Path

import numpy as np
import pytest

import precise_kpca
from precise_kpca.measures.certified import measure
from precise_kpca.numerics.data import REGISTRY_SIZE, clear, data_state

PACKAGE = Path(precise_kpca.__file__).parent


@pytest.fixture(autouse=True)
def _fresh():
    clear()
    yield
    clear()


def _set(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(6, 2))


class _Counted:
    """A compute function that counts its calls (the memo's key is the object: one per test)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, X, *params):
        self.calls += 1
        return (float(X.sum()), params)


def test_equal_data_share_one_state_and_its_values():
    X = _set(0)
    state = data_state(X)
    assert data_state(X.copy()) is state  # by content
    assert data_state(state.X) is state  # by identity
    assert data_state(state) is state
    assert data_state(_set(1)) is not state
    count = _Counted()
    assert state.derived(count, 3, keep=2) == data_state(X.copy()).derived(count, 3, keep=2)
    assert count.calls == 1


def test_the_state_holds_a_read_only_copy():
    X = _set(0)
    state = data_state(X)
    X[0, 0] = 7.0  # the caller's array may change: the state's values stay those of the data it was made from
    assert state.X[0, 0] != 7.0
    assert data_state(X) is not state
    with pytest.raises(ValueError):
        state.X[0, 0] = 7.0


def test_values_are_bounded_per_compute_over_all_data_sets():
    count = _Counted()
    states = [data_state(_set(seed)) for seed in range(3)]
    for state in states:
        state.derived(count, keep=2)
    assert count.calls == 3
    held = [state for state in states if (count, ()) in vars(state).get("_memo", {})]
    assert held == states[1:]  # the least recently used dropped
    states[0].derived(count, keep=2)
    assert count.calls == 4
    states[2].derived(count, keep=2)  # kept
    assert count.calls == 4


def test_failures_are_not_kept():
    calls = []

    def failing(X):
        calls.append(1)
        raise ArithmeticError("refused")

    state = data_state(_set(0))
    for _ in range(2):
        with pytest.raises(ArithmeticError):
            state.derived(failing, keep=1)
    assert len(calls) == 2


def test_the_registry_is_bounded_and_a_held_state_keeps_its_values():
    held = data_state(_set(100))
    count = _Counted()
    held.derived(count, keep=8)
    for seed in range(REGISTRY_SIZE):
        data_state(_set(seed))
    assert data_state(_set(100)) is not held  # dropped from the registry: a new state by content
    assert data_state(held.X) is held  # its own array still finds it
    held.derived(count, keep=8)
    assert count.calls == 1


def test_clear_drops_one_compute_or_everything():
    first, second = _Counted(), _Counted()
    state = data_state(_set(0))
    state.derived(first, keep=1)
    state.derived(second, keep=1)
    clear(first)
    state.derived(first, keep=1)
    state.derived(second, keep=1)
    assert (first.calls, second.calls) == (2, 1)
    clear()
    assert data_state(_set(0)) is not state
    state.derived(second, keep=1)
    assert second.calls == 2


def test_a_pickled_state_crosses_as_its_data():
    state = data_state(_set(0))
    state.derived(_Counted(), keep=1)
    copy = pickle.loads(pickle.dumps(state))
    assert copy is state  # in one process the registry finds it; a worker builds its own from X
    assert len(pickle.dumps(state)) < 2 * len(pickle.dumps(state.X))


def test_a_copy_of_a_derived_object_starts_empty():
    from precise_kpca.numerics.linear_exact import exact_linear

    exact = exact_linear(_set(0))
    exact.trace()
    copy = copy_module.copy(exact)
    assert "_memo" in vars(exact) and "_memo" not in vars(copy)
    assert copy.trace() == exact.trace()


def test_measure_reads_a_state_and_shares_its_work():
    X = np.random.default_rng(5).normal(size=(12, 3))
    state = data_state(X)
    from_state = measure(state, "eigenvalue", 2**20, digits=10)
    from_array = measure(X, "eigenvalue", 2**20, digits=10)
    assert (from_state.lower, from_state.upper) == (from_array.lower, from_array.upper)
    assert vars(state)["_memo"]  # the exact linear side, the certificate: kept by the state


def test_no_module_keeps_derived_values_in_a_global_cache():
    """Every value derived from a data set lives in its DataState (the per-module lru_caches keyed on
    X.tobytes() are gone); caches of constants (versions, the cost model) are not of a data set."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parts[-2] in ("studies",):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                for deco in node.decorator_list:
                    target = deco.func if isinstance(deco, ast.Call) else deco
                    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                    if name in ("lru_cache", "cache"):
                        found.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert found == ["datasets/manifest.py:registry"]
