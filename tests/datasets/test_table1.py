"""Table I of the paper reproduced from the shared data sets: N, attributes after one-hot encoding, ρ."""
from __future__ import annotations

import numpy as np
import pytest

from precise_kpca import geometry
from precise_kpca.datasets import available, load, load_frame, manifest

# Table I as printed in the paper: name -> (examples, attributes, attributes after one-hot, rho).
TABLE_I = {
    "splice": (3190, 60, 287, 1.15),
    "tic-tac-toe": (958, 9, 27, 1.22),
    "wdbc": (569, 30, 30, 10.52),
    "diabetes": (768, 8, 8, 8.41),
    "wine": (178, 13, 13, 5.0),
    "balloon": (2001, 1, 1, 14.83),
    "cpu": (209, 7, 36, 8.92),
    "boston": (506, 13, 22, 3.68),
    "stock": (950, 9, 9, 2.55),
    "cloud": (108, 5, 9, 4.67),
    "credit-g": (1000, 20, 61, 10.34),
    "blood-transfusion-service-center": (748, 4, 4, 16.29),
    "monks-problems-2": (601, 6, 17, 1.22),
    "steel-plates-fault": (1941, 33, 33, 10.4),
    "kr-vs-kp": (3196, 36, 73, 1.63),
    "qsar-biodeg": (1055, 41, 41, 8.5),
    "phoneme": (5404, 5, 5, 2.57),
    "ozone-level-8hr": (2534, 72, 72, 4.79),
    "hill-valley": (1212, 100, 100, 41.42),
    "kc2": (522, 21, 21, 502.54),
    "climate-model-simulation-crashes": (540, 20, 20, 3.17),
    "spambase": (4601, 57, 57, 106.69),
    "kc1": (2109, 21, 21, 252.8),
    "ilpd": (583, 10, 11, 33.4),
    "pc1": (1109, 21, 21, 608.41),
    "pc3": (1563, 37, 37, 1806.03),
    "one-hundred-plants-margin": (1600, 64, 64, 2.98),
    "one-hundred-plants-shape": (1600, 64, 64, 6.6),
    "one-hundred-plants-texture": (1599, 64, 64, 3.37),
    "banknote-authentication": (1372, 4, 4, 3.87),
}
ADDED_LATER = ["balloon", "stock", "cloud", "monks-problems-2", "ozone-level-8hr", "one-hundred-plants-margin"]
"""The six sets that joined the shared data after the first 24 (each checked against Table I below)."""
SHARED = list(TABLE_I)


def test_manifest_carries_table_one(data_dir):
    entries = manifest(data_dir).datasets
    assert list(entries) == list(TABLE_I)
    for name, (examples, attributes, onehot, rho) in TABLE_I.items():
        info = entries[name]
        assert (info.paper_examples, info.paper_attributes, info.paper_attributes_onehot, info.paper_rho) == (
            examples, attributes, onehot, rho), name


def test_all_30_sets_of_table_one_are_available(data_dir):
    assert available(data_dir) == SHARED
    assert len(SHARED) == 30 and set(ADDED_LATER) <= set(SHARED)


@pytest.mark.parametrize("name", SHARED)
def test_table_one_row(name, data_dir):
    """N and one-hot attribute count exactly; ρ (full N×N median) to the paper's two printed decimals."""
    examples, _, onehot, rho = TABLE_I[name]
    X = load(name, data_dir=data_dir)
    assert X.dtype == np.float64 and X.flags.c_contiguous
    assert X.shape == (examples, onehot)
    assert round(geometry(X, median="full").eccentricity, 2) == rho


@pytest.mark.parametrize("name", ["wine", "wdbc", "kc2"])
def test_median_over_distinct_pairs_does_not_reproduce_table_one(name, data_dir):
    """Evidence for the protocol reading: without the diagonal zeros, ρ misses the printed value."""
    rho = TABLE_I[name][3]
    assert round(geometry(load(name, data_dir=data_dir), median="pairs").eccentricity, 2) != rho


@pytest.mark.parametrize(("name", "declared", "never_seen"), [
    ("credit-g", 63, {"purpose=vacation", "personal_status=female single"}),
    ("kr-vs-kp", 74, {"wtoeg=f"}),
])
def test_declared_categories_overcount_table_one(name, declared, never_seen, data_dir):
    """One column per *declared* value gives more columns than Table I; the extra ones are all zero."""
    full = load_frame(name, data_dir=data_dir, categories="declared")
    present = load_frame(name, data_dir=data_dir)
    assert full.shape[1] == declared and present.shape[1] == TABLE_I[name][2]
    assert set(full.columns) - set(present.columns) == never_seen
    assert (full[sorted(never_seen)] == 0).all().all()
    np.testing.assert_array_equal(full[present.columns].to_numpy(), present.to_numpy())


def test_bundled_wine_equals_shared_arff(data_dir, tmp_path):
    """scikit-learn's load_wine equals wine.arff minus its class column, bit for bit and in row order."""
    np.testing.assert_array_equal(load("wine", data_dir=tmp_path), load("wine", data_dir=data_dir))


def test_one_hot_rows_have_one_active_value_per_attribute(data_dir):
    frame = load_frame("credit-g", data_dir=data_dir)
    for attribute in manifest(data_dir).datasets["credit-g"].categorical:
        block = frame[[c for c in frame.columns if c.startswith(attribute + "=")]]
        assert (block.sum(axis=1) == 1).all(), attribute
