"""Intentional forgetting (seed 004 capability 5): soft/hard/cascade, hybrid policy, GDPR erase.

- :func:`forget_node` — ``soft`` sets ``forgotten_at``: the node leaves
  retrieval, expansion, topology and the in-memory indexes, but its row and
  edges stay (history, audit); ``hard`` deletes the node, its edges and its
  embedding; ``cascade`` is hard plus every node left without support.
- :func:`forget_by_policy` — the hybrid policy (LRU + priority decay, FiFA):
  forget the lowest-priority unprotected nodes until at most ``max_nodes``
  live nodes remain.
- :func:`gdpr_erase` — erase one node and every trace of it: the node, its
  edges and embedding, index postings, and its id and copied content in every
  bookkeeping table; then the freed pages are overwritten (secure_delete),
  the WAL truncated and the file vacuumed, so the bytes are gone from disk.
- :func:`memory_pressure` — the attention survey's warning above 90 % of the
  node budget.
- :func:`restore_nodes` — bring soft-forgotten nodes back (a re-scan does
  this for chunks of files that still exist: the file is the truth).

What policy, decay and cascade may never take, and what the budget counts,
is the retention rule of ``retention.py`` (source-backed and pinned nodes
are exempt from the budget; they and goal/glacial nodes are never chosen).

"Support" (cascade): Y supports X when X -derived_from-> Y, X -depends_on->
Y, X -part_of-> Y or Y -supports-> X.  Cascade forgets X once every node
supporting X is being forgotten (X had at least one support), transitively;
protected nodes are never forgotten by cascade or policy.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from .. import telemetry
from ..embed import pack_f32
from ..model import (
    DEFAULT_NODE_CONFIDENCE,
    RESTS_ON_BACKWARD,
    RESTS_ON_FORWARD,
    STRUCTURAL_RELATIONSHIPS,
    Node,
    ValidationError,
    check_choice,
    check_id,
    check_int,
    check_non_negative,
    format_time,
    parse_time,
)
from ..retrieval.experience import retrieval_trace
from ..store import Store
from ..store.queries import Protection
from . import erasure, rests_on, retention, tables
from .thresholds import PRUNE_CONFIDENCE

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

FORGET_MODES: Final = ("soft", "hard", "cascade")
POLICY_MODES: Final = ("soft", "hard")
FORGETTING_POLICIES: Final = ("hybrid",)
# Policy forgetting is soft by default: budget pressure is not a reason to
# destroy knowledge irrecoverably (the rows stay for audit and can be
# inspected with include_forgotten); hard deletion is an explicit choice.
DEFAULT_POLICY_MODE: Final = "soft"

# Support relationships (module docstring).
# X rests on Y (model.RESTS_ON_*), and a part goes with its whole (structural kinds).
SUPPORT_OUT_KINDS: Final = (*RESTS_ON_FORWARD, *STRUCTURAL_RELATIONSHIPS)  # X -kind-> Y
SUPPORT_IN_KINDS: Final = RESTS_ON_BACKWARD  # Y -kind-> X

# recency_factor = 0.5 ** (hours since last access (or creation) / half-life).
# One week: seed 003's "medium" timescale lifetime — knowledge untouched for
# one medium-tier lifetime counts half.
RECENCY_HALF_LIFE_HOURS: Final = 168.0
PROTECTED_NODE_TYPES: Final = ("goal",)
# A restored node starts again at least at the default confidence (one full TTL).
RESTORED_CONFIDENCE: Final = DEFAULT_NODE_CONFIDENCE
PROTECTED_TIMESCALES: Final = ("glacial",)
# What consolidation never decays or prunes (the SQL shape, with pinned and
# source-backed nodes, is `store.queries.Protection`).
PROTECTION: Final = Protection(PROTECTED_NODE_TYPES, PROTECTED_TIMESCALES)
# Seed 004: memory pressure when the live node count exceeds 90 % of max_nodes.
MEMORY_PRESSURE_RATIO: Final = 0.9
PRIORITY_DIGITS: Final = 9

# GDPR: copies of the erased content are replaced by this mark in bookkeeping
# tables; content shorter than MIN_CONTENT_MATCH characters is not searched
# for (a two-letter content would match half the database).
ERASED_MARK: Final = "[erased]"
# consolidation_log.totals key holding a (created_at, node id) pair (consolidator.py).
WATERMARK_KEY: Final = "similarity_watermark"
MIN_CONTENT_MATCH: Final = 12

FORGET_EVENT: Final = "graphonomous.learning.forget"
ERASE_EVENT: Final = "graphonomous.learning.gdpr_erase"

_DROP: Final = object()


# -- support and protection --------------------------------------------------------


def supports_of(store: Store, node_id: str) -> set[str]:
    """Ids of the nodes supporting `node_id` (module docstring).  O(degree)."""
    return rests_on.grounds(store, node_id, parts=True)


def supported_by(store: Store, node_id: str) -> set[str]:
    """Ids of the nodes that `node_id` supports (the reverse of :func:`supports_of`)."""
    return rests_on.dependants(store, node_id, parts=True)


def is_protected(node_type: str, timescale: str, pinned: bool, source_backed: bool = False) -> bool:
    """Goal, glacial, pinned and source-backed nodes are never forgotten by policy or cascade."""
    return (
        node_type in PROTECTED_NODE_TYPES
        or timescale in PROTECTED_TIMESCALES
        or pinned
        or source_backed
    )


def cascade_set(store: Store, root_id: str) -> list[str]:
    """`root_id` plus every node whose supports would all be gone, transitively.

    Worklist fixpoint: when a node is doomed its dependants are examined; a
    dependant joins when it is not protected and all its supports are doomed.
    Output: sorted ids (the root included).  Complexity: O(V + E) of the
    affected region (each doomed node's edges read once, each examined node's
    supports read once per doomed support).
    """
    doomed = {root_id}
    work = [root_id]
    backed = retention.source_backed_ids(store)
    while work:
        current = work.pop()
        for candidate in sorted(supported_by(store, current) - doomed):
            node = store.get_node(candidate)
            if node is None or is_protected(
                node.node_type, node.timescale, node.pinned, candidate in backed
            ):
                continue
            if supports_of(store, candidate) <= doomed:
                doomed.add(candidate)
                work.append(candidate)
    return sorted(doomed)


# -- forgetting one node ------------------------------------------------------------


def _hard_delete(store: Store, node_ids: Iterable[str]) -> int:
    """Delete nodes with their edges and embeddings; clear superseded_by pointers to them."""
    edges = 0
    for node_id in node_ids:
        store.clear_superseded_by(node_id)
        edges += store.delete_node(node_id)
    return edges


def forget_node(
    graph: GraphEngine, node_id: str, mode: str = "soft", reason: str | None = None
) -> dict[str, Any]:
    """Forget one node: soft (hide), hard (delete) or cascade (delete + orphans).

    Input: an existing node id (soft-forgotten nodes may be hard-deleted
    later), the mode, an optional reason (kept verbatim in the audit log —
    never put the forgotten data itself in it).  Output: ``{"mode",
    "node_id", "forgotten": [ids], "edges_removed", "already_forgotten"}``.
    Effects: one transaction plus an audit entry; the forgotten ids leave the
    vector and BM25 indexes.  Complexity: soft O(1); hard O(degree);
    cascade O(region) (:func:`cascade_set`).
    """
    check_id("node_id", node_id)
    check_choice("mode", mode, FORGET_MODES)
    if reason is not None and not isinstance(reason, str):
        raise ValidationError("reason", "must be a string")
    with graph.lock:
        store = graph.store
        with store.transaction():
            node = store.require_node(node_id, include_forgotten=True)
            now = graph.now()
            edges_removed = 0
            already = mode == "soft" and node.forgotten_at is not None
            if mode == "soft":
                ids = [] if already else [node_id]
                if not already:
                    store.update_node(
                        node_id, forgotten_at=now, updated_at=now, forgotten_reason="asked"
                    )
            else:
                ids = cascade_set(store, node_id) if mode == "cascade" else [node_id]
                edges_removed = _hard_delete(store, ids)
            store.audit(
                now,
                "forget_node",
                node_id,
                {"mode": mode, "reason": reason, "node_ids": ids, "edges_removed": edges_removed},
            )
    telemetry.emit(FORGET_EVENT, {"count": len(ids)}, {"mode": mode, "policy": None})
    return {
        "mode": mode,
        "node_id": node_id,
        "forgotten": ids,
        "edges_removed": edges_removed,
        "already_forgotten": already,
    }


# -- the hybrid policy ---------------------------------------------------------------


def recency_factor(last_used: datetime, now: datetime) -> float:
    """0.5 ** (hours since `last_used` / RECENCY_HALF_LIFE_HOURS); 1.0 for future times.  O(1)."""
    hours = max(0.0, (now - last_used).total_seconds() / 3600.0)
    return float(0.5 ** (hours / RECENCY_HALF_LIFE_HOURS))


def priority_score(
    confidence: float, recency: float, access_count: int, connectivity: float
) -> float:
    """Seed 004 hybrid priority: confidence × recency × (1 + ln(access + 1)) × (1 + connectivity).

    `connectivity` = degree / max degree in [0, 1].  Higher means keep.  O(1).
    Reference: FiFA (arXiv 2512.12856) LRU + priority-decay hybrid.
    """
    return confidence * recency * (1.0 + math.log(access_count + 1)) * (1.0 + connectivity)


def _live_degrees(store: Store) -> dict[str, int]:
    """Degree of every live node, counting edges whose both ends are live."""
    degrees: dict[str, int] = {}
    for source, target in store.live_edge_ends():
        degrees[source] = degrees.get(source, 0) + 1
        degrees[target] = degrees.get(target, 0) + 1
    return degrees


def score_nodes(store: Store, now: datetime) -> list[dict[str, Any]]:
    """Priority of every live node, with its components.

    Output: ``[{"node_id", "priority", "confidence", "recency",
    "access_count", "degree", "connectivity", "protected", "exempt",
    "created_at"}]`` sorted by (priority, created_at, node_id) ascending —
    forgetting order.  ``exempt``: not counted against the budget
    (retention rule).  Complexity: O(V + E) plus the sort, O(V log V).
    """
    moment = now
    degrees = _live_degrees(store)
    backed = retention.source_backed_ids(store)
    max_degree = max(degrees.values(), default=0)
    scored = []
    for row in store.retention_facts():
        degree = degrees.get(row.id, 0)
        connectivity = degree / max_degree if max_degree else 0.0
        recency = recency_factor(parse_time(row.last_accessed_at or row.created_at), moment)
        priority = priority_score(row.confidence, recency, row.access_count, connectivity)
        scored.append(
            {
                "node_id": row.id,
                "priority": round(priority, PRIORITY_DIGITS),
                "confidence": row.confidence,
                "recency": round(recency, PRIORITY_DIGITS),
                "access_count": row.access_count,
                "degree": degree,
                "connectivity": round(connectivity, PRIORITY_DIGITS),
                "protected": is_protected(
                    row.node_type, row.timescale, row.pinned, row.id in backed
                ),
                "exempt": row.pinned or row.id in backed,
                "created_at": row.created_at,
            }
        )
    scored.sort(key=lambda s: (s["priority"], s["created_at"], s["node_id"]))
    return scored


def _reason(score: Mapping[str, Any]) -> str:
    """The priority written out factor by factor (the dry-run explanation)."""
    access = 1.0 + math.log(score["access_count"] + 1)
    return (
        f"priority {score['priority']:.6f} = confidence {score['confidence']:.3f} × recency "
        f"{score['recency']:.3f} × access {access:.3f} × connectivity "
        f"{1.0 + score['connectivity']:.3f} (accessed {score['access_count']}×, "
        f"degree {score['degree']})"
    )


def forget_by_policy(
    graph: GraphEngine,
    policy: str = "hybrid",
    max_nodes: int | None = None,
    dry_run: bool = False,
    mode: str = DEFAULT_POLICY_MODE,
) -> dict[str, Any]:
    """Forget the lowest-priority unprotected nodes until ≤ max_nodes counted nodes remain.

    Input: the policy ("hybrid"), the budget (None: forgetting_config
    max_nodes), dry_run, the mode (soft | hard; soft by default).
    Output: ``{"policy", "mode", "dry_run", "max_nodes", "node_count_before",
    "budget_count_before", "exempt_count", "forgotten_count",
    "surviving_count", "protected_count", "over_budget_protected",
    "forgotten": [ids], "candidates": [{"node_id", "priority", "reason"}]}``
    — with dry_run the candidates are what would be forgotten, ``forgotten``
    is empty and nothing changes.  The budget is compared with the live
    nodes that count against it (``retention``: pinned and source-backed
    nodes are exempt); protected nodes (goal, glacial, pinned,
    source-backed) are never candidates; if the counted protected ones alone
    exceed the budget, ``over_budget_protected`` is true.  Complexity:
    O(V log V + E), one transaction.
    """
    check_choice("policy", policy, FORGETTING_POLICIES)
    check_choice("mode", mode, POLICY_MODES)
    if not isinstance(dry_run, bool):
        raise ValidationError("dry_run", "must be true or false")
    with graph.lock:
        store = graph.store
        budget = (
            int(tables.read_forgetting_config(store)["max_nodes"])
            if max_nodes is None
            else check_int("max_nodes", max_nodes, 0)
        )
        scored = score_nodes(store, graph.clock.now())
        counted = sum(1 for s in scored if not s["exempt"])
        excess = max(0, counted - budget)
        unprotected = [s for s in scored if not s["protected"]]
        chosen = unprotected[:excess]
        candidates = [
            {"node_id": s["node_id"], "priority": s["priority"], "reason": _reason(s)}
            for s in chosen
        ]
        ids = [c["node_id"] for c in candidates]
        if ids and not dry_run:
            with store.transaction():
                now = graph.now()
                if mode == "soft":
                    for node_id in ids:
                        store.update_node(
                            node_id, forgotten_at=now, updated_at=now, forgotten_reason="budget"
                        )
                else:
                    _hard_delete(store, ids)
                store.audit(
                    now,
                    "forget_by_policy",
                    None,
                    {"policy": policy, "mode": mode, "max_nodes": budget, "node_ids": ids},
                )
    forgotten = 0 if dry_run else len(ids)
    if forgotten:
        telemetry.emit(FORGET_EVENT, {"count": forgotten}, {"mode": mode, "policy": policy})
    return {
        "policy": policy,
        "mode": mode,
        "dry_run": dry_run,
        "max_nodes": budget,
        "node_count_before": len(scored),
        "budget_count_before": counted,
        "exempt_count": len(scored) - counted,
        "forgotten_count": forgotten,
        "surviving_count": len(scored) - forgotten,
        "protected_count": len(scored) - len(unprotected),
        "over_budget_protected": counted - len(chosen) > budget,
        "forgotten": [] if dry_run else ids,
        "candidates": candidates,
    }


def restore_nodes(graph: GraphEngine, node_ids: Iterable[str], reason: str) -> list[str]:
    """Clear ``forgotten_at`` of those of `node_ids` that are soft-forgotten.

    A restore is a reinforcement by the user: each node is re-anchored now with
    at least the default confidence (`RESTORED_CONFIDENCE`), so it has one full
    TTL again instead of fading at the next consolidation.  The restored nodes
    are re-embedded and rejoin the vector and BM25 indexes after the commit; one
    audit entry names them and `reason`.
    Output: the restored ids, sorted.  Complexity: O(ids) plus embedding.
    """
    with graph.lock:
        store = graph.store
        ids = retention.forgotten_among(store, sorted(set(node_ids)))
        if not ids:
            return []
        with store.transaction():
            now = graph.now()
            nodes = [store.require_node(i, include_forgotten=True) for i in ids]
            vectors = graph.embed_texts([node.content for node in nodes])
            for node, vector in zip(nodes, vectors, strict=True):
                base = max(node.base_confidence or node.confidence, RESTORED_CONFIDENCE)
                store.update_node(
                    node.id,
                    forgotten_at=None,
                    forgotten_reason=None,
                    updated_at=now,
                    confidence=base,
                    q_value=node.base_q_value if node.base_q_value is not None else node.q_value,
                )
                store.set_embedding(node.id, pack_f32(vector), graph.embedding_model)
            store.audit(now, "restore_nodes", None, {"reason": reason, "node_ids": ids})
    return ids


def fade_forecast(graph: GraphEngine, days: float) -> dict[str, Any]:
    """What decay will soft-forget in the next `days` if nothing is reinforced
    (``retention.fade_forecast`` at the graph's clock).  Changes nothing.  O(N log N)."""
    check_non_negative("days", days)
    with graph.lock:
        return retention.fade_forecast(graph.store, PROTECTION, graph.clock.now(), float(days))


def retention_status(graph: GraphEngine) -> dict[str, Any]:
    """``{"faded_last_day": {"since", "count", "by_reason"}, "fading_next_day": n}``:
    what forgetting took in the clock's last 24 hours and what decay takes in the next.
    Serves `stats` and the health resource.  O(N)."""
    now = graph.clock.now()
    with graph.lock:
        taken = retention.faded_since(graph.store, format_time(now - timedelta(days=1)))
        coming = graph.store.count_fading(
            PROTECTION,
            retention.node_decay_per_day(),
            format_time(now + timedelta(days=1)),
            PRUNE_CONFIDENCE,
        )
    return {"faded_last_day": taken, "fading_next_day": coming}


def budget_status(graph: GraphEngine) -> dict[str, Any]:
    """The node budget as `stats` and the health resource show it.

    Output: ``{"max_nodes", "counted_nodes", "exempt_nodes", "ratio",
    "warning"}`` — `counted_nodes` are the live nodes the budget governs
    (``retention``), `exempt_nodes` the live pinned and source-backed ones,
    `warning` true above MEMORY_PRESSURE_RATIO.  O(1) queries.
    """
    with graph.lock:
        store = graph.store
        budget = int(tables.read_forgetting_config(store)["max_nodes"])
        counted = retention.budget_count(store)
        live = store.count_nodes()
    ratio = counted / budget if budget > 0 else 0.0
    return {
        "max_nodes": budget,
        "counted_nodes": counted,
        "exempt_nodes": live - counted,
        "ratio": round(ratio, 6),
        "warning": ratio > MEMORY_PRESSURE_RATIO,
    }


def budget_warning(status: Mapping[str, Any]) -> str | None:
    """The one-line warning for `budget_status` output above 90 %, else None."""
    if not status["warning"]:
        return None
    return (
        f"warning: {status['counted_nodes']} of {status['max_nodes']} budgeted nodes "
        f"({status['ratio']:.0%}); consolidation forgets the lowest-priority learned "
        "nodes above the budget (ingested and pinned nodes are kept) — raise it with "
        "--max-nodes or GRAPHONOMOUS_MAX_NODES"
    )


# -- configuration and pressure ---------------------------------------------------------


def get_forgetting_config(graph: GraphEngine) -> dict[str, Any]:
    """The forgetting configuration: ``{"policy", "max_nodes", "max_age_hours", "updated_at"}``."""
    with graph.lock:
        return tables.read_forgetting_config(graph.store)


def set_forgetting_config(
    graph: GraphEngine,
    policy: str | None = None,
    max_nodes: int | None = None,
    max_age_hours: int | None = None,
) -> dict[str, Any]:
    """Change some fields of the forgetting configuration; returns the new configuration.

    max_nodes ≥ 1, max_age_hours ≥ 1 (stored for an age policy; the hybrid
    policy does not read it), policy one of FORGETTING_POLICIES.
    """
    with graph.lock, graph.store.transaction():
        current = tables.read_forgetting_config(graph.store)
        new_policy = (
            current["policy"]
            if policy is None
            else check_choice("policy", policy, FORGETTING_POLICIES)
        )
        new_max = (
            current["max_nodes"] if max_nodes is None else check_int("max_nodes", max_nodes, 1)
        )
        new_age = (
            current["max_age_hours"]
            if max_age_hours is None
            else check_int("max_age_hours", max_age_hours, 1)
        )
        tables.write_forgetting_config(graph.store, new_policy, new_max, new_age, graph.now())
        return tables.read_forgetting_config(graph.store)


def memory_pressure(graph: GraphEngine) -> dict[str, Any] | None:
    """The attention-survey item for memory pressure, or None.

    Pressure: counted node count (``retention.budget_count``) >
    MEMORY_PRESSURE_RATIO × max_nodes.  Output:
    ``{"type": "memory_pressure", "severity": "warning" | "critical"
    (critical once over budget), "node_count", "max_nodes", "ratio",
    "recommendation": "forget_by_policy", "target_node_count"}`` —
    ``forget_by_policy(max_nodes=target_node_count)`` (⌊0.9 × max_nodes⌋)
    ends the pressure, while the plain policy only gets back under budget.
    O(1) queries.
    """
    with graph.lock:
        count = retention.budget_count(graph.store)
        budget = int(tables.read_forgetting_config(graph.store)["max_nodes"])
    if budget <= 0 or count <= MEMORY_PRESSURE_RATIO * budget:
        return None
    return {
        "type": "memory_pressure",
        "severity": "critical" if count > budget else "warning",
        "node_count": count,
        "max_nodes": budget,
        "ratio": round(count / budget, 6),
        "recommendation": "forget_by_policy",
        "target_node_count": math.floor(MEMORY_PRESSURE_RATIO * budget),
    }


# -- GDPR erase ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def _id_pattern(ids: frozenset[str]) -> re.Pattern[str]:
    """Any of `ids` as a whole token: not inside a longer word or hyphenated id.

    A short caller-chosen id such as "x" must not erase the x of "Fix"; a
    UUID never occurs inside a word anyway.
    """
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=lambda i: (-len(i), i)))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")


