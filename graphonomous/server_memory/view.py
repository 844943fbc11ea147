"""server-memory's entities and relations as a view over our graph.

Mapping (spec/memory-compat.md §2):

* entity → one live node of the default agent, ``node_type`` semantic, with
  ``metadata.entity_name``, ``metadata.entity_type`` and
  ``metadata.observations`` (the authoritative list).  Its ``content`` is
  ``"name (entityType): obs1; obs2"`` so similarity search finds it too.
  If several nodes carry one name, the oldest is the entity.
* relation ``{from, to, relationType}`` → the edge between the two entity
  nodes whose ``relationship`` is :func:`relationship_for` (relationType).
  ``(source, target, relationship)`` is unique in our store and two relation
  types may map to one kind, so ``metadata.relation_types`` maps every
  relationType the edge carries to its *stamp* (a UUIDv7 made when the
  relation was created; relations are listed in stamp order, i.e. creation
  order, as server-memory lists them).  An edge without that map (made by
  other tools) shows as one relation named by its relationship.
* a self-relation (from = to; our edges cannot be self-loops) → the entity
  node's ``metadata.self_relations``, the same relationType → stamp map.
* a relation naming a name that is no entity (yet), as server-memory accepts →
  a *dangling* row kept by name in the store (``Store.dangling_relations``),
  stamped likewise; when both of its names are entities it becomes an edge with
  the same stamp, so its place in every listing does not move.

Where server-memory is sloppy we are strict: one name is created once even
if a call repeats it; every call is one transaction, so pipelined or
concurrent calls never lose writes.

:class:`MemoryView` keeps no copy of the graph: every call queries the store
(entities by name through an index, relations through the edges between entity
nodes; whole-graph reads a page at a time), so memory does not grow with the
graph; only small read_graph answers are cached, checked against SQLite's
change counters on every call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final

from ..hygiene import refuse_nul
from ..model import (
    DEFAULT_AGENT_ID,
    MAX_CONTENT_CHARS,
    NODE_TYPES,
    RELATIONSHIPS,
    ValidationError,
    new_id,
)
from .jsonl import IMPORT_CHUNK, MemoryFile, chunked
from .names import NameSet

if TYPE_CHECKING:
    from ..api import Graphonomous

# Entities are facts about named things: semantic memory.
ENTITY_NODE_TYPE: Final = NODE_TYPES[NODE_TYPES.index("semantic")]
# The memory tools have no agent argument; everything they touch is this agent's.
MEMORY_AGENT_ID: Final = DEFAULT_AGENT_ID
FALLBACK_RELATIONSHIP: Final = RELATIONSHIPS[RELATIONSHIPS.index("related_to")]
ENTITY_METADATA_KEYS: Final = ("entity_name", "entity_type", "observations", "self_relations")
RELATION_METADATA_KEY: Final = "relation_types"
# Separates the fields of an entity's search text; a query containing it is
# matched field by field instead (see Entity.matches).
_FIELD_SEPARATOR: Final = "\x00"
# read_graph keeps its last answer (until the graph changes) only up to this many
# entities + relations: agents re-read their graph often, and an answer holds about
# 0.5 KB per item (measured: 25K items, 13 MB), so the cache is at most ~26 MB however
# large the graph grows.
READ_GRAPH_CACHE_ITEMS: Final = 50_000

# Common relation verbs of memory graphs → our relationship kinds.  Keys are
# normalised by normalize_relation_type; every kind also maps from its own name.
_RELATION_VERBS: Final[Mapping[str, str]] = {
    "cause": "causes",
    "leads to": "causes",
    "results in": "causes",
    "triggers": "causes",
    "depend on": "depends_on",
    "requires": "depends_on",
    "relies on": "depends_on",
    "needs": "depends_on",
    "is part of": "part_of",
    "belongs to": "part_of",
    "member of": "part_of",
    "is member of": "part_of",
    "is a member of": "part_of",
    "conflicts with": "contradicts",
    "precedes": "temporal_before",
    "before": "temporal_before",
    "after": "temporal_after",
    "fixes": "resolves",
    "solves": "resolves",
    "based on": "derived_from",
    "is based on": "derived_from",
    "replaces": "supersedes",
    "replaced by": "superseded_by",
    "is replaced by": "superseded_by",
    "is similar to": "similar_to",
    "relates to": "related_to",
    "is related to": "related_to",
    "associated with": "related_to",
    "is associated with": "related_to",
    "co occurs with": "co_occurs",
}


def normalize_relation_type(relation_type: str) -> str:
    """Lower case, ``_``/``-`` as spaces, whitespace collapsed: ``"Part_Of"`` → ``"part of"``."""
    return " ".join(relation_type.lower().replace("_", " ").replace("-", " ").split())


def _relation_table() -> dict[str, str]:
    table = {normalize_relation_type(kind): kind for kind in RELATIONSHIPS}
    for verb, kind in _RELATION_VERBS.items():
        if kind not in RELATIONSHIPS:
            raise ValueError(f"relation verb {verb!r} maps to unknown relationship {kind!r}")
        table.setdefault(normalize_relation_type(verb), kind)
    return table


RELATION_TABLE: Final[Mapping[str, str]] = _relation_table()


def relationship_for(relation_type: str) -> str:
    """Our relationship kind for a memory relationType.

    Input: any string.  Output: the kind :data:`RELATION_TABLE` gives its
    normalised form, else ``related_to``.  O(len(relation_type)).
    """
    return RELATION_TABLE.get(normalize_relation_type(relation_type), FALLBACK_RELATIONSHIP)


def entity_content(name: str, entity_type: str, observations: Sequence[str]) -> str:
    """The node content of an entity: ``"name (entityType): obs1; obs2"``."""
    head = f"{name} ({entity_type})"
    return f"{head}: {'; '.join(observations)}" if observations else head


def _unique(items: Iterable[str]) -> list[str]:
    """`items` without repeats, first occurrence kept."""
    return list(dict.fromkeys(items))


def _name_list(names: Iterable[str]) -> str:
    return ", ".join(json.dumps(name, ensure_ascii=False) for name in names)


def _stamps(value: object) -> dict[str, str]:
    """A stored relationType → stamp map, or {} when `value` is not one."""
    if isinstance(value, dict) and all(isinstance(s, str) for s in value.values()):
        return dict(value)
    return {}


# --------------------------------------------------------------------------
# Records of the view
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Entity:
    """One entity as the memory tools see it (a node with entity metadata)."""

    node_id: str
    name: str
    entity_type: str
    observations: tuple[str, ...]
    # relationType → stamp of the relations from this entity to itself.
    self_relations: Mapping[str, str] = field(default_factory=dict)
    # The node's other metadata keys, kept when the entity changes.
    extra: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def search_text(self) -> str:
        """Lower-case name, type and observations joined by _FIELD_SEPARATOR (made on
        first use: read_graph never needs it)."""
        parts = (self.name, self.entity_type, *self.observations)
        return _FIELD_SEPARATOR.join(parts).lower()

    def matches(self, query: str) -> bool:
        """server-memory's test: the lower-cased query is a substring of the lower-cased
        name, type or one observation.  `query` must already be lower case."""
        if _FIELD_SEPARATOR not in query:
            return query in self.search_text
        fields = (self.name, self.entity_type, *self.observations)
        return any(query in text.lower() for text in fields)

    def content(self) -> str:
        return entity_content(self.name, self.entity_type, self.observations)

    def metadata(self) -> dict[str, Any]:
        out = {
            **self.extra,
            "entity_name": self.name,
            "entity_type": self.entity_type,
            "observations": list(self.observations),
        }
        if self.self_relations:
            out["self_relations"] = dict(self.self_relations)
        return out

    def node_fields(self, source: str | None) -> dict[str, Any]:
        """The add_node fields of a new entity node."""
        return {
            "id": self.node_id,
            "node_type": ENTITY_NODE_TYPE,
            "content": self.content(),
            "metadata": self.metadata(),
            "source": source,
            "agent_id": MEMORY_AGENT_ID,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entityType": self.entity_type,
            "observations": list(self.observations),
        }


@dataclass(frozen=True)
class Link:
    """One edge between two entities, carrying one or more relation types
    (`relation_types`: relationType → stamp)."""

    edge_id: str
    source: str  # entity names
    target: str
    relationship: str
    relation_types: Mapping[str, str]
    # The edge's other metadata keys, kept when the relation types change.
    extra: Mapping[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        return {**self.extra, RELATION_METADATA_KEY: dict(self.relation_types)}


def _entity_from_node(node_id: str, metadata: Mapping[str, Any]) -> Entity | None:
    """The entity a node stands for, or None when it has no string entity_name."""
    name = metadata.get("entity_name")
    if not isinstance(name, str):
        return None
    entity_type = metadata.get("entity_type")
    observations = metadata.get("observations")
    if not isinstance(observations, list):
        observations = []
    return Entity(
        node_id,
        name,
        entity_type if isinstance(entity_type, str) else "",
        tuple(_unique(o for o in observations if isinstance(o, str))),
        _stamps(metadata.get("self_relations")),
        {k: v for k, v in metadata.items() if k not in ENTITY_METADATA_KEYS},
    )


# Characters a stored JSON text shows as themselves (canonical_json escapes non-ASCII,
# quotes, backslashes and control characters), and the escapes of the two characters
# whose lower case holds an ASCII letter (U+0130 → "i̇", U+212A KELVIN SIGN → "k").
_LITERAL_IN_JSON: Final = frozenset(chr(c) for c in range(0x20, 0x7F)) - {'"', "\\"}
_ASCII_LOWERING_ESCAPES: Final = ("\\u0130", "\\u212a")


def _prefilter(needle: str) -> tuple[str, ...]:
    """Strings one of which the lower-cased metadata JSON text of any entity matching
    the lower-case `needle` contains; () when no such test is safe.  A needle of literal
    characters found in a field's lower case is a run of literal characters of the
    lower-cased JSON text too — unless it came from a character lowering to ASCII,
    whose escape is then present."""
    if not needle or not set(needle) <= _LITERAL_IN_JSON:
        return ()
    return (needle, *_ASCII_LOWERING_ESCAPES)


def _may_match(needle: str, text: str) -> bool:
    """The prefilter on one stored JSON text (what the store's query tests)."""
    terms = _prefilter(needle)
    lowered = text.lower()
    return not terms or any(term in lowered for term in terms)


def _link_from_edge(
    edge_id: str, source: str, target: str, relationship: str, metadata: Mapping[str, Any]
) -> Link:
    """An edge between two entities; without a stored relationType map (made by other
    tools) it carries one relation named by its relationship, stamped with its id."""
    kinds = _stamps(metadata.get(RELATION_METADATA_KEY)) or {relationship: edge_id}
    extra = {k: v for k, v in metadata.items() if k != RELATION_METADATA_KEY}
    return Link(edge_id, source, target, relationship, kinds, extra)


# One relation of a listing: (stamp, (from, to, relationType)); listings sort by stamp.
_Stamped = tuple[str, tuple[str, str, str]]


def _self_stamped(entity: Entity, kinds: Iterable[str]) -> list[_Stamped]:
    name = entity.name
    return [(entity.self_relations[k], (name, name, k)) for k in kinds]


def _link_stamped(link: Link, kinds: Iterable[str]) -> list[_Stamped]:
    return [(link.relation_types[k], (link.source, link.target, k)) for k in kinds]


def _listing(stamped: list[_Stamped]) -> list[dict[str, str]]:
    """Relations in stamp (creation) order, each (from, to, relationType) once (at its
    first stamp).  Sorts `stamped` in place.  O(R log R)."""
    stamped.sort()
    keys = dict.fromkeys(key for _, key in stamped)
    # (dict literals inline: this list can hold every relation of the graph)
    return [{"from": source, "to": target, "relationType": kind} for source, target, kind in keys]


# A relation by names: (from, to, relationType).
_Triple = tuple[str, str, str]


@dataclass
class _Change:
    """Everything one tool call writes; applied by MemoryView._commit in one transaction."""

    # name → entity, in creation order
    new_entities: dict[str, Entity] = field(default_factory=dict)
    # name → the entity as it will be
    updated_entities: dict[str, Entity] = field(default_factory=dict)
    removed_entities: list[str] = field(default_factory=list)
    # (from, to, relationship) → a new link
    new_links: dict[tuple[str, str, str], Link] = field(default_factory=dict)
    # edge id → the link as it will be (no relation types left: the edge goes)
    updated_links: dict[str, Link] = field(default_factory=dict)
    # dangling relations to keep (triple → stamp) and the stamps of those that go
    new_dangling: dict[_Triple, str] = field(default_factory=dict)
    removed_dangling: list[str] = field(default_factory=list)
    # names whose dangling relations all go (delete_entities)
    cleared_names: list[str] = field(default_factory=list)

    def current(self, name: str, view: MemoryView) -> Entity | None:
        """The entity named `name` with this change's edits so far (None: unknown)."""
        if name in self.updated_entities:
            return self.updated_entities[name]
        if name in self.new_entities:
            return self.new_entities[name]
        return view.entity(name)

    def put(self, entity: Entity) -> None:
        """Record the edited `entity` (a planned new one is replaced in place)."""
        if entity.name in self.new_entities:
            self.new_entities[entity.name] = entity
        else:
            self.updated_entities[entity.name] = entity

    def is_empty(self) -> bool:
        return not (
            self.new_entities
            or self.updated_entities
            or self.removed_entities
            or self.new_links
            or self.updated_links
            or self.new_dangling
            or self.removed_dangling
            or self.cleared_names
        )


# --------------------------------------------------------------------------
# The view
# --------------------------------------------------------------------------


class MemoryView:
    """The entities and relations of one graph, as server-memory's tools see them.

    Holds no copy of the graph: every call reads the store (entities by name
    through ``idx_nodes_entity_name``, relations through the edges between
    entity nodes; see the ``entity_*`` methods of the store), so memory does
    not grow with the graph.  What it keeps is bounded: the entities and links
    looked up during the current call (dropped when the call ends) and
    :meth:`read_graph`'s last answer when that answer is small
    (READ_GRAPH_CACHE_ITEMS), tagged with a *change token* (SQLite's
    ``total_changes()`` of our connection and ``PRAGMA data_version``, which
    moves when another connection commits) so it is never stale.  Writes run
    under the facade lock inside one ``BEGIN IMMEDIATE`` transaction and are
    planned against the store as of that transaction, so concurrent calls and
    other processes sharing the file never lose or duplicate writes.  Get it
    with :func:`memory_view`.
    """

    def __init__(self, graph: Graphonomous) -> None:
        self.graph = graph
        # name → the entity as stored (None: no entity of that name), for this call only.
        self._known: dict[str, Entity | None] = {}
        # (from, to, relationship) → the stored link (None: no edge), for this call only.
        self._known_links: dict[tuple[str, str, str], Link | None] = {}
        # The kept dangling relations touching the names in _dangling_seen (triple →
        # stamp), for this call only.
        self._dangling: dict[_Triple, str] = {}
        self._dangling_seen: set[str] = set()
        # read_graph's answer as of a change token, kept only when it is small.
        self._whole_graph: tuple[tuple[int, int], dict[str, Any]] | None = None

    # -- reading the store ---------------------------------------------------------

    def _read_token(self) -> tuple[int, int]:
        store = self.graph.store
        changes = int(store.scalar("SELECT total_changes()"))
        return changes, int(store.scalar("PRAGMA data_version"))

    @contextmanager
    def _call(self) -> Iterator[None]:
        """The per-call lookups live exactly as long as one call."""
        self._known, self._known_links = {}, {}
        self._dangling, self._dangling_seen = {}, set()
        try:
            yield
        finally:
            self._known, self._known_links = {}, {}
            self._dangling, self._dangling_seen = {}, set()

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Facade lock + one consistent snapshot of the store."""
        with self.graph.lock, self.graph.store.read_snapshot(), self._call():
            yield

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Facade lock + one write transaction (a savepoint inside an open one)."""
        with self.graph.lock, self._call():
            self._whole_graph = None
            with self.graph.store.transaction():
                yield

    def _prefetch(self, names: Iterable[str]) -> None:
        """Look the names not looked up yet in this call up in one indexed read."""
        wanted = [name for name in _unique(names) if name not in self._known]
        if not wanted:
            return
        nodes = self.graph.store.entity_nodes_named(MEMORY_AGENT_ID, wanted)
        for name in wanted:
            node = nodes.get(name)
            self._known[name] = None if node is None else _entity_from_node(node.id, node.metadata)

    def entity(self, name: str) -> Entity | None:
        """The stored entity named `name` (call inside a read or write)."""
        if name not in self._known:
            self._prefetch([name])
        return self._known[name]

    def _prefetch_dangling(self, names: Iterable[str]) -> None:
        """Load the kept dangling relations touching the names not looked at yet in this
        call (one indexed read)."""
        wanted = [name for name in _unique(names) if name not in self._dangling_seen]
        if not wanted:
            return
        self._dangling_seen.update(wanted)
        for stamp, source, target, kind in self.graph.store.dangling_relations(
            MEMORY_AGENT_ID, wanted
        ):
            self._dangling[(source, target, kind)] = stamp

    def _dangling_stamp(self, triple: _Triple) -> str | None:
        """The stamp of the kept dangling relation `triple`, or None."""
        self._prefetch_dangling([triple[0]])
        return self._dangling.get(triple)

    def _is_entity(self, name: str, change: _Change) -> bool:
        """Whether `name` is a stored entity or one this change creates."""
        return name in change.new_entities or self.entity(name) is not None

    def _iter_entities(self, needle: str | None = None) -> Iterator[Entity]:
        """Every entity in graph (creation) order, a page of rows at a time; with
        `needle` (lower case) only those that match it (the store skips the rows that
        provably cannot, see _prefilter)."""
        terms = () if needle is None else _prefilter(needle)
        for node_id, text in self.graph.store.iter_entity_rows(MEMORY_AGENT_ID, terms):
            entity = _entity_from_node(node_id, json.loads(text))
            if entity is not None and (needle is None or entity.matches(needle)):
                yield entity

    def _iter_links(self, node_ids: Iterable[str] | None = None) -> Iterator[Link]:
        """The links between entities (touching `node_ids` when given), by edge id."""
        store = self.graph.store
        for edge_id, source, target, relationship, text in store.iter_entity_edges(
            MEMORY_AGENT_ID, node_ids
        ):
            yield _link_from_edge(edge_id, source, target, relationship, json.loads(text))

    def _stored_link(self, key: tuple[str, str, str]) -> Link | None:
        """The stored link of (from, to, relationship) between two stored entities."""
        if key not in self._known_links:
            source, target = self.entity(key[0]), self.entity(key[1])
            edge = None
            if source is not None and target is not None:
                edge = self.graph.store.find_edge(source.node_id, target.node_id, key[2])
            self._known_links[key] = (
                None
                if edge is None
                else _link_from_edge(edge.id, key[0], key[1], edge.relationship, edge.metadata)
            )
        return self._known_links[key]

    # -- writing a change -----------------------------------------------------

    def _node_id(self, name: str, change: _Change) -> str:
        entity = change.new_entities.get(name) or self._known[name]
        assert entity is not None, "callers check the names first"
        return entity.node_id

    def _commit(self, change: _Change, source: str | None) -> None:
        """Write `change` (one apply_batch plus edge metadata updates).  Must run inside
        _writing.  O(size of the change) statements."""
        if change.is_empty():
            return
        removed = set(change.removed_entities)
        operations: list[dict[str, Any]] = [
            {"op": "add_node", "node": entity.node_fields(source)}
            for entity in change.new_entities.values()
        ]
        for name, entity in change.updated_entities.items():
            fields: dict[str, Any] = {"metadata": entity.metadata()}
            stored = self._known[name]
            assert stored is not None, "only stored entities are updated"
            if entity.content() != stored.content():
                fields["content"] = entity.content()  # (re-embedded)
            operations.append({"op": "update_node", "id": entity.node_id, "fields": fields})
        operations += [
            {"op": "remove_node", "id": self._node_id(name, change)} for name in sorted(removed)
        ]
        for link in change.new_links.values():
            edge = {
                "id": link.edge_id,
                "source_id": self._node_id(link.source, change),
                "target_id": self._node_id(link.target, change),
                "relationship": link.relationship,
                "metadata": link.metadata(),
                "agent_id": MEMORY_AGENT_ID,
            }
            operations.append({"op": "add_edge", "edge": edge})
        kept = [link for link in change.updated_links.values() if link.relation_types]
        operations += [
            {"op": "remove_edge", "id": link.edge_id}
            for link in change.updated_links.values()
            if not link.relation_types and not {link.source, link.target} & removed
        ]
        if operations:
            # The memory tools never search by similarity: vectors wait for whoever does.
            self.graph.apply_batch(operations, defer_embeddings=True)
        now = self.graph.now()
        for link in kept:  # the batch format has no edge update
            if link.source in removed or link.target in removed:
                continue
            self.graph.store.update_edge(link.edge_id, metadata=link.metadata(), updated_at=now)
        self._commit_dangling(change)

    def _commit_dangling(self, change: _Change) -> None:
        """Write the change's dangling relations (inside _commit's transaction)."""
        store = self.graph.store
        if change.removed_dangling:
            store.remove_dangling_relations(change.removed_dangling)
        if change.cleared_names:
            store.remove_dangling_touching(MEMORY_AGENT_ID, change.cleared_names)
        if change.new_dangling:
            store.add_dangling_relations(
                MEMORY_AGENT_ID,
                ((stamp, *triple) for triple, stamp in change.new_dangling.items()),
            )

    # -- planning (pure: raises ValidationError before anything is written) ----

    def _plan_entities(self, entities: Iterable[Mapping[str, Any]], change: _Change) -> None:
        """New entities for the names not yet known; the first of a repeated name wins."""
        items = list(entities)
        self._prefetch(item["name"] for item in items)
        for index, item in enumerate(items):
            name = item["name"]
            if self.entity(name) is not None or name in change.new_entities:
                continue
            observations = tuple(_unique(item["observations"]))
            entity = Entity(new_id(), name, item["entityType"], observations)
            _check_size(f"entities[{index}]", entity)
            change.new_entities[name] = entity
        self._complete_dangling(change)

    def _complete_dangling(self, change: _Change) -> None:
        """The kept dangling relations whose names are all entities once `change`'s new
        entities exist become edges (or self-relations) with their stamps, in stamp order.
        O(relations touching the new names) indexed reads."""
        if not change.new_entities:
            return
        self._prefetch_dangling(change.new_entities)
        touching = sorted(
            (stamp, triple)
            for triple, stamp in self._dangling.items()
            if triple[0] in change.new_entities or triple[1] in change.new_entities
        )
        ends = [name for _, triple in touching for name in triple[:2]]
        self._prefetch(ends)
        self._prefetch_dangling(ends)  # loaded now: the deletions below stay deleted
        for stamp, triple in touching:
            if self._is_entity(triple[0], change) and self._is_entity(triple[1], change):
                change.removed_dangling.append(stamp)
                del self._dangling[triple]
                self._plan_relation(triple, change, stamp)

    def _plan_observations(
        self, additions: Iterable[tuple[str, Sequence[str]]], change: _Change
    ) -> list[dict[str, Any]]:
        """Append each new observation once; returns server-memory's per-item results.
        Every name must be known or planned."""
        results: list[dict[str, Any]] = []
        for index, (name, contents) in enumerate(additions):
            entity = change.current(name, self)
            assert entity is not None, "callers check the names first"
            present = set(entity.observations)
            added = [text for text in _unique(contents) if text not in present]
            if added:
                updated = replace(entity, observations=(*entity.observations, *added))
                _check_size(f"observations[{index}]", updated)
                change.put(updated)
            results.append({"entityName": name, "addedObservations": added})
        return results

    def _plan_relations(
        self, relations: Iterable[Mapping[str, str]], change: _Change
    ) -> list[dict[str, str]]:
        """Plan each relation not present yet (see _plan_relation); returns the relations
        created, each once.  O(n) indexed reads."""
        items = list(relations)
        self._prefetch(_endpoints(items))
        self._prefetch_dangling(relation["from"] for relation in items)
        created: list[dict[str, str]] = []
        for relation in items:
            triple = (relation["from"], relation["to"], relation["relationType"])
            if self._plan_relation(triple, change, new_id()):
                created.append(_relation(*triple))
        return created

    def _plan_relation(self, triple: _Triple, change: _Change, stamp: str) -> bool:
        """Stamp one relation onto its new or existing edge (onto the entity, for a
        self-relation; into the dangling rows when a name is no entity); False when it
        is present already."""
        source, target, kind = triple
        if triple in change.new_dangling or self._dangling_stamp(triple) is not None:
            return False
        if not (self._is_entity(source, change) and self._is_entity(target, change)):
            change.new_dangling[triple] = stamp
            return True
        if source == target:
            entity = change.current(source, self)
            assert entity is not None, "checked above"
            if kind in entity.self_relations:
                return False
            change.put(replace(entity, self_relations={**entity.self_relations, kind: stamp}))
            return True
        key = (source, target, relationship_for(kind))
        link = self._planned_link(key, change)
        if link is not None and kind in link.relation_types:
            return False
        if link is None:
            change.new_links[key] = Link(new_id(), source, target, key[2], {kind: stamp})
            return True
        link = replace(link, relation_types={**link.relation_types, kind: stamp})
        if key in change.new_links:
            change.new_links[key] = link
        else:
            change.updated_links[link.edge_id] = link
        return True

    def _planned_link(self, key: tuple[str, str, str], change: _Change) -> Link | None:
        """The link of (from, to, relationship) with this change's edits so far."""
        if key in change.new_links:
            return change.new_links[key]
        stored = self._stored_link(key)
        if stored is None:
            return None
        return change.updated_links.get(stored.edge_id) or stored

    def _link_carrying(self, source: str, target: str, kind: str, change: _Change) -> Link | None:
        """The link from `source` to `target` that carries relationType `kind` (with this
        change's edits), or None: the edge of relationship_for(kind) first, then any other
        edge between the two (an edge another tool made or relabelled)."""
        link = self._planned_link((source, target, relationship_for(kind)), change)
        if link is not None and kind in link.relation_types:
            return link
        start, end = self.entity(source), self.entity(target)
        if start is None or end is None:
            return None
        for edge in self.graph.store.list_edges_between([start.node_id, end.node_id]):
            if edge.source_id == start.node_id:
                key = (source, target, edge.relationship)
                found = self._planned_link(key, change)
                if found is not None and kind in found.relation_types:
                    return found
        return None

    def _require_entities(self, names: Iterable[str], change: _Change) -> None:
        """MemoryToolError for the first name (in order) that is no entity, with
        server-memory's text."""
        wanted = list(names)
        self._prefetch(wanted)
        for name in wanted:
            if not self._is_entity(name, change):
                raise MemoryToolError("observations", f"Entity with name {name} not found")

    # -- the tools ---------------------------------------------------------------

    def create_entities(
        self, entities: Sequence[Mapping[str, Any]], *, source: str | None = None
    ) -> list[dict[str, Any]]:
        """Create the entities whose names are new; returns those created.

        Input: ``[{name, entityType, observations}]``.  Existing names and
        repeats of a name within the call are skipped (the first wins);
        repeated observations are kept once.  One transaction.
        Complexity: O(n) plus embedding the new nodes.
        """
        refuse_nul("entities", list(entities))  # names, types and observations are stored
        with self._writing():
            change = _Change()
            self._plan_entities(entities, change)
            self._commit(change, source)
        return [entity.to_dict() for entity in change.new_entities.values()]

    def create_relations(self, relations: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
        """Create the relations not present yet; returns those created.

        Input: ``[{from, to, relationType}]``.  A relation naming a name that is
        no entity is kept dangling (as server-memory keeps it) until both names are
        entities.  O(n) indexed reads plus one write transaction.
        """
        refuse_nul("relations", list(relations))  # a dangling relation keeps its names as text
        with self._writing():
            change = _Change()
            created = self._plan_relations(relations, change)
            self._commit(change, None)
        return created

    def add_observations(self, observations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Append observations to existing entities: ``[{entityName, contents}]`` →
        ``[{entityName, addedObservations}]`` (only the new ones; each once).
        An unknown entity name is a MemoryToolError and nothing changes."""
        refuse_nul("observations", list(observations))
        with self._writing():
            change = _Change()
            names = [item["entityName"] for item in observations]
            self._require_entities(names, change)
            pairs = [(item["entityName"], item["contents"]) for item in observations]
            results = self._plan_observations(pairs, change)
            self._commit(change, None)
        return results

    def delete_entities(self, names: Sequence[str]) -> None:
        """Delete the named entities with every relation touching them, dangling ones
        included (unknown names are ignored otherwise, as in server-memory).  O(n)
        indexed reads, one transaction."""
        with self._writing():
            self._prefetch(names)
            unique = _unique(names)
            known = [name for name in unique if self.entity(name) is not None]
            self._commit(_Change(removed_entities=known, cleared_names=unique), None)

    def delete_observations(self, deletions: Sequence[Mapping[str, Any]]) -> None:
        """Remove observations ``[{entityName, observations}]``; unknown entities and
        observations are ignored, as in server-memory."""
        with self._writing():
            change = _Change()
            self._prefetch(item["entityName"] for item in deletions)
            for item in deletions:
                entity = change.current(item["entityName"], self)
                if entity is None:
                    continue
                gone = set(item["observations"])
                kept = tuple(o for o in entity.observations if o not in gone)
                if kept != entity.observations:
                    change.put(replace(entity, observations=kept))
            self._commit(change, None)

    def delete_relations(self, relations: Sequence[Mapping[str, str]]) -> None:
        """Remove relations ``[{from, to, relationType}]``; an edge goes when its last
        relation type goes.  Unknown relations are ignored, as in server-memory."""
        with self._writing():
            change = _Change()
            self._prefetch(_endpoints(relations))
            self._prefetch_dangling(relation["from"] for relation in relations)
            for relation in relations:
                source, target, kind = relation["from"], relation["to"], relation["relationType"]
                stamp = self._dangling.pop((source, target, kind), None)
                if stamp is not None:
                    change.removed_dangling.append(stamp)
                if source == target:
                    entity = change.current(source, self)
                    if entity is not None and kind in entity.self_relations:
                        kinds = {k: s for k, s in entity.self_relations.items() if k != kind}
                        change.put(replace(entity, self_relations=kinds))
                    continue
                link = self._link_carrying(source, target, kind, change)
                if link is not None:
                    kinds = {k: s for k, s in link.relation_types.items() if k != kind}
                    change.updated_links[link.edge_id] = replace(link, relation_types=kinds)
            self._commit(change, None)

    def read_graph(self) -> dict[str, Any]:
        """Every entity and relation: ``{entities, relations}`` in creation order.
        O(V + E) rows read a page at a time; the answer is cached while the graph does
        not change if it has at most READ_GRAPH_CACHE_ITEMS entities + relations."""
        with self._reading():
            token = self._read_token()
            if self._whole_graph is not None and self._whole_graph[0] == token:
                return self._whole_graph[1]
            self._whole_graph = None
            entities: list[dict[str, Any]] = []
            stamped: list[_Stamped] = []
            for entity in self._iter_entities():
                entities.append(entity.to_dict())
                stamped += _self_stamped(entity, entity.self_relations)
            for link in self._iter_links():
                stamped += _link_stamped(link, link.relation_types)
            dangling = self.graph.store.dangling_relations(MEMORY_AGENT_ID)
            stamped += [(row[0], (row[1], row[2], row[3])) for row in dangling]
            result = {"entities": entities, "relations": _listing(stamped)}
            if len(entities) + len(result["relations"]) <= READ_GRAPH_CACHE_ITEMS:
                self._whole_graph = (token, result)
            return result

    def search_nodes(self, query: str) -> dict[str, Any]:
        """server-memory's search: entities whose name, type or an observation contains
        `query` ignoring case (Unicode lower case), with every relation that has at
        least one matching endpoint.  O(total text) scanned a page at a time, plus the
        edges of the matches."""
        needle = query.lower()
        with self._reading():
            return self._subgraph(list(self._iter_entities(needle)))

    def open_nodes(self, names: Sequence[str]) -> dict[str, Any]:
        """The named entities (in graph order; unknown names ignored) with every relation
        that has at least one of them as an endpoint.  O(n) indexed reads plus their edges."""
        with self._reading():
            nodes = self.graph.store.entity_nodes_named(MEMORY_AGENT_ID, names)
            ordered = sorted(nodes.values(), key=lambda node: (node.created_at, node.id))
            found = [_entity_from_node(node.id, node.metadata) for node in ordered]
            return self._subgraph([entity for entity in found if entity is not None])

    def provenance(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """Where each named entity came from (spec/memory-compat.md §5, provenance):
        ``[{name, node_id, source, created_at, updated_at}]`` in the order given, unknown
        names left out.  ``source`` is the import file's path for ``import-memory``, else
        the memory tool that wrote it (``create_entities``).  O(len(names)) lookups."""
        with self._reading():
            nodes = self.graph.store.entity_nodes_named(MEMORY_AGENT_ID, names)
        return [
            {
                "name": name,
                "node_id": node.id,
                "source": node.source,
                "created_at": node.created_at,
                "updated_at": node.updated_at,
            }
            for name, node in ((name, nodes.get(name)) for name in _unique(names))
            if node is not None
        ]

    def _subgraph(self, found: Sequence[Entity]) -> dict[str, Any]:
        """`found` with every relation that has at least one endpoint among them (dangling
        ones included)."""
        if not found:
            return {"entities": [], "relations": []}
        stamped: list[_Stamped] = []
        for entity in found:
            stamped += _self_stamped(entity, entity.self_relations)
        for link in self._iter_links(entity.node_id for entity in found):
            stamped += _link_stamped(link, link.relation_types)
        dangling = self.graph.store.dangling_relations(MEMORY_AGENT_ID, (e.name for e in found))
        stamped += [(row[0], (row[1], row[2], row[3])) for row in dangling]
        return {"entities": [entity.to_dict() for entity in found], "relations": _listing(stamped)}

    # -- import --------------------------------------------------------------------

    def import_records(self, records: MemoryFile, *, source: str | None = None) -> dict[str, Any]:
        """Import a parsed server-memory file in one transaction (one apply_batch).

        New names become entities (a name repeated in the file merges its
        observations into the first); known entities gain the observations
        they lack; relations are created unless present.  Relations naming a
        name that is an entity neither in the graph nor in the file are kept
        dangling, as server-memory keeps them, and reported with their line
        numbers and the missing names.
        Re-importing a file changes nothing.  Returns counts
        (spec/memory-compat.md §5).  O(lines) indexed reads plus embedding the new and
        changed nodes.
        """
        with self._writing():
            change = _Change()
            file_names = _unique(item["name"] for _, item in records.entities)
            self._prefetch(file_names)
            new_names = {name for name in file_names if self.entity(name) is None}
            self._plan_entities((item for _, item in records.entities), change)
            additions = [
                (item["name"], item["observations"])
                for _, item in records.entities
                if item["name"] not in new_names
            ]
            additions += _repeated_observations(records.entities, new_names)
            results = self._plan_observations(additions, change)
            relations = [relation for _, relation in records.relations]
            created_relations = self._plan_relations(relations, change)
            dangling = [
                {"line": line, "missing": missing}
                for line, relation in records.relations
                if (missing := self._missing_names(relation, change))
            ]
            self._commit(change, source)
        return {
            "entities_created": len(change.new_entities),
            "entities_existing": len(file_names) - len(new_names),
            "observations_added": sum(len(r["addedObservations"]) for r in results),
            "relations_created": len(created_relations),
            "relations_existing": len(relations) - len(created_relations),
            "relations_dangling": dangling,
        }

    def _missing_names(self, relation: Mapping[str, str], change: _Change) -> list[str]:
        """The names of `relation` that are no entity once `change` is written."""
        ends = _unique((relation["from"], relation["to"]))
        return [name for name in ends if not self._is_entity(name, change)]

    def import_stream(
        self,
        open_records: Callable[[], Iterable[tuple[int, str, dict[str, Any]]]],
        *,
        source: str | None = None,
        chunk: int = IMPORT_CHUNK,
    ) -> dict[str, Any]:
        """Import a memory file read twice by `open_records` (a fresh iterator of
        :func:`.jsonl.iter_records` each call): entities, then relations, each in chunks
        of IMPORT_CHUNK lines, all inside one transaction (all or nothing).  Results as
        :meth:`import_records`.  Memory: one chunk (the names seen so far are counted in
        a disk-backed :class:`.names.NameSet`, the graph is read per chunk), plus the
        dangling relations it reports.
        """
        totals = {"entities_created": 0, "observations_added": 0, "relations_created": 0}
        relations_seen = 0
        dangling: list[dict[str, Any]] = []
        graph = self.graph
        with graph.lock, NameSet() as names:
            try:
                with graph.store.transaction():
                    for part in chunked(open_records(), "entity", chunk):
                        names.add(item["name"] for _, item in part.entities)
                        self._add_counts(totals, self.import_records(part, source=source))
                    for part in chunked(open_records(), "relation", chunk):
                        relations_seen += len(part.relations)
                        result = self.import_records(part, source=source)
                        self._add_counts(totals, result)
                        dangling += result["relations_dangling"]
            finally:
                self._whole_graph = None
            distinct_names = len(names)
        return {
            "entities_created": totals["entities_created"],
            "entities_existing": distinct_names - totals["entities_created"],
            "observations_added": totals["observations_added"],
            "relations_created": totals["relations_created"],
            "relations_existing": relations_seen - totals["relations_created"],
            "relations_dangling": dangling,
        }

    @staticmethod
    def _add_counts(totals: dict[str, int], result: Mapping[str, Any]) -> None:
        for key in totals:
            totals[key] += int(result[key])


class MemoryToolError(ValidationError):
    """An error server-memory itself answers; the memory tools report `message` bare,
    as server-memory does (``Entity with name X not found``)."""


def _relation(source: str, target: str, relation_type: str) -> dict[str, str]:
    return {"from": source, "to": target, "relationType": relation_type}


def _endpoints(relations: Iterable[Mapping[str, str]]) -> Iterator[str]:
    for relation in relations:
        yield relation["from"]
        yield relation["to"]


def _check_size(field_name: str, entity: Entity) -> None:
    size = len(entity.content())
    if size > MAX_CONTENT_CHARS:
        raise ValidationError(
            field_name,
            f"entity {_name_list([entity.name])} would hold {size} characters "
            f"(at most {MAX_CONTENT_CHARS})",
        )


def _repeated_observations(
    entities: Sequence[tuple[int, Mapping[str, Any]]], new_names: set[str]
) -> list[tuple[str, Sequence[str]]]:
    """Observations of the second and later lines of a new name (merged into the first)."""
    seen: set[str] = set()
    out: list[tuple[str, Sequence[str]]] = []
    for _, item in entities:
        name = item["name"]
        if name in new_names:
            if name in seen:
                out.append((name, item["observations"]))
            seen.add(name)
    return out


def memory_view(graph: Graphonomous) -> MemoryView:
    """The entity/relation view of `graph` behind the memory-compat tools and
    ``graphonomous import-memory`` (made on first use, one per graph)."""
    return graph.engine.part(MemoryView, lambda: MemoryView(graph))
