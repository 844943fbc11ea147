"""Category 3 — conflict-aware consolidation (seed 004, GraphMemBench Phase 1): 8 scenarios.

Stage 4.5 of consolidation finds pairs of statements about the same thing
(similarity >= 0.85, not duplicates) whose confidences diverge (gap >= 0.3),
settles them by evidence, then recency, and marks the rest as mutual
contradictions with an attention item; stage 5 still merges true duplicates.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..learning.beliefs import REVISION_CONFIDENCE_FACTOR
from ..learning.conflicts import conflicts_among
from ..learning.consolidation_config import DEFAULT_CONFIG
from ..model import format_time, parse_time
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 3
CLOSE = 1e-9
# Pairs measured with the hashing embedder: similarity in [0.85, 0.95).
WIFI = (
    "The office wifi password rotates every month",
    "The office wifi password rotates every week",
)
OWNER = ("Alice is the owner of the billing service", "Bob is the owner of the billing service")
PYTHON = ("The deploy uses Python 3.11", "The deploy uses Python 3.12")
FILLER = (
    "The cafeteria serves lunch from noon",
    "Turbine T1 is inspected every spring",
    "The parking garage closes at 22:00",
)


def _store(graph: Graphonomous, content: str, confidence: float) -> str:
    node_id: str = graph.store_node(content, confidence=confidence)["node"]["id"]
    return node_id


def _age(graph: Graphonomous, node_id: str, days: float) -> None:
    """Pretend a node was created `days` ago (test setup: the facade always stamps now)."""
    node = graph.store.require_node(node_id)
    stamp = format_time(parse_time(node.created_at) - timedelta(days=days))
    graph.store.update_node(node_id, created_at=stamp, updated_at=stamp)


def _node(graph: Graphonomous, node_id: str) -> dict[str, Any]:
    node: dict[str, Any] = graph.get_node(node_id)["node"]
    return node


def _stage(entry: dict[str, Any], name: str) -> dict[str, Any]:
    stage: dict[str, Any] = next(s for s in entry["stages"] if s["name"] == name)
    return stage


def _contradicts_both_ways(graph: Graphonomous, a: str, b: str) -> bool:
    pairs = {(e.source_id, e.target_id) for e in graph.store.edges_of(a, "both", "contradicts")}
    return pairs == {(a, b), (b, a)}


@scenario(CATEGORY, "High-similarity, divergent-confidence pair tagged during retrieval")
def tagged_in_retrieval(graph: Graphonomous) -> tuple[bool, str]:
    sure = _store(graph, WIFI[0], 0.9)
    doubtful = _store(graph, WIFI[1], 0.4)
    for text in FILLER:
        _store(graph, text, 0.8)
    result = graph.retrieve_context("how often does the office wifi password rotate", limit=5)
    returned = [r["node_id"] for r in result["results"]]
    tags = conflicts_among(graph.engine, returned, DEFAULT_CONFIG)
    ok = [t["node_ids"] for t in tags] == [sorted([sure, doubtful])]
    detail = f"returned={len(returned)}, tagged={[t['similarity'] for t in tags]}"
    return ok, detail


@scenario(CATEGORY, "Conflict resolved by temporal heuristic (newer wins)")
def newer_wins(graph: Graphonomous) -> tuple[bool, str]:
    old = _store(graph, OWNER[0], 0.9)
    new = _store(graph, OWNER[1], 0.4)
    _age(graph, old, 2.0)
    entry = graph.run_consolidation()
    stage = _stage(entry, "resolve_conflicts")
    loser = _node(graph, old)
    supersedes = [e for e in graph.store.edges_of(new, "out", "supersedes") if e.target_id == old]
    ok = (
        stage["by_strategy"] == {"recency": 1}
        and loser["superseded_by"] == new
        and bool(supersedes)
        and abs(loser["confidence"] - 0.9 * REVISION_CONFIDENCE_FACTOR) < 0.01
    )
    return ok, f"strategies={stage['by_strategy']}, old confidence={loser['confidence']:.3f}"


@scenario(CATEGORY, "Conflict resolved by evidence heuristic (more outcomes wins)")
def evidence_wins(graph: Graphonomous) -> tuple[bool, str]:
    tested = _store(graph, PYTHON[0], 0.6)
    untested = _store(graph, PYTHON[1], 0.3)
    for run in range(2):
        graph.learn_from_outcome(f"deploy-{run}", "success", 0.9, [tested])
    # Recency alone would pick the untested node: evidence is consulted first.
    _age(graph, tested, 2.0)
    before = _node(graph, tested)
    entry = graph.run_consolidation()
    stage = _stage(entry, "resolve_conflicts")
    ok = (
        before["evidence_count"] == 2
        and stage["by_strategy"] == {"evidence": 1}
        and _node(graph, untested)["superseded_by"] == tested
        and _node(graph, tested)["superseded_by"] is None
    )
    return ok, f"evidence={before['evidence_count']}, strategies={stage['by_strategy']}"


@scenario(CATEGORY, "Unresolved conflict creates contradicts edges")
def unresolved_contradicts(graph: Graphonomous) -> tuple[bool, str]:
    a = _store(graph, WIFI[0], 0.9)
    b = _store(graph, WIFI[1], 0.4)
    entry = graph.run_consolidation()
    stage = _stage(entry, "resolve_conflicts")
    both_live = (
        _node(graph, a)["superseded_by"] is None and _node(graph, b)["superseded_by"] is None
    )
    ok = stage["unresolved"] == 1 and _contradicts_both_ways(graph, a, b) and both_live
    mutual = _contradicts_both_ways(graph, a, b)
    return ok, f"unresolved={stage['unresolved']}, mutual contradicts={mutual}"


@scenario(CATEGORY, "Unresolved conflict escalates to attention")
def unresolved_attention(graph: Graphonomous) -> tuple[bool, str]:
    a = _store(graph, OWNER[0], 0.9)
    b = _store(graph, OWNER[1], 0.4)
    graph.run_consolidation()
    survey = graph.attention_survey()
    items = [i for i in survey["open_items"] if set(i["subject_ids"]) == {a, b}]
    cycle = graph.attention_run_cycle("advise", budget=10)
    recommended = [
        x
        for x in cycle["actions"]
        if x["action"] == "deliberate"
        and x["status"] == "recommended"
        and set(x["target"]) == {a, b}
    ]
    ok = len(items) == 1 and items[0]["kind"] == "contradiction" and len(recommended) == 1
    return ok, f"open items={len(items)}, deliberate recommended={len(recommended)}"


@scenario(CATEGORY, "Stage 4.5 runs between strengthen and merge")
def stage_order(graph: Graphonomous) -> tuple[bool, str]:
    _store(graph, WIFI[0], 0.9)
    _store(graph, WIFI[1], 0.4)
    entry = graph.run_consolidation()
    names = [s["name"] for s in entry["stages"]]
    ids = [s["stage"] for s in entry["stages"]]
    ok = (
        names.index("strengthen") + 1 == names.index("resolve_conflicts")
        and names.index("resolve_conflicts") + 1 == names.index("merge")
        and ids[names.index("resolve_conflicts")] == "4.5"
        and _stage(entry, "resolve_conflicts")["conflicts"] == 1
    )
    return ok, " → ".join(ids)


@scenario(CATEGORY, "Conflict resolution does not interfere with stage 5 merge (0.95)")
def merge_unaffected(graph: Graphonomous) -> tuple[bool, str]:
    first = _store(graph, "Error E-47 indicates hydraulic pressure loss", 0.9)
    copy = _store(graph, "Error E-47 indicates hydraulic pressure loss.", 0.5)
    a = _store(graph, OWNER[0], 0.9)
    b = _store(graph, OWNER[1], 0.4)
    entry = graph.run_consolidation()
    merge = _stage(entry, "merge")
    conflicts = _stage(entry, "resolve_conflicts")
    live = set(graph.store.node_ids())
    ok = (
        merge["nodes_merged"] == 1
        and first in live
        and copy not in live
        and {a, b} <= live
        and conflicts["conflicts"] == 1
        and _node(graph, first)["confidence"] >= 0.9 * (1 - 0.01)
    )
    return ok, f"merged={merge['nodes_merged']}, conflicts={conflicts['conflicts']}"


@scenario(CATEGORY, "Multiple conflicts in one consolidation cycle")
def several_conflicts(graph: Graphonomous) -> tuple[bool, str]:
    pairs = [(_store(graph, x, 0.9), _store(graph, y, 0.4)) for x, y in (WIFI, OWNER, PYTHON)]
    _age(graph, pairs[0][0], 2.0)  # the first pair is settled by recency, the others are not
    entry = graph.run_consolidation()
    stage = _stage(entry, "resolve_conflicts")
    settled = _node(graph, pairs[0][0])["superseded_by"] == pairs[0][1]
    contradicted = all(_contradicts_both_ways(graph, a, b) for a, b in pairs[1:])
    ok = stage["conflicts"] == 3 and stage["resolved"] == 1 and stage["unresolved"] == 2
    ok = ok and settled and contradicted
    counts = {k: stage[k] for k in ("conflicts", "resolved", "unresolved")}
    return ok, ", ".join(f"{k}={v}" for k, v in counts.items())
