"""Results store: every computed curve point in an embedded SQLite database, checked on every read.

**Key.** A point is keyed by everything that changes its value: the data hash, measure, k, exact σ, the requested
backend, digits, dps, τ, median, aggregate and guarantee (:class:`PointKey`; τ and aggregate are blank for the
measures that do not use them). Each row also records the code version of the route that computed it
(:func:`precise_kpca.studies.versions.route_version`): a stored point is reused only when its guarantee answers the
request (:func:`reusable`) **and** that route's code is unchanged. Rows of other code versions, and of stores
written before versions were recorded, are recomputed (and replaced).

**Integrity.** Each row carries a sha256 checksum of all its columns, verified whenever it is read: a row that fails
is never reused (it is recomputed, with a warning naming it) and never exported (:class:`StoreCorrupted` names it).
Opening a store runs SQLite's ``quick_check``; a store truncated to 0 bytes or with damaged pages is refused with
the repair path. :meth:`ResultsStore.check` reports every problem (pages, checksums, a value that disagrees with
its text, certified digits that disagree with the interval); :func:`repair` keeps every intact row in a new file
and sets the damaged one aside. CLI: ``precise-kpca store check|repair|export|backup PATH``.

**Interruption and copies.** Each point is inserted in its own transaction (WAL mode), then checkpointed into the
main file, and a sweep ends with a full checkpoint: after a SIGKILL the committed points are in the ``.sqlite`` file
itself, so copying that file alone loses nothing. A consistent copy of a store in use: ``precise-kpca store backup
PATH DEST`` (SQLite's online backup) or :meth:`ResultsStore.backup`; tables: :meth:`ResultsStore.export_csv` /
:meth:`ResultsStore.export_parquet` (``precise-kpca store export``).

**Concurrent sweeps** on one store share the work: a sweep claims each point before computing it (``claims``
table, one transaction), skips points another live sweep has claimed, and at the end waits for them to land (or
takes them over when that sweep died: its process is gone, or its heartbeat is older than :data:`CLAIM_TIMEOUT`).
A ``runs`` table keeps each sweep's wall time and the sum of its points' own times.

Location: the ``path`` argument, else ``$PRECISE_KPCA_STORE``, else
``platformdirs.user_cache_dir("precise_kpca")/results.sqlite``. ``":memory:"`` keeps nothing on disk.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import socket
import sqlite3
import time
import warnings
from contextlib import contextmanager
from dataclasses import astuple, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import StoreCorrupted, StoreError
from .versions import route_version

ENV_VAR = "PRECISE_KPCA_STORE"
NO_K = 0
"""Stored ``k`` for measures without a rank parameter (metric, eigenvalue, cka); shown as missing in frames."""
NAIVE_BACKEND = "float64-naive"
"""The paper's float64 computation: its points certify nothing, so any stored one of this code answers."""
AGREEMENT_BACKENDS = ("float64", "mp")
"""Explicit backends of :func:`precise_kpca.measures.measure`: their digits come from the agreement of two
evaluations, so a request for one asks for heuristic digits."""
UNKNOWN_GUARANTEE = "unknown"
"""``guarantee`` of the rows of a store written before guarantees were recorded."""
CLAIM_TIMEOUT = 6 * 3600.0
"""Seconds without a heartbeat after which a claim of a sweep on another host is taken over (one point can take
hours on large data; on this host a dead sweep is recognised at once by its process)."""
POLL_SECONDS = 0.5

KEY_COLUMNS = ("data_hash", "measure", "k", "sigma", "requested_backend", "digits", "requested_dps", "tau", "median",
               "aggregate", "requested_guarantee")
VALUE_COLUMNS = ("log2_sigma", "value", "value_text", "normalized", "normalized_text", "certified_digits", "backend",
                 "dps", "method", "seconds", "lower_text", "upper_text", "normalized_lower_text",
                 "normalized_upper_text", "guarantee", "route", "reason", "code_version")
POINT_COLUMNS = KEY_COLUMNS + VALUE_COLUMNS + ("created",)
"""Columns of ``points`` covered by the row checksum (then ``checksum`` itself)."""

