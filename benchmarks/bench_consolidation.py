"""Benchmark a consolidation cycle on a 10K-node / 30K-edge graph (seed 003: < 500 ms).

    python benchmarks/bench_consolidation.py [--no-numpy] [--nodes N] [--edges E]
        [--runs R] [--changed C] [--budget B] [--seed S] [--json PATH]

Builds a synthetic graph in a temporary SQLite file (hashing embeddings of
generated sentences; mixed node types, timescales, confidences, access
counts and ages; 1 % near-duplicate pairs, 0.5 % conflicting pairs, chains
of related episodes; random edges of every kind, some co-activated), opens
it with the facade, warms the vector index (a running server has it warm),
then times:

  1. the first run (no previous run: every node counts as changed, the
     similarity stages examine `budget` of them);
  2. `runs` steady-state runs, each after `changed` nodes got new content
     through `apply_batch` (re-embedded, indexes updated) — what the idle
     timer sees after a burst of activity.

Prints per-stage wall-clock milliseconds (median over the steady runs),
totals, and the process CPU time of each run (less sensitive to other jobs
sharing the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from resultfile import stamp

REPO = Path(__file__).resolve().parent.parent
TYPES = ["episodic"] * 8 + ["semantic"] * 8 + ["procedural"] * 2 + ["temporal", "outcome"]
SCALES = ["fast"] * 4 + ["medium"] * 12 + ["slow"] * 3 + ["glacial"]
_WORD_TEXT = (
    "valve pump pressure sensor line intake flush calibrate error alarm shift operator night "
    "day boiler turbine bearing seal leak motor fan filter cooling oil water steam gauge "
    "reading spike drop restart inspect replace order part crew report north south east "
    "west station unit panel relay fuse cable breaker voltage current signal router server "
    "deploy build test release ticket customer invoice refund contract meeting budget plan"
)
WORDS = _WORD_TEXT.split()


def sentence(rng: random.Random, length: int) -> str:
    return (
        " ".join(rng.choice(WORDS) for _ in range(length)).capitalize()
        + f" #{rng.randrange(10**6)}."
    )


def build(path: str, nodes: int, edges: int, seed: int) -> None:
    """Write the synthetic graph straight through the store (one transaction)."""
    from datetime import datetime, timedelta, timezone

    from graphonomous.embed import HashingEmbedder, pack_f32
    from graphonomous.model import RELATIONSHIPS, Edge, format_time, new_id
    from graphonomous.records import node_from_fields
    from graphonomous.store import Store

    rng = random.Random(seed)
    now = datetime.now(timezone.utc)
    texts: list[str] = []
    for i in range(nodes):
        if i % 100 == 1:  # near-duplicate of the previous node
            texts.append(texts[-1] + " again")
        elif i % 200 == 3:  # same statement, another number: a conflict candidate
            texts.append(texts[-1].rsplit("#", 1)[0] + f"#{rng.randrange(10**6)}.")
        else:
            texts.append(sentence(rng, rng.randint(8, 16)))
    vectors = HashingEmbedder().embed(texts)
    ids = [new_id() for _ in range(nodes)]
    store = Store(path)
    with store.transaction():
        for i, (node_id, text, vector) in enumerate(zip(ids, texts, vectors, strict=True)):
            created = now - timedelta(days=rng.uniform(0, 60))
            node = node_from_fields(
                {
                    "id": node_id,
                    "node_type": rng.choice(TYPES),
                    "content": text,
                    "confidence": round(rng.uniform(0.04, 1.0), 4),
                    "timescale": rng.choice(SCALES),
                    "pinned": rng.random() < 0.01,
                },
                now=format_time(created),
            )
            if i % 200 == 3:  # conflicting pair: far apart in confidence
                node.confidence = 0.95
            node.access_count = rng.choice([0] * 6 + [1, 2, 5, 20, 80])
            if node.access_count:
                node.last_accessed_at = format_time(created + timedelta(days=rng.uniform(0, 1)))
            store.insert_node(node)
            store.set_embedding(node_id, pack_f32(vector), "hashing-384")
        seen: set[tuple[str, str, str]] = set()
        while len(seen) < edges:
            a, b = rng.sample(range(nodes), 2)
            if rng.random() < 0.3:  # local links: chains of related nodes
                b = min(nodes - 1, a + rng.randint(1, 3))
                if a == b:
                    continue
            key = (ids[a], ids[b], rng.choice(RELATIONSHIPS))
            if key in seen:
                continue
            seen.add(key)
            stamp = format_time(now - timedelta(days=rng.uniform(0, 30)))
            store.insert_edge(
                Edge(
                    id=new_id(),
                    source_id=key[0],
                    target_id=key[1],
                    relationship=key[2],
                    strength=round(rng.uniform(0.01, 1.0), 4),
                    co_activation_count=rng.choice([0] * 9 + [3]),
                    created_at=stamp,
                    updated_at=stamp,
                )
            )
    store.close()


def time_stages_cpu(consolidator: Any, into: dict[str, list[float]]) -> None:
    """Wrap every stage so its process CPU time (ms) is appended to `into[name]`."""

    def timed(name: str, function: Any) -> Any:
        def run(state: Any) -> Any:
            started = time.process_time()
            try:
                return function(state)
            finally:
                into.setdefault(name, []).append((time.process_time() - started) * 1000.0)

        return run

    consolidator.STAGES = tuple((i, n, timed(n, f)) for i, n, f in consolidator.STAGES)


def stage_ms(entry: dict[str, Any]) -> dict[str, float]:
    return {f"{s['stage']} {s['name']}": s["ms"] for s in entry["stages"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=30_000)
    parser.add_argument("--runs", type=int, default=5, help="steady-state runs timed")
    parser.add_argument("--changed", type=int, default=100, help="nodes changed between runs")
    parser.add_argument("--budget", type=int, default=None, help="similarity_budget override")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-numpy", action="store_true", help="force the pure-Python paths")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.no_numpy:
        os.environ["GRAPHONOMOUS_NO_NUMPY"] = "1"
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    sys.path.insert(0, str(REPO))
    from graphonomous.api import Graphonomous
    from graphonomous.learning import consolidator
    from graphonomous.learning.consolidator import DEFAULT_CONFIG, run_consolidation, with_config

    stage_cpu: dict[str, list[float]] = {}
    time_stages_cpu(consolidator, stage_cpu)

    config = DEFAULT_CONFIG if args.budget is None else with_config(similarity_budget=args.budget)
    rng = random.Random(args.seed + 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.db")
        started = time.perf_counter()
        build(path, args.nodes, args.edges, args.seed)
        build_s = time.perf_counter() - started
        with Graphonomous(path, embedder="hashing") as graph:
            started = time.perf_counter()
            index = graph.vector_index()
            index.search([1.0] * index.dimensions, 1)  # pure backend: builds its columns
            warm_s = time.perf_counter() - started
            cpu = time.process_time()
            first = run_consolidation(graph, trigger="manual", config=config)
            first_cpu_ms = (time.process_time() - cpu) * 1000.0
            steady = []
            steady_cpu = []
            for _ in range(args.runs):
                ids = rng.sample(graph.store.node_ids(), args.changed)
                graph.apply_batch(
                    [
                        {"op": "update_node", "id": i, "fields": {"content": sentence(rng, 10)}}
                        for i in ids
                    ]
                )
                cpu = time.process_time()
                steady.append(run_consolidation(graph, trigger="manual", config=config))
                steady_cpu.append((time.process_time() - cpu) * 1000.0)
            backend = index.backend
    per_stage = {
        name: round(statistics.median(stage_ms(e)[name] for e in steady), 3)
        for name in stage_ms(steady[0])
    }
    totals = [e["totals"]["duration_ms"] for e in steady]
    figures = {
        "backend": backend,
        "nodes": args.nodes,
        "edges": args.edges,
        "similarity_budget": config.similarity_budget,
        "build_s": round(build_s, 2),
        "index_warm_s": round(warm_s, 2),
        "first_run_ms": first["totals"]["duration_ms"],
        "first_run_cpu_ms": round(first_cpu_ms, 3),
        "first_run_stages_ms": stage_ms(first),
        "first_run_totals": {
            k: v for k, v in first["totals"].items() if k != "similarity_watermark"
        },
        "steady_runs": args.runs,
        "steady_changed_nodes": args.changed,
        "steady_ms_median": round(statistics.median(totals), 3),
        "steady_ms_max": round(max(totals), 3),
        "steady_cpu_ms_median": round(statistics.median(steady_cpu), 3),
        "steady_stages_ms_median": per_stage,
        "first_run_stages_cpu_ms": {n: round(v[0], 3) for n, v in stage_cpu.items()},
        "steady_stages_cpu_ms_median": {
            n: round(statistics.median(v[1:]), 3) for n, v in stage_cpu.items()
        },
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(stamp(figures, __file__, argv), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
