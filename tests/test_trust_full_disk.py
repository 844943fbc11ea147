"""A full disk is named as such: the write rolled back, the file sound, what to do.

SQLite says "database or disk is full" (SQLITE_FULL) both for a full disk and for a
file at its `max_page_count`; the tests use the page limit, which fills the file
exactly as a full disk does, on any machine.  Before, the CLI told the user to run
`doctor` (as for a damaged file) and the MCP server answered "Database error … see the
server log" with a traceback in it.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response, encode
from graphonomous.store.damage import FULL_PREFIX, full_on_open_message, is_full

LONG = "long text about pumps and valves " * 200


def _fill(graph: Graphonomous) -> None:
    """No page left: the file's free pages given back first (a migration that rebuilt a
    table leaves some), then the file capped at its size."""
    graph.store.query("VACUUM")
    pages = graph.store.query("PRAGMA page_count")[0][0]
    graph.store.query(f"PRAGMA max_page_count={pages}")


def test_an_mcp_write_on_a_full_file_says_so_and_writes_nothing(tmp_path: Path) -> None:
    with Graphonomous(tmp_path / "g.db") as graph:
        graph.store_node("The pump trips when the valve sticks.")
        _fill(graph)
        before = graph.graph_stats()["node_count"]
        server = build_server(graph, "v1")
        params = {"name": "store_node", "arguments": {"content": LONG}}
        (response,) = [
            m for m in server.handle(Request(1, "tools/call", params)) if isinstance(m, Response)
        ]
        result = json.loads(encode(response))["result"]
        assert result["isError"] is True
        assert result["content"][0]["text"].startswith(FULL_PREFIX)
        assert graph.graph_stats()["node_count"] == before


def test_the_cli_names_a_full_disk_not_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(*_args: Any, **_kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    db = str(tmp_path / "g.db")
    assert main(["--db", db, "init"], io.StringIO()) == 0
    monkeypatch.setattr(Graphonomous, "store_node", full)
    assert main(["--db", db, "node", "add", "hello"], io.StringIO()) == 1
    err = capsys.readouterr().err
    assert FULL_PREFIX in err and "doctor" not in err and "rolled back" in err


def test_is_full_reads_sqlite_s_code_and_words() -> None:
    assert is_full(sqlite3.OperationalError("database or disk is full"))
    assert not is_full(sqlite3.OperationalError("database is locked"))
    assert not is_full(OSError("disk is full"))


def test_a_read_on_a_full_file_is_served_not_cannot_rollback(tmp_path: Path) -> None:
    # The first retrieval writes its index cache; on a full file SQLite rolls that
    # transaction back itself, and the store's own ROLLBACK used to fail with "cannot
    # rollback - no transaction is active", hiding the full disk and failing the read.
    db = tmp_path / "g.db"
    with Graphonomous(db) as graph:
        for i in range(30):
            graph.store_node(f"pump {i} trips when the valve sticks " * 20)
    with Graphonomous(db) as graph:
        _fill(graph)
        results = graph.retrieve_context("pump valve")["results"]
        assert results and "pump" in results[0]["content"]
        with pytest.raises(sqlite3.OperationalError, match="full"):
            graph.store_node(LONG)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 600 KiB tmpfs (root with mount rights only) holding one database, then filled."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr!r}")
    try:
        db = mount / "g.db"
        with Graphonomous(db) as graph:
            graph.store_node("The pump trips when the valve sticks.")
        (mount / "g.db-shm").unlink(missing_ok=True)
        with (mount / "filler").open("wb", buffering=0) as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 4096)
        yield db
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True, check=False)


def test_opening_on_a_full_disk_says_full_not_not_a_database(
    full_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # SQLite cannot create the -shm file (SQLITE_IOERR_SHMSIZE, "disk I/O error"): that
    # was reported as "not a SQLite database", by `serve` and every command.
    for command in (["serve"], ["stats"]):
        assert main(["--db", str(full_disk), *command], io.StringIO()) == 1
        err = capsys.readouterr().err
        assert FULL_PREFIX in err and "-shm" in err, err
        assert "not a SQLite database" not in err and "doctor" not in err


def test_the_open_message_starts_with_the_full_prefix() -> None:
    assert full_on_open_message("g.db").startswith(f"{FULL_PREFIX}: g.db ")