def _scrub_text(text: str, ids: frozenset[str], texts: Sequence[str]) -> str:
    """`text` with every whole-token id and every copy of an erased text (a content or
    one of its sentences; the longest first, so a content goes whole) replaced by
    ERASED_MARK."""
    for erased in sorted(texts, key=lambda t: (-len(t), t)):
        text = text.replace(erased, ERASED_MARK)
    return _id_pattern(ids).sub(ERASED_MARK, text)


def _scrub(value: Any, ids: frozenset[str], texts: Sequence[str]) -> Any:
    """A JSON value without the erased ids and content.

    Strings equal to an id are dropped (from lists; dict entries are
    removed), as are dict entries keyed by an id; other strings have every
    whole-token occurrence of an id, and every copy of an erased text, replaced
    by ERASED_MARK.
    """
    if isinstance(value, str):
        if value in ids:
            return _DROP
        return _scrub_text(value, ids, texts)
    if isinstance(value, list):
        kept = [_scrub(item, ids, texts) for item in value]
        return [item for item in kept if item is not _DROP]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ids:
                continue
            if key == WATERMARK_KEY and isinstance(item, list) and len(item) == 2:
                # A (created_at, id) sort key: the id becomes "" (sorts first), so the pair
                # keeps its shape and the next run re-examines that instant's nodes.
                out[key] = [item[0], "" if item[1] in ids else item[1]]
                continue
            cleaned = _scrub(item, ids, texts)
            if cleaned is not _DROP:
                out[key] = cleaned
        return out
    return value


