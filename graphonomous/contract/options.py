"""The options of ``graphonomous contract check|schema|fixtures``: their choices and parsers.

Rules: standard library only and no other contract module, so declaring the
``contract`` subcommands costs the CLI's parser nothing on every start (a
cold ``recall`` or ``consolidate`` never imports the checker).  Each choice
tuple has its one home here; the modules that act on it import it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Final

# `contract check --kind` (checker.check_document): "auto" detects the kind.
DOCUMENT_KINDS: Final = ("auto", "topology", "analyze_topology", "preview", "retrieve_context")
# `contract check --input` (sources.collect).
INPUT_MODES: Final = ("auto", "json", "jsonl", "mcp")
# `contract check --format` (report.RENDERERS).
REPORT_FORMATS: Final = ("text", "json", "github", "junit", "sarif")
# `contract schema --kind`: every document kind, plus the fixture file format.
SCHEMA_KINDS: Final = ("topology", "analyze_topology", "preview", "retrieve_context", "fixture")
# `contract fixtures --mode / --format / --timeout` (fixtures.run_fixtures).
FIXTURE_MODES: Final = ("exact", "semantic")
FIXTURE_FORMATS: Final = ("text", "json", "junit", "github")
DEFAULT_TIMEOUT_S: Final = 30.0
# Violations kept (located, listed) per document: a document past this is broken
# wholesale, the first ones by path show how, and `omitted` counts the rest; what
# a run holds then grows with the number of documents, not with how broken each is.
MAX_FINDINGS_PER_DOCUMENT: Final = 200

# Makes one subcommand parser: (name, help) -> parser (the caller adds --db/--json).
SubcommandFactory = Callable[[str, str], argparse.ArgumentParser]


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``contract check``."""
    parser.add_argument(
        "operands",
        nargs="+",
        metavar="FILE",
        help="JSON / JSON Lines files, directories, globs ('out/**/*.json'), or - for stdin",
    )
    parser.add_argument("--kind", choices=DOCUMENT_KINDS, default="auto")
    parser.add_argument(
        "--input",
        dest="input_mode",
        choices=INPUT_MODES,
        default="auto",
        help="how to read files (auto: .jsonl/.ndjson are JSON Lines; JSON-RPC is a transcript)",
    )
    parser.add_argument(
        "--format",
        dest="report_format",
        choices=REPORT_FORMATS,
        default=None,
        help="report format (default text)",
    )


def add_schema_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``contract schema``."""
    parser.add_argument("--kind", choices=SCHEMA_KINDS, default="topology")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


def add_contract_commands(make: SubcommandFactory) -> None:
    """Declare ``check``, ``schema`` and ``fixtures`` with `make` (a :data:`SubcommandFactory`)."""
    check = make("check", "validate topology / preview documents (files, dirs, globs, JSONL, MCP)")
    add_check_arguments(check)
    schema = make("schema", "print the published JSON Schema of a document kind")
    add_schema_arguments(schema)
    fixtures = make(
        "fixtures", "run another implementation (stdin JSON -> stdout JSON) on the shared fixtures"
    )
    fixtures.add_argument("--run", metavar="CMD", help="command to run (no shell)")
    fixtures.add_argument("--mode", choices=FIXTURE_MODES, default="exact")
    fixtures.add_argument(
        "--fixtures", metavar="DIR", help="fixtures directory (default ./fixtures)"
    )
    fixtures.add_argument(
        "--timeout", type=_positive_float, default=DEFAULT_TIMEOUT_S, help="seconds per fixture"
    )
    fixtures.add_argument("--format", dest="report_format", choices=FIXTURE_FORMATS, default=None)
    fixtures.add_argument(
        "--fail-fast", action="store_true", help="stop at the first failing fixture"
    )
    fixtures.add_argument(
        "--list", action="store_true", help="list the fixtures (file and name) and exit"
    )
