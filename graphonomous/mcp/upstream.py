"""Upstream Graphonomous compatibility: its argument names in, its result fields out.

Rules of this file: data tables plus two pure functions per direction; nothing
here reaches the graph.  Prompts and skills written for the upstream Elixir
server (../shared/design/upstream-tools.md) call our tools with upstream names
(`operation` on manage_edge, `from`/`to` on trace_evidence_path, JSON-array
strings, …).  `translate_arguments` renames them to ours **before** schema
validation (the aliases are not advertised in tools/list, so the tool list does
not grow); `enrich_result` adds upstream's result fields beside ours (never
replacing one of ours).  An alias given together with our name and a different
value is an error naming the alias; an upstream argument with no meaning here
is left in place, so the closed input schema rejects it by name.  SPEC "MCP"
§3a lists every entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final

from ..model import ValidationError
from .tools import ToolSpec

# tool -> {upstream argument: our argument}
ARGUMENT_ALIASES: Final[Mapping[str, Mapping[str, str]]] = {
    "manage_edge": {"operation": "action"},
    "manage_goal": {"operation": "action"},
    "belief_revise": {"operation": "action", "rationale": "reason"},
    "trace_evidence_path": {"from": "from_id", "to": "to_id"},
    "coverage_query": {"top_k": "limit"},
    "learn_detect_novelty": {"query": "text"},
    "learn_from_feedback": {"feedback_type": "feedback"},
    "learn_from_outcome": {"retrieval_trace_id": "trace_id"},
    "attention_run_cycle": {"autonomy_override": "autonomy"},
    "review_goal": {"apply_decision": "apply"},
    "gdpr_erase": {"entity": "node_id"},
    "graph_traverse": {"start_id": "node_id", "relationship": "relationships"},
}
# tool -> our argument -> {upstream value: our value}
VALUE_ALIASES: Final[Mapping[str, Mapping[str, Mapping[str, str]]]] = {
    "manage_edge": {"action": {"list_all": "list", "list_for_node": "list"}},
    "manage_goal": {
        "action": {
            "create_goal": "create",
            "get_goal": "get",
            "list_goals": "list",
            "update_goal": "update",
            "delete_goal": "delete",
            "transition_goal": "transition",
        }
    },
    "query_graph": {
        "operation": {
            "get": "get_node",
            "edges": "get_edges",
            "retrieve_context": "similarity_search",
        }
    },
}
# tool -> arguments that upstream sends as a JSON-array string or a comma-separated list
LIST_ARGUMENTS: Final[Mapping[str, tuple[str, ...]]] = {
    "learn_from_outcome": ("causal_node_ids",),
    "coverage_query": ("critical_topics",),
    "graph_traverse": ("relationships",),
    "manage_goal": ("node_ids", "linked_node_ids"),
    "retrieve_procedural": ("preconditions",),
    "deliberate": ("node_ids",),
}
# manage_goal's `payload` (a JSON object or its text) carries the create/update fields.
PAYLOAD_TOOLS: Final = ("manage_goal",)
# graph_stats: upstream's include_distributions=true is what we always do.
TRUE_ONLY_FLAGS: Final[Mapping[str, tuple[str, ...]]] = {"graph_stats": ("include_distributions",)}


def _as_list(field: str, value: object) -> object:
    """A JSON-array string or a comma-separated string as a list; anything else unchanged."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValidationError(field, f"is not a JSON array: {exc.msg}") from None
        return parsed
    return [part.strip() for part in text.split(",") if part.strip()]


def _rename(arguments: dict[str, Any], alias: str, canonical: str) -> None:
    if alias not in arguments:
        return
    value = arguments.pop(alias)
    if arguments.setdefault(canonical, value) != value:
        raise ValidationError(alias, f"conflicts with {canonical!r}")


