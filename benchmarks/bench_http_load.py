"""HTTP transport: keep-alive latency next to stdio, and concurrent clients under load.

    python benchmarks/bench_http_load.py [--clients 50] [--requests 100] [--latency 200]
                                         [--json OUT]

Over fresh SQLite files with 20 nodes each, everything on 127.0.0.1; `code` in the report
is the checkout measured (this file's parent), so a copy of this file in another worktree
measures that worktree's code:

* Keep-alive latency (`--latency` requests of each kind, after a warm-up of
  `WARMUP` each): ``ping``, ``tools/call graph_stats`` and ``tools/call
  retrieve_context``, on one kept-alive connection to ``graphonomous serve
  --transport http`` and as JSON lines over the pipes of ``graphonomous serve``
  (stdio), each server its own process on its own copy of the graph.  The two
  take turns request by request (so a change of machine load hits both alike).
  Reports p50/p95 (ms, wall clock per round trip) of each, the tool calls' HTTP/stdio
  p50 ratio, and the canvas API (``graphonomous ui``'s ``GET /api/stats`` on one
  kept-alive connection, in this process) likewise.
* Load: each of `--clients` threads opens one keep-alive connection to an
  in-process server, initializes a session and sends `--requests` requests,
  alternating ``ping`` and ``tools/call graph_stats``.  Reports connection
  errors (any OSError / HTTP error / wrong answer), the latency of every
  request (p50, p99, max, ms) and the wall time.  Issue #12's target: 50 × 100
  with 0 connection errors.

Targets: keep-alive ping p50 under 5 ms, a tool call within 2× its stdio time.
The exit status is 1 when the load run saw a connection error.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp_http_client import ROOT, McpClient, start_server
from resultfile import stamp

from graphonomous import Graphonomous
from graphonomous.mcp import build_server
from graphonomous.mcp.http import SESSION_HEADER, make_http_server
from graphonomous.ui import make_ui_server

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b"}},
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
# Requests of each kind sent before measuring (index loads, first-call imports).
WARMUP: Final = 5
# The tool calls measured, by name: (tool, arguments).
TOOL_CALLS: Final[dict[str, tuple[str, dict[str, Any]]]] = {
    "graph_stats": ("graph_stats", {}),
    "retrieve_context": ("retrieve_context", {"query": "valve V-7 pressure"}),
}
TRANSPORTS: Final = ("http", "stdio")
# Seconds a stdio answer may take before the benchmark gives up (a loaded 2-core machine).
STDIO_TIMEOUT_S: Final = 120.0


def seed(db: Path) -> None:
    with Graphonomous(db) as graph:
        for i in range(20):
            graph.store_node(f"Benchmark note {i} about valve V-{i}")


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def timed(send: Callable[[], None], count: int) -> list[float]:
    """`send` WARMUP times unmeasured, then `count` times: each round trip in ms."""
    for _ in range(WARMUP):
        send()
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        send()
        samples.append((time.perf_counter() - started) * 1000.0)
    return samples


class HttpTransport:
    """One kept-alive MCP session with `graphonomous serve --transport http` (surface v1)."""

    def __init__(self, db: Path) -> None:
        self.process, port = start_server(str(db), stderr=subprocess.DEVNULL)
        self.client = McpClient(port, name="bench")

    def send(self, kind: str) -> None:
        if kind == "ping":
            status, _, body = self.client.post("ping", {})
            if status != 200 or body.get("result") != {}:
                raise RuntimeError(f"ping: HTTP {status}: {body}")
        else:
            self.client.tool(*TOOL_CALLS[kind])

    def close(self) -> None:
        self.client.conn.close()
        self.process.terminate()
        self.process.wait(30)


class StdioTransport:
    """One MCP session over the pipes of `graphonomous serve` (stdio, surface v1)."""

    def __init__(self, db: Path) -> None:
        command = [sys.executable, "-m", "graphonomous", "--db", str(db), "serve"]
        command += ["--surface", "v1", "--no-idle-consolidation"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request("initialize", INIT["params"])
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _write(self, message: dict[str, Any]) -> None:
        stdin: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        stdout: IO[bytes] = self.process.stdout  # type: ignore[assignment]
        deadline = time.monotonic() + STDIO_TIMEOUT_S
        while time.monotonic() < deadline:
            line = stdout.readline()
            if not line:
                raise RuntimeError("the stdio server closed its output")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == self.next_id:
                if "error" in answer or answer.get("result", {}).get("isError"):
                    raise RuntimeError(f"{method}: {answer}")
                return answer
        raise RuntimeError(f"{method}: no answer within {STDIO_TIMEOUT_S} s")

    def send(self, kind: str) -> None:
        if kind == "ping":
            self.request("ping", {})
        else:
            name, arguments = TOOL_CALLS[kind]
            self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(30)


def transport_latency(tmp: Path, count: int) -> dict[str, dict[str, dict[str, float]]]:
    """HTTP and stdio servers (each on its own copy of the graph) take turns request by
    request, so a change of machine load hits both alike."""
    for name in TRANSPORTS:
        seed(tmp / f"{name}.db")
    kinds = ("ping", *TOOL_CALLS)
    open_ = {"http": HttpTransport, "stdio": StdioTransport}
    transports = {name: open_[name](tmp / f"{name}.db") for name in TRANSPORTS}
    samples: dict[str, dict[str, list[float]]] = {n: {k: [] for k in kinds} for n in TRANSPORTS}
    try:
        for turn in range(WARMUP + count):
            for kind in kinds:
                for name in TRANSPORTS[:: 1 if turn % 2 else -1]:
                    started = time.perf_counter()
                    transports[name].send(kind)
                    if turn >= WARMUP:
                        samples[name][kind].append((time.perf_counter() - started) * 1000.0)
    finally:
        for transport in transports.values():
            transport.close()
    return {n: {k: percentiles(v) for k, v in by_kind.items()} for n, by_kind in samples.items()}


def canvas_latency(db: Path, count: int) -> dict[str, Any]:
    with Graphonomous(db) as graph:
        server = make_ui_server(graph, 0)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=60)
        auth = {"Authorization": f"Bearer {server.token}"} if server.token else {}

        def stats() -> None:
            conn.request("GET", "/api/stats", headers=auth)
            response = conn.getresponse()
            response.read()
            assert response.status == 200, response.status

        try:
            return {"api_stats": percentiles(timed(stats, count))}
        finally:
            conn.close()
            server.shutdown()
            server.server_close()


def latency(tmp: Path, count: int) -> dict[str, Any]:
    report = transport_latency(tmp, count)
    ratios = {
        name: round(report["http"][name]["p50_ms"] / report["stdio"][name]["p50_ms"], 2)
        for name in TOOL_CALLS
    }
    return {
        "requests_per_kind": count,
        **report,
        "canvas": canvas_latency(tmp / "http.db", count),
        "tool_p50_http_over_stdio": ratios,
        "targets_met": {
            "ping_p50_under_5ms": report["http"]["ping"]["p50_ms"] < 5.0,
            "tools_within_2x_stdio": all(r <= 2.0 for r in ratios.values()),
        },
    }


def client(port: int, requests: int, latencies: list[float], errors: list[str]) -> None:
    """One keep-alive client: initialize, then `requests` requests."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/mcp", json.dumps(INIT), HEADERS)
        response = conn.getresponse()
        response.read()
        session = response.getheader(SESSION_HEADER)
        if response.status != 200 or session is None:
            errors.append(f"initialize: HTTP {response.status}")
            return
        headers = {**HEADERS, SESSION_HEADER: session}
        for i in range(requests):
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": i + 1, "method": "ping"}
            if i % 2:
                message["method"] = "tools/call"
                message["params"] = {"name": "graph_stats", "arguments": {}}
            started = time.perf_counter()
            conn.request("POST", "/mcp", json.dumps(message), headers)
            response = conn.getresponse()
            body = json.loads(response.read())
            latencies.append((time.perf_counter() - started) * 1000.0)
            if response.status != 200 or body.get("id") != i + 1 or "error" in body:
                errors.append(f"request {i}: HTTP {response.status}")
        conn.close()
    except (OSError, http.client.HTTPException, ValueError) as exc:
        errors.append(repr(exc))


