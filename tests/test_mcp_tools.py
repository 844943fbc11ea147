"""The v1 MCP tools and the resources over a real Graphonomous facade."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from graphonomous import Graphonomous, telemetry
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import RESOURCE_NOT_FOUND, Request, Response, encode
from graphonomous.mcp.machines import MACHINES
from graphonomous.mcp.resources import RECENT_LIMIT
from graphonomous.mcp.server import McpServer
from graphonomous.mcp.surfaces import (
    SURFACES,
    V1_TOOLS,
    describe_tools,
    surface_instructions,
    surface_tools,
)
from graphonomous.pulse import FAIL, MANIFEST_URI, manifest_resource, validate_text
from graphonomous.topology import analyze, build_adjacency

# Seed 003's v1 tool names; analyze_topology is seed 000's name for topology_analyze.
SEED_003_V1_TOOLS = {
    "store_node",
    "store_edge",
    "delete_node",
    "manage_edge",
    "retrieve_context",
    "query_graph",
    "topology_analyze",
    "graph_traverse",
    "graph_stats",
    "retrieve_episodic",
    "retrieve_procedural",
    "coverage_query",
    "trace_evidence_path",
    "epistemic_frontier",
    "learn_from_outcome",
    "learn_from_feedback",
    "learn_detect_novelty",
    "learn_from_interaction",
    "belief_revise",
    "belief_contradictions",
    "manage_goal",
    "review_goal",
    "deliberate",
    "attention_survey",
    "attention_run_cycle",
    "forget_node",
    "forget_by_policy",
    "gdpr_erase",
    "run_consolidation",
}


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Graphonomous]:
    with Graphonomous(tmp_path / "g.db") as opened:
        yield opened


@pytest.fixture
def server(graph: Graphonomous) -> McpServer:
    return build_server(graph, "v1", check_output=True)


@pytest.fixture(autouse=True)
def clean_counters() -> Iterator[None]:
    telemetry.reset_counters()
    yield
    telemetry.reset_counters()


_counter = iter(range(1, 10**9))


def rpc(server: McpServer, method: str, params: Any = None) -> Any:
    msg_id = next(_counter)
    (reply,) = [
        m for m in server.handle(Request(msg_id, method, params)) if isinstance(m, Response)
    ]
    decoded = json.loads(encode(reply))
    assert decoded["id"] == msg_id
    return decoded


def tool(server: McpServer, name: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; checks its structuredContent against the outputSchema
    with the independent jsonschema library, as SDK clients do."""
    reply = rpc(server, "tools/call", {"name": name, "arguments": arguments})
    out = reply["result"]
    assert not out.get("isError"), out
    structured: dict[str, Any] = out["structuredContent"]
    assert json.loads(out["content"][0]["text"]) == structured
    schemas = {t["name"]: t for t in rpc(server, "tools/list")["result"]["tools"]}
    jsonschema.Draft202012Validator(schemas[name]["outputSchema"]).validate(structured)
    return structured


def tool_error(server: McpServer, name: str, **arguments: Any) -> str:
    out = rpc(server, "tools/call", {"name": name, "arguments": arguments})["result"]
    assert out["isError"] is True, out
    text: str = out["content"][0]["text"]
    return text


# -- the registry ------------------------------------------------------------------


def test_tool_names_follow_the_seeds() -> None:
    names = [spec.name for spec in V1_TOOLS]
    # Ours beyond seed 003: seed 000's analyze_topology, and restore_node (the way back
    # from a soft forget: SPEC "Retention").
    assert set(names) == SEED_003_V1_TOOLS | {"analyze_topology", "restore_node"}
    assert len(names) == len(set(names)) == 31
    for name in names:
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", name)


