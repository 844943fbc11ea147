"""Building validated Node and Edge records from caller-supplied fields.

The CLI, the MCP tools and batch operations all pass loosely typed fields
through these two functions, so every entry point validates the same way and
every message names the offending field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .model import (
    CREATION_SOURCES,
    DEFAULT_AGENT_ID,
    DEFAULT_CREATION_SOURCE,
    DEFAULT_EDGE_DECAY_RATE,
    DEFAULT_EDGE_STRENGTH,
    DEFAULT_NODE_CONFIDENCE,
    DEFAULT_TIMESCALE,
    NODE_TYPES,
    RELATIONSHIPS,
    TIMESCALES,
    Edge,
    Node,
    ValidationError,
    check_choice,
    check_id,
    check_id_list,
    check_metadata,
    check_non_negative,
    check_text,
    check_unit_interval,
    new_id,
    normalize_edge_fields,
)

# Relative decay speeds of seed 003's memory-type table (episodic fades unless
# reinforced, procedural skills persist); callers may override per node.
DECAY_RATE_BY_NODE_TYPE: Final[Mapping[str, float]] = {
    "episodic": 0.02,
    "semantic": 0.005,
    "procedural": 0.002,
    "temporal": 0.01,
    "outcome": 0.008,
    "goal": 0.001,
}

NODE_INPUT_FIELDS: Final = frozenset(
    {
        "id",
        "node_type",
        "type",
        "content",
        "metadata",
        "source",
        "causal_parent_ids",
        "confidence",
        "creation_source",
        "timescale",
        "decay_rate",
        "pinned",
        "agent_id",
    }
)
EDGE_INPUT_FIELDS: Final = frozenset(
    {
        "id",
        "source_id",
        "target_id",
        "relationship",
        "strength",
        "decay_rate",
        "metadata",
        "agent_id",
    }
)


def _reject_unknown(fields: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise ValidationError(
            unknown[0], f"is not a {what} field (allowed: {', '.join(sorted(allowed))})"
        )


def node_from_fields(fields: Mapping[str, Any], *, now: str) -> Node:
    """A new Node from input fields, with defaults filled in.

    `type` is accepted as an alias of `node_type` (seed 003 column name).
    Raises ValidationError naming the first bad field.
    """
    _reject_unknown(fields, NODE_INPUT_FIELDS, "node")
    values = dict(fields)
    if "type" in values:
        alias = values.pop("type")
        if values.setdefault("node_type", alias) != alias:
            raise ValidationError("type", "conflicts with 'node_type'")
    node_type = check_choice("node_type", values.get("node_type", "semantic"), NODE_TYPES)
    stamp = now
    decay = values.get("decay_rate")
    pinned = values.get("pinned", False)
    if not isinstance(pinned, bool):
        raise ValidationError("pinned", f"must be true or false; got {pinned!r}")
    source = values.get("source")
    if source is not None and not isinstance(source, str):
        raise ValidationError("source", "must be a string")
    return Node(
        id=check_id("id", values["id"]) if values.get("id") is not None else new_id(),
        node_type=node_type,
        content=check_text("content", values.get("content")),
        metadata=check_metadata("metadata", values.get("metadata") or {}),
        source=source,
        causal_parent_ids=check_id_list("causal_parent_ids", values.get("causal_parent_ids") or []),
        confidence=check_unit_interval(
            "confidence", values.get("confidence", DEFAULT_NODE_CONFIDENCE)
        ),
        creation_source=check_choice(
            "creation_source",
            values.get("creation_source", DEFAULT_CREATION_SOURCE),
            CREATION_SOURCES,
        ),
        timescale=check_choice("timescale", values.get("timescale", DEFAULT_TIMESCALE), TIMESCALES),
        decay_rate=check_unit_interval("decay_rate", decay)
        if decay is not None
        else DECAY_RATE_BY_NODE_TYPE[node_type],
        pinned=pinned,
        agent_id=check_id("agent_id", values.get("agent_id") or DEFAULT_AGENT_ID),
        created_at=stamp,
        updated_at=stamp,
    )


def edge_from_fields(fields: Mapping[str, Any], *, now: str) -> Edge:
    """A new Edge from input fields; upstream aliases (edge_type, weight, from, to) accepted."""
    values = normalize_edge_fields(fields)
    _reject_unknown(values, EDGE_INPUT_FIELDS, "edge")
    stamp = now
    source_id = check_id("source_id", values.get("source_id"))
    target_id = check_id("target_id", values.get("target_id"))
    if source_id == target_id:
        raise ValidationError("target_id", "an edge cannot connect a node to itself")
    return Edge(
        id=check_id("id", values["id"]) if values.get("id") is not None else new_id(),
        source_id=source_id,
        target_id=target_id,
        relationship=check_choice(
            "relationship", values.get("relationship", "related"), RELATIONSHIPS
        ),
        strength=check_unit_interval("strength", values.get("strength", DEFAULT_EDGE_STRENGTH)),
        decay_rate=check_non_negative(
            "decay_rate", values.get("decay_rate", DEFAULT_EDGE_DECAY_RATE)
        ),
        metadata=check_metadata("metadata", values.get("metadata") or {}),
        agent_id=check_id("agent_id", values.get("agent_id") or DEFAULT_AGENT_ID),
        created_at=stamp,
        updated_at=stamp,
    )
