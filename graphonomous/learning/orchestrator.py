"""The Orchestrator: seed 003's "Should we learn this?" — stability vs plasticity, and a timescale.

Rules of this file: `decide` is a pure function of the facts a caller already
has about a candidate piece of knowledge (how new it is, what it contradicts);
`record` writes one ``audit_log`` row per decision (action
`AUDIT_ACTION`) inside the caller's transaction; `plasticity_metrics` reads
them back for ``graphonomous://consolidation/log``.

The decision (per candidate):

- **interference** = max over contradicted live nodes of
  similarity × confidence, counting only nodes with confidence ≥
  `HIGH_CONFIDENCE` (established knowledge); 0 when it contradicts nothing
  established.
- **novelty** = 1 − similarity of the nearest live node.
- ``hold`` when interference ≥ `HOLD_INTERFERENCE` (stability wins: the
  candidate is kept only as a fast-decaying hypothesis, timescale ``fast``,
  and must be confirmed before it can displace what is known);
- else ``reinforce`` when novelty ≤ `REINFORCE_MAX_NOVELTY` (it restates a
  known node: strengthen that node, store nothing new);
- else ``learn`` (plasticity): timescale ``medium`` when a related live node
  is at least `CONTEXT_SIMILARITY` similar (it extends known context), else
  ``fast`` (an isolated novelty must earn its place by being reinforced).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from ..model import TIMESCALES, check_int
from ..store import Store
from .thresholds import RELATED_SIMILARITY, SAME_KNOWLEDGE_SIMILARITY

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

DECISIONS: Final = ("learn", "reinforce", "hold")
HIGH_CONFIDENCE: Final = 0.7
"""Knowledge at or above this confidence counts as established (seed 004's default node
confidence is 0.5; outcomes and reinforcement push trusted knowledge above 0.7)."""
HOLD_INTERFERENCE: Final = 0.5
"""similarity × confidence of a contradicted established node: 0.6 similar × 0.85 sure = 0.51."""
REINFORCE_MAX_NOVELTY: Final = round(1.0 - SAME_KNOWLEDGE_SIMILARITY, 12)
"""1 − the learner's reinforce similarity (0.95, seed 003's merge threshold)."""
CONTEXT_SIMILARITY: Final = RELATED_SIMILARITY
"""The learner's related-link similarity: a claim this close to a node extends its context."""
AUDIT_ACTION: Final = "orchestrator_decision"
DEFAULT_WINDOW_HOURS: Final = 24
DIGITS: Final = 6


@dataclass(frozen=True)
class Decision:
    """One orchestrator verdict."""

    decision: str
    timescale: str | None  # None for reinforce (nothing is stored)
    novelty: float
    interference: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "timescale": self.timescale,
            "novelty": round(self.novelty, DIGITS),
            "interference": round(self.interference, DIGITS),
            "reason": self.reason,
        }


def decide(
    nearest_similarity: float,
    contradicted: Sequence[tuple[float, float]],
    *,
    reinforce_allowed: bool = True,
) -> Decision:
    """The verdict for a candidate (module docstring).

    `nearest_similarity`: cosine to the nearest live node (0 on an empty graph);
    `contradicted`: (similarity, confidence) of each live node it contradicts;
    `reinforce_allowed`: False when the nearest node is one it contradicts.  O(len(contradicted)).
    """
    novelty = 1.0 - max(0.0, min(1.0, nearest_similarity))
    interference = max((s * c for s, c in contradicted if c >= HIGH_CONFIDENCE), default=0.0)
    if interference >= HOLD_INTERFERENCE:
        return Decision("hold", "fast", novelty, interference, "contradicts established knowledge")
    if reinforce_allowed and novelty <= REINFORCE_MAX_NOVELTY:
        return Decision("reinforce", None, novelty, interference, "restates a known node")
    if nearest_similarity >= CONTEXT_SIMILARITY:
        return Decision("learn", "medium", novelty, interference, "extends known context")
    return Decision("learn", "fast", novelty, interference, "isolated novelty")


def decide_claim(graph: GraphEngine, plan: Mapping[str, Any]) -> Decision:
    """`decide` for one of the learner's claim plans ({similarity, reinforce, contradictions})."""
    found = plan.get("contradictions") or []
    nodes = graph.store.get_nodes([c["node_id"] for c in found])
    contradicted = [
        (float(c["similarity"]), nodes[c["node_id"]].confidence)
        for c in found
        if c["node_id"] in nodes
    ]
    return decide(
        float(plan.get("similarity", 0.0)),
        contradicted,
        reinforce_allowed=plan.get("reinforce") is not None,
    )


def record(store: Store, subject_id: str | None, decision: Decision, now: str) -> None:
    """Append the decision to the audit log (inside the caller's transaction).  O(1)."""
    store.audit(now, AUDIT_ACTION, subject_id, decision.to_dict())


def plasticity_metrics(
    graph: GraphEngine, window_hours: int = DEFAULT_WINDOW_HOURS
) -> dict[str, Any]:
    """Stability–plasticity figures over the last `window_hours` (consolidation log resource).

    ``{"window_hours", "decisions": {learn, reinforce, hold}, "decision_count",
    "learning_rate" (learn share of decisions, 0 without any), "stability_rate"
    (reinforce + hold share), "mean_novelty", "mean_interference", "nodes_created",
    "nodes_forgotten", "live_nodes", "churn" ((created + forgotten) / max(1, live)),
    "timescales": {fast, medium, slow, glacial} (live nodes)}``.  O(rows in the window).
    """
    check_int("window_hours", window_hours, 1, 24 * 365)
    since = (
        (graph.clock.now() - timedelta(hours=window_hours))
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )
    with graph.lock:
        store = graph.store
        rows = store.query(
            "SELECT details FROM audit_log WHERE action = ? AND at >= ? AND namespace = ? "
            "ORDER BY seq",
            (AUDIT_ACTION, since, store.namespace),
        )
        created = store.nodes_created_since(since)
        forgotten = store.nodes_forgotten_since(since)
        live = store.count_nodes()
        by_timescale = store.grouped_counts("nodes", "timescale", live_only=True)
    details = [json.loads(row[0]) for row in rows]
    counts = {d: sum(1 for x in details if x.get("decision") == d) for d in DECISIONS}
    total = sum(counts.values())

    def mean(key: str) -> float:
        values = [float(x.get(key, 0.0)) for x in details]
        return round(sum(values) / len(values), DIGITS) if values else 0.0

    return {
        "window_hours": window_hours,
        "decisions": counts,
        "decision_count": total,
        "learning_rate": round(counts["learn"] / total, DIGITS) if total else 0.0,
        "stability_rate": round((counts["reinforce"] + counts["hold"]) / total, DIGITS)
        if total
        else 0.0,
        "mean_novelty": mean("novelty"),
        "mean_interference": mean("interference"),
        "nodes_created": created,
        "nodes_forgotten": forgotten,
        "live_nodes": live,
        "churn": round((created + forgotten) / max(1, live), DIGITS),
        "timescales": {t: by_timescale.get(t, 0) for t in TIMESCALES},
    }
