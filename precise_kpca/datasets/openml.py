"""Data sets by OpenML name or id, through :func:`sklearn.datasets.fetch_openml`, cached on disk."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .paths import user_cache_root
from .preprocess import preprocess, to_matrix


def openml_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder scikit-learn caches OpenML downloads in: ``cache_dir`` or ``<user cache>/openml``."""
    return Path(cache_dir) if cache_dir is not None else user_cache_root() / "openml"


def fetch_openml_table(
    name_or_id: str | int, *, cache_dir: str | os.PathLike[str] | None = None, version: int | str = "active"
) -> tuple[str, pd.DataFrame, list[str]]:
    """Download (or read from the cache) one OpenML data set as a raw table.

    Parameters
    ----------
    name_or_id : str or int
        OpenML data-set name (e.g. ``"balloon"``) or numeric id (int or a string of digits).
    cache_dir : path-like or None
        Download cache; see :func:`openml_cache_dir`. A second call with the same arguments reads the cache
        and needs no network.
    version : int or "active"
        Data-set version when loading by name (scikit-learn's default: the oldest active version).

    Returns
    -------
    name : str
        The data set's OpenML name.
    table : pandas.DataFrame
        Raw table, shape (N, m), nominal attributes as categorical columns, target column(s) included.
    targets : list of str
        OpenML's default target column(s).

    Raises
    ------
    ConnectionError
        If the data set is neither cached nor downloadable.
    ValueError
        If OpenML knows no such data set (scikit-learn's message).
    """
    import sklearn.datasets  # deferred: importing scikit-learn takes about a second

    spec = str(name_or_id)
    by_id = {"data_id": int(spec)} if spec.isdigit() else {"name": spec, "version": version}
    cache = openml_cache_dir(cache_dir)
    try:
        bunch = sklearn.datasets.fetch_openml(**by_id, data_home=str(cache), as_frame=True, parser="auto")
    except OSError as exc:
        raise ConnectionError(
            f"could not fetch OpenML data set {spec!r} (network unavailable and not cached in {str(cache)!r}: "
            f"{_reason(exc)}); connect to the internet and retry, or put the file in the data directory "
            "and load it by name or path"
        ) from exc
    return bunch.details.get("name", spec), bunch.frame, list(bunch.target_names or [])


def _reason(exc: OSError) -> str:
    """The innermost reason of a network error, on one line (urllib wraps the socket error)."""
    reason = getattr(exc, "reason", exc)
    return " ".join(str(reason).split())


def load_openml(
    name_or_id: str | int,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    version: int | str = "active",
    categories: str = "present",
    missing: str = "error",
) -> np.ndarray:
    """Load an OpenML data set with the paper's preprocessing.

    The default target column(s) are dropped, nominal attributes one-hot encoded, numeric attributes kept
    unscaled (see :func:`precise_kpca.datasets.preprocess.preprocess`).

    Parameters
    ----------
    name_or_id : str or int
        OpenML name or id.
    cache_dir : path-like or None
        Download cache (default ``<user cache>/openml``).
    version : int or "active"
        Version when loading by name.
    categories : {"present", "declared"}
        One-hot policy.
    missing : {"error", "drop-rows"}
        Missing-value policy.

    Returns
    -------
    numpy.ndarray
        Shape (N, d), float64.

    Raises
    ------
    ConnectionError, ValueError
        See :func:`fetch_openml_table` and :func:`~precise_kpca.datasets.preprocess.preprocess`.
    """
    return load_openml_named(name_or_id, cache_dir=cache_dir, version=version, categories=categories,
                             missing=missing)[1]


def load_openml_named(
    name_or_id: str | int,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    version: int | str = "active",
    categories: str = "present",
    missing: str = "error",
) -> tuple[str, np.ndarray]:
    """As :func:`load_openml`, also returning the OpenML name (useful when loading by id)."""
    name, table, targets = fetch_openml_table(name_or_id, cache_dir=cache_dir, version=version)
    frame = preprocess(table, target=targets, categories=categories, missing=missing, name=name)
    return name, to_matrix(frame)
