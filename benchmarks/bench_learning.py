"""Benchmark the learning-(A) operations on a synthetic graph in a SQLite file.

    python benchmarks/bench_learning.py [--nodes N] [--edges E] [--repeat R] [--json PATH]

Builds N nodes (hashing embeddings of generated sentences, random confidence,
access counts and ages) and E random edges in a temporary file, opens it with
the facade (indexes warm), then times (median of R calls where repeatable):

  - learn_from_outcome with 3 causal nodes;
  - learn_from_interaction with a 4-sentence response;
  - belief_revise expand (one contradiction search);
  - forget_by_policy dry run and real run (budget = 90 % of N, soft);
  - epistemic_frontier after R outcomes;
  - gdpr_erase of one node: total, and the file scrub (WAL truncate + VACUUM)
    alone, with the database size.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from resultfile import stamp  # noqa: E402

from graphonomous import Graphonomous  # noqa: E402
from graphonomous.model import format_time  # noqa: E402

WORDS = (
    "valve",
    "pump",
    "pressure",
    "sensor",
    "line",
    "intake",
    "flush",
    "calibrate",
    "error",
    "alarm",
    "shift",
    "operator",
    "night",
    "boiler",
    "turbine",
    "bearing",
    "seal",
    "leak",
    "motor",
    "fan",
    "filter",
    "cooling",
    "oil",
    "water",
    "steam",
    "gauge",
    "reset",
)
KINDS = ("related", "derived_from", "supports", "causes", "part_of", "depends_on")


def _sentence(rng: random.Random, i: int) -> str:
    return f"Note {i}: the {' '.join(rng.sample(WORDS, 6))} is checked on line {i % 97}"


def build(path: Path, nodes: int, edges: int, seed: int) -> None:
    """Fill the database through apply_batch (chunks of 1,000 operations)."""
    rng = random.Random(seed)
    now = time.time()
    with Graphonomous(path, embedder="hashing") as graph:
        for start in range(0, nodes, 1000):
            graph.apply_batch(
                [
                    {
                        "op": "add_node",
                        "node": {
                            "id": f"n{i:06d}",
                            "content": _sentence(rng, i),
                            "confidence": round(rng.uniform(0.05, 0.95), 3),
                        },
                    }
                    for i in range(start, min(nodes, start + 1000))
                ]
            )
        with graph.store.transaction():
            for i in range(nodes):
                age = rng.uniform(0, 60 * 86400)
                graph.store.update_node(
                    f"n{i:06d}",
                    access_count=rng.randrange(0, 30),
                    last_accessed_at=format_time(_utc(now - age)),
                )
        pairs: set[tuple[int, int]] = set()
        while len(pairs) < edges:
            a, b = rng.randrange(nodes), rng.randrange(nodes)
            if a != b:
                pairs.add((a, b))
        operations = [
            {
                "op": "add_edge",
                "edge": {
                    "source_id": f"n{a:06d}",
                    "target_id": f"n{b:06d}",
                    "relationship": rng.choice(KINDS),
                },
            }
            for a, b in sorted(pairs)
        ]
        for start in range(0, len(operations), 5000):
            graph.apply_batch(operations[start : start + 5000])


def _utc(seconds: float) -> Any:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(seconds, timezone.utc)


def timed(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median milliseconds over `repeat` calls, and the last result."""
    samples = []
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        samples.append((time.perf_counter() - started) * 1000.0)
    return round(statistics.median(samples), 2), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    figures: dict[str, Any] = {"nodes": args.nodes, "edges": args.edges, "repeat": args.repeat}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        started = time.perf_counter()
        build(path, args.nodes, args.edges, args.seed)
        figures["build_s"] = round(time.perf_counter() - started, 1)
        rng = random.Random(args.seed + 1)
        with Graphonomous(path, embedder="hashing") as graph:
            graph.vector_index()
            graph.text_index()

            def ids(k: int) -> list[str]:
                return [f"n{rng.randrange(args.nodes):06d}" for _ in range(k)]

            figures["learn_from_outcome_ms"], _ = timed(
                lambda: graph.learn_from_outcome(
                    f"a{rng.random()}", rng.choice(["success", "failure"]), 0.8, ids(3)
                ),
                args.repeat,
            )
            response = (
                "The boiler pressure gauge is checked every morning. The pump seal leaks when "
                "the intake is cold. Cooling water flows through filter F2. Hello there!"
            )
            figures["learn_from_interaction_ms"], _ = timed(
                lambda: graph.learn_from_interaction("What about the boiler?", response),
                args.repeat,
            )
            figures["belief_expand_ms"], _ = timed(
                lambda: graph.belief_revise("expand", content=_sentence(rng, 999_999)),
                args.repeat,
            )
            figures["epistemic_frontier_ms"], frontier = timed(
                lambda: graph.epistemic_frontier(), 3
            )
            figures["frontier_size"] = len(frontier["frontier"])
            budget = int(graph.graph_stats()["node_count"] * 0.9)
            figures["forget_by_policy_dry_run_ms"], _ = timed(
                lambda: graph.forget_by_policy(max_nodes=budget, dry_run=True), 3
            )
            figures["forget_by_policy_ms"], real = timed(
                lambda: graph.forget_by_policy(max_nodes=budget), 1
            )
            figures["policy_forgotten"] = real["forgotten_count"]
            figures["db_bytes_before_erase"] = path.stat().st_size
            started = time.perf_counter()
            erased = graph.gdpr_erase("n000001", reason="benchmark")
            figures["gdpr_erase_total_ms"] = round((time.perf_counter() - started) * 1000.0, 2)
            figures["gdpr_erase_file_scrub_ms"] = erased["file"]["duration_ms"]
            figures["db_bytes_after_erase"] = path.stat().st_size
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(
            json.dumps(stamp(figures, __file__), indent=2) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
