"""Category 8 — multi-agent prep (GraphMemBench Phase 2): 8 scenarios.

Seed 003 v0.3 "Multi-agent schema prep": an ``agent_id`` on nodes and edges
(default ``"default"``) with filter support, and no behavioural change for a
caller that never names an agent.  Several processes on one database are
normal (COMMON product rules), so two connections to one file are too.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..mcp import build_server
from ..mcp.jsonrpc import Request, Response, encode
from ..model import ValidationError
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 8
DEFAULT_AGENT = "default"  # seed 003: the column's default value


def _ids(results: list[dict[str, Any]], key: str = "node_id") -> list[str]:
    return [r[key] for r in results]


@scenario(CATEGORY, "A node and an edge stored without an agent belong to 'default'")
def default_agent(graph: Graphonomous) -> tuple[bool, str]:
    a = graph.store_node("Boiler pressure is logged hourly")["node"]
    b = graph.store_node("Hourly logs are archived weekly")["node"]
    edge = graph.store_edge(a["id"], b["id"], "related")["edge"]
    ok = a["agent_id"] == b["agent_id"] == edge["agent_id"] == DEFAULT_AGENT
    return ok, f"node {a['agent_id']}, edge {edge['agent_id']}"


@scenario(CATEGORY, "list_nodes filters by agent_id, with totals per agent")
def list_by_agent(graph: Graphonomous) -> tuple[bool, str]:
    for i in range(3):
        graph.store_node(f"Line A batch {i} passed QA", agent_id="line-a")
    for i in range(2):
        graph.store_node(f"Line B batch {i} passed QA", agent_id="line-b")
    a = graph.list_nodes(agent_id="line-a")
    b = graph.list_nodes(agent_id="line-b")
    every = graph.list_nodes()
    ok = (
        a["total"] == 3
        and b["total"] == 2
        and every["total"] == 5
        and {n["agent_id"] for n in a["nodes"]} == {"line-a"}
    )
    return ok, f"line-a {a['total']}, line-b {b['total']}, all {every['total']}"


@scenario(CATEGORY, "retrieve_context with agent_id never returns another agent's node")
def retrieval_isolated(graph: Graphonomous) -> tuple[bool, str]:
    mine = graph.store_node("Oven 3 runs at 180 degrees", agent_id="line-a")["node"]["id"]
    theirs = graph.store_node("Oven 3 runs at 200 degrees", agent_id="line-b")["node"]["id"]
    graph.store_edge(mine, theirs, "related", strength=0.9)
    found = _ids(graph.retrieve_context("oven 3 runs at 200 degrees", agent_id="line-a")["results"])
    unscoped = _ids(graph.retrieve_context("oven 3 runs at 200 degrees")["results"])
    ok = mine in found and theirs not in found and theirs in unscoped
    return ok, f"scoped {len(found)} results (theirs: {theirs in found}), unscoped {len(unscoped)}"


@scenario(CATEGORY, "Episodic retrieval is scoped to the agent")
def episodic_scoped(graph: Graphonomous) -> tuple[bool, str]:
    a = graph.store_node("Handover: belt 2 squeaks", "episodic", agent_id="line-a")["node"]["id"]
    b = graph.store_node("Handover: oven door sticks", "episodic", agent_id="line-b")["node"]["id"]
    found_a = _ids(graph.retrieve_episodic(agent_id="line-a")["results"], "id")
    every = _ids(graph.retrieve_episodic()["results"], "id")
    ok = found_a == [a] and set(every) == {a, b}
    return ok, f"line-a {len(found_a)}, all {len(every)}"


@scenario(CATEGORY, "An edge records the agent that asserted it")
def edge_agent(graph: Graphonomous) -> tuple[bool, str]:
    a = graph.store_node("Filter F1 clogs in summer", agent_id="line-a")["node"]["id"]
    b = graph.store_node("Summer dust load is high", agent_id="line-a")["node"]["id"]
    graph.store_edge(a, b, "derived_from", agent_id="line-a")
    edges = graph.get_node(a)["edges"]
    agents = sorted(e["agent_id"] for e in edges)
    return agents == ["line-a"], f"edge agents {agents}"


@scenario(CATEGORY, "An agent_id longer than the id limit is rejected, naming agent_id")
def bad_agent_rejected(graph: Graphonomous) -> tuple[bool, str]:
    try:
        graph.store_node("Valve V9 was replaced", agent_id="x" * 300)
    except ValidationError as exc:
        stored = graph.graph_stats()["node_count"]
        return exc.field == "agent_id" and stored == 0, f"field {exc.field}, stored {stored}"
    return False, "accepted"


@scenario(CATEGORY, "Two connections to one database file see each other's agents' writes")
def two_connections(graph: Graphonomous) -> tuple[bool, str]:
    from ..api import Graphonomous as Facade

    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "shared.db")
        first, second = Facade(path, embedder="hashing"), Facade(path, embedder="hashing")
        try:
            first.store_node("Agent A: kiln K1 cracked a tile", agent_id="agent-a")
            second.store_node("Agent B: kiln K1 tiles inspected", agent_id="agent-b")
            seen_by_first = first.list_nodes(agent_id="agent-b")["total"]
            seen_by_second = second.list_nodes(agent_id="agent-a")["total"]
            hits = second.retrieve_context("kiln K1 cracked tile", agent_id="agent-a")["results"]
        finally:
            first.close()
            second.close()
    ok = seen_by_first == 1 and seen_by_second == 1 and len(hits) == 1
    return ok, f"A sees B {seen_by_first}, B sees A {seen_by_second}, scoped hits {len(hits)}"


@scenario(CATEGORY, "Over MCP, store_node with agent_id and a scoped retrieve_context agree")
def mcp_agent_scope(graph: Graphonomous) -> tuple[bool, str]:
    server = build_server(graph, "v1")

    def call(tool: str, arguments: dict[str, Any], rid: int) -> dict[str, Any]:
        request = Request(rid, "tools/call", {"name": tool, "arguments": arguments})
        replies = [m for m in server.handle(request) if isinstance(m, Response)]
        result: dict[str, Any] = json.loads(encode(replies[0]))["result"]["structuredContent"]
        return result

    call("store_node", {"content": "Press P2 stroke is 40 mm", "agent_id": "press-a"}, 1)
    call("store_node", {"content": "Press P2 stroke is 45 mm", "agent_id": "press-b"}, 2)
    found = call("retrieve_context", {"query": "press P2 stroke", "agent_id": "press-b"}, 3)
    contents = [r["content"] for r in found["results"]]
    return contents == ["Press P2 stroke is 45 mm"], f"results {contents}"
