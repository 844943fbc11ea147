"""Dijkstra with hop limits, Yen's k shortest paths and BFS layers."""

from __future__ import annotations

import math
import random
from itertools import pairwise

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.algorithms import bfs_layers, dijkstra_path, k_shortest_paths
from graphonomous.model import ValidationError

Graph = dict[str, dict[str, float]]
Key = tuple[float, int, tuple[str, ...]]


def to_networkx(graph: Graph) -> nx.DiGraph:
    digraph = nx.DiGraph()
    digraph.add_nodes_from(graph)
    for source, row in graph.items():
        for target, cost in row.items():
            digraph.add_edge(source, target, weight=cost)
    return digraph


def path_key(graph: Graph, path: list[str]) -> Key:
    cost = 0.0
    for a, b in pairwise(path):
        cost += graph[a][b]
    return cost, len(path) - 1, tuple(path)


def brute_force(graph: Graph, source: str, target: str, max_hops: int | None) -> list[Key]:
    """Every loopless path within the hop limit, in the documented order."""
    if source == target:
        return [(0.0, 0, (source,))]
    paths = nx.all_simple_paths(to_networkx(graph), source, target)
    return sorted(
        path_key(graph, path) for path in paths if max_hops is None or len(path) - 1 <= max_hops
    )


@st.composite
def small_cost_graphs(draw: st.DrawFn) -> tuple[Graph, str, str, int | None]:
    n = draw(st.integers(1, 7))
    nodes = [chr(ord("a") + i) for i in range(n)]
    graph: Graph = {node: {} for node in nodes}
    # Small integer costs (zero included) make exact ties and zero-cost cycles common.
    for source, target, cost in draw(
        st.lists(
            st.tuples(st.sampled_from(nodes), st.sampled_from(nodes), st.integers(0, 3)),
            max_size=24,
        )
    ):
        if source != target:
            graph[source][target] = float(cost)
    source, target = draw(st.sampled_from(nodes)), draw(st.sampled_from(nodes))
    max_hops = draw(st.one_of(st.none(), st.integers(0, 4)))
    return graph, source, target, max_hops


@settings(max_examples=300, deadline=None)
@given(small_cost_graphs(), st.integers(0, 8))
def test_exact_order_against_brute_force(case: tuple[Graph, str, str, int | None], k: int) -> None:
    graph, source, target, max_hops = case
    expected = brute_force(graph, source, target, max_hops)
    best = dijkstra_path(graph, source, target, max_hops=max_hops)
    assert best == ((expected[0][0], list(expected[0][2])) if expected else None)
    paths = k_shortest_paths(graph, source, target, k, max_hops=max_hops)
    assert paths == [(cost, list(path)) for cost, _, path in expected[:k]]


@pytest.mark.parametrize("trial", range(12))
def test_costs_match_networkx_shortest_simple_paths(trial: int) -> None:
    rng = random.Random(trial)
    n = rng.randint(8, 30)
    nodes = [f"node{i}" for i in range(n)]
    graph: Graph = {node: {} for node in nodes}
    for _ in range(rng.randint(n, 4 * n)):
        a, b = rng.sample(nodes, 2)
        graph[a][b] = rng.uniform(0.0, 5.0)
    source, target = rng.sample(nodes, 2)
    k = 10
    ours = k_shortest_paths(graph, source, target, k)
    digraph = to_networkx(graph)
    if not nx.has_path(digraph, source, target):
        assert ours == []
        assert dijkstra_path(graph, source, target) is None
        return
    reference = []
    for path in nx.shortest_simple_paths(digraph, source, target, weight="weight"):
        reference.append(path_key(graph, path)[0])
        if len(reference) == k:
            break
    assert [cost for cost, _ in ours] == pytest.approx(reference, abs=1e-9)
    assert len({tuple(path) for _, path in ours}) == len(ours)
    for cost, path in ours:
        assert path[0] == source and path[-1] == target and len(set(path)) == len(path)
        assert cost == path_key(graph, path)[0]


def test_hop_limit_is_part_of_the_search() -> None:
    graph: Graph = {
        "s": {"a": 1.0, "t": 10.0, "c": 4.0},
        "a": {"b": 1.0},
        "b": {"t": 1.0},
        "c": {"t": 4.0},
        "t": {},
    }
    assert dijkstra_path(graph, "s", "t") == (3.0, ["s", "a", "b", "t"])
    assert dijkstra_path(graph, "s", "t", max_hops=3) == (3.0, ["s", "a", "b", "t"])
    assert dijkstra_path(graph, "s", "t", max_hops=2) == (8.0, ["s", "c", "t"])
    assert dijkstra_path(graph, "s", "t", max_hops=1) == (10.0, ["s", "t"])
    assert dijkstra_path(graph, "s", "t", max_hops=0) is None
    assert k_shortest_paths(graph, "s", "t", 5, max_hops=2) == [
        (8.0, ["s", "c", "t"]),
        (10.0, ["s", "t"]),
    ]


