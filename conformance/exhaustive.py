"""The exhaustive κ verification over 1,926,351 finite objects.

Objects (design/kappa.md):

* every labeled digraph without self-loops on n = 2..5 nodes (1,052,740):
  the product engine's SCCs must equal the reference SCCs, its κ of the
  largest SCC (first largest in Tarjan order) must equal the reference κ, its
  fault lines must be a genuine minimum cut, and κ > 0 ⟺ β₁ > 0 ⟺ the graph
  has a non-trivial SCC (β₁ = |E_scc| − |V_scc| + 1 of the largest SCC);
* every map f: [n] → [n] for n = 2..7 (873,611), as the transition graph
  i → f(i) for f(i) ≠ i: the product's non-trivial SCCs must be exactly the
  periodic orbits of period > 1, and κ > 0 ⟺ such an orbit exists.

The product engine runs on every object.  The reference side here is a fast
bitmask re-implementation of the brute force (closure by bitmask reachability,
cuts as popcounts of precomputed arc masks); its agreement with the naive
:mod:`conformance.reference` is itself tested exhaustively for n ≤ 4.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from conformance.engine import Engine

DIGRAPH_SIZES = (2, 3, 4, 5)
MAP_SIZES = (2, 3, 4, 5, 6, 7)
QUICK_DIGRAPH_SIZES = (2, 3, 4)
QUICK_MAP_SIZES = (2, 3, 4, 5, 6)
# Objects per worker task: small enough for even load on 2 cores, large
# enough that task dispatch is negligible.
CHUNK = 16_384
# Counterexamples kept verbatim per task (all are counted).
MAX_EXAMPLES = 5


@dataclass(frozen=True)
class Task:
    """A slice ``[start, stop)`` of the objects of one kind and size."""

    kind: str  # "digraph" or "map"
    n: int
    start: int
    stop: int


@dataclass
class TaskResult:
    """Outcome of one task: objects checked, counterexamples, κ histogram."""

    task: Task
    checked: int = 0
    failures: int = 0
    examples: list[str] = field(default_factory=list)
    kappa_counts: Counter[int] = field(default_factory=Counter)
    strongly_connected: int = 0  # objects whose largest SCC spans every node


def object_count(kind: str, n: int) -> int:
    """Number of objects of a kind and size: 2^(n(n−1)) digraphs or nⁿ maps."""
    return 1 << (n * (n - 1)) if kind == "digraph" else int(n**n)


def make_tasks(digraph_sizes: Sequence[int], map_sizes: Sequence[int]) -> list[Task]:
    """Split the enumeration into tasks, largest slices first."""
    tasks: list[Task] = []
    for kind, sizes in (("digraph", digraph_sizes), ("map", map_sizes)):
        for n in sizes:
            total = object_count(kind, n)
            tasks.extend(Task(kind, n, lo, min(lo + CHUNK, total)) for lo in range(0, total, CHUNK))
    tasks.sort(key=lambda t: t.start - t.stop)
    return tasks


# --------------------------------------------------------------------------
# Digraphs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class DigraphTables:
    """Precomputed bit tables for digraphs on n nodes labeled "0" … "n−1".

    Arc bit k ↔ ``arcs[k]``, arcs in row-major order without the diagonal, so
    node i's out-arcs are the (n−1)-bit row starting at bit i·(n−1).
    """

    n: int
    labels: tuple[str, ...]
    node_bit: dict[str, int]
    arc_bit: dict[tuple[str, str], int]
    succ_mask: tuple[tuple[int, ...], ...]  # [i][row] -> successor node mask
    succ_labels: tuple[tuple[tuple[str, ...], ...], ...]  # [i][row] -> labels
    cuts: dict[int, tuple[int, ...]]  # node set S -> arc masks T → S∖T
    induced: dict[int, int]  # node set S -> arc mask of S's induced subgraph


@cache
def digraph_tables(n: int) -> DigraphTables:
    """Build (once per process) the tables for digraphs on n nodes."""
    labels = tuple(str(i) for i in range(n))
    arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
    bit_of = {arc: 1 << k for k, arc in enumerate(arcs)}
    others = [[j for j in range(n) if j != i] for i in range(n)]
    succ_mask = tuple(
        tuple(
            sum(1 << others[i][b] for b in range(n - 1) if row >> b & 1)
            for row in range(1 << (n - 1))
        )
        for i in range(n)
    )
    succ_labels = tuple(
        tuple(tuple(labels[j] for j in range(n) if mask >> j & 1) for mask in succ_mask[i])
        for i in range(n)
    )
    cuts: dict[int, tuple[int, ...]] = {}
    induced: dict[int, int] = {}
    for s_mask in range(1, 1 << n):
        members = [i for i in range(n) if s_mask >> i & 1]
        induced[s_mask] = sum(bit_of[(i, j)] for i in members for j in members if i != j)
        masks = []
        for t_mask in range(1, 1 << n):
            if t_mask & ~s_mask or t_mask == s_mask:
                continue
            rest = s_mask & ~t_mask
            masks.append(
                sum(
                    bit_of[(i, j)]
                    for i in members
                    if t_mask >> i & 1
                    for j in members
                    if rest >> j & 1
                )
            )
        cuts[s_mask] = tuple(masks)
    return DigraphTables(
        n=n,
        labels=labels,
        node_bit={label: 1 << i for i, label in enumerate(labels)},
        arc_bit={(labels[i], labels[j]): bit for (i, j), bit in bit_of.items()},
        succ_mask=succ_mask,
        succ_labels=succ_labels,
        cuts=cuts,
        induced=induced,
    )


def reference_sccs(successors: Sequence[int]) -> list[int]:
    """SCCs as node bitmasks (sorted) from successor bitmasks, via transitive closure."""
    n = len(successors)
    reach = [successors[i] | 1 << i for i in range(n)]
    for k in range(n):  # Warshall: allow k as an intermediate node
        bit, through = 1 << k, reach[k]
        for i in range(n):
            if reach[i] & bit:
                reach[i] |= through
    components = set()
    for i in range(n):
        components.add(sum(1 << j for j in range(n) if reach[i] >> j & 1 and reach[j] >> i & 1))
    return sorted(components)


def reference_kappa(graph: int, scc: int, tables: DigraphTables) -> int:
    """κ of the SCC with node mask ``scc``: the fewest arcs leaving any proper subset."""
    if scc.bit_count() < 2:
        return 0
    return min((graph & cut).bit_count() for cut in tables.cuts[scc])


def digraph_arcs(graph: int, n: int) -> list[tuple[int, int]]:
    """The arcs of digraph number ``graph`` (for reporting counterexamples)."""
    arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
    return [arc for k, arc in enumerate(arcs) if graph >> k & 1]


def check_digraph(graph: int, tables: DigraphTables, engine: Engine) -> tuple[int, int, str | None]:
    """Check one digraph; return (product κ, largest SCC size, failure reason or None)."""
    n = tables.n
    row_mask = (1 << (n - 1)) - 1
    rows = [graph >> (i * (n - 1)) & row_mask for i in range(n)]
    labels = tables.labels
    adjacency = {labels[i]: set(tables.succ_labels[i][rows[i]]) for i in range(n)}
    components = engine.tarjan_scc(adjacency)

    node_bit = tables.node_bit
    masks = [sum(node_bit[v] for v in comp) for comp in components]
    expected = reference_sccs([tables.succ_mask[i][rows[i]] for i in range(n)])
    if sorted(masks) != expected or sum(map(len, components)) != n:
        return -1, 0, f"SCCs {components} != reference {expected}"

    largest = max(components, key=len)  # max() keeps the first of equals
    scc = masks[components.index(largest)]
    size = len(largest)
    result = engine.compute_kappa(adjacency, largest)
    kappa = result["kappa"]

    biggest = [m for m in expected if m.bit_count() == size]
    reference = {reference_kappa(graph, m, tables) for m in biggest}
    if len(reference) != 1:  # never happens for n ≤ 5; kept for obvious correctness
        return kappa, size, f"largest SCCs disagree on κ: {reference}"
    if kappa != reference.pop():
        return kappa, size, f"κ {kappa} != reference κ"
    if result["approximate"]:
        return kappa, size, "approximate result on a small SCC"

    fault = result["fault_line_edges"]
    try:
        cut = sum(tables.arc_bit[(e["source"], e["target"])] for e in fault)
    except KeyError:
        return kappa, size, f"fault line is not a possible arc: {fault}"
    if cut.bit_count() != len(fault) or len(fault) != kappa:
        return kappa, size, f"fault lines {fault} are not {kappa} distinct arcs"
    if kappa and cut not in {graph & c for c in tables.cuts[scc]}:
        return kappa, size, f"fault lines {fault} are not all arcs leaving one side of the SCC"

    betti = (graph & tables.induced[scc]).bit_count() - size + 1
    if not (kappa > 0) == (betti > 0) == (size > 1):
        return kappa, size, f"κ={kappa}, β₁={betti}, largest SCC size {size} disagree"
    return kappa, size, None


# --------------------------------------------------------------------------
# Maps f: [n] → [n]
# --------------------------------------------------------------------------


def reference_cycles(f: Sequence[int]) -> list[int]:
    """Periodic orbits of period > 1 of f, as sorted node bitmasks."""
    n = len(f)
    power = list(f)
    steps = 1
    while steps < n:  # f^(2^k) with 2^k ≥ n maps every point onto its cycle
        power = [power[power[i]] for i in range(n)]
        steps *= 2
    cycles = []
    seen = 0
    for start in sorted(set(power)):
        if f[start] == start or seen >> start & 1:
            continue
        orbit, x = 0, start
        while not orbit >> x & 1:
            orbit |= 1 << x
            x = f[x]
        seen |= orbit
        cycles.append(orbit)
    return sorted(cycles)


def check_map(
    f: Sequence[int], labels: Sequence[str], engine: Engine
) -> tuple[int, int, str | None]:
    """Check one map's transition graph; return (product κ, largest SCC size, failure or None)."""
    n = len(f)
    adjacency = {labels[i]: ({labels[f[i]]} if f[i] != i else set()) for i in range(n)}
    components = engine.tarjan_scc(adjacency)
    if sum(map(len, components)) != n:
        return -1, 0, f"SCCs {components} do not partition the nodes"
    nontrivial = sorted(sum(1 << int(v) for v in comp) for comp in components if len(comp) > 1)
    cycles = reference_cycles(f)
    if nontrivial != cycles:
        return -1, 0, f"non-trivial SCCs {components} != periodic orbits {cycles}"

    largest = max(components, key=len)
    result = engine.compute_kappa(adjacency, largest)
    kappa = result["kappa"]
    periodic = bool(cycles)
    if (kappa > 0) != periodic or kappa != int(periodic) or result["approximate"]:
        return kappa, len(largest), f"κ={kappa} but periodic orbit of period > 1: {periodic}"
    fault = [(e["source"], e["target"]) for e in result["fault_line_edges"]]
    on_cycle = set(largest)
    if len(fault) != kappa or any(
        s not in on_cycle or t not in on_cycle or labels[f[int(s)]] != t for s, t in fault
    ):
        return kappa, len(largest), f"fault lines {fault} are not one arc of the cycle"
    return kappa, len(largest), None


