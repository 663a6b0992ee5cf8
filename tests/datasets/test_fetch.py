"""``precise-kpca data fetch`` against a local HTTP stand-in for OpenML serving recorded responses (no network),
the packaged registry, and files read by path with the registry's columns."""
from __future__ import annotations

import gzip
import json
from dataclasses import replace

import numpy as np
import pytest

from precise_kpca import datasets, geometry
from precise_kpca.cli import main
from precise_kpca.datasets import fetch as fetch_module
from precise_kpca.datasets.fetch import eccentricity, fetch, fetchable
from precise_kpca.datasets.manifest import Manifest, registry

from ..openml_server import redirect, serve


@pytest.fixture
def openml(monkeypatch):
    """scikit-learn's fetch_openml pointed at the local stand-in; yields the base URL."""
    with serve() as base:
        redirect(monkeypatch, base)
        yield base


def test_fetch_writes_the_set_that_loads_by_name_as_the_shared_file(openml, tmp_path, data_dir):
    result = fetch("cpu", data_dir=tmp_path, cache_dir=tmp_path / "cache")
    assert result.matches and (result.n, result.d, round(result.rho, 2)) == (209, 36, 8.92)  # Table I, printed
    assert result.path == tmp_path / "cpu.arff"
    entry = json.loads((tmp_path / "manifest.json").read_text())["datasets"][0]
    assert entry["name"] == "cpu" and entry["target"] == "class" and entry["categorical"] == ["vendor"]
    ours = datasets.load_frame("cpu", data_dir=tmp_path)
    shared = datasets.load_frame("cpu", data_dir=data_dir)  # the paper's file, read by the registry's columns
    assert sorted(ours.columns) == sorted(shared.columns)
    np.testing.assert_array_equal(ours[shared.columns].to_numpy(), shared.to_numpy())


def test_fetch_refuses_a_set_that_does_not_match_table_one(openml, tmp_path, monkeypatch, capsys):
    wrong = replace(registry().datasets["cpu"], paper_examples=210, paper_rho=8.93)  # a Table I it cannot match
    monkeypatch.setattr(fetch_module, "registry", lambda: Manifest(None, {"cpu": wrong}))
    result = fetch("cpu", data_dir=tmp_path, cache_dir=tmp_path / "cache")
    assert result.mismatches == ("N 209 (Table I: 210)", "rho 8.9248 (Table I: 8.93)") and result.path is None
    assert not (tmp_path / "cpu.arff").exists() and not (tmp_path / "manifest.json").exists()
    assert main(["data", "fetch", "cpu", "--data-dir", str(tmp_path), "--cache-dir", str(tmp_path / "cache")]) == 1
    assert "does NOT match Table I (N 209 (Table I: 210); rho 8.9248 (Table I: 8.93)); not written" in \
        capsys.readouterr().out


def test_fetch_cli_prints_one_line_and_a_second_fetch_is_offline(openml, tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"
    assert main(["data", "fetch", "cpu", "--data-dir", str(tmp_path), "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "cpu: N=209, d=36, rho=8.9248: matches Table I; wrote" in out
    redirect(monkeypatch, "http://127.0.0.1:9")  # nothing listens there: only the download cache can answer
    assert main(["data", "fetch", "cpu", "--data-dir", str(tmp_path), "--cache-dir", str(cache)]) == 0
    assert "matches Table I" in capsys.readouterr().out


def test_offline_fetch_says_so_in_one_line(monkeypatch, tmp_path, capsys):
    redirect(monkeypatch, "http://127.0.0.1:9")
    monkeypatch.setattr("sklearn.datasets._openml._retry_on_network_error",
                        lambda n_retries, delay, url: lambda f: f)  # no retry pauses
    status = main(["data", "fetch", "cpu", "--data-dir", str(tmp_path), "--cache-dir", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("precise-kpca data: error: could not fetch OpenML data set '561' (network unavailable")
    assert "connect to the internet and retry" in err
    assert main(["data", "fetch", "nope", "--data-dir", str(tmp_path)]) == 2
    assert "unknown data set(s) nope; choose from splice" in capsys.readouterr().err


def test_registry_ships_table_one_for_all_thirty_sets(data_dir):
    entries = registry().datasets
    shared = json.loads((data_dir / "manifest.json").read_text())["datasets"]
    assert list(entries) == [e["name"] for e in shared] and len(fetchable()) == 30
    for e in shared:
        info = entries[e["name"]]
        assert (info.target, list(info.categorical), info.paper_examples, info.paper_attributes_onehot,
                info.paper_rho) == (e["target"], e["categorical"], e["paper_examples"],
                                    e["paper_attributes_onehot"], e["paper_rho"])
        assert info.licence and info.source and isinstance(info.openml_id, int)
    assert entries["cloud"].drop == ("period",)


def test_registry_values_work_without_a_data_directory(tmp_path):
    empty = datasets.manifest(tmp_path).datasets
    assert empty["phoneme"].paper_rho == 2.57 and empty["phoneme"].openml_id == 1489
    with pytest.raises(FileNotFoundError, match=r"precise-kpca data fetch phoneme` \(OpenML data id 1489\)"):
        datasets.load("phoneme", data_dir=tmp_path)


def test_eccentricity_agrees_with_the_numerics(data_dir):
    for name in ("cpu", "balloon", "tic-tac-toe"):  # numeric, one-hot, and many duplicate rows
        X = datasets.load(name, data_dir=data_dir)
        assert eccentricity(X) == pytest.approx(geometry(X).eccentricity, rel=2**-45)


def test_file_by_path_uses_the_registry_columns(data_dir, tmp_path, capsys):
    X = datasets.load_path(data_dir / "cpu.arff")
    assert X.shape == (209, 36) and round(geometry(X).eccentricity, 2) == 8.92  # not d = 37, ρ 8.9245
    assert datasets.load_path(data_dir / "cpu.arff", use_registry=False).shape == (209, 37)
    assert main(["geometry", str(data_dir / "cpu.arff")]) == 0
    captured = capsys.readouterr()
    assert "read as the registry's 'cpu': target class dropped" in captured.err and "8.92482" in captured.out
    other = tmp_path / "cpu.csv"  # a different data set that happens to be called cpu
    other.write_text("a,b\n1,2\n3,4\n5,7\n")
    with pytest.raises(ValueError, match=r"name of the registry's data set 'cpu' but lacks its column\(s\) 'class'"):
        datasets.load_path(other)
    assert datasets.load_path(other, target="b", categorical=[]).tolist() == [[1], [3], [5]]


def test_categorical_option_encodes_a_text_column(tmp_path, capsys):
    path = tmp_path / "shops.csv"
    path.write_text("size,kind\n1.5,red\n2.0,blue\n4.0,red\n")
    assert main(["geometry", str(path)]) == 2
    assert "--categorical 'kind'" in capsys.readouterr().err
    assert main(["geometry", str(path), "--categorical", "kind"]) == 0
    assert "d                                      3" in capsys.readouterr().out  # size, kind=blue, kind=red


def test_recorded_response_is_the_one_scikit_learn_ships():
    """The fixture's provenance: byte-identical to scikit-learn's own recording, where that is installed."""
    import sklearn

    from ..openml_server import RECORDED

    theirs = __import__("pathlib").Path(sklearn.__file__).parent / "datasets/tests/data/openml/id_561"
    if not theirs.is_dir():
        pytest.skip("this scikit-learn build ships no test data")
    for ours in (RECORDED / "561").iterdir():
        assert gzip.decompress(ours.read_bytes()) == gzip.decompress((theirs / ours.name).read_bytes())