_POINTS = """
CREATE TABLE IF NOT EXISTS {name} (
    data_hash TEXT NOT NULL, measure TEXT NOT NULL, k INTEGER NOT NULL, sigma TEXT NOT NULL,
    requested_backend TEXT NOT NULL, digits INTEGER NOT NULL, requested_dps INTEGER NOT NULL, tau TEXT NOT NULL,
    median TEXT NOT NULL, aggregate TEXT NOT NULL, requested_guarantee TEXT NOT NULL,
    log2_sigma REAL NOT NULL, value REAL, value_text TEXT NOT NULL, normalized REAL, normalized_text TEXT NOT NULL,
    certified_digits INTEGER NOT NULL, backend TEXT NOT NULL, dps INTEGER NOT NULL, method TEXT NOT NULL,
    seconds REAL NOT NULL, lower_text TEXT NOT NULL, upper_text TEXT NOT NULL, normalized_lower_text TEXT NOT NULL,
    normalized_upper_text TEXT NOT NULL, guarantee TEXT NOT NULL, route TEXT NOT NULL, reason TEXT NOT NULL,
    code_version TEXT NOT NULL, created REAL NOT NULL, checksum TEXT NOT NULL,
    PRIMARY KEY ({key})
);
"""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS data (data_hash TEXT PRIMARY KEY, name TEXT NOT NULL, n INTEGER NOT NULL,
                                 d INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT, started REAL NOT NULL, executor TEXT NOT NULL, datasets TEXT NOT NULL,
    computed INTEGER NOT NULL, point_seconds REAL NOT NULL, wall_seconds REAL NOT NULL,
    pid INTEGER NOT NULL DEFAULT 0, host TEXT NOT NULL DEFAULT '', process_started REAL NOT NULL DEFAULT 0,
    heartbeat REAL NOT NULL DEFAULT 0, finished REAL
);
CREATE TABLE IF NOT EXISTS claims (key_hash TEXT PRIMARY KEY, run_id INTEGER NOT NULL, claimed REAL NOT NULL);
""" + _POINTS.format(name="points", key=", ".join(KEY_COLUMNS))
RUN_COLUMNS = (("pid", "INTEGER NOT NULL DEFAULT 0"), ("host", "TEXT NOT NULL DEFAULT ''"),
               ("process_started", "REAL NOT NULL DEFAULT 0"), ("heartbeat", "REAL NOT NULL DEFAULT 0"),
               ("finished", "REAL"))
"""Columns of ``runs`` added for claims; a store without them gains them on opening."""
LEGACY_DEFAULTS = {"requested_dps": "0", "median": "'full'", "lower_text": "''", "upper_text": "''",
                   "normalized_lower_text": "''", "normalized_upper_text": "''", "guarantee": f"'{UNKNOWN_GUARANTEE}'",
                   "route": "''", "reason": "''", "code_version": "''",
                   "tau": "CASE WHEN measure IN ('eigenprojection', 'pc') THEN '1e-06' ELSE '' END",
                   "aggregate": "CASE WHEN measure = 'eigenprojection' THEN 'mean' ELSE '' END",
                   "requested_guarantee": f"CASE requested_backend WHEN '{NAIVE_BACKEND}' THEN 'none' "
                                          "WHEN 'auto' THEN 'rigorous' ELSE 'heuristic' END"}
"""What the rows of an older store (keyed without dps, τ, median, aggregate, guarantee) read in the new columns:
the only values the sweeps of that code could request. Their code version is unknown, so they are never reused."""


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
    """Identity of one curve point: everything that changes its value (module docstring).

    ``k`` is :data:`NO_K`, ``tau`` and ``aggregate`` are ``""`` where the measure does not use them;
    ``requested_dps`` is 0 when no working precision was asked; ``requested_guarantee`` is ``"rigorous"`` or
    ``"heuristic"`` (``"none"`` for the float64-naive overlay).
    """

    data_hash: str
    measure: str
    k: int
    sigma: str
    requested_backend: str
    digits: int
    requested_dps: int = 0
    tau: str = ""
    median: str = "full"
    aggregate: str = ""
    requested_guarantee: str = "rigorous"

    @property
    def hash(self) -> str:
        """sha256 of the key (the ``claims`` table's key)."""
        return hashlib.sha256(json.dumps(astuple(self)).encode()).hexdigest()


def reusable(key: PointKey, guarantee: str, certified_digits: int, code_version: str, *,
             retry_uncertified: bool = False) -> bool:
    """Whether a stored point answers the request ``key``.

    Never when ``code_version`` is not the current version of the route that computed it (or is unknown). Else:

    * ``float64-naive`` requests: always (they certify nothing);
    * any other request: a ``rigorous`` point — also one short of ``key.digits``, and an undetermined one
      (``none``: no route of this code gives it a value), since recomputing them gives the same answer; where the
      request asks for heuristic digits also a ``heuristic`` one that certified them. ``retry_uncertified``
      recomputes every point short of the request, undetermined or not rigorous (after a better route landed).
      Points of unknown guarantee (an older store) are recomputed.
    """
    engine, _, version = code_version.partition("@")
    if not version or route_version(None if engine == "routes" else engine) != code_version:
        return False
    if key.requested_backend == NAIVE_BACKEND:
        return True
    if retry_uncertified:
        return guarantee == "rigorous" and certified_digits >= key.digits
    if guarantee in ("rigorous", "none"):
        return True
    return guarantee == "heuristic" and key.requested_guarantee == "heuristic" and certified_digits >= key.digits


def row_checksum(row) -> str:
    """sha256 (32 hex digits) of a row's :data:`POINT_COLUMNS` values (a mapping), canonically encoded (SQLite
    returns NaN as NULL, and -0.0 as 0.0)."""
    values = [_canonical(row[c]) for c in POINT_COLUMNS]
    return hashlib.sha256(json.dumps(values).encode()).hexdigest()[:32]


def _canonical(value):
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return None if math.isnan(value) else repr(value + 0.0)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return value


@dataclass
class CheckReport:
    """What :meth:`ResultsStore.check` found.

    Attributes
    ----------
    path : str
    rows : int
        Points read.
    sqlite : list of str
        SQLite's ``integrity_check`` messages (empty when it reports ok).
    bad_rows : list of str
        One line per row that fails a check: rowid, key, what failed.
    unreadable : bool
        True when the file could not be read at all (then ``rows`` is 0).
    """

    path: str
    rows: int = 0
    sqlite: list = field(default_factory=list)
    bad_rows: list = field(default_factory=list)
    unreadable: bool = False

    @property
    def ok(self) -> bool:
        return not (self.sqlite or self.bad_rows or self.unreadable)

    def __str__(self) -> str:
        if self.ok:
            return f"{self.path}: ok ({self.rows} points, every checksum verified)"
        lines = [f"{self.path}: damaged ({self.rows} points read)"]
        lines += [f"  sqlite: {m}" for m in self.sqlite] + [f"  row {m}" for m in self.bad_rows]
        lines.append(f"  repair: precise-kpca store repair {self.path}")
        return "\n".join(lines)


class ResultsStore:
    """SQLite database of curve points (module docstring).

    Parameters
    ----------
    path : path-like, ``":memory:"`` or None
        None uses :func:`default_path`. Parent folders are created.
    readonly : bool
        Open without writing (for inspecting or exporting a store one cannot write to).

    Raises
    ------
    StoreError
        The location cannot hold a store (a parent is a file, no permission), the store is read-only or locked.
    StoreCorrupted
        The file is empty (truncated), not a store, or its pages fail SQLite's check.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, readonly: bool = False):
        self.path = ":memory:" if path == ":memory:" else Path(path).expanduser() if path else default_path()
        self.readonly = readonly
        shown = str(self.path)
        if self.path != ":memory:":
            _prepare_location(self.path, readonly)
        try:
            if readonly:
                self._db = _connect_readonly(self.path)
            else:
                self._db = sqlite3.connect(shown, timeout=30.0, isolation_level=None)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            if self.path != ":memory:":
                problems = [row[0] for row in self._db.execute("PRAGMA quick_check")]
                if problems != ["ok"]:
                    raise StoreCorrupted(shown, [f"SQLite quick_check: {p}" for p in problems[:20]])
            if not readonly:
                self._upgrade()
        except sqlite3.DatabaseError as exc:
            raise _translated(exc, shown, "open") from None

    # -- schema -------------------------------------------------------------------------------------------------
    def _upgrade(self) -> None:
        """Create the tables, or bring an older store to the current schema (in one transaction)."""
        with self._transaction("IMMEDIATE"):
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(points)")}
            if columns and "checksum" not in columns:
                self._migrate_points(columns)
            for statement in filter(str.strip, _SCHEMA.split(";")):  # executescript would commit first
                self._db.execute(statement)
            present = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
            for name, definition in RUN_COLUMNS:
                if name not in present:
                    self._db.execute(f"ALTER TABLE runs ADD COLUMN {name} {definition}")

    def _migrate_points(self, columns: set) -> None:
        """Rows of a store keyed without dps, τ, median, aggregate and guarantee: copied with :data:`LEGACY_DEFAULTS`
        and a fresh checksum (their code version is unknown: they are kept, never reused)."""
        self._db.execute(_POINTS.format(name="points_new", key=", ".join(KEY_COLUMNS)))
        select = ", ".join(c if c in columns else f"{LEGACY_DEFAULTS[c]} AS {c}" for c in POINT_COLUMNS)
        cursor = self._db.execute(f"SELECT {select} FROM points")
        names = [d[0] for d in cursor.description]
        placeholders = ", ".join("?" for _ in range(len(POINT_COLUMNS) + 1))
        for values in cursor.fetchall():
            row = dict(zip(names, values))
            self._db.execute(f"INSERT OR REPLACE INTO points_new ({', '.join(POINT_COLUMNS)}, checksum) "
                             f"VALUES ({placeholders})", [row[c] for c in POINT_COLUMNS] + [row_checksum(row)])
        self._db.execute("DROP TABLE points")
        self._db.execute("ALTER TABLE points_new RENAME TO points")

    @contextmanager
    def _transaction(self, kind: str = ""):
        """One transaction; SQLite failures become :class:`StoreError` / :class:`StoreCorrupted` naming the store."""
        try:
            self._db.execute(f"BEGIN {kind}")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise _translated(exc, str(self.path), "write to") from None

    def _query(self, sql: str, parameters=()) -> list:
        try:
            return self._db.execute(sql, parameters).fetchall()
        except sqlite3.DatabaseError as exc:
            raise _translated(exc, str(self.path), "read") from None

    def close(self) -> None:
        """Checkpoint the write-ahead log into the main file and close."""
        if not self.readonly:
            self.checkpoint(truncate=True)
        self._db.close()

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.path)!r})"

    def checkpoint(self, *, truncate: bool = False) -> None:
        """Copy committed points from the write-ahead log into the ``.sqlite`` file (``truncate``: and empty the
        log, waiting for readers); a failure leaves them in the log, where SQLite still finds them."""
        try:
            self._db.execute(f"PRAGMA wal_checkpoint({'TRUNCATE' if truncate else 'PASSIVE'})")
        except sqlite3.DatabaseError:  # busy or locked: the next checkpoint copies them
            pass

    # -- points -------------------------------------------------------------------------------------------------
    def register_data(self, X: np.ndarray, name: str) -> str:
        """Record a data set's name and shape under its hash; returns the hash."""
        key = data_hash(X)
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO data VALUES (?, ?, ?, ?)", (key, name, *X.shape))
        return key

    def _rows(self, keys) -> dict:
        """Stored rows of ``keys`` that pass their checksum, by key; warns (naming them) about those that fail."""
        where = " AND ".join(f"{c}=?" for c in KEY_COLUMNS)
        found, bad = {}, []
        for key in keys:
            rows = self._query(f"SELECT rowid, {', '.join(POINT_COLUMNS)}, checksum FROM points WHERE {where}",
                               astuple(key))
            if not rows:
                continue
            row = dict(zip(("rowid",) + POINT_COLUMNS + ("checksum",), rows[0]))
            if row_checksum(row) == row["checksum"]:
                found[key] = row
            else:
                bad.append(f"{row['rowid']} ({_describe(key)})")
        if bad:
            warnings.warn(f"results store {str(self.path)!r}: {len(bad)} row(s) fail their checksum and are recomputed: "
                          + "; ".join(bad[:5]), RuntimeWarning, stacklevel=3)
        return found

    def existing(self, keys, *, retry_uncertified: bool = False) -> set[PointKey]:
        """The subset of ``keys`` stored, intact, by the current code, with a guarantee that answers the request
        (:func:`reusable`).

        Parameters
        ----------
        keys : iterable of PointKey
        retry_uncertified : bool
            Also treat stored points short of the request (heuristic, undetermined, short) as missing.
        """
        return {key for key, row in self._rows(list(keys)).items()
                if reusable(key, row["guarantee"], row["certified_digits"], row["code_version"],
                            retry_uncertified=retry_uncertified)}

    def put(self, key: PointKey, record: dict) -> None:
        """Insert (or replace) one point in its own transaction, with its checksum, then checkpoint.

        Parameters
        ----------
        key : PointKey
        record : dict
            The :data:`VALUE_COLUMNS` (as :func:`precise_kpca.studies.curves.compute_point` returns them).
        """
        row = dict(zip(KEY_COLUMNS, astuple(key)), **{c: record[c] for c in VALUE_COLUMNS}, created=time.time())
        row["checksum"] = row_checksum(row)
        columns = POINT_COLUMNS + ("checksum",)
        with self._transaction():
            self._db.execute(f"INSERT OR REPLACE INTO points ({', '.join(columns)}) "
                             f"VALUES ({', '.join('?' for _ in columns)})", [row[c] for c in columns])
        self.checkpoint()

    def frame(self, keys=None) -> pd.DataFrame:
        """Stored points as a DataFrame (all of them, or those of ``keys``), with the data set name.

        Returns
        -------
        pandas.DataFrame
            One row per point, columns of the ``points`` table plus ``data_name``; ``k`` is a nullable
            integer, missing for measures without a rank parameter.

        Raises
        ------
        StoreCorrupted
            A row fails its checksum (the message names the rows).
        """
        query = "SELECT p.rowid AS rowid, p.*, d.name AS data_name FROM points p LEFT JOIN data d USING (data_hash)"
        try:
            frame = pd.read_sql_query(query, self._db)
        except sqlite3.DatabaseError as exc:
            raise _translated(exc, str(self.path), "read") from None
        if keys is not None:
            wanted = pd.DataFrame([astuple(k) for k in keys], columns=list(KEY_COLUMNS))
            frame = wanted.merge(frame, on=list(KEY_COLUMNS), how="inner")
        bad = [f"{row['rowid']} ({_describe_row(row)}): checksum mismatch" for row in frame.to_dict("records")
               if row_checksum(row) != row["checksum"]]
        if bad:
            raise StoreCorrupted(str(self.path), bad)
        frame = frame.drop(columns=["rowid", "checksum"])
        frame["k"] = frame["k"].astype("Int64").mask(frame["k"] == NO_K)
        return frame

    # -- claims ---------------------------------------------------------------------------------------------------
    def start_run(self, executor: str, datasets) -> int:
        """Record a sweep's start (its process, for the claims); returns its id for :meth:`update_run`."""
        now = time.time()
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO runs (started, executor, datasets, computed, point_seconds, wall_seconds, pid, host, "
                "process_started, heartbeat) VALUES (?, ?, ?, 0, 0, 0, ?, ?, ?, ?)",
                (now, executor, ",".join(datasets), os.getpid(), socket.gethostname(), _process_started(os.getpid()),
                 now))
        return int(cursor.lastrowid)

    def update_run(self, run_id: int, computed: int, point_seconds: float, wall_seconds: float) -> None:
        """A sweep's totals so far: points stored, the sum of their own seconds, and wall seconds (its heartbeat)."""
        with self._transaction():
            self._db.execute("UPDATE runs SET computed=?, point_seconds=?, wall_seconds=?, heartbeat=? WHERE run_id=?",
                             (computed, point_seconds, wall_seconds, time.time(), run_id))

    def finish_run(self, run_id: int) -> None:
        """A sweep ended (however): release its claims and checkpoint the log into the ``.sqlite`` file."""
        with self._transaction():
            self._db.execute("UPDATE runs SET finished=? WHERE run_id=?", (time.time(), run_id))
            self._db.execute("DELETE FROM claims WHERE run_id=?", (run_id,))
        self.checkpoint(truncate=True)

    def claim(self, keys, run_id: int, *, retry_uncertified: bool = False) -> dict:
        """Claim the points of ``keys`` for the sweep ``run_id`` in one transaction.

        Returns
        -------
        dict of PointKey to str
            ``"mine"`` (claimed now: compute it), ``"done"`` (stored and reusable) or ``"taken"`` (claimed by
            another live sweep: wait for it).
        """
        keys = list(keys)
        status = {}
        with self._transaction("IMMEDIATE"):
            stored = self.existing(keys, retry_uncertified=retry_uncertified)
            for key in keys:
                if key in stored:
                    status[key] = "done"
                    continue
                holder = self._db.execute("SELECT run_id FROM claims WHERE key_hash=?", (key.hash,)).fetchone()
                if holder and holder[0] != run_id and self._alive(holder[0]):
                    status[key] = "taken"
                    continue
                self._db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", (key.hash, run_id, time.time()))
                status[key] = "mine"
        return status

    def claimed_by_other(self, key: PointKey) -> bool:
        """Whether a live sweep holds a claim on ``key`` (its point is being computed)."""
        holder = self._query("SELECT run_id FROM claims WHERE key_hash=?", (key.hash,))
        return bool(holder) and self._alive(holder[0][0])

    def _alive(self, run_id: int) -> bool:
        found = self._query("SELECT pid, host, process_started, heartbeat, finished FROM runs WHERE run_id=?", (run_id,))
        row = found[0] if found else None
        if row is None or row[4] is not None:
            return False
        pid, host, started, heartbeat, _ = row
        if host == socket.gethostname():
            return _process_started(pid) == started and started != 0
        return time.time() - heartbeat < CLAIM_TIMEOUT

    def runs(self) -> pd.DataFrame:
        """Recorded sweeps: ``run_id, started`` (Unix time), ``executor, datasets`` (comma-separated),
        ``computed, point_seconds, wall_seconds``, and the process fields of the claims."""
        try:
            return pd.read_sql_query("SELECT * FROM runs ORDER BY run_id", self._db)
        except sqlite3.DatabaseError as exc:
            raise _translated(exc, str(self.path), "read") from None

    # -- export, backup, checks -----------------------------------------------------------------------------------
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

    def backup(self, destination: str | os.PathLike[str]) -> Path:
        """A consistent copy of the whole store (SQLite's online backup: safe while sweeps write); returns it."""
        destination = Path(destination)
        if destination.exists():
            raise StoreError(f"backup destination {str(destination)!r} exists; choose a new file")
        target = sqlite3.connect(str(destination))
        try:
            self._db.backup(target)
        finally:
            target.close()
        return destination

    def integrity_ok(self) -> bool:
        """SQLite's own ``PRAGMA integrity_check`` (True when it reports ``ok``)."""
        return self._query("PRAGMA integrity_check")[0][0] == "ok"

    def check(self) -> CheckReport:
        """Every row's checksum, value against its text and certified digits against its interval, and SQLite's
        ``integrity_check`` (see :class:`CheckReport`)."""
        report = CheckReport(str(self.path))
        report.sqlite = [m for (m,) in self._query("PRAGMA integrity_check") if m != "ok"]
        for row in _readable_rows(self._db):
            report.rows += 1
            problem = _row_problem(row)
            if problem:
                report.bad_rows.append(f"{row['rowid']} ({_describe_row(row)}): {problem}")
        return report


def check(path) -> CheckReport:
    """:meth:`ResultsStore.check` of the store at ``path``, also when it cannot be opened (then ``unreadable``)."""
    try:
        with ResultsStore(path, readonly=True) as store:
            return store.check()
    except StoreCorrupted as exc:
        report = CheckReport(str(path), unreadable=True, sqlite=exc.problems)
        try:  # count what can still be read
            db = _connect_readonly(Path(path))
            for row in _readable_rows(db):
                report.rows += 1
                problem = _row_problem(row)
                if problem:
                    report.bad_rows.append(f"{row['rowid']} ({_describe_row(row)}): {problem}")
            db.close()
        except sqlite3.DatabaseError:
            pass
        return report


def repair(path) -> tuple[Path, int, list[str]]:
    """Keep every intact row of a damaged store: write them to a new store at ``path`` and move the damaged files
    aside (``<path>.damaged-<time>``, with their ``-wal``/``-shm``).

    Returns
    -------
    damaged : Path
        Where the damaged file now is.
    kept : int
        Points copied.
    dropped : list of str
        The rows left behind (unreadable pages are not rows: SQLite cannot say what they held).
    """
    path = Path(path)
    if not path.is_file():
        raise StoreError(f"results store {str(path)!r} does not exist")
    damaged = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        if source.exists():
            shutil.move(str(source), f"{damaged}{suffix}")
    kept, dropped = 0, []
    try:
        source = _connect_readonly(damaged)
        rows, data = list(_readable_rows(source)), _readable_data(source)
        source.close()
    except sqlite3.DatabaseError:
        rows, data = [], []
    with ResultsStore(path) as store:
        with store._transaction():
            store._db.executemany("INSERT OR REPLACE INTO data VALUES (?, ?, ?, ?)", data)
        for row in rows:
            if _row_problem(row):
                dropped.append(f"{row['rowid']} ({_describe_row(row)}): {_row_problem(row)}")
                continue
            with store._transaction():
                store._db.execute(f"INSERT OR REPLACE INTO points ({', '.join(POINT_COLUMNS)}, checksum) VALUES "
                                  f"({', '.join('?' for _ in range(len(POINT_COLUMNS) + 1))})",
                                  [row[c] for c in POINT_COLUMNS] + [row["checksum"]])
            kept += 1
    return damaged, kept, dropped


# -- helpers ------------------------------------------------------------------------------------------------------
def _prepare_location(path: Path, readonly: bool) -> None:
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
        db.executescript(_SCHEMA)
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


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection; ``immutable`` where the folder is not writable either (no ``-shm`` can be made)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0, isolation_level=None)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
        return sqlite3.connect(f"file:{path}?immutable=1", uri=True, isolation_level=None)


