"""Whole-graph topology analysis: SCCs, κ per SCC, routing, budgets, edge previews."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from .. import telemetry
from ..model import ValidationError
from .adjacency import adjacency_over, normalize_adjacency, normalize_edges
from .kappa import DEFAULT_WORK_BUDGET, compute_kappa
from .reference import reference_kappa
from .scc import tarjan_scc
from .types import Adjacency, DeliberationBudget, EdgeImpact, FaultLine, SccReport

# Floats in the budget are rounded to this many decimals so that 0.7 + 0.05·1
# reads 0.75, not 0.7500000000000001.
BUDGET_DIGITS = 10


def deliberation_budget(kappa: int, *, capped: bool = True) -> DeliberationBudget:
    """Inference parameters for an SCC with the given κ.

    Capped (canonical): max_iterations = min(κ+1, 4), agent_count = min(κ, 3),
    timeout_multiplier = min(1 + 0.5κ, 3.5), confidence_threshold =
    min(0.7 + 0.05κ, 0.95).  Uncapped (reference mode): the same without the
    min() except on agent_count.  Floats are rounded to 10 decimals.  O(1).
    Reference: seed 000 "Deliberation budget" (a heuristic, not a theorem).
    """
    if isinstance(kappa, bool) or not isinstance(kappa, int) or kappa < 0:
        raise ValidationError("kappa", f"must be a non-negative integer; got {kappa!r}")
    iterations = kappa + 1
    timeout = 1.0 + 0.5 * kappa
    confidence = 0.7 + 0.05 * kappa
    if capped:
        iterations = min(iterations, 4)
        timeout = min(timeout, 3.5)
        confidence = min(confidence, 0.95)
    return {
        "max_iterations": iterations,
        "agent_count": min(kappa, 3),
        "timeout_multiplier": round(timeout, BUDGET_DIGITS),
        "confidence_threshold": round(confidence, BUDGET_DIGITS),
    }


def route(result: Mapping[str, Any]) -> str:
    """ "fast" when the analysis found no feedback loop (max_kappa == 0), else "deliberate".

    Input: an :func:`analyze` result (either mode).  O(1).
    """
    return "fast" if result["max_kappa"] == 0 else "deliberate"


def as_adjacency(edges_or_adjacency: object) -> Adjacency:
    """A fresh Adjacency from an adjacency mapping or a list of EdgeLike edges.

    For edge lists the node universe is every endpoint (including endpoints of
    excluded kinds and of self-loops).  Raises ValidationError.  O(V log V + E).
    """
    if isinstance(edges_or_adjacency, Mapping):
        return normalize_adjacency(edges_or_adjacency)
    if isinstance(edges_or_adjacency, (str, bytes)) or not isinstance(edges_or_adjacency, Iterable):
        raise ValidationError("edges", "must be an adjacency mapping or a list of edges")
    endpoints, arcs = normalize_edges(edges_or_adjacency)
    return adjacency_over(endpoints, arcs)


def is_acyclic(adjacency: Mapping[str, Iterable[str]]) -> bool:
    """No directed cycle (self-loops ignored): every SCC is trivial.  Kahn's peeling
    of the nodes that have arcs, O(V + E); cheaper than Tarjan's bookkeeping for
    the small, mostly acyclic windows a retrieval analyses."""
    indegree: dict[str, int] = {}
    for source, targets in adjacency.items():
        for target in targets:
            if target != source:
                indegree[target] = indegree.get(target, 0) + 1
    if not indegree:
        return True
    ready = [node for node, targets in adjacency.items() if targets and node not in indegree]
    left = len(indegree)  # nodes with an incoming arc, each removed when it reaches 0
    while ready:
        source = ready.pop()
        for target in adjacency.get(source, ()):
            if target != source:
                indegree[target] -= 1
                if indegree[target] == 0:
                    left -= 1
                    ready.append(target)
    return left == 0


def _canonical(adjacency: Adjacency, work_budget: int | None) -> dict[str, Any]:
    if is_acyclic(adjacency):  # the SCC search would find no non-trivial component
        return {
            "sccs": [],
            "dag_nodes": _dag_nodes(adjacency, []),
            "routing": "fast",
            "max_kappa": 0,
            "scc_count": 0,
        }
    sccs = sorted(sorted(c) for c in tarjan_scc(adjacency) if len(c) > 1)
    reports: list[SccReport] = []
    for i, nodes in enumerate(sccs):
        kappa = compute_kappa(adjacency, nodes, work_budget=work_budget)
        faults: list[FaultLine] = sorted(
            kappa["fault_line_edges"], key=lambda f: (f["source"], f["target"])
        )
        reports.append(
            {
                "id": f"scc-{i}",
                "nodes": nodes,
                "kappa": kappa["kappa"],
                "approximate": kappa["approximate"],
                "fault_line_edges": faults,
                "routing": "deliberate" if kappa["kappa"] > 0 else "fast",
                "deliberation_budget": deliberation_budget(kappa["kappa"]),
            }
        )
    max_kappa = max((r["kappa"] for r in reports), default=0)
    return {
        "sccs": reports,
        "dag_nodes": _dag_nodes(adjacency, sccs),
        "routing": "fast" if max_kappa == 0 else "deliberate",
        "max_kappa": max_kappa,
        "scc_count": len(reports),
    }


def _reference(adjacency: Adjacency) -> dict[str, Any]:
    reports: list[SccReport] = []
    nontrivial: list[list[str]] = []
    for position, members in enumerate(tarjan_scc(adjacency)):
        if len(members) <= 1:
            continue
        nontrivial.append(members)
        kappa = reference_kappa(adjacency, members)
        reports.append(
            {
                "id": f"scc-{position}",
                "nodes": members,
                "kappa": kappa["kappa"],
                "approximate": kappa["approximate"],
                "fault_line_edges": kappa["fault_line_edges"],
                "routing": "deliberate" if kappa["kappa"] > 0 else "retrieve",
                "deliberation_budget": deliberation_budget(kappa["kappa"], capped=False),
            }
        )
    max_kappa = max((r["kappa"] for r in reports), default=0)
    return {
        "sccs": reports,
        "dag_nodes": _dag_nodes(adjacency, nontrivial),
        "overall_routing": "fast" if max_kappa == 0 else "deliberate",
        "max_kappa": max_kappa,
        "scc_count": len(reports),
    }


def _dag_nodes(adjacency: Adjacency, nontrivial: list[list[str]]) -> list[str]:
    in_cycles = {node for members in nontrivial for node in members}
    return sorted(node for node in adjacency if node not in in_cycles)


def analyze(
    edges_or_adjacency: object,
    *,
    reference: bool = False,
    work_budget: int | None = DEFAULT_WORK_BUDGET,
    emit_telemetry: bool = True,
    trigger: str = "analyze_topology",
    copy: bool = True,
) -> dict[str, Any]:
    """Topology of a graph region: its feedback loops, their κ, and the routing decision.

    Input: an adjacency mapping ``{node: targets}`` or a list of EdgeLike edges
    (universe = endpoints); ``copy=False``: the input is an `Adjacency` the
    caller just built with `build_adjacency` / `as_adjacency` (keys sorted, every
    target a key, no self-loops) and hands over, analysed as is (never mutated)
    instead of being validated and copied again.  Output (canonical, seed 000
    §A.1), keys in this order:
    ``sccs`` (non-trivial SCCs ordered by smallest member, ids scc-0 …, nodes
    sorted, fault lines sorted by (source, target), per-SCC routing and capped
    budget), ``dag_nodes`` (sorted nodes outside non-trivial SCCs), ``routing``,
    ``max_kappa``, ``scc_count``.  ``reference=True`` returns the seed
    reference's shape and orders instead (Tarjan order, ids counting trivial
    SCCs, "retrieve" per-SCC routing, ``overall_routing``, uncapped budgets,
    brute-force κ; `work_budget` is then unused).  Emits the
    ``graphonomous.topology.analyze`` and ``.route`` telemetry events (with
    `trigger`) unless `emit_telemetry` is False.  Complexity: O(V log V + E log E)
    plus κ per non-trivial SCC (see :func:`compute_kappa`).
    """
    started = time.perf_counter()
    adjacency: Adjacency
    if copy:
        adjacency = as_adjacency(edges_or_adjacency)
    else:
        assert isinstance(edges_or_adjacency, dict)
        adjacency = edges_or_adjacency
    result = _reference(adjacency) if reference else _canonical(adjacency, work_budget)
    if emit_telemetry:
        routing = result["overall_routing" if reference else "routing"]
        telemetry.emit(
            telemetry.TOPOLOGY_ANALYZE,
            {
                "duration_ms": (time.perf_counter() - started) * 1000.0,
                "node_count": len(adjacency),
                "edge_count": sum(len(targets) for targets in adjacency.values()),
            },
            {
                "scc_count": result["scc_count"],
                "max_kappa": result["max_kappa"],
                "routing": routing,
            },
        )
        telemetry.emit(
            telemetry.TOPOLOGY_ROUTE,
            {},
            {"decision": routing, "max_kappa": result["max_kappa"], "trigger": trigger},
        )
    return result


def preview_edge_impact(
    adjacency: Mapping[str, Iterable[str]],
    src: str,
    dst: str,
    *,
    reference: bool = False,
    work_budget: int | None = DEFAULT_WORK_BUDGET,
) -> EdgeImpact:
    """What adding the arc src→dst would do to the topology, without doing it.

    Input: the current digraph (never mutated; src and dst join the universe
    if absent) and the proposed arc.  Output: ``creates_new_scc`` (the number
    of non-trivial SCCs rises), ``enlarges_existing_scc`` (canonical: some
    existing non-trivial SCC gains members and the count does not rise;
    reference: max κ rises and no new SCC), ``kappa_before``/``kappa_after``
    (max κ), ``kappa_delta`` and a one-sentence ``description``.  A self-loop
    changes nothing.  No telemetry.  Complexity: two :func:`analyze` runs.
    Reference: seed 000 ``preview_edge_impact/3``.
    """
    for name, value in (("src", src), ("dst", dst)):
        if not isinstance(value, str) or not value:
            raise ValidationError(name, "must be a non-empty node id")
    before_graph = normalize_adjacency(adjacency)
    before_graph.setdefault(src, set())
    before_graph.setdefault(dst, set())
    after_graph = {node: set(targets) for node, targets in before_graph.items()}
    if src != dst:
        after_graph[src].add(dst)
    before = analyze(
        before_graph, reference=reference, work_budget=work_budget, emit_telemetry=False
    )
    after = analyze(after_graph, reference=reference, work_budget=work_budget, emit_telemetry=False)
    creates = after["scc_count"] > before["scc_count"]
    kappa_before, kappa_after = before["max_kappa"], after["max_kappa"]
    if reference:
        enlarges = kappa_after > kappa_before and not creates
    else:
        enlarges = not creates and _some_scc_grew(before["sccs"], after["sccs"])
    return {
        "creates_new_scc": creates,
        "enlarges_existing_scc": enlarges,
        "kappa_before": kappa_before,
        "kappa_after": kappa_after,
        "kappa_delta": kappa_after - kappa_before,
        "description": _describe(src, dst, creates, enlarges, kappa_before, kappa_after),
    }


def _some_scc_grew(before: list[SccReport], after: list[SccReport]) -> bool:
    size_after = {node: len(scc["nodes"]) for scc in after for node in scc["nodes"]}
    return any(size_after.get(scc["nodes"][0], 0) > len(scc["nodes"]) for scc in before)


def _describe(src: str, dst: str, creates: bool, enlarges: bool, before: int, after: int) -> str:
    arc = f"Adding {src}→{dst}"
    change = f"(κ {before}→{after})"
    if creates:
        return f"{arc} creates a new feedback loop {change}."
    if enlarges:
        return f"{arc} enlarges an existing feedback loop {change}."
    if after != before:
        return f"{arc} changes the feedback structure {change}."
    return f"{arc} leaves the feedback structure unchanged {change}."
