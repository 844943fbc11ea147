"""Command-line wrapper: ``graphonomous pulse [--validate FILE|- | --check] [--json]``.

The lead's ``graphonomous/cli.py`` owns argument parsing; this function does
the work and returns the exit status, taking the streams as arguments.

Without ``--validate`` it prints this package's own manifest as JSON.  With
it, it prints the conformance report of the given manifest (human text, or
the report JSON with ``--json``).  ``--check`` prints the report of our own
manifest with the live runtime probes of :mod:`.probes` attached.

Exit status: 0 pass or pending, 1 fail, 2 unusable input (unreadable file,
not JSON).  Pending exits 0 because T08 (signal deduplication) can only be
shown at runtime, so *every* manifest file is at best pending: a non-zero
code would make every correct manifest look broken in a CI pipeline.  The
report (text or JSON) still says "pending".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, TextIO

from .manifest import manifest_resource
from .validator import FAIL, format_report, validate_own_manifest, validate_text

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_UNUSABLE: Final = 2


def _unusable(message: str, as_json: bool, stdout: TextIO, stderr: TextIO) -> int:
    print(f"graphonomous pulse: {message}", file=stderr)
    if as_json:
        print(json.dumps({"overall": None, "error": message}, ensure_ascii=False), file=stdout)
    return EXIT_UNUSABLE


def cli_pulse(
    validate: str | None,
    as_json: bool,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    check: bool = False,
) -> int:
    """``graphonomous pulse``: print our manifest, or validate a manifest file.

    `validate` is None (print the manifest), a path, or ``-`` for stdin;
    `check` reports on our own manifest with the live runtime probes instead.
    Returns 0 (pass/pending or manifest printed), 1 (some check failed),
    2 (the input cannot be read or is not JSON, or both --check and --validate).
    """
    if check:
        if validate is not None:
            return _unusable("--check and --validate exclude each other", as_json, stdout, stderr)
        return _print_report(validate_own_manifest(), as_json, stdout)
    if validate is None:
        stdout.write(manifest_resource())
        return EXIT_OK
    source = "stdin" if validate == "-" else validate
    try:
        text = stdin.read() if validate == "-" else Path(validate).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _unusable(f"cannot read {source}: {exc}", as_json, stdout, stderr)
    try:
        report = validate_text(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        return _unusable(f"{source} is not JSON: {exc.msg} at {where}", as_json, stdout, stderr)
    except ValueError as exc:
        return _unusable(f"{source} is not JSON: {exc}", as_json, stdout, stderr)
    except RecursionError:
        return _unusable(f"{source} is nested too deeply to check", as_json, stdout, stderr)
    return _print_report(report, as_json, stdout)


def _print_report(report: dict[str, Any], as_json: bool, stdout: TextIO) -> int:
    if as_json:
        print(json.dumps(report, indent=2, ensure_ascii=False), file=stdout)
    else:
        print(format_report(report), file=stdout)
    return EXIT_FAILED if report["overall"] == FAIL else EXIT_OK
