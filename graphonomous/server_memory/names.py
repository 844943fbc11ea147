"""A set of strings kept on disk: the names an import has seen, in bounded memory.

Rules of this module:
- it is scratch space of one import, not graph data: a private temporary SQLite file
  (stdlib ``sqlite3``), deleted on close, never the graph's database, so it works the
  same whatever backend the graph is on;
- memory is SQLite's page cache (SCRATCH_CACHE_KIB), whatever the number of names.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterable
from typing import Final

# Page cache of the scratch file (KiB; SQLite's negative cache_size unit): enough for
# the B-tree's upper levels, small next to the import's other memory.
SCRATCH_CACHE_KIB: Final = 4096


class NameSet:
    """Distinct strings on disk.  Use as a context manager (the file goes on exit)."""

    def __init__(self) -> None:
        handle, self._path = tempfile.mkstemp(prefix="graphonomous-names-", suffix=".db")
        os.close(handle)
        self._conn = sqlite3.connect(self._path, isolation_level=None)
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
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._path)

    def __enter__(self) -> NameSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
