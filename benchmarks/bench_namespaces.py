"""What a namespace costs, and what a neighbour costs it (SPEC §3.4).

One SQLite file per configuration, built and timed in a fresh subprocess:

* ``alone``: N nodes (synthetic topic sentences) in the default namespace;
* ``neighbour``: the same N nodes in namespace ``alpha`` and N other nodes in
  ``beta`` (only on code that has namespaces).

For each: ``retrieve_context`` and ``similarity_search`` over a fixed query set
(p50 / p95 ms, warm indexes), ``graph_stats`` (ms), and whether the ranked ids and
scores equal the ``alone`` run's (a neighbour must never change them).  With
``--checkout DIR`` the ``alone`` run is repeated on that checkout's code (the code
before namespaces), so both figures come from the same machine and run.  Each
configuration runs ``--rounds`` times, interleaved (a shared machine's load drifts);
the figures are the medians over rounds.

    python benchmarks/bench_namespaces.py [--nodes 2000] [--queries 30] [--rounds 3]
                                          [--checkout DIR] [--json out.json]
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
TOPICS = 40  # topic-clustered texts, so queries have real competitors
WORDS_PER_TOPIC = 20
WORDS_PER_TEXT = (6, 14)
SEED = 20261203


def _texts(count: int, rng: random.Random, prefix: str) -> list[str]:
    topics = [[f"{prefix}{t}w{w}" for w in range(WORDS_PER_TOPIC)] for t in range(TOPICS)]
    out = []
    for _ in range(count):
        words = topics[rng.randrange(TOPICS)]
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(*WORDS_PER_TEXT))))
    return out


def _child(mode: str, nodes: int, queries: int) -> dict[str, Any]:
    """Build and time one configuration with the graphonomous on sys.path."""
    from graphonomous import Graphonomous

    rng = random.Random(SEED)
    own = _texts(nodes, rng, "k")
    others = _texts(nodes, random.Random(SEED + 1), "k")  # the same vocabulary
    asked = [" ".join(rng.sample(text.split(), 2)) for text in rng.sample(own, queries)]
    path = Path(tempfile.mkdtemp()) / "bench.db"
    if mode == "neighbour":
        with Graphonomous(path, namespace="beta") as other:  # type: ignore[call-arg]
            _fill(other, others, "b")
        graph = Graphonomous(path, namespace="alpha")  # type: ignore[call-arg]
    else:
        graph = Graphonomous(path)
    with graph:
        _fill(graph, own, "a")
        for query in asked[:3]:  # warm the indexes
            graph.retrieve_context(query, limit=10)
            graph.similarity_search(query, limit=10)
        timings: dict[str, list[float]] = {"retrieve_context": [], "similarity_search": []}
        rankings = []
        for query in asked:
            started = time.perf_counter()
            context = graph.retrieve_context(query, limit=10)
            timings["retrieve_context"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            similar = graph.similarity_search(query, limit=10)
            timings["similarity_search"].append((time.perf_counter() - started) * 1000)
            rankings.append(
                [[r["node_id"], r["score"]] for r in context["results"]]
                + [[r["id"], r["similarity"]] for r in similar["results"]]
            )
        started = time.perf_counter()
        count = graph.graph_stats()["node_count"]
        stats_ms = (time.perf_counter() - started) * 1000
    figures: dict[str, Any] = {"mode": mode, "nodes": nodes, "node_count": count}
    for name, values in timings.items():
        ordered = sorted(values)
        figures[f"{name}_p50_ms"] = round(statistics.median(ordered), 2)
        figures[f"{name}_p95_ms"] = round(ordered[int(0.95 * (len(ordered) - 1))], 2)
    figures["graph_stats_ms"] = round(stats_ms, 2)
    figures["rankings"] = rankings
    return figures


def _fill(graph: Any, texts: list[str], prefix: str) -> None:
    operations = [
        {"op": "add_node", "node": {"id": f"{prefix}{i:06d}", "content": text}}
        for i, text in enumerate(texts)
    ]
    graph.apply_batch(operations)


def _median(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The first result with every timing replaced by its median over `results` (the
    rankings of every round must agree, else the first differing one is kept)."""
    merged = dict(results[0])
    for key, value in merged.items():
        if key.endswith("_ms") and isinstance(value, float):
            merged[key] = round(statistics.median(r[key] for r in results), 2)
    agreed = all(r["rankings"] == merged["rankings"] for r in results)
    merged["rankings"] = merged["rankings"] if agreed else None
    merged["rounds"] = len(results)
    return merged


def _run(code: Path, mode: str, nodes: int, queries: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    argv = [sys.executable, __file__, "--child", mode, str(nodes), str(queries)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs per configuration")
    parser.add_argument("--checkout", type=Path, help="code before namespaces (alone only)")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, nodes, queries = args.child[0], int(args.child[1]), int(args.child[2])
        json.dump(_child(mode, nodes, queries), sys.stdout)
        return 0
    configurations = [("this", REPO, "alone"), ("this", REPO, "neighbour")]
    if args.checkout is not None:
        configurations.insert(0, ("checkout", args.checkout, "alone"))
    rounds: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(configurations))}
    for _ in range(args.rounds):
        for index, (_, code, mode) in enumerate(configurations):
            rounds[index].append(_run(code, mode, args.nodes, args.queries))
    runs = [
        {"code": name, **_median(rounds[index])}
        for index, (name, _, _) in enumerate(configurations)
    ]
    alone = next(run for run in runs if run["code"] == "this" and run["mode"] == "alone")
    reference = alone["rankings"]
    for run in runs:
        run["rankings_equal_alone"] = reference is not None and run.pop("rankings") == reference
        print(
            f"{run['code']:8} {run['mode']:9} nodes {run['node_count']:5}  retrieve p50 "
            f"{run['retrieve_context_p50_ms']:7.2f} p95 {run['retrieve_context_p95_ms']:7.2f}  "
            f"similarity p50 {run['similarity_search_p50_ms']:6.2f}  stats "
            f"{run['graph_stats_ms']:6.2f} ms  rankings = alone: {run['rankings_equal_alone']}"
        )
    if args.json:
        checkout = None if args.checkout is None else str(args.checkout)
        report = stamp({"checkout": checkout, "runs": runs}, "benchmarks/bench_namespaces.py")
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
