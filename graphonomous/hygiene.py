"""Input hygiene: values that parse as JSON but cannot be stored or sent back.

Rules (SPEC.md, "Input hygiene"), applied at every boundary (MCP tool
arguments, CLI arguments and JSON read from files or stdin) before anything
reaches the graph:

* text that cannot be encoded as UTF-8 — a lone surrogate such as ``"\\ud800"``
  (valid JSON, invalid Unicode) — is **rejected**, never replaced: silently
  changing a caller's text would store something they did not send, and a
  replaced id would name another node.  The error names the field.
* integers (and integral floats) beyond ±(2**53 − 1) are rejected: that is the
  interoperable JSON range (RFC 7493 §2.2) and SQLite's 64-bit column fits it.
* non-finite numbers (NaN, ±Infinity) are rejected.
* values nested deeper than :data:`MAX_DEPTH` are rejected (a recursion bomb
  must not reach recursive code further in).
* text holding NUL is refused where it would be *stored* (:func:`refuse_nul`, called
  by the stores' and goal/outcome writers; a query may hold it).

Pure functions, stdlib only, no imports from the rest of the package, so every
layer may use them.  Complexity: O(size of the value).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any, Final

from .model import NUL_MESSAGE as NUL_MESSAGE
from .model import GraphonomousError, ValidationError

# The largest integer JSON peers agree on (IEEE-754 doubles are exact up to here).
MAX_JSON_INTEGER: Final = 2**53 - 1
# Nesting deeper than this is not a knowledge graph argument; it is an attack or a bug.
MAX_DEPTH: Final = 64


def encodable(text: str) -> bool:
    """True when `text` has a UTF-8 encoding (no lone surrogates).  O(len(text))."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _member(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]"


def problems(value: Any, path: str = "$", depth: int = 0) -> list[tuple[str, str]]:
    """Every (JSON path, message) where `value` breaks the hygiene rules; empty when clean.

    The path uses the same syntax as :class:`graphonomous.contract.schema.Violation`
    (``$.field[2]``), so the caller can name the field it came from.
    """
    if depth > MAX_DEPTH:
        shown = path if len(path) <= 60 else path[:60] + "…"
        return [(shown, f"is nested deeper than {MAX_DEPTH} levels")]
    if isinstance(value, str):
        return [] if encodable(value) else [(path, "contains a lone surrogate (not valid Unicode)")]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        return [] if abs(value) <= MAX_JSON_INTEGER else [(path, _too_large(value))]
    if isinstance(value, float):
        if not math.isfinite(value):
            return [(path, "must be a finite number")]
        if value.is_integer() and abs(value) > MAX_JSON_INTEGER:
            return [(path, _too_large(value))]
        return []
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            key_text = str(key)
            if not encodable(key_text):
                out.append((path, "has a key with a lone surrogate (not valid Unicode)"))
                continue
            out += problems(item, _member(path, key_text), depth + 1)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            out += problems(item, f"{path}[{index}]", depth + 1)
    return out


def _too_large(value: float) -> str:
    shown = repr(value) if abs(value) < 10**30 else "a number of magnitude above 1e30"
    return f"is out of range (magnitude above {MAX_JSON_INTEGER}); got {shown}"


def first_problem(value: Any, field: str) -> str | None:
    """``"field.sub: message"`` for the first hygiene problem of `value`, or None."""
    found = problems(value, "$")
    if not found:
        return None
    where, message = found[0]
    suffix = where[1:].lstrip(".")
    name = (
        field if not suffix else (f"{field}{suffix}" if suffix[0] == "[" else f"{field}.{suffix}")
    )
    return f"{name}: {message}"


# NUL (U+0000) in text: SQLite would store it, PostgreSQL refuses it in text and jsonb
# columns.  One behaviour on both backends: refused before the write, naming the field
# (a ValidationError: CLI exit 2, an MCP isError result).  The message lives in model
# (check_id refuses NUL in ids with it).


def nul_path(value: Any, path: str) -> str | None:
    """The path (``path.key[2]``) of the first text holding NUL in `value` (a key
    counts), else None."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    items: Iterable[tuple[str, Any]] = ()
    if isinstance(value, dict):
        for key in value:
            if "\x00" in str(key):
                return path
        items = ((f"{path}.{key}", item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{index}]", item) for index, item in enumerate(value))
    for where, item in items:
        found = nul_path(item, where)
        if found is not None:
            return found
    return None


def refuse_nul(column: str, value: Any) -> None:
    """Raise ValidationError naming the field when `value` (a column's) holds NUL."""
    where = nul_path(value, column)
    if where is not None:
        raise ValidationError(where, NUL_MESSAGE)


class HostileInput(GraphonomousError, ValueError):
    """JSON text that parses badly or breaks the hygiene rules; the message names where."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads_strict(text: str, what: str = "input") -> Any:
    """Parse JSON text strictly: NaN/Infinity, nesting beyond the parser's reach,
    integer literals beyond Python's conversion limit and hygiene problems all
    raise :class:`HostileInput` with one line naming `what` and the place.
    Never raises anything else.  O(len(text))."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise HostileInput(f"{what} is nested too deeply to parse") from None
    except json.JSONDecodeError as exc:
        raise HostileInput(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:  # NaN, or an integer literal longer than 4,300 digits
        raise HostileInput(f"{what} is not valid JSON: {exc}") from None
    found = problems(value)
    if found:
        where, message = found[0]
        raise HostileInput(f"{what} {where}: {message}")
    return value
