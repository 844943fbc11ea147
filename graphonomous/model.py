"""The data model: every enumeration, default and validation rule lives here.

Other modules import these names instead of repeating string literals, so a
relationship kind or a default is defined exactly once (SPEC.md §2 mirrors
this file).
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Final

# --------------------------------------------------------------------------
# Enumerations
# --------------------------------------------------------------------------

NODE_TYPES: Final = ("episodic", "semantic", "procedural", "temporal", "outcome", "goal")
# The type of a node whose writer chose none: a statement of what is known (seed 003).
DEFAULT_NODE_TYPE: Final = "semantic"
TIMESCALES: Final = ("fast", "medium", "slow", "glacial")
CREATION_SOURCES: Final = ("inference", "consolidation", "federation", "manual")
# Retrieval aids: outcome records and nodes made by consolidation (summaries) point
# at knowledge.  They are stored with their vectors but kept out of the search
# indexes and never returned as ranked results (SPEC §9.3.6, retrieval.experience).
AID_NODE_TYPES: Final = ("outcome",)
AID_CREATION_SOURCES: Final = ("consolidation",)


@dataclass(frozen=True)
class RelationshipKind:
    """Everything the package means by one edge kind: the one home of that fact.

    - `kappa`: how the kind enters κ's directed graph (SPEC §4.1): +1 an arc
      source→target, -1 an arc target→source (the kind is the inverse of
      another, so `A superseded_by B` is the arc of `B supersedes A` and storing
      both never fakes a feedback loop), None: a symmetric association, no arc.
      `contradicts` counts: belief revision stores it both ways, so a mutual
      contradiction is an SCC with κ = 1.
    - `walk_weight`: how strongly retrieval's walks (PageRank, Louvain, graph
      support) follow it, times the edge's strength (seed 002's table adapted to
      our kinds): justifications and derivations carry the most evidence,
      dependencies and causal links next; structural and temporal links are
      neutral; loose associations are damped; a contradiction is almost a wall
      (0.01 keeps the graph connected while letting nearly no mass through);
      supersession points at stale knowledge, so it is low.
    - `causal`: the source is a cause of the target (`causal_context`; outcomes
      update these edges' causal metadata).
    - `rests_on`: "source" when the source rests on the target (X derived_from
      Y, X depends_on Y), "target" when the target rests on the source (Y
      supports X), None otherwise.  The one "rests on" definition (SPEC
      "Learning"): retraction, cascade forgetting and uncertainty propagation
      all follow it.
    - `structural`: the source is a part of the target (a chunk of a file, a
      turn of a session): parts share context; a part goes with its whole.
    - `symmetric`: an association with no direction.
    - `inverse`: the kind that says the same with the ends swapped.
    - `judgement`: an edge recording that its two ends were judged against
      each other (consolidation never re-judges them).
    """

    name: str
    kappa: int | None
    walk_weight: float
    causal: bool = False
    rests_on: str | None = None
    structural: bool = False
    symmetric: bool = False
    inverse: str | None = None
    judgement: bool = False


RELATIONSHIP_KINDS: Final[tuple[RelationshipKind, ...]] = (
    RelationshipKind("causal", 1, 1.3, causal=True),
    RelationshipKind("causes", 1, 1.3, causal=True),
    RelationshipKind("resolves", 1, 1.3, causal=True),
    RelationshipKind("related", None, 0.8, symmetric=True),
    RelationshipKind("related_to", None, 0.8, symmetric=True),
    RelationshipKind("part_of", 1, 1.2, structural=True),
    RelationshipKind("follows", 1, 1.0),
    RelationshipKind("contradicts", 1, 0.01, judgement=True),
    RelationshipKind("supersedes", 1, 0.2, inverse="superseded_by", judgement=True),
    RelationshipKind("superseded_by", -1, 0.2, inverse="supersedes", judgement=True),
    RelationshipKind("depends_on", 1, 1.4, rests_on="source"),
    RelationshipKind("similar_to", None, 0.8, symmetric=True),
    RelationshipKind("supports", 1, 1.5, rests_on="target"),
    RelationshipKind("derived_from", 1, 1.5, rests_on="source"),
    RelationshipKind("temporal_before", 1, 1.0, inverse="temporal_after"),
    RelationshipKind("temporal_after", -1, 1.0, inverse="temporal_before"),
    RelationshipKind("co_occurs", None, 0.8, symmetric=True),
)
RELATIONSHIP: Final[Mapping[str, RelationshipKind]] = {k.name: k for k in RELATIONSHIP_KINDS}
RELATIONSHIPS: Final = tuple(kind.name for kind in RELATIONSHIP_KINDS)
KAPPA_ARC_DIRECTION: Final[Mapping[str, int]] = {
    **{kind.name: kind.kappa for kind in RELATIONSHIP_KINDS if kind.kappa is not None},
    # BendScript canvas kinds (seed 000): causal and temporal are directed;
    # context, associative and user are excluded.
    "temporal": 1,
}
SYMMETRIC_RELATIONSHIPS: Final = tuple(k.name for k in RELATIONSHIP_KINDS if k.symmetric)
CAUSAL_RELATIONSHIPS: Final = tuple(k.name for k in RELATIONSHIP_KINDS if k.causal)
STRUCTURAL_RELATIONSHIPS: Final = tuple(k.name for k in RELATIONSHIP_KINDS if k.structural)
JUDGEMENT_RELATIONSHIPS: Final = tuple(k.name for k in RELATIONSHIP_KINDS if k.judgement)
# X rests on Y: X -kind-> Y for these kinds ...
RESTS_ON_FORWARD: Final = tuple(k.name for k in RELATIONSHIP_KINDS if k.rests_on == "source")
# ... or Y -kind-> X for these.
RESTS_ON_BACKWARD: Final = tuple(k.name for k in RELATIONSHIP_KINDS if k.rests_on == "target")
for _kind in RELATIONSHIP_KINDS:
    assert _kind.inverse is None or RELATIONSHIP[_kind.inverse].inverse == _kind.name
    assert _kind.symmetric == (_kind.kappa is None)
# BendScript canvas kinds that never become arcs (seed 000: "hard rule, no toggle").
BENDSCRIPT_EXCLUDED_KINDS: Final = ("context", "associative", "user")

# Which edges of a node: those it is the source of, the target of, or either.
EDGE_DIRECTIONS: Final = ("out", "in", "both")

# Upstream (seed 000) names accepted at the MCP/CLI boundary.
EDGE_FIELD_ALIASES: Final[Mapping[str, str]] = {
    "edge_type": "relationship",
    "weight": "strength",
    "from": "source_id",
    "to": "target_id",
    "source": "source_id",
    "target": "target_id",
}

# --------------------------------------------------------------------------
# Defaults (seed 003 schema and config)
# --------------------------------------------------------------------------

DEFAULT_AGENT_ID: Final = "default"
# The namespace (project) a facade, CLI or server acts in unless told otherwise; the
# data of a file made before namespaces existed lives there (store migration 10).
DEFAULT_NAMESPACE: Final = "default"
# A namespace name: lower-case letters, digits, '.', '_' and '-', starting with a letter
# or digit, at most 64 characters — safe in a file name, a URL path and a log line.
NAMESPACE_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
# The namespace the CLI and `serve` act in when no --project is given.
PROJECT_ENV_VAR: Final = "GRAPHONOMOUS_PROJECT"
# The bearer token the Streamable HTTP transport requires off loopback.
HTTP_TOKEN_ENV_VAR: Final = "GRAPHONOMOUS_HTTP_TOKEN"
# The HTTP servers' tokens file (principals, namespaces, rights; mcp/access.py).
TOKENS_FILE_ENV_VAR: Final = "GRAPHONOMOUS_TOKENS_FILE"
DEFAULT_NODE_CONFIDENCE: Final = 0.5
DEFAULT_NODE_DECAY_RATE: Final = 0.01
DEFAULT_Q_VALUE: Final = 0.5
DEFAULT_EDGE_STRENGTH: Final = 0.3
DEFAULT_EDGE_DECAY_RATE: Final = 0.005
DEFAULT_TIMESCALE: Final = "medium"
DEFAULT_CREATION_SOURCE: Final = "inference"
EMBEDDING_DIMENSIONS: Final = 384
# Two statements made within this many seconds of each other are concurrent: neither
# is the newer (consolidation's recency strategy, the update rule on write and the
# newest-claim order at read all use it).  An hour: a conversation, a work session.
CONCURRENT_WITHIN_S: Final = 3600.0
MAX_CONTENT_CHARS: Final = 1_000_000
MAX_ID_CHARS: Final = 256
# The most rows one list or search call returns (list_nodes, manage_edge list,
# similarity_search): large enough for any client page, small enough that one
# answer stays a bounded JSON document.
MAX_LIST_LIMIT: Final = 10_000


class GraphonomousError(Exception):
    """The root of every error this package raises on purpose: catch it to catch them
    all.  Each subclass also keeps its standard base (ValueError, LookupError, ...),
    so existing ``except`` clauses still match."""


class ValidationError(GraphonomousError, ValueError):
    """Bad input.  `field` names the offending field for CLI/MCP messages."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class NotFoundError(GraphonomousError, LookupError):
    """A referenced node or edge does not exist (or is forgotten)."""

    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(f"{kind} not found: {ident}")
        self.kind = kind
        self.ident = ident


# --------------------------------------------------------------------------
# Ids and time
# --------------------------------------------------------------------------

_id_lock = threading.Lock()
_last_ms = 0
_seq = 0


def new_id() -> str:
    """A UUIDv7 string (RFC 9562): 48-bit ms timestamp, version 7, random tail.

    Ids made by one process sort in creation order: within one millisecond a
    12-bit counter (the `rand_a` field) keeps them increasing.
    """
    global _last_ms, _seq
    with _id_lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            _seq += 1
            if _seq > 0xFFF:  # counter exhausted: borrow the next millisecond
                _last_ms += 1
                _seq = 0
            ms = _last_ms
        else:
            _last_ms, _seq = ms, 0
        seq = _seq
    tail = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (seq << 64) | (0b10 << 62) | tail
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def format_time(moment: datetime) -> str:
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_time(value: str, field_name: str = "time") -> datetime:
    """Parse an ISO 8601 timestamp (a trailing Z is accepted); naive means UTC."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError) as exc:
        raise ValidationError(field_name, f"not an ISO 8601 timestamp: {value!r}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment


# --------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------


@dataclass
class Node:
    id: str
    node_type: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    causal_parent_ids: list[str] = field(default_factory=list)
    confidence: float = DEFAULT_NODE_CONFIDENCE
    access_count: int = 0
    last_accessed_at: str | None = None
    creation_source: str = DEFAULT_CREATION_SOURCE
    timescale: str = DEFAULT_TIMESCALE
    decay_rate: float = DEFAULT_NODE_DECAY_RATE
    q_value: float = DEFAULT_Q_VALUE
    q_update_count: int = 0
    evidence_count: int = 0
    revision_id: str | None = None
    superseded_by: str | None = None
    forgotten_at: str | None = None
    pinned: bool = False
    agent_id: str = DEFAULT_AGENT_ID
    created_at: str = ""
    updated_at: str = ""
    # When the statement holds in the world: [valid_from, valid_to) (None: open).
    valid_from: str | None = None
    valid_to: str | None = None
    # The retention anchor: confidence and Q-value as last reinforced, and when
    # (learning/retention.py decays from it).
    reinforced_at: str | None = None
    base_confidence: float | None = None
    base_q_value: float | None = None
    # Why it was soft-forgotten: "faded" (decay), "budget", "asked" (forget_node).
    forgotten_reason: str | None = None
    embedding: list[float] | None = None

    def to_dict(self, include_embedding: bool = False) -> dict[str, Any]:
        """The canonical JSON form (snake_case; embedding only on request)."""
        out: dict[str, Any] = {
            "id": self.id,
            "node_type": self.node_type,
            "content": self.content,
            "metadata": self.metadata,
            "source": self.source,
            "causal_parent_ids": list(self.causal_parent_ids),
            "confidence": self.confidence,
            "access_count": self.access_count,
            "last_accessed_at": self.last_accessed_at,
            "creation_source": self.creation_source,
            "timescale": self.timescale,
            "decay_rate": self.decay_rate,
            "q_value": self.q_value,
            "q_update_count": self.q_update_count,
            "evidence_count": self.evidence_count,
            "revision_id": self.revision_id,
            "superseded_by": self.superseded_by,
            "forgotten_at": self.forgotten_at,
            "pinned": self.pinned,
            "agent_id": self.agent_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "reinforced_at": self.reinforced_at,
            "base_confidence": self.base_confidence,
            "base_q_value": self.base_q_value,
            "forgotten_reason": self.forgotten_reason,
        }
        if include_embedding:
            out["embedding"] = self.embedding
        return out


@dataclass
class Edge:
    id: str
    source_id: str
    target_id: str
    relationship: str
    strength: float = DEFAULT_EDGE_STRENGTH
    co_activation_count: int = 0
    decay_rate: float = DEFAULT_EDGE_DECAY_RATE
    metadata: dict[str, Any] = field(default_factory=dict)
    agent_id: str = DEFAULT_AGENT_ID
    created_at: str = ""
    updated_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "relationship": self.relationship,
            "strength": self.strength,
            "co_activation_count": self.co_activation_count,
            "decay_rate": self.decay_rate,
            "metadata": self.metadata,
            "agent_id": self.agent_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


# --------------------------------------------------------------------------
# Validation helpers (messages name the field and the allowed values)
# --------------------------------------------------------------------------


def check_choice(field_name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValidationError(field_name, f"must be one of {', '.join(allowed)}; got {value!r}")
    return value


def check_unit_interval(field_name: str, value: object) -> float:
    """A float in [0, 1] (ints accepted, bools, NaN and infinities rejected)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(field_name, f"must be a number in [0, 1]; got {value!r}")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValidationError(field_name, f"must be a number in [0, 1]; got {value!r}")
    return number


def check_non_negative(field_name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(field_name, f"must be a non-negative number; got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0.0:
        raise ValidationError(field_name, f"must be a non-negative number; got {value!r}")
    return number


def check_int(field_name: str, value: object, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field_name, f"must be an integer; got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValidationError(field_name, f"must be an integer {bound}; got {value!r}")
    return value


def check_text(field_name: str, value: object, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValidationError(field_name, f"must be a string; got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ValidationError(field_name, "must not be empty")
    if len(value) > MAX_CONTENT_CHARS:
        raise ValidationError(field_name, f"is longer than {MAX_CONTENT_CHARS} characters")
    return value


def check_namespace(field_name: str, value: object) -> str:
    """A valid namespace name (`NAMESPACE_PATTERN`), else a ValidationError naming the field."""
    if not isinstance(value, str) or NAMESPACE_PATTERN.fullmatch(value) is None:
        raise ValidationError(
            field_name,
            "must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit",
        )
    return value


# Why text holding NUL (U+0000) is refused (hygiene.refuse_nul, check_id): PostgreSQL
# cannot hold it in text, so neither backend stores it.
NUL_MESSAGE: Final = (
    "contains a NUL character (U+0000), which is not stored (PostgreSQL cannot hold it); remove it"
)


def check_id(field_name: str, value: object) -> str:
    """A non-empty id of at most MAX_ID_CHARS characters without NUL (no stored id holds
    one, and PostgreSQL refuses it even in a lookup)."""
    if not isinstance(value, str) or not value or len(value) > MAX_ID_CHARS:
        raise ValidationError(
            field_name, f"must be a non-empty string of at most {MAX_ID_CHARS} characters"
        )
    if "\x00" in value:
        raise ValidationError(field_name, NUL_MESSAGE)
    return value


# JSON stored in a column: sorted keys (the same value is always the same
# text) and no NaN/Infinity (not JSON).  One shared encoder: json.dumps with
# keyword arguments builds a new encoder per call, twice the cost on bulk writes.
_CANONICAL_JSON: Final = json.JSONEncoder(sort_keys=True, allow_nan=False)


def canonical_json(value: object) -> str:
    """The JSON text stored for `value`: keys sorted, default separators.

    Equal to ``json.dumps(value, sort_keys=True, allow_nan=False)``.  Raises
    TypeError (not JSON-serialisable) or ValueError (NaN/Infinity, cycles).
    Complexity: O(size of value).
    """
    return _CANONICAL_JSON.encode(value)


def check_metadata(field_name: str, value: object) -> dict[str, Any]:
    """A JSON object; a string holding a JSON object is accepted (CLI input)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValidationError(field_name, f"is not valid JSON ({exc.msg})") from exc
    if not isinstance(value, dict):
        raise ValidationError(field_name, "must be a JSON object")
    try:
        canonical_json(value)
    except (TypeError, ValueError) as exc:
        raise ValidationError(field_name, f"is not JSON-serialisable ({exc})") from exc
    return value


def check_id_list(field_name: str, value: object) -> list[str]:
    if not isinstance(value, (list, tuple)):
        raise ValidationError(field_name, "must be a list of ids")
    return [check_id(f"{field_name}[{i}]", item) for i, item in enumerate(value)]


def normalize_edge_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Map upstream field names (edge_type, weight, from, to) to ours.

    Giving both an alias and its canonical name with different values is an error.
    """
    out: dict[str, Any] = {}
    for key, value in fields.items():
        canonical = EDGE_FIELD_ALIASES.get(key, key)
        if canonical in out and out[canonical] != value:
            raise ValidationError(key, f"conflicts with {canonical!r}")
        out[canonical] = value
    return out
