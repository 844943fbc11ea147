"""Category 2 — belief revision (seed 004, GraphMemBench Phase 1): 8 scenarios."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..learning import beliefs
from ..learning.beliefs import RETRACTION_DECAY, REVISION_CONFIDENCE_FACTOR
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 2
CLOSE = 1e-9


def _node(graph: Graphonomous, node_id: str) -> dict[str, Any]:
    node: dict[str, Any] = graph.get_node(node_id, include_forgotten=True)["node"]
    return node


@scenario(CATEGORY, "Expand: new belief without contradiction is a clean expansion")
def expand_clean(graph: Graphonomous) -> tuple[bool, str]:
    graph.store_node("Valve V2 is rated for 10 bar of pressure")
    graph.store_node("The night shift starts at 22:00")
    result = graph.belief_revise("expand", content="Pump P1 is lubricated every 500 hours")
    node = result["node"]
    chain = graph.revision_chain(node["id"])
    ops = [r["operation"] for r in chain["revisions"]]
    ok = (
        result["contradictions"] == []
        and graph.get_node(node["id"])["edges"] == []
        and ops == ["expand"]
        and node["revision_id"] == result["revision_id"]
    )
    return ok, f"contradictions={len(result['contradictions'])}, revision ops={ops}"


@scenario(CATEGORY, "Revise: contradicting belief gets supersedes edge + confidence propagation")
def revise_propagates(graph: Graphonomous) -> tuple[bool, str]:
    old = graph.store_node("The API rate limit is 100 requests per minute", confidence=0.8)["node"]
    plan = graph.store_node("Batch jobs send 90 requests per minute", confidence=0.6)["node"]
    graph.store_edge(plan["id"], old["id"], "derived_from")
    result = graph.belief_revise(
        "revise",
        node_id=old["id"],
        new_content="The API rate limit is 500 requests per minute",
        reason="provider raised the limit",
    )
    new_id = result["new_node_id"]
    supersedes = [
        e
        for e in graph.get_node(new_id)["edges"]
        if e["relationship"] == "supersedes" and e["target_id"] == old["id"]
    ]
    old_after = _node(graph, old["id"])
    plan_after = _node(graph, plan["id"])
    expected_plan = 0.6 * (1 - (1 - REVISION_CONFIDENCE_FACTOR) * RETRACTION_DECAY)
    ok = (
        len(supersedes) == 1
        and old_after["superseded_by"] == new_id
        and abs(old_after["confidence"] - 0.8 * REVISION_CONFIDENCE_FACTOR) < CLOSE
        and abs(plan_after["confidence"] - expected_plan) < CLOSE
    )
    return ok, (
        f"old confidence 0.8→{old_after['confidence']:.3f}, dependant 0.6→"
        f"{plan_after['confidence']:.3f} (expected {expected_plan:.3f})"
    )


@scenario(CATEGORY, "Contract: remove belief → dependent confidence reduction")
def contract_reduces_dependants(graph: Graphonomous) -> tuple[bool, str]:
    premise = graph.store_node("Sensor S4 is calibrated", confidence=0.9)["node"]
    conclusion = graph.store_node("Readings from S4 are accurate", confidence=0.8)["node"]
    further = graph.store_node("The S4 trend report can be trusted", confidence=0.7)["node"]
    graph.store_edge(conclusion["id"], premise["id"], "derived_from")
    graph.store_edge(conclusion["id"], further["id"], "supports")
    result = graph.belief_revise("contract", node_id=premise["id"], reason="calibration expired")
    after = {
        n: _node(graph, n)["confidence"] for n in (premise["id"], conclusion["id"], further["id"])
    }
    ok = (
        after[premise["id"]] <= 0.05 + CLOSE
        and after[conclusion["id"]] < 0.8
        and after[further["id"]] < 0.7
        and 0.8 - after[conclusion["id"]] > 0.7 - after[further["id"]]  # decays with depth
        and [p["depth"] for p in result["propagated"]] == [1, 2]
    )
    return ok, (
        f"premise 0.9→{after[premise['id']]:.3f}, depth-1 0.8→{after[conclusion['id']]:.3f}, "
        f"depth-2 0.7→{after[further['id']]:.3f}"
    )


@scenario(CATEGORY, "Detect contradictions via semantic similarity")
def detect_by_similarity(graph: Graphonomous) -> tuple[bool, str]:
    pump = graph.store_node("The coolant pump is running during maintenance")["node"]
    graph.store_node("The cafeteria opens at noon on weekdays")
    found = graph.belief_contradictions(
        content="The coolant pump is not running during maintenance"
    )["contradictions"]
    ids = [c["node_id"] for c in found]
    ok = ids == [pump["id"]] and "negation" in found[0]["cues"] and not found[0]["explicit"]
    return ok, f"found {ids} cues={[c['cues'] for c in found]}"


@scenario(CATEGORY, "Detect contradictions via explicit contradicts edges")
def detect_by_edges(graph: Graphonomous) -> tuple[bool, str]:
    first = graph.store_node("Deploys happen on Fridays")["node"]
    second = graph.store_node("Releases are frozen at the end of every week")["node"]
    graph.store_edge(first["id"], second["id"], "contradicts")
    found = graph.belief_contradictions(node_id=first["id"])["contradictions"]
    ok = [c["node_id"] for c in found] == [second["id"]] and found[0]["explicit"]
    return ok, f"contradictions of the first node: {found}"


@scenario(CATEGORY, "Revision record created with correct fields")
def revision_record_fields(graph: Graphonomous) -> tuple[bool, str]:
    old = graph.store_node("The office is closed on Sundays", confidence=0.7)["node"]
    result = graph.belief_revise(
        "revise",
        node_id=old["id"],
        new_content="The office is open on Sundays",
        reason="new policy",
    )
    records = [
        r for r in graph.revision_chain(old["id"])["revisions"] if r["id"] == result["revision_id"]
    ]
    record = records[0] if records else {}
    details = record.get("details", {})
    ok = (
        record.get("operation") == "revise"
        and record.get("old_node_id") == old["id"]
        and record.get("new_node_id") == result["new_node_id"]
        and record.get("reason") == "new policy"
        and bool(record.get("created_at"))
        and abs(details.get("confidence_before", -1) - 0.7) < CLOSE
        and abs(details.get("confidence_after", -1) - 0.7 * REVISION_CONFIDENCE_FACTOR) < CLOSE
        and _node(graph, result["new_node_id"])["revision_id"] == result["revision_id"]
    )
    return ok, f"record={record}"


@scenario(CATEGORY, "Pluggable hook receives contradiction notification")
def hook_notified(graph: Graphonomous) -> tuple[bool, str]:
    seen: list[dict[str, Any]] = []

    def failing(contradiction: dict[str, Any]) -> None:
        raise RuntimeError("a broken hook must not break belief revision")

    def recording(contradiction: dict[str, Any]) -> str:
        seen.append(contradiction)
        return "keep_newer"

    graph.register_contradiction_hook(failing)
    graph.register_contradiction_hook(recording)
    old = graph.store_node("The backup job runs at 02:00 every night")["node"]
    # The failing hook's traceback is logged by design; keep the bench output clean.
    hook_log = logging.getLogger(beliefs.__name__)
    was_disabled, hook_log.disabled = hook_log.disabled, True
    try:
        result = graph.belief_revise("expand", content="The backup job runs at 04:00 every night")
    finally:
        hook_log.disabled = was_disabled
    ok = (
        len(seen) == 1
        and seen[0]["conflicting_node_id"] == old["id"]
        and seen[0]["node_id"] == result["node"]["id"]
        and [r["result"] for r in result["hook_results"]] == ["keep_newer"]
    )
    return ok, f"hook saw {len(seen)} contradiction(s), cues {[s['cues'] for s in seen]}"


@scenario(CATEGORY, "Chain revision: A superseded by B superseded by C → provenance chain")
def revision_chain(graph: Graphonomous) -> tuple[bool, str]:
    a = graph.store_node("The team uses Jenkins for CI")["node"]
    b = graph.belief_revise("revise", node_id=a["id"], new_content="The team uses GitLab CI")
    c = graph.belief_revise(
        "revise", node_id=b["new_node_id"], new_content="The team uses GitHub Actions for CI"
    )
    expected = [a["id"], b["new_node_id"], c["new_node_id"]]
    views = [graph.revision_chain(node_id) for node_id in expected]
    chains = [[link["node_id"] for link in view["chain"]] for view in views]
    ok = (
        all(chain == expected for chain in chains)
        and all(view["current"] == expected[-1] for view in views)
        and [r["operation"] for r in views[0]["revisions"]] == ["revise", "revise"]
    )
    return ok, f"chain from A: {chains[0]}"
