"""Scoped uncertainty: Wilson intervals on evidence-bearing nodes and the epistemic frontier.

Evidence of a node = (successes, trials):
- from the ``outcomes`` table: every outcome listing the node among its
  causal nodes is one trial, except ``timeout`` (the action did not
  conclude); success credits 1, failure 0, partial_success the achieved
  fraction (``evidence.fraction``, default 0.5 — the learner's signal);
- plus, optionally, numbers the node carries itself: ``metadata.successes``
  and ``metadata.trials`` (e.g. imported statistics; 0 ≤ successes ≤ trials).

A node is *evidence-bearing* when trials > 0.  Its success rate gets the
Wilson score interval (E. B. Wilson, "Probable inference, the law of
succession, and statistical inference", JASA 22, 1927) at 95 % (z = 1.96),
which behaves well for small n and p near 0 or 1, unlike the normal
approximation.  :func:`propagate` lends evidence along ``derived_from`` /
``supports`` edges (a conclusion is at most as tested as what it rests on, at
half weight per hop), and :func:`epistemic_frontier` ranks the nodes whose
interval is still wide — where one more observation teaches the most.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..model import (
    RESTS_ON_BACKWARD,
    RESTS_ON_FORWARD,
    ValidationError,
    check_id,
    check_int,
    check_unit_interval,
)
from ..store import Store
from . import tables
from .outcome_signals import PARTIAL_FRACTION_KEY, STATUS_SIGNALS

if TYPE_CHECKING:
    from ..retrieval.graph_view import GraphEngine

Z_95: Final = 1.96
# Partial success credits the learner's partial signal (the achieved fraction).
SUCCESS_CREDIT: Final[Mapping[str, float]] = {
    "success": 1.0,
    "failure": 0.0,
    "partial_success": STATUS_SIGNALS["partial_success"],
}
METADATA_SUCCESSES_KEY: Final = "successes"
METADATA_TRIALS_KEY: Final = "trials"
# Propagation: along "X rests on Y" (model.RESTS_ON_*).
PROPAGATION_OUT_KINDS: Final = RESTS_ON_FORWARD
PROPAGATION_IN_KINDS: Final = RESTS_ON_BACKWARD
PROPAGATION_WEIGHT: Final = 0.5
PROPAGATION_DEPTH: Final = 3
# Frontier defaults: an interval at least 0.3 wide (≈ fewer than 40 trials at
# p = 0.5, fewer than 10 at p = 0.9) is still an open question.
DEFAULT_MIN_GAP: Final = 0.3
DEFAULT_FRONTIER_LIMIT: Final = 20
# Outcome nodes are the evidence itself, not hypotheses: never on the frontier.
FRONTIER_EXCLUDED_TYPES: Final = ("outcome",)
DIGITS: Final = 6

Counts = tuple[float, float]  # (successes, trials)


def wilson_interval(successes: float, trials: float, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a success rate: (lower, upper) within [0, 1].

    With p = s/n: centre = (p + z²/2n) / (1 + z²/n); half-width =
    z/(1 + z²/n) · sqrt(p(1−p)/n + z²/4n²).  trials = 0 gives (0, 1).  O(1).
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValidationError("successes", "need 0 <= successes <= trials")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denominator = 1.0 + z2 / trials
    centre = (p + z2 / (2.0 * trials)) / denominator
    half = z / denominator * math.sqrt(p * (1.0 - p) / trials + z2 / (4.0 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


def binary_entropy(p: float) -> float:
    """H(p) = −p log2 p − (1−p) log2(1−p) in bits; 0 at p ∈ {0, 1}.  O(1)."""
    check_unit_interval("p", p)
    if p in (0.0, 1.0):
        return 0.0
    return -(p * math.log2(p) + (1.0 - p) * math.log2(1.0 - p))


def information_gain(successes: float, trials: float) -> float:
    """Expected entropy reduction (bits) of the success estimate from one more trial.

    The estimate is Laplace's rule p = (s+1)/(n+2); after a success it is
    (s+2)/(n+3), after a failure (s+1)/(n+3).  IG = H(p) − [p·H(p⁺) +
    (1−p)·H(p⁻)], which is ≥ 0 (H is concave and the update is a
    martingale) and shrinks as n grows.  O(1).
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValidationError("successes", "need 0 <= successes <= trials")
    p = (successes + 1.0) / (trials + 2.0)
    after_success = (successes + 2.0) / (trials + 3.0)
    after_failure = (successes + 1.0) / (trials + 3.0)
    expected = p * binary_entropy(after_success) + (1.0 - p) * binary_entropy(after_failure)
    return max(0.0, binary_entropy(p) - expected)


