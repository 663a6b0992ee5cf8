"""Results store: every computed curve point in an embedded SQLite database.

One row per point, keyed by (data hash, measure, k, exact σ, requested backend, requested digits). Each point
is inserted in its own transaction in WAL mode, so a sweep killed at any moment (even by SIGKILL) leaves only
whole rows, and a rerun finds them and computes only what is missing. A ``runs`` table keeps each sweep's wall
time and the sum of its points' own times (updated as points land, so a killed sweep keeps what it did): the
serial and parallel cost of a study built over several resumed sweeps.

Each point records its guarantee (``rigorous``, ``heuristic``, ``none``; see
:class:`precise_kpca.measures.Measurement`), its route, the reason it falls short, and the interval behind its
value as exact decimal text. A stored point is reused only when its guarantee is what the request needs
(:func:`reusable`). Stores written before guarantees were recorded gain the columns when opened; their rows
read ``guarantee = 'unknown'`` and are never reused for a certified request, so a rerun replaces them.

Location: the ``path`` argument, else ``$PRECISE_KPCA_STORE``, else
``platformdirs.user_cache_dir("precise_kpca")/results.sqlite``. ``":memory:"`` keeps nothing on disk.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ENV_VAR = "PRECISE_KPCA_STORE"
NO_K = 0
"""Stored ``k`` for measures without a rank parameter (metric, eigenvalue, cka); shown as missing in frames."""
NAIVE_BACKEND = "float64-naive"
"""The paper's float64 computation: its points certify nothing, so any stored one answers its request."""
AGREEMENT_BACKENDS = ("float64", "mp")
"""Explicit backends of :func:`precise_kpca.measures.measure`: their digits come from the agreement of two
evaluations, so a request for one asks for heuristic digits."""
UNKNOWN_GUARANTEE = "unknown"
"""``guarantee`` of the rows of a store written before guarantees were recorded."""

GUARANTEE_COLUMNS = (
    ("lower_text", "TEXT NOT NULL DEFAULT ''"),
    ("upper_text", "TEXT NOT NULL DEFAULT ''"),
    ("normalized_lower_text", "TEXT NOT NULL DEFAULT ''"),
    ("normalized_upper_text", "TEXT NOT NULL DEFAULT ''"),
    ("guarantee", f"TEXT NOT NULL DEFAULT '{UNKNOWN_GUARANTEE}'"),
    ("route", "TEXT NOT NULL DEFAULT ''"),
    ("reason", "TEXT NOT NULL DEFAULT ''"),
)
"""Columns of ``points`` added with guarantees, and their definitions, added on opening wherever missing
(``ALTER TABLE ... ADD COLUMN``; the defaults are what rows stored before them read)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS data (
    data_hash TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    n INTEGER NOT NULL,
    d INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
    data_hash TEXT NOT NULL,
    measure TEXT NOT NULL,
    k INTEGER NOT NULL,
    sigma TEXT NOT NULL,
    requested_backend TEXT NOT NULL,
    digits INTEGER NOT NULL,
    log2_sigma REAL NOT NULL,
    value REAL,
    value_text TEXT NOT NULL,
    normalized REAL,
    normalized_text TEXT NOT NULL,
    certified_digits INTEGER NOT NULL,
    backend TEXT NOT NULL,
    dps INTEGER NOT NULL,
    method TEXT NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (data_hash, measure, k, sigma, requested_backend, digits)
);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL,
    executor TEXT NOT NULL,
    datasets TEXT NOT NULL,
    computed INTEGER NOT NULL,
    point_seconds REAL NOT NULL,
    wall_seconds REAL NOT NULL
);
"""
# The points table is created as first defined and brought to the current schema by the same step that
# upgrades an old store (ResultsStore._add_guarantee_columns): one path, taken by every store.