def _mentions(text: str | None, ids: frozenset[str], texts: Sequence[str]) -> bool:
    if text is None:
        return False
    return any(erased in text for erased in texts) or bool(_id_pattern(ids).search(text))


def _rows_mentioning(
    store: Store, table: str, key: str, column: str, ids: frozenset[str], texts: Sequence[str]
) -> list[Any]:
    """(key, column) of the rows whose column contains an id or an erased text (SQL instr)."""
    return store.rows_mentioning(table, key, column, sorted(ids) + sorted(texts))


def _scrub_json_column(
    store: Store,
    table: str,
    key: str,
    column: str,
    ids: frozenset[str],
    texts: Sequence[str],
) -> int:
    """Scrub one JSON text column of one table in place; returns rows changed.

    `table`, `key` and `column` are names written in this module, never input.
    """
    changed = 0
    for row in _rows_mentioning(store, table, key, column, ids, texts):
        text = row[1]
        if not _mentions(text, ids, texts):
            continue
        cleaned = json.dumps(_scrub(json.loads(text), ids, texts), sort_keys=True)
        store.set_text(table, key, column, row[0], cleaned)
        changed += 1
    return changed


def _scrub_text_column(
    store: Store, table: str, key: str, column: str, ids: frozenset[str], texts: Sequence[str]
) -> int:
    """Replace ids and erased texts inside a plain text column; returns rows changed."""
    changed = 0
    for row in _rows_mentioning(store, table, key, column, ids, texts):
        text = row[1]
        if not _mentions(text, ids, texts):
            continue
        cleaned = _scrub_text(text, ids, texts)
        store.set_text(table, key, column, row[0], cleaned)
        changed += 1
    return changed


