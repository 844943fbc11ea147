"""server-memory's memory file: one JSON object per line, parsed strictly.

The file ``@modelcontextprotocol/server-memory`` keeps (``MEMORY_FILE_PATH``)
holds ``{"type": "entity", name, entityType, observations}`` and
``{"type": "relation", from, to, relationType}`` lines.  ``graphonomous import-memory``
streams the file: a first pass checks every line (nothing is written when one
is malformed), then entities and relations are imported a chunk at a time
inside one transaction (:meth:`..view.MemoryView.import_stream`), so memory
does not grow with the file size.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..hygiene import NUL_MESSAGE, HostileInput, loads_strict, nul_path
from ..model import GraphonomousError

ENTITY_FIELDS: Final = ("name", "entityType", "observations")
# Lines imported per step of a streamed import (each step is a savepoint of the one
# import transaction): bounds the Python objects alive at once.
IMPORT_CHUNK: Final = 2000
RELATION_FIELDS: Final = ("from", "to", "relationType")


class MemoryFileError(GraphonomousError, ValueError):
    """Line `line` (1-based) of a memory file is malformed."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True)
class MemoryFile:
    """A parsed server-memory file: (line number, record) pairs in file order."""

    entities: list[tuple[int, dict[str, Any]]]
    relations: list[tuple[int, dict[str, str]]]


def parse_memory_jsonl(text: str) -> MemoryFile:
    """Parse server-memory's JSONL: one ``{"type": "entity", name, entityType,
    observations}`` or ``{"type": "relation", from, to, relationType}`` object per
    line; blank lines are skipped and other keys ignored.

    Raises MemoryFileError for the first malformed line (not JSON, not an
    object, another type, a missing or mistyped field).  O(len(text)).
    """
    entities: list[tuple[int, dict[str, Any]]] = []
    relations: list[tuple[int, dict[str, str]]] = []
    for number, kind, record in iter_records(text.splitlines()):
        (entities if kind == "entity" else relations).append((number, record))
    return MemoryFile(entities, relations)


def iter_records(lines: Iterable[str]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, "entity" | "relation", record) for every non-blank line, in order;
    raises MemoryFileError at the first malformed one.  Holds one line at a time, so a
    file object streams: O(longest line) memory."""
    for number, line in enumerate(lines, start=1):
        parsed = parse_line(number, line)
        if parsed is not None:
            yield number, parsed[0], parsed[1]


def parse_line(number: int, line: str) -> tuple[str, dict[str, Any]] | None:
    """One line of a memory file: None when blank, else (kind, record with only the
    known fields).  Raises MemoryFileError naming the line."""
    if not line.strip():
        return None
    try:
        item = loads_strict(line, "the line")
    except HostileInput as exc:
        raise MemoryFileError(number, str(exc)) from None
    if not isinstance(item, dict):
        raise MemoryFileError(number, "expected a JSON object")
    kind = item.get("type")
    if kind == "entity":
        _check_fields(number, item, ENTITY_FIELDS)
        observations = item["observations"]
        if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
            raise MemoryFileError(number, "observations must be a list of strings")
        return "entity", _stored(number, item, ENTITY_FIELDS)
    if kind == "relation":
        _check_fields(number, item, RELATION_FIELDS)
        return "relation", _stored(number, item, RELATION_FIELDS)
    raise MemoryFileError(number, f'"type" must be "entity" or "relation"; got {json.dumps(kind)}')


def chunked(
    records: Iterable[tuple[int, str, dict[str, Any]]], kind: str, size: int = IMPORT_CHUNK
) -> Iterator[MemoryFile]:
    """The records of one kind, `size` at a time, as small MemoryFiles (streaming)."""
    batch: list[tuple[int, dict[str, Any]]] = []
    for number, found, record in records:
        if found != kind:
            continue
        batch.append((number, record))
        if len(batch) >= size:
            yield _as_file(kind, batch)
            batch = []
    if batch:
        yield _as_file(kind, batch)


def _as_file(kind: str, batch: list[tuple[int, dict[str, Any]]]) -> MemoryFile:
    if kind == "entity":
        return MemoryFile(batch, [])
    return MemoryFile([], [(number, {k: str(v) for k, v in r.items()}) for number, r in batch])


def _stored(number: int, item: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The fields of `item` that are stored; NUL in one is refused naming it (SPEC
    "Input hygiene": PostgreSQL cannot hold it, so neither backend stores it)."""
    record = {key: item[key] for key in names}
    where = nul_path(record, "$")
    if where is not None:
        raise MemoryFileError(number, f"{where[2:]}: {NUL_MESSAGE}")
    return record


def _check_fields(number: int, item: Mapping[str, Any], names: Sequence[str]) -> None:
    for name in names:
        if name not in item:
            raise MemoryFileError(number, f"{item['type']} without {name!r}")
        if name != "observations" and not isinstance(item[name], str):
            raise MemoryFileError(number, f"{name!r} must be a string")
