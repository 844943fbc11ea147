"""coverage_query: relevant knowledge, topics, scores and the act / learn / escalate rule."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphonomous import Graphonomous, ValidationError
from graphonomous.learning.coverage import (
    ACT_MIN_DECISION_CONFIDENCE,
    ESCALATE_MIN_RISK,
    KAPPA_RISK,
    coverage_query,
    decide,
)

TASK = "How do I reset valve V2 after alarm E-47?"
KNOWLEDGE = (
    "To reset valve V2 close the intake, flush the line and recalibrate",
    "Alarm E-47 on valve V2 means hydraulic pressure loss",
)


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:", embedder="hashing") as opened:
        yield opened


def _know(graph: Graphonomous, confidence: float = 0.9) -> list[str]:
    return [graph.store_node(t, confidence=confidence)["node"]["id"] for t in KNOWLEDGE]


def test_empty_graph_means_learn(graph: Graphonomous) -> None:
    result = graph.coverage_query(TASK)
    assert result["relevant_nodes"] == [] and result["coverage_score"] == 0.0
    assert result["recommendation"] == "learn" and result["uncertainty"] == 1.0
    assert {g["kind"] for g in result["knowledge_gaps"]} == {"missing"}
    assert [t["topic"] for t in result["topics"]] == ["reset", "valve", "alarm"]


def test_confident_coverage_means_act(graph: Graphonomous) -> None:
    ids = _know(graph)
    graph.store_node("The cafeteria serves lunch at noon", confidence=0.9)
    result = graph.coverage_query(TASK)
    assert sorted(n["node_id"] for n in result["relevant_nodes"]) == sorted(ids)
    assert result["coverage_score"] == 1.0 and result["knowledge_gaps"] == []
    assert result["confidence_mean"] == pytest.approx(0.9)
    assert result["decision_confidence"] >= ACT_MIN_DECISION_CONFIDENCE
    assert result["recommendation"] == "act" and result["method"] == "retrieve_context"


def test_missing_critical_topic_blocks_act(graph: Graphonomous) -> None:
    _know(graph)
    result = graph.coverage_query(TASK, critical_topics=["valve", "torque settings"])
    covered = {t["topic"]: t["covered"] for t in result["topics"]}
    assert covered == {"valve": True, "torque settings": False}
    assert result["recommendation"] == "learn"
    assert {"kind": "missing", "topic": "torque settings", "critical": True} in result[
        "knowledge_gaps"
    ]


def test_doubtful_coverage_is_a_low_confidence_gap(graph: Graphonomous) -> None:
    _know(graph, confidence=0.35)
    result = graph.coverage_query(TASK)
    assert result["coverage_score"] == 1.0  # covered, but only by doubtful nodes
    assert {g["kind"] for g in result["knowledge_gaps"]} == {"low_confidence"}
    assert result["recommendation"] == "learn"


def test_contradictions_escalate(graph: Graphonomous) -> None:
    a, b = _know(graph)
    graph.store_edge(a, b, "contradicts")
    graph.store_edge(b, a, "contradicts")
    result = graph.coverage_query(TASK)
    assert result["risk"] >= ESCALATE_MIN_RISK and result["recommendation"] == "escalate"
    assert {"kind": "contradiction", "node_ids": sorted([a, b])} in result["knowledge_gaps"]
    assert result["topology"]["max_kappa"] == 1


def test_a_feedback_loop_adds_risk(graph: Graphonomous) -> None:
    a, b = _know(graph)
    graph.store_edge(a, b, "depends_on")
    graph.store_edge(b, a, "depends_on")
    result = graph.coverage_query(TASK)
    assert result["risk"] == pytest.approx(KAPPA_RISK)
    assert result["topology"]["routing"] == "deliberate"


def test_goals_and_superseded_nodes_do_not_count(graph: Graphonomous) -> None:
    graph.manage_goal("create", title=TASK)
    old = graph.store_node(KNOWLEDGE[0], confidence=0.9)["node"]["id"]
    new = graph.store_node(KNOWLEDGE[0] + " twice", confidence=0.9)["node"]["id"]
    graph.belief_revise("revise", node_id=old, new_id=new)
    result = graph.coverage_query(TASK)
    assert [n["node_id"] for n in result["relevant_nodes"]] == [new]


def test_outcome_evidence_lowers_uncertainty(graph: Graphonomous) -> None:
    ids = _know(graph)
    before = graph.coverage_query(TASK)["uncertainty"]
    for run in range(5):
        graph.learn_from_outcome(f"reset-{run}", "success", 0.9, ids)
    after = graph.coverage_query(TASK)["uncertainty"]
    assert before == 1.0 and after < 1.0


def test_similarity_path_has_no_side_effects(graph: Graphonomous) -> None:
    ids = _know(graph)
    result = coverage_query(graph, TASK, use_retrieval=False)
    assert result["method"] == "similarity_search"
    assert all(graph.store.require_node(i).access_count == 0 for i in ids)


def test_decide_rule() -> None:
    assert decide(ESCALATE_MIN_RISK, 1.0, 3, 0) == "escalate"
    assert decide(0.0, ACT_MIN_DECISION_CONFIDENCE, 3, 0) == "act"
    assert decide(0.0, 1.0, 3, 1) == "learn"
    assert decide(0.0, 1.0, 0, 0) == "learn"


def test_arguments_are_validated(graph: Graphonomous) -> None:
    with pytest.raises(ValidationError):
        graph.coverage_query("")
    with pytest.raises(ValidationError):
        graph.coverage_query(TASK, critical_topics="valve")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        graph.coverage_query(TASK, limit=0)
