"""GoalGraph: goals with a goal node, transitions, progress, links, decomposition, review."""

from __future__ import annotations

from typing import Any

import pytest

from graphonomous import Graphonomous, NotFoundError, ValidationError
from graphonomous.learning.goals import GOAL_STATUSES, GOAL_TRANSITIONS, check_transition


def _create(
    graph: Graphonomous, title: str = "Deploy the support agent", **extra: Any
) -> dict[str, Any]:
    goal: dict[str, Any] = graph.manage_goal("create", title=title, **extra)["goal"]
    return goal


def test_create_makes_a_goal_node(graph: Graphonomous) -> None:
    goal = _create(graph, description="for ACME Corp", priority=0.8, metadata={"horizon": "long"})
    assert goal["status"] == "proposed" and goal["progress"] == 0.0
    node = graph.get_node(goal["node_id"])["node"]
    assert node["node_type"] == "goal"
    assert node["content"] == "Deploy the support agent\nfor ACME Corp"
    assert node["metadata"]["goal_id"] == goal["id"]
    assert goal["node_id"] in graph.vector_index()
    fetched = graph.manage_goal("get", goal_id=goal["id"])
    assert fetched["goal"] == goal and fetched["subgoals"] == [] and fetched["linked_nodes"] == []


def test_transition_table_is_enforced(graph: Graphonomous) -> None:
    goal = _create(graph)
    result = graph.manage_goal("transition", goal_id=goal["id"], status="active", reason="go")
    assert (result["from"], result["to"]) == ("proposed", "active")
    history = result["goal"]["metadata"]["history"]
    assert [(h["from"], h["to"], h["reason"]) for h in history] == [("proposed", "active", "go")]
    with pytest.raises(ValidationError) as info:
        graph.manage_goal("transition", goal_id=goal["id"], status="proposed")
    assert "active -> proposed" in str(info.value) and info.value.field == "status"
    done = graph.manage_goal("transition", goal_id=goal["id"], status="completed")["goal"]
    assert done["progress"] == 1.0
    assert graph.get_node(goal["node_id"])["node"]["metadata"]["status"] == "completed"
    with pytest.raises(ValidationError, match="terminal"):
        graph.manage_goal("transition", goal_id=goal["id"], status="active")


@pytest.mark.parametrize("current", GOAL_STATUSES)
def test_every_transition_pair(current: str) -> None:
    for target in GOAL_STATUSES:
        if target in GOAL_TRANSITIONS[current]:
            check_transition(current, target)
        else:
            with pytest.raises(ValidationError):
                check_transition(current, target)


def test_progress_is_bounded_and_final_once_terminal(graph: Graphonomous) -> None:
    goal = _create(graph)
    assert (
        graph.manage_goal("set_progress", goal_id=goal["id"], progress=0.4)["goal"]["progress"]
        == 0.4
    )
    with pytest.raises(ValidationError):
        graph.manage_goal("set_progress", goal_id=goal["id"], progress=1.5)
    graph.manage_goal("transition", goal_id=goal["id"], status="abandoned")
    with pytest.raises(ValidationError, match="final"):
        graph.manage_goal("set_progress", goal_id=goal["id"], progress=0.5)


def test_link_and_unlink_nodes(graph: Graphonomous) -> None:
    goal = _create(graph)
    fact = graph.store_node("The support agent needs the ticket API")["node"]["id"]
    linked = graph.manage_goal("link_nodes", goal_id=goal["id"], node_ids=[fact])
    assert linked["linked"] == [fact] and linked["goal"]["linked_node_ids"] == [fact]
    supports = graph.store.find_edge(fact, goal["node_id"], "supports")
    assert supports is not None
    shown = graph.manage_goal("get", goal_id=goal["id"])["linked_nodes"]
    assert [n["id"] for n in shown] == [fact]
    with pytest.raises(ValidationError):
        graph.manage_goal("link_nodes", goal_id=goal["id"], node_ids=["missing"])
    unlinked = graph.manage_goal("unlink_nodes", goal_id=goal["id"], node_ids=[fact])
    assert unlinked["unlinked"] == [fact] and unlinked["goal"]["linked_node_ids"] == []
    assert graph.store.find_edge(fact, goal["node_id"], "supports") is None