def _scrub_references(
    store: Store, node_id: str, texts: Sequence[str], also: frozenset[str] = frozenset()
) -> dict[str, int]:
    """Remove every reference to a node (and copies of its erased `texts`: its content
    and sentences, :func:`.erasure.erased_texts`) outside its own row.

    Rows that exist only because of the node go entirely: its outcomes row
    (outcome nodes), its goals row, its source_files row (file nodes), and
    attention items about it alone.  Ids of those rows are erased with it, as
    are `also` (ids merged into the node, and the other nodes of the same erase).
    Inside the erase transaction.  Complexity: one pass over each table.
    """
    counts: dict[str, int] = {}
    outcome_ids = [
        r[0]
        for r in tables.query(
            store, "SELECT id FROM outcomes WHERE outcome_node_id = ?", (node_id,)
        )
    ]
    goal_ids = [
        r[0] for r in tables.query(store, "SELECT id FROM goals WHERE node_id = ?", (node_id,))
    ]
    ids = frozenset({node_id, *outcome_ids, *goal_ids, *also})
    counts["outcomes_deleted"] = tables.execute(
        store, "DELETE FROM outcomes WHERE outcome_node_id = ?", (node_id,)
    )
    counts["goals_deleted"] = tables.execute(
        store, "DELETE FROM goals WHERE node_id = ?", (node_id,)
    )
    counts["source_files_deleted"] = tables.execute(
        store, "DELETE FROM source_files WHERE file_node_id = ?", (node_id,)
    )
    # Attention items whose only subject is the node go; others lose the id.
    deleted_items = 0
    for row in tables.query(store, "SELECT id, subject_ids FROM attention_items"):
        subjects = json.loads(row[1])
        if subjects and all(subject in ids for subject in subjects):
            deleted_items += tables.execute(
                store, "DELETE FROM attention_items WHERE id = ?", (row[0],)
            )
    counts["attention_items_deleted"] = deleted_items
    placeholders = ", ".join("?" * len(ids))
    counts["outcomes_goal_cleared"] = tables.execute(
        store, f"UPDATE outcomes SET goal_id = NULL WHERE goal_id IN ({placeholders})", sorted(ids)
    )
    counts["superseded_by_cleared"] = store.clear_superseded_by(node_id)
    counts["revisions_cleared"] = tables.execute(
        store,
        "UPDATE revisions SET "
        "old_node_id = CASE WHEN old_node_id = ? THEN NULL ELSE old_node_id END, "
        "new_node_id = CASE WHEN new_node_id = ? THEN NULL ELSE new_node_id END, reason = '' "
        "WHERE old_node_id = ? OR new_node_id = ?",
        (node_id, node_id, node_id, node_id),
    )
    json_columns = (
        ("nodes", "id", "causal_parent_ids"),
        ("nodes", "id", "metadata"),
        ("edges", "id", "metadata"),
        ("outcomes", "id", "causal_node_ids"),
        ("outcomes", "id", "evidence"),
        ("goals", "id", "linked_node_ids"),
        ("goals", "id", "metadata"),
        ("revisions", "id", "details"),
        ("attention_items", "id", "subject_ids"),
        ("attention_items", "id", "details"),
        ("source_files", "path", "chunk_node_ids"),
        ("consolidation_log", "id", "stages"),
        ("consolidation_log", "id", "totals"),
    )
    for table, key, column in json_columns:
        counts[f"{table}.{column}"] = _scrub_json_column(store, table, key, column, ids, texts)
    for table, key, column in (
        ("goals", "id", "title"),
        ("goals", "id", "description"),
        ("revisions", "id", "reason"),
        ("outcomes", "id", "action_id"),
    ):
        counts[f"{table}.{column}"] = _scrub_text_column(store, table, key, column, ids, texts)
    return {name: count for name, count in counts.items() if count}


