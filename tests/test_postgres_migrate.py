"""`graphonomous migrate SRC DST` between SQLite and a real PostgreSQL: a 10K-node graph
round-trips SQLite → PostgreSQL → SQLite with identical per-table checksums; re-running
is a no-op; a destination with other rows is refused unless --replace; bad input exits 2
naming the argument.  Also: the CLI `erase` on a PostgreSQL URL.

Skips without the PostgreSQL test packages; fails instead when
GRAPHONOMOUS_REQUIRE_POSTGRES=1 (tests/pg_support.py).
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pg_support
import pytest
from pg_support import Cluster

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.store.migrate import MigrateError, migrate

globals().update(pg_cluster=pg_support.pg_cluster, pg_url=pg_support.pg_url)

NODES = 10_000


def _build(path: Path, nodes: int) -> None:
    """A graph touching every table: nodes with embeddings, edges, a merge, a revision,
    goals, an outcome, the forgetting config, a GDPR erase (audit log)."""
    with Graphonomous(path) as graph:
        graph.apply_batch(
            [
                {
                    "op": "add_node",
                    "node": {
                        "id": f"n{i:05d}",
                        "content": f"Fact {i}: pump {i % 97} on line {i % 13} lost pressure",
                        "confidence": 0.25 + (i % 50) / 100,
                        "metadata": {"batch": i % 7, "ünïcode": "ß"},
                    },
                }
                for i in range(nodes)
            ]
            + [
                {
                    "op": "add_edge",
                    "edge": {
                        "source_id": f"n{i:05d}",
                        "target_id": f"n{(i * 7 + 1) % nodes:05d}",
                        "relationship": "related",
                    },
                }
                for i in range(0, nodes, 3)
            ]
        )
        graph.apply_batch([{"op": "merge_nodes", "keep": "n00000", "merge": ["n00001"]}])
        with graph.store.transaction():
            graph.store.execute(
                "INSERT INTO revisions (id, operation, old_node_id, new_node_id, reason, "
                "details, created_at) VALUES ('rev-1', 'supersede', 'n00001', 'n00000', "
                "'merged by hand', '{\"score\": 0.5}', '2026-01-02T03:04:05Z')"
            )
        goal = graph.manage_goal("create", title="Keep the pumps running")
        assert goal
        graph.learn_from_outcome("act-1", "success", 0.9, ["n00002", "n00003"])
        graph.gdpr_erase("n00004", "a data subject asked")
        graph.forgetting_config(max_nodes=50_000)


def _cli(*argv: str, code: int = 0) -> tuple[int, str]:
    out = io.StringIO()
    got = main(list(argv), out=out)
    assert got == code, out.getvalue()
    return got, out.getvalue()


def _tables(report: dict[str, Any]) -> dict[str, tuple[int, str]]:
    return {t["table"]: (t["rows"], t["checksum"]) for t in report["tables"]}


def test_round_trip_10k_nodes_identical_checksums(pg_cluster: Cluster, tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    _build(source, NODES)
    url = pg_cluster.new_database(empty=True)
    _, text = _cli("--json", "migrate", str(source), url)
    there = json.loads(text)
    assert there["status"] == "copied" and there["verified"] is True
    rows = _tables(there)
    with sqlite3.connect(source) as conn:
        for table in ("nodes", "node_embeddings", "edges", "audit_log"):
            assert rows[table][0] == conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    assert rows["nodes"][0] >= NODES - 1
    for table in ("edges", "revisions", "audit_log", "goals", "outcomes", "forgetting_config"):
        assert rows[table][0] > 0, table
    back = tmp_path / "back.db"
    _, text = _cli("--json", "migrate", url, str(back))
    returned = json.loads(text)
    assert returned["status"] == "copied"
    assert _tables(returned) == rows and returned["counters"] == there["counters"]
    # The copy is a working graph on each backend: same top-5 for a query.
    for where in (url, str(back)):
        with Graphonomous(where) as graph:
            top = graph.retrieve_context("pump 5 line 5 pressure", limit=5)["results"]
            assert [r["node_id"] for r in top] == _top_ids(source)


def _top_ids(path: Path) -> list[str]:
    with Graphonomous(path) as graph:
        results = graph.retrieve_context("pump 5 line 5 pressure", limit=5)["results"]
        return [str(r["node_id"]) for r in results]


def test_rerun_is_a_no_op_and_other_content_is_refused(pg_cluster: Cluster, tmp_path: Path) -> None:
    source = tmp_path / "s.db"
    _build(source, 200)
    url = pg_cluster.new_database()
    first = migrate(str(source), url)
    assert first["status"] == "copied" and first["changed"] is True
    version = pg_cluster.sql(url, "SELECT v FROM graphonomous_data_version")
    again = migrate(str(source), url)
    assert again["status"] == "up_to_date" and again["changed"] is False
    assert again["tables"] == first["tables"]
    assert pg_cluster.sql(url, "SELECT v FROM graphonomous_data_version") == version
    _, text = _cli("migrate", str(source), url)
    assert "already up to date, nothing changed" in text
    with Graphonomous(source) as graph:
        graph.store_node("one more fact after the copy")
    _, _ = _cli("migrate", str(source), url, code=2)
    with pytest.raises(MigrateError, match=r"^DST: .*--replace"):
        migrate(str(source), url)
    replaced = migrate(str(source), url, replace=True)
    assert replaced["status"] == "replaced"
    assert migrate(str(source), url)["status"] == "up_to_date"


def test_bad_arguments_exit_2_naming_them(pg_url: str, tmp_path: Path, capsys: Any) -> None:
    missing = tmp_path / "missing.db"
    _cli("migrate", str(missing), pg_url, code=2)
    assert "migrate SRC:" in capsys.readouterr().err
    (tmp_path / "not.db").write_text("not a database")
    _cli("migrate", pg_url, str(tmp_path / "not.db"), code=2)
    assert "migrate DST:" in capsys.readouterr().err
    _cli("migrate", pg_url, pg_url, code=2)
    assert "DST" in capsys.readouterr().err
    _cli("migrate", pg_url, code=2)
    assert not missing.exists()


def test_cli_erase_on_a_postgres_url(pg_url: str) -> None:
    marker = "Qorvex-9917 lives at 3 Brambling Lane"
    with Graphonomous(pg_url) as graph:
        node_id = graph.store_node(marker)["node"]["id"]
        keep = graph.store_node("The valve needs a new seal")["node"]["id"]
    _, text = _cli("--db", pg_url, "--json", "erase", node_id, "--reason", "request 12")
    result = json.loads(text)
    assert result["status"] == "scrubbed" and node_id in result["erased_ids"]
    _, text = _cli("--db", pg_url, "erase", node_id)
    assert "was erased before" in text
    with Graphonomous(pg_url) as graph:
        assert graph.store.get_node(node_id) is None
        assert graph.store.get_node(keep) is not None
    _cli("--db", pg_url, "erase", code=2)
