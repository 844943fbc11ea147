"""Consolidation: the stage pipeline, its log, dry runs, atomicity and budgets."""

from __future__ import annotations

import math
from typing import Any

import pytest

from graphonomous import Graphonomous, ValidationError
from graphonomous.clock import ManualClock
from graphonomous.learning import consolidator, retention
from graphonomous.learning.consolidator import (
    PROMOTION_RULES,
    Q_DECAY_SHARE,
    elapsed_days,
    run_consolidation,
    strengthened,
    with_config,
)


def _stage(entry: dict[str, Any], name: str) -> dict[str, Any]:
    stage: dict[str, Any] = next(s for s in entry["stages"] if s["name"] == name)
    return stage


def _node(graph: Graphonomous, node_id: str) -> dict[str, Any]:
    node: dict[str, Any] = graph.get_node(node_id, include_forgotten=True)["node"]
    return node


def test_stages_run_in_order_and_are_logged(graph: Graphonomous) -> None:
    graph.store_node("a fact about pumps")
    entry = graph.run_consolidation()
    assert [s["stage"] for s in entry["stages"]] == ["1", "2", "3", "4", "4.5", "5", "6", "7"]
    assert all(s["ms"] >= 0 for s in entry["stages"])
    assert entry["trigger"] == "manual" and entry["dry_run"] is False
    log = graph.consolidation_log(5)
    assert log["count"] == 1 and log["runs"][0] == entry
    assert log["last_run_at"] == entry["started_at"]
    assert entry["totals"]["nodes_before"] == entry["totals"]["nodes_after"] == 1


def test_decay_per_timescale_and_q_at_half_rate() -> None:
    clock = ManualClock("2026-01-01T00:00:00Z")
    with Graphonomous(":memory:", clock=clock) as graph:
        ids = {
            scale: graph.store_node(f"{scale} memory about valves", timescale=scale)["node"]["id"]
            for scale in ("fast", "medium", "slow", "glacial")
        }
        edge = graph.store_edge(ids["slow"], ids["medium"], "related", strength=0.5)["edge"]
        clock.advance(hours=0.5)
        graph.run_consolidation()
        for scale, node_id in ids.items():
            node = _node(graph, node_id)
            expected = retention.retained(0.5, scale, node["decay_rate"], 1800.0)
            assert node["confidence"] == pytest.approx(expected)
            rate = retention.decay_per_second(scale, node["decay_rate"])
            assert node["q_value"] == pytest.approx(0.5 * math.exp(-Q_DECAY_SHARE * rate * 1800))
        assert _node(graph, ids["glacial"])["confidence"] == 0.5
        assert _node(graph, ids["fast"])["confidence"] < _node(graph, ids["medium"])["confidence"]
        stored = graph.manage_edge("get", edge_id=edge["id"])["edge"]
        days = 1800 / 86400
        assert stored["strength"] == pytest.approx(
            0.5 * math.exp(-consolidator.EDGE_DECAY_PER_DAY * edge["decay_rate"] * days)
        )


def test_a_node_at_default_confidence_fades_one_ttl_after_its_last_reinforcement() -> None:
    clock = ManualClock("2026-01-01T00:00:00Z")
    with Graphonomous(":memory:", clock=clock) as graph:
        node = graph.store_node("a note", timescale="medium", decay_rate=0.01)["node"]["id"]
        clock.advance(days=6.99)
        graph.run_consolidation()
        assert _node(graph, node)["forgotten_at"] is None
        clock.advance(days=0.02)
        graph.run_consolidation()
        assert _node(graph, node)["forgotten_at"] == graph.now()


def test_decay_follows_time_not_the_number_of_runs() -> None:
    """Every 5 minutes for three days, or once after three days: the same values."""
    confidences = []
    for step_hours in (1 / 12, 72.0):
        clock = ManualClock("2026-01-01T00:00:00Z")
        with Graphonomous(":memory:", clock=clock) as graph:
            node = graph.store_node("knowledge about valves", "episodic")["node"]["id"]
            for _ in range(round(72.0 / step_hours)):
                clock.advance(hours=step_hours)
                graph.run_consolidation()
            confidences.append((_node(graph, node)["confidence"], _node(graph, node)["q_value"]))
    assert confidences[0] == pytest.approx(confidences[1], rel=1e-9)
    assert elapsed_days(None, "2026-01-01T00:00:00.000Z") == 0.0
    assert elapsed_days("2026-01-01T00:00:00.000Z", "2026-01-01T12:00:00.000Z") == 0.5