def residual_references(store: Store, node_id: str, texts: Sequence[str] = ()) -> list[str]:
    """``table.column`` names of every column whose text or bytes still hold the id or an
    erased text (its content or a sentence of it, :func:`.erasure.erased_texts`).

    Scans every column of every table (``sqlite_master``); the audit log is
    skipped for the id (it names the erased id by design) but not for the
    content.  Other nodes' ``content`` is not reported here (see
    :func:`nodes_quoting`).  Complexity: one scan of each table.
    """
    found: list[str] = []
    for table, columns in store.table_columns():
        pairs: list[tuple[str, str]] = []
        for column in columns:
            if table != "audit_log":
                pairs.append((column, node_id))
            if (table, column) != ("nodes", "content"):
                pairs.extend((column, text) for text in texts)
        if not pairs:
            continue
        # One scan per table: a flag per (column, needle) pair.
        for column, needle in store.columns_holding(table, pairs):
            if needle != node_id or _id_token_in(store, table, column, node_id):
                found.append(f"{table}.{column}")
    return sorted(set(found))


def _id_token_in(store: Store, table: str, column: str, node_id: str) -> bool:
    """Whether some value of the column holds `node_id` as a whole token (not inside a word)."""
    pattern = _id_pattern(frozenset({node_id}))
    for value in store.values_containing(table, column, node_id):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        if pattern.search(text):
            return True
    return False


