"""Belief revision: contradiction cues, expand / revise / contract, hooks, provenance."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from graphonomous import Graphonomous, NotFoundError, ValidationError
from graphonomous.learning import tables
from graphonomous.learning.beliefs import (
    CONTRACTION_CONFIDENCE,
    RETRACTION_DECAY,
    RETRACTION_MAX_DEPTH,
    REVISION_CONFIDENCE_FACTOR,
    ContradictionHooks,
    contradiction_cues,
)
from graphonomous.topology import analyze, build_adjacency

CLOSE = 1e-12


def _node(graph: Graphonomous, node_id: str) -> dict[str, Any]:
    node: dict[str, Any] = graph.get_node(node_id, include_forgotten=True)["node"]
    return node


@pytest.mark.parametrize(
    ("first", "second", "cues"),
    [
        ("The pump is running", "The pump is not running", ["negation"]),
        ("The pump is running", "The pump isn't running", ["negation"]),
        ("Alice uses Kubernetes", "Alice no longer uses Kubernetes", ["negation", "update"]),
        ("The deploy uses Kubernetes", "The deploy uses Nomad instead", ["entity", "update"]),
        ("The office is closed on Sundays", "The office is open on Sundays", ["antonym"]),
        ("The server listens on port 8080", "The server listens on port 9090", ["number"]),
        ("Alice lives in Paris now", "Alice lives in Berlin now", ["entity"]),
        ("Python 3.11 is required", "Python 3.11 is required for the build", []),
        ("The valve is open", "The valve is open", []),
        ("Open and closed states are tracked", "The valve is closed", []),
    ],
)
def test_contradiction_cues(first: str, second: str, cues: list[str]) -> None:
    assert contradiction_cues(first, second) == cues
    assert contradiction_cues(second, first) == cues


def test_expand_clean_and_with_contradictions(graph: Graphonomous) -> None:
    clean = graph.belief_revise("expand", content="Line 3 produces 40 units per hour")
    assert clean["contradictions"] == [] and clean["hook_results"] == []
    assert clean["node"]["revision_id"] == clean["revision_id"]
    other = graph.store_node("Shift B is staffed by six people")["node"]
    result = graph.belief_revise(
        "expand",
        content="Line 3 produces 55 units per hour",
        contradicts=[other["id"]],
        reason="new meter",
        confidence=0.7,
    )
    new_id = result["node"]["id"]
    found = {c["conflicting_node_id"]: c for c in result["contradictions"]}
    assert set(found) == {clean["node"]["id"], other["id"]}
    assert found[clean["node"]["id"]]["cues"] == ["number"]
    assert found[clean["node"]["id"]]["explicit"] is False
    assert found[other["id"]]["explicit"] is True
    # Mutual edges: a 2-cycle, so the region has κ = 1.
    edges = [e for e in graph.manage_edge("list")["edges"] if e["relationship"] == "contradicts"]
    pairs = {(e["source_id"], e["target_id"]) for e in edges}
    assert pairs == {
        (new_id, clean["node"]["id"]),
        (clean["node"]["id"], new_id),
        (new_id, other["id"]),
        (other["id"], new_id),
    }
    ids = [n["id"] for n in graph.list_nodes()["nodes"]]
    topology = analyze(build_adjacency(ids, edges), emit_telemetry=False)
    assert topology["max_kappa"] == 1
    assert result["node"]["confidence"] == 0.7
    with pytest.raises(ValidationError):
        graph.belief_revise("expand", content="x", contradicts=["no-such-node"])


def test_revise_effects_and_propagation(graph: Graphonomous) -> None:
    old = graph.store_node("The API limit is 100 requests per minute", confidence=0.8)["node"]
    d1 = graph.store_node("Batch jobs may send 90 requests per minute", confidence=0.6)["node"]
    d2 = graph.store_node("The nightly sync finishes within an hour", confidence=0.5)["node"]
    d3 = graph.store_node("Reports are ready by 7", confidence=0.5)["node"]
    d4 = graph.store_node("Managers read reports at 8", confidence=0.5)["node"]
    graph.store_edge(d1["id"], old["id"], "derived_from")
    graph.store_edge(d1["id"], d2["id"], "supports")
    graph.store_edge(d3["id"], d2["id"], "depends_on")
    graph.store_edge(d4["id"], d3["id"], "derived_from")
    graph.store_edge(old["id"], d1["id"], "related")  # not a dependency
    result = graph.belief_revise(
        "revise",
        node_id=old["id"],
        new_content="The API limit is 500 requests per minute",
        reason="plan upgrade",
    )
    new_id = result["new_node_id"]
    old_after = _node(graph, old["id"])
    assert old_after["superseded_by"] == new_id
    assert abs(old_after["confidence"] - 0.8 * REVISION_CONFIDENCE_FACTOR) < CLOSE
    new = _node(graph, new_id)
    assert new["confidence"] == 0.8 and new["revision_id"] == result["revision_id"]
    supersedes = graph.manage_edge(
        "get", source_id=new_id, target_id=old["id"], relationship="supersedes"
    )
    assert supersedes["edge"]["strength"] == 1.0
    loss = 1 - REVISION_CONFIDENCE_FACTOR
    expected = {
        d1["id"]: (1, 0.6),
        d2["id"]: (2, 0.5),
        d3["id"]: (3, 0.5),
    }
    assert [p["node_id"] for p in result["propagated"]] == [d1["id"], d2["id"], d3["id"]]
    for entry in result["propagated"]:
        depth, before = expected[entry["node_id"]]
        assert entry["depth"] == depth
        after = before * (1 - loss * RETRACTION_DECAY**depth)
        assert abs(entry["confidence_after"] - after) < CLOSE
        assert abs(_node(graph, entry["node_id"])["confidence"] - after) < CLOSE
    assert RETRACTION_MAX_DEPTH == 3
    assert _node(graph, d4["id"])["confidence"] == 0.5  # beyond the depth limit
    with pytest.raises(ValidationError) as raised:
        graph.belief_revise("revise", node_id=old["id"], new_content="again")
    assert raised.value.field == "old_id"


def test_revise_with_existing_node_resolves_the_contradiction(graph: Graphonomous) -> None:
    old = graph.store_node("The pump is running during maintenance")["node"]
    new = graph.belief_revise("expand", content="The pump is not running during maintenance")
    new_id = new["node"]["id"]
    assert len(new["contradictions"]) == 1
    result = graph.belief_revise("revise", node_id=old["id"], new_id=new_id)
    assert result["node"]["id"] == new_id
    assert graph.belief_contradictions(node_id=new_id)["contradictions"] == []
    left = [e for e in graph.manage_edge("list")["edges"] if e["relationship"] == "contradicts"]
    assert left == []
    with pytest.raises(ValidationError):
        graph.belief_revise("revise", node_id=new_id, new_id=new_id)
    with pytest.raises(NotFoundError):
        graph.belief_revise("revise", node_id=new_id, new_id="missing")


def test_contract(graph: Graphonomous) -> None:
    premise = graph.store_node("Sensor S4 is calibrated", confidence=0.8)["node"]
    conclusion = graph.store_node("S4 readings are accurate", confidence=0.6)["node"]
    graph.store_edge(conclusion["id"], premise["id"], "derived_from")
    result = graph.belief_revise("contract", node_id=premise["id"], reason="expired")
    assert result["confidence_after"] == CONTRACTION_CONFIDENCE
    loss = 1 - CONTRACTION_CONFIDENCE / 0.8
    (entry,) = result["propagated"]
    assert abs(entry["confidence_after"] - 0.6 * (1 - loss * RETRACTION_DECAY)) < CLOSE
    assert _node(graph, premise["id"])["superseded_by"] is None  # contraction keeps the node
    record = tables.revisions_touching(graph.store, [premise["id"]])[-1]
    assert record["operation"] == "contract" and record["reason"] == "expired"
    low = graph.store_node("Already doubtful", confidence=0.01)["node"]
    assert graph.belief_revise("contract", node_id=low["id"])["confidence_after"] == 0.01


def test_belief_revise_argument_checks(graph: Graphonomous) -> None:
    node = graph.store_node("Anything")["node"]
    with pytest.raises(ValidationError) as raised:
        graph.belief_revise("delete", node_id=node["id"])
    assert raised.value.field == "action"
    with pytest.raises(ValidationError) as raised:
        graph.belief_revise("expand")
    assert raised.value.field == "content"
    with pytest.raises(ValidationError) as raised:
        graph.belief_revise("contract", node_id=node["id"], new_content="x")
    assert raised.value.field == "new_content"
    with pytest.raises(ValidationError):
        graph.belief_revise("revise", node_id=node["id"])
    with pytest.raises(ValidationError):
        graph.belief_revise("revise", node_id=node["id"], new_content="a", new_id="b")
    with pytest.raises(ValidationError):
        graph.belief_contradictions()
    with pytest.raises(ValidationError):
        graph.belief_contradictions(node_id=node["id"], content="x")


def test_detect_contradictions(graph: Graphonomous) -> None:
    running = graph.store_node("The coolant pump is running")["node"]
    graph.store_node("The cafeteria opens at noon")
    unrelated = graph.store_node("Parking is free on weekends")["node"]
    graph.store_edge(running["id"], unrelated["id"], "contradicts")
    by_text = graph.belief_contradictions(content="The coolant pump is not running")
    assert [c["node_id"] for c in by_text["contradictions"]] == [running["id"]]
    by_node = graph.belief_contradictions(node_id=running["id"])["contradictions"]
    assert [(c["node_id"], c["explicit"]) for c in by_node] == [(unrelated["id"], True)]
    graph.forget_node(unrelated["id"])
    assert graph.belief_contradictions(node_id=running["id"])["contradictions"] == []


def test_superseded_beliefs_do_not_contradict(graph: Graphonomous) -> None:
    a = graph.store_node("The team uses Jenkins for CI")["node"]
    graph.belief_revise("revise", node_id=a["id"], new_content="The team builds with GitLab CI")
    found = graph.belief_contradictions(content="The team uses Travis for CI")["contradictions"]
    assert a["id"] not in [c["node_id"] for c in found]


def test_hooks_are_called_and_failures_ignored(
    graph: Graphonomous, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[dict[str, Any]] = []

    def broken(contradiction: dict[str, Any]) -> None:
        raise ValueError("hook bug")

    graph.register_contradiction_hook(broken)
    handle = graph.register_contradiction_hook(lambda c: calls.append(c) or {"keep": "new"})
    graph.register_contradiction_hook(lambda c: object())  # not JSON: reported by repr
    old = graph.store_node("Backups run at 02:00")["node"]
    with caplog.at_level(logging.ERROR, logger="graphonomous.learning.beliefs"):
        result = graph.belief_revise("expand", content="Backups run at 03:00")
    assert "hook bug" in caplog.text
    assert calls[0]["conflicting_node_id"] == old["id"]
    assert calls[0]["operation"] == "expand" and calls[0]["cues"] == ["number"]
    results = [r["result"] for r in result["hook_results"]]
    assert results[0] == {"keep": "new"} and results[1].startswith("<object object")
    assert graph.unregister_contradiction_hook(handle) is True
    assert graph.unregister_contradiction_hook(handle) is False
    with pytest.raises(ValidationError):
        ContradictionHooks().register("not callable")  # type: ignore[arg-type]


def test_revision_chain(graph: Graphonomous) -> None:
    a = graph.store_node("CI runs on Jenkins")["node"]
    b = graph.belief_revise("revise", node_id=a["id"], new_content="CI runs on GitLab")
    c = graph.belief_revise("revise", node_id=b["new_node_id"], new_content="CI runs on GitHub")
    ids = [a["id"], b["new_node_id"], c["new_node_id"]]
    for node_id in ids:
        chain = graph.revision_chain(node_id)
        assert [link["node_id"] for link in chain["chain"]] == ids
        assert chain["current"] == ids[-1]
        assert [r["id"] for r in chain["revisions"]] == [b["revision_id"], c["revision_id"]]
    graph.forget_node(ids[1])  # soft: history keeps it
    chain = graph.revision_chain(ids[0])
    assert [link["forgotten"] for link in chain["chain"]] == [False, True, False]
    lone = graph.store_node("Unrevised")["node"]
    assert [link["node_id"] for link in graph.revision_chain(lone["id"])["chain"]] == [lone["id"]]