def test_schemas_are_valid_2020_12(server: McpServer) -> None:
    for entry in rpc(server, "tools/list")["result"]["tools"]:
        assert entry["description"] and entry["inputSchema"]["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(entry["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(entry["outputSchema"])
        assert "$ref" not in json.dumps(entry)  # self-contained for every host
        assert set(entry["annotations"]) == {
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }


def test_surfaces() -> None:
    assert surface_tools("v1") == V1_TOOLS
    assert [t.name for t in surface_tools("v2")] == [
        "retrieve",
        "route",
        "act",
        "learn",
        "consolidate",
    ]
    assert surface_tools("all") == (*SURFACES["v2"], *SURFACES["v1"], *SURFACES["memory"])
    assert set(SURFACES) == {"v1", "v2", "memory", "all"}
    with pytest.raises(ValueError, match="unknown MCP surface"):
        surface_tools("v9")


def test_default_surface_is_v2(graph: Graphonomous) -> None:
    default = build_server(graph)
    names = [t["name"] for t in rpc(default, "tools/list")["result"]["tools"]]
    assert names == [t.name for t in SURFACES["v2"]]
    assert rpc(default, "initialize")["result"]["instructions"] == surface_instructions("v2")


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_instructions_name_only_tools_of_their_surface(surface: str) -> None:
    text = surface_instructions(surface)
    own = {t.name for t in SURFACES[surface]}
    every = {t.name for t in SURFACES["all"]}
    mentioned = {name for name in every if re.search(rf"\b{name}\b", text)}
    # The v2 text names actions, some spelled like v1 tools (store_node, deliberate …).
    if surface == "v2":
        actions = {a.name for m in MACHINES for a in m.actions}
        mentioned -= actions
    assert mentioned <= own, mentioned - own
    assert own & mentioned or surface == "v2"


def test_describe_tools_covers_every_field() -> None:
    text = describe_tools()
    assert text == describe_tools()
    for spec in V1_TOOLS:
        assert f"### `{spec.name}`" in text
        for field in spec.input_schema["properties"]:
            assert f"| `{field}` |" in text
    assert "`edge_type`" in text and "`weight`" in text


# -- graph write tools --------------------------------------------------------------


def test_store_node_and_its_alias(server: McpServer) -> None:
    node = tool(server, "store_node", content="E-47 means pressure loss", type="procedural")["node"]
    assert node["node_type"] == "procedural" and node["content"] == "E-47 means pressure loss"
    node = tool(server, "store_node", content="x", node_id="n1", metadata='{"k": 1}')["node"]
    assert node["id"] == "n1" and node["metadata"] == {"k": 1}
    assert "conflicts" in tool_error(
        server, "store_node", content="x", type="goal", node_type="semantic"
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "content"),
        ({"content": ""}, "content"),
        ({"content": 5}, "content"),
        ({"content": "x", "node_type": "opinion"}, "node_type"),
        ({"content": "x", "confidence": 1.5}, "confidence"),
        ({"content": "x", "colour": "red"}, "colour"),
        ({"content": "x", "causal_parent_ids": ["nope"]}, "causal_parent_ids"),
        ({"content": " "}, "content"),
    ],
)
def test_bad_node_arguments_name_the_field(
    server: McpServer, arguments: dict[str, Any], field: str
) -> None:
    assert field in tool_error(server, "store_node", **arguments)


def test_store_edge_accepts_upstream_aliases(server: McpServer) -> None:
    for node_id in ("a", "b"):
        tool(server, "store_node", content=node_id, node_id=node_id)
    first = tool(
        server, "store_edge", **{"from": "a", "to": "b", "edge_type": "causes", "weight": 0.9}
    )
    assert first["created"] is True
    assert first["edge"]["relationship"] == "causes" and first["edge"]["strength"] == 0.9
    again = tool(server, "store_edge", source_id="a", target_id="b", relationship="causes")
    assert again["created"] is False and again["edge"]["id"] == first["edge"]["id"]
    assert "source_id" in tool_error(server, "store_edge", target_id="b")
    assert "edge_type" in tool_error(
        server, "store_edge", source_id="a", target_id="b", edge_type="x"
    )
    assert "target_id" in tool_error(server, "store_edge", source_id="a", target_id="zzz")


def test_manage_edge_and_delete_node(server: McpServer) -> None:
    for node_id in ("a", "b"):
        tool(server, "store_node", content=node_id, node_id=node_id)
    edge = tool(server, "store_edge", source_id="a", target_id="b", relationship="supports")["edge"]
    assert tool(server, "manage_edge", action="get", edge_id=edge["id"])["edge"] == edge
    listed = tool(server, "manage_edge", action="list", node_id="a", direction="out")
    assert listed["count"] == 1
    updated = tool(
        server,
        "manage_edge",
        action="update",
        source="a",
        target="b",
        relationship="supports",
        strength=0.7,
    )
    assert updated["edge"]["strength"] == 0.7
    assert "edge not found" in tool_error(server, "manage_edge", action="get", edge_id="nope")
    assert "action" in tool_error(server, "manage_edge", action="explode")
    assert tool(server, "delete_node", node_id="a") == {
        "deleted": True,
        "node_id": "a",
        "edges_removed": 1,
    }
    assert "not found" in tool_error(server, "delete_node", node_id="a")


# -- read tools -----------------------------------------------------------------------


