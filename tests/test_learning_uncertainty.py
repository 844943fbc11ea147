"""Uncertainty: Wilson intervals, entropy, information gain, propagation, the frontier."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphonomous import Graphonomous, ValidationError
from graphonomous.learning.uncertainty import (
    PROPAGATION_WEIGHT,
    binary_entropy,
    evidence_counts,
    information_gain,
    propagate,
    wilson_interval,
)


def _quadratic_bounds(successes: float, trials: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson's definition: the p solving (p̂ − p)² = z²·p(1 − p)/n (an independent check)."""
    p_hat = successes / trials
    a = 1 + z * z / trials
    b = -(2 * p_hat + z * z / trials)
    root = math.sqrt(b * b - 4 * a * p_hat * p_hat)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


@pytest.mark.parametrize(
    ("successes", "trials"), [(5, 10), (0, 10), (10, 10), (81, 263), (1, 2), (2.5, 4)]
)
def test_wilson_interval_matches_its_definition(successes: float, trials: float) -> None:
    low, high = wilson_interval(successes, trials)
    expected_low, expected_high = _quadratic_bounds(successes, trials)
    assert math.isclose(low, max(0.0, expected_low), abs_tol=1e-12)
    assert math.isclose(high, min(1.0, expected_high), abs_tol=1e-12)


def test_wilson_interval_table_values() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(5, 10)  # the textbook 95 % interval for 5 of 10: 0.237–0.763
    assert round(low, 3) == 0.237 and round(high, 3) == 0.763


def test_wilson_interval_rejects_impossible_counts() -> None:
    for successes, trials in ((3, 2), (-1, 2), (1, -1)):
        with pytest.raises(ValidationError):
            wilson_interval(successes, trials)
    with pytest.raises(ValidationError):
        information_gain(3, 2)


@given(st.integers(0, 500), st.integers(0, 500))
def test_wilson_interval_properties(successes: int, extra: int) -> None:
    trials = successes + extra
    low, high = wilson_interval(successes, trials)
    assert 0.0 <= low <= high <= 1.0
    if trials:
        assert low - 1e-12 <= successes / trials <= high + 1e-12
        wider = wilson_interval(successes * 4, trials * 4)
        assert wider[1] - wider[0] <= high - low + 1e-12  # more data, narrower interval


def test_binary_entropy() -> None:
    assert binary_entropy(0.0) == 0.0 and binary_entropy(1.0) == 0.0
    assert binary_entropy(0.5) == 1.0
    assert math.isclose(binary_entropy(0.2), binary_entropy(0.8))
    with pytest.raises(ValidationError):
        binary_entropy(1.5)


@given(st.integers(0, 200), st.integers(0, 200))
def test_information_gain_is_non_negative_and_shrinks(successes: int, extra: int) -> None:
    trials = successes + extra
    gain = information_gain(successes, trials)
    assert gain >= 0.0
    assert information_gain(successes * 2, trials * 2) <= gain + 1e-12


def test_evidence_counts_from_outcomes_and_metadata(graph: Graphonomous) -> None:
    a = graph.store_node("Procedure A", "procedural")["node"]["id"]
    b = graph.store_node("Procedure B", "procedural", metadata={"successes": 3, "trials": 4})
    b_id = b["node"]["id"]
    bad = graph.store_node("Odd stats", metadata={"successes": 5, "trials": 2})["node"]["id"]
    graph.learn_from_outcome("1", "success", 1.0, [a])
    graph.learn_from_outcome("2", "failure", 1.0, [a, b_id])
    graph.learn_from_outcome("3", "partial_success", 1.0, [a], evidence={"fraction": 0.25})
    graph.learn_from_outcome("4", "partial_success", 1.0, [a])
    graph.learn_from_outcome("5", "timeout", 1.0, [a])  # not a trial
    counts = evidence_counts(graph.store)
    assert counts[a] == (1.0 + 0.25 + 0.5, 4.0)
    assert counts[b_id] == (3.0, 5.0)
    assert bad not in counts
    graph.forget_node(b_id)
    assert b_id not in evidence_counts(graph.store)


