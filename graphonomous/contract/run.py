"""``contract check`` over many documents, and ``contract schema``: the code CI runs.

This module, :mod:`.sources`, :mod:`.report`, :mod:`.positions`,
:mod:`.checker` and :mod:`.schema` are also concatenated into the vendorable
single file ``standalone/graphonomous_contract.py`` by
``scripts/make_vendored_contract.py``.  Rules that keep that possible: import
only the standard library and those modules (``from graphonomous.contract.X
import …`` lines, which the generator removes); no two of them define the
same top-level name; package data is read only through
:func:`~graphonomous.contract.schema.load_package_schema`.

Exit status: 0 every document valid, 1 some document invalid, 2 some input
unusable (unreadable, not JSON, no file matches) or a bad option.

One plain JSON document from one file or stdin, reported as text or with
``--json``, prints exactly the report it always did (no summary line); every
other run prints the many-document report of the chosen ``--format``.
"""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Sequence
from typing import Any, Final, TextIO

from graphonomous.contract.checker import (
    check_document,
    detect_kind,
    format_report,
    topology_schema,
)
from graphonomous.contract.options import DOCUMENT_KINDS, INPUT_MODES, REPORT_FORMATS
from graphonomous.contract.options import SCHEMA_KINDS as SCHEMA_KINDS
from graphonomous.contract.options import add_check_arguments as add_check_arguments
from graphonomous.contract.options import add_schema_arguments as add_schema_arguments
from graphonomous.contract.positions import json_pointer
from graphonomous.contract.report import (
    MAX_FINDINGS_PER_DOCUMENT,
    RENDERERS,
    DocumentResult,
    Finding,
    RunReport,
)
from graphonomous.contract.schema import load_package_schema, path_sort_key
from graphonomous.contract.sources import InputProblem, Inputs, collect

EXIT_OK: Final = 0
EXIT_INVALID: Final = 1
EXIT_UNUSABLE: Final = 2
MESSAGE_PREFIX: Final = "graphonomous contract"
_SCHEMA_ID: Final = "urn:graphonomous:contract:topology:v1"


# --------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------


def check_inputs(inputs: Inputs) -> RunReport:
    """Check every collected document; place each violation at its line and pointer.

    Complexity: the checks are linear in the documents' size; the position
    pass runs only over texts that hold an invalid document, for the
    `MAX_FINDINGS_PER_DOCUMENT` violations kept.  Memory: documents are taken
    one at a time from `inputs.documents` (a stream for JSON Lines) and each
    result keeps its findings, not the document's value or text.
    """
    results: list[DocumentResult] = []
    problems: list[InputProblem] = []
    for document in inputs.documents:
        chosen = detect_kind(document.value) if document.kind == "auto" else document.kind
        try:
            found = check_document(document.value, chosen)
        except RecursionError:  # far deeper than any contract document can be
            where = document.line if document.part else None
            problems.append(InputProblem(document.source, "nested too deeply to check", where))
            continue
        violations = sorted(
            document.duplicates + found, key=lambda violation: path_sort_key(violation.path)
        )
        findings = []
        for violation in violations[:MAX_FINDINGS_PER_DOCUMENT]:
            line, column = document.locate(violation.path)
            findings.append(Finding(violation, line, column, json_pointer(violation.path)))
        omitted = max(0, len(violations) - MAX_FINDINGS_PER_DOCUMENT) + document.dropped
        document.release()
        results.append(DocumentResult(document, chosen, findings, omitted))
    # Read after the stream ended: reading a file adds its problems as it goes.
    return RunReport(results, [*inputs.problems, *problems], list(inputs.notes))


def report_unusable(message: str, as_json: bool, stdout: TextIO, stderr: TextIO) -> int:
    print(f"{MESSAGE_PREFIX}: {message}", file=stderr)
    if as_json:
        print(json.dumps({"valid": False, "error": message}, ensure_ascii=False), file=stdout)
    return EXIT_UNUSABLE


