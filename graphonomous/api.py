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
from typing import TYPE_CHECKING, Any, Final

from . import retrieval
from .clock import Clock, clock_from_env
from .embed import Embedder, VectorIndex, get_embedder
from .engine import Engine, crud
from .engine.crud import EDGE_ACTIONS as EDGE_ACTIONS
from .lazy_import import lazy_module
from .learning import (
    beliefs,
    erasure,
    forgetting,
    goals,
    orchestrator,
    outcomes,
    uncertainty,
)
from .model import (
    DEFAULT_AGENT_ID,
    DEFAULT_NAMESPACE,
    DEFAULT_NODE_TYPE,
    Node,
    check_id,
    check_namespace,
)
from .model import MAX_LIST_LIMIT as MAX_LIST_LIMIT
from .retrieval.defaults import DEFAULT_EXPANSION_HOPS, DEFAULT_LIMIT, DEFAULT_NEIGHBORS_PER_NODE
from .retrieval.experience import (
    ExperienceIndex,
    RetrievalTrace,
    experience_index,
    retrieval_trace,
)
from .retrieval.graph_view import GraphSnapshot, build_snapshot
from .retrieval.region import DEFAULT_SEARCH_LIMIT as REGION_SEARCH_LIMIT
from .retrieval.region import analyze_region
from .store import Store, is_postgres_url, open_store, storage_url_from_env

# Loaded by the first method that uses them (`lazy_import`): a cold command loads
# only its own modules (a `consolidate` neither the attention cycle, coverage nor
# deliberation, nor the retriever and topology they import).
if TYPE_CHECKING:
    from .index import Bm25Index
    from .learning import (
        attention,
        consolidator,
        coverage,
        deliberation,
        relation_links,
        supersession,
    )
    from .retrieval import directives, entities, metrics, speakers
    from .retrieval.entities import EntityIndex
    from .retrieval.settings import RetrievalSettings
    from .retrieval.speakers import SpeakerIndex
else:
    attention = lazy_module("graphonomous.learning.attention")
    consolidator = lazy_module("graphonomous.learning.consolidator")
    coverage = lazy_module("graphonomous.learning.coverage")
    deliberation = lazy_module("graphonomous.learning.deliberation")
    directives = lazy_module("graphonomous.retrieval.directives")
    entities = lazy_module("graphonomous.retrieval.entities")
    metrics = lazy_module("graphonomous.retrieval.metrics")
    speakers = lazy_module("graphonomous.retrieval.speakers")
    supersession = lazy_module("graphonomous.learning.supersession")
    relation_links = lazy_module("graphonomous.learning.relation_links")

DEFAULT_DB_PATH: Final = "~/.graphonomous/knowledge.db"
DB_ENV_VAR: Final = "GRAPHONOMOUS_DB"


def _content_updates(operations: Sequence[object]) -> list[str]:
    """The ids an applied batch's `update_node` operations gave new content, in order."""
    ids = [
        op.get("id")
        for op in operations
        if isinstance(op, Mapping)
        and op.get("op") == "update_node"
        and isinstance(op.get("fields"), Mapping)
        and "content" in op["fields"]
    ]
    return list(dict.fromkeys(i for i in ids if isinstance(i, str)))


