"""Write helpers shared by the learning modules (learner, beliefs, forgetting).

Every learning operation follows one pattern: embed new texts first (no lock
held), then under the engine lock write everything in ONE store transaction.
The in-memory indexes (vectors, BM25) follow by themselves: the store's
change log records every node change in the same transaction and the engine
applies it after the commit (never after a rollback).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..embed import pack_f32
from ..model import Edge, Node, new_id
from ..store import Store

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine


def insert_node(graph: GraphEngine, node: Node, vector: list[float]) -> None:
    """Insert a node and its embedding (inside the caller's transaction).

    The engine brings its indexes up to date from the change log; retrieval aids
    (outcome records, consolidation summaries: `retrieval.experience.is_retrieval_aid`)
    stay out of the search indexes there.
    """
    graph.store.insert_node(node)
    graph.store.set_embedding(node.id, pack_f32(vector), graph.embedding_model)


def link(
    store: Store,
    source_id: str,
    target_id: str,
    relationship: str,
    now: str,
    *,
    strength: float | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> tuple[str, bool]:
    """Create the edge, or re-assert an existing (source, target, relationship) edge
    (`Store.upsert_edge`: it keeps the larger strength and gets `metadata` merged
    over its own).  Returns (edge id, created).  Inside a transaction.  O(1).
    """
    edge = Edge(
        id=new_id(),
        source_id=source_id,
        target_id=target_id,
        relationship=relationship,
        metadata=dict(metadata or {}),
        created_at=now,
        updated_at=now,
    )
    stated = ["metadata"]
    if strength is not None:
        edge.strength = strength
        stated.append("strength")
    return store.upsert_edge(edge, stated)


def bounded_step(value: float, step: float) -> float:
    """Move a value in [0, 1] by a signed step in [-1, 1], bounded by the room left.

    step > 0: value + step·(1 − value) (approaches 1, never passes it);
    step < 0: value + step·value (approaches 0).  The result is clamped to
    [0, 1] against float rounding.  O(1).  The proportional form is the
    usual bounded update of reinforcement schemes: a belief near certainty
    moves little on more confirming evidence, a doubtful one moves a lot.
    """
    moved = value + step * (1.0 - value) if step >= 0.0 else value + step * value
    return min(1.0, max(0.0, moved))
