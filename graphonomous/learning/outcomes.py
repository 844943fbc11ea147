"""Gradient-free continual learning: outcomes, feedback, novelty, interactions.

Seed 003 §"Outcome grounding": an action's result comes back through
:func:`learn_from_outcome`; the graph stores it as an ``outcome`` node and
moves the confidence and Q-value (seed 004, two-phase retrieval) of the nodes
that justified the action.  :func:`learn_from_feedback` applies explicit
judgements, :func:`learn_detect_novelty` scores how new a text is, and
:func:`learn_from_interaction` turns one exchange into an episode plus the
factual claims of the response — without an LLM (:func:`extract_claims`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from .. import telemetry
from ..hygiene import refuse_nul
from ..model import (
    CAUSAL_RELATIONSHIPS,
    Node,
    ValidationError,
    check_choice,
    check_id,
    check_id_list,
    check_metadata,
    check_text,
    check_unit_interval,
    new_id,
)
from ..records import node_from_fields
from ..retrieval.directives import mark_fields
from ..retrieval.experience import (
    ATTRIBUTED_KEY,
    CONFIDENCE_UPDATES_KEY,
    NEUTRAL_REWARD,
    QUERY_KEY,
    RETRIEVAL_KEY,
    retrieval_trace,
)
from ..store import Store
from . import beliefs, goals, orchestrator, tables
from .outcome_signals import PARTIAL_FRACTION_KEY, STATUS_SIGNALS
from .thresholds import RELATED_SIMILARITY, SAME_KNOWLEDGE_SIMILARITY
from .writes import bounded_step, insert_node, link

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

OUTCOME_STATUSES: Final = ("success", "partial_success", "failure", "timeout")
FEEDBACK_KINDS: Final = ("positive", "negative", "correction")

# Seed 004: confidence learning rate 0.2; Q learning rate 0.3 ("faster than
# confidence"); rewards per status.
CONFIDENCE_LEARNING_RATE: Final = 0.2
Q_LEARNING_RATE: Final = 0.3
Q_REWARDS: Final[Mapping[str, float]] = {
    "success": 1.0,
    "partial_success": 0.65,
    "failure": 0.0,
    "timeout": 0.25,
}
# How much an outcome's evidence counts, by where it comes from (seed 003:
# scale by evidence_type, "the confidence of the outcome evidence, not the
# LLM's rhetoric").  A direct measurement counts fully, a report from another
# system a bit less, a person's judgement slightly less again, and the
# acting agent's own claim half.
EVIDENCE_TYPE_WEIGHTS: Final[Mapping[str, float]] = {
    "performance": 1.0,
    "external": 0.8,
    "human": 0.8,
    "self_report": 0.5,
}
# Relationship kinds whose edges carry causal metadata (causal_strength,
# intervention_history) updated by outcomes.
CAUSAL_KINDS: Final = CAUSAL_RELATIONSHIPS
INTERVENTION_HISTORY_LIMIT: Final = 20
# The outcome node points at its causal nodes with derived_from edges: all of
# its arcs leave it, so it can never sit on a feedback loop (no fake SCC).
OUTCOME_CAUSE_RELATIONSHIP: Final = "derived_from"

OUTCOME_GOAL_RELATIONSHIP: Final = "part_of"

# Feedback moves confidence by the full learning rate (a direct judgement of
# this node) and never touches the Q-value (that is outcome utility).
FEEDBACK_STEP: Final = CONFIDENCE_LEARNING_RATE

# Novelty = 1 − (highest cosine similarity to a live node).  With the hashing
# embedder paraphrases score ≥ 0.75 and unrelated texts ≤ 0.35, so a text is
# novel when nothing stored is more than 0.7 similar.
NOVELTY_THRESHOLD: Final = 0.3
NOVELTY_NEIGHBOURS: Final = 5

# learn_from_interaction
EPISODE_TIMESCALE: Final = "fast"  # seed 003: fast = current conversation context
CLAIM_CONFIDENCE: Final = 0.4  # an unverified claim of a model response
REINFORCE_SIMILARITY: Final = SAME_KNOWLEDGE_SIMILARITY  # seed 003: same knowledge
REINFORCE_STEP: Final = 0.1  # half the learning rate: a repetition, not evidence
RELATED_LINK_SIMILARITY: Final = RELATED_SIMILARITY
RELATED_LINKS_PER_CLAIM: Final = 3
MAX_CLAIMS: Final = 20
MIN_CLAIM_WORDS: Final = 4
MAX_CLAIM_WORDS: Final = 40
# Sentences starting like this are conversation, not knowledge.
SMALL_TALK_PREFIXES: Final = (
    "hi",
    "hello",
    "hey",
    "thanks",
    "thank you",
    "you're welcome",
    "you are welcome",
    "sure",
    "of course",
    "certainly",
    "absolutely",
    "great question",
    "good question",
    "glad",
    "happy to help",
    "hope this helps",
    "i hope",
    "let me",
    "feel free",
    "please let me know",
    "let me know",
    "sorry",
    "no problem",
    "okay",
    "ok",
    "as an ai",
)
# First-person statements are about the assistant, not about the world.
SELF_REFERENCE_PREFIXES: Final = ("i ", "i'm", "i'll", "i've", "i'd", "i am", "i can", "i will")
# Hedged sentences are not asserted, so they are not stored as claims.
HEDGES: Final = (
    "maybe",
    "perhaps",
    "might",
    "possibly",
    "probably",
    "i think",
    "i believe",
    "i guess",
    "i suspect",
    "not sure",
    "it seems",
    "seems like",
    "could be",
    "may be",
    "unclear",
)
# A line is treated as code (not prose) when this share of it is code punctuation.
CODE_CHARACTERS: Final = frozenset("{}[]();=<>`|\\$")
MAX_CODE_SHARE: Final = 0.08

OUTCOME_EVENT: Final = "graphonomous.learning.outcome"
DIGITS: Final = 6

_LIST_MARKER: Final = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|#+)\s+")
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_EMPHASIS: Final = re.compile(r"\*\*|__|`")
_WORDS: Final = re.compile(r"\w+")
_HEDGE_PATTERN: Final = re.compile(r"\b(?:" + "|".join(map(re.escape, HEDGES)) + r")\b")


# -- outcomes --------------------------------------------------------------------


# Credit assignment.  An outcome naming at most ATTRIBUTED_MAX_CAUSES nodes is an
# attribution: the agent says what it acted on (a fact and a procedure, say),
# and seed 003/004's updates (confidence, Q, co-activation) apply in full.  An
# outcome over more nodes is a *bundle*, typically the top results of a
# retrieval: it says that the bundle did or did not answer one question.  That
# is evidence about relevance to questions like it, which experience keeps
# (retrieval.experience); it says nothing about the truth (confidence) or the
# general utility (Q) of any one member, nor that the members belong together.
# Measured on LoCoMo (benchmarks/eval_learning.py, bundles of five, dev half):
# moving the members' confidence even by 1/k of the step cost 0.027
# unseen-question R@5 (two conversations, effort 3), their Q by 1/k 0.014 at
# effort 3 (three conversations), strengthening their shared edges 0.02.
ATTRIBUTED_MAX_CAUSES: Final = 2


def is_attribution(causes: int) -> bool:
    """Whether an outcome with this many causes attributes itself to them.  O(1)."""
    return causes <= ATTRIBUTED_MAX_CAUSES


def _evidence_object(evidence: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """Evidence as a JSON object: a plain string becomes {"description": text}."""
    if evidence is None:
        return {}
    if isinstance(evidence, str):
        try:
            return check_metadata("evidence", evidence)
        except ValidationError:
            return {"description": check_text("evidence", evidence)}
    return check_metadata("evidence", evidence)


def outcome_signal(status: str, evidence: Mapping[str, Any]) -> float:
    """Signed size of the confidence update for a status, in [-1, 1] (STATUS_SIGNALS)."""
    if status != "partial_success" or PARTIAL_FRACTION_KEY not in evidence:
        return STATUS_SIGNALS[status]
    return check_unit_interval(f"evidence.{PARTIAL_FRACTION_KEY}", evidence[PARTIAL_FRACTION_KEY])


def _outcome_content(
    action_id: str, status: str, confidence: float, evidence: Mapping[str, Any]
) -> str:
    text = (
        f"Outcome of action {action_id}: {status.replace('_', ' ')} (confidence {confidence:.2f})"
    )
    description = evidence.get("description") or evidence.get("summary")
    if isinstance(description, str) and description.strip():
        text += f". {description.strip()}"
    return text


def _resolve_goal_node(store: Store, goal_id: str) -> str | None:
    """The live goal node named by a goals row id or by a goal node's own id."""
    candidate = tables.goal_node_of(store, goal_id) or goal_id
    node = store.get_node(candidate)
    if node is None or node.forgotten_at is not None or node.node_type != "goal":
        return None
    return node.id