def test_decay_spares_protected_and_a_retrieval_resets_it() -> None:
    clock = ManualClock("2026-01-01T00:00:00Z")
    with Graphonomous(":memory:", clock=clock) as graph:
        pinned = graph.store_node("pinned knowledge", pinned=True)["node"]["id"]
        goal = graph.store_node("a goal node", "goal")["node"]["id"]
        plain = graph.store_node("plain knowledge about turbines", "episodic")["node"]["id"]
        clock.advance(days=2)
        graph.run_consolidation()
        assert _node(graph, pinned)["confidence"] == 0.5
        assert _node(graph, goal)["confidence"] == 0.5
        decayed = _node(graph, plain)["confidence"]
        assert decayed < 0.5
        # Retrieved: reinforced now, back to its anchor value, and the clock restarts.
        graph.retrieve_context("turbines knowledge")
        assert _node(graph, plain)["confidence"] == 0.5
        assert _node(graph, plain)["reinforced_at"] == graph.now()
        clock.advance(days=2)
        graph.run_consolidation()
        assert _node(graph, plain)["confidence"] == pytest.approx(decayed)


def test_prune_weak_nodes_and_edges_but_never_protected(graph: Graphonomous) -> None:
    weak = graph.store_node("a weak memory", confidence=0.04)["node"]["id"]
    weak_pinned = graph.store_node("a weak but pinned memory", confidence=0.01, pinned=True)
    weak_glacial = graph.store_node("weak glacial memory", confidence=0.01, timescale="glacial")
    strong = graph.store_node("a strong memory about boilers", confidence=0.9)["node"]["id"]
    other = graph.store_node("another strong memory about seals", confidence=0.9)["node"]["id"]
    thin = graph.store_edge(strong, other, "related", strength=0.015)["edge"]["id"]
    graph.store_edge(weak, strong, "related", strength=0.9)
    index_before = graph.vector_index()
    assert weak in index_before and weak in graph.text_index()
    entry = graph.run_consolidation()
    prune = _stage(entry, "prune_nodes")
    assert prune["policy"] == "threshold" and prune["node_ids"] == [weak]
    assert prune["mode"] == "soft"
    live = set(graph.store.node_ids())
    assert weak not in live
    # Soft: the row and its edge stay, the audit log names it with the reason.
    assert _node(graph, weak)["forgotten_at"] == entry["started_at"]
    assert len(graph.store.edges_of(weak)) == 1
    (audit,) = [e for e in graph.store.audit_entries() if e["action"] == "fade"]
    assert audit["details"]["node_ids"] == [weak] and audit["details"]["reason"] == "faded"
    assert {weak_pinned["node"]["id"], weak_glacial["node"]["id"], strong} <= live
    assert graph.store.get_edge(thin) is None and _stage(entry, "prune_edges")["edges_pruned"] == 1
    # Both search indexes forget the pruned node.
    assert weak not in graph.vector_index() and weak not in graph.text_index()


def test_over_budget_uses_the_hybrid_forgetting_policy(graph: Graphonomous) -> None:
    ids = [
        graph.store_node(f"memory number {i} about plant section {i}", confidence=0.2 + i / 20)[
            "node"
        ]["id"]
        for i in range(6)
    ]
    entry = run_consolidation(graph.engine, config=with_config(max_nodes=4))
    prune = _stage(entry, "prune_nodes")
    assert prune["policy"] == "hybrid" and prune["nodes_pruned"] == 2
    assert graph.graph_stats()["node_count"] == 4
    assert set(prune["node_ids"]) <= set(ids)


def test_strengthen_counts_each_coactivation_once(graph: Graphonomous) -> None:
    a = graph.store_node("first co-retrieved memory")["node"]["id"]
    b = graph.store_node("second co-retrieved memory")["node"]["id"]
    edge = graph.store_edge(a, b, "related", strength=0.4, decay_rate=0.0)["edge"]["id"]
    graph.store.update_edge(edge, co_activation_count=3)
    entry = graph.run_consolidation()
    stored = graph.manage_edge("get", edge_id=edge)["edge"]
    assert stored["strength"] == pytest.approx(strengthened(0.4, 3, 0.1))
    assert stored["metadata"]["co_activation_counted"] == 3
    assert _stage(entry, "strengthen")["co_activations_counted"] == 3
    graph.run_consolidation()  # nothing new: no second boost
    assert graph.manage_edge("get", edge_id=edge)["edge"]["strength"] == stored["strength"]
    graph.store.update_edge(edge, co_activation_count=4)
    graph.run_consolidation()
    again = graph.manage_edge("get", edge_id=edge)["edge"]["strength"]
    assert again == pytest.approx(strengthened(stored["strength"], 1, 0.1))


