"""Fiedler value (algebraic connectivity) against a dense eigensolver."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.algorithms import fiedler_value
from graphonomous.model import ValidationError

np = pytest.importorskip("numpy")

Graph = dict[str, dict[str, float]]


def dense_fiedler(graph: Graph) -> float:
    nodes = sorted(graph)
    index = {node: i for i, node in enumerate(nodes)}
    adjacency = np.zeros((len(nodes), len(nodes)))
    for source, row in graph.items():
        for target, weight in row.items():
            if source != target:
                adjacency[index[source], index[target]] += weight
                adjacency[index[target], index[source]] += weight
    laplacian = np.diag(adjacency.sum(axis=1)) - adjacency
    return float(np.linalg.eigvalsh(laplacian)[1])


@st.composite
def connected_graphs(draw: st.DrawFn) -> Graph:
    n = draw(st.integers(2, 25))
    nodes = [f"n{i:02d}" for i in range(n)]
    graph: Graph = {node: {} for node in nodes}
    weight = st.floats(0.05, 3.0)
    # A random spanning tree keeps the graph connected; extra arcs (self-loops
    # included) add cycles.
    for i in range(1, n):
        parent = draw(st.integers(0, i - 1))
        graph[nodes[parent]][nodes[i]] = draw(weight)
    for source, target, w in draw(
        st.lists(st.tuples(st.sampled_from(nodes), st.sampled_from(nodes), weight), max_size=40)
    ):
        graph[source][target] = w
    return graph


@settings(max_examples=80, deadline=None)
@given(connected_graphs())
def test_matches_dense_eigensolver(graph: Graph) -> None:
    expected = dense_fiedler(graph)
    assert fiedler_value(graph) == pytest.approx(expected, rel=1e-9)


def test_known_values() -> None:
    n = 40
    path: Graph = {f"p{i:02d}": {} for i in range(n)}
    cycle: Graph = {f"c{i:02d}": {} for i in range(n)}
    for i in range(n - 1):
        path[f"p{i:02d}"][f"p{i + 1:02d}"] = 1.0
    for i in range(n):
        cycle[f"c{i:02d}"][f"c{(i + 1) % n:02d}"] = 1.0
    # Path: 2 - 2 cos(pi / n); cycle: 2 - 2 cos(2 pi / n) (a double eigenvalue).
    assert fiedler_value(path) == pytest.approx(2 - 2 * math.cos(math.pi / n), rel=1e-9)
    assert fiedler_value(cycle) == pytest.approx(2 - 2 * math.cos(2 * math.pi / n), rel=1e-9)
    complete: Graph = {str(i): {str(j): 1.0 for j in range(6) if j > i} for i in range(6)}
    assert fiedler_value(complete) == pytest.approx(6.0, rel=1e-9)


def test_disconnected_and_tiny_graphs_are_zero() -> None:
    assert fiedler_value({}) == 0.0
    assert fiedler_value({"a": {"a": 2.0}}) == 0.0
    assert fiedler_value({"a": {"b": 1.0}, "b": {}, "c": {}}) == 0.0
    assert fiedler_value({"a": {"b": 0.0}, "b": {}}) == 0.0  # a zero-weight arc is no edge


def test_deterministic_and_dict_order_free() -> None:
    rng = random.Random(9)
    nodes = [f"v{i}" for i in range(30)]
    graph: Graph = {node: {} for node in nodes}
    for i in range(1, 30):
        graph[nodes[rng.randrange(i)]][nodes[i]] = rng.uniform(0.5, 2.0)
    reordered = {node: dict(reversed(graph[node].items())) for node in reversed(graph)}
    assert fiedler_value(graph) == fiedler_value(reordered)


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValidationError):
        fiedler_value({"a": {}}, tol=-1.0)
    with pytest.raises(ValidationError):
        fiedler_value({"a": {}}, max_iter=0)
    with pytest.raises(ValidationError):
        fiedler_value({"a": {"b": -1.0}, "b": {}})
