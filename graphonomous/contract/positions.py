"""Where each value of a JSON text sits: JSON paths → (line, column), and JSON pointers.

:mod:`json` forgets positions, so CI reports ("file:line") need a second,
small pass over the text.  :func:`locate` scans one JSON value starting at an
offset and records, for every value in it, the offset where a reader's eye
should land: the key of an object member (``"kappa": 2`` → the ``"`` of
``"kappa"``), the first character of an array item, or of the root value.
Paths use the checker's syntax (:func:`~graphonomous.contract.schema.key_path`),
so a violation's path is looked up directly.

Rules of this file:

* the scan runs only on text :func:`json.loads` has already accepted (it
  trusts the syntax and never raises on valid JSON);
* a repeated key records its *last* occurrence, the value :mod:`json` keeps;
* a path that is not in the text (a missing required key) resolves to its
  nearest ancestor that is, so every violation gets a real line;
* lines and columns are 1-based, columns count Unicode code points.

Complexity: O(size of the scanned value) for :func:`locate`; O(log lines)
per :meth:`TextIndex.line_column`.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from typing import Final

from graphonomous.contract.schema import PATH_TOKEN, index_path, key_path

# One token after optional whitespace: a string start, a structural
# character, or a bare literal (number, true, false, null).
_TOKEN: Final = re.compile(r'[ \t\n\r]*(?:(")|([{}\[\],:])|([^ \t\n\r{}\[\],:"]+))')


def _scanstring(text: str, end: int) -> tuple[str, int]:
    """The JSON string whose body starts at `end` (after its quote), and the offset after it."""
    value, after = json.decoder.scanstring(text, end)  # type: ignore[attr-defined]
    return str(value), int(after)


class TextIndex:
    """Offset → (line, column) for one text; newline offsets are found once."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [match.end() for match in re.finditer("\n", text)]

    def line_column(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of character `offset`."""
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


def locate(text: str, start: int = 0, root: str = "$") -> dict[str, int]:
    """Offsets of every value of the JSON value that begins at or after `start`.

    Input: JSON text already accepted by :func:`json.loads`, where to start,
    and the path to report for that value.  Output: path → offset (the key's
    opening quote for object members).  Raises :class:`ValueError` only for
    text that is not JSON (it must have been parsed first).
    """
    offsets: dict[str, int] = {}
    _scan_value(text, start, root, offsets)
    return offsets


def _next_token(text: str, pos: int) -> tuple[int, str, str]:
    """(offset of the token, kind "string"|"punct"|"literal", token text) at `pos`."""
    match = _TOKEN.match(text, pos)
    if match is None:
        raise ValueError(f"not JSON at offset {pos}")
    if match.group(1) is not None:
        return match.start(1), "string", '"'
    if match.group(2) is not None:
        return match.start(2), "punct", match.group(2)
    return match.start(3), "literal", match.group(3)


def _scan_value(text: str, pos: int, path: str, out: dict[str, int]) -> int:
    """Record `path` and its members; return the offset just after the value."""
    at, kind, token = _next_token(text, pos)
    out[path] = at
    if kind == "string":
        return _scanstring(text, at + 1)[1]
    if kind == "literal":
        return at + len(token)
    if token == "{":
        return _scan_object(text, at + 1, path, out)
    if token == "[":
        return _scan_array(text, at + 1, path, out)
    raise ValueError(f"unexpected {token!r} at offset {at}")


def _scan_object(text: str, pos: int, path: str, out: dict[str, int]) -> int:
    at, _, token = _next_token(text, pos)
    if token == "}":
        return at + 1
    while True:
        key, after = _scanstring(text, at + 1)
        colon, _, _ = _next_token(text, after)
        member = key_path(path, key)
        end = _scan_value(text, colon + 1, member, out)
        out[member] = at  # after the members: a repeated key keeps its last occurrence
        at, _, token = _next_token(text, end)
        if token == "}":
            return at + 1
        at, _, _ = _next_token(text, at + 1)  # the next key's quote


def _scan_array(text: str, pos: int, path: str, out: dict[str, int]) -> int:
    at, _, token = _next_token(text, pos)
    if token == "]":
        return at + 1
    index = 0
    end = _scan_value(text, pos, index_path(path, index), out)
    while True:
        at, _, token = _next_token(text, end)
        if token == "]":
            return at + 1
        index += 1
        end = _scan_value(text, at + 1, index_path(path, index), out)


def path_tokens(path: str) -> list[str | int]:
    """The steps of a checker path: ``$.sccs[0]["a b"]`` → ``["sccs", 0, "a b"]``."""
    steps: list[str | int] = []
    for match in PATH_TOKEN.finditer(path):
        name, index, quoted = match.groups()
        if index is not None:
            steps.append(int(index))
        else:
            steps.append(name if name is not None else json.loads(quoted))
    return steps


def json_pointer(path: str) -> str:
    """The RFC 6901 JSON pointer of a checker path (``$.sccs[0].kappa`` → ``/sccs/0/kappa``)."""
    return "".join(
        "/" + str(step).replace("~", "~0").replace("/", "~1") for step in path_tokens(path)
    )


def nearest_offset(offsets: Mapping[str, int], path: str) -> int | None:
    """The offset of `path`, else of its nearest ancestor in `offsets` (None: not even the root)."""
    current = path
    while True:
        if current in offsets:
            return offsets[current]
        parent = _parent_path(current)
        if parent is None:
            return None
        current = parent


def _parent_path(path: str) -> str | None:
    """``$.a[0].b`` → ``$.a[0]`` → ``$.a`` → ``$`` → None (other roots end the same way)."""
    last = None
    for match in PATH_TOKEN.finditer(path):
        last = match
    if last is None or last.end() != len(path):
        return None
    return path[: last.start()]
