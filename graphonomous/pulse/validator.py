"""Validate any PULSE v0.1 loop manifest: the schema plus the 12 conformance checks.

A report is::

    {"loop_id": str | None,
     "overall": "pass" | "fail" | "pending",
     "checks": [{"id": "T01", "name": ..., "status": ..., "detail": ...}, ...],
     "violations": [{"path": "$.closure.to_phase", "message": ...}, ...]}

``checks`` holds T01–T12 in order, then R01 (referential integrity, the
rules the schema cannot express).  ``overall`` is "fail" if any check
fails, else "pending" if any is pending, else "pass".  ``violations`` lists
the schema violations (T01) then the referential ones (R01).

T01 uses the stdlib :class:`~graphonomous.contract.schema.SchemaValidator`
on the PULSE schema shipped as package data.  Every other check reads the
document defensively (a value of the wrong type counts as absent), so a
report is produced even for documents that fail T01.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from ..contract.schema import (
    SchemaValidator,
    Violation,
    load_package_schema,
    parse_json,
    path_sort_key,
)
from .manifest import manifest

SCHEMA_PACKAGE: Final = "graphonomous.pulse"
SCHEMA_FILE: Final = "pulse-loop-manifest.v0.1.json"

PASS: Final = "pass"
FAIL: Final = "fail"
PENDING: Final = "pending"
STATUSES: Final = (PASS, FAIL, PENDING)

# The substrates every manifest must name (the schema's `required`).
REQUIRED_SUBSTRATES: Final = ("memory", "policy", "audit", "auth")
# Anchored for the whole string: `$` in a Python pattern would also accept a
# trailing newline ("0.1\n"), which is not a protocol version.
_PROTOCOL_VERSION: Final = re.compile(r"0\.1(\.[0-9]+)?", re.ASCII)
_PHASE_REF: Final = "phase:"


@functools.cache
def pulse_validator() -> SchemaValidator:
    """The validator for the PULSE v0.1 schema, built once (it is immutable)."""
    return SchemaValidator(pulse_schema())


def pulse_schema() -> dict[str, Any]:
    """The PULSE loop-manifest schema v0.1 (a fresh copy, loaded from package data)."""
    return load_package_schema(SCHEMA_PACKAGE, SCHEMA_FILE)


# --------------------------------------------------------------------------
# Defensive readers: wrong types count as absent
# --------------------------------------------------------------------------


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _phases(doc: Mapping[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index, phase) for every phase that is an object."""
    return [(i, p) for i, p in enumerate(_items(doc.get("phases"))) if isinstance(p, dict)]


def _claimed(doc: Mapping[str, Any], invariant: str) -> bool:
    return _obj(doc.get("invariants")).get(invariant) is True


def _phase_label(index: int, phase: Mapping[str, Any]) -> str:
    ident = phase.get("id")
    return ident if isinstance(ident, str) else f"phases[{index}]"


def _names(labels: list[str]) -> str:
    return ", ".join(labels)


# --------------------------------------------------------------------------
# The checks.  Each takes the document and returns (status, detail).
# --------------------------------------------------------------------------

Outcome = tuple[str, str]


def check_phase_atomicity(doc: Mapping[str, Any]) -> Outcome:
    """T02: if phase_atomicity is claimed, every non-consolidate phase declares on_failure.

    Claimed and some phase lacks it → pending (the claim cannot be checked);
    not claimed → pass.  O(phases).
    """
    if not _claimed(doc, "phase_atomicity"):
        return PASS, "phase_atomicity not claimed"
    missing = [
        _phase_label(i, p)
        for i, p in _phases(doc)
        if p.get("kind") != "consolidate" and "on_failure" not in p
    ]
    if missing:
        return PENDING, f"phase_atomicity claimed but no on_failure on: {_names(missing)}"
    return PASS, "every non-consolidate phase declares on_failure"


def check_phase_idempotency(doc: Mapping[str, Any]) -> Outcome:
    """T03: pass if some phase declares ``idempotent: true``, else pending.  O(phases)."""
    idempotent = [_phase_label(i, p) for i, p in _phases(doc) if p.get("idempotent") is True]
    if idempotent:
        return PASS, f"idempotent phases: {_names(idempotent)}"
    return PENDING, "no phase declares idempotent: true"


