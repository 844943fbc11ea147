"""`graphonomous migrate SRC DST`: copy a whole graph between backends (SQLite file ↔ PostgreSQL).

Rules of this module:
- Every table of the schema (MIGRATIONS, schema.py) is copied with its ids and bytes:
  nodes, embeddings, edges, goals, outcomes, revisions, audit log, config, bookkeeping,
  the change log and the saved derived indexes; the AUTOINCREMENT counters (audit_log,
  node_changes) are carried too, so the next id is the same on both sides.  Backend
  bookkeeping (PostgreSQL's schema-version and write-counter tables, sqlite_sequence)
  is not a table of the graph.
- The table list, column list, primary key and foreign-key order come from a reference
  schema (a private in-memory SQLite store), so both backends are read the same way.
- Verification: a per-table row count and checksum, the SHA-256 of the table's rows in
  primary-key order, each value encoded with its type (`row_digest`) -- computed by the
  same Python code on both backends.  The copy is checked inside the destination's
  write transaction: a mismatch rolls it back, nothing is kept.
- Idempotent: a destination whose checksums already equal the source's is left
  untouched ("up_to_date"); a non-empty destination with other content is refused
  unless `replace=True` (then its rows are deleted and copied over, in one transaction).
- The source is read in one snapshot (`read_snapshot`) and never written, except
  that opening an older SQLite file upgrades its schema, like every open does.
- Bad input is a MigrateError naming the argument (SRC / DST / --replace).
Layer: store (stdlib; psycopg only through store/postgres.py when a URL is opened).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..model import NUL_MESSAGE
from . import pgvector
from .open import open_store
from .postgres import is_postgres_url, redact
from .sqlite import Store, StoreError

# Tables whose integer primary key is AUTOINCREMENT: their counter is part of the copy.
COUNTED_TABLES: Final = ("audit_log", "node_changes")
# The change log is written by triggers while rows are inserted: it is copied last,
# replacing what those triggers wrote, so it equals the source's exactly.
CHANGE_LOG: Final = "node_changes"
# Rows per multi-row INSERT (bounded statement size), and the bound on its parameters
# (SQLite allows 32766 since 3.32, PostgreSQL 65535).
BATCH_ROWS: Final = 1000
MAX_PARAMETERS: Final = 30000


class MigrateError(Exception):
    """Bad input or a refused destination; `argument` names what to fix."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}")
        self.argument = argument


@dataclass(frozen=True)
class Table:
    """One table of the reference schema: its columns and primary key (in order)."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]


def table_names(store: Store) -> list[str]:
    """The names of `store`'s own tables (SQLite's internal ones left out), sorted."""
    return [
        str(row[0])
        for row in store.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]


def reference_tables() -> list[Table]:
    """The graph's tables, parents before children (foreign keys), from a fresh schema."""
    with Store(":memory:") as reference:
        names = table_names(reference)
        tables: dict[str, Table] = {}
        parents: dict[str, set[str]] = {}
        for name in names:
            info = reference.query(f"PRAGMA table_info({name})")
            columns = tuple(str(row["name"]) for row in info)
            keyed = sorted((int(row["pk"]), str(row["name"])) for row in info if int(row["pk"]))
            tables[name] = Table(name, columns, tuple(column for _, column in keyed) or columns)
            foreign = reference.query(f"PRAGMA foreign_key_list({name})")
            parents[name] = {str(row["table"]) for row in foreign} - {name}
    ordered: list[Table] = []
    done: set[str] = set()
    while len(ordered) < len(names):
        ready = [name for name in names if name not in done and parents[name] <= done]
        for name in ready:
            ordered.append(tables[name])
            done.add(name)
    return ordered


