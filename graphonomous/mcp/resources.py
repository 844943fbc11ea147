"""MCP resources, declared once as data.

Seed 003 names five resources, shared by every surface:
``graphonomous://runtime/health``, ``graphonomous://goals/snapshot``, the
template ``graphonomous://graph/node/{id}``, ``graphonomous://graph/recent``
and ``graphonomous://consolidation/log``.  A sixth, ``graphonomous://pulse/manifest``,
is this package's PULSE loop manifest (:mod:`graphonomous.pulse`), a seventh,
``graphonomous://graph/metrics``, seed 002's spectral metrics.

A reader returns a JSON-ready value, which the server sends as one
``application/json`` text content — or a ``str``, sent as it is (the manifest
keeps its own formatting).  A reader signals a missing resource by raising
:class:`ResourceNotFound` (or ``model.NotFoundError``), which the server
answers with JSON-RPC error -32002.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote

from .. import telemetry
from ..model import GraphonomousError, NotFoundError, ValidationError
from ..pulse.manifest import MANIFEST_URI, manifest_resource

JSON_MIME: Final = "application/json"
RECENT_LIMIT: Final = 20
# Rows of the goals snapshot and runs of the consolidation log a read returns.
GOALS_LIMIT: Final = 100
CONSOLIDATION_LOG_LIMIT: Final = 20


class ResourceNotFound(GraphonomousError, LookupError):
    """No resource at this URI."""


@dataclass(frozen=True)
class ResourceContext:
    """What readers may use: the graph and facts about the running server."""

    graph: Any
    server_name: str
    server_version: str
    started_at: float = field(default_factory=time.monotonic)  # time.monotonic() at start


# A reader's value is JSON-ready data, or a str holding the finished text.
StaticReader = Callable[[ResourceContext], Any]
TemplateReader = Callable[[ResourceContext, Mapping[str, str]], Any]


@dataclass(frozen=True)
class ResourceSpec:
    """A resource with a fixed URI (listed by ``resources/list``)."""

    uri: str
    name: str
    title: str
    description: str
    reader: StaticReader
    mime_type: str = JSON_MIME

    def to_mcp(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
        }


_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class ResourceTemplate:
    """A family of resources named by an RFC 6570 level-1 template such as
    ``graphonomous://graph/node/{id}`` (listed by ``resources/templates/list``).

    A variable matches one non-empty path segment (no ``/``); its value is
    percent-decoded before it reaches the reader.
    """

    uri_template: str
    name: str
    title: str
    description: str
    reader: TemplateReader
    mime_type: str = JSON_MIME
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pieces: list[str] = []
        position = 0
        for match in _VARIABLE.finditer(self.uri_template):
            pieces.append(re.escape(self.uri_template[position : match.start()]))
            pieces.append(f"(?P<{match.group(1)}>[^/]+)")
            position = match.end()
        pieces.append(re.escape(self.uri_template[position:]))
        object.__setattr__(self, "_pattern", re.compile("".join(pieces)))

    def match(self, uri: str) -> dict[str, str] | None:
        """The decoded variables if `uri` fits the template, else None.  O(len(uri))."""
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        return {name: unquote(value) for name, value in found.groupdict().items()}

    def to_mcp(self) -> dict[str, Any]:
        return {
            "uriTemplate": self.uri_template,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
        }


# --------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------


def read_health(ctx: ResourceContext) -> dict[str, Any]:
    """Runtime health: server identity, uptime, graph counts, storage, the node
    budget (`Graphonomous.budget_status`), what forgetting took in the last day
    and decay takes in the next (`retention_status`), the graph clock, and the
    telemetry counters (routing decisions per entry point among them)."""
    stats = ctx.graph.graph_stats()
    return {
        "status": "ok",
        "server": {"name": ctx.server_name, "version": ctx.server_version},
        "uptime_seconds": round(time.monotonic() - ctx.started_at, 3),
        "counts": {
            key: stats[key]
            for key in ("node_count", "edge_count", "forgotten_count", "embedding_count")
            if key in stats
        },
        "storage": {
            key: stats[key] for key in ("db_path", "schema_version", "embedder") if key in stats
        },
        "budget": ctx.graph.budget_status(),
        "retention": ctx.graph.retention_status(),
        "clock": ctx.graph.now(),
        "telemetry": telemetry.counters(),
    }


def _recency(node: Mapping[str, Any]) -> str:
    # ISO timestamps in one format compare correctly as strings.
    created: str = node["created_at"]
    return max(created, node.get("last_accessed_at") or "")


def read_recent(ctx: ResourceContext) -> dict[str, Any]:
    """The RECENT_LIMIT live nodes most recently created or accessed, newest first.

    Candidates: the newest by creation and the newest by access (two indexed
    queries); ranked by max(created_at, last_accessed_at), ties by id
    descending (ids are time-ordered).  O(RECENT_LIMIT log RECENT_LIMIT).
    """
    with ctx.graph.lock:
        candidates = {
            node.id: node.to_dict()
            for order in ("created_desc", "accessed_desc")
            for node in ctx.graph.store.list_nodes(order=order, limit=RECENT_LIMIT)
        }
    ranked = sorted(candidates.values(), key=lambda n: (_recency(n), n["id"]), reverse=True)
    nodes = ranked[:RECENT_LIMIT]
    return {"nodes": nodes, "count": len(nodes), "limit": RECENT_LIMIT}


def read_node(ctx: ResourceContext, variables: Mapping[str, str]) -> dict[str, Any]:
    """One node and its edges (``get_node``).  Missing or invalid id → ResourceNotFound."""
    try:
        result: dict[str, Any] = ctx.graph.get_node(variables["id"])
    except (NotFoundError, ValidationError) as exc:
        raise ResourceNotFound(str(exc)) from exc
    return result


def read_goals(ctx: ResourceContext) -> dict[str, Any]:
    """Goal totals, status breakdown and the first GOALS_LIMIT goals (facade goals_snapshot)."""
    result: dict[str, Any] = ctx.graph.goals_snapshot(GOALS_LIMIT)
    return result


def read_consolidation_log(ctx: ResourceContext) -> dict[str, Any]:
    """The latest CONSOLIDATION_LOG_LIMIT consolidation runs (facade consolidation_log) and
    the Orchestrator's plasticity metrics (facade plasticity_metrics, seed 003)."""
    result: dict[str, Any] = ctx.graph.consolidation_log(CONSOLIDATION_LOG_LIMIT)
    return {**result, "orchestrator": ctx.graph.plasticity_metrics()}


