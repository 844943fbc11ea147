"""Peak memory of ``graphonomous import-memory`` and read latency of the memory view.

    python benchmarks/bench_import_memory.py [--sizes-mb 15,150] [--read-entities 10000]
                                             [--runs 5] [--seed 12] [--keep DIR]

Rules of this benchmark:
- The memory files are generated with a fixed seed (same bytes every run): entity lines
  (``{"type": "entity", name, entityType, observations}``) and relation lines between
  random earlier entities (mapped verbs, unknown verbs, a few self-relations, a few
  repeats), in server-memory's JSONL format, until the file reaches the target size.
- Each import runs in a FRESH process (this script re-invoked with ``--child``) that
  calls the CLI entry point and reports its own peak RSS (``getrusage(RUSAGE_SELF)``,
  kilobytes on Linux; ``/proc/self/status`` VmHWM when present) — the number the issue
  asks for: peak RSS must not grow with the file size.
- The read part imports a ``--read-entities`` graph, then times ``read_graph``,
  ``search_nodes`` and ``open_nodes`` (median of ``--runs`` calls, each on a view whose
  cache was invalidated by a write from another connection, and warm calls).
- Output: one JSON object on stdout (sizes, lines, peak_rss_mb, seconds; read latencies
  in ms).  Run under ``nice -n 10``: the 150 MB import takes minutes on a shared box.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Relation types: verbs the table maps, verbs it does not (→ related_to), our kinds.
RELATION_TYPES = ("depends on", "is part of", "causes", "works at", "knows", "related_to", "uses")
ENTITY_TYPES = ("person", "project", "service", "library", "team", "incident")
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "deploy",
    "review",
    "cache",
    "index",
    "query",
    "latency",
    "budget",
    "owner",
    "release",
    "ticket",
    "outage",
    "rollback",
    "schema",
    "migration",
    "vector",
    "graph",
    "memory",
    "agent",
    "pipeline",
    "metric",
    "alert",
    "dashboard",
    "contract",
    "policy",
    "token",
    "session",
    "cluster",
    "shard",
]
# Relation lines per entity line (a memory graph is a little denser in relations).
RELATIONS_PER_ENTITY = 1.5


def generate(path: Path, target_bytes: int, seed: int) -> dict[str, int]:
    """Write a memory file of about `target_bytes`; returns its line counts."""
    rng = random.Random(seed)
    entities = relations = written = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < target_bytes:
            name = f"entity-{entities:07d}"
            observations = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))
                for _ in range(rng.randint(1, 5))
            ]
            line = json.dumps(
                {
                    "type": "entity",
                    "name": name,
                    "entityType": rng.choice(ENTITY_TYPES),
                    "observations": observations,
                }
            )
            entities += 1
            written += handle.write(line + "\n")
            while relations < entities * RELATIONS_PER_ENTITY:
                source = rng.randrange(entities)
                target = source if rng.random() < 0.02 else rng.randrange(entities)
                relation = {
                    "type": "relation",
                    "from": f"entity-{source:07d}",
                    "to": f"entity-{target:07d}",
                    "relationType": rng.choice(RELATION_TYPES),
                }
                relations += 1
                written += handle.write(json.dumps(relation) + "\n")
    return {"entities": entities, "relations": relations, "bytes": path.stat().st_size}


def peak_rss_mb() -> float:
    """This process's peak resident set (MB): VmHWM when /proc has it, else getrusage."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_import(db: str, path: str) -> None:
    """(In the fresh process.)  Import `path` into `db` via the CLI; print JSON."""
    import io

    from graphonomous.cli import main

    out = io.StringIO()
    started = time.perf_counter()
    code = main(["--db", db, "--json", "import-memory", path], out)
    seconds = time.perf_counter() - started
    result = json.loads(out.getvalue()) if code == 0 else {}
    print(
        json.dumps(
            {
                "exit": code,
                "seconds": round(seconds, 2),
                "peak_rss_mb": round(peak_rss_mb(), 1),
                "entities_created": result.get("entities_created"),
                "relations_created": result.get("relations_created"),
                "relations_dangling": len(result.get("relations_dangling", [])),
            }
        )
    )


def run_child(*args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    parsed: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return parsed


def child_read(db: str, runs: int) -> None:
    """(In the fresh process.)  Time the memory view's reads on `db`; print JSON."""
    from graphonomous import Graphonomous
    from graphonomous.server_memory import memory_view
    from graphonomous.store import Store

    graph = Graphonomous(db)
    view = memory_view(graph)
    other = Store(db)
    out: dict[str, Any] = {}
    calls = {
        "read_graph": lambda: view.read_graph(),
        "search_nodes": lambda: view.search_nodes("rollback schema"),
        "open_nodes": lambda: view.open_nodes([f"entity-{i:07d}" for i in range(0, 500, 5)]),
    }
    for name, call in calls.items():
        cold, warm = [], []
        for run in range(runs):
            with other.transaction():  # another connection commits: caches are stale
                other.audit("2000-01-01T00:00:00Z", "bench", None, {"run": run})
            started = time.perf_counter()
            call()
            cold.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            call()
            warm.append((time.perf_counter() - started) * 1000)
        out[name] = {
            "cold_median_ms": round(statistics.median(cold), 1),
            "warm_median_ms": round(statistics.median(warm), 1),
        }
    result = view.read_graph()
    out["entities"] = len(result["entities"])
    out["relations"] = len(result["relations"])
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    other.close()
    graph.close()
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes-mb", default="15,150")
    parser.add_argument("--read-entities", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--keep", help="directory for the generated files (default: a temp dir)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.child[0] == "import":
            child_import(args.child[1], args.child[2])
        else:
            child_read(args.child[1], int(args.child[2]))
        return
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-import-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"seed": args.seed, "imports": [], "read": None}
    for size in [float(s) for s in args.sizes_mb.split(",") if s]:
        path = work / f"memory-{size:g}mb.jsonl"
        counts = generate(path, int(size * 1_000_000), args.seed)
        db = work / f"import-{size:g}mb.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        measured = run_child("import", str(db), str(path))
        report["imports"].append({"size_mb": size, **counts, **measured})
        print(json.dumps(report["imports"][-1]), file=sys.stderr)
    if args.read_entities:
        # The file size that holds about --read-entities entities (bytes per entity measured).
        probe = work / "probe.jsonl"
        counts = generate(probe, 1_000_000, args.seed)
        per_entity = counts["bytes"] / counts["entities"]
        path = work / "read.jsonl"
        generate(path, int(args.read_entities * per_entity), args.seed)
        db = work / "read.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        run_child("import", str(db), str(path))
        report["read"] = run_child("read", str(db), str(args.runs))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
