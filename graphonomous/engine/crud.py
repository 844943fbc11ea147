"""The record tools: store, read, list and delete nodes; store and manage edges;
atomic batches; graph statistics.

Rules of this module: every function takes the engine first and is exposed
as the facade method of the same name (the MCP tool name); arguments are
validated here (errors name the field), rows are written in one
``engine.write()`` transaction (the change log keeps the indexes current),
and results are plain JSON-ready dicts.  Layer: engine (imports model,
records, store and embed only).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from ..embed import pack_f32
from ..model import (
    MAX_LIST_LIMIT,
    NODE_TYPES,
    RELATIONSHIPS,
    TIMESCALES,
    Edge,
    NotFoundError,
    ValidationError,
    check_choice,
    check_id,
    check_int,
    check_metadata,
    check_unit_interval,
    normalize_edge_fields,
)
from ..records import edge_from_fields, node_from_fields
from ..store import SCHEMA_VERSION, Store
from ..store import apply_batch as apply_operations
from ..store.sqlite import UPSERT_STATED
from .core import Engine

# The engine of an SQLite graph, whatever its snapshot type.
GraphStoreEngine: TypeAlias = Engine[Store, Any]

EDGE_ACTIONS: Final = ("get", "list", "update", "delete")


def store_node(
    engine: GraphStoreEngine,
    content: str,
    node_type: str = "semantic",
    *,
    metadata: Mapping[str, Any] | str | None = None,
    source: str | None = None,
    confidence: float | None = None,
    causal_parent_ids: Sequence[str] | None = None,
    timescale: str | None = None,
    creation_source: str | None = None,
    decay_rate: float | None = None,
    node_id: str | None = None,
    agent_id: str | None = None,
    pinned: bool = False,
    valid_from: str | None = None,
    valid_to: str | None = None,
) -> dict[str, Any]:
    """Store one knowledge node (embedded on write).  Returns {"node": {...}}."""
    fields: dict[str, Any] = {
        "content": content,
        "node_type": node_type,
        "metadata": metadata,
        "source": source,
        "causal_parent_ids": causal_parent_ids,
        "id": node_id,
        "agent_id": agent_id,
        "pinned": pinned,
    }
    optional = {
        "confidence": confidence,
        "timescale": timescale,
        "creation_source": creation_source,
        "decay_rate": decay_rate,
        "valid_from": valid_from,
        "valid_to": valid_to,
    }
    fields.update({k: v for k, v in optional.items() if v is not None})
    node = node_from_fields(fields, now=engine.now())
    (vector,) = engine.embed_texts([node.content])
    with engine.write() as store:
        missing = set(node.causal_parent_ids) - set(store.get_nodes(node.causal_parent_ids))
        if missing:
            raise ValidationError(
                "causal_parent_ids", f"unknown node ids: {', '.join(sorted(missing))}"
            )
        store.insert_node(node)
        store.set_embedding(node.id, pack_f32(vector), engine.embedding_model)
    return {"node": node.to_dict()}


def get_node(
    engine: GraphStoreEngine, node_id: str, *, include_forgotten: bool = False
) -> dict[str, Any]:
    """One node and its edges.  Raises NotFoundError."""
    check_id("node_id", node_id)
    with engine.lock:
        node = engine.store.require_node(node_id, include_forgotten=include_forgotten)
        edges = engine.store.edges_of(node_id, "both")
    return {"node": node.to_dict(), "edges": [e.to_dict() for e in edges]}


def list_nodes(
    engine: GraphStoreEngine,
    *,
    node_type: str | None = None,
    timescale: str | None = None,
    agent_id: str | None = None,
    min_confidence: float | None = None,
    max_confidence: float | None = None,
    include_forgotten: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    """Nodes by type / timescale / agent / confidence range, oldest first."""
    filters: dict[str, Any] = {
        "node_type": None
        if node_type is None
        else check_choice("node_type", node_type, NODE_TYPES),
        "timescale": None
        if timescale is None
        else check_choice("timescale", timescale, TIMESCALES),
        "agent_id": None if agent_id is None else check_id("agent_id", agent_id),
        "min_confidence": None
        if min_confidence is None
        else check_unit_interval("min_confidence", min_confidence),
        "max_confidence": None
        if max_confidence is None
        else check_unit_interval("max_confidence", max_confidence),
        "forgotten": None if include_forgotten else False,
    }
    limit = check_int("limit", limit, 1, MAX_LIST_LIMIT)
    offset = check_int("offset", offset, 0)
    with engine.lock:
        nodes = engine.store.list_nodes(**filters, limit=limit, offset=offset)
        total = engine.store.count_nodes(**filters)
    return {"nodes": [n.to_dict() for n in nodes], "count": len(nodes), "total": total}


def delete_node(engine: GraphStoreEngine, node_id: str) -> dict[str, Any]:
    """Delete a node with its edges and embedding.  Raises NotFoundError."""
    check_id("node_id", node_id)
    with engine.write() as store:
        edges_removed = store.delete_node(node_id)
    return {"deleted": True, "node_id": node_id, "edges_removed": edges_removed}


def store_edge(
    engine: GraphStoreEngine,
    source_id: str | None = None,
    target_id: str | None = None,
    relationship: str | None = None,
    *,
    strength: float | None = None,
    metadata: Mapping[str, Any] | str | None = None,
    decay_rate: float | None = None,
    agent_id: str | None = None,
    **aliases: Any,
) -> dict[str, Any]:
    """Store a typed edge; storing an existing (source, target, relationship) updates it.

    Upstream names are accepted: edge_type, weight, from/to.
    Returns {"edge": {...}, "created": bool}.
    """
    given = {
        "source_id": source_id,
        "target_id": target_id,
        "relationship": relationship,
        "strength": strength,
        "metadata": metadata,
        "decay_rate": decay_rate,
        "agent_id": agent_id,
    }
    fields = normalize_edge_fields({**{k: v for k, v in given.items() if v is not None}, **aliases})
    edge = edge_from_fields(fields, now=engine.now())
    with engine.lock, engine.store.transaction():
        for field_name, endpoint in (
            ("source_id", edge.source_id),
            ("target_id", edge.target_id),
        ):
            if engine.store.get_node(endpoint) is None:
                raise ValidationError(field_name, f"no node with id {endpoint!r}")
        stated = [name for name in UPSERT_STATED if name in fields]
        edge_id, created = engine.store.upsert_edge(edge, stated)
        if created:
            return {"edge": edge.to_dict(), "created": True}
        stored = engine.store.get_edge(edge_id)
        assert stored is not None
        return {"edge": stored.to_dict(), "created": False}


def manage_edge(
    engine: GraphStoreEngine,
    action: str,
    *,
    edge_id: str | None = None,
    source_id: str | None = None,
    target_id: str | None = None,
    relationship: str | None = None,
    node_id: str | None = None,
    direction: str = "both",
    strength: float | None = None,
    metadata: Mapping[str, Any] | str | None = None,
    limit: int = 100,
    **aliases: Any,
) -> dict[str, Any]:
    """get | list | update | delete edges.

    An edge is named by `edge_id` or by (source_id, target_id, relationship).
    `list` takes `node_id` + `direction` (out|in|both) and/or `relationship`.
    """
    action = check_choice("action", action, EDGE_ACTIONS)
    named = normalize_edge_fields(
        {
            **{
                k: v
                for k, v in {
                    "source_id": source_id,
                    "target_id": target_id,
                    "relationship": relationship,
                    "strength": strength,
                }.items()
                if v is not None
            },
            **aliases,
        }
    )
    if named.get("relationship") is not None:
        check_choice("relationship", named["relationship"], RELATIONSHIPS)
    with engine.lock:
        if action == "list":
            limit = check_int("limit", limit, 1, MAX_LIST_LIMIT)
            if node_id is not None:
                edges = engine.store.edges_of(
                    check_id("node_id", node_id), direction, named.get("relationship")
                )
            else:
                edges = engine.store.list_edges(relationship=named.get("relationship"))
            return {
                "edges": [e.to_dict() for e in edges[:limit]],
                "count": min(len(edges), limit),
            }
        edge = _find_named_edge(engine, edge_id, named)
        if action == "get":
            return {"edge": edge.to_dict()}
        if action == "delete":
            engine.store.delete_edge(edge.id)
            return {"deleted": True, "edge_id": edge.id}
        updates: dict[str, Any] = {"updated_at": engine.now()}
        if named.get("strength") is not None:
            updates["strength"] = check_unit_interval("strength", named["strength"])
        if metadata is not None:
            updates["metadata"] = {**edge.metadata, **check_metadata("metadata", metadata)}
        if len(updates) == 1:
            raise ValidationError("strength", "update needs strength and/or metadata")
        engine.store.update_edge(edge.id, **updates)
        updated = engine.store.get_edge(edge.id)
        assert updated is not None
        return {"edge": updated.to_dict()}


def _find_named_edge(
    engine: GraphStoreEngine, edge_id: str | None, named: Mapping[str, Any]
) -> Edge:
    if edge_id is not None:
        found = engine.store.get_edge(check_id("edge_id", edge_id))
        if found is None:
            raise NotFoundError("edge", edge_id)
        # An endpoint or kind given next to edge_id must agree with the edge it names.
        for key in ("source_id", "target_id", "relationship"):
            given = named.get(key)
            if given is not None and given != getattr(found, key):
                raise ValidationError(
                    key, f"does not match edge {edge_id!r} ({key} is {getattr(found, key)!r})"
                )
        return found
    missing = [k for k in ("source_id", "target_id", "relationship") if not named.get(k)]
    if missing:
        raise ValidationError(missing[0], "give edge_id, or source_id + target_id + relationship")
    found = engine.store.find_edge(named["source_id"], named["target_id"], named["relationship"])
    if found is None:
        raise NotFoundError(
            "edge", f"{named['source_id']} -[{named['relationship']}]-> {named['target_id']}"
        )
    return found


def apply_batch(
    engine: GraphStoreEngine,
    operations: Sequence[object],
    bookkeeping: Callable[[Store], None] | None = None,
    *,
    defer_embeddings: bool = False,
) -> dict[str, Any]:
    """Apply a list of operations atomically (see graphonomous.store.batch).

    The operations, the embeddings of new or re-written content and the
    caller's own table writes (`bookkeeping(store)`, e.g. ingestion's
    `source_files` rows) commit in ONE transaction, or not at all; the
    vector and BM25 indexes follow the commit (the engine reads the change
    log).  Raises BatchError
    (or whatever `bookkeeping` raises) and then nothing is written.

    With `defer_embeddings`, new or re-written nodes are stored without a
    vector (a stale one is deleted) and embedded on the next similarity
    search instead: bulk writers whose callers never search by similarity
    (the memory-compat tools) then pay nothing for vectors, and a crash
    before the next search leaves only "missing" vectors, which every
    index load fills in.
    """
    with engine.write() as store:
        result = apply_operations(store, operations, engine.now())
        texts = result.changed_content
        ids = sorted(texts)
        if defer_embeddings:
            store.delete_embeddings(ids)
        else:
            vectors = engine.embed_texts([texts[i] for i in ids])
            for node_id, vector in zip(ids, vectors, strict=True):
                store.set_embedding(node_id, pack_f32(vector), engine.embedding_model)
        if bookkeeping is not None:
            bookkeeping(store)
    return result.to_dict()


def graph_stats(engine: GraphStoreEngine) -> dict[str, Any]:
    """Counts by type / timescale / relationship, confidence summary, storage facts."""
    with engine.lock:
        store = engine.store
        by_type = store.grouped_counts("nodes", "node_type", live_only=True)
        by_timescale = store.grouped_counts("nodes", "timescale", live_only=True)
        by_relationship = store.grouped_counts("edges", "relationship")
        node_count = store.count_nodes()
        mean_confidence = store.mean_live_confidence()
        return {
            "node_count": node_count,
            "edge_count": store.count_edges(),
            "forgotten_count": store.count_nodes(forgotten=True),
            "nodes_by_type": {t: by_type.get(t, 0) for t in NODE_TYPES},
            "nodes_by_timescale": {t: by_timescale.get(t, 0) for t in TIMESCALES},
            "edges_by_relationship": {
                r: by_relationship[r] for r in RELATIONSHIPS if r in by_relationship
            },
            "mean_confidence": round(mean_confidence, 6) if mean_confidence is not None else None,
            # the current embedder's vectors; every model's stored vectors per model
            "embedding_count": store.embedding_count(engine.embedding_model),
            "embedder": engine.embedding_model,
            "embedding_models": store.embedding_counts(),
            "agents": sorted(store.grouped_counts("nodes", "agent_id")),
            "schema_version": SCHEMA_VERSION,
            "db_path": engine.store.path,
        }


def storage_space(engine: GraphStoreEngine, per_table: bool = True) -> dict[str, Any] | None:
    """What takes the database file, per table unless `per_table` is False
    (`Store.space`); None on PostgreSQL.  O(pages of the file) per table, else O(1)."""
    with engine.lock:
        return engine.store.space(tables=per_table)


def compact(engine: GraphStoreEngine) -> dict[str, Any]:
    """Rewrite the file without its free pages (`Store.vacuum`): ``{db_path, page_size,
    file_bytes_before, file_bytes_after, bytes_freed, pages_before, pages_after,
    free_pages_before}`` (file bytes None in memory).  StoreError on PostgreSQL and on a
    read-only or damaged file.  O(file)."""
    with engine.lock:
        store = engine.store
        before = store.space(tables=False)
        store.vacuum()
        after = store.space(tables=False)
    assert before is not None and after is not None, "vacuum refuses a backend without a file"
    freed = None
    if before["file_bytes"] is not None and after["file_bytes"] is not None:
        freed = before["file_bytes"] - after["file_bytes"]
    return {
        "db_path": store.path,
        "page_size": after["page_size"],
        "file_bytes_before": before["file_bytes"],
        "file_bytes_after": after["file_bytes"],
        "bytes_freed": freed,
        "pages_before": before["page_count"],
        "pages_after": after["page_count"],
        "free_pages_before": before["free_pages"],
    }