def test_query_graph_operations(server: McpServer) -> None:
    for node_id, text in (("a", "valve pressure loss"), ("b", "pump restart procedure")):
        tool(server, "store_node", content=text, node_id=node_id)
    tool(server, "store_edge", source_id="a", target_id="b", relationship="resolves")
    listed = tool(server, "query_graph", operation="list_nodes", limit=1)
    assert listed["operation"] == "list_nodes" and listed["count"] == 1 and listed["total"] == 2
    got = tool(server, "query_graph", operation="get_node", node_id="a")
    assert got["node"]["id"] == "a" and len(got["edges"]) == 1
    edges = tool(server, "query_graph", operation="get_edges", node_id="b", direction="in")
    assert [e["source_id"] for e in edges["edges"]] == ["a"]
    found = tool(
        server, "query_graph", operation="similarity_search", query="valve pressure", limit=2
    )
    assert {r["id"] for r in found["results"]} == {"a", "b"}
    assert "query" in tool_error(server, "query_graph", operation="list_nodes", query="x")
    assert "node_id" in tool_error(server, "query_graph", operation="get_node")
    assert "not found" in tool_error(server, "query_graph", operation="get_node", node_id="zz")


def test_graph_stats(server: McpServer) -> None:
    tool(server, "store_node", content="x")
    stats = tool(server, "graph_stats")
    assert stats["node_count"] == 1 and stats["edge_count"] == 0
    assert "unknown key" in tool_error(server, "graph_stats", verbose=True)


# -- topology -------------------------------------------------------------------------


def build_business_graph(server: McpServer) -> None:
    """Seed 000's example: a 4-cycle, a customer-retention loop, two facts outside."""
    ids = ["market-share", "revenue", "r-and-d", "product-quality", "customer-retention"]
    for node_id in [*ids, "founding-date", "ceo-name"]:
        tool(server, "store_node", content=node_id.replace("-", " "), node_id=node_id)
    arcs = [
        ("market-share", "revenue"),
        ("revenue", "r-and-d"),
        ("r-and-d", "product-quality"),
        ("product-quality", "market-share"),
        ("product-quality", "customer-retention"),
        ("customer-retention", "market-share"),
    ]
    for source, target in arcs:
        tool(server, "store_edge", source_id=source, target_id=target, relationship="causes")
    tool(
        server,
        "store_edge",
        source_id="ceo-name",
        target_id="founding-date",
        relationship="related",
    )


@pytest.mark.parametrize("name", ["topology_analyze", "analyze_topology"])
def test_topology_of_the_whole_graph(server: McpServer, graph: Graphonomous, name: str) -> None:
    build_business_graph(server)
    out = tool(server, name)
    assert out["routing"] == "deliberate" and out["scc_count"] == 1 and out["max_kappa"] == 1
    (scc,) = out["sccs"]
    assert scc["nodes"] == sorted(
        ["market-share", "revenue", "r-and-d", "product-quality", "customer-retention"]
    )
    assert out["dag_nodes"] == ["ceo-name", "founding-date"]
    universe = graph.store.node_ids()
    expected = analyze(build_adjacency(universe, graph.store.list_edges_between(universe)))
    assert {k: v for k, v in out.items() if k != "recommendation"} == expected
    text = out["recommendation"]
    assert "1 strongly connected component with κ=1" in text
    fault = scc["fault_line_edges"][0]
    assert f"{fault['source']}→{fault['target']}" in text
    assert telemetry.counters()["routing"]["analyze_topology"]["deliberate"] >= 1


def test_topology_of_chosen_nodes_and_of_a_query(server: McpServer) -> None:
    build_business_graph(server)
    chain = tool(server, "topology_analyze", node_ids=["market-share", "revenue", "revenue"])
    assert chain["routing"] == "fast" and chain["sccs"] == []
    assert chain["dag_nodes"] == ["market-share", "revenue"]
    assert "no feedback loops (κ=0)" in chain["recommendation"]
    empty = tool(server, "topology_analyze", node_ids=[])
    assert empty["dag_nodes"] == [] and empty["routing"] == "fast"
    queried = tool(server, "topology_analyze", query="ceo name", limit=1)
    assert len(queried["dag_nodes"]) == 1
    both = tool(server, "topology_analyze", node_ids=["founding-date"], query="ceo name", limit=1)
    assert "founding-date" in both["dag_nodes"]
    assert "nope" in tool_error(server, "topology_analyze", node_ids=["revenue", "nope"])
    assert "node_ids" in tool_error(server, "topology_analyze", node_ids="revenue")


def test_topology_of_an_empty_graph(server: McpServer) -> None:
    out = tool(server, "analyze_topology")
    assert out["sccs"] == [] and out["routing"] == "fast" and out["max_kappa"] == 0


# -- resources ------------------------------------------------------------------------


