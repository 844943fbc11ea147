"""Space: `graphonomous compact` (SQLite VACUUM) and what `stats` says takes the file."""

from __future__ import annotations

import io
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.mcp.v1 import GRAPH_STATS
from graphonomous.store import StoreError
from graphonomous.store.postgres import NO_COMPACT, PostgresStore
from graphonomous.store.sqlite import Store

# Nodes written before forgetting: enough pages (each ~2.4 KB of content) that the freed
# space dwarfs the tables' one-page minimum.
NODES = 300
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


def strict_json(text: str) -> Any:
    """Parsed JSON; NaN / Infinity are errors."""

    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def assert_snake_case(value: Any, path: str = "$") -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert _SNAKE.match(key), f"{path}.{key} is not snake_case"
            assert_snake_case(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            assert_snake_case(item, f"{path}[{index}]")


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    db = tmp_path / "g.db"
    with Graphonomous(db) as graph:
        for i in range(NODES):
            graph.store_node(content=f"payload {i} " + "lorem ipsum dolor " * 130)
    return db


def test_compact_after_forgetting_everything_makes_the_file_smaller(
    filled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(filled)
    full = filled.stat().st_size
    code, _ = run_cli(
        "--db", db, "forget", "--policy", "hybrid", "--max-nodes", "0", "--mode", "hard"
    )
    assert code == 0
    with Graphonomous(db) as graph:
        assert graph.graph_stats()["node_count"] == 0
    forgotten = filled.stat().st_size
    assert forgotten >= full  # deleting rows frees pages inside the file only
    capsys.readouterr()
    code, text = run_cli("--db", db, "--json", "compact")
    assert code == 0
    report = strict_json(text)
    assert_snake_case(report)
    assert report["file_bytes_after"] == filled.stat().st_size < full / 4
    assert report["file_bytes_before"] >= forgotten
    assert report["bytes_freed"] == report["file_bytes_before"] - report["file_bytes_after"]
    assert report["pages_after"] < report["pages_before"]
    assert report["free_pages_before"] > 0
    err = capsys.readouterr().err
    assert err.startswith(f"graphonomous: compacting {db} (") and "pages free" in err
    assert err.count("\n") == 1
    with Graphonomous(db) as graph:  # still a sound graph
        assert graph.store.integrity_check() == "ok"
        assert graph.storage_space()["free_pages"] == 0  # type: ignore[index]


def test_compact_text_report(filled: Path) -> None:
    code, text = run_cli("--db", str(filled), "compact")
    assert code == 0
    assert text.startswith(f"compacted {filled}: ") and " pages)" in text
    assert text.count("\n") == 1


def test_compact_creates_no_database(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    assert run_cli("--db", str(missing), "compact")[0] == 2
    assert not missing.exists()


def test_compact_waits_for_a_writer_then_says_so(filled: Path) -> None:
    other = sqlite3.connect(filled, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        with Graphonomous(filled) as graph:
            graph.store.execute("PRAGMA busy_timeout = 50")  # instead of 30 s
            with pytest.raises(StoreError, match="locked by another connection"):
                graph.compact()
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_compact_in_memory_has_no_file_bytes() -> None:
    with Graphonomous(":memory:") as graph:
        graph.store_node(content="x")
        report = graph.compact()
    assert report["file_bytes_before"] is None and report["bytes_freed"] is None
    assert report["pages_after"] >= 1


def test_postgres_refuses_compact_clearly() -> None:
    store = object.__new__(PostgresStore)  # no server needed: the refusal is unconditional
    with pytest.raises(StoreError, match="not supported on PostgreSQL"):
        store.vacuum()
    assert "VACUUM FULL" in NO_COMPACT
    assert store.space() is None


# -- stats: the file and what takes it -------------------------------------------------------


def test_stats_reports_what_takes_the_file(filled: Path) -> None:
    code, text = run_cli("--db", str(filled), "--json", "stats")
    assert code == 0
    stats = strict_json(text)
    jsonschema.Draft202012Validator(GRAPH_STATS.output_schema).validate(stats)
    storage = stats["storage"]
    assert_snake_case(storage)
    assert storage["method"] == "dbstat"
    assert storage["file_bytes"] >= filled.stat().st_size
    tables = {t["name"]: t for t in storage["tables"]}
    assert storage["tables"][0]["name"] == "nodes"  # the content is the largest part
    assert tables["nodes"]["index_bytes"] > 0
    # every page is a table's, an index's or free: the accounting is exact
    used = sum(t["bytes"] + t["index_bytes"] for t in storage["tables"])
    free = storage["free_pages"] * storage["page_size"]
    assert used + free == storage["page_count"] * storage["page_size"]
    code, text = run_cli("--db", str(filled), "stats")
    assert re.search(r"^file       \S+ \S+ on disk \(\d+ pages of 4096 B, 0 free\)$", text, re.M)
    assert re.search(r"^by table   nodes \S+ \S+ \(\+\S+ \S+ indexes\), ", text, re.M)


def test_stats_without_dbstat_gives_page_counts(
    filled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Store.query

    def no_dbstat(self: Store, sql: str, params: Any = ()) -> Any:
        if "dbstat" in sql:
            raise sqlite3.OperationalError("no such table: dbstat")
        return real(self, sql, params)

    monkeypatch.setattr(Store, "query", no_dbstat)
    code, text = run_cli("--db", str(filled), "--json", "stats")
    assert code == 0
    storage = strict_json(text)["storage"]
    assert storage["method"] == "page_count" and storage["tables"] == []
    assert storage["page_count"] > 0
    assert "page counts only" in run_cli("--db", str(filled), "stats")[1]
