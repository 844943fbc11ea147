"""Category 4 — two-phase retrieval (seed 004, GraphMemBench Phase 1): 8 scenarios.

Phase 1 ranks by similarity × confidence; phase 2 blends in the Q-value that
``learn_from_outcome`` maintains: score = (1 − α)·score + α·q with α = 0.3,
only once some candidate has an outcome (q_update_count > 0).
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import TYPE_CHECKING

from ..learning.outcomes import Q_LEARNING_RATE
from ..model import format_time, parse_time
from ..retrieval import RetrievalSettings
from ..retrieval.settings import UTILITY_WEIGHT
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 4
QUERY = "how do I reset the hydraulic valve"
PROCEDURES = (
    "To reset the hydraulic valve, close the intake and flush the line",
    "Reset the hydraulic valve by cycling power to the controller",
    "Hydraulic valve reset: replace the pressure sensor first",
    "The hydraulic valve resets itself after ten minutes",
    "Reset procedure for the hydraulic valve: open the bypass, then recalibrate",
    "A hydraulic valve reset requires two technicians on site",
    "Hydraulic valve faults are logged under code E-47",
    "Resetting the valve clears the hydraulic alarm",
)
SCORE_TOLERANCE = 1e-5
NDCG_K = 5
CYCLES = 5


def _procedures(graph: Graphonomous) -> list[str]:
    return [graph.store_node(text, "procedural")["node"]["id"] for text in PROCEDURES]


def _ranking(graph: Graphonomous, settings: RetrievalSettings | None = None) -> list[str]:
    """Procedural results only (outcome nodes created by learning are not candidates here)."""
    result = graph.retrieve_context(
        QUERY, limit=len(PROCEDURES), expansion_hops=0, node_type="procedural", settings=settings
    )
    return [r["node_id"] for r in result["results"]]


def _scores(graph: Graphonomous, settings: RetrievalSettings | None = None) -> dict[str, float]:
    result = graph.retrieve_context(
        QUERY, limit=len(PROCEDURES), expansion_hops=0, node_type="procedural", settings=settings
    )
    return {r["node_id"]: float(r["score"]) for r in result["results"]}


@scenario(CATEGORY, "Q-value updates from successful outcome increase ranking")
def success_raises_rank(graph: Graphonomous) -> tuple[bool, str]:
    ids = _procedures(graph)
    before = _ranking(graph)
    target = before[-1]
    for i in range(3):
        graph.learn_from_outcome(f"reset-{i}", "success", 0.9, [target])
    after = _ranking(graph)
    ok = after.index(target) < before.index(target)
    return ok, f"rank {before.index(target) + 1} → {after.index(target) + 1} of {len(ids)}"


@scenario(CATEGORY, "Q-value updates from failed outcome decrease ranking")
def failure_lowers_rank(graph: Graphonomous) -> tuple[bool, str]:
    _procedures(graph)
    before = _ranking(graph)
    target = before[0]
    for i in range(3):
        graph.learn_from_outcome(f"reset-{i}", "failure", 0.9, [target])
    after = _ranking(graph)
    ok = after.index(target) > before.index(target)
    return ok, f"rank {before.index(target) + 1} → {after.index(target) + 1}"


@scenario(CATEGORY, "No Q-value effect when q_update_count == 0 for all candidates")
def no_outcomes_no_effect(graph: Graphonomous) -> tuple[bool, str]:
    ids = _procedures(graph)
    before = _scores(graph)
    # Q-values without any outcome behind them (q_update_count stays 0) must be ignored.
    for i, node_id in enumerate(ids):
        graph.store.update_node(node_id, q_value=1.0 if i % 2 else 0.0)
    result = graph.retrieve_context(QUERY, limit=len(ids), expansion_hops=0, node_type="procedural")
    after = {r["node_id"]: float(r["score"]) for r in result["results"]}
    ok = after == before and result["stats"]["utility_rerank"] is False
    return ok, f"scores unchanged: {after == before}, rerank {result['stats']['utility_rerank']}"


@scenario(CATEGORY, "Blended scoring with alpha=0.3")
def blended_alpha(graph: Graphonomous) -> tuple[bool, str]:
    ids = _procedures(graph)
    graph.learn_from_outcome("reset-1", "success", 0.9, [ids[2]])
    phase_one = _scores(graph, RetrievalSettings(utility_weight=0.0))
    blended = _scores(graph)
    q_values = {node_id: graph.get_node(node_id)["node"]["q_value"] for node_id in ids}
    worst = max(
        abs(blended[n] - ((1 - UTILITY_WEIGHT) * phase_one[n] + UTILITY_WEIGHT * q_values[n]))
        for n in blended
        if n in phase_one
    )
    ok = UTILITY_WEIGHT == 0.3 and worst < SCORE_TOLERANCE and len(blended) == len(ids)
    return ok, f"alpha {UTILITY_WEIGHT}, max |score − (0.7·s + 0.3·q)| = {worst:.2e}"


@scenario(CATEGORY, "Q-value decay is half confidence decay rate")
def q_decay_half(graph: Graphonomous) -> tuple[bool, str]:
    from ..learning.consolidator import run_consolidation

    node = graph.store_node("Flush the hydraulic line weekly", "procedural", decay_rate=0.1)
    node_id = node["node"]["id"]
    graph.learn_from_outcome("flush-1", "success", 1.0, [node_id])
    # Reinforced half a day ago: decay runs from the retention anchor, and an anchor
    # within one millisecond of the run decays by nothing (the clock's resolution).
    stamp = format_time(parse_time(node["node"]["created_at"]) - timedelta(hours=12))
    graph.store.update_node(node_id, created_at=stamp, updated_at=stamp, reinforced_at=stamp)
    before = graph.get_node(node_id)["node"]
    run_consolidation(graph.engine)
    after = graph.get_node(node_id)["node"]
    # Decay is exponential: compare the exponents λ·t, not the fractions lost.
    confidence_rate = -math.log(after["confidence"] / before["confidence"])
    q_rate = -math.log(after["q_value"] / before["q_value"])
    ok = confidence_rate > 0 and abs(q_rate - confidence_rate / 2) < 1e-9
    return ok, f"decay exponent λ·t: confidence {confidence_rate:.4f}, q {q_rate:.4f}"


@scenario(CATEGORY, "High-confidence but low-utility node ranks below high-utility node")
def utility_beats_confidence(graph: Graphonomous) -> tuple[bool, str]:
    confident = graph.store_node(PROCEDURES[0], "procedural", confidence=0.95)["node"]["id"]
    useful = graph.store_node(PROCEDURES[1], "procedural", confidence=0.7)["node"]["id"]
    # Low-confidence evidence barely moves confidence; Q learns from every outcome.
    for i in range(5):
        graph.learn_from_outcome(f"try-a{i}", "failure", 0.1, [confident])
        graph.learn_from_outcome(f"try-b{i}", "success", 0.1, [useful])
    nodes = {n: graph.get_node(n)["node"] for n in (confident, useful)}
    ranking = _ranking(graph)
    ok = (
        nodes[confident]["confidence"] > nodes[useful]["confidence"]
        and nodes[confident]["q_value"] < nodes[useful]["q_value"]
        and ranking.index(useful) < ranking.index(confident)
    )
    return ok, (
        f"confident: c={nodes[confident]['confidence']:.2f} q={nodes[confident]['q_value']:.2f}; "
        f"useful: c={nodes[useful]['confidence']:.2f} q={nodes[useful]['q_value']:.2f}; "
        f"useful ranks {ranking.index(useful) + 1}, confident {ranking.index(confident) + 1}"
    )


@scenario(CATEGORY, "Retrieve same query before and after outcome learning → rank change")
def rank_changes(graph: Graphonomous) -> tuple[bool, str]:
    ids = _procedures(graph)
    before = _ranking(graph)
    graph.learn_from_outcome("reset-a", "success", 0.9, [before[-1]])
    graph.learn_from_outcome("reset-b", "failure", 0.9, [before[0]])
    after = _ranking(graph)
    moved = sum(1 for a, b in zip(before, after, strict=True) if a != b)
    q_last = graph.get_node(before[-1])["node"]["q_value"]
    ok = after != before and abs(q_last - (0.5 + Q_LEARNING_RATE * 0.5)) < 1e-9
    return ok, f"{moved} of {len(ids)} positions changed"


def _ndcg(ranking: list[str], relevant: set[str], k: int = NDCG_K) -> float:
    gain = sum(1 / math.log2(i + 2) for i, node in enumerate(ranking[:k]) if node in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return gain / ideal


@scenario(CATEGORY, "nDCG improvement after 5 outcome cycles")
def ndcg_improves(graph: Graphonomous) -> tuple[bool, str]:
    ids = _procedures(graph)
    relevant = {ids[4], ids[6]}  # the procedures that actually work (hidden from ranking)
    start = _ndcg(_ranking(graph), relevant)
    for cycle in range(CYCLES):
        for node_id in _ranking(graph)[:NDCG_K]:
            status = "success" if node_id in relevant else "failure"
            graph.learn_from_outcome(f"cycle{cycle}-{node_id}", status, 0.8, [node_id])
    end = _ndcg(_ranking(graph), relevant)
    return end > start, f"nDCG@{NDCG_K} {start:.3f} → {end:.3f} after {CYCLES} cycles"
