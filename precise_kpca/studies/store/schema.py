"""Schema of the results store: its tables and columns, the row checksum, and the upgrade of an older store."""
from __future__ import annotations

import hashlib
import json
import math
import sqlite3

import numpy as np

from .keys import NAIVE_BACKEND, UNKNOWN_GUARANTEE

KEY_COLUMNS = ("data_hash", "measure", "k", "sigma", "requested_backend", "digits", "requested_dps", "tau", "median",
               "aggregate", "requested_guarantee")
VALUE_COLUMNS = ("log2_sigma", "value", "value_text", "normalized", "normalized_text", "certified_digits", "backend",
                 "dps", "method", "seconds", "lower_text", "upper_text", "normalized_lower_text",
                 "normalized_upper_text", "guarantee", "route", "reason", "code_version")
POINT_COLUMNS = KEY_COLUMNS + VALUE_COLUMNS + ("created",)
"""Columns of ``points`` covered by the row checksum (then ``checksum`` itself)."""

POINTS_TABLE = """
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
SCHEMA = """
CREATE TABLE IF NOT EXISTS data (data_hash TEXT PRIMARY KEY, name TEXT NOT NULL, n INTEGER NOT NULL,
                                 d INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT, started REAL NOT NULL, executor TEXT NOT NULL, datasets TEXT NOT NULL,
    computed INTEGER NOT NULL, point_seconds REAL NOT NULL, wall_seconds REAL NOT NULL,
    pid INTEGER NOT NULL DEFAULT 0, host TEXT NOT NULL DEFAULT '', process_started REAL NOT NULL DEFAULT 0,
    heartbeat REAL NOT NULL DEFAULT 0, finished REAL
);
CREATE TABLE IF NOT EXISTS claims (key_hash TEXT PRIMARY KEY, run_id INTEGER NOT NULL, claimed REAL NOT NULL);
""" + POINTS_TABLE.format(name="points", key=", ".join(KEY_COLUMNS))
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



def insert_sql(table: str = "points") -> str:
    """The statement that inserts (or replaces) one row of :data:`POINT_COLUMNS` and its checksum into ``table``."""
    return (f"INSERT OR REPLACE INTO {table} ({', '.join(POINT_COLUMNS)}, checksum) "
            f"VALUES ({', '.join('?' for _ in range(len(POINT_COLUMNS) + 1))})")


def upgrade(db: sqlite3.Connection) -> None:
    """Create the tables, or bring an older store to the current schema (inside the caller's transaction)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(points)")}
    if columns and "checksum" not in columns:
        _migrate_points(db, columns)
    for statement in filter(str.strip, SCHEMA.split(";")):  # executescript would commit first
        db.execute(statement)
    present = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    for name, definition in RUN_COLUMNS:
        if name not in present:
            db.execute(f"ALTER TABLE runs ADD COLUMN {name} {definition}")


def _migrate_points(db: sqlite3.Connection, columns: set) -> None:
    """Rows of a store keyed without dps, τ, median, aggregate and guarantee: copied with :data:`LEGACY_DEFAULTS`
    and a fresh checksum (their code version is unknown: they are kept, never reused)."""
    db.execute(POINTS_TABLE.format(name="points_new", key=", ".join(KEY_COLUMNS)))
    select = ", ".join(c if c in columns else f"{LEGACY_DEFAULTS[c]} AS {c}" for c in POINT_COLUMNS)
    cursor = db.execute(f"SELECT {select} FROM points")
    names = [d[0] for d in cursor.description]
    for values in cursor.fetchall():
        row = dict(zip(names, values))
        db.execute(insert_sql("points_new"), [row[c] for c in POINT_COLUMNS] + [row_checksum(row)])
    db.execute("DROP TABLE points")
    db.execute("ALTER TABLE points_new RENAME TO points")
