"""Fetch the registry's data sets from OpenML into a data directory, checked against Table I of the paper.

:func:`fetch` downloads one set with scikit-learn's :func:`~sklearn.datasets.fetch_openml` (its cache makes a
second call offline), preprocesses it as the paper does, and compares N, the one-hot attribute count and ρ with
the registry's Table I values. Only a set that matches is written: ``<data dir>/<name>.arff`` (the table as
OpenML distributes it, target included, the registry's drops removed) and an entry in the data directory's
``manifest.json`` naming the file's target and categorical columns, so that ``load(name)`` reads it afterwards.

ρ = diameter / d_X is computed here in float64 (:func:`eccentricity`, the paper's full N × N median), not with
the numerics, which this data layer does not import: the check needs two decimals, and float64 distances carry
fifteen.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import arff
import numpy as np
import pandas as pd
from scipy.spatial.distance import pdist

from .manifest import MANIFEST_FILE, DatasetInfo, registry
from .openml import fetch_openml_table
from .paths import data_dir as resolve_data_dir
from .preprocess import preprocess, to_matrix


@dataclass(frozen=True)
class FetchResult:
    """What :func:`fetch` found for one data set.

    Attributes
    ----------
    name : str
        Registry name.
    n, d : int
        Rows and attributes after the paper's preprocessing.
    rho : float
        Eccentricity ρ = diameter / median distance (float64).
    mismatches : tuple of str
        Table I values not reproduced, e.g. ``"N 208 (Table I: 209)"``; empty when all match.
    path : pathlib.Path or None
        The file written, None when the set did not match (nothing is written then).
    """

    name: str
    n: int
    d: int
    rho: float
    mismatches: tuple[str, ...]
    path: Path | None

    @property
    def matches(self) -> bool:
        return not self.mismatches


def fetchable() -> list[str]:
    """Registry names that have an OpenML data id, in Table I order."""
    return [name for name, info in registry().datasets.items() if info.openml_id is not None]


def fetch(name: str, *, data_dir: str | os.PathLike[str] | None = None,
          cache_dir: str | os.PathLike[str] | None = None) -> FetchResult:
    """Download one registry data set from OpenML, check it against Table I and write it into the data directory.

    Parameters
    ----------
    name : str
        A name of :func:`fetchable`.
    data_dir : path-like or None
        Destination (see :func:`precise_kpca.datasets.paths.data_dir`; the default user folder is created).
    cache_dir : path-like or None
        scikit-learn's OpenML download cache (default ``<user cache>/openml``).

    Returns
    -------
    FetchResult

    Raises
    ------
    ValueError
        ``name`` is not in the registry or has no OpenML id.
    ConnectionError
        OpenML cannot be reached and the set is not in the download cache (one-line message saying what to do).
    """
    info = _entry(name)
    directory = resolve_data_dir(data_dir)
    _, table, targets = fetch_openml_table(info.openml_id, cache_dir=cache_dir)
    table = table.drop(columns=[column for column in info.drop if column in table.columns])
    target = info.target if info.target in table.columns else targets
    categorical = [column for column in table.columns
                   if isinstance(table[column].dtype, pd.CategoricalDtype) and column not in _as_list(target)]
    X = to_matrix(preprocess(table, target=target, categorical=categorical, name=name))
    rho = eccentricity(X)
    mismatches = _mismatches(info, X.shape[0], X.shape[1], rho)
    path = None
    if not mismatches:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / (info.file or f"{name}.arff")
        _write_arff(path, table, name)
        _record(directory, info, path.name, target, categorical)
    return FetchResult(name, X.shape[0], X.shape[1], rho, mismatches, path)


def _entry(name: str) -> DatasetInfo:
    info = registry().datasets.get(name)
    if info is None or info.openml_id is None:
        raise ValueError(f"unknown data set {name!r} for fetching; choose from {', '.join(fetchable())} or all")
    return info


def _as_list(target) -> list[str]:
    return [target] if isinstance(target, str) else list(target or [])


def eccentricity(X: np.ndarray) -> float:
    """ρ = diameter / d_X in float64, d_X the median of all N² entries of the distance matrix (paper Eq. 4).

    Parameters
    ----------
    X : ndarray, shape (N, d)

    Returns
    -------
    float
        Relative error a few units of 2⁻⁵³ (one rounding per distance and one division); inf when d_X = 0.
    """
    n = X.shape[0]
    pairs = np.sort(pdist(X))
    count = n * n

    def element(k: int) -> float:  # k-th smallest of the N² entries: N zeros, then each pair value twice
        return 0.0 if k < n else float(pairs[(k - n) // 2])

    median = element(count // 2) if count % 2 else (element(count // 2 - 1) + element(count // 2)) / 2
    return float(pairs[-1]) / median if median > 0 else float("inf")


def _mismatches(info: DatasetInfo, n: int, d: int, rho: float) -> tuple[str, ...]:
    """Table I values the fetched set does not reproduce (ρ compared at the printed two decimals)."""
    found = []
    if info.paper_examples is not None and n != info.paper_examples:
        found.append(f"N {n} (Table I: {info.paper_examples})")
    if info.paper_attributes_onehot is not None and d != info.paper_attributes_onehot:
        found.append(f"d {d} (Table I: {info.paper_attributes_onehot})")
    if info.paper_rho is not None and round(rho, 2) != info.paper_rho:
        found.append(f"rho {rho:.4f} (Table I: {info.paper_rho})")
    return tuple(found)


def _write_arff(path: Path, table: pd.DataFrame, name: str) -> None:
    """The raw table as ARFF: nominal attributes with their declared values, numbers in shortest round-trip form
    (so reading the file gives the same float64 values)."""
    attributes, columns = [], []
    for column in table.columns:
        values = table[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            attributes.append((str(column), [str(level) for level in values.cat.categories]))
            columns.append([None if pd.isna(v) else str(v) for v in values.astype(object)])
        else:
            attributes.append((str(column), "NUMERIC"))
            columns.append([None if np.isnan(v) else float(v) for v in values.to_numpy(dtype=np.float64)])
    rows = [list(row) for row in zip(*columns)]
    text = arff.dumps({"relation": name, "attributes": attributes, "data": rows, "description": ""})
    path.write_text(text, encoding="utf-8")


def _record(directory: Path, info: DatasetInfo, file: str, target, categorical: list[str]) -> None:
    """Add or replace the set's entry in the data directory's ``manifest.json`` (other entries are kept)."""
    path = directory / MANIFEST_FILE
    document = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"datasets": []}
    entry = {"name": info.name, "file": file, "target": target, "categorical": categorical,
             "source": f"OpenML data id {info.openml_id}, fetched by precise-kpca data fetch"}
    document["datasets"] = [e for e in document.get("datasets", []) if e.get("name") != info.name] + [entry]
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
