"""Property tests: the κ engine against networkx and a literal seed brute force."""

from __future__ import annotations

import copy
import random
from typing import Any
from unittest import mock

import networkx as nx  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.topology import (
    Adjacency,
    analysis,
    analyze,
    build_adjacency,
    compute_kappa,
    preview_edge_impact,
    tarjan_scc,
)
from graphonomous.topology.analysis import is_acyclic


@st.composite
def digraphs(draw: st.DrawFn, max_nodes: int = 60) -> Adjacency:
    """Random digraphs with ids like n0 … n59 (so string order ≠ numeric order),
    random arcs and, often, a planted cycle through a random subset (big SCCs)."""
    n = draw(st.integers(1, max_nodes))
    arcs_per_node = draw(st.sampled_from([0.5, 1.0, 1.5, 2.5, 4.0]))
    rng = draw(st.randoms(use_true_random=False))
    names = [f"n{i}" for i in range(n)]
    arcs = [(rng.choice(names), rng.choice(names)) for _ in range(int(arcs_per_node * n))]
    if draw(st.booleans()):
        loop = rng.sample(names, rng.randint(1, n))
        arcs += [(loop[i], loop[(i + 1) % len(loop)]) for i in range(len(loop))]
    return build_adjacency(names, arcs)


def to_networkx(adjacency: Adjacency) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(adjacency)
    graph.add_edges_from((u, v) for u, targets in adjacency.items() for v in targets)
    return graph


def seed_brute_force(adjacency: Adjacency, members: list[str]) -> dict[str, Any]:
    """Seed 000's compute_kappa pseudocode, transcribed literally (tests only)."""
    n = len(members)
    best, best_mask = n * n, 0
    for mask in range(1, 2**n - 1):
        a = [members[i] for i in range(n) if mask >> i & 1]
        b = [members[i] for i in range(n) if not mask >> i & 1]
        ab = sum(1 for u in a for v in b if v in adjacency[u])
        ba = sum(1 for u in b for v in a if v in adjacency[u])
        if min(ab, ba) < best:
            best, best_mask = min(ab, ba), mask
            if best == 0:
                break
    a = [members[i] for i in range(n) if best_mask >> i & 1]
    b = [members[i] for i in range(n) if not best_mask >> i & 1]
    ab = sum(1 for u in a for v in b if v in adjacency[u])
    ba = sum(1 for u in b for v in a if v in adjacency[u])
    sources, targets = (a, b) if ab <= ba else (b, a)
    faults = [{"source": u, "target": v} for u in sources for v in targets if v in adjacency[u]]
    return {"kappa": best, "fault_line_edges": faults}


@settings(max_examples=80, deadline=None)
@given(digraphs())
def test_kappa_is_arc_connectivity_and_fault_lines_are_a_minimum_cut(adjacency: Adjacency) -> None:
    graph = to_networkx(adjacency)
    for scc in analyze(adjacency, emit_telemetry=False)["sccs"]:
        nodes = scc["nodes"]
        sub = graph.subgraph(nodes)
        kappa = compute_kappa(adjacency, nodes)
        assert scc["kappa"] == kappa["kappa"] == nx.edge_connectivity(sub)
        assert not scc["approximate"]
        degrees = [d for _, d in sub.in_degree()] + [d for _, d in sub.out_degree()]
        assert kappa["kappa"] <= min(degrees)
        partition = kappa["min_cut_partition"]
        assert partition is not None
        side_a, side_b = set(partition[0]), set(partition[1])
        assert side_a and side_b and side_a | side_b == set(nodes) and not side_a & side_b
        crossing = {(u, v) for u in side_a for v in adjacency[u] if v in side_b}
        faults = [(f["source"], f["target"]) for f in scc["fault_line_edges"]]
        assert faults == sorted(crossing) and len(faults) == scc["kappa"]
        cut = sub.copy()
        cut.remove_edges_from(faults)
        assert not nx.is_strongly_connected(cut)


@settings(max_examples=60, deadline=None)
@given(digraphs())
def test_tarjan_partitions_like_networkx(adjacency: Adjacency) -> None:
    ours = tarjan_scc(adjacency)
    assert sorted(map(sorted, ours)) == sorted(
        sorted(c) for c in nx.strongly_connected_components(to_networkx(adjacency))
    )


