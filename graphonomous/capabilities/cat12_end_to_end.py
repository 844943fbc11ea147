"""Category 12 — end-to-end workflows (GraphMemBench Phase 3): 8 scenarios.

Whole agent loops of seed 003 (retrieve → route → act → learn → consolidate)
through the public facade: every scenario chains several tools and checks the
state the chain leaves behind, not one call's return value.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ingest import scan_directory
from ..portable import export_lines
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 12
FULL_PIPELINE_NODES = 100  # upstream E8: "full v0.3 pipeline, 100 nodes"


def _ids(result: dict[str, Any]) -> list[str]:
    return [r["node_id"] for r in result["results"]]


@scenario(CATEGORY, "Unknown task → learn_first; learn from the exchange and outcomes → act")
def learn_then_act(graph: Graphonomous) -> tuple[bool, str]:
    task = "How do I reset controller X-12 after a fault?"
    first = graph.coverage_query(task)["recommendation"]
    graph.learn_from_interaction(
        task,
        "To reset controller X-12, hold the reset button for five seconds. "
        "Controller X-12 then reboots in safe mode. "
        "After a fault, controller X-12 logs the error code.",
    )
    middle = graph.coverage_query(task)
    claims = [n["node_id"] for n in middle["relevant_nodes"] if n["node_type"] == "semantic"]
    for i in range(3):
        graph.learn_from_outcome(f"reset-x12-{i}", "success", 0.9, claims)
    last = graph.coverage_query(task)["recommendation"]
    ok = first == "learn_first" and bool(claims) and last == "act"
    return ok, f"{first} → {middle['recommendation']} → {last} ({len(claims)} claims)"


@scenario(CATEGORY, "A goal's work: link nodes, succeed, goal completes and the snapshot shows it")
def goal_lifecycle(graph: Graphonomous) -> tuple[bool, str]:
    fix = graph.store_node("Re-seat the encoder cable on axis 3", "procedural")["node"]["id"]
    criteria = {"type": "outcome_threshold", "target": 0.8}
    goal = graph.manage_goal(
        "create", title="Stop axis 3 position drift", metadata={"completion_criteria": criteria}
    )["goal"]["id"]
    graph.manage_goal("link_nodes", goal_id=goal, node_ids=[fix])
    before = graph.goals_snapshot()
    graph.learn_from_outcome("reseat-1", "success", 0.9, [fix], goal_id=goal)
    after = graph.goals_snapshot()
    status = graph.manage_goal("get", goal_id=goal)["goal"]["status"]
    text = json.dumps(after)
    ok = status == "completed" and "completed" in text and json.dumps(before) != text
    return ok, f"status {status}"


@scenario(CATEGORY, "A correction supersedes the old fact: retrieval and the chain agree")
def correction_workflow(graph: Graphonomous) -> tuple[bool, str]:
    old = graph.store_node("The canteen in building 2 opens at 7", confidence=0.7)["node"]["id"]
    graph.store_node("The canteen in building 2 serves soup on Mondays", confidence=0.7)
    result = graph.learn_from_feedback(
        old, "correction", correction="The canteen in building 2 opens at 8"
    )
    new = result["revision"]["new_node_id"]
    ranked = _ids(graph.retrieve_context("when does the building 2 canteen open"))
    chain = [step["node_id"] for step in graph.revision_chain(old)["chain"]]
    ok = (
        new in ranked
        and (old not in ranked or ranked.index(new) < ranked.index(old))
        and chain == [old, new]
    )
    return ok, f"new first {ranked[:1] == [new]}, chain length {len(chain)}"


@scenario(CATEGORY, "GDPR erase: the content is gone from retrieval, nodes and the export")
def erase_workflow(graph: Graphonomous) -> tuple[bool, str]:
    secret = graph.store_node("Jane Roe's badge number is 55-1209")["node"]["id"]
    keep = graph.store_node("Badge numbers are issued by security")["node"]["id"]
    graph.store_edge(keep, secret, "related")
    graph.retrieve_context("badge number Jane Roe")
    graph.gdpr_erase(secret, reason="subject request")
    ranked = _ids(graph.retrieve_context("badge number Jane Roe"))
    dump = "\n".join(export_lines(graph))
    listed = [n["content"] for n in graph.list_nodes(include_forgotten=True)["nodes"]]
    ok = secret not in ranked and "55-1209" not in dump and all("55-1209" not in c for c in listed)
    return ok, f"retrieved {len(ranked)}, in export {'55-1209' in dump}, nodes {len(listed)}"


@scenario(CATEGORY, "Code tree: mutual imports → κ > 0 → deliberate → conclusion written back")
def code_loop_deliberation(graph: Graphonomous) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "orders.py").write_text(
            "import stock\n\n\ndef place(item):\n    return stock.reserve(item)\n", encoding="utf-8"
        )
        Path(folder, "stock.py").write_text(
            "import orders\n\n\ndef reserve(item):\n    return orders.place(item)\n",
            encoding="utf-8",
        )
        scan_directory(graph, folder)
    query = "orders place and stock reserve"
    routing = graph.retrieve_context(query)["topology"]["routing"]
    plans = graph.deliberate(query=query)["plans"]
    if not plans:
        return False, f"routing {routing}, no deliberation plan"
    loop = plans[0]
    conclusion = {
        "scc_id": loop["scc_id"],
        "content": "orders and stock import each other; extract a shared interface",
        "confidence": 0.8,
    }
    written = graph.deliberate(query=query, conclusions=[conclusion], write_back=True)
    stored = written["conclusions"][0].get("node_id") if written["conclusions"] else None
    node = graph.get_node(stored)["node"] if stored else {}
    ok = (
        routing == "deliberate"
        and written["written"]
        and "deliberation" in node.get("metadata", {})
    )
    return ok, f"routing {routing}, κ {loop['kappa']}, conclusion stored {stored is not None}"


@scenario(CATEGORY, "Consolidation after use keeps every node reachable and logs the run")
def consolidate_after_use(graph: Graphonomous) -> tuple[bool, str]:
    ids = [
        graph.store_node(f"Press {i} hydraulic oil is changed every {i + 2} months")["node"]["id"]
        for i in range(6)
    ]
    for a, b in itertools.pairwise(ids):
        graph.store_edge(a, b, "related")
    graph.learn_from_outcome("oil-change", "success", 0.9, ids[:2])
    run = graph.run_consolidation()
    log = graph.consolidation_log(limit=1)["runs"]
    live = graph.list_nodes(limit=1)["total"]
    found = _ids(graph.retrieve_context("press 3 hydraulic oil change interval"))
    ok = bool(log) and log[0]["id"] == run["id"] and live >= len(ids) and ids[3] in found
    return ok, f"run {run['id'][:8]}, live {live}, press 3 found {ids[3] in found}"


@scenario(CATEGORY, "Attention: an uncovered active goal surfaces in the survey and the cycle")
def attention_cycle(graph: Graphonomous) -> tuple[bool, str]:
    goal = graph.manage_goal(
        "create", title="Calibrate flow meter FM-8", priority=0.9, status="active"
    )["goal"]["id"]
    graph.store_node("The loading dock closes at noon on Fridays")
    survey = graph.attention_survey()
    mine: dict[str, Any] = next((g for g in survey["goals"] if g["goal_id"] == goal), {})
    cycle = graph.attention_run_cycle(autonomy="advise", budget=3)
    reviews = [a for a in cycle["actions"] if a["action"] == "review_goal" and a["target"] == goal]
    ok = mine.get("recommendation") == "learn_first" and len(reviews) == 1
    return ok, f"survey says {mine.get('recommendation')}, cycle reviews {len(reviews)}"


@scenario(CATEGORY, "Full pipeline on 100 nodes: ingest, retrieve, learn, consolidate, forget")
def full_pipeline(graph: Graphonomous) -> tuple[bool, str]:
    n = FULL_PIPELINE_NODES
    ops: list[dict[str, Any]] = [
        {
            "op": "add_node",
            "node": {
                "id": f"p{i}",
                "content": f"Pipeline fact {i}: unit U{i} is rated {10 + i} kW",
            },
        }
        for i in range(n)
    ]
    ops += [
        {
            "op": "add_edge",
            "edge": {"source_id": f"p{i}", "target_id": f"p{i + 1}", "relationship": "related"},
        }
        for i in range(n - 1)
    ]
    graph.apply_batch(ops)
    top = _ids(graph.retrieve_context("what is unit U42 rated", limit=3))
    graph.learn_from_outcome("rating-check", "success", 0.9, ["p42"])
    graph.run_consolidation()
    forgotten = graph.forget_by_policy(policy="hybrid", max_nodes=n // 2)
    budget = graph.budget_status()
    still = _ids(graph.retrieve_context("what is unit U42 rated", limit=3))
    # p42 was just used successfully, so the budget policy must not pick it.
    ok = top[:1] == ["p42"] and forgotten["forgotten_count"] > 0 and "p42" in still
    return ok, (
        f"top {top[:1]}, forgot {forgotten['forgotten_count']}, "
        f"budget {json.dumps(budget)[:60]}, p42 kept {'p42' in still}"
    )
