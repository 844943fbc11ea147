"""`query_graph`: one read operation of the facade, chosen by name.

Rules of this module: it is the MCP layer's dispatch (issue #11 moved it out of
retrieval, which never calls a facade tool back); each operation maps onto
one facade method with the arguments as keywords; an argument the operation
does not take is rejected, naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..model import NODE_TYPES, ValidationError, check_choice

if TYPE_CHECKING:
    from ..api import Graphonomous

# The read operations, each one facade method.
QUERY_OPERATIONS: Final = ("list_nodes", "get_node", "get_edges", "similarity_search")

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


def query_graph(graph: Graphonomous, operation: str, **arguments: Any) -> dict[str, Any]:
    """One read operation mapped onto a facade method.

    list_nodes → `list_nodes`, get_node → `get_node`, get_edges →
    `manage_edge("list")`, similarity_search → `similarity_search`.  An
    argument the operation does not take is rejected, naming it.
    Output: ``{"operation": op, **result}``.
    """
    operation = check_choice("operation", operation, QUERY_OPERATIONS)
    allowed = _QUERY_ARGUMENTS[operation]
    for name in sorted(arguments):
        if name not in allowed:
            raise ValidationError(
                name,
                f"is not used by operation {operation} (it takes: {', '.join(sorted(allowed))})",
            )
    for name in _QUERY_REQUIRED.get(operation, ()):
        if name not in arguments:
            raise ValidationError(name, f"is required by operation {operation}")
    args = dict(arguments)
    if operation == "list_nodes":
        result = graph.list_nodes(**args)
    elif operation == "get_node":
        result = graph.get_node(args.pop("node_id"), **args)
    elif operation == "get_edges":
        result = graph.manage_edge("list", **args)
    else:
        if args.get("node_type") is not None:
            check_choice("node_type", args["node_type"], NODE_TYPES)
        result = graph.similarity_search(args.pop("query"), **args)
    return {"operation": operation, **result}
