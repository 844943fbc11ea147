"""The one public API: `Graphonomous`, a facade whose methods are the MCP tools.

Method names and arguments follow seed 003's v1 MCP tools (store_node,
store_edge, delete_node, manage_edge, graph_stats, ...).  Every method returns
a plain JSON-ready dict; errors are raised as `ValidationError`,
`NotFoundError` or `StoreError` and mapped by the CLI and the MCP server.
The CLI and MCP server hold no logic of their own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from .embed import Embedder, VectorIndex, get_embedder, pack_f32, unpack_f32
from .model import (
    DEFAULT_AGENT_ID,
    NODE_TYPES,
    RELATIONSHIPS,
    TIMESCALES,
    Edge,
    Node,
    NotFoundError,
    ValidationError,
    check_choice,
    check_id,
    check_int,
    check_metadata,
    check_text,
    check_unit_interval,
    normalize_edge_fields,
    utc_now,
)
from .records import edge_from_fields, node_from_fields
from .store import SCHEMA_VERSION, Store, apply_batch

DEFAULT_DB_PATH: Final = "~/.graphonomous/knowledge.db"
DB_ENV_VAR: Final = "GRAPHONOMOUS_DB"
MAX_LIST_LIMIT: Final = 10_000
EDGE_ACTIONS: Final = ("get", "list", "update", "delete")


def resolve_db_path(db: str | os.PathLike[str] | None) -> str:
    """The database file: the argument, else $GRAPHONOMOUS_DB, else the default path."""
    if db is None:
        db = os.environ.get(DB_ENV_VAR) or DEFAULT_DB_PATH
    text = str(db)
    return text if text == ":memory:" else str(Path(text).expanduser())


class Graphonomous:
    """A knowledge graph in one SQLite file (or `":memory:"`).

    Thread-safe: one re-entrant lock serialises every operation, so concurrent
    MCP requests and the consolidation timer never interleave writes.
    """

    def __init__(
        self, db: str | os.PathLike[str] | None = None, embedder: Embedder | str | None = None
    ) -> None:
        self.db_path = resolve_db_path(db)
        self.embedder = (
            get_embedder(embedder) if embedder is None or isinstance(embedder, str) else embedder
        )
        self.store = Store(self.db_path)
        self.lock = threading.RLock()
        self._index: VectorIndex | None = None

    def close(self) -> None:
        with self.lock:
            self.store.close()

    def __enter__(self) -> Graphonomous:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- embeddings and the similarity index --------------------------------

    @property
    def embedding_model(self) -> str:
        """The tag stored with each vector: vectors of different models never mix."""
        return self.embedder.name

    def vector_index(self) -> VectorIndex:
        """The in-memory index of live (not forgotten) nodes, loaded on first use.

        Nodes lacking a vector of the current embedder (e.g. after switching
        models) are embedded and stored then."""
        if self._index is None:
            index = VectorIndex(self.embedder.dimensions)
            stored = self.store.iter_embeddings(self.embedding_model)
            index.bulk_load((node_id, unpack_f32(blob)) for node_id, blob in stored)
            have = {node_id for node_id, _ in stored}
            missing = [n for n in self.store.list_nodes() if n.id not in have]
            if missing:
                vectors = self.embedder.embed([n.content for n in missing])
                with self.store.transaction():
                    for node, vector in zip(missing, vectors, strict=False):
                        self.store.set_embedding(node.id, pack_f32(vector), self.embedding_model)
                for node, vector in zip(missing, vectors, strict=False):
                    index.add(node.id, vector)
            self._index = index
        return self._index

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        # Round-trip through float32 so the index holds exactly what is stored.
        return [unpack_f32(pack_f32(v)) for v in self.embedder.embed(list(texts))]

    def index_update(self, vectors: Mapping[str, list[float]], removed: Sequence[str]) -> None:
        """Mirror committed writes into the index (only after the commit succeeded)."""
        if self._index is None:
            return
        for node_id in removed:
            self._index.remove(node_id)
        for node_id, vector in vectors.items():
            self._index.add(node_id, vector)

    # -- nodes ----------------------------------------------------------------

    def store_node(
        self,
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
        }
        fields.update({k: v for k, v in optional.items() if v is not None})
        node = node_from_fields(fields)
        (vector,) = self.embed_texts([node.content])
        with self.lock:
            with self.store.transaction():
                missing = set(node.causal_parent_ids) - set(
                    self.store.get_nodes(node.causal_parent_ids)
                )
                if missing:
                    raise ValidationError(
                        "causal_parent_ids", f"unknown node ids: {', '.join(sorted(missing))}"
                    )
                self.store.insert_node(node)
                self.store.set_embedding(node.id, pack_f32(vector), self.embedding_model)
            self.index_update({node.id: vector}, ())
        return {"node": node.to_dict()}

    def get_node(self, node_id: str, *, include_forgotten: bool = False) -> dict[str, Any]:
        """One node and its edges.  Raises NotFoundError."""
        check_id("node_id", node_id)
        with self.lock:
            node = self.store.require_node(node_id, include_forgotten=include_forgotten)
            edges = self.store.edges_of(node_id, "both")
        return {"node": node.to_dict(), "edges": [e.to_dict() for e in edges]}

    def list_nodes(
        self,
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
        with self.lock:
            nodes = self.store.list_nodes(**filters, limit=limit, offset=offset)
            total = self.store.count_nodes(**filters)
        return {"nodes": [n.to_dict() for n in nodes], "count": len(nodes), "total": total}

    def delete_node(self, node_id: str) -> dict[str, Any]:
        """Delete a node with its edges and embedding.  Raises NotFoundError."""
        check_id("node_id", node_id)
        with self.lock:
            edges_removed = self.store.delete_node(node_id)
            self.index_update({}, [node_id])
        return {"deleted": True, "node_id": node_id, "edges_removed": edges_removed}

    def similarity_search(
        self, query: str, limit: int = 10, *, node_type: str | None = None
    ) -> dict[str, Any]:
        """Nodes most similar to `query` by embedding cosine (exact top-k; forgotten excluded)."""
        check_text("query", query, allow_empty=True)
        limit = check_int("limit", limit, 1, MAX_LIST_LIMIT)
        if node_type is not None:
            check_choice("node_type", node_type, NODE_TYPES)
        (vector,) = self.embed_texts([query])
        with self.lock:
            index = self.vector_index()
            allow = None
            if node_type is not None:
                allow = set(self.store.node_ids(node_type=node_type)).__contains__
            hits = index.search(vector, limit, allow=allow)
            nodes = self.store.get_nodes([node_id for node_id, _ in hits])
        return {
            "query": query,
            "results": [
                {**nodes[node_id].to_dict(), "similarity": round(score, 6)}
                for node_id, score in hits
            ],
        }

    # -- edges ----------------------------------------------------------------

    def store_edge(
        self,
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
        fields = normalize_edge_fields(
            {**{k: v for k, v in given.items() if v is not None}, **aliases}
        )
        edge = edge_from_fields(fields)
        with self.lock, self.store.transaction():
            for field_name, endpoint in (
                ("source_id", edge.source_id),
                ("target_id", edge.target_id),
            ):
                if self.store.get_node(endpoint) is None:
                    raise ValidationError(field_name, f"no node with id {endpoint!r}")
            existing = self.store.find_edge(edge.source_id, edge.target_id, edge.relationship)
            if existing is None:
                self.store.insert_edge(edge)
                return {"edge": edge.to_dict(), "created": True}
            updates: dict[str, Any] = {"updated_at": utc_now()}
            if "strength" in fields:
                updates["strength"] = edge.strength
            if "metadata" in fields:
                updates["metadata"] = {**existing.metadata, **edge.metadata}
            if "decay_rate" in fields:
                updates["decay_rate"] = edge.decay_rate
            self.store.update_edge(existing.id, **updates)
            stored = self.store.get_edge(existing.id)
            assert stored is not None
            return {"edge": stored.to_dict(), "created": False}

    def manage_edge(
        self,
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
        with self.lock:
            if action == "list":
                limit = check_int("limit", limit, 1, MAX_LIST_LIMIT)
                if node_id is not None:
                    edges = self.store.edges_of(
                        check_id("node_id", node_id), direction, named.get("relationship")
                    )
                else:
                    edges = self.store.list_edges(relationship=named.get("relationship"))
                return {
                    "edges": [e.to_dict() for e in edges[:limit]],
                    "count": min(len(edges), limit),
                }
            edge = self._find_named_edge(edge_id, named)
            if action == "get":
                return {"edge": edge.to_dict()}
            if action == "delete":
                self.store.delete_edge(edge.id)
                return {"deleted": True, "edge_id": edge.id}
            updates: dict[str, Any] = {"updated_at": utc_now()}
            if named.get("strength") is not None:
                updates["strength"] = check_unit_interval("strength", named["strength"])
            if metadata is not None:
                updates["metadata"] = {**edge.metadata, **check_metadata("metadata", metadata)}
            if len(updates) == 1:
                raise ValidationError("strength", "update needs strength and/or metadata")
            self.store.update_edge(edge.id, **updates)
            updated = self.store.get_edge(edge.id)
            assert updated is not None
            return {"edge": updated.to_dict()}

    def _find_named_edge(self, edge_id: str | None, named: Mapping[str, Any]) -> Edge:
        if edge_id is not None:
            found = self.store.get_edge(check_id("edge_id", edge_id))
            if found is None:
                raise NotFoundError("edge", edge_id)
            return found
        missing = [k for k in ("source_id", "target_id", "relationship") if not named.get(k)]
        if missing:
            raise ValidationError(
                missing[0], "give edge_id, or source_id + target_id + relationship"
            )
        found = self.store.find_edge(named["source_id"], named["target_id"], named["relationship"])
        if found is None:
            raise NotFoundError(
                "edge", f"{named['source_id']} -[{named['relationship']}]-> {named['target_id']}"
            )
        return found

    # -- batches and statistics ---------------------------------------------

    def apply_batch(self, operations: Sequence[object]) -> dict[str, Any]:
        """Apply a list of operations atomically (see graphonomous.store.batch)."""
        with self.lock:
            result = apply_batch(self.store, operations)
            texts = result.changed_content
            if texts:
                ids = sorted(texts)
                vectors = dict(zip(ids, self.embed_texts([texts[i] for i in ids]), strict=False))
                with self.store.transaction():
                    for node_id, vector in vectors.items():
                        self.store.set_embedding(node_id, pack_f32(vector), self.embedding_model)
            else:
                vectors = {}
            self.index_update(vectors, result.removed_node_ids)
        return result.to_dict()

    def graph_stats(self) -> dict[str, Any]:
        """Counts by type / timescale / relationship, confidence summary, storage facts."""
        with self.lock:
            store = self.store
            live = "WHERE forgotten_at IS NULL"
            by_type = store.grouped_counts("nodes", "node_type", live)
            by_timescale = store.grouped_counts("nodes", "timescale", live)
            by_relationship = store.grouped_counts("edges", "relationship")
            node_count = store.count_nodes()
            mean_confidence = store.scalar(f"SELECT avg(confidence) FROM nodes {live}")
            return {
                "node_count": node_count,
                "edge_count": store.count_edges(),
                "forgotten_count": store.count_nodes(forgotten=True),
                "nodes_by_type": {t: by_type.get(t, 0) for t in NODE_TYPES},
                "nodes_by_timescale": {t: by_timescale.get(t, 0) for t in TIMESCALES},
                "edges_by_relationship": {
                    r: by_relationship[r] for r in RELATIONSHIPS if r in by_relationship
                },
                "mean_confidence": round(float(mean_confidence), 6)
                if mean_confidence is not None
                else None,
                "embedding_count": int(
                    store.scalar(
                        "SELECT count(*) FROM node_embeddings WHERE model = ?",
                        (self.embedding_model,),
                    )
                ),
                "embedder": self.embedding_model,
                "agents": sorted(store.grouped_counts("nodes", "agent_id")),
                "schema_version": SCHEMA_VERSION,
                "db_path": self.db_path,
            }


__all__ = ["DEFAULT_AGENT_ID", "Graphonomous", "Node", "resolve_db_path"]