def nodes_quoting(store: Store, content: str | None) -> list[str]:
    """Ids of other nodes quoting the erased content (sorted): all of it, one of its
    sentences, or most of its content words (:func:`.erasure.quotes`).

    They are separate knowledge units (an episode quoting a message, a claim
    copied from it) and are NOT erased automatically: the result lists them
    so the caller can erase them too.
    """
    if content is None:
        return []
    return erasure.quoting_nodes(store, [content])


def gdpr_erase(
    graph: GraphEngine,
    node_id: str,
    reason: str | None = None,
    wait_s: float = 0.0,
    with_quoting: bool = False,
) -> dict[str, Any]:
    """Erase a node and every trace of it (`erase_node`), then drop the recent
    retrievals that returned one of the erased nodes (they may quote it)."""
    result = erase_node(graph, node_id, reason, wait_s, with_quoting)
    with graph.lock:
        retrieval_trace(graph).forget([node_id, *result["erased_ids"]])
    return result


def erase_node(
    graph: GraphEngine,
    node_id: str,
    reason: str | None = None,
    wait_s: float = 0.0,
    with_quoting: bool = False,
) -> dict[str, Any]:
    """Erase a node and every trace of its id and content (GDPR art. 17); SPEC "GDPR erase".

    Steps: (0) resolve the id — a node merged away by consolidation resolves to
    its survivor (erased in its place), an id erased before completes the file
    scrub only; with `with_quoting`, the nodes quoting its content are erased
    with it; (1) plan derived content (:func:`.erasure.plan_derived`):
    summaries left with too few members are erased too, the others rewritten;
    (2) with ``PRAGMA secure_delete = ON``, in one transaction: scrub every
    reference to the erased ids and copies of their content
    (:func:`_scrub_references`), rewrite derived summaries, and goal and outcome
    nodes that hold the content or one of its sentences, delete the nodes with
    their edges and embeddings, and append an audit entry ``gdpr_erase`` per
    node (subject = id; the reason only as its SHA-256); (3) drop the nodes from
    the in-memory indexes;
    (4) :func:`.erasure.scrub_file`: checkpoint, VACUUM, checkpoint (waiting up
    to `wait_s` for other readers), then search every store file for the erased
    texts (contents and their sentences; the witness written before the commit
    keeps them findable by a later `--finish`).  Output: ``{"erased": true,
    "node_id", "resolved_to", "erased_ids", "rewritten_ids", "edges_removed",
    "scrubbed": {what: rows}, "residual", "nodes_quoting_content", "file": {...},
    "causes", "status": "scrubbed" | "pending", "already_erased"}``.  ``status``
    is "scrubbed" only when the bytes were looked for again and not found, no
    node holds the content or a sentence of it verbatim and no column holds it;
    "pending" comes with its causes (:func:`.erasure.verdict`) and
    ``file.advice``.  Complexity:
    O(size of the database); must not be called inside an open transaction.
    """
    check_id("node_id", node_id)
    if reason is not None and not isinstance(reason, str):
        raise ValidationError("reason", "must be a string")
    if isinstance(wait_s, bool) or not isinstance(wait_s, (int, float)) or wait_s < 0:
        raise ValidationError("wait_s", "must be a number of seconds >= 0")
    if not isinstance(with_quoting, bool):
        raise ValidationError("with_quoting", "must be a boolean")
    with graph.lock:
        store = graph.store
        if store.in_transaction:
            raise ValidationError("node_id", "gdpr_erase cannot run inside an open transaction")
        node = store.get_node(node_id)
        if node is None:
            node = erasure.survivor_of(store, node_id)
        if node is None:
            if erasure.was_erased(store, node_id):
                return _erased_before(graph, node_id, wait_s)
            node = store.require_node(node_id, include_forgotten=True)
        return _erase_resolved(graph, node_id, node, reason, wait_s, with_quoting)


