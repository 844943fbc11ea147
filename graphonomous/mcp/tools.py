"""MCP tools, declared once as data.

Each tool is a :class:`ToolSpec`: name, title, description, JSON Schemas for
its input and output, behaviour hints, and a handler ``handler(graph,
arguments) -> dict``.  The same specs drive argument validation and
``tools/list`` in the server, and :func:`describe_tools` renders them as the
Markdown that SPEC.md carries, so the documented schemas are generated from
this file and never copied by hand.

A *surface* is just a tuple of specs (:data:`SURFACES`).  Handlers are plain
module-level functions over the :class:`graphonomous.Graphonomous` facade, so
the v2 "machine" tools (one tool per loop phase, dispatching on ``action``)
can call the very same functions.

Enumerations in the schemas come from :mod:`graphonomous.model`; schemas use
only the JSON Schema keywords :mod:`graphonomous.contract.schema` understands,
and no combinators at the top level of an input schema (several LLM hosts
reject ``anyOf``/``allOf`` there), so rules that span several fields are
checked by the handlers and reported as ``ValidationError``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..api import EDGE_ACTIONS, MAX_LIST_LIMIT
from ..contract.schema import SchemaValidator, Violation, load_package_schema
from ..model import (
    CREATION_SOURCES,
    EDGE_DIRECTIONS,
    EDGE_FIELD_ALIASES,
    NODE_TYPES,
    RELATIONSHIPS,
    TIMESCALES,
    ValidationError,
)
from ..topology import analyze, build_adjacency

if TYPE_CHECKING:
    from ..api import Graphonomous

Handler = Callable[[Any, dict[str, Any]], dict[str, Any]]
QUERY_OPERATIONS: Final = ("list_nodes", "get_node", "get_edges", "similarity_search")
DEFAULT_SEARCH_LIMIT: Final = 10
# How many node ids / fault lines a topology recommendation spells out.
RECOMMENDATION_LIST_LIMIT: Final = 12


@dataclass(frozen=True)
class ToolAnnotations:
    """MCP behaviour hints (untrusted by clients, but shown to users and models)."""

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
        """Every way `arguments` breaks the input schema (empty when valid)."""
        return self._input_validator.validate(arguments)

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
# Schema building blocks
# --------------------------------------------------------------------------


def _obj(
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


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _enum(values: Sequence[str], description: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values), "description": description}


def _unit(description: str) -> dict[str, Any]:
    return {"type": "number", "minimum": 0, "maximum": 1, "description": description}


def _int(description: str, minimum: int, maximum: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        out["maximum"] = maximum
    out["description"] = description
    return out


_ID = {"type": "string", "minLength": 1}


def _nullable(type_name: str) -> dict[str, Any]:
    # anyOf instead of a type list: hosts that map schemas onto a single-type
    # dialect (Gemini's OpenAPI subset) accept it (inspector --strict advice).
    return {"anyOf": [{"type": type_name}, {"type": "null"}]}


_METADATA = {
    "anyOf": [{"type": "object"}, {"type": "string"}],
    "description": "A JSON object (a string holding a JSON object is accepted).",
}
_LIMIT = _int("Maximum number of items to return.", 1, MAX_LIST_LIMIT)

NODE_OUTPUT: Final = _obj(
    {
        "id": {"type": "string"},
        "node_type": {"enum": list(NODE_TYPES)},
        "content": {"type": "string"},
        "metadata": {"type": "object"},
        "source": _nullable("string"),
        "causal_parent_ids": {"type": "array", "items": {"type": "string"}},
        "confidence": {"type": "number"},
        "access_count": {"type": "integer"},
        "last_accessed_at": _nullable("string"),
        "creation_source": {"enum": list(CREATION_SOURCES)},
        "timescale": {"enum": list(TIMESCALES)},
        "decay_rate": {"type": "number"},
        "q_value": {"type": "number"},
        "q_update_count": {"type": "integer"},
        "evidence_count": {"type": "integer"},
        "revision_id": _nullable("string"),
        "superseded_by": _nullable("string"),
        "forgotten_at": _nullable("string"),
        "pinned": {"type": "boolean"},
        "agent_id": {"type": "string"},
        "created_at": {"type": "string"},
        "updated_at": {"type": "string"},
    },
    ("id", "node_type", "content", "confidence", "created_at"),
    closed=False,
)
EDGE_OUTPUT: Final = _obj(
    {
        "id": {"type": "string"},
        "source_id": {"type": "string"},
        "target_id": {"type": "string"},
        "relationship": {"enum": list(RELATIONSHIPS)},
        "strength": {"type": "number"},
        "co_activation_count": {"type": "integer"},
        "decay_rate": {"type": "number"},
        "metadata": {"type": "object"},
        "agent_id": {"type": "string"},
        "created_at": {"type": "string"},
        "updated_at": {"type": "string"},
    },
    ("id", "source_id", "target_id", "relationship", "strength"),
    closed=False,
)
_NODES = {"type": "array", "items": NODE_OUTPUT}
_EDGES = {"type": "array", "items": EDGE_OUTPUT}
_COUNT = {"type": "integer", "minimum": 0}

# Upstream edge field names (seed 000) accepted next to ours; model.EDGE_FIELD_ALIASES maps them.
_ALIAS_DESCRIPTIONS: Final = {
    "relationship": "Alias of relationship (upstream name).",
    "strength": "Alias of strength (upstream name).",
    "source_id": "Alias of source_id (upstream name).",
    "target_id": "Alias of target_id (upstream name).",
}


def _edge_alias_properties(canonical: Mapping[str, Any]) -> dict[str, Any]:
    """Schema entries for every alias whose canonical field is in `canonical`."""
    out: dict[str, Any] = {}
    for alias, target in EDGE_FIELD_ALIASES.items():
        if target in canonical:
            schema = {k: v for k, v in canonical[target].items() if k != "description"}
            out[alias] = {**schema, "description": _ALIAS_DESCRIPTIONS[target]}
    return out


# --------------------------------------------------------------------------
# Handlers (plain functions over the facade)
# --------------------------------------------------------------------------


def _rename_alias(args: dict[str, Any], alias: str, canonical: str) -> dict[str, Any]:
    """Move `alias` to `canonical`; both with different values is an error."""
    if alias not in args:
        return args
    out = dict(args)
    value = out.pop(alias)
    if out.setdefault(canonical, value) != value:
        raise ValidationError(alias, f"conflicts with {canonical!r}")
    return out


def store_node(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `store_node` → :meth:`Graphonomous.store_node` (`type` is an alias of `node_type`)."""
    args = _rename_alias(arguments, "type", "node_type")
    content = args.pop("content")
    return graph.store_node(content, **args)


