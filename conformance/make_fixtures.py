"""Write the language-neutral κ fixtures: ``python -m conformance.make_fixtures``.

Each fixture is one JSON file, ``fixtures/topology/<name>.json`` or
``fixtures/preview/<name>.json`` (format: fixtures/README.md).  Expected outputs
come from the product engine and are cross-checked against the independent
reference before anything is written; the run is deterministic (fixed seed),
so re-running on an unchanged engine reproduces the files byte for byte.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.jsonio import graph_from_document
from conformance.parity import canonical_problems, preview_problems
from conformance.reference import (
    analyze_reference,
    build_adjacency_reference,
    tarjan_reference,
)
from graphonomous import topology

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SEED = 20260321  # seed 000's date; any fixed value keeps the output stable
GENERATED_TOPOLOGY = 60
GENERATED_PREVIEW = 12
MAX_GENERATED_SCC = 10  # keeps the reference's enumeration exact

# Relationship kinds used by generated cases, grouped by how they enter the κ
# digraph; the directions themselves come from model.KAPPA_ARC_DIRECTION.
FORWARD_KINDS = ("causal", "depends_on", "supports", "follows", "temporal_before", "contradicts")
INVERSE_KINDS = ("superseded_by", "temporal_after")
EXCLUDED_KINDS = ("related", "similar_to", "co_occurs", "related_to", "context", "associative")

Edge = dict[str, str]
Document = dict[str, Any]


def _edges(arcs: Sequence[tuple[str, str]], relationship: str | None = None) -> list[Edge]:
    edges = []
    for source, target in arcs:
        edge = {"source": source, "target": target}
        if relationship is not None:
            edge["relationship"] = relationship
        edges.append(edge)
    return edges


def _cycle(nodes: Sequence[str]) -> list[tuple[str, str]]:
    return list(itertools.pairwise([*nodes, nodes[0]]))


# --------------------------------------------------------------------------
# Hand-written cases
# --------------------------------------------------------------------------


def topology_cases() -> list[tuple[str, str, Document]]:
    """(name, description, input) of the hand-written topology cases."""
    business = ["market-share", "revenue", "r-and-d", "product-quality"]
    business_arcs = [
        *_cycle(business),
        ("market-share", "customer-retention"),
        ("customer-retention", "market-share"),
        ("revenue", "customer-retention"),
        ("customer-retention", "revenue"),
    ]
    business_edges = [
        *_edges(business_arcs, "causal"),
        {"source": "founding-date", "target": "ceo-name", "relationship": "temporal_before"},
        {"source": "ceo-name", "target": "r-and-d", "relationship": "causes"},
    ]
    k22 = [(a, b) for a in ("p", "q") for b in ("x", "y")]
    ring = [f"v{i:02d}" for i in range(25)]
    ring_arcs = [(ring[i], ring[(i + step) % 25]) for i in range(25) for step in (1, 2)]
    complete = ["a", "b", "c", "d", "e", "f", "g"]
    return [
        ("empty-graph", "No nodes, no edges: routing fast, max κ 0.", {"nodes": [], "edges": []}),
        ("single-node", "One isolated node: a trivial SCC, κ 0.", {"nodes": ["a"], "edges": []}),
        (
            "linear-chain",
            "a→b→c: a DAG, every node is a dag node.",
            {"nodes": ["a", "b", "c"], "edges": _edges([("a", "b"), ("b", "c")])},
        ),
        (
            "three-cycle",
            "a→b→c→a: one SCC with κ 1.",
            {"nodes": ["a", "b", "c"], "edges": _edges(_cycle(["a", "b", "c"]))},
        ),
        (
            "two-independent-cycles",
            "A 3-cycle and a disjoint 2-cycle: two SCCs, each κ 1.",
            {
                "nodes": ["a", "b", "c", "x", "y"],
                "edges": _edges([*_cycle(["a", "b", "c"]), ("x", "y"), ("y", "x")]),
            },
        ),
        (
            "mixed-dag-and-scc",
            "A chain feeding a 3-cycle that feeds a sink: the chain and sink are dag nodes.",
            {
                "nodes": ["in1", "in2", "s1", "s2", "s3", "out"],
                "edges": _edges(
                    [("in1", "in2"), ("in2", "s1"), *_cycle(["s1", "s2", "s3"]), ("s3", "out")]
                ),
            },
        ),
        (
            "business-example",
            "Seed 000: market-share→revenue→r-and-d→product-quality→market-share plus a "
            "customer-retention loop (customer-retention⇄market-share, "
            "customer-retention⇄revenue); κ 1 with the fault line "
            "product-quality→market-share; founding-date and ceo-name are dag nodes.",
            {
                "nodes": [*business, "customer-retention", "founding-date", "ceo-name"],
                "edges": business_edges,
            },
        ),
        (
            "self-loop-only",
            "a→a: self-loops are dropped, so κ 0 and routing fast.",
            {"nodes": ["a"], "edges": _edges([("a", "a")])},
        ),
        (
            "bipartite-k22-both-directions",
            "Complete bipartite K2,2 with arcs in both directions: one SCC, κ 2.",
            {
                "nodes": ["p", "q", "x", "y"],
                "edges": _edges(k22 + [(b, a) for a, b in k22]),
            },
        ),
        (
            "large-scc-25",
            "25-node circulant (i→i+1, i→i+2 mod 25): canonical κ is exact (2); "
            "reference mode exceeds 20 members and reports approximate κ 25.",
            {"nodes": ring, "edges": _edges(ring_arcs, "causal")},
        ),
        (
            "complete-digraph-7",
            "All 42 arcs on 7 nodes: κ 6, so the canonical budget hits its caps "
            "(4 / 3 / 3.5 / 0.95) while reference mode is uncapped (7 / 3 / 4.0 / 1.0).",
            {
                "nodes": complete,
                "edges": _edges([(a, b) for a in complete for b in complete if a != b]),
            },
        ),
        (
            "symmetric-kinds-excluded",
            "Mutual related/similar_to/co_occurs/related_to/context/associative edges form "
            "no arcs; only the causal chain a→b→c counts, so routing is fast.",
            {
                "nodes": ["a", "b", "c"],
                "edges": [
                    *_edges([("a", "b"), ("b", "c")], "causal"),
                    *(
                        edge
                        for kind in EXCLUDED_KINDS
                        for edge in _edges([("a", "b"), ("b", "a"), ("c", "a")], kind)
                    ),
                ],
            },
        ),
        (
            "inverse-kinds",
            "a causes b and a temporal_after b (an arc b→a): a 2-cycle, κ 1.  "
            "x superseded_by y and y supersedes x are the same arc y→x: no cycle.",
            {
                "nodes": ["a", "b", "x", "y"],
                "edges": [
                    {"source": "a", "target": "b", "relationship": "causes"},
                    {"source": "a", "target": "b", "relationship": "temporal_after"},
                    {"source": "x", "target": "y", "relationship": "superseded_by"},
                    {"source": "y", "target": "x", "relationship": "supersedes"},
                ],
            },
        ),
        (
            "parallel-edges",
            "Duplicate edges count once: a→b twice and b→a give κ 1, not 2.",
            {"nodes": ["a", "b"], "edges": _edges([("a", "b"), ("a", "b"), ("b", "a")])},
        ),
        (
            "implicit-nodes",
            "Edge endpoints missing from `nodes` still join the universe.",
            {"nodes": ["a"], "edges": _edges([("b", "c"), ("c", "b"), ("c", "d")])},
        ),
        (
            "id-sort-order",
            "Ids are sorted by code point (B < a < n10 < n2), which decides SCC order, "
            "member order and fault-line order.",
            {
                "nodes": ["n2", "n10", "a", "B"],
                "edges": _edges(
                    [("n2", "n10"), ("n10", "n2"), ("a", "B"), ("B", "a"), ("a", "n2")]
                ),
            },
        ),
    ]


def preview_cases() -> list[tuple[str, str, Document]]:
    """(name, description, input) of the hand-written preview cases."""
    chain = _edges([("a", "b"), ("b", "c")])
    near_triangle = _edges([("a", "b"), ("b", "a"), ("b", "c"), ("c", "b"), ("c", "a")])
    two_pairs = _edges([("a", "b"), ("b", "a"), ("x", "y"), ("y", "x"), ("b", "x")])
    return [
        (
            "creates-new-scc",
            "Closing the chain a→b→c with c→a creates an SCC: κ 0→1.",
            {"nodes": ["a", "b", "c"], "edges": chain, "preview": {"source": "c", "target": "a"}},
        ),
        (
            "enlarges-existing-scc",
            "Adding the missing a→c to a bidirected triangle raises κ 1→2.",
            {
                "nodes": ["a", "b", "c"],
                "edges": near_triangle,
                "preview": {"source": "a", "target": "c"},
            },
        ),
        (
            "no-change-dag",
            "A shortcut a→c on the chain a→b→c keeps it a DAG: κ 0→0.",
            {"nodes": ["a", "b", "c"], "edges": chain, "preview": {"source": "a", "target": "c"}},
        ),
        (
            "no-change-self-loop",
            "A proposed self-loop is dropped: nothing changes.",
            {"nodes": ["a", "b"], "edges": chain, "preview": {"source": "b", "target": "b"}},
        ),
        (
            "merges-two-sccs",
            "y→b merges two 2-cycles into one SCC: the SCC count falls 2→1 and κ stays 1.  "
            "Canonical enlarges_existing_scc is true (an SCC gained members); the "
            "reference's is false (it means max κ rose).",
            {
                "nodes": ["a", "b", "x", "y"],
                "edges": two_pairs,
                "preview": {"source": "y", "target": "b"},
            },
        ),
    ]


# --------------------------------------------------------------------------
# Generated cases
# --------------------------------------------------------------------------


def _random_arcs(rng: random.Random) -> tuple[list[str], list[tuple[str, str]]]:
    """A random digraph whose SCCs have at most MAX_GENERATED_SCC members.

    Mostly planted structure — 1 to 3 blocks, each a shuffled Hamiltonian cycle
    plus chords of random density (so κ ranges from 1 to several), joined by
    arcs that only go forward in a random block order, plus a few loose nodes —
    and sometimes a plain random digraph (often a DAG).
    """
    pool = [f"n{i}" for i in range(24)] + ["alpha", "Beta", "gamma", "x1", "x10", "x2"]
    if rng.random() < 0.2:
        nodes = rng.sample(pool, rng.randint(2, 10))
        density = rng.uniform(0.1, 0.4)
        return nodes, [(s, t) for s in nodes for t in nodes if s != t and rng.random() < density]
    sizes = [rng.randint(2, MAX_GENERATED_SCC) for _ in range(rng.randint(1, 3))]
    loose = rng.randint(0, 3)
    names = rng.sample(pool, sum(sizes) + loose)
    blocks, start = [], 0
    for size in sizes:
        blocks.append(names[start : start + size])
        start += size
    blocks += [[name] for name in names[start:]]
    rng.shuffle(blocks)
    arcs: list[tuple[str, str]] = []
    for block in blocks:
        if len(block) > 1:
            arcs += _cycle(block)
            chords = rng.choice((0.0, 0.15, 0.35, 0.7))
            arcs += [(s, t) for s in block for t in block if s != t and rng.random() < chords]
    for i, j in itertools.combinations(range(len(blocks)), 2):  # forward only: stays acyclic
        if rng.random() < 0.4:
            arcs.append((rng.choice(blocks[i]), rng.choice(blocks[j])))
    return names, sorted(set(arcs))


def _random_document(rng: random.Random) -> Document:
    """A random input document: arcs written with assorted kinds plus excluded noise."""
    nodes, arcs = _random_arcs(rng)
    edges: list[Edge] = []
    for source, target in arcs:
        style = rng.random()
        if style < 0.4:
            edges.append({"source": source, "target": target})
        elif style < 0.8:
            kind = rng.choice(FORWARD_KINDS)
            edges.append({"source": source, "target": target, "relationship": kind})
        else:  # an inverse kind written the other way round is the same arc
            kind = rng.choice(INVERSE_KINDS)
            edges.append({"source": target, "target": source, "relationship": kind})
    for _ in range(rng.randint(0, 3)):
        source, target = rng.sample(nodes, 2)
        edges.append(
            {"source": source, "target": target, "relationship": rng.choice(EXCLUDED_KINDS)}
        )
    rng.shuffle(edges)
    listed = [node for node in nodes if rng.random() < 0.8]  # the rest appear via edges only
    return {"nodes": listed, "edges": edges}


def generated_topology_cases(rng: random.Random) -> list[tuple[str, str, Document]]:
    """Seeded random topology cases."""
    cases = []
    for i in range(GENERATED_TOPOLOGY):
        document = _random_document(rng)
        nodes, arcs = graph_from_document(document)
        largest = max(map(len, tarjan_reference(build_adjacency_reference(nodes, arcs))))
        description = (
            f"Generated (seed {SEED}, #{i}): {len(set(nodes))} nodes, "
            f"{len(document['edges'])} edges, largest SCC {largest}."
        )
        cases.append((f"generated-{i:03d}", description, document))
    return cases


def generated_preview_cases(rng: random.Random) -> list[tuple[str, str, Document]]:
    """Seeded random preview cases.

    Half of the proposed arcs close a path (the target already reaches the
    source), so they create or enlarge an SCC; the rest are arbitrary pairs.
    """
    cases = []
    for i in range(GENERATED_PREVIEW):
        document = _random_document(rng)
        nodes, arcs = graph_from_document(document)
        adjacency = build_adjacency_reference(nodes, arcs)
        pairs = [(s, t) for s in adjacency for t in adjacency if s != t]
        closing = [(s, t) for s, t in pairs if t not in adjacency[s] and _reaches(adjacency, t, s)]
        source, target = rng.choice(closing if closing and i % 2 == 0 else pairs)
        document["preview"] = {"source": source, "target": target}
        description = f"Generated (seed {SEED}, #{i}): preview {source}→{target}."
        cases.append((f"generated-{i:03d}", description, document))
    return cases


def _reaches(adjacency: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, frontier = {start}, [start]
    while frontier:
        for w in adjacency[frontier.pop()]:
            if w not in seen:
                seen.add(w)
                frontier.append(w)
    return goal in seen


# --------------------------------------------------------------------------
# Expected outputs, cross-checked
# --------------------------------------------------------------------------


class FixtureMismatch(AssertionError):
    """The product engine and the reference disagree on a fixture."""


def topology_fixture(name: str, description: str, document: Document) -> Document:
    """A topology fixture with both expected outputs, after cross-checking them."""
    adjacency = topology.adjacency_from_json(document)
    nodes, arcs = graph_from_document(document)
    if adjacency != build_adjacency_reference(nodes, arcs):
        raise FixtureMismatch(f"{name}: adjacency differs from the reference's")
    expected = topology.analyze(adjacency, emit_telemetry=False)
    expected_reference = topology.analyze(adjacency, reference=True, emit_telemetry=False)
    reference = analyze_reference(nodes, arcs)
    if expected_reference != reference:
        raise FixtureMismatch(f"{name}: reference mode {expected_reference} != {reference}")
    problems = canonical_problems(expected, adjacency, reference)
    if problems:
        raise FixtureMismatch(f"{name}: {problems}")
    return {
        "name": name,
        "description": description,
        "input": document,
        "expected": expected,
        "expected_reference": expected_reference,
    }


def preview_fixture(name: str, description: str, document: Document) -> Document:
    """A preview fixture with both expected outputs, after cross-checking them."""
    adjacency = topology.adjacency_from_json(document)
    source, target = document["preview"]["source"], document["preview"]["target"]
    expected = dict(topology.preview_edge_impact(adjacency, source, target))
    expected_reference = dict(
        topology.preview_edge_impact(adjacency, source, target, reference=True)
    )
    if adjacency != build_adjacency_reference(*graph_from_document(document)):
        raise FixtureMismatch(f"{name}: adjacency differs from the reference's")
    problems = preview_problems(adjacency, source, target)
    if problems:
        raise FixtureMismatch(f"{name}: {problems}")
    return {
        "name": name,
        "description": description,
        "input": document,
        "expected": expected,
        "expected_reference": expected_reference,
    }


def build_fixtures() -> dict[str, Document]:
    """Every fixture, keyed by its path relative to ``fixtures/``."""
    rng = random.Random(SEED)
    fixtures: dict[str, Document] = {}
    for name, description, document in topology_cases() + generated_topology_cases(rng):
        fixtures[f"topology/{name}.json"] = topology_fixture(name, description, document)
    for name, description, document in preview_cases() + generated_preview_cases(rng):
        fixtures[f"preview/{name}.json"] = preview_fixture(name, description, document)
    return fixtures


def render(document: Document) -> str:
    """The file text of a fixture: 2-space indented JSON, keys as produced, trailing newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate ``fixtures/topology`` and ``fixtures/preview`` (stale files are removed)."""
    parser = argparse.ArgumentParser(prog="python -m conformance.make_fixtures")
    parser.add_argument("--out", type=Path, default=FIXTURES, help="fixtures directory")
    args = parser.parse_args(argv)
    fixtures = build_fixtures()
    for folder in ("topology", "preview"):
        (args.out / folder).mkdir(parents=True, exist_ok=True)
        for stale in (args.out / folder).glob("*.json"):
            if f"{folder}/{stale.name}" not in fixtures:
                stale.unlink()
    for relative, document in sorted(fixtures.items()):
        (args.out / relative).write_text(render(document), encoding="utf-8")
    print(f"wrote {len(fixtures)} fixtures to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
