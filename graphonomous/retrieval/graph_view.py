"""Reading the stored graph for retrieval: batched per-call reads and a cached whole-graph view.

Two ways to see the graph, both hiding soft-forgotten nodes completely:

* `GraphReader` — one retrieval call's cache of node rows and incident edges,
  filled in batches (one SQL statement per BFS layer, never one per node).
  Used by everything that stays near the query's seeds.
* `GraphSnapshot` — every live node and edge, held in memory between calls
  and rebuilt only when the database changed (see `store_fingerprint`).
  Used by whole-graph work: full Personalized PageRank and evidence paths.

The relationship-kind weights of the association walks (PageRank and
Louvain) and of graph support live here, in `EDGE_KIND_WEIGHTS`, and nowhere
else; so does the list of structural (part-of) kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from ..engine import Engine
from ..engine.read_cache import ReadCache
from ..model import (
    AID_CREATION_SOURCES,
    AID_NODE_TYPES,
    RELATIONSHIP_KINDS,
    RELATIONSHIPS,
    Edge,
    Node,
)
from ..model import CAUSAL_RELATIONSHIPS as CAUSAL_KINDS
from ..model import STRUCTURAL_RELATIONSHIPS as STRUCTURAL_KINDS
from ..store import Store

# How strongly a walk follows an edge of each kind, multiplied by the edge's
# strength: `model.RelationshipKind.walk_weight` (reasons there), strongest first.
EDGE_KIND_WEIGHTS: Final[Mapping[str, float]] = {
    kind.name: kind.walk_weight
    for kind in sorted(RELATIONSHIP_KINDS, key=lambda kind: -kind.walk_weight)
}
assert set(EDGE_KIND_WEIGHTS) == set(RELATIONSHIPS), "one weight per relationship kind"

# Kinds along which a source node is a cause of its target: the edges that
# define `causal_context` (an outcome's `causal_parent_ids` count as well).
CAUSAL_RELATIONSHIPS: Final = CAUSAL_KINDS

# Kinds along which the source is a *part* of the target (a turn of a session,
# a chunk of a file): parts of one whole share context, so retrieval lets
# them support each other through the whole (`support.graph_support`).
STRUCTURAL_RELATIONSHIPS: Final = STRUCTURAL_KINDS
# Retrieval aids (model.AID_NODE_TYPES / AID_CREATION_SOURCES): the graph stages
# never walk into them.
assert set(STRUCTURAL_RELATIONSHIPS) <= set(RELATIONSHIPS)

WeightedGraph = dict[str, dict[str, float]]
Transitions = dict[str, list[tuple[str, float]]]

# The walk's unit of association: a node's edges carry its whole walk mass
# only once their weights (strength × kind weight) add up to this — one
# full-strength neutral edge.  Weaker neighbourhoods leak the rest (`walk_degrees`).
WALK_MIN_DEGREE: Final = 1.0


def edge_weight(edge: Edge) -> float:
    """Walk weight of one edge: strength × kind weight.  O(1)."""
    return edge.strength * EDGE_KIND_WEIGHTS[edge.relationship]


def store_fingerprint(store: Store) -> tuple[int, int]:
    """A value that changes whenever the database may have changed.

    ``total_changes()`` counts rows written through this connection (every
    write of this process goes through it); ``PRAGMA data_version`` changes
    when another connection (another process) commits.  O(1).
    """
    return store.fingerprint()


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


def walk_degrees(graph: WeightedGraph) -> dict[str, float]:
    """D̃(u) = max(`WALK_MIN_DEGREE`, Σ_v w(u, v)) for every node.  O(V + E).

    Dividing by D̃ instead of the plain weighted degree makes weak edges
    pass on little (two edges of strength 0.3 pass 0.3 each, not 0.5 each)
    while a node with many strong edges still splits its mass among them.
    """
    return {node: max(WALK_MIN_DEGREE, sum(arcs.values())) for node, arcs in graph.items()}


def leaky_transitions(graph: WeightedGraph, degrees: Mapping[str, float]) -> Transitions:
    """Walk transitions u → v with probability w(u, v) / D̃(u), neighbours in id order.

    Rows may sum to less than 1: the missing mass leaks (a push walk drops
    it).  A node without edges gets ``[(u, 0.0)]`` so that it, too, leaks
    everything instead of restarting.  O(V + E log E).
    """
    out: Transitions = {}
    for node in sorted(graph):
        arcs = sorted((v, w / degrees[node]) for v, w in graph[node].items() if w > 0.0)
        out[node] = arcs or [(node, 0.0)]
    return out


class GraphReader:
    """Node rows and incident edges for one retrieval call, loaded in batches.

    A node is *visible* when it is live (``forgotten_at`` is null) and, with
    `agent_id`, belongs to that agent; invisible nodes are never returned,
    traversed or analysed.  Each ``load_*`` method issues one query per
    `store.queries.ID_CHUNK` ids it has not seen yet.  Links are read light (no edge
    metadata) and their far ends are checked with a light visibility query
    (id and agent only), so walking past a node never parses its row; full
    rows are read only for nodes asked for with `node` / `load_nodes`.
    Given a current `GraphSnapshot`, links and visibility come from it (no
    SQL); node rows always come from the store.  Given the engine's
    `ReadCache` (valid while the database is unchanged, see engine.read_cache),
    rows, light edges, visibility and kinds read by earlier calls are taken
    from it and what is read is kept there: the same rows as the store's.
    """

    def __init__(
        self,
        store: Store,
        *,
        snapshot: GraphSnapshot | None = None,
        agent_id: str | None = None,
        cache: ReadCache | None = None,
    ) -> None:
        self.store = store
        self._snapshot = snapshot
        self._agent_id = agent_id
        self._cache = cache
        self._nodes: dict[str, Node | None] = {}
        self._visible: dict[str, bool] = {}
        self._aid: dict[str, bool] = {}
        self._links: dict[str, list[Link]] = {}

    def is_visible(self, node: Node) -> bool:
        """The visibility rule applied to a row.  O(1)."""
        return node.forgotten_at is None and (
            self._agent_id is None or node.agent_id == self._agent_id
        )

    def load_nodes(self, node_ids: Iterable[str]) -> None:
        """Fetch the rows of ids not fetched yet (one query per 900 ids)."""
        missing = [node_id for node_id in node_ids if node_id not in self._nodes]
        if not missing:
            return
        found = self._rows(missing)
        for node_id in missing:
            node = found.get(node_id)
            shown = node is not None and self.is_visible(node)
            self._nodes[node_id] = node if shown else None
            self._visible[node_id] = shown

    def _rows(self, node_ids: Sequence[str]) -> dict[str, Node]:
        """`Store.get_nodes` through the read cache."""
        if self._cache is None:
            return self.store.get_nodes(node_ids)
        table = self._cache.table(_NODE_ROWS)
        unknown = [node_id for node_id in node_ids if node_id not in table]
        if unknown:
            found = self.store.get_nodes(unknown)
            table.update((node_id, found.get(node_id)) for node_id in unknown)
        return {node_id: row for node_id in node_ids if (row := table[node_id]) is not None}

    def _cached(
        self, name: str, node_ids: Sequence[str], fetch: Callable[[list[str]], dict[str, Any]]
    ) -> dict[str, Any]:
        """``{id: value}`` for the ids `fetch` (one store read) knows, through the read cache."""
        if self._cache is None:
            return fetch(list(node_ids))
        table = self._cache.table(name)
        unknown = [node_id for node_id in node_ids if node_id not in table]
        if unknown:
            found = fetch(unknown)
            table.update((node_id, found.get(node_id)) for node_id in unknown)
        return {node_id: value for node_id in node_ids if (value := table[node_id]) is not None}

    def node(self, node_id: str) -> Node | None:
        """The row of a visible node, or None (loads it if needed)."""
        if node_id not in self._nodes:
            self.load_nodes([node_id])
        return self._nodes[node_id]

    def _load_visibility(self, node_ids: Iterable[str]) -> None:
        """Visibility of ids not known yet, from their id and agent only (no row parsing)."""
        missing = sorted({node_id for node_id in node_ids if node_id not in self._visible})
        rows = self._cached(_VISIBILITY, missing, self._visibility_rows)
        live = {node_id: agent for node_id, (agent, forgotten) in rows.items() if not forgotten}
        for node_id in missing:
            self._visible[node_id] = node_id in live and (
                self._agent_id is None or live[node_id] == self._agent_id
            )

    def _visibility_rows(self, node_ids: list[str]) -> dict[str, tuple[str, Any]]:
        return {
            node_id: (agent, forgotten)
            for node_id, agent, forgotten in self.store.node_visibility(node_ids)
        }

    def visible(self, node_id: str) -> bool:
        """Whether a node exists for this call (light query if not known yet)."""
        snapshot = self._snapshot
        if snapshot is not None:
            return node_id in snapshot.live and (
                self._agent_id is None or snapshot.agent[node_id] == self._agent_id
            )
        if node_id not in self._visible:
            self._load_visibility([node_id])
        return self._visible[node_id]

    def _load_aids(self, node_ids: Iterable[str]) -> None:
        """Whether ids not classified yet are retrieval aids (outcomes, consolidation
        summaries: `AID_NODE_TYPES`, `AID_CREATION_SOURCES`).  Light query."""
        missing = sorted({node_id for node_id in node_ids if node_id not in self._aid})
        kinds = self._cached(_KINDS, missing, self.store.node_kinds)
        for node_id in missing:
            node_type, source = kinds.get(node_id, ("", ""))
            self._aid[node_id] = node_type in AID_NODE_TYPES or source in AID_CREATION_SOURCES

    def load_links(self, node_ids: Iterable[str]) -> None:
        """Fetch the edges of ids not fetched yet; keep links whose other end is visible.

        Links to retrieval aids are dropped: an outcome node or a summary points
        at knowledge, and walking into it would crowd a node's real neighbours
        out of its strongest few (retrieval.experience handles aids).
        """
        missing = sorted({n for n in node_ids if n not in self._links})
        if not missing:
            return
        # The links kept are a function of rows the read cache holds (edges, the
        # neighbours' visibility for this agent, their kinds): kept there as well,
        # so a warm call re-derives none of them (the lists are read-only).
        kept = None if self._snapshot is not None else self._kept_links()
        if kept is not None:
            agent = self._agent_id
            for node_id in missing:
                known = kept.get((agent, node_id))
                if known is not None:
                    self._links[node_id] = known
            missing = [node_id for node_id in missing if node_id not in self._links]
            if not missing:
                return
        if self._snapshot is not None:
            every = self._snapshot.links()
            found = {
                node_id: [link for link in every.get(node_id, []) if self.visible(link.neighbor)]
                for node_id in missing
            }
        else:
            edges = self._light_edges(missing)
            self._load_visibility({e.source_id for e in edges} | {e.target_id for e in edges})
            grouped = links_by_node(edges, set(missing).__contains__)
            found = {
                node_id: [link for link in grouped.get(node_id, []) if self._visible[link.neighbor]]
                for node_id in missing
            }
        self._load_aids({link.neighbor for links in found.values() for link in links})
        for node_id in missing:
            self._links[node_id] = [link for link in found[node_id] if not self._aid[link.neighbor]]
            if kept is not None:
                kept[(self._agent_id, node_id)] = self._links[node_id]

    def _kept_links(self) -> dict[tuple[str | None, str], list[Link]] | None:
        """The read cache's table of `load_links` results by (agent, id) (None: no cache)."""
        return None if self._cache is None else self._cache.table(_KEPT_LINKS)

    def links_among(self, node_ids: Iterable[str]) -> dict[str, list[Link]]:
        """Links between the given visible nodes, plus their structural links to visible wholes.

        What graph support reads: for every id, its links to the other ids
        (both directions) and its outgoing `STRUCTURAL_RELATIONSHIPS` links
        (``v part_of P``).  Ids must be visible nodes.  Reads only the
        out-edges of the ids (one light query per `store.queries.ID_CHUNK` ids), not the
        rows of their neighbours; the wholes' visibility is checked with the
        light query.  Output: ``{id: links strongest first}`` for ids with
        any.  O(out-edges of the ids).
        """
        members = set(node_ids)
        if self._snapshot is not None:
            every = self._snapshot.links()
            candidates = {
                node_id: [
                    link
                    for link in every.get(node_id, [])
                    if link.neighbor in members
                    or (link.outgoing and link.relationship in STRUCTURAL_RELATIONSHIPS)
                ]
                for node_id in sorted(members)
            }
        else:
            edges = [
                edge
                for edge in self._light_edges(sorted(members), outgoing_only=True)
                if edge.target_id in members or edge.relationship in STRUCTURAL_RELATIONSHIPS
            ]
            candidates = links_by_node(edges, members.__contains__)
        wholes = {
            link.neighbor
            for links in candidates.values()
            for link in links
            if link.neighbor not in members
        }
        self._load_visibility(wholes - set(self._visible))
        out = {}
        for node_id, links in sorted(candidates.items()):
            kept = [
                link for link in links if link.neighbor in members or self.visible(link.neighbor)
            ]
            if kept:
                out[node_id] = kept
        return out

    def wholes_of(self, node_ids: Iterable[str]) -> dict[str, frozenset[str]]:
        """The wholes each id is a part of (its outgoing `STRUCTURAL_RELATIONSHIPS` targets).

        Ids need not be visible (the structure of a conversation is a fact about
        who took part in it, whoever may read its turns); the wholes are.
        Output: ``{id: wholes}`` for ids with any.  O(out-edges of the ids).
        """
        members = sorted(set(node_ids))
        found: dict[str, set[str]] = {}
        if self._snapshot is not None:
            every = self._snapshot.links()
            for node_id in members:
                for link in every.get(node_id, []):
                    if link.outgoing and link.relationship in STRUCTURAL_RELATIONSHIPS:
                        found.setdefault(node_id, set()).add(link.neighbor)
        else:
            for edge in self._light_edges(members, outgoing_only=True):
                if edge.relationship in STRUCTURAL_RELATIONSHIPS:
                    found.setdefault(edge.source_id, set()).add(edge.target_id)
        wholes = {whole for parts in found.values() for whole in parts}
        self._load_visibility(wholes - set(self._visible))
        out = {}
        for node_id, parts in sorted(found.items()):
            kept = frozenset(whole for whole in parts if self.visible(whole))
            if kept:
                out[node_id] = kept
        return out

    def parts_of(self, wholes: Iterable[str]) -> dict[str, frozenset[str]]:
        """The parts of each whole (sources of structural edges into it), for wholes with any.

        Visible or not, like `wholes_of` (a fact about the structure).  O(edges
        touching the wholes).
        """
        targets = sorted(set(wholes))
        found: dict[str, set[str]] = {}
        if self._snapshot is not None:
            every = self._snapshot.links()
            for whole in targets:
                for link in every.get(whole, []):
                    if not link.outgoing and link.relationship in STRUCTURAL_RELATIONSHIPS:
                        found.setdefault(whole, set()).add(link.neighbor)
        else:
            chosen = set(targets)
            for edge in self._light_edges(targets):
                if edge.target_id in chosen and edge.relationship in STRUCTURAL_RELATIONSHIPS:
                    found.setdefault(edge.target_id, set()).add(edge.source_id)
        return {whole: frozenset(parts) for whole, parts in sorted(found.items())}

    def _light_edges(self, node_ids: Sequence[str], *, outgoing_only: bool = False) -> list[Edge]:
        """Edges touching the ids (or leaving them), by id, without metadata (not needed here)."""
        if self._cache is not None:
            return self._cached_light_edges(node_ids, outgoing_only)
        return [
            Edge(
                id=e.id,
                source_id=e.source_id,
                target_id=e.target_id,
                relationship=e.relationship,
                strength=e.strength,
            )
            for e in self.store.light_edges(node_ids, outgoing_only=outgoing_only)
        ]

    def _cached_light_edges(self, node_ids: Sequence[str], outgoing_only: bool) -> list[Edge]:
        """`_light_edges` from the read cache's edges touching each id (those of ids
        not seen yet read in one `Store.light_edges`): the same edges, by id."""
        assert self._cache is not None
        table = self._cache.table(_TOUCHING)
        unknown = sorted({node_id for node_id in node_ids if node_id not in table})
        if unknown:
            fresh: dict[str, list[Edge]] = {node_id: [] for node_id in unknown}
            for e in self.store.light_edges(unknown):
                edge = Edge(
                    id=e.id,
                    source_id=e.source_id,
                    target_id=e.target_id,
                    relationship=e.relationship,
                    strength=e.strength,
                )
                for end in {e.source_id, e.target_id}:
                    if end in fresh:
                        fresh[end].append(edge)
            table.update(fresh)
        ids = set(node_ids)
        found = {
            edge.id: edge
            for node_id in ids
            for edge in table[node_id]
            if not outgoing_only or edge.source_id in ids
        }
        return [found[key] for key in sorted(found)]

    def edges_between(self, node_ids: Iterable[str]) -> list[Edge]:
        """`Store.list_edges_between` (full edges, both ends among the ids, by id),
        through the read cache of each id's leaving edges."""
        if self._cache is None:
            return self.store.list_edges_between(node_ids)
        wanted = set(node_ids)
        leaving = self._cached(_LEAVING, sorted(wanted), self.store.edges_leaving)
        found = [edge for edges in leaving.values() for edge in edges if edge.target_id in wanted]
        found.sort(key=lambda edge: edge.id)
        return found

    def links(self, node_id: str) -> list[Link]:
        """Links of a node to visible neighbours, strongest first (loads them if needed)."""
        if node_id not in self._links:
            self.load_links([node_id])
        return self._links[node_id]


