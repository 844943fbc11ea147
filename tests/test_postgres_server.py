"""Server mode on a real PostgreSQL: the CLI on a URL, top-5 parity with SQLite, GDPR erase
down to the data files, reconnect, refusal of a newer schema, several HTTP servers on one
database (no lost writes, read-your-writes, a SIGKILLed server loses nothing acknowledged).

Skips without the PostgreSQL test packages; fails instead when
GRAPHONOMOUS_REQUIRE_POSTGRES=1 (tests/pg_support.py).
"""

from __future__ import annotations

import io
import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pg_support
import pytest
from pg_support import Cluster

from graphonomous import Graphonomous, StoreError
from graphonomous.cli import main
from graphonomous.mcp.http import SESSION_HEADER

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import mcp_http_client
from mcp_http_client import McpClient, start_server

# The helper's copy of the header name is the server's.
assert mcp_http_client.SESSION_HEADER == SESSION_HEADER

# The session cluster and per-test database fixtures of tests/pg_support.py.
globals().update(pg_cluster=pg_support.pg_cluster, pg_url=pg_support.pg_url)

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [
    "The hydraulic valve lost pressure after the weekend shutdown",
    "Seal kits are kept in cabinet 4 of room B",
    "Quarterly revenue grew in Europe while Asia stayed flat",
    "Bananas are rich in potassium and vitamin B6",
    "The pump on line 3 was replaced in March after cavitation damage",
    "Valve V-12 needs a new seal every six months",
    "Pressure sensors drift when the room is above 40 degrees",
    "The night shift logs every alarm in the red binder",
]
QUERIES = ["valve pressure", "seal kit cabinet", "pump replaced", "revenue Europe", "alarm log"]


def _fill(graph: Graphonomous) -> list[str]:
    ids = [graph.store_node(text)["node"]["id"] for text in TEXTS]
    graph.store_edge(ids[0], ids[5], "related")
    graph.store_edge(ids[4], ids[0], "causal")
    return ids


def _top5(graph: Graphonomous, query: str) -> list[str]:
    results = graph.retrieve_context(query, limit=5)["results"]
    return [str(result["content"]) for result in results]


def test_same_top5_on_both_backends(pg_url: str, tmp_path: Path) -> None:
    with Graphonomous(pg_url) as pg, Graphonomous(tmp_path / "g.db") as lite:
        _fill(pg)
        _fill(lite)
        for query in QUERIES:
            assert _top5(pg, query) == _top5(lite, query), query
        hits = [
            [
                (r["content"], r["similarity"])
                for r in g.similarity_search("valve", limit=5)["results"]
            ]
            for g in (pg, lite)
        ]
        assert hits[0] == hits[1]


def _cli(*argv: str) -> Any:
    out = io.StringIO()
    assert main(list(argv), out=out) == 0, out.getvalue()
    return json.loads(out.getvalue())


def test_cli_commands_take_a_postgres_url(pg_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "valves.md").write_text("# Valves\n\nValve V-12 needs a new seal every six months.\n")
    _cli("--db", pg_url, "--json", "scan", str(docs))
    recalled = _cli("--db", pg_url, "--json", "recall", "seal valve")
    assert recalled["results"] and "V-12" in recalled["results"][0]["content"]
    assert _cli("--db", pg_url, "--json", "stats")["node_count"] >= 1
    _cli("--db", pg_url, "--json", "consolidate")


