"""Category 5 — intentional forgetting (seed 004, GraphMemBench Phase 1): 8 scenarios."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import format_time
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 5
TABLES_TO_SEARCH = (
    "nodes",
    "edges",
    "node_embeddings",
    "outcomes",
    "revisions",
    "goals",
    "attention_items",
    "source_files",
    "consolidation_log",
    "audit_log",
)


def _result_ids(graph: Graphonomous, query: str) -> list[str]:
    return [r["node_id"] for r in graph.retrieve_context(query, limit=10)["results"]]


@scenario(CATEGORY, "Soft forget excludes from retrieval")
def soft_forget_hides(graph: Graphonomous) -> tuple[bool, str]:
    target = graph.store_node("The spare key for cabinet C3 hangs in the red box")["node"]
    other = graph.store_node("Cabinet C3 holds the calibration weights")["node"]
    graph.store_edge(other["id"], target["id"], "related")
    before = _result_ids(graph, "spare key cabinet C3")
    graph.forget_node(target["id"], "soft", reason="stale location")
    after = _result_ids(graph, "spare key cabinet C3")
    similar = [r["id"] for r in graph.similarity_search("spare key cabinet C3")["results"]]
    kept = graph.get_node(target["id"], include_forgotten=True)
    ok = (
        target["id"] in before
        and target["id"] not in after
        and target["id"] not in similar
        and kept["node"]["forgotten_at"] is not None
        and len(kept["edges"]) == 1  # structure kept
    )
    return ok, f"before: {target['id'] in before}, after: {target['id'] in after}"


@scenario(CATEGORY, "Hard forget removes node + edges")
def hard_forget_deletes(graph: Graphonomous) -> tuple[bool, str]:
    target = graph.store_node("Temporary password for the test VPN is rotated weekly")["node"]
    peers = [graph.store_node(f"VPN gateway {i} serves region {i}")["node"] for i in range(3)]
    for peer in peers:
        graph.store_edge(peer["id"], target["id"], "related")
    result = graph.forget_node(target["id"], "hard")
    left = graph.manage_edge("list", node_id=peers[0]["id"])["count"]
    gone = graph.list_nodes(include_forgotten=True)["total"] == 3
    ok = result["edges_removed"] == 3 and left == 0 and gone
    return ok, f"edges removed {result['edges_removed']}, node gone: {gone}"


@scenario(CATEGORY, "Cascade forget propagates to orphaned dependents")
def cascade_forget(graph: Graphonomous) -> tuple[bool, str]:
    root = graph.store_node("Supplier S9 ships parts from the Lyon warehouse")["node"]
    child = graph.store_node("Parts from S9 arrive within two days")["node"]
    grandchild = graph.store_node("Order S9 parts two days before maintenance")["node"]
    shared = graph.store_node("Lyon deliveries avoid the toll road")["node"]
    other = graph.store_node("The Lyon warehouse closes in August")["node"]
    graph.store_edge(child["id"], root["id"], "derived_from")
    graph.store_edge(grandchild["id"], child["id"], "depends_on")
    graph.store_edge(shared["id"], root["id"], "derived_from")
    graph.store_edge(shared["id"], other["id"], "derived_from")
    result = graph.forget_node(root["id"], "cascade")
    expected = sorted([root["id"], child["id"], grandchild["id"]])
    survivors = {n["id"] for n in graph.list_nodes()["nodes"]}
    ok = result["forgotten"] == expected and survivors == {shared["id"], other["id"]}
    return ok, f"forgotten {len(result['forgotten'])} (expected 3), survivors {len(survivors)}"


@scenario(CATEGORY, "GDPR erase leaves no trace")
def gdpr_no_trace(graph: Graphonomous) -> tuple[bool, str]:
    from ..api import Graphonomous as Facade

    marker = "ZQX-GDPR-MARKER-7731"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "erase.db"
        with Facade(path, embedder="hashing") as disk:
            person = disk.store_node(f"Customer {marker} lives at 12 Elm Street")["node"]
            fact = disk.store_node("Customers on Elm Street get Tuesday deliveries")["node"]
            disk.store_edge(fact["id"], person["id"], "derived_from")
            disk.learn_from_outcome("deliver-1", "success", 0.9, [person["id"], fact["id"]])
            disk.retrieve_context("Elm Street customer")  # touches BM25 and access counters
            result = disk.gdpr_erase(person["id"], reason="erasure request")
            # The audit log names the erased id by design (never its content).
            hits = [t for t in TABLES_TO_SEARCH if _table_mentions(disk, t, marker)]
            hits += [
                t
                for t in TABLES_TO_SEARCH
                if t != "audit_log" and _table_mentions(disk, t, person["id"])
            ]
            in_bm25 = bool(disk.text_index().search(marker, 5))
        leaked = [
            name
            for name in ("erase.db", "erase.db-wal", "erase.db-shm")
            if (Path(folder) / name).exists()
            and marker.encode() in (Path(folder) / name).read_bytes()
        ]
    ok = not hits and not leaked and not in_bm25 and not result["residual"]
    return ok, f"tables {hits}, files {leaked}, bm25 {in_bm25}, residual {result['residual']}"


def _table_mentions(graph: Graphonomous, table: str, needle: str) -> bool:
    """Whether any column of `table` (a name from TABLES_TO_SEARCH) contains `needle`."""
    return graph.store.table_mentions(table, needle)


@scenario(CATEGORY, "Budget-aware hybrid pruning respects max_nodes")
def budget_respected(graph: Graphonomous) -> tuple[bool, str]:
    for i in range(60):
        graph.store_node(f"Inventory note {i}: shelf {i % 7} holds box {i}")
    graph.store_node("Quarterly goal: cut inventory errors by half", "goal")
    result = graph.forget_by_policy("hybrid", max_nodes=40)
    live = graph.graph_stats()["node_count"]
    goal_kept = graph.list_nodes(node_type="goal")["total"] == 1
    ok = live == 40 and result["forgotten_count"] == 21 and goal_kept
    return ok, f"live nodes {live} (max 40), forgotten {result['forgotten_count']}"


@scenario(CATEGORY, "Priority scoring favors high-confidence, recent, connected nodes")
def priority_order(graph: Graphonomous) -> tuple[bool, str]:
    old_time = format_time(graph.clock.now() - timedelta(days=30))
    base = graph.store_node("Baseline fact about conveyor belt B", confidence=0.5)["node"]
    strong = graph.store_node("Well-established fact about conveyor belt B", confidence=0.9)
    weak = graph.store_node("Doubtful rumour about conveyor belt B", confidence=0.1)
    stale = graph.store_node("Old fact about conveyor belt B nobody used", confidence=0.5)
    hub = graph.store_node("Central fact about conveyor belt B", confidence=0.5)["node"]
    graph.store.update_node(stale["node"]["id"], last_accessed_at=old_time)
    for i in range(3):
        leaf = graph.store_node(f"Detail {i} of the conveyor belt", confidence=0.95)["node"]
        graph.store_edge(hub["id"], leaf["id"], "related")
    ranked = [c["node_id"] for c in graph.forget_by_policy(max_nodes=0, dry_run=True)["candidates"]]
    position = {node_id: i for i, node_id in enumerate(ranked)}
    ok = (
        position[weak["node"]["id"]] < position[base["id"]] < position[strong["node"]["id"]]
        and position[stale["node"]["id"]] < position[base["id"]]
        and position[base["id"]] < position[hub["id"]]
    )
    return ok, "forgetting order (first = least valuable) checked for confidence, recency, degree"


@scenario(CATEGORY, "Forgotten nodes don't appear in topology analysis")
def forgotten_not_in_topology(graph: Graphonomous) -> tuple[bool, str]:
    first = graph.store_node("Line 4 runs at full speed on night shifts")["node"]
    second = graph.belief_revise(
        "expand", content="Line 4 does not run at full speed on night shifts"
    )
    before = graph.retrieve_context("Line 4 night shift speed")["topology"]
    graph.forget_node(second["node"]["id"], "soft")
    after = graph.retrieve_context("Line 4 night shift speed")["topology"]
    in_after = any(second["node"]["id"] in scc["nodes"] for scc in after["sccs"]) or (
        second["node"]["id"] in after.get("dag_nodes", [])
    )
    ok = before["scc_count"] == 1 and first["id"] in before["sccs"][0]["nodes"]
    ok = ok and after["scc_count"] == 0 and not in_after
    return ok, f"scc_count before {before['scc_count']}, after {after['scc_count']}"


@scenario(CATEGORY, "Memory pressure triggers forgetting in attention survey")
def memory_pressure_survey(graph: Graphonomous) -> tuple[bool, str]:
    graph.forgetting_config(max_nodes=20)
    for i in range(19):
        graph.store_node(f"Sensor log line {i}: temperature {20 + i} C")
    warning: dict[str, Any] | None = graph.attention_survey()["memory_pressure"]
    for i in range(19, 25):
        graph.store_node(f"Sensor log line {i}: temperature {20 + i} C")
    critical: dict[str, Any] | None = graph.attention_survey()["memory_pressure"]
    cycle = graph.attention_run_cycle(autonomy="act", budget=1)
    done = [
        a for a in cycle["actions"] if a["action"] == "forget_by_policy" and a["status"] == "done"
    ]
    live = graph.graph_stats()["node_count"]
    ok = (
        warning is not None
        and warning["severity"] == "warning"
        and critical is not None
        and critical["severity"] == "critical"
        and len(done) == 1
        and done[0]["result"]["forgotten_count"] == 5
        and live <= 20
    )
    return ok, (
        f"survey: {warning and warning['severity']} at 19/20, {critical and critical['severity']} "
        f"at 25/20; attention cycle forgot {done[0]['result']['forgotten_count'] if done else 0}, "
        f"{live} live nodes"
    )
