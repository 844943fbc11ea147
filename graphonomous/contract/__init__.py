"""The canonical κ topology contract (seed 000 §A.1).

* ``topology.schema.json`` — the JSON Schema 2020-12 of a topology result,
  an edge-impact preview and the ``topology`` field of retrieve_context;
* :mod:`.schema` — the stdlib JSON Schema interpreter (reused by PULSE);
* :mod:`.checker` — schema plus semantic rules, every violation with its path;
* :mod:`.positions` — JSON paths → line and column in the source text;
* :mod:`.sources` — files, directories, globs, JSON Lines, MCP transcripts;
* :mod:`.report` — text / JSON / GitHub / JUnit / SARIF reports;
* :mod:`.run` — many-document checks and the published schemas;
* :mod:`.fixtures` — run another implementation on the shared fixtures;
* :mod:`.cli` — the ``graphonomous contract check|schema|fixtures`` commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..lazy_import import export_from

if TYPE_CHECKING:
    from graphonomous.contract.checker import (
        DOCUMENT_KINDS,
        DRIFTED_KEYS,
        FLOAT_TOLERANCE,
        camel_to_snake,
        check_analyze_topology,
        check_document,
        check_preview,
        check_retrieve_context,
        check_topology,
        contract_validator,
        detect_kind,
        drift_hint,
        expected_budget,
        expected_routing,
        format_report,
        topology_schema,
    )
    from graphonomous.contract.cli import cli_check, cli_contract, cli_fixtures
    from graphonomous.contract.fixtures import (
        FIXTURE_FORMATS,
        FIXTURE_MODES,
        FixtureReport,
        FixtureResult,
        compare_preview,
        compare_topology,
        discover_fixtures,
        first_difference,
        format_fixture_report,
        run_fixtures,
    )
    from graphonomous.contract.positions import json_pointer, locate
    from graphonomous.contract.report import REPORT_FORMATS, RunReport
    from graphonomous.contract.run import SCHEMA_KINDS, check_inputs, published_schema, run_check
    from graphonomous.contract.schema import (
        SchemaError,
        SchemaValidator,
        Violation,
        json_equal,
        load_package_schema,
        parse_json,
    )

# Imported on first use (PEP 562): the package stays light, so the CLI's parser
# (contract/options.py) and the MCP tools' schema reader (contract/schema.py)
# do not load the checker, the fixtures runner and the reports on every start.
_LAZY_EXPORTS: Final = {
    "DOCUMENT_KINDS": ".options",
    "DRIFTED_KEYS": ".checker",
    "FIXTURE_FORMATS": ".options",
    "FIXTURE_MODES": ".options",
    "FLOAT_TOLERANCE": ".checker",
    "FixtureReport": ".fixtures",
    "FixtureResult": ".fixtures",
    "REPORT_FORMATS": ".options",
    "RunReport": ".report",
    "SCHEMA_KINDS": ".options",
    "SchemaError": ".schema",
    "SchemaValidator": ".schema",
    "Violation": ".schema",
    "camel_to_snake": ".checker",
    "check_analyze_topology": ".checker",
    "check_document": ".checker",
    "check_inputs": ".run",
    "check_preview": ".checker",
    "check_retrieve_context": ".checker",
    "check_topology": ".checker",
    "cli_check": ".cli",
    "cli_contract": ".cli",
    "cli_fixtures": ".cli",
    "compare_preview": ".fixtures",
    "compare_topology": ".fixtures",
    "contract_validator": ".checker",
    "detect_kind": ".checker",
    "discover_fixtures": ".fixtures",
    "drift_hint": ".checker",
    "expected_budget": ".checker",
    "expected_routing": ".checker",
    "first_difference": ".fixtures",
    "format_fixture_report": ".fixtures",
    "format_report": ".checker",
    "json_equal": ".schema",
    "json_pointer": ".positions",
    "load_package_schema": ".schema",
    "locate": ".positions",
    "parse_json": ".schema",
    "published_schema": ".run",
    "run_check": ".run",
    "run_fixtures": ".fixtures",
    "topology_schema": ".checker",
}


def __getattr__(name: str) -> Any:
    return export_from(__name__, _LAZY_EXPORTS, globals(), name)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "DOCUMENT_KINDS",
    "DRIFTED_KEYS",
    "FIXTURE_FORMATS",
    "FIXTURE_MODES",
    "FLOAT_TOLERANCE",
    "REPORT_FORMATS",
    "SCHEMA_KINDS",
    "FixtureReport",
    "FixtureResult",
    "RunReport",
    "SchemaError",
    "SchemaValidator",
    "Violation",
    "camel_to_snake",
    "check_analyze_topology",
    "check_document",
    "check_inputs",
    "check_preview",
    "check_retrieve_context",
    "check_topology",
    "cli_check",
    "cli_contract",
    "cli_fixtures",
    "compare_preview",
    "compare_topology",
    "contract_validator",
    "detect_kind",
    "discover_fixtures",
    "drift_hint",
    "expected_budget",
    "expected_routing",
    "first_difference",
    "format_fixture_report",
    "format_report",
    "json_equal",
    "json_pointer",
    "load_package_schema",
    "locate",
    "parse_json",
    "published_schema",
    "run_check",
    "run_fixtures",
    "topology_schema",
]
