"""Data sets by name (packaged registry and data directory manifest, bundled wine), by path, and the CLI's data
specification."""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from .manifest import DatasetInfo, Manifest, merged, read_manifest, registry
from .openml import load_openml_named
from .paths import data_dir as resolve_data_dir
from .preprocess import preprocess, to_matrix
from .readers import SUFFIXES, read_table

BUNDLED = {
    "wine": DatasetInfo(
        name="wine",
        paper_examples=178,
        paper_attributes=13,
        paper_attributes_onehot=13,
        paper_rho=5.0,
        source="scikit-learn sklearn.datasets.load_wine (UCI Wine), shipped with scikit-learn",
    ),
}
"""Data sets that load with no data directory (Table I values from the paper). ``load_wine`` equals the
shared ``wine.arff`` without its class column bit for bit, in the same row order."""

OPENML_PREFIX = "openml:"


def manifest(data_dir: str | os.PathLike[str] | None = None) -> Manifest:
    """The packaged registry with the data directory's manifest laid over it, and the bundled sets.

    Parameters
    ----------
    data_dir : path-like or None
        See :func:`precise_kpca.datasets.paths.data_dir`.

    Returns
    -------
    Manifest
        The registry's entries in Table I order (fields the data directory's ``manifest.json`` sets replaced),
        then entries only that manifest has, then bundled entries not already listed.
    """
    return _manifest(resolve_data_dir(data_dir))


def _manifest(directory: Path) -> Manifest:
    found = merged(registry(), read_manifest(directory))
    datasets = dict(found.datasets)
    for name, info in BUNDLED.items():
        datasets.setdefault(name, info)
    return Manifest(found.path, datasets, found.description, found.license_note)


def registry_entry(path: str | os.PathLike[str]) -> DatasetInfo | None:
    """The registry entry whose name is the file's name without suffix (``.../cpu.arff`` → ``cpu``), or None."""
    return registry().datasets.get(Path(path).stem)


