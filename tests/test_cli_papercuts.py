"""First-hour papercuts of the command line, one test each (issue #19)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphonomous.cli import main


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["stats"],
        ["node", "show", "abc"],
        ["node", "list"],
        ["edge", "list"],
        ["recall", "anything"],
        ["coverage", "a task"],
    ],
)
def test_read_only_commands_on_a_missing_database_exit_2_and_create_nothing(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "typo.db"
    code, _ = run("--db", str(db), *argv)
    assert code == 2
    err = capsys.readouterr().err
    assert f"no database at {db}" in err and "graphonomous init" in err
    assert list(tmp_path.iterdir()) == []


def test_usage_errors_name_the_subcommand_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run("--db", str(tmp_path / "x.db"), "edge", "add", "a", "b", "-r", "blah")
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("graphonomous: edge add: argument --relationship/-r: invalid choice")
    assert "graphonomous: graphonomous" not in err


def test_a_bad_batch_operation_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "b.db")
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps([{"op": "add_edge", "edge": {"source_id": "a"}}]), "utf-8")
    assert run("--db", db, "batch", str(ops))[0] == 2
    assert "operation 0 (add_edge)" in capsys.readouterr().err


def test_node_list_marks_forgotten_nodes(tmp_path: Path) -> None:
    db = str(tmp_path / "f.db")
    node = json.loads(run("--db", db, "--json", "node", "add", "old fact")[1])["node"]["id"]
    run("--db", db, "node", "add", "live fact")
    run("--db", db, "forget", node)
    code, text = run("--db", db, "node", "list", "--include-forgotten")
    assert code == 0
    lines = [line for line in text.splitlines() if line.startswith(node)]
    assert lines and "FORGOTTEN" in lines[0]
    assert sum("FORGOTTEN" in line for line in text.splitlines()) == 1


def test_serve_on_a_terminal_says_it_waits_for_a_client(tmp_path: Path) -> None:
    """stdin is a pseudo-terminal: the waiting line goes to stderr, stdout stays clean."""
    pty = pytest.importorskip("pty")
    import os

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "graphonomous", "--db", str(tmp_path / "s.db"), "serve"],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        os.write(leader, b"\x04")  # Ctrl-D: end of input
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    assert b"waiting for a client on stdin" in err
    assert out == b""
