"""Runtime evidence for our own manifest: small probes run against a fresh graph.

Some PULSE checks cannot be decided from a manifest: T08 (signal
deduplication) is runtime-only, and T02/T05 are claims about behaviour.
Each probe here exercises the real code path on a throw-away in-memory
graph and returns the evidence text only when the behaviour holds, so
``graphonomous pulse --check`` reports what this build actually does.
A probe that does not hold contributes no evidence (the check keeps the
status the manifest alone gives it) and says why in the returned notes.

Every probe is O(1) work (a handful of nodes); all of them run in
milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..api import Graphonomous
from ..store import BatchError
from ..topology import analyze
from ..topology.analysis import route


class ProbeFailed(Exception):
    """The behaviour a probe checks did not hold."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ProbeFailed(message)


def probe_act_rollback() -> str:
    """T02: the act phase declares on_failure rollback — a batch failing at its last
    operation leaves the graph as it was."""
    with Graphonomous(":memory:") as graph:
        graph.store_node("valve E-47 leaks", node_id="kept")
        before = graph.graph_stats()
        try:
            graph.apply_batch(
                [
                    {"op": "add_node", "node": {"id": "new", "content": "fresh fact"}},
                    {"op": "update_node", "id": "kept", "fields": {"confidence": 0.99}},
                    {"op": "update_node", "id": "missing", "fields": {"confidence": 0.1}},
                ]
            )
        except BatchError:
            pass
        else:
            raise ProbeFailed("a batch with a failing operation was accepted")
        _require(graph.graph_stats() == before, "a failed batch left writes behind")
    return "a batch failing at operation 2 after two writes left the graph unchanged"


def probe_kappa_routing() -> str:
    """T05: the route phase answers 'deliberate' exactly when max_kappa > 0."""
    cyclic = analyze({"a": {"b"}, "b": {"c"}, "c": {"a"}}, emit_telemetry=False)
    acyclic = analyze({"a": {"b"}, "b": {"c"}, "c": set()}, emit_telemetry=False)
    _require(route(cyclic) == "deliberate", "a 3-cycle was not routed to deliberate")
    _require(route(acyclic) == "fast", "a chain was not routed fast")
    return (
        f"3-cycle: max_kappa {cyclic['max_kappa']} -> deliberate; "
        f"chain: max_kappa {acyclic['max_kappa']} -> fast"
    )


def probe_signal_deduplication() -> str:
    """T08: an outcome signal repeated with the same signal_id is applied once."""
    with Graphonomous(":memory:") as graph:
        cause = graph.store_node("restart the pump after E-47")["node"]["id"]

        def report() -> dict[str, Any]:
            return graph.learn_from_outcome(
                "probe", "success", 0.9, [cause], signal_id="probe-signal"
            )

        first = report()
        after_first = graph.get_node(cause)["node"]
        again = report()
        _require(not first["duplicate"] and bool(first["updates"]), "first signal not applied")
        _require(again["duplicate"] and not again["updates"], "repeat not flagged duplicate")
        _require(graph.get_node(cause)["node"] == after_first, "repeat changed the cause")
        outcomes = graph.list_nodes(node_type="outcome")["total"]
        _require(outcomes == 1, f"repeat recorded {outcomes} outcome nodes")
    return (
        "learn_from_outcome sent twice with one signal_id: applied once, the repeat "
        "answered duplicate: true and changed nothing"
    )


PROBES: Final[tuple[tuple[str, Callable[[], str]], ...]] = (
    ("T02", probe_act_rollback),
    ("T05", probe_kappa_routing),
    ("T08", probe_signal_deduplication),
)


def runtime_evidence() -> tuple[dict[str, str], dict[str, str]]:
    """Run every probe.  Output: ``(evidence, failures)``, both check id → text.

    `evidence` holds the probes whose behaviour held; `failures` the others,
    with the reason.  Deterministic: the probes use fresh in-memory graphs.
    """
    evidence: dict[str, str] = {}
    failures: dict[str, str] = {}
    for check_id, probe in PROBES:
        try:
            evidence[check_id] = f"probe {probe.__name__}: {probe()}"
        except ProbeFailed as exc:
            failures[check_id] = f"probe {probe.__name__}: {exc}"
    return evidence, failures