def test_hop_limit_needs_more_than_one_settlement_per_node() -> None:
    # The cheap way to m takes 3 hops; only the dearer 1-hop way to m leaves
    # room for the remaining 2 hops under max_hops=3.
    graph: Graph = {
        "s": {"m": 5.0, "x": 1.0},
        "x": {"y": 1.0},
        "y": {"m": 1.0},
        "m": {"p": 1.0},
        "p": {"t": 1.0},
        "t": {},
    }
    assert dijkstra_path(graph, "s", "t") == (5.0, ["s", "x", "y", "m", "p", "t"])
    assert dijkstra_path(graph, "s", "t", max_hops=3) == (7.0, ["s", "m", "p", "t"])


def test_tie_breaks() -> None:
    # Equal cost: fewer hops first, then the smaller id sequence.
    graph: Graph = {
        "s": {"b": 1.0, "a": 1.0, "t": 2.0},
        "a": {"t": 1.0},
        "b": {"t": 1.0},
        "t": {},
    }
    assert k_shortest_paths(graph, "s", "t", 3) == [
        (2.0, ["s", "t"]),
        (2.0, ["s", "a", "t"]),
        (2.0, ["s", "b", "t"]),
    ]
    # A zero-cost cycle never makes a path longer.
    looped: Graph = {"s": {"a": 0.0}, "a": {"b": 0.0, "t": 1.0}, "b": {"a": 0.0}, "t": {}}
    assert dijkstra_path(looped, "s", "t") == (1.0, ["s", "a", "t"])


def test_trivial_cases() -> None:
    graph: Graph = {"a": {"b": 1.0}, "b": {}}
    assert dijkstra_path(graph, "a", "a", max_hops=0) == (0.0, ["a"])
    assert k_shortest_paths(graph, "a", "a", 3) == [(0.0, ["a"])]
    assert dijkstra_path(graph, "b", "a") is None
    assert k_shortest_paths(graph, "b", "a", 3) == []
    assert k_shortest_paths(graph, "a", "b", 0) == []


@pytest.mark.parametrize(
    ("graph", "call", "field"),
    [
        ({"a": {"b": -1.0}, "b": {}}, lambda g: dijkstra_path(g, "a", "b"), "graph_costs"),
        ({"a": {"b": math.nan}, "b": {}}, lambda g: dijkstra_path(g, "a", "b"), "graph_costs"),
        ({"a": {"b": 1.0}}, lambda g: dijkstra_path(g, "a", "z"), "target"),
        ({"a": {"b": 1.0}}, lambda g: dijkstra_path(g, "q", "a"), "source"),
        ({"a": {"b": 1.0}, "c": {}}, lambda g: dijkstra_path(g, "a", "c"), "graph_costs"),
        ({"a": {}}, lambda g: dijkstra_path(g, "a", "a", max_hops=-1), "max_hops"),
        ({"a": {}}, lambda g: k_shortest_paths(g, "a", "a", -1), "k"),
    ],
)
def test_rejects_bad_input(graph: Graph, call: object, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        call(graph)  # type: ignore[operator]
    assert caught.value.field == field


# ---------------------------------------------------------------- BFS layers


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from("abcdefgh"), st.sets(st.sampled_from("abcdefghij")), max_size=8
    ),
    st.sets(st.sampled_from("abcdefghij"), max_size=3),
    st.one_of(st.none(), st.integers(0, 4)),
)
def test_bfs_layers_match_networkx(
    adjacency: dict[str, set[str]], sources: set[str], max_depth: int | None
) -> None:
    digraph = nx.DiGraph()
    digraph.add_nodes_from(sources)
    for node, targets in adjacency.items():
        digraph.add_edges_from((node, target) for target in targets)
    expected = (
        dict(nx.multi_source_dijkstra_path_length(digraph, sources, cutoff=max_depth))
        if sources
        else {}
    )
    layers = bfs_layers(adjacency, sources, max_depth)
    assert layers == expected
    assert list(layers) == sorted(layers, key=lambda node: (layers[node], node))


def test_bfs_layers_checks_input() -> None:
    with pytest.raises(ValidationError):
        bfs_layers({"a": ["b"]}, "a", 1)
    with pytest.raises(ValidationError):
        bfs_layers({"a": "bc"}, ["a"], 1)
    with pytest.raises(ValidationError):
        bfs_layers({"a": ["b"]}, ["a"], -1)
