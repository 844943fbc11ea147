"""Category 10 — stress (GraphMemBench Phase 2): 8 scenarios.

Correctness at a size where shortcuts show: hundreds of nodes and edges,
long outcome streams, concurrent writers, large content.  Sizes are chosen so
each scenario stays near a second on one core; expected values are
combinatorial facts (a ring's κ, a complete digraph's κ = n − 1, counts),
never the product's constants.  Latency is not asserted here (benchmarks/).
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.batch import BatchError
from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 10
RINGS, RING_SIZE = 100, 5  # 500 nodes, 500 edges
HAYSTACK = 1000
OUTCOMES = 120


def _ring_operations(rings: int, size: int) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = [
        {
            "op": "add_node",
            "node": {"id": f"r{r}-{i}", "content": f"Loop {r} stage {i} feeds the next stage"},
        }
        for r in range(rings)
        for i in range(size)
    ]
    ops += [
        {
            "op": "add_edge",
            "edge": {
                "source_id": f"r{r}-{i}",
                "target_id": f"r{r}-{(i + 1) % size}",
                "relationship": "causes",
            },
        }
        for r in range(rings)
        for i in range(size)
    ]
    return ops


@scenario(CATEGORY, "500-edge topology: 100 disjoint 5-rings are 100 SCCs of κ = 1")
def many_rings(graph: Graphonomous) -> tuple[bool, str]:
    graph.apply_batch(_ring_operations(RINGS, RING_SIZE))
    ids = [f"r{r}-{i}" for r in range(RINGS) for i in range(RING_SIZE)]
    topology = graph.topology_analyze(node_ids=ids)
    sizes = {len(scc["nodes"]) for scc in topology["sccs"]}
    kappas = {scc["kappa"] for scc in topology["sccs"]}
    ok = topology["scc_count"] == RINGS and sizes == {RING_SIZE} and kappas == {1}
    return ok, f"{topology['scc_count']} SCCs, sizes {sizes}, κ {kappas}"


@scenario(CATEGORY, "A needle among 1,000 nodes is retrieved first")
def needle(graph: Graphonomous) -> tuple[bool, str]:
    ops: list[dict[str, Any]] = [
        {"op": "add_node", "node": {"content": f"Routine check {i} of conveyor {i % 40} passed"}}
        for i in range(HAYSTACK - 1)
    ]
    ops.append(
        {
            "op": "add_node",
            "node": {"id": "needle", "content": "Gearbox GX-913 needs synthetic oil"},
        }
    )
    graph.apply_batch(ops)
    top = graph.retrieve_context("which oil for gearbox GX-913", limit=3)["results"]
    ids = [r["node_id"] for r in top]
    return ids[:1] == ["needle"], f"top {ids} of {graph.graph_stats()['node_count']}"


@scenario(CATEGORY, "A 501-operation batch with one bad edge applies nothing")
def batch_atomic(graph: Graphonomous) -> tuple[bool, str]:
    ops = _ring_operations(50, 5)
    ops.append(
        {
            "op": "add_edge",
            "edge": {"source_id": "ghost", "target_id": "r0-0", "relationship": "causes"},
        }
    )
    try:
        graph.apply_batch(ops)
    except BatchError as exc:
        stats = graph.graph_stats()
        ok = stats["node_count"] == 0 and stats["edge_count"] == 0
        return ok, f"rejected ({str(exc)[:60]}…), nodes {stats['node_count']}"
    return False, "a batch with a dangling edge was applied"


@scenario(CATEGORY, "Policy forgetting on 300 nodes honours max_nodes and spares pinned nodes")
def policy_at_scale(graph: Graphonomous) -> tuple[bool, str]:
    pinned = [
        graph.store_node(f"Safety rule {i}: wear goggles in bay {i}", pinned=True)["node"]["id"]
        for i in range(5)
    ]
    graph.apply_batch(
        [
            {"op": "add_node", "node": {"content": f"Sensor log {i}: bay {i % 9} nominal"}}
            for i in range(295)
        ]
    )
    result = graph.forget_by_policy(policy="hybrid", max_nodes=120)
    live = graph.list_nodes(limit=1)["total"]
    survivors = {n: graph.get_node(n)["node"]["forgotten_at"] for n in pinned}
    # Pinned nodes are exempt from the budget (SPEC, forgetting): 120 counted + 5 pinned.
    ok = (
        live == 120 + len(pinned)
        and result["forgotten_count"] == 300 - live
        and not any(survivors.values())
    )
    return ok, f"live {live} of 300, forgotten {result['forgotten_count']}, pinned kept"


@scenario(CATEGORY, "120 outcomes on one node keep confidence and Q in [0, 1] and converge")
def long_outcome_stream(graph: Graphonomous) -> tuple[bool, str]:
    node = graph.store_node("Bleed the brake line before refilling", "procedural")["node"]["id"]
    seen: list[tuple[float, float]] = []
    for i in range(OUTCOMES):
        status = "failure" if i < 20 else "success"
        update = graph.learn_from_outcome(f"bleed-{i}", status, 1.0, [node])["updates"][0]
        seen.append((update["confidence_after"], update["q_after"]))
    bounded = all(0.0 <= c <= 1.0 and 0.0 <= q <= 1.0 for c, q in seen)
    final_c, final_q = seen[-1]
    low_q = min(q for _, q in seen[:20])
    ok = bounded and low_q < 0.2 and final_q > 0.95 and final_c > 0.9
    return ok, f"min Q after failures {low_q:.3f}, final Q {final_q:.3f}, confidence {final_c:.3f}"


@scenario(CATEGORY, "Two writers on one file, 60 nodes each, lose nothing")
def concurrent_writers(graph: Graphonomous) -> tuple[bool, str]:
    from ..api import Graphonomous as Facade

    errors: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "shared.db")
        Facade(path, embedder="hashing").close()  # create the schema once

        def write(agent: str) -> None:
            facade = Facade(path, embedder="hashing")
            try:
                for i in range(60):
                    facade.store_node(f"{agent} observation {i}", agent_id=agent)
            except Exception as exc:  # reported, not raised in a thread
                errors.append(f"{agent}: {type(exc).__name__}: {exc}")
            finally:
                facade.close()

        threads = [threading.Thread(target=write, args=(a,)) for a in ("writer-a", "writer-b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        reader = Facade(path, embedder="hashing")
        try:
            counts = [reader.list_nodes(agent_id=a)["total"] for a in ("writer-a", "writer-b")]
        finally:
            reader.close()
    return counts == [60, 60] and not errors, f"counts {counts}, errors {errors[:1]}"


@scenario(CATEGORY, "A 200 KB node is stored and read back byte for byte")
def large_content(graph: Graphonomous) -> tuple[bool, str]:
    lines = [
        f"Line {i}: the kiln log records {i * 7 % 1000} degrees at hour {i}" for i in range(4000)
    ]
    text = "\n".join(lines)
    node = graph.store_node(text)["node"]["id"]
    back = graph.get_node(node)["node"]["content"]
    top = graph.retrieve_context("kiln log hour 3999", limit=1)["results"]
    ok = back == text and len(text) > 200_000 and [r["node_id"] for r in top] == [node]
    return ok, f"{len(text)} characters, identical {back == text}"


@scenario(CATEGORY, "A complete 12-node digraph has κ = n − 1 = 11")
def dense_kappa(graph: Graphonomous) -> tuple[bool, str]:
    size = 12
    ops: list[dict[str, Any]] = [
        {"op": "add_node", "node": {"id": f"c{i}", "content": f"Cell {i} signals every cell"}}
        for i in range(size)
    ]
    ops += [
        {
            "op": "add_edge",
            "edge": {"source_id": f"c{i}", "target_id": f"c{j}", "relationship": "causes"},
        }
        for i in range(size)
        for j in range(size)
        if i != j
    ]
    graph.apply_batch(ops)
    topology = graph.topology_analyze(node_ids=[f"c{i}" for i in range(size)])
    return topology["max_kappa"] == size - 1, f"κ = {topology['max_kappa']} on {size} nodes"
