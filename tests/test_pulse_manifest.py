"""Our PULSE manifest: shape, determinism, and the runtime evidence behind its claims."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import graphonomous
from graphonomous import Graphonomous, telemetry
from graphonomous.pulse import (
    CONSOLIDATION_CHECK_INTERVAL_MS,
    CONSOLIDATION_IDLE_MS,
    LOOP_ID,
    MANIFEST_URI,
    manifest,
    manifest_resource,
    probes,
    validate_manifest,
    validate_own_manifest,
)
from graphonomous.pulse.manifest import POLICY_SUBSTRATE
from graphonomous.pulse.probes import PROBES, runtime_evidence
from graphonomous.store import BatchError
from graphonomous.topology import analyze, route

UPSTREAM_SCHEMA_SHA256 = "317ecb25c715a67271790a40bc9cffe6db91de7a86651eea01bf3f27b31123fd"
MACHINES = ("retrieve", "route", "act", "learn", "consolidate")


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {check["id"]: check["status"] for check in report["checks"]}


def test_manifest_is_deterministic_and_fresh() -> None:
    first, second = manifest(), manifest()
    assert first == second
    first["phases"].clear()  # a fresh dict each call: callers may edit theirs
    assert manifest()["phases"]
    assert manifest_resource() == manifest_resource()
    assert json.loads(manifest_resource()) == manifest()
    assert manifest_resource().endswith("}\n")


def test_identity_and_version() -> None:
    doc = manifest()
    assert doc["loop_id"] == LOOP_ID == "graphonomous.continual_learning"
    assert doc["version"] == graphonomous.__version__
    assert doc["pulse_protocol_version"] == "0.1"
    assert MANIFEST_URI == "graphonomous://pulse/manifest"


def test_phases_are_the_five_machines_in_loop_order() -> None:
    phases = manifest()["phases"]
    assert [p["kind"] for p in phases] == list(MACHINES)
    assert [p["id"] for p in phases] == [
        "retrieve_ctx",
        "route_topology",
        "act_store",
        "learn_outcome",
        "consolidate_idle",
    ]
    for phase in phases:
        # Every phase, consolidate included, says what happens when it fails.
        assert phase["on_failure"] in ("retry", "rollback", "escalate", "skip")
        assert phase["inputs"]["schema"] == f"mcp:{phase['kind']}/input"
        assert phase["outputs"]["schema"] == f"mcp:{phase['kind']}/output"
        assert phase["description"].startswith(f"MCP tool {phase['kind']} ")
    by_id = {p["id"]: p for p in phases}
    assert by_id["act_store"]["on_failure"] == "rollback"
    assert by_id["learn_outcome"]["on_failure"] == "rollback"
    assert by_id["retrieve_ctx"]["on_failure"] == "retry"
    assert [p["id"] for p in phases if p["idempotent"]] == ["route_topology"]
    # Nothing enforces a per-phase deadline, so none is declared.
    assert all("timeout_ms" not in p for p in phases)


def test_loop_shape() -> None:
    doc = manifest()
    assert doc["closure"] == {
        "from_phase": "consolidate_idle",
        "to_phase": "retrieve_ctx",
        "via": "substrate:memory",
        "guarantee": "eventual",
    }
    assert doc["cadence"]["type"] == "event"
    assert doc["cadence"]["fallback"] == {
        "type": "idle",
        "params": {
            "min_idle_ms": CONSOLIDATION_IDLE_MS,
            "check_interval_ms": CONSOLIDATION_CHECK_INTERVAL_MS,
        },
    }
    assert (CONSOLIDATION_IDLE_MS, CONSOLIDATION_CHECK_INTERVAL_MS) == (30_000, 300_000)
    (inner,) = doc["nesting"]["inner_loops"]
    assert inner["loop_id"] == "graphonomous.deliberate" and inner["wait"] == "until_done"
    assert "max_kappa > 0" in inner["trigger"]
    assert doc["invariants"]["quorum_before_commit"] is False
    assert "connections" not in doc  # nothing is delivered async / at least once


def test_substrates_are_all_named() -> None:
    doc = manifest()
    assert doc["substrates"]["memory"] == "sqlite:{db_path}"
    assert doc["substrates"]["policy"] == POLICY_SUBSTRATE
    assert "GRAPHONOMOUS_HTTP_TOKEN" in doc["substrates"]["auth"]
    assert None not in doc["substrates"].values()
    placed = manifest("/data/k.db")["substrates"]
    assert placed["memory"] == "sqlite:/data/k.db"
    assert placed["audit"] == "sqlite:/data/k.db#audit_log"
    assert json.loads(manifest_resource("/data/k.db")) == manifest("/data/k.db")


def test_telemetry_names_are_the_registry_events() -> None:
    block = manifest()["telemetry"]
    assert block["namespace"] == "graphonomous"
    assert block["phase_metrics"] == [telemetry.TOPOLOGY_ANALYZE, telemetry.TOPOLOGY_ROUTE]
    assert all(name.startswith("graphonomous.") for name in block["phase_metrics"])
    assert block["loop_metrics"] == sorted(telemetry.counters())


def test_own_manifest_passes_every_check_a_manifest_can_decide() -> None:
    bare = statuses(validate_manifest(manifest()))
    # Only T08 (signal deduplication) and T10 (tenant isolation: workspace_scope is
    # required) are runtime-only; everything else passes as written.
    assert {k for k, v in bare.items() if v != "pass"} == {"T08", "T10"}
    assert bare["T02"] == "pass"  # not pending, unlike upstream's manifest
    report = validate_own_manifest()
    assert report["overall"] == "pass"
    assert report["violations"] == []
    evidenced = {c["id"]: c for c in report["checks"] if "evidence" in c}
    assert set(evidenced) == {check_id for check_id, _ in PROBES} == {"T02", "T05", "T08", "T10"}
    assert all(c["status"] == "pass" for c in evidenced.values())


def test_every_probe_holds() -> None:
    evidence, failures = runtime_evidence()
    assert failures == {}
    assert set(evidence) == {"T02", "T05", "T08", "T10"}


def test_the_isolation_probe_fails_when_a_read_only_token_is_served_writable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graphonomous.mcp.access import Tenants

    opened = Tenants.facade
    monkeypatch.setattr(Tenants, "facade", lambda self, ns, _ro: opened(self, ns, False))
    with pytest.raises(probes.ProbeFailed, match="read-only token"):
        probes.probe_tenant_isolation()


def test_the_isolation_probe_fails_when_namespaces_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphonomous.mcp.access import Tenants

    opened = Tenants.facade
    monkeypatch.setattr(Tenants, "facade", lambda self, _ns, ro: opened(self, "tenant-b", ro))
    with pytest.raises(probes.ProbeFailed):
        probes.probe_tenant_isolation()


def test_a_refuting_probe_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> str:
        raise probes.ProbeFailed("the repeat was applied twice")

    monkeypatch.setattr(probes, "PROBES", (("T08", broken),))
    report = validate_own_manifest()
    t08 = next(c for c in report["checks"] if c["id"] == "T08")
    assert t08["status"] == "fail" and "applied twice" in t08["evidence"]
    assert report["overall"] == "fail"


def test_schema_is_the_unchanged_upstream_copy_with_its_licence() -> None:
    package = resources.files("graphonomous.pulse")
    data = package.joinpath("pulse-loop-manifest.v0.1.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == UPSTREAM_SCHEMA_SHA256
    assert "Apache License" in package.joinpath("LICENSE-pulse-schema.txt").read_text("utf-8")
    assert "ba1eb16d" in package.joinpath("NOTICE-pulse-schema.txt").read_text("utf-8")


# --------------------------------------------------------------------------
# The behaviour behind the manifest's claims (the probes re-check T02/T05/T08 live)
# --------------------------------------------------------------------------


def test_act_failure_rolls_back_the_whole_batch(tmp_path: Path) -> None:
    """T02 evidence: act declares on_failure rollback, and a failing write leaves nothing."""
    path = str(tmp_path / "atomic.db")
    with Graphonomous(db=path) as graph:
        kept = graph.store_node("valve E-47 leaks", node_id="kept")["node"]
        before = graph.graph_stats()
        with pytest.raises(BatchError) as failure:
            graph.apply_batch(
                [
                    {"op": "add_node", "node": {"id": "new", "content": "fresh fact"}},
                    {"op": "update_node", "id": "kept", "fields": {"confidence": 0.99}},
                    {"op": "update_node", "id": "missing", "fields": {"confidence": 0.1}},
                ]
            )
        # Operations 0 and 1 were written before operation 2 failed.
        assert failure.value.index == 2
        assert graph.graph_stats() == before
        assert graph.get_node("kept")["node"]["confidence"] == kept["confidence"]
    with Graphonomous(db=path) as reopened:  # nothing reached the file either
        assert reopened.list_nodes()["total"] == 1
        assert reopened.similarity_search("fresh fact", 5)["results"][0]["id"] == "kept"


def test_route_phase_is_kappa_routed() -> None:
    """T05 evidence: the route phase decides by κ alone."""
    cyclic = analyze({"a": {"b"}, "b": {"c"}, "c": {"a"}}, emit_telemetry=False)
    acyclic = analyze({"a": {"b"}, "b": {"c"}, "c": set()}, emit_telemetry=False)
    assert cyclic["max_kappa"] > 0 and route(cyclic) == "deliberate"
    assert acyclic["max_kappa"] == 0 and route(acyclic) == "fast"


def _package_sources() -> list[tuple[str, str]]:
    root = Path(graphonomous.__file__).parent
    return [(str(p.relative_to(root)), p.read_text("utf-8")) for p in sorted(root.rglob("*.py"))]


@pytest.mark.parametrize(("invariant", "table"), [("append_only_audit", "audit_log")])
def test_no_code_rewrites_the_audit_log(invariant: str, table: str) -> None:
    """append_only_audit: the package only ever INSERTs into the audit log."""
    assert manifest()["invariants"][invariant] is True
    rewrite = re.compile(rf"\b(UPDATE|DELETE\s+FROM|REPLACE\s+INTO|DROP\s+TABLE)\s+{table}\b", re.I)
    offenders = [name for name, text in _package_sources() if rewrite.search(text)]
    assert offenders == []


# GDPR erasure must scrub an erased node from every table, outcomes included;
# that lawful deletion is the one documented exception to feedback_immutability.
ERASURE_MODULES = ["learning/forgetting.py"]


def test_only_erasure_rewrites_recorded_outcomes() -> None:
    """feedback_immutability: outcome rows are appended; only GDPR erasure edits them."""
    assert manifest()["invariants"]["feedback_immutability"] is True
    rewrite = re.compile(r"\b(UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+outcomes\b", re.I)
    offenders = [name for name, text in _package_sources() if rewrite.search(text)]
    assert [name for name in offenders if name not in ERASURE_MODULES] == []


def test_learn_phase_carries_trace_ids_and_appends_outcomes() -> None:
    """trace_id_propagation, and why learn_outcome is not idempotent."""
    learner = pytest.importorskip("graphonomous.learning.outcomes")
    events: list[dict[str, Any]] = []
    handle = telemetry.attach(learner.OUTCOME_EVENT, lambda _e, _m, meta: events.append(dict(meta)))
    try:
        with Graphonomous(db=":memory:") as graph:
            cause = graph.store_node("close valve before reset", "procedural")["node"]["id"]
            first = learner.learn_from_outcome(
                graph.engine, "act-1", "success", 0.9, [cause], trace_id="trace-42"
            )
            learner.learn_from_outcome(
                graph.engine, "act-1", "success", 0.9, [cause], trace_id="trace-42"
            )
            outcome = graph.get_node(first["outcome_node_id"])["node"]
            rows = graph.store.scalar("SELECT count(*) FROM outcomes WHERE action_id = 'act-1'")
    finally:
        telemetry.detach(handle)
    assert outcome["metadata"]["trace_id"] == "trace-42"
    assert [e["trace_id"] for e in events] == ["trace-42", "trace-42"]
    assert rows == 2  # the same report twice is two outcome rows


def _tools_named(*names: str) -> list[Any]:
    from graphonomous.mcp.surfaces import SURFACES

    return [spec for specs in SURFACES.values() for spec in specs if spec.name in names]


def test_learn_phase_carries_trace_ids_once_it_exists() -> None:
    """trace_id_propagation: the outcome-reporting tool accepts a trace_id."""
    tools = _tools_named("learn", "learn_from_outcome")
    if not tools:
        pytest.skip("no learn / learn_from_outcome tool on any MCP surface yet")
    for spec in tools:
        assert "trace_id" in json.dumps(spec.to_mcp()["inputSchema"])


def test_phase_kinds_are_the_v2_tool_names_once_it_exists() -> None:
    from graphonomous.mcp.surfaces import SURFACES

    if "v2" not in SURFACES:
        pytest.skip("the v2 machine surface is not registered yet")
    names = {spec.name for spec in SURFACES["v2"]}
    assert {p["kind"] for p in manifest()["phases"]} <= names
