"""Reports of a many-document ``contract check`` run: text, JSON, GitHub, JUnit, SARIF.

Every format names each violation by file, line, column (of the offending key
in the source text) and JSON pointer (RFC 6901, relative to the document),
next to the checker's own path and rule.  All renderers are deterministic:
no clock, no host name, no absolute paths that were not given, so a vendored
copy of the checker prints byte-identical reports.

Format notes (what each consumer requires):

* **github** — workflow commands ``::error file=F,line=L,col=C,title=T::MESSAGE``;
  data escapes ``%`` ``\\r`` ``\\n``, property values also ``:`` and ``,``
  (the Actions toolkit's ``escapeData`` / ``escapeProperty``).
* **junit** — one ``<testcase>`` per document (and one per unusable input),
  within the Surefire/Jenkins ``junit-10.xsd``: testcase attributes are only
  ``name``, ``classname`` (and ``time``), so file and line are in the name
  and in the failure text; an unusable input is a ``<failure
  type="unusable-input">`` (that schema has no ``<error>`` element).
* **sarif** — SARIF 2.1.0, one run, one result per violation with a physical
  location (``uri``, ``startLine``, ``startColumn``; columns in Unicode code
  points, declared by ``columnKind``) and a logical location (the pointer).

At most `MAX_FINDINGS_PER_DOCUMENT` violations are kept per document (the first
by path); every format states how many more were found (JSON: each document's
``violation_count`` and ``violations_omitted``, the run's ``violation_cap``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

from graphonomous.contract.options import MAX_FINDINGS_PER_DOCUMENT as MAX_FINDINGS_PER_DOCUMENT
from graphonomous.contract.options import REPORT_FORMATS as REPORT_FORMATS
from graphonomous.contract.positions import json_pointer
from graphonomous.contract.schema import Violation
from graphonomous.contract.sources import Document, InputProblem

TOOL_NAME: Final = "graphonomous-contract"
SUITE_NAME: Final = "graphonomous contract check"
SARIF_VERSION: Final = "2.1.0"
SARIF_SCHEMA_URI: Final = "https://json.schemastore.org/sarif-2.1.0.json"
UNUSABLE_RULE: Final = "unusable-input"
# Characters XML 1.0 cannot carry at all (file names are the only way in).
_XML_INVALID: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class Finding:
    """A violation placed in its file: line and column of the key, and the JSON pointer."""

    violation: Violation
    line: int
    column: int
    pointer: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.violation.path,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "message": self.violation.message,
            "rule": self.violation.rule,
        }


@dataclass
class DocumentResult:
    """One checked document: the kind it was checked as and what was found."""

    document: Document
    kind: str
    findings: list[Finding] = field(default_factory=list)
    # Violations found past `MAX_FINDINGS_PER_DOCUMENT`: counted, not kept.
    omitted: int = 0

    @property
    def valid(self) -> bool:
        return not self.findings

    @property
    def violation_count(self) -> int:
        """Every violation found, the omitted ones included."""
        return len(self.findings) + self.omitted

    def omitted_text(self) -> str | None:
        """The line saying how many violations are not listed, or None."""
        if not self.omitted:
            return None
        return (
            f"… and {_count(self.omitted, 'more violation')} not listed "
            f"(at most {MAX_FINDINGS_PER_DOCUMENT} are kept per document)"
        )

    @property
    def label(self) -> str:
        """``file``, ``file:line`` (JSON Lines) or ``file:line tools/call … (id …)``."""
        doc = self.document
        if doc.origin is None and not doc.part:
            return doc.source
        where = f"{doc.source}:{doc.line}"
        return where if doc.origin is None else f"{where} {doc.origin}"

    def to_dict(self) -> dict[str, Any]:
        doc = self.document
        return {
            "source": doc.source,
            "line": doc.line,
            "origin": doc.origin,
            "pointer": json_pointer(doc.root),
            "kind": self.kind,
            "valid": self.valid,
            "violation_count": self.violation_count,
            "violations_omitted": self.omitted,
            "violations": [finding.to_dict() for finding in self.findings],
        }


@dataclass
class RunReport:
    """All documents of a run, the inputs that could not be checked, and notes."""

    results: list[DocumentResult]
    problems: list[InputProblem]
    notes: list[InputProblem]

    @property
    def violation_count(self) -> int:
        return sum(result.violation_count for result in self.results)

    @property
    def invalid_count(self) -> int:
        return sum(1 for result in self.results if not result.valid)

    @property
    def exit_code(self) -> int:
        """2 when some input was unusable, else 1 when some document is invalid, else 0."""
        if self.problems:
            return 2
        return 1 if self.invalid_count else 0

    def summary(self) -> str:
        """``N documents, M violations`` (plus unusable inputs, when there are any)."""
        documents, violations = len(self.results), self.violation_count
        line = f"{_count(documents, 'document')}, {_count(violations, 'violation')}"
        if self.problems:
            line += f"; {_count(len(self.problems), 'input')} could not be checked"
        return line


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def shown_pointer(pointer: str) -> str:
    """A pointer for messages: the root's empty pointer is shown as ``""``."""
    return pointer or '""'


