"""Unit tests for the κ topology engine (seed 000's test list plus the input forms)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from graphonomous.model import KAPPA_ARC_DIRECTION, SYMMETRIC_RELATIONSHIPS, Edge, ValidationError
from graphonomous.topology import (
    BENDSCRIPT_EXCLUDED_KINDS,
    Adjacency,
    adjacency_from_json,
    analyze,
    build_adjacency,
    compute_kappa,
    deliberation_budget,
    preview_edge_impact,
    route,
    tarjan_scc,
)

CANONICAL_KEYS = ["sccs", "dag_nodes", "routing", "max_kappa", "scc_count"]
REFERENCE_KEYS = ["sccs", "dag_nodes", "overall_routing", "max_kappa", "scc_count"]
SCC_KEYS = [
    "id",
    "nodes",
    "kappa",
    "approximate",
    "fault_line_edges",
    "routing",
    "deliberation_budget",
]
BUDGET_KEYS = ["max_iterations", "agent_count", "timeout_multiplier", "confidence_threshold"]


def cycle(*nodes: str) -> list[tuple[str, str]]:
    return [(nodes[i], nodes[(i + 1) % len(nodes)]) for i in range(len(nodes))]


def both_ways(arcs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return arcs + [(b, a) for a, b in arcs]


def assert_schema(result: dict[str, Any], reference: bool = False) -> None:
    """Exact key order and JSON types of §A.1 (or of the reference shape)."""
    assert list(result) == (REFERENCE_KEYS if reference else CANONICAL_KEYS)
    json.dumps(result, allow_nan=False)
    for key in ("max_kappa", "scc_count"):
        assert type(result[key]) is int
    assert result["scc_count"] == len(result["sccs"])
    for scc in result["sccs"]:
        assert list(scc) == SCC_KEYS
        assert type(scc["kappa"]) is int
        assert type(scc["approximate"]) is bool
        assert list(scc["deliberation_budget"]) == BUDGET_KEYS
        budget = scc["deliberation_budget"]
        assert type(budget["max_iterations"]) is int
        assert type(budget["agent_count"]) is int
        assert type(budget["timeout_multiplier"]) is float
        assert type(budget["confidence_threshold"]) is float
        for fault in scc["fault_line_edges"]:
            assert list(fault) == ["source", "target"]


# ---------------------------------------------------------------- seed 000 list


def test_empty_graph() -> None:
    assert tarjan_scc({}) == []
    for result in (analyze({}), analyze([])):
        assert result == {
            "sccs": [],
            "dag_nodes": [],
            "routing": "fast",
            "max_kappa": 0,
            "scc_count": 0,
        }
        assert route(result) == "fast"


def test_linear_chain() -> None:
    edges = [("a", "b"), ("b", "c")]
    assert tarjan_scc(build_adjacency("abc", edges)) == [["c"], ["b"], ["a"]]
    result = analyze(edges)
    assert_schema(result)
    assert result["routing"] == "fast" and result["max_kappa"] == 0
    assert result["dag_nodes"] == ["a", "b", "c"]


def test_simple_three_cycle() -> None:
    adjacency = build_adjacency("abc", cycle("a", "b", "c"))
    assert tarjan_scc(adjacency) == [["c", "b", "a"]]
    kappa = compute_kappa(adjacency, ["c", "a", "b"])
    # Tie-break: first sorted member with the smallest degree, out-degree first.
    assert kappa == {
        "kappa": 1,
        "approximate": False,
        "fault_line_edges": [{"source": "a", "target": "b"}],
        "min_cut_partition": [["a"], ["b", "c"]],
    }
    result = analyze(adjacency)
    assert_schema(result)
    assert result["routing"] == "deliberate"
    assert result["sccs"][0]["deliberation_budget"] == {
        "max_iterations": 2,
        "agent_count": 1,
        "timeout_multiplier": 1.5,
        "confidence_threshold": 0.75,
    }


def test_two_independent_cycles_and_disconnected_tarjan() -> None:
    edges = cycle("x", "y") + cycle("a", "b", "c")
    result = analyze(edges)
    assert_schema(result)
    assert [s["nodes"] for s in result["sccs"]] == [["a", "b", "c"], ["x", "y"]]
    assert [s["id"] for s in result["sccs"]] == ["scc-0", "scc-1"]
    assert all(s["kappa"] > 0 and s["routing"] == "deliberate" for s in result["sccs"])
    assert result["scc_count"] == 2 and result["dag_nodes"] == []
    assert sorted(map(sorted, tarjan_scc(build_adjacency("abcxy", edges)))) == [
        ["a", "b", "c"],
        ["x", "y"],
    ]


def test_mixed_dag_and_cycle() -> None:
    edges = [("root", "a"), *cycle("a", "b", "c"), ("c", "leaf"), ("other", "leaf")]
    result = analyze(edges)
    assert_schema(result)
    assert result["dag_nodes"] == ["leaf", "other", "root"]
    assert [s["nodes"] for s in result["sccs"]] == [["a", "b", "c"]]
    assert result["routing"] == "deliberate" and result["max_kappa"] == 1


def business_edges() -> list[dict[str, str]]:
    """Seed 000's example.  The seed names the main loop and the fault line
    (product-quality→market-share) but not the customer-retention loop's arcs;
    ours: market-share ⇄ customer-retention ⇄ revenue (κ stays 1)."""
    causal = [
        ("market-share", "revenue"),
        ("revenue", "r-and-d"),
        ("r-and-d", "product-quality"),
        ("product-quality", "market-share"),
        ("market-share", "customer-retention"),
        ("customer-retention", "market-share"),
        ("revenue", "customer-retention"),
        ("customer-retention", "revenue"),
        ("ceo-name", "r-and-d"),
    ]
    edges = [{"source": s, "target": t, "relationship": "causal"} for s, t in causal]
    edges.append(
        {"source": "founding-date", "target": "ceo-name", "relationship": "temporal_before"}
    )
    edges.append({"source": "founding-date", "target": "revenue", "relationship": "related"})
    return edges


def test_business_example() -> None:
    result = analyze(business_edges())
    assert result == {
        "sccs": [
            {
                "id": "scc-0",
                "nodes": [
                    "customer-retention",
                    "market-share",
                    "product-quality",
                    "r-and-d",
                    "revenue",
                ],
                "kappa": 1,
                "approximate": False,
                "fault_line_edges": [{"source": "product-quality", "target": "market-share"}],
                "routing": "deliberate",
                "deliberation_budget": {
                    "max_iterations": 2,
                    "agent_count": 1,
                    "timeout_multiplier": 1.5,
                    "confidence_threshold": 0.75,
                },
            }
        ],
        "dag_nodes": ["ceo-name", "founding-date"],
        "routing": "deliberate",
        "max_kappa": 1,
        "scc_count": 1,
    }
    assert analyze(business_edges(), reference=True)["sccs"][0]["kappa"] == 1


def test_single_node_and_self_loop_only() -> None:
    assert compute_kappa({"a": set()}, ["a"])["kappa"] == 0
    assert compute_kappa({}, [])["kappa"] == 0
    graphs: list[Any] = [{"a": set()}, {"a": {"a"}}, [("a", "a")]]
    for graph in graphs:
        result = analyze(graph)
        assert result["dag_nodes"] == ["a"] and result["routing"] == "fast"
        assert result["sccs"] == []
    assert build_adjacency(["a"], [("a", "a")]) == {"a": set()}


def test_complete_bipartite_both_directions_has_kappa_two() -> None:
    edges = both_ways([("a1", "b1"), ("a1", "b2"), ("a2", "b1"), ("a2", "b2")])
    adjacency = build_adjacency(["a1", "a2", "b1", "b2"], edges)
    for reference in (False, True):
        kappa = compute_kappa(adjacency, ["a1", "a2", "b1", "b2"], reference=reference)
        assert kappa["kappa"] == 2 and len(kappa["fault_line_edges"]) == 2
    result = analyze(edges)
    assert result["max_kappa"] == 2
    assert result["sccs"][0]["fault_line_edges"] == [
        {"source": "a1", "target": "b1"},
        {"source": "a1", "target": "b2"},
    ]


def test_large_scc_exact_canonically_approximate_in_reference() -> None:
    names = [f"n{i:02d}" for i in range(25)]
    edges = both_ways(cycle(*names))  # a bidirected ring: κ = 2
    canonical = analyze(edges)
    assert_schema(canonical)
    scc = canonical["sccs"][0]
    assert scc["kappa"] == 2 and scc["approximate"] is False
    assert len(scc["fault_line_edges"]) == 2
    reference = analyze(edges, reference=True)
    assert_schema(reference, reference=True)
    ref_scc = reference["sccs"][0]
    assert ref_scc["kappa"] == 25 and ref_scc["approximate"] is True
    assert ref_scc["fault_line_edges"] == [] and ref_scc["routing"] == "deliberate"
    assert ref_scc["deliberation_budget"] == {
        "max_iterations": 26,
        "agent_count": 3,
        "timeout_multiplier": 13.5,
        "confidence_threshold": 1.95,
    }
    assert deliberation_budget(25) == {
        "max_iterations": 4,
        "agent_count": 3,
        "timeout_multiplier": 3.5,
        "confidence_threshold": 0.95,
    }


# ---------------------------------------------------------------- reference shape


def test_reference_shape_and_orders() -> None:
    # Tarjan from "a": trivial SCC "z" completes first (id scc-0 is skipped).
    adjacency = {"a": {"b"}, "b": {"a", "z"}, "z": set(), "m": {"n"}, "n": {"m"}}
    result = analyze(adjacency, reference=True)
    assert_schema(result, reference=True)
    assert [(s["id"], s["nodes"]) for s in result["sccs"]] == [
        ("scc-1", ["b", "a"]),
        ("scc-2", ["n", "m"]),
    ]
    assert result["overall_routing"] == "deliberate"
    assert result["dag_nodes"] == ["z"]
    assert route(result) == "deliberate"


def test_reference_fault_lines_are_source_member_major() -> None:
    adjacency = {"a": {"b", "c", "d"}, "b": {"a"}, "c": {"a"}, "d": {"a"}}
    # Members a, b, c, d: mask {a} cuts 3, mask {b} cuts 1 and is the first best.
    kappa = compute_kappa(adjacency, ["a", "b", "c", "d"], reference=True)
    assert kappa["kappa"] == 1
    assert kappa["fault_line_edges"] == [{"source": "b", "target": "a"}]
    assert kappa["min_cut_partition"] == [["b"], ["a", "c", "d"]]
    # Order c, d, a, b: the first best mask is now {c}.
    kappa = compute_kappa(adjacency, ["c", "d", "a", "b"], reference=True)
    assert kappa["fault_line_edges"] == [{"source": "c", "target": "a"}]


def test_reference_fault_lines_go_b_to_a_when_that_side_is_smaller() -> None:
    adjacency = {"a": {"b", "c"}, "b": {"c"}, "c": {"a"}}
    # Mask {a}: e(A→B) = 2 > e(B→A) = 1, so the fault line is c→a (B→A).
    kappa = compute_kappa(adjacency, ["a", "b", "c"], reference=True)
    assert kappa["fault_line_edges"] == [{"source": "c", "target": "a"}]
    assert kappa["min_cut_partition"] == [["b", "c"], ["a"]]
    # Canonical: first sorted member with degree 1 is a (in-degree), same arc.
    assert compute_kappa(adjacency, ["a", "b", "c"])["fault_line_edges"] == [
        {"source": "c", "target": "a"}
    ]


# ---------------------------------------------------------------- compute_kappa


def test_kappa_of_a_set_that_is_not_strongly_connected_is_zero() -> None:
    adjacency = {"a": {"b"}, "b": set(), "c": {"a"}}
    kappa = compute_kappa(adjacency, ["a", "b", "c"])
    assert kappa["kappa"] == 0 and kappa["fault_line_edges"] == []
    # A = reachable from "a" = {a, b}: nothing leaves it.
    assert kappa["min_cut_partition"] == [["a", "b"], ["c"]]
    # Everything is reachable from "a" here, but only {a, b} reaches it: A = {c}.
    kappa = compute_kappa({"a": {"b", "c"}, "b": {"a"}, "c": set()}, ["a", "b", "c"])
    assert kappa["min_cut_partition"] == [["c"], ["a", "b"]]


def hard_scc(n: int = 60, strands: int = 6) -> Adjacency:
    """Union of `strands` Hamiltonian cycles with different strides: in = out = strands."""
    names = [f"v{i:03d}" for i in range(n)]
    adjacency: Adjacency = {v: set() for v in names}
    for stride in (1, 7, 11, 13, 17, 19, 23, 29)[:strands]:
        for i in range(n):
            adjacency[names[i]].add(names[(i + stride) % n])
    return adjacency


def test_work_budget_gives_an_upper_bound() -> None:
    adjacency = hard_scc()
    exact = compute_kappa(adjacency, list(adjacency), work_budget=None)
    assert exact["kappa"] == 6 and not exact["approximate"]
    bounded = compute_kappa(adjacency, list(adjacency), work_budget=10)
    assert bounded == {
        "kappa": 6,  # nothing better than the degree bound was completed
        "approximate": True,
        "fault_line_edges": [],
        "min_cut_partition": None,
    }
    # A final answer (degree bound 1 in a strongly connected set) stays exact.
    ring = build_adjacency("abcd", cycle("a", "b", "c", "d"))
    assert compute_kappa(ring, "abcd", work_budget=0)["approximate"] is False


def test_degree_bound_can_be_beaten_by_a_flow() -> None:
    # Two K4 cliques (κ 3 each) joined by one arc each way: min degree 3, κ 1.
    left = [(a, b) for a in "abcd" for b in "abcd" if a != b]
    right = [(a, b) for a in "wxyz" for b in "wxyz" if a != b]
    adjacency = build_adjacency("abcdwxyz", [*left, *right, ("d", "w"), ("z", "a")])
    kappa = compute_kappa(adjacency, list(adjacency))
    assert kappa["kappa"] == 1
    assert kappa["min_cut_partition"] == [["a", "b", "c", "d"], ["w", "x", "y", "z"]]
    assert kappa["fault_line_edges"] == [{"source": "d", "target": "w"}]


# ---------------------------------------------------------------- budget and route


@pytest.mark.parametrize(
    ("kappa", "capped", "uncapped"),
    [
        (0, (1, 0, 1.0, 0.7), (1, 0, 1.0, 0.7)),
        (1, (2, 1, 1.5, 0.75), (2, 1, 1.5, 0.75)),
        (2, (3, 2, 2.0, 0.8), (3, 2, 2.0, 0.8)),
        (3, (4, 3, 2.5, 0.85), (4, 3, 2.5, 0.85)),
        (4, (4, 3, 3.0, 0.9), (5, 3, 3.0, 0.9)),
        (5, (4, 3, 3.5, 0.95), (6, 3, 3.5, 0.95)),
        (7, (4, 3, 3.5, 0.95), (8, 3, 4.5, 1.05)),
    ],
)
def test_deliberation_budget(
    kappa: int, capped: tuple[int, int, float, float], uncapped: tuple[int, int, float, float]
) -> None:
    assert tuple(deliberation_budget(kappa).values()) == capped
    assert tuple(deliberation_budget(kappa, capped=False).values()) == uncapped


def test_deliberation_budget_rejects_non_integers() -> None:
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValidationError, match="kappa"):
            deliberation_budget(bad)  # type: ignore[arg-type]


def test_route() -> None:
    assert route({"max_kappa": 0}) == "fast"
    assert route({"max_kappa": 3}) == "deliberate"


# ---------------------------------------------------------------- build_adjacency


def test_build_adjacency_accepts_every_edge_form() -> None:
    universe = ["a", "b", "c", "d", "e", "f", "g", "h", "lonely"]
    edges: list[Any] = [
        Edge(id="1", source_id="a", target_id="b", relationship="causal"),
        {"source": "b", "target": "c", "relationship": "supports"},
        {"source_id": "c", "target_id": "d", "edge_type": "depends_on"},
        {"source": "d", "target": "e", "kind": "causal"},
        {"a": "e", "b": "f", "props": {"kind": "temporal", "label": "then"}},
        ("f", "g"),
        ["g", "h"],
        {"source": "h", "target": "a"},  # no relationship: directed
        {"source": "a", "target": "b", "relationship": "causes"},  # duplicate arc
        ("a", "outside"),  # endpoint outside the universe
        ("c", "c"),  # self-loop
    ]
    adjacency = build_adjacency(universe, edges)
    assert list(adjacency) == sorted(universe)
    assert adjacency == {
        "a": {"b"},
        "b": {"c"},
        "c": {"d"},
        "d": {"e"},
        "e": {"f"},
        "f": {"g"},
        "g": {"h"},
        "h": {"a"},
        "lonely": set(),
    }


def test_symmetric_kinds_are_excluded_and_inverse_kinds_reversed() -> None:
    excluded = [*SYMMETRIC_RELATIONSHIPS, *BENDSCRIPT_EXCLUDED_KINDS]
    assert not set(excluded) & set(KAPPA_ARC_DIRECTION)
    edges: list[dict[str, Any]] = [
        {"source": "a", "target": "b", "relationship": kind} for kind in excluded
    ]
    edges += [{"a": "a", "b": "b", "props": {"kind": kind}} for kind in BENDSCRIPT_EXCLUDED_KINDS]
    assert build_adjacency("ab", edges) == {"a": set(), "b": set()}
    for kind, direction in KAPPA_ARC_DIRECTION.items():
        adjacency = build_adjacency("ab", [{"source": "a", "target": "b", "relationship": kind}])
        expected = {"a": {"b"}, "b": set()} if direction > 0 else {"a": set(), "b": {"a"}}
        assert adjacency == expected, kind
    # `A superseded_by B` and `B supersedes A` are one arc, not a loop.
    both = [
        Edge(id="1", source_id="a", target_id="b", relationship="superseded_by"),
        Edge(id="2", source_id="b", target_id="a", relationship="supersedes"),
    ]
    assert analyze(both)["routing"] == "fast"


@pytest.mark.parametrize(
    ("edge", "field"),
    [
        ({"source": "a", "target": "b", "relationship": "loves"}, "edges[0].relationship"),
        ({"source": "a", "target": "b", "edge_type": "loves"}, "edges[0].edge_type"),
        ({"a": "a", "b": "b", "props": {"kind": "loves"}}, "edges[0].props.kind"),
        ({"source": "a", "target": "b", "relationship": 3}, "edges[0].relationship"),
        ({"target": "b"}, "edges[0].source"),
        ({"source": "a", "target": ""}, "edges[0].target"),
        ({"source": "a", "source_id": "x", "target": "b"}, "edges[0].source_id"),
        (("a",), "edges[0]"),
        (42, "edges[0]"),
    ],
)
def test_build_adjacency_rejects_bad_edges(edge: Any, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        build_adjacency("ab", [edge])
    assert info.value.field == field


def test_adjacency_from_json() -> None:
    doc = {
        "nodes": ["a", {"id": "b", "text": "bendscript node"}, "lonely"],
        "edges": [
            {"a": "a", "b": "b", "props": {"kind": "causal"}},
            {"a": "b", "b": "c", "props": {"kind": "context"}},  # excluded, but c joins
            {"source": "c", "target": "a"},
        ],
    }
    expected = {"a": {"b"}, "b": set(), "c": {"a"}, "lonely": set()}
    assert adjacency_from_json(doc) == expected
    assert adjacency_from_json(json.dumps(doc)) == expected
    assert adjacency_from_json({}) == {}


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ("{not json", "doc"),
        ([1, 2], "doc"),
        ({"nodes": "a"}, "nodes"),
        ({"edges": {}}, "edges"),
        ({"nodes": [{"text": "no id"}]}, "nodes[0].id"),
        ({"nodes": [7]}, "nodes[0]"),
        ({"edges": [{"source": "a"}]}, "edges[0].target"),
    ],
)
def test_adjacency_from_json_rejects_bad_documents(doc: Any, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        adjacency_from_json(doc)
    assert info.value.field == field


def test_analyze_rejects_bad_input() -> None:
    with pytest.raises(ValidationError):
        analyze("a->b")
    with pytest.raises(ValidationError):
        analyze({"a": "b"})
    with pytest.raises(ValidationError):
        analyze({"a": {1}})


def test_analyze_accepts_lists_as_adjacency_values_and_keeps_sinks() -> None:
    result = analyze({"a": ["b"], "b": ["a", "sink"]})
    assert result["dag_nodes"] == ["sink"] and result["sccs"][0]["nodes"] == ["a", "b"]


# ---------------------------------------------------------------- preview


def test_preview_detects_new_scc_and_never_mutates() -> None:
    adjacency = {"a": {"b"}, "b": {"c"}, "c": set()}
    snapshot = copy.deepcopy(adjacency)
    for reference in (False, True):
        impact = preview_edge_impact(adjacency, "c", "a", reference=reference)
        assert impact == {
            "creates_new_scc": True,
            "enlarges_existing_scc": False,
            "kappa_before": 0,
            "kappa_after": 1,
            "kappa_delta": 1,
            "description": "Adding c→a creates a new feedback loop (κ 0→1).",
        }
        assert adjacency == snapshot


def test_preview_enlarging_strengthening_and_no_change() -> None:
    adjacency = build_adjacency("abcd", [*cycle("a", "b", "c"), ("c", "d")])
    snapshot = copy.deepcopy(adjacency)
    grow = preview_edge_impact(adjacency, "d", "a")
    assert grow["enlarges_existing_scc"] and not grow["creates_new_scc"]
    assert grow["kappa_delta"] == 0
    # Reference: "enlarges" means max κ rises (it does not here).
    assert not preview_edge_impact(adjacency, "d", "a", reference=True)["enlarges_existing_scc"]
    strengthen = preview_edge_impact(adjacency, "b", "a")
    assert not strengthen["enlarges_existing_scc"] and not strengthen["creates_new_scc"]
    nothing = preview_edge_impact(adjacency, "a", "d")
    assert nothing["kappa_delta"] == 0 and "unchanged" in nothing["description"]
    assert adjacency == snapshot


def test_preview_self_loop_and_new_nodes() -> None:
    adjacency = {"a": {"b"}, "b": {"a"}}
    loop = preview_edge_impact(adjacency, "a", "a")
    assert loop["kappa_delta"] == 0 and not loop["creates_new_scc"]
    assert not loop["enlarges_existing_scc"]
    fresh = preview_edge_impact(adjacency, "x", "y")
    assert fresh["kappa_before"] == fresh["kappa_after"] == 1
    assert not fresh["creates_new_scc"] and not fresh["enlarges_existing_scc"]
    assert adjacency == {"a": {"b"}, "b": {"a"}}
    with pytest.raises(ValidationError, match="src"):
        preview_edge_impact(adjacency, "", "a")


# ---------------------------------------------------------------- scale


def test_iterative_tarjan_on_a_100k_path_and_cycle() -> None:
    n = 100_000
    names = [f"n{i:06d}" for i in range(n)]
    path = {names[i]: {names[i + 1]} for i in range(n - 1)}
    sccs = tarjan_scc(path)
    assert len(sccs) == n and sccs[0] == [names[-1]]
    ring = {names[i]: {names[(i + 1) % n]} for i in range(n)}
    [only] = tarjan_scc(ring)
    assert len(only) == n and only[-1] == names[0]
    result = analyze(ring, emit_telemetry=False)
    assert result["max_kappa"] == 1 and result["sccs"][0]["approximate"] is False


def test_analyze_without_copy_gives_the_same_result_and_leaves_the_adjacency() -> None:
    edges = [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("d", "e"),
        ("e", "d"),
        ("f", "f"),
    ]
    adjacency = build_adjacency(["a", "b", "c", "d", "e", "f", "g"], edges)
    before = copy.deepcopy(adjacency)
    owned = analyze(adjacency, copy=False, emit_telemetry=False)
    assert owned == analyze(adjacency, emit_telemetry=False)
    assert owned["scc_count"] == 2
    assert adjacency == before
