"""The sleep-cycle consolidator: one pass of decay, pruning, strengthening and tidying.

`run_consolidation` runs these stages in order (seed 003's pipeline, plus
seed 004's conflict stage 4.5 and forgetting policy); each reports counts
and its duration in ms:

1. **decay** — each node's confidence and Q-value recomputed from its
   retention anchor by the time since it was last reinforced (``retention``:
   seed 003's TTL per timescale); edges by the time since the previous run,
   never below the edge prune threshold.
2. **prune_nodes** — when the live node count exceeds max_nodes, the
   forgetting module's hybrid policy; otherwise *soft*-forget (fade) nodes
   whose confidence is below `min_confidence_threshold`, audited with the
   reason and the rule.  Time alone never deletes a node.
3. **prune_edges** — delete edges weaker than `min_edge_strength_threshold`
   (only a learned weakening puts an edge there: decay floors at it).
4. **strengthen** — each co-activation since the previous run (two nodes
   used together in a rewarded outcome) closes `coactivation_gain` of the
   gap between an edge's strength and 1.
4.5 **resolve_conflicts** and 5 **merge** — pairs of near-identical nodes,
   found from the nodes changed since the previous run (`conflicts`).
6. **promote** — move nodes up one timescale when accessed often for their age.
7. **abstract** — summarise clusters of related episodes (`abstraction`).

*Protected* nodes — node type goal, timescale glacial, pinned, or backed by
an ingested file (``retention``) — are never decayed, pruned, merged,
superseded or promoted, and their edges never decay or get pruned.  The
node budget counts only what ``retention.budget_count`` counts.  A whole
run (every stage and its log entry) is ONE store transaction under the
facade lock: a crash leaves the graph as before the run.  A dry run
executes the same stages and rolls them back, so its counts are exactly
what a real run would do; only its log entry is kept.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..model import (
    DEFAULT_EDGE_DECAY_RATE,
    DEFAULT_EDGE_STRENGTH,
    TIMESCALES,
    ValidationError,
    check_choice,
    check_int,
    parse_time,
)
from ..store import Store
from ..store.queries import COUNTED_KEY
from . import erasure, retention, tables
from .abstraction import abstract_episodes
from .conflicts import merge_duplicates, resolve_conflicts
from .consolidation_config import DEFAULT_CONFIG, ConsolidationConfig
from .consolidation_config import with_config as with_config
from .forgetting import PROTECTION, forget_by_policy
from .retention import DAY_S, Q_DECAY_SHARE, SLOW_TTL_S, budget_count
from .similarity import NearPair, Watermark, changed_nodes, neighbour_pairs

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

CONSOLIDATION_TRIGGERS: Final = ("manual", "idle", "attention")


# Edges decay like a slow-tier fact (a relation between two pieces of knowledge
# should not fade before they do): an edge at the default strength and decay rate
# reaches the prune threshold after the slow tier's TTL unused — but time alone
# floors it there (`decay_edges`), so only a learned weakening prunes an edge.
EDGE_DECAY_PER_DAY: Final = math.log(
    DEFAULT_EDGE_STRENGTH / DEFAULT_CONFIG.min_edge_strength_threshold
) / (DEFAULT_EDGE_DECAY_RATE * SLOW_TTL_S / DAY_S)

# Promotion (seed 003: "when access_count exceeds a threshold relative to
# age"): from a tier to the next when access_count >= the minimum count AND
# access_count / max(age in days, 1) >= the minimum rate AND age >= the
# minimum age in days.  One tier per run.
PROMOTION_RULES: Final[Mapping[str, tuple[int, float, float]]] = {
    "fast": (3, 3.0, 0.0),  # reinforced 3 times within its first day
    "medium": (10, 1.0, 1.0),  # used about daily
    "slow": (50, 0.5, 30.0),  # a month of steady use: core knowledge
}
assert set(PROMOTION_RULES) | set(PROTECTION.timescales) == set(TIMESCALES)

LOG_LIMIT_MAX: Final = 1000
# Stage reports list at most this many affected ids (the counts are exact).
ID_SAMPLE: Final = 50
MS_DIGITS: Final = 3


@dataclass
class Run:
    """State shared by the stages of one run."""

    graph: GraphEngine
    config: ConsolidationConfig
    now: str
    since: str | None  # started_at of the previous (non-dry) run
    watermark: Watermark | None
    dry_run: bool
    pairs: list[NearPair] = field(default_factory=list)
    totals: dict[str, Any] = field(default_factory=dict)

    @property
    def store(self) -> Store:
        return self.graph.store


class _DryRun(Exception):
    """Raised at the end of a dry run to roll its transaction back."""


def protected_ids(store: Store) -> set[str]:
    """Ids of the protected nodes (usually few).  One query."""
    return store.protected_ids(PROTECTION)


# -- stage 1: decay -------------------------------------------------------------------


def elapsed_days(since: str | None, now: str) -> float:
    """Days between `since` and `now` (0 for None or a later `since`).  O(1)."""
    if since is None:
        return 0.0
    return max(0.0, (parse_time(now) - parse_time(since)).total_seconds() / DAY_S)


def _graph_began(store: Store) -> str | None:
    """Creation time of the oldest live node (None for an empty graph).  One query."""
    return store.oldest_live_creation()


def stage_decay(run: Run) -> dict[str, Any]:
    """Stage 1: confidence and Q from each node's retention anchor; edges by elapsed time.

    Nodes: ``retention`` (value = anchor value × exp(−λ · time since reinforced),
    recomputed, so the result depends on the clock, not on how often this runs).
    Edges: strength × exp(−`EDGE_DECAY_PER_DAY` × decay_rate × days since the
    previous run), floored at the edge prune threshold.  Output:
    ``{"nodes_decayed", "edges_decayed", "elapsed_days"}``.  Complexity: two
    UPDATE statements, O(N + E) rows.
    """
    nodes = run.store.decay_nodes(
        PROTECTION, retention.node_decay_per_day(), run.now, Q_DECAY_SHARE
    )
    days = elapsed_days(run.since or _graph_began(run.store), run.now)
    edges = run.store.decay_edges(
        PROTECTION, EDGE_DECAY_PER_DAY, days, run.config.min_edge_strength_threshold
    )
    return {"nodes_decayed": nodes, "edges_decayed": edges, "elapsed_days": round(days, 6)}


# -- stage 2: prune nodes ----------------------------------------------------------


def max_nodes_setting(run: Run) -> int:
    """The node budget: the config's, else the forgetting_config row (seed 004)."""
    if run.config.max_nodes is not None:
        return run.config.max_nodes
    return int(tables.read_forgetting_config(run.store)["max_nodes"])


