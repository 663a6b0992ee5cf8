"""Integrity of stored rows: what can still be read from a store, and why a row is not to be trusted (its
checksum, its value against its text, its certified digits against its interval). The store file is checked and
repaired with them in :mod:`.database`."""
from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass, field

from .keys import PointKey, describe
from .schema import KEY_COLUMNS, POINT_COLUMNS, row_checksum


@dataclass
class CheckReport:
    """What :meth:`~precise_kpca.studies.store.ResultsStore.check` found.

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


def scan(db: sqlite3.Connection, report: CheckReport) -> CheckReport:
    """Count every readable row of ``db`` into ``report``, naming each that fails a check; returns ``report``."""
    for row in readable_rows(db):
        report.rows += 1
        fault = row_fault(row)
        if fault:
            report.bad_rows.append(fault)
    return report


def row_fault(row: dict) -> str:
    """The line naming a row that fails a check (rowid, key, what failed); "" when it passes every check."""
    problem = _row_problem(row)
    return f"{row['rowid']} ({describe_row(row)}): {problem}" if problem else ""


def describe_row(row: dict) -> str:
    """The key of a stored row as messages name it."""
    return describe(PointKey(*(row[c] for c in KEY_COLUMNS)))


def readable_rows(db: sqlite3.Connection):
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


def readable_data(db: sqlite3.Connection) -> list:
    """The rows of the ``data`` table (data sets by hash), or none when they cannot be read."""
    try:
        return db.execute("SELECT * FROM data").fetchall()
    except sqlite3.DatabaseError:
        return []


def _row_problem(row: dict) -> str:
    """Why a row is not to be trusted ("" when it passes every check)."""
    if row_checksum(row) != row["checksum"]:
        return "checksum mismatch"
    from ..curves import to_float

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
            from ...measures.measurement import exact_mpf, interval_digits

            ends = [exact_mpf(Fraction(row[c])) for c in ("lower_text", "upper_text")]
            digits = interval_digits(*ends)
            if digits != row["certified_digits"]:
                return f"certified_digits {row['certified_digits']} disagrees with its interval ({digits} digits)"
    except (ValueError, ZeroDivisionError) as exc:
        return f"unreadable number ({exc})"
    return ""

