"""The topology of an answer: the feedback loops its results belong to (retrieve_context stage 6).

Rules of this file: this is the one function that decides which nodes and arcs a
retrieval's κ is computed on; every surface (CLI `recall`, MCP `retrieve_context`
and the `retrieve` machine, the canvas search) gets its ``topology`` from here
through `retrieve_context`.  The κ math is `graphonomous.topology`'s, untouched;
this module only chooses the region.  Reads go through `GraphReader` (batched,
one SQL statement per layer, visibility and retrieval aids as everywhere else).

The region (SPEC §9.3.7) is the results, seed 004's expanded topology window of the
anchors (they and their strongest neighbours, chosen by the retriever) and the
strongly connected components that the *anchors* belong to in the directed κ graph around
them.  Anchors are the results scoring at least `ANCHOR_SHARE` of the best (the
list's tail is not what the answer rests on) and the wholes they are part of (the
structural kinds of `model`: a chunk goes with its file, a turn with its session;
a file in an import cycle puts the loop under every chunk of it).  A node is in
an anchor's SCC iff it is reachable from the anchor and the anchor from it, so
the walk follows κ arcs (`model.KAPPA_ARC_DIRECTION`: symmetric kinds are no arcs)
forward from the anchors and, separately, backward into them, each for at most
`LOOP_RADIUS` arcs, and stops adding nodes at `LOOP_MAX_NODES`.  Tarjan over the
walked nodes keeps the members of every non-trivial SCC that holds an anchor.  A
cycle of length L through an anchor has each member within `LOOP_RADIUS` arcs of
it forward or backward when L ≤ 2 · `LOOP_RADIUS` + 1, so such a cycle is always
seen whole unless the node budget is hit; whichever bound left arcs unfollowed is
reported (``stats.topology_region``), never silently.

Entities (SPEC §9.3.7): a loop that prose states inside one node ("A raises B, and B in
turn raises A") is no cycle among stored nodes — an edge needs two nodes.  So the
relations (`retrieval.relations`) that the anchors and the loop members state are also
read as arcs between *entity nodes* ``entity:<key>`` (one per mention key: plural and
singular, case and leading comparatives already folded by the key), per relation kind;
the entity SCCs of a kind holding an arc an anchor states join the analysed universe
with their arcs.  Entity nodes are derived at read time (from the relation index the
retriever passes, else from the rows' content), never stored: they compete with no
memory, and forgetting or erasing a statement forgets its arcs.  Each
entity arc is reported with the nodes stating it (``stats.topology_region.entity_arcs``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from ..model import KAPPA_ARC_DIRECTION, Edge
from ..topology import adjacency_over, analyze, build_adjacency, tarjan_scc
from .graph_view import GraphReader, Link
from .relations import Relation, extract_relations

LOOP_RADIUS: Final = 3
"""Arcs walked forward from the results and, separately, backward into them.  Every
cycle of length ≤ 2 · 3 + 1 = 7 through a result is seen whole: import cycles and the
feedback loops prose describes ("A raises B, B suppresses A", a causal chain closing
on itself) are 2–5 long; a radius of 4 would see cycles of 9 at the price of one
more layer, which on a code tree mostly reaches the same hubs again."""

LOOP_MAX_NODES: Final = 400
"""Most nodes the walk collects (results included).  Tarjan is O(V + E) and κ of an SCC
grows with its size (SPEC §5.8 states the target; `benchmarks/bench_topology.py`
measures it), so a cap of 400 bounds the topology of a retrieval while covering a
radius-3 neighbourhood of ten results of typical degree (10 × (3 + 3²) ≈ 120 ordinary
nodes; hubs are what hit it)."""

ANCHOR_SHARE: Final = 0.5
"""A result scoring under half the best is the list's tail (a ten-result answer from a small
corpus reaches into unrelated files): its loops are not the answer's.  Measured on the dev
corpus of benchmarks/eval_kappa_activation.py --loops: the loop-holding results of loop
questions score 0.8–1.0 of the best; the loop chunks reached by acyclic questions 0.3–0.7."""

ENTITY_PREFIX: Final = "entity:"
"""Entity node ids are ``entity:<mention key>``: a prefix no generated node id has
(those are UUIDs), so the κ document shows at a glance which members are entities."""

MAX_ENTITY_ARCS: Final = 200
"""Most entity arcs reported per answer.  Ten anchors state a few relations each (the
labelled corpora: under 5 per chunk); a larger set is a node of generated prose, and the
arcs beyond are counted (``entity_arcs_not_reported``), never silently dropped from κ."""

CUT_NONE: Final = "none"
CUT_RADIUS: Final = "radius"
CUT_MAX_NODES: Final = "max_nodes"


@dataclass(frozen=True)
class LoopRegion:
    """What the walk saw: the analysed universe and how the bounds acted."""

    members: list[str]  # results + members of the SCCs holding a result, sorted
    walked: int  # nodes the bounded walk collected (from the results and their wholes)
    cut: str  # CUT_NONE, CUT_RADIUS (arcs left at the radius) or CUT_MAX_NODES
    arcs_not_followed: int  # arcs leaving the walked set that the bounds cut
    # entity arc (tail, head) inside an entity loop -> the nodes stating it, sorted
    entity_arcs: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def report(self) -> dict[str, Any]:
        """``stats.topology_region`` (snake_case JSON)."""
        arcs = sorted(self.entity_arcs.items())
        return {
            "radius": LOOP_RADIUS,
            "max_nodes": LOOP_MAX_NODES,
            "walked": self.walked,
            "loop_members": len(self.members),
            "cut": self.cut,
            "arcs_not_followed": self.arcs_not_followed,
            "entity_arcs": [
                {"source": tail, "target": head, "stated_by": nodes}
                for (tail, head), nodes in arcs[:MAX_ENTITY_ARCS]
            ],
            "entity_arcs_not_reported": max(0, len(arcs) - MAX_ENTITY_ARCS),
        }


def _arc_ends(node_id: str, link: Link) -> tuple[str, str] | None:
    """The κ arc a link of `node_id` is, as (tail, head), or None for a symmetric kind."""
    direction = KAPPA_ARC_DIRECTION.get(link.relationship)
    if direction is None or link.neighbor == node_id:
        return None
    forward = link.outgoing == (direction > 0)
    return (node_id, link.neighbor) if forward else (link.neighbor, node_id)


def _step(reader: GraphReader, frontier: Iterable[str], forward: bool) -> list[tuple[str, float]]:
    """Neighbours one arc away from `frontier` (heads when forward, tails otherwise), with
    the strongest link's strength, in walk order (links are strongest first)."""
    found: dict[str, float] = {}
    for node_id in sorted(frontier):
        for link in reader.links(node_id):
            arc = _arc_ends(node_id, link)
            if arc is not None and arc[0 if forward else 1] == node_id:
                found[link.neighbor] = max(found.get(link.neighbor, 0.0), link.strength)
    return sorted(found.items(), key=lambda item: (-item[1], item[0]))


