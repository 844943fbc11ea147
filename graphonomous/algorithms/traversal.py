"""Breadth-first layers: hop distance from a set of start nodes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from graphonomous.model import ValidationError


def bfs_layers(
    adjacency: Mapping[str, Iterable[str]], sources: Iterable[str], max_depth: int | None
) -> dict[str, int]:
    """Hop distance from the nearest source to every node within `max_depth` hops.

    Parameters
    ----------
    adjacency : ``{node: iterable of neighbours}`` (pass both directions
        for an undirected traversal).  A node that is not a key has no
        neighbours; it can still be reached.
    sources : start nodes (depth 0), need not be keys.
    max_depth : None for no limit, else an int >= 0.

    Returns
    -------
    ``{node: depth}`` ordered by depth, then by id.

    Raises
    ------
    ValidationError : a string given where an iterable of ids is expected,
        or a bad `max_depth`.

    Complexity
    ----------
    O(V + E) plus sorting each layer, O(V log V).

    References
    ----------
    E. F. Moore, "The shortest path through a maze", Proc. Int. Symp. on the
    Theory of Switching (1959).
    """
    if isinstance(sources, str):
        raise ValidationError("sources", "must be an iterable of node ids, not a string")
    if max_depth is not None and (
        isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0
    ):
        raise ValidationError("max_depth", f"must be None or an integer >= 0; got {max_depth!r}")
    layer = sorted(set(sources))
    depth = dict.fromkeys(layer, 0)
    level = 0
    while layer and (max_depth is None or level < max_depth):
        level += 1
        found: set[str] = set()
        for node in layer:
            neighbours = adjacency.get(node, ())
            if isinstance(neighbours, str):
                raise ValidationError(
                    f"adjacency[{node!r}]", "must be an iterable of node ids, not a string"
                )
            found.update(neighbours)
        layer = sorted(found.difference(depth))
        depth.update(dict.fromkeys(layer, level))
    return depth
