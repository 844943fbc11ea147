"""Stage 6 of `retrieve_context`: the region the answer rests on, and what its edges say.

Rules of this file: the region is chosen by `loop_region.answer_topology` (the one
home of a retrieval's κ) from the results and their seed-004 window
(`topology_window`: each result and its `topology_neighbors_per_result` strongest
visible neighbours).  The stored edges of that region give the causal context
(`causal_context`: results that are causal ancestors of another) and, at effort
>= 8, the contradiction flags (`contradiction_flags`).  Pure functions over edges
except `topology_stage`, which reads through the run's `GraphReader`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Edge, Node
from .expansion import top_neighbors
from .graph_view import CAUSAL_RELATIONSHIPS
from .loop_region import LoopRegion, answer_topology
from .relations import relation_index
from .run import Entry, Run


@dataclass(frozen=True)
class AnswerRegion:
    """What stage 6 found in the region the results rest on."""

    topology: dict[str, Any]  # canonical §A.1 topology (`loop_region.answer_topology`)
    window: list[str]  # its sorted universe
    loops: LoopRegion  # the loops and whether a bound cut them (``stats.topology_region``)
    causal: list[str]  # results that are causal ancestors of another (`causal_context`)
    flags: dict[str, list[str]]  # result -> sorted flags (`contradiction_flags`)
    nodes: dict[str, Node]  # the results' rows


def topology_stage(run: Run, chosen: Sequence[Entry]) -> AnswerRegion:
    """Stage 6 (every effort): the topology of the answer, its causal context and flags.

    Input: the chosen entries, ranked.  Output: an `AnswerRegion`; mechanisms
    ``topology`` (and ``contradiction_check`` when the plan has it), the
    ``topology`` timing.  Rule: κ on the results, their window and their loops
    (`loop_region.answer_topology`); causal context and, at effort >= 8,
    contradiction flags read the stored edges of that region.
    """
    result_ids = [entry.node_id for entry in chosen]
    with run.timed("topology"):
        ranked = [(entry.node_id, entry.score) for entry in chosen]
        topology, universe, window_edges, region = answer_topology(
            run.reader,
            ranked,
            lambda ids: topology_window(run, list(ids)),
            relation_index(run.graph).relations_of,
        )
        run.mechanisms.append("topology")
    rows = {node_id: run.reader.node(node_id) for node_id in result_ids}
    nodes = {node_id: node for node_id, node in rows.items() if node is not None}
    causal = causal_context(
        result_ids,
        window_edges,
        {node_id: node.causal_parent_ids for node_id, node in nodes.items()},
    )
    flags: dict[str, list[str]] = {node_id: [] for node_id in result_ids}
    if run.plan.contradiction_check:
        superseded = [n for n, node in nodes.items() if node.superseded_by is not None]
        flags = contradiction_flags(result_ids, window_edges, superseded)
        run.mechanisms.append("contradiction_check")
    return AnswerRegion(topology, universe, region, causal, flags, nodes)


def topology_window(run: Run, result_ids: list[str]) -> list[str]:
    """Nodes plus each one's strongest visible neighbours (seed 004's topology window),
    sorted; `loop_region.answer_topology` asks it for the results and their anchors."""
    run.reader.load_links(result_ids)
    universe = set(result_ids)
    per_result = run.settings.topology_neighbors_per_result
    for node_id in result_ids:
        universe.update(
            link.neighbor for link in top_neighbors(run.reader.links(node_id), per_result)
        )
    return sorted(universe)


def causal_context(
    result_ids: Sequence[str], edges: Iterable[Edge], parent_ids: Mapping[str, Sequence[str]]
) -> list[str]:
    """Results that are causal ancestors of another result.

    Input: result ids (in rank order), the edges of the topology window, and
    each result's ``causal_parent_ids``.  A node is a causal parent of another
    through an edge of a kind in `CAUSAL_RELATIONSHIPS` (source causes target)
    or by being listed in its ``causal_parent_ids``; ancestors follow such
    links transitively through any window node.  Output: those results, in
    rank order.  Complexity: O(R × (V + E)) over the window.
    """
    parents: dict[str, set[str]] = {}
    for edge in edges:
        if edge.relationship in CAUSAL_RELATIONSHIPS and edge.source_id != edge.target_id:
            parents.setdefault(edge.target_id, set()).add(edge.source_id)
    for child, listed in parent_ids.items():
        parents.setdefault(child, set()).update(p for p in listed if p != child)
    results = set(result_ids)
    ancestors_of_results: set[str] = set()
    for start in result_ids:
        stack, seen = [start], {start}
        while stack:
            for parent in parents.get(stack.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        ancestors_of_results.update(node for node in seen - {start} if node in results)
    return [node_id for node_id in result_ids if node_id in ancestors_of_results]


def contradiction_flags(
    result_ids: Sequence[str], edges: Iterable[Edge], superseded: Iterable[str]
) -> dict[str, list[str]]:
    """Flags per result: "contradicted" (a contradicts edge to another result), "superseded".

    A result is superseded when its row has ``superseded_by`` (given in
    `superseded`) or a window edge says so (``X supersedes r`` or ``r
    superseded_by X``).  Output: ``{result: sorted flags}``.  O(R + E).
    """
    results = set(result_ids)
    flags: dict[str, set[str]] = {node_id: set() for node_id in result_ids}
    for node_id in superseded:
        if node_id in flags:
            flags[node_id].add("superseded")
    for edge in edges:
        if edge.relationship == "contradicts" and {edge.source_id, edge.target_id} <= results:
            flags[edge.source_id].add("contradicted")
            flags[edge.target_id].add("contradicted")
        elif edge.relationship == "supersedes" and edge.target_id in results:
            flags[edge.target_id].add("superseded")
        elif edge.relationship == "superseded_by" and edge.source_id in results:
            flags[edge.source_id].add("superseded")
    return {node_id: sorted(found) for node_id, found in flags.items()}
