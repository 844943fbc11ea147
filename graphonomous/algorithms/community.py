"""Communities: modularity and the Louvain method, on the undirected view of a digraph.

The undirected view (see `undirected_view`) joins u and v with weight
w(u->v) + w(v->u); a self-loop keeps its single arc weight.  Degrees count a
self-loop twice, as usual, so the degrees sum to 2m (m = total edge weight).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence

from graphonomous.model import ValidationError

from ._graph import WeightedGraph, undirected_view


def modularity(
    graph: WeightedGraph, communities: Iterable[Iterable[str]], resolution: float = 1.0
) -> float:
    """Newman–Girvan modularity of a partition of the undirected view of `graph`.

        Q = sum over communities c of  L_c / m  -  resolution * (d_c / 2m)^2

    where L_c is the weight of the edges inside c (self-loops once), d_c the
    sum of the degrees in c and m the total edge weight — the same value as
    ``networkx.algorithms.community.modularity`` on that undirected graph.

    Parameters
    ----------
    graph : ``{node: {neighbour: weight >= 0}}`` (every node a key).
    communities : iterables of node ids that partition the nodes exactly.
    resolution : finite, >= 0; larger values favour smaller communities.

    Returns
    -------
    Q as a float; 0.0 for a graph without edges (where networkx divides by
    zero).

    Raises
    ------
    ValidationError : not a partition, bad weights or resolution.

    Complexity
    ----------
    O(V log V + E).

    References
    ----------
    M. E. J. Newman, M. Girvan, "Finding and evaluating community structure
    in networks", Phys. Rev. E 69, 026113 (2004).
    """
    _check_resolution(resolution)
    nodes, neighbours, loops = undirected_view(graph)
    index = {node: i for i, node in enumerate(nodes)}
    label = [-1] * len(nodes)
    count = 0
    for c, community in enumerate(communities):
        for node in community:
            i = index.get(node)
            if i is None:
                raise ValidationError("communities", f"{node!r} is not a node of the graph")
            if label[i] >= 0:
                raise ValidationError("communities", f"{node!r} is in more than one community")
            label[i] = c
        count = c + 1
    if -1 in label:
        missing = nodes[label.index(-1)]
        raise ValidationError("communities", f"{missing!r} is in no community")
    degree = _degrees(neighbours, loops)
    inside = [0.0] * count
    total_degree = [0.0] * count
    for i, row in enumerate(neighbours):
        c = label[i]
        total_degree[c] += degree[i]
        inside[c] += loops[i]
        for j, weight in row.items():
            if j > i and label[j] == c:
                inside[c] += weight
    double_m = math.fsum(degree)
    if double_m == 0.0:
        return 0.0
    m = double_m / 2.0
    return math.fsum(
        inside[c] / m - resolution * (total_degree[c] / double_m) ** 2 for c in range(count)
    )


def louvain_communities(
    graph: WeightedGraph, *, resolution: float = 1.0, seed: int = 0
) -> list[list[str]]:
    """Communities of the undirected view of `graph` by Louvain modularity optimisation.

    Level by level: (1) local moving — visit the nodes in a fixed order and
    move each into the neighbouring community with the largest modularity
    gain, repeating passes until a whole pass moves nothing; (2) aggregation
    — each community becomes one node (internal weight becomes a self-loop).
    The method stops at the first level where no node moves.

    Determinism: labels are node positions in sorted id order (aggregated
    nodes: ordered by their smallest member id).  A node moves only when
    the best gain strictly exceeds the gain of staying; among equally good
    communities the smallest label wins.  ``seed=0`` visits nodes in sorted
    id order; any other seed visits them in the order of
    ``blake2b(f"{seed}:{id}", digest_size=8)`` digests (byte order, ties by
    id) — portable across languages, unlike a library shuffle.  Aggregated
    nodes are visited in the order of their first-visited member.

    Parameters
    ----------
    graph : ``{node: {neighbour: weight >= 0}}`` (every node a key).
    resolution : finite, >= 0; the γ in the gain ``k_i,c - γ tot_c k_i / 2m``.
    seed : visiting order, as above.

    Returns
    -------
    A partition of all nodes: each community sorted, communities listed by
    their smallest member.  Isolated nodes are singletons.

    Complexity
    ----------
    O(E) per pass of local moving (dict work per node), typically a few
    passes per level and O(log V) levels; O(V + E) memory.

    References
    ----------
    V. D. Blondel, J.-L. Guillaume, R. Lambiotte, E. Lefebvre, "Fast unfolding
    of communities in large networks", J. Stat. Mech. P10008 (2008).
    """
    _check_resolution(resolution)
    nodes, neighbours, loops = undirected_view(graph)
    n = len(nodes)
    # Level graph: sorted adjacency lists without self-loops, self-loop weights, degrees.
    adjacency = [list(row.items()) for row in neighbours]
    degree = _degrees(neighbours, loops)
    double_m = math.fsum(degree)
    members = [[i] for i in range(n)]
    rank = _visit_rank(nodes, seed)
    if double_m > 0.0:
        while True:
            order = sorted(range(len(members)), key=rank.__getitem__)
            label = _local_moving(adjacency, degree, order, resolution, double_m)
            if label is None:
                break
            adjacency, loops, degree, members, rank = _aggregate(
                adjacency, loops, degree, members, rank, label
            )
    return sorted([nodes[i] for i in sorted(group)] for group in members)


def _check_resolution(resolution: float) -> None:
    if isinstance(resolution, bool) or not 0.0 <= resolution < math.inf:
        raise ValidationError("resolution", f"must be finite and >= 0; got {resolution!r}")


def _degrees(neighbours: Sequence[dict[int, float]], loops: Sequence[float]) -> list[float]:
    """Weighted degree of every node, a self-loop counted twice."""
    return [
        math.fsum(row.values()) + 2.0 * loop for row, loop in zip(neighbours, loops, strict=True)
    ]


def _visit_rank(nodes: Sequence[str], seed: int) -> list[int]:
    """Position of every node in the level-0 visiting order."""
    if seed == 0:
        return list(range(len(nodes)))
    keys = [
        (hashlib.blake2b(f"{seed}:{node}".encode(), digest_size=8).digest(), node) for node in nodes
    ]
    order = sorted(range(len(nodes)), key=keys.__getitem__)
    rank = [0] * len(nodes)
    for position, i in enumerate(order):
        rank[i] = position
    return rank


def _local_moving(
    adjacency: Sequence[Sequence[tuple[int, float]]],
    degree: Sequence[float],
    order: Sequence[int],
    resolution: float,
    double_m: float,
) -> list[int] | None:
    """Phase 1: the community label of every node, or None if no node moved."""
    label = list(range(len(adjacency)))
    total = list(degree)  # total degree of each community
    scale = resolution / double_m
    moved_any = False
    moved = True
    while moved:
        moved = False
        for i in order:
            own = label[i]
            k_i = degree[i]
            links: dict[int, float] = {}
            for j, weight in adjacency[i]:
                c = label[j]
                links[c] = links.get(c, 0.0) + weight
            penalty = scale * k_i
            rest = total[own] - k_i  # own community without i
            stay = links.get(own, 0.0) - penalty * rest
            best, best_gain = own, stay
            for c, weight in links.items():
                if c == own:
                    continue
                gain = weight - penalty * total[c]
                if gain > best_gain or (gain == best_gain and best != own and c < best):
                    best, best_gain = c, gain
            if best != own:
                total[own] = rest
                total[best] += k_i
                label[i] = best
                moved = moved_any = True
    return label if moved_any else None


def _aggregate(
    adjacency: Sequence[Sequence[tuple[int, float]]],
    loops: Sequence[float],
    degree: Sequence[float],
    members: Sequence[list[int]],
    rank: Sequence[int],
    label: Sequence[int],
) -> tuple[list[list[tuple[int, float]]], list[float], list[float], list[list[int]], list[int]]:
    """Phase 2: one node per community, numbered by smallest original member."""
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(label):
        groups.setdefault(c, []).append(i)
    ordered = sorted(groups.values(), key=lambda group: min(min(members[i]) for i in group))
    new_label = [0] * len(label)
    for c, group in enumerate(ordered):
        for i in group:
            new_label[i] = c
    size = len(ordered)
    rows: list[dict[int, float]] = [{} for _ in range(size)]
    new_loops = [0.0] * size
    for i, row in enumerate(adjacency):
        c = new_label[i]
        new_loops[c] += loops[i]
        target = rows[c]
        for j, weight in row:
            d = new_label[j]
            if d != c:
                target[d] = target.get(d, 0.0) + weight
            elif j > i:  # an internal edge appears in both rows: count it once
                new_loops[c] += weight
    new_members = [sorted(m for i in group for m in members[i]) for group in ordered]
    new_rank = [min(rank[i] for i in group) for group in ordered]
    new_degree = [math.fsum(degree[i] for i in group) for group in ordered]
    new_adjacency = [sorted(row.items()) for row in rows]
    return new_adjacency, new_loops, new_degree, new_members, new_rank
