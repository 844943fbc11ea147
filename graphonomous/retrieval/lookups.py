"""The specialised read tools: episodic, procedural, evidence paths, traversal, similarity.

Each function takes the engine first and is exposed as the facade method of
the same name (the MCP tool name).  None of them changes the database.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from ..algorithms import dijkstra_path, k_shortest_paths
from ..embed import tokenize
from ..model import (
    MAX_LIST_LIMIT,
    NODE_TYPES,
    RELATIONSHIPS,
    Edge,
    Node,
    NotFoundError,
    ValidationError,
    check_choice,
    check_id,
    check_int,
    check_text,
    format_time,
    parse_time,
)
from .bm25 import bm25_tokens
from .candidates import cap_query, hybrid_search
from .graph_view import GraphReader, GraphSnapshot, Link
from .provenance import node_result, provenance
from .settings import MAX_QUERY_CHARS
from .time_expressions import query_window

if TYPE_CHECKING:
    from .graph_view import GraphEngine

DEFAULT_EPISODIC_LIMIT: Final = 20
DEFAULT_PROCEDURAL_LIMIT: Final = 5
MAX_TOOL_LIMIT: Final = 1000
# Procedural search looks at this many hybrid candidates per requested result.
PROCEDURAL_POOL_MULTIPLIER: Final = 4
# score × (1 + PRECONDITION_BOOST × share of the node's preconditions that are met)
PRECONDITION_BOOST: Final = 0.5
# A node precondition is met by a given condition holding this share of its words.
PRECONDITION_MATCH: Final = 0.6

DEFAULT_PATH_HOPS: Final = 6
MAX_PATH_HOPS: Final = 12
MAX_PATHS: Final = 10
# Each factor of an evidence step is floored here so one weak factor costs at
# most -ln(0.01) ≈ 4.6 instead of infinity.
COST_FLOOR: Final = 0.01
SECONDS_PER_DAY: Final = 86_400.0

DEFAULT_TRAVERSE_DEPTH: Final = 2
MAX_TRAVERSE_DEPTH: Final = 5
DEFAULT_TRAVERSE_LIMIT: Final = 100
DIRECTIONS: Final = ("out", "in", "both")


# -- retrieve_episodic ---------------------------------------------------------


def _bound(value: object, name: str, now: datetime) -> tuple[str, datetime] | None:
    """An ISO 8601 bound, or a date expression ("last week", "in March 2024",
    `time_expressions`) resolved against the graph clock: its window's start for
    ``since``, the last millisecond of its window for ``until``."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(name, f"must be an ISO 8601 timestamp string; got {value!r}")
    try:
        moment = parse_time(value, name)
    except ValidationError:
        window = query_window(value, now)
        edge = None if window is None else (window.start if name == "since" else window.end)
        if edge is None:
            raise ValidationError(
                name, f"not an ISO 8601 timestamp or a date expression: {value!r}"
            ) from None
        moment = edge if name == "since" else edge - timedelta(milliseconds=1)
    return format_time(moment), moment


def retrieve_episodic(
    graph: GraphEngine,
    since: str | None = None,
    until: str | None = None,
    limit: int = DEFAULT_EPISODIC_LIMIT,
    agent_id: str | None = None,
) -> dict[str, Any]:
    """Episodic nodes created in [since, until], newest first.

    Input: optional bounds — ISO 8601 (inclusive, compared at millisecond
    precision in UTC; a bound without zone is UTC) or a date expression
    resolved against the graph clock (`_bound`) — limit, agent.  Output:
    ``{"since", "until", "count", "results": [node]}`` ordered by created_at
    descending, then id descending.  Forgotten nodes are excluded.
    Complexity: one indexed query.
    """
    now = graph.clock.now()
    low = _bound(since, "since", now)
    high = _bound(until, "until", now)
    if low is not None and high is not None and low[1] > high[1]:
        raise ValidationError("until", "must not be earlier than since")
    limit = check_int("limit", limit, 1, MAX_TOOL_LIMIT)
    if agent_id is not None:
        check_id("agent_id", agent_id)
    with graph.lock:
        nodes = graph.store.list_nodes(
            node_type="episodic",
            agent_id=agent_id,
            created_after=low[0] if low else None,
            created_before=high[0] if high else None,
            order="created_desc",
            limit=limit,
        )
    return {
        "since": low[0] if low else None,
        "until": high[0] if high else None,
        "count": len(nodes),
        "results": [node_result(node) for node in nodes],
    }