def _update_causal_edges(
    store: Store, causal_ids: Sequence[str], step: float, entry: Mapping[str, Any], now: str
) -> list[dict[str, Any]]:
    """Update causal_strength and intervention_history of causal-kind edges into causal nodes."""
    targets = set(causal_ids)
    updated = []
    for edge in store.edges_touching(causal_ids):
        if edge.relationship not in CAUSAL_KINDS or edge.target_id not in targets:
            continue
        before = float(edge.metadata.get("causal_strength", edge.strength))
        after = bounded_step(before, step)
        history = list(edge.metadata.get("intervention_history", []))
        history.append({**entry, "causal_strength": after})
        metadata = {
            **edge.metadata,
            "causal_strength": after,
            "intervention_history": history[-INTERVENTION_HISTORY_LIMIT:],
        }
        store.update_edge(edge.id, metadata=metadata, updated_at=now)
        updated.append(
            {"edge_id": edge.id, "causal_strength_before": before, "causal_strength_after": after}
        )
    return updated


def _outcome_query(
    graph: GraphEngine, evidence: Mapping[str, Any], causal_ids: Sequence[str]
) -> str | None:
    """The query the outcome answers: ``evidence["query"]``, else the retrieval that
    returned the causal nodes (this process's `RetrievalTrace`), else None."""
    named = evidence.get(QUERY_KEY)
    if isinstance(named, str) and named.strip():
        return named.strip()
    with graph.lock:
        trace = retrieval_trace(graph).find(causal_ids)
    return trace.query if trace is not None else None


def _count_co_use(store: Store, causal_ids: Sequence[str]) -> None:
    """co_activation_count + 1 on every edge between two causes of a rewarded outcome.

    Consolidation strengthens edges by this count: nodes that succeed together
    grow closer; nodes merely retrieved together do not.  O(edges among them).
    """
    for edge in store.list_edges_between(causal_ids):
        store.update_edge(edge.id, co_activation_count=edge.co_activation_count + 1)


@dataclass(frozen=True)
class _Credit:
    """What one outcome does to its causes (`_credit`).

    `attributed`: the outcome names at most ATTRIBUTED_MAX_CAUSES causes;
    `signal`: the status signal (STATUS_SIGNALS); `weight`: outcome
    confidence × evidence-type weight; `step`: the signed confidence step;
    `reward`: the Q reward (Q_REWARDS).
    """

    attributed: bool
    signal: float
    weight: float
    step: float
    reward: float