def stage_prune_nodes(run: Run) -> dict[str, Any]:
    """Stage 2: hybrid forgetting over budget (seed 004), else the confidence threshold.

    Output: ``{"policy", "live_nodes", "budget_nodes", "max_nodes",
    "nodes_pruned", "node_ids", "forgotten", ...}`` — `forgotten` lists every
    id this stage forgot or deleted (`node_ids` the first ID_SAMPLE).  The
    budget is compared with `budget_nodes` (``retention.budget_count``).
    Complexity: one scan of the nodes, one cascading DELETE per pruned node
    (or the forgetting policy's O(V log V + E)).
    """
    live = run.store.count_nodes()
    counted = budget_count(run.store)
    limit = max_nodes_setting(run)
    if counted > limit:
        # The policy soft-forgets (recoverable).  It always applies: a dry run
        # rolls the whole run back, so its header and body agree.
        result = forget_by_policy(run.graph, "hybrid", max_nodes=limit, dry_run=False)
        chosen = [c["node_id"] for c in result["candidates"]]
        return {
            "policy": "hybrid",
            "live_nodes": live,
            "budget_nodes": counted,
            "max_nodes": limit,
            "nodes_pruned": len(chosen),
            "mode": result["mode"],
            "over_budget_protected": result["over_budget_protected"],
            "node_ids": chosen[:ID_SAMPLE],
            "forgotten": chosen,
        }
    faded = run.store.weak_unprotected_ids(PROTECTION, run.config.min_confidence_threshold)
    if faded:
        run.store.soft_forget(faded, run.now, retention.FADED_REASON)
        run.store.audit(
            run.now,
            "fade",
            None,
            {
                "reason": retention.FADED_REASON,
                "rule": f"confidence below {run.config.min_confidence_threshold} "
                "after decay since the last reinforcement (SPEC Retention)",
                "node_ids": faded,
            },
        )
    return {
        "policy": "threshold",
        "mode": "soft",
        "live_nodes": live,
        "budget_nodes": counted,
        "max_nodes": limit,
        "nodes_pruned": len(faded),
        "node_ids": faded[:ID_SAMPLE],
        "forgotten": faded,
    }


