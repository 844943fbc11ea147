"""The engine: indexes follow the change log of the database, whoever wrote it.

Two facades on one file stand for two processes (two connections: the same
`PRAGMA data_version` / change-log path as separate processes); one test runs
a real `graphonomous serve` and the CLI side by side.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.embed import VectorIndex
from graphonomous.index import Bm25Index
from graphonomous.store import Store

ROOT = Path(__file__).resolve().parents[1]
FORGOTTEN_AT = "2026-01-01T00:00:00.000Z"


@pytest.fixture
def pair(tmp_path: Path) -> Any:
    db = tmp_path / "g.db"
    with Graphonomous(db) as writer, Graphonomous(db) as reader:
        yield writer, reader


def _similar(graph: Graphonomous, query: str) -> list[str]:
    return [row["id"] for row in graph.similarity_search(query, 5)["results"]]


def _keyword(graph: Graphonomous, query: str) -> list[str]:
    return [doc for doc, _ in graph.text_index().search(query, 5)]


def _retrieved(graph: Graphonomous, query: str) -> list[str]:
    return [row["node_id"] for row in graph.retrieve_context(query, limit=5)["results"]]


def test_other_connection_writes_reach_every_read_path(pair: Any) -> None:
    writer, reader = pair
    for i, filler in enumerate(["morning coffee", "garden hose", "bicycle chain", "old map"]):
        writer.store_node(filler, node_id=f"f{i}")  # BM25 needs a few documents
    writer.store_node("the boiler pressure gauge reads high", node_id="boiler")
    for read in (_similar, _keyword, _retrieved):  # loads every index first
        assert read(reader, "boiler pressure gauge")[0] == "boiler"
    writer.store_node("the kettle whistles at the boil", node_id="kettle")
    assert "kettle" in _similar(reader, "kettle whistles")
    assert "kettle" in _keyword(reader, "kettle whistles")
    assert "kettle" in _retrieved(reader, "kettle whistles")
    writer.forget_node("kettle")  # soft
    for read in (_similar, _keyword, _retrieved):
        assert "kettle" not in read(reader, "kettle whistles")
    writer.forget_node("boiler", mode="hard")
    for read in (_similar, _keyword, _retrieved):
        assert "boiler" not in read(reader, "boiler pressure gauge")


def test_erase_by_another_connection_leaves_no_stale_id(pair: Any) -> None:
    writer, reader = pair
    for i in range(12):
        writer.store_node(f"filler note number {i}", node_id=f"f{i}")
    for i in range(5):
        writer.store_node(f"valve {i} sticks when cold", node_id=f"v{i}")
    assert len(_similar(reader, "valve sticks")) == 5
    assert len(_keyword(reader, "valve sticks")) == 5
    result = writer.gdpr_erase("v2")
    assert result["residual"] == []
    assert "v2" not in _similar(reader, "valve sticks")
    assert "v2" not in _keyword(reader, "valve sticks")
    assert "v2" not in _retrieved(reader, "valve sticks")
    assert reader.store.query("SELECT count(*) FROM node_changes WHERE node_id = 'v2'")[0][0] == 0


def test_raw_sql_and_cascades_are_logged(pair: Any) -> None:
    writer, reader = pair
    for i, filler in enumerate(["morning coffee", "garden hose", "bicycle chain", "old map"]):
        writer.store_node(filler, node_id=f"f{i}")
    writer.store_node("alpha pump", node_id="a")
    writer.store_node("beta pump", node_id="b")
    assert sorted(_keyword(reader, "pump")) == ["a", "b"]
    with writer.store.transaction():
        writer.store.execute("DELETE FROM nodes WHERE id = ?", ("a",))
        writer.store.execute("UPDATE nodes SET content = 'beta fan' WHERE id = 'b'")
    assert _keyword(reader, "pump") == []
    assert _keyword(reader, "fan") == ["b"]
    assert "a" not in reader.vector_index()
    assert "b" in reader.vector_index()  # the index holds what is stored


def test_rollback_changes_no_index(tmp_path: Path) -> None:
    with Graphonomous(tmp_path / "g.db") as graph:
        graph.store_node("kept", node_id="kept")
        index, text = graph.vector_index(), graph.text_index()
        with pytest.raises(RuntimeError), graph.engine.write() as store:
            store.update_node("kept", forgotten_at=FORGOTTEN_AT)
            raise RuntimeError("undo")
        assert "kept" in graph.vector_index() and "kept" in graph.text_index()
        assert graph.vector_index() is index and graph.text_index() is text


def test_nothing_changed_means_no_reread(pair: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    writer, reader = pair
    writer.store_node("one", "episodic", node_id="one")
    reader.vector_index(), reader.text_index()
    reads: list[int] = []
    original = Store.index_rows

    def counting(self: Store, node_ids: Any, model: str) -> Any:
        reads.append(len(node_ids))
        return original(self, node_ids, model)

    monkeypatch.setattr(Store, "index_rows", counting)
    for _ in range(3):
        reader.vector_index(), reader.text_index()
    assert reads == []
    writer.store_node("two", "episodic", node_id="two")  # an episode: the writer searches nothing
    reader.text_index()
    assert reads == [1]  # only the changed node is read again


def test_saved_indexes_load_without_rebuilding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "g.db"
    with Graphonomous(db) as graph:
        graph.apply_batch(
            [{"op": "add_node", "node": {"id": f"n{i}", "content": f"note {i}"}} for i in range(40)]
        )
        expected = graph.retrieve_context("note 7", limit=5)["results"]
        assert graph.engine.save_indexes()
    with Graphonomous(db) as graph:
        graph.store_node("note seven extra", node_id="late")  # after the save
    calls: list[str] = []
    monkeypatch.setattr(Bm25Index, "add_many", lambda self, docs: calls.append("bm25") or None)
    monkeypatch.setattr(
        VectorIndex, "bulk_load", lambda self, items: calls.append("vectors") or None
    )
    with Graphonomous(db) as graph:
        assert "late" in graph.vector_index() and "late" in graph.text_index()
        assert len(graph.vector_index()) == 41 and len(graph.text_index()) == 41
        again = graph.retrieve_context("note 7", limit=5)["results"]
    assert calls == []
    assert [r["node_id"] for r in again if r["node_id"] != "late"][:3] == [
        r["node_id"] for r in expected
    ][:3]


def test_index_dumps_round_trip() -> None:
    text = Bm25Index()
    text.add_many([("a", "red pump valve"), ("b", "blue pump"), ("c", "green")])
    text.remove("c")
    loaded = Bm25Index.load(text.dump())
    assert loaded is not None and len(loaded) == 2
    assert loaded.search("pump valve", 5) == text.search("pump valve", 5)
    loaded.add("d", "pump pump")
    text.add("d", "pump pump")
    assert loaded.search("pump", 5) == text.search("pump", 5)
    assert Bm25Index.load(b"garbage") is None
    for backend in ("pure", "numpy"):
        try:
            vectors = VectorIndex(4, backend=backend)
        except ImportError:
            continue
        vectors.bulk_load([("x", [1.0, 0.0, 0.0, 0.0]), ("y", [0.5, 0.5, 0.0, 0.0])])
        vectors.remove("x")
        vectors.add("z", [0.0, 0.0, 1.0, 1.0])
        for target in ("pure", "numpy"):
            try:
                copy = VectorIndex.load(vectors.dump(), 4, backend=target)
            except ImportError:
                continue
            assert copy is not None
            query = [0.3, 0.2, 0.9, 0.1]
            assert copy.search(query, 3) == vectors.search(query, 3)
        assert VectorIndex.load(vectors.dump(), 8) is None


def test_reads_answer_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    with Graphonomous(db) as graph:
        for i in range(6):
            graph.store_node(f"pump seal note {i}", node_id=f"p{i}")
        graph.retrieve_context("pump seal", limit=3)
        counts = {n["id"]: n["access_count"] for n in graph.list_nodes()["nodes"]}
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # a long batch of another process
        try:
            result = graph.retrieve_context("pump seal", limit=3)  # counters skipped
            assert result["results"]
            assert graph.store.try_write(lambda: None) is False
        finally:
            other.execute("ROLLBACK")
            other.close()
        after = {n["id"]: n["access_count"] for n in graph.list_nodes()["nodes"]}
        assert after == counts
        graph.retrieve_context("pump seal", limit=3)
        assert (
            sum(n["access_count"] for n in graph.list_nodes()["nodes"]) == sum(counts.values()) + 3
        )


# -- a real server and the CLI ----------------------------------------------------------


def _cli(db: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "graphonomous", *args, "--db", str(db), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


class _Server:
    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphonomous",
                "serve",
                "--db",
                str(db),
                "--surface",
                "all",
                "--no-idle-consolidation",
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert "error" not in reply, reply
        return reply

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        assert not result.get("isError"), result
        content: dict[str, Any] = result["structuredContent"]
        return content

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        return self.proc.stderr.read()


def test_running_server_sees_cli_writes_forgets_and_erases(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    _cli(db, "init")
    server = _Server(db)
    try:

        def seen(query: str) -> dict[str, set[str]]:
            similar = server.call("query_graph", operation="similarity_search", query=query)
            context = server.call("retrieve_context", query=query, limit=5)
            keyword = server.call("retrieve_context", query=query, limit=5, effort=0)
            return {
                "similarity": {row["id"] for row in similar["results"]},
                "context": {row["node_id"] for row in context["results"]},
                "keyword": {row["node_id"] for row in keyword["results"]},
            }

        assert all(not ids for ids in seen("heat exchanger fouling").values())
        _cli(db, "node", "add", "heat exchanger fouling lowers efficiency", "--id", "hx")
        _cli(db, "node", "add", "heat exchanger fouling needs cleaning", "--id", "hx2")
        assert all({"hx", "hx2"} <= ids for ids in seen("heat exchanger fouling").values())
        _cli(db, "forget", "hx")  # soft
        assert all("hx" not in ids and "hx2" in ids for ids in seen("exchanger").values())
        _cli(db, "forget", "hx2", "--mode", "hard")
        assert all(not ids for ids in seen("heat exchanger fouling").values())
        _cli(db, "node", "add", "gasket leak at the flange", "--id", "gasket")
        assert all("gasket" in ids for ids in seen("gasket leak flange").values())
        _cli(db, "erase", "gasket")
        assert all(not ids for ids in seen("gasket leak flange").values())
    finally:
        err = server.close()
    assert "locked" not in err and "Traceback" not in err, err


def test_the_sqlite_store_implements_the_storage_protocol() -> None:
    from graphonomous.store import GraphStorage

    with Store(":memory:") as store:
        typed: GraphStorage = store  # mypy checks the structure; isinstance the names
        assert isinstance(typed, GraphStorage)


def test_a_pruned_log_makes_a_lagging_process_reload(
    pair: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = pair
    for i in range(6):
        writer.store_node(f"note {i} on gears", node_id=f"g{i}")
    assert "g0" in reader.text_index()
    for i in range(6, 12):
        writer.store_node(f"note {i} on gears", node_id=f"g{i}")
    writer.forget_node("g0", mode="hard")
    with writer.lock, writer.store.transaction():
        assert writer.store.prune_change_log(keep=2) > 0
    assert "g0" not in reader.text_index() and "g11" in reader.text_index()
    assert "g0" not in reader.vector_index() and len(reader.vector_index()) == 11
