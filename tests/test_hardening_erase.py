"""GDPR erase is complete and honest (issue #12, defects 1-2).

Complete: summaries built from erased episodes, goal nodes quoting the content,
ids merged away by consolidation and the consolidation log keep nothing of it.
Honest: with another connection holding a read transaction, the result never
says "scrubbed" while the marker's bytes are still in the ``.db`` / ``-wal`` /
``-shm`` files; ``--wait`` and ``--finish`` complete the scrub; a failure of the
file scrub after the commit is reported as such and a retry completes it.
"""

from __future__ import annotations

import io
import itertools
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.learning import tables

MARKER = "Zqx7Marker"
EPISODES = (
    f"Ticket from Alice {MARKER} about alarm E-47 on pump 1. Pressure dropped fast.",
    f"Alice {MARKER} reported alarm E-47 on pump 1 again, pressure low.",
    f"Alarm E-47 on pump 1 a third time for Alice {MARKER}; pressure sensor replaced.",
)


def file_bytes_hold(db: Path, marker: str = MARKER) -> list[str]:
    """Which of the database's files (.db, -wal, -shm) contain the marker's bytes."""
    found = []
    for suffix in ("", "-wal", "-shm"):
        path = Path(str(db) + suffix)
        if path.exists() and marker.encode() in path.read_bytes():
            found.append(path.name)
    return found


def rows_hold(graph: Graphonomous, marker: str = MARKER) -> list[str]:
    """table names with a row whose text holds the marker (the audit log included)."""
    hits = []
    names = graph.store.query("SELECT name FROM sqlite_master WHERE type='table'")
    for (table,) in names:
        for row in graph.store.query(f'SELECT * FROM "{table}"'):
            if any(isinstance(v, str) and marker in v for v in tuple(row)):
                hits.append(table)
                break
    return hits


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "g.db"


@pytest.fixture
def graph(db: Path) -> Iterator[Graphonomous]:
    with Graphonomous(db, embedder="hashing") as opened:
        yield opened


def chain(graph: Graphonomous, texts: tuple[str, ...]) -> list[str]:
    ids = [graph.store_node(t, "episodic", confidence=0.6)["node"]["id"] for t in texts]
    for a, b in itertools.pairwise(ids):
        graph.store_edge(a, b, "follows")
    return ids


def summarise(graph: Graphonomous) -> str:
    entry = graph.run_consolidation()
    stage = next(s for s in entry["stages"] if s["name"] == "abstract")
    assert stage["abstractions_created"] == 1
    summary_id: str = stage["summaries"][0]["node_id"]
    assert MARKER.lower() in graph.store.require_node(summary_id).content.lower()
    return summary_id


def test_erasing_every_episode_erases_their_summary(graph: Graphonomous, db: Path) -> None:
    ids = chain(graph, EPISODES)
    summary_id = summarise(graph)
    results = [graph.gdpr_erase(node_id) for node_id in ids]
    assert summary_id in {i for r in results for i in r["erased_ids"]}
    assert graph.store.get_node(summary_id) is None
    assert results[-1]["status"] == "scrubbed"
    assert rows_hold(graph) == []
    assert rows_hold(graph, MARKER.lower()) == []
    assert file_bytes_hold(db) == [] and file_bytes_hold(db, MARKER.lower()) == []


def test_erasing_one_episode_rewrites_the_summary_from_the_rest(graph: Graphonomous) -> None:
    texts = (
        f"Ticket from Bob {MARKER}: alarm E-47 on pump 1.",
        "Alarm E-47 on pump 1 came back after the restart.",
        "Alarm E-47 on pump 1 a third time; sensor replaced.",
    )
    ids = chain(graph, texts)
    entry = graph.run_consolidation()
    summary_id = next(s for s in entry["stages"] if s["name"] == "abstract")["summaries"][0][
        "node_id"
    ]
    result = graph.gdpr_erase(ids[0])
    assert result["rewritten_ids"] == [summary_id]
    summary = graph.store.require_node(summary_id)
    assert MARKER not in summary.content and "Bob" not in summary.content
    assert summary.metadata["abstraction_of"] == sorted(ids[1:])
    assert summary.content.startswith("Summary of 2 related episodes: ")


def test_goal_node_content_is_scrubbed_with_its_title(graph: Graphonomous, db: Path) -> None:
    secret = graph.store_node(f"Customer {MARKER} lives at 4 Elm Street")["node"]["id"]
    graph.manage_goal("create", title=f"Call back Customer {MARKER} lives at 4 Elm Street")
    result = graph.gdpr_erase(secret)
    assert result["status"] == "scrubbed"
    assert rows_hold(graph) == []
    assert file_bytes_hold(db) == []


