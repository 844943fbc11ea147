"""Data model: ids, timestamps, validation messages, record building."""

from __future__ import annotations

import re

import pytest

from graphonomous.clock import SystemClock
from graphonomous.model import (
    KAPPA_ARC_DIRECTION,
    RELATIONSHIPS,
    SYMMETRIC_RELATIONSHIPS,
    ValidationError,
    new_id,
    parse_time,
)
from graphonomous.records import (
    DECAY_RATE_BY_NODE_TYPE,
    TIMESCALE_BY_NODE_TYPE,
    edge_from_fields,
    node_from_fields,
)

NOW = "2026-01-01T00:00:00.000Z"
UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_ids_are_uuid7_and_time_ordered() -> None:
    ids = [new_id() for _ in range(5000)]
    assert all(UUID7.match(i) for i in ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_timestamps_round_trip() -> None:
    stamp = SystemClock().iso()
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", stamp)
    assert parse_time(stamp).tzinfo is not None
    with pytest.raises(ValidationError, match="since"):
        parse_time("yesterday", "since")


def test_every_relationship_is_classified_for_kappa() -> None:
    for relationship in RELATIONSHIPS:
        directed = relationship in KAPPA_ARC_DIRECTION
        symmetric = relationship in SYMMETRIC_RELATIONSHIPS
        assert directed != symmetric, relationship


def test_node_defaults() -> None:
    node = node_from_fields({"content": "a fact"}, now=NOW)
    assert (node.node_type, node.confidence, node.q_value, node.timescale, node.agent_id) == (
        "semantic",
        0.5,
        0.5,
        "slow",
        "default",
    )
    assert node.decay_rate == DECAY_RATE_BY_NODE_TYPE["semantic"]
    assert node.created_at == node.updated_at == node.valid_from == node.reinforced_at
    assert (node.base_confidence, node.base_q_value, node.valid_to) == (0.5, 0.5, None)
    for node_type, timescale in TIMESCALE_BY_NODE_TYPE.items():
        typed = node_from_fields({"content": "x", "node_type": node_type}, now=NOW)
        assert typed.timescale == timescale
    dated = node_from_fields(
        {"content": "x", "metadata": {"date": "1:56 pm on 8 May, 2023"}}, now=NOW
    )
    assert dated.valid_from == "2023-05-08T13:56:00.000Z" and dated.created_at == NOW
    with pytest.raises(ValidationError, match="valid_to"):
        node_from_fields({"content": "x", "valid_to": "2020-01-01T00:00:00Z"}, now=NOW)
    assert node_from_fields({"content": "x", "type": "goal"}, now=NOW).node_type == "goal"


@pytest.mark.parametrize(
    ("fields", "field", "fragment"),
    [
        ({"content": "x", "node_type": "opinion"}, "node_type", "episodic, semantic"),
        ({"content": "x", "confidence": 1.5}, "confidence", "[0, 1]"),
        ({"content": "x", "confidence": True}, "confidence", "[0, 1]"),
        ({"content": "x", "confidence": float("nan")}, "confidence", "[0, 1]"),
        ({"content": "x", "metadata": "{not json"}, "metadata", "not valid JSON"),
        ({"content": "x", "metadata": [1, 2]}, "metadata", "JSON object"),
        ({"content": "x", "metadata": {"v": float("inf")}}, "metadata", "serialisable"),
        ({"content": "   "}, "content", "empty"),
        ({"content": 42}, "content", "string"),
        ({"content": "x", "timescale": "eternal"}, "timescale", "glacial"),
        ({"content": "x", "colour": "red"}, "colour", "not a node field"),
        ({"content": "x", "causal_parent_ids": "abc"}, "causal_parent_ids", "list"),
        ({"content": "x", "id": ""}, "id", "non-empty"),
    ],
)
def test_node_validation_names_the_field(
    fields: dict[str, object], field: str, fragment: str
) -> None:
    with pytest.raises(ValidationError) as info:
        node_from_fields(fields, now=NOW)
    assert info.value.field == field
    assert fragment in str(info.value)


def test_edge_aliases_and_validation() -> None:
    edge = edge_from_fields({"from": "a", "to": "b", "edge_type": "causal", "weight": 0.9}, now=NOW)
    assert (edge.source_id, edge.target_id, edge.relationship, edge.strength) == (
        "a",
        "b",
        "causal",
        0.9,
    )
    assert edge_from_fields({"source_id": "a", "target_id": "b"}, now=NOW).strength == 0.3
    with pytest.raises(ValidationError, match="relationship: must be one of causal"):
        edge_from_fields({"source_id": "a", "target_id": "b", "relationship": "likes"}, now=NOW)
    with pytest.raises(ValidationError, match="itself"):
        edge_from_fields({"source_id": "a", "target_id": "a"}, now=NOW)
    with pytest.raises(ValidationError, match="conflicts"):
        edge_from_fields(
            {"source_id": "a", "target_id": "b", "weight": 0.1, "strength": 0.2}, now=NOW
        )