class _Walk:
    """The two bounded breadth-first walks (forward, backward) sharing one node budget."""

    def __init__(self, reader: GraphReader, anchors: Sequence[str]) -> None:
        self.reader = reader
        self.seen: set[str] = set(anchors)
        self.reached = {True: set(anchors), False: set(anchors)}
        # Only an anchor with an arc in and an arc out can be on a cycle: a sink (a
        # session its turns are part of) or a source is walked from neither side, which
        # keeps a hub's parts out of the walk.
        reader.load_links(anchors)
        cyclic = {
            node_id
            for node_id in anchors
            if _step(reader, [node_id], True) and _step(reader, [node_id], False)
        }
        self.frontier = {True: set(cyclic), False: set(cyclic)}
        self.full = len(self.seen) >= LOOP_MAX_NODES

    def layer(self) -> None:
        """One arc further both ways (one batched read of the frontiers' links)."""
        self.reader.load_links(self.frontier[True] | self.frontier[False])
        for forward in (True, False):
            fresh: set[str] = set()
            for node_id, _strength in _step(self.reader, self.frontier[forward], forward):
                if node_id in self.reached[forward]:
                    continue
                if node_id not in self.seen:
                    if len(self.seen) >= LOOP_MAX_NODES:
                        self.full = True
                        continue
                    self.seen.add(node_id)
                fresh.add(node_id)
                self.reached[forward].add(node_id)
            self.frontier[forward] = fresh

    def arcs(self) -> tuple[list[tuple[str, str]], int]:
        """(κ arcs among the walked nodes, arcs from a walked node to one outside)."""
        self.reader.load_links(self.seen)
        inside: set[tuple[str, str]] = set()
        outside = 0
        for node_id in sorted(self.seen):
            for link in self.reader.links(node_id):
                arc = _arc_ends(node_id, link)
                if arc is None:
                    continue
                if arc[0] in self.seen and arc[1] in self.seen:
                    inside.add(arc)
                elif arc[0] == node_id and node_id in self.reached[True]:
                    outside += 1  # a forward arc the bounds did not follow
                elif arc[1] == node_id and node_id in self.reached[False]:
                    outside += 1  # a backward arc the bounds did not follow
        return sorted(inside), outside


