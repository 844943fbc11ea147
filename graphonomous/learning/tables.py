"""SQL for the learning-(A) bookkeeping tables: outcomes, revisions, forgetting_config.

(Owned by the learner / beliefs / forgetting / uncertainty modules; the
consolidation side keeps its SQL in ``bookkeeping.py``.)  The table layouts
live in ``store/schema.py``; this module only reads and writes rows.  It goes
through the store's connection helpers (``Store.execute`` / ``Store.query``),
so every statement shares the store's lock and transaction; all SQL is
parameterised.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..model import canonical_json
from ..store import Store

FORGETTING_CONFIG_ID: Final = "default"
# Defaults of the forgetting_config row (seed 004 schema).
DEFAULT_FORGETTING_POLICY: Final = "hybrid"
# Seed 003 config `max_nodes` (soft): the budget of learned nodes (retention.py).
DEFAULT_MAX_NODES: Final = 50_000
DEFAULT_MAX_AGE_HOURS: Final = 720
# Two id lists per statement stay under SQLite's 999-variable limit.
ID_CHUNK: Final = 400


def execute(store: Store, sql: str, params: Sequence[Any] = ()) -> int:
    """Run one write statement written in this package; returns the changed row count."""
    return int(store.execute(sql, params).rowcount)


def query(store: Store, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
    """Run one read statement written in this package."""
    return store.query(sql, params)


def _dumps(value: object) -> str:
    return canonical_json(value)


# -- outcomes ----------------------------------------------------------------


def insert_outcome(store: Store, row: Mapping[str, Any]) -> None:
    """One outcomes row: id, action_id, status, confidence, causal_node_ids, evidence,
    goal_id, outcome_node_id, created_at and (optional) signal_id.  O(1)."""
    execute(
        store,
        "INSERT INTO outcomes (id, action_id, status, confidence, causal_node_ids, evidence, "
        "goal_id, outcome_node_id, created_at, signal_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            row["id"],
            row["action_id"],
            row["status"],
            row["confidence"],
            _dumps(row["causal_node_ids"]),
            _dumps(row["evidence"]),
            row["goal_id"],
            row["outcome_node_id"],
            row["created_at"],
            row.get("signal_id"),
        ),
    )


def outcome_with_signal(store: Store, signal_id: str) -> dict[str, Any] | None:
    """The outcomes row recorded under an idempotency key (id, action_id, status,
    goal_id, outcome_node_id), or None.  O(log rows) (unique index)."""
    rows = query(
        store,
        "SELECT id, action_id, status, goal_id, outcome_node_id FROM outcomes WHERE signal_id = ?",
        (signal_id,),
    )
    return dict(rows[0]) if rows else None


def outcome_rows(store: Store) -> list[dict[str, Any]]:
    """Every outcomes row (JSON columns decoded), oldest first.  O(rows)."""
    rows = query(
        store,
        "SELECT id, action_id, status, confidence, causal_node_ids, evidence, goal_id, "
        "outcome_node_id, created_at FROM outcomes ORDER BY created_at, id",
    )
    out = []
    for row in rows:
        values = dict(row)
        values["causal_node_ids"] = json.loads(values["causal_node_ids"])
        values["evidence"] = json.loads(values["evidence"])
        out.append(values)
    return out


def goal_node_of(store: Store, goal_id: str) -> str | None:
    """The node id recorded for a goals row, or None."""
    rows = query(store, "SELECT node_id FROM goals WHERE id = ?", (goal_id,))
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


# -- revisions ---------------------------------------------------------------


def insert_revision(store: Store, row: Mapping[str, Any]) -> None:
    """One revisions row: id, operation, old_node_id, new_node_id, reason, details, created_at."""
    execute(
        store,
        "INSERT INTO revisions (id, operation, old_node_id, new_node_id, reason, details, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            row["id"],
            row["operation"],
            row["old_node_id"],
            row["new_node_id"],
            row["reason"],
            _dumps(row["details"]),
            row["created_at"],
        ),
    )


def revisions_touching(store: Store, node_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Revision records naming any of `node_ids` as old or new node, oldest first (then id)."""
    wanted = sorted(set(node_ids))
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(wanted), ID_CHUNK):
        chunk = wanted[start : start + ID_CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = query(
            store,
            "SELECT id, operation, old_node_id, new_node_id, reason, details, created_at "
            f"FROM revisions WHERE old_node_id IN ({marks}) OR new_node_id IN ({marks})",
            [*chunk, *chunk],
        )
        for row in rows:
            values = dict(row)
            values["details"] = json.loads(values["details"])
            found[values["id"]] = values
    return sorted(found.values(), key=lambda r: (r["created_at"], r["id"]))


# -- forgetting_config -------------------------------------------------------


def read_forgetting_config(store: Store) -> dict[str, Any]:
    """The forgetting_config row (defaults when it was never written)."""
    rows = query(
        store,
        "SELECT policy, max_nodes, max_age_hours, updated_at FROM forgetting_config WHERE id = ?",
        (FORGETTING_CONFIG_ID,),
    )
    if not rows:
        return {
            "policy": DEFAULT_FORGETTING_POLICY,
            "max_nodes": DEFAULT_MAX_NODES,
            "max_age_hours": DEFAULT_MAX_AGE_HOURS,
            "updated_at": None,
        }
    return dict(rows[0])


def write_forgetting_config(
    store: Store, policy: str, max_nodes: int, max_age_hours: int, now: str
) -> None:
    """Upsert the forgetting_config row."""
    execute(
        store,
        "INSERT INTO forgetting_config (id, policy, max_nodes, max_age_hours, updated_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET policy = excluded.policy, "
        "max_nodes = excluded.max_nodes, max_age_hours = excluded.max_age_hours, "
        "updated_at = excluded.updated_at",
        (FORGETTING_CONFIG_ID, policy, max_nodes, max_age_hours, now),
    )
