"""PULSE v0.1: our loop manifest and a validator for any loop manifest.

PULSE declares an agent loop's temporal shape (phases, closure, cadence,
nesting, substrates, invariants, connections) in one JSON document.

* :mod:`.manifest` — :func:`manifest`, this package's own
  ``graphonomous.continual_learning`` manifest, built in code, and
  :func:`manifest_resource`, its JSON text for the MCP resource
  ``graphonomous://pulse/manifest`` (:data:`MANIFEST_URI`);
* :mod:`.validator` — the schema (T01, through the stdlib
  :class:`~graphonomous.contract.schema.SchemaValidator`), the conformance
  checks T02–T12 and the referential rules (R01);
* :mod:`.cli` — the ``graphonomous pulse`` command.

``pulse-loop-manifest.v0.1.json`` is the upstream PULSE schema, copied
unchanged under the Apache License 2.0 (see ``NOTICE-pulse-schema.txt`` and
``LICENSE-pulse-schema.txt`` next to it).
"""

from __future__ import annotations

from .cli import cli_pulse
from .manifest import (
    CONSOLIDATION_CHECK_INTERVAL_MS,
    CONSOLIDATION_IDLE_MS,
    LOOP_ID,
    MANIFEST_URI,
    PULSE_PROTOCOL_VERSION,
    PULSE_SCHEMA_ID,
    manifest,
    manifest_resource,
)
from .validator import (
    CHECK_IDS,
    CHECKS,
    FAIL,
    PASS,
    PENDING,
    format_report,
    overall_status,
    pulse_schema,
    pulse_validator,
    referential_violations,
    validate_manifest,
    validate_own_manifest,
    validate_text,
)

__all__ = [
    "CHECKS",
    "CHECK_IDS",
    "CONSOLIDATION_CHECK_INTERVAL_MS",
    "CONSOLIDATION_IDLE_MS",
    "FAIL",
    "LOOP_ID",
    "MANIFEST_URI",
    "PASS",
    "PENDING",
    "PULSE_PROTOCOL_VERSION",
    "PULSE_SCHEMA_ID",
    "cli_pulse",
    "format_report",
    "manifest",
    "manifest_resource",
    "overall_status",
    "pulse_schema",
    "pulse_validator",
    "referential_violations",
    "validate_manifest",
    "validate_own_manifest",
    "validate_text",
]
