"""Belief revision in the AGM style: expand, revise, contract, and contradiction detection.

AGM (Alchourrón, Gärdenfors, Makinson, "On the logic of theory change",
J. Symbolic Logic 50(2), 1985) names three operations on a belief set:
*expansion* adds a belief, *revision* adds one and gives up what conflicts
with it, *contraction* gives a belief up.  On a graph of weighted beliefs
they become:

- expand(content): store a new node; conflicting nodes found by
  :func:`find_contradictions` get mutual ``contradicts`` edges (a 2-cycle, so
  κ = 1 and retrieval routes the region to deliberation);
- revise(old, new): the new node ``supersedes`` the old one
  (``old.superseded_by = new``), the old confidence is multiplied by
  :data:`REVISION_CONFIDENCE_FACTOR`, and the retraction propagates to the
  old node's dependants with decay (:func:`retract`);
- contract(node): the node's confidence drops to :data:`CONTRACTION_CONFIDENCE`
  and the retraction propagates the same way.

Every operation writes a ``revisions`` record; :func:`revision_chain`
follows ``supersedes`` links to give the provenance chain A → B → C.
Contradiction hooks (:class:`ContradictionHooks`) are called after the
commit with each contradiction found; a failing hook is logged and ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..embed import exact_score
from ..hygiene import refuse_nul
from ..model import (
    NODE_TYPES,
    RESTS_ON_BACKWARD,
    RESTS_ON_FORWARD,
    Node,
    ValidationError,
    check_choice,
    check_id,
    check_id_list,
    check_text,
    check_unit_interval,
)
from ..records import node_from_fields
from ..store import Store
from . import rests_on, tables
from .cues import contradiction_cues as contradiction_cues  # re-exported for callers
from .thresholds import PRUNE_CONFIDENCE
from .writes import insert_node, link

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

BELIEF_ACTIONS: Final = ("expand", "revise", "contract")

# Two beliefs are compared for contradiction only when their embeddings are
# at least this similar (they talk about the same thing).  Measured with the
# hashing embedder: statements differing by a negation, a number or one
# entity score 0.70–0.94; unrelated statements sharing a few words 0.13–0.55.
CONTRADICTION_MIN_SIMILARITY: Final = 0.6
# How many nearest neighbours of a belief are examined for contradictions.
CONTRADICTION_CANDIDATES: Final = 10
# Revision keeps the superseded belief (history) but at 30 % of its confidence,
# so it ranks well below its replacement without disappearing at once.
REVISION_CONFIDENCE_FACTOR: Final = 0.3
# Contraction sets confidence to the consolidator's prune threshold (seed 003
# min_confidence_threshold 0.05): the belief is given up and decays away.
CONTRACTION_CONFIDENCE: Final = PRUNE_CONFIDENCE
# Retraction reaches dependants with the loss halved per hop, at most 3 hops,
# and stops once the loss falls under 1 %.
RETRACTION_DECAY: Final = 0.5
RETRACTION_MAX_DEPTH: Final = 3
RETRACTION_MIN_LOSS: Final = 0.01
# X depends on Y when X rests on Y (model.RESTS_ON_*): edges into Y of the
# forward kinds, edges out of Y of the backward kinds.
DEPENDANT_IN_KINDS: Final = RESTS_ON_FORWARD
DEPENDANT_OUT_KINDS: Final = RESTS_ON_BACKWARD
# Strength of a contradicts edge the caller asserted explicitly.
EXPLICIT_CONTRADICTION_STRENGTH: Final = 1.0
SIMILARITY_DIGITS: Final = 6

# -- contradiction cues --------------------------------------------------------
# `contradiction_cues` lives in cues.py (with the labelled set it is measured on).

# `logging` is imported when a hook fails, not at import (a cold command never needs it).
LOGGER_NAME: Final = "graphonomous.learning.beliefs"

ContradictionHook = Callable[[dict[str, Any]], object]


# -- hooks -------------------------------------------------------------------


class ContradictionHooks:
    """Callables notified of every contradiction a belief operation finds.

    A hook receives one contradiction dict (``operation``, ``node_id``,
    ``conflicting_node_id``, ``similarity``, ``cues``, ``explicit``).  Its
    return value, when not None, is reported in the operation's
    ``hook_results`` (a resolution suggestion); an exception is logged and
    ignored — a hook can never break the operation that called it.
    """

    def __init__(self) -> None:
        self._hooks: dict[int, ContradictionHook] = {}
        self._next = 1

    def register(self, hook: ContradictionHook) -> int:
        """Add a hook; returns a handle for :meth:`unregister`.  O(1)."""
        if not callable(hook):
            raise ValidationError("hook", "must be callable")
        handle = self._next
        self._next += 1
        self._hooks[handle] = hook
        return handle

    def unregister(self, handle: int) -> bool:
        """Remove a hook; False if the handle is unknown.  O(1)."""
        return self._hooks.pop(handle, None) is not None

    def __len__(self) -> int:
        return len(self._hooks)

    def notify(self, contradictions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Call every hook (registration order) with every contradiction.

        Output: ``[{"handle", "conflicting_node_id", "result"}]`` for each
        non-None JSON-representable result (others are reported by ``repr``).
        """
        results: list[dict[str, Any]] = []
        for contradiction in contradictions:
            for handle, hook in list(self._hooks.items()):
                try:
                    value = hook(dict(contradiction))
                except Exception:
                    import logging

                    logging.getLogger(LOGGER_NAME).exception("contradiction hook %r failed", hook)
                    continue
                if value is None:
                    continue
                try:
                    json.dumps(value, allow_nan=False)
                except (TypeError, ValueError):
                    value = repr(value)
                results.append(
                    {
                        "handle": handle,
                        "conflicting_node_id": contradiction["conflicting_node_id"],
                        "result": value,
                    }
                )
        return results


