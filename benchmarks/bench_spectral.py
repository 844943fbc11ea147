"""Benchmark the spectral metrics (graphonomous.algorithms.spectral).

    python benchmarks/bench_spectral.py [--sizes 100,300,1000,10000] [--json PATH]

For each size: a planted-partition graph (communities of 50 nodes, ~3 arcs per
node inside, 1 in 10 nodes with an arc to a random other community; connected
by a ring through the communities), timed end to end with `graph_metrics`
(components, λ₂ per component, Louvain, Q, entropy) on the pure and the NumPy
backend, and λ₂ checked against a dense ``numpy.linalg.eigvalsh`` when the
graph is small enough (≤ 3,000 nodes).  Above the dense limits λ₂ comes from
Lanczos: the report gives its error bound and, where checked, its true error.
Times are wall-clock seconds of one run (these are minutes-long at 10K).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from resultfile import stamp

from graphonomous.algorithms.spectral import graph_metrics, normalized_laplacian
from graphonomous.embed.vectors import numpy_available

Graph = dict[str, dict[str, float]]
COMMUNITY = 50
CHECK_LIMIT = 3000


def planted(n: int, seed: int) -> Graph:
    rng = random.Random(seed)
    ids = [f"v{i:06d}" for i in range(n)]
    graph: Graph = {node: {} for node in ids}
    groups = [ids[i : i + COMMUNITY] for i in range(0, n, COMMUNITY)]
    for g, group in enumerate(groups):
        for k, node in enumerate(group):
            for _ in range(3):
                other = rng.choice(group)
                if other != node:
                    graph[node][other] = 1.0
            if len(group) > 1:
                graph[node][group[(k + 1) % len(group)]] = 1.0
            if rng.random() < 0.1 and len(groups) > 1:
                graph[node][
                    rng.choice(groups[(g + rng.randrange(1, len(groups))) % len(groups)])
                ] = 1.0
        if len(groups) > 1:
            graph[group[0]][groups[(g + 1) % len(groups)][0]] = 1.0
    return graph


def run(n: int, seed: int) -> dict[str, Any]:
    graph = planted(n, seed)
    row: dict[str, Any] = {"nodes": n, "arcs": sum(map(len, graph.values()))}
    reference = None
    if n <= CHECK_LIMIT and numpy_available():
        import numpy as np

        _, rows = normalized_laplacian(graph)
        reference = float(np.linalg.eigvalsh(np.array(rows))[1])
    for backend in ("pure", "numpy") if numpy_available() else ("pure",):
        start = time.perf_counter()
        metrics = graph_metrics(graph, backend=backend)
        seconds = time.perf_counter() - start
        (component,) = metrics["components"]
        entry = {
            "seconds": round(seconds, 3),
            "method": component["method"],
            "lambda2": component["algebraic_connectivity"],
            "error_bound": component["error_bound"],
            "modularity": round(metrics["modularity"], 4),
            "communities": metrics["community_count"],
        }
        if reference is not None:
            entry["abs_error"] = abs(component["algebraic_connectivity"] - reference)
        row[backend] = entry
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,300,1000,10000")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args(argv)
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        row = run(n, args.seed)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as handle:
            json.dump(stamp(rows, __file__, argv), handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