def _value(value: Any) -> Any:
    """One value tagged with its type, so 1, 1.0, '1' and b'1' digest differently."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ["i", int(value)]
    if isinstance(value, int):
        return ["i", value]
    if isinstance(value, float):
        return ["f", value.hex()]
    if isinstance(value, str):
        return ["s", value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ["b", bytes(value).hex()]
    raise StoreError(f"cannot migrate a value of type {type(value).__name__}")


def row_digest(row: Sequence[Any]) -> bytes:
    """The canonical bytes of one row (strict JSON of the tagged values, one line)."""
    text = json.dumps([_value(v) for v in row], ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"


def read_rows(store: Store, table: Table) -> list[tuple[Any, ...]]:
    """Every row of `table` in primary-key order, columns in reference order."""
    columns = ", ".join(table.columns)
    order = ", ".join(table.key)
    rows = store.query(f"SELECT {columns} FROM {table.name} ORDER BY {order}")
    return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in rows]


def checksum(rows: Iterable[Sequence[Any]]) -> str:
    """The SHA-256 (hex) of the rows' canonical bytes, in the order given."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(row_digest(row))
    return digest.hexdigest()


def counter(store: Store, table: str) -> int:
    """The AUTOINCREMENT counter of `table` (the last id handed out; 0: none yet)."""
    if _on_postgres(store):
        rows = store.query(f"SELECT pg_get_serial_sequence('{table}', 'seq')")
        sequence = str(rows[0][0])
        found = store.query(
            f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {sequence}"
        )
        return int(found[0][0])
    found = store.query("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,))
    return int(found[0][0]) if found else 0


def _on_postgres(store: Store) -> bool:
    from .postgres import PostgresStore  # no psycopg import: that happens on open

    return isinstance(store, PostgresStore)


def set_counter(store: Store, table: str, value: int) -> None:
    if _on_postgres(store):
        called = "true" if value > 0 else "false"
        store.query(
            f"SELECT setval(CAST(pg_get_serial_sequence('{table}', 'seq') AS regclass), "
            f"CAST(? AS BIGINT), {called})",
            (max(value, 1),),
        )
        return
    store.execute("DELETE FROM sqlite_sequence WHERE name = ?", (table,))
    if value > 0:
        store.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, value))


@dataclass
class Snapshot:
    """A graph read in full: rows per table and the AUTOINCREMENT counters."""

    rows: dict[str, list[tuple[Any, ...]]]
    counters: dict[str, int]

    def summary(self, tables: Sequence[Table]) -> dict[str, tuple[int, str]]:
        """(row count, checksum) per table."""
        return {t.name: (len(self.rows[t.name]), checksum(self.rows[t.name])) for t in tables}


def snapshot(store: Store, tables: Sequence[Table]) -> Snapshot:
    """Every table of `store` (call inside a read snapshot or write transaction)."""
    return Snapshot(
        {table.name: read_rows(store, table) for table in tables},
        {name: counter(store, name) for name in COUNTED_TABLES},
    )


def _open(argument: str, where: str, *, must_exist: bool) -> Store:
    if not where.strip():
        raise MigrateError(argument, "give a SQLite file path or a postgresql:// URL")
    if not is_postgres_url(where):
        if where == ":memory:":
            raise MigrateError(argument, "':memory:' holds nothing to migrate; give a file")
        path = Path(where).expanduser()
        if must_exist and not path.is_file():
            raise MigrateError(argument, f"{where} is not a database file")
        if path.is_dir():
            raise MigrateError(argument, f"{where} is a directory, not a database file")
    try:
        return open_store(where)
    except StoreError as exc:
        raise MigrateError(argument, str(exc)) from exc


def _refuse_nul(tables: Sequence[Table], source: Snapshot) -> None:
    """MigrateError naming the first table, row and column of `source` whose text holds
    NUL (written by a SQLite store before NUL was refused): PostgreSQL cannot hold it, and
    a copy without it would lose what the user stored.  O(cells)."""
    for table in tables:
        for row in source.rows[table.name]:
            for name, value in zip(table.columns, row, strict=True):
                if isinstance(value, str) and "\x00" in value:
                    key = dict(zip(table.columns, row, strict=True))
                    shown = "/".join(str(key[column]) for column in table.key)
                    raise MigrateError(
                        "SRC",
                        f"{table.name} {shown!r}: column {name} {NUL_MESSAGE} in SRC "
                        "before migrating to PostgreSQL",
                    )


def _insert(table: Table, count: int) -> str:
    """One multi-row INSERT of `count` rows (one statement: PostgreSQL's per-statement
    write-counter trigger fires once per batch, not once per row)."""
    marks = "(" + ", ".join("?" for _ in table.columns) + ")"
    values = ", ".join(marks for _ in range(count))
    return f"INSERT INTO {table.name} ({', '.join(table.columns)}) VALUES {values}"


