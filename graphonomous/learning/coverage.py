"""Task-level coverage: is the graph's knowledge adequate for a task? (seed 003)

`coverage_query(task_description, critical_topics=None, limit=10)` answers
with the relevant knowledge, how much of the task it covers, how sure it is,
what is missing, and a recommendation for the caller's control flow:

- ``act`` — proceed;
- ``learn_first`` — gather more information first (seed 003's word; the
  old name ``learn`` is accepted wherever a recommendation is an input,
  `RECOMMENDATION_ALIASES`);
- ``escalate`` — the knowledge conflicts or is entangled: route to
  deliberation or a human.

Steps (all weights and thresholds are the module constants below):

1. **Relevant nodes**: the `limit` best results of ``retrieve_context`` (or,
   with ``use_retrieval=False``, of the side-effect-free similarity search),
   plus any `extra_node_ids`, keeping live, non-superseded, non-goal nodes
   whose cosine to the task is >= `RELEVANCE_MIN_SIMILARITY` (extra ids are
   kept regardless).
2. **Topics**: `critical_topics` when given, else the task's first
   `MAX_DERIVED_TOPICS` distinct topics in text order: identifiers (a token
   with a digit, e.g. "E-47", "PS-2", "V2", "2024", "3.5") and content words
   that are not `TASK_WORDS` (the verbs and qualifiers of an intent —
   "eliminate", "recurring" — which no knowledge node is about).  A relevant
   node *covers* an identifier topic when the identifier occurs in it as a
   whole token (case-folded; cosine is not used: "E-47" and "E-48" embed
   alike); any other topic when the node contains all of the topic's content
   words (plural-folded) or its cosine to the topic is >= `TOPIC_SIMILARITY`.
   A topic is covered when a covering node has confidence >=
   `TOPIC_MIN_CONFIDENCE`.
3. **Scores**: coverage_score = covered topics / topics; confidence_mean =
   mean confidence of the relevant nodes; uncertainty = mean Wilson-interval
   width of their outcome evidence (1 for a node without evidence: nothing
   has tested it); risk = the larger of (share of relevant nodes in a
   ``contradicts`` pair with another relevant node, `KAPPA_RISK` × κ of the
   relevant region), capped at 1 — knowledge that conflicts or is entangled;
   a contradiction *on an asked fact* (both nodes of a ``contradicts`` pair
   cover one topic; listed in ``contradicted_topics``) raises risk to at
   least `ESCALATE_MIN_RISK`;
   decision_confidence = (`W_COVERAGE`·coverage + `W_CONFIDENCE`·confidence
   + `W_CERTAINTY`·(1 − uncertainty)) × (1 − risk).
4. **Recommendation**: escalate if risk >= `ESCALATE_MIN_RISK`; otherwise
   act if decision_confidence >= `ACT_MIN_DECISION_CONFIDENCE` and every
   critical topic is covered; otherwise learn_first (always when nothing
   relevant is known: missing knowledge is learned, conflicting knowledge
   is escalated).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ..embed import exact_score
from ..embed.index import normalized_f32
from ..model import Node, ValidationError, check_id_list, check_int, check_text
from ..retrieval.keywords import content_words
from ..retrieval.lookups import similarity_search
from ..retrieval.retriever import retrieve_context
from ..topology import analyze, build_adjacency
from .uncertainty import evidence_counts, wilson_interval

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

RECOMMENDATIONS: Final = ("act", "learn_first", "escalate")
RECOMMENDATION_ALIASES: Final = {"learn": "learn_first"}
"""Accepted on input for a recommendation (this package's name before seed 003's)."""
# A token with at least one digit, made of letters, digits, '-', '.', '_', starting and
# ending with a letter or digit: "E-47", "PS-2", "v2.3", "2024" (not "-" or "3.").
_IDENTIFIER: Final = re.compile(r"(?<![\w.-])(?=[\w.-]*\d)[^\W_](?:[\w.-]*[^\W_])?(?![\w-])")
_TOKEN: Final = re.compile(r"\S+")
# Words that state what a task wants done, not what it is about: never derived topics.
_TASK_WORD_TEXT: Final = """
    achieve avoid build check continue create decrease determine eliminate ensure establish
    explain figure find fix frequent get handle happen help improve increase investigate keep
    know learn maintain make manage maximise maximize minimise minimize need occurring ongoing
    persistent prevent reduce recurring remove repeated resolve should solve stop sure
    understand want work
