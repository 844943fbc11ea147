"""SQL for the learning tables: outcomes, revisions, forgetting_config, goals,
consolidation runs and attention items.

The table layouts live in ``store/schema.py`` (migrations 2 and 3); this module
only reads and writes rows, turning each into the JSON-ready dict the facade
returns, so the column layout is spelled out in one place.  Every JSON column
is written with the one canonical encoder (`model.canonical_json`: sorted
keys, no NaN).  It goes
through the store's connection helpers (``Store.execute`` / ``Store.query``),
so every statement shares the store's lock and transaction; all SQL is
parameterised.  Every statement is bound to the store's namespace (``namespace =
?`` with ``store.namespace``; the forgetting configuration's row is keyed by it),
so one project's outcomes, goals, runs and items are never another's (SPEC
"Namespaces").
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ..hygiene import refuse_nul
from ..model import canonical_json, new_id
from ..store import Store

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


def execute_many(store: Store, sql: str, rows: Iterable[Sequence[Any]]) -> None:
    """Run one statement once per parameter row (sqlite3 ``executemany``)."""
    with store._lock:
        store.execute_many(sql, rows)


def _dumps(value: object) -> str:
    return canonical_json(value)


# -- outcomes ----------------------------------------------------------------


def insert_outcome(store: Store, row: Mapping[str, Any]) -> None:
    """One outcomes row: id, action_id, status, confidence, causal_node_ids, evidence,
    goal_id, outcome_node_id, created_at and (optional) signal_id.  O(1)."""
    for column in ("action_id", "status", "evidence"):
        refuse_nul(column, row[column])
    execute(
        store,
        "INSERT INTO outcomes (id, action_id, status, confidence, causal_node_ids, evidence, "
        "goal_id, outcome_node_id, created_at, signal_id, namespace) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            store.namespace,
        ),
    )


def outcome_with_signal(store: Store, signal_id: str) -> dict[str, Any] | None:
    """The outcomes row recorded under an idempotency key (id, action_id, status,
    goal_id, outcome_node_id), or None.  O(log rows) (unique index)."""
    rows = query(
        store,
        "SELECT id, action_id, status, goal_id, outcome_node_id FROM outcomes "
        "WHERE signal_id = ? AND namespace = ?",
        (signal_id, store.namespace),
    )
    return dict(rows[0]) if rows else None


def outcome_rows(store: Store) -> list[dict[str, Any]]:
    """Every outcomes row (JSON columns decoded), oldest first.  O(rows)."""
    rows = query(
        store,
        "SELECT id, action_id, status, confidence, causal_node_ids, evidence, goal_id, "
        "outcome_node_id, created_at FROM outcomes WHERE namespace = ? ORDER BY created_at, id",
        (store.namespace,),
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
    rows = query(
        store,
        "SELECT node_id FROM goals WHERE id = ? AND namespace = ?",
        (goal_id, store.namespace),
    )
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


# -- revisions ---------------------------------------------------------------


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
            "FROM revisions WHERE namespace = ? "
            f"AND (old_node_id IN ({marks}) OR new_node_id IN ({marks}))",
            [store.namespace, *chunk, *chunk],
        )
        for row in rows:
            values = dict(row)
            values["details"] = json.loads(values["details"])
            found[values["id"]] = values
    return sorted(found.values(), key=lambda r: (r["created_at"], r["id"]))


# -- forgetting_config -------------------------------------------------------


def read_forgetting_config(store: Store) -> dict[str, Any]:
    """The forgetting_config row of the store's namespace (its `id`; defaults when it was
    never written)."""
    rows = query(
        store,
        "SELECT policy, max_nodes, max_age_hours, updated_at FROM forgetting_config WHERE id = ?",
        (store.namespace,),
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
    """Upsert the forgetting_config row of the store's namespace."""
    execute(
        store,
        "INSERT INTO forgetting_config (id, policy, max_nodes, max_age_hours, updated_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET policy = excluded.policy, "
        "max_nodes = excluded.max_nodes, max_age_hours = excluded.max_age_hours, "
        "updated_at = excluded.updated_at",
        (store.namespace, policy, max_nodes, max_age_hours, now),
    )


# -- goals, consolidation runs, attention items ---------------------------

# attention_items.status values.
ITEM_OPEN: Final = "open"
ITEM_RESOLVED: Final = "resolved"
ITEM_STATUSES: Final = (ITEM_OPEN, ITEM_RESOLVED)
ITEM_SEVERITIES: Final = ("info", "warning", "critical")

