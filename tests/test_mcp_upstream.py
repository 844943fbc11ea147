"""A replay of upstream-style calls (../shared/design/upstream-tools.md) on the v1 and v2 surfaces.

Upstream Graphonomous' argument names and values are accepted (translated before validation,
not advertised in tools/list) and its result fields come back beside ours.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp_tool_calls import Session

from graphonomous import Graphonomous
from graphonomous.mcp.upstream import enrich_result, translate_arguments
from graphonomous.model import ValidationError


@pytest.fixture
def v1() -> Iterator[Session]:
    with Graphonomous(":memory:", embedder="hashing") as graph:
        yield Session(graph, "v1")


@pytest.fixture
def everything() -> Iterator[Session]:
    with Graphonomous(":memory:", embedder="hashing") as graph:
        yield Session(graph, "all")


def test_upstream_v1_replay(v1: Session) -> None:
    stored = v1.ok(
        "store_node",
        {"content": "Seal wear causes leaks", "node_type": "semantic", "confidence": 0.7},
    )
    assert stored["status"] == "stored" and stored["node_id"] == stored["node"]["id"]
    assert stored["node_type"] == "semantic" and stored["confidence"] == 0.7
    edge = v1.ok(
        "store_edge",
        {
            "source_id": stored["node_id"],
            "target_id": "valve",
            "edge_type": "supports",
            "weight": 0.4,
        },
    )
    assert (edge["status"], edge["edge_type"], edge["weight"]) == ("stored", "supports", 0.4)
    listed = v1.ok("manage_edge", {"operation": "list_for_node", "node_id": "valve"})
    assert edge["edge_id"] in {e["id"] for e in listed["edges"]}
    updated = v1.ok(
        "manage_edge", {"operation": "update", "edge_id": edge["edge_id"], "weight": 0.9}
    )
    assert updated["edge"]["strength"] == 0.9
    assert v1.ok("query_graph", {"operation": "get", "node_id": "valve"})["node"]["id"] == "valve"
    assert v1.ok("query_graph", {"operation": "edges", "node_id": "valve"})["count"] >= 1
    found = v1.ok("query_graph", {"operation": "retrieve_context", "query": "valve pressure"})
    assert found["results"]
    context = v1.ok("retrieve_context", {"query": "valve pressure", "limit": 5})
    assert context["status"] == "ok" and context["count"] == len(context["results"])
    walk = v1.ok(
        "graph_traverse", {"node_id": "valve", "depth": 2, "relationships": "causes,resolves"}
    )
    assert walk["root_id"] == "valve" and walk["node_count"] == len(walk["nodes"])
    assert v1.ok("graph_stats", {"include_distributions": True})["node_count"] > 0
    coverage = v1.ok(
        "coverage_query",
        {"task_description": "Fix valve V-12", "critical_topics": '["valve"]', "top_k": 5},
    )
    assert coverage["risk_score"] == coverage["risk"] and coverage["recommendation"] in (
        "act",
        "learn_first",
        "escalate",
    )
    path = v1.ok(
        "trace_evidence_path", {"from": "valve", "to": "seal", "k": 2, "bidirectional": "true"}
    )
    assert path["from"] == "valve" and path["path_count"] == len(path["paths"]) >= 1
    assert path["paths"][0]["hop_count"] == path["paths"][0]["hops"]
    outcome = v1.ok(
        "learn_from_outcome",
        {
            "action_id": "restart-1",
            "status": "success",
            "confidence": 0.8,
            "causal_node_ids": '["valve", "pump"]',
            "retrieval_trace_id": "trace-9",
        },
    )
    assert outcome["processed"] == 2 and outcome["updated"] == 2
    novelty = v1.ok("learn_detect_novelty", {"query": "quantum flux capacitors", "threshold": 0.35})
    assert novelty["novelty_score"] == novelty["novelty"]
    v1.ok("learn_from_feedback", {"node_id": "valve", "feedback": "positive"})
    v1.ok(
        "belief_revise",
        {"operation": "expand", "content": "Valves need yearly checks", "rationale": "manual"},
    )
    assert v1.ok("belief_contradictions", {"node_id": "valve"})["count"] >= 0
    goal = v1.ok(
        "manage_goal", {"operation": "create_goal", "payload": '{"title": "Reduce downtime"}'}
    )["goal"]
    assert goal["title"] == "Reduce downtime"
    assert v1.ok("manage_goal", {"operation": "list_goals"})["count"] == 2
    moved = v1.ok(
        "manage_goal", {"operation": "transition_goal", "goal_id": goal["id"], "status": "active"}
    )
    assert moved["to"] == "active"
    review = v1.ok("review_goal", {"goal_id": goal["id"], "apply_decision": False})
    assert review["applied"] is False
    v1.ok("attention_run_cycle", {"autonomy_override": "observe"})
    forgotten = v1.ok("forget_node", {"node_id": "victim-0", "mode": "soft", "reason": "scratch"})
    assert forgotten["status"] == "ok"
    erased = v1.ok("gdpr_erase", {"node_id": "victim-1"})
    assert erased["erased"] is True and erased["status"] in ("scrubbed", "pending")
    v1.ok("retrieve_procedural", {"task": "restart pump", "preconditions": '["valve closed"]'})


def test_upstream_v2_replay(everything: Session) -> None:
    s = everything
    stored = s.ok("act", {"action": " Store_Node ", "content": "Gaskets age in heat"})
    assert stored["status"] == "stored"
    listed = s.ok(
        "act", {"action": "manage_edge", "edge_operation": "list_for_node", "node_id": "valve"}
    )
    assert listed["count"] >= 1
    goal = s.ok(
        "act",
        {"action": "manage_goal", "goal_operation": "create_goal", "payload": {"title": "T2"}},
    )
    assert goal["goal"]["title"] == "T2"
    assert (
        s.ok("retrieve", {"action": "procedural", "query": "restart pump"})["task"]
        == "restart pump"
    )
    assert s.ok("retrieve", {"action": "coverage", "query": "valve seal"})["task"] == "valve seal"
    trace = s.ok(
        "retrieve", {"action": "trace_evidence", "source_id": "valve", "target_id": "seal"}
    )
    assert trace["path_count"] >= 1
    s.ok("learn", {"action": "from_feedback", "node_id": "valve", "feedback_type": "positive"})
    assert "novelty_score" in s.ok(
        "learn", {"action": "detect_novelty", "content": "odd new thing"}
    )
    s.ok("learn", {"action": "contradictions", "query": "Valve V-12 never loses pressure"})
    walk = s.ok("consolidate", {"action": "traverse", "start_id": "valve", "depth": 1})
    assert walk["root_id"] == "valve"
    erased = s.ok("act", {"action": "gdpr_erase", "entity": "victim-2"})
    assert erased["erased"] is True and erased["status"] in ("scrubbed", "pending")


def test_conflicting_alias_is_an_error_naming_it(v1: Session) -> None:
    text = v1.error("trace_evidence_path", {"from": "valve", "from_id": "seal", "to": "pump"})
    assert "'from'" in text
    text = v1.error("manage_goal", {"operation": "create_goal", "payload": "[1]"})
    assert "payload" in text


def test_unsupported_upstream_arguments_are_rejected_by_name(v1: Session) -> None:
    text = v1.error("trace_evidence_path", {"from": "valve", "to": "seal", "half_life_hours": 5})
    assert "half_life_hours" in text


def test_translation_tables_directly() -> None:
    assert translate_arguments("manage_edge", {"operation": "list_all"}) == {"action": "list"}
    assert translate_arguments("graph_stats", {"include_distributions": True}) == {}
    with pytest.raises(ValidationError) as info:
        translate_arguments("learn_from_outcome", {"causal_node_ids": "[oops"})
    assert info.value.field == "causal_node_ids"
    ours: dict[str, Any] = {
        "node": {"id": "n", "node_type": "goal", "confidence": 1.0},
        "status": "x",
    }
    assert enrich_result("store_node", ours)["status"] == "x"  # ours win
