"""The store's file: where it lives, refusing what SQLite would misread, creating it atomically, and SQLite's
failures translated into :class:`~precise_kpca.errors.StoreError` naming the store."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ...errors import StoreCorrupted, StoreError
from .schema import SCHEMA

ENV_VAR = "PRECISE_KPCA_STORE"


def default_path() -> Path:
    """``$PRECISE_KPCA_STORE`` if set, else ``user_cache_dir("precise_kpca")/results.sqlite``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("precise_kpca")) / "results.sqlite"

def prepare_location(path: Path, readonly: bool) -> None:
    """Refuse what SQLite would misread: a parent that is a file, an empty (truncated) file, no permission."""
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise StoreError(f"cannot create results store {str(path)!r}: {str(parent)!r} is a file, not a folder")
    if path.is_dir():
        raise StoreError(f"results store {str(path)!r} is a folder; give a file path (e.g. {str(path / 'results.sqlite')!r})")
    if path.is_file():
        _check_header(path)
    if readonly:
        if not path.is_file():
            raise StoreError(f"results store {str(path)!r} does not exist")
        return
    if path.exists():
        if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
            raise StoreError(f"results store {str(path)!r} is read-only (no write permission on it or its folder): "
                             "give --store a writable path, or copy it (precise-kpca store backup)")
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create results store {str(path)!r}: {exc.strerror or exc}") from None
    if not os.access(path.parent, os.W_OK):
        raise StoreError(f"cannot create results store {str(path)!r}: no write permission in {str(path.parent)!r}")
    _create(path)


_HEADER = b"SQLite format 3\x00"


def _check_header(path: Path) -> None:
    """Refuse a file that is not an SQLite database before SQLite sees it: SQLite reads a file shorter than its
    100-byte header (truncated, or a stray text file) as an empty database, which would pass every check."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        header = f.read(100)
    if size == 0:
        raise StoreCorrupted(str(path), ["the file is empty (0 bytes): truncated, or not a results store; restore a "
                                         "backup, or delete it to start a new store"])
    if len(header) < 100 or not header.startswith(_HEADER):
        raise StoreCorrupted(str(path), [f"not an SQLite database ({size} bytes, no SQLite header): truncated, or "
                                         "another kind of file; restore a backup, or delete it to start a new store"])


def _create(path: Path) -> None:
    """Create a store atomically (schema written in a temporary file, then linked into place), so an empty file at
    ``path`` always means a truncated store, never one being created."""
    temporary = path.with_name(f".{path.name}.creating-{os.getpid()}")
    db = sqlite3.connect(str(temporary), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(SCHEMA)
    finally:
        db.close()
    try:
        os.link(temporary, path)  # fails, rather than overwrites, when another process created it meanwhile
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        if not path.exists():
            os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection; ``immutable`` where the folder is not writable either (no ``-shm`` can be made)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0, isolation_level=None)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
        return sqlite3.connect(f"file:{path}?immutable=1", uri=True, isolation_level=None)


def translated(exc: sqlite3.DatabaseError, path: str, action: str) -> StoreError:
    """The typed failure of an SQLite error met while trying to ``action`` the store at ``path``."""
    text = str(exc)
    if "not a database" in text:
        return StoreCorrupted(path, ["not an SQLite database (its header is damaged, or it is another kind of file)"])
    if "malformed" in text:
        return StoreCorrupted(path, [f"SQLite: {text}"])
    if "readonly" in text or "read-only" in text:
        return StoreError(f"results store {path!r} is read-only ({text}): give --store a writable path")
    if "locked" in text or "busy" in text:
        return StoreError(f"results store {path!r} is locked by another process ({text}); wait for it or use "
                          "another --store")
    return StoreError(f"cannot {action} results store {path!r}: {text}")

