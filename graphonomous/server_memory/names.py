"""A set of strings kept on disk: the names an import has seen, in bounded memory.

Rules of this module:
- it is scratch space of one import, not graph data: SQLite's private temporary
  database (stdlib ``sqlite3``, an empty file name), never the graph's database, so it
  works the same whatever backend the graph is on;
- the file has no name: SQLite creates it in its temporary directory ($SQLITE_TMPDIR,
  $TMPDIR, /var/tmp, /usr/tmp, /tmp) and unlinks it at once (Unix; Windows deletes it on
  close), so no end of the process — SIGTERM, kill -9, a power cut — leaves the
  names in a file; the kernel frees the blocks when the process ends;
- memory is SQLite's page cache (SCRATCH_CACHE_KIB), whatever the number of names.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Final

# Page cache of the scratch file (KiB; SQLite's negative cache_size unit): enough for
# the B-tree's upper levels, small next to the import's other memory.
SCRATCH_CACHE_KIB: Final = 4096


class NameSet:
    """Distinct strings on disk.  Use as a context manager (the file goes on exit)."""

    def __init__(self) -> None:
        # "": a temporary on-disk database, unlinked at open (pages spill to it past the
        # cache: SQLite's default build option SQLITE_TEMP_STORE=1 keeps
        # temporary databases on disk).
        self._conn = sqlite3.connect("", isolation_level=None)
        self._conn.execute("PRAGMA journal_mode = OFF")
        self._conn.execute("PRAGMA synchronous = OFF")
        self._conn.execute(f"PRAGMA cache_size = -{SCRATCH_CACHE_KIB}")
        self._conn.execute("CREATE TABLE names (name TEXT PRIMARY KEY) WITHOUT ROWID")
        self._count = 0

    def add(self, names: Iterable[str]) -> int:
        """Add `names`; returns how many were not in the set yet.  O(n log N)."""
        before = self._conn.total_changes
        self._conn.execute("BEGIN")
        self._conn.executemany(
            "INSERT OR IGNORE INTO names (name) VALUES (?)", ((name,) for name in names)
        )
        self._conn.execute("COMMIT")
        added = self._conn.total_changes - before
        self._count += added
        return added

    def __len__(self) -> int:
        return self._count

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> NameSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
