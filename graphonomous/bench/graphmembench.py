"""GraphMemBench v2: eight deterministic κ-sensitive tiers, run against the facade.

Rules of this file: every fixture is generated from ``random.Random(f"{seed}:{tier}")``
(so a run is reproducible anywhere); the expected answers come from the
generator's own construction or from `brute_force_kappa` here (bitmask
enumeration of seed 000's definition) — never from the product's engine; the
product is used only through `Graphonomous` (store_node, store_edge,
retrieve_context, trace_evidence_path) plus `algorithms.dag` for T8.

Tiers (one structure per question, all structures of a tier in one graph,
each named by a unique code word so a question retrieves its own structure):

- T1 linear chains (κ = 0 control), T2 branching DAGs with merges (κ = 0
  control), T3 directed 3–5-cycles (κ = 1), T4 bidirectional rings of 5–7
  nodes plus `density` bidirectional chords (κ ≥ 2), T5 old/new fact pairs —
  even questions a mutual ``contradicts`` (κ = 1), odd ones a one-way
  ``supersedes`` (κ = 0), T6 6-node SCCs on a density ladder 1..5 (κ
  discrimination), T7 evidence chains of 2–6 hops with a weaker detour,
  T8 layered causal DAGs (ordering and critical depth).

Topology "off" means the benchmark does not read the ``topology`` field of
the answer (the signal a κ-blind memory would give): κ metrics are then those
of an empty topology, exactly as upstream's off runs.
"""

from __future__ import annotations

import itertools
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..algorithms.dag import critical_depths, sources_and_sinks, topological_order
from ..api import Graphonomous

TIERS: Final = (1, 2, 3, 4, 5, 6, 7, 8)
DEFAULT_QUESTIONS: Final = 100
DEFAULT_SEED: Final = 42
DEFAULT_DENSITY: Final = 2
RETRIEVE_LIMIT: Final = 10
"""Results per question: every structure has at most 10 nodes (T8: ≤ 10)."""
LATENCY_TARGET_MS: Final = 50.0
# Syllables of the code words; three of them give 12³ = 1,728 distinct words.
_SYLLABLES: Final = ("ba", "ke", "lo", "mu", "ri", "sa", "to", "vi", "ze", "nu", "po", "da")
_ROLES: Final = ("sensor", "relay", "valve", "gauge", "filter", "pump", "switch", "meter", "coil")

Arc = tuple[str, str]


@dataclass
class Structure:
    """One planted structure and the question asked about it."""

    code: str
    nodes: list[tuple[str, str]]  # (id, content)
    edges: list[tuple[str, str, str, float]]  # (source, target, relationship, strength)
    expected_kappa: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def query(self) -> str:
        return f"what happens in the {self.code} line?"

    @property
    def node_ids(self) -> list[str]:
        return [node_id for node_id, _ in self.nodes]


