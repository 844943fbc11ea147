"""Personalized PageRank: networkx agreement, back-end parity, conventions, input checks."""

from __future__ import annotations

import math
from collections.abc import Iterator

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

from graphonomous.algorithms import pagerank as pagerank_module
from graphonomous.algorithms import personalized_pagerank
from graphonomous.embed.vectors import NO_NUMPY_ENV, numpy_available
from graphonomous.model import ValidationError

Graph = dict[str, dict[str, float]]

pytest.importorskip("numpy")


@st.composite
def graphs_with_personalization(draw: st.DrawFn) -> tuple[Graph, dict[str, float]]:
    n = draw(st.integers(1, 14))
    nodes = [f"n{i:02d}" for i in range(n)]
    weight = st.one_of(st.sampled_from([0.0, 0.5, 1.0, 2.5]), st.floats(0.01, 10.0))
    graph: Graph = {node: {} for node in nodes}
    arcs = draw(st.lists(st.tuples(st.sampled_from(nodes), st.sampled_from(nodes), weight)))
    for source, target, w in arcs:
        graph[source][target] = w
    seeds = draw(st.dictionaries(st.sampled_from(nodes), st.floats(0.0, 5.0), max_size=n))
    return graph, seeds


def networkx_reference(graph: Graph, seeds: dict[str, float]) -> dict[str, float]:
    """networkx's pure-Python PageRank (nx.pagerank itself needs SciPy)."""
    digraph = nx.DiGraph()
    digraph.add_nodes_from(graph)
    for source, row in graph.items():
        for target, weight in row.items():
            digraph.add_edge(source, target, weight=weight)
    restart = seeds if math.fsum(seeds.values()) > 0 else None
    return dict(
        _pagerank_python(
            digraph,
            alpha=0.85,  # networkx's alpha is the follow probability
            personalization=restart,
            dangling=restart,
            weight="weight",
            tol=1e-15,
            max_iter=10_000,
        )
    )


@pytest.fixture
def fresh_numpy_probe() -> Iterator[None]:
    numpy_available.cache_clear()
    yield
    numpy_available.cache_clear()


@settings(max_examples=120, deadline=None)
@given(graphs_with_personalization(), st.booleans())
def test_matches_networkx(case: tuple[Graph, dict[str, float]], use_numpy: bool) -> None:
    graph, seeds = case
    ours = personalized_pagerank(graph, seeds, max_iter=5_000, tol=1e-14, use_numpy=use_numpy)
    reference = networkx_reference(graph, seeds)
    assert list(ours) == sorted(graph)
    assert max(abs(ours[node] - reference[node]) for node in graph) < 1e-9
    assert math.fsum(ours.values()) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(graphs_with_personalization())
def test_pure_and_numpy_agree_with_defaults(case: tuple[Graph, dict[str, float]]) -> None:
    graph, seeds = case
    pure = personalized_pagerank(graph, seeds, use_numpy=False)
    vectorised = personalized_pagerank(graph, seeds, use_numpy=True)
    assert max(abs(pure[node] - vectorised[node]) for node in graph) < 1e-9


def _spy_backends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    for name in ("_iterate_pure", "_iterate_numpy"):
        real = getattr(pagerank_module, name)

        def spy(*args: object, _real: object = real, _name: str = name) -> object:
            calls.append(_name)
            return _real(*args)  # type: ignore[operator]

        monkeypatch.setattr(pagerank_module, name, spy)
    return calls


@pytest.mark.usefixtures("fresh_numpy_probe")
def test_environment_variable_forces_pure_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy_backends(monkeypatch)
    graph: Graph = {"a": {"b": 1.0}, "b": {"a": 1.0}}
    monkeypatch.setenv(NO_NUMPY_ENV, "1")
    numpy_available.cache_clear()
    personalized_pagerank(graph, {"a": 1.0})
    monkeypatch.setenv(NO_NUMPY_ENV, "0")
    numpy_available.cache_clear()
    personalized_pagerank(graph, {"a": 1.0})
    # An explicit choice wins over the environment.
    personalized_pagerank(graph, {"a": 1.0}, use_numpy=False)
    assert calls == ["_iterate_pure", "_iterate_numpy", "_iterate_pure"]


