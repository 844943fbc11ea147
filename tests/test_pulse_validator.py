"""The PULSE validator: T01 against `jsonschema`, T02–T12 and R01 on pass/fail/pending cases.

`jsonschema` (a dev dependency, imported only by tests) is the oracle for
T01: our stdlib interpreter must agree with it on our manifest, the three
upstream manifests and every mutated manifest below.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from graphonomous.pulse import (
    CHECK_IDS,
    CHECKS,
    format_report,
    manifest,
    overall_status,
    pulse_schema,
    pulse_validator,
    validate_manifest,
    validate_text,
)

UPSTREAM = Path(__file__).parent / "data" / "pulse"
UPSTREAM_NAMES = (
    "graphonomous.continual_learning",
    "prism.benchmark",
    "agentromatic.deliberation",
)
DELETE = object()


def upstream(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((UPSTREAM / f"upstream.{name}.json").read_text("utf-8"))
    return doc


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {check["id"]: check["status"] for check in report["checks"]}


def edit(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A deep copy of `doc` with the member at `path` set to `value` (DELETE removes it)."""
    out = copy.deepcopy(doc)
    if not path:
        return value
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


@pytest.fixture(scope="module")
def oracle() -> jsonschema.Draft202012Validator:
    schema = pulse_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# --------------------------------------------------------------------------
# Upstream manifests
# --------------------------------------------------------------------------

P, F, W = "pass", "fail", "pending"
EXPECTED_UPSTREAM = {
    # Three phases lack on_failure while phase_atomicity is claimed → T02 pending;
    # time is null → T09 pending; workspace_scope required → T10 pending.
    "graphonomous.continual_learning": dict(
        T01=P, T02=W, T03=P, T04=P, T05=P, T06=P, T07=P, T08=W, T09=W, T10=W, T11=P, T12=P, R01=P
    ),
    "prism.benchmark": dict(
        T01=P, T02=W, T03=P, T04=P, T05=P, T06=P, T07=P, T08=W, T09=W, T10=P, T11=P, T12=P, R01=P
    ),
    # quorum claimed and the `commit` act phase has neither policy_check nor invariant.
    "agentromatic.deliberation": dict(
        T01=P, T02=W, T03=P, T04=P, T05=P, T06=W, T07=P, T08=W, T09=W, T10=W, T11=P, T12=P, R01=P
    ),
}


@pytest.mark.parametrize("name", UPSTREAM_NAMES)
def test_upstream_manifests_get_the_expected_statuses(name: str) -> None:
    report = validate_text((UPSTREAM / f"upstream.{name}.json").read_text("utf-8"))
    assert report["loop_id"] == name
    assert statuses(report) == EXPECTED_UPSTREAM[name]
    assert report["overall"] == "pending"
    assert report["violations"] == []


def test_upstream_graphonomous_names_the_phases_missing_on_failure() -> None:
    report = validate_manifest(upstream("graphonomous.continual_learning"))
    (t02,) = [c for c in report["checks"] if c["id"] == "T02"]
    assert t02["detail"].endswith("route_topology, act_store, learn_outcome")


# --------------------------------------------------------------------------
# T01 agrees with jsonschema
# --------------------------------------------------------------------------

VALID_CONNECTION = {
    "id": "outcomes",
    "emit_phase": "learn_outcome",
    "token": "OutcomeSignal",
    "to_loop": "prism.benchmark",
}