def _translated(exc: sqlite3.DatabaseError, path: str, action: str) -> StoreError:
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


def _process_started(pid: int) -> float:
    """Start time of process ``pid`` (0 when it does not exist): a pid alone may be reused by a later process."""
    try:
        import psutil

        return float(psutil.Process(pid).create_time())
    except Exception:  # no such process, or no permission to see it
        return 0.0


def _readable_rows(db: sqlite3.Connection):
    """Every points row that can be read, one query per rowid (a damaged page loses only its rows)."""
    columns = ("rowid",) + POINT_COLUMNS + ("checksum",)
    present = {row[1] for row in db.execute("PRAGMA table_info(points)")}
    if "checksum" not in present:
        return
    try:
        top = db.execute("SELECT max(rowid) FROM points").fetchone()[0] or 0
    except sqlite3.DatabaseError:
        top = db.execute("PRAGMA page_count").fetchone()[0] * 64  # at most ~64 rows per page
    query = f"SELECT {', '.join(columns)} FROM points WHERE rowid=?"
    for rowid in range(1, top + 1):
        try:
            found = db.execute(query, (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            continue
        if found:
            yield dict(zip(columns, found))


def _readable_data(db: sqlite3.Connection) -> list:
    try:
        return db.execute("SELECT * FROM data").fetchall()
    except sqlite3.DatabaseError:
        return []


def _row_problem(row: dict) -> str:
    """Why a row is not to be trusted ("" when it passes every check)."""
    if row_checksum(row) != row["checksum"]:
        return "checksum mismatch"
    from .curves import to_float

    text, value = row["value_text"], row["value"]
    try:
        from fractions import Fraction

        import mpmath

        parsed = mpmath.mp.make_mpf(mpmath.libmp.from_str(text, 64 + 4 * len(text), mpmath.libmp.round_nearest)) \
            if text not in ("nan", "+inf", "-inf") else float(text)
        expected = to_float(parsed)
        if not (expected == value or (value is None and math.isnan(expected)) or
                (value is not None and math.isnan(value) and math.isnan(expected))):
            return f"value {value!r} disagrees with value_text {text!r}"
        if row["guarantee"] in ("rigorous", "heuristic") and row["lower_text"] and row["upper_text"]:
            from ..measures.measurement import exact_mpf, interval_digits

            ends = [exact_mpf(Fraction(row[c])) for c in ("lower_text", "upper_text")]
            digits = interval_digits(*ends)
            if digits != row["certified_digits"]:
                return f"certified_digits {row['certified_digits']} disagrees with its interval ({digits} digits)"
    except (ValueError, ZeroDivisionError) as exc:
        return f"unreadable number ({exc})"
    return ""


def _describe(key: PointKey) -> str:
    k = "" if key.k == NO_K else f" k={key.k}"
    return f"{key.measure}{k} sigma={key.sigma} backend={key.requested_backend} digits={key.digits}"


def _describe_row(row: dict) -> str:
    return _describe(PointKey(*(row[c] for c in KEY_COLUMNS)))


__all__ = ["CheckReport", "PointKey", "ResultsStore", "check", "data_hash", "default_path", "repair", "reusable"]
