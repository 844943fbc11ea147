"""MCP tools, declared once as data, and the surfaces that group them.

Each tool is a :class:`ToolSpec`: name, title, description, JSON Schemas for
its input and output, behaviour hints, and a handler ``handler(graph,
arguments) -> dict``.  The same specs drive argument validation and
``tools/list`` in the server, and :mod:`.docs` renders them as the Markdown
that SPEC.md carries, so the documented schemas are generated from the code
and never copied by hand.

The tool sets live in their own modules, built on the helpers below:

* :mod:`.v1` — seed 003's 29 v1 tools (plus ``analyze_topology``, seed 000's
  name of ``topology_analyze``), each a thin adapter over one facade method;
* :mod:`.machines` — the five v2 "machines" (one tool per loop phase,
  dispatching on ``action`` to the v1 handlers);
* :mod:`.memory_compat` — the tool API of ``@modelcontextprotocol/server-memory``.

A *surface* is the ordered tuple of tools one server exposes (:data:`SURFACES`),
with its own ``instructions`` text (:data:`SURFACE_INSTRUCTIONS`).

Enumerations in the schemas come from :mod:`graphonomous.model` and the
modules that own them; schemas use only the JSON Schema keywords
:mod:`graphonomous.contract.schema` understands, and no combinator at the top
level of an input schema (several LLM hosts reject ``anyOf``/``allOf`` there),
so rules that span several fields are checked by the handlers and reported as
``ValidationError``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..contract.schema import SchemaValidator, Violation, load_package_schema
from ..hygiene import MAX_JSON_INTEGER, problems
from ..model import CREATION_SOURCES, NODE_TYPES, RELATIONSHIPS, TIMESCALES, ValidationError

if TYPE_CHECKING:
    from ..api import Graphonomous

# A tool handler: the facade and the validated arguments in, a JSON-ready result out.
Handler = Callable[["Graphonomous", dict[str, Any]], dict[str, Any]]
# Checks of a tool's arguments beyond its inputSchema (run once the schema holds).
ArgumentCheck = Callable[[dict[str, Any]], list[Violation]]


@dataclass(frozen=True)
class ToolAnnotations:
    """MCP behaviour hints (untrusted by clients, but shown to users and models).

    Our meaning, applied to every tool alike: `read_only` — the call never
    writes the database, bookkeeping included (access counters, logs, audit
    entries); `destructive` — it may delete or hide existing nodes or edges;
    `idempotent` — repeating the call with the same arguments changes nothing
    more (a repeat may fail, e.g. "not found"); `open_world` — it reaches
    outside the local graph (none of ours does).
    """

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False

    def to_dict(self) -> dict[str, bool]:
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool.  The schemas are checked (and compiled) when the spec is built."""

    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    annotations: ToolAnnotations
    handler: Handler
    # The text of content[0] for a result; default: the result's JSON.  (The
    # memory-compat tools answer with server-memory's exact texts.)
    render_text: Callable[[dict[str, Any]], str] | None = None
    # Validation the inputSchema cannot express (a machine checks the chosen
    # action's arguments against that v1 tool's schema).
    argument_check: ArgumentCheck | None = None
    # Renames applied to the arguments before validation (upstream names, mcp/upstream.py).
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # The result's ``_meta`` (MCP's field for data beside the result), or None: the
    # memory-compat reads put provenance there, leaving server-memory's shapes intact.
    meta: Callable[[Any, dict[str, Any]], dict[str, Any] | None] | None = None
    # The isError text of a ValidationError the handler raised, or None for the default
    # ``Invalid argument 'field': message`` (the memory-compat tools answer some errors
    # with server-memory's bare texts).
    error_text: Callable[[ValidationError], str | None] | None = None
    # The isError text for arguments that break the schema, or None for the default
    # (describe_violations); the memory-compat tools answer with server-memory's texts.
    violation_text: Callable[[ToolSpec, dict[str, Any], Sequence[Violation]], str | None] | None = (
        None
    )
    _input_validator: SchemaValidator = field(init=False, repr=False, compare=False)
    _output_validator: SchemaValidator | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.input_schema.get("type") != "object":
            raise ValueError(f"tool {self.name}: inputSchema must have type object")
        if self.output_schema is not None and self.output_schema.get("type") != "object":
            raise ValueError(f"tool {self.name}: outputSchema must have type object")
        object.__setattr__(self, "_input_validator", SchemaValidator(self.input_schema))
        output = None if self.output_schema is None else SchemaValidator(self.output_schema)
        object.__setattr__(self, "_output_validator", output)

    def check_arguments(self, arguments: Any) -> list[Violation]:
        """Every way `arguments` breaks the hygiene rules (:mod:`graphonomous.hygiene`:
        lone surrogates, integers beyond ±2**53, nesting), else the input schema,
        then the extra check (empty when valid)."""
        dirty = [Violation(path, message, "hygiene") for path, message in problems(arguments)]
        if dirty:
            return dirty
        violations = self._input_validator.validate(arguments)
        if violations or self.argument_check is None:
            return violations
        return self.argument_check(arguments)

    def check_output(self, result: Any) -> list[Violation]:
        """Every way a handler result breaks the output schema (empty when valid)."""
        return [] if self._output_validator is None else self._output_validator.validate(result)

    def to_mcp(self) -> dict[str, Any]:
        """The ``tools/list`` entry (camelCase keys, as MCP defines them)."""
        out: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": copy.deepcopy(dict(self.input_schema)),
        }
        if self.output_schema is not None:
            out["outputSchema"] = copy.deepcopy(dict(self.output_schema))
        out["annotations"] = self.annotations.to_dict()
        return out


