"""Damaged pages read over MCP and the CLI are named plainly (issue #12 c).

Bytes are flipped in the middle of a real database file.  Reads that reach the
damaged pages answer with one stable sentence naming the file, the problem,
``graphonomous doctor`` and the backup: a JSON-RPC error (code -32010) over MCP
stdio, exit 1 and that sentence on stderr for the CLI; never "internal error",
never a traceback, and the server keeps serving.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp.server import DATABASE_DAMAGED
from graphonomous.store.damage import DAMAGED_PREFIX, damage_message, is_damage

ROOT = Path(__file__).resolve().parent.parent
# A fixed pattern (not random bytes): the same pages break on every run.
GARBAGE = bytes(range(256)) * 32


def build(path: Path, nodes: int = 600) -> None:
    with Graphonomous(path, embedder="hashing") as graph:
        for i in range(nodes):
            graph.store_node(f"note {i} about valve V-{i} pressure " + "padding " * 40)


def flip_middle(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(size // 2 // 4096 * 4096)
        handle.write(GARBAGE)


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("damaged") / "g.db"
    build(db)
    flip_middle(db)
    return db


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(args, out)
    return code, out.getvalue(), err.getvalue()


def test_is_damage_tells_damage_from_other_errors() -> None:
    import sqlite3

    assert is_damage(sqlite3.DatabaseError("database disk image is malformed"))
    assert is_damage(sqlite3.DatabaseError("file is not a database"))
    assert not is_damage(sqlite3.OperationalError("database is locked"))
    assert not is_damage(ValueError("malformed"))
    message = damage_message("x.db", "database disk image is malformed")
    assert message.startswith(DAMAGED_PREFIX) and "doctor" in message and "backup" in message


@pytest.mark.parametrize("command", [["recall", "valve pressure"], ["stats"]])
def test_cli_reads_name_the_damage(damaged: Path, command: list[str]) -> None:
    code, _, err = run(["--db", str(damaged), *command])
    assert "internal error" not in err and "Traceback" not in err
    assert code == 1, err
    assert DAMAGED_PREFIX in err and str(damaged) in err
    assert "doctor" in err and "backup" in err


def rpc(db: Path, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Send `messages` to a real stdio server on `db`; (responses, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    proc = subprocess.run(
        [sys.executable, "-m", "graphonomous", "--db", str(db), "serve", "--no-idle-consolidation"],
        input=lines,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()], proc.stderr


def test_mcp_reads_answer_a_stable_json_rpc_error(damaged: Path) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "retrieve", "arguments": {"action": "context", "query": "valve"}},
    }
    after = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    responses, stderr = rpc(
        damaged, [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call, after]
    )
    by_id = {r.get("id"): r for r in responses}
    assert "result" in by_id[1]
    error = by_id[2]["error"]
    assert error["code"] == DATABASE_DAMAGED
    assert error["message"].startswith(DAMAGED_PREFIX)
    assert "doctor" in error["message"] and "backup" in error["message"]
    assert error["data"]["fix"] == "graphonomous doctor"
    assert "result" in by_id[3]  # the server keeps serving
    assert "Internal error" not in json.dumps(responses) and "Traceback" not in stderr