# (path, new value) edits of our manifest; most break the schema, a few do not.
EDITS: list[tuple[tuple[Any, ...], Any]] = [
    *[((key,), DELETE) for key in pulse_schema()["required"]],
    (("pulse_protocol_version",), "0.2"),
    (("pulse_protocol_version",), 0.1),
    (("pulse_protocol_version",), "0.1\n"),  # Python's `$` accepts it; T12 does not
    (("pulse_protocol_version",), "0.1.7"),
    (("loop_id",), "Graphonomous"),
    (("loop_id",), "single"),
    (("version",), "1.0"),
    (("version",), "v1.0.0"),
    (("workspace_scope",), "tenant"),
    (("$schema",), 7),
    (("notes",), "unknown top-level key"),
    (("phases",), []),
    (("phases",), [{"id": "only", "kind": "act"}]),
    (("phases", 0, "kind"), "observe"),
    (("phases", 0, "id"), "Retrieve-Ctx"),
    (("phases", 0, "id"), DELETE),
    (("phases", 1), {"id": "x", "kind": "custom"}),
    (("phases", 1), {"id": "x", "kind": "custom", "custom_kind": "x"}),
    (("phases", 0, "custom_kind"), "ignored unless custom"),
    (("phases", 0, "timeout_ms"), -1),
    (("phases", 0, "timeout_ms"), 1.5),
    (("phases", 0, "timeout_ms"), 2.0),
    (("phases", 0, "timeout_ms"), 0),
    (("phases", 0, "max_retries"), True),
    (("phases", 0, "on_failure"), "ignore"),
    (("phases", 0, "idempotent"), "yes"),
    (("phases", 0, "colour"), "blue"),
    (("phases", 0, "inputs"), {"from": 3}),
    (("phases", 0, "inputs"), {"from": "external", "extra": 1}),  # inputs allow extra keys
    (("phases", 2, "parallel"), "no"),
    (("closure", "guarantee"), "always"),
    (("closure", "to_phase"), DELETE),
    (("closure", "note"), "x"),
    (("cadence", "type"), "cron"),
    (("cadence", "fallback", "type"), "hourly"),
    (("cadence", "fallback", "fallback"), {"params": {}}),
    (("cadence", "params"), []),
    (("nesting", "inner_loops", 0, "wait"), "forever"),
    (("nesting", "inner_loops", 0, "trigger"), DELETE),
    (("nesting", "inner_loops", 0, "timeout_ms"), -5),
    (("nesting", "parent_loop"), 5),
    (("nesting", "parent_loop"), "prism.benchmark"),
    (("substrates", "memory"), 42),
    (("substrates", "auth"), DELETE),
    (("substrates", "cache"), "x"),
    (("substrates", "time"), None),
    (("invariants", "phase_atomicity"), "true"),
    (("invariants", "secret"), True),
    (("invariants",), {}),
    (("connections",), [VALID_CONNECTION]),
    (("connections",), [{**VALID_CONNECTION, "token": "Outcome"}]),
    (("connections",), [{**VALID_CONNECTION, "max_inflight": 0}]),
    (("connections",), [{**VALID_CONNECTION, "envelope": "cloudevents.v2"}]),
    (("connections",), [{**VALID_CONNECTION, "cadence": "sync", "delivery": "exactly_once"}]),
    (("connections",), [{key: v for key, v in VALID_CONNECTION.items() if key != "to_loop"}]),
    (("connections",), {"not": "a list"}),
    (("telemetry", "phase_metrics"), [1]),
    (("telemetry", "namespace"), None),
    (("telemetry", "extra"), []),
    ((), []),
    ((), "not an object"),
]


def documents() -> Iterator[tuple[str, Any]]:
    yield "ours", manifest()
    for name in UPSTREAM_NAMES:
        yield f"upstream {name}", upstream(name)
    for path, value in EDITS:
        shown = "deleted" if value is DELETE else json.dumps(value)
        yield f"ours {'/'.join(map(str, path)) or '$'} = {shown}", edit(manifest(), path, value)


def test_enough_mutations() -> None:
    assert len(EDITS) >= 30
    rejected = [
        label
        for label, doc in documents()
        if label.startswith("ours ") and not pulse_validator().is_valid(doc)
    ]
    assert len(rejected) >= 30


