"""`retrieve_context`: the retrieval pipeline, one stage per line.

The pipeline (SPEC "Retrieval" is normative; every knob is a field of
`RetrievalSettings`, whose defaults and reasons are in `settings`).  Each stage
is a function of its own module taking the run's state (`run.Run`):

1. **Candidates** (`candidates`, every effort) — the embedding top-N (cosine)
   and the BM25 top-N, N = max(`MIN_CANDIDATES`, `CANDIDATE_MULTIPLIER` × limit),
   fused by weighted score fusion or, on request, RRF.  Own score = (fused /
   best fused) × confidence — seed 003's "similarity × confidence", the
   confidence an attribution with a known query moved counted as far as this
   query matches that one's (`rerank.ranking_confidence`, like Q in stage 5).
   Source "seed" = an embedding hit, "bm25" = found by keywords only.  Then
   the participant scope (`scope.participant_stage`): a query naming a speaker
   is answered from the conversations that speaker took part in; other
   conversations' turns stay, demoted.  Then pseudo-relevance feedback (walk
   efforts) and the automatic effort of a documentation query.
2. **Graph support** (`support`, effort >= 1) — a candidate joined to other
   candidates gains from them (noisy-OR); the best `limit` scored nodes are the
   *seeds* of the later stages.
3. **Expansion** (`expansion`, effort >= 1) — breadth-first from the seeds for
   `expansion_hops` hops, `neighbors_per_node` strongest neighbours per node,
   parent score × edge strength × `HOP_DECAY` per hop.
4. **Graph walk** (`walk`, effort >= 5) — Personalized PageRank from the seeds
   over the radius-`LOCAL_RADIUS` ball (effort 5–7) or the whole graph (8–10),
   weighted by Louvain communities of the ball; then the entity walk, speaker
   attribution and the name-free content of a query naming a speaker
   (`scope.speaker_stage`, `scope.content_stage`).
5. **Utility rerank** (`rerank`, seed 004 phase 2) — Q-values, experience,
   superseded nodes × `SUPERSEDED_FACTOR`; then the question's time window and
   the newest of one claim (`time_order.time_stage`, stage 5.5) and the
   selection of the answer (`results.select`: threshold, limit, per-file cap).
6. **Topology** (`topology_stage`) of the region the answer rests on — the
   results, their strongest 1-hop neighbours and the feedback loops they belong
   to (`loop_region.answer_topology`); causal context and contradiction flags
   read the edges of the same region.
6.5 **Governing statements** (`directives.governing`, every effort) — the
   standing instructions and preferences whose scope the question matches, in
   the separate ``directives`` list; a result that is one is flagged
   ``directive``.  No result moves.
7. **Side effects** (`results.record_access`, one transaction): access_count /
   last_accessed_at of the results; the retrieval trace.

Before stage 1 the query is cut to `max_query_chars` and a question naming a
bounded time recalls what faded then (`time_order.recall_faded`).
Soft-forgotten nodes (and, with `agent_id`, other agents' nodes) are invisible
to every stage.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final

from ..model import (
    NODE_TYPES,
    Node,
    ValidationError,
    check_choice,
    check_id,
    check_int,
    check_unit_interval,
)
from .bm25 import bm25_tokens
from .candidates import (
    allowed_ids,
    auto_effort_stage,
    candidate_pool,
    candidate_stage,
    cap_query,
    feedback_stage,
)
from .defaults import DEFAULT_EXPANSION_HOPS, DEFAULT_LIMIT, DEFAULT_NEIGHBORS_PER_NODE
from .directives import CHANNEL as DIRECTIVE_CHANNEL
from .directives import governing
from .expansion import expansion_stage
from .experience import retrieval_trace
from .graph_view import GraphReader
from .rerank import utility_rerank
from .results import record_access, result_rows, select
from .run import Run, elapsed_ms
from .scope import content_stage, participant_stage, speaker_stage
from .settings import (
    DEEP_EFFORT,
    DEFAULT_SETTINGS,
    EffortPlan,
    RetrievalSettings,
    effort_plan,
)
from .support import choose_seeds, support_stage
from .time_order import recall_faded, time_stage
from .time_scope import TimeScope, time_scope
from .topology_stage import AnswerRegion, topology_stage
from .walk import entity_stage, graph_walk

if TYPE_CHECKING:
    from .graph_view import GraphEngine

# -- arguments -----------------------------------------------------------------
MAX_LIMIT: Final = 1000
MAX_EXPANSION_HOPS: Final = 5
MAX_NEIGHBORS_PER_NODE: Final = 100


def _check_arguments(
    query: object,
    limit: int,
    expansion_hops: int,
    neighbors_per_node: int,
    min_score: float,
    node_type: str | None,
    agent_id: str | None,
) -> None:
    if not isinstance(query, str):
        raise ValidationError("query", f"must be a string; got {type(query).__name__}")
    check_int("limit", limit, 1, MAX_LIMIT)
    check_int("expansion_hops", expansion_hops, 0, MAX_EXPANSION_HOPS)
    check_int("neighbors_per_node", neighbors_per_node, 0, MAX_NEIGHBORS_PER_NODE)
    check_unit_interval("min_score", min_score)
    if node_type is not None:
        check_choice("node_type", node_type, NODE_TYPES)
    if agent_id is not None:
        check_id("agent_id", agent_id)


def retrieve_context(
    graph: GraphEngine,
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
    """Ranked, graph-aware context for a query, with its topology (seed 003 + 000 + 004 + 002).

    Input: the facade, a query string and the knobs above (`effort` 0..10 or
    None; `deep` = effort 6; `settings` overrides pipeline constants).
    Output: ``{"query", "results", "directives", "causal_context", "stats", "topology"}``;
    each result ``{node_id, content, node_type, confidence, similarity,
    score, source, hops, via, flags}``, ordered by score desc then node id.
    A query without word characters returns no results.  Raises
    ValidationError on bad arguments.
    Complexity: effort 0 is O(index search + postings of the query terms);
    expansion adds one SQL query per hop; effort 5–7 a walk over at most
    `local_max_nodes` nodes; 8–10 a forward push over the cached whole-graph
    snapshot, O(1 / (epsilon × alpha)) (SPEC has measured latencies).
    """
    settings = settings or DEFAULT_SETTINGS
    _check_arguments(
        query, limit, expansion_hops, neighbors_per_node, min_score, node_type, agent_id
    )
    plan = effort_plan(effort, deep, expansion_hops)
    total_started = time.perf_counter()
    text, truncated = cap_query(query, settings.max_query_chars)
    scope = time_scope(text, graph.clock.now(), as_of, include_superseded)
    tokens = bm25_tokens(text)
    recalled = recall_faded(graph, scope, tokens, agent_id)
    started = time.perf_counter()
    vector = graph.embed_texts([text])[0] if tokens else None
    embed_ms = elapsed_ms(started)

    with graph.lock:
        run = _open_run(graph, settings, plan, scope, node_type, agent_id, limit, embed_ms)
        pool = candidate_pool(settings, limit)
        with run.timed("candidates"):
            allowed = allowed_ids(run, node_type, agent_id)
            candidate_stage(run, vector, tokens, pool, allowed)
            participant_stage(run, text, vector, tokens, pool, allowed)
            feedback_stage(run, tokens, pool, allowed)
        auto_effort_stage(run, requested=effort is not None or deep)
        with run.timed("support"):
            support_stage(run)
        choose_seeds(run)
        with run.timed("expansion"):
            expansion_stage(run, neighbors_per_node)
        if run.plan.walk is not None:
            graph_walk(run)
            entity_stage(run, text)
            speaker_stage(run, text)
            content_stage(run, text)
        with run.timed("rerank"):
            utility_rerank(run, vector, tokens)
            time_report = time_stage(run, scope, limit, text)
            chosen = select(run, limit, min_score)
        result_ids = [entry.node_id for entry in chosen]
        answer = topology_stage(run, chosen)
        _add_flags(answer.flags, time_report["flags"], only_results=True)
        with run.timed("directives"):
            directives, governed, directive_stats = governing(
                graph, run.reader, text, scope.admits, result_ids, vector
            )
            _add_flags(answer.flags, dict.fromkeys(governed, DIRECTIVE_CHANNEL))
        results = result_rows(graph, chosen, answer.nodes, answer.flags, vector, run.cosines)
        with run.timed("side_effects"):
            record_access(graph, result_ids)
            retrieval_trace(graph).record(text, result_ids)

    run.timings["total"] = elapsed_ms(total_started)
    report = {"query_chars": len(query), "query_truncated": truncated, "query_terms": len(tokens)}
    time_stats = {**time_report, "recalled": recalled}
    return {
        "query": text,
        "results": results,
        "directives": directives,
        "causal_context": answer.causal,
        "stats": _stats(run, effort, deep, report, time_stats, directive_stats, results, answer),
        "topology": answer.topology,
    }


def _open_run(
    graph: GraphEngine,
    settings: RetrievalSettings,
    plan: EffortPlan,
    scope: TimeScope,
    node_type: str | None,
    agent_id: str | None,
    limit: int,
    embed_ms: float,
) -> Run:
    """The state of one retrieval (call under the facade lock): its reader and its filter.

    A node is returnable when it is visible (live, the agent's), of `node_type`
    and admitted by the time scope.
    """
    # The whole-graph band reads structure from the cached snapshot; the
    # others read it from SQL per call (their cost does not depend on a cache).
    snapshot = graph.graph_snapshot() if plan.walk == "full" else None
    reader = GraphReader(
        graph.store, snapshot=snapshot, agent_id=agent_id, cache=graph.read_cache()
    )

    def returnable(node: Node) -> bool:
        return (
            reader.is_visible(node)
            and (node_type is None or node.node_type == node_type)
            and scope.admits(node)
        )

    run = Run(graph, reader, settings, plan, returnable, answers_now=scope.as_of is None)
    run.timings["embed"] = embed_ms
    run.stats.update(limit=limit, agent_id=agent_id)
    return run


def _add_flags(
    flags: dict[str, list[str]], marks: dict[str, str], only_results: bool = False
) -> None:
    """Add each ``{result: flag}`` mark to the result's sorted flags (`only_results`:
    marks of ids that are not results are dropped; otherwise every id is a result)."""
    for node_id, mark in marks.items():
        if not only_results or node_id in flags:
            flags[node_id] = sorted({*flags[node_id], mark})


def _stats(
    run: Run,
    effort: int | None,
    deep: bool,
    query: dict[str, Any],
    time_stats: dict[str, Any],
    directive_stats: dict[str, int],
    results: list[dict[str, Any]],
    answer: AnswerRegion,
) -> dict[str, Any]:
    """The ``stats`` of the answer: what ran, what each stage did, how long it took."""
    return {
        "effort": run.plan.effort,
        "effort_requested": effort if not deep else DEEP_EFFORT,
        "mechanisms": run.mechanisms,
        **query,
        "candidates": run.stats["candidates"],
        "seeds": run.stats["seeds"],
        "supported": run.stats["supported"],
        "expanded": run.stats["expanded"],
        "ppr_nodes": run.stats.get("ppr_nodes", 0),
        "entity_nodes": run.stats.get("entity_nodes", 0),
        "absent_participant_demoted": run.stats.get("absent_participant_demoted", 0),
        "other_speaker_demoted": run.stats.get("other_speaker_demoted", 0),
        "other_speaker_kept": run.stats.get("other_speaker_kept", 0),
        "content_scaled": run.stats.get("content_scaled", 0),
        "speaker_focused": run.stats.get("speaker_focused", 0),
        "communities": run.stats.get("communities", 0),
        "utility_rerank": run.stats["utility_rerank"],
        "experience": run.stats["experience"],
        "superseded_demoted": run.stats["superseded_demoted"],
        "time": time_stats,
        "directives": directive_stats,
        "returned": len(results),
        "topology_window": len(answer.window),
        "topology_region": answer.loops.report(),
        "timings_ms": run.timings,
    }


__all__ = [
    "MAX_EXPANSION_HOPS",
    "MAX_LIMIT",
    "MAX_NEIGHBORS_PER_NODE",
    "retrieve_context",
]
