"""Episodic and procedural retrieval, evidence paths, traversal, query_graph, Mermaid, CLI."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous, NotFoundError, ValidationError
from graphonomous.cli import main
from graphonomous.mcp.query import query_graph
from graphonomous.model import Edge
from graphonomous.retrieval import (
    escape_label,
    extract_steps,
    match_preconditions,
    step_cost,
    to_mermaid,
)

FORGOTTEN_AT = "2026-01-01T00:00:00.000Z"


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as opened:
        yield opened


def _add(graph: Graphonomous, node_id: str, content: str, **fields: Any) -> str:
    return str(graph.store_node(content, node_id=node_id, **fields)["node"]["id"])


# -- retrieve_episodic ---------------------------------------------------------------


def test_retrieve_episodic_time_window(graph: Graphonomous) -> None:
    stamps = {"e1": "2026-01-01T10:00:00.000Z", "e2": "2026-01-02T10:00:00.000Z"}
    stamps["e3"] = "2026-01-03T10:00:00.000Z"
    for node_id in stamps:
        _add(graph, node_id, f"event {node_id}", node_type="episodic")
        graph.store.update_node(node_id, created_at=stamps[node_id])
    _add(graph, "fact", "a semantic fact")
    everything = graph.retrieve_episodic()
    assert [n["id"] for n in everything["results"]] == ["e3", "e2", "e1"]
    window = graph.retrieve_episodic(
        since="2026-01-02T00:00:00+00:00", until="2026-01-03T10:00:00Z"
    )
    assert [n["id"] for n in window["results"]] == ["e3", "e2"]
    assert window["since"] == "2026-01-02T00:00:00.000Z"
    assert graph.retrieve_episodic(since="2026-01-02T12:00:00", limit=1)["count"] == 1
    graph.store.update_node("e3", forgotten_at=FORGOTTEN_AT)
    assert [n["id"] for n in graph.retrieve_episodic()["results"]] == ["e2", "e1"]
    with pytest.raises(ValidationError, match="since"):
        graph.retrieve_episodic(since="sometime soon")
    assert graph.retrieve_episodic(since="yesterday")["since"] is not None  # a date expression
    with pytest.raises(ValidationError):
        graph.retrieve_episodic(since="2026-01-03T00:00:00Z", until="2026-01-01T00:00:00Z")


# -- retrieve_procedural ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "metadata", "steps"),
    [
        (
            "Deploy:\n1. build\n2) test\n   carefully\nStep 3: ship",
            {},
            ["build", "test carefully", "ship"],
        ),
        ("- stop the pump\n- open the valve", {}, ["stop the pump", "open the valve"]),
        (
            "1. stop the pump 2. open the valve 3. wait",
            {},
            ["stop the pump", "open the valve", "wait"],
        ),
        (
            "First drain the tank, then flush it and then refill.",
            {},
            ["drain the tank", "flush it", "refill"],
        ),
        ("Just reboot it.", {}, ["Just reboot it."]),
        ("ignored", {"steps": ["a", " b "]}, ["a", "b"]),
    ],
)
def test_extract_steps(content: str, metadata: dict[str, Any], steps: list[str]) -> None:
    assert extract_steps(content, metadata) == steps


def test_match_preconditions() -> None:
    met, unmet = match_preconditions(
        ["the pump is off", "valve accessible", "!!"], ["Pump is off now", "it is raining"]
    )
    assert met == ["the pump is off"] and unmet == ["valve accessible", "!!"]


def test_retrieve_procedural_boost_and_scope(graph: Graphonomous) -> None:
    _add(graph, "fact", "Restart the database server safely", node_type="semantic")
    _add(
        graph,
        "p_plain",
        "Restart the database server: 1. drain 2. stop 3. start",
        node_type="procedural",
    )
    _add(
        graph,
        "p_pre",
        "Restart the database server: 1. drain 2. stop 3. start",
        node_type="procedural",
        metadata={"preconditions": ["maintenance window open", "replica healthy"]},
    )
    plain = graph.retrieve_procedural("restart the database server")
    assert {r["node_id"] for r in plain["results"]} == {"p_plain", "p_pre"}
    boosted = graph.retrieve_procedural(
        "restart the database server", preconditions=["maintenance window is open"]
    )
    first = boosted["results"][0]
    assert first["node_id"] == "p_pre"
    assert first["preconditions_met"] == ["maintenance window open"]
    assert first["preconditions_unmet"] == ["replica healthy"]
    assert first["steps"] == ["drain", "stop", "start"]
    unboosted = {r["node_id"]: r["score"] for r in plain["results"]}
    assert first["score"] == pytest.approx(unboosted["p_pre"] * 1.25, abs=2e-6)
    assert graph.retrieve_procedural("")["results"] == []


# -- trace_evidence_path -----------------------------------------------------------------


def test_step_cost_formula() -> None:
    from datetime import datetime, timezone

    now = datetime(2026, 1, 11, tzinfo=timezone.utc)
    edge = Edge("e", "a", "b", "supports", strength=0.5, decay_rate=0.1)
    edge.updated_at = "2026-01-01T00:00:00.000Z"  # 10 days old: recency e^-1
    assert step_cost(edge, 0.8, now) == pytest.approx(-(-0.6931 - 0.2231 - 1.0), abs=1e-3)
    weak = Edge("w", "a", "b", "supports", strength=0.0, updated_at="2026-01-11T00:00:00.000Z")
    assert step_cost(weak, 0.0, now) == pytest.approx(-2 * __import__("math").log(0.01))


def test_trace_evidence_path_prefers_credible_chains(graph: Graphonomous) -> None:
    for node_id, confidence in (("a", 0.9), ("b", 0.9), ("c", 0.9), ("weak", 0.1), ("z", 0.9)):
        _add(graph, node_id, f"claim {node_id}", confidence=confidence)
    graph.store_edge("a", "b", "supports", strength=0.9)
    graph.store_edge("b", "z", "supports", strength=0.9)
    graph.store_edge("a", "weak", "supports", strength=0.9)
    graph.store_edge("weak", "z", "supports", strength=0.9)
    graph.store_edge("c", "a", "derived_from", strength=0.8)
    best = graph.trace_evidence_path("a", "z")
    assert best["found"] and best["paths"][0]["nodes"] == ["a", "b", "z"]
    path = best["paths"][0]
    assert path["credibility"] == pytest.approx(0.9**4, rel=1e-3)
    assert [e["forward"] for e in path["edges"]] == [True, True]
    two = graph.trace_evidence_path("a", "z", k=2)
    assert [p["nodes"] for p in two["paths"]] == [["a", "b", "z"], ["a", "weak", "z"]]
    backwards = graph.trace_evidence_path("z", "c")
    assert backwards["paths"][0]["nodes"] == ["z", "b", "a", "c"]
    assert graph.trace_evidence_path("z", "c", direction="out")["found"] is False
    assert graph.trace_evidence_path("a", "z", max_hops=1)["found"] is False
    graph.store.update_node("b", forgotten_at=FORGOTTEN_AT)
    assert graph.trace_evidence_path("a", "z")["paths"][0]["nodes"] == ["a", "weak", "z"]
    with pytest.raises(NotFoundError):
        graph.trace_evidence_path("a", "b")
    with pytest.raises(ValidationError):
        graph.trace_evidence_path("a", "z", k=0)


# -- graph_traverse ------------------------------------------------------------------------


def test_graph_traverse_depth_direction_filters(graph: Graphonomous) -> None:
    for node_id in ("r", "a", "b", "c", "d", "gone"):
        _add(graph, node_id, f"node {node_id}")
    graph.store_edge("r", "a", "causes")
    graph.store_edge("a", "b", "causes")
    graph.store_edge("c", "r", "related")
    graph.store_edge("b", "d", "causes")
    graph.store_edge("r", "gone", "causes")
    graph.store.update_node("gone", forgotten_at=FORGOTTEN_AT)
    walk = graph.graph_traverse("r", depth=2)
    assert [(n["id"], n["depth"]) for n in walk["nodes"]] == [
        ("r", 0),
        ("a", 1),
        ("c", 1),
        ("b", 2),
    ]
    assert {(e["source_id"], e["target_id"]) for e in walk["edges"]} == {
        ("r", "a"),
        ("a", "b"),
        ("c", "r"),
    }
    assert [n["id"] for n in graph.graph_traverse("r", depth=5, direction="out")["nodes"]] == [
        "r",
        "a",
        "b",
        "d",
    ]
    assert [n["id"] for n in graph.graph_traverse("r", direction="in")["nodes"]] == ["r", "c"]
    only = graph.graph_traverse("r", depth=3, relationships=["related"])
    assert [n["id"] for n in only["nodes"]] == ["r", "c"]
    capped = graph.graph_traverse("r", depth=3, limit=2)
    assert capped["count"] == 2 and capped["truncated"] is True
    with pytest.raises(ValidationError):
        graph.graph_traverse("r", depth=6)
    with pytest.raises(NotFoundError):
        graph.graph_traverse("gone")


# -- query_graph -----------------------------------------------------------------------------


def test_query_graph_operations(graph: Graphonomous) -> None:
    _add(graph, "a", "alpha node")
    _add(graph, "b", "beta node")
    graph.store_edge("a", "b", "related")
    assert query_graph(graph, "list_nodes", limit=1)["count"] == 1
    assert query_graph(graph, "get_node", node_id="a")["node"]["id"] == "a"
    assert query_graph(graph, "get_edges", node_id="a")["count"] == 1
    found = query_graph(graph, "similarity_search", query="alpha", limit=1)
    assert found["operation"] == "similarity_search" and found["results"][0]["id"] == "a"
    with pytest.raises(ValidationError):
        query_graph(graph, "drop_table")
    with pytest.raises(ValidationError):
        query_graph(graph, "get_node", query="x")
    with pytest.raises(ValidationError):
        query_graph(graph, "get_node")


# -- Mermaid ---------------------------------------------------------------------------------

_LABEL = r'\["[^"\[\]<>\n]*"\]'
_STATEMENT = re.compile(
    "^(?:"
    + "|".join(
        [
            "flowchart LR",
            rf"  subgraph scc\d+{_LABEL}",
            "  end",
            rf" {{2,4}}n\d+{_LABEL}",
            r"  n\d+ (?:-->|---)\|[a-z_]+\| n\d+",
            r"  linkStyle \d+(?:,\d+)* stroke:#d62728,stroke-width:3px",
        ]
    )
    + ")$"
)

NASTY = 'He said "hi" [x] (y) {z} <b>#1;</b> | `tick` \\ end\nsubgraph\r\n--> A'


def _mermaid_case(graph: Graphonomous) -> str:
    _add(graph, "a;b", NASTY)
    _add(graph, "c", "second node about hi")
    _add(graph, "d", "third node about hi")
    graph.store_edge("a;b", "c", "causes")
    graph.store_edge("c", "d", "causes")
    graph.store_edge("d", "a;b", "superseded_by")  # arc a;b -> d: no cycle through it
    graph.store_edge("d", "c", "depends_on")  # c <-> d: a 2-cycle
    graph.store_edge("a;b", "d", "related")
    result = graph.retrieve_context("he said hi node", effort=0)
    return graph.retrieval_mermaid(result)


def test_mermaid_is_well_formed(graph: Graphonomous) -> None:
    text = _mermaid_case(graph)
    lines = text.splitlines()
    for line in lines:
        assert _STATEMENT.match(line), line
    assert text.count("\n  subgraph ") == text.count("\n  end\n") == 1
    assert "κ=1" in text and "linkStyle" in text
    assert "a;b" not in text  # ids never reach the output
    assert "#quot;hi#quot;" in text and "#91;x#93;" in text and "#lt;b#gt;" in text


def test_escape_label() -> None:
    assert escape_label('a "b"\n<c>') == "a #quot;b#quot; #lt;c#gt;"
    assert escape_label("x" * 100).endswith("…") and len(escape_label("x" * 100)) == 60
    assert escape_label("tab\tand\x00nul") == "tab andnul"
    assert to_mermaid({"results": [], "topology": {}}) == "flowchart LR\n"


MERMAID_DIR = Path("/tmp/mermaid-check")
_CHECK_SCRIPT = """
const { createRequire } = await import("node:module");
const { pathToFileURL } = await import("node:url");
const require = createRequire(process.argv[2] + "/package.json");
const { JSDOM } = require("jsdom");
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const mermaid = (await import(pathToFileURL(require.resolve("mermaid")).href)).default;
let input = "";
for await (const chunk of process.stdin) input += chunk;
try {
  const result = await mermaid.parse(input);
  console.log(JSON.stringify({ ok: true, type: result.diagramType }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: String(err.message || err) }));
}
"""


def test_mermaid_parses_with_the_real_parser(graph: Graphonomous, tmp_path: Path) -> None:
    """Runs when node and `npm install mermaid jsdom` in /tmp/mermaid-check are present."""
    node = shutil.which("node")
    if node is None or not (MERMAID_DIR / "node_modules" / "mermaid").is_dir():
        pytest.skip("node or /tmp/mermaid-check/node_modules/{mermaid,jsdom} not installed")
    script = tmp_path / "check.mjs"
    script.write_text(_CHECK_SCRIPT, encoding="utf-8")
    text = _mermaid_case(graph)
    done = subprocess.run(
        [node, str(script), str(MERMAID_DIR)],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"ok": True, "type": "flowchart-v2"}, (report, text)


# -- CLI ---------------------------------------------------------------------------------


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out)
    return code, out.getvalue()


def test_cli_remember_and_recall(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    code, out = _cli("--db", db, "remember", "The pump lost pressure", "--id", "pump", "--json")
    assert code == 0 and json.loads(out)["node_id"] == "pump"
    code, out = _cli(
        "--db",
        db,
        "remember",
        "Error E-47 means pressure loss",
        "--link",
        "pump:causes",
        "--link",
        "pump",
    )
    assert code == 0 and out.startswith("remembered ") and "(+2 links)" in out
    code, out = _cli("--db", db, "remember", "x", "--link", "missing:causes")
    assert code != 0  # the whole batch is rejected: no node without its links
    with Graphonomous(db) as graph:
        assert graph.graph_stats()["node_count"] == 2
        assert {e["relationship"] for e in graph.get_node("pump")["edges"]} == {
            "causes",
            "related",
        }
    code, out = _cli("--db", db, "recall", "pump pressure", "--deep", "--mermaid")
    assert code == 0
    assert out.startswith("routing fast (max κ 0, 0 SCC) — effort 6:")
    assert "ppr_local" in out and "```mermaid\nflowchart LR" in out
    code, out = _cli("--db", db, "recall", "pump pressure", "--effort", "0", "--json")
    data = json.loads(out)
    assert code == 0 and data["stats"]["effort"] == 0 and "mermaid" not in data
    code, _ = _cli("--db", db, "recall", "pump", "--effort", "3", "--deep")
    assert code == 2
    code, _ = _cli("--db", db, "recall", "pump", "--effort", "12")
    assert code == 2


def test_cli_recall_shows_fault_lines(tmp_path: Path) -> None:
    db = str(tmp_path / "cycle.db")
    with Graphonomous(db) as graph:
        _add(graph, "x", "revenue funds research")
        _add(graph, "y", "research improves the product and revenue")
        graph.store_edge("x", "y", "causes")
        graph.store_edge("y", "x", "causes")
    code, out = _cli("--db", db, "recall", "revenue research")
    assert code == 0
    assert "routing deliberate (max κ 1, 1 SCC)" in out
    assert "scc-0 κ=1 fault lines: " in out
