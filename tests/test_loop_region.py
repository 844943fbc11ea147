"""The topology of an answer: the loops its results are in, bounded, one home for all surfaces."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_tool_calls import call

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.contract import check_document
from graphonomous.mcp import build_server
from graphonomous.retrieval import loop_region
from graphonomous.ui import views


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as opened:
        yield opened


def _add(graph: Graphonomous, node_id: str, content: str) -> None:
    graph.store_node(content, node_id=node_id)


def _cycle(graph: Graphonomous, ids: list[str], relationship: str = "causes") -> None:
    for source, target in zip(ids, ids[1:] + ids[:1], strict=True):
        graph.store_edge(source, target, relationship)


def _filler(graph: Graphonomous, ids: list[str]) -> None:
    words = ["zebra crossing", "quantum chromodynamics", "baroque organ", "tidal pools"]
    for position, node_id in enumerate(ids):
        _add(graph, node_id, f"{words[position % len(words)]} {node_id}")


def test_a_four_cycle_with_one_member_in_the_results_routes_deliberate(
    graph: Graphonomous,
) -> None:
    _add(graph, "a", "alpha centauri is a star system")
    _filler(graph, ["b", "c", "d"])
    _cycle(graph, ["a", "b", "c", "d"])
    result = graph.retrieve_context("alpha centauri star system", limit=1, effort=0)
    assert [r["node_id"] for r in result["results"]] == ["a"]
    topology = result["topology"]
    assert check_document(topology, "topology") == []
    # c is two arcs from a both ways: the 1-hop window never held it.
    assert topology["routing"] == "deliberate" and topology["max_kappa"] == 1
    assert topology["sccs"][0]["nodes"] == ["a", "b", "c", "d"]
    region = result["stats"]["topology_region"]
    assert region["cut"] == "none" and region["loop_members"] == 4
    assert result["stats"]["topology_window"] == 4


@pytest.mark.parametrize("extra", [0, 1])
def test_the_longest_cycle_within_the_radius_is_seen_and_a_longer_one_is_reported(
    graph: Graphonomous, extra: int
) -> None:
    length = 2 * loop_region.LOOP_RADIUS + 1 + extra
    ring = ["a"] + [f"n{i}" for i in range(1, length)]
    _add(graph, "a", "alpha centauri is a star system")
    _filler(graph, ring[1:])
    _cycle(graph, ring)
    result = graph.retrieve_context("alpha centauri star system", limit=1, effort=0)
    region = result["stats"]["topology_region"]
    if extra == 0:
        assert result["topology"]["max_kappa"] == 1
        assert result["topology"]["sccs"][0]["nodes"] == sorted(ring)
        assert region["cut"] == "none"
    else:  # the middle node of the ring is 4 arcs away both ways: not seen, and said so
        assert result["topology"]["routing"] == "fast"
        assert region["cut"] == "radius" and region["arcs_not_followed"] == 2


def test_the_window_of_neighbours_stays_and_the_loop_joins_it(graph: Graphonomous) -> None:
    _add(graph, "a", "alpha centauri is a star system")
    _filler(graph, ["b", "c", "d", "e"])
    graph.store_edge("a", "e", "related", strength=0.9)  # a neighbour, no arc (seed 004)
    _cycle(graph, ["a", "b", "c", "d"])
    result = graph.retrieve_context("alpha centauri star system", limit=1, effort=0)
    assert result["topology"]["dag_nodes"] == ["e"]
    assert result["stats"]["topology_window"] == 5
    assert result["stats"]["topology_region"]["loop_members"] == 4


def test_a_sink_anchor_is_not_walked(graph: Graphonomous) -> None:
    _add(graph, "session", "alpha centauri is a star system")
    _filler(graph, [f"turn{i}" for i in range(5)])
    for i in range(5):
        graph.store_edge(f"turn{i}", "session", "part_of")  # arcs in, none out
    result = graph.retrieve_context("alpha centauri star system", limit=1, effort=0)
    assert result["stats"]["topology_region"]["walked"] == 1


def test_symmetric_kinds_are_no_arcs_of_the_walk(graph: Graphonomous) -> None:
    _add(graph, "a", "alpha centauri is a star system")
    _filler(graph, ["b", "c"])
    _cycle(graph, ["a", "b", "c"], "related")
    result = graph.retrieve_context("alpha centauri star system", limit=1, effort=0)
    assert result["topology"]["routing"] == "fast"
    assert result["stats"]["topology_region"]["walked"] == 1


def test_the_node_budget_is_reported_when_hit(
    graph: Graphonomous, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loop_region, "LOOP_MAX_NODES", 3)
    _add(graph, "a", "alpha centauri is a star system")
    _filler(graph, ["b", "c", "d", "e", "x"])
    for target in ("b", "c", "d", "e"):
        graph.store_edge("a", target, "causes")
    graph.store_edge("x", "a", "causes")  # an arc in: a may be on a cycle, so it is walked
    result = graph.retrieve_context("alpha centauri star system", limit=1, effort=0)
    region = result["stats"]["topology_region"]
    assert region["cut"] == "max_nodes" and region["walked"] == 3
    assert region["arcs_not_followed"] == 3  # a → d, a → e, x → a


# -- every surface reports the same topology ---------------------------------------------

QUERY = "alpha beta gamma"


def _surfaces_fixture(graph: Graphonomous) -> None:
    """Ten strong matches (a loop among four of them), two weak ones; the loop of the
    weak ones is visible only to a caller asking for more than the default ten results."""
    for i in range(10):
        _add(graph, f"s{i}", f"alpha beta gamma note {i}")
    for j in range(2):
        _add(graph, f"w{j}", f"alpha and other words that dilute the match {j}")
    _filler(graph, ["z"])
    _cycle(graph, ["s0", "s1", "s2", "s3"])
    _cycle(graph, ["w1", "z"])


def _topology_view(result: dict[str, Any]) -> tuple[Any, ...]:
    return (
        [r["node_id"] for r in result["results"]],
        result["topology"],
        result["stats"]["topology_region"],
    )


def test_cli_mcp_and_canvas_report_the_same_topology(tmp_path: Path) -> None:
    db = str(tmp_path / "surfaces.db")
    with Graphonomous(db) as graph:
        _surfaces_fixture(graph)
        assert {"w0", "w1"} <= {
            r["node_id"] for r in graph.retrieve_context(QUERY, limit=12)["results"]
        }
    out = io.StringIO()
    assert main(["--db", db, "--json", "recall", QUERY], out=out) == 0
    seen = [_topology_view(json.loads(out.getvalue()))]
    with Graphonomous(db) as graph:
        for surface, name, arguments in (
            ("v1", "retrieve_context", {"query": QUERY}),
            ("v2", "retrieve", {"action": "context", "query": QUERY}),
        ):
            answer = call(build_server(graph, surface), name, arguments)
            seen.append(_topology_view(answer["structuredContent"]))
        seen.append(_topology_view(views.search_view(graph, QUERY)))
    assert all(view == seen[0] for view in seen[1:])
    assert seen[0][1]["max_kappa"] == 1
    assert [scc["nodes"] for scc in seen[0][1]["sccs"]] == [["s0", "s1", "s2", "s3"]]


def test_recall_prints_the_cut(tmp_path: Path) -> None:
    db = str(tmp_path / "cut.db")
    with Graphonomous(db) as graph:
        _add(graph, "a", "alpha centauri is a star system")
        ring = ["a"] + [f"n{i}" for i in range(1, 2 * loop_region.LOOP_RADIUS + 2)]
        _filler(graph, ring[1:])
        _cycle(graph, ring)
    out = io.StringIO()
    assert main(["--db", db, "recall", "alpha centauri star system", "--limit", "1"], out=out) == 0
    assert "cut at the radius 3 (2 arcs not followed)" in out.getvalue()


def test_a_result_goes_with_the_loop_of_its_whole(graph: Graphonomous) -> None:
    _add(graph, "chunk", "alpha centauri is a star system")
    _filler(graph, ["file_a", "file_b"])
    graph.store_edge("chunk", "file_a", "part_of")
    _cycle(graph, ["file_a", "file_b"], "depends_on")  # an import cycle of the files
    result = graph.retrieve_context("alpha centauri star system", limit=1, effort=0)
    assert [r["node_id"] for r in result["results"]] == ["chunk"]
    assert result["topology"]["sccs"][0]["nodes"] == ["file_a", "file_b"]


def test_the_tail_of_the_list_anchors_no_loop() -> None:
    ranked = [("a", 0.9), ("b", 0.45), ("c", 0.44)]
    assert loop_region.anchors(ranked) == ["a", "b"]  # 0.45 ≥ 0.5 × 0.9; 0.44 is the tail
    assert loop_region.anchors([]) == []


def test_a_loop_of_the_tail_does_not_route_the_answer(graph: Graphonomous) -> None:
    _add(graph, "a", "alpha centauri is a star system")
    _add(graph, "t", "alpha particles decay")  # a weak match: the list's tail
    _filler(graph, ["n"])
    _cycle(graph, ["t", "n"])
    result = graph.retrieve_context("alpha centauri star system", limit=2, effort=0)
    assert [r["node_id"] for r in result["results"]] == ["a", "t"]
    assert result["topology"]["routing"] == "fast"
    assert result["topology"]["dag_nodes"] == ["a", "t"]  # t's neighbour n: not the answer's


def test_a_loop_stated_inside_one_node_is_a_cycle_of_its_entities(graph: Graphonomous) -> None:
    _add(graph, "a", "Predators reduce prey, and prey in turn raises predators.")
    result = graph.retrieve_context("predators and prey", limit=1, effort=0)
    topology = result["topology"]
    assert check_document(topology, "topology") == []
    assert topology["routing"] == "deliberate" and topology["max_kappa"] == 1
    assert topology["sccs"][0]["nodes"] == ["entity:predator", "entity:prey"]
    arcs = result["stats"]["topology_region"]["entity_arcs"]
    assert arcs == [
        {"source": "entity:predator", "target": "entity:prey", "stated_by": ["a"]},
        {"source": "entity:prey", "target": "entity:predator", "stated_by": ["a"]},
    ]


def test_a_chain_inside_one_node_is_no_loop(graph: Graphonomous) -> None:
    _add(graph, "a", "Predators reduce prey. Prey raises grass damage.")
    result = graph.retrieve_context("predators and prey", limit=1, effort=0)
    assert result["topology"]["routing"] == "fast"
    assert result["stats"]["topology_region"]["entity_arcs"] == []


def test_entities_of_two_anchors_meet_across_nodes(graph: Graphonomous) -> None:
    _add(graph, "a", "Insulin lowers blood glucose.")
    _add(graph, "b", "Blood glucose triggers insulin.")
    result = graph.retrieve_context("insulin blood glucose", limit=2, effort=0)
    arcs = result["stats"]["topology_region"]["entity_arcs"]
    assert [arc["stated_by"] for arc in arcs] == [["b"], ["a"]]
    assert result["topology"]["routing"] == "deliberate"


def test_relations_of_two_kinds_make_no_entity_loop(graph: Graphonomous) -> None:
    _add(graph, "a", "Yeast produces alcohol, and alcohol depends on yeast.")
    result = graph.retrieve_context("yeast alcohol", limit=1, effort=0)
    assert result["stats"]["topology_region"]["entity_arcs"] == []


def test_an_entity_loop_of_the_tail_does_not_route_the_answer(graph: Graphonomous) -> None:
    _add(graph, "a", "alpha centauri is a star system")
    _add(graph, "t", "Alpha decay raises heat, and heat in turn raises alpha decay.")
    result = graph.retrieve_context("alpha centauri star system", limit=2, effort=0)
    assert [r["node_id"] for r in result["results"]] == ["a", "t"]
    assert result["topology"]["routing"] == "fast"


@pytest.mark.parametrize(
    "content",
    [
        "Stress raises cortisol, which then raises stress.",
        "More stress → more cortisol → more stress",
        "As stress increases, cortisol increases. Cortisol feeds back on stress.",
    ],
)
def test_each_loop_form_inside_one_node_routes_deliberate(
    graph: Graphonomous, content: str
) -> None:
    _add(graph, "a", content)
    result = graph.retrieve_context("stress and cortisol", limit=1, effort=0)
    assert result["topology"]["routing"] == "deliberate"
    assert result["topology"]["sccs"][0]["nodes"] == ["entity:cortisol", "entity:stress"]
