"""The Streamable HTTP transport end to end on 127.0.0.1 (ephemeral port)."""

from __future__ import annotations

import http.client
import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.mcp import build_server
from graphonomous.mcp.http import (
    SESSION_HEADER,
    VERSION_HEADER,
    McpHttpServer,
    host_name,
    is_loopback,
    make_http_server,
)
from graphonomous.mcp.jsonrpc import INVALID_REQUEST, PARSE_ERROR

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Graphonomous]:
    with Graphonomous(tmp_path / "g.db") as opened:
        yield opened


def start(graph: Graphonomous, **options: Any) -> McpHttpServer:
    started = time.monotonic()
    server = make_http_server(
        lambda: build_server(graph, check_output=True, started_at=started),
        "127.0.0.1",
        0,
        **options,
    )
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@pytest.fixture
def server(graph: Graphonomous) -> Iterator[McpHttpServer]:
    running = start(graph)
    yield running
    running.shutdown()
    running.server_close()


class Client:
    """One keep-alive HTTP connection speaking MCP."""

    def __init__(self, server: McpHttpServer) -> None:
        self.port = server.server_address[1]
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.session: str | None = None
        self.next_id = 1

    def send(
        self, method: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        all_headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session is not None:
            all_headers[SESSION_HEADER] = self.session
        all_headers.update(headers or {})
        self.conn.request(method, "/mcp", body=body, headers=all_headers)
        response = self.conn.getresponse()
        data = response.read()
        if response.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        return response.status, dict(response.getheaders()), data

    def post(
        self, obj: Any, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], Any]:
        status, response_headers, data = self.send("POST", json.dumps(obj).encode(), headers)
        if data:
            assert response_headers["Content-Type"] == "application/json"
        return status, response_headers, json.loads(data) if data else None

    def initialize(self) -> dict[str, Any]:
        status, headers, body = self.post(INIT)
        assert status == 200
        self.session = headers[SESSION_HEADER]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202
        result: dict[str, Any] = body["result"]
        return result

    def call(self, method: str, params: Any = None) -> Any:
        msg_id = self.next_id
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        status, _, body = self.post(message)
        assert status == 200 and body["id"] == msg_id
        return body


def test_session_flow(server: McpHttpServer) -> None:
    client = Client(server)
    init = client.initialize()
    assert init["protocolVersion"] == "2025-11-25" and "tools" in init["capabilities"]
    assert client.session and server.session_count == 1
    assert client.call("ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    tools = client.call("tools/list")["result"]["tools"]
    assert "act" in [t["name"] for t in tools]  # the default surface: v2 machines
    stored = client.call(
        "tools/call", {"name": "act", "arguments": {"action": "store_node", "content": "é"}}
    )
    assert stored["result"]["structuredContent"]["node"]["content"] == "é"
    assert client.call("nope")["error"]["code"] == -32601
    health = client.call("resources/read", {"uri": "graphonomous://runtime/health"})
    assert json.loads(health["result"]["contents"][0]["text"])["counts"]["node_count"] == 1
    # Protocol version header: supported is fine, unknown is 400.
    ok = client.post(
        {"jsonrpc": "2.0", "id": 50, "method": "ping"}, {"MCP-Protocol-Version": "2025-11-25"}
    )
    assert ok[0] == 200
    bad = client.post(
        {"jsonrpc": "2.0", "id": 51, "method": "ping"}, {"MCP-Protocol-Version": "1999-01-01"}
    )
    assert bad[0] == 400 and bad[2]["id"] == 51
    # A client response or notification is accepted without a body.
    assert client.post({"jsonrpc": "2.0", "id": 9, "result": {}})[0:3:2] == (202, None)
    # Ending the session.
    assert client.send("DELETE")[0] == 200
    assert server.session_count == 0
    gone = client.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert gone[0] == 404 and gone[2]["id"] == 3
    assert client.send("DELETE")[0] == 404


def test_session_header_is_required(server: McpHttpServer) -> None:
    client = Client(server)
    status, _, body = client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert status == 400 and body["error"]["code"] == INVALID_REQUEST and body["id"] == 1
    client.session = "not-a-session"
    assert client.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})[0] == 404
    client.session = None
    assert client.send("DELETE")[0] == 400


def test_bad_bodies(server: McpHttpServer) -> None:
    client = Client(server)
    client.initialize()
    status, _, data = client.send("POST", b"{not json")
    assert status == 400 and json.loads(data)["error"]["code"] == PARSE_ERROR
    status, _, data = client.send("POST", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    assert status == 400 and json.loads(data)["error"]["code"] == INVALID_REQUEST
    server.max_body_bytes = 1000
    status, _, _ = client.send("POST", json.dumps({"pad": "x" * 2000}).encode())
    assert status == 413
    assert client.call("ping")["result"] == {}  # the connection recovers


def test_other_methods_and_paths(server: McpHttpServer) -> None:
    client = Client(server)
    status, headers, _ = client.send("GET")
    assert status == 405 and headers["Allow"] == "POST, DELETE"
    client.conn.request("POST", "/other", body=b"{}", headers={"Content-Length": "2"})
    assert client.conn.getresponse().status == 404


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [
        ("Origin", "http://evil.example", 403),
        ("Origin", "https://attacker.com:4100", 403),
        ("Origin", "null", 403),
        ("Origin", "http://localhost:5173", 200),
        ("Origin", "http://127.0.0.1", 200),
        ("Origin", "http://[::1]:8080", 200),
        ("Host", "evil.example", 403),
        ("Host", "evil.example:4100", 403),
        ("Host", "localhost:4100", 200),
    ],
)
def test_origin_and_host_validation(
    server: McpHttpServer, header: str, value: str, status: int
) -> None:
    got, _, _ = Client(server).post(INIT, {header: value})
    assert got == status