# -- retrieve_procedural ---------------------------------------------------------

_NUMBERED_LINE = re.compile(r"^\s*(?:step\s*)?\d{1,3}\s*[.):]\s*(.+)$", re.IGNORECASE)
_BULLET_LINE = re.compile(r"^\s*[-*•]\s+(.+)$")
_INLINE_NUMBER = re.compile(r"(?:^|(?<=\s))\d{1,3}[.)]\s+")
_THEN = re.compile(r"\s*(?:[,;.]\s*|\s+)(?:and\s+)?then\s+", re.IGNORECASE)
_FIRST = re.compile(r"^\s*first\s*,?\s+", re.IGNORECASE)


def extract_steps(content: str, metadata: Mapping[str, Any]) -> list[str]:
    """The steps of a procedure, in order.

    First match wins: ``metadata.steps`` (a list of strings); lines that are
    numbered (``1.``, ``2)``, ``Step 3:``) or bulleted (``-``, ``*``, ``•``),
    with unmarked lines joined to the step above; inline numbering
    (``1. a 2. b``); ``then`` chains (``First a, then b and then c``);
    otherwise the whole text as one step.  O(len(content)).
    """
    steps = metadata.get("steps")
    if isinstance(steps, list) and steps and all(isinstance(s, str) for s in steps):
        return [step.strip() for step in steps if step.strip()]
    marked = _marked_lines(content)
    if len(marked) >= 2:
        return marked
    inline = [part.strip() for part in _INLINE_NUMBER.split(content)]
    inline = [part for part in inline[1:] if part] if len(inline) > 2 else []
    if len(inline) >= 2:
        return inline
    chain = [part.strip(" .") for part in _THEN.split(_FIRST.sub("", content.strip()))]
    chain = [part for part in chain if part]
    if len(chain) >= 2:
        return chain
    return [content.strip()]


def _marked_lines(content: str) -> list[str]:
    steps: list[str] = []
    for line in content.splitlines():
        match = _NUMBERED_LINE.match(line) or _BULLET_LINE.match(line)
        if match:
            steps.append(match.group(1).strip())
        elif steps and line.strip():
            steps[-1] = f"{steps[-1]} {line.strip()}"
    return steps


