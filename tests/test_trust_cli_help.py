"""Every CLI option has help text and shows its default (issue #19 f).

The argparse tree of every command and subcommand is walked: no argument is
without help, every option's help says its default (or that it is required,
repeatable or simply unset), and ``graphonomous <cmd> --help`` renders for
every command and subcommand (exit 0, no "%(default)" left unexpanded).
"""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from graphonomous.cli import build_parser, main
from graphonomous.cli_help import missing, walk


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += commands(sub, (*path, name))
    return found


def test_every_argument_has_help_and_every_option_its_default() -> None:
    assert missing(build_parser()) == []


def test_the_walk_sees_every_command() -> None:
    paths = {command for command, _ in walk(build_parser())}
    assert {"serve", "scan", "recall", "erase", "goal create", "contract fixtures"} <= paths


@pytest.mark.parametrize("path", commands(build_parser()), ids=lambda p: " ".join(p) or "top")
def test_help_renders_for_every_command(path: tuple[str, ...]) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main([*path, "--help"], out)
    text = out.getvalue()
    assert stop.value.code == 0
    assert "usage:" in text and "%(default" not in text and "None)" not in text


def test_top_level_help_lists_db_and_json() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["--help"], out)
    assert "--db" in out.getvalue() and "--json" in out.getvalue()


def test_defaults_read_as_words() -> None:
    by_name = {
        (command, action.dest): action.help or "" for command, action in walk(build_parser())
    }
    assert by_name[("serve", "port")].endswith("(default: %(default)s)")
    assert by_name[("node list", "include_forgotten")].endswith("(default: off)")
    assert "(default: 0.5)" in by_name[("node add", "confidence")]
    assert by_name[("learn outcome", "status")].endswith("(required)")