def read(server: McpServer, uri: str) -> Any:
    (content,) = rpc(server, "resources/read", {"uri": uri})["result"]["contents"]
    assert content["uri"] == uri and content["mimeType"] == "application/json"
    return json.loads(content["text"])


def test_resource_registry(server: McpServer) -> None:
    uris = [r["uri"] for r in rpc(server, "resources/list")["result"]["resources"]]
    assert uris == [
        "graphonomous://runtime/health",
        "graphonomous://goals/snapshot",
        "graphonomous://graph/recent",
        "graphonomous://consolidation/log",
        "graphonomous://pulse/manifest",
        "graphonomous://graph/metrics",
    ]
    templates = rpc(server, "resources/templates/list")["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["graphonomous://graph/node/{id}"]


def test_health_resource(server: McpServer) -> None:
    tool(server, "store_node", content="x")
    tool(server, "analyze_topology")
    health = read(server, "graphonomous://runtime/health")
    assert health["status"] == "ok" and health["server"]["name"] == "graphonomous"
    assert health["counts"]["node_count"] == 1 and health["uptime_seconds"] >= 0
    assert health["telemetry"]["routing"]["analyze_topology"] == {"fast": 1}


def test_node_resource(server: McpServer) -> None:
    tool(server, "store_node", content="a", node_id="a/1")
    tool(server, "store_node", content="b", node_id="b")
    tool(server, "store_edge", source_id="a/1", target_id="b")
    node = read(server, "graphonomous://graph/node/a%2F1")
    assert node["node"]["id"] == "a/1" and len(node["edges"]) == 1
    missing = rpc(server, "resources/read", {"uri": "graphonomous://graph/node/nope"})
    assert missing["error"]["code"] == RESOURCE_NOT_FOUND


def test_recent_resource(server: McpServer, graph: Graphonomous) -> None:
    ids = [
        tool(server, "store_node", content=f"n{i}")["node"]["id"] for i in range(RECENT_LIMIT + 3)
    ]
    recent = read(server, "graphonomous://graph/recent")
    assert recent["count"] == RECENT_LIMIT
    assert [n["id"] for n in recent["nodes"]] == ids[::-1][:RECENT_LIMIT]
    # Touch the oldest node: it becomes the most recent.
    graph.store.update_node(ids[0], last_accessed_at="9999-01-01T00:00:00.000Z")
    assert read(server, "graphonomous://graph/recent")["nodes"][0]["id"] == ids[0]


def test_metrics_resource(server: McpServer) -> None:
    for name in ("a", "b", "c"):
        tool(server, "store_node", content=name, node_id=name)
    tool(server, "store_edge", source_id="a", target_id="b")
    metrics = read(server, "graphonomous://graph/metrics")
    assert metrics["node_count"] == 3 and metrics["component_count"] == 2
    assert metrics["isolated_count"] == 1 and metrics["algebraic_connectivity"] == 0.0
    assert metrics["components"][0]["algebraic_connectivity"] == pytest.approx(2.0)


def test_goals_snapshot_resource(server: McpServer, graph: Graphonomous) -> None:
    assert read(server, "graphonomous://goals/snapshot") == graph.goals_snapshot()
    goal = tool(server, "manage_goal", action="create", title="Keep pump P-3 running")["goal"]
    snapshot = read(server, "graphonomous://goals/snapshot")
    assert snapshot["total"] == 1 and snapshot["by_status"]["proposed"] == 1
    assert [g["id"] for g in snapshot["goals"]] == [goal["id"]]


def test_consolidation_log_resource(server: McpServer, graph: Graphonomous) -> None:
    assert read(server, "graphonomous://consolidation/log")["runs"] == []
    run = tool(server, "run_consolidation")
    log = read(server, "graphonomous://consolidation/log")
    assert [r["id"] for r in log["runs"]] == [run["id"]]
    orchestrator = log.pop("orchestrator")
    assert log == graph.consolidation_log()
    assert orchestrator == graph.plasticity_metrics()


def test_pulse_manifest_resource(server: McpServer, graph: Graphonomous) -> None:
    (content,) = rpc(server, "resources/read", {"uri": MANIFEST_URI})["result"]["contents"]
    assert content["text"] == manifest_resource(graph.db_path)
    assert validate_text(content["text"])["overall"] != FAIL


def test_health_counts_routing_decisions_of_every_entry_point(server: McpServer) -> None:
    tool(server, "store_node", content="pressure loss", node_id="a")
    tool(server, "retrieve_context", query="pressure loss")
    tool(server, "deliberate")
    routing = read(server, "graphonomous://runtime/health")["telemetry"]["routing"]
    assert set(routing) >= {"retrieve_context", "deliberate"}
