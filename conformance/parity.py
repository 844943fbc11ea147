"""Parity between the product engine and the independent reference.

Checks, per graph:

* every non-trivial SCC: canonical κ == reference κ; the canonical fault lines
  are a genuine minimum cut; ``compute_kappa(..., reference=True)`` reproduces
  the reference's κ, fault lines and partition;
* ``analyze(adj, reference=True)`` is *identical* (``==``, order included) to
  :func:`conformance.reference.analyze_adjacency_reference`, and the canonical
  ``analyze(adj)`` satisfies every canonical rule (sorted nodes, SCC order, ids,
  routing, capped budget, valid minimum cuts) and agrees with the reference;
* previews: reference mode identical to the reference, canonical mode equal on
  every field but the free-text description.

Every check returns a list of human-readable problems (empty = parity).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.reference import (
    Adjacency,
    analyze_adjacency_reference,
    arc_connectivity_reference,
    compute_kappa_reference,
    deliberation_budget_reference,
    preview_reference,
)

# Labels whose sorted order differs from their index order, so that any
# implementation confusing "first node" with "smallest id" shows up.
LABELS = ("n2", "n10", "a", "B", "n1", "zz", "m", "C", "n0", "b", "x", "k")
CANONICAL_KEYS = {"sccs", "dag_nodes", "routing", "max_kappa", "scc_count"}
SCC_KEYS = {
    "id",
    "nodes",
    "kappa",
    "approximate",
    "fault_line_edges",
    "routing",
    "deliberation_budget",
}


def _arcs(adjacency: Mapping[str, Iterable[str]]) -> list[tuple[str, str]]:
    return sorted((s, t) for s, targets in adjacency.items() for t in targets)


def _reach(adjacency: Mapping[str, Iterable[str]], start: str) -> set[str]:
    seen = {start}
    frontier = [start]
    while frontier:
        for w in adjacency.get(frontier.pop(), ()):
            if w not in seen:
                seen.add(w)
                frontier.append(w)
    return seen


# --------------------------------------------------------------------------
# Minimum cuts
# --------------------------------------------------------------------------


def fault_line_problems(
    adjacency: Mapping[str, Iterable[str]],
    members: Iterable[str],
    kappa: int,
    fault_lines: Sequence[Mapping[str, Any]],
    partition: Sequence[Sequence[str]] | None = None,
) -> list[str]:
    """Is ``fault_lines`` a minimum cut of size κ of the SCC ``members``?

    Valid means: exactly κ distinct arcs of the SCC; removing them breaks
    strong connectivity; and they are *all* the arcs leaving one side of some
    bipartition.  (Removing them leaves a node whose reach R is not the whole
    SCC; every arc leaving R is a fault line, and since no cut is smaller than
    κ, the arcs leaving R are exactly the fault lines.)  When ``partition`` is
    given, the fault lines must be exactly the arcs from its first to its
    second part.
    """
    scc = set(members)
    cut = {(e["source"], e["target"]) for e in fault_lines}
    problems = []
    if len(cut) != len(fault_lines) or len(cut) != kappa:
        problems.append(f"fault lines {list(fault_lines)} are not {kappa} distinct arcs")
    if any(s not in scc or t not in scc or t not in adjacency.get(s, ()) for s, t in cut):
        problems.append(f"fault lines {list(fault_lines)} include a non-arc of the SCC")
    if problems or kappa == 0:
        return problems
    remaining = {
        v: {w for w in adjacency.get(v, ()) if w in scc and (v, w) not in cut} for v in scc
    }
    side = next((r for v in sorted(scc) if (r := _reach(remaining, v)) != scc), None)
    if side is None:
        return [f"removing fault lines {sorted(cut)} keeps the SCC strongly connected"]
    leaving = {(v, w) for v in side for w in adjacency.get(v, ()) if w in scc and w not in side}
    if leaving != cut:
        problems.append(f"fault lines {sorted(cut)} are not all arcs leaving {sorted(side)}")
    if partition is not None:
        first, second = set(partition[0]), set(partition[1])
        crossing = {(v, w) for v in first for w in adjacency.get(v, ()) if w in second}
        if first & second or first | second != scc or not first or not second:
            problems.append(f"partition {partition} is not a bipartition of the SCC")
        elif crossing != cut:
            problems.append(f"fault lines {sorted(cut)} are not the arcs {partition[0]}→…")
    return problems


def scc_problems(adjacency: Adjacency, members: Sequence[str]) -> list[str]:
    """Canonical and reference-mode ``compute_kappa`` against the reference, for one SCC."""
    from graphonomous import topology

    where = f"SCC {list(members)} of {_arcs(adjacency)}"
    expected = compute_kappa_reference(adjacency, members)
    canonical = topology.compute_kappa(adjacency, members)
    problems = []
    # Beyond the enumeration limit the reference is approximate; a plain max-flow
    # reference supplies the exact value instead.
    exact = (
        expected["kappa"]
        if not expected["approximate"]
        else arc_connectivity_reference(adjacency, members)
    )
    if canonical["approximate"] or canonical["kappa"] != exact:
        problems.append(f"canonical κ {canonical['kappa']} != reference {exact}")
    partition = canonical["min_cut_partition"]
    if partition is not None and any(list(side) != sorted(side) for side in partition):
        problems.append(f"canonical partition {partition} is not sorted")
    problems += fault_line_problems(
        adjacency, members, canonical["kappa"], canonical["fault_line_edges"], partition
    )
    mirrored = topology.compute_kappa(adjacency, members, reference=True)
    for key in ("kappa", "approximate", "fault_line_edges"):
        if mirrored[key] != expected[key]:
            problems.append(f"reference-mode {key} {mirrored[key]} != {expected[key]}")
    if _sides(mirrored["min_cut_partition"]) != _sides(expected["min_cut_partition"]):
        problems.append(
            f"reference-mode partition {mirrored['min_cut_partition']}"
            f" != {expected['min_cut_partition']}"
        )
    return [f"{where}: {p}" for p in problems]


def _sides(partition: Sequence[Sequence[str]] | None) -> set[frozenset[str]] | None:
    return None if partition is None else {frozenset(side) for side in partition}


# --------------------------------------------------------------------------
# Whole-graph analysis
# --------------------------------------------------------------------------


def canonical_problems(
    output: Mapping[str, Any],
    adjacency: Mapping[str, Iterable[str]],
    reference: Mapping[str, Any],
) -> list[str]:
    """Does a canonical ``analyze`` output obey seed 000 §A.1 and agree with the reference?

    Compared with the reference-mode output: same SCC node sets, same κ
    wherever the reference is exact, same dag_nodes and scc_count.  Canonical
    rules: nodes sorted, SCCs ordered by smallest node id, ids scc-0… in that
    order, exact κ, fault lines sorted and a valid minimum cut, routing
    deliberate/fast, capped budget.
    """
    problems = []
    if set(output) != CANONICAL_KEYS:
        problems.append(f"top-level keys {sorted(output)}")
        return problems
    expected_sccs = sorted(reference["sccs"], key=lambda scc: min(scc["nodes"]))
    if [sorted(s["nodes"]) for s in expected_sccs] != [s["nodes"] for s in output["sccs"]]:
        problems.append(f"SCC node lists {[s['nodes'] for s in output['sccs']]}")
        return problems
    for position, (scc, ref) in enumerate(zip(output["sccs"], expected_sccs, strict=True)):
        kappa = scc["kappa"]
        if set(scc) != SCC_KEYS:
            problems.append(f"SCC keys {sorted(scc)}")
            continue
        if scc["id"] != f"scc-{position}" or scc["approximate"] is not False:
            problems.append(f"SCC {scc['id']}: id/approximate {scc['approximate']}")
        if not ref["approximate"] and kappa != ref["kappa"]:
            problems.append(f"SCC {scc['id']}: κ {kappa} != reference {ref['kappa']}")
        if scc["routing"] != ("deliberate" if kappa > 0 else "fast"):
            problems.append(f"SCC {scc['id']}: routing {scc['routing']}")
        if scc["deliberation_budget"] != deliberation_budget_reference(kappa, capped=True):
            problems.append(f"SCC {scc['id']}: budget {scc['deliberation_budget']}")
        fault = scc["fault_line_edges"]
        if fault != sorted(fault, key=lambda e: (e["source"], e["target"])):
            problems.append(f"SCC {scc['id']}: fault lines not sorted: {fault}")
        problems += fault_line_problems(adjacency, scc["nodes"], kappa, fault)
    max_kappa = max((scc["kappa"] for scc in output["sccs"]), default=0)
    if output["max_kappa"] != max_kappa:
        problems.append(f"max_kappa {output['max_kappa']} != {max_kappa}")
    if output["routing"] != ("deliberate" if max_kappa > 0 else "fast"):
        problems.append(f"routing {output['routing']}")
    if output["dag_nodes"] != reference["dag_nodes"]:
        problems.append(f"dag_nodes {output['dag_nodes']} != {reference['dag_nodes']}")
    if output["scc_count"] != len(output["sccs"]) or output["scc_count"] != reference["scc_count"]:
        problems.append(f"scc_count {output['scc_count']}")
    return problems


def analyze_problems(adjacency: Adjacency) -> list[str]:
    """Both ``analyze`` modes of the product against the reference, for one graph."""
    from graphonomous import topology

    expected = analyze_adjacency_reference(adjacency)
    problems = []
    mirrored = topology.analyze(adjacency, reference=True, emit_telemetry=False)
    if mirrored != expected:
        problems.append(f"reference-mode analyze {mirrored} != reference {expected}")
    canonical = topology.analyze(adjacency, emit_telemetry=False)
    problems += canonical_problems(canonical, adjacency, expected)
    return [f"graph {_arcs(adjacency)} over {sorted(adjacency)}: {p}" for p in problems]


def _grew(before: Mapping[str, Iterable[str]], after: Mapping[str, Iterable[str]]) -> bool:
    """Does some non-trivial SCC of ``before`` sit inside a larger SCC of ``after``?"""
    from conformance.reference import tarjan_reference

    old = [set(c) for c in tarjan_reference(before) if len(c) > 1]
    new = [set(c) for c in tarjan_reference(after) if len(c) > 1]
    return any(o < n for o in old for n in new)


def preview_problems(adjacency: Adjacency, source: str, target: str) -> list[str]:
    """Both ``preview_edge_impact`` modes against the reference, for one proposed arc.

    Reference mode must equal :func:`preview_reference` (description aside).
    Canonical mode must agree on every κ field and on ``creates_new_scc``;
    its ``enlarges_existing_scc`` means "an existing non-trivial SCC gains
    members without the SCC count rising", checked here independently.
    """
    from graphonomous import topology

    expected = preview_reference(adjacency, source, target)
    after = {node: set(targets) for node, targets in adjacency.items()}
    after.setdefault(target, set())
    if source != target:
        after.setdefault(source, set()).add(target)
    canonical_expected = dict(
        expected,
        enlarges_existing_scc=not expected["creates_new_scc"] and _grew(adjacency, after),
    )
    problems = []
    for mode, wanted in ((True, expected), (False, canonical_expected)):
        got = dict(topology.preview_edge_impact(adjacency, source, target, reference=mode))
        if not isinstance(got.pop("description", None), str):
            problems.append(f"reference={mode}: description missing")
        if got != wanted:
            problems.append(f"reference={mode}: {got} != expected {wanted}")
    return [f"preview {source}→{target} on {_arcs(adjacency)}: {p}" for p in problems]


def graph_problems(adjacency: Adjacency) -> tuple[int, list[str]]:
    """All SCC and analysis checks for one graph; returns (SCCs checked, problems)."""
    from conformance.reference import tarjan_reference

    problems = analyze_problems(adjacency)
    sccs = [members for members in tarjan_reference(adjacency) if len(members) > 1]
    for members in sccs:
        problems += scc_problems(adjacency, members)
    return len(sccs), problems


# --------------------------------------------------------------------------
# Graph sources
# --------------------------------------------------------------------------


def digraph(number: int, labels: Sequence[str]) -> Adjacency:
    """Digraph ``number`` on the given labels (arc bit k ↔ k-th off-diagonal pair)."""
    n = len(labels)
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    adjacency: Adjacency = {label: set() for label in labels}
    for k, (i, j) in enumerate(pairs):
        if number >> k & 1:
            adjacency[labels[i]].add(labels[j])
    return adjacency


def random_digraph(rng: random.Random, n: int) -> Adjacency:
    """A random digraph on n of :data:`LABELS` (or ``v0…`` beyond), arc density 0.15–0.75."""
    pool = list(LABELS) if n <= len(LABELS) else [f"v{i}" for i in range(n)]
    labels = rng.sample(pool, n)
    density = rng.uniform(0.15, 0.75)
    adjacency: Adjacency = {label: set() for label in labels}
    for s in labels:
        for t in labels:
            if s != t and rng.random() < density:
                adjacency[s].add(t)
    return adjacency


def strongly_connected_digraph(rng: random.Random, n: int, extra: float) -> Adjacency:
    """A random strongly connected digraph: a shuffled Hamiltonian cycle plus random chords."""
    labels = [f"v{i}" for i in range(n)]
    order = rng.sample(labels, n)
    adjacency: Adjacency = {label: set() for label in labels}
    for i, s in enumerate(order):
        adjacency[s].add(order[(i + 1) % n])
    for s in labels:
        for t in labels:
            if s != t and rng.random() < extra:
                adjacency[s].add(t)
    return adjacency


# --------------------------------------------------------------------------
# Batches (units of work for the runner and the tests)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    """A unit of parity work.

    kind ``all``: digraphs ``start…stop−1`` on n nodes; ``random``: ``stop − start``
    seeded random digraphs on n nodes (n = 0 ⇒ 6…10); ``large``: seeded random
    strongly connected digraphs on 21…n nodes (beyond the enumeration limit);
    ``preview``: every proposed arc (self-loops included) on digraphs
    ``start…stop−1`` on n nodes.
    """

    kind: str
    n: int
    start: int = 0
    stop: int = 0
    seed: int = 0


@dataclass
class Outcome:
    """Counts of checks performed and the problems found by one batch."""

    counts: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def make_batches(*, quick: bool) -> list[Batch]:
    """The runner's parity workload (``quick`` keeps it to a few seconds)."""
    batches = [Batch("all", n, 0, 2 ** (n * (n - 1))) for n in (1, 2, 3)]
    batches += [Batch("all", 4, lo, lo + 512) for lo in range(0, 4096, 512)]
    random_batches = 4 if quick else 40
    batches += [Batch("random", 5, 0, 500, seed) for seed in range(random_batches)]
    batches += [Batch("random", 0, 0, 100, 1000 + seed) for seed in range(random_batches)]
    batches += [Batch("large", 40, 0, 3 if quick else 12, 2000 + seed) for seed in range(2)]
    batches += [Batch("preview", n, 0, 2 ** (n * (n - 1))) for n in (2, 3)]
    if not quick:
        batches += [Batch("preview", 4, lo, lo + 256) for lo in range(0, 4096, 256)]
    return batches


def run_batch(batch: Batch) -> Outcome:
    """Run one parity batch."""
    outcome = Outcome()
    if batch.kind == "preview":
        labels = LABELS[: batch.n]
        for number in range(batch.start, batch.stop):
            adjacency = digraph(number, labels)
            for source in labels:
                for target in labels:
                    outcome.problems += preview_problems(adjacency, source, target)
                    outcome.counts["previews"] += 1
        return outcome
    if batch.kind == "all":
        graphs: Iterable[Adjacency] = (
            digraph(number, LABELS[: batch.n]) for number in range(batch.start, batch.stop)
        )
    elif batch.kind == "large":
        rng = random.Random(batch.seed)
        graphs = (
            strongly_connected_digraph(rng, rng.randint(21, batch.n), rng.uniform(0.02, 0.5))
            for _ in range(batch.start, batch.stop)
        )
    else:
        rng = random.Random(batch.seed)
        graphs = (
            random_digraph(rng, batch.n or rng.randint(6, 10))
            for _ in range(batch.start, batch.stop)
        )
    for adjacency in graphs:
        scc_count, problems = graph_problems(adjacency)
        outcome.counts["graphs"] += 1
        outcome.counts["SCCs"] += scc_count
        outcome.problems += problems
    return outcome