def _credit(
    status: str,
    evidence: Mapping[str, Any],
    outcome_confidence: float,
    weight_by_type: float,
    causes: int,
) -> _Credit:
    """Credit assignment: an attribution moves its causes, a bundle does not.

    Rule: with at most ATTRIBUTED_MAX_CAUSES causes the agent says what it acted
    on, so seed 003/004's confidence step (0.2 · signal · weight) applies in full;
    over more causes the outcome only says that the bundle answered or not one
    question (experience keeps that), so the step is 0.  O(1).
    """
    signal = outcome_signal(status, evidence)
    weight = outcome_confidence * weight_by_type
    attributed = is_attribution(causes)
    step = CONFIDENCE_LEARNING_RATE * signal * weight if attributed else 0.0
    return _Credit(attributed, signal, weight, step, Q_REWARDS[status])


def _confidence_after(cause: Node, credit: _Credit) -> float:
    """Confidence: how far the outcome says the cause is true.

    Rule: c' = bounded_step(c, step), seed 003's bounded update (`writes.bounded_step`:
    the step shrinks as c nears 0 or 1), with `credit.step` = 0.2 · signal · weight
    for an attribution and 0 for a bundle.  Reason: an outcome over the one or two
    nodes the agent acted on is evidence about them; a bundle's success says only
    that one of five answered, nothing about any member's truth.  O(1).
    """
    return bounded_step(cause.confidence, credit.step)


def _q_after(cause: Node, credit: _Credit) -> tuple[float, int]:
    """Q-value and Q-update count: how useful acting on the cause turned out.

    Rule: for an attribution q' = q + 0.3 · (reward − q) (Q_REWARDS) and
    q_update_count + 1; a bundle leaves both.  Reason: seed 004's Q is the
    utility of the node the agent acted on; a bundle member's share of a reward
    is unknown, and spreading it lowered unseen-question recall (measured,
    above `ATTRIBUTED_MAX_CAUSES`).  O(1).
    """
    if not credit.attributed:
        return cause.q_value, cause.q_update_count
    return cause.q_value + Q_LEARNING_RATE * (
        credit.reward - cause.q_value
    ), cause.q_update_count + 1


def _moved_cause(cause: Node, credit: _Credit) -> tuple[float, float, int]:
    """Confidence (`_confidence_after`), Q and Q-update count (`_q_after`) of one cause
    after the outcome.  O(1)."""
    q_value, q_count = _q_after(cause, credit)
    return _confidence_after(cause, credit), q_value, q_count


def _moves(
    causal: Mapping[str, Node], causal_ids: Sequence[str], credit: _Credit
) -> dict[str, tuple[float, float, int]]:
    """Each cause's confidence, Q and Q-update count after the outcome (`_moved_cause`),
    in cause order.  O(k)."""
    return {node_id: _moved_cause(causal[node_id], credit) for node_id in causal_ids}


def _recorded_moves(
    node: Node, causal: Mapping[str, Node], moves: Mapping[str, tuple[float, float, int]]
) -> Node:
    """The outcome node of an attribution with the confidence it moves on each cause
    (``metadata.confidence_updates``: node_id, confidence_before, confidence_after).

    Why: ranking counts a learned confidence as far as the query matches the one
    that earned it (`retrieval.experience.conditioned_confidence`), and a node's own
    row keeps only its current value and retention anchor, so the step is kept
    where the query is.  A bundle moves nothing and records nothing.  O(k).
    """
    rows = [
        {
            "node_id": node_id,
            "confidence_before": causal[node_id].confidence,
            "confidence_after": after,
        }
        for node_id, (after, _, _) in moves.items()
    ]
    return replace(node, metadata={**node.metadata, CONFIDENCE_UPDATES_KEY: rows})


def _update_causes(
    store: Store,
    outcome_node: Node,
    causal: Mapping[str, Node],
    moves: Mapping[str, tuple[float, float, int]],
    credit: _Credit,
    status: str,
    outcome_confidence: float,
) -> list[dict[str, Any]]:
    """Write each cause's confidence, Q and evidence count (`moves`, in cause order)
    and the outcome's ``derived_from`` edge to it; the per-cause ``updates`` rows.  O(k)."""
    now = outcome_node.created_at
    updates = []
    for node_id, (after, q_after, q_count) in moves.items():
        cause = causal[node_id]
        store.update_node(
            node_id,
            confidence=after,
            q_value=q_after,
            q_update_count=q_count,
            evidence_count=cause.evidence_count + 1,
            updated_at=now,
        )
        link(
            store,
            outcome_node.id,
            node_id,
            OUTCOME_CAUSE_RELATIONSHIP,
            now,
            strength=outcome_confidence,
            metadata={"status": status, "signal": credit.signal},
        )
        updates.append(
            {
                "node_id": node_id,
                "confidence_before": cause.confidence,
                "confidence_after": after,
                "q_before": cause.q_value,
                "q_after": q_after,
                "q_update_count": q_count,
                "evidence_count": cause.evidence_count + 1,
            }
        )
    return updates