def finding_text(result: DocumentResult, finding: Finding) -> str:
    """``file:line:col: path (pointer /p): message  [rule]`` — what people and editors read."""
    violation = finding.violation
    where = f"{result.document.source}:{finding.line}:{finding.column}"
    pointer = shown_pointer(finding.pointer)
    return f"{where}: {violation.path} (pointer {pointer}): {violation.message}  [{violation.rule}]"


# --------------------------------------------------------------------------
# Renderers
# --------------------------------------------------------------------------


def render_text(report: RunReport) -> str:
    """Invalid documents with their violations, unusable inputs, notes, then the summary."""
    lines: list[str] = []
    for result in report.results:
        if result.valid:
            continue
        count = result.violation_count
        lines.append(
            f"{result.label}: invalid {result.kind} document: "
            f"{count} violation{'' if count == 1 else 's'}"
        )
        lines += [f"  {finding_text(result, finding)}" for finding in result.findings]
        omitted = result.omitted_text()
        if omitted is not None:
            lines.append(f"  {omitted}")
    lines += [f"error: {problem}" for problem in report.problems]
    lines += [f"note: {note}" for note in report.notes]
    lines.append(report.summary())
    return "\n".join(lines)


def render_json(report: RunReport) -> str:
    """Every document (valid ones too), unusable inputs and notes, as one JSON object."""
    payload = {
        "valid": report.exit_code == 0,
        "document_count": len(report.results),
        "invalid_count": report.invalid_count,
        "violation_count": report.violation_count,
        "violation_cap": MAX_FINDINGS_PER_DOCUMENT,
        "documents": [result.to_dict() for result in report.results],
        "errors": [problem.to_dict() for problem in report.problems],
        "notes": [note.to_dict() for note in report.notes],
        "summary": report.summary(),
    }
    return json.dumps(payload, indent=2, ensure_ascii=False)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(command: str, message: str, properties: Mapping[str, str | int]) -> str:
    """One workflow command: ``::command key=value,…::message`` with both parts escaped."""
    rendered = ",".join(
        f"{key}={_escape_property(str(value))}" for key, value in properties.items()
    )
    return (
        f"::{command} {rendered}::{_escape_data(message)}"
        if rendered
        else (f"::{command}::{_escape_data(message)}")
    )


def render_github(report: RunReport) -> str:
    """One ``::error`` annotation per violation and unusable input, ``::notice`` per note."""
    lines: list[str] = []
    for result in report.results:
        for finding in result.findings:
            violation = finding.violation
            message = (
                f"{shown_pointer(finding.pointer)} ({violation.path}) in {result.kind} document "
                f"{result.label}: {violation.message}"
            )
            properties: dict[str, str | int] = {
                "file": result.document.source,
                "line": finding.line,
                "col": finding.column,
                "title": f"graphonomous contract {violation.rule}",
            }
            lines.append(github_command("error", message, properties))
        omitted = result.omitted_text()
        if omitted is not None:
            capped = {"file": result.document.source, "title": "graphonomous contract cap"}
            lines.append(github_command("notice", f"{result.label}: {omitted}", capped))
    for problem, command in [(p, "error") for p in report.problems] + [
        (n, "notice") for n in report.notes
    ]:
        where: dict[str, str | int] = {"file": problem.source}
        if problem.line is not None:
            where["line"] = problem.line
        where["title"] = f"graphonomous contract {UNUSABLE_RULE if command == 'error' else 'note'}"
        lines.append(github_command(command, problem.message, where))
    lines.append(report.summary())
    return "\n".join(lines)


def _xml_attr(text: str) -> str:
    return quoteattr(_XML_INVALID.sub("\ufffd", text))


def _xml_text(text: str) -> str:
    return escape(_XML_INVALID.sub("\ufffd", text))