# -- stage 3: prune edges ------------------------------------------------------------


def stage_prune_edges(run: Run) -> dict[str, Any]:
    """Stage 3: delete weak edges.  Output ``{"edges_pruned"}``.  One DELETE, O(E)."""
    removed = run.store.delete_weak_edges(PROTECTION, run.config.min_edge_strength_threshold)
    return {"edges_pruned": removed}


# -- stage 4: strengthen --------------------------------------------------------------


def strengthened(strength: float, new_coactivations: int, gain: float) -> float:
    """1 − (1 − s)(1 − gain)^n: each co-activation closes `gain` of the gap to 1.  O(1)."""
    return 1.0 - (1.0 - strength) * (1.0 - gain) ** new_coactivations


def stage_strengthen(run: Run) -> dict[str, Any]:
    """Stage 4: boost edges co-activated since last counted (``metadata.co_activation_counted``).

    Output: ``{"edges_strengthened", "co_activations_counted"}``.  Complexity:
    one scan of the edges, one UPDATE per boosted edge.
    """
    updates = []
    boosts = 0
    for edge_id, strength, count, metadata_text in run.store.coactivated_edges():
        metadata = json.loads(metadata_text)
        fresh = int(count) - int(metadata.get(COUNTED_KEY, 0))
        metadata[COUNTED_KEY] = int(count)
        boosts += fresh
        new_strength = strengthened(float(strength), fresh, run.config.coactivation_gain)
        updates.append((new_strength, json.dumps(metadata, sort_keys=True), edge_id))
    run.store.set_edge_strengths(updates)
    return {"edges_strengthened": len(updates), "co_activations_counted": boosts}


# -- stage 4.5 and 5: near pairs -----------------------------------------------------------


def find_pairs(run: Run) -> dict[str, Any]:
    """Nearest neighbours of the nodes changed since the last run (see `similarity`)."""
    started = time.perf_counter()
    keys, pending = changed_nodes(run.store, run.watermark, run.config.similarity_budget)
    floor = min(run.config.conflict_similarity_threshold, run.config.abstraction_similarity)
    index = run.graph.vector_index()
    run.pairs = neighbour_pairs(
        index,
        [node_id for _, node_id in keys],
        run.store.live_current_groups_of,
        run.config.neighbours_k,
        floor,
    )
    if keys:
        run.totals["similarity_watermark"] = list(keys[-1])
    run.totals["similarity_checked"] = len(keys)
    run.totals["similarity_pending"] = pending
    return {
        "checked": len(keys),
        "pending": pending,
        "pairs": len(run.pairs),
        "search_ms": round((time.perf_counter() - started) * 1000.0, MS_DIGITS),
    }


