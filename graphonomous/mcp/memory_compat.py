"""The tool API of ``@modelcontextprotocol/server-memory``, served from our graph.

Users of the official memory server can point their MCP client at
``graphonomous serve --surface memory`` and keep their prompts: the nine tools
have the same names, input fields and result shapes (structuredContent *and*
the JSON text, byte for byte), and ``graphonomous import-memory FILE.jsonl``
brings their existing memory file along.

This module is the MCP adapter only: schemas, server-memory's exact texts and
one handler per tool over :meth:`graphonomous.Graphonomous.memory_view`.  How
entities and relations map onto nodes and edges is
:mod:`graphonomous.server_memory`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any, Final

from ..model import ValidationError
from ..server_memory import MemoryToolError, memory_view
from .tools import ToolAnnotations, ToolSpec

if TYPE_CHECKING:
    from ..api import Graphonomous
    from ..contract.schema import Violation

# The status texts server-memory answers its delete tools with.
DELETE_MESSAGES: Final[Mapping[str, str]] = {
    "delete_entities": "Entities deleted successfully",
    "delete_observations": "Observations deleted successfully",
    "delete_relations": "Relations deleted successfully",
}


# --------------------------------------------------------------------------
# Result text: JSON.stringify(value, null, 2), byte for byte
# --------------------------------------------------------------------------
# Python's json.dumps(indent=2) gives the same bytes but runs the pure-Python
# encoder (~2.5x slower); these writers know the three shapes and use the C
# string encoder.


def _entity_text(entity: Mapping[str, Any], pad: str) -> str:
    inner = pad + "  "
    observations = entity["observations"]
    if observations:
        items = ",\n".join(f"{inner}  {encode_basestring(o)}" for o in observations)
        listing = f"[\n{items}\n{inner}]"
    else:
        listing = "[]"
    return (
        f'{pad}{{\n{inner}"name": {encode_basestring(entity["name"])},\n'
        f'{inner}"entityType": {encode_basestring(entity["entityType"])},\n'
        f'{inner}"observations": {listing}\n{pad}}}'
    )


def _relation_text(relation: Mapping[str, Any], pad: str) -> str:
    inner = pad + "  "
    return (
        f'{pad}{{\n{inner}"from": {encode_basestring(relation["from"])},\n'
        f'{inner}"to": {encode_basestring(relation["to"])},\n'
        f'{inner}"relationType": {encode_basestring(relation["relationType"])}\n{pad}}}'
    )


def _result_text(result: Mapping[str, Any], pad: str) -> str:
    inner = pad + "  "
    added = result["addedObservations"]
    listing = (
        "[\n" + ",\n".join(f"{inner}  {encode_basestring(o)}" for o in added) + f"\n{inner}]"
        if added
        else "[]"
    )
    return (
        f'{pad}{{\n{inner}"entityName": {encode_basestring(result["entityName"])},\n'
        f'{inner}"addedObservations": {listing}\n{pad}}}'
    )


def _array_text(
    items: Sequence[Mapping[str, Any]],
    item_text: Callable[[Mapping[str, Any], str], str],
    pad: str = "",
) -> str:
    if not items:
        return "[]"
    inner = pad + "  "
    return "[\n" + ",\n".join(item_text(item, inner) for item in items) + f"\n{pad}]"


# The last result graph_text rendered and its text: read_graph hands out the
# same result object until the graph changes, so re-reads skip rendering.
# (Holding the object keeps its id from being reused; results are never mutated.)
_last_graph_text: tuple[Mapping[str, Any], str] | None = None


def graph_text(result: Mapping[str, Any]) -> str:
    """The text of read_graph / search_nodes / open_nodes."""
    global _last_graph_text
    last = _last_graph_text
    if last is not None and last[0] is result:
        return last[1]
    text = (
        '{\n  "entities": '
        + _array_text(result["entities"], _entity_text, "  ")
        + ',\n  "relations": '
        + _array_text(result["relations"], _relation_text, "  ")
        + "\n}"
    )
    _last_graph_text = (result, text)
    return text


def entities_text(result: Mapping[str, Any]) -> str:
    """The text of create_entities: the created entities as a JSON array."""
    return _array_text(result["entities"], _entity_text)


def relations_text(result: Mapping[str, Any]) -> str:
    """The text of create_relations: the created relations as a JSON array."""
    return _array_text(result["relations"], _relation_text)


def observations_text(result: Mapping[str, Any]) -> str:
    """The text of add_observations: the per-entity results as a JSON array."""
    return _array_text(result["results"], _result_text)


def message_text(result: Mapping[str, Any]) -> str:
    """The text of the delete tools: the plain status message."""
    return str(result["message"])


# --------------------------------------------------------------------------
# Handlers
# --------------------------------------------------------------------------


def bare_error(exc: ValidationError) -> str | None:
    """server-memory's own error texts (``Entity with name X not found``) without our
    ``Invalid argument`` prefix; None (the default text) for our other checks."""
    return exc.message if isinstance(exc, MemoryToolError) else None


# server-memory's argument errors (zod through the MCP TypeScript SDK): this head, then
# one "Invalid input" line per wrong or missing value, in schema order.
_ZOD_HEAD: Final = "MCP error -32602: Input validation error: Invalid arguments for tool "
# The schema rules whose violations zod reports the same way (a wrong JSON type, a
# missing key); any other rule (a closed object, an empty name) keeps our text.
_ZOD_RULES: Final = frozenset({"type", "required"})


def _js_type(value: Any) -> str:
    """The type name zod reports for a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _zod_lines(schema: Mapping[str, Any], value: Any, path: str) -> Iterator[str]:
    """zod's "Invalid input" lines for `value` against a memory schema (object, array,
    string types only), depth first in schema order.  O(size of value)."""
    expected = schema["type"]
    got = _js_type(value)
    if got != expected:
        yield f"Invalid input: expected {expected}, received {got} at {path}"
    elif expected == "object":
        for key, sub in schema["properties"].items():
            inner = f"{path}.{key}" if path else key
            if key in value:
                yield from _zod_lines(sub, value[key], inner)
            else:
                yield f"Invalid input: expected {sub['type']}, received undefined at {inner}"
    elif expected == "array":
        for index, item in enumerate(value):
            yield from _zod_lines(schema["items"], item, f"{path}[{index}]")


