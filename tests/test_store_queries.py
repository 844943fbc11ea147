"""The set-wise store questions of `store/queries.py` on a small known graph."""

from __future__ import annotations

import pytest

from graphonomous.model import DEFAULT_CREATION_SOURCE, Edge, Node
from graphonomous.store import Store
from graphonomous.store.queries import Protection

PROTECT_GOALS = Protection(("goal",), ("glacial",))


def _graph() -> Store:
    store = Store(":memory:")
    with store.transaction():
        for node_id, node_type in (("a", "semantic"), ("b", "semantic"), ("g", "goal")):
            store.insert_node(
                Node(id=node_id, content=f"note {node_id}", node_type=node_type, agent_id="x")
            )
        store.insert_edge(Edge(id="ab", source_id="a", target_id="b", relationship="supports"))
        store.insert_edge(Edge(id="bg", source_id="b", target_id="g", relationship="related"))
        store.update_node("b", forgotten_at="2026-01-01T00:00:00Z")
    return store


def test_visibility_kinds_and_light_edges() -> None:
    with _graph() as store:
        assert sorted(store.node_visibility(["a", "b", "zz"])) == [
            ("a", "x", False),
            ("b", "x", True),
        ]
        assert store.node_kinds(["g", "zz"]) == {"g": ("goal", DEFAULT_CREATION_SOURCE)}
        assert [e.id for e in store.light_edges(["b"])] == ["ab", "bg"]
        assert [e.id for e in store.light_edges(["b"], outgoing_only=True)] == ["bg"]


def test_live_only_reads_skip_forgotten_nodes() -> None:
    with _graph() as store:
        assert store.live_edge_ends() == []  # every edge touches the forgotten b
        assert store.forgotten_among(["a", "b", "g"]) == ["b"]
        assert {row.id for row in store.retention_facts()} == {"a", "g"}
        assert store.grouped_counts("nodes", "node_type", live_only=True) == {
            "goal": 1,
            "semantic": 1,
        }
        with pytest.raises(ValueError, match="live_only"):
            store.grouped_counts("edges", "relationship", live_only=True)


def test_protection_keeps_goals_out_of_pruning() -> None:
    with _graph() as store:
        with store.transaction():
            store.update_node("b", forgotten_at=None)
            store.update_node("a", confidence=0.01)
            store.update_node("g", confidence=0.01)
        assert store.protected_ids(PROTECT_GOALS) == {"g"}
        assert store.weak_unprotected_ids(PROTECT_GOALS, 0.05) == ["a"]
        with store.transaction():
            removed = store.delete_weak_edges(PROTECT_GOALS, 1.0)
        assert removed == 1 and store.get_edge("bg") is not None  # bg ends at the goal


def test_the_scrub_refuses_names_it_does_not_know() -> None:
    with _graph() as store:
        assert store.rows_mentioning("nodes", "id", "metadata", ["a"]) == []
        with pytest.raises(ValueError, match="no scrub"):
            store.rows_mentioning("nodes", "id", "content", ["a"])
        with pytest.raises(ValueError, match="no scrub"):
            store.set_text("audit_log", "seq", "details", 1, "x")