def _write(dst: Store, tables: Sequence[Table], source: Snapshot, *, clear: bool) -> None:
    """Copy `source` into `dst` (inside its write transaction)."""
    if clear:
        for table in reversed(tables):
            dst.execute(f"DELETE FROM {table.name}")
    last = [t for t in tables if t.name == CHANGE_LOG]
    for table in [*[t for t in tables if t.name != CHANGE_LOG], *last]:
        if table.name == CHANGE_LOG:  # replace what the insert triggers just logged
            if _on_postgres(dst):  # the pgvector column of the copied BLOBs (not copied)
                pgvector.fill_missing(dst)
                dst.execute("ANALYZE")  # planner statistics of the bulk load (a hash join)
            dst.execute(f"DELETE FROM {CHANGE_LOG}")
        rows = source.rows[table.name]
        step = max(1, min(BATCH_ROWS, MAX_PARAMETERS // len(table.columns)))
        for start in range(0, len(rows), step):
            chunk = rows[start : start + step]
            dst.execute(_insert(table, len(chunk)), [v for row in chunk for v in row])
    for name, value in source.counters.items():
        set_counter(dst, name, value)


def _report(
    status: str,
    src: Store,
    dst: Store,
    tables: Sequence[Table],
    summary: dict[str, tuple[int, str]],
    counters: dict[str, int],
) -> dict[str, Any]:
    return {
        "status": status,
        "changed": status != "up_to_date",
        "source": redact(src.path),
        "destination": redact(dst.path),
        "verified": True,
        "tables": [
            {"table": t.name, "rows": summary[t.name][0], "checksum": summary[t.name][1]}
            for t in tables
        ],
        "counters": dict(sorted(counters.items())),
        "total_rows": sum(count for count, _ in summary.values()),
    }


def migrate(source: str, destination: str, *, replace: bool = False) -> dict[str, Any]:
    """Copy the graph at `source` to `destination`; the report (strict JSON).

    status: "copied" (destination was empty), "replaced" (`replace` and it held other
    rows), "up_to_date" (it already held exactly the source's rows: nothing written).
    """
    if source.strip() == destination.strip():
        raise MigrateError("DST", "is the same database as SRC")
    tables = reference_tables()
    src = _open("SRC", source, must_exist=True)
    try:
        dst = _open("DST", destination, must_exist=False)
        try:
            return _copy(src, dst, tables, replace=replace)
        finally:
            dst.close()
    finally:
        src.close()


def _copy(src: Store, dst: Store, tables: Sequence[Table], *, replace: bool) -> dict[str, Any]:
    refusal = dst.write_refusal()
    with src.read_snapshot():
        source = snapshot(src, tables)
    wanted = source.summary(tables)
    with dst.read_snapshot():
        present = snapshot(dst, tables)
    found = present.summary(tables)
    if found == wanted and present.counters == source.counters:
        return _report("up_to_date", src, dst, tables, wanted, source.counters)
    if refusal is not None:
        raise MigrateError("DST", refusal)
    if _on_postgres(dst):
        _refuse_nul(tables, source)
    try:
        with dst.transaction():
            # Decided again under the write lock: another writer may have come first.
            held = sum(len(rows) for rows in snapshot(dst, tables).rows.values())
            if held and not replace:
                raise MigrateError(
                    "DST",
                    f"{redact(dst.path)} already holds {held} rows that differ from SRC; "
                    "pass --replace to overwrite them (or choose an empty destination)",
                )
            _write(dst, tables, source, clear=bool(held))
            copied = snapshot(dst, tables)
            got = copied.summary(tables)
            if got != wanted or copied.counters != source.counters:
                bad = sorted(name for name in wanted if got[name] != wanted[name])
                raise StoreError(
                    f"verification failed for {', '.join(bad) or 'the counters'}: "
                    "the copy was rolled back"
                )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot write {redact(dst.path)}: {exc} (nothing was kept)") from exc
    return _report("replaced" if held else "copied", src, dst, tables, wanted, source.counters)
