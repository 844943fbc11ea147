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

from ..store import Store

# The SQL of the rule (``SOURCE_BACKED_SQL``, ``BUDGET_EXEMPT_SQL``) lives with the
# other statements on nodes in ``store/queries.py``; these functions name the rule.


def source_backed_ids(store: Store) -> set[str]:
    """Ids of every node (live or forgotten) backed by an ingested file.  One query."""
    return store.source_backed_ids()


def budget_count(store: Store) -> int:
    """Live nodes that count against ``max_nodes`` (not pinned, not source-backed)."""
    return store.budget_count()


def forgotten_among(store: Store, node_ids: list[str]) -> list[str]:
    """Those of `node_ids` that are soft-forgotten, sorted.  O(ids) by primary key."""
    return store.forgotten_among(node_ids)