def test_storage_env_selects_postgres(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHONOMOUS_STORAGE", "postgres")
    monkeypatch.setenv("DATABASE_URL", pg_url)
    with Graphonomous() as graph:
        assert graph.db_path == pg_url and type(graph.store).__name__ == "PostgresStore"
    monkeypatch.setenv("DATABASE_URL", "")
    with pytest.raises(StoreError, match="DATABASE_URL"):
        Graphonomous()


def _files_holding(root: Path, needle: bytes) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            try:
                if needle in path.read_bytes():
                    found.append(str(path.relative_to(root)))
            except OSError:
                continue
    return found


def test_gdpr_erase_leaves_no_trace_in_rows_or_data_files(pg_cluster: Cluster) -> None:
    url = pg_cluster.new_database()
    marker = "Zyxomarker-4471 lives at 12 Quillon Street"
    with Graphonomous(url) as graph:
        _fill(graph)
        victim = graph.store_node(marker)["node"]["id"]
        # Dead tuples: the content was updated once, so older row versions exist too.
        graph.store.update_node(victim, content=marker + " (moved)")
        pg_cluster.sql(pg_cluster.base_url, "CHECKPOINT")
        assert _files_holding(pg_cluster.data_dir, b"Zyxomarker-4471")  # the test can fail
        report = graph.gdpr_erase(victim, reason="art. 17 request")
        assert report["erased"] is True
        assert report["status"] == "scrubbed", report
    assert _files_holding(pg_cluster.data_dir, b"Zyxomarker-4471") == []
    # The id itself stays only where it is kept by design: the audit log's erase entry.
    rows = pg_cluster.sql(url, f"SELECT action FROM audit_log WHERE subject_id = '{victim}'")
    assert rows and pg_cluster.sql(url, f"SELECT count(*) FROM nodes WHERE id = '{victim}'") == [
        (0,)
    ]


def test_connection_loss_reconnects(pg_url: str, pg_cluster: Cluster) -> None:
    with Graphonomous(pg_url) as graph:
        first = graph.store_node("before the outage")["node"]["id"]
        database = urlsplit(pg_url).path.lstrip("/")
        killed = pg_cluster.sql(
            pg_cluster.base_url,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            f"WHERE datname = '{database}' AND pid <> pg_backend_pid()",
        )
        assert killed[0][0] >= 1  # the graph's session really went
        second = graph.store_node("after the outage")["node"]["id"]
        assert graph.get_node(first)["node"]["content"] == "before the outage"
        assert graph.get_node(second)["node"]["content"] == "after the outage"


def test_newer_schema_is_refused_untouched(pg_url: str, pg_cluster: Cluster) -> None:
    Graphonomous(pg_url).close()
    pg_cluster.sql(pg_url, "INSERT INTO graphonomous_schema (version) VALUES (99)")
    before = pg_cluster.sql(pg_url, "SELECT count(*) FROM nodes")
    with pytest.raises(StoreError, match="newer than this graphonomous"):
        Graphonomous(pg_url)
    assert pg_cluster.sql(pg_url, "SELECT max(version) FROM graphonomous_schema") == [(99,)]
    assert pg_cluster.sql(pg_url, "SELECT count(*) FROM nodes") == before


# -- several HTTP servers on one database ---------------------------------------------------


def test_three_servers_eight_writers_one_database(pg_url: str) -> None:
    Graphonomous(pg_url).close()  # migrate once before the servers race to
    servers = [start_server(pg_url) for _ in range(3)]
    acknowledged: list[tuple[str, str]] = []
    failures: list[str] = []
    guard = threading.Lock()
    per_writer = 25

    def writer(number: int) -> None:
        port = servers[number % 3][1]
        try:
            client = McpClient(port)
            # Read on another server that stays up (servers[2] is the one killed): only
            # the victim's own writers may fail, however slow the machine is.
            other = McpClient(servers[{0: 1, 1: 0, 2: 0}[number % 3]][1])
            for index in range(per_writer):
                content = f"writer {number} note {index} about valve {number * 100 + index}"
                node = client.tool("store_node", {"content": content})["node"]
                # Read-your-writes on ANOTHER server, at once.
                seen = other.tool("query_graph", {"operation": "get_node", "node_id": node["id"]})[
                    "node"
                ]
                assert seen["content"] == content
                with guard:
                    acknowledged.append((node["id"], content))
        except Exception as exc:  # the victim's writers fail by design
            if number % 3 != 2:
                failures.append(f"writer {number}: {exc!r}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    try:
        for thread in threads:
            thread.start()
        time.sleep(3.0)
        victim = servers[2][0]
        victim.send_signal(signal.SIGKILL)  # mid-run: its writers stop, nothing it acked may go
        victim.wait(10)
        for thread in threads:
            thread.join(300)
        assert not failures, failures
        with Graphonomous(pg_url) as graph:
            for node_id, content in acknowledged:
                assert graph.get_node(node_id)["node"]["content"] == content
            # Writers on the two live servers all finished: 0 lost writes.
            live = [n for n in range(8) if n % 3 != 2]
            assert (
                len([a for a in acknowledged if int(a[1].split()[1]) in live])
                == len(live) * per_writer
            )
            assert graph.graph_stats()["node_count"] >= len(acknowledged)
        # A fresh read through a surviving server sees every acknowledged write.
        client = McpClient(servers[0][1])
        stats = client.tool("graph_stats", {})
        assert stats["node_count"] >= len(acknowledged)
    finally:
        for process, _ in servers:
            if process.poll() is None:
                process.terminate()
                process.wait(20)


# -- GDPR erase: what the cluster's settings keep -------------------------------------------


def _set_system(cluster: Cluster, setting: str, value: str | None) -> None:
    """ALTER SYSTEM SET (or RESET when `value` is None), reload, and wait until a new
    session sees it (the postmaster applies a reload asynchronously)."""
    if value is None:
        cluster.sql(cluster.base_url, f"ALTER SYSTEM RESET {setting}")
    else:
        cluster.sql(cluster.base_url, f"ALTER SYSTEM SET {setting} = '{value}'")
    cluster.sql(cluster.base_url, "SELECT pg_reload_conf()")
    wanted = cluster.sql(
        cluster.base_url, f"SELECT boot_val FROM pg_settings WHERE name = '{setting}'"
    )
    target = wanted[0][0] if value is None else value
    while cluster.sql(cluster.base_url, f"SHOW {setting}")[0][0] != target:
        time.sleep(0.05)


def _setting_causes(report: dict[str, Any]) -> dict[str, str]:
    return {c["setting"]: c["value"] for c in report["causes"] if c["cause"] == "setting"}


def test_gdpr_erase_on_default_wal_settings_is_pending_and_says_why(pg_cluster: Cluster) -> None:
    """A cluster with the default wal_recycle = on keeps the erased rows in a recycled WAL
    segment: the erase is pending, names the setting and the fix; --finish completes it once
    the setting is off (exit 1 before)."""
    url = pg_cluster.new_database()
    _set_system(pg_cluster, "wal_recycle", None)  # the default: on
    try:
        with Graphonomous(url) as graph:
            victim = graph.store_node("Zyxomarker-5512 lives at 3 Quillon Street")["node"]["id"]
            report = graph.gdpr_erase(victim)
            assert report["status"] == "pending", report
            assert _setting_causes(report) == {"wal_recycle": "on"}
            assert "wal_recycle = off" in report["file"]["advice"]
            finished = graph.gdpr_finish()  # nothing to gain: no VACUUM FULL again
            assert finished["status"] == "pending" and finished["file"]["vacuumed"] is False
            assert _setting_causes(finished) == {"wal_recycle": "on"}
        out = io.StringIO()
        assert main(["--db", url, "erase", "--finish"], out) == 1
        assert "wal_recycle = on" in out.getvalue()
    finally:
        _set_system(pg_cluster, "wal_recycle", "off")
    out = io.StringIO()
    assert main(["--db", url, "erase", "--finish", "--json"], out) == 0, out.getvalue()
    assert json.loads(out.getvalue())["status"] == "scrubbed"


def test_gdpr_erase_names_wal_keep_size_and_replication_slots(pg_cluster: Cluster) -> None:
    url = pg_cluster.new_database()
    _set_system(pg_cluster, "wal_keep_size", "64MB")
    pg_cluster.sql(
        pg_cluster.base_url, "SELECT pg_create_physical_replication_slot('gx_erase_test', true)"
    )
    try:
        with Graphonomous(url) as graph:
            victim = graph.store_node("Zyxomarker-6613 lives at 4 Quillon Street")["node"]["id"]
            report = graph.gdpr_erase(victim)
            assert report["status"] == "pending"
            causes = _setting_causes(report)
            assert causes["replication_slots"] == "gx_erase_test"
            assert causes["wal_keep_size"] == "64"  # pg_settings' unit: MB
            assert "pg_drop_replication_slot" in json.dumps(report["causes"])
    finally:
        pg_cluster.sql(pg_cluster.base_url, "SELECT pg_drop_replication_slot('gx_erase_test')")
        _set_system(pg_cluster, "wal_keep_size", "0")
    with Graphonomous(url) as graph:
        assert graph.gdpr_finish()["status"] == "scrubbed"


def test_a_stale_index_save_after_an_erase_is_dropped(
    pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generation check of the derived-index save, on PostgreSQL: A loads its indexes,
    B erases, A saves → no saved copy names the erased node."""
    url = pg_cluster.new_database()
    with Graphonomous(url) as a, Graphonomous(url) as b:
        victim = a.store_node("Zyxomarker-7714 lives at 5 Quillon Street")["node"]["id"]
        a.store_node("The plant runs three shifts a day")
        a.engine.text_index()
        a.engine.vector_index()
        assert a.engine.save_indexes() is True  # the check passes a current copy
        refresh = a.engine.refresh

        def erase_after_refresh() -> None:
            refresh()
            b.gdpr_erase(victim)

        monkeypatch.setattr(a.engine, "refresh", erase_after_refresh)
        saved = a.engine.save_indexes()
        monkeypatch.undo()
        rows = pg_cluster.sql(url, "SELECT data FROM derived_indexes")
        assert not any(victim.encode() in bytes(row[0]) for row in rows)
        assert b"zyxomarker" not in b"".join(bytes(row[0]) for row in rows)
        assert saved is False
