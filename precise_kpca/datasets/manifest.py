"""The data directory's ``manifest.json``: per data set its file, target, categorical attributes and the
paper's Table I values."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class DatasetInfo:
    """One row of Table I and how to read it.

    Attributes
    ----------
    name : str
        Data-set name (OpenML spelling).
    file : str or None
        File name inside the data directory, or None when the set is not available offline.
    target : str or None
        Target attribute dropped by the preprocessing.
    categorical : tuple of str
        Attributes one-hot encoded.
    paper_examples, paper_attributes, paper_attributes_onehot : int or None
        Table I: N, attribute count, attribute count after one-hot encoding.
    paper_rho : float or None
        Table I: eccentricity ρ as printed (two decimals, trailing zeros dropped).
    source, note : str or None
        Provenance and remarks.
    """

    name: str
    file: str | None = None
    target: str | None = None
    categorical: tuple[str, ...] = ()
    paper_examples: int | None = None
    paper_attributes: int | None = None
    paper_attributes_onehot: int | None = None
    paper_rho: float | None = None
    source: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Manifest:
    """The parsed ``manifest.json`` of a data directory (empty when the directory has none).

    Attributes
    ----------
    path : pathlib.Path or None
        The manifest file, or None when absent.
    datasets : dict of str to DatasetInfo
        Entries in file order.
    description, license_note : str
        Free text from the manifest ("" when absent).
    """

    path: Path | None
    datasets: dict[str, DatasetInfo] = field(default_factory=dict)
    description: str = ""
    license_note: str = ""


def read_manifest(directory: Path) -> Manifest:
    """Parse ``directory/manifest.json``.

    Parameters
    ----------
    directory : pathlib.Path
        Data directory (need not exist).

    Returns
    -------
    Manifest
        Empty (``path=None``) when the directory has no manifest.

    Raises
    ------
    ValueError
        If the manifest is not valid JSON, lacks a ``datasets`` list, or an entry lacks ``name`` (the message
        names the file and the entry). Fields other than those of :class:`DatasetInfo` (e.g. the manifest's
        own ``examples`` and ``attributes_onehot``) are ignored.
    """
    path = directory / MANIFEST_FILE
    if not path.is_file():
        return Manifest(path=None)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"manifest {str(path)!r} is not valid JSON: {exc}") from exc
    entries = document.get("datasets") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"manifest {str(path)!r} has no 'datasets' list")
    datasets = {}
    for index, entry in enumerate(entries):
        info = _entry(entry, path, index)
        datasets[info.name] = info
    return Manifest(path, datasets, document.get("description", ""), document.get("license_note", ""))


def _entry(entry: object, path: Path, index: int) -> DatasetInfo:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ValueError(f"manifest {str(path)!r}: entry {index} has no 'name'")
    known = set(DatasetInfo.__dataclass_fields__)
    fields = {k: v for k, v in entry.items() if k in known}
    fields["categorical"] = tuple(fields.get("categorical") or ())
    return DatasetInfo(**fields)
