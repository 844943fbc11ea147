"""Consolidation stages 4.5 (conflict resolution) and 5 (merging near-duplicates).

Both work on `NearPair`s: a node changed since the previous run and one of its
nearest neighbours of the same node type and agent (see `similarity`).

A pair is a **duplicate** when its similarity is >= the merge threshold and
the belief module finds no contradiction cue between the two texts (a
different number, a negation, an antonym, a swapped name, an update word):
"starts at 02:00" and "starts at 04:00" score 0.96 with the hashing embedder
but are two different claims, not one claim stored twice.

**Conflicts** (seed 004 stage 4.5): a pair that is not a duplicate, with
similarity >= the conflict threshold (the two statements talk about the same
thing) and confidences at least the configured gap apart.  The configured
strategies are tried in order and the first that decides names a winner:

- ``evidence`` — the node with more evidence (``evidence_count``, counted by
  outcomes) wins; undecided on a tie;
- ``recency`` — the newer node (``created_at``) wins; undecided when they
  were created less than ``recency_min_gap_s`` apart;
- ``confidence`` — the more confident node wins (off by default: the
  divergence that defines a conflict would always decide it).

A decided conflict is a belief revision: winner ``supersedes`` loser,
``loser.superseded_by = winner``, the loser's confidence × the belief
module's revision factor, propagated to its dependants, and a ``revisions``
row.  A protected loser is never superseded: the conflict stays unresolved.
Unresolved conflicts get mutual ``contradicts`` edges (a 2-cycle: κ = 1, so
retrieval routes the region to deliberation) and an open attention item.

**Merges** (seed 003 stage 5): a duplicate pair is folded together: the older
node (``created_at``, then id) survives and absorbs the other
(`store.merge_into`: edges, provenance, max confidence, summed counts).
Never merged: protected nodes, superseded nodes, and pairs linked by
``contradicts``/``supersedes``/``superseded_by``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from ..embed import exact_score
from ..model import JUDGEMENT_RELATIONSHIPS, Node, parse_time
from ..store import Store, merge_into
from . import tables
from .beliefs import (
    add_contradiction_edges,
    supersede,
)
from .cues import contradiction_cues
from .similarity import NearPair

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine
    from .consolidation_config import ConsolidationConfig

# Relationships that mean "these two were already judged against each other".
JUDGED_RELATIONSHIPS: Final = JUDGEMENT_RELATIONSHIPS
CONTRADICTION_ITEM: Final = "contradiction"
RESOLVE_OPERATION: Final = "consolidation_resolve"
ID_SAMPLE: Final = 50
SIMILARITY_DIGITS: Final = 6
EPISODE_TYPE: Final = "episodic"  # a member of model.NODE_TYPES; never merged (stage 5)


def decide(
    first: Node, second: Node, strategies: Sequence[str], recency_min_gap_s: float
) -> tuple[Node, Node, str] | None:
    """``(winner, loser, strategy)`` by the first strategy that decides, else None.  O(1)."""
    for strategy in strategies:
        if strategy == "evidence" and first.evidence_count != second.evidence_count:
            winner = first if first.evidence_count > second.evidence_count else second
        elif strategy == "recency":
            gap = parse_time(first.created_at) - parse_time(second.created_at)
            if abs(gap) < timedelta(seconds=recency_min_gap_s):
                continue
            winner = first if gap > timedelta(0) else second
        elif strategy == "confidence" and first.confidence != second.confidence:
            winner = first if first.confidence > second.confidence else second
        else:
            continue
        return winner, (second if winner is first else first), strategy
    return None


def is_duplicate(similarity: float, first: Node, second: Node, merge_threshold: float) -> bool:
    """Similar enough to merge and no contradiction cue between the texts.  O(text)."""
    return similarity >= merge_threshold and not contradiction_cues(first.content, second.content)


def is_conflict(similarity: float, first: Node, second: Node, config: ConsolidationConfig) -> bool:
    """The stage 4.5 test (module docstring).  O(text).

    Two episodes are never a conflict: they are two events, both true (as stage 5
    never merges them).  The gap is between what was *learned* of each
    (`base_confidence`, the retention anchor), not between their decayed values:
    an older statement that time has faded does not disagree with a newer one."""
    if first.node_type == EPISODE_TYPE or second.node_type == EPISODE_TYPE:
        return False
    gap = abs(_learned(first) - _learned(second))
    return (
        similarity >= config.conflict_similarity_threshold
        and gap >= config.conflict_confidence_gap
        and not is_duplicate(similarity, first, second, config.merge_similarity_threshold)
    )


def _learned(node: Node) -> float:
    return node.confidence if node.base_confidence is None else node.base_confidence


def judged(store: Store, a: str, b: str) -> bool:
    """Whether a contradicts / supersedes / superseded_by edge links a and b.  O(degree(a))."""
    return any(
        edge.relationship in JUDGED_RELATIONSHIPS and {edge.source_id, edge.target_id} == {a, b}
        for edge in store.edges_of(a, "both")
    )


def _live_pair(store: Store, pair: NearPair) -> tuple[Node, Node] | None:
    nodes = store.get_nodes([pair.a, pair.b])
    first, second = nodes.get(pair.a), nodes.get(pair.b)
    if first is None or second is None:
        return None
    for node in (first, second):
        if node.forgotten_at is not None or node.superseded_by is not None:
            return None
    return first, second


def resolve_conflicts(
    store: Store,
    pairs: Iterable[NearPair],
    config: ConsolidationConfig,
    now: str,
    protected: set[str],
) -> dict[str, Any]:
    """Stage 4.5 over `pairs` (module docstring), inside the run's transaction.

    Pairs are taken in order (similarity descending); a node superseded
    earlier in the same run is skipped.  Output: counts, per-strategy counts,
    attention items opened, sampled pair reports.  Complexity: O(pairs ×
    degree) store reads plus the retraction of each loser.
    """
    resolved: list[dict[str, Any]] = []
    unresolved: list[dict[str, Any]] = []
    by_strategy: dict[str, int] = {}
    examined = items = 0
    for pair in pairs:
        if pair.similarity < config.conflict_similarity_threshold:
            continue
        nodes = _live_pair(store, pair)
        if nodes is None:
            continue
        first, second = nodes
        if not is_conflict(pair.similarity, first, second, config):
            continue
        if judged(store, pair.a, pair.b):
            continue
        examined += 1
        verdict = decide(first, second, config.conflict_strategies, config.recency_min_gap_s)
        similarity = round(pair.similarity, SIMILARITY_DIGITS)
        if verdict is not None and verdict[1].id not in protected:
            winner, loser, strategy = verdict
            _supersede(store, winner, loser, strategy, similarity, now)
            by_strategy[strategy] = by_strategy.get(strategy, 0) + 1
            resolved.append(
                {
                    "winner": winner.id,
                    "loser": loser.id,
                    "strategy": strategy,
                    "similarity": similarity,
                }
            )
            continue
        reason = "no strategy decided" if verdict is None else "the loser is protected"
        detail = {"source": "consolidation", "similarity": similarity}
        add_contradiction_edges(store, pair.a, pair.b, now, strength=similarity, detail=detail)
        _, created = tables.open_attention_item(
            store,
            CONTRADICTION_ITEM,
            "warning",
            [pair.a, pair.b],
            {
                "similarity": similarity,
                "confidences": {first.id: first.confidence, second.id: second.confidence},
                "reason": reason,
                "opened_by": "consolidation",
            },
            now,
        )
        items += int(created)
        unresolved.append(
            {"node_ids": [pair.a, pair.b], "similarity": similarity, "reason": reason}
        )
    return {
        "conflicts": examined,
        "resolved": len(resolved),
        "unresolved": len(unresolved),
        "by_strategy": dict(sorted(by_strategy.items())),
        "attention_items_opened": items,
        "resolutions": resolved[:ID_SAMPLE],
        "contradictions": unresolved[:ID_SAMPLE],
    }


def _supersede(
    store: Store, winner: Node, loser: Node, strategy: str, similarity: float, now: str
) -> None:
    """Winner supersedes loser (`beliefs.supersede`), recorded as a revision."""
    after, propagated = supersede(store, winner.id, loser, now)
    tables.record_revision(
        store,
        RESOLVE_OPERATION,
        loser.id,
        winner.id,
        f"conflict resolved by {strategy}",
        {
            "strategy": strategy,
            "similarity": similarity,
            "confidence_before": loser.confidence,
            "confidence_after": after,
            "propagated": len(propagated),
        },
        now,
    )


def merge_duplicates(
    store: Store,
    pairs: Iterable[NearPair],
    config: ConsolidationConfig,
    now: str,
    protected: set[str],
) -> dict[str, Any]:
    """Stage 5 over `pairs` (module docstring), inside the run's transaction.

    Pairs in order (similarity descending); a node merged away earlier in
    the run is skipped (its survivor is re-examined next run: merging
    updates it).  Output: counts and sampled merges.  Complexity: O(pairs ×
    degree) for the checks plus `merge_into` per merge.
    """
    merged: list[dict[str, Any]] = []
    skipped = {"protected": 0, "judged": 0, "cues": 0, "episodes": 0}
    for pair in pairs:
        if pair.similarity < config.merge_similarity_threshold:
            continue
        nodes = _live_pair(store, pair)
        if nodes is None:
            continue
        if all(node.node_type == EPISODE_TYPE for node in nodes):
            # Two episodes are two events, however alike their words ("Thanks!" in
            # two sessions): merging would lose one; consolidation abstracts them.
            skipped["episodes"] += 1
            continue
        if not is_duplicate(pair.similarity, *nodes, config.merge_similarity_threshold):
            skipped["cues"] += 1
            continue
        if pair.a in protected or pair.b in protected:
            skipped["protected"] += 1
            continue
        if judged(store, pair.a, pair.b):
            skipped["judged"] += 1
            continue
        keep, other = sorted(nodes, key=lambda node: (node.created_at, node.id))
        merge_into(store, keep.id, [other.id], now)
        merged.append(
            {
                "kept": keep.id,
                "merged": other.id,
                "similarity": round(pair.similarity, SIMILARITY_DIGITS),
            }
        )
    return {
        "nodes_merged": len(merged),
        "skipped_protected": skipped["protected"],
        "skipped_judged": skipped["judged"],
        "skipped_contradiction_cues": skipped["cues"],
        "skipped_episodes": skipped["episodes"],
        "merges": merged[:ID_SAMPLE],
    }


def find_conflicts(
    nodes: Sequence[Node],
    vectors: dict[str, list[float]],
    config: ConsolidationConfig,
) -> list[dict[str, Any]]:
    """Conflict pairs among a small set of nodes (e.g. one retrieval's results).

    Same test as stage 4.5 without the store checks: same node type and
    agent, and `is_conflict`.  Output: ``[{"node_ids": [a, b],
    "similarity", "confidence_gap"}]`` by similarity descending, then ids.
    Complexity: O(n² · d) for n nodes.
    """
    found: list[dict[str, Any]] = []
    ordered = sorted(nodes, key=lambda node: node.id)
    for i, first in enumerate(ordered):
        for second in ordered[i + 1 :]:
            if (first.node_type, first.agent_id) != (second.node_type, second.agent_id):
                continue
            u, v = vectors.get(first.id), vectors.get(second.id)
            if u is None or v is None:
                continue
            similarity = exact_score(u, v)
            gap = abs(first.confidence - second.confidence)
            if is_conflict(similarity, first, second, config):
                found.append(
                    {
                        "node_ids": [first.id, second.id],
                        "similarity": round(similarity, SIMILARITY_DIGITS),
                        "confidence_gap": round(gap, SIMILARITY_DIGITS),
                    }
                )
    found.sort(key=lambda item: (-item["similarity"], item["node_ids"]))
    return found


def conflicts_among(
    graph: GraphEngine, node_ids: Sequence[str], config: ConsolidationConfig
) -> list[dict[str, Any]]:
    """`find_conflicts` over stored nodes (e.g. the results of one retrieval).

    Live, non-superseded nodes only; vectors from the index.  Same output.
    """
    with graph.lock:
        nodes = [
            node
            for node in graph.store.get_nodes(node_ids).values()
            if node.forgotten_at is None and node.superseded_by is None
        ]
        index = graph.vector_index()
        vectors = {node.id: v for node in nodes if (v := index.get(node.id)) is not None}
    return find_conflicts(nodes, vectors, config)
