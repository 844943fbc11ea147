"""Benchmark the pure graph algorithms (graphonomous.algorithms).

    python benchmarks/bench_algorithms.py [--quick] [--seed N] [--json PATH] [--networkx]

Sections:
  1. personalized_pagerank on random digraphs of 1,000 and 10,000 nodes with
     3 arcs per node (3K / 30K arcs) and 5 seed nodes, pure vs NumPy: graph
     set-up alone (max_iter=0), cost per iteration (from 20 iterations with
     tol=0), the default run (tol=1e-10 ends it early on these fast-mixing
     graphs; the iteration count is found by bisection) and the projected
     cost of the full 100 iterations (slow-mixing graphs);
  2. louvain_communities on planted-partition graphs of 1,000 and 10,000 nodes
     (~30 arcs per 10 nodes), with the modularity reached (and, with
     --networkx, networkx's Louvain on the same undirected graph);
  3. dijkstra_path and k_shortest_paths (k=5, max_hops=6) on a 10,000-node
     digraph with random costs;
Sections 3 and 4 are skipped with --quick.
Times are the median CPU time (time.process_time) of several runs.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from resultfile import stamp

from graphonomous.algorithms import (
    dijkstra_path,
    k_shortest_paths,
    louvain_communities,
    modularity,
    personalized_pagerank,
)
from graphonomous.embed.vectors import numpy_available

Graph = dict[str, dict[str, float]]


def names(n: int) -> list[str]:
    return [f"v{i:06d}" for i in range(n)]


def random_digraph(rng: random.Random, n: int, out_degree: int) -> Graph:
    """Each node gets `out_degree` random targets with weights in [0.01, 1.5)."""
    nodes = names(n)
    graph: Graph = {node: {} for node in nodes}
    for node in nodes:
        for target in rng.sample(nodes, out_degree):
            graph[node][target] = rng.uniform(0.01, 1.5)
    return graph


def planted_partition(rng: random.Random, n: int, size: int, arcs_per_node: int) -> Graph:
    """Communities of `size` nodes; 85 % of each node's arcs stay inside its community."""
    nodes = names(n)
    rng.shuffle(nodes)  # ids carry no hint of the structure
    graph: Graph = {node: {} for node in nodes}
    for i, node in enumerate(nodes):
        block = (i // size) * size
        for _ in range(arcs_per_node):
            if rng.random() < 0.85:
                target = nodes[block + rng.randrange(min(size, n - block))]
            else:
                target = nodes[rng.randrange(n)]
            if target != node:
                graph[node][target] = 1.0
    return graph


def median_ms(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median CPU time of `repeats` calls (process time: robust on a shared machine)."""
    times = []
    result = None
    for _ in range(repeats):
        start = time.process_time()
        result = function()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times), result


def iterations_used(graph: Graph, seeds: dict[str, float]) -> int:
    """Smallest max_iter whose result equals the default run's (bisection)."""
    target = personalized_pagerank(graph, seeds, use_numpy=False)
    low, high = 0, 100
    while low < high:
        middle = (low + high) // 2
        if personalized_pagerank(graph, seeds, max_iter=middle, use_numpy=False) == target:
            high = middle
        else:
            low = middle + 1
    return low


def bench_pagerank(rng: random.Random, sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    backends = [False, True] if numpy_available() else [False]
    rows = []
    for n in sizes:
        graph = random_digraph(rng, n, 3)
        seeds = {node: 1.0 for node in rng.sample(sorted(graph), 5)}
        iterations = iterations_used(graph, seeds)
        results = {}
        for use_numpy in backends:
            run = partial(personalized_pagerank, graph, seeds, use_numpy=use_numpy)
            run(max_iter=1)  # warm-up (imports NumPy on first use)
            setup, _ = median_ms(partial(run, max_iter=0), repeats)
            twenty, _ = median_ms(partial(run, max_iter=20, tol=0.0), repeats)
            full, scores = median_ms(run, repeats)
            results[use_numpy] = scores
            rows.append(
                {
                    "nodes": n,
                    "arcs": 3 * n,
                    "backend": "numpy" if use_numpy else "pure",
                    "setup_ms": setup,
                    "per_iteration_ms": (twenty - setup) / 20,
                    "default_iterations": iterations,
                    "default_ms": full,
                    "hundred_iterations_ms": setup + 100 * (twenty - setup) / 20,
                }
            )
        if len(results) == 2:
            rows[-1]["max_abs_diff_vs_pure"] = max(
                abs(results[True][node] - results[False][node]) for node in graph
            )
    return rows


def bench_louvain(
    rng: random.Random, sizes: list[int], repeats: int, with_networkx: bool
) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        graph = planted_partition(rng, n, 25, 3)
        arcs = sum(len(row) for row in graph.values())
        ms, communities = median_ms(partial(louvain_communities, graph), repeats)
        row: dict[str, Any] = {
            "nodes": n,
            "arcs": arcs,
            "ms": ms,
            "communities": len(communities),
            "modularity": modularity(graph, communities),
        }
        if with_networkx:
            import networkx as nx
            from networkx.algorithms import community as nx_community

            undirected = nx.Graph()
            undirected.add_nodes_from(graph)
            for source, targets in graph.items():
                for target, weight in targets.items():
                    if undirected.has_edge(source, target):
                        undirected[source][target]["weight"] += weight
                    else:
                        undirected.add_edge(source, target, weight=weight)
            nx_ms, theirs = median_ms(
                partial(nx_community.louvain_communities, undirected, weight="weight", seed=0),
                repeats,
            )
            row["networkx_ms"] = nx_ms
            row["networkx_modularity"] = nx_community.modularity(undirected, theirs)
        rows.append(row)
    return rows


def bench_paths(rng: random.Random, repeats: int) -> dict[str, Any]:
    graph = random_digraph(rng, 10_000, 3)
    nodes = sorted(graph)
    pairs = [tuple(rng.sample(nodes, 2)) for _ in range(20)]
    start = time.process_time()
    found = sum(dijkstra_path(graph, s, t) is not None for s, t in pairs)
    dijkstra_ms = (time.process_time() - start) * 1000 / len(pairs)
    start = time.process_time()
    for s, t in pairs[:repeats]:
        k_shortest_paths(graph, s, t, 5, max_hops=6)
    yen_ms = (time.process_time() - start) * 1000 / min(repeats, len(pairs))
    return {
        "nodes": 10_000,
        "arcs": 30_000,
        "pairs": len(pairs),
        "reachable": found,
        "dijkstra_ms": dijkstra_ms,
        "yen_k5_h6_ms": yen_ms,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--quick", action="store_true", help="1,000-node cases only, fewer runs")
    parser.add_argument("--networkx", action="store_true", help="also time networkx's Louvain")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    sizes = [1_000] if args.quick else [1_000, 10_000]
    repeats = 3 if args.quick else 5
    report: dict[str, Any] = {"python": sys.version.split()[0], "seed": args.seed}

    report["pagerank"] = rows = bench_pagerank(rng, sizes, repeats)
    print("personalized_pagerank (5 seeds, 3 arcs/node; CPU ms, median)")
    print(
        f"  {'nodes':>6} {'arcs':>6} {'backend':>7} {'setup':>7} {'per it':>7} "
        f"{'default (its)':>15} {'100 its':>8}"
    )
    for row in rows:
        print(
            f"  {row['nodes']:>6} {row['arcs']:>6} {row['backend']:>7} {row['setup_ms']:>7.1f} "
            f"{row['per_iteration_ms']:>7.2f} {row['default_ms']:>9.1f} "
            f"({row['default_iterations']:>3}) {row['hundred_iterations_ms']:>8.1f}"
            + (
                f"   |numpy - pure| <= {row['max_abs_diff_vs_pure']:.1e}"
                if "max_abs_diff_vs_pure" in row
                else ""
            )
        )

    report["louvain"] = louvain_rows = bench_louvain(rng, sizes, repeats, args.networkx)
    print("\nlouvain_communities (planted partition, communities of 25)")
    for row in louvain_rows:
        line = (
            f"  {row['nodes']:>6} nodes {row['arcs']:>6} arcs  {row['ms']:>8.1f} ms  "
            f"{row['communities']:>4} communities  Q = {row['modularity']:.4f}"
        )
        if "networkx_ms" in row:
            line += (
                f"   (networkx {row['networkx_ms']:.1f} ms, Q = {row['networkx_modularity']:.4f})"
            )
        print(line)

    if not args.quick:
        report["paths"] = paths = bench_paths(rng, repeats)
        print("\npaths on 10,000 nodes / 30,000 arcs (random costs)")
        print(
            f"  dijkstra_path {paths['dijkstra_ms']:.1f} ms/pair "
            f"({paths['reachable']}/{paths['pairs']} reachable); "
            f"k_shortest_paths k=5 max_hops=6 {paths['yen_k5_h6_ms']:.1f} ms/pair"
        )

    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(stamp(report, __file__, argv), handle, indent=2)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
