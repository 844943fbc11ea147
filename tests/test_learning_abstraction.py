"""Consolidation stage 7: extractive summaries of clusters of related episodes."""

from __future__ import annotations

import itertools

from graphonomous import Graphonomous
from graphonomous.learning.abstraction import first_sentence, medoid, shared_keywords
from graphonomous.learning.consolidator import run_consolidation, with_config

EPISODES = (
    "Operator saw alarm E-47 on pump 1 during the night shift. Pressure dropped fast.",
    "Alarm E-47 came back on pump 1 after the restart, pressure low again.",
    "Night shift logged alarm E-47 on pump 1 a third time; pressure sensor replaced.",
)


def _chain(graph: Graphonomous, texts: tuple[str, ...]) -> list[str]:
    ids = [graph.store_node(t, "episodic", confidence=0.6)["node"]["id"] for t in texts]
    for a, b in itertools.pairwise(ids):
        graph.store_edge(a, b, "follows")
    return ids


def test_a_cluster_of_three_episodes_gets_one_grounded_summary(graph: Graphonomous) -> None:
    ids = _chain(graph, EPISODES)
    entry = graph.run_consolidation()
    stage = next(s for s in entry["stages"] if s["name"] == "abstract")
    assert stage["abstractions_created"] == 1
    summary_id = stage["summaries"][0]["node_id"]
    summary = graph.store.require_node(summary_id)
    assert summary.node_type == "semantic" and summary.creation_source == "consolidation"
    assert summary.metadata["abstraction_of"] == sorted(ids)
    assert {"alarm", "pump", "pressure"} <= set(summary.metadata["keywords"])
    assert summary.content.startswith("Summary of 3 related episodes: ")
    grounding = graph.store.edges_of(summary_id, "out", "derived_from")
    assert sorted(e.target_id for e in grounding) == sorted(ids)
    assert all(e.decay_rate == 0.0 for e in grounding)
    # A retrieval aid: stored with its vector, kept out of the search indexes
    # (it must not take its members' result slots or shift BM25 statistics).
    assert graph.store.get_embedding(summary_id) is not None
    assert summary_id not in graph.vector_index() and summary_id not in graph.text_index()


def test_abstraction_is_idempotent(graph: Graphonomous) -> None:
    _chain(graph, EPISODES)
    graph.run_consolidation()
    graph.store_node("An unrelated episode about lunch", "episodic")
    again = graph.run_consolidation()
    assert again["totals"]["abstractions"] == 0
    assert graph.graph_stats()["nodes_by_type"]["semantic"] == 1


def test_small_and_oversized_clusters_are_skipped(graph: Graphonomous) -> None:
    _chain(graph, EPISODES[:2])
    config = with_config(abstraction_max_cluster=3)
    big = _chain(graph, tuple(f"Shift report {i}: conveyor belt {i} jammed" for i in range(4)))
    entry = run_consolidation(graph.engine, config=config)
    stage = next(s for s in entry["stages"] if s["name"] == "abstract")
    assert stage["abstractions_created"] == 0 and stage["clusters_too_large"] == 1
    assert len(big) == 4


def test_summary_helpers() -> None:
    assert first_sentence("One. Two three.") == "One."
    assert len(first_sentence("x" * 500)) == 200
    assert shared_keywords(["pump alarm", "pump pressure", "valve alarm"]) == ["alarm", "pump"]
    vectors = {"a": [1.0, 0.0], "b": [0.8, 0.6], "c": [0.6, 0.8]}
    assert medoid(["a", "b", "c"], vectors) == "b"
    assert medoid(["x", "y"], {}) == "x"
