"""The close-time save streams: bounded batches in, sections out one at a time.

Rules of this file: the bytes a streamed save writes are compared with those of the
in-memory path (`VectorIndex.dump_sections` of an index built from the same rows),
for both backends and several column passes; the streaming shape (pages of stored
vectors, a lazy iterator of sections, embedder batches) is checked by spies, not by
timing or RSS (benchmarks/bench_bounded_memory.py measures those).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.embed import HashingEmbedder, VectorIndex, numpy_available, pack_f32
from graphonomous.embed import index as index_module
from graphonomous.embed.index import RowSpool
from graphonomous.engine import core as engine_core
from graphonomous.index import Bm25Index
from graphonomous.index import bm25 as bm25_module
from graphonomous.store import sqlite as sqlite_module

BACKENDS = ["pure", "numpy"] if numpy_available() else ["pure"]


def _rows(count: int, dims: int, seed: int = 7) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    return [(f"n{i:05d}", pack_f32([rng.gauss(0, 1) for _ in range(dims)])) for i in range(count)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("count", [0, 1, 32, 33, 2_500])
def test_a_spooled_dump_has_the_bytes_of_the_in_memory_dump(
    backend: str, count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    dims = 12
    # Fields of 5 dimensions per pass at 2,500 rows: three passes, the last one short.
    monkeypatch.setattr(index_module, "_COLUMN_GROUP_BYTES", 3 * 2_500 * 5)
    rows = _rows(count, dims)
    built = VectorIndex(dims, backend=backend)
    built.bulk_load(rows)
    header, expected = built.dump_sections(pending=["p2", "p1"])
    with RowSpool(dims) as spool:
        for start in range(0, count, 700):  # pages of another size than the row blocks
            spool.add_many(rows[start : start + 700])
        spooled_header, total, sections = spool.sections(["p2", "p1"])
        got = [bytes(section) for section in sections]
    assert spooled_header == header
    assert total == len(got) == len(expected)
    assert got == [bytes(section) for section in expected]


def test_embedding_pages_are_iter_embeddings_in_pages(tmp_path: Path) -> None:
    with Graphonomous(tmp_path / "pages.db") as graph:
        graph.apply_batch(_ops(10))
        graph.vector_index()
        store, model = graph.store, graph.embedding_model
        pages = list(store.embedding_pages(model, searchable_only=True, page=3))
        assert [len(page) for page in pages] == [3, 3, 3, 1]
        flat = [row for page in pages for row in page]
        assert flat == store.iter_embeddings(model, searchable_only=True)


def _ops(count: int) -> list[dict[str, object]]:
    return [
        {
            "op": "add_node",
            "node": {
                "id": f"n{i:03d}",
                "content": f"Paragraph {i} about lakes and rivers {i * 7}.",
                "node_type": "episodic",
            },
        }
        for i in range(count)
    ]


def test_close_saves_the_vector_index_streamed_with_the_in_memory_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk writer's close embeds in batches, pages the stored vectors and hands the
    store an iterator of sections; the saved copy equals the in-memory path's bytes."""
    monkeypatch.setattr(engine_core, "RESAVE_AFTER_CHANGES", 5)
    monkeypatch.setattr(engine_core, "REEMBED_BATCH", 4)
    monkeypatch.setattr(sqlite_module, "EMBEDDING_PAGE", 3)
    batches: list[int] = []
    handed: list[object] = []
    embed_texts = engine_core.Engine.embed_texts
    save_sections = sqlite_module.Store.save_derived_sections

    def spy_embed(self: engine_core.Engine, texts: Sequence[str]) -> list[list[float]]:  # type: ignore[type-arg]
        batches.append(len(texts))
        return embed_texts(self, texts)

    def spy_save(
        self: sqlite_module.Store,
        name: str,
        model: str,
        generation: int,
        header: bytes,
        sections: Iterable[bytes | memoryview],
    ) -> bool:
        handed.append(sections)
        return save_sections(self, name, model, generation, header, sections)

    monkeypatch.setattr(engine_core.Engine, "embed_texts", spy_embed)
    monkeypatch.setattr(sqlite_module.Store, "save_derived_sections", spy_save)
    db = tmp_path / "written.db"
    with Graphonomous(db) as graph:
        graph.apply_batch(_ops(11), defer_embeddings=True)  # as import-memory writes
        model = graph.embedding_model
    assert batches and max(batches) <= 4 and sum(batches) == 11
    assert len(handed) == 1 and not isinstance(handed[0], (list, tuple))
    monkeypatch.undo()
    with Graphonomous(db) as graph:
        store = graph.store
        rows = store.iter_embeddings(model, searchable_only=True)
        assert len(rows) == 11
        built = VectorIndex(graph.embedder.dimensions)
        built.bulk_load(rows)
        _, expected = built.dump_sections()
        saved = store.load_derived_sections("vectors", model, list(range(len(expected))))
        assert saved is not None
        assert [s[8:] for s in saved] == [bytes(s) for s in expected]
        found = graph.retrieve_context("lakes paragraph 3", effort=0)
        assert "n003" in [r["node_id"] for r in found["results"]]


