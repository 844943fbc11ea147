"""Cost of keeping a running process's indexes fresh when another process writes.

A "server" facade loads its indexes from a database (e.g. one built by
``bench_device.py --build``); a second facade on the same file (another
connection, as another process) writes n nodes, re-writes n contents or
soft-forgets n nodes; the server's next index access applies the change log.
Reports the median time of that access when nothing changed, and per batch
size the total and per-changed-node time.  Works on a copy of ``--db``.

Run:  nice -n 10 python benchmarks/bench_refresh.py --db /tmp/g50k.db [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from resultfile import stamp

from graphonomous import Graphonomous

SIZES = (1, 10, 100, 1000)
REPEATS = 50


def _access(graph: Graphonomous) -> float:
    started = time.perf_counter()
    graph.vector_index()
    graph.text_index()
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-refresh-") as tmp:
        db = Path(tmp) / "g.db"
        shutil.copy(args.db, db)
        with Graphonomous(db) as server, Graphonomous(db) as writer:
            report["load_ms"] = round(_access(server), 1)
            report["nodes"] = len(server.vector_index())
            report["unchanged_ms_p50"] = round(
                statistics.median(_access(server) for _ in range(REPEATS)), 3
            )
            ids = sorted(server.vector_index().ids())
            rows = []
            for n in SIZES:
                for kind in ("add", "rewrite", "forget"):
                    if kind == "add":
                        ops: list[dict[str, Any]] = [
                            {"op": "add_node", "node": {"content": f"fresh note {n} {i}"}}
                            for i in range(n)
                        ]
                        writer.apply_batch(ops)
                    elif kind == "rewrite":
                        targets = ids[:n]
                        writer.apply_batch(
                            [
                                {
                                    "op": "update_node",
                                    "id": node_id,
                                    "fields": {"content": f"x {i}"},
                                }
                                for i, node_id in enumerate(targets)
                            ]
                        )
                    else:
                        targets, ids = ids[-n:], ids[:-n]
                        with writer.lock, writer.store.transaction():
                            for node_id in targets:
                                writer.store.update_node(
                                    node_id, forgotten_at="2026-01-01T00:00:00Z"
                                )
                    total = _access(server)
                    rows.append(
                        {
                            "changed": n,
                            "kind": kind,
                            "ms": round(total, 2),
                            "ms_per_node": round(total / n, 3),
                        }
                    )
            report["refresh"] = rows
            report["vector_bytes"] = server.vector_index().memory_bytes()
            report["bm25_bytes"] = server.text_index().memory_bytes()
    print(json.dumps(report, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(stamp(report, __file__, argv), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