GOAL_COLUMNS: Final = (
    "id",
    "node_id",
    "title",
    "description",
    "status",
    "priority",
    "progress",
    "parent_goal_id",
    "linked_node_ids",
    "metadata",
    "agent_id",
    "created_at",
    "updated_at",
)
_GOAL_JSON: Final = ("linked_node_ids", "metadata")


# -- raw statements -------------------------------------------------------------


# -- goals ------------------------------------------------------------------------


def goal_from_row(row: sqlite3.Row) -> dict[str, Any]:
    """A goals row as the JSON-ready goal dict (columns in `GOAL_COLUMNS` order)."""
    goal = {column: row[column] for column in GOAL_COLUMNS}
    for column in _GOAL_JSON:
        goal[column] = json.loads(goal[column])
    return goal


def get_goal_row(store: Store, goal_id: str) -> dict[str, Any] | None:
    rows = query(
        store,
        f"SELECT {', '.join(GOAL_COLUMNS)} FROM goals WHERE id = ? AND namespace = ?",
        (goal_id, store.namespace),
    )
    return goal_from_row(rows[0]) if rows else None


def insert_goal(store: Store, goal: dict[str, Any]) -> None:
    for column in GOAL_COLUMNS:
        refuse_nul(column, goal[column])  # as for nodes: never stored, on either backend
    params = [_dumps(goal[c]) if c in _GOAL_JSON else goal[c] for c in GOAL_COLUMNS]
    marks = ", ".join("?" * (len(GOAL_COLUMNS) + 1))
    execute(
        store,
        f"INSERT INTO goals ({', '.join(GOAL_COLUMNS)}, namespace) VALUES ({marks})",
        [*params, store.namespace],
    )


def update_goal_row(store: Store, goal_id: str, **fields: Any) -> None:
    """Set columns of one goal (names come from this package, never from input)."""
    unknown = set(fields) - set(GOAL_COLUMNS[1:])
    if unknown:
        raise ValueError(f"unknown goal columns: {sorted(unknown)}")
    names = sorted(fields)
    for name in names:
        refuse_nul(name, fields[name])
    values = [_dumps(fields[n]) if n in _GOAL_JSON else fields[n] for n in names]
    assignments = ", ".join(f"{name} = ?" for name in names)
    execute(
        store,
        f"UPDATE goals SET {assignments} WHERE id = ? AND namespace = ?",
        [*values, goal_id, store.namespace],
    )