def check_nesting_waits(doc: Mapping[str, Any]) -> Outcome:
    """T04: every inner loop declares ``wait``, else fail.  O(inner loops)."""
    inner = _items(_obj(doc.get("nesting")).get("inner_loops"))
    missing = [
        str(_obj(loop).get("loop_id", f"inner_loops[{i}]"))
        for i, loop in enumerate(inner)
        if "wait" not in _obj(loop)
    ]
    if missing:
        return FAIL, f"inner loops without wait: {_names(missing)}"
    if not inner:
        return PASS, "no inner loops"
    return PASS, f"all {len(inner)} inner loop(s) declare wait"


def check_kappa_routing(doc: Mapping[str, Any]) -> Outcome:
    """T05: if kappa_routing is claimed, a ``route`` phase exists, else fail.  O(phases)."""
    if not _claimed(doc, "kappa_routing"):
        return PASS, "kappa_routing not claimed"
    routes = [_phase_label(i, p) for i, p in _phases(doc) if p.get("kind") == "route"]
    if routes:
        return PASS, f"route phase: {_names(routes)}"
    return FAIL, "kappa_routing claimed but no phase has kind route"


def check_quorum_before_commit(doc: Mapping[str, Any]) -> Outcome:
    """T06: if quorum_before_commit is claimed, an act phase exists (else fail) and every
    act phase has policy_check or invariant (else pending).  O(phases)."""
    if not _claimed(doc, "quorum_before_commit"):
        return PASS, "quorum_before_commit not claimed"
    acts = [(i, p) for i, p in _phases(doc) if p.get("kind") == "act"]
    if not acts:
        return FAIL, "quorum_before_commit claimed but no phase has kind act"
    unguarded = [
        _phase_label(i, p) for i, p in acts if "policy_check" not in p and "invariant" not in p
    ]
    if unguarded:
        return PENDING, f"act phases without policy_check or invariant: {_names(unguarded)}"
    return PASS, "every act phase declares policy_check or invariant"


def check_append_only_audit(doc: Mapping[str, Any]) -> Outcome:
    """T07: if append_only_audit is claimed, ``substrates.audit`` is non-null, else fail.  O(1)."""
    if not _claimed(doc, "append_only_audit"):
        return PASS, "append_only_audit not claimed"
    audit = _obj(doc.get("substrates")).get("audit")
    if isinstance(audit, str):
        return PASS, f"audit substrate: {audit}"
    return FAIL, "append_only_audit claimed but substrates.audit is null or missing"


def check_signal_deduplication(doc: Mapping[str, Any]) -> Outcome:
    """T08: decidable only at runtime, so pending (runtime evidence may upgrade it).  O(1)."""
    return PENDING, "runtime-only check: needs evidence from the running loop"


def check_substrate_degradation(doc: Mapping[str, Any]) -> Outcome:
    """T09: pending if any substrate is null (or a required one is missing), else pass.

    Optional substrates (transport, time) count only when present.  O(substrates).
    """
    substrates = _obj(doc.get("substrates"))
    names = list(REQUIRED_SUBSTRATES) + sorted(
        k for k in substrates if k not in REQUIRED_SUBSTRATES
    )
    null = [name for name in names if substrates.get(name) is None]
    if null:
        return PENDING, f"null substrates (degradation untestable): {_names(null)}"
    return PASS, "every substrate is named"


def check_multi_tenant_isolation(doc: Mapping[str, Any]) -> Outcome:
    """T10: pending if ``workspace_scope`` is "required" (isolation must be shown at
    runtime), else pass.  O(1)."""
    scope = doc.get("workspace_scope")
    if scope == "required":
        return PENDING, "workspace_scope required: isolation needs runtime evidence"
    return PASS, f"workspace_scope {scope if isinstance(scope, str) else 'not declared'}"


def check_trace_id_propagation(doc: Mapping[str, Any]) -> Outcome:
    """T11: fail if some connection is sync while trace_id_propagation is not claimed.

    O(connections).
    """
    sync = [
        str(c.get("id", f"connections[{i}]"))
        for i, c in enumerate(_items(doc.get("connections")))
        if isinstance(c, dict) and c.get("cadence") == "sync"
    ]
    if not sync:
        return PASS, "no sync connections"
    if _claimed(doc, "trace_id_propagation"):
        return PASS, f"sync connections carry trace ids: {_names(sync)}"
    return FAIL, f"sync connections without trace_id_propagation: {_names(sync)}"


def check_protocol_version(doc: Mapping[str, Any]) -> Outcome:
    """T12: ``pulse_protocol_version`` is 0.1 or 0.1.N (the whole string).  O(length)."""
    version = doc.get("pulse_protocol_version")
    if isinstance(version, str) and _PROTOCOL_VERSION.fullmatch(version):
        return PASS, f"protocol version {version}"
    shown = json.dumps(version, ensure_ascii=False) if version is not None else "missing"
    return FAIL, f"pulse_protocol_version must be 0.1 or 0.1.N; got {shown}"