def contradiction_hooks(graph: GraphEngine) -> ContradictionHooks:
    """The hooks notified of contradictions found on this graph (one set per engine)."""
    return graph.part(ContradictionHooks)


# -- detection ---------------------------------------------------------------


def find_contradictions(
    graph: GraphEngine,
    content: str,
    vector: Sequence[float],
    exclude: Iterable[str] = (),
    *,
    min_similarity: float = CONTRADICTION_MIN_SIMILARITY,
    candidates: int = CONTRADICTION_CANDIDATES,
    hits: Sequence[tuple[str, float]] | None = None,
) -> list[dict[str, Any]]:
    """Live nodes that `content` seems to contradict: similar AND showing a cue.

    Superseded and soft-forgotten nodes are not beliefs any more and are
    skipped.  Input: the text, its embedding, ids to ignore.  Output:
    ``[{"node_id", "similarity", "cues"}]`` by similarity descending, then id.
    Complexity: one top-k index search (k = `candidates` + |exclude|) plus
    O(k) cue checks; a caller that already searched passes its `hits`
    (node id, similarity) best first.  Call with the graph lock held.
    """
    skip = set(exclude)
    if hits is None:
        hits = graph.vector_index().search(vector, candidates + len(skip))
    near = [(node_id, score) for node_id, score in hits if node_id not in skip]
    near = [(node_id, score) for node_id, score in near[:candidates] if score >= min_similarity]
    nodes = graph.store.get_nodes([node_id for node_id, _ in near])
    found = []
    for node_id, score in near:
        node = nodes.get(node_id)
        # A superseded belief is no longer held: it conflicts with nothing.
        if node is None or node.forgotten_at is not None or node.superseded_by is not None:
            continue
        cues = contradiction_cues(content, node.content)
        if cues:
            found.append(
                {"node_id": node_id, "similarity": round(score, SIMILARITY_DIGITS), "cues": cues}
            )
    return found


def _revision_neighbours(store: Store, node_id: str) -> set[str]:
    """Nodes linked to `node_id` by supersedes/superseded_by (resolved history, not conflict)."""
    linked = set()
    for edge in store.edges_of(node_id, "both"):
        if edge.relationship in ("supersedes", "superseded_by"):
            linked.add(edge.target_id if edge.source_id == node_id else edge.source_id)
    return linked


def detect_contradictions(
    graph: GraphEngine,
    node_id: str | None = None,
    content: str | None = None,
    *,
    limit: int = CONTRADICTION_CANDIDATES,
) -> dict[str, Any]:
    """Contradictions of a stored node (explicit edges + detected) or of a text (detected).

    Input: exactly one of `node_id` / `content`.  Output: ``{"node_id" |
    "content", "contradictions": [{"node_id", "similarity", "cues",
    "explicit"}]}`` — explicit ``contradicts`` edges first-class, detected
    ones found as in :func:`find_contradictions` (a node's own revision
    history is not reported).  Sorted by similarity descending, then id.
    Complexity: one index search plus the node's edges.
    """
    if (node_id is None) == (content is None):
        raise ValidationError("node_id", "give exactly one of node_id or content")
    if content is not None:
        check_text("content", content)
        (vector,) = graph.embed_texts([content])
        with graph.lock:
            detected = find_contradictions(graph, content, vector, candidates=limit)
        return {
            "content": content,
            "contradictions": [{**c, "explicit": False} for c in detected],
        }
    node_id = check_id("node_id", node_id)
    with graph.lock:
        found = _contradictions_of_node(graph, node_id, limit)
    ordered = sorted(found.values(), key=lambda c: (-c["similarity"], c["node_id"]))
    return {"node_id": node_id, "contradictions": ordered}


def _contradictions_of_node(
    graph: GraphEngine, node_id: str, limit: int
) -> dict[str, dict[str, Any]]:
    """Detected and explicit contradictions of a live node, keyed by the other node's id."""
    node = graph.store.require_node(node_id)
    index = graph.vector_index()
    stored = index.get(node_id)
    vector = stored if stored is not None else graph.embed_texts([node.content])[0]
    exclude = {node_id} | _revision_neighbours(graph.store, node_id)
    found = {
        c["node_id"]: {**c, "explicit": False}
        for c in find_contradictions(graph, node.content, vector, exclude, candidates=limit)
    }
    explicit = sorted(
        {
            e.target_id if e.source_id == node_id else e.source_id
            for e in graph.store.edges_of(node_id, "both", "contradicts")
        }
    )
    others = graph.store.get_nodes(explicit)
    for other_id in explicit:
        other = others.get(other_id)
        if other is None or other.forgotten_at is not None:
            continue
        if other_id in found:
            found[other_id]["explicit"] = True
            continue
        other_vector = index.get(other_id)
        similarity = exact_score(vector, other_vector) if other_vector is not None else 0.0
        found[other_id] = {
            "node_id": other_id,
            "similarity": round(similarity, SIMILARITY_DIGITS),
            "cues": contradiction_cues(node.content, other.content),
            "explicit": True,
        }
    return found


def add_contradiction_edges(
    store: Store, node_id: str, other_id: str, now: str, *, strength: float, detail: dict[str, Any]
) -> list[str]:
    """Mutual ``contradicts`` edges between two nodes (both directions).  Returns edge ids."""
    ids = []
    for source, target in ((node_id, other_id), (other_id, node_id)):
        edge_id, _ = link(
            store, source, target, "contradicts", now, strength=strength, metadata=detail
        )
        ids.append(edge_id)
    return ids


# -- supersession ----------------------------------------------------------------


def supersede(store: Store, new_id: str, old: Node, now: str) -> tuple[float, list[dict[str, Any]]]:
    """`new_id` supersedes `old` (the one supersession: revise and conflict resolution).

    In the caller's transaction: edge new ``supersedes`` old (strength 1),
    ``old.superseded_by = new``, old's confidence × REVISION_CONFIDENCE_FACTOR,
    and the loss retracted from old's dependants (new excluded).  Returns
    (old's confidence after, the retraction report).
    """
    link(store, new_id, old.id, "supersedes", now, strength=1.0)
    after = old.confidence * REVISION_CONFIDENCE_FACTOR
    store.update_node(old.id, superseded_by=new_id, confidence=after, updated_at=now)
    propagated = retract(store, old.id, 1.0 - REVISION_CONFIDENCE_FACTOR, now, exclude={new_id})
    return after, propagated


# -- retraction ----------------------------------------------------------------


def dependants(store: Store, node_id: str) -> list[str]:
    """Ids of nodes that rest on `node_id` (see DEPENDANT_* kinds), sorted.  O(degree)."""
    return sorted(rests_on.dependants(store, node_id))


def retract(
    store: Store, root_id: str, loss: float, now: str, exclude: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """Propagate a confidence loss from `root_id` to its dependants, breadth first.

    A dependant at depth d (shortest path) loses the fraction
    ``loss · RETRACTION_DECAY**d`` of its confidence: c' = c · (1 − that).
    Stops after RETRACTION_MAX_DEPTH hops or when the fraction falls under
    RETRACTION_MIN_LOSS.  Soft-forgotten nodes and `exclude` are skipped; each
    node is touched at most once.  Inside a transaction.
    Output: ``[{"node_id", "depth", "confidence_before", "confidence_after"}]``
    in visiting order (depth, then id).  Complexity: O(V + E) of the region.
    """
    visited = {root_id, *exclude}
    frontier = [root_id]
    changed: list[dict[str, Any]] = []
    for depth in range(1, RETRACTION_MAX_DEPTH + 1):
        fraction = loss * RETRACTION_DECAY**depth
        if fraction < RETRACTION_MIN_LOSS or not frontier:
            break
        layer = sorted({d for node in frontier for d in dependants(store, node)} - visited)
        visited.update(layer)
        nodes = store.get_nodes(layer)
        frontier = []
        for node_id in layer:
            node = nodes.get(node_id)
            if node is None or node.forgotten_at is not None:
                continue
            after = node.confidence * (1.0 - fraction)
            store.update_node(node_id, confidence=after, updated_at=now)
            changed.append(
                {
                    "node_id": node_id,
                    "depth": depth,
                    "confidence_before": node.confidence,
                    "confidence_after": after,
                }
            )
            frontier.append(node_id)
    return changed


# -- the three operations --------------------------------------------------------


def _new_belief(
    graph: GraphEngine,
    content: str,
    node_type: str,
    confidence: float | None,
    metadata: Mapping[str, Any] | str | None,
    source: str | None,
) -> Node:
    fields: dict[str, Any] = {
        "content": content,
        "node_type": node_type,
        "metadata": metadata,
        "source": source,
    }
    if confidence is not None:
        fields["confidence"] = confidence
    return node_from_fields(fields, now=graph.now())


def _store_contradictions(
    store: Store,
    node_id: str,
    detected: Sequence[Mapping[str, Any]],
    explicit_ids: Sequence[str],
    operation: str,
    now: str,
) -> list[dict[str, Any]]:
    """Write mutual contradicts edges; return the contradiction records for hooks/results."""
    records: dict[str, dict[str, Any]] = {}
    for found in detected:
        records[found["node_id"]] = {
            "operation": operation,
            "node_id": node_id,
            "conflicting_node_id": found["node_id"],
            "similarity": found["similarity"],
            "cues": list(found["cues"]),
            "explicit": False,
        }
    for other_id in explicit_ids:
        record = records.setdefault(
            other_id,
            {
                "operation": operation,
                "node_id": node_id,
                "conflicting_node_id": other_id,
                "similarity": None,
                "cues": [],
                "explicit": True,
            },
        )
        record["explicit"] = True
    for other_id in sorted(records):
        record = records[other_id]
        strength = (
            EXPLICIT_CONTRADICTION_STRENGTH if record["explicit"] else float(record["similarity"])
        )
        add_contradiction_edges(
            store,
            node_id,
            other_id,
            now,
            strength=strength,
            detail={
                "detected_by": "explicit" if record["explicit"] else "similarity",
                "cues": record["cues"],
            },
        )
    return [records[key] for key in sorted(records)]


def _require_live(store: Store, ids: Sequence[str], field: str) -> None:
    nodes = store.get_nodes(ids)
    for node_id in ids:
        node = nodes.get(node_id)
        if node is None or node.forgotten_at is not None:
            raise ValidationError(field, f"no live node with id {node_id!r}")


def _check_reason(reason: object) -> None:
    """A revision's `reason` is the caller's text, stored verbatim: a string without NUL."""
    if not isinstance(reason, str):
        raise ValidationError("reason", "must be a string")
    refuse_nul("reason", reason)


def expand(
    graph: GraphEngine,
    content: str,
    *,
    node_type: str = "semantic",
    confidence: float | None = None,
    metadata: Mapping[str, Any] | str | None = None,
    source: str | None = None,
    contradicts: Sequence[str] | None = None,
    reason: str = "",
) -> dict[str, Any]:
    """AGM expansion: store a new belief and mark what it contradicts.

    Input: the belief's text and node fields; `contradicts` lists node ids the
    caller knows it contradicts.  Output: ``{"operation": "expand", "node",
    "revision_id", "contradictions", "hook_results"}``.  Detected and
    explicit contradictions get mutual ``contradicts`` edges.  One
    transaction.  Complexity: one embedding, one index search.
    """
    check_choice("node_type", node_type, NODE_TYPES)
    _check_reason(reason)
    explicit = sorted(set(check_id_list("contradicts", contradicts or [])))
    node = _new_belief(graph, content, node_type, confidence, metadata, source)
    (vector,) = graph.embed_texts([node.content])
    now = node.created_at
    with graph.lock:
        detected = find_contradictions(graph, node.content, vector)
        with graph.store.transaction():
            _require_live(graph.store, explicit, "contradicts")
            insert_node(graph, node, vector)
            records = _store_contradictions(graph.store, node.id, detected, explicit, "expand", now)
            revision_id = tables.record_revision(
                graph.store,
                "expand",
                None,
                node.id,
                reason,
                {"contradictions": [r["conflicting_node_id"] for r in records]},
                now,
            )
            graph.store.update_node(node.id, revision_id=revision_id)
            node.revision_id = revision_id
        hook_results = contradiction_hooks(graph).notify(records)
    return {
        "operation": "expand",
        "node": node.to_dict(),
        "revision_id": revision_id,
        "contradictions": records,
        "hook_results": hook_results,
    }


def revise(
    graph: GraphEngine,
    old_id: str,
    new_content: str | None = None,
    new_id: str | None = None,
    *,
    reason: str = "",
    confidence: float | None = None,
    metadata: Mapping[str, Any] | str | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    """AGM revision: a new belief replaces `old_id`.

    Input: the old node, and either `new_content` (a new node of the old
    node's type, confidence = `confidence` or the old node's confidence
    before the cut) or `new_id` (an existing live node).  Effects, in one
    transaction: edge new ``supersedes`` old; ``old.superseded_by = new``;
    old confidence × REVISION_CONFIDENCE_FACTOR; retraction propagated to
    the old node's dependants (:func:`retract`); ``contradicts`` edges
    between old and new removed (the conflict is resolved); contradictions
    of the new content with other nodes detected as in expand.
    Output: ``{"operation": "revise", "old_node_id", "new_node_id", "node",
    "confidence_before", "confidence_after", "propagated", "revision_id",
    "contradictions", "hook_results"}``.
    Raises ValidationError when the old node is already superseded (revise
    the newest belief of a chain instead).
    """
    check_id("old_id", old_id)
    _check_reason(reason)
    if (new_content is None) == (new_id is None):
        raise ValidationError("new_content", "give exactly one of new_content or new_id")
    if confidence is not None:
        check_unit_interval("confidence", confidence)
    with graph.lock:
        old = graph.store.require_node(old_id)
        if old.superseded_by is not None:
            raise ValidationError(
                "old_id", f"is already superseded by {old.superseded_by}; revise that node"
            )
        if new_content is not None:
            new = _new_belief(
                graph,
                new_content,
                old.node_type,
                old.confidence if confidence is None else confidence,
                metadata,
                source,
            )
            (vector,) = graph.embed_texts([new.content])
            created = True
        else:
            assert new_id is not None
            check_id("new_id", new_id)
            if new_id == old_id:
                raise ValidationError("new_id", "a node cannot supersede itself")
            new = graph.store.require_node(new_id)
            stored = graph.vector_index().get(new_id)
            vector = stored if stored is not None else graph.embed_texts([new.content])[0]
            created = False
        now = graph.now()
        detected = find_contradictions(graph, new.content, vector, {old_id, new.id})
        with graph.store.transaction():
            if created:
                insert_node(graph, new, vector)
            resolved = [
                e.id
                for e in graph.store.edges_of(old_id, "both", "contradicts")
                if new.id in (e.source_id, e.target_id)
            ]
            for edge_id in resolved:
                graph.store.delete_edge(edge_id)
            after, propagated = supersede(graph.store, new.id, old, now)
            records = _store_contradictions(graph.store, new.id, detected, [], "revise", now)
            revision_id = tables.record_revision(
                graph.store,
                "revise",
                old_id,
                new.id,
                reason,
                {
                    "confidence_before": old.confidence,
                    "confidence_after": after,
                    "propagated": propagated,
                    "resolved_contradiction_edges": resolved,
                    "contradictions": [r["conflicting_node_id"] for r in records],
                },
                now,
            )
            graph.store.update_node(new.id, revision_id=revision_id)
            fresh = graph.store.get_node(new.id)
            assert fresh is not None
        hook_results = contradiction_hooks(graph).notify(records)
    return {
        "operation": "revise",
        "old_node_id": old_id,
        "new_node_id": new.id,
        "node": fresh.to_dict(),
        "confidence_before": old.confidence,
        "confidence_after": after,
        "propagated": propagated,
        "revision_id": revision_id,
        "contradictions": records,
        "hook_results": hook_results,
    }


def contract(graph: GraphEngine, node_id: str, *, reason: str = "") -> dict[str, Any]:
    """AGM contraction: give up a belief without replacing it.

    The node's confidence becomes min(c, CONTRACTION_CONFIDENCE) and the lost
    fraction 1 − c'/c propagates to its dependants (:func:`retract`).  The
    node stays (forgetting is a separate operation).  One transaction.
    Output: ``{"operation": "contract", "node_id", "confidence_before",
    "confidence_after", "propagated", "revision_id"}``.
    """
    check_id("node_id", node_id)
    _check_reason(reason)
    with graph.lock, graph.store.transaction():
        node = graph.store.require_node(node_id)
        now = graph.now()
        after = min(node.confidence, CONTRACTION_CONFIDENCE)
        loss = 1.0 - after / node.confidence if node.confidence > 0.0 else 0.0
        graph.store.update_node(node_id, confidence=after, updated_at=now)
        propagated = retract(graph.store, node_id, loss, now)
        revision_id = tables.record_revision(
            graph.store,
            "contract",
            node_id,
            None,
            reason,
            {
                "confidence_before": node.confidence,
                "confidence_after": after,
                "propagated": propagated,
            },
            now,
        )
    return {
        "operation": "contract",
        "node_id": node_id,
        "confidence_before": node.confidence,
        "confidence_after": after,
        "propagated": propagated,
        "revision_id": revision_id,
    }


def belief_revise(graph: GraphEngine, action: str, **arguments: Any) -> dict[str, Any]:
    """Dispatch of the ``belief_revise`` tool: expand | revise | contract.

    expand(content, node_type?, confidence?, metadata?, source?, contradicts?, reason?);
    revise(node_id, new_content | new_id, reason?, confidence?, metadata?, source?);
    contract(node_id, reason?).  Arguments an action does not take are rejected.
    """
    check_choice("action", action, BELIEF_ACTIONS)
    allowed = {
        "expand": {
            "content",
            "node_type",
            "confidence",
            "metadata",
            "source",
            "contradicts",
            "reason",
        },
        "revise": {
            "node_id",
            "new_content",
            "new_id",
            "reason",
            "confidence",
            "metadata",
            "source",
        },
        "contract": {"node_id", "reason"},
    }[action]
    given = {key: value for key, value in arguments.items() if value is not None}
    for name in sorted(given):
        if name not in allowed:
            raise ValidationError(
                name, f"is not used by action {action} (it takes: {', '.join(sorted(allowed))})"
            )
    reason = given.pop("reason", "")
    _check_reason(reason)
    if action == "expand":
        if "content" not in given:
            raise ValidationError("content", "is required by action expand")
        return expand(graph, given.pop("content"), reason=reason, **given)
    if "node_id" not in given:
        raise ValidationError("node_id", f"is required by action {action}")
    node_id = given.pop("node_id")
    if action == "contract":
        return contract(graph, node_id, reason=reason)
    return revise(
        graph,
        node_id,
        given.pop("new_content", None),
        given.pop("new_id", None),
        reason=reason,
        **given,
    )


# -- provenance ----------------------------------------------------------------


def revision_chain(graph: GraphEngine, node_id: str) -> dict[str, Any]:
    """The provenance chain through a node: every belief it replaced or that replaced it.

    Backward: nodes reachable along ``supersedes`` edges (what this node and
    its predecessors replaced); forward: the ``superseded_by`` pointers up to
    the current belief.  Output: ``{"node_id", "current", "chain":
    [{"node_id", "content", "confidence", "superseded_by", "created_at",
    "forgotten"}] (oldest first: created_at, then id), "revisions": [revision
    records naming any chain node]}``.  Soft-forgotten nodes are included
    (history); cycles are guarded.  Complexity: O(chain length · degree).
    """
    check_id("node_id", node_id)
    with graph.lock:
        store = graph.store
        start = store.require_node(node_id, include_forgotten=True)
        members: dict[str, Node] = {start.id: start}
        stack = [start.id]
        while stack:  # backward along supersedes edges
            current = stack.pop()
            for edge in store.edges_of(current, "out", "supersedes"):
                if edge.target_id not in members:
                    older = store.get_node(edge.target_id)
                    if older is not None:
                        members[older.id] = older
                        stack.append(older.id)
        newest = start
        while newest.superseded_by is not None and newest.superseded_by not in members:
            newer = store.get_node(newest.superseded_by)
            if newer is None:
                break
            members[newer.id] = newer
            newest = newer
        ordered = sorted(members.values(), key=lambda n: (n.created_at, n.id))
        revisions = tables.revisions_touching(store, list(members))
    return {
        "node_id": node_id,
        "current": newest.id,
        "chain": [
            {
                "node_id": n.id,
                "content": n.content,
                "confidence": n.confidence,
                "superseded_by": n.superseded_by,
                "created_at": n.created_at,
                "forgotten": n.forgotten_at is not None,
            }
            for n in ordered
        ],
        "revisions": revisions,
    }