def _marked_operation(operation: object) -> object:
    """An ``add_node`` operation with its directive marked (`directives.mark_fields`);
    anything else as given (the batch validates it)."""
    if not isinstance(operation, Mapping) or operation.get("op") != "add_node":
        return operation
    node = operation.get("node")
    if not isinstance(node, Mapping):
        return operation
    return {**operation, "node": directives.mark_fields(node)}


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

    `namespace` is the project this facade acts in (default `default`): every read
    and write stays inside it, and other namespaces of the same file are invisible
    (SPEC §3.4).  `read_only` opens a connection that writes nothing at all — no
    access counters, saved indexes or audit entries either; a write is a StoreError
    (what a read-only token of the HTTP server gets, SPEC §3.5).
    """

    def __init__(
        self,
        db: str | os.PathLike[str] | None = None,
        embedder: Embedder | str | None = None,
        *,
        clock: Clock | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        read_only: bool = False,
    ) -> None:
        self.db_path = resolve_db_path(db)
        # Every read and write of this facade acts within one namespace (SPEC
        # "Namespaces"): the store binds every statement to it, so the engine's indexes,
        # loaded from the store, are this namespace's alone.
        self.namespace = check_namespace("namespace", namespace)
        self.embedder = (
            get_embedder(embedder) if embedder is None or isinstance(embedder, str) else embedder
        )
        self.store = open_store(self.db_path, self.namespace, read_only=read_only)
        # The engine owns the store, the lock, the indexes and the snapshot;
        # the facade validates arguments and delegates.
        self.engine: Engine[Store, GraphSnapshot] = Engine(
            self.store, self.embedder, build_snapshot, clock=clock or clock_from_env()
        )
        self.clock: Clock = self.engine.clock
        self.lock: threading.RLock = self.engine.lock

    def close(self) -> None:
        """Close the database; indexes a bulk write left far from their saved copy are
        saved first (best effort), so the next process does not rebuild them."""
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

    def stored_vectors(self, node_ids: Sequence[str]) -> dict[str, list[float]]:
        """The similarity index's vector of each id it holds, without loading every
        vector when the index is not loaded (see Engine.stored_vectors)."""
        return self.engine.stored_vectors(node_ids)

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of texts, rounded through float32 like stored vectors."""
        return self.engine.embed_texts(texts)

    def reembed(self, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Build this embedder's missing vectors now (other models' vectors stay), in
        batches; `progress(done, total)` after each.  Returns ``{"model", "missing",
        "embedded", "vectors"}`` (see `Engine.embed_missing`)."""
        return self.engine.embed_missing(progress)

    # -- nodes ----------------------------------------------------------------

    def store_node(
        self,
        content: str,
        node_type: str | None = None,
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
        """Store one knowledge node (embedded on write) and link what it updates
        (`learning.supersession`).  A governing statement is marked in its metadata
        and, with no `node_type` given, typed by its kind (`retrieval.directives`);
        otherwise the type defaults to semantic.  Returns ``{"node": {...},
        "updates": [...]}``."""
        fields = directives.mark_fields(
            {"content": content, "node_type": node_type, "metadata": metadata}
        )
        stored = crud.store_node(
            self.engine,
            content,
            fields["node_type"] or DEFAULT_NODE_TYPE,
            metadata=fields["metadata"],
            source=source,
            confidence=confidence,
            causal_parent_ids=causal_parent_ids,
            timescale=timescale,
            creation_source=creation_source,
            decay_rate=decay_rate,
            node_id=node_id,
            agent_id=agent_id,
            pinned=pinned,
            valid_from=valid_from,
            valid_to=valid_to,
        )
        stored["updates"] = supersession.link_updates(self.engine, [stored["node"]["id"]])
        stored["relation_links"] = relation_links.link_relations(
            self.engine, [stored["node"]["id"]]
        )
        if stored["updates"]:
            stored["node"] = crud.get_node(self.engine, stored["node"]["id"])["node"]
        return stored

    def get_node(self, node_id: str, *, include_forgotten: bool = False) -> dict[str, Any]:
        """One node and its edges.  Raises NotFoundError."""
        return crud.get_node(self.engine, node_id, include_forgotten=include_forgotten)

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
        return crud.list_nodes(
            self.engine,
            node_type=node_type,
            timescale=timescale,
            agent_id=agent_id,
            min_confidence=min_confidence,
            max_confidence=max_confidence,
            include_forgotten=include_forgotten,
            limit=limit,
            offset=offset,
        )

    def delete_node(self, node_id: str) -> dict[str, Any]:
        """Delete a node with its edges and embedding.  Raises NotFoundError."""
        return crud.delete_node(self.engine, node_id)

    def similarity_search(
        self, query: str, limit: int = 10, *, node_type: str | None = None
    ) -> dict[str, Any]:
        """Nodes most similar to `query` by embedding cosine (exact top-k; forgotten excluded)."""
        return retrieval.similarity_search(self.engine, query, limit, node_type=node_type)

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
        return crud.store_edge(
            self.engine,
            source_id,
            target_id,
            relationship,
            strength=strength,
            metadata=metadata,
            decay_rate=decay_rate,
            agent_id=agent_id,
            **aliases,
        )

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
        return crud.manage_edge(
            self.engine,
            action,
            edge_id=edge_id,
            source_id=source_id,
            target_id=target_id,
            relationship=relationship,
            node_id=node_id,
            direction=direction,
            strength=strength,
            metadata=metadata,
            limit=limit,
            **aliases,
        )

    # -- batches and statistics ---------------------------------------------

    def apply_batch(
        self,
        operations: Sequence[object],
        bookkeeping: Callable[[Store], None] | None = None,
        *,
        defer_embeddings: bool = False,
    ) -> dict[str, Any]:
        """Apply a list of operations atomically, with the caller's `bookkeeping(store)`
        writes in the same transaction (see `engine.crud.apply_batch`), then link what the
        new statements update (`learning.supersession`; not for an ingest's batch, whose
        files are their truth, nor a deferred-vector bulk write).  Without `bookkeeping`
        the new nodes that are governing statements are marked first
        (`retrieval.directives`)."""
        if bookkeeping is None:
            operations = [_marked_operation(op) for op in operations]
        result = crud.apply_batch(
            self.engine, operations, bookkeeping, defer_embeddings=defer_embeddings
        )
        restated = _content_updates(operations)
        if result.get("added_node_ids") or restated:  # an ingest's prose states relations too
            result["relation_links"] = relation_links.link_relations(
                self.engine, result.get("added_node_ids", []), restated
            )
        if bookkeeping is None and not defer_embeddings and result.get("added_node_ids"):
            unchecked: list[str] = []
            result["updates"] = supersession.link_updates(
                self.engine, result["added_node_ids"], unchecked
            )
            result["updates_unchecked"] = len(unchecked)
        return result

    def graph_stats(self) -> dict[str, Any]:
        """Counts by type / timescale / relationship, confidence summary, storage facts."""
        return crud.graph_stats(self.engine)

    def storage_space(self, per_table: bool = True) -> dict[str, Any] | None:
        """What takes the database file, per table (None on PostgreSQL)."""
        return crud.storage_space(self.engine, per_table)

    def compact(self) -> dict[str, Any]:
        """Give the file's free pages back (SQLite VACUUM): bytes and pages before/after."""
        return crud.compact(self.engine)

    # == retrieval =============================================================
    # Owned by the retrieval layer (graphonomous/retrieval/, SPEC "Retrieval").
    # The search state (vector and BM25 indexes, graph snapshot) is the engine's.

    def text_index(self) -> Bm25Index:
        """The BM25 index of live nodes' content, current with the database (see Engine)."""
        return self.engine.text_index()

    def entity_index(self) -> EntityIndex:
        """The entity index of searchable content (the multi-hop walk), kept current with
        the database by the engine like the BM25 index."""
        return entities.entity_index(self.engine)

    def speaker_index(self) -> SpeakerIndex:
        """Who said each ``"<Speaker>: ..."`` node (speaker attribution, the participant
        scope), kept current with the database by the engine like the BM25 index."""
        return speakers.speaker_index(self.engine)

    @property
    def retrieval_trace(self) -> RetrievalTrace:
        """Recent retrievals: the query an outcome answers (retrieval.experience)."""
        return retrieval_trace(self.engine)

    @property
    def experience(self) -> ExperienceIndex:
        """The outcomes with a known query (retrieval.experience)."""
        return experience_index(self.engine)

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
        limit: int = DEFAULT_LIMIT,
        expansion_hops: int = DEFAULT_EXPANSION_HOPS,
        neighbors_per_node: int = DEFAULT_NEIGHBORS_PER_NODE,
        min_score: float = 0.0,
        node_type: str | None = None,
        agent_id: str | None = None,
        effort: int | None = None,
        deep: bool = False,
        settings: RetrievalSettings | None = None,
        as_of: str | None = None,
        include_superseded: bool = False,
    ) -> dict[str, Any]:
        """κ-aware ranked retrieval (see `graphonomous.retrieval.retrieve_context`); `as_of`
        answers about a past moment, `include_superseded` returns replaced facts too."""
        return retrieval.retrieve_context(
            self.engine,
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
            as_of=as_of,
            include_superseded=include_superseded,
        )

    def retrieve_episodic(
        self,
        since: str | None = None,
        until: str | None = None,
        limit: int = 20,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        """Episodic nodes created in [since, until], newest first."""
        return retrieval.retrieve_episodic(self.engine, since, until, limit, agent_id)

    def retrieve_procedural(
        self,
        task: str,
        preconditions: Sequence[str] | None = None,
        limit: int = 5,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        """Procedures for a task, boosted by met preconditions, with their steps."""
        return retrieval.retrieve_procedural(self.engine, task, preconditions, limit, agent_id)

    def trace_evidence_path(
        self, from_id: str, to_id: str, k: int = 1, max_hops: int = 6, direction: str = "both"
    ) -> dict[str, Any]:
        """The k most credible evidence chains between two nodes."""
        return retrieval.trace_evidence_path(self.engine, from_id, to_id, k, max_hops, direction)

    def graph_traverse(
        self,
        node_id: str,
        depth: int = 2,
        relationships: Sequence[str] | None = None,
        direction: str = "both",
        limit: int = 100,
    ) -> dict[str, Any]:
        """Breadth-first walk from a node (depth <= 5)."""
        return retrieval.graph_traverse(
            self.engine, node_id, depth, relationships, direction, limit
        )

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
        return analyze_region(self.engine, arguments)

    def graph_metrics(self, backend: str | None = None) -> dict[str, Any]:
        """Spectral metrics of the live graph: λ₂ per component, Louvain Q, entropy H."""
        return metrics.stored_graph_metrics(self.engine, backend)

    def retrieval_mermaid(self, result: Mapping[str, Any]) -> str:
        """A Mermaid flowchart of a `retrieve_context` result (edges read from the store)."""
        return retrieval.result_mermaid(self.engine, result)

    # == learning: outcomes, beliefs, forgetting, uncertainty ===================
    # Owned by graphonomous/learning/{learner,beliefs,forgetting,uncertainty}.py
    # (SPEC "Learning").  Thin delegators; the modules hold the logic.

    @property
    def contradiction_hooks(self) -> beliefs.ContradictionHooks:
        """The hooks notified of contradictions found by belief operations (per instance)."""
        return beliefs.contradiction_hooks(self.engine)

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
        return outcomes.learn_from_outcome(
            self.engine,
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
        return outcomes.learn_from_feedback(self.engine, node_id, feedback, correction, reason)

    def learn_detect_novelty(
        self,
        text: str,
        threshold: float = outcomes.NOVELTY_THRESHOLD,
        limit: int = outcomes.NOVELTY_NEIGHBOURS,
    ) -> dict[str, Any]:
        """Novelty of a text: 1 − highest similarity to a live node."""
        return outcomes.learn_detect_novelty(self.engine, text, threshold, limit)

    def learn_from_interaction(
        self,
        user_message: str,
        model_response: str,
        context: Mapping[str, Any] | str | None = None,
    ) -> dict[str, Any]:
        """Store an exchange as an episode plus the claims of the response (and link what
        the new claims update, `learning.supersession`)."""
        self.touch()
        result = outcomes.learn_from_interaction(self.engine, user_message, model_response, context)
        result["updates"] = supersession.link_updates(self.engine, result["created_node_ids"])
        return result

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
            self.engine,
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
        return beliefs.detect_contradictions(self.engine, node_id, content, limit=limit)

    def revision_chain(self, node_id: str) -> dict[str, Any]:
        """The provenance chain (A → B → C) of supersessions through a node."""
        return beliefs.revision_chain(self.engine, node_id)

    def forget_node(
        self, node_id: str, mode: str = "soft", reason: str | None = None
    ) -> dict[str, Any]:
        """Forget a node: soft (hide), hard (delete) or cascade (delete + orphans)."""
        self.touch()
        return forgetting.forget_node(self.engine, node_id, mode, reason)

    def forget_by_policy(
        self,
        policy: str = "hybrid",
        max_nodes: int | None = None,
        dry_run: bool = False,
        mode: str = forgetting.DEFAULT_POLICY_MODE,
    ) -> dict[str, Any]:
        """Forget lowest-priority unprotected nodes until the budget holds."""
        self.touch()
        return forgetting.forget_by_policy(self.engine, policy, max_nodes, dry_run, mode)

    def gdpr_erase(
        self,
        node_id: str,
        reason: str | None = None,
        wait_s: float = 0.0,
        with_quoting: bool = False,
    ) -> dict[str, Any]:
        """Erase a node and every trace of it, including from the file's free pages;
        `wait_s` waits for other connections' readers so the file scrub can complete;
        `with_quoting` erases the nodes quoting its content too."""
        self.touch()
        return forgetting.gdpr_erase(self.engine, node_id, reason, wait_s, with_quoting)

    def gdpr_finish(self, wait_s: float = 0.0) -> dict[str, Any]:
        """Complete a pending physical scrub of erased content (``erase --finish``)."""
        self.touch()
        return erasure.finish(self.engine, wait_s)

    def forgetting_config(
        self,
        policy: str | None = None,
        max_nodes: int | None = None,
        max_age_hours: int | None = None,
    ) -> dict[str, Any]:
        """The forgetting configuration; any argument given is changed first."""
        if policy is None and max_nodes is None and max_age_hours is None:
            return forgetting.get_forgetting_config(self.engine)
        return forgetting.set_forgetting_config(self.engine, policy, max_nodes, max_age_hours)

    def restore_nodes(self, node_ids: Sequence[str], reason: str) -> list[str]:
        """Un-forget soft-forgotten nodes (a re-scan restores chunks of existing files)."""
        return forgetting.restore_nodes(self.engine, node_ids, reason)

    def restore_node(self, node_id: str, reason: str | None = None) -> dict[str, Any]:
        """Bring back one soft-forgotten node (faded, over budget or forgotten on request):
        ``{"node_id", "restored", "node"}`` — `restored` false when it was live."""
        self.touch()
        restored = forgetting.restore_nodes(
            self.engine, [check_id("node_id", node_id)], reason or "restore_node"
        )
        node = crud.get_node(self.engine, node_id, include_forgotten=True)["node"]
        return {"node_id": node_id, "restored": bool(restored), "node": node}

    def fade_forecast(self, days: float = 30.0) -> dict[str, Any]:
        """What decay will soft-forget in the next `days` unless reinforced (changes nothing)."""
        return forgetting.fade_forecast(self.engine, days)

    def retention_status(self) -> dict[str, Any]:
        """What forgetting took in the last 24 hours (by reason) and fades in the next."""
        return forgetting.retention_status(self.engine)

    def budget_status(self) -> dict[str, Any]:
        """The node budget: max_nodes, counted and exempt nodes, ratio, warning."""
        return forgetting.budget_status(self.engine)

    def memory_pressure(self) -> dict[str, Any] | None:
        """The memory-pressure attention item (live nodes > 90 % of max_nodes), or None."""
        return forgetting.memory_pressure(self.engine)

    def epistemic_frontier(
        self,
        min_gap: float = uncertainty.DEFAULT_MIN_GAP,
        limit: int = uncertainty.DEFAULT_FRONTIER_LIMIT,
        include_propagated: bool = True,
    ) -> dict[str, Any]:
        """Nodes whose Wilson interval is widest: where evidence is most needed."""
        return uncertainty.epistemic_frontier(self.engine, min_gap, limit, include_propagated)

    def node_uncertainty(self, node_id: str) -> dict[str, Any]:
        """Own and propagated Wilson interval, entropy and information gain of a node."""
        return uncertainty.node_uncertainty(self.engine, node_id)

    # == learning: consolidation, goals, coverage, attention, deliberation =====
    # Owned by graphonomous/learning/{consolidator,goals,coverage,attention,
    # deliberation,timer}.py (SPEC "Learning").  Thin delegators.

    def touch(self) -> None:
        """Record activity now: the idle consolidation timer waits for quiet."""
        self.engine.touch()

    @property
    def last_activity(self) -> float:
        """`clock.monotonic()` of the last recorded activity (0.0: none yet)."""
        return self.engine.last_activity

    def now(self) -> str:
        """The graph clock's time in the stored form (see graphonomous.clock)."""
        return self.engine.now()

    def run_consolidation(self, dry_run: bool = False, trigger: str = "manual") -> dict[str, Any]:
        """One consolidation cycle (decay … abstraction), logged; see learning.consolidator."""
        return consolidator.run_consolidation(self.engine, dry_run, trigger)

    def consolidation_log(self, limit: int = 20) -> dict[str, Any]:
        """The latest consolidation runs, newest first (graphonomous://consolidation/log)."""
        return consolidator.consolidation_log(self.engine, limit)

    def plasticity_metrics(self, window_hours: int = 24) -> dict[str, Any]:
        """The Orchestrator's stability–plasticity figures over the last `window_hours`."""
        return orchestrator.plasticity_metrics(self.engine, window_hours)

    def manage_goal(self, action: str, **params: Any) -> dict[str, Any]:
        """GoalGraph: create | get | list | update | delete | transition | set_progress |
        link_nodes | unlink_nodes | decompose (see learning.goals)."""
        self.touch()
        return goals.manage_goal(self.engine, action, **params)

    def review_goal(self, goal_id: str, apply: bool = False) -> dict[str, Any]:
        """Coverage-driven decision act | learn | escalate for a goal, optionally applied."""
        self.touch()
        return goals.review_goal(self.engine, goal_id, apply)

    def goals_snapshot(self, limit: int = 100) -> dict[str, Any]:
        """Goal totals, status breakdown and goals (graphonomous://goals/snapshot)."""
        return goals.goals_snapshot(self.engine, limit)

    def coverage_query(
        self,
        task_description: str,
        critical_topics: Sequence[str] | None = None,
        limit: int = 10,
    ) -> dict[str, Any]:
        """Is the graph's knowledge adequate for a task?  Recommends act | learn | escalate."""
        self.touch()
        return coverage.coverage_query(self.engine, task_description, critical_topics, limit)

    def attention_survey(self) -> dict[str, Any]:
        """Goals by urgency × gap + surprise, memory pressure, κ > 0 regions, open items."""
        self.touch()
        return attention.attention_survey(self.engine)

    def attention_run_cycle(self, autonomy: str = "advise", budget: int = 5) -> dict[str, Any]:
        """Triage the survey and dispatch up to `budget` actions (observe | advise | act)."""
        self.touch()
        return attention.attention_run_cycle(self.engine, autonomy, budget)

    def deliberate(
        self,
        query: str | None = None,
        node_ids: Sequence[str] | None = None,
        conclusions: Sequence[Mapping[str, Any]] | None = None,
        write_back: bool = False,
    ) -> dict[str, Any]:
        """Deliberation plans for κ > 0 regions; optionally store the caller's conclusions."""
        self.touch()
        return deliberation.deliberate(self.engine, query, node_ids, conclusions, write_back)


__all__ = ["DEFAULT_AGENT_ID", "Graphonomous", "Node", "resolve_db_path"]
