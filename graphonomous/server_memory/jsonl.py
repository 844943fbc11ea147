"""server-memory's memory file: one JSON object per line, parsed strictly.

The file ``@modelcontextprotocol/server-memory`` keeps (``MEMORY_FILE_PATH``)
holds ``{"type": "entity", name, entityType, observations}`` and
``{"type": "relation", from, to, relationType}`` lines.  Parsing reads the
whole text first so that ``graphonomous import-memory`` writes nothing when
any line is malformed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..hygiene import HostileInput, loads_strict

ENTITY_FIELDS: Final = ("name", "entityType", "observations")
RELATION_FIELDS: Final = ("from", "to", "relationType")


class MemoryFileError(ValueError):
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
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
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
            if not isinstance(observations, list) or not all(
                isinstance(o, str) for o in observations
            ):
                raise MemoryFileError(number, "observations must be a list of strings")
            entities.append((number, {key: item[key] for key in ENTITY_FIELDS}))
        elif kind == "relation":
            _check_fields(number, item, RELATION_FIELDS)
            relations.append((number, {key: item[key] for key in RELATION_FIELDS}))
        else:
            raise MemoryFileError(
                number, f'"type" must be "entity" or "relation"; got {json.dumps(kind)}'
            )
    return MemoryFile(entities, relations)


def _check_fields(number: int, item: Mapping[str, Any], names: Sequence[str]) -> None:
    for name in names:
        if name not in item:
            raise MemoryFileError(number, f"{item['type']} without {name!r}")
        if name != "observations" and not isinstance(item[name], str):
            raise MemoryFileError(number, f"{name!r} must be a string")