def test_decompose_creates_linked_subgoals(graph: Graphonomous) -> None:
    goal = _create(graph)
    result = graph.manage_goal(
        "decompose",
        goal_id=goal["id"],
        subgoals=["Collect FAQs", {"title": "Write prompts", "priority": 0.9}],
    )
    subgoals = result["subgoals"]
    assert [s["title"] for s in subgoals] == ["Collect FAQs", "Write prompts"]
    assert all(s["parent_goal_id"] == goal["id"] for s in subgoals)
    assert result["goal"]["metadata"]["decomposition"] == [s["id"] for s in subgoals]
    for sub in subgoals:
        assert graph.store.find_edge(sub["node_id"], goal["node_id"], "part_of") is not None
    listed = graph.manage_goal("list", parent_goal_id=goal["id"])["goals"]
    assert [g["title"] for g in listed] == ["Write prompts", "Collect FAQs"]  # priority first
    with pytest.raises(ValidationError):
        graph.manage_goal("decompose", goal_id=goal["id"], subgoals=[{"name": "x"}])


def test_update_rewrites_the_goal_node(graph: Graphonomous) -> None:
    goal = _create(graph)
    updated = graph.manage_goal(
        "update", goal_id=goal["id"], title="Deploy the billing agent", metadata={"k": 1}
    )["goal"]
    assert updated["title"] == "Deploy the billing agent" and updated["metadata"] == {"k": 1}
    node = graph.get_node(goal["node_id"])["node"]
    assert node["content"] == "Deploy the billing agent"
    hits = graph.similarity_search("billing agent deployment", 1)["results"]
    assert hits[0]["id"] == goal["node_id"]
    with pytest.raises(ValidationError):
        graph.manage_goal("update", goal_id=goal["id"])


def test_delete_detaches_subgoals(graph: Graphonomous) -> None:
    goal = _create(graph)
    sub = graph.manage_goal("decompose", goal_id=goal["id"], subgoals=["step"])["subgoals"][0]
    result = graph.manage_goal("delete", goal_id=goal["id"])
    assert result["subgoals_detached"] == [sub["id"]]
    assert graph.manage_goal("get", goal_id=sub["id"])["goal"]["parent_goal_id"] is None
    with pytest.raises(NotFoundError):
        graph.manage_goal("get", goal_id=goal["id"])
    assert goal["node_id"] not in graph.vector_index()


def test_unknown_actions_and_parameters(graph: Graphonomous) -> None:
    with pytest.raises(ValidationError):
        graph.manage_goal("explode")
    with pytest.raises(ValidationError) as info:
        graph.manage_goal("create", title="x", colour="red")
    assert info.value.field == "colour"
    with pytest.raises(ValidationError) as missing:
        graph.manage_goal("transition", goal_id="g")
    assert missing.value.field == "status"


def test_review_goal_decisions(graph: Graphonomous) -> None:
    goal = _create(graph, title="Reset valve V2 after an E-47 alarm")
    empty = graph.review_goal(goal["id"])
    assert empty["decision"] == "learn_first" and empty["transition"] is None
    for text in (
        "To reset valve V2 close the intake and recalibrate",
        "Alarm E-47 on valve V2 means pressure loss; reset after fixing the leak",
    ):
        graph.store_node(text, confidence=0.95)
    review = graph.review_goal(goal["id"], apply=True)
    assert review["decision"] == "act"
    assert review["transition"] == {"from": "proposed", "to": "active"}
    assert review["goal"]["status"] == "active"
    assert review["goal"]["metadata"]["last_review"]["decision"] == "act"


