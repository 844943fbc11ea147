"""Our memory surface replays a transcript of the real ``@modelcontextprotocol/server-memory``.

``tests/fixtures/server_memory_transcript.json`` holds requests and the real server's
replies, recorded by ``scripts/record_server_memory.py`` (its header says how; the
fixture names the package version and the date).  Every reply of the ``main`` and
``file`` sessions must equal ours: the whole JSON-RPC ``result`` (``content`` text,
``structuredContent``, ``isError``) compared as parsed JSON, and the text of
``content[0]`` byte for byte.

Normalised, and only this: our reads add ``_meta`` (provenance, spec/memory-compat.md §5),
which the real server has no counterpart for; it is dropped before comparing.

The memory file the real server left after the ``file`` session (dangling relations
included), imported with ``graphonomous import-memory``, must read back as that
session's last read_graph.

The ``repeats`` session records where we differ on purpose (spec/memory-compat.md §3,
differences): a name, relation or observation repeated within one call is kept once,
and an empty name or an unknown key is refused (an isError result naming the field).
Those replies must equal the real ones with the repeats and the refused entities
removed (:func:`without_repeats`).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response, encode
from graphonomous.mcp.server import McpServer

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = json.loads((ROOT / "tests/fixtures/server_memory_transcript.json").read_text("utf-8"))
SESSIONS = {session["name"]: session["steps"] for session in FIXTURE["sessions"]}
# Our extension of the read results (provenance); the real server has none.
OUR_META = "_meta"


def normalised(reply: dict[str, Any]) -> dict[str, Any]:
    """The reply's result (or error) without our `_meta`."""
    out = {key: reply[key] for key in ("result", "error") if key in reply}
    if "result" in out:
        out["result"] = {k: v for k, v in out["result"].items() if k != OUR_META}
    return out


@pytest.fixture
def server(tmp_path: Path) -> Iterator[McpServer]:
    with Graphonomous(tmp_path / "g.db") as graph:
        yield build_server(graph, "memory", check_output=True)


def replay(server: McpServer, steps: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for number, step in enumerate(steps, start=1):
        params = {"name": step["tool"], "arguments": step["arguments"]}
        messages = server.handle(Request(number, "tools/call", params))
        (response,) = [m for m in messages if isinstance(m, Response)]
        yield normalised(json.loads(encode(response)))


def test_the_fixture_says_what_it_is() -> None:
    assert FIXTURE["package"] == "@modelcontextprotocol/server-memory"
    assert FIXTURE["version"] == "2026.8.31" and FIXTURE["recorded_on"]
    assert "scripts/record_server_memory.py" in FIXTURE["how"]
    assert len(SESSIONS["main"]) >= 50


def _text(reply: dict[str, Any]) -> str:
    text: str = reply["result"]["content"][0]["text"]
    return text


@pytest.mark.parametrize("session", ["main", "file"])
def test_every_reply_equals_the_real_servers(server: McpServer, session: str) -> None:
    steps = SESSIONS[session]
    for step, ours in zip(steps, replay(server, steps), strict=True):
        real = step["reply"]
        assert _text(ours).encode() == _text(real).encode(), (step["tool"], step["arguments"])
        assert ours == real, (step["tool"], step["arguments"])


def test_the_transcript_covers_every_tool_and_the_dangling_cases() -> None:
    steps = SESSIONS["main"]
    tools = {step["tool"] for step in steps}
    assert len(tools) == 9
    texts = [_text(step["reply"]) for step in steps]
    assert any('"to": "Phantom"' in text for text in texts)  # both ends missing
    assert any(text.startswith("MCP error -32602") for text in texts)
    assert "Entity with name Nobody not found" in texts


def test_every_reply_equals_the_real_servers_over_stdio(tmp_path: Path) -> None:
    """The same session through `graphonomous serve --surface memory` (pipelined lines)."""
    steps = SESSIONS["main"]
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    messages += [
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": step["tool"], "arguments": step["arguments"]},
        }
        for number, step in enumerate(steps, start=1)
    ]
    db = tmp_path / "g.db"
    proc = subprocess.run(
        [sys.executable, "-m", "graphonomous", "serve", "--surface", "memory", "--db", str(db)],
        input="".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages).encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    replies = [json.loads(line) for line in proc.stdout.decode().splitlines()][1:]
    assert [r["id"] for r in replies] == list(range(1, len(steps) + 1))
    for step, reply in zip(steps, replies, strict=True):
        assert normalised(reply) == step["reply"], (step["tool"], step["arguments"])


def test_the_real_servers_file_imports_as_it_reads(tmp_path: Path) -> None:
    (session,) = [s for s in FIXTURE["sessions"] if s["name"] == "file"]
    path = tmp_path / "memory.jsonl"
    path.write_text(session["memory_file"], "utf-8")
    db = tmp_path / "g.db"
    out = io.StringIO()
    assert main(["--db", str(db), "--json", "import-memory", str(path)], out) == 0
    report = json.loads(out.getvalue())
    assert report["relations_dangling"] == [{"line": 7, "missing": ["Ghost", "Phantom"]}]
    with Graphonomous(db) as graph:
        server = build_server(graph, "memory", check_output=True)
        (ours,) = replay(server, [{"tool": "read_graph", "arguments": {}}])
    assert ours == session["steps"][-1]["reply"]


# -- the differences we keep on purpose --------------------------------------------------


def _unique(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _entities(items: list[dict[str, Any]], refused: set[str]) -> list[dict[str, Any]]:
    """A name once (the first wins), its observations once, no refused name."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        if item["name"] not in refused and item["name"] not in out:
            out[item["name"]] = {**item, "observations": _unique(item["observations"])}
    return list(out.values())


def without_repeats(structured: dict[str, Any], refused: set[str]) -> dict[str, Any]:
    """A real structuredContent with what a call repeated kept once and the entities we
    refused left out (our documented difference)."""
    out = dict(structured)
    if "entities" in out:
        out["entities"] = _entities(out["entities"], refused)
    if "relations" in out:
        out["relations"] = _unique(out["relations"])
    if "results" in out:
        out["results"] = [
            {**r, "addedObservations": _unique(r["addedObservations"])} for r in out["results"]
        ]
    return out


def _refusal(arguments: dict[str, Any]) -> str | None:
    """The field we refuse in a create_entities call (an empty name, an unknown key)."""
    for index, item in enumerate(arguments.get("entities", [])):
        if item["name"] == "":
            return f"entities[{index}].name"
        for key in set(item) - {"name", "entityType", "observations"}:
            return f"entities[{index}].{key}"
    return None


def test_repeats_within_a_call_are_kept_once(server: McpServer) -> None:
    steps = SESSIONS["repeats"]
    refused: set[str] = set()
    for step, ours in zip(steps, replay(server, steps), strict=True):
        real = step["reply"]["result"]
        field = _refusal(step["arguments"])
        if field is not None:
            assert ours["result"]["isError"] is True and f"- {field}: " in _text(ours)
            refused.update(e["name"] for e in real["structuredContent"]["entities"])
            continue
        expected = without_repeats(real["structuredContent"], refused)
        assert expected != real["structuredContent"], step  # a real difference
        assert ours["result"]["structuredContent"] == expected, step
