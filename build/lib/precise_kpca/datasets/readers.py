"""Readers for ARFF, CSV and ``.npy`` files into a raw table (no preprocessing yet).

A raw table is a :class:`pandas.DataFrame` with one row per example and the file's attribute names as
columns: numeric attributes as ``float64`` (missing values as NaN), ARFF nominal attributes as
:class:`pandas.Categorical` whose categories are the values *declared* in the header (missing as NaN), other
columns as the file gave them (``object`` for text).
"""
from __future__ import annotations

import os
from pathlib import Path

import arff
import numpy as np
import pandas as pd

SUFFIXES = (".arff", ".csv", ".npy")
"""File types understood by :func:`read_table`."""

_ARFF_NUMERIC = {"NUMERIC", "REAL", "INTEGER"}


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read an ARFF, CSV or ``.npy`` file by its suffix.

    Parameters
    ----------
    path : path-like
        File ending in ``.arff``, ``.csv`` or ``.npy`` (case-insensitive).

    Returns
    -------
    pandas.DataFrame
        Raw table, shape (N, number of attributes in the file).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the suffix is not supported or the file is malformed (the message names the file).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        kind = suffix or "(no suffix)"
        raise ValueError(f"{str(path)!r}: unsupported file type {kind!r}; expected one of {SUFFIXES}")
    if not path.is_file():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    return {".arff": read_arff, ".csv": read_csv, ".npy": read_npy}[suffix](path)


def read_arff(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a (dense or sparse) ARFF file with liac-arff.

    Numeric attributes (NUMERIC, REAL, INTEGER) become ``float64`` columns; nominal attributes become
    categorical columns whose categories are the declared values in declaration order; STRING attributes stay
    text. ``?`` is a missing value (NaN). The file is decoded as UTF-8, falling back to Latin-1.

    Parameters
    ----------
    path : path-like
        The ``.arff`` file.

    Returns
    -------
    pandas.DataFrame
        Raw table, shape (N, number of attributes).

    Raises
    ------
    ValueError
        If liac-arff rejects the file (the message names the file and liac-arff's reason, which includes the
        line number) or it declares an attribute type other than numeric, nominal or string.
    """
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    try:
        document = arff.loads(text)
    except arff.ArffException as exc:
        raise ValueError(f"malformed ARFF file {str(path)!r}: {exc}") from exc
    names = [name for name, _ in document["attributes"]]
    rows = document["data"]
    columns = {}
    for j, (name, kind) in enumerate(document["attributes"]):
        values = [row[j] for row in rows]
        if isinstance(kind, list):
            columns[name] = pd.Categorical(values, categories=kind)
        elif kind.upper() in _ARFF_NUMERIC:
            columns[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        elif kind.upper() == "STRING":
            columns[name] = pd.Series(values, dtype=object)
        else:
            raise ValueError(f"ARFF file {str(path)!r}: attribute {name!r} has unsupported type {kind!r}")
    return pd.DataFrame(columns, columns=names)


def read_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a comma-separated file whose first row names the columns.

    Empty fields, ``NA``/``NaN`` and ``?`` are missing values. Columns pandas cannot parse as numbers stay
    text (``object``); preprocessing reports them unless they are declared categorical.

    Parameters
    ----------
    path : path-like
        The ``.csv`` file.

    Returns
    -------
    pandas.DataFrame
        Raw table, shape (N, number of columns).

    Raises
    ------
    ValueError
        If pandas cannot parse the file or it has no data rows.
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path, na_values=["?"], skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed CSV file {str(path)!r}: {exc}") from exc
    if len(frame) == 0:
        raise ValueError(f"CSV file {str(path)!r} has a header but no data rows")
    return frame


def read_npy(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a 2-D numeric ``.npy`` array (no pickles); columns are named ``x0, x1, ...``.

    Parameters
    ----------
    path : path-like
        The ``.npy`` file holding an (N, d) real array.

    Returns
    -------
    pandas.DataFrame
        Shape (N, d), ``float64``.

    Raises
    ------
    ValueError
        If the file is not a readable ``.npy`` array, is not 2-D, or is not real-valued.
    """
    path = Path(path)
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise ValueError(f"cannot read {str(path)!r} as a .npy array: {exc}") from exc
    if array.ndim != 2:
        raise ValueError(f"{str(path)!r}: expected a 2-D (N, d) array, got shape {array.shape}")
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
            or array.dtype == np.bool_):
        raise ValueError(f"{str(path)!r}: expected a real numeric array, got dtype {array.dtype}")
    return pd.DataFrame(array.astype(np.float64), columns=[f"x{j}" for j in range(array.shape[1])])