def loop_region(reader: GraphReader, result_ids: Sequence[str]) -> LoopRegion:
    """The results plus the members of every non-trivial SCC holding a result or a whole
    a result is part of (a chunk goes with its file: `model` structural kinds), bounded.

    Output: a `LoopRegion` (universe sorted; `cut` says which bound, if any,
    left arcs unfollowed).  Complexity: `LOOP_RADIUS` + 1 batched link reads,
    O(V + E) over at most `LOOP_MAX_NODES` walked nodes and their links.
    """
    results = sorted(set(result_ids))
    wholes = reader.wholes_of(results)
    anchors = sorted(set(results).union(*wholes.values()))
    anchors_set = set(anchors)
    walk = _Walk(reader, anchors)
    for _ in range(LOOP_RADIUS):
        if not (walk.frontier[True] or walk.frontier[False]) or walk.full:
            break
        walk.layer()
    arcs, not_followed = walk.arcs()
    adjacency = adjacency_over(walk.seen, arcs)
    keep = set(results)
    for component in tarjan_scc(adjacency):
        if len(component) > 1 and not anchors_set.isdisjoint(component):
            keep.update(component)
    cut = CUT_MAX_NODES if walk.full else CUT_RADIUS if not_followed else CUT_NONE
    return LoopRegion(sorted(keep), len(walk.seen), cut, not_followed)


RelationsOf = Callable[[str], Sequence[Relation]]
"""A node's relations: the engine's relation index (`relations.relation_index`), O(1) a
node; without one they are extracted from the rows (O(text), about 1 ms a chunk)."""


