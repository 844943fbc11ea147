"""The Graphonomous facade: store-level MCP-named methods."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from graphonomous import Graphonomous, NotFoundError, ValidationError
from graphonomous.store import BatchError


@pytest.fixture
def graph(tmp_path: Path) -> Graphonomous:
    with Graphonomous(tmp_path / "g.db") as opened:
        yield opened


def test_db_path_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHONOMOUS_DB", str(tmp_path / "env.db"))
    with Graphonomous() as from_env:
        assert from_env.db_path == str(tmp_path / "env.db")
    with Graphonomous(tmp_path / "arg.db") as from_arg:
        assert from_arg.db_path == str(tmp_path / "arg.db")
    monkeypatch.delenv("GRAPHONOMOUS_DB")
    monkeypatch.setenv("HOME", str(tmp_path))
    with Graphonomous() as default:
        assert default.db_path == str(tmp_path / ".graphonomous" / "knowledge.db")


def test_store_get_delete_node(graph: Graphonomous) -> None:
    node = graph.store_node("E-47 means pressure loss", "semantic", metadata={"k": 1})["node"]
    assert graph.get_node(node["id"])["node"] == node
    assert json.loads(json.dumps(node)) == node  # JSON-ready
    assert graph.delete_node(node["id"]) == {
        "deleted": True,
        "node_id": node["id"],
        "edges_removed": 0,
    }
    with pytest.raises(NotFoundError):
        graph.get_node(node["id"])


def test_causal_parents_must_exist(graph: Graphonomous) -> None:
    with pytest.raises(ValidationError) as info:
        graph.store_node("outcome", "outcome", causal_parent_ids=["missing"])
    assert info.value.field == "causal_parent_ids"
    assert graph.graph_stats()["node_count"] == 0


def test_store_edge_creates_then_updates(graph: Graphonomous) -> None:
    a = graph.store_node("a")["node"]["id"]
    b = graph.store_node("b")["node"]["id"]
    first = graph.store_edge(a, b, "causal")
    assert first["created"] and first["edge"]["strength"] == 0.3
    again = graph.store_edge(source_id=a, target_id=b, edge_type="causal", weight=0.9)
    assert not again["created"]
    assert again["edge"]["id"] == first["edge"]["id"]
    assert again["edge"]["strength"] == 0.9


def test_store_edge_to_missing_node_names_the_field(graph: Graphonomous) -> None:
    a = graph.store_node("a")["node"]["id"]
    with pytest.raises(ValidationError) as info:
        graph.store_edge(a, "nope", "causal")
    assert info.value.field == "target_id"


def test_manage_edge_actions(graph: Graphonomous) -> None:
    a = graph.store_node("a")["node"]["id"]
    b = graph.store_node("b")["node"]["id"]
    edge = graph.store_edge(a, b, "supports")["edge"]
    assert graph.manage_edge("get", edge_id=edge["id"])["edge"] == edge
    listed = graph.manage_edge("list", node_id=a, direction="out")
    assert [e["id"] for e in listed["edges"]] == [edge["id"]]
    updated = graph.manage_edge(
        "update", source_id=a, target_id=b, relationship="supports", strength=0.7
    )
    assert updated["edge"]["strength"] == 0.7
    assert graph.manage_edge("delete", edge_id=edge["id"])["deleted"]
    with pytest.raises(NotFoundError):
        graph.manage_edge("get", edge_id=edge["id"])
    with pytest.raises(ValidationError) as info:
        graph.manage_edge("explode")
    assert info.value.field == "action"


def test_list_nodes_filters_and_validation(graph: Graphonomous) -> None:
    graph.store_node("episode", "episodic", confidence=0.2)
    graph.store_node("fact", "semantic", confidence=0.9)
    assert graph.list_nodes(node_type="episodic")["total"] == 1
    assert graph.list_nodes(min_confidence=0.5)["nodes"][0]["content"] == "fact"
    with pytest.raises(ValidationError) as info:
        graph.list_nodes(node_type="dream")
    assert info.value.field == "node_type"


def test_similarity_search_ranks_related_text_first(graph: Graphonomous) -> None:
    graph.store_node("The hydraulic valve lost pressure after the weekend shutdown")
    graph.store_node("Bananas are rich in potassium")
    graph.store_node("Quarterly revenue grew in Europe")
    hits = graph.similarity_search("valve pressure loss", limit=2)["results"]
    assert hits[0]["content"].startswith("The hydraulic valve")
    assert len(hits) == 2
    assert hits[0]["similarity"] >= hits[1]["similarity"]


def test_similarity_index_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    with Graphonomous(path) as first:
        first.store_node("alpha beta gamma")
        first.store_node("delta epsilon")
    with Graphonomous(path) as second:
        hits = second.similarity_search("alpha gamma", limit=1)["results"]
        assert hits[0]["content"] == "alpha beta gamma"


def test_batch_is_all_or_nothing(graph: Graphonomous) -> None:
    ops = [
        {"op": "add_node", "node": {"id": "a", "content": "A"}},
        {"op": "add_edge", "edge": {"source_id": "a", "target_id": "b", "relationship": "causal"}},
        {"op": "add_node", "node": {"id": "b", "content": "B"}},
    ]
    result = graph.apply_batch(ops)
    assert result["applied"] == 3 and result["added_node_ids"] == ["a", "b"]
    bad = [
        {"op": "add_node", "node": {"id": "c", "content": "C"}},
        {"op": "add_edge", "edge": {"source_id": "c", "target_id": "zzz"}},
    ]
    with pytest.raises(BatchError) as info:
        graph.apply_batch(bad)
    assert info.value.index == 1
    assert graph.graph_stats()["node_count"] == 2
    with pytest.raises(BatchError) as info:
        graph.apply_batch([{"op": "add_node", "node": {"content": "x", "confidence": 3}}])
    assert "confidence" in str(info.value)
    assert graph.similarity_search("C", limit=5)["results"][0]["id"] in {"a", "b"}


def _stored_vector_ids(graph: Graphonomous) -> set[str]:
    return {node_id for node_id, _ in graph.store.iter_embeddings(graph.embedding_model)}


def test_deferred_embeddings_are_filled_before_any_similarity_search(
    graph: Graphonomous,
) -> None:
    graph.apply_batch([{"op": "add_node", "node": {"id": "a", "content": "alpha beta"}}])
    assert graph.similarity_search("alpha", limit=1)["results"][0]["id"] == "a"  # index loaded
    graph.apply_batch(
        [
            {"op": "add_node", "node": {"id": "b", "content": "pressure loss in pump"}},
            {"op": "update_node", "id": "a", "fields": {"content": "valve torque"}},
        ],
        defer_embeddings=True,
    )
    # Nothing embedded yet; the stale vector of the re-written node is gone.
    assert _stored_vector_ids(graph) == set()
    hits = graph.similarity_search("valve torque", limit=2)["results"]
    assert hits[0]["id"] == "a"
    assert graph.similarity_search("pump pressure", limit=1)["results"][0]["id"] == "b"
    assert _stored_vector_ids(graph) == {"a", "b"}
    # The deferred vectors are exactly the ones an eager write stores.
    with Graphonomous(":memory:") as eager:
        eager.apply_batch(
            [{"op": "add_node", "node": {"id": "b", "content": "pressure loss in pump"}}]
        )
        assert eager.store.get_embedding("b") == graph.store.get_embedding("b")


def test_deferred_embeddings_survive_a_restart_and_skip_removed_nodes(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    with Graphonomous(path) as first:
        first.similarity_search("warm the index", limit=1)
        first.apply_batch(
            [
                {"op": "add_node", "node": {"id": "a", "content": "alpha beta gamma"}},
                {"op": "add_node", "node": {"id": "b", "content": "to be removed"}},
            ],
            defer_embeddings=True,
        )
        first.apply_batch([{"op": "remove_node", "id": "b"}], defer_embeddings=True)
        # closed before any search: the vectors were never computed
    with Graphonomous(path) as second:
        assert _stored_vector_ids(second) == set()
        assert second.similarity_search("alpha gamma", limit=5)["results"][0]["id"] == "a"
        assert _stored_vector_ids(second) == {"a"}


def test_batch_merge_keeps_edges_and_provenance(graph: Graphonomous) -> None:
    graph.apply_batch(
        [
            {"op": "add_node", "node": {"id": "keep", "content": "valve resets fix E-47"}},
            {
                "op": "add_node",
                "node": {"id": "dup", "content": "valve reset fixes E-47", "confidence": 0.9},
            },
            {"op": "add_node", "node": {"id": "x", "content": "E-47"}},
            {
                "op": "add_edge",
                "edge": {"source_id": "dup", "target_id": "x", "relationship": "resolves"},
            },
            {
                "op": "add_edge",
                "edge": {"source_id": "keep", "target_id": "dup", "relationship": "similar_to"},
            },
        ]
    )
    graph.apply_batch([{"op": "merge_nodes", "keep": "keep", "merge": ["dup"]}])
    kept = graph.get_node("keep")
    assert kept["node"]["metadata"]["merged_from"] == ["dup"]
    assert kept["node"]["confidence"] == 0.9
    assert [(e["source_id"], e["target_id"]) for e in kept["edges"]] == [("keep", "x")]
    with pytest.raises(NotFoundError):
        graph.get_node("dup")


def test_graph_stats_shape(graph: Graphonomous) -> None:
    a = graph.store_node("a", "episodic")["node"]["id"]
    b = graph.store_node("b")["node"]["id"]
    graph.store_edge(a, b, "follows")
    stats = graph.graph_stats()
    assert stats["node_count"] == 2 and stats["edge_count"] == 1
    assert stats["nodes_by_type"]["episodic"] == 1
    assert stats["edges_by_relationship"] == {"follows": 1}
    assert stats["embedding_count"] == 2
    assert stats["mean_confidence"] == 0.5


def test_concurrent_writers_lose_nothing(graph: Graphonomous) -> None:
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for i in range(50):
                graph.store_node(f"worker {worker} fact {i}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert graph.graph_stats()["node_count"] == 200
