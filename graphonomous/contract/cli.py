"""Command-line wrappers: ``graphonomous contract check`` and ``contract fixtures``.

The lead's ``graphonomous/cli.py`` owns argument parsing; these functions do
the work and return the exit status, taking the streams as arguments so tests
and other front ends can drive them.

Exit status: 0 valid / all fixtures passed, 1 invalid / some fixture failed,
2 unusable input (unreadable file, not JSON, no fixtures, bad option).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, TextIO

from graphonomous.contract.checker import DOCUMENT_KINDS, check_document, detect_kind, format_report
from graphonomous.contract.fixtures import (
    DEFAULT_TIMEOUT_S,
    FIXTURE_MODES,
    format_fixture_report,
    run_fixtures,
)
from graphonomous.contract.schema import parse_json, path_sort_key
from graphonomous.hygiene import problems

EXIT_OK: Final = 0
EXIT_INVALID: Final = 1
EXIT_UNUSABLE: Final = 2
DEFAULT_FIXTURES_DIR: Final = "fixtures"


def _unusable(message: str, as_json: bool, stdout: TextIO, stderr: TextIO) -> int:
    print(f"graphonomous contract: {message}", file=stderr)
    if as_json:
        print(json.dumps({"valid": False, "error": message}, ensure_ascii=False), file=stdout)
    return EXIT_UNUSABLE


def cli_check(
    path_or_dash: str,
    as_json: bool,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    kind: str = "auto",
) -> int:
    """``graphonomous contract check FILE|- [--json]``: check one JSON document.

    Reads the file (``-``: stdin), parses it strictly (NaN, Infinity and
    repeated keys are rejected) and prints the report of :func:`check_document`.
    Returns 0 when valid, 1 when invalid, 2 when the input cannot be read or
    is not JSON.
    """
    if kind not in DOCUMENT_KINDS:
        return _unusable(
            f"--kind must be one of {', '.join(DOCUMENT_KINDS)}", as_json, stdout, stderr
        )
    source = "stdin" if path_or_dash == "-" else path_or_dash
    try:
        text = (
            stdin.read() if path_or_dash == "-" else Path(path_or_dash).read_text(encoding="utf-8")
        )
    except (OSError, UnicodeDecodeError) as exc:
        return _unusable(f"cannot read {source}: {exc}", as_json, stdout, stderr)
    try:
        doc, duplicates = parse_json(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        return _unusable(f"{source} is not JSON: {exc.msg} at {where}", as_json, stdout, stderr)
    except ValueError as exc:
        return _unusable(f"{source} is not JSON: {exc}", as_json, stdout, stderr)
    except RecursionError:
        return _unusable(f"{source} is nested too deeply to parse", as_json, stdout, stderr)
    dirty = problems(doc)
    if dirty:
        where, message = dirty[0]
        return _unusable(f"{source} {where}: {message}", as_json, stdout, stderr)
    chosen = detect_kind(doc) if kind == "auto" else kind
    violations = sorted(
        duplicates + check_document(doc, chosen),
        key=lambda violation: path_sort_key(violation.path),
    )
    print(format_report(violations, as_json, kind=chosen), file=stdout)
    return EXIT_OK if not violations else EXIT_INVALID


def cli_fixtures(
    run: str,
    mode: str,
    fixtures_dir: str | None,
    as_json: bool,
    stdout: TextIO,
    stderr: TextIO,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> int:
    """``graphonomous contract fixtures --run CMD [--mode] [--fixtures DIR] [--json]``.

    Runs CMD on every fixture (see :func:`run_fixtures`) and prints the report.
    `fixtures_dir` None means ``./fixtures``.  Returns 0 when every fixture
    passed, 1 when some failed, 2 for a bad mode, a missing directory, an
    empty command or a directory without fixtures.
    """
    if mode not in FIXTURE_MODES:
        return _unusable(
            f"--mode must be one of {', '.join(FIXTURE_MODES)}", as_json, stdout, stderr
        )
    directory = Path(fixtures_dir if fixtures_dir is not None else DEFAULT_FIXTURES_DIR)
    if not directory.is_dir():
        hint = "" if fixtures_dir is not None else " (the default; pass --fixtures DIR)"
        return _unusable(
            f"fixtures directory {directory} does not exist{hint}", as_json, stdout, stderr
        )
    try:
        report = run_fixtures(run, directory, mode, timeout_s)
    except ValueError as exc:
        return _unusable(str(exc), as_json, stdout, stderr)
    print(format_fixture_report(report, as_json), file=stdout)
    if report.problems:
        return EXIT_UNUSABLE
    return EXIT_OK if report.ok else EXIT_INVALID