def _outcome_node(
    graph: GraphEngine,
    fields: Mapping[str, Any],
    credit: _Credit,
    causal_ids: Sequence[str],
    query: str | None,
) -> Node:
    """The ``outcome`` node: the experience later retrievals consult.

    Its metadata keeps the reward, whether it was an attribution, and the query
    it answers (``metadata.retrieval.query``), which `retrieval.experience`
    compares with later queries.  An aid: kept out of the search indexes.
    """
    evidence = fields["evidence"]
    return node_from_fields(
        {
            "content": _outcome_content(
                fields["action_id"], fields["status"], fields["confidence"], evidence
            ),
            "node_type": "outcome",
            "confidence": fields["confidence"],
            "causal_parent_ids": list(causal_ids),
            "metadata": {
                "action_id": fields["action_id"],
                "status": fields["status"],
                "evidence": evidence,
                "evidence_type": fields["evidence_type"],
                "trace_id": fields["trace_id"],
                "goal_id": fields["goal_id"],
                "outcome_id": fields["outcome_id"],
                "reward": credit.reward,
                ATTRIBUTED_KEY: credit.attributed,
                **({RETRIEVAL_KEY: {QUERY_KEY: query}} if query is not None else {}),
            },
        },
        now=graph.now(),
    )


def _evidence_type_weight(evidence_type: str | None) -> float:
    """How much an outcome's evidence counts by its source (EVIDENCE_TYPE_WEIGHTS; 1 unnamed)."""
    if evidence_type is None:
        return 1.0
    check_choice("evidence_type", evidence_type, tuple(EVIDENCE_TYPE_WEIGHTS))
    return EVIDENCE_TYPE_WEIGHTS[evidence_type]


def _live_causes(store: Store, causal_ids: Sequence[str]) -> dict[str, Node]:
    """The causal nodes, each required live (else a ValidationError naming the field)."""
    causal = store.get_nodes(causal_ids)
    for node_id in causal_ids:
        found = causal.get(node_id)
        if found is None or found.forgotten_at is not None:
            raise ValidationError("causal_node_ids", f"no live node with id {node_id!r}")
    return causal


