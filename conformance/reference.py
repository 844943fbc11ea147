"""Independent brute-force reference for SCCs, κ and edge-impact previews.

Written from the seed 000 pseudocode (recursive Tarjan, bitmask bipartition
enumeration) and the behaviour notes in design/kappa.md.  It deliberately
imports nothing from :mod:`graphonomous`: it is the yardstick the product
engine (``graphonomous.topology``) is measured against, so it must not share
code — or bugs — with it.  Simple and obviously correct beats fast here.

Input everywhere is a plain directed graph: a list of node ids plus a list of
``(source, target)`` arcs.  Mapping relationship kinds to arcs is a product
concern and lives in :mod:`conformance.jsonio`.

Output shapes are the "reference mode" of the product engine:

* SCCs in Tarjan completion order, members in stack-pop order;
* SCC ids ``scc-{i}`` with ``i`` the position in the full Tarjan list,
  *including* trivial SCCs (so ids need not be consecutive);
* κ by enumerating bitmasks ``1 … 2ⁿ−2`` over the member order, keeping the
  first strictly smaller cut; more than 20 members ⇒ ``approximate`` κ = size;
* per-SCC routing ``"deliberate"``/``"retrieve"``, top-level key
  ``overall_routing``; the deliberation budget is uncapped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Seed 000: above this many members, enumeration is skipped and κ := size.
ENUMERATION_LIMIT = 20
# Floats in the budget are rounded so that 0.7 + 0.05 * 2 reads 0.8, not 0.7999….
BUDGET_DIGITS = 10

Adjacency = dict[str, set[str]]
Arc = tuple[str, str]


def build_adjacency_reference(nodes: Iterable[str], arcs: Iterable[Arc]) -> Adjacency:
    """Adjacency sets over the universe ``nodes ∪ arc endpoints``, self-loops dropped.

    Input: node ids and ``(source, target)`` arcs.  Output: ``{node: set(successors)}``
    with keys inserted in sorted order.  Complexity O(V log V + E).
    Reference: design/kappa.md, "Node universe".
    """
    arc_list = list(arcs)
    universe = set(nodes)
    for source, target in arc_list:
        universe.add(source)
        universe.add(target)
    adjacency: Adjacency = {node: set() for node in sorted(universe)}
    for source, target in arc_list:
        if source != target:
            adjacency[source].add(target)
    return adjacency


def tarjan_reference(adjacency: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """All SCCs (trivial ones included) by recursive Tarjan.

    Input: adjacency mapping.  Output: SCCs in completion order, each listing
    its members in stack-pop order.  Roots and neighbours are visited in
    sorted order.  Complexity O(V log V + E log E).  Reference: seed 000
    ``tarjan`` pseudocode (Tarjan 1972).
    """
    universe: set[str] = set(adjacency)
    for successors in adjacency.values():
        universe.update(successors)
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = len(index)
        lowlink[v] = index[v]
        stack.append(v)
        on_stack.add(v)
        for w in sorted(adjacency.get(v, ())):
            if w not in index:
                strongconnect(w)
                lowlink[v] = min(lowlink[v], lowlink[w])
            elif w in on_stack:
                lowlink[v] = min(lowlink[v], index[w])
        if lowlink[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            result.append(component)

    for v in sorted(universe):
        if v not in index:
            strongconnect(v)
    return result


def _has_arc(adjacency: Mapping[str, Iterable[str]], source: str, target: str) -> bool:
    return source != target and target in adjacency.get(source, ())


def compute_kappa_reference(
    adjacency: Mapping[str, Iterable[str]], scc_nodes: Sequence[str]
) -> dict[str, Any]:
    """κ of one SCC by enumerating every bipartition.

    Input: adjacency mapping and the SCC's members (their order defines the
    bitmask: bit i ↔ ``scc_nodes[i]``, A = set bits).  Output:
    ``{"kappa", "approximate", "fault_line_edges", "min_cut_partition"}`` where
    the partition is ``[A, B]`` in member order (``None`` when there is none).
    Complexity O(2ⁿ·n²) for n ≤ 20 members.  Reference: seed 000
    ``compute_kappa`` pseudocode.
    """
    n = len(scc_nodes)
    if n <= 1:
        return {
            "kappa": 0,
            "approximate": False,
            "fault_line_edges": [],
            "min_cut_partition": None,
        }
    if n > ENUMERATION_LIMIT:
        return {
            "kappa": n,
            "approximate": True,
            "fault_line_edges": [],
            "min_cut_partition": None,
        }
    best_cut = -1
    best: tuple[list[str], list[str], int, int] | None = None
    for mask in range(1, 2**n - 1):
        side_a = [scc_nodes[i] for i in range(n) if mask >> i & 1]
        side_b = [scc_nodes[i] for i in range(n) if not mask >> i & 1]
        a_to_b = sum(1 for a in side_a for b in side_b if _has_arc(adjacency, a, b))
        b_to_a = sum(1 for b in side_b for a in side_a if _has_arc(adjacency, b, a))
        cut = min(a_to_b, b_to_a)
        if best is None or cut < best_cut:
            best_cut = cut
            best = (side_a, side_b, a_to_b, b_to_a)
        if best_cut == 0:
            break
    assert best is not None  # n ≥ 2 means at least one mask was tried
    side_a, side_b, a_to_b, b_to_a = best
    if a_to_b <= b_to_a:
        fault = [(a, b) for a in side_a for b in side_b if _has_arc(adjacency, a, b)]
    else:
        fault = [(b, a) for b in side_b for a in side_a if _has_arc(adjacency, b, a)]
    return {
        "kappa": best_cut,
        "approximate": False,
        "fault_line_edges": [{"source": s, "target": t} for s, t in fault],
        "min_cut_partition": [side_a, side_b],
    }


def _max_flow(arcs: set[tuple[str, str]], source: str, sink: str) -> int:
    """Number of arc-disjoint source→sink paths (unit capacities, shortest augmenting paths)."""
    residual = {arc: 1 for arc in arcs}
    for u, v in arcs:
        residual.setdefault((v, u), 0)
    successors: dict[str, list[str]] = {}
    for u, v in residual:
        successors.setdefault(u, []).append(v)
    flow = 0
    while True:
        parent = {source: source}
        queue = [source]
        for u in queue:
            for v in successors.get(u, ()):
                if v not in parent and residual[(u, v)] > 0:
                    parent[v] = u
                    queue.append(v)
        if sink not in parent:
            return flow
        v = sink
        while v != source:
            u = parent[v]
            residual[(u, v)] -= 1
            residual[(v, u)] += 1
            v = u
        flow += 1


def arc_connectivity_reference(
    adjacency: Mapping[str, Iterable[str]], scc_nodes: Sequence[str]
) -> int:
    """κ of an SCC of any size, exactly, by the textbook max-flow characterisation.

    κ = min over non-empty proper subsets S of the arcs leaving S (design/kappa.md)
    = min over v ≠ s of min(maxflow(s→v), maxflow(v→s)) for any fixed s, since
    every cut separates s from some v in one direction (Menger).  Used to check
    the canonical κ beyond the 20-member enumeration limit.  Complexity
    O(n·κ·m).  Reference: Even & Tarjan (1975); Ford–Fulkerson / Edmonds–Karp.
    """
    members = set(scc_nodes)
    if len(members) <= 1:
        return 0
    arcs = {(u, v) for u in members for v in adjacency.get(u, ()) if v in members and v != u}
    first, *others = sorted(members)
    return min(min(_max_flow(arcs, first, v), _max_flow(arcs, v, first)) for v in others)


def deliberation_budget_reference(kappa: int, *, capped: bool = False) -> dict[str, Any]:
    """Inference budget for one SCC.

    Input: κ.  Output: ``{"max_iterations", "agent_count", "timeout_multiplier",
    "confidence_threshold"}``; uncapped (the reference's behaviour) unless
    ``capped`` (seed 000 v2: caps 4 / 3 / 3.5 / 0.95).  Floats rounded to
    ``BUDGET_DIGITS`` decimals.  Complexity O(1).
    """
    iterations = kappa + 1
    timeout = 1.0 + 0.5 * kappa
    confidence = 0.7 + 0.05 * kappa
    if capped:
        iterations = min(iterations, 4)
        timeout = min(timeout, 3.5)
        confidence = min(confidence, 0.95)
    return {
        "max_iterations": iterations,
        "agent_count": min(kappa, 3),
        "timeout_multiplier": round(timeout, BUDGET_DIGITS),
        "confidence_threshold": round(confidence, BUDGET_DIGITS),
    }


def analyze_adjacency_reference(adjacency: Mapping[str, Iterable[str]]) -> dict[str, Any]:
    """Reference-mode topology analysis of an adjacency mapping.

    Output: ``{"sccs", "dag_nodes", "overall_routing", "max_kappa",
    "scc_count"}`` with only non-trivial SCCs listed (see module docstring for
    ordering and ids).  Complexity: Tarjan plus one enumeration per SCC.
    """
    all_sccs = tarjan_reference(adjacency)
    universe: set[str] = set(adjacency)
    for successors in adjacency.values():
        universe.update(successors)
    sccs: list[dict[str, Any]] = []
    in_cycles: set[str] = set()
    for position, members in enumerate(all_sccs):
        if len(members) < 2:
            continue
        kappa = compute_kappa_reference(adjacency, members)
        in_cycles.update(members)
        sccs.append(
            {
                "id": f"scc-{position}",
                "nodes": list(members),
                "kappa": kappa["kappa"],
                "approximate": kappa["approximate"],
                "fault_line_edges": kappa["fault_line_edges"],
                "routing": "deliberate" if kappa["kappa"] > 0 else "retrieve",
                "deliberation_budget": deliberation_budget_reference(kappa["kappa"]),
            }
        )
    max_kappa = max((scc["kappa"] for scc in sccs), default=0)
    return {
        "sccs": sccs,
        "dag_nodes": sorted(universe - in_cycles),
        "overall_routing": "deliberate" if max_kappa > 0 else "fast",
        "max_kappa": max_kappa,
        "scc_count": len(sccs),
    }


def analyze_reference(nodes: Iterable[str], arcs: Iterable[Arc]) -> dict[str, Any]:
    """Reference-mode analysis of a graph given as node ids plus arcs.

    Equivalent to ``analyze_adjacency_reference(build_adjacency_reference(nodes, arcs))``.
    """
    return analyze_adjacency_reference(build_adjacency_reference(nodes, arcs))


def preview_reference(
    adjacency: Mapping[str, Iterable[str]], source: str, target: str
) -> dict[str, Any]:
    """What adding the arc ``source → target`` would do to the topology.

    Input: adjacency mapping and the proposed arc (endpoints may be new).
    Output: ``{"creates_new_scc", "enlarges_existing_scc", "kappa_before",
    "kappa_after", "kappa_delta"}`` — κ values are the graphs' max κ;
    a new SCC means the non-trivial SCC count rises; "enlarges" means max κ
    rises without a new SCC.  The product's free-text ``description`` is not
    part of the reference.  Complexity: two reference analyses.
    """
    nodes = list(adjacency)
    arcs = [(s, t) for s, successors in adjacency.items() for t in successors]
    before = analyze_reference(nodes, arcs)
    after = analyze_reference(nodes, [*arcs, (source, target)])
    creates = after["scc_count"] > before["scc_count"]
    return {
        "creates_new_scc": creates,
        "enlarges_existing_scc": (not creates) and after["max_kappa"] > before["max_kappa"],
        "kappa_before": before["max_kappa"],
        "kappa_after": after["max_kappa"],
        "kappa_delta": after["max_kappa"] - before["max_kappa"],
    }