def translate_arguments(tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`arguments` with upstream names and values turned into ours (module docstring).

    O(len(arguments)).  Raises ValidationError for an alias that conflicts with our
    field, a malformed JSON string, or a `payload` that is not an object.
    """
    out = dict(arguments)
    if tool in PAYLOAD_TOOLS and "payload" in out:
        payload = out.pop("payload")
        if isinstance(payload, str):
            try:
                payload = json.loads(payload)
            except json.JSONDecodeError as exc:
                raise ValidationError("payload", f"is not a JSON object: {exc.msg}") from None
        if not isinstance(payload, Mapping):
            raise ValidationError("payload", "must be a JSON object")
        for key, value in payload.items():
            if out.setdefault(key, value) != value:
                raise ValidationError(f"payload.{key}", f"conflicts with {key!r}")
    for alias, canonical in ARGUMENT_ALIASES.get(tool, {}).items():
        _rename(out, alias, canonical)
    if tool == "trace_evidence_path" and "bidirectional" in out:
        flag = out.pop("bidirectional")
        both = flag is True or (isinstance(flag, str) and flag.strip().lower() == "true")
        direction = "both" if both else "out"
        if out.setdefault("direction", direction) != direction:
            raise ValidationError("bidirectional", "conflicts with 'direction'")
    for flag in TRUE_ONLY_FLAGS.get(tool, ()):
        if out.get(flag) is True:
            del out[flag]
    for field, values in VALUE_ALIASES.get(tool, {}).items():
        value = out.get(field)
        if isinstance(value, str) and value in values:
            out[field] = values[value]
    for field in LIST_ARGUMENTS.get(tool, ()):
        if field in out:
            out[field] = _as_list(field, out[field])
    return out


# machine.action -> {upstream machine field: our machine field} (upstream's machine renames)
MACHINE_ARGUMENT_ALIASES: Final[Mapping[str, Mapping[str, str]]] = {
    "retrieve.procedural": {"query": "task"},
    "retrieve.coverage": {"query": "task_description"},
    "learn.detect_novelty": {"content": "text"},
    "learn.contradictions": {"query": "content"},
}


def machine_preparer(machine: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The `prepare` of a v2 machine: the action trimmed and lower-cased (as upstream
    does), the machine-level aliases, then the action's v1 translation, under the
    machine's field names."""

    def prepare(arguments: dict[str, Any]) -> dict[str, Any]:
        name = arguments.get("action")
        if not isinstance(name, str):
            return arguments
        name = name.strip().lower()
        out = {**arguments, "action": name}
        try:
            action = machine.action(name)
        except ValidationError:
            return out  # the schema names the allowed actions
        for alias, canonical in MACHINE_ARGUMENT_ALIASES.get(f"{machine.name}.{name}", {}).items():
            _rename(out, alias, canonical)
        v1 = translate_arguments(action.tool.name, action.to_v1(out))
        inverse = {v1_name: field for field, v1_name in action.renames.items()}
        return {"action": name, **{inverse.get(k, k): v for k, v in v1.items()}}

    return prepare


def _store_node(result: Mapping[str, Any]) -> dict[str, Any]:
    node = result["node"]
    return {
        "status": "stored",
        "node_id": node["id"],
        "node_type": node["node_type"],
        "confidence": node["confidence"],
    }


def _store_edge(result: Mapping[str, Any]) -> dict[str, Any]:
    edge = result["edge"]
    return {
        "status": "stored",
        "edge_id": edge["id"],
        "source_id": edge["source_id"],
        "target_id": edge["target_id"],
        "edge_type": edge["relationship"],
        "weight": edge["strength"],
    }


def _trace(result: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "status": "ok",
        "from": result["from_id"],
        "to": result["to_id"],
        "path_count": len(result["paths"]),
        "paths": [
            {**path, "hop_count": path["hops"], "total_cost": path["cost"]}
            for path in result["paths"]
        ],
    }


def _count(key: str) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def extra(result: Mapping[str, Any]) -> dict[str, Any]:
        return {"status": "ok", "count": len(result[key])}

    return extra


RESULT_EXTRAS: Final[Mapping[str, Callable[[Mapping[str, Any]], dict[str, Any]]]] = {
    "store_node": _store_node,
    "store_edge": _store_edge,
    "trace_evidence_path": _trace,
    "retrieve_context": _count("results"),
    "belief_contradictions": _count("contradictions"),
    "graph_traverse": lambda r: {
        "status": "ok",
        "root_id": r["root"],
        "node_count": len(r["nodes"]),
        "edge_count": len(r["edges"]),
    },
    "learn_detect_novelty": lambda r: {
        "status": "ok",
        "novelty_score": r["novelty"],
        "nearest_node_count": len(r["nearest"]),
    },
    "coverage_query": lambda r: {"uncertainty_score": r["uncertainty"], "risk_score": r["risk"]},
    "forget_node": lambda r: {"status": "ok"},
    # Upstream's status "erased" collides with ours ("scrubbed" | "pending": whether
    # the bytes are provably gone); ours wins, and `erased` says the erase committed.
    "gdpr_erase": lambda r: {"status": "erased", "erased": True},
    # topology_analyze / analyze_topology: none — their result is the canonical §A.1
    # document, whose schema is closed.
    "learn_from_outcome": lambda r: {
        "processed": len(r.get("updates", [])),
        "updated": len(r.get("updates", [])),
        "skipped": 0,
    },
}


def enrich_result(tool: str, result: dict[str, Any]) -> dict[str, Any]:
    """`result` plus upstream's fields that we do not already have (ours win).

    A field we have under the same name (e.g. `paths`) is replaced only by
    its enriched version built from ours (extra keys per path).  O(size of result).
    """
    extra = RESULT_EXTRAS.get(tool)
    if extra is None or result.get("duplicate") is True:
        return result
    out = dict(result)
    for key, value in extra(result).items():
        if key not in out or key == "paths":
            out[key] = value
    return out


def with_upstream(spec: ToolSpec) -> ToolSpec:
    """`spec` that accepts upstream argument names and returns upstream fields too."""
    handler = spec.handler
    name = spec.name

    def handle(graph: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        return enrich_result(name, handler(graph, arguments))

    handle.__name__ = handle.__qualname__ = getattr(handler, "__name__", name)
    handle.__doc__ = handler.__doc__
    return replace(spec, handler=handle, prepare=lambda args: translate_arguments(name, args))
