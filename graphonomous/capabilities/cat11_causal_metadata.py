"""Category 11 — causal metadata (GraphMemBench Phase 3): 8 scenarios.

Seed 003 v0.3 "Causal edge metadata prep": ``causal_strength``,
``confounders`` and ``intervention_history`` in edge metadata, updated on
outcome feedback with status-dependent adjustments; nodes carry
``causal_parent_ids``; outcomes are linked to the nodes that caused them, and
retrieval reports which results are causal ancestors of others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model import ValidationError
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 11


def _chain(graph: Graphonomous) -> tuple[str, str, str]:
    a = graph.store_node("Low oil pressure in turbine T1")["node"]["id"]
    b = graph.store_node("Bearing wear in turbine T1")["node"]["id"]
    c = graph.store_node("Vibration alarm on turbine T1")["node"]["id"]
    return a, b, c


def _edge(graph: Graphonomous, source: str, target: str, relationship: str) -> dict[str, Any]:
    edge: dict[str, Any] = next(
        e
        for e in graph.get_node(source)["edges"]
        if e["target_id"] == target and e["relationship"] == relationship
    )
    return edge


@scenario(CATEGORY, "causal_parent_ids are stored; an unknown parent is rejected by field")
def causal_parents(graph: Graphonomous) -> tuple[bool, str]:
    cause = graph.store_node("Frost on the intake grille")["node"]["id"]
    effect = graph.store_node("Intake airflow drops", causal_parent_ids=[cause])["node"]
    try:
        graph.store_node("Compressor surges", causal_parent_ids=["missing-parent"])
        field = None
    except ValidationError as exc:
        field = exc.field
    count = graph.graph_stats()["node_count"]
    ok = effect["causal_parent_ids"] == [cause] and field == "causal_parent_ids" and count == 2
    return ok, f"parents {len(effect['causal_parent_ids'])}, rejected field {field}, nodes {count}"


@scenario(CATEGORY, "A successful intervention strengthens the causes edge into its node")
def success_strengthens(graph: Graphonomous) -> tuple[bool, str]:
    a, b, _ = _chain(graph)
    graph.store_edge(a, b, "causes", strength=0.6)
    result = graph.learn_from_outcome("replace-bearing", "success", 0.9, [b])
    after = _edge(graph, a, b, "causes")["metadata"].get("causal_strength")
    ok = len(result["causal_edges"]) == 1 and isinstance(after, float) and 0.6 < after <= 1.0
    return ok, f"causal_strength 0.6 → {after}"


@scenario(CATEGORY, "A failed intervention weakens it, and the history keeps both in order")
def failure_weakens(graph: Graphonomous) -> tuple[bool, str]:
    a, b, _ = _chain(graph)
    graph.store_edge(a, b, "causes", strength=0.6)
    graph.learn_from_outcome("try-1", "success", 0.9, [b])
    middle = _edge(graph, a, b, "causes")["metadata"]["causal_strength"]
    graph.learn_from_outcome("try-2", "failure", 0.9, [b])
    metadata = _edge(graph, a, b, "causes")["metadata"]
    history = [(h["action_id"], h["status"]) for h in metadata.get("intervention_history", [])]
    ok = (
        metadata["causal_strength"] < middle
        and history == [("try-1", "success"), ("try-2", "failure")]
        and all("outcome_id" in h for h in metadata["intervention_history"])
    )
    return ok, f"{middle:.3f} → {metadata['causal_strength']:.3f}, history {history}"


@scenario(CATEGORY, "Only causal kinds into the causal node change; other edges keep metadata")
def only_causal_edges(graph: Graphonomous) -> tuple[bool, str]:
    a, b, c = _chain(graph)
    graph.store_edge(a, b, "related", strength=0.6)
    graph.store_edge(b, c, "causes", strength=0.6)  # out of the causal node, not into it
    result = graph.learn_from_outcome("inspect", "success", 0.9, [b])
    related = _edge(graph, a, b, "related")["metadata"]
    outgoing = _edge(graph, b, c, "causes")["metadata"]
    ok = result["causal_edges"] == [] and "causal_strength" not in related and not outgoing
    return ok, f"updated {len(result['causal_edges'])}, related {related}, outgoing {outgoing}"


@scenario(CATEGORY, "Confounders recorded on a causal edge survive outcome updates")
def confounders_kept(graph: Graphonomous) -> tuple[bool, str]:
    a, b, _ = _chain(graph)
    confounders = ["ambient temperature", "oil grade"]
    graph.store_edge(a, b, "causes", strength=0.5, metadata={"confounders": confounders})
    for i in range(3):
        graph.learn_from_outcome(f"run-{i}", "success", 0.8, [b])
    metadata = _edge(graph, a, b, "causes")["metadata"]
    ok = metadata.get("confounders") == confounders and len(metadata["intervention_history"]) == 3
    return ok, f"confounders {metadata.get('confounders')}"


@scenario(CATEGORY, "An outcome becomes a node whose causal parents are the causes")
def outcome_node(graph: Graphonomous) -> tuple[bool, str]:
    a, b, _ = _chain(graph)
    result = graph.learn_from_outcome("shim-bearing", "partial_success", 0.7, [a, b])
    outcome = graph.get_node(result["outcome_node_id"])
    node = outcome["node"]
    linked = sorted(e["target_id"] for e in outcome["edges"] if e["source_id"] == node["id"])
    ok = (
        node["node_type"] == "outcome"
        and sorted(node["causal_parent_ids"]) == sorted([a, b])
        and linked == sorted([a, b])
    )
    return (
        ok,
        f"type {node['node_type']}, parents {len(node['causal_parent_ids'])}, links {len(linked)}",
    )


@scenario(CATEGORY, "trace_evidence_path follows a causal chain in order")
def causal_path(graph: Graphonomous) -> tuple[bool, str]:
    a, b, c = _chain(graph)
    graph.store_edge(a, b, "causes", strength=0.8)
    graph.store_edge(b, c, "causes", strength=0.8)
    graph.store_node("Turbine T2 is on standby")
    found = graph.trace_evidence_path(a, c, max_hops=4)
    path = found["paths"][0] if found["paths"] else {}
    ok = found["found"] and path.get("nodes") == [a, b, c] and path.get("hops") == 2
    return ok, f"found {found['found']}, hops {path.get('hops')}"


@scenario(CATEGORY, "Retrieval names the results that cause other results")
def retrieval_causal_context(graph: Graphonomous) -> tuple[bool, str]:
    a, b, _ = _chain(graph)
    graph.store_edge(a, b, "causes", strength=0.8)
    leaf = graph.store_node("Turbine T1 vibration trips the unit", causal_parent_ids=[b])
    leaf_id = leaf["node"]["id"]
    result = graph.retrieve_context("turbine T1 oil pressure bearing wear vibration trips")
    returned = {r["node_id"] for r in result["results"]}
    context = set(result["causal_context"])
    ok = {a, b, leaf_id} <= returned and context >= {a, b} and leaf_id not in context
    return ok, f"causal_context {len(context)} of {len(returned)} results"
