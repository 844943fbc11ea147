"""Where a node's knowledge came from, as every result that leaves the process shows it.

`provenance(node)` gives four fields (SPEC "Provenance"):

- ``path`` — for a node ingested from a file (``metadata.kind`` "chunk" or
  "file"): the file's absolute POSIX path (scan root + relative path; only
  the relative path for chunks ingested before the root was recorded);
  None otherwise.
- ``line_start`` / ``line_end`` — the 1-based inclusive line range of a
  chunk (a file node spans 1..line_count); None for other nodes.
- ``source`` — the node's ``source`` exactly as its writer gave it (a
  scan writes the relative path; an agent writes what it wants), or None.

The retrieval *channel* (seed / bm25 / neighbor / ...) is a separate field,
``channel``, of the retrieval results; it is not provenance.
"""

from __future__ import annotations

import posixpath
from typing import Any, Final

from ..model import Node

INGESTED_KINDS: Final = ("chunk", "file")


def _line(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def provenance(node: Node) -> dict[str, Any]:
    """``{"path", "line_start", "line_end", "source"}`` of one node (module docstring).  O(1)."""
    meta = node.metadata
    rel = meta.get("path")
    if meta.get("kind") not in INGESTED_KINDS or not isinstance(rel, str) or not rel:
        return {"path": None, "line_start": None, "line_end": None, "source": node.source}
    root = meta.get("root")
    path = posixpath.join(root, rel) if isinstance(root, str) and root else rel
    start: int | None
    end: int | None
    if meta.get("kind") == "file":
        start, end = 1, _line(meta.get("line_count"))
    else:
        start, end = _line(meta.get("line_start")), _line(meta.get("line_end"))
    return {"path": path, "line_start": start, "line_end": end, "source": node.source}


def node_result(node: Node) -> dict[str, Any]:
    """A node's canonical JSON plus its provenance fields (for node-shaped results)."""
    return {**node.to_dict(), **provenance(node)}


def location(result: dict[str, Any]) -> str | None:
    """ "path:start-end" (or "path") of a result carrying provenance fields, else None."""
    path = result.get("path")
    if not isinstance(path, str):
        return None
    start, end = result.get("line_start"), result.get("line_end")
    if isinstance(start, int) and isinstance(end, int):
        return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"
    return path