@pytest.mark.parametrize(("label", "doc"), list(documents()), ids=lambda x: str(x)[:60])
def test_t01_agrees_with_jsonschema(
    label: str, doc: Any, oracle: jsonschema.Draft202012Validator
) -> None:
    ours = statuses(validate_manifest(doc))["T01"]
    assert ours == ("pass" if oracle.is_valid(doc) else "fail"), label


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*path, index))


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _random_edit(rng: random.Random, doc: Any) -> Any:
    """Replace a member, delete an object member, or add a key to an object."""
    pool: list[Any] = [None, True, 0, -1, 1.5, "", "x", "0.1", "act", [], {}, {"type": "idle"}]
    path = rng.choice(list(_paths(doc))[1:])
    action = rng.choice(("replace", "delete", "add"))
    if action == "delete" and isinstance(_at(doc, path[:-1]), dict):
        return edit(doc, path, DELETE)
    if action == "add" and isinstance(_at(doc, path), dict):
        key = rng.choice(["zzz", "id", "kind", "wait", "type", "custom_kind"])
        return edit(doc, (*path, key), rng.choice(pool))
    return edit(doc, path, rng.choice(pool))


def test_t01_agrees_with_jsonschema_on_random_mutations(
    oracle: jsonschema.Draft202012Validator,
) -> None:
    rng = random.Random(20240601)
    bases = [manifest(), *(upstream(name) for name in UPSTREAM_NAMES)]
    outcomes = {True: 0, False: 0}
    for _ in range(400):
        doc = rng.choice(bases)
        for _ in range(rng.randint(1, 3)):
            doc = _random_edit(rng, doc)
        expected = oracle.is_valid(doc)
        assert pulse_validator().is_valid(doc) == expected, json.dumps(doc)[:400]
        outcomes[expected] += 1
    assert min(outcomes.values()) >= 20  # both verdicts are exercised


# --------------------------------------------------------------------------
# T02–T12: a passing case and a failing/pending case each
# --------------------------------------------------------------------------

Edit = Callable[[dict[str, Any]], None]


