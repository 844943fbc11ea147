"""The reference itself: hand-checked cases, NetworkX as a third oracle, and
the fast bitmask reference of the exhaustive run against the naive one."""

from __future__ import annotations

import itertools
import random

import networkx as nx  # type: ignore[import-untyped]
import pytest

from conformance import exhaustive
from conformance.parity import digraph, random_digraph, strongly_connected_digraph
from conformance.reference import (
    analyze_reference,
    build_adjacency_reference,
    compute_kappa_reference,
    deliberation_budget_reference,
    preview_reference,
    tarjan_reference,
)


def test_three_cycle_by_hand() -> None:
    # Tarjan from "a" visits a, b, c; c closes the cycle and is popped first.
    # Mask 1 is A = {c}: c→a leaves A, b→c enters it, so the cut is 1 and the
    # fault line is c→a (a_to_b ≤ b_to_a keeps the A→B direction).
    result = analyze_reference([], [("a", "b"), ("b", "c"), ("c", "a")])
    assert result == {
        "sccs": [
            {
                "id": "scc-0",
                "nodes": ["c", "b", "a"],
                "kappa": 1,
                "approximate": False,
                "fault_line_edges": [{"source": "c", "target": "a"}],
                "routing": "deliberate",
                "deliberation_budget": {
                    "max_iterations": 2,
                    "agent_count": 1,
                    "timeout_multiplier": 1.5,
                    "confidence_threshold": 0.75,
                },
            }
        ],
        "dag_nodes": [],
        "overall_routing": "deliberate",
        "max_kappa": 1,
        "scc_count": 1,
    }


def test_ids_count_trivial_sccs_and_dag_nodes_are_sorted() -> None:
    # Completion order: "w" is scc-0, the sink "z" scc-1, then the cycle {x, y}.
    result = analyze_reference(["w"], [("x", "y"), ("y", "x"), ("y", "z")])
    assert [scc["id"] for scc in result["sccs"]] == ["scc-2"]
    assert result["sccs"][0]["nodes"] == ["y", "x"]
    assert result["dag_nodes"] == ["w", "z"]


def test_empty_chain_and_self_loop() -> None:
    empty = analyze_reference([], [])
    assert empty == {
        "sccs": [],
        "dag_nodes": [],
        "overall_routing": "fast",
        "max_kappa": 0,
        "scc_count": 0,
    }
    chain = analyze_reference([], [("a", "b"), ("b", "c")])
    assert chain["dag_nodes"] == ["a", "b", "c"] and chain["max_kappa"] == 0
    loop = analyze_reference([], [("a", "a")])
    assert loop["dag_nodes"] == ["a"] and loop["scc_count"] == 0
    assert tarjan_reference(build_adjacency_reference([], [("a", "a")])) == [["a"]]


def test_bipartite_both_directions_has_kappa_two() -> None:
    arcs = [(a, b) for a in "pq" for b in "xy"] + [(b, a) for a in "pq" for b in "xy"]
    adjacency = build_adjacency_reference([], arcs)
    assert compute_kappa_reference(adjacency, ["p", "q", "x", "y"])["kappa"] == 2


def test_large_scc_is_approximate() -> None:
    nodes = [f"v{i:02d}" for i in range(25)]
    arcs = list(itertools.pairwise([*nodes, nodes[0]]))
    result = analyze_reference(nodes, arcs)
    (scc,) = result["sccs"]
    assert scc["kappa"] == 25 and scc["approximate"] is True and scc["fault_line_edges"] == []
    assert scc["deliberation_budget"] == {
        "max_iterations": 26,
        "agent_count": 3,
        "timeout_multiplier": 13.5,
        "confidence_threshold": 1.95,
    }
    capped = deliberation_budget_reference(25, capped=True)
    assert capped == {
        "max_iterations": 4,
        "agent_count": 3,
        "timeout_multiplier": 3.5,
        "confidence_threshold": 0.95,
    }


def test_preview_reference() -> None:
    chain = build_adjacency_reference([], [("a", "b"), ("b", "c")])
    assert preview_reference(chain, "c", "a") == {
        "creates_new_scc": True,
        "enlarges_existing_scc": False,
        "kappa_before": 0,
        "kappa_after": 1,
        "kappa_delta": 1,
    }
    # Every arc of the bidirected triangle except a→c: κ = 1 (only a→b leaves {a}).
    arcs = [("a", "b"), ("b", "a"), ("b", "c"), ("c", "b"), ("c", "a")]
    cycle = build_adjacency_reference([], arcs)
    assert preview_reference(cycle, "a", "c") == {
        "creates_new_scc": False,
        "enlarges_existing_scc": True,
        "kappa_before": 1,
        "kappa_after": 2,
        "kappa_delta": 1,
    }
    assert preview_reference(cycle, "a", "a")["kappa_delta"] == 0


def test_tarjan_and_kappa_agree_with_networkx() -> None:
    rng = random.Random(7)
    for _ in range(300):
        adjacency = random_digraph(rng, rng.randint(1, 9))
        graph = nx.DiGraph([(s, t) for s, ts in adjacency.items() for t in ts])
        graph.add_nodes_from(adjacency)
        ours = tarjan_reference(adjacency)
        assert sorted(map(sorted, ours)) == sorted(
            map(sorted, nx.strongly_connected_components(graph))
        )
        assert sorted(v for scc in ours for v in scc) == sorted(adjacency)
        for members in ours:
            if len(members) > 1:
                expected = nx.edge_connectivity(graph.subgraph(members))
                assert compute_kappa_reference(adjacency, members)["kappa"] == expected


def test_reference_fault_lines_are_the_first_minimum_mask() -> None:
    rng = random.Random(11)
    for _ in range(50):
        adjacency = strongly_connected_digraph(rng, rng.randint(2, 7), 0.3)
        members = tarjan_reference(adjacency)[-1]
        result = compute_kappa_reference(adjacency, members)
        side_a, side_b = result["min_cut_partition"]
        a_to_b = [(a, b) for a in side_a for b in side_b if b in adjacency[a]]
        b_to_a = [(b, a) for b in side_b for a in side_a if a in adjacency[b]]
        assert result["kappa"] == min(len(a_to_b), len(b_to_a))
        chosen = a_to_b if len(a_to_b) <= len(b_to_a) else b_to_a
        assert [(e["source"], e["target"]) for e in result["fault_line_edges"]] == chosen


@pytest.mark.parametrize("n", [2, 3, 4])
def test_fast_digraph_reference_matches_naive_reference(n: int) -> None:
    tables = exhaustive.digraph_tables(n)
    labels = tables.labels
    for number in range(exhaustive.object_count("digraph", n)):
        adjacency = digraph(number, labels)
        naive = tarjan_reference(adjacency)
        masks = [sum(tables.node_bit[v] for v in scc) for scc in naive]
        successors = [sum(tables.node_bit[t] for t in adjacency[v]) for v in labels]
        assert exhaustive.reference_sccs(successors) == sorted(masks)
        for scc, mask in zip(naive, masks, strict=True):
            fast = exhaustive.reference_kappa(number, mask, tables)
            assert fast == compute_kappa_reference(adjacency, scc)["kappa"]


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_fast_map_reference_matches_naive_reference(n: int) -> None:
    labels = [str(i) for i in range(n)]
    for f in itertools.product(range(n), repeat=n):
        adjacency = build_adjacency_reference(labels, [(str(i), str(f[i])) for i in range(n)])
        cycles = sorted(
            sum(1 << int(v) for v in scc) for scc in tarjan_reference(adjacency) if len(scc) > 1
        )
        assert exhaustive.reference_cycles(f) == cycles
