"""The rows a memory is, read and written verbatim: the store side of `export` / `import`.

Rules of this module:
- Every table of the schema is decided here, and `tables_decided` proves that no table
  is left out: MEMORY_TABLES are the memory (exported and imported row for row, every
  column, soft-forgotten nodes included); VECTOR_TABLE holds the per-model vectors
  (exported on request: a pure function of content and embedder, re-embedded on first
  need when absent); DERIVED_TABLES are rebuildable indexes (the change log, the saved
  vector / BM25 / mirror indexes) and never leave the database.
- A row leaves as a record ``{column: value}`` in schema column order: JSON text columns
  (`schema.JSON_COLUMNS`) as the JSON value they hold, BLOBs as base64, everything else
  verbatim (timestamps as stored, never re-read through a clock).  `to_row` inverts
  `to_record` (JSON columns re-encoded with `model.canonical_json`, the stored form).
- Writing (`merge`) goes by primary key, inside the caller's transaction: an absent key
  is inserted, an equal row is left alone, a different one is a conflict (listed; the
  caller refuses) or, with `replace`, overwritten (a node through `Store.update_node`,
  so a changed content drops its vectors).  Rows of the destination that the file does
  not hold are kept.  The audit log is append-only: its rows are matched by content
  (at, action, subject, details) and never replaced; a new one keeps its `seq` when
  that is free, else takes the next after every seq seen (the counter follows).
- An export is one namespace's memory (SPEC "Namespaces"): rows are read from the
  store's namespace only, and written into it.  A record never carries the namespace
  (it is where the rows are read from and written to, not part of them), so a file
  exported from one project imports into another; the forgetting configuration,
  keyed by its namespace, travels as the row ``id = "default"``.
- Tables are written in MEMORY_TABLES order, which puts every foreign key's parent
  first (checked by `layouts`); goals (a goal may have a parent goal) are inserted
  parents first.
Layer: store (stdlib only).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..hygiene import nul_path
from ..model import DEFAULT_NAMESPACE, NUL_MESSAGE, canonical_json
from .migrate import counter, set_counter, table_names
from .schema import JSON_COLUMNS
from .sqlite import Store

# The memory, in the order it is written (parents of foreign keys first).
MEMORY_TABLES: Final = (
    "nodes",
    "edges",
    "goals",
    "outcomes",
    "revisions",
    "source_files",
    "attention_items",
    "consolidation_log",
    "forgetting_config",
    "memory_dangling_relations",
    "audit_log",
)
# Per-model vectors: exported only when asked (`export --vectors`), last (the bulk).
VECTOR_TABLE: Final = "node_embeddings"
# Rebuilt from the rows above: the change log (the index feeders' cursor) and the saved
# derived indexes (their generation points into this database's change log).
DERIVED_TABLES: Final = ("node_changes", "derived_indexes")
# The append-only table: rows matched by content, never replaced (module docstring).
APPEND_ONLY: Final = "audit_log"
# Columns a stored row is matched by in the append-only table (its `seq` is local).
APPEND_ONLY_MATCH: Final = ("at", "action", "subject_id", "details")
# The column that puts a row in a namespace (schema migration 10); never in a record.
NAMESPACE_COLUMN: Final = "namespace"
# The table keyed by its namespace (its `id` is the namespace name).
NAMESPACE_KEYED: Final = "forgetting_config"
# Tables whose writers refuse NUL in every column, JSON ones included (hygiene.refuse_nul:
# PostgreSQL reads their JSON as jsonb, which cannot hold \u0000).  Elsewhere a JSON
# column keeps NUL as its escape \u0000 (an audit entry's or revision's details), and a
# text column never holds NUL on either backend.
NUL_REFUSED_TABLES: Final = frozenset({"nodes", "edges", "goals", "outcomes"})
# SQLite INTEGER is a signed 64-bit value.
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1


class DumpError(Exception):
    """A record the schema refuses, or a stored JSON column that holds no JSON; names
    the line or the row."""


@dataclass(frozen=True)
class Column:
    """One column: its name, declared type (INTEGER / REAL / TEXT / BLOB), NOT NULL."""

    name: str
    kind: str
    required: bool


@dataclass(frozen=True)
class Layout:
    """One table: columns in schema order, primary key, and a self-referencing column."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    parent: str | None = None  # column referencing this table's own key (goals)
    namespaced: bool = False  # the table has a namespace column (left out of `columns`)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)