def junit_testcase(
    name: str, classname: str, failure: tuple[str, str, str] | None, time_s: float | None = None
) -> list[str]:
    """XML lines of one ``<testcase>``; `failure` is (type, message, body)."""
    timing = f" time={_xml_attr(f'{time_s:.3f}')}" if time_s is not None else ""
    head = f"    <testcase name={_xml_attr(name)} classname={_xml_attr(classname)}{timing}"
    if failure is None:
        return [head + "/>"]
    kind, message, body = failure
    return [
        head + ">",
        f"      <failure type={_xml_attr(kind)} message={_xml_attr(message)}>"
        f"{_xml_text(body)}</failure>",
        "    </testcase>",
    ]


def junit_document(
    suite: str, cases: list[list[str]], failures: int, time_s: float | None = None
) -> str:
    """A ``<testsuites>`` document with one ``<testsuite>`` holding `cases`."""
    timing = f" time={_xml_attr(f'{time_s:.3f}')}" if time_s is not None else ""
    counts = f'tests="{len(cases)}" failures="{failures}" errors="0"'
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<testsuites name={_xml_attr(suite)} {counts}{timing}>",
        f'  <testsuite name={_xml_attr(suite)} {counts} skipped="0"{timing}>',
    ]
    for case in cases:
        lines += case
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines)


def render_junit(report: RunReport) -> str:
    """JUnit XML: one test case per document (classname = file) and per unusable input."""
    cases: list[list[str]] = []
    failures = 0
    for result in report.results:
        name = f"{result.label}: {result.kind} document"
        if result.valid:
            cases.append(junit_testcase(name, result.document.source, None))
            continue
        failures += 1
        count = result.violation_count
        message = f"invalid {result.kind} document: {count} violation{'' if count == 1 else 's'}"
        body_lines = [finding_text(result, finding) for finding in result.findings]
        omitted = result.omitted_text()
        body = "\n".join(body_lines if omitted is None else [*body_lines, omitted])
        cases.append(junit_testcase(name, result.document.source, ("contract", message, body)))
    for problem in report.problems:
        failures += 1
        cases.append(
            junit_testcase(
                str(problem), problem.source, (UNUSABLE_RULE, problem.message, str(problem))
            )
        )
    return junit_document(SUITE_NAME, cases, failures)


def render_sarif(report: RunReport, version: str) -> str:
    """SARIF 2.1.0: one result per violation; unusable inputs as tool notifications."""
    rules = sorted(
        {finding.violation.rule for result in report.results for finding in result.findings}
    )
    rule_index = {rule: index for index, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for result in report.results:
        for finding in result.findings:
            violation = finding.violation
            results.append(
                {
                    "ruleId": violation.rule,
                    "ruleIndex": rule_index[violation.rule],
                    "level": "error",
                    "message": {
                        "text": f"{violation.path}: {violation.message} "
                        f"({result.kind} document {result.label})"
                    },
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": _uri(result.document.source)},
                                "region": {
                                    "startLine": finding.line,
                                    "startColumn": finding.column,
                                },
                            },
                            **_logical(finding.pointer),
                        }
                    ],
                }
            )
    capped = [
        InputProblem(result.document.source, text, result.document.line)
        for result in report.results
        if (text := result.omitted_text()) is not None
    ]
    notifications = [_notification(problem, "error") for problem in report.problems] + [
        _notification(note, "note") for note in [*report.notes, *capped]
    ]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": version,
                "rules": [{"id": rule} for rule in rules],
            }
        },
        "columnKind": "unicodeCodePoints",
        "invocations": [
            {
                "executionSuccessful": not report.problems,
                "toolExecutionNotifications": notifications,
            }
        ],
        "results": results,
    }
    payload = {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(payload, indent=2, ensure_ascii=False)


def _logical(pointer: str) -> dict[str, Any]:
    """The logical location (the JSON pointer) of a result; none for the document root."""
    if not pointer:
        return {}
    return {"logicalLocations": [{"fullyQualifiedName": pointer, "kind": "member"}]}


def _uri(source: str) -> str:
    """A relative URI reference for a file name (``out/a b.json`` → ``out/a%20b.json``)."""
    return quote(source.replace("\\", "/"), safe="/")


def _notification(problem: InputProblem, level: str) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": {"uri": _uri(problem.source)}}
    if problem.line is not None:
        location["region"] = {"startLine": problem.line}
    return {
        "level": level,
        "message": {"text": problem.message},
        "locations": [{"physicalLocation": location}],
    }


RENDERERS: Final[Mapping[str, Callable[[RunReport, str], str]]] = {
    "text": lambda report, _version: render_text(report),
    "json": lambda report, _version: render_json(report),
    "github": lambda report, _version: render_github(report),
    "junit": lambda report, _version: render_junit(report),
    "sarif": render_sarif,
}
