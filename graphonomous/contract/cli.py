"""Command-line wrappers: ``graphonomous contract check|schema|fixtures``.

The lead's ``graphonomous/cli.py`` owns the top-level parser; it hands this
module a function that makes subcommands (:func:`add_contract_commands`) and
calls :func:`cli_contract` with the parsed arguments, so every contract
option lives here.  The functions take the streams as arguments so tests and
other front ends can drive them.

Exit status: 0 valid / all fixtures passed, 1 invalid / some fixture failed,
2 unusable input (unreadable file, not JSON, no fixtures, bad option).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Final, TextIO

from graphonomous.contract.fixtures import (
    discover_fixtures,
    format_fixture_github,
    format_fixture_junit,
    format_fixture_report,
    run_fixtures,
)
from graphonomous.contract.options import (
    DEFAULT_TIMEOUT_S,
    FIXTURE_FORMATS,
    FIXTURE_MODES,
)
from graphonomous.contract.options import SubcommandFactory as SubcommandFactory
from graphonomous.contract.options import add_contract_commands as add_contract_commands
from graphonomous.contract.run import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNUSABLE,
    main_check_args,
    report_unusable,
    run_check,
    run_schema,
)

DEFAULT_FIXTURES_DIR: Final = "fixtures"


def _version() -> str:
    from graphonomous import __version__

    return __version__


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
    repeated keys are rejected) and prints the report of
    :func:`~graphonomous.contract.checker.check_document`.  Returns 0 when
    valid, 1 when invalid, 2 when the input cannot be read or is not JSON.
    Many documents: :func:`~graphonomous.contract.run.run_check`.
    """
    return run_check(
        [path_or_dash], stdin, stdout, stderr, kind=kind, as_json=as_json, version=_version()
    )


def cli_contract(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run the ``contract`` subcommand named by ``args.contract_command``."""
    as_json = bool(getattr(args, "json", False))
    if args.contract_command == "check":
        return main_check_args(args, stdin, stdout, stderr, _version())
    if args.contract_command == "schema":
        return run_schema(args.kind, stdout, stderr)
    report_format = args.report_format or ("json" if as_json else "text")
    if args.list:
        return cli_list_fixtures(args.fixtures, report_format == "json", stdout, stderr)
    if args.run is None:
        return report_unusable("--run CMD is required (or --list)", as_json, stdout, stderr)
    return cli_fixtures(
        args.run,
        args.mode,
        args.fixtures,
        report_format == "json",
        stdout,
        stderr,
        timeout_s=args.timeout,
        report_format=report_format,
        fail_fast=args.fail_fast,
    )


def _fixtures_directory(
    fixtures_dir: str | None, as_json: bool, stdout: TextIO, stderr: TextIO
) -> Path | int:
    directory = Path(fixtures_dir if fixtures_dir is not None else DEFAULT_FIXTURES_DIR)
    if directory.is_dir():
        return directory
    hint = "" if fixtures_dir is not None else " (the default; pass --fixtures DIR)"
    return report_unusable(
        f"fixtures directory {directory} does not exist{hint}", as_json, stdout, stderr
    )


def cli_list_fixtures(
    fixtures_dir: str | None, as_json: bool, stdout: TextIO, stderr: TextIO
) -> int:
    """``contract fixtures --list``: each fixture's file (relative) and name, in run order."""
    directory = _fixtures_directory(fixtures_dir, as_json, stdout, stderr)
    if isinstance(directory, int):
        return directory
    entries = []
    for kind, path in discover_fixtures(directory):
        try:
            name = json.loads(path.read_text(encoding="utf-8")).get("name", path.stem)
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            name = path.stem  # a broken fixture is reported when it is run
        entries.append(
            {"file": path.relative_to(directory).as_posix(), "kind": kind, "name": str(name)}
        )
    if not entries:
        return report_unusable(f"no fixtures found in {directory}", as_json, stdout, stderr)
    if as_json:
        print(json.dumps(entries, indent=2, ensure_ascii=False), file=stdout)
    else:
        print("\n".join(f"{entry['file']}  {entry['name']}" for entry in entries), file=stdout)
    return EXIT_OK


def cli_fixtures(
    run: str,
    mode: str,
    fixtures_dir: str | None,
    as_json: bool,
    stdout: TextIO,
    stderr: TextIO,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    report_format: str | None = None,
    fail_fast: bool = False,
) -> int:
    """``graphonomous contract fixtures --run CMD [--mode] [--fixtures DIR] [--format F]``.

    Runs CMD on every fixture (see :func:`run_fixtures`) and prints the report
    (`report_format` None: text, or JSON when `as_json`).  `fixtures_dir`
    None means ``./fixtures``.  Returns 0 when every fixture passed, 1 when
    some failed (or were skipped by `fail_fast`), 2 for a bad mode, a missing
    directory, an empty command or a directory without fixtures.
    """
    if mode not in FIXTURE_MODES:
        return report_unusable(
            f"--mode must be one of {', '.join(FIXTURE_MODES)}", as_json, stdout, stderr
        )
    chosen = report_format or ("json" if as_json else "text")
    if chosen not in FIXTURE_FORMATS:
        return report_unusable(
            f"--format must be one of {', '.join(FIXTURE_FORMATS)}", as_json, stdout, stderr
        )
    directory = _fixtures_directory(fixtures_dir, as_json, stdout, stderr)
    if isinstance(directory, int):
        return directory
    try:
        report = run_fixtures(run, directory, mode, timeout_s, fail_fast=fail_fast)
    except ValueError as exc:
        return report_unusable(str(exc), as_json, stdout, stderr)
    if chosen == "junit":
        print(format_fixture_junit(report), file=stdout)
    elif chosen == "github":
        print(format_fixture_github(report), file=stdout)
    else:
        print(format_fixture_report(report, chosen == "json"), file=stdout)
    if report.problems:
        return EXIT_UNUSABLE
    return EXIT_OK if report.ok else EXIT_INVALID
