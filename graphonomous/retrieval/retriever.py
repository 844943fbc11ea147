"""`retrieve_context`: hybrid candidates, graph support, expansion, walk, rerank, topology.

The pipeline (SPEC "Retrieval" is normative; every knob is a field of
`RetrievalSettings` whose defaults are the module constants below):

1. **Candidates** — the embedding top-N (cosine) and the BM25 top-N, N =
   max(`MIN_CANDIDATES`, `CANDIDATE_MULTIPLIER` × limit), fused by weighted
   score fusion (`fusion.score_fusion`; BM25's weight depends on the
   embedder, `fusion.embedder_keyword_weight`) or, on request, RRF.  Own score =
   (fused / best fused) × confidence — seed 003's "similarity × confidence",
   the confidence an attribution with a known query moved counted as far as
   this query matches that one's (`_ranking_confidence`, like Q in stage 5).
   Source "seed" = an embedding hit, "bm25" = found by keywords only.
   Then the participant scope (`_participant_stage`, every effort): a query
   naming a speaker is answered from the conversations that speaker took
   part in (candidates, keyword statistics and normalisation as in a memory
   holding only those); other conversations' turns stay, demoted.
2. **Graph support** (effort >= 1) — a candidate joined to other candidates
   gains from them: score = own ⊕ support (noisy-OR), support = the best
   neighbour's own score × `transfer` of the edge, or through a shared
   whole (``part_of`` siblings) × `SIBLING_FACTOR`.  The best `limit` scored
   nodes are the *seeds* of the later stages.
3. **Expansion** (effort >= 1) — breadth-first from the seeds for
   `expansion_hops` hops; per node its `neighbors_per_node` strongest
   neighbours; a neighbour scores parent score × edge strength × `HOP_DECAY`
   (so `HOP_DECAY`^h after h hops); the best score wins.
4. **Graph walk** (effort >= 5) — the seeds' scores spread over the graph by
   Personalized PageRank with symmetric degree normalisation (`spread`;
   restart `PPR_RESTART`, edge weights `graph.EDGE_KIND_WEIGHTS` ×
   strength), over the radius-`LOCAL_RADIUS` ball around them (effort 5–7)
   or the whole graph (8–10), plus Louvain communities of the ball; see
   `_graph_walk`.
   Then the entity walk (`_entity_stage`, `multihop`) and speaker
   attribution (`_speaker_stage`, `attribution`: a query naming a speaker
   demotes other speakers' turns; `_content_stage`: the name matches every
   turn of that speaker, so candidates are scaled by how much of the *rest*
   of the question they hold).
5. **Utility rerank** (seed 004 phase 2) — score = (1 − α)·score + α·q_value
   when some candidate in the query's context has ``q_update_count > 0``;
   superseded nodes × `SUPERSEDED_FACTOR`.
6. **Topology** of the region the answer rests on: the results plus their
   strongest 1-hop neighbours ("expanded topology window") plus the members of
   the feedback loops (non-trivial SCCs) the results belong to, found by a
   bounded walk along κ arcs (`loop_region.answer_topology`; the bounds and
   whether they cut anything are in ``stats.topology_region``), routed with
   trigger ``retrieve_context``; causal context and contradiction flags read
   the edges of the same region.
6.5 **Governing statements** (`directives.governing`, every effort) — the
   standing instructions and preferences whose scope the question matches, in
   the separate ``directives`` list (at most `directives.MAX_DIRECTIVES`); a
   result that is one is flagged ``directive`` instead.  No result moves.
7. **Side effects** (one transaction): access_count/last_accessed_at of the
   results, co_activation_count of edges between results.

Soft-forgotten nodes (and, with `agent_id`, other agents' nodes) are invisible
to every stage.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from ..algorithms import louvain_communities
from ..algorithms.push import PUSH_EPSILON, ppr_push
from ..embed import exact_score, pack_f32
from ..embed.index import normalized_f32
from ..index.bm25 import KeywordIndex
from ..model import (
    NODE_TYPES,
    Edge,
    Node,
    ValidationError,
    check_choice,
    check_id,
    check_int,
    check_unit_interval,
    format_time,
    parse_time,
)
from .auto_effort import is_document_query
from .bm25 import bm25_tokens
from .defaults import DEFAULT_EXPANSION_HOPS, DEFAULT_LIMIT, DEFAULT_NEIGHBORS_PER_NODE
from .directives import CHANNEL as DIRECTIVE_CHANNEL
from .directives import governing
from .entities import FUNCTION_WORDS, entity_index, entity_key
from .experience import (
    ExperienceIndex,
    Lexical,
    conditioned_confidence,
    conditioned_q,
    experience_index,
    experienced_score,
    is_retrieval_aid,
    retrieval_trace,
    unrelated_similarity,
)
from .fields import FIELD_GAIN, field_factor
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
from .graph_view import (
    CAUSAL_RELATIONSHIPS,
    EDGE_KIND_WEIGHTS,
    STRUCTURAL_RELATIONSHIPS,
    WALK_MIN_DEGREE,
    GraphReader,
    Link,
    WeightedGraph,
    leaky_transitions,
    patch_accessed,
    walk_degrees,
    weighted_graph,
)
from .loop_region import answer_topology
from .multihop import entity_walk
from .prf import expansion_terms
from .provenance import provenance
from .relations import relation_index
from .speakers import speaker_index
from .spread import spread_by_file, text_first_within_files
from .time_expressions import TimeWindow
from .time_scope import (
    CLAIM_POOL_FACTOR,
    TimeScope,
    admitted,
    newest_claims_first,
    time_scope,
    window_order,
)

if TYPE_CHECKING:
    from .graph_view import GraphEngine

# -- effort spectrum (seed 002) ------------------------------------------------
EFFORT_MAX: Final = 10
DEEP_EFFORT: Final = 6  # `deep=True` / `--deep`
EXPANSION_MIN_EFFORT: Final = 1  # 1–4: + graph support, ego neighbourhood
WALK_MIN_EFFORT: Final = 5  # 5–7: + local PageRank and Louvain communities
FULL_GRAPH_MIN_EFFORT: Final = 8  # 8–10: + whole-graph PageRank, contradiction check

# -- arguments -----------------------------------------------------------------
MAX_LIMIT: Final = 1000
MAX_EXPANSION_HOPS: Final = 5
MAX_NEIGHBORS_PER_NODE: Final = 100
# Longer queries are cut to this many characters before embedding and BM25
# (the answer echoes the cut query): a query is a question, not a document,
# and a 10 MB query must cost what a short one costs.
MAX_QUERY_CHARS: Final = 4096

# -- pipeline knobs ------------------------------------------------------------
CANDIDATE_MULTIPLIER: Final = 3
MIN_CANDIDATES: Final = 20
# Graph support (effort >= 1): an edge passes HOP_DECAY × min(1, SUPPORT_GAIN ×
# strength × kind weight) of a candidate's stage-1 score to its neighbour, so
# an edge at the default strength 0.3 of a neutral kind passes 0.85 × 0.6 =
# 0.51.  Tuned on the LoCoMo dev half (SPEC "Retrieval quality": 1, 2, 3 tried).
SUPPORT_GAIN: Final = 2.0
# The two-hop path between parts of one whole (part_of siblings) is a
# weaker tie than a direct edge: its two transfers times this factor
# (tuned on the LoCoMo dev half: 0, 0.5, 1 tried).
SIBLING_FACTOR: Final = 0.5
# What one hop keeps of a score: expansion (parent × strength × HOP_DECAY per
# hop) and the cap of an edge's support transfer.
HOP_DECAY: Final = 0.85
UTILITY_WEIGHT: Final = 0.3  # seed 004's alpha
# Experience (retrieval.experience): how far a similar earlier success lifts a
# node (noisy-OR with its score, so never past 1) and how far a similar earlier
# failure lowers it (a factor, at most halving).  Measured on the LoCoMo dev
# half (benchmarks/eval_learning.py, two conversations, effort 3): a success
# vouches for all k nodes it used, most of which did not answer, so a strong
# lift (gain 1.0: -0.057 R@5) hurts; an objection is precise (those nodes did
# not answer a question like this one) and helps (+0.011 alone).  Since the lift
# is scaled by the node's standing among the candidates (`experienced_score`),
# gains 0.25-0.4 form a plateau in a replay of the dev rankings (efforts 0 and 3);
# real play, effort 3: 0.25 -> +0.021, 0.35 -> +0.024; effort 0: +0.041 / +0.040.
EXPERIENCE_GAIN: Final = 0.35
EXPERIENCE_PENALTY: Final = 0.5
SUPERSEDED_FACTOR: Final = 0.5
PPR_RESTART: Final = 0.15  # seed 002; the walk keeps 1 − 0.15 = 0.85 per step
# Push tolerance of the local walk: the ball has at most LOCAL_MAX_NODES
# nodes, so a tighter tolerance than the whole-graph walk's costs little.
LOCAL_PUSH_EPSILON: Final = 1e-6
LOCAL_RADIUS: Final = 2
LOCAL_MAX_NODES: Final = 400
LOUVAIN_RESOLUTION: Final = 1.0
LOUVAIN_SEED: Final = 0
# Walk-found nodes outside every community that holds a seed are halved:
# the walk may drift into a neighbouring topic.
OUT_OF_COMMUNITY_FACTOR: Final = 0.5
TOPOLOGY_NEIGHBORS_PER_RESULT: Final = 20
# Entity walk (effort >= 5, `multihop.entity_walk`): a passage's relative
# PageRank mass m in (0, 1] becomes evidence ENTITY_GAIN × best seed × m,
# noisy-OR'd with its score; entities in more than ENTITY_MAX_DF passages
# are hubs and are skipped; the query's entities restart ENTITY_QUERY_WEIGHT
# times the best seed.  Tuned on the dev halves only (SPEC "Retrieval quality").
ENTITY_GAIN: Final = 0.5
ENTITY_MAX_DF: Final = 50
ENTITY_QUERY_WEIGHT: Final = 2.0
ENTITY_RESTART: Final = 0.5
ENTITY_PUSH_EPSILON: Final = 1e-5
# Speaker attribution (effort >= 5, `attribution`): when the query names a
# known speaker, a candidate said by *another* speaker keeps this factor of
# its score (unattributed candidates are untouched; 1 switches it off).
# Tuned on the LoCoMo dev half only (SPEC "Retrieval quality").
OTHER_SPEAKER_FACTOR: Final = 0.75
# Participant scope (every effort, `_participant_stage`): when the query names a
# known speaker, a turn of *another* speaker from a conversation (its wholes:
# sessions) in which no named speaker ever spoke keeps this factor of its
# score.  A memory that pools several conversations answers "What did Melanie
# …" from the conversations Melanie took part in; within one conversation every
# session has its participants, so nothing moves there.  Chosen on the LoCoMo
# dev half's pooled no-forgetting run (SPEC §10.7); 1 switches it off.
ABSENT_PARTICIPANT_FACTOR: Final = 0.5
# ... and keywords are weighed *within* those conversations: BM25 (candidates,
# coverage, the speaker focus) takes N, document frequencies and avgdl from the
# named speakers' conversations (their wholes and the wholes' parts,
# `index.bm25.Bm25Context`), not from the pool.  Global idf in a pooled store
# lifts the words one conversation always talks about (rare elsewhere) above
# the words that tell its turns apart, so adding other conversations reorders
# a conversation's own turns.  With it, each channel's top k (+ the number of
# candidates out of context) is also taken within the context (other
# conversations' turns would otherwise push the answer out of the pool).
# False switches both off.  Measured on the LoCoMo
# dev half's pooled no-forgetting run (SPEC §10.7); never fires in one conversation.
CONTEXT_STATISTICS: Final = True
# ... unless that candidate says more of the question than the named speaker
# ever did: its coverage (Σ idf of the distinct query terms it holds, the
# named speakers' names left out) is above SAID_IT_RATIO × the best coverage
# among the named speaker's candidates.  Such a question names the wrong
# person (LoCoMo's adversarial category: "What did Caroline realize after her
# charity race?" when Melanie ran it), and the turn is the evidence.  1 =
# "more than", not tuned; 0 keeps every candidate with a content word, a
# large value demotes them all.
SAID_IT_RATIO: Final = 1.0
# Name-free content (effort >= 5, `_content_stage`): when the query names a
# known speaker, her name matches every one of her turns (the "Melanie:"
# label) in both channels, and BM25's length normalisation then favours
# her shortest turns ("Melanie: Cool! What type of music do you play?").
# Every candidate keeps CONTENT_FLOOR + (1 − CONTENT_FLOOR) × c / max c of
# its score, c = Σ idf of the distinct query terms it holds, the speakers'
# names and function words left out.  Chosen on the LoCoMo dev half only
# from {0.3, 0.5, 0.75} (SPEC "Retrieval quality"); 1 switches it off.
CONTENT_FLOOR: Final = 0.5
# ... and before that scaling, the named speakers' own candidates gain
# SPEAKER_FOCUS_GAIN × best score × (name-free BM25 / best name-free BM25
# among them), noisy-OR'd — BM25 over *her* turns alone, so a fact she said
# in another session competes with what she said here.  Not when some other
# speaker's candidate says more of the question than she did (the question
# may name the wrong person, `SAID_IT_RATIO`).  Chosen on the LoCoMo dev half
# only from {0.25, 0.5, 1}; 0 switches it off.
SPEAKER_FOCUS_GAIN: Final = 0.5
# Pseudo-relevance feedback (effort >= 5, `prf.expansion_terms`): the
# PRF_TERMS best RM3 terms of the PRF_DOCS best candidates are searched with
# BM25; a hit's evidence PRF_WEIGHT × best own × (its score / best score)
# is noisy-OR'd into its stage-1 score.  0 switches it off.
PRF_DOCS: Final = 5
PRF_TERMS: Final = 10
PRF_WEIGHT: Final = 0.0
SCORE_DIGITS: Final = 6

SOURCES: Final = ("seed", "bm25", "neighbor")
# At most this many results of one ingested file before other files get a
# place (measured on two documentation trees, SPEC §10 "Effort on
# documentation trees").
MAX_PER_FILE: Final = 2
# The per-file cap chooses among the best `limit` × this returnable entries.
SPREAD_POOL_FACTOR: Final = 5
# The name stage 1 reports in `stats.mechanisms` for each fusion method.
FUSION_MECHANISMS: Final[Mapping[str, str]] = {SCORE_FUSION: "score_fusion", RRF_FUSION: "rrf"}


@dataclass(frozen=True)
class RetrievalSettings:
    """Every tunable of the pipeline; the defaults are the module constants."""

    candidate_multiplier: int = CANDIDATE_MULTIPLIER
    min_candidates: int = MIN_CANDIDATES
    fusion: str = DEFAULT_FUSION
    keyword_weight: float | None = None  # None: fusion.embedder_keyword_weight(embedder name)
    rrf_k: int = RRF_K
    support_gain: float = SUPPORT_GAIN
    sibling_factor: float = SIBLING_FACTOR
    hop_decay: float = HOP_DECAY
    utility_weight: float = UTILITY_WEIGHT
    experience_gain: float = EXPERIENCE_GAIN
    experience_penalty: float = EXPERIENCE_PENALTY
    experience_floor: float | None = None  # None: experience.unrelated_similarity(embedder)
    superseded_factor: float = SUPERSEDED_FACTOR
    ppr_restart: float = PPR_RESTART
    ppr_push_epsilon: float = PUSH_EPSILON
    local_push_epsilon: float = LOCAL_PUSH_EPSILON
    local_radius: int = LOCAL_RADIUS
    local_max_nodes: int = LOCAL_MAX_NODES
    louvain_resolution: float = LOUVAIN_RESOLUTION
    louvain_seed: int = LOUVAIN_SEED
    out_of_community_factor: float = OUT_OF_COMMUNITY_FACTOR
    topology_neighbors_per_result: int = TOPOLOGY_NEIGHBORS_PER_RESULT
    entity_gain: float = ENTITY_GAIN
    entity_max_df: int = ENTITY_MAX_DF
    entity_query_weight: float = ENTITY_QUERY_WEIGHT
    entity_restart: float = ENTITY_RESTART
    other_speaker_factor: float = OTHER_SPEAKER_FACTOR
    absent_participant_factor: float = ABSENT_PARTICIPANT_FACTOR
    context_statistics: bool = CONTEXT_STATISTICS
    said_it_ratio: float = SAID_IT_RATIO
    content_floor: float = CONTENT_FLOOR
    speaker_focus_gain: float = SPEAKER_FOCUS_GAIN
    prf_docs: int = PRF_DOCS
    prf_terms: int = PRF_TERMS
    prf_weight: float = PRF_WEIGHT
    max_query_chars: int = MAX_QUERY_CHARS
    # Results per file in the answer (spread.py); 0 = no cap (one file wanted).
    max_per_file: int = MAX_PER_FILE
    # Weight of an ingested candidate's path / heading match (fields.py); 0 = off.
    field_gain: float = FIELD_GAIN


DEFAULT_SETTINGS: Final = RetrievalSettings()


@dataclass(frozen=True)
class EffortPlan:
    """What one effort level runs."""

    effort: int
    support: bool
    hops: int
    walk: str | None  # None, "local" or "full"
    communities: bool
    contradiction_check: bool


def effort_plan(effort: int | None, deep: bool, expansion_hops: int) -> EffortPlan:
    """Map the effort spectrum 0..10 (seed 002) to pipeline stages.

    None = effort 1 semantics with the given `expansion_hops` (0 hops then
    reports effort 0); `deep` = effort 6.  0: hybrid candidates only.  1–4:
    + graph support and expansion.  5–7: + local PageRank and Louvain.  8–10: + whole-graph
    PageRank and the contradiction check.  Levels inside a band behave alike.
    """
    if deep:
        if effort is not None and effort != DEEP_EFFORT:
            raise ValidationError("deep", f"deep means effort {DEEP_EFFORT}; got effort {effort}")
        effort = DEEP_EFFORT
    if effort is None:
        effort = EXPANSION_MIN_EFFORT if expansion_hops > 0 else 0
    effort = check_int("effort", effort, 0, EFFORT_MAX)
    walk = (
        "full"
        if effort >= FULL_GRAPH_MIN_EFFORT
        else "local"
        if effort >= WALK_MIN_EFFORT
        else None
    )
    return EffortPlan(
        effort=effort,
        support=effort >= EXPANSION_MIN_EFFORT,
        hops=expansion_hops if effort >= EXPANSION_MIN_EFFORT else 0,
        walk=walk,
        communities=walk is not None,
        contradiction_check=effort >= FULL_GRAPH_MIN_EFFORT,
    )


@dataclass
class Entry:
    """A scored node during one retrieval.

    ``own`` is its stage-1 (fused × confidence) score, 0 for nodes found
    only through the graph.
    """

    node_id: str
    score: float
    source: str
    hops: int
    via: str | None
    own: float = 0.0


@dataclass
class _Run:
    """State of one retrieval call."""

    graph: GraphEngine
    reader: GraphReader
    settings: RetrievalSettings
    plan: EffortPlan
    returnable: Callable[[Node], bool]
    entries: dict[str, Entry] = field(default_factory=dict)
    seeds: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    mechanisms: list[str] = field(default_factory=list)
    aids: int = 0
    cosines: dict[str, float] = field(default_factory=dict)  # exact, from stage 1
    # Named speakers -> the wholes (conversations) they spoke in (`_absent`).
    joined: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    # The BM25 statistics keywords are weighed with (None: the whole index's).
    keywords: KeywordIndex | None = None
    # The candidates out of the query's context (`_participant_stage`).
    out_of_context: set[str] = field(default_factory=set)
    # False for an `as_of` retrieval: a fact superseded since held then, undemoted.
    answers_now: bool = True

    def text_index(self) -> KeywordIndex:
        """The keyword index of this retrieval: a context's statistics or the whole index's."""
        return self.graph.text_index() if self.keywords is None else self.keywords

    def offer(self, node_id: str, score: float, hops: int, via: str | None) -> bool:
        """Keep the better of an existing entry and a neighbour path; True if it improved."""
        current = self.entries.get(node_id)
        if current is not None and current.score >= score:
            return False
        self.entries[node_id] = Entry(node_id, score, "neighbor", hops, via)
        return True

    def raise_score(self, node_id: str, score: float) -> None:
        """Raise an existing entry's score, keeping how it was found (source, hops, via)."""
        entry = self.entries[node_id]
        entry.score = max(entry.score, score)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 3)


