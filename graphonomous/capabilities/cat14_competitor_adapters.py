"""Category 14 — competitor adapters (GraphMemBench Phase 3): 8 scenarios.

The same small corpus goes through every adapter of `adapters.py` behind one
interface (ingest, retrieve, forget, stats).  server-memory scenarios are
skipped, with the reason, when node or the package is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .adapters import (
    Adapter,
    AdapterUnavailable,
    Bm25Adapter,
    GraphonomousAdapter,
    ServerMemoryAdapter,
)
from .registry import Skip, scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 14
ITEMS = [
    ("k9", "Alarm K9 on line four means the intake filter is clogged"),
    ("spare", "A clogged intake filter is swapped using the spare kit in cabinet C"),
    ("shift", "The night shift starts at ten and ends at six"),
    ("boiler", "The boiler room door must stay closed during inspections"),
    ("coffee", "The coffee machine in hall B is descaled every Friday"),
]
LINKS = [("k9", "spare")]


def _server_memory() -> ServerMemoryAdapter:
    try:
        return ServerMemoryAdapter()
    except AdapterUnavailable as exc:
        raise Skip(str(exc)) from exc


def _top(adapter: Adapter, query: str, k: int = 3) -> list[str]:
    adapter.ingest(ITEMS, LINKS)
    return adapter.retrieve(query, k)


@scenario(CATEGORY, "Graphonomous adapter: keyword question finds its fact first")
def graphonomous_top1(graph: Graphonomous) -> tuple[bool, str]:
    found = _top(GraphonomousAdapter(graph), "when does the night shift start")
    return found[:1] == ["shift"], f"top {found}"


@scenario(CATEGORY, "BM25 baseline: keyword question finds its fact first")
def bm25_top1(graph: Graphonomous) -> tuple[bool, str]:
    found = _top(Bm25Adapter(), "when does the night shift start")
    return found[:1] == ["shift"], f"top {found}"


@scenario(CATEGORY, "Graphonomous reaches a linked fact that shares no query word; BM25 cannot")
def graph_beats_keywords(graph: Graphonomous) -> tuple[bool, str]:
    query = "what does alarm K9 on line four mean"
    ours = _top(GraphonomousAdapter(graph), query, 3)
    baseline = _top(Bm25Adapter(), query, 3)
    ok = "spare" in ours and "spare" not in baseline
    return ok, f"graphonomous {ours}, bm25 {baseline}"


@scenario(CATEGORY, "Forgetting through each adapter removes the fact from retrieval")
def forget_removes(graph: Graphonomous) -> tuple[bool, str]:
    details = []
    ok = True
    for adapter in (GraphonomousAdapter(graph), Bm25Adapter()):
        adapter.ingest(ITEMS, LINKS)
        adapter.forget("coffee")
        found = adapter.retrieve("coffee machine descaled", 5)
        ok = ok and "coffee" not in found
        details.append(f"{adapter.name}: {found}")
    return ok, "; ".join(details)


@scenario(CATEGORY, "Stats agree with what was ingested and forgotten")
def stats_agree(graph: Graphonomous) -> tuple[bool, str]:
    ours, baseline = GraphonomousAdapter(graph), Bm25Adapter()
    for adapter in (ours, baseline):
        adapter.ingest(ITEMS, LINKS)
        adapter.forget("boiler")
    a, b = ours.stats(), baseline.stats()
    ok = a["items"] == b["items"] == 4 and a["links"] == 1 and b["links_ignored"] == 1
    return ok, f"graphonomous {a}, bm25 {b}"


@scenario(CATEGORY, "server-memory adapter (MCP stdio): substring search finds an entity")
def server_memory_search(graph: Graphonomous) -> tuple[bool, str]:
    adapter = _server_memory()
    try:
        adapter.ingest(ITEMS, LINKS)
        found = adapter.retrieve("night shift", 3)
    finally:
        adapter.close()
    return found[:1] == ["shift"], f"found {found}"


@scenario(CATEGORY, "server-memory adapter: forget and stats over MCP stdio")
def server_memory_forget(graph: Graphonomous) -> tuple[bool, str]:
    adapter = _server_memory()
    try:
        adapter.ingest(ITEMS, LINKS)
        adapter.forget("k9")
        stats = adapter.stats()
        found = adapter.retrieve("intake filter", 5)
    finally:
        adapter.close()
    ok = stats["items"] == 4 and stats["links"] == 0 and "k9" not in found and "spare" in found
    return ok, f"stats {stats}, found {found}"


@scenario(CATEGORY, "server-memory has no ranking for a whole question; Graphonomous answers it")
def server_memory_vs_question(graph: Graphonomous) -> tuple[bool, str]:
    adapter = _server_memory()
    query = "when does the night shift start"
    try:
        adapter.ingest(ITEMS, LINKS)
        theirs = adapter.retrieve(query, 3)
    finally:
        adapter.close()
    ours = _top(GraphonomousAdapter(graph), query, 3)
    return ours[:1] == ["shift"] and "shift" not in theirs, f"ours {ours}, theirs {theirs}"
