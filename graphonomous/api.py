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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from . import retrieval
from .embed import Embedder, VectorIndex, get_embedder, pack_f32
from .engine import Engine
from .learning import (
    attention,
    beliefs,
    consolidator,
    coverage,
    deliberation,
    erasure,
    forgetting,
    goals,
    learner,
    orchestrator,
    uncertainty,
)
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
from .retrieval import (
    Bm25Index,
    GraphSnapshot,
    RetrievalSettings,
    build_snapshot,
)
from .retrieval.entities import EntityIndex
from .retrieval.experience import ExperienceIndex, RetrievalTrace
from .retrieval.metrics import stored_graph_metrics
from .retrieval.provenance import node_result
from .retrieval.region import DEFAULT_SEARCH_LIMIT as REGION_SEARCH_LIMIT
from .retrieval.region import analyze_region
from .server_memory import MemoryView
from .store import (
    SCHEMA_VERSION,
    Store,
    apply_batch,
    is_postgres_url,
    open_store,
    storage_url_from_env,
)

DEFAULT_DB_PATH: Final = "~/.graphonomous/knowledge.db"
DB_ENV_VAR: Final = "GRAPHONOMOUS_DB"
MAX_LIST_LIMIT: Final = 10_000
EDGE_ACTIONS: Final = ("get", "list", "update", "delete")