def test_propagation_lends_half_weight_per_hop(graph: Graphonomous) -> None:
    tested = graph.store_node("Tested premise", metadata={"successes": 8, "trials": 10})
    premise = tested["node"]["id"]
    middle = graph.store_node("Derived conclusion")["node"]["id"]
    far = graph.store_node("Further conclusion")["node"]["id"]
    farther = graph.store_node("Three hops away")["node"]["id"]
    beyond = graph.store_node("Four hops away")["node"]["id"]
    graph.store_edge(middle, premise, "derived_from")
    graph.store_edge(middle, far, "supports")
    graph.store_edge(farther, far, "derived_from")
    graph.store_edge(beyond, farther, "derived_from")
    graph.store_edge(premise, middle, "related")  # not a dependency
    own = evidence_counts(graph.store)
    effective = propagate(graph.store, own)
    w = PROPAGATION_WEIGHT
    assert effective[premise] == (8.0, 10.0)
    assert effective[middle] == (8.0 * w, 10.0 * w)
    assert effective[far] == (8.0 * w * w, 10.0 * w * w)
    assert effective[farther] == (8.0 * w**3, 10.0 * w**3)
    assert beyond not in effective  # depth 3
    # A cycle of dependencies stays finite (fixed number of sweeps).
    graph.store_edge(premise, farther, "derived_from")
    looped = propagate(graph.store, own)
    assert all(math.isfinite(n) for _, n in looped.values())


def test_epistemic_frontier(graph: Graphonomous) -> None:
    wide = graph.store_node("Rarely tried fix", "procedural")["node"]["id"]
    narrow = graph.store_node("Well-tested fix", "procedural")["node"]["id"]
    graph.store_node("Untested idea")
    dependant = graph.store_node("Fix relies on the rarely tried one")["node"]["id"]
    graph.store_edge(dependant, wide, "derived_from")
    graph.learn_from_outcome("w1", "success", 1.0, [wide])
    for i in range(60):
        graph.learn_from_outcome(f"n{i}", "success" if i % 4 else "failure", 1.0, [narrow])
    frontier = graph.epistemic_frontier(min_gap=0.3)
    ids = [entry["node_id"] for entry in frontier["frontier"]]
    assert ids == [dependant, wide]  # half a trial is wider than one; outcome nodes excluded
    top = frontier["frontier"][0]
    assert top["propagated"] is True and top["trials"] == PROPAGATION_WEIGHT
    assert frontier["frontier"][1]["p_hat"] == 1.0
    own_only = graph.epistemic_frontier(min_gap=0.3, include_propagated=False)
    assert [e["node_id"] for e in own_only["frontier"]] == [wide]
    everything = graph.epistemic_frontier(min_gap=0.0, limit=1)
    assert len(everything["frontier"]) == 1
    assert narrow in [e["node_id"] for e in graph.epistemic_frontier(min_gap=0.0)["frontier"]]
    with pytest.raises(ValidationError):
        graph.epistemic_frontier(min_gap=2)
    with pytest.raises(ValidationError):
        graph.epistemic_frontier(limit=0)


def test_node_uncertainty(graph: Graphonomous) -> None:
    node = graph.store_node("Reset by power cycle", "procedural")["node"]["id"]
    graph.learn_from_outcome("a", "success", 1.0, [node])
    graph.learn_from_outcome("b", "failure", 1.0, [node])
    result = graph.node_uncertainty(node)
    assert result["evidence_bearing"] is True
    own = result["own"]
    low, high = wilson_interval(1, 2)
    assert own["trials"] == 2 and own["p_hat"] == 0.5 and own["entropy"] == 1.0
    assert math.isclose(own["lower"], low, abs_tol=1e-6)
    assert math.isclose(own["width"], high - low, abs_tol=1e-6)
    assert result["effective"] == own
    fresh = graph.store_node("Never tried")["node"]["id"]
    untried = graph.node_uncertainty(fresh)
    assert untried["evidence_bearing"] is False and untried["own"]["width"] == 1.0
    assert untried["own"]["p_hat"] is None
