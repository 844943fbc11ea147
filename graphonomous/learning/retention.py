"""What forgetting may never take: the retention rule (SPEC "Forgetting budget").

One home for the rule every forgetting path obeys:

- *Source-backed* nodes — the file node and chunk nodes of a file recorded
  in ``source_files`` (i.e. ingested by a scan and still present at the last
  scan) — have an external source of truth.  They are never candidates for
  budget pruning, never decayed, never threshold-pruned, merged or
  superseded by consolidation, and they do not count against the node
  budget.  A file that disappears is removed by the next scan (its row and
  nodes go together), so "the file still exists" is exactly "it has a row".
- *Pinned* nodes are never forgotten by policy and do not count against the
  budget either: the user asked to keep them.
- Goal and glacial-timescale nodes are never chosen by policy but DO count
  (they are the agent's own knowledge).

The budget (``max_nodes``) therefore governs what the agent learned on its
own: episodes, inferences, outcomes, abstractions.  ``budget_count`` is the
number the budget is compared with.

This module reads ``source_files`` (defined in ``store/schema.py``, written
by ``ingest/sources.py``) and ``nodes``; it never writes them.
"""

from __future__ import annotations

from typing import Final

from ..store import Store
from . import tables

# SQL condition on a nodes row: "this node is backed by an ingested file".
# Both sub-selects are uncorrelated, so SQLite evaluates each once per
# statement.  Complexity: O(files + chunks) per statement.
SOURCE_BACKED_SQL: Final = (
    "(id IN (SELECT file_node_id FROM source_files WHERE file_node_id IS NOT NULL) "
    "OR id IN (SELECT j.value FROM source_files AS s, json_each(s.chunk_node_ids) AS j))"
)
# SQL condition on a nodes row: "this node does not count against the budget".
BUDGET_EXEMPT_SQL: Final = f"(pinned = 1 OR {SOURCE_BACKED_SQL})"


def source_backed_ids(store: Store) -> set[str]:
    """Ids of every node (live or forgotten) backed by an ingested file.  One query."""
    rows = tables.query(store, f"SELECT id FROM nodes WHERE {SOURCE_BACKED_SQL}")
    return {str(row[0]) for row in rows}


def budget_count(store: Store) -> int:
    """Live nodes that count against ``max_nodes`` (not pinned, not source-backed)."""
    rows = tables.query(
        store, f"SELECT count(*) FROM nodes WHERE forgotten_at IS NULL AND NOT {BUDGET_EXEMPT_SQL}"
    )
    return int(rows[0][0])


def forgotten_among(store: Store, node_ids: list[str]) -> list[str]:
    """Those of `node_ids` that are soft-forgotten, sorted.  O(ids) by primary key."""
    if not node_ids:
        return []
    found: list[str] = []
    for start in range(0, len(node_ids), tables.ID_CHUNK):
        chunk = node_ids[start : start + tables.ID_CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = tables.query(
            store,
            f"SELECT id FROM nodes WHERE forgotten_at IS NOT NULL AND id IN ({marks})",
            chunk,
        )
        found.extend(str(row[0]) for row in rows)
    return sorted(found)
