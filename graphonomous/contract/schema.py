"""A small JSON Schema (draft 2020-12) interpreter, standard library only.

It validates a JSON value (as parsed by :mod:`json`) against a schema and
returns *every* violation, each with a JSON path such as ``$.sccs[0].kappa``,
instead of stopping at the first.  It is generic: the κ topology contract and
the PULSE manifest validator both run on it with their own schemas.

Only the keywords listed in :data:`ASSERTION_KEYWORDS` and
:data:`ANNOTATION_KEYWORDS` are understood.  A schema using anything else is
refused with :class:`SchemaError` when the validator is built, because a
silently ignored keyword would make invalid documents pass.

Semantics follow the 2020-12 specification (Core + Validation):

* ``integer`` accepts numbers with a zero fractional part (``2.0``); booleans
  are never numbers;
* ``pattern`` is an unanchored search; patterns are compiled with
  :data:`re.ASCII` so ``\\d`` and ``\\w`` mean ASCII, as in ECMA-262;
* ``format`` is an annotation only (the 2020-12 default);
* ``$ref`` resolves JSON pointers inside the same document (``#``,
  ``#/$defs/name``); remote references are refused.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final
from urllib.parse import unquote

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

ASSERTION_KEYWORDS: Final = frozenset(
    {
        "$ref",
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
    }
)
ANNOTATION_KEYWORDS: Final = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "title",
        "description",
        "default",
        "examples",
        "format",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
JSON_TYPES: Final = ("null", "boolean", "integer", "number", "string", "array", "object")

# A hint hook: (rule, subject, allowed) -> extra advice or None.  Called for an
# unknown object key (rule "additionalProperties", subject = the key, allowed =
# the declared property names) and for a value outside an enum (rule "enum",
# subject = the value, allowed = the enum values).
HintHook = Callable[[str, Any, tuple[Any, ...]], "str | None"]
Schema = Mapping[str, Any] | bool


class SchemaError(ValueError):
    """The schema itself is malformed or uses a keyword this interpreter lacks."""


@dataclass(frozen=True)
class Violation:
    """One problem found in a document.

    `path` is a JSON path into the document (``$`` is the root, ``.key`` or
    ``["odd key"]`` selects a member, ``[3]`` an array item); `message` says
    what is wrong and, where possible, what to write instead; `rule` names the
    schema keyword or semantic rule that failed (stable, machine-readable).
    """

    path: str
    message: str
    rule: str = "schema"

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message, "rule": self.rule}

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


# --------------------------------------------------------------------------
# JSON paths and values
# --------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PATH_TOKEN = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
# One step of a path (member name, index or quoted key); positions.py walks paths with it.
PATH_TOKEN: Final = _PATH_TOKEN


def key_path(path: str, key: str) -> str:
    """The path of member `key` of the object at `path` (``$.a`` or ``$["a b"]``)."""
    if _IDENTIFIER.match(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def index_path(path: str, index: int) -> str:
    """The path of item `index` of the array at `path`."""
    return f"{path}[{index}]"


def path_sort_key(path: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders paths as a document reads: indices numerically.

    ``$.sccs[2]`` sorts before ``$.sccs[10]``; a parent sorts before its members.
    """
    key: list[tuple[int, int, str]] = []
    for match in _PATH_TOKEN.finditer(path):
        name, index, quoted = match.groups()
        if index is not None:
            key.append((0, int(index), ""))
        else:
            key.append((1, 0, name if name is not None else json.loads(quoted)))
    return tuple(key)


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value ("integer" for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def type_matches(value: Any, type_name: str) -> bool:
    """Whether `value` is an instance of JSON Schema type `type_name`."""
    if type_name == "null":
        return value is None
    if type_name == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):  # bool is an int subclass in Python, never a JSON number
        return False
    if type_name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if type_name == "number":
        return isinstance(value, (int, float))
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "array":
        return isinstance(value, list)
    if type_name == "object":
        return isinstance(value, dict)
    raise SchemaError(f"unknown type name {type_name!r}")


