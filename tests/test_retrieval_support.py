"""Graph support (effort >= 1), the normalised walk (effort >= 5) and how efforts differ."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.model import DEFAULT_AGENT_ID
from graphonomous.retrieval import graph_view as walk_graph
from graphonomous.retrieval.fusion import combine_evidence
from graphonomous.retrieval.graph_view import EDGE_KIND_WEIGHTS, Link
from graphonomous.retrieval.settings import HOP_DECAY, SIBLING_FACTOR, SUPPORT_GAIN, with_settings
from graphonomous.retrieval.support import support_scores, transfer
from graphonomous.retrieval.walk import saturate, spread

QUERY = "why did the pump lose pressure"


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as opened:
        yield opened


def _add(graph: Graphonomous, node_id: str, content: str, **fields: Any) -> None:
    graph.store_node(content, node_id=node_id, **fields)


def _scores(result: dict[str, Any]) -> dict[str, float]:
    return {item["node_id"]: item["score"] for item in result["results"]}


def _ids(result: dict[str, Any]) -> list[str]:
    return [item["node_id"] for item in result["results"]]


def _pump_notes(graph: Graphonomous) -> None:
    """`c` matches the query weakly but is backed by the best match `a`."""
    _add(graph, "a", "The hydraulic pump lost pressure during the night shift")
    _add(graph, "b", "Pressure gauges were calibrated last spring")
    _add(graph, "c", "The seal kit order arrived late")
    _add(graph, "d", "Night shift handover notes")
    _add(graph, "e", "Marketing budget review")
    graph.store_edge("c", "a", "supports", strength=0.9)


def test_support_changes_the_ranking_at_effort_one_not_zero(graph: Graphonomous) -> None:
    _pump_notes(graph)
    flat = graph.retrieve_context(QUERY, effort=0)
    supported = graph.retrieve_context(QUERY, effort=1)
    assert flat["stats"]["supported"] == 0 and "support" not in flat["stats"]["mechanisms"]
    assert supported["stats"]["supported"] == 2 and "support" in supported["stats"]["mechanisms"]
    own = _scores(flat)  # effort 0 reports the stage-1 scores
    assert _ids(flat).index("b") < _ids(flat).index("c")  # alone, c ranks below b
    assert _ids(supported).index("c") < _ids(supported).index("b")  # a's backing lifts it
    share = HOP_DECAY * min(1.0, SUPPORT_GAIN * 0.9 * EDGE_KIND_WEIGHTS["supports"])
    after = _scores(supported)
    assert after["c"] == pytest.approx(combine_evidence(own["c"], own["a"] * share), abs=2e-6)
    assert after["a"] == pytest.approx(combine_evidence(own["a"], own["c"] * share), abs=2e-6)
    for unconnected in ("b", "d"):  # no edge, no change
        assert after[unconnected] == own[unconnected]
    # The source stays what stage 1 found; a supported node is never "neighbor".
    assert {item["channel"] for item in supported["results"]} <= {"seed", "bm25"}
    assert after["c"] < after["a"]  # a neighbour stays below the node vouching for it


def test_no_support_when_disabled(graph: Graphonomous) -> None:
    _pump_notes(graph)
    off = with_settings(support_gain=0.0)
    flat = _scores(graph.retrieve_context(QUERY, effort=0))
    # Effort 1 without expansion: only support could change a score.
    unsupported = graph.retrieve_context(QUERY, effort=1, expansion_hops=0, settings=off)
    assert _scores(unsupported) == flat and unsupported["stats"]["supported"] == 0


def test_siblings_support_each_other_through_their_whole(graph: Graphonomous) -> None:
    _add(graph, "session", "Session 4", node_type="temporal")
    _add(graph, "x", "We ordered a new seal kit", node_type="episodic")
    _add(graph, "y", "The pump lost pressure again last night", node_type="episodic")
    _add(graph, "z", "The pump is fine today", node_type="episodic")
    for part in ("x", "y"):
        graph.store_edge(part, "session", "part_of")
    # The whole is filtered out of the answer but still joins its parts.
    flat = _scores(graph.retrieve_context(QUERY, effort=0, node_type="episodic"))
    result = graph.retrieve_context(QUERY, effort=1, node_type="episodic")
    after = _scores(result)
    share = HOP_DECAY * min(1.0, SUPPORT_GAIN * 0.3 * EDGE_KIND_WEIGHTS["part_of"])
    expected_x = combine_evidence(flat["x"], flat["y"] * share * share * SIBLING_FACTOR)
    assert after["x"] == pytest.approx(expected_x, abs=2e-6)
    assert after["x"] > flat["x"] and after["z"] == flat["z"]
    assert "session" not in after
    no_siblings = with_settings(sibling_factor=0.0)
    alone = _scores(
        graph.retrieve_context(QUERY, effort=1, node_type="episodic", settings=no_siblings)
    )
    assert alone["x"] == flat["x"]


def _link(neighbor: str, relationship: str, strength: float, outgoing: bool = True) -> Link:
    return Link(neighbor, f"e-{neighbor}-{relationship}", relationship, strength, outgoing)


def test_support_scores_formula() -> None:
    links = {
        "a": [_link("b", "related", 0.3), _link("w", "part_of", 0.5)],
        "b": [_link("a", "related", 0.3, outgoing=False)],
        "c": [_link("w", "part_of", 1.0)],
        "d": [_link("w", "part_of", 0.5, outgoing=False)],  # d is the whole of w: not a part
    }
    own = {"a": 0.4, "b": 0.8, "c": 0.6, "d": 0.9}
    got = support_scores(own, lambda n: links.get(n, []), 2.0, 0.85, 0.5)
    t_related = 0.85 * min(1.0, 2.0 * 0.3 * 0.8)
    t_half = 0.85 * min(1.0, 2.0 * 0.5 * 1.2)
    t_full = 0.85 * min(1.0, 2.0 * 1.0 * 1.2)
    assert t_full == pytest.approx(0.85)  # capped: an edge never passes more than HOP_DECAY
    assert got["a"] == pytest.approx(max(0.8 * t_related, 0.6 * t_full * t_half * 0.5))
    assert got["b"] == pytest.approx(0.4 * t_related)
    assert got["c"] == pytest.approx(0.4 * t_half * t_full * 0.5)
    assert "d" not in got  # no candidate neighbour, no sibling
    assert transfer(_link("x", "contradicts", 1.0), 2.0, 0.85) == pytest.approx(0.85 * 0.02)


def test_combine_evidence_and_saturate_are_bounded() -> None:
    assert combine_evidence(0.4, 0.0) == 0.4
    assert combine_evidence(0.4, 0.5) == pytest.approx(0.7)
    assert combine_evidence(1.0, 0.9) == 1.0
    assert saturate(0.0, 0.5) == 0.0
    assert saturate(1e-6, 0.5) == pytest.approx(1e-6, rel=1e-5)
    assert saturate(100.0, 0.5) == pytest.approx(0.5)
    assert all(saturate(v, 0.5) < 0.5 for v in (0.1, 1.0, 10.0))
    assert saturate(1.0, 0.0) == 0.0


def test_spread_is_label_spreading_on_the_expansion_scale() -> None:
    # Two nodes, one edge of weight a < 1: z = (I - 0.85 S)^-1 s with S = [[0, a], [a, 0]].
    a = 0.3 * EDGE_KIND_WEIGHTS["related"]
    weighted = {"s": {"v": a}, "v": {"s": a}}
    degrees = walk_graph.walk_degrees(weighted)
    assert degrees == {"s": 1.0, "v": 1.0}  # weaker than one full edge: leaks
    transitions = walk_graph.leaky_transitions(weighted, degrees)
    got = spread(transitions, degrees, {"s": 0.5}, 0.15, 1e-12)
    f = 0.85 * a
    assert got["v"] == pytest.approx(f * 0.5 / (1 - f * f), rel=1e-6)
    assert got["s"] == pytest.approx(0.5 / (1 - f * f) - 0.5, rel=1e-5)  # its own echo only


def test_spread_damps_hubs() -> None:
    # One seed, two full-strength neighbours: a leaf and a hub with 39 more leaves.
    weighted: dict[str, dict[str, float]] = {"seed": {"leaf": 1.0, "hub": 1.0}, "leaf": {}}
    weighted["leaf"]["seed"] = 1.0
    weighted["hub"] = {"seed": 1.0}
    for i in range(39):
        weighted["hub"][f"x{i}"] = 1.0
        weighted[f"x{i}"] = {"hub": 1.0}
    degrees = walk_graph.walk_degrees(weighted)
    transitions = walk_graph.leaky_transitions(weighted, degrees)
    got = spread(transitions, degrees, {"seed": 0.5}, 0.15, 1e-12)
    # Each step into the hub carries 1/sqrt(40) of a step into the leaf, so
    # even with the echo through its own 39 leaves the hub stays below the
    # leaf.  (Plain PageRank on the same graph, scaled alike, gives the hub
    # 3.4 times the leaf's evidence: 1.18 against 0.35.)
    first_step = 0.85 * 0.5 / math.sqrt(2.0)
    assert got["leaf"] > first_step > got["hub"] > first_step / math.sqrt(40.0)
    assert got["hub"] < 0.6 * got["leaf"]


def test_isolated_nodes_leak_instead_of_restarting() -> None:
    weighted: dict[str, dict[str, float]] = {"alone": {}, "x": {"y": 1.0}, "y": {"x": 1.0}}
    degrees = walk_graph.walk_degrees(weighted)
    transitions = walk_graph.leaky_transitions(weighted, degrees)
    assert transitions["alone"] == [("alone", 0.0)]
    # Mass of an isolated seed never reaches the other component.
    assert spread(transitions, degrees, {"alone": 1.0}, 0.15, 1e-9) == {}


def test_effort_levels_give_different_rankings(graph: Graphonomous) -> None:
    # q answers the query; mid and why are behind it (1 and 2 hops); c is a weak direct match.
    _add(graph, "q", "Why did we choose SQLite for storage?")
    _add(graph, "mid", "Decision record 12")
    _add(graph, "why", "Zero configuration and a single file were required")
    _add(graph, "c", "Storage quotas for the photo service")
    graph.store_edge("mid", "q", "supports", strength=0.9)
    graph.store_edge("why", "mid", "supports", strength=0.9)
    query = "choose SQLite storage"
    one = with_settings(min_candidates=1, candidate_multiplier=0)  # a single candidate
    rankings = {
        effort: _ids(graph.retrieve_context(query, effort=effort, limit=3, settings=one))
        for effort in (0, 3, 6, 9)
    }
    assert rankings[0] == ["q"]
    assert rankings[3] == ["q", "mid"]  # expansion: one hop
    assert rankings[6] == rankings[9] == ["q", "mid", "why"]  # the walk: two hops


def test_a_forgotten_or_foreign_whole_joins_nothing(graph: Graphonomous) -> None:
    _add(graph, "session", "Session 4", node_type="temporal")
    _add(graph, "x", "We ordered a new seal kit", node_type="episodic")
    _add(graph, "y", "The pump lost pressure again last night", node_type="episodic")
    for part in ("x", "y"):
        graph.store_edge(part, "session", "part_of")
    flat = _scores(graph.retrieve_context(QUERY, effort=0, node_type="episodic"))
    joined = _scores(graph.retrieve_context(QUERY, effort=1, node_type="episodic"))
    assert joined["x"] > flat["x"]
    graph.store.update_node("session", agent_id="other")
    for effort in (1, 9):  # SQL reads and the snapshot alike
        mine = graph.retrieve_context(
            QUERY, effort=effort, node_type="episodic", agent_id=DEFAULT_AGENT_ID
        )
        assert _scores(mine)["x"] == flat["x"]
    graph.store.update_node(
        "session", agent_id=DEFAULT_AGENT_ID, forgotten_at="2026-01-01T00:00:00.000Z"
    )
    # Forgetting the session also leaves the BM25 statistics (one document fewer).
    flat = _scores(graph.retrieve_context(QUERY, effort=0, node_type="episodic"))
    for effort in (1, 9):
        alone = graph.retrieve_context(QUERY, effort=effort, node_type="episodic")
        assert _scores(alone)["x"] == flat["x"]
