"""The idle consolidation timer, alone and under concurrent load."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.learning.timer import ConsolidationTimer


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Graphonomous]:
    with Graphonomous(tmp_path / "timer.db", embedder="hashing") as opened:
        yield opened


def _wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_runs_when_idle_and_stops_quickly(graph: Graphonomous) -> None:
    graph.store_node("a memory to consolidate")
    timer = ConsolidationTimer(graph.engine, interval_s=0.05, idle_s=0.05).start()
    try:
        assert _wait_for(lambda: timer.runs >= 2)
    finally:
        started = time.monotonic()
        timer.stop()
        assert time.monotonic() - started < 1.0
    assert not timer.running and timer.errors == []
    runs = graph.consolidation_log(50)["runs"]
    assert len(runs) >= 2 and all(r["trigger"] == "idle" for r in runs)


def test_waits_while_the_graph_is_busy(graph: Graphonomous) -> None:
    idle_s = 1.0
    with ConsolidationTimer(graph.engine, interval_s=0.01, idle_s=idle_s) as timer:
        longest_gap, last = 0.0, time.monotonic()
        for _ in range(20):
            graph.touch()
            now = time.monotonic()
            longest_gap, last = max(longest_gap, now - last), now
            time.sleep(0.01)
        # A loaded machine may stall this loop past the idle window; then the graph
        # really was idle for that long and a run is allowed.
        assert timer.runs == 0 or longest_gap >= idle_s
        assert _wait_for(lambda: timer.runs >= 1)


def test_a_failing_cycle_does_not_kill_the_timer(
    graph: Graphonomous, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphonomous.learning import timer as timer_module

    calls = {"n": 0}

    def flaky(*args: object, **kwargs: object) -> dict[str, object]:
        calls["n"] += 1
        raise RuntimeError("boom")

    monkeypatch.setattr(timer_module, "run_consolidation", flaky)
    with ConsolidationTimer(graph.engine, interval_s=0.01, idle_s=0.0) as timer:
        assert _wait_for(lambda: calls["n"] >= 3)
        assert timer.running
    assert timer.errors and timer.errors[-1] == "RuntimeError: boom"


def test_concurrent_reads_and_writes_lose_nothing(graph: Graphonomous) -> None:
    """A server-style run: the timer consolidates while threads write and retrieve."""
    written: list[str] = []
    failures: list[BaseException] = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(worker: int) -> None:
        try:
            count = 0
            while not stop.is_set():
                text = f"worker {worker} fact {count} about machine {worker * 1000 + count}"
                node = graph.store_node(text, confidence=0.95)["node"]["id"]
                with lock:
                    written.append(node)
                count += 1
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    def reader() -> None:
        try:
            while not stop.is_set():
                graph.retrieve_context("machine fact", limit=5)
                graph.coverage_query("facts about machines")
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    threads.append(threading.Thread(target=reader))
    with ConsolidationTimer(graph.engine, interval_s=0.02, idle_s=0.0) as timer:
        for thread in threads:
            thread.start()
        time.sleep(2.0)
        stop.set()
        for thread in threads:
            thread.join(10)
    assert failures == []
    assert timer.errors == [] and timer.runs >= 1
    live = set(graph.store.node_ids())
    assert set(written) <= live  # no write lost (distinct, confident facts are kept)
    assert graph.store.integrity_check() == "ok"