def run_check(
    operands: Sequence[str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    kind: str = "auto",
    input_mode: str = "auto",
    report_format: str | None = None,
    as_json: bool = False,
    version: str = "",
) -> int:
    """``contract check OPERAND… [--kind K] [--input M] [--format F]``: check every document.

    `report_format` None means text, or the original JSON report when
    `as_json` (``--json``).  `version` is the checker version SARIF names.
    Returns the exit status (see the module docstring).
    """
    legacy_json = as_json and report_format is None
    chosen_format = report_format or ("json" if as_json else "text")
    if kind not in DOCUMENT_KINDS:
        return report_unusable(
            f"--kind must be one of {', '.join(DOCUMENT_KINDS)}", legacy_json, stdout, stderr
        )
    if chosen_format not in REPORT_FORMATS:
        return report_unusable(
            f"--format must be one of {', '.join(REPORT_FORMATS)}", legacy_json, stdout, stderr
        )
    if input_mode not in INPUT_MODES:
        return report_unusable(
            f"--input must be one of {', '.join(INPUT_MODES)}", legacy_json, stdout, stderr
        )
    if not operands:
        return report_unusable(
            "no file, directory or pattern to check", legacy_json, stdout, stderr
        )
    inputs = collect(list(operands), kind, input_mode, stdin)
    report = check_inputs(inputs)
    if inputs.single and (chosen_format == "text" or legacy_json):
        return _print_single(report, legacy_json, stdout, stderr)
    print(RENDERERS[chosen_format](report, version), file=stdout)
    return report.exit_code


def _print_single(report: RunReport, as_json: bool, stdout: TextIO, stderr: TextIO) -> int:
    """The one-document report, exactly as ``contract check FILE`` always printed it."""
    if report.problems:
        return report_unusable(report.problems[0].message, as_json, stdout, stderr)
    result = report.results[0]
    violations = [finding.violation for finding in result.findings]
    print(format_report(violations, as_json, kind=result.kind), file=stdout)
    return EXIT_OK if not violations else EXIT_INVALID


# --------------------------------------------------------------------------
# Published schemas
# --------------------------------------------------------------------------


def published_schema(kind: str) -> dict[str, Any]:
    """The standalone JSON Schema (2020-12) of one document kind, or of a fixture file.

    ``topology`` is ``topology.schema.json`` itself; the others are built
    from its ``$defs`` so every validator sees the same structure the
    checker's schema layer applies (the cross-field rules stay in the checker).
    """
    if kind == "fixture":
        return load_package_schema("graphonomous.contract", "fixture.schema.json")
    if kind not in SCHEMA_KINDS:
        raise ValueError(f"--kind must be one of {', '.join(SCHEMA_KINDS)}; got {kind!r}")
    schema = topology_schema()
    if kind == "topology":
        return schema
    defs = schema["$defs"]
    head: dict[str, Any] = {
        "$schema": schema["$schema"],
        "$id": f"{_SCHEMA_ID}:{kind}",
        "title": f"Graphonomous canonical {kind} document",
    }
    if kind == "preview":
        head["description"] = "An edge-impact preview (preview_edge_impact output)."
        head["$ref"] = "#/$defs/preview_result"
    elif kind == "analyze_topology":
        result = copy.deepcopy(defs["topology_result"])
        result["properties"]["recommendation"] = {"$ref": "#/$defs/recommendation"}
        result["required"] = [*result["required"], "recommendation"]
        head["description"] = "An analyze_topology response: a topology result plus recommendation."
        head.update({key: value for key, value in result.items() if key != "description"})
    else:
        head["description"] = (
            "A retrieve_context response: only its topology member is part of the contract."
        )
        head.update(
            {
                "type": "object",
                "required": ["topology"],
                "properties": {"topology": {"$ref": "#/$defs/topology_result"}},
            }
        )
    head["$defs"] = defs
    return head


def run_schema(kind: str, stdout: TextIO, stderr: TextIO) -> int:
    """``contract schema [--kind K]``: print a published schema (exit 2 for an unknown kind)."""
    try:
        schema = published_schema(kind)
    except ValueError as exc:
        return report_unusable(str(exc), False, stdout, stderr)
    print(json.dumps(schema, indent=2, ensure_ascii=False), file=stdout)
    return EXIT_OK


# --------------------------------------------------------------------------
# Arguments (shared by the graphonomous CLI and the vendored file)
# --------------------------------------------------------------------------


def main_check_args(
    args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO, version: str
) -> int:
    """Run ``check`` from parsed arguments (``args.json`` may be absent)."""
    return run_check(
        args.operands,
        stdin,
        stdout,
        stderr,
        kind=args.kind,
        input_mode=args.input_mode,
        report_format=args.report_format,
        as_json=bool(getattr(args, "json", False)),
        version=version,
    )
