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

Modules: :mod:`.keys` (what identifies a point, when a stored one is reusable), :mod:`.schema` (tables, row
checksum, upgrade of older stores), :mod:`.files` (location, creation, SQLite failures as typed errors),
:mod:`.integrity` (row checks), :mod:`.database` (:class:`ResultsStore`, :func:`check`, :func:`repair`).
"""
from __future__ import annotations

from .database import CLAIM_TIMEOUT, POLL_SECONDS, ResultsStore, check, repair
from .files import ENV_VAR, default_path
from .integrity import CheckReport
from .keys import AGREEMENT_BACKENDS, NAIVE_BACKEND, NO_K, PointKey, data_hash, reusable
from .schema import KEY_COLUMNS, POINT_COLUMNS, row_checksum

__all__ = ["CheckReport", "PointKey", "ResultsStore", "check", "data_hash", "default_path", "repair", "reusable"]