def learn_from_outcome(
    graph: GraphEngine,
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
    """Record an action's outcome and update the nodes that caused it.

    Input: the action id, status (success | partial_success | failure |
    timeout), the outcome's confidence in [0, 1], the causal node ids (live
    nodes; duplicates ignored), optional evidence (object or text),
    goal id, trace id and evidence type (EVIDENCE_TYPE_WEIGHTS).

    Effects, in one transaction, one function per concern (each states its
    rule and its reason):
    - credit assignment (`_credit`): an *attribution* (at most
      ATTRIBUTED_MAX_CAUSES causes) or a *bundle*;
    - confidence (`_confidence_after`): c' = bounded_step(c, 0.2 · s · w), s
      the status signal (STATUS_SIGNALS), w = outcome confidence ×
      evidence-type weight — an attribution only;
    - Q (`_q_after`): q' = q + 0.3 · (reward − q) (Q_REWARDS), q_update_count
      + 1 — an attribution only; a bundle's lesson is the experience below.
      Every causal node: evidence_count + 1 and a ``derived_from`` edge from
      the outcome (`_update_causes`);
    - experience (`_outcome_node`, `_recorded_moves`): an ``outcome`` node
      (causal_parent_ids = causal nodes, metadata with action_id, status,
      evidence, trace_id, reward, attributed, an attribution's
      ``confidence_updates`` per cause, …).  The query it answers
      (``evidence["query"]``, else the retrieval of this process that returned
      the causal nodes, `_outcome_query`) is kept in
      ``metadata.retrieval.query``: later retrievals of similar queries consult
      it (`retrieval.experience`);
    - causal edges (`_update_causal_edges`): causal-kind edges into causal
      nodes get ``metadata.causal_strength`` moved like confidence, the
      intervention appended to ``metadata.intervention_history`` (last 20);
    - co-activation (`_counts_co_use`, `_count_co_use`): a rewarded
      attribution (reward > 0.5) counts one co-activation on the edges among
      its causes (consolidation strengthens them);
    - the record (`_record_outcome`): when `goal_id` names a live goal node a
      ``part_of`` edge to it and the goal's progress; an ``outcomes`` row.

    Output: ``{"outcome_id", "outcome_node_id", "status", "signal",
    "weight", "updates": [{"node_id", "confidence_before",
    "confidence_after", "q_before", "q_after", "q_update_count",
    "evidence_count"}], "causal_edges": [...], "goal_id", "goal_node_id",
    "duplicate": false}``.

    Signal deduplication: a report carrying a `signal_id` already recorded
    (a client retrying after a lost reply) changes nothing and returns the
    first report's ids with ``"duplicate": true``, ``"weight": 0.0`` and
    empty ``updates`` / ``causal_edges`` — nothing was applied this time.
    Reusing a signal_id for a different action or status is a
    ValidationError (the key names one report).
    Complexity: O(k + edges touching the k causal nodes).
    """
    report = _checked_report(
        action_id,
        status,
        confidence,
        causal_node_ids,
        evidence,
        goal_id,
        trace_id,
        evidence_type,
        signal_id,
    )
    causal_ids = report.causal_ids
    credit = _credit(
        status, report.evidence, report.confidence, report.type_weight, len(causal_ids)
    )
    query = _outcome_query(graph, report.evidence, causal_ids)
    node = _outcome_node(graph, report.fields(new_id()), credit, causal_ids, query)
    (vector,) = graph.embed_texts([node.content])
    with graph.lock:
        store = graph.store
        with store.transaction():
            if signal_id is not None:
                first = tables.outcome_with_signal(store, signal_id)
                if first is not None:
                    return _duplicate_outcome(
                        first, action_id, status, credit.signal, credit.reward, signal_id
                    )
            applied = _apply_outcome(graph, report, credit, node, vector)
    telemetry.emit(
        OUTCOME_EVENT,
        {"causal_nodes": len(causal_ids), "signal": credit.signal},
        {"status": status, "action_id": action_id, "trace_id": trace_id},
    )
    return {
        "outcome_id": node.metadata["outcome_id"],
        "outcome_node_id": node.id,
        "status": status,
        "signal": credit.signal,
        "weight": credit.weight,
        "reward": credit.reward,
        **applied,
        "duplicate": False,
    }


@dataclass(frozen=True)
class _Report:
    """One outcome report, validated (`_checked_report`): what the agent said."""

    action_id: str
    status: str
    confidence: float
    causal_ids: list[str]
    evidence: dict[str, Any]
    goal_id: str | None
    trace_id: str | None
    evidence_type: str | None
    signal_id: str | None
    type_weight: float

    def fields(self, outcome_id: str) -> dict[str, Any]:
        """The fields the outcome node records (`_outcome_node`)."""
        return {
            "action_id": self.action_id,
            "status": self.status,
            "confidence": self.confidence,
            "evidence": self.evidence,
            "evidence_type": self.evidence_type,
            "trace_id": self.trace_id,
            "goal_id": self.goal_id,
            "outcome_id": outcome_id,
        }


def _checked_report(
    action_id: str,
    status: str,
    confidence: float,
    causal_node_ids: Sequence[str],
    evidence: Mapping[str, Any] | str | None,
    goal_id: str | None,
    trace_id: str | None,
    evidence_type: str | None,
    signal_id: str | None,
) -> _Report:
    """The report's arguments checked, each error naming its field; causal ids
    de-duplicated in order.  Nothing is read or written.  O(k)."""
    check_id("action_id", action_id)
    check_choice("status", status, OUTCOME_STATUSES)
    outcome_confidence = check_unit_interval("confidence", confidence)
    causal_ids = list(dict.fromkeys(check_id_list("causal_node_ids", causal_node_ids)))
    evidence_data = _evidence_object(evidence)
    for name, value in (("goal_id", goal_id), ("trace_id", trace_id), ("signal_id", signal_id)):
        if value is not None:
            check_id(name, value)
    # Named here: the outcome node would report NUL as its `content` / `metadata`.
    named: dict[str, Any] = {"action_id": action_id, "evidence": evidence_data}
    for name, value in {**named, "trace_id": trace_id, "signal_id": signal_id}.items():
        refuse_nul(name, value)
    return _Report(
        action_id,
        status,
        outcome_confidence,
        causal_ids,
        evidence_data,
        goal_id,
        trace_id,
        evidence_type,
        signal_id,
        _evidence_type_weight(evidence_type),
    )


def _apply_outcome(
    graph: GraphEngine, report: _Report, credit: _Credit, node: Node, vector: list[float]
) -> dict[str, Any]:
    """Every write of one (new) outcome, inside the caller's transaction, in this order:
    the experience (`_recorded_moves`, the outcome node), the causes' confidence and Q
    (`_update_causes`), the causal edges (`_update_causal_edges`), co-activation
    (`_count_co_use`), then the goal and the ``outcomes`` row (`_record_outcome`).
    Output: the result's ``updates``, ``causal_edges``, ``goal_id``, ``goal_node_id``
    and ``goal_update``.  O(k + edges touching the k causes)."""
    store = graph.store
    causal_ids = report.causal_ids
    causal = _live_causes(store, causal_ids)
    goal_node_id = _live_goal(store, report.goal_id)
    moves = _moves(causal, causal_ids, credit)
    if credit.attributed:
        node = _recorded_moves(node, causal, moves)
    insert_node(graph, node, vector)  # an aid: kept out of the search indexes
    updates = _update_causes(store, node, causal, moves, credit, report.status, report.confidence)
    now = node.created_at
    entry = {
        "outcome_id": node.metadata["outcome_id"],
        "action_id": report.action_id,
        "status": report.status,
        "at": now,
    }
    edges = _update_causal_edges(store, causal_ids, credit.step, entry, now)
    if _counts_co_use(credit):
        _count_co_use(store, causal_ids)
    goal_update = _record_outcome(graph, report, node, goal_node_id)
    return {
        "updates": updates,
        "causal_edges": edges,
        "goal_id": report.goal_id,
        "goal_node_id": goal_node_id,
        "goal_update": goal_update,
    }


def _live_goal(store: Store, goal_id: str | None) -> str | None:
    """The live goal node an outcome names (None without `goal_id`; a ValidationError
    naming ``goal_id`` when it names no live goal)."""
    if goal_id is None:
        return None
    goal_node_id = _resolve_goal_node(store, goal_id)
    if goal_node_id is None:
        raise ValidationError("goal_id", f"no live goal with id {goal_id!r}")
    return goal_node_id


def _counts_co_use(credit: _Credit) -> bool:
    """Co-activation: whether an outcome makes its causes closer.

    Rule: a rewarded (reward > 0.5) attribution counts one co-activation on each edge
    among its causes; consolidation strengthens edges by that count.  Reason: nodes
    an agent acted on together and that succeeded belong together; a failure says
    nothing of that, and a bundle's members were only retrieved together
    (strengthening their edges cost 0.02 unseen-question R@5, `ATTRIBUTED_MAX_CAUSES`).
    O(1).
    """
    return credit.reward > NEUTRAL_REWARD and credit.attributed


def _record_outcome(
    graph: GraphEngine, report: _Report, node: Node, goal_node_id: str | None
) -> dict[str, Any] | None:
    """The outcome's record: a ``part_of`` edge to its live goal, the ``outcomes`` row
    (the signal id that deduplicates retries lives there) and the goal's progress
    (`goals.apply_outcome`).  Output: the goal update, None without a goal.  O(1)."""
    store = graph.store
    now = node.created_at
    outcome_id = node.metadata["outcome_id"]
    if goal_node_id is not None:
        link(store, node.id, goal_node_id, OUTCOME_GOAL_RELATIONSHIP, now)
    tables.insert_outcome(
        store,
        {
            "id": outcome_id,
            "action_id": report.action_id,
            "status": report.status,
            "confidence": report.confidence,
            "causal_node_ids": report.causal_ids,
            "evidence": report.evidence,
            "goal_id": report.goal_id,
            "outcome_node_id": node.id,
            "created_at": now,
            "signal_id": report.signal_id,
        },
    )
    if report.goal_id is None:
        return None
    return goals.apply_outcome(
        graph,
        report.goal_id,
        {"outcome_id": outcome_id, "status": report.status, "confidence": report.confidence},
    )


def _duplicate_outcome(
    first: Mapping[str, Any],
    action_id: str,
    status: str,
    signal: float,
    reward: float,
    signal_id: str,
) -> dict[str, Any]:
    """The answer to a repeated outcome signal: the first report's ids, nothing applied."""
    if (first["action_id"], first["status"]) != (action_id, status):
        raise ValidationError(
            "signal_id",
            f"{signal_id!r} was already used for action {first['action_id']!r} "
            f"with status {first['status']!r}",
        )
    return {
        "outcome_id": first["id"],
        "outcome_node_id": first["outcome_node_id"],
        "status": status,
        "signal": signal,
        "weight": 0.0,
        "reward": reward,
        "updates": [],
        "causal_edges": [],
        "goal_id": first["goal_id"],
        "goal_node_id": None,
        "duplicate": True,
    }


# -- feedback ----------------------------------------------------------------------


def learn_from_feedback(
    graph: GraphEngine,
    node_id: str,
    feedback: str,
    correction: str | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """Apply an explicit judgement of one node.

    positive: c' = bounded_step(c, +0.2); negative: c' = bounded_step(c, −0.2);
    both count in ``metadata.feedback`` ({"positive": n, "negative": n}).
    correction: `correction` (the corrected text) becomes a new node that
    supersedes this one (:func:`beliefs.revise`).  Output: ``{"node_id",
    "feedback", "confidence_before", "confidence_after"}`` plus
    ``"revision"`` (the revise result) for a correction.  One transaction.
    """
    check_id("node_id", node_id)
    check_choice("feedback", feedback, FEEDBACK_KINDS)
    if feedback == "correction":
        if correction is None:
            raise ValidationError("correction", "is required when feedback is correction")
        revision = beliefs.revise(
            graph, node_id, new_content=correction, reason=reason or "correction feedback"
        )
        return {
            "node_id": node_id,
            "feedback": feedback,
            "confidence_before": revision["confidence_before"],
            "confidence_after": revision["confidence_after"],
            "revision": revision,
        }
    if correction is not None:
        raise ValidationError("correction", "is only used with feedback=correction")
    with graph.lock, graph.store.transaction():
        node = graph.store.require_node(node_id)
        step = FEEDBACK_STEP if feedback == "positive" else -FEEDBACK_STEP
        after = bounded_step(node.confidence, step)
        counts = dict(node.metadata.get("feedback", {}))
        counts[feedback] = int(counts.get(feedback, 0)) + 1
        graph.store.update_node(
            node_id,
            confidence=after,
            metadata={**node.metadata, "feedback": counts},
            updated_at=graph.now(),
        )
    return {
        "node_id": node_id,
        "feedback": feedback,
        "confidence_before": node.confidence,
        "confidence_after": after,
    }


# -- novelty -------------------------------------------------------------------------


def _novelty(
    graph: GraphEngine, vector: Sequence[float], threshold: float, limit: int
) -> dict[str, Any]:
    hits = graph.vector_index().search(vector, limit)
    nodes = graph.store.get_nodes([node_id for node_id, _ in hits])
    best = max((score for _, score in hits), default=0.0)
    novelty = 1.0 - max(0.0, min(1.0, best))
    return {
        "novelty": round(novelty, DIGITS),
        "is_novel": novelty >= threshold,
        "threshold": threshold,
        "max_similarity": round(best, DIGITS),
        "nearest": [
            {
                "node_id": node_id,
                "similarity": round(score, DIGITS),
                "node_type": nodes[node_id].node_type if node_id in nodes else None,
            }
            for node_id, score in hits
        ],
    }


def learn_detect_novelty(
    graph: GraphEngine,
    text: str,
    threshold: float = NOVELTY_THRESHOLD,
    limit: int = NOVELTY_NEIGHBOURS,
) -> dict[str, Any]:
    """How new a text is relative to the live graph.

    novelty = 1 − max(0, highest cosine similarity to a live node) (1.0 on an
    empty graph); ``is_novel`` = novelty ≥ threshold.  Output: ``{"novelty",
    "is_novel", "threshold", "max_similarity", "nearest": [{"node_id",
    "similarity", "node_type"}]}``.  Complexity: one embedding + one top-k
    search.  Read-only.
    """
    check_text("text", text)
    threshold = check_unit_interval("threshold", threshold)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValidationError("limit", "must be a positive integer")
    (vector,) = graph.embed_texts([text])
    with graph.lock:
        return _novelty(graph, vector, threshold, limit)


# -- claims and interactions -----------------------------------------------------------


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = _EMPHASIS.sub("", _LIST_MARKER.sub("", line)).strip()
        if line:
            out.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return out


def _is_claim(sentence: str) -> bool:
    lowered = sentence.lower().replace("’", "'")
    words = _WORDS.findall(lowered)
    if not MIN_CLAIM_WORDS <= len(words) <= MAX_CLAIM_WORDS or sentence.endswith("?"):
        return False
    if any(
        lowered == p or lowered.startswith((p + " ", p + ",", p + "!", p + "."))
        for p in SMALL_TALK_PREFIXES
    ):
        return False
    if lowered.startswith(SELF_REFERENCE_PREFIXES) or _HEDGE_PATTERN.search(lowered):
        return False
    code = sum(1 for char in sentence if char in CODE_CHARACTERS)
    return code <= MAX_CODE_SHARE * len(sentence)


def extract_claims(text: str) -> list[str]:
    """Declarative claims of a response, without an LLM.

    Heuristics (in order): split into lines, drop list markers and markdown
    emphasis, split lines into sentences at ``.``/``!``/``?`` followed by
    whitespace and an upper-case letter or digit; keep a sentence when it has
    4–40 words, does not end with ``?``, does not open with small talk
    (SMALL_TALK_PREFIXES) or with a first-person phrase about the assistant
    (SELF_REFERENCE_PREFIXES), contains no hedge (HEDGES) and is not code
    (≤ 8 % code punctuation).  Duplicates (case-insensitive) are dropped and
    at most MAX_CLAIMS are returned, in text order.  O(len(text)).
    """
    seen: set[str] = set()
    claims = []
    for sentence in _sentences(text):
        key = " ".join(_WORDS.findall(sentence.lower()))
        if key in seen or not _is_claim(sentence):
            continue
        seen.add(key)
        claims.append(sentence)
        if len(claims) == MAX_CLAIMS:
            break
    return claims


def _context_object(context: Mapping[str, Any] | str | None) -> Any:
    if context is None or isinstance(context, str):
        return context
    return check_metadata("context", context)


def learn_from_interaction(
    graph: GraphEngine,
    user_message: str,
    model_response: str,
    context: Mapping[str, Any] | str | None = None,
) -> dict[str, Any]:
    """Learn from one exchange: novelty → episode → claims → links.

    One function per concern (each states its rule and its reason):
    1. Novelty (`_novelty`) of the whole exchange against the graph as it was.
    2. Experience (`_episode_node`): an ``episodic`` node (timescale fast)
       "User: …\\nAssistant: …", metadata {"kind": "interaction", "context"}.
    3. Claims of the response (:func:`extract_claims`, `_claim_nodes`), each
       planned before writing (`_plan_claim`, then the Orchestrator's verdict).
       Confidence (`_reinforce`): a claim whose nearest live node is ≥ 0.95
       similar and shows no contradiction cue reinforces it (step +0.1, a
       ``related`` edge episode → node marked reinforced).  Expansion
       (`_expand`): any other claim becomes a ``semantic`` node (confidence
       0.4) with a ``derived_from`` edge to the episode, ``related`` edges to
       up to 3 nearest live nodes ≥ 0.5 similar, and mutual ``contradicts``
       edges to nodes it contradicts (hooks are notified after commit).

    Output: ``{"episode": node, "novelty": {...}, "claims": [{"claim",
    "action": "created" | "reinforced", "node_id", "similarity",
    "related": [ids], "contradicts": [ids]}], "created_node_ids",
    "reinforced_node_ids"}``.  One transaction.
    Complexity: one embedding batch + one top-k search per claim.
    """
    check_text("user_message", user_message)
    check_text("model_response", model_response)
    episode = _episode_node(graph, user_message, model_response, _context_object(context))
    claims = extract_claims(model_response)
    claim_nodes = _claim_nodes(episode, claims)
    vectors = graph.embed_texts([episode.content, *claims])
    with graph.lock:
        store = graph.store
        novelty = _novelty(graph, vectors[0], NOVELTY_THRESHOLD, NOVELTY_NEIGHBOURS)
        claim_nodes, plans, verdicts = _planned_claims(graph, claim_nodes, vectors[1:])
        with store.transaction():
            insert_node(graph, episode, vectors[0])
            results, records = _write_claims(
                graph, episode, claim_nodes, vectors[1:], plans, verdicts
            )
        beliefs.contradiction_hooks(graph).notify(records)
        stored_episode = store.get_node(episode.id)
        assert stored_episode is not None
    return {
        "episode": stored_episode.to_dict(),
        "novelty": novelty,
        "claims": results,
        "created_node_ids": [r["node_id"] for r in results if r["action"] == "created"],
        "reinforced_node_ids": [r["node_id"] for r in results if r["action"] == "reinforced"],
    }


def _episode_node(graph: GraphEngine, user_message: str, model_response: str, context: Any) -> Node:
    """Experience: the exchange itself as an ``episodic`` node (timescale fast).

    Rule: "User: …\\nAssistant: …", metadata {"kind": "interaction", "context"}, the
    directive fields marked (`retrieval.directives.mark_fields`).  Reason: seed 003
    keeps the current conversation on the fast timescale, so the exchange is
    recallable at once and fades unless used; the claims below derive from it.
    """
    return node_from_fields(
        mark_fields(
            {
                "content": f"User: {user_message.strip()}\nAssistant: {model_response.strip()}",
                "node_type": "episodic",
                "timescale": EPISODE_TIMESCALE,
                "metadata": {"kind": "interaction", "context": context},
            }
        ),
        now=graph.now(),
    )


def _claim_nodes(episode: Node, claims: Sequence[str]) -> list[Node]:
    """The response's claims as candidate ``semantic`` nodes (confidence 0.4).

    Reason: a model's statement is unverified (CLAIM_CONFIDENCE), below what a
    source states; it must earn confidence through use.  Not yet written: each is
    stored (`_expand`) or reinforces a node it repeats (`_reinforce`).
    """
    return [
        node_from_fields(
            {
                "content": claim,
                "node_type": "semantic",
                "confidence": CLAIM_CONFIDENCE,
                "metadata": {"kind": "claim", "episode_id": episode.id},
            },
            now=episode.created_at,
        )
        for claim in claims
    ]


def _planned_claims(
    graph: GraphEngine, claim_nodes: Sequence[Node], vectors: Sequence[list[float]]
) -> tuple[list[Node], list[dict[str, Any]], list[orchestrator.Decision]]:
    """Each claim planned before anything is written: its nearest nodes, contradictions
    and whether it repeats one (`_plan_claim`), then the Orchestrator's verdict, whose
    timescale the claim node takes.

    Reason: seed 003's Orchestrator weighs stability against plasticity per claim, so
    the decision is made on the graph as it was, not as the claims before it left it.
    Output: the claim nodes, the plans and the verdicts, in claim order.
    """
    plans = [
        _plan_claim(graph, claim_node, vector)
        for claim_node, vector in zip(claim_nodes, vectors, strict=True)
    ]
    verdicts = [orchestrator.decide_claim(graph, plan) for plan in plans]
    timed = [
        replace(node, timescale=verdict.timescale) if verdict.timescale else node
        for node, verdict in zip(claim_nodes, verdicts, strict=True)
    ]
    return timed, plans, verdicts


def _write_claims(
    graph: GraphEngine,
    episode: Node,
    claim_nodes: Sequence[Node],
    vectors: Sequence[list[float]],
    plans: Sequence[Mapping[str, Any]],
    verdicts: Sequence[orchestrator.Decision],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every claim written in order, inside the caller's transaction: the verdict
    recorded (`orchestrator.record`), then `_reinforce` or `_expand`.  Output: the
    claims' result rows and the contradiction records of the new ones."""
    store = graph.store
    records: list[dict[str, Any]] = []
    results = []
    for claim_node, vector, plan, verdict in zip(
        claim_nodes, vectors, plans, verdicts, strict=True
    ):
        orchestrator.record(store, plan["reinforce"] or claim_node.id, verdict, episode.created_at)
        if plan["reinforce"] is not None and verdict.decision == "reinforce":
            results.append(_reinforce(store, episode, claim_node, plan, verdict))
            continue
        result, found = _expand(graph, episode, claim_node, vector, plan, verdict)
        records.extend(found)
        results.append(result)
    return results, records


def _reinforce(
    store: Store,
    episode: Node,
    claim_node: Node,
    plan: Mapping[str, Any],
    verdict: orchestrator.Decision,
) -> dict[str, Any]:
    """Confidence: a claim that repeats a live node (≥ 0.95 similar, no contradiction cue)
    raises that node's confidence instead of being stored.

    Rule: c' = bounded_step(c, +0.1) and a ``related`` edge episode → node marked
    reinforced.  Reason: a repetition is not new evidence, so half the learning rate
    (REINFORCE_STEP); the edge is deliberately not a support edge, so forgetting the
    episode never cascades into older knowledge.  Output: the claim's result row.
    """
    now = episode.created_at
    target = store.get_node(plan["reinforce"])
    assert target is not None
    store.update_node(
        target.id,
        confidence=bounded_step(target.confidence, REINFORCE_STEP),
        updated_at=now,
    )
    link(store, episode.id, target.id, "related", now, metadata={"reinforced": True})
    return {
        "claim": claim_node.content,
        "action": "reinforced",
        "node_id": target.id,
        "similarity": plan["similarity"],
        "related": [],
        "contradicts": [],
        "orchestrator": verdict.to_dict(),
    }


def _expand(
    graph: GraphEngine,
    episode: Node,
    claim_node: Node,
    vector: list[float],
    plan: Mapping[str, Any],
    verdict: orchestrator.Decision,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Expansion: a new claim becomes a node linked to what it came from and resembles.

    Rule: the claim node, a ``derived_from`` edge to the episode, ``related`` edges to
    up to 3 nearest live nodes ≥ 0.5 similar, and mutual ``contradicts`` edges to the
    nodes it contradicts (belief expansion, `beliefs._store_contradictions`).  Reason:
    provenance makes the claim erasable with its episode, the related links make it
    reachable from its neighbours, and a contradiction is kept, never resolved
    silently.  Output: the claim's result row and the contradiction records (the
    caller notifies the hooks after commit).
    """
    store = graph.store
    now = episode.created_at
    insert_node(graph, claim_node, vector)
    link(store, claim_node.id, episode.id, "derived_from", now)
    for other_id in plan["related"]:
        link(store, claim_node.id, other_id, "related", now)
    found = beliefs._store_contradictions(
        store, claim_node.id, plan["contradictions"], [], "interaction", now
    )
    result = {
        "claim": claim_node.content,
        "action": "created",
        "node_id": claim_node.id,
        "similarity": plan["similarity"],
        "related": plan["related"],
        "contradicts": [r["conflicting_node_id"] for r in found],
        "orchestrator": verdict.to_dict(),
    }
    return result, found


def _plan_claim(graph: GraphEngine, claim: Node, vector: Sequence[float]) -> dict[str, Any]:
    """Decide (before writing) whether a claim reinforces a node or is stored, and its links."""
    hits = graph.vector_index().search(
        vector, max(RELATED_LINKS_PER_CLAIM, beliefs.CONTRADICTION_CANDIDATES)
    )
    best_id, best = hits[0] if hits else (None, 0.0)
    contradictions = beliefs.find_contradictions(graph, claim.content, vector, hits=hits)
    conflicting = {c["node_id"] for c in contradictions}
    reinforce = (
        best_id
        if best_id is not None and best >= REINFORCE_SIMILARITY and best_id not in conflicting
        else None
    )
    related = [
        node_id
        for node_id, score in hits[:RELATED_LINKS_PER_CLAIM]
        if score >= RELATED_LINK_SIMILARITY and node_id not in conflicting
    ]
    return {
        "reinforce": reinforce,
        "similarity": round(best, DIGITS),
        "related": related,
        "contradictions": contradictions,
    }
