"""Topology of a stored region: which nodes, which edges, what κ says (tool topology_analyze)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..model import ValidationError
from ..topology import analyze, build_adjacency
from ..topology.recommend import RECOMMENDATION_LIST_LIMIT, recommendation

if TYPE_CHECKING:
    from .graph_view import GraphEngine

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
            shown = ", ".join(missing[:RECOMMENDATION_LIST_LIMIT])
            more = len(missing) - RECOMMENDATION_LIST_LIMIT
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
    result = analyze(build_adjacency(universe, edges), trigger="analyze_topology")
    return {**result, "recommendation": recommendation(result, len(universe))}
