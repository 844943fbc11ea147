"""Spectral metrics against NumPy and NetworkX (exact to 1e-9), incl. near-degenerate spectra."""

from __future__ import annotations

import json
import math
import random
from io import StringIO
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.algorithms import louvain_communities, spectral
from graphonomous.algorithms.spectral import (
    algebraic_connectivity,
    community_entropy,
    connected_components,
    graph_from_document,
    graph_metrics,
    lanczos_smallest,
    normalized_laplacian,
    symmetric_eigenvalues,
    tridiagonal_eigenvalues,
)
from graphonomous.cli import main
from graphonomous.model import ValidationError

# The references are NumPy's; the pure venv of .ci/run (no NumPy) runs the doctests instead
# (tests/test_algorithms_spectral_pure.py).
np = pytest.importorskip("numpy")
TOLERANCE = 1e-9


def random_graph(seed: int, n: int, p: float) -> dict[str, dict[str, float]]:
    rng = random.Random(seed)
    graph: dict[str, dict[str, float]] = {f"n{i:03d}": {} for i in range(n)}
    for i in range(n):
        for j in range(n):
            if i != j and rng.random() < p:
                graph[f"n{i:03d}"][f"n{j:03d}"] = round(rng.uniform(0.1, 2.0), 3)
    return graph


def undirected_nx(graph: dict[str, dict[str, float]]) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(sorted(graph))
    for u, row in graph.items():
        for v, w in row.items():
            if w == 0:
                continue
            previous = g[u][v]["weight"] if g.has_edge(u, v) else 0.0
            g.add_edge(u, v, weight=previous + w)
    return g


def nx_normalized_laplacian(g: nx.Graph, nodes: list[str]) -> np.ndarray:
    a = nx.to_numpy_array(g, nodelist=nodes, weight="weight")
    degree = a.sum(axis=1)
    with np.errstate(divide="ignore"):
        scale = np.where(degree > 0, 1.0 / np.sqrt(degree), 0.0)
    return np.diag((degree > 0).astype(float)) - scale[:, None] * a * scale[None, :]


