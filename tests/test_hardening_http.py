"""HTTP under load and abuse (issue #12, defect 5): backlog, read deadline, connection and
session bounds, idle eviction, many concurrent clients without a connection error."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_mcp_http import INIT, Client, start

from graphonomous import Graphonomous
from graphonomous.mcp.http import LISTEN_BACKLOG, McpHttpServer


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Graphonomous]:
    with Graphonomous(tmp_path / "g.db") as opened:
        yield opened


def running(graph: Graphonomous, **options: Any) -> McpHttpServer:
    return start(graph, **options)


def stop(server: McpHttpServer) -> None:
    server.shutdown()
    server.server_close()


def test_backlog_is_at_least_128(graph: Graphonomous) -> None:
    server = running(graph)
    try:
        assert LISTEN_BACKLOG >= 128 and server.request_queue_size >= 128
        # A burst of simultaneous connects while the accept loop is busy: none is reset.
        sockets = [
            socket.create_connection(server.server_address[:2], timeout=10) for _ in range(100)
        ]
        for sock in sockets:
            sock.close()
    finally:
        stop(server)


def test_slow_sender_is_cut_off_at_the_deadline(graph: Graphonomous) -> None:
    server = running(graph, read_deadline_s=1.0)
    try:
        sock = socket.create_connection(server.server_address[:2], timeout=15)
        request = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n"
        started = time.monotonic()
        closed = False
        for byte in request + b"{" * 100:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            sock.settimeout(0.2)
            try:
                if sock.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                pass
            except OSError:
                closed = True
                break
            if time.monotonic() - started > 15:
                break
        assert closed, "a byte-by-byte sender kept its connection past the deadline"
        sock.close()
    finally:
        stop(server)


def test_connections_per_client_are_bounded(graph: Graphonomous) -> None:
    server = running(graph, max_connections_per_client=2)
    try:
        held = [socket.create_connection(server.server_address[:2], timeout=10) for _ in range(2)]
        time.sleep(0.3)  # both admitted and being served (waiting for a request)
        extra = socket.create_connection(server.server_address[:2], timeout=10)
        reply = extra.recv(4096)
        assert reply.startswith(b"HTTP/1.1 503") and b"Retry-After" in reply
        for sock in (*held, extra):
            sock.close()
    finally:
        stop(server)


def test_an_initialize_flood_does_not_evict_active_sessions(graph: Graphonomous) -> None:
    server = running(graph, max_sessions_per_client=3)
    try:
        victim = Client(server)
        victim.initialize()
        statuses = []
        for _ in range(10):
            flood = Client(server)
            status, _, _ = flood.post(INIT)
            statuses.append(status)
        assert statuses[:2] == [200, 200] and set(statuses[2:]) == {503}
        assert victim.call("ping")["result"] == {}
    finally:
        stop(server)


def test_idle_sessions_are_evicted_by_time(graph: Graphonomous) -> None:
    server = running(graph, session_idle_s=0.3)
    try:
        client = Client(server)
        client.initialize()
        assert client.call("ping")["result"] == {}
        time.sleep(0.5)
        status, _, body = client.post({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert status == 404 and body["error"]["code"] == -32001
        assert server.session_count == 0
    finally:
        stop(server)


def test_fifty_concurrent_clients_see_no_connection_error(graph: Graphonomous) -> None:
    server = running(graph)
    errors: list[str] = []
    port = server.server_address[1]

    def worker() -> None:
        try:
            client = Client(server)
            client.initialize()
            for _ in range(10):
                assert client.call("ping")["result"] == {}
            client.conn.close()
        except (OSError, http.client.HTTPException, AssertionError, json.JSONDecodeError) as exc:
            errors.append(repr(exc))

    try:
        threads = [threading.Thread(target=worker) for _ in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert errors == []
        assert port
    finally:
        stop(server)