def stage_resolve_conflicts(run: Run) -> dict[str, Any]:
    """Stage 4.5: near pairs of the changed nodes, then `conflicts.resolve_conflicts`."""
    report = find_pairs(run)
    report.update(
        resolve_conflicts(run.graph.store, run.pairs, run.config, run.now, protected_ids(run.store))
    )
    return report


def stage_merge(run: Run) -> dict[str, Any]:
    """Stage 5: `conflicts.merge_duplicates` over the pairs of stage 4.5."""
    return merge_duplicates(
        run.graph.store, run.pairs, run.config, run.now, protected_ids(run.store)
    )


# -- stage 6: promote ----------------------------------------------------------------------


def stage_promote(run: Run) -> dict[str, Any]:
    """Stage 6: one tier up for nodes accessed often for their age (`PROMOTION_RULES`).

    Output: ``{"nodes_promoted", "by_tier", "node_ids"}``.  Complexity: one
    scan of the nodes (only those with enough accesses are returned).
    """
    smallest = min(rule[0] for rule in PROMOTION_RULES.values())
    rows = run.store.promotion_candidates(PROTECTION, run.now, list(PROMOTION_RULES), smallest)
    moves: dict[str, int] = {}
    updates = []
    for node_id, timescale, access_count, age_days in rows:
        min_count, min_rate, min_age = PROMOTION_RULES[timescale]
        age = max(float(age_days), 0.0)
        if (
            access_count >= min_count
            and age >= min_age
            and access_count / max(age, 1.0) >= min_rate
        ):
            target = TIMESCALES[TIMESCALES.index(timescale) + 1]
            updates.append((target, node_id))
            key = f"{timescale}->{target}"
            moves[key] = moves.get(key, 0) + 1
    run.store.set_timescales(updates)
    return {
        "nodes_promoted": len(updates),
        "by_tier": dict(sorted(moves.items())),
        "node_ids": [node_id for _, node_id in updates][:ID_SAMPLE],
    }


# -- stage 7: abstract ---------------------------------------------------------------------


def stage_abstract(run: Run) -> dict[str, Any]:
    """Stage 7: `abstraction.abstract_episodes`."""
    return abstract_episodes(run.graph, run.pairs, run.config, run.now)


STAGES: Final[tuple[tuple[str, str, Callable[[Run], dict[str, Any]]], ...]] = (
    ("1", "decay", stage_decay),
    ("2", "prune_nodes", stage_prune_nodes),
    ("3", "prune_edges", stage_prune_edges),
    ("4", "strengthen", stage_strengthen),
    ("4.5", "resolve_conflicts", stage_resolve_conflicts),
    ("5", "merge", stage_merge),
    ("6", "promote", stage_promote),
    ("7", "abstract", stage_abstract),
)
# Which stage count feeds which total.
TOTAL_KEYS: Final[Mapping[str, tuple[str, str]]] = {
    "nodes_decayed": ("decay", "nodes_decayed"),
    "edges_decayed": ("decay", "edges_decayed"),
    "nodes_pruned": ("prune_nodes", "nodes_pruned"),
    "edges_pruned": ("prune_edges", "edges_pruned"),
    "edges_strengthened": ("strengthen", "edges_strengthened"),
    "conflicts_resolved": ("resolve_conflicts", "resolved"),
    "contradictions": ("resolve_conflicts", "unresolved"),
    "nodes_merged": ("merge", "nodes_merged"),
    "nodes_promoted": ("promote", "nodes_promoted"),
    "abstractions": ("abstract", "abstractions_created"),
}


# -- the run ---------------------------------------------------------------------------------


def _previous_run(store: Store) -> tuple[str | None, Watermark | None]:
    last = tables.consolidation_entries(store, 1, include_dry_runs=False)
    if not last:
        return None, None
    mark = last[0]["totals"].get("similarity_watermark")
    return last[0]["started_at"], (str(mark[0]), str(mark[1])) if mark else None


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, MS_DIGITS)


