"""Reading the stored graph for retrieval: batched per-call reads and a cached whole-graph view.

Two ways to see the graph, both hiding soft-forgotten nodes completely:

* `GraphReader` — one retrieval call's cache of node rows and incident edges,
  filled in batches (one SQL statement per BFS layer, never one per node).
  Used by everything that stays near the query's seeds.
* `GraphSnapshot` — every live node and edge, held in memory between calls
  and rebuilt only when the database changed (see `store_fingerprint`).
  Used by whole-graph work: full Personalized PageRank and evidence paths.

The relationship-kind weights of the association walks (PageRank and
Louvain) live here, in `EDGE_KIND_WEIGHTS`, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from ..algorithms.push import transitions_of
from ..model import RELATIONSHIPS, Edge, Node
from ..store import Store

# How strongly a walk follows an edge of each kind, multiplied by the edge's
# strength (seed 002's table adapted to our 17 kinds).  Justifications and
# derivations carry the most evidence, dependencies and causal links next;
# structural and temporal links are neutral; loose associations are damped;
# a contradiction is almost a wall (0.01 keeps the graph connected for the
# walk while letting nearly no mass through); supersession points at stale
# knowledge, so it is low.
EDGE_KIND_WEIGHTS: Final[Mapping[str, float]] = {
    "supports": 1.5,
    "derived_from": 1.5,
    "depends_on": 1.4,
    "causal": 1.3,
    "causes": 1.3,
    "resolves": 1.3,
    "part_of": 1.2,
    "follows": 1.0,
    "temporal_before": 1.0,
    "temporal_after": 1.0,
    "related": 0.8,
    "related_to": 0.8,
    "similar_to": 0.8,
    "co_occurs": 0.8,
    "supersedes": 0.2,
    "superseded_by": 0.2,
    "contradicts": 0.01,
}
assert set(EDGE_KIND_WEIGHTS) == set(RELATIONSHIPS), "one weight per relationship kind"

# Kinds along which a source node is a cause of its target: the edges that
# define `causal_context` (an outcome's `causal_parent_ids` count as well).
CAUSAL_RELATIONSHIPS: Final = ("causal", "causes", "resolves")

WeightedGraph = dict[str, dict[str, float]]


def edge_weight(edge: Edge) -> float:
    """Walk weight of one edge: strength × kind weight.  O(1)."""
    return edge.strength * EDGE_KIND_WEIGHTS[edge.relationship]


def store_fingerprint(store: Store) -> tuple[int, int]:
    """A value that changes whenever the database may have changed.

    ``total_changes()`` counts rows written through this connection (every
    write of this process goes through it); ``PRAGMA data_version`` changes
    when another connection (another process) commits.  O(1).
    """
    return int(store.scalar("SELECT total_changes()")), int(store.scalar("PRAGMA data_version"))


@dataclass(frozen=True)
class Link:
    """One edge as seen from one endpoint: the other endpoint and the edge's facts."""

    neighbor: str
    edge_id: str
    relationship: str
    strength: float
    outgoing: bool  # True when the edge runs from the viewing node to `neighbor`


def _link_order(link: Link) -> tuple[float, str, str]:
    return (-link.strength, link.neighbor, link.edge_id)


def links_by_node(edges: Iterable[Edge], wanted: Callable[[str], bool]) -> dict[str, list[Link]]:
    """Group edges by endpoint: ``{node: [Link, ...]}`` for endpoints where ``wanted`` holds.

    Links are sorted strongest first, then by neighbour id and edge id.  O(E log E).
    """
    grouped: dict[str, list[Link]] = {}
    for edge in edges:
        if wanted(edge.source_id):
            grouped.setdefault(edge.source_id, []).append(
                Link(edge.target_id, edge.id, edge.relationship, edge.strength, True)
            )
        if wanted(edge.target_id):
            grouped.setdefault(edge.target_id, []).append(
                Link(edge.source_id, edge.id, edge.relationship, edge.strength, False)
            )
    for links in grouped.values():
        links.sort(key=_link_order)
    return grouped


def weighted_graph(nodes: Iterable[str], edges: Iterable[Edge]) -> WeightedGraph:
    """The undirected association graph of the walks: ``{u: {v: weight}}``, symmetric.

    Every node is a key (isolated ones map to ``{}``).  Parallel edges add up;
    edges with an endpoint outside ``nodes``, self-loops and zero-weight edges
    are left out.  Direction is ignored on purpose: for recall a claim should
    pull its justification as much as the justification pulls the claim; κ
    (topology) is where direction matters.  O(V + E).
    """
    graph: WeightedGraph = {node: {} for node in nodes}
    for edge in edges:
        source, target = edge.source_id, edge.target_id
        if source == target or source not in graph or target not in graph:
            continue
        weight = edge_weight(edge)
        if weight <= 0.0:
            continue
        graph[source][target] = graph[source].get(target, 0.0) + weight
        graph[target][source] = graph[target].get(source, 0.0) + weight
    return graph