def _precondition_list(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and all(isinstance(item, str) for item in value):
        return list(value)
    raise ValidationError(name, "must be a list of strings")


def match_preconditions(
    required: Sequence[str], given: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Split a node's preconditions into (met, unmet) by the caller's conditions.

    A precondition is met when some given condition contains at least
    `PRECONDITION_MATCH` of its words (`tokenize`); one without words is
    never met.  O(len(required) × len(given)).
    """
    given_words = [set(tokenize(condition)) for condition in given]
    met: list[str] = []
    unmet: list[str] = []
    for condition in required:
        words = set(tokenize(condition))
        share = max((len(words & g) / len(words) for g in given_words), default=0.0) if words else 0
        (met if words and share >= PRECONDITION_MATCH else unmet).append(condition)
    return met, unmet


def retrieve_procedural(
    graph: GraphEngine,
    task: str,
    preconditions: Sequence[str] | None = None,
    limit: int = DEFAULT_PROCEDURAL_LIMIT,
    agent_id: str | None = None,
) -> dict[str, Any]:
    """Procedures for a task: hybrid search over procedural nodes, precondition boost, steps.

    Score = (RRF / best RRF) × confidence × (1 + `PRECONDITION_BOOST` × met
    share), where the met share is the fraction of ``metadata.preconditions``
    met by `preconditions` (`match_preconditions`; no preconditions: share 0).
    Output: ``{"task", "count", "results": [{node_id, content, confidence,
    source, score, preconditions_met, preconditions_unmet,
    steps}]}`` by score desc, id asc.  Complexity: one hybrid search.
    """
    check_text("task", task, allow_empty=True)
    given = _precondition_list(preconditions, "preconditions")
    limit = check_int("limit", limit, 1, MAX_TOOL_LIMIT)
    if agent_id is not None:
        check_id("agent_id", agent_id)
    text, _ = cap_query(task, MAX_QUERY_CHARS)
    tokens = bm25_tokens(text)
    vector = graph.embed_texts([text])[0] if tokens else None
    scored: list[tuple[float, str, Node, str, list[str], list[str]]] = []
    with graph.lock:
        if tokens:
            allowed = set(graph.store.node_ids(node_type="procedural", agent_id=agent_id))
            fused, embedded, _ = hybrid_search(
                graph,
                vector,
                tokens,
                PROCEDURAL_POOL_MULTIPLIER * limit,
                allow=allowed.__contains__,
            )
            rows = graph.store.get_nodes([node_id for node_id, _ in fused])
            best = fused[0][1] if fused else 1.0
            for node_id, rrf in fused:
                node = rows.get(node_id)
                if node is None or node.forgotten_at is not None:
                    continue
                required = _precondition_list(
                    node.metadata.get("preconditions"), "metadata.preconditions"
                )
                met, unmet = match_preconditions(required, given)
                share = len(met) / len(required) if required else 0.0
                score = rrf / best * node.confidence * (1.0 + PRECONDITION_BOOST * share)
                source = "seed" if node_id in embedded else "bm25"
                scored.append((score, node_id, node, source, met, unmet))
    scored.sort(key=lambda item: (-item[0], item[1]))
    results = [
        {
            "node_id": node_id,
            "content": node.content,
            "confidence": node.confidence,
            "score": round(score, 6),
            **provenance(node),
            "channel": source,
            "preconditions_met": met,
            "preconditions_unmet": unmet,
            "steps": extract_steps(node.content, node.metadata),
        }
        for score, node_id, node, source, met, unmet in scored[:limit]
    ]
    return {"task": text, "count": len(results), "results": results}


# -- trace_evidence_path -----------------------------------------------------------


def _age_days(stamp: str, now: datetime) -> float:
    try:
        moment = parse_time(stamp)
    except ValidationError:
        return 0.0
    return max(0.0, (now - moment).total_seconds() / SECONDS_PER_DAY)


def step_cost(edge: Edge, target_confidence: float, now: datetime) -> float:
    """Cost of one evidence step along `edge` to a node of `target_confidence`.

    cost = −ln(max(strength, F) × max(confidence, F) × max(recency, F)) with
    F = `COST_FLOOR` and recency = exp(−decay_rate × age in days since the
    edge's updated_at).  A path's cost is −ln of the product of its factors,
    so the cheapest path is the most credible chain.  O(1).
    """
    recency = math.exp(-edge.decay_rate * _age_days(edge.updated_at, now))
    product = (
        max(edge.strength, COST_FLOOR)
        * max(target_confidence, COST_FLOOR)
        * max(recency, COST_FLOOR)
    )
    return -math.log(product)


def _reachable(
    links: Mapping[str, list[Link]], source: str, max_hops: int, direction: str
) -> set[str]:
    seen = {source}
    frontier = [source]
    for _ in range(max_hops):
        layer = []
        for node in frontier:
            for link in links.get(node, ()):
                if direction == "out" and not link.outgoing:
                    continue
                if link.neighbor not in seen:
                    seen.add(link.neighbor)
                    layer.append(link.neighbor)
        frontier = layer
    return seen


def _cost_graph(
    snapshot: GraphSnapshot,
    region: set[str],
    confidence: Mapping[str, float],
    direction: str,
    now: datetime,
) -> tuple[dict[str, dict[str, float]], dict[tuple[str, str], tuple[Edge, bool]]]:
    """Step costs over the region and, per (u, v), the cheapest edge and whether it runs u→v."""
    costs: dict[str, dict[str, float]] = {node: {} for node in sorted(region)}
    chosen: dict[tuple[str, str], tuple[Edge, bool]] = {}
    for edge in snapshot.edges:
        if edge.source_id not in region or edge.target_id not in region:
            continue
        steps = [(edge.source_id, edge.target_id, True)]
        if direction == "both":
            steps.append((edge.target_id, edge.source_id, False))
        for u, v, forward in steps:
            cost = step_cost(edge, confidence.get(v, 0.0), now)
            old = costs[u].get(v)
            if old is None or cost < old or (cost == old and edge.id < chosen[(u, v)][0].id):
                costs[u][v] = cost
                chosen[(u, v)] = (edge, forward)
    return costs, chosen


def trace_evidence_path(
    graph: GraphEngine,
    from_id: str,
    to_id: str,
    k: int = 1,
    max_hops: int = DEFAULT_PATH_HOPS,
    direction: str = "both",
) -> dict[str, Any]:
    """The most credible evidence chains between two nodes (weighted Dijkstra; Yen for k > 1).

    Input: two live node ids, k paths (1..`MAX_PATHS`), at most `max_hops`
    edges per path, direction "both" (edges may be walked backwards) or
    "out" (only source→target).  Step costs: `step_cost`.  Output:
    ``{"from_id", "to_id", "found", "paths": [{"cost", "credibility" (=
    exp(−cost)), "hops", "nodes", "edges": [{edge_id, source_id, target_id,
    relationship, strength, forward}]}]}``, cheapest first.  Raises
    NotFoundError for unknown or forgotten ids.  Complexity: one BFS over the
    `max_hops` ball plus Dijkstra (k Yen rounds) on it.
    """
    check_id("from_id", from_id)
    check_id("to_id", to_id)
    k = check_int("k", k, 1, MAX_PATHS)
    max_hops = check_int("max_hops", max_hops, 1, MAX_PATH_HOPS)
    check_choice("direction", direction, ("out", "both"))
    with graph.lock:
        snapshot = graph.graph_snapshot()
        for node_id in (from_id, to_id):
            if node_id not in snapshot.live:
                raise NotFoundError("node", node_id)
        region = _reachable(snapshot.links(), from_id, max_hops, direction)
    costs, chosen = _cost_graph(snapshot, region, snapshot.confidence, direction, graph.clock.now())
    if to_id not in region:
        found: list[tuple[float, list[str]]] = []
    elif k == 1:
        best = dijkstra_path(costs, from_id, to_id, max_hops=max_hops)
        found = [best] if best is not None else []
    else:
        found = k_shortest_paths(costs, from_id, to_id, k, max_hops=max_hops)
    paths = []
    for cost, nodes in found:
        steps = [chosen[(u, v)] for u, v in itertools.pairwise(nodes)]
        paths.append(
            {
                "cost": round(cost, 6),
                "credibility": round(math.exp(-cost), 6),
                "hops": len(nodes) - 1,
                "nodes": nodes,
                "edges": [
                    {
                        "edge_id": edge.id,
                        "source_id": edge.source_id,
                        "target_id": edge.target_id,
                        "relationship": edge.relationship,
                        "strength": edge.strength,
                        "forward": forward,
                    }
                    for edge, forward in steps
                ],
            }
        )
    return {"from_id": from_id, "to_id": to_id, "found": bool(paths), "paths": paths}


# -- graph_traverse ------------------------------------------------------------------


def _relationship_filter(relationships: object) -> frozenset[str] | None:
    if relationships is None:
        return None
    if isinstance(relationships, str):
        relationships = [relationships]
    if not isinstance(relationships, Sequence):
        raise ValidationError("relationships", "must be a list of relationship kinds")
    return frozenset(
        check_choice(f"relationships[{i}]", kind, RELATIONSHIPS)
        for i, kind in enumerate(relationships)
    )


def graph_traverse(
    graph: GraphEngine,
    node_id: str,
    depth: int = DEFAULT_TRAVERSE_DEPTH,
    relationships: Sequence[str] | None = None,
    direction: str = "both",
    limit: int = DEFAULT_TRAVERSE_LIMIT,
) -> dict[str, Any]:
    """Breadth-first walk from a node: every node within `depth` hops.

    Input: a live start node, depth 0..`MAX_TRAVERSE_DEPTH`, optional
    relationship kinds to follow, direction out|in|both, limit on returned
    nodes (the start node included).  Output: ``{"root", "depth",
    "direction", "relationships", "nodes": [node + "depth"] by (depth, id),
    "edges": [edges among the returned nodes whose kind passes the filter]
    by id, "count", "truncated"}``.  Forgotten nodes are never reached.
    Complexity: one SQL query per layer; O(nodes + edges reached).
    """
    check_id("node_id", node_id)
    depth = check_int("depth", depth, 0, MAX_TRAVERSE_DEPTH)
    kinds = _relationship_filter(relationships)
    check_choice("direction", direction, DIRECTIONS)
    limit = check_int("limit", limit, 1, MAX_TOOL_LIMIT)
    with graph.lock:
        reader = GraphReader(graph.store)
        root = reader.node(node_id)
        if root is None:
            raise NotFoundError("node", node_id)
        depth_of = {node_id: 0}
        frontier = [node_id]
        truncated = False
        for level in range(1, depth + 1):
            if not frontier or truncated:
                break
            reader.load_links(frontier)
            layer: set[str] = set()
            for parent in frontier:
                for link in reader.links(parent):
                    if kinds is not None and link.relationship not in kinds:
                        continue
                    if (direction == "out" and not link.outgoing) or (
                        direction == "in" and link.outgoing
                    ):
                        continue
                    if link.neighbor not in depth_of:
                        layer.add(link.neighbor)
            ordered = sorted(layer)
            room = limit - len(depth_of)
            if len(ordered) > room:
                ordered, truncated = ordered[:room], True
            depth_of.update((node, level) for node in ordered)
            frontier = ordered
        ids = sorted(depth_of, key=lambda n: (depth_of[n], n))
        edges = [
            edge
            for edge in graph.store.list_edges_between(ids)
            if kinds is None or edge.relationship in kinds
        ]
        nodes = [reader.node(n) for n in ids]
    return {
        "root": node_id,
        "depth": depth,
        "direction": direction,
        "relationships": sorted(kinds) if kinds is not None else None,
        "nodes": [{**node_result(node), "depth": depth_of[node.id]} for node in nodes if node],
        "edges": [edge.to_dict() for edge in edges],
        "count": len(ids),
        "truncated": truncated,
    }


def similarity_search(
    graph: GraphEngine, query: str, limit: int = 10, *, node_type: str | None = None
) -> dict[str, Any]:
    """Nodes most similar to `query` by embedding cosine (exact top-k; forgotten excluded)."""
    check_text("query", query, allow_empty=True)
    limit = check_int("limit", limit, 1, MAX_LIST_LIMIT)
    if node_type is not None:
        check_choice("node_type", node_type, NODE_TYPES)
    (vector,) = graph.embed_texts([query])
    with graph.lock:
        index = graph.vector_index()
        allow = None
        if node_type is not None:
            allow = set(graph.store.node_ids(node_type=node_type)).__contains__
        hits = index.search(vector, limit, allow=allow)
        nodes = graph.store.get_nodes([node_id for node_id, _ in hits])
    return {
        "query": query,
        "results": [
            {**node_result(nodes[node_id]), "similarity": round(score, 6)}
            for node_id, score in hits
            if node_id in nodes and nodes[node_id].forgotten_at is None
        ],
    }
