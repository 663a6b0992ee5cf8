"""The data-set registry: per data set its file, target, dropped and categorical attributes, the paper's Table I
values, its OpenML id, provenance and licence.

The registry ships inside the package (``registry.json`` beside this module), so named sets can be fetched and
checked anywhere; a data directory may hold a ``manifest.json`` of the same form whose entries override the
registry's field by field (``precise-kpca data fetch`` writes one naming the columns of the files it fetched).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path

MANIFEST_FILE = "manifest.json"
REGISTRY_FILE = Path(__file__).with_name("registry.json")


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
    drop : tuple of str
        Other attributes dropped (e.g. a row identifier), where present.
    paper_examples, paper_attributes, paper_attributes_onehot : int or None
        Table I: N, attribute count, attribute count after one-hot encoding.
    paper_rho : float or None
        Table I: eccentricity ρ as printed (two decimals, trailing zeros dropped).
    openml_id : int or None
        OpenML data id that ``precise-kpca data fetch`` downloads.
    source, licence, note : str or None
        Provenance, licence and remarks.
    """

    name: str
    file: str | None = None
    target: str | None = None
    categorical: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    paper_examples: int | None = None
    paper_attributes: int | None = None
    paper_attributes_onehot: int | None = None
    paper_rho: float | None = None
    openml_id: int | None = None
    source: str | None = None
    licence: str | None = None
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
    given : dict of str to frozenset of str
        Per entry, the fields its file sets (the others are defaults); :func:`merged` overrides only those.
    """

    path: Path | None
    datasets: dict[str, DatasetInfo] = field(default_factory=dict)
    description: str = ""
    license_note: str = ""
    given: dict[str, frozenset] = field(default_factory=dict)


@cache
def registry() -> Manifest:
    """The packaged registry (``registry.json``): the 30 data sets of Table I."""
    return _parse(REGISTRY_FILE)


def merged(base: Manifest, override: Manifest) -> Manifest:
    """``base`` with each entry of ``override`` laid over it field by field (fields ``override``'s file sets).

    Parameters
    ----------
    base, override : Manifest
        E.g. the registry and a data directory's manifest.

    Returns
    -------
    Manifest
        ``base``'s entries in order, then entries only ``override`` has; path and texts from ``override`` when
        it has a file.
    """
    datasets = dict(base.datasets)
    for name, info in override.datasets.items():
        given = {f.name: getattr(info, f.name) for f in fields(info) if f.name in override.given.get(name, ())}
        datasets[name] = replace(datasets[name], **given) if name in datasets else info
    if override.path is None:
        return Manifest(base.path, datasets, base.description, base.license_note)
    return Manifest(override.path, datasets, override.description or base.description,
                    override.license_note or base.license_note)


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
    return _parse(path)


def _parse(path: Path) -> Manifest:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"manifest {str(path)!r} is not valid JSON: {exc}") from exc
    entries = document.get("datasets") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"manifest {str(path)!r} has no 'datasets' list")
    datasets, given = {}, {}
    for index, entry in enumerate(entries):
        info = _entry(entry, path, index)
        datasets[info.name] = info
        given[info.name] = frozenset(entry) & frozenset(DatasetInfo.__dataclass_fields__)
    return Manifest(path, datasets, document.get("description", ""), document.get("license_note", ""), given)


def _entry(entry: object, path: Path, index: int) -> DatasetInfo:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ValueError(f"manifest {str(path)!r}: entry {index} has no 'name'")
    known = set(DatasetInfo.__dataclass_fields__)
    values = {k: v for k, v in entry.items() if k in known}
    for name in ("categorical", "drop"):
        values[name] = tuple(values.get(name) or ())
    return DatasetInfo(**values)