def _phase(doc: dict[str, Any], ident: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [p for p in doc["phases"] if p["id"] == ident]
    (only,) = found
    return only


def _set(*path_value: Any) -> Edit:
    *path, value = path_value

    def apply(doc: dict[str, Any]) -> None:
        target = doc
        for step in path[:-1]:
            target = target[step]
        if value is DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return apply


def _drop_on_failure(ident: str) -> Edit:
    return lambda doc: _phase(doc, ident).pop("on_failure")


def _only_kinds(*kinds: str) -> Edit:
    return lambda doc: doc.update(phases=[p for p in doc["phases"] if p["kind"] in kinds])


def _each_phase(change: Callable[[dict[str, Any]], object]) -> Edit:
    def apply(doc: dict[str, Any]) -> None:
        for phase in doc["phases"]:
            change(phase)

    return apply


def _sync_connection(doc: dict[str, Any]) -> None:
    doc["connections"] = [{**VALID_CONNECTION, "cadence": "sync"}]


def _all(*edits: Edit) -> Edit:
    def apply(doc: dict[str, Any]) -> None:
        for one in edits:
            one(doc)

    return apply


# (check, edits applied to our manifest, expected status)
CASES: list[tuple[str, Edit, str]] = [
    ("T02", _all(), "pass"),
    ("T02", _drop_on_failure("act_store"), "pending"),
    ("T02", _drop_on_failure("consolidate_idle"), "pass"),  # consolidate is exempt
    (
        "T02",
        _all(_drop_on_failure("act_store"), _set("invariants", "phase_atomicity", False)),
        "pass",
    ),
    ("T03", _all(), "pass"),
    ("T03", _each_phase(lambda p: p.update(idempotent=False)), "pending"),
    ("T03", _each_phase(lambda p: p.pop("idempotent")), "pending"),
    ("T04", _all(), "pass"),
    ("T04", _set("nesting", "inner_loops", 0, "wait", DELETE), "fail"),
    ("T04", _set("nesting", DELETE), "pass"),
    ("T05", _all(), "pass"),
    ("T05", _only_kinds("retrieve", "act", "learn", "consolidate"), "fail"),
    (
        "T05",
        _all(
            _only_kinds("retrieve", "act", "learn", "consolidate"),
            _set("invariants", "kappa_routing", False),
        ),
        "pass",
    ),
    ("T06", _all(), "pass"),
    ("T06", _set("invariants", "quorum_before_commit", True), "pass"),  # act has an invariant
    (
        "T06",
        _all(
            _set("invariants", "quorum_before_commit", True),
            lambda doc: _phase(doc, "act_store").pop("invariant"),
        ),
        "pending",
    ),
    (
        "T06",
        _all(
            _set("invariants", "quorum_before_commit", True),
            lambda doc: _phase(doc, "act_store").pop("invariant"),
            lambda doc: _phase(doc, "act_store").update(policy_check="policy.allow"),
        ),
        "pass",
    ),
    (
        "T06",
        _all(_set("invariants", "quorum_before_commit", True), _only_kinds("retrieve", "route")),
        "fail",
    ),
    ("T07", _all(), "pass"),
    ("T07", _set("substrates", "audit", None), "fail"),
    (
        "T07",
        _all(_set("substrates", "audit", None), _set("invariants", "append_only_audit", False)),
        "pass",
    ),
    ("T08", _all(), "pending"),
    ("T09", _all(), "pass"),  # ours names every substrate
    ("T09", _set("substrates", "auth", None), "pending"),
    ("T09", _set("substrates", "policy", None), "pending"),
    (
        "T09",
        _all(_set("substrates", "policy", "opa://local"), _set("substrates", "auth", "oidc://x")),
        "pass",
    ),
    (
        "T09",
        _all(
            _set("substrates", "policy", "opa://local"),
            _set("substrates", "auth", "oidc://x"),
            _set("substrates", "time", None),
        ),
        "pending",
    ),
    ("T10", _all(), "pending"),  # ours is required: isolation is shown by a probe
    ("T10", _set("workspace_scope", "global"), "pass"),
    ("T10", _set("workspace_scope", "required"), "pending"),
    ("T10", _set("workspace_scope", "optional"), "pass"),
    ("T11", _all(), "pass"),
    ("T11", _sync_connection, "pass"),  # trace_id_propagation is claimed
    ("T11", _all(_sync_connection, _set("invariants", "trace_id_propagation", False)), "fail"),
    (
        "T11",
        _all(
            lambda doc: doc.update(connections=[{**VALID_CONNECTION, "cadence": "async"}]),
            _set("invariants", "trace_id_propagation", False),
        ),
        "pass",
    ),
    ("T12", _all(), "pass"),
    ("T12", _set("pulse_protocol_version", "0.1.12"), "pass"),
    ("T12", _set("pulse_protocol_version", "0.2"), "fail"),
    ("T12", _set("pulse_protocol_version", "0.10"), "fail"),
    ("T12", _set("pulse_protocol_version", "0.1\n"), "fail"),
    ("T12", _set("pulse_protocol_version", DELETE), "fail"),
]


@pytest.mark.parametrize(("check", "change", "expected"), CASES)
def test_check_statuses(check: str, change: Edit, expected: str) -> None:
    doc = manifest()
    change(doc)
    assert statuses(validate_manifest(doc))[check] == expected


def test_every_check_has_a_passing_and_a_non_passing_case() -> None:
    for ident, _, _ in CHECKS:
        seen = {expected for check, _, expected in CASES if check == ident}
        if ident == "T08":
            assert seen == {"pending"}  # runtime only; evidence is tested below
        else:
            assert "pass" in seen and seen & {"fail", "pending"}, ident


def test_checks_survive_documents_of_the_wrong_shape() -> None:
    shapes: list[Any] = [[], "x", None, {"phases": "many", "invariants": [], "substrates": 3}]
    for doc in shapes:
        report = validate_manifest(doc)
        assert [c["id"] for c in report["checks"]] == list(CHECK_IDS)
        assert report["overall"] == "fail"
        assert report["loop_id"] is None


# --------------------------------------------------------------------------
# R01 referential integrity
# --------------------------------------------------------------------------

R01_CASES: list[tuple[Edit, str]] = [
    (_set("closure", "to_phase", "nowhere"), "$.closure.to_phase"),
    (_set("closure", "from_phase", "nowhere"), "$.closure.from_phase"),
    # learn_outcome is referenced nowhere, so renaming it only duplicates an id.
    (lambda doc: _phase(doc, "learn_outcome").update(id="act_store"), "$.phases[3].id"),
    (
        lambda doc: doc.update(connections=[{**VALID_CONNECTION, "emit_phase": "gone"}]),
        "$.connections[0].emit_phase",
    ),
    (
        lambda doc: doc.update(connections=[VALID_CONNECTION, VALID_CONNECTION]),
        "$.connections[1].id",
    ),
    (
        lambda doc: _phase(doc, "retrieve_ctx")["outputs"].update(to="signal:X|phase:gone"),
        "$.phases[0].outputs.to",
    ),
]


@pytest.mark.parametrize(("change", "path"), R01_CASES)
def test_referential_integrity(change: Edit, path: str) -> None:
    doc = manifest()
    change(doc)
    report = validate_manifest(doc)
    assert statuses(report)["R01"] == "fail"
    assert statuses(report)["T01"] == "pass"  # the schema cannot see these
    assert report["overall"] == "fail"
    assert [v["path"] for v in report["violations"]] == [path]


def test_duplicate_json_keys_fail_r01() -> None:
    text = json.dumps(manifest(), indent=1).replace(
        '"loop_id": ', '"loop_id": "dup.loop",\n "loop_id": ', 1
    )
    report = validate_text(text)
    assert statuses(report)["R01"] == "fail"
    assert report["violations"][0]["path"] == "$.loop_id"
    with pytest.raises(ValueError):
        validate_text('{"pulse_protocol_version": NaN}')


# --------------------------------------------------------------------------
# Evidence, overall, report shape
# --------------------------------------------------------------------------


def test_runtime_evidence_upgrades_pending_but_never_a_failure() -> None:
    doc = manifest()
    doc["substrates"]["audit"] = None  # T07 now fails
    report = validate_manifest(doc, evidence={"T08": "dedup by signal id", "T07": "trust me"})
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["T08"]["status"] == "pass" and checks["T08"]["evidence"] == "dedup by signal id"
    assert checks["T07"]["status"] == "fail" and "evidence" not in checks["T07"]
    with pytest.raises(ValueError, match="T99"):
        validate_manifest(doc, evidence={"T99": "x"})


def test_overall_status_rule() -> None:
    assert overall_status(["pass", "pass"]) == "pass"
    assert overall_status(["pass", "pending"]) == "pending"
    assert overall_status(["pending", "fail", "pass"]) == "fail"
    doc = manifest()
    assert validate_manifest(doc, evidence={"T08": "a", "T10": "b"})["overall"] == "pass"


def test_report_shape_and_text() -> None:
    report = validate_manifest(edit(manifest(), ("closure", "guarantee"), "always"))
    assert set(report) == {"loop_id", "overall", "checks", "violations"}
    assert all(set(c) == {"id", "name", "status", "detail"} for c in report["checks"])
    assert report["violations"] == [
        {
            "path": "$.closure.guarantee",
            "message": report["violations"][0]["message"],
        }
    ]
    assert '"eventual"' in report["violations"][0]["message"]
    text = format_report(report)
    assert text.splitlines()[0].startswith("graphonomous.continual_learning: fail (")
    assert "$.closure.guarantee" in text