def _credit(status: str, evidence: Mapping[str, Any]) -> float | None:
    """Success credit of one outcome, or None when it is not a trial (timeout)."""
    if status not in SUCCESS_CREDIT:
        return None
    if status == "partial_success" and isinstance(evidence.get(PARTIAL_FRACTION_KEY), (int, float)):
        return min(1.0, max(0.0, float(evidence[PARTIAL_FRACTION_KEY])))
    return SUCCESS_CREDIT[status]


def _metadata_counts(metadata: Mapping[str, Any]) -> Counts:
    successes = metadata.get(METADATA_SUCCESSES_KEY)
    trials = metadata.get(METADATA_TRIALS_KEY)
    numbers = (int, float)
    if (
        isinstance(successes, numbers)
        and isinstance(trials, numbers)
        and not isinstance(successes, bool)
        and not isinstance(trials, bool)
        and 0 <= successes <= trials
        and math.isfinite(trials)
    ):
        return float(successes), float(trials)
    return 0.0, 0.0


def evidence_counts(store: Store, node_ids: list[str] | None = None) -> dict[str, Counts]:
    """(successes, trials) of every live evidence-bearing node (or of `node_ids` only).

    Complexity: one pass over the outcomes table plus the nodes read.
    """
    wanted = None if node_ids is None else set(node_ids)
    counts: dict[str, list[float]] = {}
    for row in tables.outcome_rows(store):
        credit = _credit(row["status"], row["evidence"])
        if credit is None:
            continue
        for node_id in row["causal_node_ids"]:
            if wanted is None or node_id in wanted:
                entry = counts.setdefault(node_id, [0.0, 0.0])
                entry[0] += credit
                entry[1] += 1.0
    live = set()
    for node_id, metadata_text in store.live_metadata():
        live.add(node_id)
        if wanted is not None and node_id not in wanted:
            continue
        if '"trials"' not in metadata_text:
            continue
        extra_s, extra_n = _metadata_counts(json.loads(metadata_text))
        if extra_n:
            entry = counts.setdefault(node_id, [0.0, 0.0])
            entry[0] += extra_s
            entry[1] += extra_n
    return {
        node_id: (entry[0], entry[1])
        for node_id, entry in sorted(counts.items())
        if node_id in live and entry[1] > 0
    }


def describe(successes: float, trials: float) -> dict[str, Any]:
    """Interval, width, point estimate, entropy and information gain of (s, n)."""
    lower, upper = wilson_interval(successes, trials)
    p_hat = successes / trials if trials else None
    return {
        "successes": round(successes, DIGITS),
        "trials": round(trials, DIGITS),
        "p_hat": None if p_hat is None else round(p_hat, DIGITS),
        "lower": round(lower, DIGITS),
        "upper": round(upper, DIGITS),
        "width": round(upper - lower, DIGITS),
        "entropy": round(binary_entropy(p_hat if p_hat is not None else 0.5), DIGITS),
        "information_gain": round(information_gain(successes, trials), DIGITS),
    }


def node_uncertainty(graph: GraphEngine, node_id: str) -> dict[str, Any]:
    """The own and propagated uncertainty of one live node.

    Output: ``{"node_id", "evidence_bearing", "own": describe(own counts),
    "effective": describe(propagated counts)}``.  Complexity: as
    :func:`propagate` (the whole graph's evidence is needed to propagate).
    """
    check_id("node_id", node_id)
    with graph.lock:
        graph.store.require_node(node_id)
        own = evidence_counts(graph.store)
        effective = propagate(graph.store, own)
    mine = own.get(node_id, (0.0, 0.0))
    lent = effective.get(node_id, (0.0, 0.0))
    return {
        "node_id": node_id,
        "evidence_bearing": mine[1] > 0,
        "own": describe(*mine),
        "effective": describe(*lent),
    }


