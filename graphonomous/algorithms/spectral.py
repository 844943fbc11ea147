"""Algebraic connectivity (the Fiedler value) of the undirected view of a digraph."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import add, mul, sub

from graphonomous.model import ValidationError

from ._graph import WeightedGraph, undirected_view

Vector = list[float]

# Relative residual of each inner linear solve.  Inverse iteration tolerates
# inexact solves: the eigenvalue estimate still converges to ~1e-12 relative
# (measured against numpy.linalg.eigvalsh), with fewer conjugate-gradient steps.
INNER_TOL = 1e-8


def fiedler_value(graph: WeightedGraph, *, tol: float = 1e-12, max_iter: int = 200) -> float:
    """Second-smallest eigenvalue λ2 of the Laplacian L = D - A of the undirected view.

    The undirected view weighs {u, v} with w(u->v) + w(v->u); self-loops do
    not change L.  λ2 > 0 exactly when the graph is connected, and grows the
    harder it is to cut the graph in two (Fiedler 1973).

    Method: inverse iteration on L restricted to the vectors orthogonal to
    the all-ones vector (L's null space on a connected graph).  Each step
    solves L y = v by conjugate gradients (warm-started at v / estimate, to
    relative residual `INNER_TOL`), re-centres y (mean 0) and normalises it.
    The estimate is the Rayleigh quotient vᵀLv, which is never below λ2 (up
    to rounding) and approaches it; the iteration stops when it changes by
    at most ``tol`` relative, or after `max_iter` solves.  The start vector
    is fixed (``((i + 1) * 2654435761 mod 2^32) / 2^32``, centred), so the
    result is deterministic.  (Power iteration on cI - L, the textbook
    alternative, converges at rate (c - λ3)/(c - λ2), which is within 1e-3
    of 1 on a 100-node path; inverse iteration converges at (λ2/λ3)^2.)

    Parameters
    ----------
    graph : ``{node: {neighbour: weight >= 0}}`` (every node a key).
    tol : relative change of the estimate that ends the iteration (>= 0).
    max_iter : most inverse-iteration steps (>= 1).

    Returns
    -------
    λ2 as a float (relative error about `tol` once converged).  0.0 for a
    disconnected graph (checked exactly by a traversal, not numerically) and
    for graphs with fewer than two nodes, which have no λ2.

    Complexity
    ----------
    Each step is one conjugate-gradient solve: O(sqrt(λmax / λ2)) products
    with L, O(V + E) each; the number of steps grows with log(1/tol) /
    log(λ3/λ2).  Pure Python, meant for diagnostics: measured ~50 ms for a
    100-node path, ~1 s for a 1,000-node random graph and ~6 s for a
    1,000-node path (λmax/λ2 ≈ 4e5, the hard case).

    References
    ----------
    M. Fiedler, "Algebraic connectivity of graphs", Czech. Math. J. 23 (1973).
    M. R. Hestenes, E. Stiefel, "Methods of conjugate gradients for solving
    linear systems", J. Res. Nat. Bur. Standards 49 (1952).
    """
    if isinstance(tol, bool) or not 0.0 <= tol < math.inf:
        raise ValidationError("tol", f"must be finite and >= 0; got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValidationError("max_iter", f"must be an integer >= 1; got {max_iter!r}")
    _, neighbours, _ = undirected_view(graph)
    n = len(neighbours)
    if n < 2 or not _is_connected(neighbours):
        return 0.0
    laplacian = _laplacian_operator(neighbours)
    v = _normalised(_centred([((i + 1) * 2654435761 % 2**32) / 2**32 for i in range(n)]))
    estimate = _dot(v, laplacian(v))
    for _ in range(max_iter):
        # Warm start at v / estimate (exact if v is already the eigenvector),
        # so late solves need only a few steps.
        guess = [x / estimate for x in v]
        v = _normalised(_centred(_conjugate_gradients(laplacian, v, guess, INNER_TOL)))
        previous, estimate = estimate, _dot(v, laplacian(v))
        if abs(previous - estimate) <= tol * estimate:
            break
    return estimate


def _is_connected(neighbours: Sequence[dict[int, float]]) -> bool:
    """Whether one traversal from node 0 reaches every node."""
    seen = [False] * len(neighbours)
    seen[0] = True
    stack = [0]
    reached = 1
    while stack:
        for j in neighbours[stack.pop()]:
            if not seen[j]:
                seen[j] = True
                reached += 1
                stack.append(j)
    return reached == len(neighbours)


def _laplacian_operator(neighbours: Sequence[dict[int, float]]) -> Callable[[Vector], Vector]:
    """v -> L v for L = D - A (self-loops excluded: they cancel in D - A)."""
    columns = [list(row) for row in neighbours]
    weights = [list(row.values()) for row in neighbours]
    degree = [math.fsum(row.values()) for row in neighbours]

    def apply(v: Vector) -> Vector:
        get = v.__getitem__
        return [
            d * x - sum(map(mul, map(get, cols), ws))
            for d, x, cols, ws in zip(degree, v, columns, weights, strict=True)
        ]

    return apply


def _conjugate_gradients(
    apply: Callable[[Vector], Vector], b: Vector, x: Vector, rtol: float
) -> Vector:
    """Approximately solve L x = b (b orthogonal to the ones vector) from guess `x`.

    Stops when the residual norm is at most ``rtol * |b|``.
    """
    r = list(map(sub, b, apply(x)))
    p = list(r)
    rr = _dot(r, r)
    stop = (rtol * rtol) * _dot(b, b)
    for _ in range(10 * len(b) + 100):
        if rr <= stop:
            break
        lp = apply(p)
        step = rr / _dot(p, lp)
        x = list(map(add, x, map(mul, repeat(step), p)))
        r = list(map(sub, r, map(mul, repeat(step), lp)))
        rr, rr_old = _dot(r, r), rr
        p = list(map(add, r, map(mul, repeat(rr / rr_old), p)))
    return x


def _dot(a: Vector, b: Vector) -> float:
    return math.fsum(map(mul, a, b))


def _centred(v: Vector) -> Vector:
    mean = math.fsum(v) / len(v)
    return [x - mean for x in v]


def _normalised(v: Vector) -> Vector:
    norm = math.sqrt(_dot(v, v))
    return [x / norm for x in v]