def test_a_merged_away_id_resolves_to_its_survivor(graph: Graphonomous, db: Path) -> None:
    first = graph.store_node(f"Error E-47 means Carol {MARKER} lost pressure", confidence=0.9)
    second = graph.store_node(f"Error E-47 means Carol {MARKER} lost pressure.", confidence=0.6)
    entry = graph.run_consolidation()
    assert entry["totals"]["nodes_merged"] == 1
    ids = {first["node"]["id"], second["node"]["id"]}
    (gone,) = [i for i in ids if graph.store.get_node(i) is None]
    (kept,) = ids - {gone}
    result = graph.gdpr_erase(gone)
    assert result["resolved_to"] == kept and kept in result["erased_ids"]
    assert graph.store.get_node(kept) is None
    assert result["status"] == "scrubbed"
    log = json.dumps(graph.consolidation_log()["runs"])
    assert gone not in log and kept not in log
    assert rows_hold(graph) == [] and file_bytes_hold(db) == []


def test_partial_quotes_are_reported(graph: Graphonomous) -> None:
    source = graph.store_node(
        f"Dana {MARKER} paid invoice 4471 late. She asked for a refund of the fee."
    )["node"]["id"]
    sentence = graph.store_node("Note: She asked for a refund of the fee. Nothing else.")
    keywords = graph.store_node(f"keywords: invoice, refund, {MARKER.lower()}, dana, late")
    unrelated = graph.store_node("The plant runs three shifts a day")
    result = graph.gdpr_erase(source)
    quoting = result["nodes_quoting_content"]
    assert sentence["node"]["id"] in quoting and keywords["node"]["id"] in quoting
    assert unrelated["node"]["id"] not in quoting


# -- honesty: a reader held open on purpose --------------------------------------------


def hold_reader(db: Path) -> sqlite3.Connection:
    """A second connection inside a read transaction (as a second MCP server would be)."""
    reader = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM nodes").fetchone()
    return reader


def test_held_reader_is_reported_and_finish_completes(graph: Graphonomous, db: Path) -> None:
    node_id = graph.store_node(f"Private note of Erin {MARKER} with her phone number")["node"]["id"]
    reader = hold_reader(db)
    try:
        result = graph.gdpr_erase(node_id)
        leftovers = file_bytes_hold(db)
        assert result["status"] == "pending"
        assert result["file"]["blocked_by_reader"] is True
        assert "erase --finish" in result["file"]["advice"]
        if leftovers:  # the acceptance rule: never "scrubbed" while bytes remain
            assert result["status"] != "scrubbed"
        assert graph.store.get_node(node_id) is None  # the rows are gone already
        assert graph.gdpr_finish()["status"] == "pending"  # still held
    finally:
        reader.close()
    finished = graph.gdpr_finish()
    assert finished["status"] == "scrubbed" and finished["pending_before"] is True
    assert file_bytes_hold(db) == []
    assert graph.gdpr_finish()["pending_before"] is False


def test_wait_outlasts_a_reader(graph: Graphonomous, db: Path) -> None:
    node_id = graph.store_node(f"Private note of Finn {MARKER} with his address")["node"]["id"]
    reader = hold_reader(db)
    release = threading.Timer(0.5, reader.close)
    release.start()
    try:
        result = graph.gdpr_erase(node_id, wait_s=20.0)
    finally:
        release.join()
    assert result["status"] == "scrubbed", result["file"]
    assert file_bytes_hold(db) == []


def test_cli_says_pending_in_text_and_json(db: Path) -> None:
    with Graphonomous(db, embedder="hashing") as graph:
        first = graph.store_node(f"Private note of Gil {MARKER} number one")["node"]["id"]
        second = graph.store_node(f"Private note of Gil {MARKER} number two")["node"]["id"]
    reader = hold_reader(db)
    try:
        out = io.StringIO()
        assert main(["--db", str(db), "erase", first], out) == 1
        text = out.getvalue()
        assert "PENDING" in text and "erase --finish" in text
        out = io.StringIO()
        assert main(["--db", str(db), "erase", second, "--json"], out) == 1
        report = json.loads(out.getvalue())
        assert report["status"] == "pending" and report["file"]["blocked_by_reader"] is True
    finally:
        reader.close()
    out = io.StringIO()
    assert main(["--db", str(db), "erase", "--finish"], out) == 0
    assert "scrubbed" in out.getvalue()
    assert file_bytes_hold(db) == []


def test_a_failed_file_scrub_reports_the_committed_erase(
    graph: Graphonomous, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node_id = graph.store_node(f"Private note of Hana {MARKER} with her passport")["node"]["id"]
    real = tables.execute

    def full_disk(store: Any, sql: str, params: Any = ()) -> int:
        if sql == "VACUUM":
            raise sqlite3.OperationalError("database or disk is full")
        return real(store, sql, params)

    monkeypatch.setattr(tables, "execute", full_disk)
    result = graph.gdpr_erase(node_id)
    assert result["erased"] is True and result["status"] == "pending"
    assert "disk is full" in result["file"]["error"]
    assert "committed" in result["file"]["advice"]
    assert graph.store.get_node(node_id) is None
    monkeypatch.setattr(tables, "execute", real)
    retry = graph.gdpr_erase(node_id)  # was "node not found"
    assert retry["already_erased"] is True and retry["status"] == "scrubbed"
    assert file_bytes_hold(db) == []
