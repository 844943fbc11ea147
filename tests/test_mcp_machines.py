"""The v2 machines: generated from the v1 specs, dispatching to the same handlers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from mcp_tool_calls import V1_CALLS, Session, call, machine_calls

from graphonomous import Graphonomous
from graphonomous.mcp.machines import ACT, MACHINES, Machine, is_alias, widen
from graphonomous.mcp.surfaces import SURFACES
from graphonomous.mcp.v1 import V1_TOOLS

# Seed 003 §5's action tables, verbatim: machine → action → v1 tool.
SEED_003_ACTIONS = {
    "retrieve": {
        "context": "retrieve_context",
        "episodic": "retrieve_episodic",
        "procedural": "retrieve_procedural",
        "coverage": "coverage_query",
        "trace_evidence": "trace_evidence_path",
        "frontier": "epistemic_frontier",
    },
    "route": {
        "topology": "topology_analyze",
        "deliberate": "deliberate",
        "attention_survey": "attention_survey",
        "attention_cycle": "attention_run_cycle",
        "review_goal": "review_goal",
    },
    "act": {
        "store_node": "store_node",
        "store_edge": "store_edge",
        "delete_node": "delete_node",
        "manage_edge": "manage_edge",
        "manage_goal": "manage_goal",
        "belief_revise": "belief_revise",
        "forget_node": "forget_node",
        "forget_policy": "forget_by_policy",
        "gdpr_erase": "gdpr_erase",
    },
    "learn": {
        "from_outcome": "learn_from_outcome",
        "from_feedback": "learn_from_feedback",
        "detect_novelty": "learn_detect_novelty",
        "from_interaction": "learn_from_interaction",
        "contradictions": "belief_contradictions",
    },
    "consolidate": {
        "run": "run_consolidation",
        "stats": "graph_stats",
        "query": "query_graph",
        "traverse": "graph_traverse",
    },
}


@pytest.fixture
def session() -> Iterator[Session]:
    with Graphonomous(":memory:") as graph:
        yield Session(graph, "all")


def machine(name: str) -> Machine:
    (found,) = [m for m in MACHINES if m.name == name]
    return found


# -- the registry ---------------------------------------------------------------------


# Read actions of route/consolidate that retrieve offers too (no approval to read).
READ_ALSO_IN_RETRIEVE = {
    "topology": "topology_analyze",
    "stats": "graph_stats",
    "query": "query_graph",
    "traverse": "graph_traverse",
    "attention_survey": "attention_survey",
}


def test_actions_are_seed_003s_tables() -> None:
    got = {m.name: {a.name: a.tool.name for a in m.actions} for m in MACHINES}
    expected = {**SEED_003_ACTIONS}
    expected["retrieve"] = {**SEED_003_ACTIONS["retrieve"], **READ_ALSO_IN_RETRIEVE}
    expected["act"] = {**SEED_003_ACTIONS["act"], "restore_node": "restore_node"}
    assert got == expected
    covered = {tool for actions in got.values() for tool in actions.values()}
    # Every v1 tool is reachable, but for seed 000's alias of topology_analyze.
    assert covered == {spec.name for spec in V1_TOOLS} - {"analyze_topology"}


def test_surface_names_do_not_clash() -> None:
    names = [spec.name for spec in SURFACES["all"]]
    assert len(names) == len(set(names)) == 5 + 31 + 9


def test_input_schema_is_generated_from_the_v1_schemas() -> None:
    for m in MACHINES:
        schema = m.spec.input_schema
        assert schema["required"] == ["action"]
        assert schema.get("additionalProperties", True) is True  # open (the default)
        assert schema["properties"]["action"]["enum"] == [a.name for a in m.actions]
        assert not {"anyOf", "oneOf", "allOf"} & set(schema)  # no top-level combinator
        own = [a for a in m.actions if a.listed_in is None]
        names = {name for a in own for name, f in a.fields().items() if not is_alias(f)}
        expected = names | {"action"}
        assert set(schema["properties"]) == expected
        for listed in schema["properties"].values():  # the prose is in SPEC
            assert '"description"' not in json.dumps(listed)
        for action in m.actions:
            if action.listed_in is not None:  # listed once, by the machine it names
                assert f"{action.name}: as in {action.listed_in}" in m.spec.description
                host = next(h for h in MACHINES if h.name == action.listed_in)
                assert host.action(action.name).tool is action.tool
                assert host.action(action.name).listed_in is None
                continue
            line = m.spec.description.split(f"{action.name}(", 1)[1].split(")", 1)[0]
            for name, field in action.fields().items():
                if is_alias(field):
                    continue
                star = "*" if name in action.required() else ""
                assert f"{name}{star}" in line.split(", "), (m.name, action.name, name)
                merged = schema["properties"][name]
                # The merged field accepts whatever the v1 field accepts (enums, bounds).
                samples = [*field.get("enum", ()), field.get("minimum"), field.get("maximum")]
                for value in [v for v in samples if v is not None]:
                    jsonschema.Draft202012Validator(merged).validate(value)
    jsonschema.Draft202012Validator.check_schema(ACT.spec.input_schema)


def test_aliases_are_accepted_though_not_listed(session: Session) -> None:
    assert "from" not in ACT.spec.input_schema["properties"]
    stored = session.ok(
        "act",
        {"action": "store_edge", "from": "valve", "to": "fact", "edge_type": "related"},
    )
    assert stored["edge"]["relationship"] == "related"


def test_nested_action_fields_are_renamed() -> None:
    properties = ACT.spec.input_schema["properties"]
    assert properties["edge_operation"]["enum"] == ["get", "list", "update", "delete"]
    assert "create" in properties["goal_operation"]["enum"]
    assert properties["revision_type"]["enum"] == ["expand", "revise", "contract"]


def test_widen() -> None:
    assert widen([{"type": "integer", "maximum": 5}] * 2) == {"type": "integer", "maximum": 5}
    assert widen(
        [{"type": "integer", "minimum": 1, "maximum": 5}, {"type": "integer", "minimum": 0}]
    ) == {
        "type": "integer",
        "minimum": 0,
    }
    assert widen(
        [{"type": "string", "enum": ["a", "b"]}, {"type": "string", "enum": ["b", "c"]}]
    ) == {
        "type": "string",
        "enum": ["a", "b", "c"],
    }
    assert widen([{"type": "string"}, {"type": "array"}]) == {
        "anyOf": [{"type": "string"}, {"type": "array"}]
    }


def test_annotations_aggregate_the_actions() -> None:
    hints = {m.name: m.spec.annotations for m in MACHINES}
    # retrieve states its hints: it creates, changes and deletes no knowledge.
    assert hints["retrieve"].read_only and not hints["retrieve"].destructive
    assert all(not h.read_only for n, h in hints.items() if n != "retrieve")
    assert hints["act"].destructive and hints["consolidate"].destructive
    assert hints["route"].destructive  # attention_cycle with autonomy act
    assert not hints["learn"].destructive
    # Every read action of a destructive machine is reachable without that hint.
    retrieve = {a.tool.name for a in machine("retrieve").actions}
    for m in MACHINES:
        if m.spec.annotations.destructive:
            for action in m.actions:
                if action.tool.annotations.read_only:
                    assert action.tool.name in retrieve, (m.name, action.name)


# -- calls ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "action", "arguments"),
    machine_calls(),
    ids=[f"{m}.{a}" for m, a, _ in machine_calls()],
)
def test_every_action_with_valid_arguments(
    session: Session, name: str, action: str, arguments: dict[str, Any]
) -> None:
    structured = session.ok(name, arguments)
    # The v2 result is the v1 tool's: it validates against the v1 outputSchema too.
    v1 = machine(name).action(action).tool
    jsonschema.Draft202012Validator(v1.to_mcp()["outputSchema"]).validate(structured)


@pytest.mark.parametrize(
    ("name", "action", "arguments"),
    machine_calls(),
    ids=[f"{m}.{a}" for m, a, _ in machine_calls()],
)
def test_dispatch_is_the_v1_handler(name: str, action: str, arguments: dict[str, Any]) -> None:
    """The machine hands the v1 handler the v1 arguments and returns its result as is."""
    target = machine(name).action(action)
    seen: list[dict[str, Any]] = []
    sentinel = {"from": "v1 handler"}

    def fake(graph: Any, v1_arguments: dict[str, Any]) -> dict[str, Any]:
        seen.append(v1_arguments)
        return sentinel

    original = target.tool.handler
    object.__setattr__(target.tool, "handler", fake)  # a frozen dataclass
    try:
        assert machine(name).spec.handler(None, arguments) is sentinel
    finally:
        object.__setattr__(target.tool, "handler", original)
    assert seen == [{target.renames.get(k, k): v for k, v in arguments.items() if k != "action"}]
    assert seen[0] == V1_CALLS[target.tool.name]


READ_ONLY_ACTIONS = [
    (m.name, a.name, a.tool.name)
    for m in MACHINES
    for a in m.actions
    if a.tool.annotations.read_only
]


@pytest.mark.parametrize(("name", "action", "v1_name"), READ_ONLY_ACTIONS)
def test_read_actions_answer_exactly_as_their_v1_tool(
    session: Session, name: str, action: str, v1_name: str
) -> None:
    arguments = V1_CALLS[v1_name]
    via_v1 = session.ok(v1_name, arguments)
    via_v2 = session.ok(name, {"action": action, **arguments})
    volatile = ("surveyed_at",)  # a timestamp of the call itself
    assert {k: v for k, v in via_v2.items() if k not in volatile} == {
        k: v for k, v in via_v1.items() if k not in volatile
    }


def test_writes_through_a_machine_land_in_the_graph(session: Session) -> None:
    stored = session.ok("act", {"action": "store_node", "content": "Gaskets age", "node_id": "g"})
    assert stored["node"] == session.graph.get_node("g")["node"]
    assert stored["node_id"] == "g" and stored["status"] == "stored"  # upstream's fields too
    edge = session.ok(
        "act",
        {
            "action": "manage_edge",
            "edge_operation": "get",
            "source_id": "valve",
            "target_id": "pump",
            "relationship": "causes",
        },
    )
    assert edge["edge"]["source_id"] == "valve"
    goal = session.ok("act", {"action": "manage_goal", "goal_operation": "create", "title": "T"})
    assert session.graph.manage_goal("get", goal_id=goal["goal"]["id"])["goal"]["title"] == "T"
    revised = session.ok(
        "act", {"action": "belief_revise", "revision_type": "contract", "node_id": "fact"}
    )
    assert revised["operation"] == "contract"


# -- errors -------------------------------------------------------------------------------


def test_unknown_action_names_the_allowed_ones(session: Session) -> None:
    text = session.error("act", {"action": "explode"})
    assert "action" in text
    for action in ACT.actions:
        assert action.name in text
    assert "action" in session.error("learn", {})
    # Not a protocol error: the answer is a tool result with isError.
    out = call(session.server, "route", {"action": 7})
    assert out["isError"] is True


def test_fields_of_other_actions_are_rejected_by_name(session: Session) -> None:
    text = session.error("act", {"action": "store_node", "content": "x", "goal_id": "g"})
    assert "- goal_id: is not used by action store_node" in text
    assert "content" in text.split("it takes:")[1]
    text = session.error("retrieve", {"action": "context", "task": "x", "query": "q"})
    assert "- task:" in text


def test_action_arguments_are_checked_against_the_v1_schema(session: Session) -> None:
    assert "- query: required key" in session.error("retrieve", {"action": "context"})
    text = session.error("act", {"action": "forget_policy", "mode": "cascade"})
    assert "- mode: must be one of" in text  # the merged enum allows cascade; the v1 one not
    text = session.error("act", {"action": "manage_edge", "edge_operation": "explode"})
    assert "- edge_operation:" in text and "- action" not in text
    text = session.error("act", {"action": "manage_edge"})
    assert "edge_operation" in text
    assert "limit" in session.error(
        "consolidate", {"action": "query", "operation": "list_nodes", "limit": 10**6}
    )


def test_facade_errors_pass_through(session: Session) -> None:
    assert "not found" in session.error("act", {"action": "delete_node", "node_id": "nope"})
    assert "title" in session.error("act", {"action": "manage_goal", "goal_operation": "create"})


def test_machines_declare_no_output_schema_and_reply_compactly(session: Session) -> None:
    for m in MACHINES:
        assert m.spec.output_schema is None and "outputSchema" not in m.spec.to_mcp()
    out = call(session.server, "retrieve", {"action": "context", "query": "valve", "limit": 3})
    text = out["content"][0]["text"]
    assert text.startswith(f"{len(out['structuredContent']['results'])} result(s)")
    assert "score" in text and "structuredContent" in text
    assert len(text) < len(json.dumps(out["structuredContent"]))
    assert json.dumps(ACT.spec.to_mcp()).count("$ref") == 0
