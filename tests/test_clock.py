"""One clock: every timestamp the package writes comes from the graph's clock.

Pins: no module reads the wall clock for a date except `clock.SystemClock`
(AST scan); a `ManualClock` dates nodes, edges, outcomes, goals, the audit
log and consolidation runs; the process switch `GRAPHONOMOUS_CLOCK` is refused
unless `GRAPHONOMOUS_TEST_CLOCK=1`, and its errors name the variable; the idle
timer runs on the clock (a manual clock and `tick()`, no thread).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphonomous import Graphonomous, ValidationError
from graphonomous.clock import ManualClock, ScaledClock, SystemClock, clock_from_env
from graphonomous.learning.timer import ConsolidationTimer

PACKAGE = Path(__file__).resolve().parent.parent / "graphonomous"
# Reads of the wall clock as a date.  time.monotonic / perf_counter measure durations
# and I/O deadlines (real time by nature) and are not listed.
WALL_CLOCK_CALLS = {
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("date", "today"),
    ("time", "time"),
    ("datetime", "today"),
}


def _wall_clock_reads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            if (name, node.func.attr) in WALL_CLOCK_CALLS:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_no_module_but_the_clock_reads_the_wall_clock() -> None:
    reads = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "clock.py"
        for hit in _wall_clock_reads(path)
    ]
    assert reads == []


def test_the_timer_and_the_consolidator_never_read_real_time() -> None:
    for name in ("timer.py", "consolidator.py", "forgetting.py", "retention.py"):
        text = (PACKAGE / "learning" / name).read_text(encoding="utf-8")
        assert "time.monotonic" not in text, name


def test_a_manual_clock_dates_every_record() -> None:
    clock = ManualClock("2026-02-01T08:00:00Z")
    with Graphonomous(":memory:", clock=clock) as g:
        a = g.store_node("The pump P-3 runs at 40 bar")["node"]
        assert a["created_at"] == "2026-02-01T08:00:00.000Z"
        clock.advance(days=2)
        b = g.store_node("Valve V-1 feeds pump P-3")["node"]
        assert b["created_at"] == "2026-02-03T08:00:00.000Z"
        edge = g.store_edge(b["id"], a["id"], "causal")["edge"]
        assert edge["created_at"] == "2026-02-03T08:00:00.000Z"
        clock.advance(hours=1)
        entry = g.run_consolidation()
        assert entry["started_at"] == "2026-02-03T09:00:00.000Z"
        g.forget_node(a["id"])
        forgotten = g.get_node(a["id"], include_forgotten=True)["node"]
        assert forgotten["forgotten_at"] == "2026-02-03T09:00:00.000Z"
        assert g.now() == "2026-02-03T09:00:00.000Z"


def test_a_manual_clock_only_moves_forward() -> None:
    clock = ManualClock("2026-01-01T00:00:00Z")
    with pytest.raises(ValidationError):
        clock.advance(-1.0)
    with pytest.raises(ValidationError):
        clock.set("2025-12-31T00:00:00Z")
    assert clock.set("2026-01-08T00:00:00Z").monotonic() == 7 * 86400.0


def test_the_process_clock_needs_the_test_switch() -> None:
    assert isinstance(clock_from_env({}), SystemClock)
    with pytest.raises(ValidationError) as refused:
        clock_from_env({"GRAPHONOMOUS_CLOCK": "2026-01-01T00:00:00Z+600x"})
    assert refused.value.field == "GRAPHONOMOUS_CLOCK"
    assert "GRAPHONOMOUS_TEST_CLOCK=1" in str(refused.value)
    allowed = {"GRAPHONOMOUS_TEST_CLOCK": "1"}
    scaled = clock_from_env({**allowed, "GRAPHONOMOUS_CLOCK": "2026-01-01T00:00:00Z+600x"})
    assert isinstance(scaled, ScaledClock) and scaled.rate == 600.0
    assert scaled.now().isoformat().startswith("2026-01-01T00:0")
    for bad in ("yesterday", "2026-01-01+fastx", "2026-01-01T00:00:00Z+0x", "2026-01-01+1e9x"):
        with pytest.raises(ValidationError) as error:
            clock_from_env({**allowed, "GRAPHONOMOUS_CLOCK": bad})
        assert error.value.field == "GRAPHONOMOUS_CLOCK"


def _cli(db: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphonomous", "--db", str(db), "--json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_refuses_a_stray_clock_with_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    env = {**os.environ, "GRAPHONOMOUS_CLOCK": "2026-01-01T00:00:00Z+600x"}
    env.pop("GRAPHONOMOUS_TEST_CLOCK", None)
    done = _cli(db, env, "remember", "x")
    assert done.returncode == 2, done.stderr
    assert "GRAPHONOMOUS_CLOCK" in done.stderr and "Traceback" not in done.stderr
    env["GRAPHONOMOUS_TEST_CLOCK"] = "1"
    env["GRAPHONOMOUS_CLOCK"] = "2030-05-05T00:00:00Z"
    done = _cli(db, env, "remember", "a fact from the future")
    assert done.returncode == 0, done.stderr
    shown = _cli(db, env, "node", "show", json.loads(done.stdout)["node_id"])
    assert json.loads(shown.stdout)["node"]["created_at"].startswith("2030-05-05T00:00:0")


def test_the_idle_timer_runs_on_the_graph_clock() -> None:
    clock = ManualClock("2026-01-01T00:00:00Z")
    with Graphonomous(":memory:", clock=clock) as g:
        g.store_node("a fact about boilers")
        g.touch()
        timer = ConsolidationTimer(g.engine, interval_s=300, idle_s=30)
        assert timer.tick() is False  # not due yet
        clock.advance(299)
        assert timer.tick() is False
        clock.advance(1)
        assert timer.tick() is True and timer.runs == 1
        clock.advance(300)
        g.touch()  # activity: not idle
        assert timer.tick() is False
        clock.advance(30)
        assert timer.tick() is True and timer.runs == 2
        runs = g.consolidation_log(5)["runs"]
        assert [r["trigger"] for r in runs] == ["idle", "idle"]
        assert runs[0]["started_at"] == "2026-01-01T00:10:30.000Z"