@dataclass
class Merged:
    """What `merge` did to one table."""

    inserted: int = 0
    unchanged: int = 0
    replaced: int = 0
    conflicts: list[str] = field(default_factory=list)


@functools.cache
def layouts() -> dict[str, Layout]:
    """The layout of every table of a fresh schema, by name (read once per process).
    Raises ValueError when MEMORY_TABLES lists a table before a parent of its keys."""
    with Store(":memory:") as reference:
        names = table_names(reference)
        found = {name: _layout(reference, name) for name in names}
        parents = {
            name: {str(row["table"]) for row in reference.query(f"PRAGMA foreign_key_list({name})")}
            for name in names
        }
    for position, name in enumerate(MEMORY_TABLES):
        late = (parents[name] - {name}) - set(MEMORY_TABLES[:position])
        if late:
            raise ValueError(f"MEMORY_TABLES lists {name} before its parent {sorted(late)}")
    return found


def _layout(reference: Store, name: str) -> Layout:
    info = [row for row in reference.query(f"PRAGMA table_info({name})")]
    namespaced = any(str(row["name"]) == NAMESPACE_COLUMN for row in info)
    info = [row for row in info if str(row["name"]) != NAMESPACE_COLUMN]
    columns = tuple(
        Column(str(row["name"]), str(row["type"]).upper(), bool(row["notnull"])) for row in info
    )
    keyed = sorted((int(row["pk"]), str(row["name"])) for row in info if int(row["pk"]))
    selfish = [
        str(row["from"])
        for row in reference.query(f"PRAGMA foreign_key_list({name})")
        if str(row["table"]) == name
    ]
    key = tuple(column for _, column in keyed) or tuple(c.name for c in columns)
    return Layout(name, columns, key, selfish[0] if selfish else None, namespaced)


def tables_decided() -> set[str]:
    """Tables of the schema that this module has not classified (empty when all are)."""
    decided = {*MEMORY_TABLES, VECTOR_TABLE, *DERIVED_TABLES}
    return set(layouts()) - decided


def exported(vectors: bool) -> list[Layout]:
    """The layouts an export writes, in order."""
    every = layouts()
    return [every[name] for name in (*MEMORY_TABLES, *((VECTOR_TABLE,) if vectors else ()))]


# -- rows <-> records ------------------------------------------------------------------


