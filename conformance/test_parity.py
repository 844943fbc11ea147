"""Parity of the product engine (canonical and reference mode) with the reference."""

from __future__ import annotations

import random
from typing import Any

import pytest

from conformance import parity
from conformance.reference import analyze_adjacency_reference, build_adjacency_reference
from graphonomous import topology

SMALL_BATCHES = [
    *(parity.Batch("all", n, 0, 2 ** (n * (n - 1))) for n in (1, 2, 3)),
    *(parity.Batch("all", 4, lo, lo + 1024) for lo in range(0, 4096, 1024)),
]


@pytest.mark.parametrize("batch", SMALL_BATCHES, ids=str)
def test_every_digraph_up_to_four_nodes(batch: parity.Batch) -> None:
    outcome = parity.run_batch(batch)
    assert outcome.problems == []
    assert outcome.counts["graphs"] == batch.stop - batch.start


@pytest.mark.parametrize("seed", range(4))
def test_random_five_node_digraphs(seed: int) -> None:
    outcome = parity.run_batch(parity.Batch("random", 5, 0, 500, seed))
    assert outcome.problems == []
    assert outcome.counts["SCCs"] > 300


@pytest.mark.parametrize("seed", range(3))
def test_random_digraphs_up_to_ten_nodes(seed: int) -> None:
    outcome = parity.run_batch(parity.Batch("random", 0, 0, 100, 1000 + seed))
    assert outcome.problems == []


def test_sccs_beyond_the_enumeration_limit() -> None:
    outcome = parity.run_batch(parity.Batch("large", 40, 0, 4, 2000))
    assert outcome.problems == [] and outcome.counts["SCCs"] == 4


@pytest.mark.parametrize(
    "batch",
    [parity.Batch("preview", 2, 0, 4), parity.Batch("preview", 3, 0, 64)]
    + [parity.Batch("preview", 4, lo, lo + 128) for lo in (0, 1024, 2560, 3968)],
    ids=str,
)
def test_previews(batch: parity.Batch) -> None:
    outcome = parity.run_batch(batch)
    assert outcome.problems == []
    assert outcome.counts["previews"] == (batch.stop - batch.start) * batch.n**2


def test_large_scc_reference_mode_is_approximate_but_canonical_is_exact() -> None:
    nodes = [f"v{i:02d}" for i in range(25)]
    adjacency = build_adjacency_reference(
        nodes, [(nodes[i], nodes[(i + s) % 25]) for i in range(25) for s in (1, 2)]
    )
    mirrored = topology.analyze(adjacency, reference=True, emit_telemetry=False)
    assert mirrored == analyze_adjacency_reference(adjacency)
    assert mirrored["sccs"][0]["kappa"] == 25 and mirrored["sccs"][0]["approximate"]
    canonical = topology.analyze(adjacency, emit_telemetry=False)
    assert canonical["sccs"][0]["kappa"] == 2 and not canonical["sccs"][0]["approximate"]
    assert parity.canonical_problems(canonical, adjacency, mirrored) == []


# --------------------------------------------------------------------------
# The checkers themselves reject wrong answers
# --------------------------------------------------------------------------

# Bidirected path a⇄b⇄c plus c→a: κ = 1 ({a} has one way out: a→b).
PATHLIKE = build_adjacency_reference(
    [], [("a", "b"), ("b", "a"), ("b", "c"), ("c", "b"), ("c", "a")]
)


def _edges(*arcs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"source": s, "target": t} for s, t in arcs]


def test_fault_line_checker_accepts_a_minimum_cut() -> None:
    assert parity.fault_line_problems(PATHLIKE, "abc", 1, _edges(("a", "b"))) == []
    partition = [["a"], ["b", "c"]]
    assert parity.fault_line_problems(PATHLIKE, "abc", 1, _edges(("a", "b")), partition) == []


@pytest.mark.parametrize(
    ("kappa", "arcs", "partition"),
    [
        (1, [("b", "a")], None),  # {b}'s other way out (b→c) is missing: still strongly connected
        (2, [("b", "a"), ("b", "a")], None),  # duplicated arc
        (1, [("a", "c")], None),  # not an arc
        (2, [("a", "b"), ("c", "b")], None),  # breaks strong connectivity, but is not one cut
        (1, [("a", "b")], [["b", "c"], ["a"]]),  # partition in the wrong direction
        (0, [("a", "b")], None),  # size differs from κ
    ],
)
def test_fault_line_checker_rejects(
    kappa: int, arcs: list[tuple[str, str]], partition: list[list[str]] | None
) -> None:
    assert parity.fault_line_problems(PATHLIKE, "abc", kappa, _edges(*arcs), partition) != []


def test_canonical_checker_rejects_reordering_and_uncapped_budgets() -> None:
    adjacency = build_adjacency_reference(
        [], [("b", "c"), ("c", "b"), ("x", "a"), ("a", "x"), *((s, t) for s in "pq" for t in "pq")]
    )
    # p→q and q→p are real arcs; p⇄q is a third SCC.
    reference = analyze_adjacency_reference(adjacency)
    good = topology.analyze(adjacency, emit_telemetry=False)
    assert parity.canonical_problems(good, adjacency, reference) == []
    swapped: dict[str, Any] = dict(good, sccs=good["sccs"][::-1])
    assert parity.canonical_problems(swapped, adjacency, reference) != []
    uncapped = topology.analyze(adjacency, reference=True, emit_telemetry=False)
    assert parity.canonical_problems(uncapped, adjacency, reference) != []


def test_parity_catches_a_wrong_canonical_kappa(monkeypatch: pytest.MonkeyPatch) -> None:
    real = topology.compute_kappa

    def off_by_one(*args: Any, **kwargs: Any) -> Any:
        result: dict[str, Any] = dict(real(*args, **kwargs))
        if not kwargs.get("reference"):
            result["kappa"] += 1
        return result

    monkeypatch.setattr(topology, "compute_kappa", off_by_one)
    rng = random.Random(3)
    adjacency = parity.strongly_connected_digraph(rng, 5, 0.3)
    assert parity.scc_problems(adjacency, sorted(adjacency)) != []