# --------------------------------------------------------------------------
# Schema building blocks (shared by the tool modules)
# --------------------------------------------------------------------------


def obj(
    properties: Mapping[str, Any],
    required: Sequence[str] = (),
    *,
    closed: bool = True,
    description: str | None = None,
) -> dict[str, Any]:
    """An object schema.  Inputs are closed (unknown keys are errors); outputs stay open
    so a new result field never breaks a client that validates structuredContent."""
    out: dict[str, Any] = {"type": "object"}
    if description:
        out["description"] = description
    out["properties"] = dict(properties)
    if required:
        out["required"] = list(required)
    out["additionalProperties"] = not closed
    return out


def out_obj(properties: Mapping[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    """An open output object (see :func:`obj`)."""
    return obj(properties, required, closed=False)


def text(description: str, **extra: Any) -> dict[str, Any]:
    """A string property."""
    return {"type": "string", "description": description, **extra}


def choice(values: Sequence[str], description: str) -> dict[str, Any]:
    """A string property restricted to `values`."""
    return {"type": "string", "enum": list(values), "description": description}


def unit(description: str) -> dict[str, Any]:
    """A number in [0, 1]."""
    return {"type": "number", "minimum": 0, "maximum": 1, "description": description}


# The default upper bound of an input integer: far above any real count or offset, and
# far below SQLite's 64-bit limit (an offset of 2**63 overflowed before this bound).
MAX_INPUT_INTEGER: Final = 2**31 - 1
assert MAX_INPUT_INTEGER <= MAX_JSON_INTEGER


def integer(description: str, minimum: int, maximum: int = MAX_INPUT_INTEGER) -> dict[str, Any]:
    """An integer property with bounds (every input integer has both)."""
    out: dict[str, Any] = {"type": "integer", "minimum": minimum, "maximum": maximum}
    out["description"] = description
    return out


# Provenance is a path, URL or tool name: PATH_MAX (4,096 on Linux) is the longest real one.
MAX_SOURCE_CHARS: Final = 4096


def flag(description: str) -> dict[str, Any]:
    """A boolean property."""
    return {"type": "boolean", "description": description}


def ids(description: str) -> dict[str, Any]:
    """An array of node ids."""
    return {"type": "array", "items": ID, "description": description}


def array(items: Mapping[str, Any]) -> dict[str, Any]:
    """An array of `items` (outputs)."""
    return {"type": "array", "items": dict(items)}


def nullable(schema: Mapping[str, Any] | str) -> dict[str, Any]:
    """`schema` (or a type name) or null.

    anyOf instead of a type list: hosts that map schemas onto a single-type
    dialect (Gemini's OpenAPI subset) accept it (inspector --strict advice).
    """
    inner = {"type": schema} if isinstance(schema, str) else dict(schema)
    return {"anyOf": [inner, {"type": "null"}]}


ID: Final[dict[str, Any]] = {"type": "string", "minLength": 1}
STRING: Final[dict[str, Any]] = {"type": "string"}
NUMBER: Final[dict[str, Any]] = {"type": "number"}
INTEGER: Final[dict[str, Any]] = {"type": "integer"}
BOOLEAN: Final[dict[str, Any]] = {"type": "boolean"}
OBJECT: Final[dict[str, Any]] = {"type": "object"}
COUNT: Final[dict[str, Any]] = {"type": "integer", "minimum": 0}
STRINGS: Final[dict[str, Any]] = {"type": "array", "items": {"type": "string"}}
JSON_OBJECT: Final[dict[str, Any]] = {
    "anyOf": [{"type": "object"}, {"type": "string"}],
    "description": "A JSON object (a string holding a JSON object is accepted).",
}

# Provenance of every result (retrieval/provenance.py): file path and lines of
# an ingested chunk, the writer's own `source` otherwise.
PROVENANCE_OUTPUT: Final[dict[str, Any]] = {
    "path": nullable("string"),
    "line_start": nullable("integer"),
    "line_end": nullable("integer"),
    "source": nullable("string"),
}

NODE_OUTPUT: Final[dict[str, Any]] = out_obj(
    {
        "id": STRING,
        "node_type": {"enum": list(NODE_TYPES)},
        "content": STRING,
        "metadata": OBJECT,
        "source": nullable("string"),
        "causal_parent_ids": STRINGS,
        "confidence": NUMBER,
        "access_count": INTEGER,
        "last_accessed_at": nullable("string"),
        "creation_source": {"enum": list(CREATION_SOURCES)},
        "timescale": {"enum": list(TIMESCALES)},
        "decay_rate": NUMBER,
        "q_value": NUMBER,
        "q_update_count": INTEGER,
        "evidence_count": INTEGER,
        "revision_id": nullable("string"),
        "superseded_by": nullable("string"),
        "forgotten_at": nullable("string"),
        "pinned": BOOLEAN,
        "agent_id": STRING,
        "created_at": STRING,
        "updated_at": STRING,
        "valid_from": nullable("string"),
        "valid_to": nullable("string"),
        "reinforced_at": nullable("string"),
        "base_confidence": nullable("number"),
        "base_q_value": nullable("number"),
        "forgotten_reason": nullable("string"),
    },
    ("id", "node_type", "content", "confidence", "created_at"),
)
EDGE_OUTPUT: Final[dict[str, Any]] = out_obj(
    {
        "id": STRING,
        "source_id": STRING,
        "target_id": STRING,
        "relationship": {"enum": list(RELATIONSHIPS)},
        "strength": NUMBER,
        "co_activation_count": INTEGER,
        "decay_rate": NUMBER,
        "metadata": OBJECT,
        "agent_id": STRING,
        "created_at": STRING,
        "updated_at": STRING,
    },
    ("id", "source_id", "target_id", "relationship", "strength"),
)
NODES: Final[dict[str, Any]] = array(NODE_OUTPUT)
EDGES: Final[dict[str, Any]] = array(EDGE_OUTPUT)


def inline_refs(schema: Any, defs: Mapping[str, Any]) -> Any:
    """`schema` with every ``#/$defs/name`` reference replaced by its target.

    Tool schemas are sent to clients self-contained: some hosts do not resolve $ref.
    """
    if isinstance(schema, list):
        return [inline_refs(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        ref = schema["$ref"]
        prefix = "#/$defs/"
        if not (isinstance(ref, str) and ref.startswith(prefix)):
            raise ValueError(f"cannot inline reference {ref!r}")
        target = inline_refs(defs[ref[len(prefix) :]], defs)
        rest = {k: inline_refs(v, defs) for k, v in schema.items() if k != "$ref"}
        return {**target, **rest}
    return {k: inline_refs(v, defs) for k, v in schema.items()}


def topology_result_schema() -> dict[str, Any]:
    """The κ topology result of seed 000 §A.1 (strict: closed objects), from the
    package's contract schema, references inlined.  A fresh copy per call."""
    contract = load_package_schema("graphonomous.contract", "topology.schema.json")
    result = inline_refs(contract["$defs"]["topology_result"], contract["$defs"])
    assert isinstance(result, dict)
    return result


# --------------------------------------------------------------------------
# Markdown (rendered into docs/mcp-tools.md by graphonomous.mcp.docs)
# --------------------------------------------------------------------------


def schema_type(schema: Mapping[str, Any]) -> str:
    """A short human-readable type for a property schema (Markdown-safe)."""
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v, ensure_ascii=False)}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " \\| ".join(schema_type(branch) for branch in schema["anyOf"])
    kind = schema.get("type", "any")
    names = kind if isinstance(kind, list) else [kind]
    out = " \\| ".join(str(name) for name in names)
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        out = f"array of {schema_type(schema['items'])}"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        out += f" in [{low}, {high}]"
    elif low is not None:
        out += f" ≥ {low}"
    return out


def property_table(schema: Mapping[str, Any]) -> list[str]:
    """Markdown table lines: one row per property of an object schema."""
    properties = schema.get("properties", {})
    if not properties:
        return ["(no fields)"]
    required = set(schema.get("required", ()))
    lines = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, sub in properties.items():
        description = str(sub.get("description", "")).replace("|", "\\|")
        mark = "yes" if name in required else ""
        lines.append(f"| `{name}` | {schema_type(sub)} | {mark} | {description} |")
    return lines


def _output_lines(schema: Mapping[str, Any]) -> list[str]:
    lines = ["Output (`structuredContent`, also the JSON text of `content[0]`):", ""]
    if "anyOf" in schema and not schema.get("properties"):
        return [*lines, str(schema.get("description", "")), ""]
    return [*lines, *property_table(schema), ""]


def annotation_text(annotations: ToolAnnotations) -> str:
    """``readOnlyHint=false, …`` for the Markdown."""
    return ", ".join(f"{k}={str(v).lower()}" for k, v in annotations.to_dict().items())


def describe_tool(spec: ToolSpec, heading_level: int = 3) -> str:
    """The Markdown section of one tool: description, hints, input and output fields,
    and the exact input schema (one line of JSON)."""
    lines = [
        f"{'#' * heading_level} `{spec.name}` — {spec.title}",
        "",
        spec.description,
        "",
        f"Annotations: {annotation_text(spec.annotations)}.",
        "",
        "Input:",
        "",
        *property_table(spec.input_schema),
        "",
    ]
    if spec.output_schema is not None:
        lines += _output_lines(spec.output_schema)
    lines += [
        "<details><summary>inputSchema</summary>",
        "",
        "```json",
        json.dumps(spec.input_schema, ensure_ascii=False),
        "```",
        "",
        "</details>",
        "",
    ]
    return "\n".join(lines)
