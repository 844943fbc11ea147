"""The learner: outcomes, feedback, novelty, claim extraction and interactions."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphonomous import Graphonomous, ValidationError, telemetry
from graphonomous.cli import main
from graphonomous.learning import tables
from graphonomous.learning.outcomes import (
    CLAIM_CONFIDENCE,
    CONFIDENCE_LEARNING_RATE,
    EVIDENCE_TYPE_WEIGHTS,
    INTERVENTION_HISTORY_LIMIT,
    OUTCOME_EVENT,
    Q_LEARNING_RATE,
    Q_REWARDS,
    extract_claims,
)
from graphonomous.learning.writes import bounded_step
from graphonomous.topology import analyze, build_adjacency

CLOSE = 1e-12


def _node(graph: Graphonomous, node_id: str) -> dict[str, Any]:
    node: dict[str, Any] = graph.get_node(node_id, include_forgotten=True)["node"]
    return node


# -- bounded update --------------------------------------------------------------


@given(st.floats(0.0, 1.0), st.floats(-1.0, 1.0))
def test_bounded_step_stays_in_unit_interval_and_moves_the_right_way(
    value: float, step: float
) -> None:
    moved = bounded_step(value, step)
    assert 0.0 <= moved <= 1.0
    if step > 0:
        assert moved >= value
    elif step < 0:
        assert moved <= value


# -- learn_from_outcome ------------------------------------------------------------


def test_success_outcome_updates_causes_and_records_everything(graph: Graphonomous) -> None:
    a = graph.store_node("Close the intake before flushing", "procedural", confidence=0.6)["node"]
    b = graph.store_node("E-47 means pressure loss", confidence=0.4)["node"]
    result = graph.learn_from_outcome(
        "act-1",
        "success",
        0.8,
        [a["id"], b["id"], a["id"]],  # duplicates are ignored
        evidence={"description": "pressure stable after 10m"},
        trace_id="trace-9",
        evidence_type="performance",
    )
    step = CONFIDENCE_LEARNING_RATE * 1.0 * 0.8
    for update, before in zip(result["updates"], (0.6, 0.4), strict=True):
        assert update["confidence_before"] == before
        assert abs(update["confidence_after"] - (before + step * (1 - before))) < CLOSE
        assert abs(update["q_after"] - (0.5 + Q_LEARNING_RATE * (1.0 - 0.5))) < CLOSE
        assert update["q_update_count"] == 1 and update["evidence_count"] == 1
        stored = _node(graph, update["node_id"])
        assert stored["confidence"] == update["confidence_after"]
        assert stored["q_value"] == update["q_after"]
    outcome = graph.get_node(result["outcome_node_id"])
    node = outcome["node"]
    assert node["node_type"] == "outcome"
    assert node["causal_parent_ids"] == [a["id"], b["id"]]
    assert node["confidence"] == 0.8
    assert "pressure stable after 10m" in node["content"]
    assert node["metadata"]["action_id"] == "act-1"
    assert node["metadata"]["trace_id"] == "trace-9"
    assert node["metadata"]["outcome_id"] == result["outcome_id"]
    edges = {(e["source_id"], e["target_id"], e["relationship"]) for e in outcome["edges"]}
    assert edges == {
        (node["id"], a["id"], "derived_from"),
        (node["id"], b["id"], "derived_from"),
    }
    (row,) = tables.outcome_rows(graph.store)
    assert row["id"] == result["outcome_id"]
    assert row["causal_node_ids"] == [a["id"], b["id"]]
    assert row["outcome_node_id"] == node["id"]
    assert row["status"] == "success" and row["confidence"] == 0.8
    # The outcome node is an experience record (a retrieval aid), kept out of the
    # search indexes; its vector is stored.
    assert graph.store.get_embedding(node["id"]) is not None
    assert all(
        r["id"] != node["id"] for r in graph.similarity_search(node["content"], 5)["results"]
    )
    assert graph.text_index().search("pressure stable", 1) == []


def test_bundle_outcome_moves_q_by_share_and_leaves_belief(graph: Graphonomous) -> None:
    ids = [graph.store_node(f"turn {i} about pumps and seals")["node"]["id"] for i in range(5)]
    graph.store_edge(ids[0], ids[1], "related")
    result = graph.learn_from_outcome("answer-1", "failure", 1.0, ids)
    for update in result["updates"]:
        assert update["confidence_after"] == update["confidence_before"] == 0.5
        assert update["q_after"] == update["q_before"] == 0.5 and update["q_update_count"] == 0
    graph.learn_from_outcome("answer-2", "success", 1.0, ids)
    edge = graph.store.find_edge(ids[0], ids[1], "related")
    assert edge is not None and edge.co_activation_count == 0  # a bundle is not a pair


def test_outcome_remembers_the_query_of_the_retrieval_it_answers(graph: Graphonomous) -> None:
    for text in ("the pump seal leaks at high pressure", "budget review is due in May"):
        graph.store_node(text)
    found = graph.retrieve_context("why does the pump seal leak", limit=2, effort=0)
    used = [r["node_id"] for r in found["results"]]
    result = graph.learn_from_outcome("answer", "success", 1.0, used)
    meta = graph.get_node(result["outcome_node_id"])["node"]["metadata"]
    assert meta["retrieval"] == {"query": "why does the pump seal leak"}
    assert meta["reward"] == 1.0
    named = graph.learn_from_outcome(
        "answer-2", "failure", 1.0, used[:1], evidence={"query": "an explicit question"}
    )
    meta = graph.get_node(named["outcome_node_id"])["node"]["metadata"]
    assert meta["retrieval"] == {"query": "an explicit question"}


@pytest.mark.parametrize(
    ("status", "evidence", "signal"),
    [
        ("failure", None, -1.0),
        ("timeout", None, 0.0),
        ("partial_success", None, 0.5),
        ("partial_success", {"fraction": 0.8}, 0.8),
    ],
)
def test_status_signals(
    graph: Graphonomous, status: str, evidence: dict[str, Any] | None, signal: float
) -> None:
    node = graph.store_node("Restart the controller", "procedural", confidence=0.5)["node"]
    result = graph.learn_from_outcome("act", status, 1.0, [node["id"]], evidence=evidence)
    assert result["signal"] == signal
    update = result["updates"][0]
    expected = bounded_step(0.5, CONFIDENCE_LEARNING_RATE * signal)
    assert abs(update["confidence_after"] - expected) < CLOSE
    assert abs(update["q_after"] - (0.5 + Q_LEARNING_RATE * (Q_REWARDS[status] - 0.5))) < CLOSE


def test_evidence_type_scales_the_update(graph: Graphonomous) -> None:
    node = graph.store_node("Use the bypass valve", "procedural", confidence=0.5)["node"]
    result = graph.learn_from_outcome(
        "act", "failure", 0.5, [node["id"]], evidence_type="self_report"
    )
    weight = 0.5 * EVIDENCE_TYPE_WEIGHTS["self_report"]
    assert result["weight"] == weight
    assert abs(result["updates"][0]["confidence_after"] - 0.5 * (1 - 0.2 * weight)) < CLOSE
    with pytest.raises(ValidationError) as raised:
        graph.learn_from_outcome("act", "failure", 0.5, [node["id"]], evidence_type="vibes")
    assert raised.value.field == "evidence_type"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"status": "done"}, "status"),
        ({"confidence": 1.5}, "confidence"),
        ({"causal_node_ids": "abc"}, "causal_node_ids"),
        ({"causal_node_ids": ["missing-node"]}, "causal_node_ids"),
        ({"evidence": {"fraction": 2}, "status": "partial_success"}, "evidence.fraction"),
    ],
)
def test_invalid_outcomes_change_nothing(
    graph: Graphonomous, arguments: dict[str, Any], field: str
) -> None:
    node = graph.store_node("Valve V2 is rated 10 bar")["node"]
    call: dict[str, Any] = {
        "action_id": "act",
        "status": "success",
        "confidence": 0.9,
        "causal_node_ids": [node["id"]],
        **arguments,
    }
    with pytest.raises(ValidationError) as raised:
        graph.learn_from_outcome(**call)
    assert raised.value.field == field
    assert graph.graph_stats()["node_count"] == 1
    assert tables.outcome_rows(graph.store) == []
    assert _node(graph, node["id"])["q_update_count"] == 0


def test_forgotten_cause_is_rejected(graph: Graphonomous) -> None:
    node = graph.store_node("An old belief")["node"]
    graph.forget_node(node["id"])
    with pytest.raises(ValidationError):
        graph.learn_from_outcome("act", "success", 1.0, [node["id"]])


def test_causal_edges_get_strength_and_capped_history(graph: Graphonomous) -> None:
    cause = graph.store_node("Low oil causes overheating")["node"]
    effect = graph.store_node("The motor overheats")["node"]
    edge = graph.store_edge(cause["id"], effect["id"], "causes", strength=0.5)["edge"]
    first = graph.learn_from_outcome("fix-0", "success", 1.0, [cause["id"], effect["id"]])
    (change,) = first["causal_edges"]
    assert change["edge_id"] == edge["id"]
    assert change["causal_strength_before"] == 0.5
    assert abs(change["causal_strength_after"] - bounded_step(0.5, 0.2)) < CLOSE
    for i in range(1, INTERVENTION_HISTORY_LIMIT + 5):
        graph.learn_from_outcome(f"fix-{i}", "failure", 1.0, [cause["id"], effect["id"]])
    stored = graph.manage_edge("get", edge_id=edge["id"])["edge"]
    history = stored["metadata"]["intervention_history"]
    assert len(history) == INTERVENTION_HISTORY_LIMIT
    assert history[-1]["action_id"] == f"fix-{INTERVENTION_HISTORY_LIMIT + 4}"
    assert history[-1]["status"] == "failure"
    assert stored["metadata"]["causal_strength"] < 0.5
    assert stored["strength"] == 0.5  # retrieval strength is not the causal estimate


def test_outcome_never_joins_a_feedback_loop(graph: Graphonomous) -> None:
    a = graph.store_node("A drives B")["node"]
    b = graph.store_node("B drives A")["node"]
    graph.store_edge(a["id"], b["id"], "causes")
    graph.store_edge(b["id"], a["id"], "causes")
    goal = graph.store_node("Keep the loop stable", "goal")["node"]
    result = graph.learn_from_outcome("act", "success", 1.0, [a["id"], b["id"]], goal_id=goal["id"])
    assert result["goal_node_id"] == goal["id"]
    edges = graph.manage_edge("list", limit=100)["edges"]
    ids = [n["id"] for n in graph.list_nodes()["nodes"]]
    topology = analyze(build_adjacency(ids, edges), emit_telemetry=False)
    assert [sorted(scc["nodes"]) for scc in topology["sccs"]] == [sorted([a["id"], b["id"]])]
    part_of = [e for e in edges if e["relationship"] == "part_of"]
    assert [(e["source_id"], e["target_id"]) for e in part_of] == [
        (result["outcome_node_id"], goal["id"])
    ]


def test_goal_linkage_via_goals_row_and_unknown_goal(graph: Graphonomous) -> None:
    cause = graph.store_node("Ship on Fridays")["node"]
    goal = graph.store_node("Reach weekly delivery", "goal")["node"]
    tables.execute(
        graph.store,
        "INSERT INTO goals (id, node_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
        ("goal-row-1", goal["id"], "Reach weekly delivery", "2026-01-01T00:00:00.000Z", "x"),
    )
    linked = graph.learn_from_outcome("ship", "success", 1.0, [cause["id"]], goal_id="goal-row-1")
    assert linked["goal_node_id"] == goal["id"]
    # An unknown referenced id is rejected (issue #12), and nothing is written.
    before = len(tables.outcome_rows(graph.store))
    with pytest.raises(ValidationError) as caught:
        graph.learn_from_outcome("ship", "success", 1.0, [cause["id"]], goal_id="nope")
    assert caught.value.field == "goal_id"
    assert len(tables.outcome_rows(graph.store)) == before


def test_outcome_emits_telemetry(graph: Graphonomous) -> None:
    seen: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    handle = telemetry.attach(OUTCOME_EVENT, lambda e, m, md: seen.append((m, md)))
    try:
        node = graph.store_node("Calibrate weekly")["node"]
        graph.learn_from_outcome("cal", "timeout", 0.5, [node["id"]], trace_id="t-1")
    finally:
        telemetry.detach(handle)
    assert seen == [
        (
            {"causal_nodes": 1, "signal": 0.0},
            {"status": "timeout", "action_id": "cal", "trace_id": "t-1"},
        )
    ]


# -- feedback ------------------------------------------------------------------------


def test_feedback_positive_negative(graph: Graphonomous) -> None:
    node = graph.store_node("The lab opens at 8", confidence=0.5)["node"]
    up = graph.learn_from_feedback(node["id"], "positive")
    assert abs(up["confidence_after"] - 0.6) < CLOSE
    down = graph.learn_from_feedback(node["id"], "negative")
    assert abs(down["confidence_after"] - 0.6 * 0.8) < CLOSE
    stored = _node(graph, node["id"])
    assert stored["metadata"]["feedback"] == {"positive": 1, "negative": 1}
    assert stored["q_update_count"] == 0  # feedback is not outcome utility


def test_feedback_correction_supersedes(graph: Graphonomous) -> None:
    node = graph.store_node("The lab opens at 8", confidence=0.5)["node"]
    result = graph.learn_from_feedback(node["id"], "correction", correction="The lab opens at 9")
    new_id = result["revision"]["new_node_id"]
    assert _node(graph, node["id"])["superseded_by"] == new_id
    assert _node(graph, new_id)["content"] == "The lab opens at 9"
    with pytest.raises(ValidationError):
        graph.learn_from_feedback(node["id"], "correction")
    with pytest.raises(ValidationError):
        graph.learn_from_feedback(new_id, "positive", correction="text")
    with pytest.raises(ValidationError):
        graph.learn_from_feedback(new_id, "meh")


# -- novelty -------------------------------------------------------------------------


def test_novelty(graph: Graphonomous) -> None:
    empty = graph.learn_detect_novelty("anything at all")
    assert empty == {
        "novelty": 1.0,
        "is_novel": True,
        "threshold": 0.3,
        "max_similarity": 0.0,
        "nearest": [],
    }
    node = graph.store_node("Error E-47 indicates hydraulic pressure loss")["node"]
    graph.store_node("The cafeteria opens at noon")
    same = graph.learn_detect_novelty("Error E-47 indicates hydraulic pressure loss")
    assert same["is_novel"] is False and same["novelty"] < 1e-6
    assert same["nearest"][0]["node_id"] == node["id"]
    assert len(same["nearest"]) == 2
    other = graph.learn_detect_novelty("Quarterly tax filing deadlines for contractors")
    assert other["is_novel"] is True
    strict = graph.learn_detect_novelty("E-47 errors mean hydraulic pressure is lost", 0.1)
    assert strict["is_novel"] is True
    with pytest.raises(ValidationError):
        graph.learn_detect_novelty("x", threshold=2)


# -- claims and interactions -----------------------------------------------------------


def test_extract_claims_heuristics() -> None:
    text = (
        "Great question! Error E-47 indicates hydraulic pressure loss. "
        "Do you want to know more? It might be a sensor fault. I think you should call support. "
        "I can help with that.\n"
        "- Close the intake before flushing the line\n"
        "- ok\n"
        "1. The pump **must** be restarted after an E-47 event.\n"
        "`x = foo(bar[1]) + {y}` is the config line; that is code.\n"
        "Error E-47 indicates hydraulic pressure loss.\n"
        "Thanks for asking, I hope this helps!"
    )
    assert extract_claims(text) == [
        "Error E-47 indicates hydraulic pressure loss.",
        "Close the intake before flushing the line",
        "The pump must be restarted after an E-47 event.",
    ]
    assert extract_claims("") == []


def test_learn_from_interaction(graph: Graphonomous) -> None:
    known = graph.store_node("Error E-47 indicates hydraulic pressure loss", confidence=0.5)
    known_id = known["node"]["id"]
    related = graph.store_node("Hydraulic pressure sensors sit behind panel four")["node"]
    opposite = graph.store_node("The pump keeps running after an E-47 alarm")["node"]
    result = graph.learn_from_interaction(
        "What does E-47 mean?",
        "Error E-47 indicates hydraulic pressure loss. "
        "The pump does not keep running after an E-47 alarm. "
        "Hydraulic pressure sensors sit behind panel four and need yearly checks. "
        "Maybe it is a sensor fault?",
        context={"session": "s-1"},
    )
    episode = result["episode"]
    assert episode["node_type"] == "episodic" and episode["timescale"] == "fast"
    assert episode["metadata"] == {"kind": "interaction", "context": {"session": "s-1"}}
    assert 0.0 < result["novelty"]["novelty"] < 1.0  # related knowledge exists
    actions = [
        (c["action"], c["node_id"] if c["action"] == "reinforced" else None)
        for c in result["claims"]
    ]
    assert actions == [("reinforced", known_id), ("created", None), ("created", None)]
    assert result["reinforced_node_ids"] == [known_id]
    assert _node(graph, known_id)["confidence"] > 0.5
    negated, extended = result["claims"][1], result["claims"][2]
    assert negated["contradicts"] == [opposite["id"]]
    assert related["id"] in extended["related"]
    for claim in (negated, extended):
        node = graph.get_node(claim["node_id"])
        assert node["node"]["confidence"] == CLAIM_CONFIDENCE
        kinds = {
            (e["target_id"], e["relationship"])
            for e in node["edges"]
            if e["source_id"] == claim["node_id"]
        }
        assert (episode["id"], "derived_from") in kinds
    contradicts = graph.belief_contradictions(node_id=negated["node_id"])["contradictions"]
    assert [c["node_id"] for c in contradicts] == [opposite["id"]] and contradicts[0]["explicit"]
    reinforce_edges = graph.manage_edge(
        "get", source_id=episode["id"], target_id=known_id, relationship="related"
    )["edge"]
    assert reinforce_edges["metadata"] == {"reinforced": True}
    assert result["created_node_ids"] == [negated["node_id"], extended["node_id"]]


# -- CLI -----------------------------------------------------------------------------


def test_cli_learn_outcome_and_feedback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "cli.db")
    with Graphonomous(db) as graph:
        node_id = graph.store_node("Flush the line", "procedural")["node"]["id"]
    assert (
        main(
            [
                "--db",
                db,
                "learn",
                "outcome",
                "a1",
                "--status",
                "success",
                "--confidence",
                "0.9",
                "--cause",
                node_id,
                "--evidence",
                "worked",
                "--json",
            ]
        )
        == 0
    )
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["updates"][0]["node_id"] == node_id
    assert main(["--db", db, "learn", "feedback", node_id, "positive"]) == 0
    assert "positive: confidence" in capsys.readouterr().out
    assert (
        main(["--db", db, "learn", "outcome", "a2", "--status", "bogus", "--confidence", "1"]) == 2
    )
    assert main(["--db", db, "learn", "feedback", "missing-id", "negative"]) == 1
    with Graphonomous(db) as graph:
        row = tables.outcome_rows(graph.store)[0]
        assert row["evidence"] == {"description": "worked"}
        assert math.isclose(graph.get_node(node_id)["node"]["q_value"], 0.65)


def test_a_repeated_outcome_signal_is_applied_once(graph: Graphonomous) -> None:
    cause = graph.store_node("restart the pump after E-47")["node"]["id"]
    report = {
        "action_id": "restart-1",
        "status": "success",
        "confidence": 0.9,
        "causal_node_ids": [cause],
        "signal_id": "sig-1",
    }
    first = graph.learn_from_outcome(**report)
    after_first = graph.get_node(cause)["node"]
    again = graph.learn_from_outcome(**report)  # a client retry
    assert first["duplicate"] is False and first["updates"]
    assert again["duplicate"] is True and again["updates"] == [] and again["weight"] == 0.0
    assert again["outcome_id"] == first["outcome_id"]
    assert again["outcome_node_id"] == first["outcome_node_id"]
    assert graph.get_node(cause)["node"] == after_first
    assert len(graph.list_nodes(node_type="outcome")["nodes"]) == 1
    with pytest.raises(ValidationError, match="signal_id"):
        graph.learn_from_outcome(**{**report, "status": "failure"})
    # Without a key every report counts.
    graph.learn_from_outcome(**{**report, "signal_id": None})
    assert len(graph.list_nodes(node_type="outcome")["nodes"]) == 2
