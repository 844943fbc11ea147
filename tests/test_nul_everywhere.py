"""NUL (U+0000) in every text that reaches the store answers the same on both backends.

PostgreSQL refuses NUL in text, so a text that would hold it is either refused naming
the field (the caller's input: revision reasons, memory-compat names and observations,
ids, export files, a SQLite file migrated to PostgreSQL) or kept losslessly (text the
engine builds: audit details and revision details are JSON, where NUL is ``\\u0000``).
A lookup by a name holding NUL answers "unknown", as no stored name holds one.

PostgreSQL legs skip without the test packages, and fail when
GRAPHONOMOUS_REQUIRE_POSTGRES=1 (tests/pg_support.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pg_support
import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp import build_server
from graphonomous.mcp.jsonrpc import Request, Response, encode
from graphonomous.model import ValidationError
from graphonomous.server_memory import memory_view
from graphonomous.server_memory.jsonl import MemoryFileError, parse_line
from graphonomous.store.migrate import MigrateError, migrate

# The session cluster and per-backend database fixtures of tests/pg_support.py.
globals().update(
    pg_cluster=pg_support.pg_cluster, backend_db=pg_support.backend_db, pg_url=pg_support.pg_url
)

NUL = r"contains a NUL character \(U\+0000\)"


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(args, out)
    return code, out.getvalue(), err.getvalue()


def _tool(
    graph: Graphonomous, name: str, arguments: dict[str, Any], surface: str = "v1"
) -> dict[str, Any]:
    server = build_server(graph, surface)
    params = {"name": name, "arguments": arguments}
    (response,) = [
        m for m in server.handle(Request(1, "tools/call", params)) if isinstance(m, Response)
    ]
    result: dict[str, Any] = json.loads(encode(response))["result"]
    return result


def _revisions(graph: Graphonomous) -> int:
    return int(graph.store.scalar("SELECT count(*) FROM revisions"))


def test_revision_reasons_refuse_nul_before_anything_is_written(backend_db: str) -> None:
    with Graphonomous(backend_db) as graph:
        kept = graph.store_node("the bridge opens at nine")["node"]["id"]
        before = (_revisions(graph), graph.graph_stats()["node_count"])
        attempts = [
            lambda: graph.belief_revise("expand", content="a new fact", reason="why\x00"),
            lambda: graph.belief_revise(
                "revise", node_id=kept, new_content="it opens at ten", reason="r\x00"
            ),
            lambda: graph.belief_revise("contract", node_id=kept, reason="\x00"),
            lambda: graph.learn_from_feedback(
                kept, "correction", correction="it opens at ten", reason="fix\x00"
            ),
        ]
        for attempt in attempts:
            with pytest.raises(ValidationError, match=rf"^reason: {NUL}"):
                attempt()
        assert (_revisions(graph), graph.graph_stats()["node_count"]) == before
        assert graph.store.require_node(kept).superseded_by is None
        arguments = {"action": "contract", "node_id": kept, "reason": "x\x00"}
        result = _tool(graph, "belief_revise", arguments)
        assert result["isError"] is True and "reason" in result["content"][0]["text"]
        assert _revisions(graph) == before[0]


def test_memory_compat_writes_refuse_nul_naming_the_field(backend_db: str) -> None:
    with Graphonomous(backend_db) as graph:
        view = memory_view(graph)
        view.create_entities([{"name": "Ada", "entityType": "person", "observations": ["ok"]}])
        with pytest.raises(ValidationError, match=rf"^entities\[1\]\.name: {NUL}"):
            view.create_entities(
                [
                    {"name": "Bob", "entityType": "person", "observations": []},
                    {"name": "B\x00", "entityType": "person", "observations": []},
                ]
            )
        with pytest.raises(ValidationError, match=rf"^relations\[0\]\.to: {NUL}"):
            view.create_relations([{"from": "Ada", "to": "nobody\x00", "relationType": "knows"}])
        with pytest.raises(ValidationError, match=rf"^relations\[0\]\.relationType: {NUL}"):
            view.create_relations([{"from": "Ada", "to": "Zed", "relationType": "k\x00"}])
        with pytest.raises(ValidationError, match=rf"^observations\[0\]\.contents\[1\]: {NUL}"):
            view.add_observations([{"entityName": "Ada", "contents": ["fine", "bad\x00"]}])
        assert graph.store.dangling_relations("memory") == []
        assert [e["name"] for e in view.read_graph()["entities"]] == ["Ada"]
        relation = {"from": "A\x00", "to": "B", "relationType": "k"}
        result = _tool(graph, "create_relations", {"relations": [relation]}, "memory")
        assert result["isError"] is True and "relations[0].from" in result["content"][0]["text"]


def test_lookups_by_a_name_or_id_holding_nul_answer_as_unknown(backend_db: str) -> None:
    with Graphonomous(backend_db) as graph:
        view = memory_view(graph)
        view.create_entities([{"name": "Ada", "entityType": "person", "observations": ["ok"]}])
        assert view.open_nodes(["Ada\x00"]) == {"entities": [], "relations": []}
        view.delete_entities(["Ada\x00"])
        view.delete_relations([{"from": "Ada\x00", "to": "Ada", "relationType": "knows"}])
        assert [e["name"] for e in view.read_graph()["entities"]] == ["Ada"]
        with pytest.raises(ValidationError, match=rf"^node_id: {NUL}"):
            graph.get_node("Ada\x00")
        with pytest.raises(ValidationError, match=rf"^node_id: {NUL}"):
            graph.forget_node("x\x00")


def test_memory_file_lines_refuse_nul_naming_line_and_field(tmp_path: Path) -> None:
    line = json.dumps({"type": "relation", "from": "a", "to": "b\x00", "relationType": "k"})
    with pytest.raises(MemoryFileError, match=rf"^line 7: to: {NUL}"):
        parse_line(7, line)
    extra = {"type": "entity", "name": "a", "entityType": "t", "observations": [], "x": "\x00"}
    assert parse_line(1, json.dumps(extra)) is not None  # an unknown field is not stored
    path = tmp_path / "memory.jsonl"
    entity = {"type": "entity", "name": "a", "entityType": "t", "observations": ["o\x00"]}
    path.write_text(json.dumps(entity) + "\n", encoding="utf-8")
    code, _, err = _cli(["--db", str(tmp_path / "g.db"), "import-memory", str(path)])
    assert code == 2 and "line 1: observations[0]" in err and "NUL" in err, err
    assert "Traceback" not in err


def test_engine_built_details_keep_nul_through_export_and_import(
    backend_db: str, tmp_path: Path
) -> None:
    with Graphonomous(backend_db) as graph:
        node_id = graph.store_node("a note to forget")["node"]["id"]
        graph.forget_node(node_id, reason="asked by\x00user")
        (entry,) = [e for e in graph.store.audit_entries() if e["action"] == "forget_node"]
        assert entry["details"]["reason"] == "asked by\x00user"
    code, exported, err = _cli(["--db", backend_db, "export"])
    assert code == 0, err
    target = str(tmp_path / "copy.db")
    dump_file = tmp_path / "memory.jsonl"
    dump_file.write_text(exported, encoding="utf-8")
    code, _, err = _cli(["--db", target, "import", str(dump_file)])
    assert code == 0, err
    with Graphonomous(target) as copy:
        (entry,) = [e for e in copy.store.audit_entries() if e["action"] == "forget_node"]
        assert entry["details"]["reason"] == "asked by\x00user"


def test_an_export_file_with_nul_in_stored_text_is_refused_naming_the_field(
    backend_db: str, tmp_path: Path
) -> None:
    with Graphonomous(str(tmp_path / "a.db")) as graph:
        graph.store_node("a clean note", metadata={"topic": "x"})
    code, exported, _ = _cli(["--db", str(tmp_path / "a.db"), "export"])
    lines = exported.splitlines()
    row = json.loads(lines[1])
    assert row["table"] == "nodes"
    for field, value in (("content", "dirty\x00"), ("metadata", {"topic": "x\x00"})):
        bad = json.loads(lines[1])
        bad["row"][field] = value
        path = tmp_path / "bad.jsonl"
        path.write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n", "utf-8")
        code, _, err = _cli(["--db", backend_db, "import", str(path)])
        assert code == 2, err
        assert f"line 2: field '{field}' contains a NUL" in err and "Traceback" not in err
    with Graphonomous(backend_db) as graph:
        assert graph.graph_stats()["node_count"] == 0


def test_migrating_a_sqlite_file_holding_nul_to_postgres_names_the_cell(
    pg_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "old.db"
    with Graphonomous(str(source)) as graph:
        node_id = graph.store_node("written before NUL was refused")["node"]["id"]
    with sqlite3.connect(source) as conn:  # as an older version could store it
        conn.execute("UPDATE nodes SET content = ? WHERE id = ?", ("old\x00text", node_id))
    with pytest.raises(MigrateError, match=rf"nodes '{node_id}': column content {NUL}"):
        migrate(str(source), pg_url)
    code, _, err = _cli(["migrate", str(source), pg_url])
    assert code == 2 and "migrate SRC:" in err and "Traceback" not in err, err
    with Graphonomous(pg_url) as graph:
        assert graph.graph_stats()["node_count"] == 0