def test_bearer_token(graph: Graphonomous) -> None:
    server = start(graph, token="s3cret")
    try:
        client = Client(server)
        status, headers, _ = client.post(INIT)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
        assert client.post(INIT, {"Authorization": "Bearer wrong"})[0] == 401
        assert client.post(INIT, {"Authorization": "Bearer s3cret"})[0] == 200
    finally:
        server.shutdown()
        server.server_close()


def test_non_loopback_needs_a_token(graph: Graphonomous, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHONOMOUS_HTTP_TOKEN", raising=False)
    with pytest.raises(ValueError, match="GRAPHONOMOUS_HTTP_TOKEN"):
        make_http_server(lambda: build_server(graph), "0.0.0.0", 0)
    monkeypatch.setenv("GRAPHONOMOUS_HTTP_TOKEN", "t")
    server = make_http_server(lambda: build_server(graph), "127.0.0.1", 0)
    assert server.token == "t"
    server.server_close()


def test_a_short_token_is_refused_off_loopback(
    graph: Graphonomous, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphonomous.mcp.http import MIN_TOKEN_CHARS, check_bind_token

    def never_bind(self: McpHttpServer) -> None:
        raise AssertionError("a public address was bound")

    monkeypatch.setattr(McpHttpServer, "server_bind", never_bind)
    assert MIN_TOKEN_CHARS >= 16
    for host in ("0.0.0.0", "::", "192.0.2.1"):
        with pytest.raises(ValueError, match=r"GRAPHONOMOUS_HTTP_TOKEN is too short.*1 of"):
            check_bind_token(host, "t")
        check_bind_token(host, "x" * MIN_TOKEN_CHARS)
    check_bind_token("127.0.0.1", "t")  # loopback: the token is optional, any is accepted
    monkeypatch.setenv("GRAPHONOMOUS_HTTP_TOKEN", "x" * (MIN_TOKEN_CHARS - 1))
    with pytest.raises(ValueError, match="GRAPHONOMOUS_HTTP_TOKEN is too short"):
        make_http_server(lambda: build_server(graph), "0.0.0.0", 0)


def test_each_response_is_one_send_on_a_nodelay_socket(
    server: McpHttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Head and body apart meet Nagle's algorithm and a delayed ACK (≈ 40 ms a request)."""
    port = server.server_address[1]
    sends: list[tuple[int, int]] = []  # (TCP_NODELAY, bytes) of each server-side sendall
    original = socket.socket.sendall

    def counted(sock: socket.socket, data: Any, *args: Any) -> None:
        if sock.getsockname()[1] == port:
            nodelay = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            sends.append((nodelay, len(data)))
        original(sock, data, *args)

    monkeypatch.setattr(socket.socket, "sendall", counted)
    client = Client(server)
    client.initialize()  # two responses: initialize, then 202 to the notification
    for _ in range(3):
        assert client.call("ping")["result"] == {}
    assert client.call("tools/list")["result"]["tools"]
    bad = client.post({"jsonrpc": "2.0", "id": 9, "method": "ping"}, {VERSION_HEADER: "1999"})
    assert bad[0] == 400
    assert len(sends) == 7 and all(nodelay for nodelay, _ in sends)
    assert sends[5][1] > io.DEFAULT_BUFFER_SIZE  # tools/list: over a buffer, still one send


def test_host_helpers() -> None:
    assert [host_name(h) for h in ("[::1]:80", "LocalHost:1", "127.0.0.1", "[::1]")] == [
        "::1",
        "localhost",
        "127.0.0.1",
        "::1",
    ]
    assert is_loopback("127.0.0.2") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")


def test_concurrent_writers_lose_nothing(server: McpHttpServer, graph: Graphonomous) -> None:
    writers, per_writer = 8, 10
    shared = Client(server)
    shared.initialize()
    failures: list[str] = []

    def write(worker: int) -> None:
        client = Client(server)
        if worker % 2:
            client.initialize()  # half use their own session, half share one
        else:
            client.session = shared.session
        for i in range(per_writer):
            body = client.call(
                "tools/call",
                {
                    "name": "act",
                    "arguments": {"action": "store_node", "content": f"w{worker} fact {i}"},
                },
            )
            if body["result"].get("isError"):
                failures.append(str(body))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    contents = {n["content"] for n in graph.list_nodes(limit=1000)["nodes"]}
    assert contents == {f"w{w} fact {i}" for w in range(writers) for i in range(per_writer)}
