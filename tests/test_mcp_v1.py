"""Every v1 tool called over the protocol on a real facade, and its argument errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp_tool_calls import V1_CALLS, Session

from graphonomous import Graphonomous
from graphonomous.mcp.query import query_graph
from graphonomous.mcp.surfaces import SURFACES
from graphonomous.mcp.v1 import V1_TOOLS


@pytest.fixture
def session() -> Iterator[Session]:
    with Graphonomous(":memory:") as graph:
        yield Session(graph, "v1")


def test_the_call_table_covers_every_v1_tool() -> None:
    assert set(V1_CALLS) == {spec.name for spec in V1_TOOLS}
    assert SURFACES["v1"] == V1_TOOLS


@pytest.mark.parametrize("name", list(V1_CALLS))
def test_every_v1_tool_with_valid_arguments(session: Session, name: str) -> None:
    session.ok(name, V1_CALLS[name])


def test_outputs_say_what_the_tools_did(session: Session) -> None:
    context = session.ok("retrieve_context", V1_CALLS["retrieve_context"])
    assert context["results"] and context["topology"]["max_kappa"] == 1  # the valve loop
    assert session.ok("topology_analyze", V1_CALLS["topology_analyze"])["routing"] == "deliberate"
    victim = session.ok("delete_node", V1_CALLS["delete_node"])["node_id"]
    assert victim.startswith("victim-")
    assert "not found" in session.error("delete_node", {"node_id": victim})
    erased = session.ok("gdpr_erase", V1_CALLS["gdpr_erase"])
    assert erased["erased"] is True and erased["node_id"] != victim
    outcome = session.ok("learn_from_outcome", V1_CALLS["learn_from_outcome"])
    (update,) = outcome["updates"]
    assert update["node_id"] == "proc" and update["q_after"] > update["q_before"]


def test_query_graph_delegates_to_the_facade(session: Session) -> None:
    arguments = {"operation": "list_nodes", "node_type": "procedural", "limit": 3}
    expected = query_graph(session.graph, **arguments)
    assert session.ok("query_graph", arguments) == expected
    assert "offset" in session.error("query_graph", {"operation": "get_node", "offset": 1})


def test_trace_evidence_path_accepts_upstream_names(session: Session) -> None:
    canonical = session.ok("trace_evidence_path", {"from_id": "proc", "to_id": "seal"})
    upstream = session.ok("trace_evidence_path", {"source_id": "proc", "target_id": "seal"})
    assert upstream == canonical and canonical["found"] is True
    assert "from_id" in session.error("trace_evidence_path", {"to_id": "seal"})
    assert "source_id" in session.error(
        "trace_evidence_path", {"from_id": "proc", "source_id": "valve", "to_id": "seal"}
    )


def _wrong_value(schema: dict[str, Any]) -> Any:
    """A value of the wrong JSON type for a property schema."""
    return {"nested": True} if schema.get("type") != "object" and "anyOf" not in schema else 7


@pytest.mark.parametrize("spec", V1_TOOLS, ids=lambda spec: spec.name)
def test_invalid_arguments_are_tool_errors_naming_the_field(session: Session, spec: Any) -> None:
    text = session.error(spec.name, {**V1_CALLS[spec.name], "bogus_field": 1})
    assert text.startswith(f"Invalid arguments for tool {spec.name}:") and "bogus_field" in text
    properties: dict[str, Any] = spec.input_schema["properties"]
    for field, schema in properties.items():
        arguments = {**V1_CALLS[spec.name], field: _wrong_value(schema)}
        assert f"- {field}:" in session.error(spec.name, arguments), field
    for field in spec.input_schema.get("required", ()):
        arguments = {k: v for k, v in V1_CALLS[spec.name].items() if k != field}
        assert field in session.error(spec.name, arguments)


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("retrieve_context", {"query": "x", "effort": 3, "deep": True}, "deep"),
        (
            "learn_from_outcome",
            {**V1_CALLS["learn_from_outcome"], "causal_node_ids": ["zz"]},
            "causal_node_ids",
        ),
        ("manage_goal", {"action": "create"}, "title"),
        (
            "manage_goal",
            {"action": "transition", "goal_id": "$goal", "status": "completed"},
            "status",
        ),
        ("belief_revise", {"action": "contract", "content": "x"}, "content"),
        ("graph_traverse", {"node_id": "valve", "direction": "sideways"}, "direction"),
        ("deliberate", {"query": "valve", "node_ids": ["valve"]}, "node_ids"),
        (
            "trace_evidence_path",
            {"from_id": "valve", "to_id": "seal", "direction": "in"},
            "direction",
        ),
    ],
)
def test_facade_validation_errors_name_the_field(
    session: Session, name: str, arguments: dict[str, Any], field: str
) -> None:
    text = session.error(name, arguments)
    assert field in text, text


def test_annotations_follow_what_the_handlers_do() -> None:
    hints = {spec.name: spec.annotations for spec in V1_TOOLS}
    for name in (
        "delete_node",
        "gdpr_erase",
        "forget_node",
        "forget_by_policy",
        "run_consolidation",
        "manage_edge",
        "attention_run_cycle",
    ):
        assert hints[name].destructive and not hints[name].read_only, name
    # retrieve_context bumps access counters: not read-only (nor what runs it).
    for name in ("retrieve_context", "coverage_query", "review_goal", "deliberate"):
        assert not hints[name].read_only, name
    for name in (
        "query_graph",
        "graph_stats",
        "topology_analyze",
        "graph_traverse",
        "retrieve_episodic",
        "retrieve_procedural",
        "trace_evidence_path",
        "epistemic_frontier",
        "learn_detect_novelty",
        "belief_contradictions",
        "attention_survey",
    ):
        assert hints[name].read_only and hints[name].idempotent, name
    assert not any(h.open_world for h in hints.values())


def test_read_only_tools_write_nothing(session: Session) -> None:
    store = session.graph.store
    before = store.scalar("SELECT total_changes()")
    for spec in V1_TOOLS:
        if spec.annotations.read_only:
            session.ok(spec.name, V1_CALLS[spec.name])
    assert store.scalar("SELECT total_changes()") == before