def spectrum_matrix(eigenvalues: list[float], seed: int) -> list[list[float]]:
    """Q diag(eigenvalues) Qᵀ for a random orthogonal Q."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((len(eigenvalues), len(eigenvalues))))
    matrix = q @ np.diag(eigenvalues) @ q.T
    return ((matrix + matrix.T) / 2).tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 40), st.floats(0.02, 0.5))
def test_laplacian_and_eigenvalues_match_networkx_numpy(seed: int, n: int, p: float) -> None:
    graph = random_graph(seed, n, p)
    nodes, rows = normalized_laplacian(graph)
    expected = nx_normalized_laplacian(undirected_nx(graph), nodes)
    assert np.max(np.abs(np.array(rows) - expected)) < TOLERANCE
    ours = symmetric_eigenvalues(rows)
    reference = np.linalg.eigvalsh(expected)
    assert max(abs(a - b) for a, b in zip(ours, reference, strict=True)) < TOLERANCE
    assert symmetric_eigenvalues(rows, backend="numpy") == pytest.approx(ours, abs=TOLERANCE)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(3, 30),
    st.floats(1e-13, 1e-6),
    st.sampled_from(["close", "repeated", "clustered"]),
)
def test_near_degenerate_spectra(seed: int, n: int, gap: float, shape: str) -> None:
    rng = random.Random(seed)
    values = sorted(rng.uniform(-3, 3) for _ in range(n))
    if shape == "close":  # λ₂ ≈ λ₃
        values[2] = values[1] + gap
    elif shape == "repeated":
        values[1:4] = [values[1]] * 3
    else:
        values = [1.0 + i * gap for i in range(n)]
    matrix = spectrum_matrix(values, seed)
    ours = symmetric_eigenvalues(matrix)
    reference = np.linalg.eigvalsh(np.array(matrix))
    assert max(abs(a - b) for a, b in zip(ours, reference, strict=True)) < TOLERANCE
    assert max(abs(a - b) for a, b in zip(ours, sorted(values), strict=True)) < 1e-8


@pytest.mark.parametrize(
    "g",
    [
        nx.cycle_graph(12),  # every nonzero eigenvalue doubly degenerate
        nx.complete_graph(9),  # one eigenvalue with multiplicity 8
        nx.hypercube_graph(4),
        nx.petersen_graph(),
        nx.barbell_graph(8, 2),  # tiny λ₂ well below λ₃
        nx.star_graph(15),
    ],
    ids=["cycle", "complete", "hypercube", "petersen", "barbell", "star"],
)
def test_fiedler_value_of_symmetric_graphs(g: nx.Graph) -> None:
    graph: dict[str, dict[str, float]] = {str(u): {} for u in g}
    for u, v in g.edges():
        graph[str(u)][str(v)] = 1.0
    (component,) = algebraic_connectivity(graph)
    nodes = sorted(graph)
    reference = np.linalg.eigvalsh(nx_normalized_laplacian(undirected_nx(graph), nodes))[1]
    assert component["method"] == "dense"
    assert abs(component["algebraic_connectivity"] - reference) < TOLERANCE


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 40), st.floats(0.01, 0.2))
def test_per_component_connectivity_and_metrics(seed: int, n: int, p: float) -> None:
    graph = random_graph(seed, n, p)
    g = undirected_nx(graph)
    expected_components = sorted(
        (sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c[0])
    )
    assert connected_components(graph) == expected_components
    for backend in ("pure", "numpy"):
        result = algebraic_connectivity(graph, backend=backend)
        for entry, members in zip(result, expected_components, strict=True):
            assert entry["nodes"] == len(members)
            if len(members) == 1:
                assert entry["algebraic_connectivity"] is None
                continue
            sub = g.subgraph(members)
            reference = np.linalg.eigvalsh(nx_normalized_laplacian(sub, members))[1]
            assert abs(entry["algebraic_connectivity"] - reference) < TOLERANCE
    metrics = graph_metrics(graph)
    communities = [set(c) for c in nx.community.louvain_communities(g, seed=1)]
    assert metrics["component_count"] == len(expected_components)
    # Q of our own partition equals networkx's modularity of that partition.
    ours = [set(c) for c in louvain_communities(graph)]
    if g.size(weight="weight") > 0:
        assert abs(metrics["modularity"] - nx.community.modularity(g, ours)) < TOLERANCE
        # Louvain is a heuristic: ours is within 0.05 of networkx's own Louvain.
        assert metrics["modularity"] >= nx.community.modularity(g, communities) - 0.05
    sizes = [len(c) for c in ours]
    entropy = -sum(s / n * math.log2(s / n) for s in sizes)
    assert abs(metrics["entropy_bits"] - entropy) < TOLERANCE


def test_self_loops_are_diagonal_entries_as_in_networkx() -> None:
    graph = {"a": {"a": 1.5, "b": 1.0}, "b": {"c": 2.0}, "c": {"c": 0.5}}
    nodes, rows = normalized_laplacian(graph)
    expected = nx_normalized_laplacian(undirected_nx(graph), nodes)
    assert np.max(np.abs(np.array(rows) - expected)) < TOLERANCE


def test_entropy_and_labels() -> None:
    assert community_entropy([]) == 0.0
    assert community_entropy([["a"], ["b"], ["c"], ["d"]]) == pytest.approx(2.0)
    assert spectral.integration_label(0.0) == "Fragmented"
    assert spectral.integration_label(0.05) == "Weakly Integrated"
    assert spectral.integration_label(0.4) == "Well-Integrated"


def test_lanczos_above_the_dense_limit_has_an_honest_bound() -> None:
    g = nx.connected_watts_strogatz_graph(spectral.DENSE_LIMIT + 60, 6, 0.2, seed=3)
    graph: dict[str, dict[str, float]] = {f"{u:04d}": {} for u in g}
    for u, v in g.edges():
        graph[f"{u:04d}"][f"{v:04d}"] = 1.0
    (entry,) = algebraic_connectivity(graph)
    nodes = sorted(graph)
    reference = np.linalg.eigvalsh(nx_normalized_laplacian(undirected_nx(graph), nodes))[1]
    assert entry["method"] == "lanczos"
    # Courant–Fischer: the Ritz value bounds λ₂ from above; the residual bounds the gap.
    assert entry["algebraic_connectivity"] >= reference - TOLERANCE
    assert entry["algebraic_connectivity"] - reference <= entry["error_bound"] + TOLERANCE


def test_lanczos_finds_an_invariant_subspace_exactly() -> None:
    diagonal = [float(i) for i in range(1, 8)]

    def apply(x: list[float]) -> list[float]:
        return [d * v for d, v in zip(diagonal, x, strict=True)]

    theta, residual = lanczos_smallest(apply, 7, [], steps=50)
    assert abs(theta - 1.0) < TOLERANCE and residual < 1e-8


def test_tridiagonal_against_numpy() -> None:
    rng = random.Random(5)
    d = [rng.uniform(-1, 1) for _ in range(50)]
    e = [0.0] + [rng.uniform(-1, 1) for _ in range(49)]
    matrix = np.diag(d) + np.diag(e[1:], 1) + np.diag(e[1:], -1)
    ours = tridiagonal_eigenvalues(d, e)
    assert max(abs(a - b) for a, b in zip(ours, np.linalg.eigvalsh(matrix), strict=True)) < 1e-12


@pytest.mark.parametrize(
    ("matrix", "field"),
    [([[1.0, 2.0]], "matrix"), ([[math.nan]], "matrix")],
)
def test_bad_matrices_name_the_field(matrix: list[list[float]], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        symmetric_eigenvalues(matrix)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ([], "document"),
        ({"nodes": "a"}, "nodes"),
        ({"nodes": [1]}, "nodes[0]"),
        ({"nodes": ["a"], "edges": [{"source": "a", "target": "b"}]}, "edges[0].target"),
        (
            {"nodes": ["a"], "edges": [{"source": "a", "target": "a", "weight": -1}]},
            "edges[0].weight",
        ),
    ],
)
def test_bad_documents_name_the_field(document: Any, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        graph_from_document(document)
    assert info.value.field == field


def run_cli(argv: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", StringIO(stdin))
    out = StringIO()
    return main(argv, out), out.getvalue()


def test_cli_metrics_document_json_agrees_with_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = random_graph(11, 30, 0.12)
    document = {
        "nodes": sorted(graph),
        "edges": [
            {"source": u, "target": v, "weight": w}
            for u, row in graph.items()
            for v, w in row.items()
        ],
    }
    code, text = run_cli(["metrics", "--json", "-"], json.dumps(document), monkeypatch)
    assert code == 0
    metrics = json.loads(text)
    g = undirected_nx(graph)
    for entry, members in zip(metrics["components"], connected_components(graph), strict=True):
        if len(members) > 1:
            reference = np.linalg.eigvalsh(nx_normalized_laplacian(g.subgraph(members), members))[1]
            assert abs(entry["algebraic_connectivity"] - reference) < TOLERANCE
    assert metrics["source"] == "document" and metrics["node_count"] == 30


def test_cli_metrics_box_and_bad_input(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    code, text = run_cli(
        ["metrics", "-"],
        '{"nodes": ["a", "b"], "edges": [{"source": "a", "target": "b"}]}',
        monkeypatch,
    )
    assert code == 0 and "System Metrics" in text and "2.000 (Well-Integrated)" in text
    assert all(len(line) == 79 for line in text.splitlines())
    code, _ = run_cli(["metrics", "-"], '{"nodes": ["a"], "edges": [1]}', monkeypatch)
    assert code == 2
    code, text = run_cli(["metrics", "--json", "--db", str(tmp_path / "g.db")], "", monkeypatch)
    assert code == 0 and json.loads(text)["source"] == "graph"


def test_adaptive_lanczos_is_exact_to_1e9_above_the_dense_limit() -> None:
    """Beyond DENSE_LIMIT the default (adaptive) Lanczos runs until converged: 1e-9 to NumPy."""
    g = nx.connected_watts_strogatz_graph(spectral.DENSE_LIMIT + 60, 6, 0.2, seed=11)
    graph: dict[str, dict[str, float]] = {f"{u:04d}": {} for u in g}
    for u, v in g.edges():
        graph[f"{u:04d}"][f"{v:04d}"] = 1.0
    (entry,) = algebraic_connectivity(graph)
    nodes = sorted(graph)
    reference = np.linalg.eigvalsh(nx_normalized_laplacian(undirected_nx(graph), nodes))[1]
    assert entry["method"] == "lanczos"
    assert abs(entry["algebraic_connectivity"] - reference) < 1e-9
    assert entry["error_bound"] < 1e-9
    # A fixed small Krylov space (the caller's `steps`) is only bounded, not converged.
    (fixed,) = algebraic_connectivity(graph, steps=10)
    assert fixed["error_bound"] > 1e-9
    assert fixed["algebraic_connectivity"] >= reference - TOLERANCE