def entity_loops(
    reader: GraphReader,
    stating: Sequence[str],
    anchors: Iterable[str],
    relations_of: RelationsOf | None = None,
) -> dict[tuple[str, str], list[str]]:
    """Entity arcs (tail, head) of every entity loop one of `anchors` states an arc of,
    with the nodes of `stating` that state each (sorted).

    An arc per relation of a node of `stating` (visible: the callers' anchors and walk
    members are; `relations_of` gives them, ``entity:<subject key>`` →
    ``entity:<object key>``); the graph of each relation kind on its own (relations of two
    kinds never chain); the arcs inside its non-trivial SCCs that hold an arc of an
    anchor.  Complexity: O(text of `stating`) extraction plus O(V + E) Tarjan.
    """
    firsts = set(anchors)
    by_kind: dict[str, dict[tuple[str, str], set[str]]] = {}
    if relations_of is None:
        relations_of = _extracted(reader, stating)
    for node_id in sorted(stating):
        for relation in relations_of(node_id):
            arc = (ENTITY_PREFIX + relation.subject_key, ENTITY_PREFIX + relation.object_key)
            by_kind.setdefault(relation.kind, {}).setdefault(arc, set()).add(node_id)
    kept: dict[tuple[str, str], set[str]] = {}
    for kind in sorted(by_kind):
        arcs = by_kind[kind]
        ends = {end for arc in arcs for end in arc}
        for component in tarjan_scc(adjacency_over(ends, sorted(arcs))):
            members = set(component)
            inside = {a: n for a, n in arcs.items() if a[0] in members and a[1] in members}
            if len(members) > 1 and any(not firsts.isdisjoint(n) for n in inside.values()):
                for arc, nodes in inside.items():
                    kept.setdefault(arc, set()).update(nodes)
    return {arc: sorted(nodes) for arc, nodes in sorted(kept.items())}


def _extracted(reader: GraphReader, node_ids: Sequence[str]) -> RelationsOf:
    """Relations read from the visible rows of `node_ids` (one batched row read)."""
    reader.load_nodes(node_ids)

    def relations_of(node_id: str) -> Sequence[Relation]:
        node = reader.node(node_id)
        return () if node is None else extract_relations(node.content)

    return relations_of


def anchors(ranked: Sequence[tuple[str, float]]) -> list[str]:
    """The results the answer rests on: those scoring at least `ANCHOR_SHARE` of the best."""
    best = max((score for _node, score in ranked), default=0.0)
    return [node_id for node_id, score in ranked if score >= ANCHOR_SHARE * best]


def answer_topology(
    reader: GraphReader,
    ranked: Sequence[tuple[str, float]],
    window: Callable[[Sequence[str]], list[str]],
    relations_of: RelationsOf | None = None,
) -> tuple[dict[str, Any], list[str], list[Edge], LoopRegion]:
    """(canonical §A.1 topology, its sorted universe, the stored edges of the whole region,
    the loops).

    The single home of a retrieval's κ: `retrieve_context` calls it with its ranked
    results ``(id, score)`` and its seed-004 window (ids → those ids plus their
    strongest neighbours), and every surface reports what it returns.  κ is analysed,
    as ``topology.analyze`` defines (trigger ``retrieve_context``), on the results,
    the :func:`anchors`' window and their loops (:func:`loop_region`); the edges
    returned (for causal context and contradiction flags) are those among every
    result's window and the loops.  Complexity: :func:`loop_region` plus one read of
    the region's edges plus ``analyze``.
    """
    results = [node_id for node_id, _score in ranked]
    anchored = anchors(ranked)
    region = loop_region(reader, anchored)
    full = sorted(set(window(results)) | set(region.members))
    edges = reader.edges_between(full)
    stating = sorted(set(anchored) | (set(region.members) - set(results)))
    region = replace(region, entity_arcs=entity_loops(reader, stating, anchored, relations_of))
    entities = {end for arc in region.entity_arcs for end in arc}
    universe = sorted(set(results) | set(window(anchored)) | set(region.members) | entities)
    members = set(universe)
    inside: list[object] = [e for e in edges if e.source_id in members and e.target_id in members]
    adjacency = build_adjacency(universe, [*inside, *region.entity_arcs])
    return analyze(adjacency, trigger="retrieve_context", copy=False), universe, edges, region


__all__ = [
    "CUT_MAX_NODES",
    "CUT_NONE",
    "CUT_RADIUS",
    "ENTITY_PREFIX",
    "LOOP_MAX_NODES",
    "LOOP_RADIUS",
    "MAX_ENTITY_ARCS",
    "LoopRegion",
    "anchors",
    "answer_topology",
    "entity_loops",
    "loop_region",
]