def read_metrics(ctx: ResourceContext) -> dict[str, Any]:
    """Spectral metrics of the live graph (facade graph_metrics)."""
    result: dict[str, Any] = ctx.graph.graph_metrics()
    return result


def read_manifest(ctx: ResourceContext) -> str:
    """The PULSE loop manifest naming this server's database file (JSON text)."""
    return manifest_resource(getattr(ctx.graph, "db_path", None))


HEALTH: Final = ResourceSpec(
    uri="graphonomous://runtime/health",
    name="runtime-health",
    title="Runtime health",
    description="Runtime health, service status, lightweight counts and telemetry counters.",
    reader=read_health,
)
GOALS: Final = ResourceSpec(
    uri="graphonomous://goals/snapshot",
    name="goals-snapshot",
    title="Goals snapshot",
    description=f"Goal totals, status breakdown and up to {GOALS_LIMIT} goals.",
    reader=read_goals,
)
RECENT: Final = ResourceSpec(
    uri="graphonomous://graph/recent",
    name="graph-recent",
    title="Recent nodes",
    description=f"The {RECENT_LIMIT} most recently added/accessed nodes, newest first.",
    reader=read_recent,
)
CONSOLIDATION_LOG: Final = ResourceSpec(
    uri="graphonomous://consolidation/log",
    name="consolidation-log",
    title="Consolidation log",
    description=(
        f"The latest {CONSOLIDATION_LOG_LIMIT} consolidation runs (stages, totals), newest "
        "first, when the last real run happened, and orchestrator plasticity metrics."
    ),
    reader=read_consolidation_log,
)
METRICS: Final = ResourceSpec(
    uri="graphonomous://graph/metrics",
    name="graph-metrics",
    title="Graph metrics",
    description="Spectral metrics: λ₂ per component, Louvain modularity Q, community entropy.",
    reader=read_metrics,
)
PULSE_MANIFEST: Final = ResourceSpec(
    uri=MANIFEST_URI,
    name="pulse-manifest",
    title="PULSE loop manifest",
    description="This server's continual-learning loop as a PULSE v0.1 manifest.",
    reader=read_manifest,
)
NODE: Final = ResourceTemplate(
    uri_template="graphonomous://graph/node/{id}",
    name="graph-node",
    title="Node details",
    description="One node with its connected edges (id percent-encoded).",
    reader=read_node,
)

RESOURCES: Final = (HEALTH, GOALS, RECENT, CONSOLIDATION_LOG, PULSE_MANIFEST, METRICS)
RESOURCE_TEMPLATES: Final = (NODE,)
