"""κ of one SCC, exactly, by unit-capacity maximum flows.

κ(SCC) = min over bipartitions (A, B) of min(e(A→B), e(B→A)) equals the
*arc-strong connectivity* λ of the SCC's induced sub-digraph: the fewest arcs
whose removal leaves it not strongly connected (every ordered pair (A, B) is
enumerated, so κ is the smallest number of arcs leaving any non-empty proper
subset).  λ is computed with Schnorr's cyclic reduction: for members
v_0 … v_{n-1} in sorted order, λ = min over i of λ(v_i → v_{i+1 mod n}),
where λ(s → t) is the maximum number of arc-disjoint s→t paths (Menger).
Any cut S has some v_i ∈ S with v_{i+1} ∉ S, which is why n flows suffice.

See SPEC.md (topology section) for the exact tie-break and the work budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from .reference import reference_kappa
from .types import FaultLine, KappaResult

DEFAULT_WORK_BUDGET: Final = 20_000_000
"""Arc inspections allowed per SCC before κ is reported as an upper bound.

Measured (benchmarks/bench_topology.py, CPython 3.11): the hardest family we
know at 2,000 nodes / ~20,000 arcs — a union of 10 random Hamiltonian cycles,
in = out = 10, κ = 9 — needs about 5.8 M inspections (~1 s); a ring plus
random arcs of the same size needs about 1.1 M.  The default leaves a >3x
margin and caps one SCC at roughly 3-7 s of pure Python (0.13-0.33 µs per
inspection, depending on machine load).
"""


class _Csr:
    """The induced sub-digraph on `members` in compressed sparse row form.

    Arc e goes tail[e] → head[e]; out-arcs of u are e in out_start[u] … out_start[u+1]−1
    (sorted by head); in_arcs[in_start[w] … in_start[w+1]−1] are the ids of arcs into w
    (sorted by tail).
    """

    def __init__(self, adjacency: Mapping[str, Iterable[str]], members: Sequence[str]) -> None:
        position = {node: i for i, node in enumerate(members)}
        self.n = len(members)
        self.out_start = [0]
        self.head: list[int] = []
        self.tail: list[int] = []
        for u, node in enumerate(members):
            targets = sorted(
                {position[t] for t in adjacency.get(node, ()) if t in position and t != node}
            )
            self.head.extend(targets)
            self.tail.extend([u] * len(targets))
            self.out_start.append(len(self.head))
        self.m = len(self.head)
        buckets: list[list[int]] = [[] for _ in range(self.n)]
        for e, w in enumerate(self.head):
            buckets[w].append(e)
        self.in_start = [0]
        self.in_arcs: list[int] = []
        for bucket in buckets:
            self.in_arcs.extend(bucket)
            self.in_start.append(len(self.in_arcs))

    def out_degree(self, u: int) -> int:
        return self.out_start[u + 1] - self.out_start[u]

    def in_degree(self, u: int) -> int:
        return self.in_start[u + 1] - self.in_start[u]


def _reach(g: _Csr, start: int, forward: bool) -> tuple[list[bool], int]:
    """Nodes reachable from `start` (forward) or reaching it (backward); (mask, arcs inspected)."""
    seen = [False] * g.n
    seen[start] = True
    queue = [start]
    steps = 0
    for u in queue:
        if forward:
            neighbours = g.head[g.out_start[u] : g.out_start[u + 1]]
        else:
            neighbours = [g.tail[e] for e in g.in_arcs[g.in_start[u] : g.in_start[u + 1]]]
        steps += len(neighbours)
        for w in neighbours:
            if not seen[w]:
                seen[w] = True
                queue.append(w)
    return seen, steps


def _residual_reach(g: _Csr, flow: bytearray, s: int) -> tuple[list[bool], int]:
    """Nodes reachable from s in the residual graph of `flow` (the minimal min-cut side),
    and the arcs inspected."""
    seen = [False] * g.n
    seen[s] = True
    queue = [s]
    steps = 0
    head, tail, in_arcs = g.head, g.tail, g.in_arcs
    for u in queue:
        steps += g.out_degree(u) + g.in_degree(u)
        for e in range(g.out_start[u], g.out_start[u + 1]):
            w = head[e]
            if not flow[e] and not seen[w]:
                seen[w] = True
                queue.append(w)
        for k in range(g.in_start[u], g.in_start[u + 1]):
            e = in_arcs[k]
            w = tail[e]
            if flow[e] and not seen[w]:  # cancelling flow on w→u is residual u→w
                seen[w] = True
                queue.append(w)
    return seen, steps


class _PathFinder:
    """Augmenting-path search for unit-capacity flows, reusing its scratch arrays.

    Bidirectional breadth-first search in the residual graph: the smaller
    frontier is expanded one level at a time, and the search stops as soon as
    the two sides meet, so a path in an expander costs about 2·√(reachable)
    nodes instead of the whole graph.  Parent pointers encode the arc used:
    e ≥ 0 means arc e is traversed forward (gains flow), ~e means flow on arc
    e is cancelled.
    """

    def __init__(self, g: _Csr) -> None:
        self.g = g
        self.mark_f = [0] * g.n
        self.mark_b = [0] * g.n
        self.par_f = [0] * g.n
        self.par_b = [0] * g.n
        self.stamp = 0

    def augment(self, flow: bytearray, s: int, t: int) -> tuple[bool, int]:
        """Push one unit of flow s→t if possible; (pushed, arcs inspected)."""
        g = self.g
        head, tail, in_arcs = g.head, g.tail, g.in_arcs
        out_start, in_start = g.out_start, g.in_start
        mark_f, mark_b, par_f, par_b = self.mark_f, self.mark_b, self.par_f, self.par_b
        self.stamp += 1
        stamp = self.stamp
        mark_f[s] = stamp
        mark_b[t] = stamp
        front_f, front_b = [s], [t]
        steps = 0
        meet = -1
        while front_f and front_b and meet < 0:
            if len(front_f) <= len(front_b):
                grown: list[int] = []
                for u in front_f:
                    lo, hi = out_start[u], out_start[u + 1]
                    ilo, ihi = in_start[u], in_start[u + 1]
                    steps += hi - lo + ihi - ilo
                    for e in range(lo, hi):
                        w = head[e]
                        if not flow[e] and mark_f[w] != stamp:
                            mark_f[w] = stamp
                            par_f[w] = e
                            if mark_b[w] == stamp:
                                meet = w
                                break
                            grown.append(w)
                    if meet >= 0:
                        break
                    for k in range(ilo, ihi):
                        e = in_arcs[k]
                        w = tail[e]
                        if flow[e] and mark_f[w] != stamp:
                            mark_f[w] = stamp
                            par_f[w] = ~e
                            if mark_b[w] == stamp:
                                meet = w
                                break
                            grown.append(w)
                    if meet >= 0:
                        break
                front_f = grown
            else:
                grown = []
                for w in front_b:
                    lo, hi = in_start[w], in_start[w + 1]
                    olo, ohi = out_start[w], out_start[w + 1]
                    steps += hi - lo + ohi - olo
                    for k in range(lo, hi):
                        e = in_arcs[k]
                        u = tail[e]
                        if not flow[e] and mark_b[u] != stamp:
                            mark_b[u] = stamp
                            par_b[u] = e
                            if mark_f[u] == stamp:
                                meet = u
                                break
                            grown.append(u)
                    if meet >= 0:
                        break
                    for e in range(olo, ohi):
                        u = head[e]
                        if flow[e] and mark_b[u] != stamp:  # cancel flow on w→u
                            mark_b[u] = stamp
                            par_b[u] = ~e
                            if mark_f[u] == stamp:
                                meet = u
                                break
                            grown.append(u)
                    if meet >= 0:
                        break
                front_b = grown
        if meet < 0:
            return False, steps
        v = meet
        while v != s:
            p = par_f[v]
            if p >= 0:
                flow[p] = 1
                v = tail[p]
            else:
                flow[~p] = 0
                v = head[~p]
        v = meet
        while v != t:
            p = par_b[v]
            if p >= 0:
                flow[p] = 1
                v = head[p]
            else:
                flow[~p] = 0
                v = tail[~p]
        return True, steps


def _greedy_short_paths(g: _Csr, flow: bytearray, s: int, t: int, limit: int) -> tuple[int, int]:
    """Saturate the arc s→t and arc-disjoint paths s→x→t first; (paths, arcs inspected).

    These paths are found in O(deg) without a search; on dense SCCs they are
    almost all of the flow.
    """
    into_t = {g.tail[g.in_arcs[k]]: g.in_arcs[k] for k in range(g.in_start[t], g.in_start[t + 1])}
    value = 0
    for e in range(g.out_start[s], g.out_start[s + 1]):
        if value >= limit:
            break
        x = g.head[e]
        if x == t:
            flow[e] = 1
            value += 1
        else:
            e2 = into_t.get(x)
            if e2 is not None:
                flow[e] = flow[e2] = 1
                value += 1
    return value, g.out_degree(s) + g.in_degree(t)


def _cut_result(members: Sequence[str], g: _Csr, side: list[bool], kappa: int) -> KappaResult:
    """KappaResult for the cut whose source side A is `side` (arcs A→B are the fault lines)."""
    faults: list[FaultLine] = [
        {"source": members[g.tail[e]], "target": members[g.head[e]]}
        for e in range(g.m)
        if side[g.tail[e]] and not side[g.head[e]]
    ]
    a_side = [members[i] for i in range(g.n) if side[i]]
    b_side = [members[i] for i in range(g.n) if not side[i]]
    return {
        "kappa": kappa,
        "approximate": False,
        "fault_line_edges": faults,
        "min_cut_partition": [a_side, b_side],
    }


def _approximate(bound: int) -> KappaResult:
    return {"kappa": bound, "approximate": True, "fault_line_edges": [], "min_cut_partition": None}


def _exact_kappa(
    members: Sequence[str], g: _Csr, work_budget: int | None
) -> tuple[KappaResult, int]:
    """The canonical algorithm on an induced sub-digraph with ≥ 2 sorted members.

    Returns the result and the arc inspections spent.
    """
    n = g.n
    steps = 0
    forward, cost_f = _reach(g, 0, forward=True)
    backward, cost_b = _reach(g, 0, forward=False)
    steps += cost_f + cost_b
    if not all(forward):
        # Nothing leaves the set reachable from v_0: κ = 0.
        return _cut_result(members, g, forward, 0), steps
    if not all(backward):
        # Nothing enters the set that reaches v_0, so nothing leaves its complement.
        return _cut_result(members, g, [not b for b in backward], 0), steps

    # Strongly connected, so κ ≥ 1.  Degree bound: first member (sorted order)
    # with the smallest in- or out-degree, out-degree checked first.
    best, pick, pick_out = n, 0, True
    for u in range(n):
        if g.out_degree(u) < best:
            best, pick, pick_out = g.out_degree(u), u, True
        if g.in_degree(u) < best:
            best, pick, pick_out = g.in_degree(u), u, False
    # Out-degree cut: A = {pick}.  In-degree cut: A = everything but pick.
    best_side = [(i == pick) == pick_out for i in range(n)]
    finder = _PathFinder(g)
    for i in range(n):
        if best == 1:
            break  # nothing can beat a single arc in a strongly connected digraph
        if work_budget is not None and steps > work_budget:
            return _approximate(best), steps
        s, t = i, (i + 1) % n
        flow = bytearray(g.m)
        value, cost = _greedy_short_paths(g, flow, s, t, best)
        steps += cost
        while value < best:
            if work_budget is not None and steps > work_budget:
                return _approximate(best), steps
            pushed, cost = finder.augment(flow, s, t)
            steps += cost
            if not pushed:
                # λ(s→t) = value < best: the minimal minimum cut is the residual reach of s.
                best_side, cost = _residual_reach(g, flow, s)
                best, steps = value, steps + cost
                break
            value += 1
    return _cut_result(members, g, best_side, best), steps


def compute_kappa(
    adjacency: Mapping[str, Iterable[str]],
    scc_nodes: Iterable[str],
    *,
    work_budget: int | None = DEFAULT_WORK_BUDGET,
    reference: bool = False,
) -> KappaResult:
    """κ of one SCC: the arc-strong connectivity of its induced sub-digraph.

    Input: the digraph and the SCC's node ids.  Output: KappaResult with
    `kappa`, `approximate`, `fault_line_edges` (a minimum cut: exactly κ arcs,
    all from side A to side B, sorted by (source, target)) and
    `min_cut_partition` ``[A, B]`` (sorted).  One member or none: κ 0, no cut.

    Canonical mode (members sorted v_0 … v_{n−1}): if the set is not strongly
    connected κ = 0 (A = the nodes reachable from v_0, or if that is all, the
    nodes that cannot reach v_0).  Otherwise candidates are taken in this
    order and the first one with a strictly smaller cut wins: (1) the degree
    cut of the first member with the smallest out- or in-degree (out first);
    (2) for i = 0 … n−1 the inclusion-minimal minimum v_i→v_{i+1 mod n} cut
    (A = nodes reachable from v_i in the residual graph of a maximum flow —
    the same set for every maximum flow).  Each flow stops once it reaches
    the best value so far; the loop stops at 1.  `work_budget` bounds arc
    inspections (None: unlimited); when it runs out, the result is
    ``approximate`` with κ = the best upper bound found so far and no cut.

    ``reference=True`` runs the seed's bitmask enumeration instead (members
    in the given order; see :func:`reference_kappa`).

    Complexity: O(n·κ·m) worst case, typically far less (bidirectional
    searches, greedy short paths).  Reference: A. Schnorr, "Bottlenecks and
    edge connectivity in unsymmetric networks", SIAM J. Comput. 8 (1979);
    Ford–Fulkerson augmenting paths.
    """
    if reference:
        return reference_kappa(adjacency, list(dict.fromkeys(scc_nodes)))
    members = sorted(set(scc_nodes))
    if len(members) <= 1:
        return {"kappa": 0, "approximate": False, "fault_line_edges": [], "min_cut_partition": None}
    return _exact_kappa(members, _Csr(adjacency, members), work_budget)[0]


def kappa_work(adjacency: Mapping[str, Iterable[str]], scc_nodes: Iterable[str]) -> int:
    """Arc inspections the canonical :func:`compute_kappa` needs for this SCC, unbudgeted.

    For tuning `work_budget`: a budget at least this large gives the exact κ.
    Same complexity as compute_kappa.
    """
    members = sorted(set(scc_nodes))
    if len(members) <= 1:
        return 0
    return _exact_kappa(members, _Csr(adjacency, members), None)[1]
