"""The next consolidation finishes a pending erase scrub (issue #12 b).

An erase while another connection holds a reader returns status ``pending``;
a consolidation cycle (explicit or idle) run after the reader is released
completes the physical scrub and says so in its result, its log entry, the
CLI text and the idle timer's log line.  While the reader is still held the
cycle says the scrub stays pending and never claims it done.
"""

from __future__ import annotations

import io
import logging
import sqlite3
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.learning.timer import ConsolidationTimer

MARKER = "Qv9ScrubMarker"


def hold_reader(db: Path) -> sqlite3.Connection:
    """A second connection inside a read transaction (a second server on the file)."""
    reader = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM nodes").fetchone()
    return reader


def marker_in_files(db: Path) -> list[str]:
    found = []
    for suffix in ("", "-wal", "-shm"):
        path = Path(str(db) + suffix)
        if path.exists() and MARKER.encode() in path.read_bytes():
            found.append(path.name)
    return found


def pending_erase(graph: Graphonomous, db: Path) -> sqlite3.Connection:
    """Erase a node with a reader held; returns the still-open reader."""
    node_id = graph.store_node(f"Private note of Ines {MARKER} and her address")["node"]["id"]
    graph.store_node("An unrelated note about pumps and valves")
    reader = hold_reader(db)
    assert graph.gdpr_erase(node_id)["status"] == "pending"
    return reader


def test_explicit_consolidation_finishes_the_scrub(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    with Graphonomous(db, embedder="hashing") as graph:
        reader = pending_erase(graph, db)
        try:
            held = graph.run_consolidation()["totals"]["file_scrub"]
            assert held["attempted"] is True and held["status"] == "pending"
            assert held["blocked_by_reader"] is True and "erase --finish" in held["advice"]
        finally:
            reader.close()
        done = graph.run_consolidation()
        assert done["totals"]["file_scrub"]["status"] == "scrubbed"
        assert marker_in_files(db) == []
        logged = graph.consolidation_log(1)["runs"][0]
        assert logged["id"] == done["id"]
        assert logged["totals"]["file_scrub"]["status"] == "scrubbed"
        assert graph.run_consolidation()["totals"]["file_scrub"] is None  # nothing owed


def test_dry_run_attempts_nothing_and_says_pending(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    with Graphonomous(db, embedder="hashing") as graph:
        pending_erase(graph, db).close()
        dry = graph.run_consolidation(dry_run=True)["totals"]["file_scrub"]
        assert dry == {"status": "pending", "attempted": False, "advice": dry["advice"]}
        assert graph.gdpr_finish()["pending_before"] is True


def test_cli_consolidate_says_the_scrub_completed(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    with Graphonomous(db, embedder="hashing") as graph:
        pending_erase(graph, db).close()
    out = io.StringIO()
    assert main(["--db", str(db), "consolidate"], out) == 0
    assert "pending erase scrub completed: file scrubbed" in out.getvalue()
    assert marker_in_files(db) == []


def test_idle_consolidation_logs_the_completed_scrub(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "g.db"
    with Graphonomous(db, embedder="hashing") as graph:
        reader = pending_erase(graph, db)
        timer = ConsolidationTimer(graph.engine, interval_s=0.0, idle_s=0.0)
        with caplog.at_level(logging.WARNING, logger="graphonomous.consolidation"):
            try:
                timer._cycle()
            finally:
                reader.close()
            assert "erase scrub still pending" in caplog.text
            timer._cycle()
        assert timer.errors == []
        assert timer.last_result is not None
        assert timer.last_result["trigger"] == "idle"
        assert timer.last_result["totals"]["file_scrub"]["status"] == "scrubbed"
        assert "completed the pending erase scrub" in caplog.text
        assert marker_in_files(db) == []
