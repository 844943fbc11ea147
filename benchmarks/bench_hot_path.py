"""Warm in-process retrieve_context latency per effort, several checkouts side by side (#20).

The small-device target (seed 002 / issue #20) is effort 0 under 5 ms and
effort 3 under 20 ms at 10K nodes, pure Python, in one warm process.  This
script measures exactly that, without stdio or JSON-RPC in the way:

* the graph is `bench_device.build`'s (documentation paragraphs + LoCoMo turns,
  ~2 edges per node), built once with the first checkout (``--db`` reuses a
  built file; databases stay in the temporary directory or where you put them);
* every (checkout, backend) pair runs in a fresh subprocess on its own copy of
  the file: it asks every query once (warm-up: indexes loaded, bytecode warm),
  then ``--reps`` rounds of all queries per effort, timing each call in process
  CPU time (robust on a shared machine) and wall time;
* pairs alternate (checkout A pure, B pure, A numpy, B numpy, then again for
  ``--rounds``), so main and a branch see the same load; the load average is
  reported per row.

Reported per effort: p50 / p95 of CPU and wall over all timed calls, and
``best_med`` = the median over queries of each query's fastest CPU time.
``--pin OUT`` instead writes every effort's full results (timings removed) for a
fixed query set, one JSON line each, and prints their sha256: equal hashes mean
identical ids, scores and order (compare checkouts and backends).

Run:  nice -n 10 python benchmarks/bench_hot_path.py --docs DOCS_DIR \\
          --checkouts main=/tmp/main-copy,branch=. [--size 10000] [--reps 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_device import DEFAULT_LOCOMO, QUERIES  # noqa: E402

EFFORTS: Final = (0, 3, 6)
# 40 queries: the device benchmark's 10, each also with a suffix (distinct cache keys).
ASKED: Final = [f"{QUERIES[i % len(QUERIES)]} {i // len(QUERIES)}" for i in range(40)]
PIN_QUERIES: Final = [
    *QUERIES,
    *(f"{q} {i}" for i, q in enumerate(QUERIES)),
    "the",
    "a b c",
    "zzzqqq",
    "Caroline",
    "how to run tests",
    "the the the of a",
    "what is the",
]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(db: Path, efforts: list[int], reps: int) -> dict[str, Any]:
    """Runs inside the checkout under test: warm latency per effort on `db`."""
    from graphonomous import Graphonomous

    out: dict[str, Any] = {}
    with Graphonomous(db) as graph:
        for effort in efforts:
            for query in ASKED:
                graph.retrieve_context(query, effort=effort)
            cpu: list[float] = []
            wall: list[float] = []
            best = dict.fromkeys(ASKED, float("inf"))
            for _ in range(reps):
                for query in ASKED:
                    started_cpu, started = time.process_time_ns(), time.perf_counter_ns()
                    graph.retrieve_context(query, effort=effort)
                    spent = (time.process_time_ns() - started_cpu) / 1e6
                    cpu.append(spent)
                    wall.append((time.perf_counter_ns() - started) / 1e6)
                    best[query] = min(best[query], spent)
            out[f"e{effort}"] = {
                "cpu_p50": round(_percentile(cpu, 0.5), 2),
                "cpu_p95": round(_percentile(cpu, 0.95), 2),
                "wall_p50": round(_percentile(wall, 0.5), 2),
                "wall_p95": round(_percentile(wall, 0.95), 2),
                "best_med": round(statistics.median(best.values()), 2),
            }
    out["load"] = round(os.getloadavg()[0], 2)
    return out


def pin(db: Path, out: Path) -> str:
    """Runs inside the checkout under test: every effort's results, no timings."""
    from graphonomous import Graphonomous

    lines = []
    with Graphonomous(db) as graph:
        for effort in EFFORTS:
            for query in PIN_QUERIES:
                result = graph.retrieve_context(query, effort=effort)
                result["stats"].pop("timings_ms", None)
                lines.append(json.dumps(result, sort_keys=True))
    text = "\n".join(lines)
    out.write_text(text + "\n", encoding="utf-8")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _child(checkout: Path, backend: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("GRAPHONOMOUS_NO_NUMPY", None)
    if backend == "pure":
        env["GRAPHONOMOUS_NO_NUMPY"] = "1"
    done = subprocess.run(
        [sys.executable, __file__, *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=checkout,
    )
    return done.stdout.strip().splitlines()[-1]


def _copy(db: Path, folder: Path, name: str) -> Path:
    target = folder / f"{name}.db"
    shutil.copy(db, target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, help="documentation folder (read in place)")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--db", type=Path, help="a graph bench_device built (reused, not changed)")
    parser.add_argument("--checkouts", default=f"this={ROOT}", help="name=path,... side by side")
    parser.add_argument("--backends", default="pure,numpy")
    parser.add_argument("--efforts", default=",".join(map(str, EFFORTS)))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pin", type=Path, help="write results per checkout/backend here")
    parser.add_argument("--child-measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-pin", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    efforts = [int(e) for e in args.efforts.split(",")]
    if args.child_measure is not None:
        print(json.dumps(measure(args.child_measure, efforts, args.reps)))
        return 0
    if args.child_pin is not None:
        print(pin(*args.child_pin))
        return 0
    checkouts = [
        (name, Path(path).resolve())
        for name, _, path in (item.partition("=") for item in args.checkouts.split(","))
    ]
    with tempfile.TemporaryDirectory(prefix="bench-hot-") as tmp:
        folder = Path(tmp)
        db = args.db
        if db is None:
            db = folder / "graph.db"
            command = [str(ROOT / "benchmarks" / "bench_device.py"), "--build", str(db)]
            command += ["--size", str(args.size), "--locomo", str(args.locomo)]
            if args.docs is not None:
                command += ["--docs", str(args.docs)]
            env = {**os.environ, "PYTHONPATH": str(checkouts[0][1])}
            subprocess.run([sys.executable, *command], env=env, check=True, capture_output=True)
        for backend in args.backends.split(",") if args.pin is not None else ():
            for name, checkout in checkouts:
                out = args.pin / f"pin-{name}-{backend}.jsonl"
                args.pin.mkdir(parents=True, exist_ok=True)
                copy = _copy(db, folder, f"pin-{name}-{backend}")
                digest = _child(checkout, backend, "--child-pin", str(copy), str(out))
                print(json.dumps({"checkout": name, "backend": backend, "sha256": digest}))
        if args.pin is not None:
            return 0
        for _ in range(args.rounds):
            for backend in args.backends.split(","):
                for name, checkout in checkouts:
                    copy = _copy(db, folder, f"{name}-{backend}")
                    row = json.loads(
                        _child(
                            checkout,
                            backend,
                            "--child-measure",
                            str(copy),
                            "--efforts",
                            args.efforts,
                            "--reps",
                            str(args.reps),
                        )
                    )
                    print(json.dumps({"checkout": name, "backend": backend, **row}), flush=True)
                    copy.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
