"""Personalized PageRank (random walk with restart) by power iteration.

Two interchangeable back ends compute the same iteration in the same order:
a pure-Python one over flat lists, and a NumPy one over index arrays (no
SciPy).  Both add every node's incoming terms by increasing source index, so
on CPython 3.11 they return identical floats (3.12+ `sum` is compensated and
may change last bits; tests require agreement to 1e-9).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, chain, compress, repeat
from operator import mul, sub
from typing import NamedTuple

from graphonomous.embed.vectors import numpy_available
from graphonomous.model import ValidationError, check_non_negative

from ._graph import WeightedGraph, node_index, out_arcs

_POSITIVE: Callable[[float], bool] = (0.0).__lt__
# `sum` typed for float lists (the builtin's stub widens the result to int).
_sum_floats: Callable[[list[float]], float] = sum


def personalized_pagerank(
    graph: WeightedGraph,
    personalization: Mapping[str, float],
    *,
    alpha_restart: float = 0.15,
    max_iter: int = 100,
    tol: float = 1e-10,
    use_numpy: bool | None = None,
) -> dict[str, float]:
    """Personalized PageRank scores of every node.

    The walk starts from the personalization distribution p (the weights
    normalised to sum 1; empty or all-zero means uniform).  At each step it
    jumps back to p with probability `alpha_restart`; otherwise it follows an
    out-arc chosen with probability proportional to the arc's weight.  A node
    without positive out-weight (dangling) sends all its mass to p — the
    convention networkx calls ``dangling=personalization``.  The scores are the
    stationary distribution of this walk:

        x = alpha_restart * p + (1 - alpha_restart) * (P^T x + (d . x) p)

    with P the row-normalised weight matrix and d the dangling indicator.

    Parameters
    ----------
    graph : ``{node: {neighbour: weight}}`` with weights finite and >= 0;
        every neighbour must itself be a key.  Zero-weight arcs are ignored,
        self-loops are ordinary arcs.
    personalization : ``{node: weight >= 0}`` over nodes of `graph`.
    alpha_restart : restart probability in (0, 1]  (networkx's
        ``alpha`` is the follow probability ``1 - alpha_restart``).
    max_iter : at most this many iterations (>= 0).  The iteration starts
        at x = p and stops early once the L1 change of one iteration is
        <= `tol`; otherwise the last iterate is returned (no exception).
        The distance to the fixed point is at most
        ``change * (1 - alpha_restart) / alpha_restart``.
    use_numpy : None picks NumPy when it imports and ``GRAPHONOMOUS_NO_NUMPY``
        is unset or "0"; True / False force a back end.

    Returns
    -------
    ``{node: score}`` for every node, in sorted id order, summing to 1
    (empty graph: ``{}``).

    Raises
    ------
    ValidationError : bad weights, unknown nodes, out-of-range parameters.

    Complexity
    ----------
    O(V log V + E) to build the flat arrays, then O(V + E) per iteration;
    O(V + E) memory.  The pure path does no per-iteration dict work.

    References
    ----------
    L. Page, S. Brin, R. Motwani, T. Winograd, "The PageRank citation ranking:
    bringing order to the web", Stanford InfoLab (1999).
    T. H. Haveliwala, "Topic-sensitive PageRank", WWW (2002).
    """
    if isinstance(alpha_restart, bool) or not 0.0 < alpha_restart <= 1.0:
        raise ValidationError("alpha_restart", f"must be in (0, 1]; got {alpha_restart!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 0:
        raise ValidationError("max_iter", f"must be an integer >= 0; got {max_iter!r}")
    if isinstance(tol, bool) or not 0.0 <= tol < math.inf:
        raise ValidationError("tol", f"must be finite and >= 0; got {tol!r}")
    nodes, index = node_index(graph)
    seeds = _restart_distribution(personalization, index, len(nodes))
    if not nodes:
        return {}
    follow = 1.0 - alpha_restart
    arcs = _transition_arcs(graph, nodes, index, follow)
    iterate = (
        _iterate_numpy if (numpy_available() if use_numpy is None else use_numpy) else _iterate_pure
    )
    scores = iterate(arcs, len(nodes), seeds, alpha_restart, follow, max_iter, tol)
    total = math.fsum(scores)
    return {node: score / total for node, score in zip(nodes, scores, strict=True)}


class _Arcs(NamedTuple):
    """The walk's positive arcs, source-major (sources increasing)."""

    sources: list[int]
    targets: list[int]
    probabilities: list[float]  # follow * w(u->v) / outweight(u)
    dangling: list[int]  # nodes with zero out-weight


