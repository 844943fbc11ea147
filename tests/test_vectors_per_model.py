"""Vectors per embedding model: switching embedders adds vectors, it never deletes any.

A database holds at most one vector per node and model (migration 8).  A process with
another embedder uses its own vectors when present, else builds the missing ones once
(and says so once), and leaves every other model's vectors, saved vector index and
in-memory index alone; an erase or a delete removes every model's vector of the node.

Each "process" here is a fresh `Graphonomous` on one file (or the CLI's `main`), which
is what an MCP client entry and a CLI with different settings amount to.  Embedder
calls are counted per model by wrapping `HashingEmbedder.embed`.
"""

from __future__ import annotations

import io
import json
import logging
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.embed import HashingEmbedder, VectorIndex, unpack_f32
from graphonomous.engine import core
from graphonomous.store import SCHEMA_VERSION, Store
from graphonomous.store.schema import MIGRATIONS

A = "hashing-384"  # the default embedder
B = "hashing-128"
TEXTS = [
    "the pump seal leaks under high pressure",
    "replace the bearing before it overheats",
    "the valve sticks when the oil is cold",
    "calibrate the flow meter every spring",
    "the compressor hums at night",
]
QUERY = "pump seal pressure"


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Texts embedded per model name (every `HashingEmbedder.embed` call counted)."""
    counts: Counter[str] = Counter()
    original = HashingEmbedder.embed

    def counting(self: HashingEmbedder, texts: Sequence[str]) -> list[list[float]]:
        counts[self.name] += len(texts)
        return original(self, texts)

    monkeypatch.setattr(HashingEmbedder, "embed", counting)
    return counts


def _store(db: Path, texts: Sequence[str], model: str = A, prefix: str = "n") -> None:
    with Graphonomous(db, embedder=model) as graph:
        for i, text in enumerate(texts):
            graph.store_node(text, node_id=f"{prefix}{i}")


def _recall(db: Path, model: str, query: str = QUERY) -> list[str]:
    """One fresh process's recall: the ids found."""
    with Graphonomous(db, embedder=model) as graph:
        found = graph.retrieve_context(query, effort=0)
    return [row["node_id"] for row in found["results"]]


