"""The results store's connection (:mod:`precise_kpca.studies.store`): points written and read (checked against
their checksums), the sweeps' claims and runs, exports and backups; the check and repair of a store file."""
from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import time
import warnings
from contextlib import contextmanager
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import StoreCorrupted, StoreError
from .files import connect_readonly, default_path, prepare_location, translated
from .integrity import CheckReport, describe_row, readable_data, readable_rows, row_fault, scan
from .keys import NO_K, PointKey, data_hash, describe, reusable
from .schema import KEY_COLUMNS, POINT_COLUMNS, VALUE_COLUMNS, insert_sql, row_checksum, upgrade

CLAIM_TIMEOUT = 6 * 3600.0
"""Seconds without a heartbeat after which a claim of a sweep on another host is taken over (one point can take
hours on large data; on this host a dead sweep is recognised at once by its process)."""
POLL_SECONDS = 0.5
"""Seconds between looks at the store while a sweep waits for the points another sweep claimed."""


class ResultsStore:
    """SQLite database of curve points (:mod:`precise_kpca.studies.store`).

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
            prepare_location(self.path, readonly)
        try:
            if readonly:
                self._db = connect_readonly(self.path)
            else:
                self._db = sqlite3.connect(shown, timeout=30.0, isolation_level=None)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            if self.path != ":memory:":
                problems = [row[0] for row in self._db.execute("PRAGMA quick_check")]
                if problems != ["ok"]:
                    raise StoreCorrupted(shown, [f"SQLite quick_check: {p}" for p in problems[:20]])
            if not readonly:
                with self._transaction("IMMEDIATE"):
                    upgrade(self._db)
        except sqlite3.DatabaseError as exc:
            raise translated(exc, shown, "open") from None

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
            raise translated(exc, str(self.path), "write to") from None

    def _query(self, sql: str, parameters=()) -> list:
        try:
            return self._db.execute(sql, parameters).fetchall()
        except sqlite3.DatabaseError as exc:
            raise translated(exc, str(self.path), "read") from None

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
                bad.append(f"{row['rowid']} ({describe(key)})")
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
        with self._transaction():
            self._db.execute(insert_sql(), [row[c] for c in POINT_COLUMNS + ("checksum",)])
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
            raise translated(exc, str(self.path), "read") from None
        if keys is not None:
            wanted = pd.DataFrame([astuple(k) for k in keys], columns=list(KEY_COLUMNS))
            frame = wanted.merge(frame, on=list(KEY_COLUMNS), how="inner")
        bad = [f"{row['rowid']} ({describe_row(row)}): checksum mismatch" for row in frame.to_dict("records")
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
            raise translated(exc, str(self.path), "read") from None

    # -- export, backup, checks -----------------------------------------------------------------------------------
    def export_csv(self, path: str | os.PathLike[str], keys=None) -> Path:
        """Write :meth:`frame` to CSV; returns the path."""
        path = Path(path)
        self.frame(keys).to_csv(path, index=False)
        return path

    def export_parquet(self, path: str | os.PathLike[str], keys=None) -> Path:
        """Write :meth:`frame` to Parquet (pyarrow, the ``[parquet]`` extra: :class:`~precise_kpca.extras.MissingExtra`
        without it); returns the path."""
        from ...extras import require

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
        return scan(self._db, report)



def check(path) -> CheckReport:
    """:meth:`ResultsStore.check` of the store at ``path``, also when it cannot be opened (then ``unreadable``)."""
    try:
        with ResultsStore(path, readonly=True) as store:
            return store.check()
    except StoreCorrupted as exc:
        report = CheckReport(str(path), unreadable=True, sqlite=exc.problems)
        try:  # count what can still be read
            db = connect_readonly(Path(path))
            scan(db, report)
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
        source = connect_readonly(damaged)
        rows, data = list(readable_rows(source)), readable_data(source)
        source.close()
    except sqlite3.DatabaseError:
        rows, data = [], []
    with ResultsStore(path) as store:
        with store._transaction():
            store._db.executemany("INSERT OR REPLACE INTO data VALUES (?, ?, ?, ?)", data)
        for row in rows:
            fault = row_fault(row)
            if fault:
                dropped.append(fault)
                continue
            with store._transaction():
                store._db.execute(insert_sql(), [row[c] for c in POINT_COLUMNS] + [row["checksum"]])
            kept += 1
    return damaged, kept, dropped

def _process_started(pid: int) -> float:
    """Start time of process ``pid`` (0 when it does not exist): a pid alone may be reused by a later process."""
    try:
        import psutil

        return float(psutil.Process(pid).create_time())
    except Exception:  # no such process, or no permission to see it
        return 0.0
