"""Building validated Node and Edge records from caller-supplied fields.

The CLI, the MCP tools and batch operations all pass loosely typed fields
through these two functions, so every entry point validates the same way and
every message names the offending field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Final

from .model import (
    CREATION_SOURCES,
    DEFAULT_AGENT_ID,
    DEFAULT_CREATION_SOURCE,
    DEFAULT_EDGE_DECAY_RATE,
    DEFAULT_EDGE_STRENGTH,
    DEFAULT_NODE_CONFIDENCE,
    DEFAULT_NODE_TYPE,
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
    format_time,
    new_id,
    normalize_edge_fields,
    parse_time,
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

# The memory tier a node starts in when the caller names none (seed 003's wording:
# semantic is "stable knowledge" and procedural "skills persist" — the slow tier,
# 90 days without reinforcement; goals "persist until resolved" — glacial; episodes,
# temporal patterns and outcomes are session-scale — medium, 7 days).  The TTL of
# each tier is learning/retention.py's.
TIMESCALE_BY_NODE_TYPE: Final[Mapping[str, str]] = {
    "episodic": "medium",
    "semantic": "slow",
    "procedural": "slow",
    "temporal": "medium",
    "outcome": "medium",
    "goal": "glacial",
}
assert set(TIMESCALE_BY_NODE_TYPE) == set(NODE_TYPES)
assert set(TIMESCALE_BY_NODE_TYPE.values()) <= set(TIMESCALES)

# Metadata keys that carry when a statement happened (a conversation turn's session
# date): the first parseable one becomes valid_from when the caller gives none.
EVENT_TIME_KEYS: Final = ("valid_from", "date", "datetime", "date_time", "timestamp", "time")
_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
# "1:56 pm on 8 May, 2023", "8 May 2023", "May 8, 2023" (conversation logs' dates).
_CLOCK_PART: Final = r"(?:(?P<hour>\d{1,2})(?::(?P<minute>\d\d))?\s*(?P<ampm>am|pm)\s*(?:on\s+)?)?"
_DAY_MONTH: Final = re.compile(
    _CLOCK_PART + r"(?P<day>\d{1,2})\s+(?P<month>[a-z]+)\.?,?\s+(?P<year>\d{4})$", re.I
)
_MONTH_DAY: Final = re.compile(
    _CLOCK_PART + r"(?P<month>[a-z]+)\.?\s+(?P<day>\d{1,2}),?\s+(?P<year>\d{4})$", re.I
)

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
        "valid_from",
        "valid_to",
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
    node_type = check_choice("node_type", values.get("node_type", DEFAULT_NODE_TYPE), NODE_TYPES)
    stamp = now
    decay = values.get("decay_rate")
    pinned = values.get("pinned", False)
    if not isinstance(pinned, bool):
        raise ValidationError("pinned", f"must be true or false; got {pinned!r}")
    source = values.get("source")
    if source is not None and not isinstance(source, str):
        raise ValidationError("source", "must be a string")
    node = Node(
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
        timescale=check_choice(
            "timescale", values.get("timescale", TIMESCALE_BY_NODE_TYPE[node_type]), TIMESCALES
        ),
        decay_rate=check_unit_interval("decay_rate", decay)
        if decay is not None
        else DECAY_RATE_BY_NODE_TYPE[node_type],
        pinned=pinned,
        agent_id=check_id("agent_id", values.get("agent_id") or DEFAULT_AGENT_ID),
        created_at=stamp,
        updated_at=stamp,
        reinforced_at=stamp,
    )
    node.valid_from, node.valid_to = _validity(values, stamp)
    node.base_confidence = node.confidence
    node.base_q_value = node.q_value
    return node


def _validity(values: Mapping[str, Any], stamp: str) -> tuple[str, str | None]:
    """valid_from / valid_to: the caller's, else an event time in the metadata, else
    the write's time.  A window that ends before it begins is refused."""
    start = values.get("valid_from")
    start = _stamp("valid_from", start) if start is not None else None
    if start is None:
        start = event_time(values.get("metadata")) or stamp
    end = values.get("valid_to")
    end = _stamp("valid_to", end) if end is not None else None
    if end is not None and end <= start:
        raise ValidationError("valid_to", f"must be after valid_from ({start}); got {end}")
    return start, end


def _stamp(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be an ISO 8601 timestamp; got {value!r}")
    return format_time(parse_time(value, field))


def event_time(metadata: object) -> str | None:
    """When a statement happened, from its metadata (`EVENT_TIME_KEYS`), or None.

    Accepts ISO 8601 and the forms conversation logs use.  O(keys).

    >>> event_time({"date": "1:56 pm on 8 May, 2023"})
    '2023-05-08T13:56:00.000Z'
    >>> event_time({"date": "May 8, 2023"}), event_time({"date": "soon"})
    ('2023-05-08T00:00:00.000Z', None)
    """
    if isinstance(metadata, str):
        metadata = check_metadata("metadata", metadata)
    if not isinstance(metadata, Mapping):
        return None
    for key in EVENT_TIME_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            moment = parse_loose_time(value.strip())
            if moment is not None:
                return format_time(moment)
    return None


def parse_loose_time(text: str) -> datetime | None:
    """ISO 8601, or "[h[:mm] am|pm on] D Month[,] YYYY" / "Month D, YYYY"; else None."""
    try:
        return parse_time(text)
    except ValidationError:
        pass
    match = _DAY_MONTH.match(text) or _MONTH_DAY.match(text)
    month = _MONTHS.get(match["month"].lower()) if match else None
    if match is None or month is None:
        return None
    hour = int(match["hour"] or 0) % 12 + (12 if (match["ampm"] or "").lower() == "pm" else 0)
    try:
        return datetime(
            int(match["year"]),
            month,
            int(match["day"]),
            hour,
            int(match["minute"] or 0),
            tzinfo=timezone.utc,
        )
    except ValueError:
        return None


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