def zod_violations(
    spec: ToolSpec, arguments: dict[str, Any], violations: Sequence[Violation]
) -> str | None:
    """server-memory's text for arguments of a wrong type or with a missing key; None
    (our default text, naming each field) when another rule is broken too."""
    if any(v.rule not in _ZOD_RULES for v in violations):
        return None
    lines = list(_zod_lines(spec.input_schema, arguments, ""))
    return f"{_ZOD_HEAD}{spec.name}: " + "\n".join(lines) if lines else None


def _deleted(tool: str) -> dict[str, Any]:
    return {"success": True, "message": DELETE_MESSAGES[tool]}


def create_entities(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `create_entities` → :meth:`MemoryView.create_entities` (source: the tool name)."""
    view = memory_view(graph)
    return {"entities": view.create_entities(arguments["entities"], source="create_entities")}


def create_relations(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `create_relations` → :meth:`MemoryView.create_relations`."""
    return {"relations": memory_view(graph).create_relations(arguments["relations"])}


def add_observations(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `add_observations` → :meth:`MemoryView.add_observations`."""
    return {"results": memory_view(graph).add_observations(arguments["observations"])}


def delete_entities(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `delete_entities` → :meth:`MemoryView.delete_entities`."""
    memory_view(graph).delete_entities(arguments["entityNames"])
    return _deleted("delete_entities")


def delete_observations(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `delete_observations` → :meth:`MemoryView.delete_observations`."""
    memory_view(graph).delete_observations(arguments["deletions"])
    return _deleted("delete_observations")


def delete_relations(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `delete_relations` → :meth:`MemoryView.delete_relations`."""
    memory_view(graph).delete_relations(arguments["relations"])
    return _deleted("delete_relations")


# Provenance goes in the result's _meta under this key (MCP: a prefixed name).
PROVENANCE_META_KEY: Final = "graphonomous/provenance"
# At most this many entities carry provenance in one result (read_graph can return
# the whole graph; the rest are counted in ``omitted``).
MAX_PROVENANCE_ENTITIES: Final = 100


def entity_provenance(graph: Graphonomous, result: dict[str, Any]) -> dict[str, Any] | None:
    """``{PROVENANCE_META_KEY: {"entities": [...], "omitted": n}}`` for the entities of a
    read result (where each came from: node id, source file, times), or None."""
    entities = result.get("entities") or []
    if not entities:
        return None
    names = [str(entity["name"]) for entity in entities[:MAX_PROVENANCE_ENTITIES]]
    found = memory_view(graph).provenance(names)
    omitted = len(entities) - len(names)
    return {PROVENANCE_META_KEY: {"entities": found, "omitted": omitted}}


def read_graph(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `read_graph` → :meth:`MemoryView.read_graph`."""
    return memory_view(graph).read_graph()


def search_nodes(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `search_nodes` → :meth:`MemoryView.search_nodes`."""
    return memory_view(graph).search_nodes(arguments["query"])


def open_nodes(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `open_nodes` → :meth:`MemoryView.open_nodes`."""
    return memory_view(graph).open_nodes(arguments["names"])


# --------------------------------------------------------------------------
# Schemas and specs (field names exactly as server-memory)
# --------------------------------------------------------------------------


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _strings(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _object(properties: Mapping[str, Any], *, closed: bool) -> dict[str, Any]:
    """Every property required; inputs closed, outputs open (as in tools.py)."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": not closed,
    }


def _entity_schema(closed: bool) -> dict[str, Any]:
    return _object(
        {
            # An empty name cannot be opened, related or deleted again: rejected on input.
            "name": {
                **_string("The entity's unique name."),
                **({"minLength": 1} if closed else {}),
            },
            "entityType": _string("What kind of thing it is (person, project, ...)."),
            "observations": _strings("Facts about the entity, one per string."),
        },
        closed=closed,
    )


def _relation_schema(closed: bool) -> dict[str, Any]:
    return _object(
        {
            "from": _string("Name of the entity the relation starts at."),
            "to": _string("Name of the entity the relation points to."),
            "relationType": _string("The relation, in active voice (works_at, depends on, ...)."),
        },
        closed=closed,
    )


def _array(items: Mapping[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "items": dict(items), "description": description}


_GRAPH_OUTPUT: Final = _object(
    {
        "entities": _array(_entity_schema(False), "Entities in creation order."),
        "relations": _array(_relation_schema(False), "Relations in creation order."),
    },
    closed=False,
)
_STATUS_OUTPUT: Final = _object(
    {"success": {"type": "boolean"}, "message": {"type": "string"}}, closed=False
)
_WRITE = ToolAnnotations(read_only=False, destructive=False, idempotent=False)
_DELETE = ToolAnnotations(read_only=False, destructive=True, idempotent=True)
_READ = ToolAnnotations(read_only=True, destructive=False, idempotent=True)

MEMORY_TOOLS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        name="create_entities",
        title="Create Entities",
        description=(
            "Create entities in the knowledge graph. Names are unique: existing names and "
            "repeats within the call are skipped. Returns the entities actually created."
        ),
        input_schema=_object(
            {"entities": _array(_entity_schema(True), "The entities to create.")}, closed=True
        ),
        output_schema=_object(
            {"entities": _array(_entity_schema(False), "The entities created.")}, closed=False
        ),
        annotations=_WRITE,
        handler=create_entities,
        violation_text=zod_violations,
        render_text=entities_text,
    ),
    ToolSpec(
        name="create_relations",
        title="Create Relations",
        description=(
            "Create relations between entities (use active voice). A relation to a name "
            "that is no entity yet is kept and joins it once created. Returns the new relations."
        ),
        input_schema=_object(
            {"relations": _array(_relation_schema(True), "The relations to create.")},
            closed=True,
        ),
        output_schema=_object(
            {"relations": _array(_relation_schema(False), "The relations created.")},
            closed=False,
        ),
        annotations=_WRITE,
        handler=create_relations,
        violation_text=zod_violations,
        render_text=relations_text,
    ),
    ToolSpec(
        name="add_observations",
        title="Add Observations",
        description=(
            "Add observations to existing entities; observations already present are "
            "skipped. Returns what was added per entity."
        ),
        input_schema=_object(
            {
                "observations": _array(
                    _object(
                        {
                            "entityName": _string("The entity to add observations to."),
                            "contents": _strings("The observations to add."),
                        },
                        closed=True,
                    ),
                    "Observations per entity.",
                )
            },
            closed=True,
        ),
        output_schema=_object(
            {
                "results": _array(
                    _object(
                        {"entityName": {"type": "string"}, "addedObservations": _strings("")},
                        closed=False,
                    ),
                    "One result per input item.",
                )
            },
            closed=False,
        ),
        annotations=_WRITE,
        handler=add_observations,
        violation_text=zod_violations,
        render_text=observations_text,
        error_text=bare_error,
    ),
    ToolSpec(
        name="delete_entities",
        title="Delete Entities",
        description="Delete entities and every relation touching them. Unknown names are ignored.",
        input_schema=_object(
            {"entityNames": _strings("Names of the entities to delete.")}, closed=True
        ),
        output_schema=_STATUS_OUTPUT,
        annotations=_DELETE,
        handler=delete_entities,
        violation_text=zod_violations,
        render_text=message_text,
    ),
    ToolSpec(
        name="delete_observations",
        title="Delete Observations",
        description="Delete specific observations from entities. Unknown ones are ignored.",
        input_schema=_object(
            {
                "deletions": _array(
                    _object(
                        {
                            "entityName": _string("The entity holding the observations."),
                            "observations": _strings("The observations to delete."),
                        },
                        closed=True,
                    ),
                    "Observations to delete per entity.",
                )
            },
            closed=True,
        ),
        output_schema=_STATUS_OUTPUT,
        annotations=_DELETE,
        handler=delete_observations,
        violation_text=zod_violations,
        render_text=message_text,
    ),
    ToolSpec(
        name="delete_relations",
        title="Delete Relations",
        description="Delete relations from the knowledge graph. Unknown ones are ignored.",
        input_schema=_object(
            {"relations": _array(_relation_schema(True), "The relations to delete.")},
            closed=True,
        ),
        output_schema=_STATUS_OUTPUT,
        annotations=_DELETE,
        handler=delete_relations,
        violation_text=zod_violations,
        render_text=message_text,
    ),
    ToolSpec(
        name="read_graph",
        title="Read Graph",
        description="Read the whole knowledge graph: every entity and relation.",
        input_schema=_object({}, closed=True),
        output_schema=_GRAPH_OUTPUT,
        annotations=_READ,
        handler=read_graph,
        violation_text=zod_violations,
        render_text=graph_text,
        meta=entity_provenance,
    ),
    ToolSpec(
        name="search_nodes",
        title="Search Nodes",
        description=(
            "Find entities whose name, type or an observation contains the query (case "
            "insensitive), with the relations that touch them."
        ),
        input_schema=_object(
            {"query": _string("Text to look for in entity names, types and observations.")},
            closed=True,
        ),
        output_schema=_GRAPH_OUTPUT,
        annotations=_READ,
        handler=search_nodes,
        violation_text=zod_violations,
        render_text=graph_text,
        meta=entity_provenance,
    ),
    ToolSpec(
        name="open_nodes",
        title="Open Nodes",
        description="Get entities by name, with the relations that touch them.",
        input_schema=_object({"names": _strings("Names of the entities to open.")}, closed=True),
        output_schema=_GRAPH_OUTPUT,
        annotations=_READ,
        handler=open_nodes,
        violation_text=zod_violations,
        render_text=graph_text,
        meta=entity_provenance,
    ),
)

__all__ = [
    "DELETE_MESSAGES",
    "MEMORY_TOOLS",
    "entities_text",
    "graph_text",
    "message_text",
    "observations_text",
    "relations_text",
]
