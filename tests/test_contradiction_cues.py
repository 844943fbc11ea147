"""Contradiction cues measured on labelled sentence pairs (tests/data/contradiction_pairs*.tsv)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.learning.cues import claim_overlap, contradiction_cues, numbers_in_slots

DATA = Path(__file__).parent / "data"
MIN_PRECISION = 0.9
MIN_PAIRS = 200


def pairs(name: str) -> list[tuple[bool, str, str]]:
    rows = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        label, first, second = line.split("\t")
        rows.append((label == "1", first, second))
    return rows


def precision_recall(rows: list[tuple[bool, str, str]]) -> tuple[float, float]:
    predicted = [(label, bool(contradiction_cues(a, b))) for label, a, b in rows]
    tp = sum(1 for label, p in predicted if label and p)
    fp = sum(1 for label, p in predicted if p and not label)
    fn = sum(1 for label, p in predicted if label and not p)
    return tp / (tp + fp), tp / (tp + fn)


@pytest.mark.parametrize("name", ["contradiction_pairs.tsv", "contradiction_pairs_heldout.tsv"])
def test_precision_on_the_labelled_pairs(name: str) -> None:
    rows = pairs(name)
    precision, recall = precision_recall(rows)
    assert precision >= MIN_PRECISION, (precision, recall)
    assert recall >= 0.5, (precision, recall)  # a cue detector that says nothing fails too


def test_the_labelled_set_is_big_and_balanced() -> None:
    rows = pairs("contradiction_pairs.tsv") + pairs("contradiction_pairs_heldout.tsv")
    assert len(rows) >= MIN_PAIRS
    positives = sum(1 for label, _, _ in rows if label)
    assert abs(positives - (len(rows) - positives)) <= len(rows) // 10


def test_cues_are_symmetric_on_the_set() -> None:
    for _, first, second in pairs("contradiction_pairs.tsv"):
        assert contradiction_cues(first, second) == contradiction_cues(second, first)


def test_audit_pair_is_not_a_contradiction() -> None:
    # Issue #13: the number cue fired on these and stored mutual contradicts edges (a false κ loop).
    assert (
        contradiction_cues("Check PS-2 against a manual gauge", "PS-2 calibrated on Jan 18") == []
    )
    assert contradiction_cues("PS-2 was calibrated on Jan 18", "PS-2 was calibrated on Feb 3") == [
        "entity",
        "number",
    ]


def test_numbers_and_overlap() -> None:
    assert [v for v, _, _ in numbers_in_slots("PS-2 v1 E-47 at 02:00, the 15th, three pumps")] == [
        "02:00",
        "15",
        "3",
    ]
    assert numbers_in_slots("a 384-dimensional vector")[0] == ("384", "a", "dimensional")
    assert claim_overlap("The pump is running", "The pump is not running") == 1.0
    assert claim_overlap("I don't have big plans", "I saved 300 dollars") == 0.0


def test_no_false_kappa_loop_at_store_time() -> None:
    with Graphonomous(":memory:", embedder="hashing") as graph:
        a = graph.store_node("Check PS-2 against a manual gauge")["node"]["id"]
        b = graph.store_node("PS-2 calibrated on Jan 18")["node"]["id"]
        found = graph.belief_contradictions(node_id=a)
        assert b not in {c["node_id"] for c in found["contradictions"]}
