"""Cold consolidation side by side (issue #20): checkout A against checkout B, alternating.

Measures what ``bench_device.py`` reports as ``consolidate_cold_s`` /
``consolidate_cold_cpu_s``: ``graphonomous consolidate --db COPY --json`` in a
fresh process, on a copy of ``--db`` that a ``stats`` run opened once before
(so its ``-verified`` state matches and the open skips ``quick_check``).  Each
round runs A then B (or B then A, alternating) on fresh copies of the same
file; the report gives median / min CPU and wall per checkout and the load
average seen.  ``--db`` should already hold the saved derived indexes (run one
``recall`` on it first), as a database our sessions keep using does.

``--check`` also compares what the two consolidations wrote: every node and
edge row (sorted, with the timestamps the run itself stamps removed) must be
equal, else the script exits 1 naming the first difference.

Run:  nice -n 10 python benchmarks/bench_cold_consolidate.py --a /tmp/main-copy --b . \\
          --db /tmp/graphs/g10000.db [--db-b B_COPY] [--runs 5] [--backend pure|numpy] [--check]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_device import _env, _remove_db, cli

# Columns a consolidation run stamps with its own clock or mints afresh (an edge
# redirected by a merge gets a new uuid7 id): equal results, other values.
RUN_STAMPED: Final = {
    "nodes": frozenset({"updated_at"}),
    "edges": frozenset({"id", "updated_at"}),
}


def _dump(db: Path) -> list[tuple[str, list[tuple[object, ...]]]]:
    """Every nodes / edges row, sorted, without run-stamped columns."""
    connection = sqlite3.connect(db)
    try:
        tables = []
        for table in ("nodes", "edges"):
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            kept = [column for column in columns if column not in RUN_STAMPED[table]]
            rows = connection.execute(f"SELECT {', '.join(kept)} FROM {table}").fetchall()
            tables.append((table, sorted(rows, key=repr)))
        return tables
    finally:
        connection.close()


def _one(checkout: Path, base: Path, work: Path, backend: str) -> tuple[float, float, Path]:
    env = _env(checkout, backend)
    copy = work / f"{checkout.name}-{os.getpid()}.db"
    _remove_db(copy)
    shutil.copy(base, copy)
    cli(env, "--db", str(copy), "stats", "--json")
    wall, _, cpu = cli(env, "consolidate", "--db", str(copy), "--json")
    return wall, cpu, copy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="checkout A (e.g. main)")
    parser.add_argument("--b", type=Path, required=True, help="checkout B (e.g. the branch)")
    parser.add_argument("--db", type=Path, required=True, help="graph to copy (never written)")
    parser.add_argument(
        "--db-b",
        type=Path,
        help="B's copy of the same graph, when B saves its indexes in another format "
        "(so neither side rebuilds them from rows); default --db",
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", choices=("pure", "numpy"), default="pure")
    parser.add_argument("--check", action="store_true", help="compare the written rows")
    args = parser.parse_args()
    checkouts = {"A": args.a.resolve(), "B": args.b.resolve()}
    bases = {"A": args.db, "B": args.db_b or args.db}
    times: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for label, checkout in checkouts.items():  # warm the bytecode caches
            _remove_db(_one(checkout, bases[label], work, args.backend)[2])
        for round_ in range(args.runs):
            order = ("A", "B") if round_ % 2 == 0 else ("B", "A")
            for label in order:
                loads.append(os.getloadavg()[0])
                wall, cpu, copy = _one(checkouts[label], bases[label], work, args.backend)
                times[label].append((wall, cpu))
                _remove_db(copy)
        for label, runs in times.items():
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            print(
                f"{label} {checkouts[label]}: cpu median {statistics.median(cpus):.3f} s "
                f"min {min(cpus):.3f}; wall median {statistics.median(walls):.3f} s "
                f"min {min(walls):.3f}  ({len(runs)} runs, {args.backend})"
            )
        print(f"load average (1 min) seen: {min(loads):.1f}-{max(loads):.1f}")
        if args.check:
            dumps = []
            for label in ("A", "B"):
                wall, cpu, copy = _one(checkouts[label], bases[label], work, args.backend)
                dumps.append(_dump(copy))
                _remove_db(copy)
            for (table, rows_a), (_, rows_b) in zip(*dumps, strict=True):
                if rows_a != rows_b:
                    first = next(
                        (pair for pair in zip(rows_a, rows_b, strict=False) if pair[0] != pair[1]),
                        (len(rows_a), len(rows_b)),
                    )
                    print(f"DIFFERENT {table}: {first}")
                    return 1
                print(f"identical {table}: {len(rows_a)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