def _execute_stages(run: Run) -> list[dict[str, Any]]:
    reports = []
    for stage_id, name, function in STAGES:
        started = time.perf_counter()
        counts = function(run)
        reports.append({"stage": stage_id, "name": name, **counts, "ms": _ms(started)})
    return reports


def run_consolidation(
    graph: GraphEngine,
    dry_run: bool = False,
    trigger: str = "manual",
    config: ConsolidationConfig | None = None,
) -> dict[str, Any]:
    """Run one consolidation cycle (module docstring) and log it.

    Input: the facade; `dry_run` (report what would change, change nothing
    but the log); `trigger` one of `CONSOLIDATION_TRIGGERS`; an optional
    config.  Output: ``{"id", "dry_run", "trigger", "started_at",
    "finished_at", "stages": [{"stage", "name", ...counts, "ms"}],
    "totals": {...}}`` — the log entry.
    Complexity: O(N + E) SQL work for stages 1–4 and 6, plus
    `similarity_budget` exact index searches (4.5, 5) and the episodic
    subgraph (7).  Measured: SPEC "Consolidation".
    """
    if not isinstance(dry_run, bool):
        raise ValidationError("dry_run", f"must be true or false; got {dry_run!r}")
    check_choice("trigger", trigger, CONSOLIDATION_TRIGGERS)
    config = config or DEFAULT_CONFIG
    with graph.lock:
        started = time.perf_counter()
        started_at = graph.now()
        store = graph.store
        since, watermark = _previous_run(store)
        run = Run(graph, config, started_at, since, watermark, dry_run)
        run.totals.update(
            nodes_before=store.count_nodes(),
            edges_before=store.count_edges(),
            similarity_watermark=list(watermark) if watermark else None,
        )
        # A pending erase's physical scrub first (outside the run's transaction: VACUUM
        # cannot run inside one); the cycle writes no erased text, so it stays proven.
        run.totals["file_scrub"] = erasure.consolidation_scrub(store, started_at, dry_run)
        stages: list[dict[str, Any]] = []
        # Load the index from the committed state: loaded inside the run's
        # transaction it would miss what a rolled-back (or dry) run deleted.
        graph.vector_index()
        try:
            with store.transaction():
                stages = _execute_stages(run)
                totals = _totals(run, stages, started)
                if dry_run:
                    raise _DryRun
                entry_id = _log(store, run, stages, totals, trigger)
        except _DryRun:
            with store.transaction():
                entry_id = _log(store, run, stages, totals, trigger)
        return tables.consolidation_entry(store, entry_id)


def _totals(run: Run, stages: list[dict[str, Any]], started: float) -> dict[str, Any]:
    by_name = {stage["name"]: stage for stage in stages}
    totals = dict(run.totals)
    for key, (stage, field_name) in TOTAL_KEYS.items():
        totals[key] = by_name[stage].get(field_name, 0)
    totals["nodes_after"] = run.store.count_nodes()
    totals["edges_after"] = run.store.count_edges()
    totals["duration_ms"] = _ms(started)
    return totals


def _log(
    store: Store, run: Run, stages: list[dict[str, Any]], totals: dict[str, Any], trigger: str
) -> str:
    return tables.append_consolidation_log(
        store,
        started_at=run.now,
        finished_at=run.graph.now(),
        trigger=trigger,
        dry_run=run.dry_run,
        stages=stages,
        totals=totals,
    )


def consolidation_log(graph: GraphEngine, limit: int = 20) -> dict[str, Any]:
    """The latest runs, newest first: ``{"runs": [...], "count", "last_run_at"}``.

    `last_run_at` is the start of the newest non-dry run (None if none).
    Serves the ``graphonomous://consolidation/log`` resource.  O(limit).
    """
    check_int("limit", limit, 1, LOG_LIMIT_MAX)
    with graph.lock:
        runs = tables.consolidation_entries(graph.store, limit)
        since, _ = _previous_run(graph.store)
    return {"runs": runs, "count": len(runs), "last_run_at": since}
