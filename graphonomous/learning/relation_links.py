"""Relations on write: a statement whose effect is another statement's cause is linked to it.

Rules of this module (SPEC "Relations"):
- After a write (`store_node`, `apply_batch`, an ingest's batch included: a file's
  prose states relations as much as an agent does), each new node's relations
  (`retrieval.relations`: "A raises B", "B suppresses A", "C depends on D") are
  matched with the relations of the other live nodes of the same agent.  X → Y
  when a relation of X ends where a relation of Y of the same kind starts (X's
  object key is Y's subject key: X says what changes B, Y says what B changes),
  and Z → X for the nodes Z whose relation ends where one of X's starts.  Two
  nodes whose relations run A → B and B → A are therefore a 2-cycle: the feedback
  loop the prose describes becomes one κ sees.  A loop stated inside one node (both
  sentences in one chunk) is no edge: an edge needs two nodes.
- Only relations of one kind chain (`causes` with `causes`, `depends_on` with
  `depends_on`): "A raises B" and "B depends on C" do not say that A acts on C.
- The edge's kind is the relation's (`causes` / `depends_on`, seed 003's kinds);
  its strength is `STRENGTH_SCALE` × confidence, confidence = the lower of the two
  relations' (a hedge halves it, `retrieval.relations`); metadata carries the
  provenance: ``{"origin": "relations", "rule", "via" (the shared key), "cue",
  "polarity", "target_cue", "target_polarity", "path", "lines", "target_path",
  "target_lines", "confidence"}`` (lines are file lines for ingested chunks, 1-based
  lines of the content otherwise).  The upsert keeps the larger strength.
- A key stated by more than `MAX_COUNTERPARTS` other nodes, or a mention none of whose
  words is in at most `MAX_COUNTERPARTS` searchable nodes, is a hub ("the system",
  "blood", "risk"): linking it would join everything to everything, and two texts
  about "risk" rarely mean one risk; it is skipped and the skip is counted in the
  result (``hub_keys_skipped``), never silently.
- A node whose content changed (an `update_node` operation with `content`, a re-scanned
  chunk) is re-derived: its relation edges that the new content no longer states are
  deleted (``unlinked`` in the result) and its new relations are linked like a new
  node's; an edge still stated is kept (same id), its provenance refreshed.
- One transaction for the whole write's links.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ..index.bm25 import bm25_tokens
from ..model import Node
from ..retrieval.provenance import provenance
from ..retrieval.relations import Relation, extract_relations, relation_index
from .writes import link

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine
    from ..store import Store

RULE: Final = "relations.cue_chain"
ORIGIN: Final = "relations"
# Extracted links are weaker than stated edges (a store_edge defaults to 0.3 × ...,
# an ingest reference 0.6): the walk follows them like an ingest reference at
# confidence 1, less when the cue was hedged.
STRENGTH_SCALE: Final = 0.6
# More nodes than this stating the same key: a generic word, not one quantity.  20
# keeps every key of the loop texts measured (benchmarks/eval_kappa_activation.py)
# and stops "system" / "process"-like keys of a large code tree from linking hundreds.
MAX_COUNTERPARTS: Final = 20


def _lines(node: Node, relation: Relation) -> tuple[str | None, list[int]]:
    """(path, [first, last] line) of the sentence stating `relation` in `node`."""
    found = provenance(node)
    first = found["line_start"]
    if found["path"] is not None and isinstance(first, int):
        return found["path"], [first + relation.line_start, first + relation.line_end]
    return None, [relation.line_start + 1, relation.line_end + 1]


def _metadata(source: Node, cause: Relation, target: Node, effect: Relation) -> dict[str, Any]:
    path, lines = _lines(source, cause)
    target_path, target_lines = _lines(target, effect)
    return {
        "origin": ORIGIN,
        "rule": RULE,
        "via": cause.object_key,
        "cue": cause.cue,
        "polarity": cause.polarity,
        "target_cue": effect.cue,
        "target_polarity": effect.polarity,
        "path": path,
        "lines": lines,
        "target_path": target_path,
        "target_lines": target_lines,
        "confidence": min(cause.confidence, effect.confidence),
    }


Pair = tuple[str, Relation, str, Relation]  # (source node, its relation, target, its relation)


def _specific(graph: GraphEngine, words: str, known: dict[str, bool]) -> bool:
    """Whether a mention names one quantity: some word of it is in at most
    `MAX_COUNTERPARTS` searchable nodes ("blood glucose level": "glucose" is rare;
    "blood", "risk" or "plant" alone are everywhere in a biology text)."""
    if words not in known:
        text = graph.text_index()
        terms = text.terms(bm25_tokens(words))
        known[words] = bool(terms) and min(map(text.document_frequency, terms)) <= MAX_COUNTERPARTS
    return known[words]


def _pairs(graph: GraphEngine, node_ids: Sequence[str], hubs: set[str]) -> list[Pair]:
    """Every (source, relation, target, relation) chain touching a new node, in order."""
    index = relation_index(graph)
    known: dict[str, bool] = {}
    pairs: list[Pair] = []
    for node_id in node_ids:
        for mine in index.relations_of(node_id):
            onward = index.stating_subject(mine.kind, mine.object_key)  # mine → theirs
            backward = index.stating_object(mine.kind, mine.subject_key)  # theirs → mine
            for key, words, others, ahead in (
                (mine.object_key, mine.object, onward, True),
                (mine.subject_key, mine.subject, backward, False),
            ):
                if len(others) > MAX_COUNTERPARTS or (
                    others and not _specific(graph, words, known)
                ):
                    hubs.add(key)
                    continue
                for other in others:
                    for theirs in index.relations_of(other):
                        ends = theirs.subject_key if ahead else theirs.object_key
                        if theirs.kind != mine.kind or ends != key:
                            continue
                        pair = (
                            (node_id, mine, other, theirs)
                            if ahead
                            else (other, theirs, node_id, mine)
                        )
                        pairs.append(pair)
    unique = {(p[0], p[2], p[1].kind, p[1].object_key): p for p in pairs if p[0] != p[2]}
    return list(unique.values())


def link_relations(
    graph: GraphEngine, node_ids: Sequence[str], restated: Sequence[str] = ()
) -> dict[str, int]:
    """Link the new nodes' relations to the live statements they chain with, and re-derive
    those of the `restated` nodes (content changed; module docstring).  Output:
    ``{"linked": edges written, "hub_keys_skipped": keys, "unlinked": stale edges
    deleted}``.  One transaction.  Complexity: O(relations of the nodes × `MAX_COUNTERPARTS`
    × relations per counterpart) lookups, plus one row read of the nodes involved and,
    with `restated`, one read of their edges.
    """
    hubs: set[str] = set()
    linked = 0
    involved = list(dict.fromkeys([*node_ids, *restated]))
    with graph.lock:
        written = graph.store.get_nodes(involved)
        # Most writes state no relation: those never touch the index (no sync, no build).
        stating = [i for i in involved if i in written and extract_relations(written[i].content)]
        if not stating and not restated:
            return {"linked": 0, "hub_keys_skipped": 0, "unlinked": 0}
        pairs = _pairs(graph, stating, hubs) if stating else []
        if not pairs and not restated:
            return {"linked": 0, "hub_keys_skipped": len(hubs), "unlinked": 0}
        rows = graph.store.get_nodes(sorted({p[0] for p in pairs} | {p[2] for p in pairs}))
        with graph.write() as store:
            unlinked = _unlink_stale(store, restated, pairs)
            now = graph.now()
            for source_id, cause, target_id, effect in pairs:
                source, target = rows.get(source_id), rows.get(target_id)
                if not _linkable(source, target):
                    continue
                assert source is not None and target is not None
                confidence = min(cause.confidence, effect.confidence)
                link(
                    store,
                    source_id,
                    target_id,
                    cause.kind,
                    now,
                    strength=round(STRENGTH_SCALE * confidence, 3),
                    metadata=_metadata(source, cause, target, effect),
                )
                linked += 1
    return {"linked": linked, "hub_keys_skipped": len(hubs), "unlinked": unlinked}


def _unlink_stale(store: Store, restated: Sequence[str], pairs: Sequence[Pair]) -> int:
    """Delete the relation edges touching a `restated` node that `pairs` no longer
    derive; the count.  Edges another rule or a caller made are left alone."""
    if not restated:
        return 0
    kept = {(p[0], p[2], p[1].kind) for p in pairs}
    stale = [
        edge
        for edge in store.edges_touching(restated)
        if edge.metadata.get("origin") == ORIGIN
        and (edge.source_id, edge.target_id, edge.relationship) not in kept
    ]
    for edge in stale:
        store.delete_edge(edge.id)
    return len(stale)


def _linkable(source: Node | None, target: Node | None) -> bool:
    """Both live, of one agent (an agent's statements never reach into another's)."""
    return (
        source is not None
        and target is not None
        and source.forgotten_at is None
        and target.forgotten_at is None
        and source.agent_id == target.agent_id
    )


__all__ = ["MAX_COUNTERPARTS", "ORIGIN", "RULE", "STRENGTH_SCALE", "link_relations"]