def test_pending_vectors_are_embedded_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_core, "REEMBED_BATCH", 4)
    batches: list[int] = []
    embed_texts = engine_core.Engine.embed_texts

    def spy(self: engine_core.Engine, texts: Sequence[str]) -> list[list[float]]:  # type: ignore[type-arg]
        batches.append(len(texts))
        return embed_texts(self, texts)

    with Graphonomous(tmp_path / "pending.db") as graph:
        graph.apply_batch(_ops(10), defer_embeddings=True)
        monkeypatch.setattr(engine_core.Engine, "embed_texts", spy)
        assert len(graph.vector_index()) == 10
    assert batches and max(batches) <= 4 and sum(batches) >= 10


def test_stored_vectors_are_the_index_vectors_without_loading_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "few.db"
    with Graphonomous(db) as graph:
        graph.apply_batch(_ops(6))
    loads: list[int] = []
    vector_index = engine_core.Engine.vector_index

    def spy(self: engine_core.Engine) -> VectorIndex:  # type: ignore[type-arg]
        loads.append(1)
        return vector_index(self)

    with Graphonomous(db) as graph:
        monkeypatch.setattr(engine_core.Engine, "vector_index", spy)
        found = graph.stored_vectors(["n004", "n001", "absent"])
        assert loads == [] and sorted(found) == ["n001", "n004"]
        index = graph.vector_index()
        assert found == {node_id: index.get(node_id) for node_id in ("n001", "n004")}
        assert graph.stored_vectors(["n002"]) == {"n002": index.get("n002")}  # loaded: read


def test_stored_vectors_of_a_node_lacking_one_embed_it_through_the_index(
    tmp_path: Path,
) -> None:
    with Graphonomous(tmp_path / "deferred.db") as graph:
        graph.apply_batch(_ops(3), defer_embeddings=True)
        found = graph.stored_vectors(["n000", "n002"])
        index = graph.vector_index()
        assert found == {node_id: index.get(node_id) for node_id in ("n000", "n002")}
        assert found["n000"] is not None


def test_a_bulk_writers_close_drops_embedder_caches_per_batch_and_saves_current_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The close-time embedding holds one batch's embedder caches; the BM25 copy is
    saved after the vectors were written (its generation is current: the next process
    applies no change) and holds what an index built from the rows holds."""
    monkeypatch.setattr(engine_core, "RESAVE_AFTER_CHANGES", 5)
    monkeypatch.setattr(engine_core, "REEMBED_BATCH", 4)
    releases: list[int] = []
    monkeypatch.setattr(
        HashingEmbedder, "release_caches", lambda self: releases.append(len(releases))
    )
    db = tmp_path / "bulk.db"
    with Graphonomous(db) as graph:
        graph.apply_batch(_ops(11), defer_embeddings=True)
    assert len(releases) == 3  # 11 nodes in batches of 4
    monkeypatch.undo()
    with Graphonomous(db) as graph:
        store = graph.store
        saved = store.load_derived("bm25", "")
        assert saved is not None and saved[0] == store.change_generation()
        built = Bm25Index()
        built.add_many(store.live_texts())
        assert saved[1] == built.dump()
        assert list(store.iter_live_texts()) == store.live_texts()
        found = graph.retrieve_context("lakes paragraph 3", effort=0)
        assert "n003" in [r["node_id"] for r in found["results"]]


def test_derived_parts_are_stored_as_their_concatenation(tmp_path: Path) -> None:
    with Graphonomous(tmp_path / "parts.db") as graph:
        store = graph.store
        parts: list[bytes | memoryview] = [b"head", memoryview(bytearray(b"\x00\x01" * 5)), b""]
        assert store.save_derived_parts("probe", "m", 3, 14, iter(parts))
        assert store.load_derived("probe", "m") == (3, b"head" + b"\x00\x01" * 5)
        assert store.save_derived_parts("probe", "m", 4, 1, iter([b"x"]))  # replaces it
        assert store.load_derived("probe", "m") == (4, b"x")
        for size in (0, 2):  # parts longer or shorter than said: refused, nothing written
            with pytest.raises(ValueError, match="parts"):
                store.save_derived_parts("probe", "m", 5, size, iter([b"y"]))
        assert store.load_derived("probe", "m") == (4, b"x")


def test_bm25_dump_pieces_join_to_the_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_module, "_DUMP_PIECE_BYTES", 64)  # many pieces
    index = Bm25Index()
    index.add_many((f"d{i}", f"lakes rivers {i} add_column word{i % 7}") for i in range(300))
    index.remove("d5")
    size, pieces = index.dump_parts()
    got = list(pieces)
    assert len(got) > 10 and sum(map(len, got)) == size
    assert b"".join(got) == index.dump()
    loaded = Bm25Index.load(b"".join(got))
    assert loaded is not None and loaded.dump() == index.dump()