def _rename(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, list):
        return [_rename(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: _rename(v, mapping) for k, v in value.items()}
    return value


def check_relabel_and_order_invariance(
    adjacency: Adjacency, rng: random.Random, reference: bool
) -> None:
    expected = analyze(adjacency, reference=reference, emit_telemetry=False)
    # Order-preserving relabel: a common prefix keeps str order.
    forward = {v: "x:" + v for v in adjacency}
    backward = {new: old for old, new in forward.items()}
    arcs = [(forward[u], forward[v]) for u, targets in adjacency.items() for v in targets]
    rng.shuffle(arcs)
    keys = list(forward.values())
    rng.shuffle(keys)
    shuffled: dict[str, list[str]] = {k: [] for k in keys}
    for u, v in arcs:
        shuffled[u].append(v)
    relabeled = analyze(shuffled, reference=reference, emit_telemetry=False)
    assert _rename(relabeled, backward) == expected


@settings(max_examples=50, deadline=None)
@given(digraphs(max_nodes=40), st.randoms(use_true_random=False))
def test_canonical_output_is_invariant_under_relabeling_and_input_order(
    adjacency: Adjacency, rng: random.Random
) -> None:
    check_relabel_and_order_invariance(adjacency, rng, reference=False)


@settings(max_examples=50, deadline=None)
@given(digraphs(max_nodes=14), st.randoms(use_true_random=False))
def test_reference_output_is_invariant_under_relabeling_and_input_order(
    adjacency: Adjacency, rng: random.Random
) -> None:
    check_relabel_and_order_invariance(adjacency, rng, reference=True)


@settings(max_examples=80, deadline=None)
@given(digraphs(max_nodes=14))
def test_reference_kappa_equals_canonical_kappa_on_small_sccs(adjacency: Adjacency) -> None:
    canonical = {
        tuple(s["nodes"]): s["kappa"] for s in analyze(adjacency, emit_telemetry=False)["sccs"]
    }
    reference = analyze(adjacency, reference=True, emit_telemetry=False)
    for scc in reference["sccs"]:
        if len(scc["nodes"]) <= 12:
            assert canonical[tuple(sorted(scc["nodes"]))] == scc["kappa"]
            assert not scc["approximate"]


@settings(max_examples=80, deadline=None)
@given(digraphs(max_nodes=9), st.randoms(use_true_random=False))
def test_reference_mode_matches_the_seed_pseudocode(
    adjacency: Adjacency, rng: random.Random
) -> None:
    members = list(adjacency)
    rng.shuffle(members)  # any member order, strongly connected or not
    if len(members) < 2:
        return
    ours = compute_kappa(adjacency, members, reference=True)
    seed = seed_brute_force(adjacency, members)
    assert ours["kappa"] == seed["kappa"]
    assert ours["fault_line_edges"] == seed["fault_line_edges"]


@settings(max_examples=40, deadline=None)
@given(digraphs(max_nodes=40), st.integers(0, 3000))
def test_budgeted_kappa_is_an_upper_bound(adjacency: Adjacency, budget: int) -> None:
    for members in tarjan_scc(adjacency):
        if len(members) < 2:
            continue
        exact = compute_kappa(adjacency, members, work_budget=None)
        bounded = compute_kappa(adjacency, members, work_budget=budget)
        if bounded["approximate"]:
            assert bounded["kappa"] >= exact["kappa"] >= 1
            assert bounded["fault_line_edges"] == [] and bounded["min_cut_partition"] is None
        else:
            assert bounded == exact


@settings(max_examples=60, deadline=None)
@given(digraphs(max_nodes=25), st.integers(0, 30), st.integers(0, 30))
def test_preview_agrees_with_recomputing_and_never_mutates(
    adjacency: Adjacency, i: int, j: int
) -> None:
    nodes = sorted(adjacency)
    src, dst = nodes[i % len(nodes)], f"new{j}" if j > 25 else nodes[j % len(nodes)]
    snapshot = copy.deepcopy(adjacency)
    impact = preview_edge_impact(adjacency, src, dst)
    assert adjacency == snapshot
    before = analyze(adjacency, emit_telemetry=False)
    after_graph = copy.deepcopy(adjacency)
    after_graph.setdefault(dst, set())
    if src != dst:
        after_graph[src].add(dst)
    after = analyze(after_graph, emit_telemetry=False)
    assert impact["kappa_before"] == before["max_kappa"]
    assert impact["kappa_after"] == after["max_kappa"]
    assert impact["kappa_delta"] == after["max_kappa"] - before["max_kappa"]
    assert impact["creates_new_scc"] == (after["scc_count"] > before["scc_count"])
    old = [set(s["nodes"]) for s in before["sccs"]]
    new = [set(s["nodes"]) for s in after["sccs"]]
    grew = any(o < n for o in old for n in new)
    assert impact["enlarges_existing_scc"] == (grew and not impact["creates_new_scc"])


@settings(max_examples=80, deadline=None)
@given(digraphs(), st.booleans())
def test_the_acyclic_shortcut_agrees_with_networkx_and_the_scc_search(
    adjacency: Adjacency, forward_only: bool
) -> None:
    if forward_only:  # only arcs n_i -> n_j with i < j: a DAG
        adjacency = {u: {v for v in vs if int(v[1:]) > int(u[1:])} for u, vs in adjacency.items()}
    assert is_acyclic(adjacency) == nx.is_directed_acyclic_graph(to_networkx(adjacency))
    with mock.patch.object(analysis, "is_acyclic", lambda _: False):
        searched = analyze(adjacency, emit_telemetry=False)
    assert analyze(adjacency, emit_telemetry=False) == searched
