"""The SQLite store: schema, migrations, CRUD, queries, transactions."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import pytest

from graphonomous.model import NotFoundError, ValidationError
from graphonomous.records import edge_from_fields, node_from_fields
from graphonomous.store import SCHEMA_VERSION, Store, StoreError
from graphonomous.store.schema import MIGRATIONS

NOW = "2026-01-01T00:00:00.000Z"


def add(store: Store, node_id: str, content: str = "text", **fields: object) -> None:
    store.insert_node(node_from_fields({"id": node_id, "content": content, **fields}, now=NOW))


def link(store: Store, source: str, target: str, relationship: str = "causal") -> str:
    edge = edge_from_fields(
        {"source_id": source, "target_id": target, "relationship": relationship}, now=NOW
    )
    store.insert_edge(edge)
    return edge.id


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store(tmp_path / "g.db") as opened:
        yield opened


def test_fresh_file_is_migrated_to_latest(store: Store) -> None:
    assert store.schema_version == SCHEMA_VERSION
    assert store.integrity_check() == "ok"
    mode = store.scalar("PRAGMA journal_mode")
    assert mode == "wal"
    assert store.scalar("PRAGMA foreign_keys") == 1


def test_memory_database_works() -> None:
    with Store(":memory:") as mem:
        add(mem, "a")
        assert mem.count_nodes() == 1


def test_older_file_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO nodes (id, type, content, created_at, updated_at) "
        "VALUES ('n1', 'semantic', 'kept', 't', 't')"
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Store(path) as upgraded:
        assert upgraded.schema_version == SCHEMA_VERSION
        node = upgraded.require_node("n1")
        assert (node.node_type, node.content, node.q_value, node.agent_id) == (
            "semantic",
            "kept",
            0.5,
            "default",
        )


def test_newer_schema_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer"):
        Store(path)
    assert path.read_bytes() == before


def test_file_that_is_not_sqlite_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"this is not a database, just some text\n" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a SQLite database"):
        Store(path)
    assert path.read_bytes() == before


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a graphonomous"):
        Store(path)


def test_directory_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="directory"):
        Store(tmp_path)


def test_node_round_trip_keeps_every_field(store: Store) -> None:
    node = node_from_fields(
        {
            "content": "Error E-47 indicates hydraulic pressure loss",
            "node_type": "semantic",
            "metadata": {"tags": ["hydraulics"], "n": 1},
            "source": "manual.pdf",
            "confidence": 0.8,
            "timescale": "slow",
            "pinned": True,
        },
        now=NOW,
    )
    store.insert_node(node)
    assert store.get_node(node.id) == node


def test_duplicate_node_id_is_a_validation_error(store: Store) -> None:
    add(store, "a")
    with pytest.raises(ValidationError) as info:
        add(store, "a")
    assert info.value.field == "id"


def test_edge_to_missing_node_is_rejected(store: Store) -> None:
    add(store, "a")
    with pytest.raises(ValidationError, match="existing nodes"):
        link(store, "a", "ghost")
    assert store.count_edges() == 0


def test_duplicate_edge_triple_is_rejected(store: Store) -> None:
    add(store, "a")
    add(store, "b")
    link(store, "a", "b", "causal")
    link(store, "a", "b", "supports")  # another relationship is another edge
    with pytest.raises(ValidationError, match="already exists"):
        link(store, "a", "b", "causal")


def test_delete_node_cascades_to_edges_and_embedding(store: Store) -> None:
    for node_id in "abc":
        add(store, node_id)
    link(store, "a", "b")
    link(store, "c", "a")
    link(store, "b", "c")
    store.set_embedding("a", b"\x00" * 8, "m")
    assert store.delete_node("a") == 2
    assert store.count_edges() == 1
    assert store.get_embedding("a") is None
    with pytest.raises(NotFoundError):
        store.delete_node("a")


def test_list_filters(store: Store) -> None:
    add(store, "e1", node_type="episodic", confidence=0.2)
    add(store, "s1", node_type="semantic", confidence=0.9, timescale="slow")
    add(store, "s2", node_type="semantic", confidence=0.5, agent_id="bot")
    store.update_node("s2", forgotten_at="2026-01-01T00:00:00.000Z")
    assert [n.id for n in store.list_nodes(node_type="semantic")] == ["s1"]
    assert [n.id for n in store.list_nodes(forgotten=None, order="id")] == ["e1", "s1", "s2"]
    assert [n.id for n in store.list_nodes(forgotten=True)] == ["s2"]
    assert [n.id for n in store.list_nodes(min_confidence=0.3, forgotten=None, order="id")] == [
        "s1",
        "s2",
    ]
    assert [n.id for n in store.list_nodes(max_confidence=0.3)] == ["e1"]
    assert [n.id for n in store.list_nodes(timescale="slow")] == ["s1"]
    assert [n.id for n in store.list_nodes(agent_id="bot", forgotten=None)] == ["s2"]
    assert store.count_nodes() == 2


def test_edges_of_each_direction(store: Store) -> None:
    for node_id in "abc":
        add(store, node_id)
    out_id = link(store, "a", "b")
    in_id = link(store, "c", "a", "supports")
    assert [e.id for e in store.edges_of("a", "out")] == [out_id]
    assert [e.id for e in store.edges_of("a", "in")] == [in_id]
    assert {e.id for e in store.edges_of("a", "both")} == {out_id, in_id}
    assert [e.id for e in store.edges_of("a", "both", "supports")] == [in_id]
    with pytest.raises(ValidationError):
        store.edges_of("a", "sideways")


def test_list_edges_between_beyond_the_variable_limit(store: Store) -> None:
    ids = [f"n{i:05d}" for i in range(2500)]
    with store.transaction():
        for node_id in ids:
            add(store, node_id)
        for left, right in itertools.pairwise(ids):
            link(store, left, right)
    chosen = ids[:2000]
    between = store.list_edges_between(chosen)
    assert len(between) == 1999
    assert all(e.source_id in chosen and e.target_id in chosen for e in between)
    assert [e.id for e in between] == sorted(e.id for e in between)
    assert store.list_edges_between([]) == []
    assert len(store.edges_touching(["n00010"])) == 2


def test_transaction_rolls_back_everything(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        add(store, "a")
        add(store, "b")
        raise RuntimeError("boom")
    assert store.count_nodes() == 0


def test_nested_transaction_failure_keeps_outer_work(store: Store) -> None:
    with store.transaction():
        add(store, "a")
        with pytest.raises(ValidationError), store.transaction():
            add(store, "b")
            add(store, "a")  # duplicate: inner savepoint rolls back "b" too
    assert [n.id for n in store.list_nodes()] == ["a"]


def test_audit_log_is_append_only_record(store: Store) -> None:
    store.audit("2026-01-01T00:00:00.000Z", "gdpr_erase", "n1", {"edges_removed": 2})
    assert store.audit_entries("n1") == [
        {
            "seq": 1,
            "at": "2026-01-01T00:00:00.000Z",
            "action": "gdpr_erase",
            "subject_id": "n1",
            "details": {"edges_removed": 2},
        }
    ]


def test_after_commit_runs_only_for_committed_work(store: Store) -> None:
    ran: list[str] = []
    store.after_commit(lambda: ran.append("immediate"))  # no transaction: runs now
    with store.transaction():
        store.after_commit(lambda: ran.append("outer"))
        with pytest.raises(RuntimeError), store.transaction():
            store.after_commit(lambda: ran.append("undone"))
            raise RuntimeError("inner scope rolls back")
        with store.transaction():
            store.after_commit(lambda: ran.append("inner kept"))
        assert ran == ["immediate"]  # nothing before the outermost commit
    assert ran == ["immediate", "outer", "inner kept"]
    with pytest.raises(RuntimeError), store.transaction():
        store.after_commit(lambda: ran.append("rolled back"))
        raise RuntimeError("whole transaction rolls back")
    assert ran == ["immediate", "outer", "inner kept"]
