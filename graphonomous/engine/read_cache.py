"""Rows read from the store between calls, valid while the database is unchanged.

Rules of this module:
- One `ReadCache` per engine (`Engine.read_cache`); the engine alone decides
  when it is valid: its entries were read at `fingerprint` (`Store.fingerprint`:
  rows written through this connection, commits by other connections), and the
  engine empties it as soon as the store's fingerprint differs -- a write or an
  erase by any process is seen on the next access.
- It is never used inside an open write transaction (what is read there may
  still be rolled back), so every entry is a committed row.
- The only write that keeps it valid is a declared neutral one
  (`Engine.neutral_write`: the access counters), whose effect on cached rows
  the writer patches in.
- Tables are plain ``{key: value}`` dicts named by their user (retrieval's
  `GraphReader`); each holds at most `MAX_ENTRIES` entries and is emptied when
  full (a bound on memory, not an eviction policy: results never depend on it).
Layer: engine (imports nothing above the standard library).
"""

from __future__ import annotations

from typing import Any, Final

# Entries per table before it is emptied: a node row is ~1-2 KB with its content,
# so 4,096 rows bound the largest table to a few MB (issue #20's RSS budget) while
# holding every row a warm agent's recent queries touched.
MAX_ENTRIES: Final = 4_096


class ReadCache:
    """Named tables of rows read at one store fingerprint."""

    def __init__(self) -> None:
        self.fingerprint: tuple[int, int] | None = None
        self._tables: dict[str, dict[Any, Any]] = {}

    def reset(self, fingerprint: tuple[int, int] | None) -> None:
        """Forget every entry; what is stored next was read at `fingerprint`."""
        self.fingerprint = fingerprint
        self._tables.clear()

    def table(self, name: str) -> dict[Any, Any]:
        """The table `name` (created empty; emptied first when it reached `MAX_ENTRIES`)."""
        found = self._tables.get(name)
        if found is None or len(found) >= MAX_ENTRIES:
            found = self._tables[name] = {}
        return found

    def peek(self, name: str) -> dict[Any, Any] | None:
        """The table `name` if it exists (for patching after a neutral write)."""
        return self._tables.get(name)