# --------------------------------------------------------------------------
# Referential rules (R01): what the schema cannot express
# --------------------------------------------------------------------------


def _phase_refs(text: Any) -> Iterator[str]:
    """Phase ids named in an inputs.from / outputs.to value ("phase:a|signal:X")."""
    if isinstance(text, str):
        for token in text.split("|"):
            token = token.strip()
            if token.startswith(_PHASE_REF):
                yield token[len(_PHASE_REF) :]


def referential_violations(doc: Mapping[str, Any]) -> list[Violation]:
    """Violations of the cross-references inside one manifest.

    Rules: phase ids are unique; connection ids are unique; closure.from_phase,
    closure.to_phase and every connection's emit_phase name a declared phase;
    every ``phase:ID`` token in a phase's inputs.from / outputs.to names one.
    Values of the wrong type are left to the schema.  O(phases + connections).
    """
    out: list[Violation] = []
    seen: dict[str, int] = {}
    for index, phase in _phases(doc):
        ident = phase.get("id")
        if not isinstance(ident, str):
            continue
        if ident in seen:
            out.append(
                Violation(
                    f"$.phases[{index}].id",
                    f"phase id {ident!r} repeats phases[{seen[ident]}]; phase ids must be unique",
                    "unique-phase-id",
                )
            )
        else:
            seen[ident] = index
    declared = sorted(seen)

    def unknown(path: str, name: Any, what: str) -> None:
        if isinstance(name, str) and name not in seen:
            listing = ", ".join(declared) if declared else "none"
            message = f"{what} {name!r} is not a declared phase (declared: {listing})"
            out.append(Violation(path, message, "unknown-phase"))

    closure = _obj(doc.get("closure"))
    unknown("$.closure.from_phase", closure.get("from_phase"), "closure starts at")
    unknown("$.closure.to_phase", closure.get("to_phase"), "closure returns to")
    for index, phase in _phases(doc):
        for block, key in (("inputs", "from"), ("outputs", "to")):
            for ref in _phase_refs(_obj(phase.get(block)).get(key)):
                unknown(f"$.phases[{index}].{block}.{key}", ref, f"{block}.{key} names phase")
    connection_ids: dict[str, int] = {}
    for index, connection in enumerate(_items(doc.get("connections"))):
        if not isinstance(connection, dict):
            continue
        unknown(f"$.connections[{index}].emit_phase", connection.get("emit_phase"), "emit_phase")
        ident = connection.get("id")
        if isinstance(ident, str):
            if ident in connection_ids:
                out.append(
                    Violation(
                        f"$.connections[{index}].id",
                        f"connection id {ident!r} repeats connections[{connection_ids[ident]}]",
                        "unique-connection-id",
                    )
                )
            else:
                connection_ids[ident] = index
    return out


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------

Check = Callable[[Mapping[str, Any]], Outcome]

# (id, name, check) for T02–T12, in report order; T01 and R01 need the violations.
CHECKS: Final[tuple[tuple[str, str, Check], ...]] = (
    ("T02", "phase atomicity", check_phase_atomicity),
    ("T03", "phase idempotency", check_phase_idempotency),
    ("T04", "nesting waits", check_nesting_waits),
    ("T05", "kappa routing", check_kappa_routing),
    ("T06", "quorum before commit", check_quorum_before_commit),
    ("T07", "append-only audit", check_append_only_audit),
    ("T08", "signal deduplication", check_signal_deduplication),
    ("T09", "substrate degradation", check_substrate_degradation),
    ("T10", "multi-tenant isolation", check_multi_tenant_isolation),
    ("T11", "trace_id propagation", check_trace_id_propagation),
    ("T12", "protocol version monotonicity", check_protocol_version),
)
CHECK_IDS: Final = ("T01", *(ident for ident, _, _ in CHECKS), "R01")


def overall_status(statuses: list[str]) -> str:
    """fail if any check fails, else pending if any is pending, else pass.  O(checks)."""
    if FAIL in statuses:
        return FAIL
    return PENDING if PENDING in statuses else PASS


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _entry(
    ident: str, name: str, outcome: Outcome, evidence: str | None, refuted: str | None
) -> dict[str, str]:
    status, detail = outcome
    entry = {"id": ident, "name": name, "status": status, "detail": detail}
    # Runtime evidence turns "cannot tell from the manifest" into a pass; it
    # never overrides a failure the manifest itself shows.  A runtime probe
    # that contradicts the manifest fails the check whatever the manifest says.
    if refuted is not None:
        entry["status"] = FAIL
        entry["evidence"] = refuted
    elif evidence is not None and status != FAIL:
        entry["status"] = PASS
        entry["evidence"] = evidence
    return entry


