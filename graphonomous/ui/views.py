"""The canvas JSON API: what each endpoint of `graphonomous ui` answers, over the facade only.

Rules of this file: every function takes the `Graphonomous` facade and returns a
JSON-ready dict with canonical snake_case keys (node and edge dicts exactly as
the facade gives them); nothing here touches the store, SQL or the topology
internals.  A view never holds more than `MAX_VIEW_NODES` nodes: a larger
selection is cut by a stated rule and the answer says so (`truncated`,
`message`) — the canvas never receives 50K nodes.  Writes exist only as the
functions below the "writes" line; the server calls them only with --allow-writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from ..model import RELATIONSHIPS, ValidationError, check_choice, check_id, check_int
from ..retrieval.defaults import DEFAULT_LIMIT
from ..topology import analyze_document
from .relationships import CANVAS_DEFAULT_RELATIONSHIP

if TYPE_CHECKING:
    from ..api import Graphonomous

MAX_VIEW_NODES: Final = 400
"""Most nodes one canvas view holds.  The force layout is O(n²) per frame: at 400
nodes that is 80K pair updates (~2–4 ms in V8), which keeps 60 frames per second;
beyond that a drawing is unreadable anyway, so larger graphs are shown by region."""

# The canvas search asks what `recall` and the MCP tool ask by default, so the
# three show the same results and the same topology for the same query.
DEFAULT_SEARCH_LIMIT: Final = DEFAULT_LIMIT
MAX_SEARCH_LIMIT: Final = 100
DEFAULT_EXPAND_DEPTH: Final = 1
MAX_EXPAND_DEPTH: Final = 3
# The overview groups nodes by the folders of their files' paths, `depth` folders deep
# (1: the top-level folders, what a large tree is first understood by).
DEFAULT_OVERVIEW_DEPTH: Final = 1
MAX_OVERVIEW_DEPTH: Final = 8
# Groups one overview lists: a panel of 60 rows is still read at a glance; the rest
# are counted in the message.
MAX_OVERVIEW_GROUPS: Final = 60
# Nodes read per `list_nodes` call by the overview (the facade's cap is 10,000).
OVERVIEW_PAGE: Final = 5_000
# The overview group of nodes not ingested from a file (remembered, learned, imported).
NO_FILE_GROUP: Final = "(not from files)"


def edges_among(graph: Graphonomous, node_ids: Iterable[str]) -> list[dict[str, Any]]:
    """Every live edge with both endpoints in `node_ids`, by edge id (the facade's snapshot)."""
    wanted = set(node_ids)
    return [
        edge.to_dict()
        for edge in graph.graph_snapshot().edges
        if edge.source_id in wanted and edge.target_id in wanted
    ]


def _nodes_by_id(graph: Graphonomous, node_ids: Iterable[str]) -> list[dict[str, Any]]:
    return [graph.get_node(node_id)["node"] for node_id in node_ids]


def _view(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], total: int, rule: str
) -> dict[str, Any]:
    truncated = total > len(nodes)
    message = (
        f"showing {len(nodes)} of {total:,} nodes ({rule}); search or expand a node to see "
        "other regions"
        if truncated
        else None
    )
    return {
        "nodes": nodes,
        "edges": edges,
        "total": total,
        "truncated": truncated,
        "message": message,
    }


def graph_view(graph: Graphonomous, limit: int = MAX_VIEW_NODES) -> dict[str, Any]:
    """The opening view: the whole graph when it fits, else the oldest `limit` live nodes."""
    limit = check_int("limit", limit, 1, MAX_VIEW_NODES)
    listed = graph.list_nodes(limit=limit)
    nodes = listed["nodes"]
    edges = edges_among(graph, (n["id"] for n in nodes))
    return _view(nodes, edges, listed["total"], "the oldest first")


def search_view(
    graph: Graphonomous, query: str, limit: int = DEFAULT_SEARCH_LIMIT
) -> dict[str, Any]:
    """`retrieve_context` for `query` and the region it returns: its nodes, the edges among
    them, its routing and fault lines (the `topology` of retrieve_context, unchanged)."""
    limit = check_int("limit", limit, 1, MAX_SEARCH_LIMIT)
    result = graph.retrieve_context(query, limit=limit)
    ids = list(dict.fromkeys(r["node_id"] for r in result["results"]))[:MAX_VIEW_NODES]
    nodes = _nodes_by_id(graph, ids)
    return {
        **result,
        **_view(nodes, edges_among(graph, ids), len(result["results"]), "the best ranked"),
    }


def node_view(graph: Graphonomous, node_id: str) -> dict[str, Any]:
    """One node for the panel: the node, its edges (both directions) and its neighbours."""
    found = graph.get_node(check_id("id", node_id))
    others = sorted(
        {e["target_id"] if e["source_id"] == node_id else e["source_id"] for e in found["edges"]}
    )
    return {**found, "neighbours": _nodes_by_id(graph, others)}


def expand_view(
    graph: Graphonomous, node_id: str, depth: int = DEFAULT_EXPAND_DEPTH
) -> dict[str, Any]:
    """The neighbourhood of a node within `depth` hops (graph_traverse), at most MAX_VIEW_NODES."""
    depth = check_int("depth", depth, 1, MAX_EXPAND_DEPTH)
    walk = graph.graph_traverse(check_id("id", node_id), depth=depth, limit=MAX_VIEW_NODES)
    view = _view(walk["nodes"], walk["edges"], len(walk["nodes"]), "closest first")
    if walk.get("truncated"):
        view["truncated"] = True
        view["message"] = (
            f"the neighbourhood of {node_id} has more than {MAX_VIEW_NODES} nodes; "
            "the farthest layer was cut by id"
        )
    return {**view, "root": node_id, "depth": depth}


