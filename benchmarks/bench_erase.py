"""Benchmark GDPR erase and `erase --finish` on one synthetic SQLite file.

    python benchmarks/bench_erase.py [--nodes N] [--edges E] [--repeat R] [--json PATH]

Builds the graph of bench_learning.py (N nodes, E edges) once, then per repetition
copies it and times, on the copy:

  - `gdpr_erase` of one node (nothing else holds its text: `scrubbed`), total and
    the file scrub alone, then `gdpr_finish` (nothing pending);
  - `gdpr_erase` of a node another node quotes verbatim (`pending`, the quoting node
    named), then `gdpr_finish` in a new process state (a fresh facade): the scrub
    plus the witness's search of the file for the pending text.

Run it with PYTHONPATH pointing at the package to compare (two checkouts, same file
size, same machine).  Figures are medians over the repetitions.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_learning import build  # a sibling script (benchmarks/ is no package)
from resultfile import stamp

from graphonomous import Graphonomous


def _copy(base: Path, work: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-erase-pending"):
        Path(str(work) + suffix).unlink(missing_ok=True)
    shutil.copy(base, work)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 1)


def plain(base: Path, work: Path, victim: str) -> dict[str, Any]:
    """Erase a node nobody quotes, then finish (nothing pending)."""
    _copy(base, work)
    with Graphonomous(work, embedder="hashing") as graph:
        started = time.perf_counter()
        erased = graph.gdpr_erase(victim)
        erase_ms = _ms(started)
        started = time.perf_counter()
        graph.gdpr_finish()
        return {
            "erase_ms": erase_ms,
            "scrub_ms": erased["file"]["duration_ms"],
            "finish_ms": _ms(started),
            "status": erased["status"],
        }


def quoted(base: Path, work: Path, victim: str) -> dict[str, Any]:
    """Erase a node another node quotes verbatim, then finish from a fresh facade."""
    _copy(base, work)
    with Graphonomous(work, embedder="hashing") as graph:
        graph.store_node("Forwarded: " + graph.store.require_node(victim).content)
        started = time.perf_counter()
        erased = graph.gdpr_erase(victim)
        erase_ms = _ms(started)
    with Graphonomous(work, embedder="hashing") as graph:
        started = time.perf_counter()
        finished = graph.gdpr_finish()
        return {
            "erase_ms": erase_ms,
            "finish_ms": _ms(started),
            "status": erased["status"],
            "finish_status": finished["status"],
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base, work = Path(folder) / "base.db", Path(folder) / "work.db"
        build(base, args.nodes, args.edges, args.seed)
        runs = {
            "plain": [plain(base, work, f"n{i + 1:06d}") for i in range(args.repeat)],
            "quoted": [quoted(base, work, f"n{i + 1:06d}") for i in range(args.repeat)],
        }
        figures: dict[str, Any] = {"nodes": args.nodes, "db_bytes": base.stat().st_size}
    for kind, items in runs.items():
        for key in items[0]:
            values = [item[key] for item in items]
            if isinstance(values[0], float):
                figures[f"{kind}_{key}"] = statistics.median(values)
                figures[f"{kind}_{key}_range"] = [min(values), max(values)]
            else:
                figures[f"{kind}_{key}"] = sorted(set(values))
    print(json.dumps(figures, indent=2))
    if args.json:
        stamped = json.dumps(stamp(figures, __file__, sys.argv[1:]), indent=2)
        Path(args.json).write_text(stamped + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