def test_goals_snapshot(graph: Graphonomous) -> None:
    _create(graph)
    active = _create(graph, title="second goal")
    graph.manage_goal("transition", goal_id=active["id"], status="active")
    snapshot = graph.goals_snapshot()
    assert snapshot["total"] == 2
    assert snapshot["by_status"] == {
        "proposed": 1,
        "active": 1,
        "blocked": 0,
        "completed": 0,
        "abandoned": 0,
    }


# -- outcomes drive goals (audit finding: three failures left a goal active at 0.25) ----------


def _outcome(graph: Graphonomous, goal_id: str, status: str, cause: str) -> dict[str, Any]:
    return graph.learn_from_outcome("act", status, 0.9, [cause], goal_id=goal_id)


def test_failures_exhaust_the_retry_budget(graph: Graphonomous) -> None:
    cause = graph.store_node("Restart the PS-2 pump")["node"]["id"]
    goal = graph.manage_goal("create", title="Keep PS-2 running")["goal"]
    first = _outcome(graph, goal["id"], "failure", cause)
    assert first["goal_update"]["transitions"][0]["to"] == "active"
    _outcome(graph, goal["id"], "failure", cause)
    third = _outcome(graph, goal["id"], "failure", cause)["goal_update"]
    assert third["status"] == "abandoned" and third["progress"] == 0.0
    history = graph.manage_goal("get", goal_id=goal["id"])["goal"]["metadata"]["history"]
    assert [h["to"] for h in history] == ["active", "abandoned"]
    assert history[-1]["evidence"]["consecutive_failures"] == 3
    assert history[-1]["evidence"]["status"] == "failure"


def test_outcome_threshold_completes_a_goal(graph: Graphonomous) -> None:
    cause = graph.store_node("Calibrate the gauge weekly")["node"]["id"]
    criteria = {"type": "outcome_threshold", "target": 0.7, "min_outcomes": 3}
    goal = graph.manage_goal(
        "create", title="Calibrated gauges", metadata={"completion_criteria": criteria}
    )["goal"]
    statuses = ["success", "failure", "success"]
    updates = [_outcome(graph, goal["id"], s, cause)["goal_update"] for s in statuses]
    assert updates[1]["status"] == "active" and updates[1]["progress"] == 0.5
    assert updates[2]["status"] == "active"  # 2/3 < 0.7
    last = _outcome(graph, goal["id"], "success", cause)["goal_update"]
    assert last["status"] == "completed" and last["progress"] == 1.0
    assert last["transitions"][-1]["reason"].startswith("outcome_threshold met")
    # A terminal goal still counts outcomes but does not move.
    after = _outcome(graph, goal["id"], "failure", cause)["goal_update"]
    assert after["status"] == "completed" and after["outcome_stats"]["failure"] == 2


def test_timeouts_do_not_count_and_success_unblocks(graph: Graphonomous) -> None:
    cause = graph.store_node("Page the on-call engineer")["node"]["id"]
    goal = graph.manage_goal("create", title="Resolve incident", metadata={"retry_budget": 2})[
        "goal"
    ]
    graph.manage_goal("transition", goal_id=goal["id"], status="active")
    graph.manage_goal("transition", goal_id=goal["id"], status="blocked")
    update = _outcome(graph, goal["id"], "timeout", cause)["goal_update"]
    assert update["status"] == "blocked" and update["outcome_stats"]["consecutive_failures"] == 0
    update = _outcome(graph, goal["id"], "success", cause)["goal_update"]
    assert update["status"] == "active" and update["progress"] == 1.0


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"completion_criteria": {"type": "vibes"}}, "metadata.completion_criteria"),
        (
            {"completion_criteria": {"type": "outcome_threshold", "target": 2}},
            "metadata.completion_criteria.target",
        ),
        ({"retry_budget": -1}, "metadata.retry_budget"),
    ],
)
def test_bad_criteria_name_the_field(
    graph: Graphonomous, metadata: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as info:
        graph.manage_goal("create", title="x", metadata=metadata)
    assert info.value.field == field