def stats_view(graph: Graphonomous) -> dict[str, Any]:
    """The stats panel: counts by type / timescale / relationship, the forgetting budget,
    memory pressure and the last consolidation run."""
    log = graph.consolidation_log(limit=1)
    return {
        "stats": graph.graph_stats(),
        "forgetting": graph.forgetting_config(),
        "memory_pressure": graph.memory_pressure(),
        "last_consolidation": log["runs"][0] if log["runs"] else None,
    }


def _folder(metadata: Mapping[str, Any], depth: int) -> str:
    """The overview group of a node: the first `depth` folders of its file's path
    (``.`` for a file at the root), `NO_FILE_GROUP` for a node not from a file."""
    path = metadata.get("path")
    if metadata.get("kind") not in ("file", "chunk") or not isinstance(path, str):
        return NO_FILE_GROUP
    return "/".join(path.split("/")[:-1][:depth]) or "."


def overview_view(graph: Graphonomous, depth: int = DEFAULT_OVERVIEW_DEPTH) -> dict[str, Any]:
    """The whole graph by folder, largest first: per group its nodes, files, edges inside
    and across, and the κ, SCC count and routing of the group's own subgraph (the
    topology engine on its nodes and inner edges).  At most `MAX_OVERVIEW_GROUPS`
    groups; the rest are counted (`truncated`, `message`).  O(nodes + edges) plus one
    analysis per group, over nodes read `OVERVIEW_PAGE` at a time."""
    depth = check_int("depth", depth, 1, MAX_OVERVIEW_DEPTH)
    group_of: dict[str, str] = {}
    files: dict[str, int] = {}
    offset = 0
    while True:
        page = graph.list_nodes(limit=OVERVIEW_PAGE, offset=offset)["nodes"]
        for node in page:
            metadata = node.get("metadata") or {}
            group = group_of[node["id"]] = _folder(metadata, depth)
            files[group] = files.get(group, 0) + (metadata.get("kind") == "file")
        if len(page) < OVERVIEW_PAGE:
            break
        offset += OVERVIEW_PAGE
    inner: dict[str, list[dict[str, str]]] = {group: [] for group in files}
    crossing = dict.fromkeys(files, 0)
    for edge in graph.graph_snapshot().edges:
        source, target = group_of.get(edge.source_id), group_of.get(edge.target_id)
        if source is None or target is None:
            continue  # a node created after the pages were read
        if source == target:
            arc = {"source_id": edge.source_id, "target_id": edge.target_id}
            inner[source].append({**arc, "relationship": edge.relationship})
        else:
            crossing[source] += 1
            crossing[target] += 1
    members: dict[str, list[str]] = {group: [] for group in files}
    for node_id, group in group_of.items():
        members[group].append(node_id)
    groups = []
    for group, ids in members.items():
        topology = analyze_document({"nodes": ids, "edges": inner[group]})
        groups.append(
            {
                "folder": group,
                "node_count": len(ids),
                "file_count": files[group],
                "edge_count": len(inner[group]),
                "crossing_edge_count": crossing[group],
                "max_kappa": topology["max_kappa"],
                "scc_count": topology["scc_count"],
                "routing": topology["routing"],
            }
        )
    groups.sort(key=lambda g: (-g["node_count"], g["folder"]))
    shown = groups[:MAX_OVERVIEW_GROUPS]
    truncated = len(groups) > len(shown)
    rest = sum(g["node_count"] for g in groups[len(shown) :])
    return {
        "depth": depth,
        "total": len(group_of),
        "group_count": len(groups),
        "groups": shown,
        "truncated": truncated,
        "message": (
            f"showing the {len(shown)} largest of {len(groups):,} folders; the others "
            f"hold {rest:,} node{'' if rest == 1 else 's'}"
            if truncated
            else None
        ),
    }


def topology_view(document: object) -> dict[str, Any]:
    """The Python engine on a posted {"nodes","edges"[,"preview"]} document (the canvas
    uses it to cross-check its own κ; the same protocol as `graphonomous topology -`)."""
    return analyze_document(document)


# -- writes (only with --allow-writes) ------------------------------------------


def _field(body: Mapping[str, Any], name: str) -> Any:
    if name not in body:
        raise ValidationError(name, "is required")
    return body[name]


def add_edge(graph: Graphonomous, body: Mapping[str, Any]) -> dict[str, Any]:
    """Store an edge drawn on the canvas (relationship `causal` unless given)."""
    relationship = body.get("relationship", CANVAS_DEFAULT_RELATIONSHIP)
    check_choice("relationship", relationship, RELATIONSHIPS)
    return graph.store_edge(
        source_id=check_id("source_id", _field(body, "source_id")),
        target_id=check_id("target_id", _field(body, "target_id")),
        relationship=relationship,
    )


def delete_edges(graph: Graphonomous, body: Mapping[str, Any]) -> dict[str, Any]:
    """Delete the stored edges behind one canvas arc (Unbend): `edge_ids`, in one atomic
    batch (an unknown id deletes nothing and is reported by the batch error)."""
    ids = _field(body, "edge_ids")
    if not isinstance(ids, list) or not ids:
        raise ValidationError("edge_ids", "must be a non-empty list of edge ids")
    checked = [check_id(f"edge_ids[{i}]", v) for i, v in enumerate(ids)]
    result = graph.apply_batch([{"op": "remove_edge", "id": edge_id} for edge_id in checked])
    return {"deleted": checked, "count": len(checked), "batch": result}


def run_consolidation(graph: Graphonomous) -> dict[str, Any]:
    """One consolidation cycle, triggered from the canvas."""
    return graph.run_consolidation(trigger="manual")
