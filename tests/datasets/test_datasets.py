"""Data layer: readers, the paper's preprocessing, data-directory resolution, named sets, OpenML, resolve()."""
from __future__ import annotations

import ast
import json
import urllib.error
from pathlib import Path

import numpy as np
import pandas as pd
import platformdirs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precise_kpca import datasets
from precise_kpca.datasets import ENV_VAR, load, load_openml, load_path, preprocess, read_table, resolve

ARFF = """% a comment
@RELATION toy
@ATTRIBUTE size NUMERIC
@ATTRIBUTE colour {red, green, blue}
@ATTRIBUTE 'shape kind' {round, square}
@ATTRIBUTE weight REAL
@ATTRIBUTE class {yes, no}
@DATA
1.5, red, round, 10, yes
2.5, blue, round, 20, no
-3, red, square, 1e3, yes
"""


@pytest.fixture
def no_env(monkeypatch, tmp_path):
    """No PRECISE_KPCA_DATA, and an empty per-user cache under tmp_path."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda appname: str(tmp_path / "cache" / appname))
    return tmp_path / "cache" / "precise_kpca"


@pytest.fixture
def toy_dir(tmp_path):
    """A data directory with a manifest, an ARFF, a CSV, and entries without / with a missing file."""
    (tmp_path / "toy.arff").write_text(ARFF)
    (tmp_path / "toy.csv").write_text("a,b,label\n1,2,x\n3,4,y\n5,6,x\n")
    entries = [
        {"name": "toy", "file": "toy.arff", "target": "class", "categorical": ["colour", "shape kind"],
         "paper_examples": 3, "paper_attributes_onehot": 6, "examples": 3},
        {"name": "toycsv", "file": "toy.csv", "target": "label", "categorical": []},
        {"name": "offline", "file": None, "note": "not available offline"},
        {"name": "lost", "file": "lost.arff", "target": "class"},
    ]
    (tmp_path / "manifest.json").write_text(json.dumps({"description": "toy", "datasets": entries}))
    return tmp_path


# --- readers -------------------------------------------------------------------------------------------

def test_arff_reader_types(toy_dir):
    table = read_table(toy_dir / "toy.arff")
    assert list(table.columns) == ["size", "colour", "shape kind", "weight", "class"]
    assert table["size"].dtype == np.float64
    assert list(table["colour"].cat.categories) == ["red", "green", "blue"]


def test_sparse_arff_and_missing_values(tmp_path):
    path = tmp_path / "sparse.arff"
    path.write_text("@RELATION s\n@ATTRIBUTE a NUMERIC\n@ATTRIBUTE b NUMERIC\n@ATTRIBUTE c {p,q}\n@DATA\n"
                    "{0 1.5, 2 q}\n{1 2}\n1,?,p\n")
    table = read_table(path)
    np.testing.assert_array_equal(table["a"].to_numpy(), [1.5, 0, 1])
    assert np.isnan(table["b"].iloc[2])


def test_malformed_arff_names_the_file(tmp_path):
    path = tmp_path / "bad.arff"
    path.write_text("@RELATION bad\n@ATTRIBUTE a NUMERIC\n@DATA\n1,2\n")
    with pytest.raises(ValueError, match=r"malformed ARFF file .*bad\.arff"):
        read_table(path)


def test_unsupported_arff_attribute_type(tmp_path):
    path = tmp_path / "dates.arff"
    path.write_text('@RELATION d\n@ATTRIBUTE a NUMERIC\n@ATTRIBUTE t DATE "yyyy-MM-dd"\n@DATA\n1,"2020-01-01"\n')
    with pytest.raises(ValueError, match=r"dates\.arff"):
        read_table(path)


def test_unsupported_suffix_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"unsupported file type '\.txt'"):
        read_table(tmp_path / "x.txt")
    with pytest.raises(FileNotFoundError, match=r"nothere\.csv"):
        read_table(tmp_path / "nothere.csv")


def test_npy_reader(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.int64).reshape(3, 2))
    np.testing.assert_array_equal(load_path(tmp_path / "x.npy"), [[0, 1], [2, 3], [4, 5]])
    np.save(tmp_path / "flat.npy", np.arange(3.0))
    with pytest.raises(ValueError, match=r"expected a 2-D .* shape \(3,\)"):
        read_table(tmp_path / "flat.npy")
    np.save(tmp_path / "obj.npy", np.array([[1, "a"]], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"cannot read .*obj\.npy"):
        read_table(tmp_path / "obj.npy")
    np.save(tmp_path / "text.npy", np.array([["a", "b"]]))
    with pytest.raises(ValueError, match=r"real numeric array, got dtype <U1"):
        read_table(tmp_path / "text.npy")


def test_csv_empty_and_header_only(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match=r"malformed CSV file .*empty\.csv"):
        read_table(tmp_path / "empty.csv")
    (tmp_path / "head.csv").write_text("a,b\n")
    with pytest.raises(ValueError, match=r"head\.csv' has a header but no data rows"):
        read_table(tmp_path / "head.csv")


# --- preprocessing -------------------------------------------------------------------------------------

def test_paper_preprocessing_of_toy_arff(toy_dir):
    frame = datasets.load_frame("toy", data_dir=toy_dir)
    assert list(frame.columns) == ["size", "colour=red", "colour=blue", "shape kind=round",
                                   "shape kind=square", "weight"]
    np.testing.assert_array_equal(frame.to_numpy(), [[1.5, 1, 0, 1, 0, 10], [2.5, 0, 1, 1, 0, 20],
                                                     [-3, 1, 0, 0, 1, 1000]])
    declared = datasets.load_frame("toy", data_dir=toy_dir, categories="declared")
    assert "colour=green" in declared.columns and declared.shape == (3, 7)


def test_csv_non_numeric_column_is_named(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("a,b,c\n1,2,3\n4,oops,6\n")
    with pytest.raises(ValueError, match=r"column 'b' is not numeric \(data row 1 \(0-based\) holds 'oops'\)"):
        load_path(path)
    np.testing.assert_array_equal(load_path(path, categorical=["b"]),
                                  [[1, 1, 0, 3], [4, 0, 1, 6]])  # columns a, b=2, b=oops, c
    np.testing.assert_array_equal(load_path(path, target="b"), [[1, 3], [4, 6]])


def test_missing_values_error_names_set_row_and_column(tmp_path):
    path = tmp_path / "holes.csv"
    path.write_text("a,b,t\n1,2,?\n3,,0\n5,6,1\n?,8,1\n")
    with pytest.raises(ValueError, match=r"data set 'holes\.csv': missing value at data row 1 \(0-based\), "
                                         r"column 'b' \(2 missing values in 2 of 4 rows\)"):
        load_path(path, target="t")
    # the target's own missing value does not count: it is dropped
    np.testing.assert_array_equal(load_path(path, target="t", missing="drop-rows"), [[1, 2], [5, 6]])


def test_drop_rows_then_present_categories(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("x,k\n1,u\n?,v\n3,u\n")
    np.testing.assert_array_equal(load_path(path, categorical=["k"], missing="drop-rows"), [[1, 1], [3, 1]])
    path.write_text("x,k\n?,u\n2,?\n")
    with pytest.raises(ValueError, match="every row has a missing value"):
        load_path(path, categorical=["k"], missing="drop-rows")


def test_infinite_value_rejected(tmp_path):
    np.save(tmp_path / "inf.npy", np.array([[1.0, 2.0], [3.0, np.inf]]))
    with pytest.raises(ValueError, match=r"infinite value at data row 1 \(0-based\), column 'x1'"):
        load_path(tmp_path / "inf.npy")


def test_bad_options():
    table = pd.DataFrame({"a": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"target column\(s\) \['z'\] not found; columns are \['a'\]"):
        preprocess(table, target="z")
    with pytest.raises(ValueError, match=r"categorical column\(s\) \['z'\] not found"):
        preprocess(table, categorical=["z"])
    with pytest.raises(ValueError, match="categories must be one of"):
        preprocess(table, categories="all")
    with pytest.raises(ValueError, match="missing must be one of"):
        preprocess(table, missing="impute")
    with pytest.raises(ValueError, match="no attributes left"):
        preprocess(table, target="a")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e300, 1e300), st.sampled_from("pqrs"), st.integers(0, 3)),
                min_size=1, max_size=30))
def test_numeric_kept_verbatim_and_one_hot_rows_sum_to_one(rows):
    table = pd.DataFrame(rows, columns=["x", "k", "y"])
    out = preprocess(table, target="y", categorical=["k"])
    np.testing.assert_array_equal(out["x"].to_numpy(), table["x"].to_numpy())
    block = out.drop(columns="x")
    assert list(block.columns) == [f"k={v}" for v in sorted(set(table["k"]))]
    assert (block.sum(axis=1) == 1).all()
    assert (block.to_numpy().argmax(axis=1) == [sorted(set(table["k"])).index(v) for v in table["k"]]).all()


# --- data directory and named sets --------------------------------------------------------------------

def test_data_dir_order(no_env, tmp_path, monkeypatch):
    assert datasets.data_dir() == no_env / "datasets"
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert datasets.data_dir() == tmp_path
    explicit = tmp_path / "explicit"
    explicit.mkdir()
    assert datasets.data_dir(explicit) == explicit
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(NotADirectoryError, match=r"nowhere' \(from the environment variable PRECISE_KPCA_DATA\)"):
        datasets.data_dir()
    with pytest.raises(NotADirectoryError, match=r"from the data_dir argument"):
        datasets.data_dir(tmp_path / "nowhere")


def test_wine_works_without_any_data_dir(no_env):
    assert datasets.available() == ["wine"]
    X = load("wine")
    assert X.shape == (178, 13) and X.dtype == np.float64
    assert X[0, 0] == 14.23 and X[0, 12] == 1065.0  # alcohol and proline of the first wine, unscaled
    assert datasets.manifest().datasets["wine"].paper_rho == 5.0


def test_env_var_selects_data_dir(no_env, toy_dir, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(toy_dir))
    assert datasets.available() == ["wine", "toy", "toycsv"]  # registry (Table I) order, then the manifest's own
    assert load("toycsv").tolist() == [[1, 2], [3, 4], [5, 6]]


def test_unknown_name_lists_available(toy_dir):
    with pytest.raises(ValueError, match=r"unknown data set 'nope'; available: wine, toy, toycsv"):
        load("nope", data_dir=toy_dir)


def test_listed_but_absent_files(toy_dir):
    with pytest.raises(FileNotFoundError, match=r"'offline' has no file .*not available offline.*load_openml"):
        load("offline", data_dir=toy_dir)
    with pytest.raises(FileNotFoundError, match=r"manifest lists file .*lost\.arff', which does not exist"):
        load("lost", data_dir=toy_dir)


def test_manifest_fields_and_bad_manifest(toy_dir, tmp_path):
    info = datasets.manifest(toy_dir).datasets["toy"]
    assert info.categorical == ("colour", "shape kind") and info.paper_attributes_onehot == 6
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"manifest .*manifest\.json' is not valid JSON"):
        datasets.manifest(bad)
    (bad / "manifest.json").write_text('{"datasets": [{"file": "x.arff"}]}')
    with pytest.raises(ValueError, match=r"entry 0 has no 'name'"):
        datasets.manifest(bad)


# --- OpenML (never touches the network: fetch_openml is replaced) --------------------------------------

class FakeOpenML:
    """Stands in for sklearn.datasets.fetch_openml; records its calls."""

    def __init__(self, error=None):
        self.calls, self.error = [], error

    def __call__(self, name=None, *, version="active", data_id=None, data_home=None, as_frame=False,
                 parser="auto"):
        from sklearn.utils import Bunch
        self.calls.append({"name": name, "version": version, "data_id": data_id, "data_home": data_home,
                           "as_frame": as_frame})
        if self.error is not None:
            raise self.error
        frame = pd.DataFrame({"v": [0.5, 1.5, 2.5], "kind": pd.Categorical(["a", "b", "a"]),
                              "label": pd.Categorical(["p", "n", "p"])})
        return Bunch(frame=frame, target_names=["label"], details={"name": "cloud"})


@pytest.fixture
def fake_openml(monkeypatch):
    import sklearn.datasets
    fake = FakeOpenML()
    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake)
    return fake


def test_load_openml_by_name_and_id(fake_openml, tmp_path, no_env):
    X = load_openml("cloud", cache_dir=tmp_path)
    np.testing.assert_array_equal(X, [[0.5, 1, 0], [1.5, 0, 1], [2.5, 1, 0]])
    load_openml(210)
    assert fake_openml.calls == [
        {"name": "cloud", "version": "active", "data_id": None, "data_home": str(tmp_path), "as_frame": True},
        {"name": None, "version": "active", "data_id": 210, "data_home": str(no_env / "openml"), "as_frame": True},
    ]


def test_load_openml_offline_error(monkeypatch, tmp_path):
    import sklearn.datasets
    monkeypatch.setattr(sklearn.datasets, "fetch_openml", FakeOpenML(urllib.error.URLError("no route")))
    with pytest.raises(ConnectionError, match=r"could not fetch OpenML data set 'cloud' \(network unavailable"):
        load_openml("cloud", cache_dir=tmp_path)


# --- resolve (the CLI's DATA argument) -----------------------------------------------------------------

def test_resolve(toy_dir, fake_openml, no_env):
    name, X = resolve(str(toy_dir / "toy.csv"), target="label")
    assert name == "toy" and X.shape == (3, 2)
    name, X = resolve(toy_dir / "toy.arff", target="class")
    assert name == "toy" and X.shape == (3, 6)
    assert resolve("toy", data_dir=toy_dir)[1].shape == (3, 6)
    assert resolve("wine")[0] == "wine"
    name, X = resolve("openml:61")
    assert name == "cloud" and fake_openml.calls[-1]["data_id"] == 61
    with pytest.raises(ValueError, match="target/categorical apply to data files only"):
        resolve("wine", target="class")
    with pytest.raises(FileNotFoundError, match=r"missing\.npy"):
        resolve(str(toy_dir / "missing.npy"))


def test_data_layer_imports_no_other_precise_kpca_module():
    """CONTRIBUTING: precise_kpca/datasets stands apart (relative imports within itself only)."""
    package = Path(datasets.__file__).parent
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, f"{module.name} imports from outside precise_kpca.datasets"
                assert node.level == 1 or not (node.module or "").startswith("precise_kpca"), module.name
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("precise_kpca") for a in node.names), module.name
