"""Topology of a stored region: which nodes, which edges, what κ says (tool topology_analyze)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..lazy_import import lazy_module
from ..model import ValidationError

# The facade imports this module for `DEFAULT_SEARCH_LIMIT`; the topology package
# (≈ 15 ms of imports) loads with the first region analysed, not with every command.
if TYPE_CHECKING:
    from .. import topology
    from ..topology import recommend
    from .graph_view import GraphEngine
else:
    topology = lazy_module("graphonomous.topology")
    recommend = lazy_module("graphonomous.topology.recommend")

DEFAULT_SEARCH_LIMIT: Final = 10


def topology_universe(graph: GraphEngine, arguments: Mapping[str, Any]) -> list[str]:
    """The node ids a topology call analyses, sorted.

    No `node_ids` and no `query`: every live node.  Otherwise the given ids
    (each must exist) united with the `limit` best similarity hits for `query`.
    Raises ValidationError naming unknown ids.  O(V) store reads.
    """
    node_ids = arguments.get("node_ids")
    query = arguments.get("query")
    if node_ids is None and query is None:
        return graph.store.node_ids()
    universe = set(node_ids or ())
    if universe:
        missing = sorted(universe - set(graph.store.get_nodes(sorted(universe))))
        if missing:
            shown = ", ".join(missing[: recommend.RECOMMENDATION_LIST_LIMIT])
            more = len(missing) - recommend.RECOMMENDATION_LIST_LIMIT
            extra = f" and {more} more" if more > 0 else ""
            raise ValidationError("node_ids", f"unknown node ids: {shown}{extra}")
    if query is not None:
        limit = arguments.get("limit", DEFAULT_SEARCH_LIMIT)
        from .lookups import similarity_search  # (the retriever: loaded when a query asks)

        hits = similarity_search(graph, query, limit)["results"]
        universe.update(hit["id"] for hit in hits)
    return sorted(universe)


def analyze_region(graph: GraphEngine, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """κ analysis of a stored region (tools `topology_analyze` / `analyze_topology`).

    Universe from :func:`topology_universe`, edges between those nodes
    (``store.list_edges_between``), then ``build_adjacency`` + ``analyze``
    (telemetry trigger ``analyze_topology``).  Output: the canonical §A.1
    result plus ``recommendation``.  Complexity: that of ``analyze``.
    """
    with graph.lock:  # node ids and edges from one consistent state
        universe = topology_universe(graph, arguments)
        edges = graph.store.list_edges_between(universe)
    adjacency = topology.build_adjacency(universe, edges)
    result = topology.analyze(adjacency, trigger="analyze_topology")
    return {**result, "recommendation": recommend.recommendation(result, len(universe))}