def code_word(i: int) -> str:
    """The i-th code word (i < 1,728): three syllables and a final k."""
    s = _SYLLABLES
    return s[i % 12] + s[(i // 12) % 12] + s[(i // 144) % 12] + "k"


def brute_force_kappa(nodes: Sequence[str], arcs: Sequence[Arc]) -> int:
    """Seed 000's κ by enumeration: min over bipartitions (A, B) of min(e(A→B), e(B→A)).

    Assumes `nodes` are one SCC (≤ 12 nodes); self-loops and parallel arcs
    are counted once, as the definition says.  O(2ⁿ · E).
    """
    index = {node: i for i, node in enumerate(nodes)}
    pairs = {(index[u], index[v]) for u, v in arcs if u != v and u in index and v in index}
    n = len(nodes)
    if n < 2:
        return 0
    best = len(pairs)
    for mask in range(1, (1 << n) - 1):
        ab = sum(1 for u, v in pairs if mask >> u & 1 and not mask >> v & 1)
        ba = sum(1 for u, v in pairs if mask >> v & 1 and not mask >> u & 1)
        best = min(best, ab, ba)
    return best


def _content(code: str, j: int, rng: random.Random) -> str:
    return f"The {code} line, unit {j}: the {rng.choice(_ROLES)} of stage {j} in {code}."


def _structure(code: str, size: int, rng: random.Random) -> tuple[list[tuple[str, str]], list[str]]:
    ids = [f"{code}-{j}" for j in range(size)]
    return [(node_id, _content(code, j, rng)) for j, node_id in enumerate(ids)], ids


def gen_chain(code: str, rng: random.Random, _: int) -> Structure:
    nodes, ids = _structure(code, rng.randint(3, 6), rng)
    edges = [(a, b, "causes", 0.8) for a, b in itertools.pairwise(ids)]
    return Structure(code, nodes, edges, 0)


def gen_dag(code: str, rng: random.Random, _: int) -> Structure:
    nodes, ids = _structure(code, rng.randint(5, 8), rng)
    edges = [(ids[rng.randrange(j)], ids[j], "supports", 0.8) for j in range(1, len(ids))]
    for _ in range(2):  # merges: an extra arc from an earlier to a later node
        a, b = sorted(rng.sample(range(len(ids)), 2))
        edges.append((ids[a], ids[b], "causes", 0.6))
    return Structure(code, nodes, sorted(set(edges)), 0)


def gen_cycle(code: str, rng: random.Random, _: int) -> Structure:
    nodes, ids = _structure(code, rng.randint(3, 5), rng)
    edges = [(ids[j], ids[(j + 1) % len(ids)], "causes", 0.8) for j in range(len(ids))]
    return Structure(code, nodes, edges, 1)


def gen_ring(code: str, rng: random.Random, density: int) -> Structure:
    n = rng.randint(5, 7)
    nodes, ids = _structure(code, n, rng)
    pairs = {(j, (j + 1) % n) for j in range(n)}
    chords = [(a, b) for a in range(n) for b in range(a + 2, n) if (a, b) != (0, n - 1)]
    pairs.update(rng.sample(chords, min(density, len(chords))))
    edges = []
    for a, b in sorted(pairs):
        edges += [(ids[a], ids[b], "depends_on", 0.7), (ids[b], ids[a], "depends_on", 0.7)]
    kappa = brute_force_kappa(ids, [(u, v) for u, v, _, _ in edges])
    return Structure(code, nodes, edges, kappa)


def gen_belief_pair(code: str, rng: random.Random, question: int) -> Structure:
    old, new = f"{code}-old", f"{code}-new"
    nodes = [
        (old, f"The {code} line runs at {rng.randint(20, 60)} bar (measured last year)."),
        (new, f"The {code} line runs at {rng.randint(61, 99)} bar (measured this week)."),
    ]
    if question % 2 == 0:
        edges = [(new, old, "contradicts", 0.9), (old, new, "contradicts", 0.9)]
        return Structure(code, nodes, edges, 1, {"kind": "contradicts", "fresh": new})
    return Structure(
        code, nodes, [(new, old, "supersedes", 0.9)], 0, {"kind": "supersedes", "fresh": new}
    )


def gen_ladder(code: str, rng: random.Random, question: int) -> Structure:
    level = question % 5 + 1
    nodes, ids = _structure(code, 6, rng)
    n = len(ids)
    arcs = [(j, (j + 1) % n) for j in range(n)]  # level 1: a directed ring, κ = 1
    if level >= 2:
        arcs += [((j + 1) % n, j) for j in range(n)]  # both ways: κ = 2
    if level >= 3:
        arcs += [(j, (j + 2) % n) for j in range(n)]  # skip-one chords
    if level >= 4:
        arcs += [((j + 2) % n, j) for j in range(n)]
    if level >= 5:
        arcs += [(j, (j + 3) % n) for j in range(n)]
    edges = [(ids[a], ids[b], "depends_on", 0.7) for a, b in sorted(set(arcs))]
    kappa = brute_force_kappa(ids, [(u, v) for u, v, _, _ in edges])
    return Structure(code, nodes, edges, kappa, {"level": level})


def gen_path(code: str, rng: random.Random, question: int) -> Structure:
    hops = question % 5 + 2
    nodes, ids = _structure(code, hops + 1, rng)
    detour = [f"{code}-alt{j}" for j in range(hops)]
    nodes += [(d, f"A side note on the {code} line, detour {j}.") for j, d in enumerate(detour)]
    edges = [(a, b, "supports", 0.9) for a, b in itertools.pairwise(ids)]
    chain = [ids[0], *detour, ids[-1]]
    edges += [(a, b, "supports", 0.5) for a, b in itertools.pairwise(chain)]
    return Structure(code, nodes, edges, 0, {"path": ids, "hops": hops})


def gen_causal(code: str, rng: random.Random, _: int) -> Structure:
    layers: list[list[str]] = []
    count = 0
    for _layer in range(rng.randint(3, 5)):
        width = rng.randint(1, 2)
        layers.append([f"{code}-{count + k}" for k in range(width)])
        count += width
    nodes = [
        (node, _content(code, j, rng))
        for j, node in enumerate(n for layer in layers for n in layer)
    ]
    edges: list[tuple[str, str, str, float]] = []
    depth: dict[str, int] = {node: 0 for node in layers[0]}
    for d in range(1, len(layers)):
        for node in layers[d]:
            parents = rng.sample(layers[d - 1], rng.randint(1, len(layers[d - 1])))
            edges += [(p, node, "causes", 0.8) for p in sorted(parents)]
            depth[node] = d
    for d in range(len(layers) - 2):  # a long-range arc that does not change any depth
        edges.append((layers[d][0], layers[d + 2][-1], "causes", 0.6))
    return Structure(code, nodes, sorted(set(edges)), 0, {"depth": depth})


GENERATORS: Final[Mapping[int, Callable[[str, random.Random, int], Structure]]] = {
    1: gen_chain,
    2: gen_dag,
    3: gen_cycle,
    4: gen_ring,
    5: gen_belief_pair,
    6: gen_ladder,
    7: gen_path,
    8: gen_causal,
}
TIER_NAMES: Final = {
    1: "linear chains (κ=0 control)",
    2: "branching DAG (κ=0 control)",
    3: "disjoint directed cycles (κ=1)",
    4: "bidirectional ring + chords (κ≥2)",
    5: "contradicts vs supersedes pairs",
    6: "density ladder 1..5 (κ discrimination)",
    7: "evidence paths",
    8: "causal DAG ordering",
}


def generate(
    tier: int, questions: int, seed: int, density: int = DEFAULT_DENSITY
) -> list[Structure]:
    """The tier's structures, one per question; deterministic in all four arguments."""
    rng = random.Random(f"{seed}:{tier}")
    make = GENERATORS[tier]
    return [make(code_word(q), rng, density if tier == 4 else q) for q in range(questions)]


def load(graph: Graphonomous, structures: Sequence[Structure]) -> None:
    """Store every structure's nodes, then its edges, through the facade."""
    for structure in structures:
        for node_id, content in structure.nodes:
            graph.store_node(content, node_id=node_id)
    for structure in structures:
        for source, target, relationship, strength in structure.edges:
            graph.store_edge(source, target, relationship, strength=strength)


def _planted_scc(
    topology: Mapping[str, Any] | None, members: Sequence[str]
) -> dict[str, Any] | None:
    """The reported SCC whose node set is exactly the planted one, if any."""
    if topology is None:
        return None
    wanted = set(members)
    for scc in topology["sccs"]:
        if set(scc["nodes"]) == wanted:
            found: dict[str, Any] = scc
            return found
    return None


def _kappa_question(
    structure: Structure, answer: Mapping[str, Any], topology_on: bool
) -> dict[str, Any]:
    topology = answer["topology"] if topology_on else None
    own = set(structure.node_ids)
    retrieved = [r["node_id"] for r in answer["results"]]
    scc = _planted_scc(topology, structure.node_ids)
    spurious = topology is not None and any(
        scc_["kappa"] > 0 and own & set(scc_["nodes"]) for scc_ in topology["sccs"]
    )
    routing = topology["routing"] if topology is not None else "fast"
    kappa = scc["kappa"] if scc is not None else 0
    expected = structure.expected_kappa
    fresh = structure.extra.get("fresh")
    return {
        "detected": scc is not None and scc["kappa"] > 0,
        "spurious": spurious,
        "kappa": kappa,
        "kappa_exact": kappa == expected,
        "routing_ok": routing == ("deliberate" if expected > 0 else "fast"),
        "max_kappa": topology["max_kappa"] if topology is not None else 0,
        "node_recall": len(own & set(retrieved)) / len(own),
        "fresh_top1": fresh is not None and bool(retrieved) and retrieved[0] == fresh,
    }


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 4) if values else 0.0


def _kappa_metrics(
    tier: int, structures: Sequence[Structure], rows: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    positives = [r for s, r in zip(structures, rows, strict=True) if s.expected_kappa > 0]
    negatives = [r for s, r in zip(structures, rows, strict=True) if s.expected_kappa == 0]
    metrics: dict[str, Any] = {
        # Controls: the share of questions where a κ>0 loop was reported at all.
        "kappa_recall": _mean([float(r["detected"]) for r in positives])
        if positives
        else _mean([float(r["spurious"]) for r in rows]),
        "false_kappa_rate": _mean([float(r["spurious"]) for r in negatives]),
        "routing_precision": _mean([float(r["routing_ok"]) for r in rows]),
        "max_kappa": max((r["max_kappa"] for r in rows), default=0),
        "node_recall": _mean([r["node_recall"] for r in rows]),
    }
    if tier in (4, 6):
        metrics["kappa_discrim_accuracy"] = _mean([float(r["kappa_exact"]) for r in positives])
        metrics["kappa_mae"] = _mean(
            [abs(r["kappa"] - s.expected_kappa) for s, r in zip(structures, rows, strict=True)]
        )
    if tier == 5:
        supersedes = [
            r for s, r in zip(structures, rows, strict=True) if s.extra["kind"] == "supersedes"
        ]
        metrics["fresh_belief_top1_rate"] = _mean([float(r["fresh_top1"]) for r in supersedes])
    return metrics


def _path_question(graph: Graphonomous, structure: Structure) -> tuple[dict[str, Any], float]:
    planted: list[str] = structure.extra["path"]
    start = time.perf_counter()
    answer = graph.trace_evidence_path(
        planted[0], planted[-1], k=2, max_hops=structure.extra["hops"] + 2, direction="out"
    )
    elapsed = (time.perf_counter() - start) * 1000.0
    paths = answer["paths"]
    best: list[str] = paths[0]["nodes"] if paths else []
    hops = paths[0]["hops"] if paths else 0
    return {
        "node_recall": len(set(best) & set(planted)) / len(planted),
        "order_ok": best == planted,
        "hop_error": abs(hops - structure.extra["hops"]),
        "alt_path": len(paths) > 1,
    }, elapsed


def _causal_question(graph: Graphonomous, structure: Structure) -> tuple[dict[str, Any], float]:
    depth_true: dict[str, int] = structure.extra["depth"]
    start = time.perf_counter()
    answer = graph.retrieve_context(structure.query, limit=RETRIEVE_LIMIT)
    ids = [r["node_id"] for r in answer["results"]]
    with graph.lock:
        edges = graph.store.list_edges_between(ids)
    successors: dict[str, list[str]] = {node: [] for node in ids}
    for edge in edges:
        if edge.relationship in ("causes", "causal", "resolves"):
            successors[edge.source_id].append(edge.target_id)
    order = topological_order(successors)
    depths = critical_depths(successors)
    sources, sinks = sources_and_sinks(successors)
    elapsed = (time.perf_counter() - start) * 1000.0
    position = {node: i for i, node in enumerate(order)}
    arcs = [(s, t) for s, t, _, _ in structure.edges]
    ordered = [position[s] < position[t] for s, t in arcs if s in position and t in position]
    ordered += [False] * sum(1 for s, t in arcs if s not in position or t not in position)
    true_sources = {n for n, d in depth_true.items() if d == 0}
    has_child = {s for s, _ in arcs}
    true_sinks = set(depth_true) - has_child
    return {
        "ordering": _mean([float(x) for x in ordered]),
        "depth_error": _mean(
            [
                abs(depths.get(n, 0) - d) if n in depths else float(d + 1)
                for n, d in depth_true.items()
            ]
        ),
        "source_sink_recall": len((set(sources) & true_sources) | (set(sinks) & true_sinks))
        / len(true_sources | true_sinks),
    }, elapsed


def _latency(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0
    return {
        "p50_ms": round(statistics.median(ordered), 3) if ordered else 0.0,
        "p95_ms": round(p95, 3),
    }


def targets(tier: int, on: Mapping[str, Any], off: Mapping[str, Any]) -> dict[str, bool]:
    """The issue's targets for a tier, each checked (the `pass` of the report)."""
    checks: dict[str, bool] = {"p50_under_50ms": on["latency"]["p50_ms"] < LATENCY_TARGET_MS}
    if tier in (1, 2):
        checks["kappa_recall_zero_on"] = on["kappa_recall"] == 0.0
        checks["kappa_recall_zero_off"] = off["kappa_recall"] == 0.0
    elif tier in (3, 4, 5, 6):
        checks["kappa_recall_one_on"] = on["kappa_recall"] == 1.0
        checks["kappa_recall_zero_off"] = off["kappa_recall"] == 0.0
        checks["no_false_kappa_on"] = on["false_kappa_rate"] == 0.0
        if tier in (4, 6):
            checks["kappa_discrim_one_on"] = on["kappa_discrim_accuracy"] == 1.0
    elif tier == 7:
        checks["path_node_recall_one"] = on["path_node_recall"] == 1.0
        checks["path_order_accuracy_one"] = on["path_order_accuracy"] == 1.0
        checks["hop_count_mae_zero"] = on["hop_count_mae"] == 0.0
    else:
        checks["ordering_accuracy_095"] = on["ordering_accuracy"] >= 0.95
        checks["critical_depth_mae_01"] = on["critical_depth_mae"] <= 0.1
    return checks


def run_tier(
    tier: int,
    *,
    questions: int = DEFAULT_QUESTIONS,
    seed: int = DEFAULT_SEED,
    density: int = DEFAULT_DENSITY,
    graph_factory: Callable[[], Graphonomous] | None = None,
) -> dict[str, Any]:
    """Run one tier with topology on and off on a fresh in-memory graph."""
    if tier not in GENERATORS:
        raise ValueError(f"unknown tier {tier}; tiers are {', '.join(map(str, TIERS))}")
    structures = generate(tier, questions, seed, density)
    graph = graph_factory() if graph_factory else Graphonomous(db=":memory:")
    try:
        build_start = time.perf_counter()
        load(graph, structures)
        build_ms = (time.perf_counter() - build_start) * 1000.0
        graph.retrieve_context("warm up the indexes", limit=1)
        modes: dict[str, dict[str, Any]] = {}
        for mode in ("on", "off"):
            modes[mode] = _run_mode(graph, tier, structures, mode == "on")
    finally:
        graph.close()
    return {
        "tier": f"T{tier}",
        "design": TIER_NAMES[tier],
        "questions": questions,
        "nodes": sum(len(s.nodes) for s in structures),
        "edges": sum(len(s.edges) for s in structures),
        "build_ms": round(build_ms, 1),
        "topology_on": modes["on"],
        "topology_off": modes["off"],
        "targets": targets(tier, modes["on"], modes["off"]),
    }


def _run_mode(
    graph: Graphonomous, tier: int, structures: Sequence[Structure], topology_on: bool
) -> dict[str, Any]:
    latencies: list[float] = []
    if tier == 7:
        rows = []
        for structure in structures:
            row, elapsed = _path_question(graph, structure)
            rows.append(row)
            latencies.append(elapsed)
        return {
            "path_node_recall": _mean([r["node_recall"] for r in rows]),
            "path_order_accuracy": _mean([float(r["order_ok"]) for r in rows]),
            "hop_count_mae": _mean([r["hop_error"] for r in rows]),
            "alt_path_detected": _mean([float(r["alt_path"]) for r in rows]),
            "latency": _latency(latencies),
        }
    if tier == 8:
        rows = []
        for structure in structures:
            row, elapsed = _causal_question(graph, structure)
            rows.append(row)
            latencies.append(elapsed)
        return {
            "ordering_accuracy": _mean([r["ordering"] for r in rows]),
            "critical_depth_mae": _mean([r["depth_error"] for r in rows]),
            "source_sink_recall": _mean([r["source_sink_recall"] for r in rows]),
            "latency": _latency(latencies),
        }
    rows = []
    for structure in structures:
        start = time.perf_counter()
        answer = graph.retrieve_context(structure.query, limit=RETRIEVE_LIMIT)
        latencies.append((time.perf_counter() - start) * 1000.0)
        rows.append(_kappa_question(structure, answer, topology_on))
    return {**_kappa_metrics(tier, structures, rows), "latency": _latency(latencies)}


def run_graphmembench(
    tiers: Sequence[int] | None = None,
    *,
    questions: int = DEFAULT_QUESTIONS,
    seed: int = DEFAULT_SEED,
    density: int = DEFAULT_DENSITY,
) -> dict[str, Any]:
    """Run the chosen tiers (default all); `summary` counts tiers meeting every target."""
    if questions < 1:
        raise ValueError("questions must be >= 1")
    chosen = sorted(set(tiers)) if tiers else list(TIERS)
    results = [run_tier(t, questions=questions, seed=seed, density=density) for t in chosen]
    passed = sum(1 for r in results if all(r["targets"].values()))
    return {
        "benchmark": "graphmembench-v2",
        "seed": seed,
        "questions_per_tier": questions,
        "density": density,
        "tiers": results,
        "summary": {"tiers": len(results), "passed": passed, "failed": len(results) - passed},
    }


_HEADLINE: Final = {
    7: ("path_node_recall", "path_order_accuracy", "hop_count_mae"),
    8: ("ordering_accuracy", "critical_depth_mae", "source_sink_recall"),
}


def format_report(report: Mapping[str, Any]) -> str:
    """A text table: one line per tier, on/off values of its headline metrics."""
    lines = [
        f"GraphMemBench v2 (seed {report['seed']}, {report['questions_per_tier']} questions/tier)"
    ]
    for tier in report["tiers"]:
        number = int(tier["tier"][1:])
        on, off = tier["topology_on"], tier["topology_off"]
        keys = _HEADLINE.get(number, ("kappa_recall", "max_kappa", "routing_precision"))
        values = ", ".join(f"{k} {on[k]}/{off[k]}" for k in keys)
        status = "PASS" if all(tier["targets"].values()) else "FAIL"
        p50 = on["latency"]["p50_ms"]
        lines.append(f"  {tier['tier']} {tier['design']:<40} {values}; p50 {p50} ms  {status}")
    summary = report["summary"]
    lines.append(f"{summary['passed']}/{summary['tiers']} tiers meet their targets")
    return "\n".join(lines) + "\n"