def json_equal(left: Any, right: Any) -> bool:
    """JSON value equality: numbers by value (1 == 1.0), booleans never equal numbers."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, list):
        return (
            isinstance(right, list)
            and len(left) == len(right)
            and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
        )
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and left.keys() == right.keys()
            and all(json_equal(left[k], right[k]) for k in left)
        )
    return type(left) is type(right) and bool(left == right)


def describe(value: Any) -> str:
    """A short human description of a value for messages: `string "2"`, `boolean true`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"number {json.dumps(value)}"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > 60:
            text = text[:57] + '…"'
        return f"string {text}"
    if isinstance(value, list):
        return f"array of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _type_phrase(type_name: str) -> str:
    article = "an" if type_name[0] in "aeiou" else "a"
    return "null" if type_name == "null" else f"{article} {type_name}"


# --------------------------------------------------------------------------
# Strict JSON text parsing
# --------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str) -> tuple[Any, list[Violation]]:
    """Parse JSON text strictly.

    Input: the text.  Output: the value and one violation (rule
    ``duplicate-key``) per repeated key inside an object — :func:`json.loads`
    would silently keep the last one.  Raises :class:`ValueError` (a
    :class:`json.JSONDecodeError` for syntax errors) on invalid JSON,
    including ``NaN`` and ``Infinity``.  Complexity O(size of the text).
    """
    # Objects with repeated keys are kept alive here so their ids stay unique.
    repeated: list[tuple[dict[str, Any], list[str]]] = []

    def build_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)  # the last value wins, at the first key's position
        if len(obj) == len(pairs):
            return obj  # the common case: no repeated key
        seen: set[str] = set()
        duplicates: list[str] = []
        for key, _ in pairs:
            if key in seen and key not in duplicates:
                duplicates.append(key)
            seen.add(key)
        repeated.append((obj, duplicates))
        return obj

    value = json.loads(text, object_pairs_hook=build_object, parse_constant=_reject_constant)
    if not repeated:
        return value, []
    by_id = {id(obj): keys for obj, keys in repeated}
    violations = [
        Violation(
            key_path(path, key),
            f"key {key!r} appears more than once in this object; JSON readers keep "
            "different copies, so keys must be unique",
            "duplicate-key",
        )
        for path, obj in _walk_objects(value, "$")
        for key in by_id.get(id(obj), [])
    ]
    return value, violations


