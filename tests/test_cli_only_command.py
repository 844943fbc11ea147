"""`build_parser(only=...)`: one command's parser behaves as the full parser for it (issue #20).

A cold command builds only its own sub-parser; these tests pin that nothing a user
sees changes: the parsed namespace, the help text, and the errors.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from graphonomous.cli import CliError, _command_word, build_parser


def _top_commands() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(action.choices)


def _sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = action.choices[name]
    return found


@pytest.mark.parametrize("name", _top_commands())
def test_the_one_command_parser_formats_the_same_help(name: str) -> None:
    full, only = _sub(build_parser(), name), _sub(build_parser(name), name)
    assert only.format_help() == full.format_help()


@pytest.mark.parametrize(
    "argv",
    [
        ["consolidate", "--dry-run", "--db", "x.db"],
        ["--db", "x.db", "--json", "recall", "a query", "--effort", "3"],
        ["node", "list", "--limit", "5"],
        ["--embedder", "hashing", "goal", "create", "a title"],
        ["edge", "add", "a", "b", "--relationship", "related", "--db", "y.db"],
    ],
)
def test_the_one_command_parser_parses_the_same_namespace(argv: list[str]) -> None:
    word = _command_word(argv)
    assert word is not None
    assert vars(build_parser(word).parse_args(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize(
    "argv", [["consolidate", "--bogus"], ["node", "bogus"], ["recall"], ["node"]]
)
def test_the_one_command_parser_reports_the_same_errors(argv: list[str]) -> None:
    messages = []
    for parser in (build_parser(), build_parser(_command_word(argv))):
        with pytest.raises(CliError) as raised:
            parser.parse_args(argv)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


def test_the_command_word_skips_options_and_their_values() -> None:
    assert _command_word(["--db", "recall", "--json", "stats"]) == "stats"
    assert _command_word(["--embedder", "x", "consolidate"]) == "consolidate"
    assert _command_word(["--json"]) is None
    assert _command_word(["-h", "recall"]) is None
    assert _command_word(["--version"]) is None
    # argparse accepts abbreviated options: `--d PATH` is `--db PATH`
    assert _command_word(["--d", "stats", "consolidate"]) == "consolidate"
    assert _command_word(["--emb", "hashing", "recall"]) == "recall"
    assert _command_word(["--db=stats", "consolidate"]) == "consolidate"


def test_an_abbreviated_option_before_the_command_parses_as_in_the_full_parser() -> None:
    argv = ["--d", "stats", "consolidate", "--dry-run"]
    only = build_parser(_command_word(argv)).parse_args(argv)
    assert vars(only) == vars(build_parser().parse_args(argv))
    assert (only.db, only.command) == ("stats", "consolidate")


def test_an_unknown_word_gets_the_full_parser_and_its_choices() -> None:
    with pytest.raises(CliError) as raised:
        build_parser("bogus").parse_args(["bogus"])
    assert "consolidate" in str(raised.value)


def test_a_cold_consolidate_parser_imports_no_topology_nor_ingestion() -> None:
    """What a cold `consolidate` does not need stays unloaded (issue #20's cold budget)."""
    import json

    probe = (
        "import json, sys, graphonomous.cli as cli; cli.build_parser('consolidate'); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('graphonomous.'))))"
    )
    loaded = set(json.loads(_fresh_interpreter(probe)))
    assert "graphonomous.cli" in loaded
    for lazy in (
        "graphonomous.topology",
        "graphonomous.ingest.options",
        "graphonomous.ingest.chunking",
    ):
        assert lazy not in loaded


def test_a_cold_consolidate_loads_no_logging_nor_tempfile(tmp_path: Path) -> None:
    """`logging` (telemetry, beliefs: only when a handler fails) and `tempfile` (stdin
    spooling, the create probe) stay unloaded by a consolidation of an existing file."""
    import json

    from graphonomous import Graphonomous

    db = tmp_path / "g.db"
    with Graphonomous(db) as graph:
        graph.store_node("pump seals leak at the gland", node_id="n1")
    probe = (
        "import json, sys\n"
        "from graphonomous.cli import main\n"
        f"code = main(['consolidate', '--db', {str(db)!r}, '--json'])\n"
        "print(json.dumps([m for m in ('logging', 'tempfile') if m in sys.modules]))"
    )
    out = _fresh_interpreter(probe)
    assert '"nodes_before": 1' in out
    assert json.loads(out.strip().splitlines()[-1]) == []


def _fresh_interpreter(probe: str) -> str:
    """The standard output of `probe` run by a new Python process on this checkout."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout
