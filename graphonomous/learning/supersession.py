"""What changed wins: on a write, the statements the new one updates stop being current.

Rules of this module (SPEC "Updates"):
- After a write of state knowledge (`UPDATABLE_TYPES`: facts and procedures the
  agent or the user stated; not episodes, which are events that stay true,
  and not ingested file chunks, whose file is their truth), each new node is
  compared with its nearest live statements of the same agent (by embedding,
  `NEIGHBOURS`) by `claims.detect_update` — one frame, one changed value.
- The statement with the later ``valid_from`` is the current one.  The earlier
  one gets ``superseded_by``, ``valid_to`` = the later one's ``valid_from`` and
  an edge later ``supersedes`` earlier carrying the evidence (the cue and the
  old and new values).  Nothing is deleted and no confidence changes: an update
  ends a fact's validity, it does not make it less true of its time.
  Retrieval leaves superseded statements out unless asked
  (``include_superseded``) or asked "as of" a moment they held.
- Two statements made within `CONCURRENT_WITHIN_S` of each other are concurrent:
  neither is the newer, so the write decides nothing — consolidation's conflict
  stage weighs them (evidence, recency, confidence) and retrieval shows both,
  the later first, flagged ``contradicted``.
- Pairs already judged (any judgement edge between them) are left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ..model import CONCURRENT_WITHIN_S, Node, parse_time
from ..retrieval.claims import Update, detect_update
from .conflicts import judged
from .writes import link

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

# Statements that describe a state that can change.  Episodic and temporal nodes
# describe events and patterns of their time; outcomes and goals have their own rules.
UPDATABLE_TYPES: Final = ("semantic", "procedural")
# Candidates compared per new statement: an update restates its subject, so it is
# among the nearest by words and by embedding; 8 covers both lists' heads.
NEIGHBOURS: Final = 8
RULE: Final = "claims.detect_update"
# New statements one write compares: an agent's write holds a few; a batch of
# thousands is an import, and 500 searches (about a second at 10K nodes) bound what
# it costs.  Statements beyond it are counted in the result (`unchecked`), never
# dropped silently.
CHECK_BUDGET: Final = 500


def _eligible(node: Node | None, agent_id: str, backed: set[str]) -> bool:
    return (
        node is not None
        and node.forgotten_at is None
        and node.superseded_by is None
        and node.node_type in UPDATABLE_TYPES
        and node.agent_id == agent_id
        and node.id not in backed
    )


def _order(first: Node, second: Node) -> tuple[Node, Node] | None:
    """(earlier, later) by valid time; None when they are concurrent."""
    a = parse_time(first.valid_from or first.created_at)
    b = parse_time(second.valid_from or second.created_at)
    if abs((b - a).total_seconds()) < CONCURRENT_WITHIN_S:
        return None
    return (first, second) if a < b else (second, first)


def _record(graph: GraphEngine, old: Node, new: Node, update: Update, now: str) -> dict[str, Any]:
    evidence = {**update.evidence(), "rule": RULE}
    link(graph.store, new.id, old.id, "supersedes", now, strength=1.0, metadata=evidence)
    graph.store.update_node(
        old.id, superseded_by=new.id, valid_to=new.valid_from or new.created_at, updated_at=now
    )
    return {"supersedes": old.id, "by": new.id, **evidence}


def _candidates(graph: GraphEngine, node: Node, vector: list[float]) -> list[str]:
    """The node's nearest stored statements by embedding (one more asked, itself dropped).
    The vector side alone: an update restates its subject, which the embedding of its
    words carries, and a keyword search over a statement's common words costs a write
    as much as a whole retrieval."""
    hits = graph.vector_index().search(vector, NEIGHBOURS + 1)
    return [node_id for node_id, score in hits if node_id != node.id and score > 0.0][:NEIGHBOURS]


def link_updates(
    graph: GraphEngine, node_ids: Sequence[str], unchecked: list[str] | None = None
) -> list[dict[str, Any]]:
    """Compare each new node with its neighbours and record what it updates (module
    docstring).  Output: one entry per pair linked, ``{"supersedes", "by", "cue", "old",
    "new", "rule"}``; the ids of eligible nodes beyond `CHECK_BUDGET` are appended to
    `unchecked`.  One transaction.
    Complexity: per node one vector search of `NEIGHBOURS` + 1 and as many rule checks;
    the new nodes' vectors are the index's (embedded only when the write deferred them).
    """
    found: list[dict[str, Any]] = []
    with graph.lock:
        store = graph.store
        rows = store.get_nodes(list(node_ids))
        backed = store.source_backed_among(list(rows))
        fresh = [rows[i] for i in node_ids if i in rows]
        fresh = [n for n in fresh if _eligible(n, n.agent_id, backed)]
        if unchecked is not None:
            unchecked.extend(n.id for n in fresh[CHECK_BUDGET:])
        fresh = fresh[:CHECK_BUDGET]
        if not fresh:
            return found
        with store.transaction():  # the index as the write left it (nothing else embedded)
            vectors = _vectors(graph, fresh)
            now = graph.now()
            for node, vector in zip(fresh, vectors, strict=True):
                found += _link_one(graph, node, vector, now)
    return found


def _vectors(graph: GraphEngine, nodes: Sequence[Node]) -> list[list[float]]:
    """The stored vectors of freshly written nodes (the write embedded them), embedding
    only those the index lacks."""
    index = graph.vector_index()
    stored = [index.get(node.id) for node in nodes]
    missing = [node.content for node, vector in zip(nodes, stored, strict=True) if vector is None]
    embedded = iter(graph.embed_texts(missing) if missing else [])
    return [vector if vector is not None else next(embedded) for vector in stored]


def _link_one(
    graph: GraphEngine, node: Node, vector: list[float], now: str
) -> list[dict[str, Any]]:
    found = []
    neighbours = graph.store.get_nodes(_candidates(graph, node, vector))
    backed = graph.store.source_backed_among(list(neighbours))
    for other in neighbours.values():
        current = graph.store.get_node(node.id)
        if current is None or current.superseded_by is not None:
            break  # a later statement already replaced this one in this batch
        if not _eligible(other, node.agent_id, backed) or judged(graph.store, node.id, other.id):
            continue
        ordered = _order(other, current)
        if ordered is None:
            continue
        earlier, later = ordered
        update = detect_update(earlier.content, later.content)
        if update is not None:
            found.append(_record(graph, earlier, later, update, now))
    return found
