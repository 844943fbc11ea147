"""Category 9 — integration (GraphMemBench Phase 2): 8 scenarios.

The subsystems working together through the surfaces clients use: the MCP
server (v1 tools, v2 machines, resources), the CLI, ingestion and the JSONL
export/batch round trip.  Each scenario crosses at least two modules.
"""

from __future__ import annotations

import io
import itertools
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cli import main
from ..ingest import scan_directory
from ..mcp import build_server
from ..mcp.jsonrpc import Request, Response, encode
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous
    from ..mcp.server import McpServer as Server

CATEGORY = 9


def _rpc(server: Server, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC exchange, the reply as the client would parse it."""
    replies = [m for m in server.handle(Request(1, method, params)) if isinstance(m, Response)]
    reply: dict[str, Any] = json.loads(encode(replies[0]))
    return reply


def _call(server: Server, tool: str, **arguments: Any) -> dict[str, Any]:
    result = _rpc(server, "tools/call", {"name": tool, "arguments": arguments})["result"]
    if result.get("isError"):
        raise RuntimeError(result["content"][0]["text"])
    structured: dict[str, Any] = result["structuredContent"]
    return structured


def _resource(server: Server, uri: str) -> dict[str, Any]:
    contents = _rpc(server, "resources/read", {"uri": uri})["result"]["contents"]
    document: dict[str, Any] = json.loads(contents[0]["text"])
    return document


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out)
    return code, out.getvalue()


@scenario(CATEGORY, "MCP loop: store, retrieve, learn from outcome, retrieve again — rank moves")
def mcp_learning_loop(graph: Graphonomous) -> tuple[bool, str]:
    server = build_server(graph, "v1")
    texts = [
        "Clear the feeder jam by reversing the auger",
        "Clear the feeder jam by opening the side hatch",
        "Clear the feeder jam by lowering the feed rate",
    ]
    ids = [_call(server, "store_node", content=t, node_type="procedural")["node_id"] for t in texts]
    query = "how to clear the feeder jam"
    before = [r["node_id"] for r in _call(server, "retrieve_context", query=query)["results"]]
    last = before[-1] if before else ids[-1]
    for i in range(3):
        _call(
            server,
            "learn_from_outcome",
            action_id=f"jam-{i}",
            status="success",
            confidence=0.9,
            causal_node_ids=[last],
        )
    after = [r["node_id"] for r in _call(server, "retrieve_context", query=query)["results"]]
    ok = set(ids) <= set(before) and after.index(last) < before.index(last)
    return ok, f"rank of the rewarded procedure {before.index(last) + 1} → {after.index(last) + 1}"


@scenario(CATEGORY, "MCP errors: bad argument names its field; unknown tool is -32602")
def mcp_errors(graph: Graphonomous) -> tuple[bool, str]:
    server = build_server(graph, "v1")
    bad = _rpc(server, "tools/call", {"name": "store_node", "arguments": {"content": 5}})
    unknown = _rpc(server, "tools/call", {"name": "no_such_tool", "arguments": {}})
    text = bad["result"]["content"][0]["text"] if bad["result"].get("isError") else ""
    ok = "content" in text and unknown.get("error", {}).get("code") == -32602
    return (
        ok,
        f"bad: {text.splitlines()[-1] if text else 'accepted'}; unknown: {unknown.get('error')}",
    )


@scenario(CATEGORY, "The v2 machines run the same tools: retrieve finds what act stored")
def v2_machines(graph: Graphonomous) -> tuple[bool, str]:
    server = build_server(graph, "v2")
    stored = _call(server, "act", action="store_node", content="Kiln K4 fires at 1200 C")
    found = _call(server, "retrieve", action="context", query="kiln K4 firing temperature")
    ids = [r["node_id"] for r in found["results"]]
    return ids[:1] == [stored["node_id"]], f"stored {stored['node_id'][:8]}, retrieved {ids[:1]}"


@scenario(CATEGORY, "Consolidation through MCP shows up in the consolidation log resource")
def consolidation_log_resource(graph: Graphonomous) -> tuple[bool, str]:
    server = build_server(graph, "v1")
    for i in range(3):
        _call(server, "store_node", content=f"Compressor C{i} was serviced in May")
    run = _call(server, "run_consolidation")
    log = _resource(server, "graphonomous://consolidation/log")
    runs = log.get("runs", [])
    latest = runs[0] if runs else {}
    created = log.get("orchestrator", {}).get("nodes_created")
    ok = bool(runs) and run.get("id") is not None and latest.get("id") == run["id"] and created == 3
    return ok, f"{len(runs)} logged runs, orchestrator nodes_created {created}"


@scenario(CATEGORY, "The graph metrics resource separates two components")
def metrics_resource(graph: Graphonomous) -> tuple[bool, str]:
    server = build_server(graph, "v1")
    groups = [[f"Zone {z} sensor {i} reads the hall temperature" for i in range(3)] for z in "AB"]
    for group in groups:
        ids = [graph.store_node(text)["node"]["id"] for text in group]
        for a, b in itertools.pairwise(ids):
            graph.store_edge(a, b, "related")
    metrics = _resource(server, "graphonomous://graph/metrics")
    sizes = [c["nodes"] for c in metrics["components"]]
    lambdas = [c["algebraic_connectivity"] for c in metrics["components"]]
    # Textbook values: the normalized Laplacian of a 3-node path has spectrum {0, 1, 2};
    # two equal disconnected paths split into two communities with Q = 2·(1/2 − 1/4).
    ok = (
        sizes == [3, 3]
        and all(abs(value - 1.0) < 1e-9 for value in lambdas)
        and abs(metrics["modularity"] - 0.5) < 1e-9
    )
    return ok, f"components {sizes}, λ₂ {lambdas}, Q {metrics['modularity']}"


@scenario(CATEGORY, "A scanned folder answers a question with the file and lines it came from")
def scan_then_retrieve(graph: Graphonomous) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "runbook.md").write_text(
            "# Runbook\n\n## Chiller\nIf chiller C2 trips, reset the breaker in panel 7.\n",
            encoding="utf-8",
        )
        Path(folder, "menu.md").write_text("# Menu\n\nSoup on Mondays.\n", encoding="utf-8")
        summary = scan_directory(graph, folder)
    top = graph.retrieve_context("what to do when chiller C2 trips", limit=1)["results"]
    hit = top[0] if top else {}
    ok = (
        summary.ingested == 2
        and str(hit.get("path")).endswith("runbook.md")
        and isinstance(hit.get("line_start"), int)
        and "panel 7" in hit.get("content", "")
    )
    return ok, f"top {hit.get('path')}:{hit.get('line_start')}"


@scenario(CATEGORY, "CLI: remember then recall on one database file")
def cli_remember_recall(graph: Graphonomous) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "k.db")
        code_a, out_a = _cli("--db", db, "--json", "remember", "Dryer D1 filter is cleaned daily")
        code_b, out_b = _cli("--db", db, "--json", "recall", "how often is the D1 filter cleaned")
    node_id = json.loads(out_a)["node_id"] if code_a == 0 else None
    results = json.loads(out_b)["results"] if code_b == 0 else []
    ok = node_id is not None and [r["node_id"] for r in results][:1] == [node_id]
    return ok, f"exit {code_a}/{code_b}, recalled {len(results)}"


@scenario(CATEGORY, "Export → import into a new database reproduces nodes and edges")
def export_import_round_trip(graph: Graphonomous) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as folder:
        source, target = str(Path(folder) / "a.db"), str(Path(folder) / "b.db")
        from ..api import Graphonomous as Facade

        original = Facade(source, embedder="hashing")
        for text in ("Mixer M1 blade is steel", "Steel blades wear slowly"):
            original.store_node(text)
        ids = [n["id"] for n in original.list_nodes()["nodes"]]
        original.store_edge(ids[0], ids[1], "supports", strength=0.6)
        original.close()
        code, dump = _cli("--db", source, "export")
        path = Path(folder) / "dump.jsonl"
        path.write_text(dump, encoding="utf-8")
        code_b, _ = _cli("--db", target, "import", str(path))
        copy = Facade(target, embedder="hashing")
        try:
            nodes = sorted(n["content"] for n in copy.list_nodes()["nodes"])
            edges = copy.get_node(ids[0])["edges"]
        finally:
            copy.close()
    ok = (
        code == code_b == 0
        and nodes == ["Mixer M1 blade is steel", "Steel blades wear slowly"]
        and [(e["relationship"], e["strength"]) for e in edges] == [("supports", 0.6)]
    )
    return ok, f"exit {code}/{code_b}, nodes {len(nodes)}, edges {len(edges)}"