def _restart_distribution(
    personalization: Mapping[str, float], index: Mapping[str, int], n: int
) -> list[tuple[int, float]]:
    """The normalised restart vector as sorted ``(node index, probability)`` pairs."""
    pairs: list[tuple[int, float]] = []
    for node, value in personalization.items():
        i = index.get(node)
        if i is None:
            raise ValidationError("personalization", f"{node!r} is not a node of the graph")
        weight = check_non_negative(f"personalization[{node!r}]", value)
        if weight > 0.0:
            pairs.append((i, weight))
    pairs.sort()
    total = math.fsum(weight for _, weight in pairs)
    if total == 0.0:
        return [(i, 1.0 / n) for i in range(n)]
    return [(i, weight / total) for i, weight in pairs]


def _transition_arcs(
    graph: WeightedGraph, nodes: Sequence[str], index: Mapping[str, int], follow: float
) -> _Arcs:
    """Validated arcs of `graph` with follow-scaled transition probabilities."""
    row_bounds, targets, weights = out_arcs(graph, nodes, index, "graph")
    counts = list(map(sub, row_bounds[1:], row_bounds[:-1]))
    # fsum is exactly rounded, so out-weights do not depend on dict order.
    out_weights = list(
        map(math.fsum, map(weights.__getitem__, map(slice, row_bounds, row_bounds[1:])))
    )
    dangling = [i for i, total in enumerate(out_weights) if total == 0.0]
    scales = [follow / total if total > 0.0 else 0.0 for total in out_weights]
    sources = list(chain.from_iterable(map(repeat, range(len(nodes)), counts)))
    probabilities = list(map(mul, weights, chain.from_iterable(map(repeat, scales, counts))))
    if 0.0 in weights:  # a zero-weight arc is no arc: drop it from the iteration
        keep = list(map(_POSITIVE, weights))
        sources = list(compress(sources, keep))
        targets = list(compress(targets, keep))
        probabilities = list(compress(probabilities, keep))
    return _Arcs(sources, targets, probabilities, dangling)


def _iterate_pure(
    arcs: _Arcs,
    n: int,
    seeds: Sequence[tuple[int, float]],
    restart: float,
    follow: float,
    max_iter: int,
    tol: float,
) -> list[float]:
    """Power iteration over flat lists; returns the last (unnormalised) iterate."""
    # Pull form: group the arcs by target (a stable sort keeps each group's
    # sources increasing), so a node's new score is the sum of one slice of
    # the per-arc products — the cheapest per-node reduction without NumPy.
    order = sorted(range(len(arcs.targets)), key=arcs.targets.__getitem__)
    sources = list(map(arcs.sources.__getitem__, order))
    weights = list(map(arcs.probabilities.__getitem__, order))
    per_target = Counter(arcs.targets)
    bounds = list(accumulate(map(per_target.__getitem__, range(n)), initial=0))
    segments = list(map(slice, bounds, bounds[1:]))
    dangling = arcs.dangling
    x = [0.0] * n
    for i, p in seeds:
        x[i] = p
    for _ in range(max_iter):
        flow = list(map(mul, map(x.__getitem__, sources), weights))
        new = list(map(_sum_floats, map(flow.__getitem__, segments)))
        teleport = restart + follow * sum(map(x.__getitem__, dangling))
        for i, p in seeds:
            new[i] += teleport * p
        change = sum(map(abs, map(sub, new, x)))
        x = new
        if change <= tol:
            break
    return [float(value) for value in x]


def _iterate_numpy(
    arcs: _Arcs,
    n: int,
    seeds: Sequence[tuple[int, float]],
    restart: float,
    follow: float,
    max_iter: int,
    tol: float,
) -> list[float]:
    """The same iteration as `_iterate_pure` with NumPy gathers and `bincount`."""
    import numpy as np  # optional dependency: imported only when this path runs

    src = np.asarray(arcs.sources, dtype=np.intp)
    dst = np.asarray(arcs.targets, dtype=np.intp)
    prob = np.asarray(arcs.probabilities, dtype=np.float64)
    dangling = np.asarray(arcs.dangling, dtype=np.intp)
    seed_index = np.asarray([i for i, _ in seeds], dtype=np.intp)
    seed_p = np.asarray([p for _, p in seeds], dtype=np.float64)
    x = np.zeros(n, dtype=np.float64)
    x[seed_index] = seed_p
    for _ in range(max_iter):
        # bincount adds in array order; the arcs are source-major, so every
        # target sums its terms by increasing source, as the pure path does.
        new = np.bincount(dst, weights=x[src] * prob, minlength=n).astype(np.float64)
        teleport = restart + follow * float(x[dangling].sum())
        new[seed_index] += teleport * seed_p
        change = float(np.abs(new - x).sum())
        x = new
        if change <= tol:
            break
    return [float(value) for value in x.tolist()]
