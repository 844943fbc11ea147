"""Getting a graph out: `export` (JSONL batch operations) and `backup` (a consistent copy).

- :func:`export_lines` — one JSON object per line, each an operation that
  ``graphonomous batch`` (and ``Graphonomous.apply_batch``) accepts: every
  live node as ``{"op": "add_node", "node": {…}}`` in creation order
  (causal parents come first), then every edge between live nodes as
  ``{"op": "add_edge", "edge": {…}}`` in id order.  The fields are the
  knowledge a batch can write (`records.NODE_INPUT_FIELDS` /
  `EDGE_INPUT_FIELDS`): ids, content, metadata, source, confidence,
  timescale, pinning, agent.  Learned statistics (access counts, Q-values,
  co-activation counts), forgotten nodes, the audit log and bookkeeping
  tables are not exported — that is what `backup` is for.
- :func:`backup` — SQLite's online backup API from a separate read
  connection: a consistent copy of the whole database (WAL content
  included) even while a server writes; the copy is written to a temporary
  file beside the target and renamed into place, so a failed backup never
  leaves a half-written file under the target name.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from .api import Graphonomous
from .records import EDGE_INPUT_FIELDS, NODE_INPUT_FIELDS

# Pages copied per backup step (the writer gets the lock between steps).
BACKUP_PAGES_PER_STEP: Final = 1024


def _only(values: dict[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    return {key: values[key] for key in sorted(values) if key in allowed and key != "type"}


def export_lines(graph: Graphonomous) -> Iterator[str]:
    """The JSONL lines of the export (module docstring).  O(nodes + edges)."""
    with graph.lock:
        nodes = graph.store.list_nodes(order="created")
        edges = graph.store.list_edges_between([node.id for node in nodes])
    for node in nodes:
        fields = _only(node.to_dict(), NODE_INPUT_FIELDS)
        yield json.dumps({"op": "add_node", "node": fields}, ensure_ascii=False, sort_keys=True)
    for edge in edges:
        fields = _only(edge.to_dict(), EDGE_INPUT_FIELDS)
        yield json.dumps({"op": "add_edge", "edge": fields}, ensure_ascii=False, sort_keys=True)


def backup(db_path: str, target: str | os.PathLike[str]) -> dict[str, Any]:
    """Copy the database at `db_path` to `target` (module docstring).

    Output: ``{"source", "target", "bytes", "pages"}``.  Raises OSError or
    sqlite3.Error (the caller names them); `target` must not be the source.
    """
    destination = Path(target).expanduser().resolve()
    if destination == Path(db_path).resolve():
        raise ValueError("the backup target is the database itself")
    temporary = destination.with_name(f".{destination.name}.partial")
    source = sqlite3.connect(f"file:{Path(db_path).as_posix()}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(temporary)
        try:
            source.backup(copy, pages=BACKUP_PAGES_PER_STEP)
            pages = int(copy.execute("PRAGMA page_count").fetchone()[0])
        finally:
            copy.close()
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        source.close()
    os.replace(temporary, destination)
    return {
        "source": str(Path(db_path).resolve()),
        "target": str(destination),
        "bytes": destination.stat().st_size,
        "pages": pages,
    }
