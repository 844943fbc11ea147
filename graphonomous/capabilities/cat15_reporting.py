"""Category 15 — reporting (GraphMemBench Phase 3): 8 scenarios.

What the product reports must be true, complete and machine-readable:
strict JSON with snake_case keys, counts that add up, provenance on every
result, spectral metrics equal to textbook values, the v2 benchmark meeting
its issue #13 targets, and dry runs that predict the real run.
"""

from __future__ import annotations

import io
import json
import math
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cli import main
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 15
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
EXACT = 1e-9


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out)
    return code, out.getvalue()


def _bad_keys(value: Any, where: str = "$") -> list[str]:
    """Keys that are not snake_case, anywhere in a JSON document (ids as keys excepted)."""
    bad: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if not SNAKE.match(key) and not re.match(r"^[0-9a-f-]{8,}$", key):
                bad.append(f"{where}.{key}")
            bad += _bad_keys(item, f"{where}.{key}")
    elif isinstance(value, list):
        for position, item in enumerate(value):
            bad += _bad_keys(item, f"{where}[{position}]")
    return bad


def _ring_document(size: int) -> dict[str, Any]:
    nodes = [f"v{i}" for i in range(size)]
    edges = [{"source": nodes[i], "target": nodes[(i + 1) % size]} for i in range(size)]
    return {"nodes": nodes, "edges": edges}