def validate_manifest(
    doc: Any,
    *,
    evidence: Mapping[str, str] | None = None,
    refuted: Mapping[str, str] | None = None,
    extra_violations: list[Violation] | None = None,
) -> dict[str, Any]:
    """The conformance report of one parsed manifest.

    Input: the parsed JSON value; `evidence` maps a check id to a description
    of runtime evidence (a pending or passing check then passes and carries
    ``"evidence"``; a failing one stays failed); `refuted` maps a check id to
    a runtime observation that contradicts the manifest (the check fails and
    carries it as ``"evidence"``); `extra_violations` (e.g. duplicate keys
    found while parsing) join R01.  Output: the report described in the
    module docstring.  Raises ValueError for an unknown check id in
    `evidence` or `refuted`.  Complexity: O(size of the manifest).
    Reference: PULSE v0.1 schema and conformance checks T01–T12.
    """
    evidence = dict(evidence or {})
    refuted = dict(refuted or {})
    unknown_ids = sorted((set(evidence) | set(refuted)) - set(CHECK_IDS))
    if unknown_ids:
        raise ValueError(f"evidence for unknown checks: {', '.join(unknown_ids)}")
    schema_found = sorted(pulse_validator().validate(doc), key=lambda v: path_sort_key(v.path))
    fields = doc if isinstance(doc, dict) else {}
    referential = sorted(
        list(extra_violations or []) + referential_violations(fields),
        key=lambda v: path_sort_key(v.path),
    )
    t01: Outcome = (
        (FAIL, f"{_count(len(schema_found), 'schema violation')} (see violations)")
        if schema_found
        else (PASS, "valid against pulse-loop-manifest v0.1")
    )
    r01: Outcome = (
        (FAIL, f"{_count(len(referential), 'broken reference')} (see violations)")
        if referential
        else (PASS, "phase ids unique; closure, emit and phase references resolve")
    )
    checks = [_entry("T01", "schema validation", t01, evidence.get("T01"), refuted.get("T01"))]
    checks += [
        _entry(i, name, check(fields), evidence.get(i), refuted.get(i)) for i, name, check in CHECKS
    ]
    checks.append(
        _entry("R01", "referential integrity", r01, evidence.get("R01"), refuted.get("R01"))
    )
    loop_id = fields.get("loop_id")
    return {
        "loop_id": loop_id if isinstance(loop_id, str) else None,
        "overall": overall_status([c["status"] for c in checks]),
        "checks": checks,
        "violations": [{"path": v.path, "message": v.message} for v in schema_found + referential],
    }


def validate_text(text: str, *, evidence: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Parse manifest text strictly and validate it.

    Repeated keys inside an object (which :func:`json.loads` would silently
    resolve) are reported under R01.  Raises ValueError (a
    :class:`json.JSONDecodeError` for syntax errors) when the text is not
    JSON.  O(length of the text).
    """
    doc, duplicates = parse_json(text)
    return validate_manifest(doc, evidence=evidence, extra_violations=duplicates)


def format_report(report: Mapping[str, Any]) -> str:
    """A human rendering of a report: verdict line, one line per check, violations."""
    checks = report["checks"]
    tally = ", ".join(f"{sum(c['status'] == s for c in checks)} {s}" for s in STATUSES)
    lines = [f"{report['loop_id'] or '(no loop_id)'}: {report['overall']} ({tally})"]
    for check in checks:
        line = f"  {check['id']}  {check['status']:<7}  {check['name']}: {check['detail']}"
        if "evidence" in check:
            line += f" [evidence: {check['evidence']}]"
        lines.append(line)
    violations = report["violations"]
    if violations:
        lines.append(f"{_count(len(violations), 'violation')}:")
        lines += [f"  {v['path']}: {v['message']}" for v in violations]
    return "\n".join(lines)


def validate_own_manifest(db_path: str | None = None) -> dict[str, Any]:
    """The report of this package's own manifest, with the runtime evidence of
    :mod:`.probes` (run now, on throw-away in-memory graphs)."""
    from .probes import runtime_evidence  # the probes need the facade, which needs us

    evidence, refuted = runtime_evidence()
    return validate_manifest(manifest(db_path), evidence=evidence, refuted=refuted)
