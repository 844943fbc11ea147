"""Several processes on one database: two MCP servers and a CLI batch write at once.

Acceptance check of issue #11: two `graphonomous serve` (stdio) processes
each store ``--per-server`` nodes one call at a time and search between
writes, while ``graphonomous batch`` writes ``--batch`` nodes in ONE
transaction (it embeds inside it, so it holds the write lock for seconds).
At the end every node must be stored exactly once, no reply may be an error,
no process may print "database is locked", and each server's similarity
search must find a node written by the CLI (its indexes followed the other
processes).  Prints one JSON object; exit 1 on any failure.

Run:  nice -n 10 python benchmarks/check_concurrency.py [--batch 20000] [--per-server 300]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]


class Server:
    """One stdio server and a blocking JSON-RPC client."""

    def __init__(self, db: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphonomous",
                "serve",
                "--db",
                str(db),
                "--surface",
                "v1",
                "--no-idle-consolidation",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.next_id = 0
        self.errors: list[str] = []
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        if "error" in reply or reply.get("result", {}).get("isError"):
            self.errors.append(json.dumps(reply)[:500])
        return reply

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        content: dict[str, Any] = reply.get("result", {}).get("structuredContent", {})
        return content

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=600)
        return self.proc.stderr.read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument("--per-server", type=int, default=300)
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    report: dict[str, Any] = {"batch": args.batch, "per_server": args.per_server}
    with tempfile.TemporaryDirectory(prefix="concurrency-") as tmp:
        db = Path(tmp) / "g.db"
        subprocess.run(
            [sys.executable, "-m", "graphonomous", "init", "--db", str(db)], env=env, check=True
        )
        ops = [
            {
                "op": "add_node",
                "node": {"id": f"cli{i:06d}", "content": f"batch note {i} about valve {i % 97}"},
            }
            for i in range(args.batch)
        ]
        batch_file = Path(tmp) / "batch.json"
        batch_file.write_text(json.dumps(ops))
        servers = [Server(db, env) for _ in range(2)]
        started = time.perf_counter()
        cli = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphonomous",
                "batch",
                str(batch_file),
                "--db",
                str(db),
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

        def work(number: int, server: Server) -> None:
            for i in range(args.per_server):
                server.call(
                    "store_node", content=f"server {number} note {i}", node_id=f"s{number}-{i:05d}"
                )
                if i % 25 == 0:
                    server.call("retrieve_context", query=f"note {i} valve", limit=5)

        threads = [
            threading.Thread(target=work, args=(n, s)) for n, s in enumerate(servers, start=1)
        ]
        for thread in threads:
            thread.start()
        cli_out, cli_err = cli.communicate(timeout=1800)
        report["cli_s"] = round(time.perf_counter() - started, 1)
        for thread in threads:
            thread.join()
        report["servers_s"] = round(time.perf_counter() - started, 1)
        found = []
        for server in servers:
            hits = server.call("query_graph", operation="similarity_search", query="batch note 7")
            found.append(any(r["id"].startswith("cli") for r in hits.get("results", [])))
        stderr = [server.close() for server in servers] + [cli_err]
        done = subprocess.run(
            [sys.executable, "-m", "graphonomous", "stats", "--db", str(db), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        stats = json.loads(done.stdout)
        expected = args.batch + 2 * args.per_server
        report.update(
            cli_exit=cli.returncode,
            node_count=stats["node_count"],
            expected_nodes=expected,
            server_errors=sum(len(s.errors) for s in servers),
            first_errors=[e for s in servers for e in s.errors][:3],
            locked_messages=sum(text.lower().count("database is locked") for text in stderr),
            servers_see_cli_nodes=found,
        )
        del cli_out
    ok = (
        report["cli_exit"] == 0
        and report["node_count"] == report["expected_nodes"]
        and report["server_errors"] == 0
        and report["locked_messages"] == 0
        and all(report["servers_see_cli_nodes"])
    )
    report["ok"] = ok
    print(json.dumps(report))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
