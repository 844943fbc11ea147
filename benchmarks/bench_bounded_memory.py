"""Peak against steady memory of ``import-memory`` and ``scan``, close-time save included.

    python benchmarks/bench_bounded_memory.py [--sizes-mb 30] [--files 20000,100000]
                                              [--seed 12] [--json PATH]

Rules of this benchmark:
- Each command runs in a FRESH process (this script re-invoked with ``--child``) through
  the CLI entry point.  A thread samples ``VmRSS`` every `SAMPLE_S`; the *steady* RSS is
  the largest sample taken before the engine's `close` starts (the running command: the
  bulk load of ``import-memory``, the walk and ingest of ``scan``), the *peak* is
  ``VmHWM`` at the end (close-time embedding and index saves included).  The promise
  measured: peak within 2x steady.
- Inputs are generated with a fixed seed: the memory file by
  ``bench_import_memory.generate``; the tree as ``--files`` small text files,
  `FILES_PER_DIR` per folder, each a few sentences from a fixed vocabulary and a
  file-unique name, so every file is a node.
- Output: one JSON object (stdout, and ``--json PATH`` stamped with provenance).
  Run under ``nice -n 10``: a 100,000-file scan takes minutes on a shared box.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_import_memory import WORDS, generate
from resultfile import stamp

ROOT = Path(__file__).resolve().parents[1]
# Sampling period of the RSS thread: short next to every phase measured (seconds each).
SAMPLE_S = 0.02
# Files per folder of the generated tree (a folder of 1000 files is an ordinary size).
FILES_PER_DIR = 1000


def status_mb(field: str) -> float:
    """A ``/proc/self/status`` field (VmRSS, VmHWM) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def make_tree(root: Path, files: int, seed: int) -> int:
    """`files` small text files under `root`; returns their total bytes."""
    rng = random.Random(seed)
    total = 0
    for i in range(files):
        folder = root / f"dir-{i // FILES_PER_DIR:04d}"
        if i % FILES_PER_DIR == 0:
            folder.mkdir(parents=True, exist_ok=True)
        sentences = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12)))
            for _ in range(rng.randint(2, 5))
        ]
        text = f"note-{i:07d}\n" + ".\n".join(sentences) + ".\n"
        total += (folder / f"note-{i:07d}.txt").write_text(text, encoding="utf-8")
    return total


def child(command: list[str]) -> None:
    """(In the fresh process.)  Run the CLI `command`, sampling RSS; print JSON."""
    import io

    from graphonomous.cli import main
    from graphonomous.engine import core

    samples: list[float] = []
    closing = threading.Event()
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            if not closing.is_set():
                samples.append(status_mb("VmRSS"))
            time.sleep(SAMPLE_S)

    close = core.Engine.close
    close_started: list[float] = []

    def marked_close(self: Any) -> None:
        if not close_started:
            closing.set()
            samples.append(status_mb("VmRSS"))
            close_started.append(time.perf_counter())
        close(self)

    core.Engine.close = marked_close  # type: ignore[method-assign]
    threading.Thread(target=sample, daemon=True).start()
    out = io.StringIO()
    started = time.perf_counter()
    code = main(command, out)
    ended = time.perf_counter()
    done.set()
    steady, peak = max(samples), status_mb("VmHWM")
    answer = json.loads(out.getvalue()) if code == 0 else {}
    counts = {key: value for key, value in answer.items() if isinstance(value, int)}
    close_s = ended - close_started[0] if close_started else None
    print(
        json.dumps(
            {
                "exit": code,
                "seconds": round(ended - started, 1),
                "close_seconds": None if close_s is None else round(close_s, 1),
                "steady_rss_mb": round(steady, 1),
                "peak_rss_mb": round(peak, 1),
                "peak_over_steady": round(peak / steady, 2),
                "counts": counts,
            }
        )
    )


def run_child(command: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(command)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    parsed: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return parsed


def fresh_db(path: Path) -> str:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes-mb", default="30")
    parser.add_argument("--files", default="20000,100000")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--json", help="write the stamped result here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    report: dict[str, Any] = {"seed": args.seed, "import_memory": [], "scan": []}
    with tempfile.TemporaryDirectory(prefix="bench-bounded-") as scratch:
        work = Path(scratch)
        for size in [float(s) for s in args.sizes_mb.split(",") if s]:
            path = work / f"memory-{size:g}mb.jsonl"
            counts = generate(path, int(size * 1_000_000), args.seed)
            db = fresh_db(work / f"import-{size:g}.db")
            measured = run_child(["--db", db, "--json", "import-memory", str(path)])
            report["import_memory"].append({"size_mb": size, **counts, **measured})
            print(json.dumps(report["import_memory"][-1]), file=sys.stderr)
            path.unlink()
        for files in [int(f) for f in args.files.split(",") if f]:
            tree = work / f"tree-{files}"
            size = make_tree(tree, files, args.seed)
            db = fresh_db(work / f"scan-{files}.db")
            measured = run_child(["--db", db, "--json", "scan", str(tree)])
            report["scan"].append({"files": files, "bytes": size, **measured})
            print(json.dumps(report["scan"][-1]), file=sys.stderr)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(
            json.dumps(stamp(report, "benchmarks/bench_bounded_memory.py"), indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