def _quoting_victims(store: Store, root: Node, with_quoting: bool) -> set[str]:
    """The root and, with `with_quoting`, every node holding its content or one of its
    sentences verbatim (ids).  Nodes that only share its words are never erased with it
    (in a graph of similar notes they are many unrelated nodes)."""
    if not with_quoting:
        return {root.id}
    texts = erasure.erased_texts([root.content])
    return {root.id, *erasure.holding_nodes(store, texts, {root.id})}


def _erase_resolved(
    graph: GraphEngine,
    node_id: str,
    root: Node,
    reason: str | None,
    wait_s: float,
    with_quoting: bool,
) -> dict[str, Any]:
    """`erase_node` once the id resolved to the live or forgotten node `root`."""
    store = graph.store
    merged = {m for m in root.metadata.get("merged_from", []) if isinstance(m, str)}
    chosen = _quoting_victims(store, root, with_quoting)
    extra, rewrites = erasure.plan_derived(store, chosen)
    others = store.get_nodes(sorted((chosen | extra) - {root.id}))
    victims = [root, *(others[key] for key in sorted(others))]
    erased_ids = frozenset({node_id, *merged, *(v.id for v in victims)})
    contents = [v.content for v in victims if len(v.content) >= MIN_CONTENT_MATCH]
    texts = erasure.erased_texts(contents)
    previous = tables.query(store, "PRAGMA secure_delete")[0][0]
    tables.execute(store, "PRAGMA secure_delete = ON")
    try:
        before, witness_problem = erasure.note_pending(store, texts)
        try:
            scrubbed, rewritten, edges_removed = _erase_rows(
                graph, node_id, root, victims, merged, erased_ids, texts, rewrites, reason
            )
        except BaseException:
            erasure.restore_pending(store, before)
            raise
        file_report, found = erasure.scrub_file(store, texts, wait_s)
    finally:
        # A failure here is reported by the file scrub; the setting is per connection.
        with contextlib.suppress(sqlite3.Error):
            tables.execute(store, f"PRAGMA secure_delete = {int(previous)}")
    residual = sorted(
        {
            hit
            for victim in victims
            for hit in residual_references(store, victim.id, erasure.erased_texts([victim.content]))
        }
    )
    holding = erasure.holding_nodes(store, [*texts, *found], erased_ids)
    quoting = sorted(set(erasure.quoting_nodes(store, contents, erased_ids)) | set(holding))
    status, causes = erasure.verdict(file_report, holding, residual)
    if status == "scrubbed":
        erasure.record_file_scrub(store, file_report, graph.now())
    elif witness_problem is not None:
        causes.append(erasure.witness_cause(witness_problem))
    telemetry.emit(ERASE_EVENT, {"edges_removed": edges_removed}, {"residual": len(residual)})
    return {
        "erased": True,
        "node_id": node_id,
        "resolved_to": root.id,
        "already_erased": False,
        "erased_ids": sorted(v.id for v in victims),
        "rewritten_ids": sorted(rewritten),
        "edges_removed": edges_removed,
        "scrubbed": scrubbed,
        "residual": residual,
        "nodes_quoting_content": quoting,
        "file": file_report,
        "causes": causes,
        "status": status,
    }


