"""Latency of retrieve_context per effort level, pure Python and with NumPy.

For each graph size (default 1K and 10K nodes, about 3 edges per node of
mixed kinds between distinct node pairs, synthetic topic-clustered sentences;
``edges`` counts them with the ``causes`` edges the write-time relation linker
draws from the sentences' "because of", ``drawn_edges`` the generator's) the
script builds one SQLite file, then — in a fresh subprocess per backend (pure:
``GRAPHONOMOUS_NO_NUMPY=1``; NumPy) — opens it, warms the indexes, and times
``retrieve_context`` for effort 0, 3, 6 and 9 over a fixed query set
(p50 / p95 / max in ms).  It also reports one-off costs: building the BM25
index from the nodes table, building the whole-graph snapshot, the first
(cold) call.  Seed 002's targets: effort 0 < 5 ms, 1–4 ≈ 20 ms, 5–7 ≈ 50 ms,
8–10 ≈ 120 ms.

    python benchmarks/bench_retrieval_latency.py [--sizes 1000 10000] [--queries 40]
                                                 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from resultfile import stamp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

EFFORTS = (0, 3, 6, 9)
EDGES_PER_NODE = 3
TOPICS = 60
WORDS_PER_TOPIC = 25
SAME_TOPIC_EDGE_SHARE = 0.8
KINDS = (
    "related",
    "supports",
    "causes",
    "part_of",
    "depends_on",
    "follows",
    "similar_to",
    "derived_from",
    "contradicts",
    "co_occurs",
)
SUBJECTS = ("the team", "our service", "the pump", "Caroline", "the database", "a customer")
VERBS = ("reported", "fixed", "discussed", "measured", "planned", "replaced", "reviewed")


def _vocabulary(rng: random.Random) -> list[list[str]]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    seen: set[str] = set()
    topics: list[list[str]] = []
    for _ in range(TOPICS):
        words: list[str] = []
        while len(words) < WORDS_PER_TOPIC:
            word = "".join(rng.choice(letters) for _ in range(rng.randint(4, 9)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        topics.append(words)
    return topics


def _sentence(rng: random.Random, words: list[str]) -> str:
    picked = rng.sample(words, 4)
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} the {picked[0]} {picked[1]} "
        f"near {picked[2]} because of {picked[3]}"
    )


def _linked_pairs(graph: Any, size: int) -> set[tuple[int, int]]:
    """Node pairs (lower index first) already joined by an edge: the write-time relation
    linker turns the sentences' "because of" into `causes` edges, and a second edge of
    the same kind between the same nodes is refused, so the generator draws around them."""
    pairs: set[tuple[int, int]] = set()
    for i in range(size):
        listed = graph.manage_edge("list", node_id=f"n{i:06d}", direction="out", limit=10_000)
        for edge in listed["edges"]:
            j = int(edge["target_id"][1:])
            pairs.add((min(i, j), max(i, j)))
    return pairs


def build_database(path: Path, size: int, seed: int = 42) -> dict[str, Any]:
    """Fill a new database with `size` nodes and ~3 edges per node; returns build facts."""
    from graphonomous import Graphonomous

    rng = random.Random(seed)
    topics = _vocabulary(rng)
    topic_of = [rng.randrange(TOPICS) for _ in range(size)]
    members: dict[int, list[int]] = {}
    for i, topic in enumerate(topic_of):
        members.setdefault(topic, []).append(i)
    started = time.perf_counter()
    with Graphonomous(path) as graph:
        nodes = [
            {
                "op": "add_node",
                "node": {
                    "id": f"n{i:06d}",
                    "content": _sentence(rng, topics[topic_of[i]]),
                    "confidence": round(rng.uniform(0.3, 0.95), 3),
                },
            }
            for i in range(size)
        ]
        graph.apply_batch(nodes)
        linked = _linked_pairs(graph, size)
        edges: set[tuple[int, int, str]] = set()
        for i in range(size):
            for _ in range(EDGES_PER_NODE):
                if rng.random() < SAME_TOPIC_EDGE_SHARE:
                    j = rng.choice(members[topic_of[i]])
                else:
                    j = rng.randrange(size)
                pair = (min(i, j), max(i, j))
                if j != i and pair not in linked:
                    linked.add(pair)
                    edges.add((i, j, rng.choice(KINDS)))
        operations = [
            {
                "op": "add_edge",
                "edge": {
                    "source_id": f"n{i:06d}",
                    "target_id": f"n{j:06d}",
                    "relationship": kind,
                    "strength": round(rng.uniform(0.1, 1.0), 3),
                },
            }
            for i, j, kind in sorted(edges)
        ]
        graph.apply_batch(operations)
        total_edges = int(graph.graph_stats()["edge_count"])
    queries = [" ".join(rng.sample(topics[rng.randrange(TOPICS)], 3)) for _ in range(200)]
    return {
        "nodes": size,
        "edges": total_edges,
        "drawn_edges": len(edges),
        "build_s": round(time.perf_counter() - started, 2),
        "queries": queries,
    }


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(path: str, queries: list[str], count: int) -> dict[str, Any]:
    """Run in the benchmark subprocess: one-off costs, then per-effort latencies."""
    from graphonomous import Graphonomous
    from graphonomous.embed import numpy_available
    from graphonomous.retrieval import build_snapshot

    out: dict[str, Any] = {"backend": "numpy" if numpy_available() else "pure"}
    with Graphonomous(path) as graph:
        started = time.perf_counter()
        graph.vector_index()
        out["vector_index_load_ms"] = round((time.perf_counter() - started) * 1000, 1)
        started = time.perf_counter()
        graph.text_index()
        out["bm25_build_ms"] = round((time.perf_counter() - started) * 1000, 1)
        started = time.perf_counter()
        build_snapshot(graph.store)
        out["snapshot_build_ms"] = round((time.perf_counter() - started) * 1000, 1)
        cold: dict[str, float] = {}
        for effort in EFFORTS:
            started = time.perf_counter()
            graph.retrieve_context(queries[0], effort=effort)
            cold[str(effort)] = round((time.perf_counter() - started) * 1000, 1)
        out["cold_first_call_ms"] = cold
        levels: dict[str, Any] = {}
        for effort in EFFORTS:
            times: list[float] = []
            stages: dict[str, list[float]] = {}
            for query in queries[1 : count + 1]:
                started = time.perf_counter()
                result = graph.retrieve_context(query, effort=effort)
                times.append((time.perf_counter() - started) * 1000)
                for stage, ms in result["stats"]["timings_ms"].items():
                    stages.setdefault(stage, []).append(ms)
            levels[str(effort)] = {
                "p50_ms": round(statistics.median(times), 2),
                "p95_ms": round(_percentile(times, 0.95), 2),
                "max_ms": round(max(times), 2),
                "stage_p50_ms": {k: round(statistics.median(v), 2) for k, v in stages.items()},
            }
        out["efforts"] = levels
    return out


def _child(path: str, queries_file: str, count: int, no_numpy: bool) -> dict[str, Any]:
    env = dict(os.environ)
    env["GRAPHONOMOUS_NO_NUMPY"] = "1" if no_numpy else "0"
    done = subprocess.run(
        [sys.executable, __file__, "--child", path, queries_file, str(count)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=40, help="timed queries per effort")
    parser.add_argument("--json", metavar="PATH", help="write all figures as JSON")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        path, queries_file, count = args.child
        queries = json.loads(Path(queries_file).read_text(encoding="utf-8"))
        print(json.dumps(measure(path, queries, int(count))))
        return 0
    try:
        import numpy  # noqa: F401

        backends = [True, False]
    except ImportError:
        backends = [True]
    report: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            db = Path(tmp) / f"bench-{size}.db"
            facts = build_database(db, size)
            queries_file = Path(tmp) / f"queries-{size}.json"
            queries_file.write_text(json.dumps(facts.pop("queries")), encoding="utf-8")
            for no_numpy in backends:
                figures = _child(str(db), str(queries_file), args.queries, no_numpy)
                report.append({**facts, **figures})
    print(f"{'nodes':>6} {'edges':>6} {'backend':<6} {'effort':>6} {'p50 ms':>8} {'p95 ms':>8}")
    for row in report:
        for effort, figures in row["efforts"].items():
            print(
                f"{row['nodes']:>6} {row['edges']:>6} {row['backend']:<6} {effort:>6} "
                f"{figures['p50_ms']:>8.2f} {figures['p95_ms']:>8.2f}"
            )
    print()
    for row in report:
        print(
            f"{row['nodes']} nodes, {row['backend']}: BM25 build {row['bm25_build_ms']} ms, "
            f"snapshot {row['snapshot_build_ms']} ms, vector index load "
            f"{row['vector_index_load_ms']} ms, cold first calls {row['cold_first_call_ms']}"
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps(stamp(report, __file__), indent=2) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
