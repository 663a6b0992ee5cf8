"""Hypothesis strategies for data sets that stress the numerics: outliers, near-duplicates, duplicates."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


@st.composite
def data_sets(draw, min_rows=3, max_rows=8, max_dim=4, allow_duplicates=True):
    """Random N×d float64 data, sometimes with a far outlier, a near-duplicate or an exact duplicate row."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(1, max_dim))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    twist = draw(st.sampled_from(["plain", "outlier", "near-duplicate"] + (["duplicate"] if allow_duplicates else [])))
    if twist == "outlier":
        X[-1] *= draw(st.sampled_from([1e2, 1e4, 1e6]))
    elif twist == "near-duplicate":
        X[-1] = X[0] * (1 + draw(st.sampled_from([1e-6, 1e-10, 2**-50])))
    elif twist == "duplicate" and n >= 5:  # keep the median distance nonzero
        X[-1] = X[0]
    return X
