"""Retention over time: a month of an always-on idle server keeps what it was told.

Driven by a `ManualClock` and the idle timer's `tick()` (no thread, no sleep):
the server's own consolidation cadence runs over simulated days.  Pins the
retention contract (SPEC "Retention"): time alone never deletes; before 7 days
only fast and episodic knowledge fades; semantic, procedural, goal knowledge and
a confident rule are still answered at 7 days, slow and glacial knowledge at 30;
every faded node is in the audit log with its reason and can be restored; the
forecast predicts exactly what fades; reinforcement resets the clock.
"""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous, records
from graphonomous import clock as clock_module
from graphonomous.clock import ManualClock
from graphonomous.learning import retention
from graphonomous.learning.timer import ConsolidationTimer

# One per kind a user stores: (key, content, store_node keyword arguments).
FACTS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (
        "episodic",
        "The operator asked about pump P-7 vibration this morning",
        {"node_type": "episodic"},
    ),
    ("semantic", "Pump P-7 is rated for 40 bar of discharge pressure", {}),
    (
        "procedural",
        "To reset pump P-7: close the intake, flush the line, recalibrate",
        {"node_type": "procedural"},
    ),
    ("rule", "Never open valve V1 while the line is under pressure", {"confidence": 0.9}),
    ("goal", "Goal: commission the new cooling loop by March", {"node_type": "goal"}),
    ("slow", "The plant's cooling water comes from the river intake", {"timescale": "slow"}),
    ("glacial", "The plant is in Rotterdam harbour", {"timescale": "glacial"}),
    ("fast", "The operator is looking at screen three", {"timescale": "fast"}),
)
QUESTIONS = {
    "episodic": "what did the operator ask about pump P-7 vibration",
    "semantic": "what discharge pressure is pump P-7 rated for",
    "procedural": "how do I reset pump P-7",
    "rule": "may I open valve V1 while the line is under pressure",
    "goal": "commission the cooling loop goal",
    "slow": "where does the cooling water come from",
    "glacial": "where is the plant",
    "fast": "which screen is the operator looking at",
}
CADENCE_S = 3600.0  # the idle timer's interval here; decay does not depend on it


def _live(graph: Graphonomous, node_id: str) -> bool:
    return graph.get_node(node_id, include_forgotten=True)["node"]["forgotten_at"] is None


def _answered(graph: Graphonomous, key: str, node_id: str) -> bool:
    context = graph.retrieve_context(QUESTIONS[key], limit=5, effort=0)
    return node_id in [r["node_id"] for r in context["results"]]


def _idle_days(clock: ManualClock, timer: ConsolidationTimer, days: float) -> None:
    for _ in range(round(days * 86400 / CADENCE_S)):
        clock.advance(CADENCE_S)
        timer.tick()


@pytest.fixture
def month(tmp_path: Path) -> Any:
    clock = ManualClock("2026-01-01T00:00:00Z")
    graph = Graphonomous(tmp_path / "g.db", clock=clock)
    ids = {key: graph.store_node(text, **kw)["node"]["id"] for key, text, kw in FACTS}
    timer = ConsolidationTimer(graph.engine, interval_s=CADENCE_S, idle_s=30)
    yield clock, graph, ids, timer
    graph.close()


def test_a_month_idle_keeps_what_the_seed_promises(month: Any) -> None:
    clock, graph, ids, timer = month
    forecast = graph.fade_forecast(30)
    _idle_days(clock, timer, 6.9)
    faded_before_7 = {key for key, node_id in ids.items() if not _live(graph, node_id)}
    assert faded_before_7 <= {"fast", "episodic"} and "fast" in faded_before_7
    _idle_days(clock, timer, 0.2)
    for key in ("semantic", "procedural", "goal", "rule", "slow", "glacial"):
        assert _answered(graph, key, ids[key]), key
    _idle_days(clock, timer, 30 - 7.1)
    assert timer.runs >= 29 * 24
    for key in ("slow", "glacial", "semantic", "procedural", "goal", "rule"):
        assert _live(graph, ids[key]), key
    # Nothing was deleted: every row is still there.
    for node_id in ids.values():
        assert graph.get_node(node_id, include_forgotten=True)["node"]["id"] == node_id
    # Every forgotten node is in the audit log with its reason; the forecast said so.
    forgotten = sorted(node_id for node_id in ids.values() if not _live(graph, node_id))
    audited = [
        node_id
        for entry in graph.store.audit_entries()
        if entry["action"] == "fade"
        for node_id in entry["details"]["node_ids"]
    ]
    assert sorted(audited) == forgotten
    assert {item["node_id"] for item in forecast["fading"]} == set(forgotten)
    status = graph.retention_status()
    assert status["faded_last_day"]["count"] == 0  # nothing faded on day 30