def _metrics_of(document: dict[str, Any], backend: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        code, out = _cli("metrics", "--json", "--backend", backend, str(path))
    if code != 0:
        raise RuntimeError(f"metrics exited {code}: {out[:80]}")
    metrics: dict[str, Any] = json.loads(out)
    return metrics


@scenario(CATEGORY, "A retrieval result is strict JSON, snake_case, with provenance per result")
def retrieval_report(graph: Graphonomous) -> tuple[bool, str]:
    a = graph.store_node("Pump P1 vibration alarm", source="runbook.md")["node"]["id"]
    b = graph.store_node("Pump P1 bearing replaced in May")["node"]["id"]
    # Shares no word with the query: it can only arrive through the edge, and must say so.
    rota = graph.store_node("Night crew rota for building 7")["node"]["id"]
    graph.store_edge(a, b, "causes")
    graph.store_edge(a, rota, "related", strength=0.9)
    for i in range(4):
        graph.store_node(f"Cafeteria note {i}: soup of the day")
    result = graph.retrieve_context("pump P1 vibration alarm", limit=5)
    text = json.dumps(result, allow_nan=False)
    bad = _bad_keys(json.loads(text))
    provenance = all(
        {"channel", "hops", "via", "score", "similarity"} <= set(r) for r in result["results"]
    )
    by_id = {r["node_id"]: r for r in result["results"]}
    reached = by_id.get(rota, {})
    ok = (
        not bad
        and provenance
        and result["stats"]["returned"] == len(result["results"])
        and reached.get("hops") == 1
        and reached.get("via") == a
    )
    return ok, (
        f"non-snake keys {bad[:3]}, provenance {provenance}, "
        f"neighbour via seed {reached.get('via') == a} (hops {reached.get('hops')})"
    )


@scenario(CATEGORY, "graph_stats adds up: per-type and per-relationship counts match the totals")
def stats_add_up(graph: Graphonomous) -> tuple[bool, str]:
    ids = [graph.store_node(f"Fact {i} about the boiler")["node"]["id"] for i in range(4)]
    ids.append(graph.store_node("Bleed the radiator", "procedural")["node"]["id"])
    ids.append(graph.store_node("Boiler serviced today", "episodic")["node"]["id"])
    graph.store_edge(ids[0], ids[1], "supports")
    graph.store_edge(ids[1], ids[2], "causes")
    graph.store_edge(ids[4], ids[0], "related")
    graph.forget_node(ids[3], mode="soft")
    stats = graph.graph_stats()
    ok = (
        sum(stats["nodes_by_type"].values()) == stats["node_count"] == 5
        and sum(stats["edges_by_relationship"].values()) == stats["edge_count"] == 3
        and stats["forgotten_count"] == 1
        and stats["nodes_by_type"]["procedural"] == 1
    )
    return (
        ok,
        f"nodes {stats['node_count']}, edges {stats['edge_count']}, "
        f"forgotten {stats['forgotten_count']}",
    )


@scenario(CATEGORY, "metrics of a 6-cycle: λ₂ = 1 − cos(π/3) (a double eigenvalue), exact")
def metrics_textbook(graph: Graphonomous) -> tuple[bool, str]:
    # Normalized Laplacian of C_n: eigenvalues 1 − cos(2πk/n); k = 1 and n − 1 coincide.
    expected = 1 - math.cos(2 * math.pi / 6)
    pure = _metrics_of(_ring_document(6), "pure")
    value = pure["algebraic_connectivity"]
    ok = abs(value - expected) < EXACT and pure["component_count"] == 1
    return ok, f"λ₂ {value!r}, expected {expected!r}"


@scenario(CATEGORY, "metrics: pure and NumPy backends agree to 1e-9 on two components")
def metrics_backends_agree(graph: Graphonomous) -> tuple[bool, str]:
    ring = _ring_document(7)
    path = {
        "nodes": ["p0", "p1", "p2", "p3"],
        "edges": [
            {"source": "p0", "target": "p1"},
            {"source": "p1", "target": "p2"},
            {"source": "p2", "target": "p3"},
        ],
    }
    document = {"nodes": ring["nodes"] + path["nodes"], "edges": ring["edges"] + path["edges"]}
    pure = _metrics_of(document, "pure")
    try:
        numeric = _metrics_of(document, "numpy")
    except RuntimeError:
        numeric = None
    # Path P4: 1 − cos(π/3) = 0.5 (normalized Laplacian of P_n: 1 − cos(πk/(n−1))).
    lambdas = sorted(c["algebraic_connectivity"] for c in pure["components"])
    expected = sorted([1 - math.cos(2 * math.pi / 7), 1 - math.cos(math.pi / 3)])
    ok = all(abs(a - b) < EXACT for a, b in zip(lambdas, expected, strict=True))
    if numeric is not None:
        other = sorted(c["algebraic_connectivity"] for c in numeric["components"])
        ok = ok and all(abs(a - b) < EXACT for a, b in zip(lambdas, other, strict=True))
    return (
        ok,
        f"pure {lambdas}, numpy {'absent' if numeric is None else 'agrees' if ok else numeric}",
    )


@scenario(CATEGORY, "bench graphmembench --tier 3 --json reports its κ targets met")
def graphmembench_report(graph: Graphonomous) -> tuple[bool, str]:
    code, out = _cli("bench", "graphmembench", "--tier", "3", "--questions", "10", "--json", "-")
    start = out.index("{")
    report = json.loads(out[start:])
    tier = report["tiers"][0]
    targets = tier["targets"]
    # The κ targets only: the latency target (p50 < 50 ms) depends on the machine's load,
    # so the exit code (1 when any target is missed) is not asserted beyond "not a usage error".
    ok = (
        code in (0, 1)
        and tier["topology_on"]["kappa_recall"] == 1.0
        and tier["topology_off"]["kappa_recall"] == 0.0
        and tier["topology_on"]["false_kappa_rate"] == 0.0
        and targets["kappa_recall_one_on"] is True
        and targets["kappa_recall_zero_off"] is True
    )
    return ok, (
        f"exit {code}, on {tier['topology_on']['kappa_recall']}, "
        f"off {tier['topology_off']['kappa_recall']}"
    )


@scenario(CATEGORY, "The Mermaid view of a retrieval draws every result and the edge between")
def mermaid_report(graph: Graphonomous) -> tuple[bool, str]:
    a = graph.store_node("Pump P1 vibration alarm")["node"]["id"]
    b = graph.store_node("Pump P1 bearing replaced")["node"]["id"]
    graph.store_edge(a, b, "causes")
    result = graph.retrieve_context("pump P1 vibration bearing")
    chart = graph.retrieval_mermaid(result)
    boxes = [line for line in chart.splitlines() if '["' in line]
    arrows = [line for line in chart.splitlines() if "-->|causes|" in line]
    ok = (
        chart.startswith("flowchart")
        and len(boxes) == len(result["results"]) == 2
        and len(arrows) == 1
    )
    return ok, f"{len(boxes)} boxes, {len(arrows)} causes arrows"


@scenario(CATEGORY, "CLI stats --json reports the same counts as the facade")
def cli_stats(graph: Graphonomous) -> tuple[bool, str]:
    from ..api import Graphonomous as Facade

    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "k.db")
        facade = Facade(db, embedder="hashing")
        try:
            a = facade.store_node("Lathe L2 coolant is water based")["node"]["id"]
            b = facade.store_node("Water based coolant needs biocide", "procedural")["node"]["id"]
            facade.store_edge(a, b, "supports")
            mine = facade.graph_stats()
        finally:
            facade.close()
        code, out = _cli("--db", db, "--json", "stats")
    theirs = json.loads(out) if code == 0 else {}
    keys = ("node_count", "edge_count", "nodes_by_type", "edges_by_relationship")
    ok = code == 0 and all(theirs.get(k) == mine[k] for k in keys)
    return ok, f"exit {code}, nodes {theirs.get('node_count')}, edges {theirs.get('edge_count')}"


@scenario(CATEGORY, "A forgetting dry run predicts exactly what the real run forgets")
def dry_run_predicts(graph: Graphonomous) -> tuple[bool, str]:
    for i in range(30):
        graph.store_node(
            f"Daily reading {i}: tank level {40 + i} percent", confidence=0.3 + i / 100
        )
    before = graph.graph_stats()["node_count"]
    plan = graph.forget_by_policy(policy="hybrid", max_nodes=20, dry_run=True)
    unchanged = graph.graph_stats()["node_count"] == before
    done = graph.forget_by_policy(policy="hybrid", max_nodes=20)
    # The dry run's candidates are its prediction (its `forgotten` is empty by contract).
    planned = sorted(entry["node_id"] for entry in plan["candidates"])
    actual = sorted(done["forgotten"])
    reasons = all(entry["reason"] for entry in plan["candidates"])
    ok = (
        unchanged
        and plan["forgotten"] == []
        and planned == actual
        and len(actual) == 10
        and reasons
    )
    return (
        ok,
        f"dry run left {before} nodes: {unchanged}; planned {len(planned)}, forgot {len(actual)}",
    )
