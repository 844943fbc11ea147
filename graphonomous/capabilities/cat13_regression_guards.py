"""Category 13 — regression guards (GraphMemBench Phase 3): 8 scenarios, one per audit finding.

Each scenario pins a behaviour the issue #13 audit found missing or wrong, with
expected values written from the seeds and the audit (not from this
package's constants), and each is the one a mutant of `mutants.py` breaks.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..mcp import build_server
from ..mcp.jsonrpc import Request, Response, encode
from ..model import ValidationError
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 13


@scenario(CATEGORY, "A superseded belief is left out, and ranks below its replacement when asked")
def superseded_ranks_lower(graph: Graphonomous) -> tuple[bool, str]:
    old = graph.store_node("The pump P-7 service interval is six months", confidence=0.8)
    new = graph.store_node("The pump P-7 service interval is three months", confidence=0.8)
    old_id, new_id = old["node"]["id"], new["node"]["id"]
    graph.belief_revise("revise", node_id=old_id, new_id=new_id)
    graph.store_node("Pump P-7 is in hall B", confidence=0.8)
    # Give the superseded belief the better lexical match and confidence back, so only
    # the supersession demotion can put it below its replacement.
    graph.store.update_node(old_id, confidence=0.9)
    default = [
        r["node_id"] for r in graph.retrieve_context("pump P-7 service interval six")["results"]
    ]
    answer = graph.retrieve_context("pump P-7 service interval six", include_superseded=True)
    ranked = [r["node_id"] for r in answer["results"]]
    ok = old_id not in default and new_id in default
    ok = (
        ok and old_id in ranked and new_id in ranked and ranked.index(new_id) < ranked.index(old_id)
    )
    return ok, f"ranking {[r[:8] for r in ranked]}, new {new_id[:8]}, old {old_id[:8]}"


@scenario(CATEGORY, "An outcome naming an unknown goal is rejected, naming goal_id")
def unknown_goal_rejected(graph: Graphonomous) -> tuple[bool, str]:
    cause = graph.store_node("Restart the compressor")["node"]["id"]
    try:
        graph.learn_from_outcome("restart", "success", 0.9, [cause], goal_id="no-such-goal")
    except ValidationError as exc:
        return exc.field == "goal_id", f"field {exc.field}"
    return False, "accepted silently"


@scenario(CATEGORY, "Three failed outcomes exhaust a goal's retry budget")
def failures_abandon_goal(graph: Graphonomous) -> tuple[bool, str]:
    cause = graph.store_node("Flush the coolant line")["node"]["id"]
    goal = graph.manage_goal("create", title="Stop coolant leaks")["goal"]["id"]
    for i in range(3):
        graph.learn_from_outcome(f"flush-{i}", "failure", 0.9, [cause], goal_id=goal)
    status = graph.manage_goal("get", goal_id=goal)["goal"]["status"]
    return status == "abandoned", f"status {status}"


@scenario(CATEGORY, "Outcomes meeting outcome_threshold complete the goal")
def threshold_completes_goal(graph: Graphonomous) -> tuple[bool, str]:
    cause = graph.store_node("Tighten the flange bolts")["node"]["id"]
    criteria = {"type": "outcome_threshold", "target": 0.85}
    goal = graph.manage_goal(
        "create", title="Seal the flange", metadata={"completion_criteria": criteria}
    )["goal"]["id"]
    graph.learn_from_outcome("tighten-1", "success", 0.9, [cause], goal_id=goal)
    got = graph.manage_goal("get", goal_id=goal)["goal"]
    return got["status"] == "completed" and got["progress"] == 1.0, f"status {got['status']}"


@scenario(CATEGORY, "Coverage matches an error code (E-47) in the nodes that contain it")
def identifier_topic_covered(graph: Graphonomous) -> tuple[bool, str]:
    for line in range(6):
        graph.store_node(f"Alarm E-47 tripped line {line} during the night", confidence=0.9)
    result = graph.coverage_query("What is alarm E-47?")
    topic = next((t for t in result["topics"] if t["topic"] == "E-47"), None)
    ok = topic is not None and topic["covered"] and len(topic["node_ids"]) == 6
    return ok, f"topic {topic}"


@scenario(CATEGORY, "A contradiction on the asked fact escalates (seed vocabulary)")
def contradicted_fact_escalates(graph: Graphonomous) -> tuple[bool, str]:
    for text in (
        "Boiler B-2 is in the east wing",
        "Boiler B-2 feeds the laundry",
        "Boiler B-2 was installed in 2012",
        "Boiler B-2 has a 400 litre tank",
    ):
        graph.store_node(text, confidence=0.9)
    a = graph.store_node("Boiler B-2 passed its safety inspection", confidence=0.9)["node"]["id"]
    b = graph.store_node("Boiler B-2 failed its safety inspection", confidence=0.9)["node"]["id"]
    graph.store_edge(a, b, "contradicts")
    graph.store_edge(b, a, "contradicts")
    escalated = graph.coverage_query("Did boiler B-2 pass inspection?")["recommendation"]
    empty = graph.coverage_query("How do I calibrate the zeolite dryer Z-9?")["recommendation"]
    ok = escalated == "escalate" and empty == "learn_first"
    return ok, f"contradicted: {escalated}, unknown: {empty}"


@scenario(CATEGORY, "Unrelated numbers are not a contradiction (no false κ loop)")
def numbers_are_not_contradictions(graph: Graphonomous) -> tuple[bool, str]:
    graph.store_node("Pump PS-2 was calibrated on Jan 18 by the day shift", confidence=0.9)
    # Adds a gauge number in a new slot: more detail, not a different date.
    detail = graph.belief_revise(
        "expand", content="Pump PS-2 was calibrated on Jan 18 by the day shift using gauge 4"
    )
    # The same slot with another date is a contradiction.
    clash = graph.belief_revise(
        "expand", content="Pump PS-2 was calibrated on Feb 3 by the day shift"
    )
    ok = not detail.get("contradictions") and bool(clash.get("contradictions"))
    return ok, (
        f"detail: {len(detail.get('contradictions', []))}, "
        f"other date: {len(clash.get('contradictions', []))}"
    )


@scenario(CATEGORY, "An upstream-style MCP call works and returns upstream's fields")
def upstream_call(graph: Graphonomous) -> tuple[bool, str]:
    server = build_server(graph, "v1")
    arguments = {"content": "Gaskets harden in the cold", "node_type": "semantic"}
    request = Request(1, "tools/call", {"name": "store_node", "arguments": arguments})
    replies = [m for m in server.handle(request) if isinstance(m, Response)]
    reply = json.loads(encode(replies[0])) if replies else {}
    structured = reply.get("result", {}).get("structuredContent") or {}
    ok = structured.get("status") == "stored" and structured.get("node_id") == structured.get(
        "node", {}
    ).get("id")
    return ok, f"status {structured.get('status')}"
