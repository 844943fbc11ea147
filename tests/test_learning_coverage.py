"""coverage_query: relevant knowledge, topics, scores and the act / learn / escalate rule."""

from __future__ import annotations

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


def _know(graph: Graphonomous, confidence: float = 0.9) -> list[str]:
    return [graph.store_node(t, confidence=confidence)["node"]["id"] for t in KNOWLEDGE]


def test_empty_graph_means_learn(graph: Graphonomous) -> None:
    result = graph.coverage_query(TASK)
    assert result["relevant_nodes"] == [] and result["coverage_score"] == 0.0
    assert result["recommendation"] == "learn_first" and result["uncertainty"] == 1.0
    assert {g["kind"] for g in result["knowledge_gaps"]} == {"missing"}
    assert [t["topic"] for t in result["topics"]] == ["reset", "valve", "V2", "alarm", "E-47"]


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
    assert result["recommendation"] == "learn_first"
    assert {"kind": "missing", "topic": "torque settings", "critical": True} in result[
        "knowledge_gaps"
    ]


def test_doubtful_coverage_is_a_low_confidence_gap(graph: Graphonomous) -> None:
    _know(graph, confidence=0.35)
    result = graph.coverage_query(TASK)
    assert result["coverage_score"] == 1.0  # covered, but only by doubtful nodes
    assert {g["kind"] for g in result["knowledge_gaps"]} == {"low_confidence"}
    assert result["recommendation"] == "learn_first"


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
    result = coverage_query(graph.engine, TASK, use_retrieval=False)
    assert result["method"] == "similarity_search"
    assert all(graph.store.require_node(i).access_count == 0 for i in ids)


def test_decide_rule() -> None:
    assert decide(ESCALATE_MIN_RISK, 1.0, 3, 0) == "escalate"
    assert decide(0.0, ACT_MIN_DECISION_CONFIDENCE, 3, 0) == "act"
    assert decide(0.0, 1.0, 3, 1) == "learn_first"
    assert decide(0.0, 1.0, 0, 0) == "learn_first"


def test_arguments_are_validated(graph: Graphonomous) -> None:
    with pytest.raises(ValidationError):
        graph.coverage_query("")
    with pytest.raises(ValidationError):
        graph.coverage_query(TASK, critical_topics="valve")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        graph.coverage_query(TASK, limit=0)


# -- audit findings ------------------------------------------------------------------------


def test_identifier_topics_are_matched_as_tokens(graph: Graphonomous) -> None:
    for k in range(6):
        graph.store_node(f"Alarm E-47 fired on line {k} after the pressure drop", confidence=0.9)
    graph.store_node("Alarm E-48 is a sensor fault on line 9", confidence=0.9)
    result = graph.coverage_query("What causes alarm E-47?")
    topics = {t["topic"]: t for t in result["topics"]}
    assert topics["E-47"]["covered"] and len(topics["E-47"]["node_ids"]) == 6
    assert not [g for g in result["knowledge_gaps"] if g.get("topic") == "E-47"]
    # A code that is only *similar* does not cover: E-48 is not E-47.
    result = graph.coverage_query("x", critical_topics=["E-49"])
    assert result["topics"][0]["covered"] is False


def test_a_contradiction_on_the_asked_fact_escalates(graph: Graphonomous) -> None:
    background = [
        "Pump PS-2 is on the north loop of the cooling plant",
        "The cooling plant north loop has four pumps",
        "Pump PS-2 was installed in 2019 by the plant crew",
        "Pump PS-2 pressure readings are logged every minute",
    ]
    for text in background:
        graph.store_node(text, confidence=0.9)
    a = graph.store_node("Pump PS-2 was calibrated on Jan 18", confidence=0.9)["node"]["id"]
    b = graph.store_node("Pump PS-2 was never calibrated", confidence=0.9)["node"]["id"]
    graph.store_edge(a, b, "contradicts")
    graph.store_edge(b, a, "contradicts")
    result = graph.coverage_query("Was pump PS-2 calibrated?", limit=10)
    assert len(result["relevant_nodes"]) >= 5  # the conflict is a small share of the nodes
    assert "PS-2" in result["contradicted_topics"]
    assert result["recommendation"] == "escalate"


def test_goal_title_verbs_are_not_topics(graph: Graphonomous) -> None:
    graph.store_node("Alarm E-47 on valve V2 means hydraulic pressure loss", confidence=0.9)
    goal = graph.manage_goal("create", title="Eliminate recurring E-47 alarms")["goal"]
    review = graph.review_goal(goal["id"])
    topics = [t["topic"] for t in review["coverage"]["topics"]]
    assert topics == ["E-47", "alarm"]
    assert all(t["covered"] for t in review["coverage"]["topics"])


def test_learn_is_an_accepted_alias() -> None:
    from graphonomous.learning.coverage import RECOMMENDATION_ALIASES, RECOMMENDATIONS
    from graphonomous.learning.goals import REVIEW_TRANSITIONS

    assert RECOMMENDATIONS == ("act", "learn_first", "escalate")
    assert RECOMMENDATION_ALIASES["learn"] in RECOMMENDATIONS
    assert REVIEW_TRANSITIONS["learn"] == REVIEW_TRANSITIONS["learn_first"]
