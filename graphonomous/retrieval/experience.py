"""Experience: what earlier outcomes say about the candidates of a new query.

An agent reports an outcome (``learn_from_outcome``) for the nodes it used to
act; it rarely says *which* of them helped.  Confidence and Q-values are
query-independent, so learning only through them lifts a node that helped
once for every later query and buries the turns that answer other questions
(measured: LoCoMo unseen-question R@5 fell by 0.13–0.21).  Experience is the
query-*dependent* part of learning, in the spirit of click-through relevance
feedback (Joachims, "Optimizing search engines using clickthrough data",
KDD 2002) and of Rocchio's feedback on the query side:

* `RetrievalTrace` remembers, in this process, the last `TRACE_SIZE`
  retrievals (query text and result ids).  When an outcome arrives, the
  retrieval that produced its causal nodes is found (`RetrievalTrace.find`),
  and the outcome node records that query (``metadata.retrieval.query``).
  A caller may also name it (``evidence["query"]``).
* At retrieval time, `ExperienceIndex.evidence` looks at the outcomes whose
  causal nodes are among the current candidates and measures how similar
  their queries are to the current one (cosine of the two query
  embeddings).  A similar query that succeeded vouches for its nodes.  A
  failure objects to a node only for queries that match that node *on the
  same words* the failed query matched it on (`Lexical`, the idf-weighted
  Jaccard of the two matched term sets): a node that was the wrong answer
  to "... support group ..." is suspect for the next question that finds it
  through "support group", not for one that finds it through another part
  of its text.  Unrelated earlier queries (similarity at or below the
  embedder's `unrelated_similarity`, or matched terms overlapping at most
  `OBJECTION_OVERLAP_FLOOR`) say nothing, so experience never reorders
  knowledge for questions unlike any seen.
* A stored Q-value stays seed 004's, but its use is conditioned the same way:
  `ExperienceIndex.utility_match` says how far the queries of the
  attributions that moved a node's Q are like the current one, and
  `conditioned_q` blends only that share of what was learned (the retriever's
  stage 5), so a node that answered one question is not lifted for all.
* A stored confidence stays seed 003's too, and its use in ranking (stage 1:
  similarity × confidence) follows the same rule: an attribution records the
  confidence it moved on each cause (``metadata.confidence_updates``), and
  `conditioned_confidence` counts that part in proportion to the same
  `utility_match`; the rest of a node's confidence (what it was stated with,
  feedback, corrections, outcomes naming no query) counts in full.

Rules: the index reads outcome nodes only (through the store), is refreshed
incrementally from their ids on every call (so outcomes written by other
processes count on the next query, and forgotten or erased ones stop
counting), and keeps query vectors in memory only for outcomes that touched
a candidate.  Nothing here writes.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..embed import exact_score
from ..embed.index import normalized_f32
from ..engine import Engine
from ..index.bm25 import Bm25Index, bm25_tokens
from ..model import AID_CREATION_SOURCES, AID_NODE_TYPES, DEFAULT_Q_VALUE, Node
from ..store import Store
from .fusion import combine_evidence

# Retrievals remembered per process: an agent reports an outcome shortly after
# it retrieved; 256 covers a long burst of parallel questions.
TRACE_SIZE: Final = 256
# A retrieval explains an outcome when it returned at least half of the causal nodes.
TRACE_MIN_OVERLAP: Final = 0.5
OUTCOME_TYPE: Final = AID_NODE_TYPES[0]
QUERY_KEY: Final = "query"
RETRIEVAL_KEY: Final = "retrieval"
# The outcome node's flag saying it moved its causes' confidence and Q (an attribution).
ATTRIBUTED_KEY: Final = "attributed"
# The outcome node's record of the confidence it moved: [{"node_id", "confidence_before",
# "confidence_after"}] per cause (the rows of learn_from_outcome's ``updates``).
CONFIDENCE_UPDATES_KEY: Final = "confidence_updates"
# Cosine at or below which two queries are unrelated, per embedder family
# (hashing: measured, unrelated texts <= 0.35, paraphrases >= 0.75; dense
# sentence embedders put unrelated questions near 0.2).
UNRELATED_SIMILARITY: Final[Mapping[str, float]] = {"hashing": 0.35}
DEFAULT_UNRELATED_SIMILARITY: Final = 0.2
# Reward at which an outcome is neutral (Q_REWARDS: success 1, failure 0).
NEUTRAL_REWARD: Final = 0.5
# A failure objects to a node for a new query when the two queries' matched terms
# on that node overlap by more than this (idf-weighted Jaccard): at 0.2 two
# one-term matches must be the same term, a two-term match must share its rarer
# half.  Swept on a replay of the LoCoMo dev rankings (the method of
# benchmarks/learning_bound.py) over {0, 0.1, 0.2, 0.3, 0.35, 0.5}: every value
# above 0 beat the query-cosine objection at efforts 0 and 3 (SPEC §10.7); 0.2
# sits inside that plateau.
OBJECTION_OVERLAP_FLOOR: Final = 0.2


# Consolidation summaries (learning.abstraction) name their members under this
# key; like outcome nodes they are retrieval *aids*: they point at knowledge and
# never compete with it for a result slot or a place in the search indexes.
SUMMARY_SOURCE: Final = AID_CREATION_SOURCES[0]
SUMMARY_MEMBERS_KEY: Final = "abstraction_of"


def is_retrieval_aid(node: Node) -> bool:
    """Outcome nodes and consolidation-made nodes: aids, never ranked results."""
    return node.node_type in AID_NODE_TYPES or node.creation_source in AID_CREATION_SOURCES


def unrelated_similarity(embedder_name: str) -> float:
    """The similarity floor of an embedder ("hashing…" names use the hashing value)."""
    for prefix, value in UNRELATED_SIMILARITY.items():
        if embedder_name.startswith(prefix):
            return value
    return DEFAULT_UNRELATED_SIMILARITY


@dataclass(frozen=True)
class Trace:
    """One remembered retrieval."""

    query: str
    result_ids: tuple[str, ...]


class RetrievalTrace:
    """The last `TRACE_SIZE` retrievals of this process (thread-safety: the facade lock)."""

    def __init__(self, size: int = TRACE_SIZE) -> None:
        self._traces: deque[Trace] = deque(maxlen=size)

    def record(self, query: str, result_ids: Sequence[str]) -> None:
        """Remember a retrieval (empty results are not worth remembering).  O(1)."""
        if result_ids:
            self._traces.append(Trace(query, tuple(result_ids)))

    def find(self, causal_ids: Sequence[str]) -> Trace | None:
        """The most recent retrieval that returned the most of `causal_ids` (at least half).

        Complexity: O(TRACE_SIZE × results).
        """
        wanted = set(causal_ids)
        if not wanted:
            return None
        best: Trace | None = None
        best_overlap = 0
        for trace in reversed(self._traces):
            overlap = len(wanted.intersection(trace.result_ids))
            if overlap > best_overlap:
                best, best_overlap = trace, overlap
                if overlap == len(wanted):
                    break
        if best is None or best_overlap < TRACE_MIN_OVERLAP * len(wanted):
            return None
        return best

    def forget(self, node_ids: Iterable[str]) -> None:
        """Drop every trace that returned one of `node_ids` (erasure leaves no query behind)."""
        gone = set(node_ids)
        kept = [trace for trace in self._traces if gone.isdisjoint(trace.result_ids)]
        self._traces.clear()
        self._traces.extend(kept)


@dataclass(frozen=True)
class Outcome:
    """What experience needs of one outcome node.

    `moved_q`: the outcome was an attribution, so it moved its causes' Q-values
    (``metadata.attributed`` of `learning.outcomes`; an outcome node without the
    key is taken to have moved them).  `confidence_moved`: (node id, confidence
    after − before) per cause whose confidence it moved, as recorded
    (``metadata.confidence_updates``); empty when nothing was recorded.
    """

    query: str
    reward: float
    causal_ids: tuple[str, ...]
    moved_q: bool = True
    confidence_moved: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Lexical:
    """The keyword view a failure's objection needs (the engine's BM25 index).

    `query_terms`: the current query's index terms; `terms_of`: a text's
    index terms; `shared`: the given terms a node holds; `idf`: a term's weight.
    """

    query_terms: frozenset[str]
    terms_of: Callable[[str], frozenset[str]]
    shared: Callable[[str, frozenset[str]], frozenset[str]]
    idf: Callable[[str], float]
    # The query's terms each node holds, computed once per node per retrieval.
    _mine: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, text_index: Bm25Index, tokens: Sequence[str], candidates: Sequence[str]) -> Lexical:
        """The view of a BM25 index for a query's `bm25_tokens` among its `candidates`.

        A term's weight is its idf *among the candidates*, ln((C + 1)/(df_C + 0.5)):
        a word most candidates hold (the speaker a question names, the topic every
        candidate shares) says nothing about which of them a failure was wrong
        about, however rare it is in the whole graph — and the weight does not
        drift as the graph grows or pools other agents' knowledge.  Positive for
        every term (df_C ≤ C), unlike Okapi's idf.  The candidates' terms are
        counted once per view: O(Σ their distinct terms).
        """
        pool = list(candidates)
        size = len(pool)
        held = text_index.term_counts(pool)

        def terms_of(text: str) -> frozenset[str]:
            return frozenset(text_index.terms(bm25_tokens(text)))

        def weight(term: str) -> float:
            return math.log((size + 1) / (held.get(term, 0) + 0.5))

        return cls(frozenset(text_index.terms(tokens)), terms_of, text_index.shared_terms, weight)

    def overlap(self, node_id: str, other_terms: frozenset[str]) -> float:
        """idf-weighted Jaccard of the terms by which the query and `other_terms` match
        the node; 0.0 when the query matches none of its terms.  O(terms).

        >>> view = Lexical(frozenset({"support", "group", "when"}), frozenset,
        ...                lambda node, terms: terms & {"support", "group", "caroline"},
        ...                lambda term: 1.0)
        >>> view.overlap("n", frozenset({"support", "group"}))
        1.0
        >>> view.overlap("n", frozenset({"caroline", "group"}))
        0.3333333333333333
        """
        mine = self._mine.get(node_id)
        if mine is None:
            mine = self._mine[node_id] = self.shared(node_id, self.query_terms)
        if not mine:
            return 0.0
        theirs = self.shared(node_id, other_terms)
        union = sum(self.idf(term) for term in sorted(mine | theirs))
        if union <= 0.0:
            return 0.0
        return sum(self.idf(term) for term in sorted(mine & theirs)) / union


@dataclass(frozen=True)
class Evidence:
    """Experience about one node: the strongest vouching and the strongest objection, in [0, 1]."""

    support: float
    objection: float


def outcome_from_node(metadata: Mapping[str, object], causal_ids: Sequence[str]) -> Outcome | None:
    """The experience an outcome node carries, or None when it names no query."""
    retrieval = metadata.get(RETRIEVAL_KEY)
    query = retrieval.get(QUERY_KEY) if isinstance(retrieval, Mapping) else None
    reward = metadata.get("reward")
    if not isinstance(query, str) or not query or not isinstance(reward, (int, float)):
        return None
    attributed = metadata.get(ATTRIBUTED_KEY)
    moved_q = attributed if isinstance(attributed, bool) else True
    moved = _confidence_moved(metadata.get(CONFIDENCE_UPDATES_KEY)) if moved_q else ()
    return Outcome(query, float(reward), tuple(causal_ids), moved_q, moved)


def _confidence_moved(rows: object) -> tuple[tuple[str, float], ...]:
    """(node id, after − before) of each well-formed ``confidence_updates`` row.  O(rows)."""
    if not isinstance(rows, list):
        return ()
    moved = []
    for row in rows:
        if not isinstance(row, Mapping):
            continue
        node_id = row.get("node_id")
        before, after = row.get("confidence_before"), row.get("confidence_after")
        if isinstance(node_id, str) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in (before, after)
        ):
            assert isinstance(before, (int, float)) and isinstance(after, (int, float))
            moved.append((node_id, float(after) - float(before)))
    return tuple(moved)


class ExperienceIndex:
    """Outcomes with a known query, by causal node; query vectors cached on first use."""

    def __init__(self) -> None:
        self._outcomes: dict[str, Outcome] = {}
        self._by_node: dict[str, set[str]] = {}
        self._vectors: dict[str, list[float]] = {}
        self._terms: dict[str, frozenset[str]] = {}
        # Outcome nodes without a query: remembered so they are not re-read each call.
        self._skipped: set[str] = set()
        self._generation: int | None = None  # engine generation of the last refresh

    def refresh(self, store: Store, generation: int | None = None) -> None:
        """Bring the index in step with the live outcome nodes (new ones read, gone ones dropped).

        `generation`: the engine's change-log position (every node insert, delete and
        forget moves it); when it has not moved since the last refresh nothing is read.
        Complexity: O(1) when unchanged, else one id query over outcome nodes + one row
        fetch per new outcome.
        """
        if generation is not None and generation == self._generation:
            return
        self._generation = generation
        live = set(store.node_ids(node_type=OUTCOME_TYPE))
        for gone in set(self._outcomes) - live:
            self._drop(gone)
        self._skipped &= live
        fresh = sorted(live - set(self._outcomes) - self._skipped)
        if not fresh:
            return
        for node_id, node in store.get_nodes(fresh).items():
            outcome = outcome_from_node(node.metadata, node.causal_parent_ids)
            if outcome is None:
                self._skipped.add(node_id)
                continue
            self.add(node_id, outcome)

    def add(self, outcome_id: str, outcome: Outcome) -> None:
        """Index one outcome under its causal nodes (refresh's step; replays use it too).  O(k)."""
        self._outcomes[outcome_id] = outcome
        for causal in outcome.causal_ids:
            self._by_node.setdefault(causal, set()).add(outcome_id)

    def _drop(self, outcome_id: str) -> None:
        outcome = self._outcomes.pop(outcome_id)
        self._vectors.pop(outcome_id, None)
        self._terms.pop(outcome_id, None)
        for causal in outcome.causal_ids:
            owners = self._by_node.get(causal)
            if owners is not None:
                owners.discard(outcome_id)
                if not owners:
                    del self._by_node[causal]

    def __len__(self) -> int:
        return len(self._outcomes)

    def evidence(
        self,
        query_vector: Sequence[float],
        dimensions: int,
        candidates: Iterable[str],
        embed: Callable[[Sequence[str]], list[list[float]]],
        floor: float,
        lexical: Lexical | None = None,
    ) -> dict[str, Evidence]:
        """Experience about each candidate from the outcomes that used it.

        An outcome's direction is d = 2·(reward − 0.5) (success +1, failure −1,
        partial success +0.3, timeout −0.5).  Support (d > 0): with query
        similarity σ (cosine of the normalised query embeddings) above `floor`,
        relevance w = (σ − floor) / (1 − floor) for every node the outcome used.
        Objection (d < 0), with `lexical`: per node, with J the node-conditioned
        overlap (`Lexical.overlap`) above `OBJECTION_OVERLAP_FLOOR` f,
        w = (J − f) / (1 − f); without `lexical`, the cosine rule of support.
        A candidate's support is the largest w·d, its objection the largest
        w·|d| (maxima, not sums: repeating one question does not compound).
        Output: ``{node_id: Evidence}`` for candidates with any evidence.
        Complexity: O(outcomes touching the candidates × (d + terms)), plus one
        embedding batch for the queries not seen before.
        """
        touched: dict[str, set[str]] = {}
        for node_id in candidates:
            for outcome_id in self._by_node.get(node_id, ()):
                touched.setdefault(outcome_id, set()).add(node_id)
        if not touched:
            return {}
        self._embed_queries(
            (o for o in touched if lexical is None or self._outcomes[o].reward > NEUTRAL_REWARD),
            embed,
            dimensions,
        )
        query = normalized_f32(list(query_vector), dimensions)
        support: dict[str, float] = {}
        objection: dict[str, float] = {}
        for outcome_id in sorted(touched):
            direction = 2.0 * (self._outcomes[outcome_id].reward - NEUTRAL_REWARD)
            if direction == 0.0:
                continue
            if direction < 0.0 and lexical is not None:
                self._object_lexically(
                    outcome_id, touched[outcome_id], -direction, lexical, objection
                )
                continue
            weight = _relevance(exact_score(query, self._vectors[outcome_id]), floor)
            target = support if direction > 0.0 else objection
            value = weight * abs(direction)
            if value <= 0.0:
                continue
            for node_id in touched[outcome_id]:
                if value > target.get(node_id, 0.0):
                    target[node_id] = value
        return {
            node_id: Evidence(support.get(node_id, 0.0), objection.get(node_id, 0.0))
            for node_id in sorted(set(support) | set(objection))
        }

    def _embed_queries(
        self,
        outcome_ids: Iterable[str],
        embed: Callable[[Sequence[str]], list[list[float]]],
        dimensions: int,
    ) -> None:
        """Cache the normalised query vectors of the outcomes not seen before (one batch)."""
        missing = sorted(o for o in set(outcome_ids) if o not in self._vectors)
        if missing:
            vectors = embed([self._outcomes[o].query for o in missing])
            for outcome_id, vector in zip(missing, vectors, strict=True):
                self._vectors[outcome_id] = normalized_f32(vector, dimensions)

    def utility_match(
        self,
        query_vector: Sequence[float],
        dimensions: int,
        candidates: Iterable[str],
        embed: Callable[[Sequence[str]], list[list[float]]],
        floor: float,
    ) -> dict[str, float]:
        """How far each candidate's learned Q-value and confidence speak to this
        query, in [0, 1].

        Both are moved by attributions (`Outcome.moved_q`); each answered one
        query.  The match of a node is the largest relevance (σ − floor) /
        (1 − floor) of those queries to this one (σ: cosine of the normalised
        query embeddings), so what was earned on one question lifts the node for
        questions like it, not for every question (`conditioned_q` and
        `conditioned_confidence` take this one match).  Output: ``{node_id:
        match}`` for the candidates with at least one such outcome; a node whose Q
        was moved only by outcomes naming no query is absent (nothing says which
        questions earned it).  Complexity: O(Q-moving outcomes touching the
        candidates × d), plus one embedding batch for queries not seen before.
        """
        earned: dict[str, list[str]] = {}
        for node_id in candidates:
            owners = [o for o in self._by_node.get(node_id, ()) if self._outcomes[o].moved_q]
            if owners:
                earned[node_id] = sorted(owners)
        if not earned:
            return {}
        self._embed_queries((o for owners in earned.values() for o in owners), embed, dimensions)
        query = normalized_f32(list(query_vector), dimensions)
        cosine: dict[str, float] = {}
        match = {}
        for node_id, owners in sorted(earned.items()):
            best = 0.0
            for outcome_id in owners:
                if outcome_id not in cosine:
                    cosine[outcome_id] = exact_score(query, self._vectors[outcome_id])
                best = max(best, _relevance(cosine[outcome_id], floor))
            match[node_id] = best
        return match

    def learned_confidence(self, candidates: Iterable[str]) -> dict[str, float]:
        """Per candidate, the confidence that attributions with a known query moved it
        by: the sum of their recorded steps (after − before), in the units of the
        retention anchor they were written to.  Output: ``{node_id: sum}`` for the
        candidates with at least one recorded step; others are absent.
        Complexity: O(Q-moving outcomes touching the candidates × k).
        """
        learned: dict[str, float] = {}
        for node_id in candidates:
            total, found = 0.0, False
            for outcome_id in sorted(self._by_node.get(node_id, ())):
                outcome = self._outcomes[outcome_id]
                for cause, step in outcome.confidence_moved if outcome.moved_q else ():
                    if cause == node_id:
                        total, found = total + step, True
            if found:
                learned[node_id] = total
        return learned

    def _object_lexically(
        self,
        outcome_id: str,
        node_ids: Iterable[str],
        strength: float,
        lexical: Lexical,
        objection: dict[str, float],
    ) -> None:
        """A failure's objection to each node, weighted by the node-conditioned overlap."""
        terms = self._terms.get(outcome_id)
        if terms is None:
            terms = self._terms[outcome_id] = lexical.terms_of(self._outcomes[outcome_id].query)
        for node_id in sorted(node_ids):
            value = strength * _relevance(lexical.overlap(node_id, terms), OBJECTION_OVERLAP_FLOOR)
            if value > objection.get(node_id, 0.0):
                objection[node_id] = value


def _relevance(similarity: float, floor: float) -> float:
    """(similarity − floor) / (1 − floor) in [0, 1]; 0 at or below the floor.  O(1)."""
    if similarity <= floor:
        return 0.0
    return min(1.0, (similarity - floor) / (1.0 - floor))


def conditioned_q(q_value: float, match: float, prior: float = DEFAULT_Q_VALUE) -> float:
    """The Q-value a retrieval blends in: the prior plus `match` of what was learned.

    q' = prior + match · (q − prior): a full match (the question that earned it, or
    no query known) is seed 004's q; no match is the prior every unlearned node
    has, so the blend neither lifts nor lowers the node for an unrelated question.
    O(1).

    >>> conditioned_q(0.65, 1.0), conditioned_q(0.65, 0.0), conditioned_q(0.8, 0.5)
    (0.65, 0.5, 0.65)
    """
    return prior + match * (q_value - prior)


def conditioned_confidence(
    confidence: float, base_confidence: float | None, learned: float, match: float
) -> float:
    """The confidence a retrieval ranks a node by: `conditioned_q`'s rule on the part
    of its confidence that attributions with a known query moved.

    `learned`: the sum of those steps (`ExperienceIndex.learned_confidence`),
    recorded against the retention anchor; decay since the anchor scales it as it
    scales the rest (share = learned × confidence / base_confidence).  The prior is
    the confidence without that share (clamped to [0, 1]): what the node was stated
    with, plus feedback, corrections and outcomes naming no query, which count in
    full.  c' = prior + match · share — the question that earned it (match 1) sees
    the stored confidence, an unrelated one (match 0) the prior.  The stored value
    never changes.  O(1).

    >>> [round(conditioned_confidence(0.6, 0.6, 0.1, m), 6) for m in (0.0, 0.5, 1.0)]
    [0.5, 0.55, 0.6]
    >>> round(conditioned_confidence(0.3, 0.6, 0.1, 0.5), 6)  # decayed to half since its anchor
    0.275
    """
    scale = confidence / base_confidence if base_confidence else 1.0
    share = learned * scale
    prior = min(1.0, max(0.0, confidence - share))
    return conditioned_q(confidence, match, prior)


def experienced_score(
    score: float, evidence: Evidence, gain: float, penalty: float, best: float
) -> float:
    """A candidate's score after experience: (score ⊕ gain·support·r) × (1 − penalty·objection).

    ⊕ is the noisy-OR (support can lift a score toward 1, never past it); r =
    min(1, score / best) is the candidate's standing among this query's
    candidates (`best`: the highest score among them), so a success vouches
    for a node in proportion to how well the *new* query itself matches it —
    a turn the query barely finds (another conversation's, a weak embedding
    hit) cannot ride an alike earlier question into the first places.  The
    objection is a factor, so a failure lowers but never erases.  O(1).

    >>> experienced_score(0.5, Evidence(support=1.0, objection=0.0), 0.25, 0.5, 0.5)
    0.625
    >>> experienced_score(0.25, Evidence(support=1.0, objection=0.0), 0.25, 0.5, 0.5)
    0.34375
    >>> experienced_score(0.5, Evidence(support=0.0, objection=1.0), 0.25, 0.5, 0.5)
    0.25
    """
    standing = min(1.0, score / best) if best > 0.0 else 1.0
    lifted = combine_evidence(score, gain * evidence.support * standing)
    return lifted * (1.0 - penalty * evidence.objection)


__all__ = [
    "ATTRIBUTED_KEY",
    "CONFIDENCE_UPDATES_KEY",
    "OBJECTION_OVERLAP_FLOOR",
    "Evidence",
    "ExperienceIndex",
    "Lexical",
    "Outcome",
    "RetrievalTrace",
    "Trace",
    "conditioned_confidence",
    "conditioned_q",
    "experienced_score",
    "is_retrieval_aid",
    "outcome_from_node",
    "unrelated_similarity",
]


def retrieval_trace(engine: Engine[Any, Any]) -> RetrievalTrace:
    """The graph's recent retrievals (one per engine, made on first use)."""
    return engine.part(RetrievalTrace)


def experience_index(engine: Engine[Any, Any]) -> ExperienceIndex:
    """The graph's outcomes with a known query (one per engine, made on first use)."""
    return engine.part(ExperienceIndex)