def cap_query(query: str, max_chars: int = MAX_QUERY_CHARS) -> tuple[str, bool]:
    """The query cut to `max_chars` characters, and whether it was cut.  O(max_chars)."""
    if len(query) <= max_chars:
        return query, False
    return query[:max_chars], True


# -- stage 1: hybrid candidates ----------------------------------------------


def _allowed_ids(run: _Run, node_type: str | None, agent_id: str | None) -> set[str] | None:
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


def _candidates(
    run: _Run,
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
    confidence = _ranking_confidence(run, vector, [node_id for node_id, _ in fused])
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
        if not run.returnable(node):
            continue  # filtered by type
        kept.append((node_id, own * fields(node), "seed" if node_id in embedded else "bm25"))
    # The field boost may lift a score past 1: rescale so the best stays at most 1.
    top = max((own for _, own, _ in kept), default=1.0)
    scale = 1.0 / top if top > 1.0 else 1.0
    for node_id, own, source in kept:
        run.entries[node_id] = Entry(node_id, own * scale, source, 0, None, own=own * scale)
    run.stats["candidates"] = {
        "pool_size": pool,
        **counts,
        "fused": len(run.entries),
        "aids": run.aids,
    }
    return found


def _field_weigher(run: _Run, tokens: list[str]) -> Callable[[Node], float]:
    """A node -> its field factor (`fields.field_factor`; 1.0 when the gain is 0)."""
    gain = run.settings.field_gain
    if gain <= 0.0:
        return lambda node: 1.0
    keywords = run.text_index()
    terms = keywords.terms(tokens)
    document_terms = run.graph.text_index().document_terms
    return lambda node: field_factor(node, terms, keywords.idf, document_terms, gain)


def _feedback(run: _Run, tokens: list[str], pool: int, allowed: set[str] | None) -> None:
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


def _choose_seeds(run: _Run) -> None:
    """The best `limit` scored nodes (score desc, id asc) start the graph stages."""
    ranked = sorted(run.entries.values(), key=lambda e: (-e.score, e.node_id))
    run.seeds = [entry.node_id for entry in ranked[: run.stats["limit"]]]
    run.stats["seeds"] = len(run.seeds)


# -- stage 2: graph support ------------------------------------------------------


def transfer(link: Link, gain: float, decay: float) -> float:
    """Share of a node's score an edge passes on: decay × min(1, gain × strength × kind weight).

    ``decay`` (`HOP_DECAY`) keeps a neighbour strictly below the node that
    vouches for it, as in expansion.  O(1).
    """
    return decay * min(1.0, gain * link.strength * EDGE_KIND_WEIGHTS[link.relationship])


def support_scores(
    own: Mapping[str, float],
    links_of: Callable[[str], Sequence[Link]],
    gain: float,
    decay: float,
    sibling_factor: float,
) -> dict[str, float]:
    """Graph support of every candidate from the other candidates.

    Input: stage-1 scores ``own`` of the candidates, their links (visible
    neighbours), the transfer gain and the factor of the two-hop path
    through a shared whole.  For candidate v:

        support(v) = max( max over links v–u to a candidate u of own(u) · τ(v–u),
                          max over wholes P with v part_of P and another
                              candidate w part_of P of
                              own(w) · τ(w→P) · τ(v→P) · sibling_factor )

    with τ = `transfer`.  Only candidates pass support (a node with no own
    evidence has nothing to vouch with), so only links among candidates and
    from candidates to their wholes matter (`GraphReader.links_among`).
    Output: ``{candidate: support > 0}``.  Complexity: O(links of the
    candidates + candidates × log).
    """
    best: dict[str, float] = {}

    def offer(node_id: str, value: float) -> None:
        if value > best.get(node_id, 0.0):
            best[node_id] = value

    wholes: dict[str, dict[str, float]] = {}
    for node_id in sorted(own):
        for link in links_of(node_id):
            share = transfer(link, gain, decay)
            if link.neighbor in own and link.neighbor != node_id:
                offer(node_id, own[link.neighbor] * share)
            if link.outgoing and link.relationship in STRUCTURAL_RELATIONSHIPS:
                parts = wholes.setdefault(link.neighbor, {})
                parts[node_id] = max(parts.get(node_id, 0.0), share)
    if sibling_factor > 0.0:
        for parts in wholes.values():
            if len(parts) < 2:
                continue
            ranked = sorted(parts, key=lambda part: (-own[part] * parts[part], part))
            for part, share in parts.items():
                other = ranked[0] if ranked[0] != part else ranked[1]
                offer(part, own[other] * parts[other] * share * sibling_factor)
    return best


def _support(run: _Run) -> None:
    """Stage 2: candidates connected to other strong candidates gain score (noisy-OR)."""
    settings = run.settings
    own = {node_id: entry.own for node_id, entry in run.entries.items() if entry.own > 0.0}
    links = run.reader.links_among(own)
    support = support_scores(
        own,
        lambda node_id: links.get(node_id, []),
        settings.support_gain,
        settings.hop_decay,
        settings.sibling_factor,
    )
    for node_id, value in support.items():
        entry = run.entries[node_id]
        entry.score = combine_evidence(entry.own, value)
    run.stats["supported"] = len(support)


# -- stage 3: ego-neighbourhood expansion ------------------------------------


def _top_neighbors(links: Sequence[Link], count: int) -> list[Link]:
    """The `count` strongest distinct neighbours (links arrive strongest first)."""
    chosen: list[Link] = []
    seen: set[str] = set()
    for link in links:
        if link.neighbor in seen:
            continue
        seen.add(link.neighbor)
        chosen.append(link)
        if len(chosen) == count:
            break
    return chosen


def _expand(run: _Run, hops: int, neighbors_per_node: int) -> None:
    """Stage 3: BFS from the seeds, `neighbors_per_node` strongest neighbours per node.

    Hop h propagates the scores the frontier had when the hop began (so a
    node's `hops` is the length of the path that gave its score); the next
    frontier is every node whose score this hop improved.
    """
    decay = run.settings.hop_decay
    frontier = list(run.seeds)
    added = 0
    for hop in range(1, hops + 1):
        if not frontier or neighbors_per_node == 0:
            break
        run.reader.load_links(frontier)
        start = {parent: run.entries[parent].score for parent in frontier}
        improved: dict[str, None] = {}
        for parent in frontier:
            for link in _top_neighbors(run.reader.links(parent), neighbors_per_node):
                neighbor = link.neighbor
                is_new = neighbor not in run.entries
                if run.offer(neighbor, start[parent] * link.strength * decay, hop, parent):
                    added += is_new
                    improved[neighbor] = None
        frontier = sorted(improved, key=lambda node_id: (-run.entries[node_id].score, node_id))
    run.stats["expanded"] = added


# -- stage 4: the walk (Personalized PageRank) and communities ---------------------


def _ball(run: _Run) -> tuple[list[str], dict[str, tuple[int, str | None]]]:
    """Nodes within `local_radius` hops of the seeds (at most `local_max_nodes`).

    Output: the ball's node ids (sorted) and ``{node: (hops, parent)}`` of its
    BFS tree (seeds first, parents by score, links strongest first).
    One query per layer.
    """
    tree: dict[str, tuple[int, str | None]] = {seed: (0, None) for seed in run.seeds}
    frontier = list(run.seeds)
    cap = run.settings.local_max_nodes
    for depth in range(1, run.settings.local_radius + 1):
        if not frontier or len(tree) >= cap:
            break
        run.reader.load_links(frontier)
        layer: list[str] = []
        for parent in frontier:
            for link in run.reader.links(parent):
                if link.neighbor not in tree and len(tree) < cap:
                    tree[link.neighbor] = (depth, parent)
                    layer.append(link.neighbor)
        frontier = layer
    return sorted(tree), tree


def _bfs_tree(
    links_of: Callable[[str], Sequence[Link]], sources: Sequence[str], targets: set[str]
) -> dict[str, tuple[int, str | None]]:
    """BFS parents from `sources` until every target is reached (or the graph ends).  O(V + E)."""
    tree: dict[str, tuple[int, str | None]] = {source: (0, None) for source in sources}
    frontier = list(sources)
    missing = set(targets) - set(tree)
    depth = 0
    while frontier and missing:
        depth += 1
        layer: list[str] = []
        for parent in frontier:
            for link in links_of(parent):
                if link.neighbor not in tree:
                    tree[link.neighbor] = (depth, parent)
                    missing.discard(link.neighbor)
                    layer.append(link.neighbor)
        frontier = layer
    return tree


def _walk(
    run: _Run, ball: list[str], personalization: Mapping[str, float]
) -> tuple[dict[str, float], WeightedGraph, str]:
    """Walk evidence from the seeds (`spread`) and the ball's weighted graph (for Louvain).

    Local (effort 5–7): over the ball's edges, push tolerance
    `local_push_epsilon`.  Full (8–10): over every live node (of the agent),
    on the cached whole-graph snapshot, tolerance `ppr_push_epsilon`.
    """
    settings = run.settings
    if run.plan.walk == "local":
        ball_graph = weighted_graph(ball, run.graph.store.list_edges_between(ball))
        degrees = walk_degrees(ball_graph)
        transitions = leaky_transitions(ball_graph, degrees)
        epsilon, mechanism = settings.local_push_epsilon, "ppr_local"
    else:
        snapshot = run.graph.graph_snapshot()
        agent = run.stats.get("agent_id")
        if agent is None:
            transitions, degrees = snapshot.walk()
        else:
            owned = {node for node, owner in snapshot.agent.items() if owner == agent}
            mine = _restrict(snapshot.weighted(), owned)
            degrees = walk_degrees(mine)
            transitions = leaky_transitions(mine, degrees)
        ball_graph = _restrict(snapshot.weighted(), ball)
        epsilon, mechanism = settings.ppr_push_epsilon, "ppr_full"
    evidence = spread(transitions, degrees, personalization, settings.ppr_restart, epsilon)
    return evidence, ball_graph, mechanism


def spread(
    transitions: Mapping[str, Sequence[tuple[str, float]]],
    degrees: Mapping[str, float],
    scores: Mapping[str, float],
    restart: float,
    epsilon: float,
) -> dict[str, float]:
    """Seed scores spread over the walk graph with symmetric degree normalisation.

    With W the walk weights, D̃ = `walk_degrees` and S = D̃^-½ W D̃^-½, the
    spread activation is z = Σ_k (1 − restart)^k S^k s (label spreading,
    Zhou et al., "Learning with Local and Global Consistency", NIPS 2004):
    each hop multiplies by w(u, v) / √(D̃(u) D̃(v)) and by 0.85, so an edge of
    weight 0.3 (strength 0.3, a neutral kind) between two nodes with weaker
    neighbourhoods than one full edge passes 0.85 × 0.3 of a score (the
    expansion formula), and a hub neither collects nor emits more than its
    share.  Computed as Personalized PageRank: with restart weights
    p(s) = s × √D̃(s) and x = PPR(p / Σp) on the transitions w / D̃(u)
    (`leaky_transitions`), z = Σp · D̃^-½ x / restart.  Output: the part
    that arrived by walking, ``{v: z(v) − s(v) > 0}``.
    Complexity: one `ppr_push`, O(1 / (epsilon × restart)).
    """
    roots = {node: math.sqrt(degrees.get(node, WALK_MIN_DEGREE)) for node in scores}
    personalization = {node: max(score, 0.0) * roots[node] for node, score in scores.items()}
    total = sum(personalization.values())
    if total <= 0.0:
        return {}
    ranks = ppr_push(transitions, personalization, alpha_restart=restart, epsilon=epsilon)
    out = {}
    for node, rank in ranks.items():
        value = total * rank / (restart * math.sqrt(degrees[node])) - max(
            scores.get(node, 0.0), 0.0
        )
        if value > 0.0:
            out[node] = value
    return out


def saturate(value: float, ceiling: float) -> float:
    """ceiling × (1 − exp(−value / ceiling)): ≈ value when small, never above ceiling.

    Walk evidence is a *sum* over paths, so a hub next to many seeds would
    collect more than any seed has; this is the noisy-OR of many small
    contributions (1 − Π(1 − x_i) ≈ 1 − exp(−Σ x_i)) on the scale of the best
    seed.  O(1).
    """
    if ceiling <= 0.0:
        return 0.0
    return ceiling * -math.expm1(-value / ceiling)


def _graph_walk(run: _Run) -> None:
    """Stage 4: PageRank from the seeds, weighted by Louvain community membership.

    Every node v of the walk graph gets g(v) = `saturate`(`spread`(seeds)(v),
    S) × c(v), S = the best seed score, c(v) = 1 inside a community (Louvain
    on the ball) that holds a seed, else `out_of_community_factor`.  Scored
    nodes keep max(score, g); of the rest the `pool` best are added as
    neighbours (hops and via from the BFS tree of the ball, or of the whole
    graph for nodes outside it).
    """
    settings = run.settings
    if not run.seeds:
        run.stats.update(ppr_nodes=0, communities=0)
        return
    started = time.perf_counter()
    ball, tree = _ball(run)
    personalization = {seed: max(run.entries[seed].score, 0.0) for seed in run.seeds}
    evidence, ball_graph, mechanism = _walk(run, ball, personalization)
    run.mechanisms.append(mechanism)
    run.timings["ppr"] = _ms(started)
    started = time.perf_counter()
    communities = louvain_communities(
        ball_graph, resolution=settings.louvain_resolution, seed=settings.louvain_seed
    )
    run.mechanisms.append("louvain")
    run.timings["louvain"] = _ms(started)
    seeds = set(run.seeds)
    inside = {node for members in communities if seeds & set(members) for node in members}
    ceiling = max(personalization.values())
    graph_scores = {
        node: saturate(value, ceiling)
        * (1.0 if node in inside else settings.out_of_community_factor)
        for node, value in evidence.items()
    }
    ranked = sorted(graph_scores, key=lambda node: (-graph_scores[node], node))
    for node in ranked:
        if node in run.entries:
            run.raise_score(node, graph_scores[node])
    fresh = [node for node in ranked if node not in run.entries]
    fresh = fresh[: run.stats["candidates"]["pool_size"]]
    run.reader.load_nodes(fresh)
    fresh = [node for node in fresh if run.reader.visible(node)]
    outside_ball = {node for node in fresh if node not in tree}
    if outside_ball:  # whole-graph walk only: find a path back to a seed
        links = run.graph.graph_snapshot().links()
        tree = {**_bfs_tree(lambda n: links.get(n, []), run.seeds, outside_ball), **tree}
    offered = 0
    for node in fresh:
        hops, via = tree[node]
        offered += run.offer(node, graph_scores[node], hops, via)
    run.stats.update(ppr_nodes=offered, communities=len(communities))


def _restrict(graph: WeightedGraph, nodes: Iterable[str]) -> WeightedGraph:
    keep = set(nodes)
    return {u: {v: w for v, w in graph[u].items() if v in keep} for u in sorted(keep) if u in graph}


def _entity_stage(run: _Run, text: str) -> None:
    """Stage 4b: the entity walk (`multihop.entity_walk`) from the seeds and the query's entities.

    Evidence e(p) = `entity_gain` × best seed score × relative mass m(p);
    a scored passage gets combine_evidence(score, e), a new one e (source
    "neighbor", hops 2, via the best seed sharing an entity with it).
    """
    settings = run.settings
    if not run.seeds or settings.entity_gain <= 0.0:
        run.stats["entity_nodes"] = 0
        return
    started = time.perf_counter()
    index = entity_index(run.graph)
    seeds = {seed: run.entries[seed].score for seed in run.seeds}
    mass = entity_walk(
        index,
        seeds,
        index.query_entities(text),
        max_df=settings.entity_max_df,
        query_weight=settings.entity_query_weight,
        restart=settings.entity_restart,
        epsilon=ENTITY_PUSH_EPSILON,
    )
    best = max(seeds.values())
    evidence = {node: settings.entity_gain * best * m for node, m in mass.items()}
    for node, value in evidence.items():
        if node in run.entries:
            entry = run.entries[node]
            entry.score = combine_evidence(entry.score, value)
    fresh = sorted((n for n in evidence if n not in run.entries), key=lambda n: (-evidence[n], n))
    fresh = fresh[: run.stats["candidates"]["pool_size"]]
    run.reader.load_nodes(fresh)
    seed_keys = {seed: set(index.entities_of(seed)) for seed in run.seeds}
    added = 0
    for node in fresh:
        row = run.reader.node(node)
        if row is None or not run.returnable(row):
            continue
        keys = set(index.entities_of(node))
        via = next((seed for seed in run.seeds if seed_keys[seed] & keys), None)
        added += run.offer(node, evidence[node], 2 if via is not None else 1, via)
    run.mechanisms.append("entity_walk")
    run.stats["entity_nodes"] = added
    run.timings["entity_walk"] = _ms(started)


def _participant_stage(
    run: _Run,
    text: str,
    vector: list[float] | None,
    tokens: list[str],
    pool: int,
    allowed: set[str] | None,
) -> None:
    """Stage 1b: turns from conversations no named speaker took part in × the factor.

    Runs when the query names a known speaker and the index knows at least two
    (`attribution`).  The conversations a speaker took part in are the wholes
    (``part_of`` targets) of the turns she said; a candidate said by another
    speaker whose wholes are known and none of them is such a conversation is
    *out of context*.  When any candidate is, the candidates are searched
    again so that they do not take the places of the question's own
    conversations' candidates, and then scaled by `absent_participant_factor`
    before graph support (they pass less support on and seed nothing).
    With `context_statistics` (score fusion) the second search takes each
    channel's top (k + the number out of context) among the ids `_in_context`
    accepts — a superset of the pool a memory holding only the named
    speakers' conversations would have — plus the first pool's candidates it
    rejects, weighs keywords with those conversations' BM25 statistics (kept
    for the later keyword stages) and normalises the channels and the best
    score over the candidates in context: the context's candidates score as
    in a memory holding it alone, and none of them loses its pool place.
    Without it (or with RRF) the second search is the first widened by the
    number out of context (fused scores do not depend on the pool's size).
    Unattributed candidates and parts of no whole are untouched.
    O(out-edges of the named speakers' turns and of the candidates + the
    context's distinct terms) + one candidate search when any is out.
    """
    factor = run.settings.absent_participant_factor
    run.stats["absent_participant_demoted"] = 0
    if (factor >= 1.0 and not run.settings.context_statistics) or not run.entries:
        return
    demoted = _absent(run, text, run.entries)
    if not demoted:
        return
    # Each candidate is checked once: the first pool's are known.
    first = sorted(run.entries)
    outside = _out_of_context(run, text, first=set(first), known=demoted)
    run.entries.clear()
    run.aids = 0
    if run.settings.context_statistics and run.settings.fusion == SCORE_FUSION:
        context = _context(run, text)
        run.keywords = run.graph.text_index().within(context)
        within = _in_context(run, text, context)
        extra = [node_id for node_id in first if not within(node_id)]
        _candidates(run, vector, tokens, pool + len(demoted), allowed, outside, extra, within)
    elif run.settings.context_statistics:
        run.keywords = run.graph.text_index().within(_context(run, text))
        _candidates(run, vector, tokens, pool + len(demoted), allowed, outside=outside)
    else:
        _candidates(run, vector, tokens, pool + len(demoted), allowed)
    run.out_of_context = outside(sorted(run.entries))
    demoted = run.out_of_context if factor < 1.0 else set()
    for node_id in sorted(demoted):
        entry = run.entries[node_id]
        entry.own *= factor
        entry.score *= factor
    if demoted:
        run.mechanisms.append("participant_scope")
    run.stats["absent_participant_demoted"] = len(demoted)
    if run.keywords is not None:
        run.mechanisms.append("context_statistics")


def _out_of_context(
    run: _Run, text: str, first: set[str], known: set[str]
) -> Callable[[list[str]], set[str]]:
    """`ids` -> those of them out of the query's context (`_absent`), each id checked once.

    `first` were checked already and `known` are those of them found out.
    """
    checked = set(first)
    out = set(known)

    def outside(ids: list[str]) -> set[str]:
        fresh = [node_id for node_id in ids if node_id not in checked]
        out.update(_absent(run, text, fresh))
        checked.update(fresh)
        return out.intersection(ids)

    return outside


def _context(run: _Run, text: str) -> set[str]:
    """The conversations the query's named speakers spoke in: those wholes (computed
    by `_absent`) and all their parts.  O(edges touching the wholes)."""
    named = tuple(speaker_index(run.graph).query_speakers(text))
    wholes = run.joined[named]
    return wholes.union(*run.reader.parts_of(wholes).values())


def _in_context(run: _Run, text: str, context: set[str]) -> Callable[[str], bool]:
    """A filter keeping the query's context out of the other conversations' turns.

    It accepts the `context` ids, the named speakers' nodes and every
    unattributed node (documents, facts, sessions: a session outside the
    context is still found out by `_absent` and set aside).  So it rejects
    only turns `_absent` calls out of context.  O(1) per id.
    """
    index = speaker_index(run.graph)
    named = set(index.query_speakers(text))

    def accept(node_id: str) -> bool:
        if node_id in context:
            return True
        speaker = index.speaker(node_id)
        return speaker is None or speaker in named

    return accept


def _absent(run: _Run, text: str, node_ids: Iterable[str]) -> set[str]:
    """The `node_ids` of conversations no speaker `text` names took part in.

    Those are turns said by others whose wholes are all outside the wholes the
    named speakers spoke in, and such wholes themselves (an unattributed node
    with attributed parts: another conversation's session).  Empty when
    `text` names no known speaker or the index knows fewer than two.  The
    wholes each named group spoke in are computed once per retrieval.
    O(out-edges of the named speakers' turns and of `node_ids` + in-edges
    of the unattributed `node_ids`).
    """
    index = speaker_index(run.graph)
    named = tuple(index.query_speakers(text))
    if not named or index.speakers() < 2:
        return set()
    ids = sorted(set(node_ids))
    others = [
        node_id
        for node_id in ids
        if (speaker := index.speaker(node_id)) is not None and speaker not in named
    ]
    joined = run.joined.get(named)
    if joined is None:
        theirs = {node_id for key in named for node_id in index.authored(key)}
        wholes_of = run.reader.wholes_of(theirs)
        joined = run.joined[named] = {whole for wholes in wholes_of.values() for whole in wholes}
    if not joined:
        return set()
    out = {
        node_id
        for node_id, wholes in run.reader.wholes_of(others).items()
        if joined.isdisjoint(wholes)
    }
    unattributed = [n for n in ids if index.speaker(n) is None and n not in joined]
    if unattributed:
        for whole, parts in run.reader.parts_of(unattributed).items():
            if any(index.speaker(part) is not None for part in parts):
                out.add(whole)
    return out


def _speaker_stage(run: _Run, text: str) -> None:
    """Stage 4c: candidates said by a speaker the query does not name × `other_speaker_factor`.

    Runs only when the query names (capitalised) a speaker of the speaker
    index and the index knows at least two speakers (`attribution`).  A
    candidate of another speaker that says more of the question than the
    named speakers did (`_said_by_someone_else`) is kept as it is.
    """
    factor = run.settings.other_speaker_factor
    run.stats["other_speaker_demoted"] = 0
    run.stats["other_speaker_kept"] = 0
    if factor >= 1.0 or not run.entries:
        return
    index = speaker_index(run.graph)
    named = set(index.query_speakers(text))
    if not named or index.speakers() < 2:
        return
    others = [
        node_id
        for node_id in sorted(run.entries)
        if (speaker := index.speaker(node_id)) is not None and speaker not in named
    ]
    kept = _said_by_someone_else(run, text, named, others)
    for node_id in others:
        if node_id not in kept:
            run.entries[node_id].score *= factor
    run.mechanisms.append("speaker_attribution")
    run.stats["other_speaker_demoted"] = len(others) - len(kept)
    run.stats["other_speaker_kept"] = len(kept)


def _said_by_someone_else(run: _Run, text: str, named: set[str], others: Sequence[str]) -> set[str]:
    """The `others` whose coverage beats `said_it_ratio` × the named speakers' best coverage.

    Coverage of a candidate = Σ idf of the distinct query terms it contains,
    the words of the named speakers' keys left out (every turn of a speaker
    opens with her name, so the name says nothing about *what* was said).
    Term presence, not BM25: a short reply ("Wow, pottery!") must not out-say
    a longer turn that holds the same words.  O(postings of the query terms).
    """
    names = {word for key in named for word in key.split()}
    tokens = [token for token in bm25_tokens(text) if entity_key([token]) not in names]
    if not tokens or not others:
        return set()
    coverage = _coverage(run, tokens)
    index = speaker_index(run.graph)
    said = max(
        (coverage.get(node_id, 0.0) for node_id in run.entries if index.speaker(node_id) in named),
        default=0.0,
    )
    bar = run.settings.said_it_ratio * said
    return {node_id for node_id in others if coverage.get(node_id, 0.0) > bar}


def _coverage(run: _Run, tokens: Sequence[str]) -> dict[str, float]:
    """Candidate -> Σ idf (the BM25 index's) of the distinct `tokens` it contains.

    Term presence, not BM25 (no length normalisation).  O(postings of the tokens).
    """
    text_index = run.text_index()
    coverage: dict[str, float] = {}
    for term, token in sorted(dict(zip(text_index.terms(tokens), tokens, strict=True)).items()):
        idf = text_index.idf(term)
        for node_id in text_index.scores([token], allow=run.entries.__contains__):
            coverage[node_id] = coverage.get(node_id, 0.0) + idf
    return coverage


def _content_stage(run: _Run, text: str) -> None:
    """Stage 4d: the named speaker's content, when the query names a speaker.

    Query tokens here are those that are neither a named speaker's name nor
    a function word (`entities.FUNCTION_WORDS`).  First `_speaker_focus`
    (her candidates gain from name-free BM25 over her turns), then every
    candidate × (floor + (1 − floor) × c / max c), c = `_coverage` of those
    tokens.  Same gate as `_speaker_stage` (a named speaker, >= 2 speakers)
    and a query token left; the scaling does nothing when no candidate holds
    one.  Adds ``"speaker_content"`` to the mechanisms; ``stats.content_scaled`` counts
    the scaled candidates, ``stats.speaker_focused`` the lifted ones.
    """
    floor = run.settings.content_floor
    run.stats["content_scaled"] = 0
    run.stats["speaker_focused"] = 0
    if (floor >= 1.0 and run.settings.speaker_focus_gain <= 0.0) or not run.entries:
        return
    index = speaker_index(run.graph)
    named = set(index.query_speakers(text))
    if not named or index.speakers() < 2:
        return
    names = {word for key in named for word in key.split()}
    tokens = [
        token
        for token in bm25_tokens(text)
        if entity_key([token]) not in names and token not in FUNCTION_WORDS
    ]
    if not tokens:
        return
    run.mechanisms.append("speaker_content")
    if run.settings.speaker_focus_gain > 0.0:
        run.stats["speaker_focused"] = _speaker_focus(run, text, named, tokens)
    coverage = _coverage(run, tokens) if floor < 1.0 else {}
    best = max(coverage.values(), default=0.0)
    scaled = 0
    for node_id, entry in run.entries.items():
        share = coverage.get(node_id, 0.0) / best if best > 0.0 else 1.0
        if share < 1.0:
            entry.score *= floor + (1.0 - floor) * share
            scaled += 1
    run.stats["content_scaled"] = scaled


def _speaker_focus(run: _Run, text: str, named: set[str], tokens: Sequence[str]) -> int:
    """Her candidates ⊕ gain × best score × name-free BM25 / its best; returns how many gained.

    BM25 of `tokens` over the candidates said by a named speaker only.
    Skipped (0) when `_said_by_someone_else` keeps some other speaker's
    candidate: that question may name the wrong person.  O(postings of the tokens).
    """
    index = speaker_index(run.graph)
    others = [
        node_id
        for node_id in sorted(run.entries)
        if (speaker := index.speaker(node_id)) is not None and speaker not in named
    ]
    if _said_by_someone_else(run, text, named, others):
        return 0
    hers = run.text_index().scores(
        tokens, allow=lambda node_id: node_id in run.entries and index.speaker(node_id) in named
    )
    top = max(hers.values(), default=0.0)
    if top <= 0.0:
        return 0
    lift = run.settings.speaker_focus_gain * max(entry.score for entry in run.entries.values())
    for node_id, value in hers.items():
        entry = run.entries[node_id]
        entry.score = combine_evidence(entry.score, lift * value / top)
    return len(hers)


# -- stage 5: utility rerank ------------------------------------------------------


def _fresh_experience(
    run: _Run, vector: list[float] | None, candidates: Collection[str] | None = None
) -> ExperienceIndex | None:
    """The graph's experience index brought up to date, or None when it cannot speak
    (no query vector, no candidates — `candidates`, else the run's entries — no
    outcome with a query)."""
    graph = run.graph
    if vector is None or not (run.entries if candidates is None else candidates):
        return None
    graph.vector_index()  # brings the engine up to date first
    experience = experience_index(graph)
    experience.refresh(graph.store, graph.generation)
    return experience if len(experience) else None


def _experience_floor(run: _Run) -> float:
    """The query similarity at or below which an earlier query says nothing."""
    floor = run.settings.experience_floor
    return unrelated_similarity(run.graph.embedder.name) if floor is None else floor


def _utility_match(
    run: _Run, vector: list[float] | None, candidates: Sequence[str] | None = None
) -> dict[str, float]:
    """Per candidate (`candidates`, else the run's entries) with Q-moving outcomes of a
    known query: how far they match this query (`ExperienceIndex.utility_match`);
    empty when experience cannot speak."""
    pool = list(run.entries) if candidates is None else candidates
    experience = _fresh_experience(run, vector, pool)
    if experience is None or vector is None:
        return {}
    return experience.utility_match(
        vector,
        run.graph.vector_index().dimensions,
        pool,
        run.graph.embed_texts,
        _experience_floor(run),
    )


def _ranking_confidence(
    run: _Run, vector: list[float] | None, candidates: Sequence[str]
) -> dict[str, float]:
    """Stage 1's confidence for the candidates whose confidence attributions with a
    known query moved: `conditioned_confidence` with the `utility_match` that
    conditions their Q (one rule for both learned signals).  Others are absent:
    they rank by their stored confidence.  Loaded rows only; a candidate that never
    learned from an attribution (q_update_count 0) is not looked at.
    Complexity: O(candidates) + `ExperienceIndex.utility_match` over the learned ones.
    """
    rows = {node_id: run.reader.node(node_id) for node_id in candidates}
    learned = [n for n, node in rows.items() if node is not None and node.q_update_count > 0]
    experience = _fresh_experience(run, vector, learned) if learned else None
    if experience is None:
        return {}
    moved = experience.learned_confidence(learned)
    if not moved:
        return {}
    match = _utility_match(run, vector, sorted(moved))
    out = {}
    for node_id, step in moved.items():
        node = rows[node_id]
        assert node is not None
        out[node_id] = conditioned_confidence(
            node.confidence, node.base_confidence, step, match.get(node_id, 1.0)
        )
    return out


def _experience(run: _Run, vector: list[float] | None, tokens: Sequence[str]) -> int:
    """Similar earlier outcomes vouch for (or object to) the nodes they used.

    score' = (score ⊕ gain · support · r) × (1 − penalty · objection), with ⊕ the
    noisy-OR of `combine_evidence`, r the candidate's score over the best
    candidate's (`experienced_score`), and support/objection from
    `ExperienceIndex.evidence` (objections through the BM25 index's view of
    which words matched).  The words' weights and the best candidate are
    those of the candidates in the query's context (the participant scope's
    others, set aside, change nothing about how these compare), unless every
    candidate is out of it.  Returns the number of entries changed.
    """
    graph = run.graph
    experience = _fresh_experience(run, vector)
    if experience is None or vector is None:
        return 0
    peers = [n for n in sorted(run.entries) if n not in run.out_of_context] or sorted(run.entries)
    found = experience.evidence(
        vector,
        graph.vector_index().dimensions,
        run.entries,
        graph.embed_texts,
        _experience_floor(run),
        Lexical.of(graph.text_index(), tokens, peers),
    )
    gain, penalty = run.settings.experience_gain, run.settings.experience_penalty
    best = max(run.entries[node_id].score for node_id in peers)
    for node_id, evidence in found.items():
        entry = run.entries[node_id]
        entry.score = experienced_score(entry.score, evidence, gain, penalty, best)
    return len(found)


def _utility_rerank(run: _Run, vector: list[float] | None, tokens: Sequence[str]) -> None:
    """Stage 5: Q-values (seed 004's blend), experience, superseded nodes demoted.

    score' = (1 − α)·score + α·q when some candidate in the query's context has
    outcomes (Q-values move by attributions only, `learning.outcomes`; another
    conversation's learned turn set aside by the participant scope does not
    switch the blend on for this one's).  q is the node's q_value, conditioned on
    the query for a node whose Q was earned by outcomes with a known query
    (`conditioned_q` with `ExperienceIndex.utility_match`: a node that answered
    one question is lifted for questions like it, at the prior 0.5 for others);
    a node without outcomes, or whose outcomes name no query, blends its q_value
    as seed 004 says.  Then `_experience` (query-dependent), then ×
    `superseded_factor` for superseded nodes.
    """
    run.reader.load_nodes(run.entries)
    alpha = run.settings.utility_weight
    rows = {node_id: run.reader.node(node_id) for node_id in run.entries}
    learned = any(
        node is not None and node.q_update_count > 0 and node_id not in run.out_of_context
        for node_id, node in rows.items()
    )
    match = _utility_match(run, vector) if learned else {}
    demoted = 0
    for node_id, entry in run.entries.items():
        node = rows[node_id]
        if node is None:
            continue
        if learned:
            q = conditioned_q(node.q_value, match.get(node_id, 1.0))
            entry.score = (1.0 - alpha) * entry.score + alpha * q
        if node.superseded_by is not None and run.answers_now:
            entry.score *= run.settings.superseded_factor
            demoted += 1
    if learned:
        run.mechanisms.append("utility_rerank")
    experienced = _experience(run, vector, tokens)
    if experienced:
        run.mechanisms.append("experience")
    run.stats["utility_rerank"] = learned
    run.stats["experience"] = experienced
    run.stats["superseded_demoted"] = demoted


def _time_stage(run: _Run, scope: TimeScope, limit: int, query: str) -> dict[str, Any]:
    """Stage 5.5 (`time_scope`): the question's time window orders the candidates, then
    the newest of one claim ranks first.  Output: the ``time`` stats and the ids to flag
    (``{"flags": {id: flag}}``).  O(candidates) + O((2·limit)²) rule checks."""
    report: dict[str, Any] = {"as_of": None, "window": None, "reordered": 0}
    if scope.as_of is not None:
        report["as_of"] = format_time(scope.as_of)
    run.reader.load_nodes(run.entries)
    nodes = {
        node_id: node
        for node_id in run.entries
        if (node := run.reader.node(node_id)) is not None and run.returnable(node)
    }
    scores = {node_id: run.entries[node_id].score for node_id in nodes}
    window = scope.window
    if window is not None:
        start, end = _window_bounds(run, window)
        low, high = admitted(start, end)
        inside = window_order(scores, nodes, low, high) if start or end else 0
        report["window"] = {
            "expression": window.expression,
            "start": format_time(start) if start else None,
            "end": format_time(end) if end else None,
            "admitted": [format_time(low) if low else None, format_time(high) if high else None],
            "event": window.event,
            "candidates_inside": inside,
        }
        if inside:
            run.mechanisms.append("time_window")
    ranked = sorted(scores, key=lambda i: (-scores[i], i))[: CLAIM_POOL_FACTOR * limit]
    moved, marks = ([], {}) if scope.past else newest_claims_first(ranked, scores, nodes, query)
    report["reordered"] = len(moved)
    if moved:
        run.mechanisms.append("newest_claim")
    for node_id, score in scores.items():
        run.entries[node_id].score = score
    report["flags"] = dict(sorted(marks.items()))
    return report


def recall_faded(
    graph: GraphEngine, scope: TimeScope, tokens: Sequence[str], agent_id: str | None
) -> list[str]:
    """Cue-dependent recall (`time_scope`): a question naming a bounded time brings back
    the faded statements made then (`admitted` band) that share a word with it — at most
    `RECALL_POOL`, oldest first — re-anchored now, with an audit entry ``recall``.  Best
    effort: a file that takes no write recalls nothing.  Returns the recalled ids."""
    window = scope.window
    if window is None or scope.as_of is not None:
        return []
    low, high = admitted(window.start, window.end)
    if low is None or high is None:  # an open window (since, before, after) names no time
        return []
    ids = graph.store.faded_between(format_time(low), format_time(high), agent_id, RECALL_POOL)
    if not ids or not tokens:
        return []
    wanted = set(tokens)
    rows = graph.store.get_nodes(ids)
    chosen = [i for i in ids if i in rows and wanted & set(bm25_tokens(rows[i].content))]
    if not chosen:
        return []
    vectors = graph.embed_texts([rows[i].content for i in chosen])
    now = graph.now()

    def restore() -> None:
        graph.store.recall_faded(chosen, now)
        for node_id, vector in zip(chosen, vectors, strict=True):
            graph.store.set_embedding(node_id, pack_f32(vector), graph.embedding_model)
        graph.store.audit(now, "recall", None, {"node_ids": chosen, "cue": window.expression})

    return chosen if graph.store.try_write(restore) else []


# Faded statements one question may recall: a time cue brings back a handful of
# memories; more than a page of them is not a recall but a restore (`restore`).
RECALL_POOL: Final = 50


def _window_bounds(run: _Run, window: TimeWindow) -> tuple[datetime | None, datetime | None]:
    """A date window's bounds, or an event window resolved through the event's own node
    (the best keyword match of the event phrase: "after the charity race" → after
    the moment that race was told of)."""
    if window.event is None:
        return window.start, window.end
    tokens = bm25_tokens(window.event)
    hits, _ = run.text_index().top_k(tokens, 1) if tokens else ([], {})
    event = run.reader.node(hits[0][0]) if hits else None
    if event is None:
        return None, None
    moment = parse_time(event.valid_from or event.created_at)
    return (moment, None) if window.direction == "after" else (None, moment)


def _documents(run: _Run, limit: int) -> bool:
    """Do the best `limit` stage-1 candidates mostly come from files? (auto_effort.py)"""
    top = sorted(run.entries.values(), key=lambda e: (-e.score, e.node_id))[:limit]
    return is_document_query((e.node_id for e in top), run.reader.node)


def _select(run: _Run, limit: int, min_score: float) -> list[Entry]:
    """Returnable entries with score >= min_score, best first, cut at limit.

    Scores are compared as reported (rounded to `SCORE_DIGITS`), ties by id:
    the order and the threshold agree with the numbers the caller sees, and
    float noise from summation order (PageRank) cannot break a tie.
    """
    chosen = []
    paths: dict[str, str | None] = {}
    ranked = sorted(run.entries.values(), key=lambda e: (-round(e.score, SCORE_DIGITS), e.node_id))
    for entry in ranked:
        node = run.reader.node(entry.node_id)
        if (
            node is not None
            and run.returnable(node)
            and round(entry.score, SCORE_DIGITS) >= min_score
        ):
            chosen.append(entry)
            paths[entry.node_id] = provenance(node)["path"]
            if len(chosen) == limit * SPREAD_POOL_FACTOR:
                break
    if run.plan.effort > 0:  # the graph stages ran: text orders the chunks of a file
        chosen = [
            replace(entry, score=chosen[place].score)
            for place, entry in text_first_within_files(
                chosen, lambda e: paths[e.node_id], lambda e: e.own, lambda e: e.node_id
            )
        ]
    return spread_by_file(chosen, lambda e: paths[e.node_id], run.settings.max_per_file, limit)


# -- stage 6: topology window, causal context, contradictions -------------------


def _window(run: _Run, result_ids: list[str]) -> list[str]:
    """Nodes plus each one's strongest visible neighbours (seed 004's topology window),
    sorted; `loop_region.answer_topology` asks it for the results and their anchors."""
    run.reader.load_links(result_ids)
    universe = set(result_ids)
    per_result = run.settings.topology_neighbors_per_result
    for node_id in result_ids:
        universe.update(
            link.neighbor for link in _top_neighbors(run.reader.links(node_id), per_result)
        )
    return sorted(universe)


def causal_context(
    result_ids: Sequence[str], edges: Iterable[Edge], parent_ids: Mapping[str, Sequence[str]]
) -> list[str]:
    """Results that are causal ancestors of another result.

    Input: result ids (in rank order), the edges of the topology window, and
    each result's ``causal_parent_ids``.  A node is a causal parent of another
    through an edge of a kind in `CAUSAL_RELATIONSHIPS` (source causes target)
    or by being listed in its ``causal_parent_ids``; ancestors follow such
    links transitively through any window node.  Output: those results, in
    rank order.  Complexity: O(R × (V + E)) over the window.
    """
    parents: dict[str, set[str]] = {}
    for edge in edges:
        if edge.relationship in CAUSAL_RELATIONSHIPS and edge.source_id != edge.target_id:
            parents.setdefault(edge.target_id, set()).add(edge.source_id)
    for child, listed in parent_ids.items():
        parents.setdefault(child, set()).update(p for p in listed if p != child)
    results = set(result_ids)
    ancestors_of_results: set[str] = set()
    for start in result_ids:
        stack, seen = [start], {start}
        while stack:
            for parent in parents.get(stack.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        ancestors_of_results.update(node for node in seen - {start} if node in results)
    return [node_id for node_id in result_ids if node_id in ancestors_of_results]


def contradiction_flags(
    result_ids: Sequence[str], edges: Iterable[Edge], superseded: Iterable[str]
) -> dict[str, list[str]]:
    """Flags per result: "contradicted" (a contradicts edge to another result), "superseded".

    A result is superseded when its row has ``superseded_by`` (given in
    `superseded`) or a window edge says so (``X supersedes r`` or ``r
    superseded_by X``).  Output: ``{result: sorted flags}``.  O(R + E).
    """
    results = set(result_ids)
    flags: dict[str, set[str]] = {node_id: set() for node_id in result_ids}
    for node_id in superseded:
        if node_id in flags:
            flags[node_id].add("superseded")
    for edge in edges:
        if edge.relationship == "contradicts" and {edge.source_id, edge.target_id} <= results:
            flags[edge.source_id].add("contradicted")
            flags[edge.target_id].add("contradicted")
        elif edge.relationship == "supersedes" and edge.target_id in results:
            flags[edge.target_id].add("superseded")
        elif edge.relationship == "superseded_by" and edge.source_id in results:
            flags[edge.source_id].add("superseded")
    return {node_id: sorted(found) for node_id, found in flags.items()}


# -- stage 7: side effects ----------------------------------------------------------


def record_access(graph: GraphEngine, result_ids: Sequence[str]) -> None:
    """In one transaction: access_count += 1 and last_accessed_at = now on every result.

    Co-activation is counted by rewarded outcomes (learning.outcomes), not by
    retrieval: edges strengthen between nodes that succeed together, not
    between nodes that merely came back together.

    Counts are re-read inside the (write-locked) transaction, so concurrent
    processes never lose an increment.  The whole-graph snapshot stays valid:
    these columns do not change the graph it holds.  Best effort: when the
    file takes no write now (read-only, disk full, another process's long
    transaction) the counters are skipped and the answer still goes out.
    """
    if not result_ids or graph.store.write_refusal() is not None:
        return  # a read-only or damaged file serves reads without bookkeeping
    store = graph.store
    now = graph.now()

    def bump() -> None:
        store.bump_access(result_ids, now)

    # Graph-neutral: the snapshot and the engine's read cache (patched) stay valid.
    graph.neutral_write(bump, lambda cache: patch_accessed(cache, result_ids, now))


def _result_rows(
    graph: GraphEngine,
    chosen: Sequence[Entry],
    nodes: Mapping[str, Node],
    flags: Mapping[str, list[str]],
    vector: list[float] | None,
    known: Mapping[str, float],
) -> list[dict[str, Any]]:
    """The JSON result objects; similarity = cosine(query, node), 0.0 without a query vector.

    `known`: exact cosines stage 1 computed (the same `exact_score` value), reused;
    the index is asked only for the others."""
    query_vector: list[float] | None = None
    rows = []
    for entry in chosen:
        node = nodes[entry.node_id]
        similarity = 0.0
        if vector is not None:
            found = known.get(entry.node_id)
            if found is None:
                index = graph.vector_index()
                if query_vector is None:
                    query_vector = normalized_f32(vector, index.dimensions)
                stored = index.get(entry.node_id)
                found = exact_score(query_vector, stored) if stored is not None else 0.0
            similarity = found
        rows.append(
            {
                "node_id": entry.node_id,
                "content": node.content,
                "node_type": node.node_type,
                "confidence": node.confidence,
                "similarity": round(similarity, SCORE_DIGITS),
                "score": round(entry.score, SCORE_DIGITS),
                **provenance(node),
                "channel": entry.source,
                "hops": entry.hops,
                "via": entry.via,
                "flags": list(flags.get(entry.node_id, [])),
            }
        )
    return rows


# -- the entry point ------------------------------------------------------------------


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
    embed_ms = _ms(started)

    with graph.lock:
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

        run = _Run(graph, reader, settings, plan, returnable, answers_now=scope.as_of is None)
        run.timings["embed"] = embed_ms
        run.stats.update(limit=limit, agent_id=agent_id)
        pool = max(settings.min_candidates, settings.candidate_multiplier * limit)
        started = time.perf_counter()
        allowed = _allowed_ids(run, node_type, agent_id)
        if tokens:
            _candidates(run, vector, tokens, pool, allowed)
            run.mechanisms.extend(["embedding", "bm25", FUSION_MECHANISMS[settings.fusion]])
            _participant_stage(run, text, vector, tokens, pool, allowed)
        else:
            run.stats["candidates"] = {"pool_size": pool, "embedding": 0, "bm25": 0, "fused": 0}
        if plan.walk is not None and settings.prf_weight > 0.0 and run.entries:
            _feedback(run, tokens, pool, allowed)
        run.timings["candidates"] = _ms(started)
        if effort is None and not deep and plan.effort > 0 and _documents(run, limit):
            plan = run.plan = effort_plan(0, False, 0)  # auto_effort.py
            run.mechanisms.append("auto_effort_documents")
        started = time.perf_counter()
        run.stats["supported"] = 0
        if plan.support and run.entries:
            _support(run)
            run.mechanisms.append("support")
        run.timings["support"] = _ms(started)
        _choose_seeds(run)
        started = time.perf_counter()
        run.stats["expanded"] = 0
        if plan.hops > 0 and run.seeds:
            _expand(run, plan.hops, neighbors_per_node)
            run.mechanisms.append("expansion")
        run.timings["expansion"] = _ms(started)
        if plan.walk is not None:
            _graph_walk(run)
            _entity_stage(run, text)
            _speaker_stage(run, text)
            _content_stage(run, text)
        started = time.perf_counter()
        _utility_rerank(run, vector, tokens)
        time_report = _time_stage(run, scope, limit, text)
        chosen = _select(run, limit, min_score)
        run.timings["rerank"] = _ms(started)
        result_ids = [entry.node_id for entry in chosen]

        started = time.perf_counter()
        ranked = [(entry.node_id, entry.score) for entry in chosen]
        topology, universe, window_edges, region = answer_topology(
            run.reader,
            ranked,
            lambda ids: _window(run, list(ids)),
            relation_index(graph).relations_of,
        )
        run.mechanisms.append("topology")
        run.timings["topology"] = _ms(started)
        rows = {node_id: run.reader.node(node_id) for node_id in result_ids}
        nodes = {node_id: node for node_id, node in rows.items() if node is not None}
        causal = causal_context(
            result_ids,
            window_edges,
            {node_id: node.causal_parent_ids for node_id, node in nodes.items()},
        )
        flags: dict[str, list[str]] = {node_id: [] for node_id in result_ids}
        if plan.contradiction_check:
            superseded = [n for n, node in nodes.items() if node.superseded_by is not None]
            flags = contradiction_flags(result_ids, window_edges, superseded)
            run.mechanisms.append("contradiction_check")
        for node_id, mark in time_report["flags"].items():
            if node_id in flags:
                flags[node_id] = sorted({*flags[node_id], mark})
        started = time.perf_counter()
        directives, governed, directive_stats = governing(
            graph, run.reader, text, scope.admits, result_ids, vector
        )
        for node_id in governed:
            flags[node_id] = sorted({*flags[node_id], DIRECTIVE_CHANNEL})
        run.timings["directives"] = _ms(started)
        results = _result_rows(graph, chosen, nodes, flags, vector, run.cosines)
        started = time.perf_counter()
        record_access(graph, result_ids)
        retrieval_trace(graph).record(text, result_ids)
        run.timings["side_effects"] = _ms(started)

    run.timings["total"] = _ms(total_started)
    stats = {
        "effort": plan.effort,
        "effort_requested": effort if not deep else DEEP_EFFORT,
        "mechanisms": run.mechanisms,
        "query_chars": len(query),
        "query_truncated": truncated,
        "query_terms": len(tokens),
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
        "time": {**time_report, "recalled": recalled},
        "directives": directive_stats,
        "returned": len(results),
        "topology_window": len(universe),
        "topology_region": region.report(),
        "timings_ms": run.timings,
    }
    return {
        "query": text,
        "results": results,
        "directives": directives,
        "causal_context": causal,
        "stats": stats,
        "topology": topology,
    }


def with_settings(**overrides: Any) -> RetrievalSettings:
    """`RetrievalSettings` with some fields changed (unknown names raise TypeError)."""
    return replace(DEFAULT_SETTINGS, **overrides)


__all__ = [
    "DEEP_EFFORT",
    "DEFAULT_SETTINGS",
    "EffortPlan",
    "RetrievalSettings",
    "causal_context",
    "combine_evidence",
    "contradiction_flags",
    "effort_plan",
    "hybrid_search",
    "record_access",
    "retrieve_context",
    "saturate",
    "spread",
    "support_scores",
    "transfer",
    "with_settings",
]
