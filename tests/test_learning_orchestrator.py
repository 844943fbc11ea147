"""The Orchestrator: stability vs plasticity (learn / reinforce / hold) and timescale assignment."""

from __future__ import annotations

from graphonomous import Graphonomous
from graphonomous.learning.orchestrator import (
    HIGH_CONFIDENCE,
    HOLD_INTERFERENCE,
    decide,
)


def test_decision_rule() -> None:
    assert decide(0.2, []).to_dict()["decision"] == "learn"
    assert decide(0.2, []).timescale == "fast"  # isolated novelty
    assert decide(0.6, []).timescale == "medium"  # extends known context
    assert decide(0.97, []).decision == "reinforce"
    assert decide(0.97, [], reinforce_allowed=False).decision == "learn"
    held = decide(0.7, [(0.8, 0.9)])
    assert held.decision == "hold" and held.timescale == "fast"
    assert held.interference >= HOLD_INTERFERENCE
    # Contradicting a doubtful node is plasticity, not interference.
    assert decide(0.7, [(0.9, HIGH_CONFIDENCE - 0.01)]).decision == "learn"


def test_interaction_claims_get_orchestrated(graph: Graphonomous) -> None:
    graph.store_node("The backup job starts at 02:00 every night", confidence=0.95)
    out = graph.learn_from_interaction(
        "When does the backup run?",
        "The backup job starts at 04:00 every night. Zebras graze on the savanna plains.",
    )
    by_claim = {c["claim"]: c for c in out["claims"]}
    held = by_claim["The backup job starts at 04:00 every night."]
    assert held["orchestrator"]["decision"] == "hold" and held["contradicts"]
    assert graph.get_node(held["node_id"])["node"]["timescale"] == "fast"
    novel = by_claim["Zebras graze on the savanna plains."]
    assert novel["orchestrator"]["decision"] == "learn"
    metrics = graph.plasticity_metrics()
    assert metrics["decisions"] == {"learn": 1, "reinforce": 0, "hold": 1}
    assert metrics["learning_rate"] == 0.5 and metrics["stability_rate"] == 0.5
    assert metrics["nodes_created"] == 4 and metrics["churn"] == 1.0
    assert metrics["timescales"]["fast"] >= 2


def test_restated_knowledge_is_reinforced(graph: Graphonomous) -> None:
    node = graph.store_node("Seal wear causes leaks in valve V-12", confidence=0.5)["node"]
    out = graph.learn_from_interaction("Why?", "Seal wear causes leaks in valve V-12.")
    (claim,) = out["claims"]
    assert claim["action"] == "reinforced" and claim["orchestrator"]["decision"] == "reinforce"
    assert claim["node_id"] == node["id"]
    assert graph.plasticity_metrics()["decisions"]["reinforce"] == 1
