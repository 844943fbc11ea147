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


def grounds(store: Store, node_id: str, *, parts: bool = False) -> set[str]:
    """Ids of the nodes `node_id` rests on."""
    forward = _forward(parts)
    found = {e.target_id for e in store.edges_of(node_id, "out") if e.relationship in forward}
    found |= {
        e.source_id for e in store.edges_of(node_id, "in") if e.relationship in RESTS_ON_BACKWARD
    }
    found.discard(node_id)
    return found


def dependants(store: Store, node_id: str, *, parts: bool = False) -> set[str]:
    """Ids of the nodes that rest on `node_id` (the reverse of :func:`grounds`)."""
    forward = _forward(parts)
    found = {e.source_id for e in store.edges_of(node_id, "in") if e.relationship in forward}
    found |= {
        e.target_id for e in store.edges_of(node_id, "out") if e.relationship in RESTS_ON_BACKWARD
    }
    found.discard(node_id)
    return found
