"""What time and forgetting may take, and when: the retention rule (SPEC "Retention").

**Time decays, it never deletes.**  A node's confidence decays by the time since
it was last *reinforced* (written, learned from, retrieved; the anchor
``reinforced_at`` with ``base_confidence`` / ``base_q_value``):

    confidence = base_confidence × exp(−λ t),   q_value = base_q_value × exp(−λ t / 2)
    λ = ln(C₀ / θ) / TTL(timescale) × decay_rate / r₀

with seed 003's TTL per timescale (`TTL_S`: fast 1 h, medium 7 d, slow 90 d,
glacial never), C₀ the default confidence 0.5, θ the prune threshold 0.05 and r₀
the seed's default decay rate 0.01.  The reason for λ: a node at the default
confidence and decay rate reaches θ exactly one TTL after its last
reinforcement — the seed's "TTL without reinforcement", read literally; a more
confident node lasts longer (0.9: 1.26 TTL), a node type with a lower decay
rate (semantic 0.005, procedural 0.002) proportionally longer.  Because the
value is recomputed from the anchor, decay depends on elapsed time only: a
server consolidating every 5 minutes for a month and one run after a month
give the same confidences.  Q decays at half the rate (seed 004).

A node whose confidence falls below θ *fades*: consolidation soft-forgets it
(``forgotten_at``, an audit entry with the reason and the rule), it leaves
retrieval, and ``restore`` brings it back re-anchored at that moment.  Only an
explicit hard forget, cascade or GDPR erase deletes.  `fade_at` is the
closed-form moment a node will fade if nothing reinforces it (the forecast of
``graphonomous forget --forecast DAYS``).

One home for what every forgetting path may never take:

- *Source-backed* nodes — the file node and chunk nodes of a file recorded
  in ``source_files`` (i.e. ingested by a scan and still present at the last
  scan) — have an external source of truth.  They are never candidates for
  budget pruning, never decayed, never threshold-pruned, merged or
  superseded by consolidation, and they do not count against the node
  budget.  A file that disappears is removed by the next scan (its row and
  nodes go together), so "the file still exists" is exactly "it has a row".
- *Pinned* nodes are never forgotten by policy and do not count against the
  budget either: the user asked to keep them.
- Goal and glacial-timescale nodes are never chosen by policy but DO count
  (they are the agent's own knowledge).

The budget (``max_nodes``) therefore governs what the agent learned on its
own: episodes, inferences, outcomes, abstractions.  ``budget_count`` is the
number the budget is compared with.

This module reads ``source_files`` (defined in ``store/schema.py``, written
by ``ingest/sources.py``) and ``nodes``; it never writes them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Final

from ..model import (
    DEFAULT_NODE_CONFIDENCE,
    DEFAULT_NODE_DECAY_RATE,
    TIMESCALES,
    format_time,
    parse_time,
)
from ..store import Store
from ..store.queries import Protection
from .thresholds import PRUNE_CONFIDENCE

DAY_S: Final = 86400.0
# Seed 003's "TTL without reinforcement" per timescale; None: never expires.
SLOW_TTL_S: Final = 90 * DAY_S
TTL_S: Final[Mapping[str, float | None]] = {
    "fast": 3600.0,
    "medium": 7 * DAY_S,
    "slow": SLOW_TTL_S,
    "glacial": None,
}
assert set(TTL_S) == set(TIMESCALES)
# ln(C₀/θ) / r₀: λ × TTL per unit of decay_rate (module docstring).
DECAY_CONSTANT: Final = math.log(DEFAULT_NODE_CONFIDENCE / PRUNE_CONFIDENCE) / (
    DEFAULT_NODE_DECAY_RATE
)
# Seed 004: Q-values decay at half the confidence decay rate.
Q_DECAY_SHARE: Final = 0.5
# The reason an audit entry gives for a faded node.
FADED_REASON: Final = "faded"


def node_decay_per_day() -> dict[str, float]:
    """Per expiring timescale: λ per day for a unit decay_rate (λ = this × decay_rate;
    `decay_per_second` × 86400 / decay_rate) — what the store's decay SQL takes.
    O(timescales)."""
    return {scale: DECAY_CONSTANT * DAY_S / ttl for scale, ttl in TTL_S.items() if ttl is not None}


def decay_per_second(timescale: str, decay_rate: float) -> float:
    """λ of a node (per second); 0.0 for a timescale that never expires.  O(1).

    >>> round(decay_per_second("medium", 0.01) * 7 * 86400, 6)  # ln(0.5 / 0.05)
    2.302585
    >>> decay_per_second("glacial", 0.5)
    0.0
    """
    ttl = TTL_S[timescale]
    return 0.0 if ttl is None else DECAY_CONSTANT * decay_rate / ttl


def retained(base: float, timescale: str, decay_rate: float, elapsed_s: float) -> float:
    """base × exp(−λ · elapsed): a value `elapsed_s` after its last reinforcement.  O(1).

    >>> round(retained(0.5, "medium", 0.01, 7 * 86400), 6)  # one TTL: the threshold
    0.05
    """
    return base * math.exp(-decay_per_second(timescale, decay_rate) * max(0.0, elapsed_s))


def fade_at(
    base_confidence: float, timescale: str, decay_rate: float, reinforced_at: str
) -> datetime | None:
    """When an unreinforced node falls below the prune threshold (None: never).  O(1).

    >>> fade_at(0.5, "medium", 0.01, "2026-01-01T00:00:00Z").isoformat()
    '2026-01-08T00:00:00+00:00'
    >>> fade_at(0.9, "slow", 0.0, "2026-01-01T00:00:00Z") is None
    True
    """
    rate = decay_per_second(timescale, decay_rate)
    if rate <= 0.0:
        return None
    if base_confidence < PRUNE_CONFIDENCE:
        return parse_time(reinforced_at)
    seconds = math.log(base_confidence / PRUNE_CONFIDENCE) / rate
    return parse_time(reinforced_at) + timedelta(seconds=seconds)


# The SQL of the rule (``SOURCE_BACKED_SQL``, ``BUDGET_EXEMPT_SQL``) lives with the
# other statements on nodes in ``store/queries.py``; these functions name the rule.


def source_backed_ids(store: Store) -> set[str]:
    """Ids of every node (live or forgotten) backed by an ingested file.  One query."""
    return store.source_backed_ids()


def budget_count(store: Store) -> int:
    """Live nodes that count against ``max_nodes`` (not pinned, not source-backed)."""
    return store.budget_count()


def forgotten_among(store: Store, node_ids: list[str]) -> list[str]:
    """Those of `node_ids` that are soft-forgotten, sorted.  O(ids) by primary key."""
    return store.forgotten_among(node_ids)


# -- what time will take, and what it took ---------------------------------------------------


def fade_forecast(
    store: Store, protection: Protection, now: datetime, days: float
) -> dict[str, Any]:
    """The nodes that fade within `days` if nothing reinforces them (a dry run of that
    much decay, exact because decay is closed-form).

    Output: ``{"as_of", "until", "days", "fading": [{"node_id", "node_type",
    "timescale", "fades_at"}], "by_type": {type: count}, "never": count}`` sorted by
    fade time — `never`: unprotected nodes whose timescale does not expire.
    Complexity: one scan of the unprotected live nodes, O(N log N) for the sort.
    """
    until = now + timedelta(days=days)
    fading: list[dict[str, Any]] = []
    never = 0
    for node_id, node_type, timescale, rate, base, anchor in store.fade_facts(protection):
        moment = fade_at(base, timescale, rate, anchor)
        if moment is None:
            never += 1
        elif moment <= until:
            fading.append(
                {
                    "node_id": node_id,
                    "node_type": node_type,
                    "timescale": timescale,
                    "fades_at": format_time(max(moment, now)),
                }
            )
    fading.sort(key=lambda item: (item["fades_at"], item["node_id"]))
    by_type: dict[str, int] = {}
    for item in fading:
        by_type[item["node_type"]] = by_type.get(item["node_type"], 0) + 1
    return {
        "as_of": format_time(now),
        "until": format_time(until),
        "days": days,
        "fading": fading,
        "by_type": dict(sorted(by_type.items())),
        "never": never,
    }


def faded_since(store: Store, since: str) -> dict[str, Any]:
    """What forgetting took since `since`, by reason: ``{"since", "count", "by_reason"}``
    (reasons: ``faded`` by decay, ``budget`` by the hybrid policy, ``forget_node``
    when asked).  One scan of the audit entries."""
    by_reason: dict[str, int] = {}
    for entry in store.audit_entries(since=since):
        reason = _FORGET_ACTIONS.get(str(entry["action"]))
        if reason is not None:
            count = len(entry["details"].get("node_ids") or [])
            if count:
                by_reason[reason] = by_reason.get(reason, 0) + count
    return {
        "since": since,
        "count": sum(by_reason.values()),
        "by_reason": dict(sorted(by_reason.items())),
    }


# Audit actions that forget nodes, and the reason `faded_since` reports for each.
_FORGET_ACTIONS: Final[Mapping[str, str]] = {
    "fade": FADED_REASON,
    "forget_by_policy": "budget",
    "forget_node": "asked",
}
