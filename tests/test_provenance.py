"""Every result that leaves the process names where its knowledge came from."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.ingest import scan_directory
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response, encode
from graphonomous.mcp.server import McpServer


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    filler = "".join(
        f"Paragraph {i} talks about ordinary configuration values and defaults.\n\n"
        for i in range(800)
    )
    write(root, "big.md", "# Big guide\n\n" + filler + "The zephyrine setting is last.\n")
    write(root, "small.rst", "Small\n=====\n\nThe valve opens at noon.\n")
    return root


@pytest.fixture
def graph(tmp_path: Path, docs: Path) -> Iterator[Graphonomous]:
    with Graphonomous(tmp_path / "p.db") as opened:
        scan_directory(opened, docs)
        yield opened


def test_the_last_line_of_a_50_kb_file_is_found(graph: Graphonomous, docs: Path) -> None:
    assert (docs / "big.md").stat().st_size > 50_000
    results = graph.retrieve_context("zephyrine", limit=5)["results"]
    top = results[0]
    assert "zephyrine" in top["content"]
    lines = (docs / "big.md").read_text(encoding="utf-8").splitlines()
    assert top["path"] == (docs / "big.md").resolve().as_posix()
    assert top["line_end"] == len(lines) and top["line_start"] <= top["line_end"]
    assert top["source"] == "big.md" and top["channel"] in ("seed", "bm25")


def test_recall_json_names_file_and_lines(graph: Graphonomous, tmp_path: Path) -> None:
    graph.close()
    out = io.StringIO()
    assert main(["--db", str(tmp_path / "p.db"), "--json", "recall", "valve noon"], out=out) == 0
    results = json.loads(out.getvalue())["results"]
    assert results
    for item in results:
        assert item["path"].endswith(("small.rst", "big.md"))
        assert isinstance(item["line_start"], int) and isinstance(item["line_end"], int)
    text = io.StringIO()
    main(["--db", str(tmp_path / "p.db"), "recall", "valve noon"], out=text)
    assert "small.rst:1-4" in text.getvalue()


def test_agent_written_nodes_keep_their_own_source(graph: Graphonomous) -> None:
    graph.store_node("The pump hums at 40 Hz", source="https://example.org/pump")
    item = next(
        r for r in graph.retrieve_context("pump hums", limit=5)["results"] if "pump" in r["content"]
    )
    assert item["source"] == "https://example.org/pump"
    assert (item["path"], item["line_start"], item["line_end"]) == (None, None, None)


def _call(server: McpServer, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    (reply,) = [
        m
        for m in server.handle(Request(1, "tools/call", {"name": name, "arguments": arguments}))
        if isinstance(m, Response)
    ]
    result: dict[str, Any] = json.loads(encode(reply))["result"]
    assert not result.get("isError"), result
    return result


def test_mcp_results_carry_provenance(graph: Graphonomous) -> None:
    v2 = build_server(graph, "v2", check_output=True)
    out = _call(v2, "retrieve", {"action": "context", "query": "zephyrine", "limit": 3})
    first = out["structuredContent"]["results"][0]
    assert first["path"].endswith("big.md") and first["line_end"] > 800
    v1 = build_server(graph, "v1", check_output=True)
    hits = _call(v1, "query_graph", {"operation": "similarity_search", "query": "valve"})
    assert any(
        h["path"] and h["path"].endswith("small.rst") for h in hits["structuredContent"]["results"]
    )
    node_id = first["node_id"]
    walk = _call(v1, "graph_traverse", {"node_id": node_id, "depth": 1})
    assert all(n["path"].endswith("big.md") for n in walk["structuredContent"]["nodes"])
