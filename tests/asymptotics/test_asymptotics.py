"""σ → ∞ constants: first-order limits agree with certified high-precision numerics at σ = 2^30."""
import math

import numpy as np
import pytest
from hypothesis import given, settings

from precise_kpca.asymptotics import (
    eigenprojection_constant,
    eigenvalue_constant,
    eta_bound,
    metric_constant,
)
from precise_kpca.measures import measure

from ..strategies import data_sets

X = np.random.default_rng(0).normal(size=(10, 3)) * np.array([1.0, 2.0, 4.0])


def _agree(a: float, b: float) -> float:
    return math.inf if a == b else -math.log10(abs(a - b) / abs(b))


def test_eigenvalue_constant_limit_matches_numerics_at_2_30():
    limit = eigenvalue_constant(X)
    at = eigenvalue_constant(X, "2**30")
    assert at.certified_digits >= 8
    assert _agree(limit.value, at.value) >= 8


@pytest.mark.parametrize("k", [1, 2])
def test_eigenprojection_constant_limit_matches_numerics_at_2_30(k):
    limit = eigenprojection_constant(X, k)
    at = eigenprojection_constant(X, k, "2**30")
    assert _agree(limit.value, at.value) >= 8
    # the approach is O(σ⁻²): at 2^4 the limit is still visibly off, at 2^30 it is not
    early = eigenprojection_constant(X, k, "2**4")
    assert _agree(limit.value, early.value) < 5


def test_metric_constant_tends_to_one_eighth_from_below():
    values = [metric_constant(X, f"2**{p}").value for p in (-2, 2, 6, 20)]
    assert values == sorted(values) and values[-1] < 1 / 8
    assert metric_constant(X).value == 1 / 8
    assert 1 / 8 - values[-1] < 1e-9


@given(data_sets(max_rows=8, allow_duplicates=False))
@settings(max_examples=15, deadline=None)
def test_eta_bound_holds_and_overshoots_by_at_least_eight(Y):
    for p in (0, 3, 12):
        dissonance = float(measure(Y, "metric", f"2**{p}", digits=6).value)
        bound = eta_bound(Y, f"2**{p}")
        assert dissonance <= bound / 8 * (1 + 1e-12)  # sharp constant 1/8 ≤ η/8


def test_constant_errors():
    with pytest.raises(ValueError, match="k=4 exceeds the rank 3"):
        eigenprojection_constant(X, 4)
