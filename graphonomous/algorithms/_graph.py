"""Input checking and integer indexing shared by the graph algorithms.

Every algorithm takes plain mappings and works internally on integers: node
``i`` is the i-th id in sorted (Unicode code point) order, so every loop over
nodes or arcs runs in an order that does not depend on how the caller built
its dicts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, chain
from typing import Any

from graphonomous.model import ValidationError

WeightedGraph = Mapping[str, Mapping[str, float]]
"""A weighted digraph: ``{node: {neighbour: weight}}``; every node is a key."""


def node_index(graph: Mapping[str, object]) -> tuple[list[str], dict[str, int]]:
    """Sorted node ids and the inverse map id -> position; O(V log V)."""
    nodes = sorted(graph)
    return nodes, {node: i for i, node in enumerate(nodes)}


def checked_weight(field: str, source: str, target: str, value: object) -> float:
    """`value` as a finite non-negative float, else `ValidationError` naming the arc."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(field, f"weight of {source!r} -> {target!r} is not a number")
    weight = float(value)
    # One chained comparison rejects negatives, NaN and +inf alike.
    if not 0.0 <= weight < math.inf:
        raise ValidationError(
            field, f"weight of {source!r} -> {target!r} must be finite and >= 0; got {value!r}"
        )
    return weight


# C-level predicates for bulk weight checks (NaN fails both comparisons).
_AT_LEAST_ZERO: Callable[[Any], bool] = (0.0).__le__
_BELOW_INFINITY: Callable[[Any], bool] = math.inf.__gt__
_NUMBER_TYPES = frozenset((float, int))


def out_arcs(
    graph: WeightedGraph, nodes: Sequence[str], index: Mapping[str, int], field: str
) -> tuple[list[int], list[int], list[float]]:
    """All arcs in flat form (CSR by source): ``(bounds, targets, weights)``.

    `nodes` and `index` come from `node_index`.  The out-arcs of node i are
    positions ``bounds[i]:bounds[i + 1]``; sources follow sorted id order,
    targets of one source the caller's mapping order (consumers that need a
    fixed order sort or bucket them).  Everything is done in whole-list
    C-level passes because this is the hot part of graph construction; a
    failed check is re-done arc by arc for a precise message.  Raises
    `ValidationError` for a target that is not a key of `graph` or a weight
    that is not a finite number >= 0 (bools rejected).  O(E) after sorting.
    """
    rows = list(map(graph.__getitem__, nodes))
    bounds = list(accumulate(map(len, rows), initial=0))
    try:
        targets = list(map(index.__getitem__, chain.from_iterable(rows)))
    except KeyError as exc:
        raise ValidationError(field, f"{exc.args[0]!r} is not a node of the graph") from None
    values: list[Any] = list(chain.from_iterable(row.values() for row in rows))
    if not (
        _NUMBER_TYPES.issuperset(map(type, values))
        and all(map(_AT_LEAST_ZERO, values))
        and all(map(_BELOW_INFINITY, values))
    ):
        for source in nodes:
            for target, value in graph[source].items():
                checked_weight(field, source, target, value)
    return bounds, targets, list(map(float, values))


def undirected_view(
    graph: WeightedGraph, field: str = "graph"
) -> tuple[list[str], list[dict[int, float]], list[float]]:
    """The undirected weighted graph underlying a digraph.

    Output: ``(nodes, neighbours, loops)`` where ``nodes`` are the sorted ids,
    ``neighbours[i]`` maps j != i to the weight of {i, j} = w(i->j) + w(j->i),
    and ``loops[i]`` is the self-loop weight w(i->i) (an arc that is its own
    reverse is counted once).  Zero-weight arcs are no arcs.  Each
    ``neighbours[i]`` iterates in increasing j, so sums over it do not depend
    on the caller's dict order.  O(V log V + E log E).
    """
    nodes, index = node_index(graph)
    neighbours: list[dict[int, float]] = [{} for _ in nodes]
    loops = [0.0] * len(nodes)
    bounds, targets, weights = out_arcs(graph, nodes, index, field)
    for i in range(len(nodes)):
        row_i = neighbours[i]
        for k in range(bounds[i], bounds[i + 1]):
            j, weight = targets[k], weights[k]
            if weight == 0.0:
                continue
            if i == j:
                loops[i] += weight
                continue
            # a + b == b + a in IEEE arithmetic: both directions store the same sum.
            row_j = neighbours[j]
            row_i[j] = row_i.get(j, 0.0) + weight
            row_j[i] = row_j.get(i, 0.0) + weight
    return nodes, [dict(sorted(row.items())) for row in neighbours], loops
