"""Benchmark the κ topology engine (stdlib + graphonomous only).

    python benchmarks/bench_topology.py [--quick] [--seed N] [--json PATH]

Sections:
  1. analyze() on random 50-node subgraphs with cycles (p50/p95; seed 000 target
     p50 < 10 ms, p95 < 25 ms);
  2. canonical κ on strongly connected digraphs of 20 … 2,000 nodes, two families:
     "ring+random" (a Hamiltonian cycle plus random arcs, ~10 out-arcs per node)
     and "regular" (union of random Hamiltonian cycles, in = out = d: every flow
     must reach d, the hardest case for the flow method);
  3. analyze() on 10,000 nodes / 50,000 random arcs, and tarjan_scc() on
     100,000 nodes / 1,000,000 arcs (skipped with --quick);
  4. brute-force reference vs canonical κ at 16, 18, 20 nodes (regular, d = 3).
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

from graphonomous.model import RELATIONSHIPS, Edge
from graphonomous.topology import (
    DEFAULT_WORK_BUDGET,
    Adjacency,
    analyze,
    compute_kappa,
    kappa_work,
    tarjan_scc,
)


def names(n: int) -> list[str]:
    return [f"v{i:06d}" for i in range(n)]


def ring_plus_random(rng: random.Random, n: int, out_degree: int) -> Adjacency:
    """A random Hamiltonian cycle plus random arcs until each node has `out_degree` targets."""
    nodes = names(n)
    adjacency: Adjacency = {v: set() for v in nodes}
    order = rng.sample(nodes, n)
    for i in range(n):
        adjacency[order[i]].add(order[(i + 1) % n])
    for v in nodes:
        while len(adjacency[v]) < min(out_degree, n - 1):
            w = rng.choice(nodes)
            if w != v:
                adjacency[v].add(w)
    return adjacency


def regular(rng: random.Random, n: int, strands: int) -> Adjacency:
    """Union of `strands` random Hamiltonian cycles (in = out ≈ strands)."""
    nodes = names(n)
    adjacency: Adjacency = {v: set() for v in nodes}
    for _ in range(strands):
        order = rng.sample(nodes, n)
        for i in range(n):
            adjacency[order[i]].add(order[(i + 1) % n])
    return adjacency


def random_edges(rng: random.Random, n: int, m: int) -> list[Edge]:
    """m random edges with random relationship kinds (some excluded, some inverse)."""
    nodes = names(n)
    return [
        Edge(id=str(i), source_id=rng.choice(nodes), target_id=rng.choice(nodes), relationship=k)
        for i, k in enumerate(rng.choice(RELATIONSHIPS) for _ in range(m))
    ]


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = function()
    return (time.perf_counter() - started) * 1000.0, value


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_small(rng: random.Random, samples: int) -> dict[str, Any]:
    """Wall-clock and CPU time per analyze() call (CPU time ignores preemption on a busy box)."""
    durations, cpu, sizes, kappas = [], [], [], []
    for _ in range(samples):
        edges = random_edges(rng, 50, 150)  # ~100 arcs after excluded kinds: cycles galore
        cpu_started = time.process_time()
        ms, result = timed(partial(analyze, edges))
        cpu.append((time.process_time() - cpu_started) * 1000.0)
        durations.append(ms)
        sizes.append(max((len(s["nodes"]) for s in result["sccs"]), default=0))
        kappas.append(result["max_kappa"])
    return {
        "samples": samples,
        "p50_ms": statistics.median(durations),
        "p95_ms": percentile(durations, 0.95),
        "max_ms": max(durations),
        "cpu_p50_ms": statistics.median(cpu),
        "cpu_p95_ms": percentile(cpu, 0.95),
        "mean_largest_scc": statistics.mean(sizes),
        "max_kappa_seen": max(kappas),
    }


def bench_kappa(rng: random.Random, sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    families: list[tuple[str, Callable[[int], Adjacency]]] = [
        ("ring+random", partial(ring_plus_random, rng, out_degree=10)),
        ("regular d=10", partial(regular, rng, strands=10)),
    ]
    for family, make in families:
        for n in sizes:
            adjacency = make(n)
            members = list(adjacency)
            ms, result = timed(partial(compute_kappa, adjacency, members, work_budget=None))
            work = kappa_work(adjacency, members)
            rows.append(
                {
                    "family": family,
                    "nodes": n,
                    "arcs": sum(len(t) for t in adjacency.values()),
                    "kappa": result["kappa"],
                    "ms": ms,
                    "work": work,
                    "within_default_budget": work <= DEFAULT_WORK_BUDGET,
                }
            )
    return rows


def bench_large(rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    nodes = names(10_000)
    adjacency: Adjacency = {v: set() for v in nodes}
    for _ in range(50_000):
        adjacency[rng.choice(nodes)].add(rng.choice(nodes))
    ms, result = timed(partial(analyze, adjacency, emit_telemetry=False))
    rows.append(
        {
            "case": "analyze 10K nodes / 50K arcs",
            "ms": ms,
            "sccs": result["scc_count"],
            "largest_scc": max(len(s["nodes"]) for s in result["sccs"]),
            "max_kappa": result["max_kappa"],
        }
    )
    nodes = names(100_000)
    big: Adjacency = {v: set() for v in nodes}
    for _ in range(1_000_000):
        big[rng.choice(nodes)].add(rng.choice(nodes))
    ms, sccs = timed(partial(tarjan_scc, big))
    rows.append(
        {
            "case": "tarjan_scc 100K nodes / 1M arcs",
            "ms": ms,
            "sccs": len(sccs),
            "largest_scc": max(len(c) for c in sccs),
            "max_kappa": None,
        }
    )
    return rows


def bench_reference(rng: random.Random, sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        adjacency = regular(rng, n, 3)
        members = tarjan_scc(adjacency)[0]
        ref_ms, ref = timed(partial(compute_kappa, adjacency, members, reference=True))
        can_ms, can = timed(partial(compute_kappa, adjacency, members))
        assert ref["kappa"] == can["kappa"]
        rows.append(
            {
                "nodes": n,
                "kappa": can["kappa"],
                "reference_ms": ref_ms,
                "canonical_ms": can_ms,
                "speedup": ref_ms / can_ms,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--samples", type=int, default=300, help="50-node graphs to time")
    parser.add_argument("--quick", action="store_true", help="skip the 100K/1M and 2,000 cases")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    report: dict[str, Any] = {"python": sys.version.split()[0], "seed": args.seed}
    report["analyze_50_nodes"] = small = bench_small(rng, args.samples)
    print(f"analyze() on {small['samples']} random 50-node graphs (150 random-kind edges)")
    print(
        f"  wall p50 {small['p50_ms']:.2f} ms   p95 {small['p95_ms']:.2f} ms   "
        f"max {small['max_ms']:.2f} ms   (CPU p50 {small['cpu_p50_ms']:.2f} ms, "
        f"p95 {small['cpu_p95_ms']:.2f} ms)"
    )
    print(f"  mean largest SCC {small['mean_largest_scc']:.1f} nodes")

    sizes = [20, 100, 1000] if args.quick else [20, 100, 1000, 2000]
    report["kappa"] = rows = bench_kappa(rng, sizes)
    print("\ncanonical κ of one strongly connected digraph (unbudgeted)")
    print(f"  {'family':<13} {'nodes':>6} {'arcs':>7} {'κ':>3} {'ms':>9} {'work':>10}  budget")
    for row in rows:
        print(
            f"  {row['family']:<13} {row['nodes']:>6} {row['arcs']:>7} {row['kappa']:>3} "
            f"{row['ms']:>9.1f} {row['work']:>10}  "
            f"{'ok' if row['within_default_budget'] else 'OVER'}"
        )

    if not args.quick:
        report["large"] = large = bench_large(rng)
        print("\nlarge graphs")
        for row in large:
            print(
                f"  {row['case']:<32} {row['ms']:>9.0f} ms   {row['sccs']} SCCs, "
                f"largest {row['largest_scc']}, max κ {row['max_kappa']}"
            )

    report["reference_vs_canonical"] = ref_rows = bench_reference(rng, [16, 18, 20])
    print("\nbrute-force reference vs canonical κ (regular digraph, in = out = 3)")
    print(f"  {'nodes':>5} {'κ':>3} {'reference ms':>13} {'canonical ms':>13} {'speed-up':>9}")
    for row in ref_rows:
        print(
            f"  {row['nodes']:>5} {row['kappa']:>3} {row['reference_ms']:>13.1f} "
            f"{row['canonical_ms']:>13.2f} {row['speedup']:>8.0f}x"
        )

    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(stamp(report, __file__, argv), handle, indent=2)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
