"""Directed acyclic graphs: a deterministic topological order and critical (longest-path) depths.

Inputs are ``{node: iterable of successors}``; a successor need not be a key.
Ties are broken by node id (Unicode code point order), so the output does not
depend on how the caller built its mappings.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping

from graphonomous.model import ValidationError

Successors = Mapping[str, Iterable[str]]


def _arcs(graph: Successors) -> tuple[list[str], dict[str, list[str]], dict[str, int]]:
    """Sorted nodes, deduplicated sorted successor lists, in-degrees (self-loops rejected)."""
    succ: dict[str, set[str]] = {}
    for node, targets in graph.items():
        if isinstance(targets, str):
            raise ValidationError("graph", f"successors of {node!r} must be a list of ids")
        succ.setdefault(node, set())
        for target in targets:
            if target == node:
                raise ValidationError("graph", f"self-loop on {node!r}: not a DAG")
            succ[node].add(target)
            succ.setdefault(target, set())
    nodes = sorted(succ)
    indegree = dict.fromkeys(nodes, 0)
    for targets in succ.values():
        for target in targets:
            indegree[target] += 1
    return nodes, {node: sorted(succ[node]) for node in nodes}, indegree


def topological_order(graph: Successors) -> list[str]:
    """Kahn's algorithm, smallest ready id first: every arc u->v has u before v.

    Raises
    ------
    ValidationError : the graph has a cycle (the message names nodes on it).

    Complexity
    ----------
    O((V + E) log V).

    References
    ----------
    A. B. Kahn, "Topological sorting of large networks", CACM 5(11), 1962.

    Examples
    --------
    >>> topological_order({"c": [], "b": ["c"], "a": ["c"]})
    ['a', 'b', 'c']
    """
    nodes, succ, indegree = _arcs(graph)
    ready = [node for node in nodes if indegree[node] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for target in succ[node]:
            indegree[target] -= 1
            if indegree[target] == 0:
                heapq.heappush(ready, target)
    if len(order) < len(nodes):
        stuck = [node for node in nodes if indegree[node] > 0][:5]
        raise ValidationError("graph", f"has a cycle through {', '.join(stuck)}")
    return order


def critical_depths(graph: Successors) -> dict[str, int]:
    """Longest-path depth of every node: 0 for a source, else 1 + max over its parents.

    The depth of a node is the number of arcs on the longest chain of causes
    leading to it (its "critical depth").  Keys in topological order.
    Raises ValidationError on a cycle.  O((V + E) log V).

    Examples
    --------
    >>> critical_depths({"a": ["b", "c"], "b": ["c"]})
    {'a': 0, 'b': 1, 'c': 2}
    """
    order = topological_order(graph)
    _, succ, _ = _arcs(graph)
    depth = dict.fromkeys(order, 0)
    for node in order:
        for target in succ[node]:
            depth[target] = max(depth[target], depth[node] + 1)
    return depth


def sources_and_sinks(graph: Successors) -> tuple[list[str], list[str]]:
    """Nodes without parents and nodes without children, each sorted.  O(V + E).

    Examples
    --------
    >>> sources_and_sinks({"a": ["b"], "b": ["c"], "d": []})
    (['a', 'd'], ['c', 'd'])
    """
    nodes, succ, indegree = _arcs(graph)
    return [n for n in nodes if indegree[n] == 0], [n for n in nodes if not succ[n]]