def load(db: Path, clients: int, requests: int) -> dict[str, Any]:
    with Graphonomous(db) as graph:
        server = make_http_server(lambda: build_server(graph, "all"), "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        port = server.server_address[1]
        latencies: list[float] = []
        errors: list[str] = []
        started = time.perf_counter()
        threads = [
            threading.Thread(target=client, args=(port, requests, latencies, errors))
            for _ in range(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        server.shutdown()
        server.server_close()
    ordered = sorted(latencies)
    return {
        "clients": clients,
        "requests_per_client": requests,
        "requests": len(latencies),
        "connection_errors": len(errors),
        "first_errors": errors[:5],
        "p50_ms": round(statistics.median(ordered), 2) if ordered else None,
        "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))], 2) if ordered else None,
        "max_ms": round(ordered[-1], 2) if ordered else None,
        "wall_s": round(wall, 2),
        "requests_per_s": round(len(latencies) / wall, 1) if wall else None,
    }


def run(clients: int, requests: int, count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        keepalive = latency(Path(tmp), count)
        return {
            "code": str(ROOT),
            "keepalive": keepalive,
            "load": load(Path(tmp) / "http.db", clients, requests),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--latency", type=int, default=200, help="requests of each kind")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = run(args.clients, args.requests, args.latency)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(stamp(report, __file__), indent=2) + "\n")
    return 0 if report["load"]["connection_errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
