"""The command line: thin adapter, one-line errors, JSON output."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphonomous import __version__
from graphonomous.cli import main


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "cli.db")


def test_version_via_module_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "graphonomous", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"graphonomous {__version__}"


def test_node_and_edge_round_trip(db: str) -> None:
    code, text = run("--db", db, "--json", "node", "add", "E-47 means pressure loss")
    assert code == 0
    first = json.loads(text)["node"]["id"]
    code, text = run("node", "add", "reset the valve", "--type", "procedural", "--db", db, "--json")
    second = json.loads(text)["node"]["id"]
    code, text = run("--db", db, "edge", "add", first, second, "-r", "resolves")
    assert code == 0 and "resolves" in text
    code, text = run("--db", db, "--json", "node", "show", first)
    shown = json.loads(text)
    assert shown["node"]["content"] == "E-47 means pressure loss"
    assert shown["edges"][0]["relationship"] == "resolves"
    code, text = run("--db", db, "node", "list", "--type", "procedural")
    assert "reset the valve" in text and "1 of 1 nodes" in text
    code, text = run("--db", db, "--json", "stats")
    assert json.loads(text)["edge_count"] == 1
    code, text = run("--db", db, "edge", "list", "--node", first)
    assert "1 edges" in text


def test_init_reports_schema(db: str) -> None:
    code, text = run("--db", db, "init")
    assert code == 0 and "schema v" in text


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["node", "add", "x", "--confidence", "1.5"], "invalid confidence"),
        (["node", "add", "x", "--metadata", "{oops"], "invalid metadata"),
        (["node", "add", "x", "--type", "dream"], "invalid choice"),
        (["node", "show", "missing"], "node not found: missing"),
        (["edge", "add", "a", "b"], "invalid source_id"),
        (["batch", "/nonexistent.json"], "cannot read batch"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_errors_are_one_line_without_traceback(
    db: str, argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run("--db", db, "init")
    code, _ = run("--db", db, *argv)
    err = capsys.readouterr().err
    assert code in (1, 2)
    assert fragment in err
    assert "Traceback" not in err
    assert err.count("\n") == 1


def test_not_a_database_is_a_clean_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("hello")
    proc = subprocess.run(
        [sys.executable, "-m", "graphonomous", "--db", str(bogus), "stats"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "not a SQLite database" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert bogus.read_text() == "hello"


def test_batch_from_stdin(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ops = [{"op": "add_node", "node": {"id": "a", "content": "A"}}]
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(ops)))
    code, text = run("--db", db, "batch", "-")
    assert code == 0 and "applied 1 operations" in text
