"""Category 6 — uncertainty propagation (GraphMemBench Phase 2): 8 scenarios.

Seed 003 v0.3 "Scoped uncertainty propagation": Wilson score intervals on
evidence-bearing nodes (evidence = outcomes naming the node, plus imported
``metadata.successes/trials``), lent along ``derived_from`` / ``supports``
edges, and an ``epistemic_frontier`` of the widest intervals.  Expected
intervals are computed here from Wilson's textbook formula, not read from
the product.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

from .registry import scenario

if TYPE_CHECKING:
    from ..api import Graphonomous

CATEGORY = 6
Z = 1.96  # the 95 % normal quantile (Wilson 1927), independent of the product
TOLERANCE = 1e-5  # the product rounds intervals to 6 digits


def _wilson(successes: float, trials: float) -> tuple[float, float]:
    """The Wilson score interval, written out from the formula."""
    p = successes / trials
    centre = (p + Z * Z / (2 * trials)) / (1 + Z * Z / trials)
    half = (
        Z * math.sqrt(p * (1 - p) / trials + Z * Z / (4 * trials * trials)) / (1 + Z * Z / trials)
    )
    return centre - half, centre + half


def _outcomes(graph: Graphonomous, node_id: str, successes: int, failures: int) -> None:
    for i in range(successes):
        graph.learn_from_outcome(f"ok-{node_id[-6:]}-{i}", "success", 0.9, [node_id])
    for i in range(failures):
        graph.learn_from_outcome(f"ko-{node_id[-6:]}-{i}", "failure", 0.9, [node_id])


@scenario(CATEGORY, "Wilson interval of 3 successes in 4 trials matches the formula")
def wilson_matches_formula(graph: Graphonomous) -> tuple[bool, str]:
    node = graph.store_node("Replacing the gasket stops the P-3 leak")["node"]["id"]
    _outcomes(graph, node, 3, 1)
    own = graph.node_uncertainty(node)["own"]
    lower, upper = _wilson(3, 4)
    ok = (
        own["trials"] == 4
        and abs(own["lower"] - lower) < TOLERANCE
        and abs(own["upper"] - upper) < TOLERANCE
    )
    return ok, f"got [{own['lower']}, {own['upper']}], formula [{lower:.6f}, {upper:.6f}]"


@scenario(CATEGORY, "More evidence at the same rate narrows the interval")
def evidence_narrows(graph: Graphonomous) -> tuple[bool, str]:
    few = graph.store_node("Purging the line clears air lock A")["node"]["id"]
    many = graph.store_node("Purging the line clears air lock B")["node"]["id"]
    _outcomes(graph, few, 2, 2)
    _outcomes(graph, many, 10, 10)
    a, b = graph.node_uncertainty(few)["own"], graph.node_uncertainty(many)["own"]
    ok = a["p_hat"] == b["p_hat"] == 0.5 and b["width"] < a["width"]
    return ok, f"width at n=4 {a['width']}, at n=20 {b['width']}"


@scenario(CATEGORY, "A node without evidence is not evidence-bearing: interval [0, 1]")
def no_evidence_full_interval(graph: Graphonomous) -> tuple[bool, str]:
    node = graph.store_node("The mezzanine was repainted last spring")["node"]["id"]
    result = graph.node_uncertainty(node)
    own = result["own"]
    ok = not result["evidence_bearing"] and own["trials"] == 0 and own["width"] == 1.0
    return ok, f"evidence_bearing {result['evidence_bearing']}, width {own['width']}"


@scenario(CATEGORY, "A conclusion derived_from a tested premise inherits part of its evidence")
def derived_inherits(graph: Graphonomous) -> tuple[bool, str]:
    premise = graph.store_node("Sensor S-4 reads high when the fan is off")["node"]["id"]
    conclusion = graph.store_node("Fan state explains the S-4 drift")["node"]["id"]
    graph.store_edge(conclusion, premise, "derived_from")
    _outcomes(graph, premise, 6, 2)
    result = graph.node_uncertainty(conclusion)
    eff, own = result["effective"], result["own"]
    ok = (
        own["trials"] == 0
        and 0 < eff["trials"] < 8
        and eff["p_hat"] == 0.75
        and eff["width"] > graph.node_uncertainty(premise)["own"]["width"]
    )
    return ok, f"own trials {own['trials']}, effective {eff['trials']} at p̂ {eff['p_hat']}"


@scenario(CATEGORY, "An incoming supports edge lends evidence to the supported node")
def supports_lends(graph: Graphonomous) -> tuple[bool, str]:
    support = graph.store_node("Vibration logs show the bearing fails at 80 Hz")["node"]["id"]
    claim = graph.store_node("The bearing failure is resonance driven")["node"]["id"]
    unrelated = graph.store_node("The bearing catalogue lists part 6204")["node"]["id"]
    graph.store_edge(support, claim, "supports")
    graph.store_edge(claim, unrelated, "related")
    _outcomes(graph, support, 4, 0)
    claim_eff = graph.node_uncertainty(claim)["effective"]
    unrelated_eff = graph.node_uncertainty(unrelated)["effective"]
    ok = claim_eff["trials"] > 0 and unrelated_eff["trials"] == 0
    return ok, f"supported {claim_eff['trials']} trials, related-only {unrelated_eff['trials']}"


@scenario(CATEGORY, "Lent evidence fades with every hop of the chain")
def fades_with_hops(graph: Graphonomous) -> tuple[bool, str]:
    chain = [
        graph.store_node(text)["node"]["id"]
        for text in (
            "Coolant flow measured at 40 l/min",
            "Coolant flow is adequate for the spindle",
            "Spindle overheating is not a coolant issue",
            "Spindle overheating comes from the drive belt",
        )
    ]
    for child, parent in zip(chain[1:], chain, strict=False):
        graph.store_edge(child, parent, "derived_from")
    _outcomes(graph, chain[0], 8, 0)
    trials = [graph.node_uncertainty(n)["effective"]["trials"] for n in chain]
    ok = all(a > b > 0 for a, b in itertools.pairwise(trials))
    return ok, f"effective trials along the chain {trials}"


@scenario(CATEGORY, "The frontier puts the least-known node first and omits settled ones")
def frontier_order(graph: Graphonomous) -> tuple[bool, str]:
    settled = graph.store_node("Torque 40 Nm seals the flange")["node"]["id"]
    open_question = graph.store_node("Torque 25 Nm seals the flange")["node"]["id"]
    middle = graph.store_node("Torque 30 Nm seals the flange")["node"]["id"]
    _outcomes(graph, settled, 60, 0)  # Wilson width ≈ 0.06: settled
    _outcomes(graph, open_question, 1, 1)
    _outcomes(graph, middle, 5, 3)
    frontier = graph.epistemic_frontier(min_gap=0.3)["frontier"]
    ids = [entry["node_id"] for entry in frontier]
    kinds = {entry["node_type"] for entry in frontier}
    ok = ids[:2] == [open_question, middle] and settled not in ids and "outcome" not in kinds
    return ok, f"frontier {len(ids)} nodes, first two ok {ids[:2] == [open_question, middle]}"


@scenario(CATEGORY, "Imported counts and recorded outcomes add up; a timeout is no trial")
def imported_counts(graph: Graphonomous) -> tuple[bool, str]:
    node = graph.store_node(
        "Cold restart fixes controller hang", metadata={"successes": 7, "trials": 9}
    )["node"]["id"]
    _outcomes(graph, node, 1, 0)
    graph.learn_from_outcome("hang-timeout", "timeout", 0.9, [node])
    own = graph.node_uncertainty(node)["own"]
    lower, upper = _wilson(8, 10)
    ok = own["trials"] == 10 and own["successes"] == 8 and abs(own["lower"] - lower) < TOLERANCE
    return (
        ok,
        f"{own['successes']}/{own['trials']}, lower {own['lower']} vs {lower:.6f} ({upper:.3f})",
    )