class GraphReader:
    """Node rows and incident edges for one retrieval call, loaded in batches.

    ``visible(node)`` decides which nodes exist for this call (live, and of
    `agent_id` when given); invisible nodes are never returned, traversed or
    analysed.  Each ``load_*`` method issues one query for all ids it has not
    seen yet.  Given a current `GraphSnapshot`, links and visibility come
    from it (no SQL); node rows always come from the store.
    """

    def __init__(
        self,
        store: Store,
        visible: Callable[[Node], bool],
        *,
        snapshot: GraphSnapshot | None = None,
        agent_id: str | None = None,
    ) -> None:
        self.store = store
        self._visible = visible
        self._snapshot = snapshot
        self._agent_id = agent_id
        self._nodes: dict[str, Node | None] = {}
        self._links: dict[str, list[Link]] = {}

    def load_nodes(self, node_ids: Iterable[str]) -> None:
        """Fetch the rows of ids not fetched yet (one query per 900 ids)."""
        missing = [node_id for node_id in node_ids if node_id not in self._nodes]
        if not missing:
            return
        found = self.store.get_nodes(missing)
        for node_id in missing:
            node = found.get(node_id)
            self._nodes[node_id] = node if node is not None and self._visible(node) else None

    def node(self, node_id: str) -> Node | None:
        """The row of a visible node, or None (loads it if needed)."""
        if node_id not in self._nodes:
            self.load_nodes([node_id])
        return self._nodes[node_id]

    def visible(self, node_id: str) -> bool:
        snapshot = self._snapshot
        if snapshot is not None:
            return node_id in snapshot.live and (
                self._agent_id is None or snapshot.agent[node_id] == self._agent_id
            )
        return self.node(node_id) is not None

    def load_links(self, node_ids: Iterable[str]) -> None:
        """Fetch the edges of ids not fetched yet; keep links whose other end is visible."""
        missing = sorted({n for n in node_ids if n not in self._links})
        if not missing:
            return
        if self._snapshot is not None:
            every = self._snapshot.links()
            for node_id in missing:
                self._links[node_id] = [
                    link for link in every.get(node_id, []) if self.visible(link.neighbor)
                ]
            return
        wanted = set(missing)
        edges = self.store.edges_touching(missing)
        self.load_nodes(
            sorted({edge.source_id for edge in edges} | {edge.target_id for edge in edges})
        )
        grouped = links_by_node(edges, wanted.__contains__)
        for node_id in missing:
            self._links[node_id] = [
                link for link in grouped.get(node_id, []) if self._nodes.get(link.neighbor)
            ]

    def links(self, node_id: str) -> list[Link]:
        """Links of a node to visible neighbours, strongest first (loads them if needed)."""
        if node_id not in self._links:
            self.load_links([node_id])
        return self._links[node_id]


@dataclass
class GraphSnapshot:
    """Every live node and every edge between live nodes, for whole-graph algorithms.

    Built by `build_snapshot`; the facade keeps one and rebuilds it when
    `store_fingerprint` differs from ``fingerprint``.  Derived structures are
    computed on first use and kept with the snapshot.
    """

    fingerprint: tuple[int, int]
    confidence: dict[str, float]  # every live node -> its confidence
    agent: dict[str, str]  # every live node -> its agent_id
    edges: list[Edge]  # between live nodes, by id; metadata is not loaded ({})
    _links: dict[str, list[Link]] | None = field(default=None, repr=False)
    _weighted: WeightedGraph | None = field(default=None, repr=False)
    _transitions: dict[str, list[tuple[str, float]]] | None = field(default=None, repr=False)

    @property
    def live(self) -> Mapping[str, float]:
        """The live node ids (a mapping, so ``in`` is O(1))."""
        return self.confidence

    def links(self) -> dict[str, list[Link]]:
        """``{node: [Link, ...]}`` over all live edges (strongest first)."""
        if self._links is None:
            self._links = links_by_node(self.edges, self.live.__contains__)
        return self._links

    def weighted(self) -> WeightedGraph:
        """The undirected association graph over every live node (`weighted_graph`)."""
        if self._weighted is None:
            self._weighted = weighted_graph(sorted(self.live), self.edges)
        return self._weighted

    def transitions(self) -> dict[str, list[tuple[str, float]]]:
        """Row-normalised walk transitions of `weighted` (`walk.transitions_of`)."""
        if self._transitions is None:
            self._transitions = transitions_of(self.weighted())
        return self._transitions


def build_snapshot(store: Store) -> GraphSnapshot:
    """Read every live node's confidence and agent, and every edge between live nodes.

    Complexity: O(V + E log E) (edges sorted by id for a deterministic order).
    """
    fingerprint = store_fingerprint(store)
    facts = store.live_node_facts()
    confidence = {node_id: conf for node_id, conf, _ in facts}
    agent = {node_id: agent_id for node_id, _, agent_id in facts}
    kept = [
        edge
        for edge in store.edges_without_metadata()
        if edge.source_id in confidence
        and edge.target_id in confidence
        and edge.source_id != edge.target_id
    ]
    return GraphSnapshot(fingerprint, confidence, agent, kept)
