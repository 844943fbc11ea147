"""deliberate: plans for κ > 0 SCCs (fault lines, claims, questions) and write-back."""

from __future__ import annotations

import pytest

from graphonomous import Graphonomous, ValidationError
from graphonomous.learning.deliberation import arc_relationships
from graphonomous.model import Edge
from graphonomous.topology import deliberation_budget

LOOP = (
    "Market share drives revenue",
    "Revenue funds research and development",
    "Research and development improves product quality",
    "Product quality drives market share",
)


def _loop(graph: Graphonomous) -> list[str]:
    ids = [graph.store_node(text, confidence=0.6)["node"]["id"] for text in LOOP]
    for i, node in enumerate(ids):
        graph.store_edge(node, ids[(i + 1) % len(ids)], "causes")
    return ids


def test_plan_for_a_simple_loop(graph: Graphonomous) -> None:
    ids = _loop(graph)
    result = graph.deliberate(node_ids=ids)
    assert result["routing"] == "deliberate" and result["max_kappa"] == 1
    (plan,) = result["plans"]
    assert plan["kappa"] == 1 and plan["approximate"] is False
    assert plan["deliberation_budget"] == deliberation_budget(1)
    (fault,) = plan["fault_lines"]
    assert fault["relationships"] == ["causes"]
    assert {fault["source"], fault["target"]} <= set(ids)
    claims = plan["competing_claims"]
    side_a = {c["node_id"] for c in claims["side_a"]}
    side_b = {c["node_id"] for c in claims["side_b"]}
    assert side_a | side_b == set(ids) and not side_a & side_b
    assert fault["source"] in side_a and fault["target"] in side_b
    assert len(plan["questions"]) == 2 and "cause" in plan["questions"][0]


def test_contradiction_questions_ask_which_holds(graph: Graphonomous) -> None:
    a = graph.store_node("Valve V2 is open at night")["node"]["id"]
    b = graph.store_node("Valve V2 is closed at night")["node"]["id"]
    graph.store_edge(a, b, "contradicts")
    graph.store_edge(b, a, "contradicts")
    (plan,) = graph.deliberate(node_ids=[a, b])["plans"]
    assert plan["questions"][0].startswith("Which holds:")


def test_acyclic_regions_and_the_whole_graph(graph: Graphonomous) -> None:
    chain = [graph.store_node(f"step {i} of a procedure")["node"]["id"] for i in range(3)]
    graph.store_edge(chain[0], chain[1], "follows")
    assert graph.deliberate(node_ids=chain)["plans"] == []
    ids = _loop(graph)
    whole = graph.deliberate()
    assert whole["region"] == {"source": "graph", "node_count": 7}
    assert [p["nodes"] for p in whole["plans"]] == [sorted(ids)]
    by_query = graph.deliberate(query="market share revenue research quality")
    assert by_query["region"]["source"] == "query" and by_query["max_kappa"] == 1


def test_conclusions_are_written_back_and_kappa_reported(graph: Graphonomous) -> None:
    ids = _loop(graph)
    pending = graph.deliberate(
        node_ids=ids, conclusions=[{"scc_id": "scc-0", "content": "Invest in quality first"}]
    )
    assert pending["written"] is False and "node_id" not in pending["conclusions"][0]
    result = graph.deliberate(
        node_ids=ids,
        conclusions=[
            {"scc_id": "scc-0", "content": "Invest in quality first", "confidence": 0.8},
            {"node_ids": ids[:2], "content": "Revenue and share move together"},
        ],
        write_back=True,
    )
    assert result["written"] is True
    first, second = result["conclusions"]
    node = graph.store.require_node(first["node_id"])
    assert node.confidence == 0.8 and node.metadata["deliberation"]["kappa_before"] == 1
    grounded = graph.store.edges_of(first["node_id"], "out", "derived_from")
    assert sorted(e.target_id for e in grounded) == sorted(ids)
    assert second["confidence"] == 0.7 and second["node_ids"] == sorted(ids[:2])
    assert result["kappa_after"] == {
        "max_kappa": 1,
        "sccs": [{"scc_id": "scc-0", "kappa_before": 1, "kappa_after": 1}],
    }
    assert first["node_id"] in graph.vector_index()


def test_invalid_requests(graph: Graphonomous) -> None:
    ids = _loop(graph)
    with pytest.raises(ValidationError):
        graph.deliberate(query="x", node_ids=ids)
    with pytest.raises(ValidationError):
        graph.deliberate(node_ids=["missing"])
    with pytest.raises(ValidationError):
        graph.deliberate(node_ids=ids, conclusions=[{"scc_id": "scc-9", "content": "x"}])
    with pytest.raises(ValidationError):
        graph.deliberate(node_ids=ids, conclusions=[{"content": "no target"}])


def test_arc_relationships_follow_kappa_directions() -> None:
    edges = [
        Edge(id="1", source_id="a", target_id="b", relationship="causes"),
        Edge(id="2", source_id="b", target_id="a", relationship="superseded_by"),
        Edge(id="3", source_id="a", target_id="b", relationship="related"),
    ]
    assert arc_relationships(edges, "a", "b") == ["causes", "superseded_by"]
    assert arc_relationships(edges, "b", "a") == []