# The `ReadCache` tables of `GraphReader`: node rows (None: no row), (agent_id,
# forgotten_at) per id, (node_type, source) per id, light edges touching an id,
# full edges leaving an id, `load_links`' result per (agent_id, id).
_NODE_ROWS: Final = "retrieval.nodes"
_VISIBILITY: Final = "retrieval.visibility"
_KINDS: Final = "retrieval.kinds"
_TOUCHING: Final = "retrieval.touching"
_LEAVING: Final = "retrieval.leaving"
_KEPT_LINKS: Final = "retrieval.kept_links"


def _shallow_copy(node: Node) -> Node:
    """`copy.copy` of a row (the same field values, containers shared) without the
    pickle protocol's detour: 3x faster, and it runs for every result of every call."""
    bumped: Node = object.__new__(type(node))
    bumped.__dict__.update(node.__dict__)
    return bumped


def patch_accessed(cache: ReadCache, node_ids: Iterable[str], now: str) -> None:
    """Apply `Store.bump_access(node_ids, now)` to the cached node rows (each id once)."""
    rows = cache.peek(_NODE_ROWS)
    if rows is None:
        return
    for node_id in set(node_ids):
        node = rows.get(node_id)
        if node is not None:
            bumped = _shallow_copy(node)  # a new row: rows handed out earlier stay as read
            bumped.access_count += 1
            bumped.last_accessed_at = now
            rows[node_id] = bumped


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
    _walk: tuple[Transitions, dict[str, float]] | None = field(default=None, repr=False)

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

    def walk(self) -> tuple[Transitions, dict[str, float]]:
        """`leaky_transitions` and `walk_degrees` of `weighted` (cached)."""
        if self._walk is None:
            degrees = walk_degrees(self.weighted())
            self._walk = (leaky_transitions(self.weighted(), degrees), degrees)
        return self._walk


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


# What retrieval and learning are handed: the engine of one SQLite graph with
# this module's snapshot.  Never the facade (`api.Graphonomous`): the layers
# below it take the engine, so nothing calls a tool back up.
GraphEngine: TypeAlias = Engine[Store, GraphSnapshot]
