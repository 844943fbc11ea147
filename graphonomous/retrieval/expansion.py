"""Stage 3 of `retrieve_context`: ego-neighbourhood expansion from the seeds.

Rules of this file: breadth-first from the seeds for `expansion_hops` hops; per
node its `neighbors_per_node` strongest distinct neighbours (`top_neighbors`, also
the topology window's choice); a neighbour scores parent score × edge strength ×
`hop_decay` (so `hop_decay`^h after h hops) and the best path wins.
"""

from __future__ import annotations

from collections.abc import Sequence

from .graph_view import Link
from .run import Run


def top_neighbors(links: Sequence[Link], count: int) -> list[Link]:
    """The `count` strongest distinct neighbours (links arrive strongest first)."""
    chosen: list[Link] = []
    seen: set[str] = set()
    for link in links:
        if link.neighbor in seen:
            continue
        seen.add(link.neighbor)
        chosen.append(link)
        if len(chosen) == count:
            break
    return chosen


def expand(run: Run, hops: int, neighbors_per_node: int) -> None:
    """Stage 3: BFS from the seeds, `neighbors_per_node` strongest neighbours per node.

    Hop h propagates the scores the frontier had when the hop began (so a
    node's `hops` is the length of the path that gave its score); the next
    frontier is every node whose score this hop improved.
    """
    decay = run.settings.hop_decay
    frontier = list(run.seeds)
    added = 0
    for hop in range(1, hops + 1):
        if not frontier or neighbors_per_node == 0:
            break
        run.reader.load_links(frontier)
        start = {parent: run.entries[parent].score for parent in frontier}
        improved: dict[str, None] = {}
        for parent in frontier:
            for link in top_neighbors(run.reader.links(parent), neighbors_per_node):
                neighbor = link.neighbor
                is_new = neighbor not in run.entries
                if run.offer(neighbor, start[parent] * link.strength * decay, hop, parent):
                    added += is_new
                    improved[neighbor] = None
        frontier = sorted(improved, key=lambda node_id: (-run.entries[node_id].score, node_id))
    run.stats["expanded"] = added


def expansion_stage(run: Run, neighbors_per_node: int) -> None:
    """Stage 3 (effort >= 1): the seeds' ego neighbourhoods join the entries.

    Input: ``run.seeds`` and ``run.plan.hops``.  Output: neighbours offered to
    ``run.entries`` (source "neighbor", hops, via), ``stats.expanded``.  Rule:
    `expand`.
    """
    run.stats["expanded"] = 0
    if run.plan.hops > 0 and run.seeds:
        expand(run, run.plan.hops, neighbors_per_node)
        run.mechanisms.append("expansion")
