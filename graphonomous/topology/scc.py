"""Strongly connected components: Tarjan's algorithm without recursion."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def index_graph(adjacency: Mapping[str, Iterable[str]]) -> tuple[list[str], list[list[int]]]:
    """Integer form of a digraph: (sorted node ids, sorted successor indices per node).

    The universe is keys ∪ targets; self-loops are dropped.  Because indices
    follow the sorted id order, sorting successor indices sorts them by id.
    O(V log V + E log E).
    """
    universe: set[str] = set(adjacency)
    for targets in adjacency.values():
        universe.update(targets)
    nodes = sorted(universe)
    position = {node: i for i, node in enumerate(nodes)}
    successors: list[list[int]] = [[] for _ in nodes]
    for source, targets in adjacency.items():
        i = position[source]
        successors[i] = sorted({position[t] for t in targets if t != source})
    return nodes, successors


def tarjan_indices(successors: list[list[int]]) -> list[list[int]]:
    """Tarjan's SCCs on an integer digraph (see :func:`tarjan_scc`); O(V + E)."""
    n = len(successors)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        # Each frame is (node, iterator over its remaining successors): the
        # explicit version of the recursive strongconnect() call stack.
        frames = [(root, iter(successors[root]))]
        while frames:
            v, remaining = frames[-1]
            for w in remaining:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    frames.append((w, iter(successors[w])))
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            else:
                # v is finished: close its component, then "return" to the caller.
                frames.pop()
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        component.append(w)
                        if w == v:
                            break
                    components.append(component)
                if frames:
                    parent = frames[-1][0]
                    if low[v] < low[parent]:
                        low[parent] = low[v]
    return components


def tarjan_scc(adjacency: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """All strongly connected components, trivial ones included.

    Input: ``{node: iterable of targets}``; the universe is keys ∪ targets and
    self-loops are ignored.  Output: the SCCs in the exact order a recursive
    Tarjan produces when roots and successors are visited in sorted id order:
    components in completion order, members of each in stack-pop order (the
    component's root comes last).  Iterative (explicit stack), so 100K-node
    paths do not hit the recursion limit.  Complexity: O(V log V + E log E)
    for the sorting, O(V + E) for the search.  Reference: R. Tarjan, "Depth-first
    search and linear graph algorithms", SIAM J. Comput. 1 (1972).
    """
    nodes, successors = index_graph(adjacency)
    return [[nodes[i] for i in component] for component in tarjan_indices(successors)]