def store_edge(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `store_edge` → :meth:`Graphonomous.store_edge` (aliases are resolved there)."""
    return graph.store_edge(**arguments)


def delete_node(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `delete_node` → :meth:`Graphonomous.delete_node`."""
    return graph.delete_node(arguments["node_id"])


def manage_edge(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `manage_edge` → :meth:`Graphonomous.manage_edge`."""
    args = dict(arguments)
    return graph.manage_edge(args.pop("action"), **args)


def graph_stats(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `graph_stats` → :meth:`Graphonomous.graph_stats`."""
    return graph.graph_stats()


# Which query_graph arguments each operation takes (the first ones listed in
# _QUERY_REQUIRED are mandatory).  Anything else is rejected, naming the field.
_QUERY_ARGUMENTS: Final[Mapping[str, frozenset[str]]] = {
    "list_nodes": frozenset(
        {
            "node_type",
            "timescale",
            "agent_id",
            "min_confidence",
            "max_confidence",
            "include_forgotten",
            "limit",
            "offset",
        }
    ),
    "get_node": frozenset({"node_id", "include_forgotten"}),
    "get_edges": frozenset({"node_id", "direction", "relationship", "limit"}),
    "similarity_search": frozenset({"query", "node_type", "limit"}),
}
_QUERY_REQUIRED: Final[Mapping[str, tuple[str, ...]]] = {
    "get_node": ("node_id",),
    "similarity_search": ("query",),
}


def query_graph(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool `query_graph`: one read operation, mapped onto a facade method.

    list_nodes → list_nodes, get_node → get_node, get_edges → manage_edge("list"),
    similarity_search → similarity_search.  Output: ``{"operation": op, **result}``.
    """
    args = dict(arguments)
    operation = args.pop("operation")
    allowed = _QUERY_ARGUMENTS[operation]
    for name in sorted(args):
        if name not in allowed:
            raise ValidationError(
                name,
                f"is not used by operation {operation} (it takes: {', '.join(sorted(allowed))})",
            )
    for name in _QUERY_REQUIRED.get(operation, ()):
        if name not in args:
            raise ValidationError(name, f"is required by operation {operation}")
    if operation == "list_nodes":
        result = graph.list_nodes(**args)
    elif operation == "get_node":
        result = graph.get_node(args.pop("node_id"), **args)
    elif operation == "get_edges":
        result = graph.manage_edge("list", **args)
    else:
        result = graph.similarity_search(
            args.pop("query"), args.pop("limit", DEFAULT_SEARCH_LIMIT), **args
        )
    return {"operation": operation, **result}


def topology_universe(graph: Graphonomous, arguments: Mapping[str, Any]) -> list[str]:
    """The node ids a topology call analyses, sorted.

    No `node_ids` and no `query`: every live node.  Otherwise the given ids
    (each must exist) united with the `limit` best similarity hits for `query`.
    Raises ValidationError naming unknown ids.  O(V) store reads.
    """
    node_ids = arguments.get("node_ids")
    query = arguments.get("query")
    if node_ids is None and query is None:
        return graph.store.node_ids()
    universe = set(node_ids or ())
    if universe:
        missing = sorted(universe - set(graph.store.get_nodes(sorted(universe))))
        if missing:
            shown = ", ".join(missing[:RECOMMENDATION_LIST_LIMIT])
            more = len(missing) - RECOMMENDATION_LIST_LIMIT
            extra = f" and {more} more" if more > 0 else ""
            raise ValidationError("node_ids", f"unknown node ids: {shown}{extra}")
    if query is not None:
        limit = arguments.get("limit", DEFAULT_SEARCH_LIMIT)
        hits = graph.similarity_search(query, limit)["results"]
        universe.update(hit["id"] for hit in hits)
    return sorted(universe)


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:RECOMMENDATION_LIST_LIMIT])
    more = len(items) - RECOMMENDATION_LIST_LIMIT
    return f"{shown}, … ({more} more)" if more > 0 else shown


def recommendation(topology: Mapping[str, Any], node_count: int) -> str:
    """One paragraph telling an agent what the topology means for answering.

    Input: a canonical analyze() result and the size of the analysed region.
    Output: text naming the SCCs, their κ and the fault lines to deliberate on
    (seed 000's analyze_topology example).  O(size of the result).
    """
    sccs = topology["sccs"]
    if not sccs:
        noun = "node" if node_count == 1 else "nodes"
        return (
            f"This knowledge region ({node_count} {noun}) contains no feedback loops (κ=0). "
            "Retrieve context in one pass and answer directly."
        )
    parts: list[str] = []
    if len(sccs) == 1:
        parts.append(
            f"This knowledge region contains 1 strongly connected component with "
            f"κ={sccs[0]['kappa']}."
        )
    else:
        parts.append(
            f"This knowledge region contains {len(sccs)} strongly connected components "
            f"(max κ={topology['max_kappa']})."
        )
    for scc in sccs[:3]:
        kappa = f"κ≈{scc['kappa']}, approximate" if scc["approximate"] else f"κ={scc['kappa']}"
        suffix = "" if len(sccs) == 1 else f" ({scc['id']}, {kappa})"
        parts.append(f"The concepts [{_listing(scc['nodes'])}] are mutually dependent{suffix}.")
    if len(sccs) > 3:
        parts.append(f"{len(sccs) - 3} more components are listed in sccs.")
    faults = [f"{f['source']}→{f['target']}" for scc in sccs for f in scc["fault_line_edges"]]
    if faults:
        noun = "fault line" if len(faults) == 1 else "fault lines"
        parts.append(f"Deliberate on the {noun} before answering: {_listing(faults)}.")
    else:
        parts.append("Deliberate (iterate over the loop) before answering.")
    return " ".join(parts)


def analyze_topology(graph: Graphonomous, arguments: dict[str, Any]) -> dict[str, Any]:
    """Tools `topology_analyze` / `analyze_topology`: κ analysis of a graph region.

    Universe from :func:`topology_universe`, edges between those nodes
    (``store.list_edges_between``), then ``build_adjacency`` + ``analyze``
    (telemetry trigger ``analyze_topology``).  Output: the canonical §A.1
    result plus ``recommendation``.  Complexity: that of ``analyze``.
    """
    with graph.lock:  # node ids and edges from one consistent state
        universe = topology_universe(graph, arguments)
        edges = graph.store.list_edges_between(universe)
    result = analyze(build_adjacency(universe, edges), trigger="analyze_topology")
    return {**result, "recommendation": recommendation(result, len(universe))}


# --------------------------------------------------------------------------
# Output schema of the topology tools: the §A.1 contract, inlined
# --------------------------------------------------------------------------


def _inline_refs(schema: Any, defs: Mapping[str, Any]) -> Any:
    """`schema` with every ``#/$defs/name`` reference replaced by its target.

    Tool schemas are sent to clients self-contained: some hosts do not resolve $ref.
    """
    if isinstance(schema, list):
        return [_inline_refs(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        ref = schema["$ref"]
        prefix = "#/$defs/"
        if not (isinstance(ref, str) and ref.startswith(prefix)):
            raise ValueError(f"cannot inline reference {ref!r}")
        target = _inline_refs(defs[ref[len(prefix) :]], defs)
        rest = {k: _inline_refs(v, defs) for k, v in schema.items() if k != "$ref"}
        return {**target, **rest}
    return {k: _inline_refs(v, defs) for k, v in schema.items()}


def _topology_output_schema() -> dict[str, Any]:
    contract = load_package_schema("graphonomous.contract", "topology.schema.json")
    result = _inline_refs(contract["$defs"]["topology_result"], contract["$defs"])
    assert isinstance(result, dict)
    result["properties"]["recommendation"] = {
        "type": "string",
        "description": "What the topology means for answering, in one paragraph.",
    }
    result["required"] = [*result["required"], "recommendation"]
    return result


# --------------------------------------------------------------------------
# The tool specs
# --------------------------------------------------------------------------

_NODE_INPUT: Final = {
    "content": _s("The knowledge to store (embedded for similarity search).", minLength=1),
    "node_type": _enum(NODE_TYPES, "Kind of memory; default semantic."),
    "type": _enum(NODE_TYPES, "Alias of node_type (seed column name)."),
    "metadata": _METADATA,
    "source": _s("Provenance: file path, URL or tool name."),
    "confidence": _unit("Belief in [0, 1]; default 0.5."),
    "causal_parent_ids": {
        "type": "array",
        "items": _ID,
        "description": "Existing nodes that led to this one (for outcome nodes).",
    },
    "timescale": _enum(TIMESCALES, "How fast the memory consolidates; default medium."),
    "creation_source": _enum(CREATION_SOURCES, "Who created the node; default inference."),
    "decay_rate": _unit("Forgetting speed in [0, 1]; default by node type."),
    "node_id": _s("Explicit id (default: a new time-ordered UUIDv7).", minLength=1),
    "agent_id": _s("Owning agent; default 'default'.", minLength=1),
    "pinned": {"type": "boolean", "description": "Protect from pruning and merging."},
}

_EDGE_CANONICAL: Final = {
    "source_id": _s("Id of the source node.", minLength=1),
    "target_id": _s("Id of the target node.", minLength=1),
    "relationship": _enum(RELATIONSHIPS, "Edge kind; default related."),
    "strength": _unit("Edge weight in [0, 1]; default 0.3."),
}

_EDGE_INPUT: Final = {
    **_EDGE_CANONICAL,
    "metadata": _METADATA,
    "decay_rate": {
        "type": "number",
        "minimum": 0,
        "description": "Forgetting speed (>= 0); default 0.005.",
    },
    "agent_id": _s("Owning agent; default 'default'.", minLength=1),
    **_edge_alias_properties(_EDGE_CANONICAL),
}

_MANAGE_EDGE_INPUT: Final = {
    "action": _enum(EDGE_ACTIONS, "What to do."),
    "edge_id": _s("Names the edge (get, update, delete).", minLength=1),
    **_EDGE_CANONICAL,
    "node_id": _s("list: edges touching this node.", minLength=1),
    "direction": _enum(EDGE_DIRECTIONS, "list with node_id: out, in or both (default)."),
    "metadata": {**_METADATA, "description": "update: merged into the edge's metadata."},
    "limit": _LIMIT,
    **_edge_alias_properties(_EDGE_CANONICAL),
}

_QUERY_INPUT: Final = {
    "operation": _enum(QUERY_OPERATIONS, "The read operation."),
    "node_id": _s("get_node: the node; get_edges: edges touching this node.", minLength=1),
    "query": _s("similarity_search: the text to search for."),
    "node_type": _enum(NODE_TYPES, "list_nodes / similarity_search: only this type."),
    "timescale": _enum(TIMESCALES, "list_nodes: only this timescale."),
    "agent_id": _s("list_nodes: only this agent's nodes.", minLength=1),
    "min_confidence": _unit("list_nodes: lowest confidence."),
    "max_confidence": _unit("list_nodes: highest confidence."),
    "include_forgotten": {
        "type": "boolean",
        "description": "list_nodes / get_node: include soft-forgotten nodes.",
    },
    "direction": _enum(EDGE_DIRECTIONS, "get_edges with node_id: out, in or both."),
    "relationship": _enum(RELATIONSHIPS, "get_edges: only this kind."),
    "limit": _LIMIT,
    "offset": _int("list_nodes: items to skip.", 0),
}

_TOPOLOGY_INPUT: Final = {
    "node_ids": {
        "type": "array",
        "items": _ID,
        "description": "Node IDs to analyze. If omitted, analyzes the full graph.",
    },
    "query": _s(
        "Optional query text. If provided, retrieves relevant nodes first, then analyzes "
        "their topology (together with node_ids, if given)."
    ),
    "limit": _int(
        f"With query: how many similar nodes to retrieve (default {DEFAULT_SEARCH_LIMIT}).",
        1,
        MAX_LIST_LIMIT,
    ),
}

_TOPOLOGY_DESCRIPTION: Final = (
    "Compute topological structure (SCCs, κ values, routing decision) for a set of nodes in "
    "the knowledge graph. Use this to determine whether a knowledge region requires iterative "
    "deliberation (κ > 0) or can be answered with simple retrieval (κ = 0)."
)

_READ = ToolAnnotations(read_only=True, destructive=False, idempotent=True)

STORE_NODE: Final = ToolSpec(
    name="store_node",
    title="Store a knowledge node",
    description=(
        "Store one piece of knowledge as a node (episodic event, semantic fact, procedure, "
        "temporal fact, outcome or goal). Returns the stored node with its id."
    ),
    input_schema=_obj(_NODE_INPUT, ("content",)),
    output_schema=_obj({"node": NODE_OUTPUT}, ("node",), closed=False),
    annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=False),
    handler=store_node,
)
STORE_EDGE: Final = ToolSpec(
    name="store_edge",
    title="Store a relationship edge",
    description=(
        "Connect two existing nodes with a typed edge. Storing an existing (source_id, "
        "target_id, relationship) triple updates its strength/metadata. Upstream names "
        "edge_type, weight, from/source and to/target are accepted."
    ),
    input_schema=_obj(_EDGE_INPUT),
    output_schema=_obj(
        {"edge": EDGE_OUTPUT, "created": {"type": "boolean"}}, ("edge", "created"), closed=False
    ),
    annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=True),
    handler=store_edge,
)
DELETE_NODE: Final = ToolSpec(
    name="delete_node",
    title="Delete a node",
    description="Delete a node together with its edges and embedding.",
    input_schema=_obj({"node_id": _s("Id of the node to delete.", minLength=1)}, ("node_id",)),
    output_schema=_obj(
        {
            "deleted": {"type": "boolean"},
            "node_id": {"type": "string"},
            "edges_removed": _COUNT,
        },
        ("deleted", "node_id", "edges_removed"),
        closed=False,
    ),
    annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False),
    handler=delete_node,
)
MANAGE_EDGE: Final = ToolSpec(
    name="manage_edge",
    title="Get, list, update or delete edges",
    description=(
        "Edge CRUD. get/update/delete name an edge by edge_id or by source_id + target_id + "
        "relationship; update sets strength and/or merges metadata; list returns edges "
        "touching node_id (direction out|in|both) and/or of one relationship."
    ),
    input_schema=_obj(_MANAGE_EDGE_INPUT, ("action",)),
    output_schema=_obj(
        {
            "edge": EDGE_OUTPUT,
            "edges": _EDGES,
            "count": _COUNT,
            "deleted": {"type": "boolean"},
            "edge_id": {"type": "string"},
        },
        closed=False,
    ),
    annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False),
    handler=manage_edge,
)
GRAPH_STATS: Final = ToolSpec(
    name="graph_stats",
    title="Graph statistics",
    description=(
        "Aggregate counts: nodes by type and timescale, edges by relationship, mean "
        "confidence, embeddings, agents and storage facts."
    ),
    input_schema=_obj({}),
    output_schema=_obj(
        {
            "node_count": _COUNT,
            "edge_count": _COUNT,
            "forgotten_count": _COUNT,
            "nodes_by_type": {"type": "object"},
            "nodes_by_timescale": {"type": "object"},
            "edges_by_relationship": {"type": "object"},
            "mean_confidence": _nullable("number"),
            "embedding_count": _COUNT,
            "embedder": {"type": "string"},
            "agents": {"type": "array", "items": {"type": "string"}},
            "schema_version": {"type": "integer"},
            "db_path": {"type": "string"},
        },
        ("node_count", "edge_count"),
        closed=False,
    ),
    annotations=_READ,
    handler=graph_stats,
)
QUERY_GRAPH: Final = ToolSpec(
    name="query_graph",
    title="Inspect the graph",
    description=(
        "Operation-based graph inspection. list_nodes: filter by node_type, timescale, "
        "agent_id, confidence range (limit/offset). get_node: one node with its edges. "
        "get_edges: edges touching node_id (direction, relationship). similarity_search: "
        "nodes most similar to query. Arguments not used by the operation are rejected."
    ),
    input_schema=_obj(_QUERY_INPUT, ("operation",)),
    output_schema=_obj(
        {
            "operation": {"enum": list(QUERY_OPERATIONS)},
            "nodes": _NODES,
            "count": _COUNT,
            "total": _COUNT,
            "node": NODE_OUTPUT,
            "edges": _EDGES,
            "query": {"type": "string"},
            "results": _NODES,
        },
        ("operation",),
        closed=False,
    ),
    annotations=_READ,
    handler=query_graph,
)
_TOPOLOGY_OUTPUT: Final = _topology_output_schema()
TOPOLOGY_ANALYZE: Final = ToolSpec(
    name="topology_analyze",
    title="Analyze feedback-loop topology (κ)",
    description=_TOPOLOGY_DESCRIPTION,
    input_schema=_obj(_TOPOLOGY_INPUT),
    output_schema=_TOPOLOGY_OUTPUT,
    annotations=_READ,
    handler=analyze_topology,
)
ANALYZE_TOPOLOGY: Final = ToolSpec(
    name="analyze_topology",
    title="Analyze feedback-loop topology (κ)",
    description=_TOPOLOGY_DESCRIPTION + " (Same tool as topology_analyze, seed 000 name.)",
    input_schema=_obj(_TOPOLOGY_INPUT),
    output_schema=_TOPOLOGY_OUTPUT,
    annotations=_READ,
    handler=analyze_topology,
)

# Tool sets defined in their own modules on the ToolSpec above (imported after it exists).
from .memory_compat import MEMORY_TOOLS  # noqa: E402

CORE_TOOLS: Final = (
    STORE_NODE,
    STORE_EDGE,
    DELETE_NODE,
    MANAGE_EDGE,
    QUERY_GRAPH,
    TOPOLOGY_ANALYZE,
    ANALYZE_TOPOLOGY,
    GRAPH_STATS,
)
# A surface is the list of tools one server exposes, in tools/list order.
SURFACES: Final[Mapping[str, tuple[ToolSpec, ...]]] = {
    "v1": CORE_TOOLS,
    # server-memory's tool API (graphonomous.mcp.memory_compat)
    "memory": MEMORY_TOOLS,
    "all": (*CORE_TOOLS, *MEMORY_TOOLS),
}
DEFAULT_SURFACE: Final = "v1"

SERVER_INSTRUCTIONS: Final = (
    "Graphonomous is a continual-learning knowledge graph. Store knowledge with store_node and "
    "connect it with store_edge; inspect it with query_graph (list_nodes, get_node, get_edges, "
    "similarity_search) and graph_stats. Before answering about an interconnected region, call "
    "topology_analyze: routing 'fast' (κ=0) means one retrieval pass is enough, 'deliberate' "
    "(κ>0) means iterate over the feedback loop and its fault lines first."
)


def surface_tools(surface: str) -> tuple[ToolSpec, ...]:
    """The tools of a named surface.  Raises ValueError for an unknown name."""
    try:
        return SURFACES[surface]
    except KeyError:
        raise ValueError(
            f"unknown MCP surface {surface!r} (known: {', '.join(sorted(SURFACES))})"
        ) from None


# --------------------------------------------------------------------------
# Markdown for SPEC.md
# --------------------------------------------------------------------------


def schema_type(schema: Mapping[str, Any]) -> str:
    """A short human-readable type for a property schema (Markdown-safe)."""
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v, ensure_ascii=False)}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " \\| ".join(schema_type(branch) for branch in schema["anyOf"])
    kind = schema.get("type", "any")
    names = kind if isinstance(kind, list) else [kind]
    text = " \\| ".join(str(name) for name in names)
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        text = f"array of {schema_type(schema['items'])}"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        text += f" in [{low}, {high}]"
    elif low is not None:
        text += f" ≥ {low}"
    return text


def _property_table(schema: Mapping[str, Any]) -> list[str]:
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


def describe_tool(spec: ToolSpec, heading_level: int = 3) -> str:
    """The Markdown section of one tool: description, hints, input and output fields,
    and the exact input schema."""
    hints = ", ".join(f"{k}={str(v).lower()}" for k, v in spec.annotations.to_dict().items())
    lines = [
        f"{'#' * heading_level} `{spec.name}` — {spec.title}",
        "",
        spec.description,
        "",
        f"Annotations: {hints}.",
        "",
        "Input:",
        "",
        *_property_table(spec.input_schema),
        "",
    ]
    if spec.output_schema is not None:
        lines += ["Output (`structuredContent`, also the JSON text of `content[0]`):", ""]
        lines += [*_property_table(spec.output_schema), ""]
    lines += [
        "<details><summary>inputSchema</summary>",
        "",
        "```json",
        json.dumps(spec.input_schema, indent=2, ensure_ascii=False),
        "```",
        "",
        "</details>",
        "",
    ]
    return "\n".join(lines)


def describe_tools(tools: Sequence[ToolSpec] = CORE_TOOLS, heading_level: int = 3) -> str:
    """Markdown documenting `tools` in order, one section per tool (for SPEC.md)."""
    return "\n".join(describe_tool(spec, heading_level) for spec in tools)
