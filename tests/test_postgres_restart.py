"""A running HTTP server on PostgreSQL through an outage: the cluster stopped and started
again, and the server's sessions killed (pg_terminate_backend).

While the database is down every call gets a JSON-RPC answer naming the problem (no dead
server, no traceback); afterwards the same session works again without a restart of the
server (automatic reconnect), and every acknowledged write is present.  Skips without the
PostgreSQL test packages; fails instead when GRAPHONOMOUS_REQUIRE_POSTGRES=1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pg_support
from pg_support import Cluster

from graphonomous import Graphonomous

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from mcp_http_client import McpClient, start_server

globals().update(pg_cluster=pg_support.pg_cluster, pg_url=pg_support.pg_url)


def _failure_text(status: int, body: Any) -> str:
    """The message of a failed call: a JSON-RPC error, or a tool result flagged isError."""
    assert status == 200 and isinstance(body, dict), (status, body)
    if "error" in body:
        assert isinstance(body["error"].get("code"), int), body
        return str(body["error"].get("message", "")) + str(body["error"].get("data", ""))
    result = body["result"]
    assert result.get("isError") is True, body
    return " ".join(str(part.get("text", "")) for part in result.get("content", []))


def _store(client: McpClient, content: str, acknowledged: dict[str, str]) -> None:
    """Store one note; once the server acknowledged it, it must survive."""
    acknowledged[client.tool("store_node", {"content": content})["node"]["id"]] = content


def _present(url: str, acknowledged: dict[str, str]) -> None:
    with Graphonomous(url) as graph:
        found = graph.store.get_nodes(list(acknowledged))
    assert {node_id: found[node_id].content for node_id in found} == acknowledged


def test_server_reports_the_outage_and_reconnects_after_a_restart(pg_cluster: Cluster) -> None:
    url = pg_cluster.new_database()
    process, port = start_server(url)
    try:
        client = McpClient(port)
        acknowledged: dict[str, str] = {}
        for index in range(5):
            _store(client, f"before the restart {index}", acknowledged)
        client.tool("retrieve_context", {"query": "before the restart"})
        pg_cluster.stop()
        try:
            for name, arguments in (
                ("store_node", {"content": "written while the database is down"}),
                ("retrieve_context", {"query": "restart"}),
                ("graph_stats", {}),
            ):
                message = _failure_text(*client.call(name, arguments))
                assert "connect" in message.lower(), message
                assert "Traceback" not in message
            assert process.poll() is None, "the server died with its database"
        finally:
            pg_cluster.start()
        # The same session, the same server: it reconnects on the next call.
        for index in range(5):
            _store(client, f"after the restart {index}", acknowledged)
        found = client.tool("retrieve_context", {"query": "after the restart"})["results"]
        assert any(r["content"].startswith("after the restart") for r in found)
        assert client.tool("graph_stats", {})["node_count"] >= len(acknowledged)
    finally:
        process.terminate()
        process.wait(30)
    _present(url, acknowledged)


def test_server_reconnects_after_its_sessions_are_killed(pg_cluster: Cluster) -> None:
    url = pg_cluster.new_database()
    database = urlsplit(url).path.lstrip("/")
    process, port = start_server(url)
    try:
        client = McpClient(port)
        acknowledged: dict[str, str] = {}
        for round_ in range(3):
            _store(client, f"round {round_} before the kill", acknowledged)
            killed = pg_cluster.sql(
                pg_cluster.base_url,
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                f"WHERE datname = '{database}' AND pid <> pg_backend_pid()",
            )
            assert killed[0][0] >= 1  # the server's session(s) really went
            # A statement outside a transaction is retried on a fresh connection: the
            # next call simply works (a write, then a read that uses the search).
            _store(client, f"round {round_} after the kill", acknowledged)
            found = client.tool("retrieve_context", {"query": f"round {round_}"})["results"]
            assert found
        assert process.poll() is None
    finally:
        process.terminate()
        process.wait(30)
    _present(url, acknowledged)
