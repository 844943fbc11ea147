"""attention_survey and attention_run_cycle: ranking, pressure, κ regions, autonomy."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from graphonomous import Graphonomous, ValidationError
from graphonomous.learning.attention import urgency
from graphonomous.model import format_time


def _active_goal(graph: Graphonomous, title: str, **extra: Any) -> str:
    goal_id: str = graph.manage_goal("create", title=title, status="active", **extra)["goal"]["id"]
    return goal_id


def _contradiction(graph: Graphonomous) -> tuple[str, str]:
    a = graph.store_node("The office wifi password rotates every month", confidence=0.9)
    b = graph.store_node("The office wifi password rotates every week", confidence=0.4)
    graph.run_consolidation()
    return a["node"]["id"], b["node"]["id"]


def test_urgency_uses_priority_and_deadline() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    plain = {"priority": 0.3, "metadata": {}}
    soon = {"priority": 0.3, "metadata": {"deadline": format_time(now + timedelta(hours=84))}}
    late = {"priority": 0.3, "metadata": {"deadline": format_time(now - timedelta(hours=1))}}
    far = {"priority": 0.3, "metadata": {"deadline": format_time(now + timedelta(days=30))}}
    assert urgency(plain, now) == 0.3
    assert urgency(soon, now) == pytest.approx(0.5)
    assert urgency(late, now) == 1.0
    assert urgency(far, now) == 0.3


def test_goals_ranked_by_urgency_times_gap_plus_surprise(graph: Graphonomous) -> None:
    graph.store_node("To reset valve V2 close the intake and recalibrate", confidence=0.95)
    known = _active_goal(graph, "Reset valve V2", priority=0.9)
    unknown = _active_goal(graph, "Negotiate the cafeteria contract", priority=0.6)
    _active_goal(graph, "Some low priority chore", priority=0.1)
    graph.manage_goal("create", title="A proposed goal is not surveyed", priority=1.0)
    ranked = graph.attention_survey()["goals"]
    assert len(ranked) == 3
    assert ranked[0]["goal_id"] == unknown and ranked[0]["knowledge_gap"] == 1.0
    by_id = {g["goal_id"]: g for g in ranked}
    assert by_id[known]["knowledge_gap"] == 0.0
    for goal in ranked:
        assert goal["score"] == pytest.approx(
            goal["urgency"] * goal["knowledge_gap"] + goal["surprise"], abs=1e-6
        )


def test_surprise_from_outcomes_against_expectation(graph: Graphonomous) -> None:
    fact = graph.store_node("Restarting the router fixes the outage")["node"]["id"]
    goal = _active_goal(graph, "Fix the outage", linked_node_ids=[fact])
    graph.learn_from_outcome("restart-1", "failure", 0.9, [fact], goal_id=goal)
    ranked = graph.attention_survey()["goals"]
    q = graph.store.require_node(fact).q_value
    assert ranked[0]["surprise"] == pytest.approx(abs(0.0 - q), abs=1e-6)


def test_survey_lists_kappa_regions_items_and_pressure(graph: Graphonomous) -> None:
    a, b = _contradiction(graph)
    loop = [graph.store_node(f"loop claim {i}")["node"]["id"] for i in range(3)]
    for i in range(3):
        graph.store_edge(loop[i], loop[(i + 1) % 3], "causes")
    survey = graph.attention_survey()
    regions = survey["kappa_regions"]["regions"]
    assert (
        sorted(r["size"] for r in regions) == [2, 3] and survey["kappa_regions"]["max_kappa"] == 1
    )
    assert [sorted(i["subject_ids"]) for i in survey["open_items"]] == [sorted([a, b])]
    assert survey["memory_pressure"] is None
    assert survey["consolidation"]["due"] is False
    graph.forgetting_config(max_nodes=5)  # 5 live nodes > 90 % of 5
    assert graph.attention_survey()["memory_pressure"]["severity"] == "warning"
    graph.forgetting_config(max_nodes=4)  # over budget
    assert graph.attention_survey()["memory_pressure"]["severity"] == "critical"


def test_observe_and_advise_never_write(graph: Graphonomous) -> None:
    _contradiction(graph)
    graph.forgetting_config(max_nodes=1)
    before = graph.store.list_nodes()
    observed = graph.attention_run_cycle("observe", budget=1)
    assert observed["used"] == 0 and {a["status"] for a in observed["actions"]} == {"observed"}
    advised = graph.attention_run_cycle("advise", budget=1)
    assert advised["used"] == 1 and advised["actions"][0]["action"] == "forget_by_policy"
    assert advised["actions"][0]["status"] == "recommended" and advised["deferred"] >= 1
    assert graph.store.list_nodes() == before


def test_act_performs_only_the_allowed_actions(graph: Graphonomous) -> None:
    a, b = _contradiction(graph)
    graph.belief_revise("revise", node_id=b, new_id=a)  # the contradiction is settled
    result = graph.attention_run_cycle("act", budget=10)
    statuses = {(x["action"], x["status"]) for x in result["actions"]}
    assert ("resolve_item", "done") in statuses
    assert graph.attention_survey()["open_items"] == []
    assert all(
        x["status"] == "recommended"
        for x in result["actions"]
        if x["action"] in ("deliberate", "review_goal")
    )


def test_act_runs_a_due_consolidation(graph: Graphonomous) -> None:
    graph.store_node("a memory")
    result = graph.attention_run_cycle("act", budget=5)
    done = [x for x in result["actions"] if x["action"] == "run_consolidation"]
    assert done and done[0]["status"] == "done"
    assert graph.consolidation_log()["runs"][0]["trigger"] == "attention"


def test_arguments_are_validated(graph: Graphonomous) -> None:
    with pytest.raises(ValidationError):
        graph.attention_run_cycle("dominate")
    with pytest.raises(ValidationError):
        graph.attention_run_cycle("act", budget=-1)