def _rests_on(store: Store) -> dict[str, list[str]]:
    """X -> sorted ids of the live nodes X rests on (PROPAGATION_* kinds)."""
    kinds = PROPAGATION_OUT_KINDS + PROPAGATION_IN_KINDS
    parents: dict[str, set[str]] = {}
    for source, target, relationship in store.live_edges_of_kinds(kinds):
        if relationship in PROPAGATION_OUT_KINDS:
            parents.setdefault(source, set()).add(target)
        else:
            parents.setdefault(target, set()).add(source)
    return {node: sorted(found) for node, found in parents.items()}


def propagate(
    store: Store,
    own: Mapping[str, Counts],
    *,
    weight: float = PROPAGATION_WEIGHT,
    depth: int = PROPAGATION_DEPTH,
) -> dict[str, Counts]:
    """Effective evidence after lending it along derived_from / supports edges.

    eff₀(X) = own(X); eff_k(X) = own(X) + weight · mean over the nodes X rests
    on of eff_{k−1} (successes and trials alike), for k = 1 … depth — a
    fixed number of Jacobi sweeps, so cycles are harmless.  A node resting
    only on untested nodes gains nothing.  Output: counts of every node with
    effective trials > 0, sorted by id.  Complexity: O(depth · (V + E)).
    """
    parents = _rests_on(store)
    effective: dict[str, Counts] = dict(own)
    for _ in range(depth):
        step: dict[str, Counts] = {}
        for node_id in sorted(set(own) | set(parents)):
            base_s, base_n = own.get(node_id, (0.0, 0.0))
            mine = parents.get(node_id, [])
            if mine:
                lent_s = sum(effective.get(p, (0.0, 0.0))[0] for p in mine) / len(mine)
                lent_n = sum(effective.get(p, (0.0, 0.0))[1] for p in mine) / len(mine)
                base_s, base_n = base_s + weight * lent_s, base_n + weight * lent_n
            if base_n > 0:
                step[node_id] = (base_s, base_n)
        effective = step
    return dict(sorted(effective.items()))


def epistemic_frontier(
    graph: GraphEngine,
    min_gap: float = DEFAULT_MIN_GAP,
    limit: int = DEFAULT_FRONTIER_LIMIT,
    include_propagated: bool = True,
) -> dict[str, Any]:
    """The live nodes whose success rate is least known, widest interval first.

    Input: the minimum interval width, the result size, and whether nodes
    with only propagated evidence count.  A node qualifies when its
    (effective) trials > 0, its Wilson width ≥ min_gap and it is not an
    outcome node.  Ranked by width descending, then information gain
    descending, then id.  Output: ``{"min_gap", "limit", "evaluated",
    "frontier": [{"node_id", "node_type", "content", "propagated",
    **describe(counts)}]}``.  Complexity: O(outcomes + depth·(V + E) +
    F log F).
    """
    gap = check_unit_interval("min_gap", min_gap)
    limit = check_int("limit", limit, 1)
    if not isinstance(include_propagated, bool):
        raise ValidationError("include_propagated", "must be true or false")
    with graph.lock:
        own = evidence_counts(graph.store)
        counts = propagate(graph.store, own) if include_propagated else own
        nodes = graph.store.get_nodes(list(counts))
        entries = []
        for node_id, (successes, trials) in counts.items():
            node = nodes.get(node_id)
            if node is None or node.node_type in FRONTIER_EXCLUDED_TYPES:
                continue
            stats = describe(successes, trials)
            if stats["width"] >= gap:
                entries.append(
                    {
                        "node_id": node_id,
                        "node_type": node.node_type,
                        "content": node.content,
                        "propagated": node_id not in own,
                        **stats,
                    }
                )
    entries.sort(key=lambda e: (-e["width"], -e["information_gain"], e["node_id"]))
    return {"min_gap": gap, "limit": limit, "evaluated": len(counts), "frontier": entries[:limit]}