def to_record(layout: Layout, row: Sequence[Any]) -> dict[str, Any]:
    """One stored row as its record (module docstring)."""
    record: dict[str, Any] = {}
    for column, value in zip(layout.columns, row, strict=True):
        if value is not None and (layout.name, column.name) in JSON_COLUMNS:
            value = _decoded(layout, row, column.name, value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            value = base64.b64encode(bytes(value)).decode("ascii")
        record[column.name] = value
    return record


def _decoded(layout: Layout, row: Sequence[Any], name: str, text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        key = dict(zip(layout.names, row, strict=True))
        shown = "/".join(str(key[column]) for column in layout.key)
        raise DumpError(f"{layout.name} {shown}: column {name} holds no JSON ({exc})") from exc


def to_row(layout: Layout, record: Mapping[str, Any]) -> tuple[Any, ...]:
    """The stored values of a checked record (inverse of `to_record`)."""
    values: list[Any] = []
    for column in layout.columns:
        value = record[column.name]
        if value is not None and (layout.name, column.name) in JSON_COLUMNS:
            value = canonical_json(value)
        elif value is not None and column.kind == "BLOB":
            value = base64.b64decode(value, validate=True)
        values.append(value)
    return tuple(values)


def problem(layout: Layout, record: Mapping[str, Any]) -> str | None:
    """Why `record` is not a row of `layout` (naming the field), or None.  O(columns)."""
    expected = set(layout.names)
    unknown = sorted(set(record) - expected)
    if unknown:
        return f"unknown field {unknown[0]!r} for table {layout.name}"
    missing = [name for name in layout.names if name not in record]
    if missing:
        return f"missing field {missing[0]!r} of table {layout.name}"
    for column in layout.columns:
        found = _value_problem(layout, column, record[column.name])
        if found:
            return f"field {column.name!r} {found}"
    return None


def _value_problem(layout: Layout, column: Column, value: Any) -> str | None:
    if value is None:
        return "must not be null" if column.required else None
    if (layout.name, column.name) in JSON_COLUMNS:
        # any JSON value (the caller checked the line's hygiene)
        refused = layout.name in NUL_REFUSED_TABLES and nul_path(value, "$") is not None
        return NUL_MESSAGE if refused else None
    if column.kind == "INTEGER":
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be an integer"
        return None if INT64_MIN <= value <= INT64_MAX else "is outside 64 bits"
    if column.kind == "REAL":
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if numeric else "must be a number"
    if not isinstance(value, str):
        return "must be a string"
    if "\x00" in value and column.kind != "BLOB":
        return NUL_MESSAGE
    if column.kind == "BLOB":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return "must be base64"
    return None


# -- reading -----------------------------------------------------------------------------


def read(store: Store, layout: Layout) -> list[dict[str, Any]]:
    """Every row of the table in the store's namespace as records, in primary-key
    order.  O(rows)."""
    where, params = _in_namespace(store, layout)
    columns = ", ".join(f"t.{name}" for name in layout.names)
    order = ", ".join(f"t.{name}" for name in layout.key)
    rows = store.query(f"SELECT {columns} FROM {layout.name} t{where} ORDER BY {order}", params)
    records = [to_record(layout, tuple(row)) for row in rows]
    if layout.name == NAMESPACE_KEYED:
        records = [{**record, "id": DEFAULT_NAMESPACE} for record in records]
    return records


def _in_namespace(store: Store, layout: Layout) -> tuple[str, list[Any]]:
    """The FROM-tail (a join and/or WHERE on table alias ``t``) that keeps the rows of
    the store's namespace, and its parameters."""
    if layout.namespaced:
        return f" WHERE t.{NAMESPACE_COLUMN} = ?", [store.namespace]
    if layout.name == VECTOR_TABLE:  # a vector is its node's
        return f" JOIN nodes n ON n.id = t.node_id WHERE n.{NAMESPACE_COLUMN} = ?", [
            store.namespace
        ]
    if layout.name == NAMESPACE_KEYED:
        return " WHERE t.id = ?", [store.namespace]
    return "", []


def key_of(layout: Layout, record: Mapping[str, Any]) -> tuple[Any, ...]:
    """The primary-key values of a record."""
    return tuple(record[name] for name in layout.key)


# -- writing -----------------------------------------------------------------------------


def merge(
    store: Store,
    layout: Layout,
    records: Sequence[tuple[int, dict[str, Any]]],
    *,
    replace: bool,
) -> Merged:
    """Write checked `(line, record)` pairs into one table (module docstring); call inside
    a transaction.  Conflicts are collected (nothing is written for them unless
    `replace`).  Raises DumpError naming the line when the schema refuses a row (a
    foreign key to a missing node, a duplicate edge, a CHECK).  O(rows of the table +
    records)."""
    if layout.name == APPEND_ONLY:
        return _append(store, layout, records)
    held = {key_of(layout, record): record for record in read(store, layout)}
    result = Merged()
    fresh: list[tuple[int, dict[str, Any]]] = []
    for line, record in records:
        present = held.get(key_of(layout, record))
        if present is None:
            fresh.append((line, record))
        elif present == record:
            result.unchanged += 1
        elif replace:
            _write(store, layout, line, record, update=True)
            result.replaced += 1
        else:
            result.conflicts.append(f"line {line}: {layout.name} {_shown(layout, record)}")
    for line, record in _parents_first(layout, fresh):
        _write(store, layout, line, record, update=False)
        result.inserted += 1
    return result


def _shown(layout: Layout, record: Mapping[str, Any]) -> str:
    return "/".join(str(value) for value in key_of(layout, record))


def _parents_first(
    layout: Layout, records: list[tuple[int, dict[str, Any]]]
) -> list[tuple[int, dict[str, Any]]]:
    """`records` reordered so a row referencing its own table comes after its parent
    (file order otherwise).  O(n · depth)."""
    if layout.parent is None:
        return records
    waiting = {record[layout.key[0]] for _, record in records}
    ordered: list[tuple[int, dict[str, Any]]] = []
    pending = list(records)
    while pending:
        ready = [item for item in pending if item[1][layout.parent] not in waiting]
        if not ready:  # a cycle: let the schema name it
            ready = pending[:1]
        ordered += ready
        waiting -= {item[1][layout.key[0]] for item in ready}
        chosen = {id(item) for item in ready}
        pending = [item for item in pending if id(item) not in chosen]
    return ordered


def _write(
    store: Store, layout: Layout, line: int, record: dict[str, Any], *, update: bool
) -> None:
    if layout.name == NAMESPACE_KEYED:
        record = {**record, "id": store.namespace}
    values = to_row(layout, record)
    try:
        if layout.name == VECTOR_TABLE:
            stored = dict(zip(layout.names, values, strict=True))
            if store.get_node(stored["node_id"]) is None:  # another namespace's: missing
                raise sqlite3.IntegrityError("FOREIGN KEY constraint failed")
            store.set_embedding(stored["node_id"], stored["embedding"], stored["model"])
        elif update and layout.name == "nodes":  # a changed content drops its vectors there
            store.update_node(record["id"], **{k: v for k, v in record.items() if k != "id"})
        elif update:
            rest = [name for name in layout.names if name not in layout.key]
            sets = ", ".join(f"{name} = ?" for name in rest)
            keys = [*layout.key, *((NAMESPACE_COLUMN,) if layout.namespaced else ())]
            where = " AND ".join(f"{name} = ?" for name in keys)
            by_name = {
                **dict(zip(layout.names, values, strict=True)),
                NAMESPACE_COLUMN: store.namespace,
            }
            store.execute(
                f"UPDATE {layout.name} SET {sets} WHERE {where}",
                [by_name[name] for name in rest] + [by_name[name] for name in keys],
            )
        else:
            names = [*layout.names, *((NAMESPACE_COLUMN,) if layout.namespaced else ())]
            marks = ", ".join("?" for _ in names)
            row = [*values, *((store.namespace,) if layout.namespaced else ())]
            store.execute(f"INSERT INTO {layout.name} ({', '.join(names)}) VALUES ({marks})", row)
    except sqlite3.IntegrityError as exc:
        raise DumpError(f"line {line}: {layout.name} {_shown(layout, record)}: {exc}") from exc


def _append(store: Store, layout: Layout, records: Iterable[tuple[int, dict[str, Any]]]) -> Merged:
    """The audit log: a row already held (same content, any seq) is unchanged; a new one
    keeps its seq when free, else takes the next one after every seq seen.  The table's
    counter is raised past the highest seq written.  O(rows + records)."""
    held = read(store, layout)
    contents = {_content(record) for record in held}
    taken = {record["seq"] for record in held}
    records = list(records)
    following = max([0, counter(store, layout.name), *taken, *(r["seq"] for _, r in records)])
    result = Merged()
    for line, record in records:
        if _content(record) in contents:
            result.unchanged += 1
            continue
        if record["seq"] in taken:
            following += 1
            record = {**record, "seq": following}
        _write(store, layout, line, record, update=False)
        contents.add(_content(record))
        taken.add(record["seq"])
        result.inserted += 1
    if result.inserted:
        set_counter(store, layout.name, max(counter(store, layout.name), *taken))
    return result


def _content(record: Mapping[str, Any]) -> str:
    return canonical_json([record[name] for name in APPEND_ONLY_MATCH])
