"""Semantic back-references of ingested reference edges (upstream's edge_extractor rule).

For every reference edge ingestion adds (file A refers to file B: A -> B), if
the cosine of B's and A's embeddings is >= `BACKREF_SIMILARITY`, a reverse
``supports`` edge B -> A is added in the same batch, with strength
round(similarity × `BACKREF_WEIGHT`, 3) and metadata ``{"origin": "ingest",
"role": "backref", "source": "edge_extractor_backref", "similarity"}``.  A
mutual pair A -> B -> A is a 2-cycle, so a region of closely related files
gets κ > 0 — the "Kappa activation" capability of seed 003 v0.3.  When the
forward edge is removed, its back-reference goes with it.  The similarity is
that of the vectors at planning time; a back-reference is not re-checked when
the files change later (the forward edge's re-derivation decides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..embed import exact_score
from .plan import ORIGIN, ROLE_REFERENCE, FilePlan

if TYPE_CHECKING:
    from ..api import Graphonomous

BACKREF_SIMILARITY: Final = 0.75  # upstream edge_extractor.ex
BACKREF_WEIGHT: Final = 0.6  # upstream: weight = round(sim × 0.6, 3)
BACKREF_RELATIONSHIP: Final = "supports"
ROLE_BACKREF: Final = "backref"
BACKREF_SOURCE: Final = "edge_extractor_backref"


def _is_backref(metadata: dict[str, Any]) -> bool:
    return metadata.get("origin") == ORIGIN and metadata.get("role") == ROLE_BACKREF


def _is_reference_add(op: dict[str, Any]) -> bool:
    """An operation adding one of ingestion's reference edges."""
    if op.get("op") != "add_edge":
        return False
    metadata = op["edge"].get("metadata") or {}
    return bool(metadata.get("role") == ROLE_REFERENCE)


def add_back_references(graph: Graphonomous, plan: FilePlan) -> int:
    """Append the back-reference operations for `plan`'s reference edges; returns how many
    edges they add.  O(new reference edges × d) plus one edge lookup per removal."""
    store = graph.store
    references = [op["edge"] for op in plan.operations if _is_reference_add(op)]
    # Only the endpoints' vectors: a scan's re-link never holds every vector.
    vectors = graph.stored_vectors(
        sorted({e[end] for e in references for end in ("source_id", "target_id")})
    )
    extra: list[dict[str, Any]] = []
    for op in plan.operations:
        if op.get("op") == "add_edge":
            if not _is_reference_add(op):
                continue
            edge = op["edge"]
            source, target = edge["source_id"], edge["target_id"]
            u, v = vectors.get(target), vectors.get(source)
            if u is None or v is None:
                continue
            similarity = exact_score(u, v)
            if similarity < BACKREF_SIMILARITY:
                continue
            if store.find_edge(target, source, BACKREF_RELATIONSHIP) is not None:
                continue
            extra.append(
                {
                    "op": "add_edge",
                    "edge": {
                        "source_id": target,
                        "target_id": source,
                        "relationship": BACKREF_RELATIONSHIP,
                        "strength": round(similarity * BACKREF_WEIGHT, 3),
                        "metadata": {
                            "origin": ORIGIN,
                            "role": ROLE_BACKREF,
                            "source": BACKREF_SOURCE,
                            "similarity": round(similarity, 6),
                        },
                    },
                }
            )
        elif op.get("op") == "remove_edge":
            removed = store.get_edge(op["id"])
            if removed is None:
                continue
            back = store.find_edge(removed.target_id, removed.source_id, BACKREF_RELATIONSHIP)
            if back is not None and _is_backref(back.metadata):
                extra.append({"op": "remove_edge", "id": back.id})
                plan.edges_removed += 1
    added = sum(1 for op in extra if op["op"] == "add_edge")
    plan.operations.extend(extra)
    plan.edges_added += added
    return added