"""
TASK_WORDS: Final = frozenset(_TASK_WORD_TEXT.split())
GOAL_NODE_TYPE: Final = "goal"  # a member of model.NODE_TYPES

# Cosine floors, measured with the hashing embedder: a task and a node that
# talks about it score 0.35-0.6, unrelated text 0.05-0.15; a one-word topic
# against a sentence containing it scores about 0.45.
RELEVANCE_MIN_SIMILARITY: Final = 0.2
TOPIC_SIMILARITY: Final = 0.5
TOPIC_MIN_CONFIDENCE: Final = 0.3
LOW_CONFIDENCE: Final = 0.5  # covered, but only by a doubtful node: a gap all the same
MAX_DERIVED_TOPICS: Final = 8
MAX_LIMIT: Final = 100
MAX_TOPICS: Final = 50
W_COVERAGE: Final = 0.5
W_CONFIDENCE: Final = 0.3
W_CERTAINTY: Final = 0.2
KAPPA_RISK: Final = 0.25  # κ = 1 alone is a caution, κ >= 2 escalates
ESCALATE_MIN_RISK: Final = 0.5
ACT_MIN_DECISION_CONFIDENCE: Final = 0.65
DIGITS: Final = 6
assert abs(W_COVERAGE + W_CONFIDENCE + W_CERTAINTY - 1.0) < 1e-12


def identifiers(text: str) -> set[str]:
    """The case-folded identifier tokens of `text` ("E-47" -> "e-47").  O(len(text))."""
    return {match.group(0).casefold() for match in _IDENTIFIER.finditer(text)}


def is_identifier(topic: str) -> bool:
    """Whether a topic is a single identifier token.  O(len(topic))."""
    return _IDENTIFIER.fullmatch(topic.strip()) is not None


def derived_topics(task: str) -> list[str]:
    """Identifiers and non-task content words of `task`, distinct, in text order."""
    topics: dict[str, str] = {}
    for match in _TOKEN.finditer(task):
        token = match.group(0)
        found = _IDENTIFIER.search(token)
        if found is not None:
            topics.setdefault(found.group(0).casefold(), found.group(0))
            continue
        for word in content_words(token):
            if word not in TASK_WORDS:
                topics.setdefault(word, word)
    return list(topics.values())[:MAX_DERIVED_TOPICS]


def _topics(task: str, critical_topics: Sequence[str] | None) -> tuple[list[str], bool]:
    if critical_topics is None:
        return derived_topics(task), False
    if isinstance(critical_topics, (str, bytes)) or not isinstance(critical_topics, Sequence):
        raise ValidationError("critical_topics", "must be a list of strings")
    if len(critical_topics) > MAX_TOPICS:
        raise ValidationError("critical_topics", f"at most {MAX_TOPICS} topics")
    topics = [
        " ".join(check_text(f"critical_topics[{i}]", t).split())
        for i, t in enumerate(critical_topics)
    ]
    return list(dict.fromkeys(topics)), True


def _candidates(
    graph: GraphEngine, task: str, limit: int, use_retrieval: bool
) -> tuple[list[str], str]:
    if use_retrieval:
        found = retrieve_context(graph, task, limit=limit)["results"]
        return [r["node_id"] for r in found], "retrieve_context"
    found = similarity_search(graph, task, limit)["results"]
    return [r["id"] for r in found], "similarity_search"


def decide(risk: float, decision_confidence: float, relevant: int, critical_missing: int) -> str:
    """The recommendation rule (module docstring, step 4).  O(1)."""
    if risk >= ESCALATE_MIN_RISK:
        return "escalate"
    if relevant and not critical_missing and decision_confidence >= ACT_MIN_DECISION_CONFIDENCE:
        return "act"
    return "learn_first"


def coverage_query(
    graph: GraphEngine,
    task_description: str,
    critical_topics: Sequence[str] | None = None,
    limit: int = 10,
    *,
    extra_node_ids: Sequence[str] = (),
    use_retrieval: bool = True,
) -> dict[str, Any]:
    """Assess the graph's coverage of a task (module docstring).

    Output: ``{"task", "relevant_nodes": [{node_id, node_type, content,
    confidence, similarity, topics}], "topics": [{topic, critical, covered,
    best_confidence, node_ids}], "coverage_score", "confidence_mean",
    "uncertainty", "risk", "decision_confidence", "knowledge_gaps":
    [{kind: missing | low_confidence | contradiction, ...}], "recommendation",
    "topology": {max_kappa, scc_count, routing}, "method"}``.
    Complexity: one retrieval, one embedding call for the topics, one pass
    over the outcomes for the evidence, and O(R·T·d) topic tests.
    """
    task = check_text("task_description", task_description)
    check_int("limit", limit, 1, MAX_LIMIT)
    extra = check_id_list("extra_node_ids", list(extra_node_ids))
    topics, critical = _topics(task, critical_topics)
    vectors = graph.embed_texts([task, *topics])
    task_vector = normalized_f32(vectors[0], len(vectors[0]))
    topic_vectors = [normalized_f32(v, len(v)) for v in vectors[1:]]
    candidate_ids, method = _candidates(graph, task, limit, use_retrieval)
    with graph.lock:
        store = graph.store
        index = graph.vector_index()
        rows = store.get_nodes([*candidate_ids, *extra])
        relevant = []
        for node_id in dict.fromkeys([*candidate_ids, *extra]):
            node = rows.get(node_id)
            if node is None or node.forgotten_at is not None or node.superseded_by is not None:
                continue
            if node.node_type == GOAL_NODE_TYPE:
                continue
            stored = index.get(node_id)
            similarity = exact_score(task_vector, stored) if stored is not None else 0.0
            if similarity >= RELEVANCE_MIN_SIMILARITY or node_id in extra:
                relevant.append((node, similarity, stored))
        ids = [node.id for node, _, _ in relevant]
        edges = store.list_edges_between(ids)
        evidence = evidence_counts(store, ids)
    relevant.sort(key=lambda item: (-item[1], item[0].id))
    topic_reports, gaps = _topic_coverage(relevant, topics, topic_vectors, critical)
    covered = sum(1 for t in topic_reports if t["covered"])
    coverage = covered / len(topics) if topics else 0.0
    confidences = [node.confidence for node, _, _ in relevant]
    confidence_mean = sum(confidences) / len(confidences) if confidences else 0.0
    widths = []
    for node_id in ids:
        successes, trials = evidence.get(node_id, (0.0, 0.0))
        lower, upper = wilson_interval(successes, trials)
        widths.append(upper - lower)
    uncertainty = sum(widths) / len(widths) if widths else 1.0
    contradicted = sorted(
        {
            (min(e.source_id, e.target_id), max(e.source_id, e.target_id))
            for e in edges
            if e.relationship == "contradicts"
        }
    )
    in_conflict = {node for pair in contradicted for node in pair}
    contradicted_topics = sorted(
        {
            t["topic"]
            for t in topic_reports
            for a, b in contradicted
            if a in t["node_ids"] and b in t["node_ids"]
        }
    )
    topology = analyze(build_adjacency(ids, edges), emit_telemetry=False)
    critical_missing = sum(1 for t in topic_reports if t["critical"] and not t["covered"])
    risk = min(
        1.0,
        max(
            len(in_conflict) / len(ids) if ids else 0.0,
            KAPPA_RISK * topology["max_kappa"],
            ESCALATE_MIN_RISK if contradicted_topics else 0.0,
        ),
    )
    decision_confidence = (
        W_COVERAGE * coverage + W_CONFIDENCE * confidence_mean + W_CERTAINTY * (1.0 - uncertainty)
    ) * (1.0 - risk)
    gaps.extend({"kind": "contradiction", "node_ids": list(pair)} for pair in contradicted)
    return {
        "task": task,
        "relevant_nodes": [
            {
                "node_id": node.id,
                "node_type": node.node_type,
                "content": node.content,
                "confidence": node.confidence,
                "similarity": round(similarity, DIGITS),
                "topics": [t["topic"] for t in topic_reports if node.id in t["node_ids"]],
            }
            for node, similarity, _ in relevant
        ],
        "topics": topic_reports,
        "coverage_score": round(coverage, DIGITS),
        "confidence_mean": round(confidence_mean, DIGITS),
        "uncertainty": round(uncertainty, DIGITS),
        "risk": round(risk, DIGITS),
        "decision_confidence": round(decision_confidence, DIGITS),
        "knowledge_gaps": gaps,
        "contradicted_topics": contradicted_topics,
        "recommendation": decide(risk, decision_confidence, len(relevant), critical_missing),
        "topology": {
            "max_kappa": topology["max_kappa"],
            "scc_count": topology["scc_count"],
            "routing": topology["routing"],
        },
        "method": method,
    }


def _topic_coverage(
    relevant: Sequence[tuple[Node, float, list[float] | None]],
    topics: Sequence[str],
    topic_vectors: Sequence[list[float]],
    critical: bool,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-topic coverage reports and the missing / low-confidence gaps (step 2)."""
    words = {node.id: set(content_words(node.content)) for node, _, _ in relevant}
    codes = {node.id: identifiers(node.content) for node, _, _ in relevant}
    reports: list[dict[str, Any]] = []
    gaps: list[dict[str, Any]] = []
    for topic, topic_vector in zip(topics, topic_vectors, strict=True):
        needed = set(content_words(topic))
        if is_identifier(topic):
            code = topic.strip().casefold()
            covering = [node for node, _, _ in relevant if code in codes[node.id]]
        else:
            covering = [
                node
                for node, _, stored in relevant
                if (needed and needed <= words[node.id])
                or (stored is not None and exact_score(topic_vector, stored) >= TOPIC_SIMILARITY)
            ]
        best = max((node.confidence for node in covering), default=0.0)
        covered = best >= TOPIC_MIN_CONFIDENCE
        reports.append(
            {
                "topic": topic,
                "critical": critical,
                "covered": covered,
                "best_confidence": round(best, DIGITS),
                "node_ids": sorted(node.id for node in covering),
            }
        )
        if not covering:
            gaps.append({"kind": "missing", "topic": topic, "critical": critical})
        elif best < LOW_CONFIDENCE:
            gaps.append(
                {
                    "kind": "low_confidence",
                    "topic": topic,
                    "critical": critical,
                    "best_confidence": round(best, DIGITS),
                }
            )
    return reports, gaps