def _walk_objects(value: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(value, dict):
        yield path, value
        for key, member in value.items():
            yield from _walk_objects(member, key_path(path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk_objects(item, index_path(path, index))


def package_text(package: str, name: str) -> str:
    """The text of a data file shipped in `package` (``importlib.resources``).

    The only place package data is read: the vendored single-file checker
    replaces this function with one returning its embedded copies.
    """
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def load_package_schema(package: str, name: str) -> dict[str, Any]:
    """Load a schema shipped as package data (see :func:`package_text`)."""
    schema = json.loads(package_text(package, name))
    if not isinstance(schema, dict):
        raise SchemaError(f"{package}/{name}: a schema document must be a JSON object")
    return schema


# --------------------------------------------------------------------------
# The validator
# --------------------------------------------------------------------------


class SchemaValidator:
    """Validate JSON values against one schema document.

    Build once (the schema is checked and its patterns compiled), then call
    :meth:`validate` as often as needed.  `hint` adds advice to unknown-key
    and enum messages (see :data:`HintHook`).

    Complexity: O(size of the instance × number of schema keywords applied to
    each value); ``anyOf``/``oneOf`` validate every alternative.
    Reference: JSON Schema 2020-12, Core §8–10 and Validation §6.
    """

    def __init__(self, schema: Schema, *, hint: HintHook | None = None) -> None:
        self._root = schema
        self._hint = hint
        self._patterns: dict[str, re.Pattern[str]] = {}
        # Per-validator caches (the schema is immutable once built): resolved
        # references, and each subschema's (handler, value) list in keyword order.
        self._resolved: dict[str, Schema] = {}
        self._plans: dict[int, tuple[Mapping[str, Any], list[tuple[_Handler, Any]]]] = {}
        if isinstance(schema, Mapping) and "$schema" in schema and schema["$schema"] != DIALECT:
            raise SchemaError(f"#: only the 2020-12 dialect ({DIALECT}) is supported")
        self._check_schema(schema, "#")

    # -- public ---------------------------------------------------------------

    def validate(self, instance: Any, *, ref: str = "#", path: str = "$") -> list[Violation]:
        """Every violation of `instance` against the (sub)schema at `ref`.

        Input: a parsed JSON value; `ref` is a JSON pointer into this schema
        (``#/$defs/scc``); `path` is the path reported for `instance`.
        Output: violations in the order the schema and instance are visited.
        """
        out: list[Violation] = []
        self._apply(self.resolve(ref), instance, path, out)
        return out

    def is_valid(self, instance: Any, *, ref: str = "#") -> bool:
        return not self.validate(instance, ref=ref)

    def resolve(self, ref: str) -> Schema:
        """The subschema a same-document reference (``#/$defs/x``) points to."""
        if not ref.startswith("#"):
            raise SchemaError(f"only same-document references are supported, got {ref!r}")
        node: Any = self._root
        pointer = unquote(ref[1:])
        if pointer:
            if not pointer.startswith("/"):
                raise SchemaError(f"{ref!r}: anchors are not supported, use a JSON pointer")
            for raw in pointer[1:].split("/"):
                token = raw.replace("~1", "/").replace("~0", "~")
                if isinstance(node, Mapping) and token in node:
                    node = node[token]
                elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                    node = node[int(token)]
                else:
                    raise SchemaError(f"reference {ref!r} does not resolve")
        if not isinstance(node, (Mapping, bool)):
            raise SchemaError(f"reference {ref!r} does not point at a schema")
        return node

    # -- schema checking (once, at construction) ----------------------------

    def _check_schema(self, schema: Any, where: str) -> None:
        if isinstance(schema, bool):
            return
        if not isinstance(schema, Mapping):
            raise SchemaError(f"{where}: a schema must be an object or a boolean")
        for keyword, value in schema.items():
            here = f"{where}/{keyword}"
            if keyword not in ASSERTION_KEYWORDS and keyword not in ANNOTATION_KEYWORDS:
                raise SchemaError(
                    f"{here}: unsupported keyword {keyword!r} (refusing the schema rather "
                    "than silently ignoring it)"
                )
            self._check_keyword(keyword, value, here)

    def _check_keyword(self, keyword: str, value: Any, here: str) -> None:
        if keyword in ("properties", "$defs"):
            if not isinstance(value, Mapping):
                raise SchemaError(f"{here}: must be an object of schemas")
            for name, sub in value.items():
                self._check_schema(sub, f"{here}/{name}")
        elif keyword in ("additionalProperties", "items", "not", "if", "then", "else"):
            if keyword == "items" and isinstance(value, list):
                raise SchemaError(f"{here}: array-form items is not 2020-12 (use prefixItems)")
            self._check_schema(value, here)
        elif keyword in ("allOf", "anyOf", "oneOf"):
            if not isinstance(value, list) or not value:
                raise SchemaError(f"{here}: must be a non-empty array of schemas")
            for index, sub in enumerate(value):
                self._check_schema(sub, f"{here}/{index}")
        elif keyword == "type":
            names = value if isinstance(value, list) else [value]
            if not names or any(name not in JSON_TYPES for name in names):
                raise SchemaError(f"{here}: must be one of {', '.join(JSON_TYPES)} or a list")
        elif keyword == "required":
            if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
                raise SchemaError(f"{here}: must be an array of strings")
        elif keyword == "enum":
            if not isinstance(value, list):
                raise SchemaError(f"{here}: must be an array")
        elif keyword == "pattern":
            self._compile(value, here)
        elif keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SchemaError(f"{here}: must be a number")
        elif keyword in ("minItems", "maxItems", "minLength", "maxLength"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SchemaError(f"{here}: must be a non-negative integer")
        elif keyword == "uniqueItems":
            if not isinstance(value, bool):
                raise SchemaError(f"{here}: must be a boolean")
        elif keyword == "$ref":
            if not isinstance(value, str):
                raise SchemaError(f"{here}: must be a string")
            self.resolve(value)

    def _compile(self, pattern: Any, where: str) -> re.Pattern[str]:
        if not isinstance(pattern, str):
            raise SchemaError(f"{where}: must be a string")
        compiled = self._patterns.get(pattern)
        if compiled is None:
            try:
                compiled = re.compile(pattern, re.ASCII)
            except re.error as exc:
                raise SchemaError(f"{where}: invalid regular expression: {exc}") from exc
            self._patterns[pattern] = compiled
        return compiled

    # -- validation -----------------------------------------------------------

    def _apply(self, schema: Schema, instance: Any, path: str, out: list[Violation]) -> None:
        if schema is True:
            return
        if schema is False:
            out.append(Violation(path, "no value is allowed here", "false"))
            return
        cached = self._plans.get(id(schema))
        if cached is None or cached[0] is not schema:
            assert isinstance(schema, Mapping)
            plan = [(_HANDLERS[k], v) for k, v in schema.items() if k in _HANDLERS]
            cached = (schema, plan)
            self._plans[id(schema)] = cached
        for handler, value in cached[1]:
            handler(self, value, schema, instance, path, out)

    def _ref(
        self, value: str, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        target = self._resolved.get(value)
        if target is None:
            target = self._resolved[value] = self.resolve(value)
        self._apply(target, inst, path, out)

    def _type(
        self, value: Any, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        names: Sequence[str] = value if isinstance(value, list) else [value]
        if not any(type_matches(inst, name) for name in names):
            expected = " or ".join(_type_phrase(name) for name in names)
            out.append(Violation(path, f"must be {expected}; got {describe(inst)}", "type"))

    def _enum(
        self, value: list[Any], _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if any(json_equal(inst, option) for option in value):
            return
        choices = ", ".join(json.dumps(option, ensure_ascii=False) for option in value)
        message = f"must be one of {choices}; got {describe(inst)}"
        advice = self._hint("enum", inst, tuple(value)) if self._hint else None
        out.append(Violation(path, f"{message}; {advice}" if advice else message, "enum"))

    def _const(
        self, value: Any, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if not json_equal(inst, value):
            expected = json.dumps(value, ensure_ascii=False)
            out.append(Violation(path, f"must be {expected}; got {describe(inst)}", "const"))

    def _properties(
        self,
        value: Mapping[str, Any],
        _s: Mapping[str, Any],
        inst: Any,
        path: str,
        out: list[Violation],
    ) -> None:
        if isinstance(inst, dict):
            for name, sub in value.items():
                if name in inst:
                    self._apply(sub, inst[name], key_path(path, name), out)

    def _required(
        self, value: list[str], _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if isinstance(inst, dict):
            for name in value:
                if name not in inst:
                    out.append(
                        Violation(
                            key_path(path, name), f"required key {name!r} is missing", "required"
                        )
                    )

    def _additional(
        self, value: Schema, schema: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if not isinstance(inst, dict):
            return
        declared = schema.get("properties", {})
        allowed = tuple(sorted(declared))
        for key, member in inst.items():
            if key in declared:
                continue
            if value is False:
                advice = self._hint("additionalProperties", key, allowed) if self._hint else None
                if advice is None:
                    advice = f"allowed keys: {', '.join(allowed)}" if allowed else "no keys allowed"
                message = f"unknown key {key!r} is not allowed here; {advice}"
                out.append(Violation(key_path(path, key), message, "additionalProperties"))
            else:
                self._apply(value, member, key_path(path, key), out)

    def _items(
        self, value: Schema, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if isinstance(inst, list):
            for index, item in enumerate(inst):
                self._apply(value, item, index_path(path, index), out)

    def _min_items(
        self, value: int, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if isinstance(inst, list) and len(inst) < value:
            message = f"must have at least {value} item{'' if value == 1 else 's'}; has {len(inst)}"
            out.append(Violation(path, message, "minItems"))

    def _max_items(
        self, value: int, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if isinstance(inst, list) and len(inst) > value:
            message = f"must have at most {value} item{'' if value == 1 else 's'}; has {len(inst)}"
            out.append(Violation(path, message, "maxItems"))

    def _unique(
        self, value: bool, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if not (value and isinstance(inst, list)):
            return
        for later in range(len(inst)):
            for earlier in range(later):
                if json_equal(inst[earlier], inst[later]):
                    message = f"items must be unique; this repeats item [{earlier}]"
                    out.append(Violation(index_path(path, later), message, "uniqueItems"))
                    break

    def _min_length(
        self, value: int, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if isinstance(inst, str) and len(inst) < value:
            message = f"must be at least {value} character{'' if value == 1 else 's'} long"
            out.append(Violation(path, message, "minLength"))

    def _max_length(
        self, value: int, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if isinstance(inst, str) and len(inst) > value:
            message = f"must be at most {value} character{'' if value == 1 else 's'} long"
            out.append(Violation(path, message, "maxLength"))

    def _pattern(
        self, value: str, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        if isinstance(inst, str) and not self._compile(value, path).search(inst):
            out.append(Violation(path, f"must match {value}; got {describe(inst)}", "pattern"))

    def _bound(
        self, keyword: str, limit: float, inst: Any, path: str, out: list[Violation]
    ) -> None:
        if isinstance(inst, bool) or not isinstance(inst, (int, float)) or math.isnan(inst):
            return
        failed, relation = {
            "minimum": (inst < limit, ">="),
            "maximum": (inst > limit, "<="),
            "exclusiveMinimum": (inst <= limit, ">"),
            "exclusiveMaximum": (inst >= limit, "<"),
        }[keyword]
        if failed:
            out.append(
                Violation(
                    path, f"must be {relation} {json.dumps(limit)}; got {json.dumps(inst)}", keyword
                )
            )

    def _all_of(
        self, value: list[Schema], _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        for sub in value:
            self._apply(sub, inst, path, out)

    def _alternatives(self, value: list[Schema], inst: Any, path: str) -> list[list[Violation]]:
        results = []
        for sub in value:
            found: list[Violation] = []
            self._apply(sub, inst, path, found)
            results.append(found)
        return results

    def _any_of(
        self, value: list[Schema], _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        results = self._alternatives(value, inst, path)
        if all(results):
            out.append(Violation(path, _no_alternative("at least one", results), "anyOf"))

    def _one_of(
        self, value: list[Schema], _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        results = self._alternatives(value, inst, path)
        matching = [index for index, found in enumerate(results) if not found]
        if not matching:
            out.append(Violation(path, _no_alternative("exactly one", results), "oneOf"))
        elif len(matching) > 1:
            which = ", ".join(f"#{index}" for index in matching)
            message = f"must match exactly one of {len(value)} alternatives; matches {which}"
            out.append(Violation(path, message, "oneOf"))

    def _not(
        self, value: Schema, _s: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        found: list[Violation] = []
        self._apply(value, inst, path, found)
        if not found:
            out.append(Violation(path, "must not match the schema under 'not'", "not"))

    def _if(
        self, value: Schema, schema: Mapping[str, Any], inst: Any, path: str, out: list[Violation]
    ) -> None:
        found: list[Violation] = []
        self._apply(value, inst, path, found)
        branch = "then" if not found else "else"
        if branch in schema:
            self._apply(schema[branch], inst, path, out)


def _no_alternative(how_many: str, results: list[list[Violation]]) -> str:
    # Fewest violations wins; on a tie prefer an alternative of the right type,
    # whose failure is more telling than "must be null".
    closest = min(
        range(len(results)),
        key=lambda index: (len(results[index]), sum(v.rule == "type" for v in results[index])),
    )
    first = results[closest][0]
    return (
        f"must match {how_many} of {len(results)} alternatives; closest is #{closest}, "
        f"which fails at {first.path}: {first.message}"
    )


_Handler = Callable[[SchemaValidator, Any, Mapping[str, Any], Any, str, list[Violation]], None]


def _bound_handler(keyword: str) -> _Handler:
    def handler(
        self: SchemaValidator,
        value: Any,
        _s: Mapping[str, Any],
        inst: Any,
        path: str,
        out: list[Violation],
    ) -> None:
        self._bound(keyword, value, inst, path, out)

    return handler


# Keyword → handler.  "then"/"else" are applied by "if"; annotations have none.
_HANDLERS: Final[Mapping[str, _Handler]] = {
    "$ref": SchemaValidator._ref,
    "type": SchemaValidator._type,
    "enum": SchemaValidator._enum,
    "const": SchemaValidator._const,
    "properties": SchemaValidator._properties,
    "required": SchemaValidator._required,
    "additionalProperties": SchemaValidator._additional,
    "items": SchemaValidator._items,
    "minItems": SchemaValidator._min_items,
    "maxItems": SchemaValidator._max_items,
    "uniqueItems": SchemaValidator._unique,
    "minLength": SchemaValidator._min_length,
    "maxLength": SchemaValidator._max_length,
    "pattern": SchemaValidator._pattern,
    "minimum": _bound_handler("minimum"),
    "maximum": _bound_handler("maximum"),
    "exclusiveMinimum": _bound_handler("exclusiveMinimum"),
    "exclusiveMaximum": _bound_handler("exclusiveMaximum"),
    "allOf": SchemaValidator._all_of,
    "anyOf": SchemaValidator._any_of,
    "oneOf": SchemaValidator._one_of,
    "not": SchemaValidator._not,
    "if": SchemaValidator._if,
}