# --------------------------------------------------------------------------
# Census: known totals that the per-object results must add up to
# --------------------------------------------------------------------------

# Labeled acyclic digraphs (OEIS A003024) and strongly connected digraphs (A003030).
ACYCLIC_DIGRAPHS = {1: 1, 2: 3, 3: 25, 4: 543, 5: 29281}
STRONG_DIGRAPHS = {1: 1, 2: 1, 3: 18, 4: 1606, 5: 565080}


def census_problems(kind: str, n: int, kappa_zero: int, strongly_connected: int) -> list[str]:
    """Compare the totals of one kind and size with the literature.

    κ = 0 objects are the acyclic digraphs, or the maps whose only cycles are
    fixed points (rooted forests: (n+1)^(n−1), Cayley); objects whose largest
    SCC spans all n nodes are the strongly connected digraphs, or the cyclic
    permutations ((n−1)!).
    """
    if kind == "digraph":
        expected = (ACYCLIC_DIGRAPHS[n], STRONG_DIGRAPHS[n])
    else:
        expected = ((n + 1) ** (n - 1), math.factorial(n - 1))
    if (kappa_zero, strongly_connected) == expected:
        return []
    return [
        f"{kind}s n={n}: {kappa_zero} with κ=0 and {strongly_connected} strongly connected,"
        f" expected {expected[0]} and {expected[1]}"
    ]