def test_dangling_mass_returns_to_personalization() -> None:
    # a -> b, b dangling, restart at a:  x_a = 0.15 + 0.85 x_b,  x_b = 0.85 x_a.
    for use_numpy in (False, True):
        scores = personalized_pagerank(
            {"a": {"b": 1.0}, "b": {}}, {"a": 1.0}, tol=0.0, max_iter=500, use_numpy=use_numpy
        )
        x_a = 0.15 / (1 - 0.85 * 0.85)
        assert scores["a"] == pytest.approx(x_a, abs=1e-12)
        assert scores["b"] == pytest.approx(0.85 * x_a, abs=1e-12)


def test_weights_split_the_walk_proportionally() -> None:
    graph: Graph = {"s": {"x": 3.0, "y": 1.0, "z": 0.0}, "x": {}, "y": {}, "z": {}}
    scores = personalized_pagerank(graph, {"s": 1.0}, tol=0.0, use_numpy=False)
    assert scores["x"] == pytest.approx(3 * scores["y"], rel=1e-12)
    assert scores["z"] == 0.0  # a zero-weight arc is no arc


def test_uniform_restart_when_personalization_is_empty_or_zero() -> None:
    graph: Graph = {"a": {"b": 1.0}, "b": {"c": 1.0}, "c": {"a": 1.0}}
    for seeds in ({}, {"a": 0.0}):
        scores = personalized_pagerank(graph, seeds, use_numpy=False)
        assert all(score == pytest.approx(1 / 3, abs=1e-12) for score in scores.values())


def test_degenerate_inputs() -> None:
    assert personalized_pagerank({}, {}) == {}
    no_arcs: Graph = {"a": {}, "b": {}, "c": {}}
    assert personalized_pagerank(no_arcs, {"a": 1.0, "b": 3.0}) == {"a": 0.25, "b": 0.75, "c": 0.0}
    cycle: Graph = {"a": {"b": 1.0}, "b": {"a": 1.0}}
    assert personalized_pagerank(cycle, {"a": 2.0}, max_iter=0) == {"a": 1.0, "b": 0.0}
    assert personalized_pagerank(cycle, {"b": 1.0}, alpha_restart=1.0) == {"a": 0.0, "b": 1.0}


def test_result_does_not_depend_on_dict_order() -> None:
    graph: Graph = {
        "d": {"a": 0.3, "c": 1.7, "b": 2.0},
        "a": {"d": 1.0, "b": 0.1},
        "c": {"a": 5.0},
        "b": {},
    }
    reordered = {node: dict(reversed(graph[node].items())) for node in reversed(graph)}
    for use_numpy in (False, True):
        first = personalized_pagerank(graph, {"a": 1.0, "c": 2.0}, use_numpy=use_numpy)
        second = personalized_pagerank(reordered, {"c": 2.0, "a": 1.0}, use_numpy=use_numpy)
        assert first == second
        assert list(first) == ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("graph", "seeds", "kwargs", "field"),
    [
        ({"a": {"b": -1.0}, "b": {}}, {}, {}, "graph"),
        ({"a": {"b": math.nan}, "b": {}}, {}, {}, "graph"),
        ({"a": {"b": math.inf}, "b": {}}, {}, {}, "graph"),
        ({"a": {"b": True}, "b": {}}, {}, {}, "graph"),
        ({"a": {"b": 1.0}}, {}, {}, "graph"),
        ({"a": {}}, {"z": 1.0}, {}, "personalization"),
        ({"a": {}}, {"a": -1.0}, {}, "personalization['a']"),
        ({"a": {}}, {}, {"alpha_restart": 0.0}, "alpha_restart"),
        ({"a": {}}, {}, {"alpha_restart": 1.5}, "alpha_restart"),
        ({"a": {}}, {}, {"max_iter": -1}, "max_iter"),
        ({"a": {}}, {}, {"tol": math.nan}, "tol"),
    ],
)
def test_rejects_bad_input(
    graph: Graph, seeds: dict[str, float], kwargs: dict[str, float], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        personalized_pagerank(graph, seeds, **kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field
