"""HTTP transport under load: concurrent keep-alive clients, errors and latency.

    python benchmarks/bench_http_load.py [--clients 50] [--requests 100] [--json OUT]

Starts the Streamable HTTP server on 127.0.0.1 (a free port) over a fresh
SQLite file with a few nodes; each client thread opens one keep-alive
connection, initializes a session and sends `--requests` JSON-RPC requests,
alternating ``ping`` and ``tools/call graph_stats``.  Reports connection
errors (any OSError / HTTP error / wrong answer), and the latency of every
request (p50, p99, max, ms) and the wall time.  Issue #12's target: 50 × 100
with 0 connection errors.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphonomous import Graphonomous
from graphonomous.mcp import build_server
from graphonomous.mcp.http import SESSION_HEADER, make_http_server

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b"}},
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


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


def run(clients: int, requests: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, Graphonomous(Path(tmp) / "g.db") as graph:
        for i in range(20):
            graph.store_node(f"Benchmark note {i} about valve V-{i}")
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = run(args.clients, args.requests)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0 if report["connection_errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
