"""Our own PULSE loop manifest: `graphonomous.continual_learning`, built in code.

The manifest declares the temporal shape of the loop an agent runs against
this server: retrieve → route → act → learn → consolidate, one phase per
machine of the v2 MCP surface, closed by consolidation feeding the next
retrieval through the graph itself.  It is built by a function (not stored
as a file) so that the version, the telemetry event names and the timer
settings come from the code they describe.

Every claim is meant to be true of this package; the reasons are in the
comments next to each value and in spec/pulse.md §1.  Where the
server could not honour a field (timeouts, a policy engine, a sync
cross-loop connection) the field is left out or set to null rather than
invented.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .. import __version__, telemetry
from ..model import HTTP_TOKEN_ENV_VAR, TOKENS_FILE_ENV_VAR

LOOP_ID: Final = "graphonomous.continual_learning"
PULSE_PROTOCOL_VERSION: Final = "0.1"
PULSE_SCHEMA_ID: Final = "https://opensentience.org/schemas/pulse-loop-manifest.v0.1.json"
MANIFEST_URI: Final = "graphonomous://pulse/manifest"
DB_PATH_PLACEHOLDER: Final = "{db_path}"

# The consolidation timer's settings (seed 003, Consolidator: "30 s of no
# activity = idle", checked every 5 minutes).  They are declared here until
# the timer's own constants exist in graphonomous.model; then import them.
CONSOLIDATION_IDLE_MS: Final = 30_000
CONSOLIDATION_CHECK_INTERVAL_MS: Final = 300_000

POLICY_SUBSTRATE: Final = "builtin:graphonomous.contract+graphonomous.learning.forgetting"
AUTH_SUBSTRATE: Final = (
    "mcp-transport:stdio-parent-process"
    f"|http-bearer-tokens-file:{TOKENS_FILE_ENV_VAR}|http-bearer-env:{HTTP_TOKEN_ENV_VAR}"
)

# How many times a loop driver may repeat a failed retrieve.  Retrying is safe
# because a failed retrieve commits nothing (see the phase's comment).
RETRIEVE_MAX_RETRIES: Final = 2


def _tool_schema(machine: str, direction: str) -> str:
    # Phase payloads are the input/output schemas of the v2 machine tools.
    return f"mcp:{machine}/{direction}"


def _phases() -> list[dict[str, Any]]:
    return [
        {
            "id": "retrieve_ctx",
            "kind": "retrieve",
            "description": (
                "MCP tool retrieve (action context): ranked context subgraph for a query "
                "with its kappa topology."
            ),
            "inputs": {"from": "external", "schema": _tool_schema("retrieve", "input")},
            "outputs": {"to": "phase:route_topology", "schema": _tool_schema("retrieve", "output")},
            # Not idempotent: each call records an access (access_count,
            # last_accessed_at) that later ranking and consolidation read, so
            # two calls leave a different graph than one.  Retrying is still
            # safe: that bookkeeping commits only with a successful call.
            "idempotent": False,
            "on_failure": "retry",
            "max_retries": RETRIEVE_MAX_RETRIES,
        },
        {
            "id": "route_topology",
            "kind": "route",
            "description": (
                "MCP tool route (action topology): SCCs and kappa of the retrieved region; "
                "fast when max_kappa is 0, deliberate otherwise."
            ),
            "inputs": {"from": "phase:retrieve_ctx", "schema": _tool_schema("route", "input")},
            "outputs": {"to": "phase:act_store", "schema": _tool_schema("route", "output")},
            # A pure function of the graph region: only telemetry counters move.
            "idempotent": True,
            # A failed analysis is reported to the caller as a tool error; we
            # never fall back to "fast" on our own.
            "on_failure": "escalate",
            "invariant": "kappa_routing",
        },
        {
            "id": "act_store",
            "kind": "act",
            "description": (
                "MCP tool act (store_node, store_edge, manage_edge, delete_node, batches): "
                "mutate the graph."
            ),
            "inputs": {"from": "phase:route_topology", "schema": _tool_schema("act", "input")},
            "outputs": {"to": "substrate:memory", "schema": _tool_schema("act", "output")},
            "idempotent": False,
            # Every write is one SQLite transaction: a failure leaves nothing behind.
            "on_failure": "rollback",
            "invariant": "phase_atomicity",
        },
        {
            "id": "learn_outcome",
            "kind": "learn",
            "description": (
                "MCP tool learn (action from_outcome): record an outcome and move the "
                "confidence of the nodes that caused it; a repeated signal_id is applied once."
            ),
            "inputs": {"from": "external", "schema": _tool_schema("learn", "input")},
            "outputs": {"to": "substrate:memory", "schema": _tool_schema("learn", "output")},
            # Each new report appends an outcome row and moves confidence again;
            # only a report repeating its signal_id is recognised and dropped.
            "idempotent": False,
            "on_failure": "rollback",
            "invariant": "feedback_immutability",
        },
        {
            "id": "consolidate_idle",
            "kind": "consolidate",
            "description": (
                "MCP tool consolidate (action run) or the idle timer: decay, prune, "
                "strengthen, merge and promote."
            ),
            "inputs": {"from": "substrate:memory", "schema": _tool_schema("consolidate", "input")},
            "outputs": {"to": "substrate:memory", "schema": _tool_schema("consolidate", "output")},
            # Decay depends on the time elapsed since the last run.
            "idempotent": False,
            # A failed cycle is rolled back and simply skipped; the next idle
            # tick runs a fresh one.
            "on_failure": "skip",
        },
    ]


def manifest(db_path: str | None = None) -> dict[str, Any]:
    """The PULSE v0.1 manifest of this package's loop.

    Input: `db_path`, the database file to name in the memory and audit
    substrates; None keeps the placeholder ``{db_path}`` (deterministic).
    Output: a fresh JSON-ready dict, keys in schema order.  O(1).
    Reference: PULSE loop-manifest schema v0.1; seed 003 "PULSE-conforming loop".
    """
    where = DB_PATH_PLACEHOLDER if db_path is None else db_path
    return {
        "$schema": PULSE_SCHEMA_ID,
        "pulse_protocol_version": PULSE_PROTOCOL_VERSION,
        "loop_id": LOOP_ID,
        "loop_name": "Graphonomous continual-learning loop",
        "version": __version__,
        "owner": "graphonomous",
        # Every row and every call is in exactly one namespace (SPEC "Namespaces");
        # an HTTP session is opened for one, with the token's rights (SPEC "Access
        # control").  Isolation is shown at runtime: probes.probe_tenant_isolation (T10).
        "workspace_scope": "required",
        "description": (
            "An agent gathers context from a knowledge graph, checks the region for "
            "feedback loops, writes what it learned, reports how its action turned "
            "out, and lets idle-time consolidation reshape the graph for the next query."
        ),
        "phases": _phases(),
        "closure": {
            "from_phase": "consolidate_idle",
            "to_phase": "retrieve_ctx",
            "via": "substrate:memory",
            "guarantee": "eventual",
        },
        "cadence": {
            "type": "event",
            "params": {"trigger": "mcp_tool_call"},
            "fallback": {
                "type": "idle",
                "params": {
                    "min_idle_ms": CONSOLIDATION_IDLE_MS,
                    "check_interval_ms": CONSOLIDATION_CHECK_INTERVAL_MS,
                },
            },
        },
        "nesting": {
            "parent_loop": None,
            "inner_loops": [
                {
                    "loop_id": "graphonomous.deliberate",
                    "trigger": "phase:route_topology when max_kappa > 0",
                    "wait": "until_done",
                }
            ],
        },
        "substrates": {
            "memory": f"sqlite:{where}",
            # The rules every phase's writes pass before they commit: the
            # canonical schema contract (types, ranges, known kinds, no
            # self-loops) and the forgetting policy (pinned nodes are never
            # forgotten, erasure is audited).  Built in, not a remote engine:
            # if a rule raises, the phase's on_failure applies.
            "policy": POLICY_SUBSTRATE,
            # The append-only audit_log table in the same database file.
            "audit": f"sqlite:{where}#audit_log",
            # Phases are reachable only through MCP: over stdio only the parent
            # process holds the pipes; over HTTP the server binds loopback and
            # elsewhere requires a bearer token: one of the tokens file (principal,
            # namespaces, rights) or the single $GRAPHONOMOUS_HTTP_TOKEN.
            "auth": AUTH_SUBSTRATE,
            "transport": "mcp",
            "time": "clock:utc",
        },
        "invariants": {
            "phase_atomicity": True,
            "feedback_immutability": True,
            "append_only_audit": True,
            "kappa_routing": True,
            # Single writer, no quorum; deliberation is the inner loop's business.
            "quorum_before_commit": False,
            "outcome_grounding": True,
            "trace_id_propagation": True,
        },
        # No `connections`: the telemetry registry calls handlers synchronously
        # and drops an event whose handler raises, which is neither the async
        # nor the at-least-once delivery a cross-loop connection would promise.
        "telemetry": {
            "namespace": "graphonomous",
            "phase_metrics": [telemetry.TOPOLOGY_ANALYZE, telemetry.TOPOLOGY_ROUTE],
            # The aggregate counters telemetry.counters() keeps (its keys are fixed).
            "loop_metrics": sorted(telemetry.counters()),
        },
    }


def manifest_resource(db_path: str | None = None) -> str:
    """The manifest as JSON text, for the MCP resource ``graphonomous://pulse/manifest``.

    Input: as :func:`manifest`.  Output: indented UTF-8 JSON ending in a newline.  O(1).
    """
    return json.dumps(manifest(db_path), indent=2, ensure_ascii=False) + "\n"
