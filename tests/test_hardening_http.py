"""HTTP under load and abuse (issue #12, defect 5): backlog, head and read deadlines,
connection bounds (slow and idle connections make room, busy ones never), session bounds,
idle eviction, many concurrent clients without a connection error."""

from __future__ import annotations

import contextlib
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
from graphonomous.mcp import build_server
from graphonomous.mcp.http import McpHttpServer, make_http_server
from graphonomous.mcp.http_base import LISTEN_BACKLOG
from graphonomous.mcp.jsonrpc import Request


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


def settle(server: McpHttpServer, limit_s: float = 10.0) -> None:
    """Wait (at most `limit_s`) until the open-connection count holds still for 0.3 s."""
    deadline = time.monotonic() + limit_s
    last, steady_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        count = server.connection_count
        if count != last:
            last, steady_since = count, time.monotonic()
        elif time.monotonic() - steady_since >= 0.3:
            return
        time.sleep(0.05)


class Stalling:
    """A session whose ``stall`` requests wait for `release`: a busy connection on demand."""

    def __init__(self, inner: Any, entered: threading.Semaphore, release: threading.Event):
        self.inner, self.entered, self.release = inner, entered, release

    def handle(self, message: Any) -> Any:
        if isinstance(message, Request) and message.method == "stall":
            self.entered.release()
            self.release.wait(10)
        return self.inner.handle(message)


def test_a_client_at_its_bound_replaces_its_own_waiting_connection(graph: Graphonomous) -> None:
    server = running(graph, max_connections_per_client=2)
    try:
        held = [socket.create_connection(server.server_address[:2], timeout=5) for _ in range(2)]
        settle(server)
        client = Client(server)
        client.initialize()  # served: the oldest silent connection made room
        assert client.call("ping")["result"] == {}
        assert held[0].recv(1) == b"" and server.connection_count == 2
        for sock in held:
            sock.close()
    finally:
        stop(server)


def test_busy_connections_are_never_closed_for_a_newcomer(graph: Graphonomous) -> None:
    entered, release = threading.Semaphore(0), threading.Event()
    server = make_http_server(
        lambda: Stalling(build_server(graph), entered, release),
        "127.0.0.1",
        0,
        max_connections_per_client=2,
    )
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    answers: list[int] = []
    clients = [Client(server) for _ in range(2)]
    for client in clients:
        client.initialize()

    def stall(client: Client) -> None:
        answers.append(client.post({"jsonrpc": "2.0", "id": 7, "method": "stall"})[0])

    threads = [threading.Thread(target=stall, args=(c,)) for c in clients]
    try:
        for thread in threads:
            thread.start()
        assert entered.acquire(timeout=10) and entered.acquire(timeout=10)
        extra = socket.create_connection(server.server_address[:2], timeout=5)
        reply = extra.recv(4096)
        assert reply.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in reply
        extra.close()
    finally:
        release.set()
        for thread in threads:
            thread.join(10)
        stop(server)
    assert answers == [200, 200]


def test_a_silent_connection_is_closed_at_the_head_deadline(graph: Graphonomous) -> None:
    server = running(graph, head_deadline_s=0.5)
    try:
        client = Client(server)
        client.initialize()
        silent = socket.create_connection(server.server_address[:2], timeout=5)
        started = time.monotonic()
        assert silent.recv(1) == b"" and time.monotonic() - started < 3.0
        silent.close()
        time.sleep(0.3)  # the kept-alive connection idles past the head deadline: kept
        assert client.call("ping")["result"] == {}
    finally:
        stop(server)


# Slow connections of a flood: 64 from 127.0.0.1 (the per-address bound), 256 from other
# loopback addresses (the global bound).
FLOOD_SOURCES = {64: ("127.0.0.1",), 256: ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")}
DRIBBLE_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"


def dribble(socks: list[socket.socket], done: threading.Event) -> None:
    """One header byte per second to each socket; ends with the head or when `done` is set."""
    for i in range(len(DRIBBLE_HEAD)):
        for sock in socks:
            with contextlib.suppress(OSError):  # the server closed it
                sock.send(DRIBBLE_HEAD[i : i + 1])
        if done.wait(1.0):
            return


@pytest.mark.parametrize("count", sorted(FLOOD_SOURCES))
def test_slow_connections_do_not_deny_a_well_behaved_client(
    graph: Graphonomous, count: int
) -> None:
    server = running(graph)
    kept = Client(server)
    kept.initialize()
    sources = FLOOD_SOURCES[count]
    address = server.server_address[:2]
    flood = [
        socket.create_connection(address, timeout=5, source_address=(sources[i % len(sources)], 0))
        for i in range(count)
    ]
    done = threading.Event()
    dribbler = threading.Thread(target=dribble, args=(flood[::2], done), daemon=True)
    dribbler.start()
    try:
        settle(server)
        assert server.connection_count >= 64  # the flood holds its slots
        started = time.monotonic()
        assert kept.call("ping")["result"] == {}
        assert time.monotonic() - started < 1.0
        started = time.monotonic()
        newcomer = Client(server)
        newcomer.initialize()
        assert newcomer.call("ping")["result"] == {}
        assert time.monotonic() - started < 1.0
    finally:
        done.set()
        dribbler.join(5)
        for sock in flood:
            sock.close()
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
