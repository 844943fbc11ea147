"""Getting a memory out and back in: `export` / `import` (the export format) and `backup`.

- :func:`export_lines` — the export format, version `EXPORT_VERSION` (SPEC "Export
  format"): JSON Lines, one object per line.  Line 1 is the header ``{"format":
  "graphonomous-export", "version", "schema_version", "embedding_models", "vectors",
  "counts"}``; every further line is one row of a memory table, ``{"table": NAME,
  "row": {column: value, ...}}``, tables in `store.dump.MEMORY_TABLES` order (vectors
  last, only with ``vectors=True``), rows in primary-key order, columns in schema
  order.  Which tables are memory and how a row becomes a record is
  `store/dump.py`'s.  No line carries the time of the export: exporting the same
  memory twice gives the same bytes.
- :func:`read_export` checks a whole file before anything is written: the header
  (format, a version this code reads, a schema no newer than this one), every record
  (known table, exactly its columns, values of the column's type, clean JSON), no
  key twice, and the header's counts against the records (a truncated file is
  refused).  Errors are `ExportFileError` naming the line.
- :func:`import_export` writes the records in one transaction, ids and timestamps
  verbatim (`store.dump.merge`): idempotent (a second import of the same file changes
  nothing and says so); a record whose key is held with other content is a conflict:
  the whole import is refused listing them, unless ``replace=True`` overwrites them.
  Rows of the database that the file does not hold are kept.  After the commit the
  live searchable nodes lacking a vector of this process's embedder are embedded.
- :func:`backup` — SQLite's online backup API from a separate read
  connection: a consistent copy of the whole database (WAL content
  included) even while a server writes; the copy is written to a temporary
  file beside the target and renamed into place, so a failed backup never
  leaves a half-written file under the target name.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .api import Graphonomous
from .hygiene import problems
from .model import GraphonomousError
from .store import SCHEMA_VERSION, dump
from .store.schema import JSON_COLUMNS

# Pages copied per backup step (the writer gets the lock between steps).
BACKUP_PAGES_PER_STEP: Final = 1024
# The header's `format` value: what tells an export from any other JSONL file.
EXPORT_FORMAT: Final = "graphonomous-export"
# The format version this code writes and the only one it reads (SPEC "Export format":
# a change of fields, tables or encoding is a new version).
EXPORT_VERSION: Final = 1
# The header's fields, in the order written; each is required.
HEADER_FIELDS: Final = (
    "format",
    "version",
    "schema_version",
    "embedding_models",
    "vectors",
    "counts",
)
# A record's fields (every line after the header).
RECORD_FIELDS: Final = frozenset({"table", "row"})
# The per-table figures the import report also sums.
_TOTALS: Final = ("records", "inserted", "unchanged", "replaced")
# Conflicts named in the refusal's message (`ImportConflict.conflicts` holds all).
CONFLICTS_SHOWN: Final = 10


class ExportFileError(GraphonomousError):
    """An export file that cannot be imported, or a refused import; nothing was written."""


class ImportConflict(ExportFileError):
    """Records whose key the database holds with other content (`conflicts`: every one,
    as ``line N: TABLE KEY``); refused without ``replace``."""

    def __init__(self, conflicts: list[str]) -> None:
        super().__init__(_conflict_message(conflicts))
        self.conflicts = conflicts


@dataclass
class ExportFile:
    """A checked export: its header and its records per table, with their line numbers."""

    header: dict[str, Any]
    records: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def export_lines(graph: Graphonomous, *, vectors: bool = False) -> Iterator[str]:
    """The lines of the export (module docstring), read in one snapshot.  Raises
    ExportFileError for a stored JSON column that holds no JSON (a damaged row).
    O(rows of the memory tables)."""
    layouts = dump.exported(vectors)
    with graph.lock, graph.store.read_snapshot():
        try:
            tables = {layout.name: dump.read(graph.store, layout) for layout in layouts}
        except dump.DumpError as exc:  # a damaged row: nothing is written
            raise ExportFileError(f"{exc}; nothing was exported") from exc
        models = sorted(graph.store.embedding_counts())
        schema = graph.store.schema_version
    header = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "schema_version": schema,
        "embedding_models": models,
        "vectors": vectors,
        "counts": {name: len(rows) for name, rows in tables.items()},
    }
    yield _dumps(header)
    for name, rows in tables.items():
        for row in rows:
            yield _dumps({"table": name, "row": row})


# -- reading an export -------------------------------------------------------------------


def _parse(number: int, line: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not a JSON number")

    try:
        return json.loads(line, parse_constant=refuse)
    except RecursionError:
        raise ExportFileError(f"line {number}: nested too deeply to parse") from None
    except ValueError as exc:  # JSONDecodeError included
        raise ExportFileError(f"line {number}: not valid JSON: {exc}") from None


def _check_header(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get("format") != EXPORT_FORMAT:
        raise ExportFileError(
            f'line 1: not a graphonomous export (the first line must be a header with "format": '
            f'"{EXPORT_FORMAT}"; batch operations go to `graphonomous batch`)'
        )
    version = value.get("version")
    if version != EXPORT_VERSION or isinstance(version, bool):
        raise ExportFileError(
            f"line 1: export format version {version!r} is not supported "
            f"(this graphonomous reads version {EXPORT_VERSION})"
        )
    unknown = sorted(set(value) - set(HEADER_FIELDS))
    missing = [name for name in HEADER_FIELDS if name not in value]
    if unknown or missing:
        what = f"unknown field {unknown[0]!r}" if unknown else f"missing field {missing[0]!r}"
        raise ExportFileError(f"line 1: header has {what}")
    schema = value["schema_version"]
    if not isinstance(schema, int) or isinstance(schema, bool) or schema > SCHEMA_VERSION:
        raise ExportFileError(
            f"line 1: field 'schema_version' {schema!r} is not one this graphonomous knows "
            f"(it has schema version {SCHEMA_VERSION}; upgrade graphonomous to import this file)"
        )
    if not isinstance(value["vectors"], bool):
        raise ExportFileError("line 1: field 'vectors' must be true or false")
    models = value["embedding_models"]
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise ExportFileError("line 1: field 'embedding_models' must be a list of model names")
    return value


def _check_counts(header: dict[str, Any]) -> dict[str, int]:
    wanted = [layout.name for layout in dump.exported(header["vectors"])]
    counts = header["counts"]
    if not isinstance(counts, dict) or sorted(counts) != sorted(wanted):
        raise ExportFileError(
            f"line 1: field 'counts' must count exactly the tables {', '.join(wanted)}"
        )
    for name, count in counts.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ExportFileError(f"line 1: field 'counts.{name}' must be a count")
    return counts


def _check_record(number: int, value: Any, allowed: dict[str, int]) -> tuple[str, dict[str, Any]]:
    if not isinstance(value, dict) or set(value) != RECORD_FIELDS:
        raise ExportFileError(f'line {number}: a record is {{"table": NAME, "row": {{...}}}}')
    table, row = value["table"], value["row"]
    if table not in allowed:
        raise ExportFileError(
            f"line {number}: field 'table' {table!r} is not one of {', '.join(allowed)}"
        )
    if not isinstance(row, dict):
        raise ExportFileError(f"line {number}: field 'row' must be an object")
    layout = dump.layouts()[table]
    problem = dump.problem(layout, row)
    if problem is None:
        problem = _hygiene(layout, row)
    if problem is not None:
        raise ExportFileError(f"line {number}: {problem}")
    return table, row


def _hygiene(layout: dump.Layout, row: dict[str, Any]) -> str | None:
    """The first hygiene problem of a text or JSON value (lone surrogates, nesting).
    Integers are not held to 2**53 here: a row's INTEGER columns are 64-bit
    (`source_files.mtime_ns` is nanoseconds)."""
    for name, value in row.items():
        if isinstance(value, str) or (layout.name, name) in JSON_COLUMNS:
            found = problems(value, f"field {name!r}")
            if found:
                return f"{found[0][0]} {found[0][1]}"
    return None


def read_export(lines: Iterable[str]) -> ExportFile:
    """Check a whole export (module docstring); raises ExportFileError naming the line.
    Blank lines are ignored.  O(size of the file)."""
    parsed: ExportFile | None = None
    counts: dict[str, int] = {}
    seen: dict[tuple[str, tuple[Any, ...]], int] = {}
    last = 0
    for number, line in enumerate(lines, 1):
        last = number
        if not line.strip():
            continue
        value = _parse(number, line)
        if parsed is None:
            if number != 1:
                raise ExportFileError(f"line {number}: the header must be line 1")
            header = _check_header(value)
            counts = _check_counts(header)
            parsed = ExportFile(header, {name: [] for name in counts})
            continue
        table, row = _check_record(number, value, counts)
        key = (table, dump.key_of(dump.layouts()[table], row))
        if key in seen:
            raise ExportFileError(f"line {number}: {table} row repeats line {seen[key]}")
        seen[key] = number
        parsed.records[table].append((number, row))
    if parsed is None:
        raise ExportFileError("line 1: the file is empty (an export starts with its header)")
    for name, count in counts.items():
        held = len(parsed.records[name])
        if held != count:
            raise ExportFileError(
                f"line {last + 1} (end of file): the header counts {count} {name} rows, "
                f"the file holds {held} (a truncated or edited export)"
            )
    return parsed


# -- importing -----------------------------------------------------------------------------


def import_export(
    graph: Graphonomous, export: ExportFile, *, replace: bool = False
) -> dict[str, Any]:
    """Write a checked export into the graph in one transaction (module docstring).

    Output: ``{"format", "version", "changed", "replace", "records", "inserted",
    "unchanged", "replaced", "tables": [{"table", "records", "inserted", "unchanged",
    "replaced"}]}``.  Raises ImportConflict (conflicts without `replace`) or
    ExportFileError (a row the schema refuses: a missing parent node, a duplicate
    edge); nothing is written then.
    Complexity: O(rows of the memory tables + records).
    """
    tables: list[dict[str, Any]] = []
    conflicts: list[str] = []
    with graph.engine.write() as store:
        for layout in dump.exported(export.header["vectors"]):
            records = export.records[layout.name]
            try:
                merged = dump.merge(store, layout, records, replace=replace)
            except dump.DumpError as exc:
                raise ExportFileError(f"{exc}; nothing was imported") from exc
            conflicts += merged.conflicts
            tables.append(
                {
                    "table": layout.name,
                    "records": len(records),
                    "inserted": merged.inserted,
                    "unchanged": merged.unchanged,
                    "replaced": merged.replaced,
                }
            )
        if conflicts:
            raise ImportConflict(conflicts)
    totals = {key: sum(t[key] for t in tables) for key in _TOTALS}
    embedded = graph.engine.embed_missing()["embedded"]
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "changed": totals["inserted"] + totals["replaced"] > 0,
        "replace": replace,
        **totals,
        "embedded": embedded,
        "tables": tables,
    }


def _conflict_message(conflicts: list[str]) -> str:
    shown = "; ".join(conflicts[:CONFLICTS_SHOWN])
    hidden = len(conflicts) - CONFLICTS_SHOWN
    more = f"; and {hidden} more" if hidden > 0 else ""
    return (
        f"{len(conflicts)} record(s) hold an id the database already has with other content "
        f"({shown}{more}); pass --replace to overwrite them with the file's; nothing was imported"
    )


# -- backup ----------------------------------------------------------------------------------


def backup(db_path: str, target: str | os.PathLike[str]) -> dict[str, Any]:
    """Copy the database at `db_path` to `target` (module docstring).

    Output: ``{"source", "target", "bytes", "pages"}``.  Raises OSError or
    sqlite3.Error (the caller names them); `target` must not be the source.
    """
    destination = Path(target).expanduser().resolve()
    if destination == Path(db_path).resolve():
        raise ValueError("the backup target is the database itself")
    temporary = destination.with_name(f".{destination.name}.partial")
    source = sqlite3.connect(f"file:{Path(db_path).as_posix()}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(temporary)
        try:
            source.backup(copy, pages=BACKUP_PAGES_PER_STEP)
            pages = int(copy.execute("PRAGMA page_count").fetchone()[0])
        finally:
            copy.close()
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        source.close()
    os.replace(temporary, destination)
    return {
        "source": str(Path(db_path).resolve()),
        "target": str(destination),
        "bytes": destination.stat().st_size,
        "pages": pages,
    }