# --------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------


def run_task(task: Task, engine: Engine | None = None) -> TaskResult:
    """Check every object of a task with the product engine (or ``engine``)."""
    if engine is None:
        from conformance.engine import product_engine

        engine = product_engine()
    result = TaskResult(task)
    if task.kind == "digraph":
        tables = digraph_tables(task.n)
        for graph in range(task.start, task.stop):
            kappa, size, problem = check_digraph(graph, tables, engine)
            _record(result, kappa, size, problem, graph)
    else:
        labels = tuple(str(i) for i in range(task.n))
        maps = itertools.product(range(task.n), repeat=task.n)
        for f in itertools.islice(maps, task.start, task.stop):
            kappa, size, problem = check_map(f, labels, engine)
            _record(result, kappa, size, problem, f)
    return result


def _record(
    result: TaskResult, kappa: int, size: int, problem: str | None, obj: int | Sequence[int]
) -> None:
    result.checked += 1
    result.kappa_counts[kappa] += 1
    result.strongly_connected += size == result.task.n
    if problem is not None:
        result.failures += 1
        if len(result.examples) < MAX_EXAMPLES:
            # Described only here: spelling out every object would cost more than checking it.
            n = result.task.n
            shown = f"arcs={digraph_arcs(obj, n)}" if isinstance(obj, int) else f"f={list(obj)}"
            result.examples.append(f"{result.task.kind} n={n} {shown}: {problem}")
