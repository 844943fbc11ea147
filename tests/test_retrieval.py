"""retrieve_context: candidates, expansion, effort, utility rerank, topology, side effects."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from graphonomous import Graphonomous, ValidationError, telemetry
from graphonomous.contract import check_document
from graphonomous.embed import numpy_available
from graphonomous.model import RELATIONSHIPS, Edge
from graphonomous.retrieval import (
    EDGE_KIND_WEIGHTS,
    causal_context,
    contradiction_flags,
    effort_plan,
    with_settings,
)
from graphonomous.retrieval.run import SOURCES

FORGOTTEN_AT = "2026-01-01T00:00:00.000Z"


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as opened:
        yield opened


def _add(graph: Graphonomous, node_id: str, content: str, **fields: Any) -> str:
    return str(graph.store_node(content, node_id=node_id, **fields)["node"]["id"])


def _ids(result: dict[str, Any]) -> list[str]:
    return [item["node_id"] for item in result["results"]]


def _by_id(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["node_id"]: item for item in result["results"]}


def _pump_graph(graph: Graphonomous) -> None:
    """Seeds about pumps; neighbours that only the graph connects to the query."""
    _add(graph, "pump", "The pump lost pressure because the valve was stuck")
    _add(graph, "valve", "Valve seal worn out after six months of service")
    _add(graph, "e47", "Error E-47 is shown on the panel")
    _add(graph, "ticket", "Maintenance ticket opened by the night shift")
    _add(graph, "budget", "Quarterly budget review for marketing")
    graph.store_edge("valve", "pump", "causes", strength=0.9)
    graph.store_edge("pump", "e47", "causes", strength=0.8)
    graph.store_edge("e47", "ticket", "related", strength=0.6)


# -- seed 004: two-phase retrieval ------------------------------------------------


def _ten_procedures(graph: Graphonomous) -> list[str]:
    return [
        _add(graph, f"p{i}", f"Restart the payment service worker after a deploy, variant {i}")
        for i in range(10)
    ]


def test_q_values_promote_successful_nodes(graph: Graphonomous) -> None:
    ids = _ten_procedures(graph)
    query = "restart the payment service worker after deploy"
    before = _ids(graph.retrieve_context(query, limit=10, effort=0))
    assert sorted(before) == ids
    # What the learner will do (seed 004: q += 0.3 (reward - q), one update each).
    succeeded, failed = [before[9], before[7], before[5]], [before[0], before[1]]
    for node_id in succeeded:
        graph.store.update_node(node_id, q_value=0.5 + 0.3 * (1.0 - 0.5), q_update_count=1)
    for node_id in failed:
        graph.store.update_node(node_id, q_value=0.5 + 0.3 * (0.0 - 0.5), q_update_count=1)
    after = graph.retrieve_context(query, limit=10, effort=0)
    order = _ids(after)
    assert after["stats"]["utility_rerank"] is True
    assert "utility_rerank" in after["stats"]["mechanisms"]
    assert set(order[:3]) == set(succeeded)
    assert set(order[-2:]) == set(failed)
    # The blend is exactly (1 - 0.3) * score + 0.3 * q on top of the phase-1 score.
    no_utility = with_settings(utility_weight=0.0)
    phase1 = {
        r["node_id"]: r["score"]
        for r in graph.retrieve_context(query, limit=10, effort=0, settings=no_utility)["results"]
    }
    for item in after["results"]:
        q = graph.store.require_node(item["node_id"]).q_value
        assert item["score"] == pytest.approx(0.7 * phase1[item["node_id"]] + 0.3 * q, abs=2e-6)


def test_q_values_have_no_effect_without_outcomes(graph: Graphonomous) -> None:
    _ten_procedures(graph)
    query = "restart the payment service worker after deploy"
    before = graph.retrieve_context(query, limit=10, effort=0)
    # q_value without any recorded update must be ignored (seed 004).
    graph.store.update_node("p3", q_value=0.99)
    graph.store.update_node("p4", q_value=0.01)
    after = graph.retrieve_context(query, limit=10, effort=0)
    assert after["stats"]["utility_rerank"] is False
    assert [(r["node_id"], r["score"]) for r in after["results"]] == [
        (r["node_id"], r["score"]) for r in before["results"]
    ]


def test_superseded_nodes_are_left_out_or_demoted(graph: Graphonomous) -> None:
    _add(graph, "old", "The office wifi password is hunter2")
    _add(graph, "new", "The office wifi password is correct-horse")
    # Written a moment apart, the two are concurrent: shown together, the later first.
    plain = graph.retrieve_context("office wifi password", effort=0)
    assert _ids(plain)[:2] == ["new", "old"]
    assert all("contradicted" in row["flags"] for row in plain["results"][:2])
    best = max(row["score"] for row in plain["results"])
    graph.store.update_node("old", superseded_by="new")
    assert "old" not in _ids(graph.retrieve_context("office wifi password", effort=0))
    demoted = graph.retrieve_context("office wifi password", effort=0, include_superseded=True)
    assert _by_id(demoted)["old"]["score"] == pytest.approx(best * 0.5, abs=2e-6)
    assert demoted["stats"]["superseded_demoted"] == 1
    assert _ids(demoted)[0] == "new"


# -- forgetting ---------------------------------------------------------------------


@pytest.mark.parametrize("effort", [0, 1, 6, 9])
def test_forgotten_nodes_are_invisible(graph: Graphonomous, effort: int) -> None:
    _pump_graph(graph)
    graph.retrieve_context("pump", effort=effort)  # build the indexes and the snapshot first
    graph.store.update_node("pump", forgotten_at=FORGOTTEN_AT)  # a raw write: the change log
    result = graph.retrieve_context("pump lost pressure valve", effort=effort)
    assert "pump" not in _ids(result)
    assert all(item["via"] != "pump" for item in result["results"])
    topology = result["topology"]
    assert "pump" not in topology["dag_nodes"]
    assert all("pump" not in scc["nodes"] for scc in topology["sccs"])
    assert all(item["hops"] > 0 for item in result["results"] if item["channel"] == "neighbor")
    assert graph.store.require_node("pump", include_forgotten=True).access_count == 1


# -- topology -----------------------------------------------------------------------


def test_topology_is_canonical_and_routes(graph: Graphonomous) -> None:
    _pump_graph(graph)
    dag = graph.retrieve_context("pump valve error panel ticket", effort=1)
    assert check_document(dag["topology"], "topology") == []
    assert check_document(dag, "retrieve_context") == []
    assert dag["topology"]["routing"] == "fast"
    graph.store_edge("e47", "valve", "causes", strength=0.5)  # closes valve→pump→e47→valve
    cyclic = graph.retrieve_context("pump valve error panel ticket", effort=1)
    assert check_document(cyclic["topology"], "topology") == []
    assert cyclic["topology"]["routing"] == "deliberate"
    (scc,) = cyclic["topology"]["sccs"]
    assert scc["nodes"] == ["e47", "pump", "valve"] and scc["kappa"] == 1


def test_topology_window_includes_neighbours_of_results(graph: Graphonomous) -> None:
    _add(graph, "a", "alpha centauri is a star system")
    _add(graph, "b", "zebra crossing rules")
    _add(graph, "c", "quantum chromodynamics")
    graph.store_edge("a", "b", "depends_on")
    graph.store_edge("b", "c", "depends_on")
    graph.store_edge("c", "a", "depends_on")
    result = graph.retrieve_context("alpha centauri star system", limit=1, effort=0)
    assert _ids(result) == ["a"]
    # Only a is returned, but its neighbours b and c are in the window, closing the cycle.
    assert result["topology"]["routing"] == "deliberate"
    assert result["stats"]["topology_window"] == 3


def test_route_telemetry_uses_retrieve_context_trigger(graph: Graphonomous) -> None:
    _pump_graph(graph)
    telemetry.reset_counters()
    graph.retrieve_context("pump")
    assert telemetry.counters()["routing"]["retrieve_context"] == {"fast": 1}


# -- side effects ---------------------------------------------------------------------


def test_side_effects_access_and_co_activation_from_outcomes(graph: Graphonomous) -> None:
    _pump_graph(graph)
    result = graph.retrieve_context("pump lost pressure valve seal", limit=2, effort=0)
    assert set(_ids(result)) == {"pump", "valve"}
    for node_id in ("pump", "valve"):
        node = graph.store.require_node(node_id)
        assert node.access_count == 1 and node.last_accessed_at is not None
    assert graph.store.require_node("budget").access_count == 0
    between = graph.store.find_edge("valve", "pump", "causes")
    outside = graph.store.find_edge("pump", "e47", "causes")
    assert between is not None and outside is not None
    # Retrieval alone counts no co-activation: only a rewarded outcome does.
    assert between.co_activation_count == 0 and outside.co_activation_count == 0
    graph.retrieve_context("pump lost pressure valve seal", limit=2, effort=0)
    assert graph.store.require_node("pump").access_count == 2
    graph.learn_from_outcome("answer", "failure", 1.0, ["pump", "valve"])
    assert graph.store.find_edge("valve", "pump", "causes").co_activation_count == 0
    graph.learn_from_outcome("answer", "success", 1.0, ["pump", "valve"])
    after = graph.store.find_edge("valve", "pump", "causes")
    assert after is not None and after.co_activation_count == 1
    assert graph.store.find_edge("pump", "e47", "causes").co_activation_count == 0


def test_side_effects_keep_the_snapshot_valid(graph: Graphonomous) -> None:
    _pump_graph(graph)
    graph.retrieve_context("pump", effort=9)
    snapshot = graph.graph_snapshot()
    graph.retrieve_context("pump", effort=9)  # writes access counters only
    assert graph.graph_snapshot() is snapshot
    graph.store_edge("budget", "ticket", "related")
    assert graph.graph_snapshot() is not snapshot  # a real write invalidates it


# -- expansion and effort ------------------------------------------------------------------


# One candidate only: every other result must come from the graph.
SINGLE_SEED = with_settings(min_candidates=1, candidate_multiplier=0)


def test_expansion_scores_hops_and_via(graph: Graphonomous) -> None:
    _pump_graph(graph)
    result = graph.retrieve_context("panel", limit=10, expansion_hops=2, settings=SINGLE_SEED)
    found = _by_id(result)
    seed = found["e47"]
    assert seed["channel"] in ("seed", "bm25") and seed["hops"] == 0 and seed["via"] is None
    pump = found["pump"]
    assert (pump["channel"], pump["hops"], pump["via"]) == ("neighbor", 1, "e47")
    assert pump["score"] == pytest.approx(seed["score"] * 0.8 * 0.85, abs=2e-6)
    assert (found["ticket"]["hops"], found["ticket"]["via"]) == (1, "e47")
    valve = found["valve"]
    assert (valve["channel"], valve["hops"], valve["via"]) == ("neighbor", 2, "pump")
    assert valve["score"] == pytest.approx(pump["score"] * 0.9 * 0.85, abs=2e-6)
    assert "budget" not in found
    one_hop = graph.retrieve_context("panel", limit=10, expansion_hops=1, settings=SINGLE_SEED)
    assert sorted(_ids(one_hop)) == ["e47", "pump", "ticket"]
    assert _ids(graph.retrieve_context("panel", limit=10, effort=0, settings=SINGLE_SEED)) == [
        "e47"
    ]


def test_neighbors_per_node_keeps_the_strongest(graph: Graphonomous) -> None:
    _add(graph, "hub", "xylophone hub")
    for i, strength in enumerate((0.1, 0.9, 0.5, 0.7)):
        _add(graph, f"n{i}", f"unrelated leaf number {i}")
        graph.store_edge("hub", f"n{i}", "related", strength=strength)
    # A single candidate (the hub): the leaves can only come from expansion.
    result = graph.retrieve_context(
        "xylophone", limit=10, neighbors_per_node=2, settings=SINGLE_SEED
    )
    neighbours = [i["node_id"] for i in result["results"] if i["channel"] == "neighbor"]
    assert sorted(neighbours) == ["n1", "n3"]


@pytest.mark.parametrize(
    ("effort", "expected", "absent"),
    [
        (0, ["embedding", "bm25", "score_fusion", "topology"], ["support", "expansion"]),
        (3, ["support", "expansion"], ["ppr_local", "ppr_full"]),
        (6, ["expansion", "ppr_local", "louvain"], ["ppr_full", "contradiction_check"]),
        (9, ["expansion", "ppr_full", "louvain", "contradiction_check"], ["ppr_local"]),
    ],
)
def test_effort_levels_report_mechanisms(
    graph: Graphonomous, effort: int, expected: list[str], absent: list[str]
) -> None:
    _pump_graph(graph)
    result = graph.retrieve_context("pump pressure", effort=effort)
    stats = result["stats"]
    assert stats["effort"] == effort
    assert set(expected) <= set(stats["mechanisms"])
    assert {item["channel"] for item in result["results"]} <= set(SOURCES)
    assert not set(absent) & set(stats["mechanisms"])
    assert {"candidates", "expansion", "rerank", "topology", "total"} <= set(stats["timings_ms"])
    if effort == 0:
        assert all(item["channel"] != "neighbor" for item in result["results"])


def test_effort_plan_bands_and_deep() -> None:
    assert effort_plan(None, False, 1).effort == 1
    assert effort_plan(None, False, 0).hops == 0
    assert effort_plan(None, True, 1) == effort_plan(6, False, 1)
    assert [effort_plan(e, False, 1).walk for e in (4, 5, 7, 8, 10)] == [
        None,
        "local",
        "local",
        "full",
        "full",
    ]
    with pytest.raises(ValidationError):
        effort_plan(11, False, 1)
    with pytest.raises(ValidationError):
        effort_plan(3, True, 1)


def test_graph_walk_finds_multi_hop_context(graph: Graphonomous) -> None:
    # The answer is two hops from the only candidate, behind a decision record.
    _add(graph, "q", "Why did we choose SQLite for storage?")
    _add(graph, "mid", "Decision record 12")
    _add(graph, "why", "Zero configuration and a single file were required")
    _add(graph, "other", "Lunch menu for friday")
    graph.store_edge("mid", "q", "supports", strength=0.9)
    graph.store_edge("why", "mid", "supports", strength=0.9)
    query = "choose SQLite storage"
    one_hop = graph.retrieve_context(query, effort=3, limit=3, settings=SINGLE_SEED)
    assert sorted(_ids(one_hop)) == ["mid", "q"]
    for effort in (6, 9):
        deep = graph.retrieve_context(query, effort=effort, limit=3, settings=SINGLE_SEED)
        assert _ids(deep)[:1] == ["q"] and "why" in _ids(deep) and "other" not in _ids(deep)
        why = _by_id(deep)["why"]
        assert (why["channel"], why["hops"], why["via"]) == ("neighbor", 2, "mid")
        assert deep["stats"]["ppr_nodes"] >= 1 and deep["stats"]["communities"] >= 1


def test_contradiction_check_flags_results(graph: Graphonomous) -> None:
    _add(graph, "x", "The meeting is on monday")
    _add(graph, "y", "The meeting is on tuesday")
    _add(graph, "z", "The meeting was on sunday last year")
    _add(graph, "z2", "Meeting archive")
    graph.store_edge("x", "y", "contradicts")
    graph.store_edge("z2", "z", "supersedes")
    result = graph.retrieve_context("when is the meeting", effort=9)
    found = _by_id(result)
    assert found["x"]["flags"] == ["contradicted"] and found["y"]["flags"] == ["contradicted"]
    assert found["z"]["flags"] == ["superseded"]
    # Below effort 8 no edge is checked; two concurrent statements of one claim with
    # different values are still flagged by the newest-claim rule (SPEC §11a.4).
    low = _by_id(graph.retrieve_context("when is the meeting", effort=3))
    assert low["x"]["flags"] == low["y"]["flags"] == ["contradicted"]
    assert all(item["flags"] == [] for key, item in low.items() if key not in ("x", "y"))


def test_causal_context(graph: Graphonomous) -> None:
    _pump_graph(graph)
    result = graph.retrieve_context("pump valve panel error", limit=5, effort=0)
    assert set(_ids(result)) >= {"pump", "valve", "e47"}
    # valve causes pump causes e47: both causes are in the results, e47 is only an effect.
    assert set(result["causal_context"]) == {"valve", "pump"}
    edges = [
        Edge("e1", "a", "b", "causes"),
        Edge("e2", "b", "c", "related"),
        Edge("e3", "x", "y", "resolves"),
    ]
    assert causal_context(["c", "b", "a", "y"], edges, {"c": ["a"], "y": []}) == ["a"]
    flags = contradiction_flags(["a", "b"], [Edge("e", "a", "b", "contradicts")], ["b"])
    assert flags == {"a": ["contradicted"], "b": ["contradicted", "superseded"]}


# -- filters ---------------------------------------------------------------------------------


def test_node_type_agent_and_min_score_filters(graph: Graphonomous) -> None:
    _add(graph, "s", "rotate the api keys", node_type="semantic")
    _add(graph, "p", "how to rotate the api keys step by step", node_type="procedural")
    _add(graph, "o", "rotate the api keys for agent two", agent_id="two")
    graph.store_edge("s", "p", "related", strength=0.9)
    only_procedural = graph.retrieve_context("rotate api keys", node_type="procedural")
    assert _ids(only_procedural) == ["p"]
    mine = graph.retrieve_context("rotate api keys", agent_id="two")
    assert _ids(mine) == ["o"]
    everyone = graph.retrieve_context("rotate api keys")
    assert set(_ids(everyone)) == {"s", "p", "o"}
    cut = everyone["results"][1]["score"]
    high = graph.retrieve_context("rotate api keys", min_score=cut)
    assert _ids(high) == [r["node_id"] for r in everyone["results"] if r["score"] >= cut]
    assert len(high["results"]) < 3


def test_argument_validation(graph: Graphonomous) -> None:
    for bad in (
        {"limit": 0},
        {"expansion_hops": 6},
        {"neighbors_per_node": -1},
        {"min_score": 1.5},
        {"node_type": "opinion"},
        {"effort": 11},
        {"agent_id": ""},
    ):
        with pytest.raises(ValidationError):
            graph.retrieve_context("x", **bad)
    with pytest.raises(ValidationError):
        graph.retrieve_context(42)  # type: ignore[arg-type]


# -- determinism and edge cases ---------------------------------------------------------------


def _build_fixed(graph: Graphonomous) -> None:
    _pump_graph(graph)
    for i in range(30):
        _add(graph, f"f{i:02d}", f"pump note {i % 4} about pressure and valves")
        graph.store_edge(f"f{i:02d}", "pump", "related", strength=0.5)


def test_results_are_deterministic_across_runs_and_backends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outputs = []
    backends = ["1", "0"] if numpy_available() else ["1"]
    for no_numpy in backends:
        monkeypatch.setenv("GRAPHONOMOUS_NO_NUMPY", no_numpy)
        with Graphonomous(":memory:") as graph:
            _build_fixed(graph)
            for effort in (0, 3, 6, 9):
                first = graph.retrieve_context("pump pressure valve", effort=effort)
                second = graph.retrieve_context("pump pressure valve", effort=effort)
                assert first["results"] == second["results"]
                keys = [(-r["score"], r["node_id"]) for r in first["results"]]
                assert keys == sorted(keys)
                outputs.append([(r["node_id"], r["score"]) for r in first["results"]])
    half = len(outputs) // len(backends)
    assert outputs[:half] == outputs[half:] or len(backends) == 1


def test_empty_graph_and_empty_query(graph: Graphonomous) -> None:
    empty = graph.retrieve_context("anything at all", effort=9)
    assert empty["results"] == [] and empty["causal_context"] == []
    assert empty["topology"]["routing"] == "fast" and empty["topology"]["dag_nodes"] == []
    assert check_document(empty["topology"], "topology") == []
    _pump_graph(graph)
    for query in ("", "   ", "?!"):
        blank = graph.retrieve_context(query, effort=6)
        assert blank["results"] == [] and blank["stats"]["query_terms"] == 0


def test_huge_query_is_capped(graph: Graphonomous) -> None:
    _pump_graph(graph)
    huge = "pump pressure " * 750_000  # 10.5 MB
    started = time.perf_counter()
    result = graph.retrieve_context(huge, effort=3)
    assert time.perf_counter() - started < 5.0
    assert result["stats"]["query_truncated"] is True
    assert result["stats"]["query_chars"] == len(huge)
    assert len(result["query"]) == 4096
    assert _ids(result)[0] == "pump"


def test_edge_kind_weights_cover_every_relationship() -> None:
    assert set(EDGE_KIND_WEIGHTS) == set(RELATIONSHIPS)
    assert EDGE_KIND_WEIGHTS["contradicts"] < EDGE_KIND_WEIGHTS["related"]
    assert EDGE_KIND_WEIGHTS["supports"] == max(EDGE_KIND_WEIGHTS.values())


def test_snapshot_reads_exact_values_with_and_without_json(
    graph: Graphonomous, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from graphonomous.retrieval import build_snapshot

    _pump_graph(graph)
    graph.store_edge("budget", "ticket", "supports", strength=0.1 + 0.2)  # not a short decimal
    graph.store.update_node("budget", confidence=1 / 3, agent_id="two")
    graph.store.update_node("ticket", forgotten_at=FORGOTTEN_AT)
    fast = build_snapshot(graph.store)
    assert fast.confidence["budget"] == 1 / 3 and fast.agent["budget"] == "two"
    assert "ticket" not in fast.live
    stored = {e.id: e for e in graph.store.list_edges()}
    assert {e.id for e in fast.edges} == {
        e.id for e in stored.values() if "ticket" not in (e.source_id, e.target_id)
    }
    for edge in fast.edges:
        assert (edge.strength, edge.decay_rate) == (
            stored[edge.id].strength,
            stored[edge.id].decay_rate,
        )

    original = graph.store.scalar

    def no_json(sql: str, params: Any = ()) -> Any:
        if "json_group" in sql:
            raise sqlite3.OperationalError("no such function: json_group_object")
        return original(sql, params)

    monkeypatch.setattr(graph.store, "scalar", no_json)
    slow = build_snapshot(graph.store)
    assert slow.confidence == fast.confidence and slow.agent == fast.agent
    assert [(e.id, e.strength, e.relationship) for e in slow.edges] == [
        (e.id, e.strength, e.relationship) for e in fast.edges
    ]
