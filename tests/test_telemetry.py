"""The telemetry hook registry and the topology events it carries."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from graphonomous import telemetry
from graphonomous.topology import analyze

Event = tuple[str, dict[str, Any], dict[str, Any]]


@pytest.fixture(autouse=True)
def clean_counters() -> Iterator[None]:
    telemetry.reset_counters()
    yield
    telemetry.reset_counters()


def recorder(events: list[Event]) -> telemetry.Handler:
    def record(event: str, measurements: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
        events.append((event, dict(measurements), dict(metadata)))

    return record


def test_analyze_emits_analyze_and_route_events() -> None:
    events: list[Event] = []
    handles = [
        telemetry.attach(telemetry.TOPOLOGY_ANALYZE, recorder(events)),
        telemetry.attach(telemetry.TOPOLOGY_ROUTE, recorder(events)),
    ]
    try:
        analyze([("a", "b"), ("b", "a"), ("b", "c")], trigger="retrieve_context")
    finally:
        for handle in handles:
            assert telemetry.detach(handle)
    (name1, measured, meta1), (name2, nothing, meta2) = events
    assert name1 == "graphonomous.topology.analyze"
    assert set(measured) == {"duration_ms", "node_count", "edge_count"}
    assert measured["duration_ms"] >= 0.0
    assert (measured["node_count"], measured["edge_count"]) == (3, 3)
    assert meta1 == {"scc_count": 1, "max_kappa": 1, "routing": "deliberate"}
    assert name2 == "graphonomous.topology.route" and nothing == {}
    assert meta2 == {"decision": "deliberate", "max_kappa": 1, "trigger": "retrieve_context"}


def test_counters_count_events_and_routing_decisions_per_trigger() -> None:
    analyze([("a", "b")])
    analyze([("a", "b"), ("b", "a")])
    analyze([("a", "b")], trigger="retrieve_context")
    analyze([("a", "b")], emit_telemetry=False)
    assert telemetry.counters() == {
        "events": {"graphonomous.topology.analyze": 3, "graphonomous.topology.route": 3},
        "routing": {
            "analyze_topology": {"fast": 1, "deliberate": 1},
            "retrieve_context": {"fast": 1},
        },
    }
    telemetry.reset_counters()
    assert telemetry.counters() == {"events": {}, "routing": {}}


def test_a_raising_handler_is_logged_and_harmless(caplog: pytest.LogCaptureFixture) -> None:
    events: list[Event] = []

    def explode(event: str, measurements: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
        raise RuntimeError("boom")

    bad = telemetry.attach(telemetry.TOPOLOGY_ANALYZE, explode)
    good = telemetry.attach(telemetry.TOPOLOGY_ANALYZE, recorder(events))
    try:
        with caplog.at_level(logging.ERROR, logger="graphonomous.telemetry"):
            result = analyze([("a", "b")])
    finally:
        telemetry.detach(bad)
        telemetry.detach(good)
    assert result["routing"] == "fast"
    assert len(events) == 1  # the handler after the broken one still ran
    assert "boom" in caplog.text


def test_detach_is_idempotent_and_stops_delivery() -> None:
    events: list[Event] = []
    handle = telemetry.attach("custom.event", recorder(events))
    telemetry.emit("custom.event", {"x": 1}, {})
    assert telemetry.detach(handle) is True
    assert telemetry.detach(handle) is False
    telemetry.emit("custom.event", {"x": 2}, {})
    assert events == [("custom.event", {"x": 1}, {})]


def test_concurrent_emits_are_all_counted() -> None:
    def worker() -> None:
        for _ in range(500):
            telemetry.emit(telemetry.TOPOLOGY_ROUTE, {}, {"decision": "fast", "trigger": "t"})

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert telemetry.counters()["routing"] == {"t": {"fast": 4000}}
