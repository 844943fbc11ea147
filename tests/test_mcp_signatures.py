"""Each v1 tool's input schema is its facade method's signature.

The v1 handlers call ``Graphonomous.<tool>(**arguments)`` (mcp.v1.delegate):
every schema property must be a parameter of the method (or an upstream alias
the handler renames, for methods taking ``**aliases``), every parameter must
be documented in the schema, and a parameter without a default must be
required by the schema or by the handler.  ``query_graph`` has no facade
method: its dispatch lives in the MCP layer (mcp.query) over facade methods.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.mcp.surfaces import V1_TOOLS
from graphonomous.mcp.tools import ToolSpec

# Tool names that are another name of a facade method (seed 000's name).
METHOD_OF: dict[str, str] = {"analyze_topology": "topology_analyze"}
NOT_A_METHOD = {"query_graph"}
# Facade parameters that are not MCP inputs, on purpose.
FACADE_ONLY: dict[str, set[str]] = {
    "retrieve_context": {"settings"},  # a Python tuning object (benchmarks), not JSON
    "gdpr_erase": {"wait_s"},  # the CLI's `erase --wait`; a client is never blocked
    "run_consolidation": {"trigger"},  # set by the idle timer / attention; a call is manual
}


def _method(spec: ToolSpec) -> Any:
    return getattr(Graphonomous, METHOD_OF.get(spec.name, spec.name))


def _parameters(spec: ToolSpec) -> dict[str, inspect.Parameter]:
    params = dict(inspect.signature(_method(spec)).parameters)
    params.pop("self")
    return params


def _delegated() -> list[ToolSpec]:
    return [spec for spec in V1_TOOLS if spec.name not in NOT_A_METHOD]


@pytest.mark.parametrize("spec", _delegated(), ids=lambda spec: spec.name)
def test_schema_properties_are_the_method_parameters(spec: ToolSpec) -> None:
    params = _parameters(spec)
    named = {n for n, p in params.items() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    takes_more = any(p.kind is p.VAR_KEYWORD for p in params.values())
    named -= FACADE_ONLY.get(spec.name, set())
    properties = set(spec.input_schema.get("properties", {})) - set(_aliases(spec))
    assert named <= properties, f"{spec.name}: parameters the schema does not document"
    if not takes_more:
        assert properties <= named, f"{spec.name}: schema fields the method does not take"


@pytest.mark.parametrize("spec", _delegated(), ids=lambda spec: spec.name)
def test_parameters_without_default_are_required(spec: ToolSpec) -> None:
    required = set(spec.input_schema.get("required", ()))
    for name, param in _parameters(spec).items():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        if param.default is inspect.Parameter.empty:
            assert name in required or _handler_requires(spec, name), (spec.name, name)
        else:
            assert name not in required, f"{spec.name}: {name} has a default but is required"


def _closure_values(function: Any) -> list[Any]:
    """What the handler closures hold (delegate's aliases and required fields),
    through the upstream wrapper (mcp.upstream.with_upstream)."""
    found: list[Any] = []
    for cell in getattr(function, "__closure__", None) or ():
        value = cell.cell_contents
        found.append(value)
        if callable(value):
            found.extend(_closure_values(value))
    return found


def _aliases(spec: ToolSpec) -> dict[str, str]:
    # delegate(aliases=...): schema names the handler renames to the method's.
    params = set(_parameters(spec))
    renames: dict[str, str] = {}
    for value in _closure_values(spec.handler):
        if isinstance(value, dict) and value and set(value.values()) <= params:
            renames.update(value)
    return renames


def _handler_requires(spec: ToolSpec, name: str) -> bool:
    # delegate(required=...) checks fields an alias may stand in for.
    return any(
        isinstance(value, (tuple, list)) and name in value
        for value in _closure_values(spec.handler)
    )


def test_query_graph_is_dispatched_by_the_mcp_layer() -> None:
    assert not hasattr(Graphonomous, "query_graph")
    assert {spec.name for spec in V1_TOOLS} >= NOT_A_METHOD
