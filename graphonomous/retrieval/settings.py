"""Every tunable of `retrieve_context` and what each effort level runs.

Rules of this file: one home for the pipeline's constants — each with the reason
for its value and where it was chosen (the LoCoMo / docs dev halves only, SPEC
"Retrieval quality") — and for `RetrievalSettings`, whose field defaults are these
constants.  A stage module reads its knobs from ``run.settings``, never from here
directly, so `with_settings` reaches every stage.  `effort_plan` maps the effort
spectrum 0..10 (seed 002) to the stages that run.  Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from ..algorithms.push import PUSH_EPSILON
from ..model import ValidationError, check_int
from .fields import FIELD_GAIN
from .fusion import DEFAULT_FUSION, RRF_K

# -- effort spectrum (seed 002) ------------------------------------------------
EFFORT_MAX: Final = 10
DEEP_EFFORT: Final = 6  # `deep=True` / `--deep`
EXPANSION_MIN_EFFORT: Final = 1  # 1–4: + graph support, ego neighbourhood
WALK_MIN_EFFORT: Final = 5  # 5–7: + local PageRank and Louvain communities
FULL_GRAPH_MIN_EFFORT: Final = 8  # 8–10: + whole-graph PageRank, contradiction check


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


# At most this many results of one ingested file before other files get a
# place (measured on two documentation trees, SPEC §10 "Effort on
# documentation trees").
MAX_PER_FILE: Final = 2


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


def with_settings(**overrides: Any) -> RetrievalSettings:
    """`RetrievalSettings` with some fields changed (unknown names raise TypeError)."""
    return replace(DEFAULT_SETTINGS, **overrides)