def test_a_faded_node_is_restored_and_answers_again(month: Any) -> None:
    clock, graph, ids, timer = month
    _idle_days(clock, timer, 8)
    episode = ids["episodic"]
    assert not _live(graph, episode) and not _answered(graph, "episodic", episode)
    assert graph.retention_status()["faded_last_day"]["by_reason"] == {}  # faded day 3.5
    result = graph.restore_node(episode, "the user asked for it")
    assert result["restored"] is True and result["node"]["forgotten_at"] is None
    assert _answered(graph, "episodic", episode)
    # Restored with a full TTL: it survives the next week's consolidations... almost.
    _idle_days(clock, timer, 3)
    assert _live(graph, episode)
    assert graph.restore_node(episode)["restored"] is False


def test_reinforcement_resets_the_clock(month: Any) -> None:
    clock, graph, ids, timer = month
    # Asked every day, an episode outlives its TTL many times over.
    for _ in range(20):
        _idle_days(clock, timer, 1)
        assert _answered(graph, "episodic", ids["episodic"])
    assert _live(graph, ids["episodic"])


def test_the_forecast_is_exact(month: Any) -> None:
    _clock, graph, ids, _timer = month
    forecast = graph.fade_forecast(10)
    fades = {item["node_id"]: item["fades_at"] for item in forecast["fading"]}
    assert set(fades) == {ids["fast"], ids["episodic"]}
    # Semantic (decay rate 0.005, half the default) in the fast tier: two TTLs of 1 h.
    assert fades[ids["fast"]] == "2026-01-01T02:00:00.000Z"
    episodic = graph.get_node(ids["episodic"])["node"]
    expected = retention.fade_at(0.5, "medium", episodic["decay_rate"], "2026-01-01T00:00:00Z")
    assert expected is not None and fades[ids["episodic"]].startswith(
        expected.strftime("%Y-%m-%dT%H:%M:%S")
    )
    assert forecast["never"] == 0  # glacial and goal nodes are protected: not listed


def test_the_retention_modules_doctests() -> None:
    for module in (retention, clock_module, records):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_a_time_cue_recalls_what_faded_then_but_not_what_was_forgotten_on_request(
    tmp_path: Path,
) -> None:
    clock = ManualClock("2026-02-02T09:00:00Z")  # a Monday
    with Graphonomous(tmp_path / "g.db", clock=clock) as graph:
        diary = graph.store_node("Fixed the greenhouse sensor cable", "episodic")["node"]["id"]
        other = graph.store_node("Fixed the greenhouse door hinge", "episodic")["node"]["id"]
        graph.forget_node(other, reason="the user asked")
        clock.advance(days=9)
        graph.run_consolidation()
        assert not _live(graph, diary)  # faded: an episode unused for 3.5 days
        answer = graph.retrieve_context("what did I fix in the greenhouse last week", limit=5)
        assert answer["stats"]["time"]["recalled"] == [diary]
        assert answer["results"][0]["node_id"] == diary and _live(graph, diary)
        assert not _live(graph, other)  # forgotten on request stays forgotten
        (entry,) = [e for e in graph.store.audit_entries() if e["action"] == "recall"]
        assert entry["details"]["node_ids"] == [diary]
        # No time named: nothing is recalled.
        graph.run_consolidation()
        clock.advance(days=30)
        graph.run_consolidation()
        plain = graph.retrieve_context("what did I fix in the greenhouse", limit=5)
        assert plain["stats"]["time"]["recalled"] == [] and not _live(graph, diary)
