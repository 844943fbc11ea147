"""The one edge upsert (`Store.upsert_edge`, SPEC "Edge upsert") and its three users.

Rule: re-asserting an existing (source, target, relationship) edge keeps the
larger strength, merges the stated metadata over the edge's own and takes a
stated decay rate; the same rule holds through `store_edge`, learning's
`writes.link` and the merge of nodes (`merge_nodes` batch op).
"""

from __future__ import annotations

import pytest

from graphonomous import Graphonomous
from graphonomous.learning.writes import link
from graphonomous.model import Edge
from graphonomous.retrieval.graph_view import GraphEngine


def _nodes(graph: Graphonomous, *names: str) -> list[str]:
    return [graph.store_node(name, node_id=name)["node"]["id"] for name in names]


def test_store_edge_never_weakens_and_is_order_independent(graph: Graphonomous) -> None:
    a, b, c = _nodes(graph, "a", "b", "c")
    graph.store_edge(a, b, "causal", strength=0.9)
    again = graph.store_edge(a, b, "causal", strength=0.2)
    assert again["created"] is False and again["edge"]["strength"] == 0.9
    graph.store_edge(a, c, "causal", strength=0.2)
    assert graph.store_edge(a, c, "causal", strength=0.9)["edge"]["strength"] == 0.9


def test_store_edge_merges_metadata_and_takes_a_stated_decay_rate(graph: Graphonomous) -> None:
    a, b = _nodes(graph, "a", "b")
    graph.store_edge(a, b, "related", metadata={"x": 1, "y": 1}, decay_rate=0.1)
    kept = graph.store_edge(a, b, "related", metadata={"y": 2})["edge"]
    assert kept["metadata"] == {"x": 1, "y": 2} and kept["decay_rate"] == 0.1
    assert graph.store_edge(a, b, "related", decay_rate=0.02)["edge"]["decay_rate"] == 0.02


def test_manage_edge_update_still_weakens(graph: Graphonomous) -> None:
    a, b = _nodes(graph, "a", "b")
    edge_id = graph.store_edge(a, b, "causal", strength=0.9)["edge"]["id"]
    updated = graph.manage_edge("update", edge_id=edge_id, strength=0.1)
    assert updated["edge"]["strength"] == 0.1


def test_link_follows_the_same_rule(graph: Graphonomous, engine: GraphEngine) -> None:
    a, b = _nodes(graph, "a", "b")
    with engine.store.transaction():
        first, created = link(engine.store, a, b, "supports", engine.now(), strength=0.8)
        same, again = link(engine.store, a, b, "supports", engine.now(), strength=0.4)
        link(engine.store, a, b, "supports", engine.now(), metadata={"k": "v"})
    assert created and not again and same == first
    stored = engine.store.get_edge(first)
    assert stored is not None and stored.strength == 0.8 and stored.metadata == {"k": "v"}


def test_merge_keeps_the_stronger_of_two_parallel_edges(graph: Graphonomous) -> None:
    keep, other, x, y = _nodes(graph, "keep", "other", "x", "y")
    weak = graph.store_edge(keep, x, "related", strength=0.2)["edge"]["id"]
    graph.store_edge(other, x, "related", strength=0.7)
    strong = graph.store_edge(keep, y, "related", strength=0.9)["edge"]["id"]
    graph.store_edge(other, y, "related", strength=0.1)
    graph.apply_batch([{"op": "merge_nodes", "keep": keep, "merge": [other]}])
    strengths = {e.id: e.strength for e in graph.store.edges_of(keep, "out")}
    assert strengths == {weak: 0.7, strong: 0.9}


def test_upsert_refuses_fields_it_does_not_upsert(graph: Graphonomous) -> None:
    a, b = _nodes(graph, "a", "b")
    edge = Edge(id="e1", source_id=a, target_id=b, relationship="related")
    with pytest.raises(ValueError, match="agent_id"):
        graph.store.upsert_edge(edge, ["agent_id"])
    assert graph.store.find_edge(a, b, "related") is None
