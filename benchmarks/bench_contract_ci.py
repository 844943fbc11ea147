"""Benchmark ``contract check`` on large captures (issue: 5,000-document JSONL in < 10 s).

    python benchmarks/bench_contract_ci.py [--documents N] [--nodes N] [--drift F] [--seed N]

Builds a JSON Lines capture of N real documents — the engine's
``analyze_document`` output on random graphs of ``--nodes`` nodes with
feedback loops, a fraction ``--drift`` of them drifted (a renamed key, a
string κ) — plus the same documents as an MCP transcript (each one a
``tools/call analyze_topology`` request and its response), then times:

1. ``run_check`` in-process on the JSONL (text report);
2. the same with ``--format sarif`` (every violation placed at its line);
3. the transcript, in-process;
4. ``python -m graphonomous contract check capture.jsonl`` as a fresh process
   (what CI pays, interpreter start-up included);
5. the vendored ``standalone/graphonomous_contract.py`` on the same file.

Files go to a temporary directory that is removed afterwards.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from graphonomous.contract import run_check
from graphonomous.topology import analyze_document

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 10.0


def random_graph(rng: random.Random, size: int) -> dict[str, Any]:
    """A graph with a few cycles and a DAG part (so documents carry SCCs and fault lines)."""
    nodes = [f"n{index:03d}" for index in range(size)]
    edges = []
    for _ in range(size + size // 2):
        source, target = rng.sample(nodes, 2)
        edges.append({"source": source, "target": target})
    return {"nodes": nodes, "edges": edges}


def drift(rng: random.Random, doc: dict[str, Any]) -> dict[str, Any]:
    changed = json.loads(json.dumps(doc))
    if rng.random() < 0.5 or not changed["sccs"]:
        changed["overall_routing"] = changed.pop("routing")
    else:
        changed["sccs"][0]["kappa"] = str(changed["sccs"][0]["kappa"])
    return changed


def build(directory: Path, count: int, nodes: int, drift_rate: float, seed: int) -> int:
    """Write capture.jsonl and session.jsonl; return the number of drifted documents."""
    rng = random.Random(seed)
    distinct = [analyze_document(random_graph(rng, nodes)) for _ in range(50)]
    drifted = 0
    with (
        (directory / "capture.jsonl").open("w", encoding="utf-8") as capture,
        (directory / "session.jsonl").open("w", encoding="utf-8") as session,
    ):
        for ident in range(count):
            doc = rng.choice(distinct)
            if rng.random() < drift_rate:
                doc = drift(rng, doc)
                drifted += 1
            capture.write(json.dumps(doc) + "\n")
            call = {"name": "analyze_topology", "arguments": {}}
            request = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": call}
            answer = {**doc, "recommendation": "r"}
            result = {"content": [{"type": "text", "text": json.dumps(answer)}]}
            result["structuredContent"] = answer
            session.write(json.dumps(request) + "\n")
            session.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
    return drifted


def timed_in_process(operand: str, fmt: str | None) -> tuple[float, int, str]:
    out = io.StringIO()
    started = time.perf_counter()
    code = run_check([operand], io.StringIO(), out, io.StringIO(), report_format=fmt)
    return time.perf_counter() - started, code, out.getvalue().splitlines()[-1]


def timed_process(argv: list[str], cwd: Path) -> tuple[float, int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    return elapsed, done.returncode, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--documents", type=int, default=5000)
    parser.add_argument("--nodes", type=int, default=30)
    parser.add_argument("--drift", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        drifted = build(directory, args.documents, args.nodes, args.drift, args.seed)
        size = (directory / "capture.jsonl").stat().st_size
        print(
            f"capture: {args.documents} documents ({drifted} drifted), {size / 1e6:.1f} MB, "
            f"{args.nodes}-node graphs"
        )
        os.chdir(directory)
        rows = [
            ("in-process, text", *timed_in_process("capture.jsonl", None)),
            ("in-process, sarif", *timed_in_process("capture.jsonl", "sarif")),
            ("in-process, MCP transcript", *timed_in_process("session.jsonl", None)),
            (
                "CLI process",
                *timed_process(
                    [sys.executable, "-m", "graphonomous", "contract", "check", "capture.jsonl"],
                    directory,
                ),
            ),
            (
                "vendored file, process",
                *timed_process(
                    [
                        sys.executable,
                        str(ROOT / "standalone" / "graphonomous_contract.py"),
                        "check",
                        "capture.jsonl",
                    ],
                    directory,
                ),
            ),
        ]
        os.chdir(ROOT)
    for name, seconds, code, summary in rows:
        verdict = "ok" if seconds < TARGET_S else "OVER TARGET"
        print(f"{name:28s} {seconds:6.2f} s  exit {code}  {summary}  [{verdict}]")
    return 0 if all(seconds < TARGET_S for _, seconds, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
