"""Consolidation stages 4.5 (conflicts) and 5 (merges), and the near-pair search."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.learning.beliefs import REVISION_CONFIDENCE_FACTOR
from graphonomous.learning.conflicts import conflicts_among, decide, is_duplicate
from graphonomous.learning.consolidator import DEFAULT_CONFIG, run_consolidation, with_config
from graphonomous.learning.similarity import changed_nodes, neighbour_pairs
from graphonomous.model import Node, format_time, parse_time
from graphonomous.records import DECAY_RATE_BY_NODE_TYPE

WIFI = (
    "The office wifi password rotates every month",
    "The office wifi password rotates every week",
)
OWNER = ("Alice is the owner of the billing service", "Bob is the owner of the billing service")


def _store(graph: Graphonomous, content: str, confidence: float, **extra: Any) -> str:
    node_id: str = graph.store_node(content, confidence=confidence, **extra)["node"]["id"]
    return node_id


def _age(graph: Graphonomous, node_id: str, days: float) -> None:
    node = graph.store.require_node(node_id)
    stamp = format_time(parse_time(node.created_at) - timedelta(days=days))
    graph.store.update_node(node_id, created_at=stamp, updated_at=stamp)


def _stage(entry: dict[str, Any], name: str) -> dict[str, Any]:
    stage: dict[str, Any] = next(s for s in entry["stages"] if s["name"] == name)
    return stage


def _node(content: str, **fields: Any) -> Node:
    return Node(id=fields.pop("id", content), node_type="semantic", content=content, **fields)


def test_decide_strategies_in_order() -> None:
    old = _node("a", evidence_count=0, created_at="2026-01-01T00:00:00.000Z", confidence=0.9)
    new = _node("b", evidence_count=2, created_at="2026-01-03T00:00:00.000Z", confidence=0.2)
    assert decide(old, new, ("evidence", "recency"), 3600)[2] == "evidence"
    assert decide(old, new, ("recency",), 3600)[:2] == (new, old)
    assert decide(old, new, ("confidence",), 3600)[:2] == (old, new)
    same_time = _node("c", created_at="2026-01-01T00:30:00.000Z", confidence=0.2)
    assert decide(old, same_time, ("evidence", "recency"), 3600) is None


def test_duplicates_need_no_contradiction_cue() -> None:
    a = _node("The maintenance window starts at 02:00 UTC")
    b = _node("The maintenance window starts at 04:00 UTC")
    c = _node("The maintenance window starts at 02:00 UTC.")
    assert not is_duplicate(0.97, a, b, 0.95)  # a different number: two claims
    assert is_duplicate(0.99, a, c, 0.95)
    assert not is_duplicate(0.9, a, c, 0.95)


def test_unresolved_conflict_gets_contradicts_edges_and_one_item(graph: Graphonomous) -> None:
    a, b = _store(graph, *WIFI[:1], 0.9), _store(graph, WIFI[1], 0.4)
    entry = graph.run_consolidation()
    stage = _stage(entry, "resolve_conflicts")
    assert (stage["conflicts"], stage["resolved"], stage["unresolved"]) == (1, 0, 1)
    edges = {(e.source_id, e.target_id) for e in graph.store.edges_of(a, "both", "contradicts")}
    assert edges == {(a, b), (b, a)}
    items = graph.attention_survey()["open_items"]
    assert [sorted(i["subject_ids"]) for i in items] == [sorted([a, b])]
    # Idempotent: the judged pair is not reconsidered, no second item.
    graph.store.update_node(a, updated_at="2999-01-01T00:00:00.000Z")
    again = _stage(graph.run_consolidation(), "resolve_conflicts")
    assert again["conflicts"] == 0
    assert len(graph.attention_survey()["open_items"]) == 1


def test_recency_resolution_supersedes_the_older(graph: Graphonomous) -> None:
    old = _store(graph, OWNER[0], 0.9)
    new = _store(graph, OWNER[1], 0.4)
    dependant = _store(graph, "Invoices are approved by the billing owner", 0.8)
    graph.store_edge(dependant, old, "derived_from")
    _age(graph, old, 3)
    entry = graph.run_consolidation()
    resolution = _stage(entry, "resolve_conflicts")["resolutions"][0]
    assert resolution["winner"] == new and resolution["strategy"] == "recency"
    loser = graph.store.require_node(old)
    assert loser.superseded_by == new
    assert loser.confidence == pytest.approx(0.9 * REVISION_CONFIDENCE_FACTOR, rel=0.02)
    assert graph.store.require_node(dependant).confidence < 0.8  # the loss propagated
    revisions = graph.revision_chain(new)["revisions"]
    assert any(r["operation"] == "consolidation_resolve" for r in revisions)


def test_a_protected_loser_is_never_superseded(graph: Graphonomous) -> None:
    old = _store(graph, OWNER[0], 0.9, pinned=True)
    new = _store(graph, OWNER[1], 0.4)
    _age(graph, old, 3)
    stage = _stage(graph.run_consolidation(), "resolve_conflicts")
    assert stage["unresolved"] == 1
    assert stage["contradictions"][0]["reason"] == "the loser is protected"
    assert graph.store.require_node(old).superseded_by is None
    assert graph.store.require_node(new).superseded_by is None


def test_merge_keeps_the_older_node_and_its_edges(graph: Graphonomous) -> None:
    first = _store(graph, "Error E-47 indicates hydraulic pressure loss", 0.6)
    copy = _store(graph, "Error E-47 indicates hydraulic pressure loss.", 0.8)
    other = _store(graph, "Hydraulic pump P4 feeds the press", 0.7)
    graph.store_edge(copy, other, "causes")
    entry = graph.run_consolidation()
    assert _stage(entry, "merge")["merges"][0]["kept"] == first
    survivor = graph.store.require_node(first)
    assert survivor.metadata["merged_from"] == [copy]
    # Decay (stage 1) runs before the merge keeps the larger confidence; the graph
    # began moments ago, so almost no decay time has elapsed (elapsed_intervals).
    rate = DECAY_RATE_BY_NODE_TYPE["semantic"]
    assert 0.8 * (1 - rate) < survivor.confidence <= 0.8
    assert [e.target_id for e in graph.store.edges_of(first, "out", "causes")] == [other]
    assert copy not in graph.vector_index() and copy not in graph.text_index()


def test_contradiction_pairs_and_protected_nodes_are_not_merged(graph: Graphonomous) -> None:
    a = _store(graph, "Error E-47 indicates hydraulic pressure loss", 0.6)
    b = _store(graph, "Error E-47 indicates hydraulic pressure loss.", 0.6)
    graph.store_edge(a, b, "contradicts")
    c = _store(graph, "Turbine T2 runs at 3000 rpm", 0.6, pinned=True)
    d = _store(graph, "Turbine T2 runs at 3000 rpm.", 0.6)
    merge = _stage(graph.run_consolidation(), "merge")
    assert merge["nodes_merged"] == 0
    assert merge["skipped_judged"] == 1 and merge["skipped_protected"] == 1
    assert {a, b, c, d} <= set(graph.store.node_ids())


def test_near_pairs_come_from_changed_nodes_only(graph: Graphonomous) -> None:
    ids = [_store(graph, text, 0.5) for text in (*WIFI, *OWNER)]
    keys, pending = changed_nodes(graph.store, None, 10)
    assert [k[1] for k in keys] == ids and pending == 0
    later, _ = changed_nodes(graph.store, keys[1], 10)
    assert [k[1] for k in later] == ids[2:]
    group = {i: ("semantic", "default") for i in ids}
    pairs = neighbour_pairs(graph.vector_index(), ids[:1], group, 3, 0.85)
    assert [(p.a, p.b) for p in pairs] == [tuple(sorted(ids[:2]))]
    assert neighbour_pairs(graph.vector_index(), ids[:1], {ids[0]: group[ids[0]]}, 3, 0.5) == []


def test_conflicts_among_retrieved_nodes(graph: Graphonomous) -> None:
    a, b = _store(graph, WIFI[0], 0.9), _store(graph, WIFI[1], 0.4)
    c = _store(graph, WIFI[1] + " on Mondays", 0.85)
    found = conflicts_among(graph.engine, [a, b, c], DEFAULT_CONFIG)
    # a–c agree in confidence (0.9 vs 0.85): no conflict.
    assert sorted(tuple(f["node_ids"]) for f in found) == sorted(
        [tuple(sorted([a, b])), tuple(sorted([b, c]))]
    )
    assert [f["similarity"] for f in found] == sorted(
        (f["similarity"] for f in found), reverse=True
    )
    assert all(f["confidence_gap"] >= DEFAULT_CONFIG.conflict_confidence_gap for f in found)


def test_confidence_strategy_when_configured(graph: Graphonomous) -> None:
    a, b = _store(graph, WIFI[0], 0.9), _store(graph, WIFI[1], 0.4)
    entry = run_consolidation(graph.engine, config=with_config(conflict_strategies=("confidence",)))
    assert _stage(entry, "resolve_conflicts")["by_strategy"] == {"confidence": 1}
    assert graph.store.require_node(b).superseded_by == a
