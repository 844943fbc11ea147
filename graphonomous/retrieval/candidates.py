"""Stage 1 of `retrieve_context`: the hybrid candidates (embedding ⊕ BM25) and their own scores.

Rules of this file: the embedding top-N and the BM25 top-N (N = `candidate_pool`)
are fused by weighted score fusion (`fusion.score_fusion`; BM25's weight from
`fusion.embedder_keyword_weight`) or, on request, RRF.  A candidate's own score is
(fused / best fused) × confidence × its field factor (`fields`), rescaled so the
best stays at most 1; the confidence is conditioned on the query where learned
attributions moved it (`rerank.ranking_confidence`).  Forgotten, other agents',
filtered and retrieval-aid nodes never become candidates.  Pseudo-relevance
feedback (`feedback`, walk efforts) and the automatic effort for documentation
queries (`auto_effort_stage`) read these candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from ..index.bm25 import KeywordIndex
from ..model import Node, ValidationError, check_unit_interval
from .auto_effort import is_document_query
from .experience import is_retrieval_aid
from .fields import field_factor
from .fusion import (
    DEFAULT_FUSION,
    FUSION_METHODS,
    RRF_FUSION,
    RRF_K,
    SCORE_FUSION,
    combine_evidence,
    embedder_keyword_weight,
    reciprocal_rank_fusion,
    score_fusion,
)
from .prf import expansion_terms
from .rerank import ranking_confidence
from .run import Entry, Run
from .settings import MAX_QUERY_CHARS, RetrievalSettings, effort_plan

if TYPE_CHECKING:
    from .graph_view import GraphEngine

# The name stage 1 reports in `stats.mechanisms` for each fusion method.
FUSION_MECHANISMS: Final[Mapping[str, str]] = {SCORE_FUSION: "score_fusion", RRF_FUSION: "rrf"}


def cap_query(query: str, max_chars: int = MAX_QUERY_CHARS) -> tuple[str, bool]:
    """The query cut to `max_chars` characters, and whether it was cut.  O(max_chars)."""
    if len(query) <= max_chars:
        return query, False
    return query[:max_chars], True


# -- stage 1: hybrid candidates ----------------------------------------------


def allowed_ids(run: Run, node_type: str | None, agent_id: str | None) -> set[str] | None:
    """Ids passing the type/agent filters (None when there is no filter).  One query."""
    if node_type is None and agent_id is None:
        return None
    return set(run.graph.store.node_ids(node_type=node_type, agent_id=agent_id))


def _both(
    first: Callable[[str], bool] | None, second: Callable[[str], bool] | None
) -> Callable[[str], bool] | None:
    """The predicate accepting what both accept (None: no filter)."""
    if first is None or second is None:
        return second if first is None else first
    return lambda node_id: first(node_id) and second(node_id)


def hybrid_search(
    graph: GraphEngine,
    vector: list[float] | None,
    tokens: Sequence[str],
    k: int,
    *,
    allow: Callable[[str], bool] | None = None,
    fusion: str = DEFAULT_FUSION,
    keyword_weight: float | None = None,
    rrf_k: int = RRF_K,
    cosines: dict[str, float] | None = None,
    text_index: KeywordIndex | None = None,
    aside: Callable[[list[str]], set[str]] | None = None,
    extra: Sequence[str] = (),
) -> tuple[list[tuple[str, float]], set[str], dict[str, int]]:
    """Embedding top-k and BM25 top-k, fused (call under the facade lock).

    Input: the query vector (None: keywords only), query tokens, k, an
    optional id filter, the fusion method (`fusion.SCORE_FUSION` or
    `fusion.RRF_FUSION`) and BM25's weight in it (None: `embedder_keyword_weight`
    of the graph's embedder; the embedding list gets 1 − that).  Embedding
    hits with cosine <= 0 carry no evidence and are dropped.  Score fusion
    scores every candidate on both channels: a BM25 hit outside the
    embedding top-k gets its exact cosine, an embedding hit its exact BM25
    score (0 without a shared term).  RRF uses the two ranked lists as they
    are.  Output: ``(fused (id, score) best first, ids found by the
    embedding, {"embedding": n, "bm25": n})``; `cosines`, when given, receives
    the exact cosines computed on the way (the index score of each id);
    `text_index` the keyword statistics (None: the graph's whole BM25 index);
    `aside(pool ids)`, score fusion only, the ids to set aside from each
    channel's normalisation (`fusion.score_fusion`); `extra`, score fusion
    only, ids joined to the pool whatever `allow` says, scored exactly on
    both channels.
    Complexity: one index search + BM25 over the postings of the query terms
    + k + len(extra) exact cosines.
    """
    if fusion not in FUSION_METHODS:
        raise ValidationError(
            "fusion", f"must be one of {', '.join(FUSION_METHODS)}; got {fusion!r}"
        )
    weight = (
        embedder_keyword_weight(graph.embedder.name) if keyword_weight is None else keyword_weight
    )
    check_unit_interval("keyword_weight", weight)
    index = graph.vector_index()
    embedding_hits: list[tuple[str, float]] = []
    if vector is not None:
        embedding_hits = [hit for hit in index.search(vector, k, allow=allow) if hit[1] > 0.0]
    # Exact BM25 top-k by MaxScore pruning, plus the embedding hits' exact
    # scores (score fusion needs them); equal to scoring every posting.
    keywords = graph.text_index() if text_index is None else text_index
    bm25_hits, keyword_scores = keywords.top_k(
        tokens, k, allow=allow, also=[*(node_id for node_id, _ in embedding_hits), *extra]
    )
    keyword_scores.update(bm25_hits)
    counts = {"embedding": len(embedding_hits), "bm25": len(bm25_hits)}
    embedded = {node_id for node_id, _ in embedding_hits}
    if cosines is not None:
        cosines.update(embedding_hits)
    if fusion == RRF_FUSION:
        fused = reciprocal_rank_fusion(
            [[node_id for node_id, _ in embedding_hits], [node_id for node_id, _ in bm25_hits]],
            k=rrf_k,
            weights=(1.0 - weight, weight),
        )
        return fused, embedded, counts
    cosine = dict(embedding_hits)
    joined = [node_id for node_id, _ in bm25_hits] + list(extra)
    if vector is not None:
        cosine.update(index.similarities(vector, (n for n in joined if n not in cosine)))
        if cosines is not None:
            cosines.update(cosine)
    pool = sorted(set(cosine).union(joined))
    keyword = {node_id: keyword_scores.get(node_id, 0.0) for node_id in pool}
    kept_aside = aside(pool) if aside is not None else set()
    fused = score_fusion([keyword, cosine], (weight, 1.0 - weight), aside=kept_aside)
    return fused, embedded, counts


def hybrid_candidates(
    run: Run,
    vector: list[float] | None,
    tokens: list[str],
    pool: int,
    allowed: set[str] | None,
    outside: Callable[[list[str]], set[str]] | None = None,
    extra: Sequence[str] = (),
    within: Callable[[str], bool] | None = None,
) -> set[str]:
    """Stage 1: hybrid candidates scored (fused / best fused) × confidence.

    `outside(pool ids)`: the candidates out of the query's context, set aside
    from the normalisation (each channel's max and the best fused score are
    those of the others); returned (empty without `outside`).  `within(id)`:
    the channels' top k are taken among the ids it accepts (and `allowed`);
    `extra`: ids joined to the pool whatever the filters say (`hybrid_search`).
    """
    settings = run.settings
    found: set[str] = set()

    def aside(ids: list[str]) -> set[str]:
        assert outside is not None
        found.update(outside(ids))
        return found

    fused, embedded, counts = hybrid_search(
        run.graph,
        vector,
        tokens,
        pool,
        allow=_both(within, None if allowed is None else allowed.__contains__),
        fusion=settings.fusion,
        keyword_weight=settings.keyword_weight,
        rrf_k=settings.rrf_k,
        cosines=run.cosines,
        text_index=run.keywords,
        aside=None if outside is None else aside,
        extra=extra,
    )
    run.reader.load_nodes(node_id for node_id, _ in fused)
    best = next((value for node_id, value in fused if node_id not in found), None)
    best = best if best is not None else (fused[0][1] if fused else 1.0)
    confidence = ranking_confidence(run, vector, [node_id for node_id, _ in fused])
    fields = _field_weigher(run, tokens)
    kept: list[tuple[str, float, str]] = []
    for node_id, value in fused:
        node = run.reader.node(node_id)
        if node is None or not run.reader.is_visible(node):
            continue  # forgotten after the index was built, or another agent's
        # set-aside ids may pass the best
        own = min(1.0, value / best) * confidence.get(node_id, node.confidence)
        if is_retrieval_aid(node):
            run.aids += 1  # indexes built before aids were kept out of them
            continue
        source = "seed" if node_id in embedded else "bm25"
        if not run.returnable(node):
            heir = _current_successor(run, node)  # left out as superseded: its match is the heir's
            if heir is not None:
                kept.append((heir.id, own * fields(node), source))
            continue  # filtered by type or time
        kept.append((node_id, own * fields(node), source))
    # The field boost may lift a score past 1: rescale so the best stays at most 1.
    top = max((own for _, own, _ in kept), default=1.0)
    scale = 1.0 / top if top > 1.0 else 1.0
    for node_id, own, source in sorted(kept, key=lambda row: -row[1]):
        if node_id not in run.entries:  # best first: a successor keeps its best match
            run.entries[node_id] = Entry(node_id, own * scale, source, 0, None, own=own * scale)
    run.stats["candidates"] = {
        "pool_size": pool,
        **counts,
        "fused": len(run.entries),
        "aids": run.aids,
    }
    return found


# Links followed from a superseded statement to the one now current (an update of an
# update of ...); a longer chain is cut there (its head is then not found).
SUCCESSION_DEPTH: Final = 8


def _current_successor(run: Run, node: Node) -> Node | None:
    """The statement that now stands for a superseded `node`, when retrieval answers
    about now and would return it: the questions the earlier statement answered, the
    later one answers (the update names the same subject), so it inherits the earlier
    one's match — a corrected or updated fact ranks where its predecessor would have.
    None for anything else left out (type, agent, `as_of`, faded).  O(chain)."""
    if not run.answers_now or node.superseded_by is None:
        return None
    for _ in range(SUCCESSION_DEPTH):
        heir = run.reader.node(node.superseded_by) if node.superseded_by else None
        if heir is None or not run.reader.is_visible(heir):
            return None
        if heir.superseded_by is None:
            return heir if run.returnable(heir) else None
        node = heir
    return None


def _field_weigher(run: Run, tokens: list[str]) -> Callable[[Node], float]:
    """A node -> its field factor (`fields.field_factor`; 1.0 when the gain is 0)."""
    gain = run.settings.field_gain
    if gain <= 0.0:
        return lambda node: 1.0
    keywords = run.text_index()
    terms = keywords.terms(tokens)
    document_terms = run.graph.text_index().document_terms
    return lambda node: field_factor(node, terms, keywords.idf, document_terms, gain)


def feedback(run: Run, tokens: list[str], pool: int, allowed: set[str] | None) -> None:
    """Stage 1b (effort >= 5): RM3 pseudo-relevance feedback (`prf`), blended into own scores."""
    settings = run.settings
    ranked = sorted(run.entries.values(), key=lambda e: (-e.own, e.node_id))[: settings.prf_docs]
    documents = []
    for entry in ranked:
        node = run.reader.node(entry.node_id)
        if node is not None:
            documents.append((node.content, entry.own))
    index = run.graph.text_index()
    terms = expansion_terms(
        documents, tokens, settings.prf_terms, lambda token: index.terms([token])[0], index.idf
    )
    run.stats["feedback_terms"] = len(terms)
    if not terms:
        return
    hits, _ = index.top_k(terms, pool, allow=None if allowed is None else allowed.__contains__)
    top = [(-score, node_id) for node_id, score in hits]
    if not top:
        return
    best_score = -top[0][0]
    best_own = max(entry.own for entry in run.entries.values())
    run.reader.load_nodes(node_id for _, node_id in top)
    for negated, node_id in top:
        evidence = settings.prf_weight * best_own * -negated / best_score
        found = run.entries.get(node_id)
        if found is not None:
            found.own = found.score = combine_evidence(found.own, evidence)
            continue
        node = run.reader.node(node_id)
        if node is not None and run.returnable(node):
            run.entries[node_id] = Entry(node_id, evidence, "bm25", 0, None, own=evidence)
    run.mechanisms.append("feedback")


def mostly_documents(run: Run, limit: int) -> bool:
    """Do the best `limit` stage-1 candidates mostly come from files? (auto_effort.py)"""
    top = sorted(run.entries.values(), key=lambda e: (-e.score, e.node_id))[:limit]
    return is_document_query((e.node_id for e in top), run.reader.node)


def candidate_pool(settings: RetrievalSettings, limit: int) -> int:
    """Candidates per channel: max(`min_candidates`, `candidate_multiplier` × limit)."""
    return max(settings.min_candidates, settings.candidate_multiplier * limit)


def candidate_stage(
    run: Run, vector: list[float] | None, tokens: list[str], pool: int, allowed: set[str] | None
) -> None:
    """Stage 1 (every effort): the hybrid candidates of the query.

    Input: the query vector (None: keywords only), its BM25 tokens, the pool
    size (`candidate_pool`) and the type/agent filter (`allowed_ids`).
    Output: ``run.entries`` (source "seed" or "bm25", own = score), the
    ``candidates`` stats and the mechanisms.  Rule: `hybrid_candidates`; a
    query without tokens has no candidates.
    """
    if tokens:
        hybrid_candidates(run, vector, tokens, pool, allowed)
        run.mechanisms.extend(["embedding", "bm25", FUSION_MECHANISMS[run.settings.fusion]])
    else:
        run.stats["candidates"] = {"pool_size": pool, "embedding": 0, "bm25": 0, "fused": 0}


def feedback_stage(run: Run, tokens: list[str], pool: int, allowed: set[str] | None) -> None:
    """Stage 1b (walk efforts, `prf_weight` > 0): pseudo-relevance feedback (`feedback`).

    Input and output: ``run.entries``, own scores raised by the feedback hits.
    """
    if run.plan.walk is not None and run.settings.prf_weight > 0.0 and run.entries:
        feedback(run, tokens, pool, allowed)


def auto_effort_stage(run: Run, requested: bool) -> None:
    """After stage 1: an effort the caller did not give drops to 0 on a documentation query.

    Input: the run after its candidates, and whether the caller chose the effort
    (`effort` or `deep`).  Output: ``run.plan`` = effort 0 (and the mechanism
    ``auto_effort_documents``) when the plan has graph stages and the best
    `limit` candidates mostly come from files (`auto_effort.is_document_query`).
    """
    if not requested and run.plan.effort > 0 and mostly_documents(run, run.stats["limit"]):
        run.plan = effort_plan(0, False, 0)  # auto_effort.py
        run.mechanisms.append("auto_effort_documents")
