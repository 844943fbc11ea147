"""Foundation figures: the store and the facade's write/read paths.

    python benchmarks/bench_store.py [--nodes 10000] [--no-numpy] [--json OUT]

Measures, on a fresh SQLite file with the default hashing embedder:
batch insert of N nodes (+ 3 edges per node) through `Graphonomous.apply_batch`
(one transaction, embeddings included), opening the file again (cold) and
loading the similarity index, `get_node` by id, `list_edges_between` on 50 ids,
embedding 1,000 sentences, and exact top-10 similarity over the N nodes.
`--no-numpy` sets GRAPHONOMOUS_NO_NUMPY=1 before graphonomous is imported.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from resultfile import stamp

WORDS = [
    "valve",
    "pressure",
    "pump",
    "error",
    "sensor",
    "reset",
    "line",
    "flush",
    "intake",
    "hydraulic",
    "shutdown",
    "weekend",
    "monday",
    "spike",
    "calibrate",
    "operator",
    "manual",
    "procedure",
    "alarm",
    "threshold",
    "temperature",
    "flow",
    "motor",
    "bearing",
    "vibration",
    "filter",
    "coolant",
    "leak",
    "seal",
    "gasket",
    "torque",
    "inspection",
    "report",
]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--no-numpy", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.no_numpy:
        os.environ["GRAPHONOMOUS_NO_NUMPY"] = "1"
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from graphonomous import Graphonomous
    from graphonomous.embed import get_embedder, numpy_available

    rng = random.Random(7)
    n = args.nodes
    ids = [f"n{i:06d}" for i in range(n)]
    operations: list[dict[str, Any]] = [
        {"op": "add_node", "node": {"id": node_id, "content": sentence(rng)}} for node_id in ids
    ]
    seen: set[tuple[str, str]] = set()
    while len(seen) < 3 * n:
        a, b = rng.sample(ids, 2)
        if (a, b) not in seen:
            seen.add((a, b))
            operations.append(
                {
                    "op": "add_edge",
                    "edge": {"source_id": a, "target_id": b, "relationship": "related"},
                }
            )
    report: dict[str, Any] = {"nodes": n, "edges": 3 * n, "numpy": numpy_available()}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        with Graphonomous(db) as graph:
            report["batch_insert_ms"] = timed(lambda: graph.apply_batch(operations))
        start = time.perf_counter()
        graph = Graphonomous(db)
        report["open_ms"] = (time.perf_counter() - start) * 1000.0
        report["index_load_ms"] = timed(graph.vector_index)
        probes = rng.sample(ids, 200)
        gets = [timed(lambda node_id=node_id: graph.get_node(node_id)) for node_id in probes]
        report["get_node_ms_p50"] = statistics.median(gets)
        between = [
            timed(lambda: graph.store.list_edges_between(rng.sample(ids, 50))) for _ in range(200)
        ]
        report["list_edges_between_50_ms_p50"] = statistics.median(between)
        texts = [sentence(rng) for _ in range(1000)]
        report["embed_1k_sentences_ms"] = timed(lambda: get_embedder("hashing").embed(texts))
        queries = [sentence(rng) for _ in range(100)]
        searches = [timed(lambda q=q: graph.similarity_search(q, 10)) for q in queries]
        report["top10_similarity_ms_p50"] = statistics.median(searches)
        report["top10_similarity_ms_p95"] = percentile(searches, 0.95)
        graph.close()
    for key, value in report.items():
        print(f"{key:32} {value:.2f}" if isinstance(value, float) else f"{key:32} {value}")
    if args.json:
        args.json.write_text(json.dumps(stamp(report, __file__), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