KEY_COLUMNS = ("data_hash", "measure", "k", "sigma", "requested_backend", "digits")
POINT_COLUMNS = KEY_COLUMNS + (
    "log2_sigma", "value", "value_text", "normalized", "normalized_text", "certified_digits", "backend", "dps",
    "method", "seconds", "created",
) + tuple(name for name, _ in GUARANTEE_COLUMNS)


def default_path() -> Path:
    """``$PRECISE_KPCA_STORE`` if set, else ``user_cache_dir("precise_kpca")/results.sqlite``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("precise_kpca")) / "results.sqlite"


def data_hash(X: np.ndarray) -> str:
    """sha256 (hex) of the shape and the C-order float64 bytes of X: the data part of every key."""
    array = np.ascontiguousarray(X, dtype=np.float64)
    digest = hashlib.sha256(repr(array.shape).encode())
    digest.update(array.tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class PointKey:
    """Identity of one curve point (see module docstring); ``k`` is :data:`NO_K` where it does not apply."""

    data_hash: str
    measure: str
    k: int
    sigma: str
    requested_backend: str
    digits: int


def reusable(key: PointKey, guarantee: str, certified_digits: int, *, retry_uncertified: bool = False) -> bool:
    """Whether a stored point with this guarantee and these certified digits answers the request ``key``.

    * ``float64-naive`` requests: always (they certify nothing, whatever is stored);
    * any other request: a ``rigorous`` point — also one short of ``key.digits``, and an undetermined one
      (``none``: no route of this code gives it a value), since recomputing them gives the same answer; where the
      request asks for heuristic digits (an explicit backend of :data:`AGREEMENT_BACKENDS`) also a ``heuristic``
      one that certified them. ``retry_uncertified`` recomputes every point short of the request, undetermined or
      not rigorous (after a better route landed). Points of unknown guarantee (an older store) are recomputed.
    """
    if key.requested_backend == NAIVE_BACKEND:
        return True
    if retry_uncertified:
        return guarantee == "rigorous" and certified_digits >= key.digits
    if guarantee in ("rigorous", "none"):
        return True
    return guarantee == "heuristic" and key.requested_backend in AGREEMENT_BACKENDS and certified_digits >= key.digits


class ResultsStore:
    """SQLite database of curve points.

    Parameters
    ----------
    path : path-like, ``":memory:"`` or None
        None uses :func:`default_path`. Parent folders are created.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = ":memory:" if path == ":memory:" else Path(path).expanduser() if path else default_path()
        if self.path != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._add_guarantee_columns()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"cannot open results store {str(self.path)!r}: {exc}") from exc

    def _add_guarantee_columns(self) -> None:
        """Bring a store written before guarantees were recorded to the current schema."""
        if not self._missing_columns():
            return
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for name, definition in self._missing_columns():  # again, under the lock: another process may have
                self._db.execute(f"ALTER TABLE points ADD COLUMN {name} {definition}")  # added them meanwhile

    def _missing_columns(self) -> list[tuple[str, str]]:
        present = {row[1] for row in self._db.execute("PRAGMA table_info(points)")}
        return [(name, definition) for name, definition in GUARANTEE_COLUMNS if name not in present]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.path)!r})"

    def register_data(self, X: np.ndarray, name: str) -> str:
        """Record a data set's name and shape under its hash; returns the hash."""
        key = data_hash(X)
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("INSERT OR REPLACE INTO data VALUES (?, ?, ?, ?)", (key, name, *X.shape))
        return key

    def existing(self, keys, *, retry_uncertified: bool = False) -> set[PointKey]:
        """The subset of ``keys`` stored with a guarantee that answers the request (:func:`reusable`).

        Parameters
        ----------
        keys : iterable of PointKey
        retry_uncertified : bool
            Also treat stored heuristic points as missing where the request would accept them.
        """
        found = set()
        query = ("SELECT guarantee, certified_digits FROM points WHERE data_hash=? AND measure=? AND k=? AND sigma=? "
                 "AND requested_backend=? AND digits=?")
        for key in keys:
            row = self._db.execute(query, tuple(key.__dict__.values())).fetchone()
            if row and reusable(key, row[0], row[1], retry_uncertified=retry_uncertified):
                found.add(key)
        return found

    def put(self, key: PointKey, record: dict) -> None:
        """Insert (or replace) one point in its own transaction.

        Parameters
        ----------
        key : PointKey
        record : dict
            ``log2_sigma, value, value_text, normalized, normalized_text, certified_digits, backend, dps,
            method, seconds, lower_text, upper_text, normalized_lower_text, normalized_upper_text, guarantee,
            route, reason`` (as :func:`precise_kpca.studies.curves.compute_point` returns them).
        """
        row = dict(key.__dict__, **record, created=time.time())
        placeholders = ", ".join("?" for _ in POINT_COLUMNS)
        with self._db:  # commits on success, rolls back on error
            self._db.execute("BEGIN")
            self._db.execute(
                f"INSERT OR REPLACE INTO points ({', '.join(POINT_COLUMNS)}) VALUES ({placeholders})",
                [row[c] for c in POINT_COLUMNS],
            )

    def start_run(self, executor: str, datasets) -> int:
        """Record a sweep's start; returns its id for :meth:`update_run`."""
        with self._db:
            self._db.execute("BEGIN")
            cursor = self._db.execute(
                "INSERT INTO runs (started, executor, datasets, computed, point_seconds, wall_seconds) "
                "VALUES (?, ?, ?, 0, 0, 0)", (time.time(), executor, ",".join(datasets)))
        return int(cursor.lastrowid)

    def update_run(self, run_id: int, computed: int, point_seconds: float, wall_seconds: float) -> None:
        """A sweep's totals so far: points stored, the sum of their own seconds, and wall seconds."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("UPDATE runs SET computed=?, point_seconds=?, wall_seconds=? WHERE run_id=?",
                             (computed, point_seconds, wall_seconds, run_id))

    def runs(self) -> pd.DataFrame:
        """Recorded sweeps: ``run_id, started`` (Unix time), ``executor, datasets`` (comma-separated),
        ``computed, point_seconds, wall_seconds``."""
        return pd.read_sql_query("SELECT * FROM runs ORDER BY run_id", self._db)

    def frame(self, keys=None) -> pd.DataFrame:
        """Stored points as a DataFrame (all of them, or those of ``keys``), with the data set name.

        Returns
        -------
        pandas.DataFrame
            One row per point, columns of the ``points`` table plus ``data_name``; ``k`` is a nullable
            integer, missing for measures without a rank parameter.
        """
        query = "SELECT p.*, d.name AS data_name FROM points p LEFT JOIN data d USING (data_hash)"
        frame = pd.read_sql_query(query, self._db)
        if keys is not None:
            wanted = pd.DataFrame([k.__dict__ for k in keys], columns=KEY_COLUMNS)
            frame = wanted.merge(frame, on=list(KEY_COLUMNS), how="inner")
        frame["k"] = frame["k"].astype("Int64").mask(frame["k"] == NO_K)
        return frame

    def export_csv(self, path: str | os.PathLike[str], keys=None) -> Path:
        """Write :meth:`frame` to CSV; returns the path."""
        path = Path(path)
        self.frame(keys).to_csv(path, index=False)
        return path

    def export_parquet(self, path: str | os.PathLike[str], keys=None) -> Path:
        """Write :meth:`frame` to Parquet (pyarrow, the ``[parquet]`` extra: :class:`~precise_kpca.extras.MissingExtra`
        without it); returns the path."""
        from ..extras import require

        require("parquet", "Parquet export")
        path = Path(path)
        self.frame(keys).to_parquet(path, index=False)
        return path

    def integrity_ok(self) -> bool:
        """SQLite's own ``PRAGMA integrity_check`` (True when it reports ``ok``)."""
        return self._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