def _vectors(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT node_id, model FROM node_embeddings ORDER BY 1, 2")
        return [(str(r[0]), str(r[1])) for r in rows]


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


# -- a switch keeps what is stored -------------------------------------------------------


def test_a_scan_then_a_recall_with_another_embedder_keeps_both_models(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(TEXTS):
        (folder / f"note{i}.md").write_text(f"# Note {i}\n\n{text}\n", encoding="utf-8")
    db = str(tmp_path / "d.db")
    assert run("--db", db, "scan", str(folder), "--quiet")[0] == 0
    before = json.loads(run("--db", db, "--json", "stats")[1])
    count = before["embedding_count"]
    assert count > 0 and before["embedding_models"] == {A: count}
    code, _ = run("--db", db, "--embedder", B, "recall", QUERY)
    assert code == 0
    after = json.loads(run("--db", db, "--json", "stats")[1])
    assert after["embedder"] == A and after["embedding_count"] == count  # nothing lost
    assert after["embedding_models"] == {A: count, B: count}
    other = json.loads(run("--db", db, "--embedder", B, "--json", "stats")[1])
    assert (other["embedder"], other["embedding_count"]) == (B, count)
    code, text = run("--db", db, "stats")
    assert f"{A} ({count} vectors; also stored: {B} {count})" in text


def test_alternating_embedders_embed_only_the_query_the_second_time_round(
    tmp_path: Path, embedded: Counter[str]
) -> None:
    db = tmp_path / "g.db"
    _store(db, TEXTS)
    first_a = _recall(db, A)
    first_b = _recall(db, B)
    assert first_a[0] == first_b[0] == "n0"
    assert embedded[B] == len(TEXTS) + 1  # B's first recall: every node, then the query
    embedded.clear()
    assert _recall(db, A) == first_a
    assert embedded == Counter({A: 1})  # the query only
    assert _recall(db, B) == first_b
    assert embedded == Counter({A: 1, B: 1})
    assert _vectors(db) == sorted((f"n{i}", m) for i in range(len(TEXTS)) for m in (A, B))


def test_each_model_keeps_its_saved_vector_index(tmp_path: Path) -> None:
    """B's saved copy never replaces A's: A's next process loads its copy, builds nothing."""
    db = tmp_path / "g.db"
    _store(db, TEXTS)
    _recall(db, A)
    _recall(db, B)
    with Store(db) as store:
        names = {(r[0], r[1]) for r in store.query("SELECT name, model FROM derived_indexes")}
    assert {("vectors", A), ("vectors", B)} <= names
    with Graphonomous(db, embedder=A) as graph, pytest.MonkeyPatch.context() as patch:
        patch.setattr(VectorIndex, "bulk_load", _no_build)
        assert graph.retrieve_context(QUERY, effort=0)["results"][0]["node_id"] == "n0"


def _no_build(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("the vector index was built from rows instead of loaded")


def test_two_graphs_with_different_embedders_on_one_file_both_answer(
    tmp_path: Path, embedded: Counter[str]
) -> None:
    db = tmp_path / "g.db"
    with Graphonomous(db, embedder=A) as ga, Graphonomous(db, embedder=B) as gb:
        for i, text in enumerate(TEXTS):
            ga.store_node(text, node_id=f"n{i}")
        assert ga.similarity_search(QUERY, 2)["results"][0]["id"] == "n0"
        assert gb.similarity_search(QUERY, 2)["results"][0]["id"] == "n0"
        gb.store_node("a kettle whistles at the boil", node_id="kettle")  # B's vector only
        embedded.clear()
        for _ in range(2):
            assert ga.similarity_search("kettle whistles", 1)["results"][0]["id"] == "kettle"
            assert gb.similarity_search("kettle whistles", 1)["results"][0]["id"] == "kettle"
            assert ga.similarity_search(QUERY, 1)["results"][0]["id"] == "n0"
        # A embedded the kettle once (its vector was missing) and then only queries;
        # B only queries: neither rebuilt what the other wrote.
        assert embedded == Counter({A: 1 + 4, B: 2})
        stats = ga.graph_stats()
        assert stats["embedding_models"] == {A: len(TEXTS) + 1, B: len(TEXTS) + 1}


def test_another_models_vector_writes_are_not_applied_to_an_engines_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B writing every vector changes nothing A's indexes hold: A's change-log sync applies
    nothing (no re-read, no re-tokenising, no rebuild, no resave)."""
    db = tmp_path / "g.db"
    _store(db, TEXTS)
    with Graphonomous(db, embedder=A) as ga:
        ga.vector_index()
        ga.text_index()
        applied: list[list[str]] = []
        original = core.Engine._apply

        def recording(self: core.Engine[Store, object], changed: Sequence[str]) -> None:
            if self is ga.engine:
                applied.append(list(changed))
            original(self, changed)

        saves: list[bool] = []
        save = core.Engine.save_indexes

        def saving(self: core.Engine[Store, object]) -> bool:
            if self is ga.engine:
                saves.append(True)
            return save(self)

        monkeypatch.setattr(core.Engine, "_apply", recording)
        monkeypatch.setattr(core.Engine, "save_indexes", saving)
        with Graphonomous(db, embedder=B) as gb:
            gb.vector_index()  # embeds and stores B's vectors
        generation = ga.engine.generation
        ga.vector_index()
        ga.text_index()
        assert ga.engine.generation > generation  # the log was read past B's rows
        assert [ids for ids in applied if ids] == [] and saves == []
        assert ga.similarity_search(QUERY, 1)["results"][0]["id"] == "n0"


def test_the_switch_is_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "g.db"
    _store(db, TEXTS)
    with caplog.at_level(logging.WARNING, logger=core.LOGGER_NAME):
        with Graphonomous(db, embedder=B) as graph:
            graph.similarity_search(QUERY, 1)
            _store(db, ["a note stored by A, without B's vector"], prefix="late")
            graph.similarity_search(QUERY, 1)
            graph.engine.reload()  # a load that again finds a node lacking B's vector
            assert graph.similarity_search("a note stored by A", 1)["results"][0]["id"] == "late0"
        _recall(db, B)  # nothing missing: nothing said
    said = [r.getMessage() for r in caplog.records if r.name == core.LOGGER_NAME]
    assert len(said) == 1
    assert said[0].startswith(f"{B}: {len(TEXTS)} nodes have no vector of this embedder")
    assert f"{A} {len(TEXTS)}" in said[0] and "reembed" in said[0]


def test_the_switch_is_said_on_stderr(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    _store(db, TEXTS)
    command = [sys.executable, "-m", "graphonomous", "--db", str(db), "--embedder", B]
    done = subprocess.run([*command, "recall", QUERY], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("nodes have no vector of this embedder") == 1
    assert "Traceback" not in done.stderr
    again = subprocess.run([*command, "recall", QUERY], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stderr == ""


# -- reembed -----------------------------------------------------------------------------


def test_reembed_builds_exactly_the_missing_vectors(
    tmp_path: Path, embedded: Counter[str], capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "g.db"
    _store(db, TEXTS)  # A's vectors only
    _store(db, ["a kettle whistles", "the kettle is descaled"], model=B, prefix="k")
    embedded.clear()
    code, text = run("--db", str(db), "--embedder", B, "--json", "reembed")
    assert code == 0
    result = json.loads(text)
    assert (result["model"], result["missing"], result["embedded"]) == (B, len(TEXTS), len(TEXTS))
    assert result["vectors"] == len(TEXTS) + 2
    assert result["embedding_models"] == {A: len(TEXTS), B: len(TEXTS) + 2}
    assert embedded == Counter({B: len(TEXTS)})
    assert f"reembed {B}: {len(TEXTS)}/{len(TEXTS)} nodes" in capsys.readouterr().err
    embedded.clear()
    code, text = run("--db", str(db), "reembed")  # the default embedder: A lacks the kettles
    assert code == 0 and text.startswith(f"{A}: embedded 2 of 2 missing")
    assert embedded == Counter({A: 2})
    embedded.clear()
    code, text = run("--db", str(db), "--embedder", B, "--json", "reembed")
    assert json.loads(text)["embedded"] == 0 and embedded == Counter()
    _recall(db, B)
    _recall(db, A)
    assert embedded == Counter({A: 1, B: 1})  # the queries only


def test_reembed_on_a_missing_database_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none.db"
    assert run("--db", str(missing), "reembed")[0] == 2
    assert "no database" in capsys.readouterr().err and not missing.exists()


# -- erase and delete remove every model's vector ---------------------------------------------


@pytest.fixture
def both(tmp_path: Path) -> Iterator[Path]:
    """A file whose nodes have vectors of A and B, each model's index saved."""
    db = tmp_path / "g.db"
    _store(db, TEXTS)
    _recall(db, A)
    _recall(db, B)
    assert len(_vectors(db)) == 2 * len(TEXTS)
    yield db


def test_gdpr_erase_removes_every_models_vector_and_saved_index(both: Path) -> None:
    with Graphonomous(both, embedder=B) as gb:
        gb.vector_index()
        with Graphonomous(both, embedder=A) as ga:
            ga.gdpr_erase("n0", "request")
        assert [m for node, m in _vectors(both) if node == "n0"] == []
        with Store(both) as store:
            assert store.query("SELECT count(*) FROM derived_indexes")[0][0] == 0
        assert "n0" not in gb.vector_index()  # the other process's index dropped it
    for model in (A, B):
        assert "n0" not in _recall(both, model)


def test_every_delete_path_removes_every_models_vector(both: Path) -> None:
    with Graphonomous(both, embedder=B) as gb:
        gb.forget_node("n1", "hard")
        gb.apply_batch([{"op": "remove_node", "id": "n2"}])
        gb.forget_node("n3", "soft")  # hidden, not deleted: its vectors stay for a restore
    left = _vectors(both)
    assert {node for node, _ in left} == {"n0", "n3", "n4"}
    assert sorted(m for node, m in left if node == "n3") == sorted([A, B])


def test_a_content_change_drops_every_models_stale_vector(
    both: Path, embedded: Counter[str]
) -> None:
    new_text = "the kettle whistles at the boil"
    with Graphonomous(both, embedder=A) as ga:
        ga.apply_batch([{"op": "update_node", "id": "n4", "fields": {"content": new_text}}])
    assert [m for node, m in _vectors(both) if node == "n4"] == [A]
    embedded.clear()
    assert _recall(both, B, "kettle whistles")[0] == "n4"
    assert embedded == Counter({B: 2})  # the rewritten node, then the query
    with Store(both) as store, Graphonomous(":memory:", embedder=B) as fresh:
        stored = store.get_embedding("n4", B)
        assert stored is not None
        assert fresh.embed_texts([new_text])[0] == unpack_f32(stored)


# -- the migration -----------------------------------------------------------------------


def test_a_version_7_file_keeps_its_vectors_and_saved_copies(tmp_path: Path) -> None:
    path = tmp_path / "v7.db"
    con = sqlite3.connect(path)
    for migration in MIGRATIONS[:7]:
        for statement in migration:
            con.execute(statement)
    con.execute(
        "INSERT INTO nodes (id, node_type, content, created_at, updated_at) "
        "VALUES ('n1', 'semantic', 'kept', 't', 't')"
    )
    con.execute(
        "INSERT INTO node_embeddings (node_id, embedding, model) VALUES ('n1', x'00', ?)", (A,)
    )
    con.execute("INSERT INTO derived_indexes VALUES ('vectors', ?, 3, x'01')", (A,))
    con.execute("INSERT INTO derived_indexes VALUES ('vectors/0', ?, 3, x'02')", (A,))
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.get_embedding("n1", A) == b"\x00"
        assert store.load_derived("vectors", A) == (3, b"\x01")
        assert store.load_derived_sections("vectors", A, [0]) == [b"\x02"]
        with store.transaction():
            store.set_embedding("n1", b"\x03", B)  # a second model: added, not replacing
        assert store.embedding_counts() == {A: 1, B: 1}
        assert store.save_derived("vectors", B, 9, b"\x04")
        assert store.load_derived("vectors", A) == (3, b"\x01")  # A's copy stays
        log = store.query("SELECT node_id, model FROM node_changes ORDER BY seq")
        assert [(r[0], r[1]) for r in log][-1] == ("n1", B)
        generation = store.change_generation()
        with store.transaction():
            store.update_node("n1", content="rewritten")
        assert store.embedding_counts() == {}
        assert store.changes_since(generation - 1, A) == (store.change_generation(), ["n1"])
        assert store.changes_since(generation, A)[1] == ["n1"]
