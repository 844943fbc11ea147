"""Louvain communities and modularity against networkx."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from networkx.algorithms import community as nx_community

from graphonomous.algorithms import louvain_communities, modularity
from graphonomous.model import ValidationError

Graph = dict[str, dict[str, float]]


def undirected_networkx(graph: Graph) -> nx.Graph:
    """The undirected view, built independently: {u, v} weighs w(u->v) + w(v->u)."""
    result = nx.Graph()
    result.add_nodes_from(graph)
    for source, row in graph.items():
        for target, weight in row.items():
            if weight == 0:
                continue
            if result.has_edge(source, target) and source != target:
                result[source][target]["weight"] += weight
            else:
                result.add_edge(source, target, weight=weight)
    return result


def planted_partition(
    rng: random.Random, groups: int, size: int, p_in: float, p_out: float
) -> Graph:
    """Directed planted-partition graph with shuffled, structure-free ids."""
    n = groups * size
    ids = [f"id{rng.getrandbits(40):012x}" for _ in range(n)]
    graph: Graph = {node: {} for node in ids}
    for a in range(n):
        for b in range(n):
            p = p_in if a // size == b // size else p_out
            if a != b and rng.random() < p / 2:
                graph[ids[a]][ids[b]] = rng.choice([0.5, 1.0, 2.0])
    return graph


def is_canonical_partition(communities: list[list[str]], graph: Graph) -> bool:
    members = [node for community in communities for node in community]
    return (
        sorted(members) == sorted(graph)
        and all(community == sorted(community) for community in communities)
        and [community[0] for community in communities]
        == sorted(community[0] for community in communities)
    )


@st.composite
def graphs_with_partition(draw: st.DrawFn) -> tuple[Graph, list[list[str]]]:
    n = draw(st.integers(1, 12))
    nodes = [f"v{i}" for i in range(n)]
    graph: Graph = {node: {} for node in nodes}
    weight = st.sampled_from([0.0, 0.25, 1.0, 3.0])
    for source, target, w in draw(
        st.lists(st.tuples(st.sampled_from(nodes), st.sampled_from(nodes), weight), max_size=40)
    ):
        graph[source][target] = w  # self-loops included
    labels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    parts: dict[int, list[str]] = {}
    for node, label in zip(nodes, labels, strict=True):
        parts.setdefault(label, []).append(node)
    return graph, list(parts.values())


@settings(max_examples=150, deadline=None)
@given(graphs_with_partition(), st.sampled_from([0.5, 1.0, 2.0]))
def test_modularity_matches_networkx(
    case: tuple[Graph, list[list[str]]], resolution: float
) -> None:
    graph, partition = case
    reference_graph = undirected_networkx(graph)
    ours = modularity(graph, partition, resolution=resolution)
    if reference_graph.size(weight="weight") == 0:
        assert ours == 0.0
        return
    expected = nx_community.modularity(
        reference_graph, partition, weight="weight", resolution=resolution
    )
    assert ours == pytest.approx(expected, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(graphs_with_partition(), st.sampled_from([0, 7]))
def test_louvain_returns_a_canonical_partition(
    case: tuple[Graph, list[list[str]]], seed: int
) -> None:
    graph, _ = case
    communities = louvain_communities(graph, seed=seed)
    assert is_canonical_partition(communities, graph)
    # Louvain never ends below the all-singletons partition.
    singletons = [[node] for node in graph]
    assert modularity(graph, communities) >= modularity(graph, singletons) - 1e-12


@pytest.mark.parametrize("trial", range(8))
def test_quality_close_to_networkx_on_planted_partitions(trial: int) -> None:
    rng = random.Random(trial)
    groups, size = rng.randint(3, 6), rng.randint(8, 20)
    graph = planted_partition(rng, groups, size, rng.uniform(0.3, 0.7), rng.uniform(0.01, 0.06))
    reference_graph = undirected_networkx(graph)
    ours = modularity(graph, louvain_communities(graph))
    theirs = nx_community.louvain_communities(reference_graph, weight="weight", seed=trial)
    assert ours >= nx_community.modularity(reference_graph, theirs, weight="weight") - 0.02


def test_recovers_cliques_joined_by_single_edges() -> None:
    rng = random.Random(42)
    sizes = [5, 6, 7, 8, 5, 6]
    cliques: list[list[str]] = []
    for size in sizes:
        cliques.append(sorted(f"n{rng.getrandbits(32):08x}" for _ in range(size)))
    graph: Graph = {node: {} for clique in cliques for node in clique}
    for clique in cliques:
        for a in clique:
            for b in clique:
                if a < b:
                    graph[a][b] = 1.0
    for here, there in zip(cliques, cliques[1:] + cliques[:1], strict=True):
        graph[here[-1]][there[0]] = 1.0  # a ring of cliques, one bridge each
    expected = sorted(cliques)
    for seed in (0, 1, 99):
        assert louvain_communities(graph, seed=seed) == expected


def test_zero_resolution_merges_each_connected_component() -> None:
    graph: Graph = {"a": {"b": 1.0}, "b": {"c": 0.5}, "c": {}, "d": {"e": 2.0}, "e": {}, "f": {}}
    assert louvain_communities(graph, resolution=0.0) == [["a", "b", "c"], ["d", "e"], ["f"]]


def test_degenerate_graphs() -> None:
    assert louvain_communities({}) == []
    assert louvain_communities({"b": {}, "a": {"a": 0.0}}) == [["a"], ["b"]]
    assert modularity({"a": {}, "b": {}}, [["a", "b"]]) == 0.0
    # Only self-loops: every node keeps its own community.
    assert louvain_communities({"a": {"a": 1.0}, "b": {"b": 1.0}}) == [["a"], ["b"]]


def test_independent_of_dict_order() -> None:
    rng = random.Random(3)
    graph = planted_partition(rng, 4, 10, 0.5, 0.05)
    reordered = {node: dict(reversed(graph[node].items())) for node in reversed(graph)}
    for seed in (0, 5):
        assert louvain_communities(graph, seed=seed) == louvain_communities(reordered, seed=seed)


@pytest.mark.parametrize(
    "partition",
    [[["a"]], [["a", "b"], ["b"]], [["a", "b", "z"]]],
)
def test_modularity_rejects_non_partitions(partition: list[list[str]]) -> None:
    with pytest.raises(ValidationError) as caught:
        modularity({"a": {"b": 1.0}, "b": {}}, partition)
    assert caught.value.field == "communities"


def test_rejects_bad_resolution_and_weights() -> None:
    with pytest.raises(ValidationError):
        louvain_communities({"a": {}}, resolution=-1.0)
    with pytest.raises(ValidationError):
        louvain_communities({"a": {"b": -2.0}, "b": {}})