def list_goal_rows(
    store: Store,
    *,
    status: str | None = None,
    parent_goal_id: str | None = None,
    agent_id: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Goals ordered by priority (highest first), then creation time and id."""
    clauses: list[str] = ["namespace = ?"]
    params: list[Any] = [store.namespace]
    for column, value in (
        ("status", status),
        ("parent_goal_id", parent_goal_id),
        ("agent_id", agent_id),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    where = f" WHERE {' AND '.join(clauses)}"
    sql = (
        f"SELECT {', '.join(GOAL_COLUMNS)} FROM goals{where} ORDER BY priority DESC, created_at, id"
    )
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [goal_from_row(row) for row in query(store, sql, params)]


def goal_status_counts(store: Store) -> dict[str, int]:
    rows = query(
        store,
        "SELECT status, count(*) FROM goals WHERE namespace = ? GROUP BY status ORDER BY status",
        (store.namespace,),
    )
    return {str(row[0]): int(row[1]) for row in rows}


# -- consolidation log ------------------------------------------------------------


def append_consolidation_log(
    store: Store,
    *,
    started_at: str,
    finished_at: str,
    trigger: str,
    dry_run: bool,
    stages: list[dict[str, Any]],
    totals: dict[str, Any],
) -> str:
    """Append one run to ``consolidation_log``; returns the entry id."""
    entry_id = new_id()
    execute(
        store,
        "INSERT INTO consolidation_log (id, started_at, finished_at, trigger, dry_run, stages, "
        "totals, namespace) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry_id,
            started_at,
            finished_at,
            trigger,
            int(dry_run),
            _dumps(stages),
            _dumps(totals),
            store.namespace,
        ),
    )
    return entry_id


_LOG_SELECT: Final = (
    "SELECT id, started_at, finished_at, trigger, dry_run, stages, totals FROM consolidation_log"
)


def consolidation_entry(store: Store, entry_id: str) -> dict[str, Any]:
    """One run by id (raises KeyError when absent)."""
    rows = query(
        store, f"{_LOG_SELECT} WHERE id = ? AND namespace = ?", (entry_id, store.namespace)
    )
    if not rows:
        raise KeyError(entry_id)
    return _log_entry(rows[0])


def consolidation_entries(
    store: Store, limit: int, *, include_dry_runs: bool = True
) -> list[dict[str, Any]]:
    """Newest runs first (ties broken by id, also newest first)."""
    where = " WHERE namespace = ?" + ("" if include_dry_runs else " AND dry_run = 0")
    rows = query(
        store,
        f"{_LOG_SELECT}{where} ORDER BY started_at DESC, id DESC LIMIT ?",
        (store.namespace, limit),
    )
    return [_log_entry(row) for row in rows]


def _log_entry(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row[0],
        "started_at": row[1],
        "finished_at": row[2],
        "trigger": row[3],
        "dry_run": bool(row[4]),
        "stages": json.loads(row[5]),
        "totals": json.loads(row[6]),
    }


# -- attention items --------------------------------------------------------------


def attention_item_from_row(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row[0],
        "kind": row[1],
        "severity": row[2],
        "subject_ids": json.loads(row[3]),
        "details": json.loads(row[4]),
        "status": row[5],
        "created_at": row[6],
        "resolved_at": row[7],
    }


_ITEM_SELECT: Final = (
    "SELECT id, kind, severity, subject_ids, details, status, created_at, resolved_at "
    "FROM attention_items"
)


def open_attention_item(
    store: Store,
    kind: str,
    severity: str,
    subject_ids: Sequence[str],
    details: dict[str, Any],
    now: str,
) -> tuple[str, bool]:
    """Open an item unless an open one of the same kind and subjects exists.

    Subjects are stored sorted.  Returns ``(item id, created)``.
    """
    subjects = _dumps(sorted(subject_ids))
    existing = query(
        store,
        "SELECT id FROM attention_items WHERE kind = ? AND subject_ids = ? AND status = ? "
        "AND namespace = ?",
        (kind, subjects, ITEM_OPEN, store.namespace),
    )
    if existing:
        return str(existing[0][0]), False
    item_id = new_id()
    execute(
        store,
        "INSERT INTO attention_items (id, kind, severity, subject_ids, details, status, "
        "created_at, namespace) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (item_id, kind, severity, subjects, _dumps(details), ITEM_OPEN, now, store.namespace),
    )
    return item_id, True


def attention_items(
    store: Store, status: str | None = ITEM_OPEN, limit: int | None = None
) -> list[dict[str, Any]]:
    """Items oldest first (then by id); `status` None means every status."""
    sql = f"{_ITEM_SELECT} WHERE namespace = ?"
    params: list[Any] = [store.namespace]
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    sql += " ORDER BY created_at, id"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [attention_item_from_row(row) for row in query(store, sql, params)]


def resolve_attention_item(store: Store, item_id: str, now: str, resolution: str) -> bool:
    """Mark an open item resolved, recording why in ``details.resolution``."""
    rows = query(
        store, f"{_ITEM_SELECT} WHERE id = ? AND namespace = ?", (item_id, store.namespace)
    )
    if not rows or rows[0][5] != ITEM_OPEN:
        return False
    details = json.loads(rows[0][4])
    details["resolution"] = resolution
    execute(
        store,
        "UPDATE attention_items SET status = ?, resolved_at = ?, details = ? "
        "WHERE id = ? AND namespace = ?",
        (ITEM_RESOLVED, now, _dumps(details), item_id, store.namespace),
    )
    return True


# -- revisions --------------------------------------------------------------------


def record_revision(
    store: Store,
    operation: str,
    old_node_id: str | None,
    new_node_id: str | None,
    reason: str,
    details: dict[str, Any],
    now: str,
) -> str:
    """Append one row to ``revisions`` (belief-change provenance); returns its id.
    `reason` is stored verbatim, so NUL in it is refused (`details` is JSON text,
    where NUL is the escape ``\\u0000``: kept on both backends)."""
    refuse_nul("reason", reason)
    revision_id = new_id()
    execute(
        store,
        "INSERT INTO revisions (id, operation, old_node_id, new_node_id, reason, details, "
        "created_at, namespace) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            revision_id,
            operation,
            old_node_id,
            new_node_id,
            reason,
            _dumps(details),
            now,
            store.namespace,
        ),
    )
    return revision_id
