"""Valid arguments for every MCP tool, shared by the in-process and SDK tests.

A small plant-maintenance graph is stored first (:data:`SEED_NODES`,
:data:`SEED_EDGES`, one goal), with throw-away "victim" nodes for the
destructive tools.  :data:`V1_CALLS` holds one valid call per v1 tool; the
placeholders ``$goal`` (the goal's id) and ``$victim`` (the next unused
victim node) are filled in by :func:`resolve`.  :func:`machine_calls` turns
them into calls of the v2 machines, so every action is called with the same
arguments as its v1 tool.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from graphonomous import Graphonomous
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response, encode
from graphonomous.mcp.machines import MACHINES
from graphonomous.mcp.render import compact_text
from graphonomous.mcp.server import McpServer

VICTIMS = 24
SEED_NODES: list[dict[str, Any]] = [
    {"node_id": "valve", "content": "Valve V-12 loses pressure when its seal wears out"},
    {"node_id": "seal", "content": "A worn seal lets pressure escape from valve V-12"},
    {"node_id": "pump", "content": "Pump P-3 overheats when the pressure of valve V-12 drops"},
    {
        "node_id": "proc",
        "node_type": "procedural",
        "content": "Restart pump P-3: 1. close valve V-12 2. replace the seal 3. restart the pump",
        "metadata": {"preconditions": ["valve closed"]},
    },
    {
        "node_id": "episode",
        "node_type": "episodic",
        "content": "The night shift reported a pressure loss on valve V-12",
    },
    {"node_id": "fact", "content": "The plant runs three shifts a day"},
    *(
        {"node_id": f"victim-{i}", "content": f"Scratch note number {i} for deletion tests"}
        for i in range(VICTIMS)
    ),
]
# valve → pump → seal → valve: a feedback loop (κ = 1).
SEED_EDGES: list[dict[str, Any]] = [
    {"source_id": "valve", "target_id": "pump", "relationship": "causes"},
    {"source_id": "pump", "target_id": "seal", "relationship": "causes"},
    {"source_id": "seal", "target_id": "valve", "relationship": "causes"},
    {"source_id": "proc", "target_id": "valve", "relationship": "resolves"},
]
SEED_GOAL: dict[str, Any] = {
    "action": "create",
    "title": "Keep pump P-3 running",
    "linked_node_ids": ["pump", "proc"],
}

V1_CALLS: dict[str, dict[str, Any]] = {
    "store_node": {"content": "Seal kits are kept in cabinet 4", "metadata": {"room": "B"}},
    "store_edge": {"source_id": "fact", "target_id": "episode", "strength": 0.4},
    "delete_node": {"node_id": "$victim"},
    "manage_edge": {"action": "list", "node_id": "valve", "direction": "out"},
    "retrieve_context": {"query": "pressure loss of valve V-12", "limit": 5},
    "query_graph": {"operation": "get_node", "node_id": "valve"},
    "topology_analyze": {"node_ids": ["valve", "pump", "seal"]},
    "analyze_topology": {},
    "graph_traverse": {"node_id": "valve", "depth": 2, "relationships": ["causes"]},
    "graph_stats": {},
    "retrieve_episodic": {"limit": 5},
    "retrieve_procedural": {"task": "restart pump P-3", "preconditions": ["valve closed"]},
    "coverage_query": {"task_description": "restart pump P-3 after a pressure loss"},
    "trace_evidence_path": {"from_id": "proc", "to_id": "seal", "k": 2},
    "epistemic_frontier": {"min_gap": 0.0},
    "learn_from_outcome": {
        "action_id": "restart-1",
        "status": "success",
        "confidence": 0.9,
        "causal_node_ids": ["proc"],
        "evidence_type": "performance",
        "trace_id": "trace-1",
    },
    "learn_from_feedback": {"node_id": "fact", "feedback": "positive"},
    "learn_detect_novelty": {"text": "Penguins commute by submarine"},
    "learn_from_interaction": {
        "user_message": "Why does valve V-12 lose pressure?",
        "model_response": "Valve V-12 loses pressure because its seal is worn out. "
        "Replacing the seal restores the pressure within an hour.",
    },
    "belief_revise": {"action": "expand", "content": "The plant runs two shifts a day"},
    "belief_contradictions": {"content": "The plant runs four shifts a day"},
    "manage_goal": {"action": "get", "goal_id": "$goal"},
    "review_goal": {"goal_id": "$goal"},
    "deliberate": {"node_ids": ["valve", "pump", "seal"]},
    "attention_survey": {},
    "attention_run_cycle": {"autonomy": "advise", "budget": 3},
    "forget_node": {"node_id": "$victim", "mode": "soft", "reason": "test"},
    "restore_node": {"node_id": "$victim", "reason": "test"},
    "forget_by_policy": {"dry_run": True},
    "gdpr_erase": {"node_id": "$victim", "reason": "test"},
    "run_consolidation": {"dry_run": True},
}

MEMORY_CALLS: list[tuple[str, dict[str, Any]]] = [
    (
        "create_entities",
        {
            "entities": [
                {"name": "Alice", "entityType": "person", "observations": ["likes tea"]},
                {"name": "Acme", "entityType": "company", "observations": []},
            ]
        },
    ),
    (
        "create_relations",
        {"relations": [{"from": "Alice", "to": "Acme", "relationType": "works at"}]},
    ),
    ("add_observations", {"observations": [{"entityName": "Alice", "contents": ["speaks Dutch"]}]}),
    ("search_nodes", {"query": "tea"}),
    ("open_nodes", {"names": ["Alice"]}),
    ("read_graph", {}),
    (
        "delete_observations",
        {"deletions": [{"entityName": "Alice", "observations": ["likes tea"]}]},
    ),
    (
        "delete_relations",
        {"relations": [{"from": "Alice", "to": "Acme", "relationType": "works at"}]},
    ),
    ("delete_entities", {"entityNames": ["Acme"]}),
]


class Placeholders:
    """Fills ``$goal`` and ``$victim`` (a fresh victim node per use)."""

    def __init__(self, goal_id: str) -> None:
        self.goal_id = goal_id
        self._victims: Iterator[str] = iter(f"victim-{i}" for i in range(VICTIMS))

    def resolve(self, value: Any) -> Any:
        if value == "$goal":
            return self.goal_id
        if value == "$victim":
            return next(self._victims)
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value


def machine_calls() -> list[tuple[str, str, dict[str, Any]]]:
    """(machine, action, arguments) for every action of every machine: the v1 call of
    the action's tool, with the machine's field names and ``action`` set."""
    out = []
    for machine in MACHINES:
        for action in machine.actions:
            v1 = copy.deepcopy(V1_CALLS[action.tool.name])
            inverse = {v1_name: name for name, v1_name in action.renames.items()}
            arguments = {inverse.get(k, k): v for k, v in v1.items()}
            out.append((machine.name, action.name, {"action": action.name, **arguments}))
    return out


# -- an in-process session ------------------------------------------------------------

_ids = iter(range(1, 10**9))


def rpc(server: McpServer, method: str, params: Any = None) -> Any:
    msg_id = next(_ids)
    (reply,) = [
        m for m in server.handle(Request(msg_id, method, params)) if isinstance(m, Response)
    ]
    return json.loads(encode(reply))


def call(server: McpServer, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = rpc(server, "tools/call", {"name": name, "arguments": arguments})[
        "result"
    ]
    return result


class Session:
    """An in-process server of `surface` over `graph`, seeded through its v1 tools
    (so the surface must contain them)."""

    def __init__(self, graph: Graphonomous, surface: str) -> None:
        self.graph = graph
        self.server = build_server(graph, surface, check_output=True)
        self.schemas = {t["name"]: t for t in rpc(self.server, "tools/list")["result"]["tools"]}
        for node in SEED_NODES:
            self.ok("store_node", node)
        for edge in SEED_EDGES:
            self.ok("store_edge", edge)
        self.placeholders = Placeholders(self.ok("manage_goal", SEED_GOAL)["goal"]["id"])

    def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call a tool that must succeed; validate structuredContent with jsonschema."""
        out = call(self.server, name, self.placeholders_resolve(arguments))
        assert not out.get("isError"), (name, out)
        structured: dict[str, Any] = out["structuredContent"]
        text = out["content"][0]["text"]
        schema = self.schemas[name].get("outputSchema")
        if schema is None:  # a v2 machine: a compact text, the v1 tool's result
            assert text == compact_text(structured)
            arguments = self.placeholders_resolve(arguments)
            # The server trims and lower-cases the action (upstream style, mcp/upstream.py).
            action_name = str(arguments["action"]).strip().lower()
            action = next(m for m in MACHINES if m.name == name).action(action_name)
            schema = action.tool.output_schema
        else:
            assert json.loads(text) == structured
        jsonschema.Draft202012Validator(schema).validate(structured)
        return structured

    def placeholders_resolve(self, arguments: dict[str, Any]) -> Any:
        placeholders = getattr(self, "placeholders", None)
        return arguments if placeholders is None else placeholders.resolve(arguments)

    def error(self, name: str, arguments: dict[str, Any]) -> str:
        out = call(self.server, name, self.placeholders_resolve(arguments))
        assert out.get("isError") is True and "structuredContent" not in out, (name, out)
        text: str = out["content"][0]["text"]
        return text
