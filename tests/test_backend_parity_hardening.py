"""Hostile cases that must answer the same on both backends (SQLite and PostgreSQL).

* NUL (U+0000) in text: SQLite would store it, PostgreSQL refuses it (text and jsonb).
  Both refuse it before the write, naming the field: the API raises ValidationError,
  the CLI exits 2, an MCP tool answers isError; nothing is written.
* An erase beside a reader that holds a snapshot: answered promptly with status
  ``pending`` and the cause ``reader`` (PostgreSQL's VACUUM FULL waits for the
  reader's lock; it once waited out the 30 s lock timeout and advised "free disk space").

PostgreSQL legs skip without the test packages, and fail when
GRAPHONOMOUS_REQUIRE_POSTGRES=1 (tests/pg_support.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Iterator
from typing import Any

import pg_support
import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response, encode
from graphonomous.model import ValidationError

# The session cluster and per-backend database fixtures of tests/pg_support.py.
globals().update(pg_cluster=pg_support.pg_cluster, backend_db=pg_support.backend_db)

# An erase beside a reader must answer within this (the old PostgreSQL path took 30-60 s).
PROMPT_S = 10.0


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(args, out)
    return code, out.getvalue(), err.getvalue()


def _tool(graph: Graphonomous, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    server = build_server(graph, "v1")
    params = {"name": name, "arguments": arguments}
    (response,) = [
        m for m in server.handle(Request(1, "tools/call", params)) if isinstance(m, Response)
    ]
    result: dict[str, Any] = json.loads(encode(response))["result"]
    return result


def test_nul_in_text_is_refused_naming_the_field(backend_db: str) -> None:
    with Graphonomous(backend_db) as graph:
        with pytest.raises(ValidationError, match=r"^content: contains a NUL"):
            graph.store_node("a\x00b")
        with pytest.raises(ValidationError, match=r"^metadata\.tags\[1\]: contains a NUL"):
            graph.store_node("clean text", metadata={"tags": ["ok", "bad\x00"]})
        kept = graph.store_node("a clean note")["node"]["id"]
        with pytest.raises(ValidationError, match=r"^content: contains a NUL"):
            graph.store.update_node(kept, content="now \x00 dirty")
        result = _tool(graph, "store_node", {"content": "mcp \x00 text"})
        assert result["isError"] is True
        assert "content" in result["content"][0]["text"]
        assert "NUL" in result["content"][0]["text"]
        with pytest.raises(ValidationError, match=r"^description: contains a NUL"):
            graph.manage_goal("create", title="a goal", description="bad \x00")
        with pytest.raises(ValidationError, match=r"^action_id: contains a NUL"):
            graph.learn_from_outcome(
                action_id="act\x00", status="success", confidence=0.5, causal_node_ids=[kept]
            )
        assert graph.graph_stats()["node_count"] == 1
        assert graph.store.get_node(kept).content == "a clean note"
    code, _, err = _cli(["--db", backend_db, "remember", "cli \x00 text"])
    assert code == 2 and "content" in err and "NUL" in err, err
    assert "Traceback" not in err and "internal error" not in err


@pytest.fixture
def pg_reader(pg_cluster: pg_support.Cluster) -> Iterator[tuple[str, Any]]:
    """A PostgreSQL database and a second connection holding a read transaction on it."""
    import psycopg

    url = pg_cluster.new_database()
    with Graphonomous(url) as graph:
        graph.store_node("a note the reader reads")
    reader = psycopg.connect(url)
    reader.execute("SELECT count(*) FROM nodes").fetchall()  # the transaction stays open
    try:
        yield url, reader
    finally:
        reader.rollback()
        reader.close()


def test_a_postgres_erase_beside_a_reader_is_promptly_pending_naming_it(
    pg_reader: tuple[str, Any],
) -> None:
    url, _reader = pg_reader
    with Graphonomous(url) as graph:
        victim = graph.store_node("Zyxomarker-7731 lives at 9 Quillon Street")["node"]["id"]
        started = time.monotonic()
        report = graph.gdpr_erase(victim)
        elapsed = time.monotonic() - started
    assert report["erased"] is True
    assert report["status"] == "pending", report
    assert elapsed < PROMPT_S, elapsed
    causes = [cause["cause"] for cause in report["causes"]]
    assert causes[0] == "reader", report["causes"]
    assert "error" not in causes
    assert "free disk space" not in json.dumps(report)
    assert report["file"]["blocked_by_reader"] is True
