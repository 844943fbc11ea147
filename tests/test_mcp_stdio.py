"""The stdio transport: in-process framing and end to end through `python -m graphonomous serve`."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from graphonomous import Graphonomous
from graphonomous.mcp.jsonrpc import INVALID_REQUEST, PARSE_ERROR
from graphonomous.mcp.server import McpServer
from graphonomous.mcp.stdio import read_lines, run_stdio

ROOT = Path(__file__).resolve().parents[1]
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def ping(msg_id: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": msg_id, "method": "ping"})


def replies(data: bytes) -> list[Any]:
    assert data == b"" or data.endswith(b"\n")
    return [json.loads(text) for text in data.decode("utf-8").splitlines()]


# -- in process ------------------------------------------------------------------


def run(data: bytes, max_line_bytes: int = 1 << 20) -> list[Any]:
    out = io.BytesIO()
    run_stdio(McpServer(None, ()), io.BytesIO(data), out, max_line_bytes=max_line_bytes)
    return replies(out.getvalue())


def test_read_lines_handles_missing_final_newline_and_long_lines() -> None:
    stream = io.BytesIO(b"a\n" + b"x" * 50 + b"\nb\n" + b"y" * 10 + b"\nlast")
    assert list(read_lines(stream, 20)) == [b"a", None, b"b", b"y" * 10, b"last"]


def test_framing_blank_lines_crlf_and_oversized_lines() -> None:
    data = b"\n  \n" + ping(1)[:-1] + b"\r\n" + b"{" * 100 + b"\n" + ping(2)
    data += b"[" + b" " * 2000 + b"]\n" + ping(3)
    out = run(data, max_line_bytes=1000)
    assert [r["id"] for r in out] == [1, None, 2, None, 3]
    assert out[1]["error"]["code"] == PARSE_ERROR
    assert out[3]["error"]["code"] == INVALID_REQUEST and "longer" in out[3]["error"]["message"]


def test_notifications_write_nothing() -> None:
    assert run(line({"jsonrpc": "2.0", "method": "notifications/initialized"})) == []


def test_a_closed_stdout_ends_the_loop_quietly() -> None:
    class Closed(io.BytesIO):
        def write(self, data: Any) -> int:
            raise BrokenPipeError

    run_stdio(McpServer(None, ()), io.BytesIO(ping(1) + ping(2)), Closed())


# -- end to end -------------------------------------------------------------------


def spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )


def test_session_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    proc = spawn("-m", "graphonomous", "serve", "--db", str(db))
    big = "x" * 12_000_000
    session = [
        line(INIT),
        line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        line(
            {
                "jsonrpc": "2.0",
                "id": "call",
                "method": "tools/call",
                "params": {
                    "name": "act",
                    "arguments": {"action": "store_node", "content": "hello é"},
                },
            }
        ),
        line({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": {"pad": big}}}),
        b"not json\n",
    ]
    out, err = proc.communicate(b"".join(session), timeout=60)
    assert proc.returncode == 0, err.decode()
    got = replies(out)
    assert [r["id"] for r in got] == [0, 1, "call", 2, None]
    assert got[0]["result"]["serverInfo"]["name"] == "graphonomous"
    # The default surface: seed 003's five v2 machines.
    assert [t["name"] for t in got[1]["result"]["tools"]] == [
        "retrieve",
        "route",
        "act",
        "learn",
        "consolidate",
    ]
    assert got[2]["result"]["structuredContent"]["node"]["content"] == "hello é"
    assert got[4]["error"]["code"] == PARSE_ERROR
    with Graphonomous(db) as graph:
        assert graph.graph_stats()["node_count"] == 1


def test_twenty_pipelined_writes_all_persist(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    proc = spawn("-m", "graphonomous", "serve", "--db", str(db))
    calls = [
        line(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {
                    "name": "act",
                    "arguments": {"action": "store_node", "content": f"fact {i}"},
                },
            }
        )
        for i in range(1, 21)
    ]
    out, err = proc.communicate(line(INIT) + b"".join(calls), timeout=60)
    assert proc.returncode == 0, err.decode()
    got = replies(out)
    assert [r["id"] for r in got] == list(range(21))
    assert all(not r["result"].get("isError") for r in got[1:])
    with Graphonomous(db) as graph:
        contents = {n["content"] for n in graph.list_nodes(limit=100)["nodes"]}
    assert contents == {f"fact {i}" for i in range(1, 21)}


def test_sigterm_exits_cleanly(tmp_path: Path) -> None:
    proc = spawn("-m", "graphonomous", "serve", "--db", str(tmp_path / "g.db"))
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line(INIT))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert time.monotonic() - started < 5
    proc.stdin.close()
    proc.stdout.close()
    assert proc.stderr is not None
    proc.stderr.close()


def test_stray_output_cannot_reach_the_protocol_stream() -> None:
    script = "\n".join(
        [
            "import os, sys",
            "from graphonomous.mcp.server import McpServer",
            "from graphonomous.mcp.stdio import serve_stdio",
            "from graphonomous.mcp.tools import ToolAnnotations, ToolSpec",
            "def noisy(graph, args):",
            "    print('print() noise')",
            "    sys.stdout.write('sys.stdout noise\\n')",
            "    os.write(1, b'fd 1 noise\\n')",
            "    return {}",
            "spec = ToolSpec('noisy', 'Noisy', 'prints', {'type': 'object'}, None,",
            "                ToolAnnotations(True, False, True), noisy)",
            "print('before serving')  # the real stdout, before serving",
            "code = serve_stdio(McpServer(None, (spec,)))",
            "print('after serving')",
            "sys.exit(code)",
        ]
    )
    proc = spawn("-c", script)
    request = line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "noisy"}})
    out, err = proc.communicate(request, timeout=60)
    assert proc.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines[0] == "before serving" and lines[-1] == "after serving"
    assert json.loads(lines[1])["result"]["structuredContent"] == {}
    assert len(lines) == 3
    assert b"print() noise" in err and b"fd 1 noise" in err and b"sys.stdout noise" in err


def test_sigkill_loses_no_acknowledged_write(tmp_path: Path) -> None:
    """Every store_node the server answered survives a SIGKILL that lands mid-stream."""
    db = tmp_path / "g.db"
    proc = spawn("-m", "graphonomous", "serve", "--db", str(db), "--surface", "v1")
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line(INIT))
    proc.stdin.flush()
    json.loads(proc.stdout.readline())
    total = 300
    for i in range(total):  # pipelined: the server is still writing when it dies
        call = {
            "jsonrpc": "2.0",
            "id": i + 1,
            "method": "tools/call",
            "params": {"name": "store_node", "arguments": {"content": f"durable fact {i}"}},
        }
        proc.stdin.write(line(call))
    proc.stdin.flush()
    acknowledged: list[str] = []
    while len(acknowledged) < 40:
        reply = json.loads(proc.stdout.readline())
        acknowledged.append(reply["result"]["structuredContent"]["node"]["id"])
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    with Graphonomous(db) as graph:
        assert graph.store.integrity_check() == "ok"
        stored = set(graph.store.node_ids())
    assert set(acknowledged) <= stored
    assert len(stored) < total  # the kill really landed mid-stream