def available(data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Names :func:`load` can load now: manifest entries whose file exists, and the bundled sets.

    Parameters
    ----------
    data_dir : path-like or None
        See :func:`precise_kpca.datasets.paths.data_dir`.

    Returns
    -------
    list of str
        In manifest (Table I) order, bundled extras last.
    """
    return _available(resolve_data_dir(data_dir))


def _available(directory: Path) -> list[str]:
    return [
        name for name, info in _manifest(directory).datasets.items()
        if name in BUNDLED or (info.file is not None and (directory / info.file).is_file())
    ]


def load_frame(
    name: str, *, data_dir: str | os.PathLike[str] | None = None, categories: str = "present", missing: str = "error"
) -> pd.DataFrame:
    """Load a named data set, preprocessed as in the paper, with column names.

    The manifest entry's file in the data directory is read when present (its target dropped, its categorical
    attributes one-hot encoded); a bundled set (``"wine"``) falls back to scikit-learn otherwise.

    Parameters
    ----------
    name : str
        Data-set name, see :func:`available`.
    data_dir : path-like or None
        See :func:`precise_kpca.datasets.paths.data_dir`.
    categories : {"present", "declared"}
        One-hot policy (``"present"`` reproduces Table I).
    missing : {"error", "drop-rows"}
        Missing-value policy (none of the 30 shared files has a missing value).

    Returns
    -------
    pandas.DataFrame
        Shape (N, d), float64.

    Raises
    ------
    ValueError
        Unknown name (the message lists the available ones), or a preprocessing error.
    FileNotFoundError
        The manifest lists the set but its file is absent (the message says where it was expected, or that it
        is not available offline and how to fetch it from OpenML).
    """
    directory = resolve_data_dir(data_dir)
    entries = _manifest(directory).datasets
    info = entries.get(name)
    if info is None:
        raise ValueError(
            f"unknown data set {name!r}; available: {', '.join(_available(directory))} (data directory "
            f"{str(directory)!r}); for other data use load_path(path) or load_openml(name_or_id)"
        )
    path = directory / info.file if info.file is not None else None
    if path is not None and path.is_file():
        table = read_table(path)
    elif name in BUNDLED:
        return _load_bundled(name)
    elif path is None:
        raise FileNotFoundError(
            f"data set {name!r} has no file in {str(directory)!r} ({info.note or 'no file listed'}); "
            f"with network access use load_openml({name!r})"
        )
    elif info.openml_id is not None:
        raise FileNotFoundError(
            f"data set {name!r} is not in the data directory {str(directory)!r} (no {info.file}); fetch it with "
            f"`precise-kpca data fetch {name}` (OpenML data id {info.openml_id}), or copy the file there"
        )
    else:
        raise FileNotFoundError(f"data set {name!r}: manifest lists file {str(path)!r}, which does not exist")
    return _preprocess_entry(table, info, name, categories=categories, missing=missing)


def _preprocess_entry(table: pd.DataFrame, info: DatasetInfo, name: str, *, categories: str,
                      missing: str) -> pd.DataFrame:
    """The paper's preprocessing with an entry's target, drops (those present) and categorical attributes."""
    drops = [column for column in info.drop if column in table.columns]
    return preprocess(table.drop(columns=drops), target=info.target, categorical=info.categorical,
                      categories=categories, missing=missing, name=name)


def load(
    name: str, *, data_dir: str | os.PathLike[str] | None = None, categories: str = "present", missing: str = "error"
) -> np.ndarray:
    """Load a named data set as the paper's N×d float64 matrix.

    Parameters and errors as :func:`load_frame`.

    Returns
    -------
    numpy.ndarray
        Shape (N, d), float64, C-contiguous.

    Examples
    --------
    >>> load("wine").shape  # bundled, works offline
    (178, 13)
    """
    frame = load_frame(name, data_dir=data_dir, categories=categories, missing=missing)
    return to_matrix(frame)


def load_path(
    path: str | os.PathLike[str],
    *,
    target: str | Sequence[str] | None = None,
    categorical: Sequence[str] | None = None,
    categories: str = "present",
    missing: str = "error",
    use_registry: bool = True,
) -> np.ndarray:
    """Load a user file (``.arff``, ``.csv`` with a header row, or ``.npy``) with the paper's preprocessing.

    Parameters
    ----------
    path : path-like
        The file.
    target : str or sequence of str or None
        Column(s) to drop. None: the registry's target when the file's name matches a registry entry
        (:func:`registry_entry`, e.g. ``cpu.arff``) and ``use_registry``, else nothing (a class attribute is
        *not* guessed).
    categorical : sequence of str or None
        Columns to one-hot encode. None: the matching registry entry's (with ``use_registry``), else the ARFF
        nominal attributes (none for CSV and ``.npy``).
    categories, missing : str
        Policies of :func:`~precise_kpca.datasets.preprocess.preprocess`.
    use_registry : bool
        Take the target, drops and categorical attributes of a registry entry whose name matches the file's
        (ARFF and CSV). A matching entry whose columns the file lacks raises (the file is then another data set
        of that name).

    Returns
    -------
    numpy.ndarray
        Shape (N, d), float64.

    Raises
    ------
    FileNotFoundError
        Missing file.
    ValueError
        Unsupported suffix, malformed file, or a preprocessing error (e.g. a text column not declared
        categorical: the message names it).
    """
    table = read_table(path)
    name = Path(path).name
    info = registry_entry(path) if use_registry and Path(path).suffix.lower() != ".npy" else None
    if info is not None:  # a .npy has no column names to match the entry's
        info = _entry_for_file(info, table, name, target=target, categorical=categorical)
        return to_matrix(_preprocess_entry(table, info, name, categories=categories, missing=missing))
    frame = preprocess(table, target=target, categorical=categorical, categories=categories, missing=missing,
                       name=name)
    return to_matrix(frame)


def _entry_for_file(info: DatasetInfo, table: pd.DataFrame, name: str, *, target, categorical) -> DatasetInfo:
    """The registry entry with the caller's target/categorical in place of its own where given; raises when the
    file lacks the columns the entry names."""
    if target is not None:
        info = replace(info, target=target)
    if categorical is not None:
        info = replace(info, categorical=tuple(categorical))
    named = [info.target] if isinstance(info.target, str) else list(info.target or [])
    missing = [column for column in [*named, *info.categorical] if column not in table.columns]
    if missing:
        raise ValueError(
            f"{name!r} has the name of the registry's data set {info.name!r} but lacks its column(s) "
            f"{', '.join(map(repr, missing))}; give --target/--categorical (target=, categorical=) for this file"
        )
    return info


def resolve(
    data_spec: str | os.PathLike[str],
    *,
    data_dir: str | os.PathLike[str] | None = None,
    target: str | Sequence[str] | None = None,
    categorical: Sequence[str] | None = None,
    missing: str = "error",
) -> tuple[str, np.ndarray]:
    """Interpret a command-line DATA argument.

    Parameters
    ----------
    data_spec : str or path-like
        A path ending in ``.arff``, ``.csv`` or ``.npy`` (or any existing file); ``"openml:<name or id>"``;
        otherwise a data-set name for :func:`load`.
    data_dir : path-like or None
        Data directory for names.
    target, categorical : optional
        Only for files (see :func:`load_path`).
    missing : {"error", "drop-rows"}
        Missing-value policy.

    Returns
    -------
    name : str
        The data-set name, the file name without suffix, or the OpenML name.
    X : numpy.ndarray
        Shape (N, d), float64.

    Raises
    ------
    ValueError, FileNotFoundError, ConnectionError
        As the loader used; ``target``/``categorical`` given with a name.
    """
    spec = os.fspath(data_spec)
    path = Path(spec)
    if is_file_spec(spec):
        return path.stem, load_path(path, target=target, categorical=categorical, missing=missing)
    if target is not None or categorical is not None:
        raise ValueError(f"target/categorical apply to data files only, not to the named data set {spec!r}")
    if spec.startswith(OPENML_PREFIX):
        return load_openml_named(spec[len(OPENML_PREFIX):], missing=missing)
    return spec, load(spec, data_dir=data_dir, missing=missing)


def is_file_spec(data_spec: str | os.PathLike[str]) -> bool:
    """Whether :func:`resolve` reads ``data_spec`` as a file: a known suffix, or an existing file."""
    path = Path(os.fspath(data_spec))
    return path.suffix.lower() in SUFFIXES or path.is_file()


def _load_bundled(name: str) -> pd.DataFrame:
    import sklearn.datasets  # deferred: importing scikit-learn takes about a second

    loaders = {"wine": sklearn.datasets.load_wine}
    return loaders[name](as_frame=True).data.astype(np.float64)
