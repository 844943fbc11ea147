"""Cheapest paths: Dijkstra with an exact hop limit, and Yen's k shortest loopless paths.

Paths are ranked by the key ``(cost, hops, node ids)``: cheaper first, then
fewer arcs, then the lexicographically smallest id sequence.  Putting hops
before the ids makes the order well defined even with zero-cost cycles: a
walk that repeats a node always loses to the walk with the cycle cut out
(cost not higher, strictly fewer hops), so the best walk is a simple path.
The cost of a path is the float sum of its arc costs taken from the source
forward, so equal paths always get bit-identical costs.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Mapping

from graphonomous.model import ValidationError

CostGraph = Mapping[str, Mapping[str, float]]
"""``{node: {successor: cost >= 0}}``; every node is a key."""

_Label = tuple[float, int, tuple[str, ...]]


def dijkstra_path(
    graph_costs: CostGraph, source: str, target: str, *, max_hops: int | None = None
) -> tuple[float, list[str]] | None:
    """The cheapest path from `source` to `target`, using at most `max_hops` arcs.

    Parameters
    ----------
    graph_costs : ``{node: {successor: cost}}``, costs finite and >= 0
        (zero allowed); every successor must be a key.  Costs are read (and
        checked) only on arcs the search relaxes.
    source, target : node ids (keys of `graph_costs`).
    max_hops : None for no limit, else an int >= 0.  The limit is part of
        the search, not a filter: the answer is the best path among those
        with at most `max_hops` arcs even if a cheaper, longer one exists.

    Returns
    -------
    ``(cost, [source, ..., target])`` minimising ``(cost, hops, ids)``, or
    None when no path within the limit exists.  ``source == target`` gives
    ``(0.0, [source])``.

    Raises
    ------
    ValidationError : unknown endpoints, a bad cost or successor, bad max_hops.

    Complexity
    ----------
    O((E + V) log V) without a limit; with a limit H a node is settled at
    most H + 1 times (each time with strictly fewer hops), O(H (E + V) log(HV)).
    Heap entries carry their path, adding O(path length) per push.

    References
    ----------
    E. W. Dijkstra, "A note on two problems in connexion with graphs",
    Numerische Mathematik 1 (1959).
    """
    _check_endpoints(graph_costs, source, target)
    _check_hops(max_hops)
    found = _best_path(graph_costs, (source,), 0.0, target, max_hops, frozenset(), frozenset())
    if found is None:
        return None
    cost, _, path = found
    return cost, list(path)


def k_shortest_paths(
    graph_costs: CostGraph, source: str, target: str, k: int, *, max_hops: int | None = None
) -> list[tuple[float, list[str]]]:
    """The `k` best loopless paths from `source` to `target` (Yen's algorithm).

    Parameters
    ----------
    graph_costs : as for `dijkstra_path`.
    source, target : node ids.
    k : how many paths (int >= 0).
    max_hops : None, or the largest number of arcs a path may have.

    Returns
    -------
    Up to `k` pairs ``(cost, path)`` in increasing ``(cost, hops, ids)``
    order; fewer when fewer simple paths exist.  The first one is
    `dijkstra_path`'s answer.

    Raises
    ------
    ValidationError : as for `dijkstra_path`, or a bad `k`.

    Complexity
    ----------
    O(k L) runs of the (hop-limited) Dijkstra search, L the longest path
    found; each removes the root's nodes and the arcs used by earlier paths
    that share the root.

    References
    ----------
    J. Y. Yen, "Finding the k shortest loopless paths in a network",
    Management Science 17(11), 712-716 (1971).
    """
    _check_endpoints(graph_costs, source, target)
    _check_hops(max_hops)
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValidationError("k", f"must be an integer >= 0; got {k!r}")
    first = _best_path(graph_costs, (source,), 0.0, target, max_hops, frozenset(), frozenset())
    if k == 0 or first is None:
        return []
    accepted: list[_Label] = [first]
    candidates: list[_Label] = []
    seen = {first[2]}
    while len(accepted) < k:
        previous = accepted[-1][2]
        root_cost = 0.0
        for spur_at in range(len(previous) - 1):
            root = previous[: spur_at + 1]
            if spur_at:
                root_cost += graph_costs[previous[spur_at - 1]][previous[spur_at]]
            remaining = None if max_hops is None else max_hops - spur_at
            # Arcs that would repeat an accepted path with this root, and the
            # root's own nodes (the path must stay loopless).
            banned_arcs = {
                (path[spur_at], path[spur_at + 1])
                for _, _, path in accepted
                if len(path) > spur_at + 1 and path[: spur_at + 1] == root
            }
            found = _best_path(
                graph_costs, root, root_cost, target, remaining, frozenset(root[:-1]), banned_arcs
            )
            if found is not None and found[2] not in seen:
                seen.add(found[2])
                heapq.heappush(candidates, found)
        if not candidates:
            break
        accepted.append(heapq.heappop(candidates))
    return [(cost, list(path)) for cost, _, path in accepted]


def _check_endpoints(graph_costs: CostGraph, source: str, target: str) -> None:
    for name, node in (("source", source), ("target", target)):
        if node not in graph_costs:
            raise ValidationError(name, f"{node!r} is not a node of the graph")


def _check_hops(max_hops: int | None) -> None:
    if max_hops is not None and (
        isinstance(max_hops, bool) or not isinstance(max_hops, int) or max_hops < 0
    ):
        raise ValidationError("max_hops", f"must be None or an integer >= 0; got {max_hops!r}")


def _best_path(
    graph_costs: CostGraph,
    root: tuple[str, ...],
    root_cost: float,
    target: str,
    hop_limit: int | None,
    banned_nodes: Collection[str],
    banned_arcs: Collection[tuple[str, str]],
) -> _Label | None:
    """Best ``(cost, hops, path)`` extending `root` to `target`.

    `hop_limit` bounds the hops added after the root.  The heap key is the
    label itself, so ties in cost and hops pop the smallest path first.
    Without a limit every node is settled once; with one, a node is settled
    again only by a label with strictly fewer hops (a label that is not
    cheaper and not shorter than a settled one can never do better).
    """
    heap: list[_Label] = [(root_cost, 0, root)]
    settled: dict[str, int] = {}  # node -> fewest hops it was settled with
    while heap:
        cost, hops, path = heapq.heappop(heap)
        node = path[-1]
        fewest = settled.get(node)
        if fewest is not None and (hop_limit is None or hops >= fewest):
            continue
        settled[node] = hops
        if node == target:
            return cost, len(path) - 1, path
        if hop_limit is not None and hops >= hop_limit:
            continue
        successors = graph_costs[node]
        for nxt, arc_cost in successors.items():
            if nxt in banned_nodes or (banned_arcs and (node, nxt) in banned_arcs):
                continue
            if not 0.0 <= arc_cost < math.inf:
                raise ValidationError(
                    "graph_costs", f"cost of {node!r} -> {nxt!r} must be finite and >= 0"
                )
            if nxt not in graph_costs:
                raise ValidationError("graph_costs", f"{nxt!r} is not a node of the graph")
            seen = settled.get(nxt)
            if seen is None or (hop_limit is not None and hops + 1 < seen):
                heapq.heappush(heap, (cost + arc_cost, hops + 1, (*path, nxt)))
    return None