def resolve_db_path(db: str | os.PathLike[str] | None) -> str:
    """The database file: the argument, else $GRAPHONOMOUS_DB, else the default path."""
    if db is None:
        db = storage_url_from_env() or os.environ.get(DB_ENV_VAR) or DEFAULT_DB_PATH
    text = str(db)
    return text if text == ":memory:" or is_postgres_url(text) else str(Path(text).expanduser())


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
        self.store = open_store(self.db_path)
        # The engine owns the store, the lock, the indexes and the snapshot;
        # the facade validates arguments and delegates.
        self.engine: Engine[Store, GraphSnapshot] = Engine(
            self.store, self.embedder, build_snapshot
        )
        self.lock: threading.RLock = self.engine.lock
        # Learning from use: recent retrievals (to find the query an outcome
        # answers) and the outcomes with a known query (retrieval.experience).
        self.retrieval_trace = RetrievalTrace()
        self.experience = ExperienceIndex()

    def close(self) -> None:
        self.engine.close()

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
        """The similarity index of live nodes, current with the database (see Engine)."""
        return self.engine.vector_index()

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of texts, rounded through float32 like stored vectors."""
        return self.engine.embed_texts(texts)

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
        with self.engine.write() as store:
            missing = set(node.causal_parent_ids) - set(store.get_nodes(node.causal_parent_ids))
            if missing:
                raise ValidationError(
                    "causal_parent_ids", f"unknown node ids: {', '.join(sorted(missing))}"
                )
            store.insert_node(node)
            store.set_embedding(node.id, pack_f32(vector), self.embedding_model)
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
        with self.engine.write() as store:
            edges_removed = store.delete_node(node_id)
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
                {**node_result(nodes[node_id]), "similarity": round(score, 6)}
                for node_id, score in hits
                if node_id in nodes and nodes[node_id].forgotten_at is None
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

    def apply_batch(
        self,
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
        with self.engine.write() as store:
            result = apply_batch(store, operations)
            texts = result.changed_content
            ids = sorted(texts)
            if defer_embeddings:
                store.delete_embeddings(ids)
            else:
                vectors = self.embed_texts([texts[i] for i in ids])
                for node_id, vector in zip(ids, vectors, strict=True):
                    store.set_embedding(node_id, pack_f32(vector), self.embedding_model)
            if bookkeeping is not None:
                bookkeeping(store)
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

    # == retrieval =============================================================
    # Owned by the retrieval layer (graphonomous/retrieval/, SPEC "Retrieval").
    # The search state (vector and BM25 indexes, graph snapshot) is the engine's.

    def text_index(self) -> Bm25Index:
        """The BM25 index of live nodes' content, current with the database (see Engine)."""
        return self.engine.text_index()

    def entity_index(self) -> EntityIndex:
        """The entity index of searchable content (the multi-hop walk), kept current with
        the database by the engine like the BM25 index."""
        index = self.engine.text_mirror("entities", EntityIndex)
        assert isinstance(index, EntityIndex)
        return index

    def graph_snapshot(self) -> GraphSnapshot:
        """Every live node and edge in memory, rebuilt when the database changed."""
        return self.engine.graph_snapshot()

    def snapshot_writes_done(self, before: tuple[int, int]) -> None:
        """Declare the writes since fingerprint `before` graph-neutral (access counters)."""
        self.engine.snapshot_writes_done(before)

    def retrieve_context(
        self,
        query: str,
        *,
        limit: int = 10,
        expansion_hops: int = 1,
        neighbors_per_node: int = 5,
        min_score: float = 0.0,
        node_type: str | None = None,
        agent_id: str | None = None,
        effort: int | None = None,
        deep: bool = False,
        settings: RetrievalSettings | None = None,
    ) -> dict[str, Any]:
        """κ-aware ranked retrieval (see `graphonomous.retrieval.retrieve_context`)."""
        return retrieval.retrieve_context(
            self,
            query,
            limit=limit,
            expansion_hops=expansion_hops,
            neighbors_per_node=neighbors_per_node,
            min_score=min_score,
            node_type=node_type,
            agent_id=agent_id,
            effort=effort,
            deep=deep,
            settings=settings,
        )

    def retrieve_episodic(
        self,
        since: str | None = None,
        until: str | None = None,
        limit: int = 20,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        """Episodic nodes created in [since, until], newest first."""
        return retrieval.retrieve_episodic(self, since, until, limit, agent_id)

    def retrieve_procedural(
        self,
        task: str,
        preconditions: Sequence[str] | None = None,
        limit: int = 5,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        """Procedures for a task, boosted by met preconditions, with their steps."""
        return retrieval.retrieve_procedural(self, task, preconditions, limit, agent_id)

    def trace_evidence_path(
        self, from_id: str, to_id: str, k: int = 1, max_hops: int = 6, direction: str = "both"
    ) -> dict[str, Any]:
        """The k most credible evidence chains between two nodes."""
        return retrieval.trace_evidence_path(self, from_id, to_id, k, max_hops, direction)

    def graph_traverse(
        self,
        node_id: str,
        depth: int = 2,
        relationships: Sequence[str] | None = None,
        direction: str = "both",
        limit: int = 100,
    ) -> dict[str, Any]:
        """Breadth-first walk from a node (depth <= 5)."""
        return retrieval.graph_traverse(self, node_id, depth, relationships, direction, limit)

    def query_graph(self, operation: str, **arguments: Any) -> dict[str, Any]:
        """list_nodes | get_node | get_edges | similarity_search, mapped onto facade methods."""
        return retrieval.query_graph(self, operation, **arguments)

    def topology_analyze(
        self,
        node_ids: Sequence[str] | None = None,
        query: str | None = None,
        limit: int = REGION_SEARCH_LIMIT,
    ) -> dict[str, Any]:
        """κ analysis of a region: the given nodes plus the `limit` best hits for `query`
        (every live node when neither is given); canonical §A.1 result + `recommendation`."""
        arguments: dict[str, Any] = {"limit": limit}
        if node_ids is not None:
            arguments["node_ids"] = list(node_ids)
        if query is not None:
            arguments["query"] = query
        return analyze_region(self, arguments)

    def graph_metrics(self, backend: str | None = None) -> dict[str, Any]:
        """Spectral metrics of the live graph: λ₂ per component, Louvain Q, entropy H."""
        return stored_graph_metrics(self, backend)

    def retrieval_mermaid(self, result: Mapping[str, Any]) -> str:
        """A Mermaid flowchart of a `retrieve_context` result (edges read from the store)."""
        ids = [r["node_id"] for r in result.get("results", [])]
        with self.lock:
            edges = [edge.to_dict() for edge in self.store.list_edges_between(ids)]
        return retrieval.to_mermaid(result, edges)

    # == memory-compat =========================================================
    # graphonomous/server_memory (SPEC "memory-compat"): the entities and relations
    # of @modelcontextprotocol/server-memory over this graph.

    _memory_view: MemoryView | None = None

    def memory_view(self) -> MemoryView:
        """The entity/relation view of this graph behind the memory-compat tools and
        ``graphonomous import-memory`` (made on first use, one per graph)."""
        with self.lock:
            if self._memory_view is None:
                self._memory_view = MemoryView(self)
            return self._memory_view

    # == learning (A) ===========================================================
    # Owned by graphonomous/learning/{learner,beliefs,forgetting,uncertainty}.py
    # (SPEC "Learning A").  Thin delegators; the modules hold the logic.

    @property
    def contradiction_hooks(self) -> beliefs.ContradictionHooks:
        """The hooks notified of contradictions found by belief operations (per instance)."""
        with self.lock:
            hooks = self.engine.hooks.get("contradiction")
            if not isinstance(hooks, beliefs.ContradictionHooks):
                hooks = self.engine.hooks["contradiction"] = beliefs.ContradictionHooks()
            return hooks

    def register_contradiction_hook(self, hook: beliefs.ContradictionHook) -> int:
        """Call `hook(contradiction)` for every contradiction found; returns a handle."""
        return self.contradiction_hooks.register(hook)

    def unregister_contradiction_hook(self, handle: int) -> bool:
        """Remove a contradiction hook; False if the handle is unknown."""
        return self.contradiction_hooks.unregister(handle)

    def learn_from_outcome(
        self,
        action_id: str,
        status: str,
        confidence: float,
        causal_node_ids: Sequence[str],
        evidence: Mapping[str, Any] | str | None = None,
        goal_id: str | None = None,
        trace_id: str | None = None,
        evidence_type: str | None = None,
        signal_id: str | None = None,
    ) -> dict[str, Any]:
        """Record an action outcome; update causal nodes' confidence and Q-value
        (once per `signal_id`)."""
        self.touch()
        return learner.learn_from_outcome(
            self,
            action_id,
            status,
            confidence,
            causal_node_ids,
            evidence=evidence,
            goal_id=goal_id,
            trace_id=trace_id,
            signal_id=signal_id,
            evidence_type=evidence_type,
        )

    def learn_from_feedback(
        self,
        node_id: str,
        feedback: str,
        correction: str | None = None,
        reason: str | None = None,
    ) -> dict[str, Any]:
        """positive | negative | correction feedback on one node."""
        self.touch()
        return learner.learn_from_feedback(self, node_id, feedback, correction, reason)

    def learn_detect_novelty(
        self,
        text: str,
        threshold: float = learner.NOVELTY_THRESHOLD,
        limit: int = learner.NOVELTY_NEIGHBOURS,
    ) -> dict[str, Any]:
        """Novelty of a text: 1 − highest similarity to a live node."""
        return learner.learn_detect_novelty(self, text, threshold, limit)

    def learn_from_interaction(
        self,
        user_message: str,
        model_response: str,
        context: Mapping[str, Any] | str | None = None,
    ) -> dict[str, Any]:
        """Store an exchange as an episode plus the claims of the response."""
        self.touch()
        return learner.learn_from_interaction(self, user_message, model_response, context)

    def belief_revise(
        self,
        action: str,
        *,
        content: str | None = None,
        node_id: str | None = None,
        new_content: str | None = None,
        new_id: str | None = None,
        reason: str | None = None,
        node_type: str | None = None,
        confidence: float | None = None,
        metadata: Mapping[str, Any] | str | None = None,
        source: str | None = None,
        contradicts: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """expand | revise | contract a belief (AGM style)."""
        self.touch()
        return beliefs.belief_revise(
            self,
            action,
            content=content,
            node_id=node_id,
            new_content=new_content,
            new_id=new_id,
            reason=reason,
            node_type=node_type,
            confidence=confidence,
            metadata=metadata,
            source=source,
            contradicts=contradicts,
        )

    def belief_contradictions(
        self,
        node_id: str | None = None,
        content: str | None = None,
        limit: int = beliefs.CONTRADICTION_CANDIDATES,
    ) -> dict[str, Any]:
        """Contradictions of a node (explicit + detected) or of a text (detected)."""
        return beliefs.detect_contradictions(self, node_id, content, limit=limit)

    def revision_chain(self, node_id: str) -> dict[str, Any]:
        """The provenance chain (A → B → C) of supersessions through a node."""
        return beliefs.revision_chain(self, node_id)

    def forget_node(
        self, node_id: str, mode: str = "soft", reason: str | None = None
    ) -> dict[str, Any]:
        """Forget a node: soft (hide), hard (delete) or cascade (delete + orphans)."""
        self.touch()
        return forgetting.forget_node(self, node_id, mode, reason)

    def forget_by_policy(
        self,
        policy: str = "hybrid",
        max_nodes: int | None = None,
        dry_run: bool = False,
        mode: str = forgetting.DEFAULT_POLICY_MODE,
    ) -> dict[str, Any]:
        """Forget lowest-priority unprotected nodes until the budget holds."""
        self.touch()
        return forgetting.forget_by_policy(self, policy, max_nodes, dry_run, mode)

    def gdpr_erase(
        self, node_id: str, reason: str | None = None, wait_s: float = 0.0
    ) -> dict[str, Any]:
        """Erase a node and every trace of it, including from the file's free pages;
        `wait_s` waits for other connections' readers so the file scrub can complete."""
        self.touch()
        result = forgetting.gdpr_erase(self, node_id, reason, wait_s)
        with self.lock:  # queries that returned it may quote it: drop them too
            self.retrieval_trace.forget([node_id])
        return result

    def gdpr_finish(self, wait_s: float = 0.0) -> dict[str, Any]:
        """Complete a pending physical scrub of erased content (``erase --finish``)."""
        self.touch()
        return erasure.finish(self, wait_s)

    def forgetting_config(
        self,
        policy: str | None = None,
        max_nodes: int | None = None,
        max_age_hours: int | None = None,
    ) -> dict[str, Any]:
        """The forgetting configuration; any argument given is changed first."""
        if policy is None and max_nodes is None and max_age_hours is None:
            return forgetting.get_forgetting_config(self)
        return forgetting.set_forgetting_config(self, policy, max_nodes, max_age_hours)

    def restore_nodes(self, node_ids: Sequence[str], reason: str) -> list[str]:
        """Un-forget soft-forgotten nodes (a re-scan restores chunks of existing files)."""
        return forgetting.restore_nodes(self, node_ids, reason)

    def budget_status(self) -> dict[str, Any]:
        """The node budget: max_nodes, counted and exempt nodes, ratio, warning."""
        return forgetting.budget_status(self)

    def memory_pressure(self) -> dict[str, Any] | None:
        """The memory-pressure attention item (live nodes > 90 % of max_nodes), or None."""
        return forgetting.memory_pressure(self)

    def epistemic_frontier(
        self,
        min_gap: float = uncertainty.DEFAULT_MIN_GAP,
        limit: int = uncertainty.DEFAULT_FRONTIER_LIMIT,
        include_propagated: bool = True,
    ) -> dict[str, Any]:
        """Nodes whose Wilson interval is widest: where evidence is most needed."""
        return uncertainty.epistemic_frontier(self, min_gap, limit, include_propagated)

    def node_uncertainty(self, node_id: str) -> dict[str, Any]:
        """Own and propagated Wilson interval, entropy and information gain of a node."""
        return uncertainty.node_uncertainty(self, node_id)

    # == end of learning (A) ====================================================

    # == learning (B) ===========================================================
    # Owned by graphonomous/learning/{consolidator,goals,coverage,attention,
    # deliberation,timer}.py (SPEC "Learning B").  Thin delegators.

    def touch(self) -> None:
        """Record activity now: the idle consolidation timer waits for quiet."""
        self.engine.touch()

    @property
    def last_activity(self) -> float:
        """`time.monotonic()` of the last recorded activity (0.0: none yet)."""
        return self.engine.last_activity

    def run_consolidation(self, dry_run: bool = False, trigger: str = "manual") -> dict[str, Any]:
        """One consolidation cycle (decay … abstraction), logged; see learning.consolidator."""
        return consolidator.run_consolidation(self, dry_run, trigger)

    def consolidation_log(self, limit: int = 20) -> dict[str, Any]:
        """The latest consolidation runs, newest first (graphonomous://consolidation/log)."""
        return consolidator.consolidation_log(self, limit)

    def plasticity_metrics(self, window_hours: int = 24) -> dict[str, Any]:
        """The Orchestrator's stability–plasticity figures over the last `window_hours`."""
        return orchestrator.plasticity_metrics(self, window_hours)

    def manage_goal(self, action: str, **params: Any) -> dict[str, Any]:
        """GoalGraph: create | get | list | update | delete | transition | set_progress |
        link_nodes | unlink_nodes | decompose (see learning.goals)."""
        self.touch()
        return goals.manage_goal(self, action, **params)

    def review_goal(self, goal_id: str, apply: bool = False) -> dict[str, Any]:
        """Coverage-driven decision act | learn | escalate for a goal, optionally applied."""
        self.touch()
        return goals.review_goal(self, goal_id, apply)

    def goals_snapshot(self, limit: int = 100) -> dict[str, Any]:
        """Goal totals, status breakdown and goals (graphonomous://goals/snapshot)."""
        return goals.goals_snapshot(self, limit)

    def coverage_query(
        self,
        task_description: str,
        critical_topics: Sequence[str] | None = None,
        limit: int = 10,
    ) -> dict[str, Any]:
        """Is the graph's knowledge adequate for a task?  Recommends act | learn | escalate."""
        self.touch()
        return coverage.coverage_query(self, task_description, critical_topics, limit)

    def attention_survey(self) -> dict[str, Any]:
        """Goals by urgency × gap + surprise, memory pressure, κ > 0 regions, open items."""
        self.touch()
        return attention.attention_survey(self)

    def attention_run_cycle(self, autonomy: str = "advise", budget: int = 5) -> dict[str, Any]:
        """Triage the survey and dispatch up to `budget` actions (observe | advise | act)."""
        self.touch()
        return attention.attention_run_cycle(self, autonomy, budget)

    def deliberate(
        self,
        query: str | None = None,
        node_ids: Sequence[str] | None = None,
        conclusions: Sequence[Mapping[str, Any]] | None = None,
        write_back: bool = False,
    ) -> dict[str, Any]:
        """Deliberation plans for κ > 0 regions; optionally store the caller's conclusions."""
        self.touch()
        return deliberation.deliberate(self, query, node_ids, conclusions, write_back)

    # == end of learning (B) ====================================================


__all__ = ["DEFAULT_AGENT_ID", "Graphonomous", "Node", "resolve_db_path"]
