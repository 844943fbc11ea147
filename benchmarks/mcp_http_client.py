"""A small MCP-over-HTTP client and server launcher (stdlib only), for benchmarks and tests.

Rules of this module:
- One copy of the client that drives `graphonomous serve --transport http` from a script:
  benchmarks/bench_postgres.py and tests/test_postgres_server.py / test_postgres_restart.py
  import it (tests put benchmarks/ on sys.path, like the eval-harness tests).
- `McpClient.call` returns the raw JSON-RPC answer (a test checks error shapes with it);
  `McpClient.tool` returns a successful tool call's structuredContent or raises McpCallError.
- Servers bind 127.0.0.1 only; `start_server` waits until the port answers (or raises with
  the server's stderr).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
SESSION_HEADER: Final = "Mcp-Session-Id"  # (graphonomous.mcp.http.SESSION_HEADER)
PROTOCOL_VERSION: Final = "2025-11-25"
# Seconds a started server may take to listen (a cold import on a loaded 2-core machine).
START_TIMEOUT_S: Final = 60.0


class McpCallError(AssertionError):
    """A tool call that did not succeed; `body` is the JSON-RPC answer."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


def free_port() -> int:
    """A TCP port on 127.0.0.1 free right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class McpClient:
    """One MCP session over HTTP with one server (initialize + initialized on creation)."""

    def __init__(self, port: int, *, timeout: float = 120.0, name: str = "script") -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.session = ""
        self.next_id = 0
        init = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": name, "version": "0"},
        }
        status, headers, body = self.post("initialize", init)
        if status != 200 or SESSION_HEADER not in headers:
            raise McpCallError(status, body)
        self.session = headers[SESSION_HEADER]
        self.post("notifications/initialized", None)

    def post(self, method: str, params: Any) -> tuple[int, dict[str, str], Any]:
        """One JSON-RPC message (a notification when `params` is None): status, headers, body."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            self.next_id += 1
            message.update(id=self.next_id, params=params)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.session:
            headers[SESSION_HEADER] = self.session
        self.conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, dict(response.getheaders()), json.loads(data) if data else None

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[int, Any]:
        """A tools/call: (HTTP status, the JSON-RPC answer), whatever it says."""
        status, _, body = self.post("tools/call", {"name": name, "arguments": arguments})
        return status, body

    def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tools/call that must succeed: its structuredContent."""
        status, body = self.call(name, arguments)
        if status != 200 or not isinstance(body, dict) or "result" not in body:
            raise McpCallError(status, body)
        result = body["result"]
        if result.get("isError"):
            raise McpCallError(status, body)
        return dict(result["structuredContent"])


def start_server(
    db: str, *, stderr: Any = subprocess.PIPE, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[bytes], int]:
    """`graphonomous --db DB serve --transport http` on a free port (surface v1, no idle
    consolidation); returns the process and its port once it listens."""
    port = free_port()
    command = [sys.executable, "-m", "graphonomous", "--db", db, "serve", "--transport", "http"]
    command += ["--port", str(port), "--surface", "v1", "--no-idle-consolidation", *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port
        except OSError:
            if process.poll() is not None:
                err = process.stderr.read() if process.stderr else b""
                raise RuntimeError(f"the server exited: {err.decode(errors='replace')}") from None
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not start listening")
