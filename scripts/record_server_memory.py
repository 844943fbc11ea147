"""Record what ``@modelcontextprotocol/server-memory`` answers, as a test fixture.

    npm install --prefix /tmp/sm @modelcontextprotocol/server-memory
    python scripts/record_server_memory.py /tmp/sm/node_modules/@modelcontextprotocol/server-memory

Runs the real server with ``node`` over stdio (raw JSON-RPC lines, one request at a
time: the server rewrites its whole file per call, so pipelined calls would race),
each session on a fresh ``MEMORY_FILE_PATH``, and writes every request with the
reply's ``result`` (or JSON-RPC ``error``) to
``tests/fixtures/server_memory_transcript.json``.  ``tests/test_memory_transcript.py``
replays the file against our memory surface.  Not run in CI (it needs Node and npm).

Rules of this script: stdlib only; the steps below are the one home of the recorded
calls (the fixture is their output); re-recording with the same package version gives
the same file apart from ``recorded_on``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
FIXTURE: Final = ROOT / "tests" / "fixtures" / "server_memory_transcript.json"
# The protocol version our client offers (the newest both servers speak).
PROTOCOL_VERSION: Final = "2025-11-25"
# Seconds to wait for one reply of the real server before giving up.
REPLY_TIMEOUT_S: Final = 30


def _e(name: str, entity_type: str, *observations: str) -> dict[str, Any]:
    return {"name": name, "entityType": entity_type, "observations": list(observations)}


def _r(source: str, target: str, relation_type: str) -> dict[str, str]:
    return {"from": source, "to": target, "relationType": relation_type}


def _obs(name: str, *contents: str) -> dict[str, Any]:
    return {"entityName": name, "contents": list(contents)}


def _dels(name: str, *observations: str) -> dict[str, Any]:
    return {"entityName": name, "observations": list(observations)}


# Every documented call, dangling relations, existing names and relations, deleting
# missing things, search edge cases (case, Unicode lower case, empty query, a miss,
# a query spanning two fields) and errors (a missing entity, bad arguments).
MAIN: Final[list[tuple[str, dict[str, Any]]]] = [
    ("read_graph", {}),
    ("search_nodes", {"query": ""}),
    ("open_nodes", {"names": ["Nobody"]}),
    (
        "create_entities",
        {
            "entities": [
                _e("Alice", "person", "Likes tea", "Works at Acme"),
                _e("Acme", "company"),
                _e("Bob", "person", "Grew up in İstanbul", "Spricht Deutsch: Straße"),
            ]
        },
    ),
    ("create_entities", {"entities": [_e("Alice", "robot", "ignored"), _e("Carol", "person")]}),
    ("create_entities", {"entities": []}),
    (
        "create_relations",
        {"relations": [_r("Alice", "Acme", "works_at"), _r("Alice", "Bob", "knows")]},
    ),
    ("create_relations", {"relations": [_r("Alice", "Acme", "works_at")]}),
    (
        "create_relations",
        {
            "relations": [
                _r("Alice", "Dave", "knows"),
                _r("Eve", "Alice", "mentors"),
                _r("Ghost", "Phantom", "haunts"),
                _r("Carol", "Bob", "likes"),
            ]
        },
    ),
    ("create_relations", {"relations": [_r("Alice", "Dave", "knows")]}),
    ("create_relations", {"relations": [_r("Alice", "Alice", "talks to herself")]}),
    (
        "create_relations",
        {"relations": [_r("Alice", "Acme", "employed by"), _r("Alice", "Acme", "part_of")]},
    ),
    ("create_relations", {"relations": []}),
    ("read_graph", {}),
    ("search_nodes", {"query": "alice"}),
    ("search_nodes", {"query": "ACME"}),
    ("search_nodes", {"query": "PERSON"}),
    ("search_nodes", {"query": "i̇stanbul"}),
    ("search_nodes", {"query": "STRASSE"}),
    ("search_nodes", {"query": "tea works"}),
    ("search_nodes", {"query": "zzz"}),
    ("search_nodes", {"query": "Dave"}),
    ("search_nodes", {"query": ""}),
    ("open_nodes", {"names": ["Bob", "Alice", "Nobody"]}),
    ("open_nodes", {"names": ["Dave", "Ghost"]}),
    ("open_nodes", {"names": []}),
    (
        "add_observations",
        {"observations": [_obs("Alice", "Likes tea", "Plays chess"), _obs("Bob", "Runs")]},
    ),
    ("add_observations", {"observations": [_obs("Alice", "Plays chess"), _obs("Alice", "Sings")]}),
    ("add_observations", {"observations": [_obs("Nobody", "x")]}),
    ("add_observations", {"observations": [_obs("Carol", "new"), _obs("Nobody", "x")]}),
    ("open_nodes", {"names": ["Carol"]}),
    ("add_observations", {"observations": []}),
    (
        "delete_observations",
        {"deletions": [_dels("Alice", "Plays chess", "not there"), _dels("Nobody", "x")]},
    ),
    ("delete_observations", {"deletions": []}),
    (
        "delete_relations",
        {
            "relations": [
                _r("Alice", "Bob", "knows"),
                _r("Alice", "Nobody", "knows"),
                _r("Ghost", "Phantom", "haunts"),
                _r("Alice", "Acme", "part_of"),
            ]
        },
    ),
    ("delete_relations", {"relations": [_r("Alice", "Bob", "knows")]}),
    ("create_entities", {"entities": [_e("Dave", "person", "Knows Alice")]}),
    ("open_nodes", {"names": ["Dave"]}),
    ("search_nodes", {"query": "knows"}),
    ("delete_entities", {"entityNames": ["Bob", "Nobody", "Eve"]}),
    ("delete_entities", {"entityNames": []}),
    ("read_graph", {}),
    ("create_relations", {"relations": [_r("Eve", "Alice", "mentors")]}),
    ("delete_entities", {"entityNames": ["Alice"]}),
    ("read_graph", {}),
    ("create_entities", {"entities": [{"name": "NoType", "observations": []}]}),
    ("create_relations", {"relations": [{"from": "Acme", "to": "Dave"}]}),
    ("search_nodes", {}),
    ("open_nodes", {"names": "Acme"}),
    ("add_observations", {"observations": [{"entityName": "Acme", "contents": [1]}]}),
    ("create_entities", {"entities": [{"observations": [1, []], "entityType": []}]}),
    (
        "create_entities",
        {"entities": [None, {"name": True, "entityType": {}, "observations": "x"}]},
    ),
    ("create_entities", {"entities": {}}),
    ("create_relations", {"relations": [{"to": 1, "from": None}]}),
    ("delete_observations", {"deletions": [{"observations": "x"}]}),
    ("delete_entities", {"entityNames": [1, "Acme", 2.5]}),
    ("read_graph", {}),
]

# Calls where server-memory keeps repeats within one call (names, relations,
# observations), accepts an empty name or drops an unknown key: recorded so the
# difference stays visible (spec/memory-compat.md §3, differences).
REPEATS: Final[list[tuple[str, dict[str, Any]]]] = [
    ("create_entities", {"entities": [_e("Zed", "person", "a"), _e("Zed", "robot", "b")]}),
    ("create_entities", {"entities": [_e("Yan", "person", "x", "x")]}),
    ("create_relations", {"relations": [_r("Zed", "Yan", "knows"), _r("Zed", "Yan", "knows")]}),
    ("add_observations", {"observations": [_obs("Yan", "y", "y")]}),
    ("create_entities", {"entities": [_e("", "nothing")]}),
    ("create_entities", {"entities": [{**_e("Xan", "person"), "note": "dropped"}]}),
    ("read_graph", {}),
]

# A graph with dangling relations whose memory file is kept (`memory_file`): importing
# that file must give the real server's last read_graph.
FILE: Final[list[tuple[str, dict[str, Any]]]] = [
    ("create_entities", {"entities": [_e("Ann", "person", "Ships code"), _e("Repo", "project")]}),
    (
        "create_relations",
        {
            "relations": [
                _r("Ann", "Repo", "maintains"),
                _r("Ann", "Lena", "mentors"),
                _r("Lena", "Repo", "reviews"),
                _r("Ghost", "Phantom", "haunts"),
                _r("Repo", "Repo", "forks"),
            ]
        },
    ),
    ("create_entities", {"entities": [_e("Lena", "person", "Joined in May")]}),
    ("create_relations", {"relations": [_r("Ann", "Lena", "works with")]}),
    ("read_graph", {}),
]

SESSIONS: Final = {"main": MAIN, "repeats": REPEATS, "file": FILE}


class Client:
    """One MCP session over a child process's stdio, a request at a time."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
            encoding="utf-8",
        )
        self.next_id = 0
        init = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "record_server_memory", "version": "1"},
        }
        self.request("initialize", init)
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The reply (``result`` or ``error`` member) to one request."""
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the server closed its output during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return {k: message[k] for k in ("result", "error") if k in message}

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=REPLY_TIMEOUT_S)


def record(package_dir: Path, node: str) -> dict[str, Any]:
    """Run every session against the package's ``dist/index.js``; the fixture document."""
    version = json.loads((package_dir / "package.json").read_text("utf-8"))["version"]
    sessions = []
    for name, steps in SESSIONS.items():
        with tempfile.TemporaryDirectory() as scratch:
            env = {"PATH": "/usr/bin:/bin", "MEMORY_FILE_PATH": f"{scratch}/memory.jsonl"}
            client = Client([node, str(package_dir / "dist" / "index.js")], env)
            try:
                recorded = [
                    {"tool": tool, "arguments": arguments, "reply": client.call(tool, arguments)}
                    for tool, arguments in steps
                ]
            finally:
                client.close()
            memory = Path(scratch, "memory.jsonl")
            kept = memory.read_text("utf-8") if memory.exists() else ""
        sessions.append({"name": name, "steps": recorded, "memory_file": kept})
    return {
        "package": "@modelcontextprotocol/server-memory",
        "version": version,
        "recorded_on": datetime.date.today().isoformat(),
        "how": (
            "scripts/record_server_memory.py: node dist/index.js over stdio, raw JSON-RPC "
            f"(protocol {PROTOCOL_VERSION}), one request at a time, a fresh MEMORY_FILE_PATH "
            "per session; each step keeps the request's tool and arguments and the reply's "
            "result (or error) as received; memory_file is the JSONL file the server left."
        ),
        "sessions": sessions,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package_dir", type=Path, help="node_modules/@modelcontextprotocol/...")
    parser.add_argument("--node", default=shutil.which("node") or "node")
    parser.add_argument("--out", type=Path, default=FIXTURE)
    args = parser.parse_args(argv)
    document = record(args.package_dir, args.node)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    args.out.write_text(text, "utf-8")
    print(f"wrote {args.out} ({sum(len(s['steps']) for s in document['sessions'])} steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