def test_strengthened_is_bounded() -> None:
    assert strengthened(0.3, 0, 0.1) == pytest.approx(0.3)
    assert strengthened(0.3, 1000, 0.1) <= 1.0
    assert strengthened(0.3, 2, 0.1) > strengthened(0.3, 1, 0.1)


def test_promotion_by_access_relative_to_age(graph: Graphonomous) -> None:
    busy = graph.store_node("a busy fast memory", timescale="fast")["node"]["id"]
    idle = graph.store_node("an idle fast memory", timescale="fast")["node"]["id"]
    medium = graph.store_node("a medium memory used once", timescale="medium")["node"]["id"]
    graph.store.update_node(busy, access_count=PROMOTION_RULES["fast"][0])
    graph.store.update_node(idle, access_count=1)
    graph.store.update_node(medium, access_count=PROMOTION_RULES["medium"][0])  # but brand new
    entry = graph.run_consolidation()
    assert _node(graph, busy)["timescale"] == "medium"
    assert _node(graph, idle)["timescale"] == "fast"
    assert _node(graph, medium)["timescale"] == "medium"  # younger than the 1-day minimum age
    assert _stage(entry, "promote")["by_tier"] == {"fast->medium": 1}


def test_dry_run_changes_nothing_but_reports_exactly(graph: Graphonomous) -> None:
    graph.store_node("a weak memory", confidence=0.04)
    graph.store_node("Error E-47 indicates hydraulic pressure loss", confidence=0.9)
    graph.store_node("Error E-47 indicates hydraulic pressure loss.", confidence=0.6)
    before = [n for n in graph.store.list_nodes()]
    dry = graph.run_consolidation(dry_run=True)
    assert graph.store.list_nodes() == before
    assert dry["dry_run"] is True
    assert dry["totals"]["nodes_pruned"] == 1 and dry["totals"]["nodes_merged"] == 1
    real = graph.run_consolidation()
    assert real["totals"]["nodes_pruned"] == 1 and real["totals"]["nodes_merged"] == 1
    assert graph.consolidation_log()["count"] == 2


def test_a_failing_stage_rolls_back_the_whole_run(
    graph: Graphonomous, monkeypatch: pytest.MonkeyPatch
) -> None:
    weak = graph.store_node("a weak memory", confidence=0.04)["node"]["id"]
    before = graph.store.list_nodes()

    def broken(run: consolidator.Run) -> dict[str, Any]:
        raise RuntimeError("disk on fire")

    stages = list(consolidator.STAGES)
    stages[5] = ("5", "merge", broken)
    monkeypatch.setattr(consolidator, "STAGES", tuple(stages))
    with pytest.raises(RuntimeError):
        graph.run_consolidation()
    assert graph.store.list_nodes() == before and weak in graph.vector_index()
    assert graph.consolidation_log()["count"] == 0


def test_similarity_budget_carries_over_between_runs(graph: Graphonomous) -> None:
    for i in range(5):
        graph.store_node(f"distinct memory {i} about section {i * 17}")
    config = with_config(similarity_budget=2)
    first = run_consolidation(graph.engine, config=config)
    assert first["totals"]["similarity_checked"] == 2
    assert first["totals"]["similarity_pending"] == 3
    second = run_consolidation(graph.engine, config=config)
    assert second["totals"]["similarity_pending"] == 1
    third = run_consolidation(graph.engine, config=config)
    assert (third["totals"]["similarity_checked"], third["totals"]["similarity_pending"]) == (1, 0)
    fourth = run_consolidation(graph.engine, config=config)
    assert fourth["totals"]["similarity_checked"] == 0
    graph.store_node("a brand new memory")
    assert run_consolidation(graph.engine, config=config)["totals"]["similarity_checked"] == 1


def test_arguments_are_validated(graph: Graphonomous) -> None:
    with pytest.raises(ValidationError):
        graph.run_consolidation(trigger="sometimes")
    with pytest.raises(ValidationError):
        graph.run_consolidation(dry_run="yes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        graph.consolidation_log(0)
    with pytest.raises(ValidationError):
        with_config(conflict_strategies=("coin_flip",))
    with pytest.raises(ValidationError):
        with_config(merge_similarity_threshold=1.5)