def _erase_rows(
    graph: GraphEngine,
    node_id: str,
    root: Node,
    victims: Sequence[Node],
    merged: set[str],
    erased_ids: frozenset[str],
    texts: Sequence[str],
    rewrites: Sequence[tuple[Node, list[Node]]],
    reason: str | None,
) -> tuple[dict[str, int], list[str], int]:
    """Step (2) of `erase_node`, in one transaction: ``(scrubbed, rewritten ids,
    edges removed)``."""
    store = graph.store
    with store.transaction():
        scrubbed: dict[str, int] = {}
        for victim in victims:
            own = erasure.erased_texts([victim.content])
            counts = _scrub_references(store, victim.id, own, erased_ids)
            entity_name = victim.metadata.get("entity_name")
            if isinstance(entity_name, str):  # memory-compat relations naming it
                counts["memory_relations_deleted"] = store.remove_dangling_touching(
                    victim.agent_id, [entity_name]
                )
            for name, count in counts.items():
                scrubbed[name] = scrubbed.get(name, 0) + count
        rewritten = erasure.rewrite_summaries(graph, rewrites)
        rewritten += erasure.rewrite_derived_nodes(
            graph,
            lambda text: _scrub_text(text, erased_ids, texts),
            lambda text: _mentions(text, erased_ids, texts),
        )
        edges_removed = 0
        digest = hashlib.sha256(reason.encode("utf-8")).hexdigest() if reason else None
        for victim in victims:
            removed = store.delete_node(victim.id)
            edges_removed += removed
            store.erase_change_traces(victim.id)
            store.audit(
                graph.now(),
                "gdpr_erase",
                victim.id,
                {
                    "edges_removed": removed,
                    "scrubbed": scrubbed if victim is root else {},
                    "reason_sha256": digest,
                    "requested_id": node_id if victim is root else root.id,
                },
            )
        for merged_id in sorted(merged | ({node_id} - {root.id})):
            store.audit(graph.now(), "gdpr_erase", merged_id, {"merged_into": root.id})
    return scrubbed, rewritten, edges_removed


def _erased_before(graph: GraphEngine, node_id: str, wait_s: float) -> dict[str, Any]:
    """The answer for an id erased earlier (a retry after a failed file scrub): the rows
    are gone already; the file scrub is run again (:func:`.erasure.recheck`, the
    witness's texts looked for again) so the retry completes it."""
    store = graph.store
    status, file_report, causes = erasure.recheck(store, graph.now(), wait_s)
    residual = residual_references(store, node_id)
    if residual and status == "scrubbed":
        status, causes = erasure.verdict(file_report, (), residual)
    quoting: list[str] = next((c["node_ids"] for c in causes if c["cause"] == "quoting_nodes"), [])
    return {
        "erased": True,
        "node_id": node_id,
        "resolved_to": None,
        "already_erased": True,
        "erased_ids": [],
        "rewritten_ids": [],
        "edges_removed": 0,
        "scrubbed": {},
        "residual": residual,
        "nodes_quoting_content": quoting,
        "file": file_report,
        "causes": causes,
        "status": status,
    }
