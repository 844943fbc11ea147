"""The one walk of "X rests on Y" (model.RESTS_ON_FORWARD / RESTS_ON_BACKWARD).

Rules of this module: the definition is the relationship table's
(`model.RelationshipKind.rests_on`, SPEC "Learning"); `parts` adds the
structural kinds (a part goes with its whole: cascade forgetting).  Self-loops
are ignored.  One node's edges per call: O(degree).
"""

from __future__ import annotations

from ..model import RESTS_ON_BACKWARD, RESTS_ON_FORWARD, STRUCTURAL_RELATIONSHIPS
from ..store import Store


def _forward(parts: bool) -> tuple[str, ...]:
    return (*RESTS_ON_FORWARD, *STRUCTURAL_RELATIONSHIPS) if parts else RESTS_ON_FORWARD


def _walk(store: Store, node_id: str, parts: bool, *, upward: bool) -> set[str]:
    """One step of the relation: the ends `node_id` rests on (`upward`) or the ends
    resting on it.  A forward kind points from the resting node to its ground, a
    backward kind the other way."""
    forward = _forward(parts)
    ahead, behind = ("out", "in") if upward else ("in", "out")
    found = set()
    for edge in store.edges_of(node_id, ahead):
        if edge.relationship in forward:
            found.add(edge.target_id if upward else edge.source_id)
    for edge in store.edges_of(node_id, behind):
        if edge.relationship in RESTS_ON_BACKWARD:
            found.add(edge.source_id if upward else edge.target_id)
    found.discard(node_id)
    return found


def grounds(store: Store, node_id: str, *, parts: bool = False) -> set[str]:
    """Ids of the nodes `node_id` rests on."""
    return _walk(store, node_id, parts, upward=True)


def dependants(store: Store, node_id: str, *, parts: bool = False) -> set[str]:
    """Ids of the nodes that rest on `node_id` (the reverse of :func:`grounds`)."""
    return _walk(store, node_id, parts, upward=False)
