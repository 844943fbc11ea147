"""The text block of a v2 tool reply: a compact rendering a model reads well.

A ``tools/call`` reply carries the full result as ``structuredContent``; its
text block need not repeat it.  For a result listing knowledge
(``{"results": [{"node_id", ...}]}``) the text is one numbered entry per
result — where it came from (``path:lines``, else the writer's ``source``),
score, retrieval channel, id, and a snippet — plus the routing line of a
retrieval with topology.  Any other result is sent as its JSON, as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ..retrieval.provenance import location

# Characters of content shown per result (the full content is structured).
SNIPPET_CHARS: Final = 240
FOOTER: Final = "(every field of every result is in structuredContent)"


def _snippet(text: object) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


def _is_listing(results: object) -> bool:
    return isinstance(results, list) and all(
        isinstance(item, Mapping) and "node_id" in item for item in results
    )


def _entry(rank: int, item: Mapping[str, Any]) -> list[str]:
    where = location(dict(item)) or item.get("source") or "(no source)"
    score = item.get("score", item.get("similarity"))
    parts = [f"{rank}. {where}"]
    if isinstance(score, (int, float)):
        parts.append(f"score {score:.3f}")
    if item.get("channel"):
        parts.append(str(item["channel"]))
    parts.append(f"id {item['node_id']}")
    return ["  ".join(parts), f"   {_snippet(item.get('content', ''))}"]


def compact_text(result: dict[str, Any]) -> str:
    """The reply text for `result` (module docstring).  O(size of the results)."""
    results = result.get("results")
    if not _is_listing(results):
        return json.dumps(result, ensure_ascii=False, allow_nan=False)
    assert isinstance(results, list)
    lines = [f"{len(results)} result(s)"]
    topology = result.get("topology")
    if isinstance(topology, Mapping) and "routing" in topology:
        lines[0] += f"; routing {topology['routing']} (max κ {topology.get('max_kappa')})"
    for rank, item in enumerate(results, 1):
        lines += _entry(rank, item)
    lines.append(FOOTER)
    return "\n".join(lines)
