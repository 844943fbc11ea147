"""Loaded index dumps are sliced lazily (issue #20) and behave exactly like the original.

A loaded BM25 dump copies a term's postings (and a document's terms) only
when something reads them; every operation on it must give what the index it
was dumped from gives: scores (values and order), removals and re-adds of
saved documents, new terms, the df histogram (mean idf) and a second dump.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.embed import VectorIndex, pack_f32
from graphonomous.embed.index import ROW_BLOCK, _PureBackend
from graphonomous.embed.vectors import NO_NUMPY_ENV, BytesDump, StaleDumpError, numpy_available
from graphonomous.index import Bm25Index

WORDS = [
    "pump",
    "valve",
    "seal",
    "bearing",
    "motor",
    "shaft",
    "leak",
    "pressure",
    "flow",
    "heat",
    "cooling",
    "oil",
]


def _corpus(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [
        (f"d{i:03d}", " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 9))))
        for i in range(count)
    ]


def _same(left: Bm25Index, right: Bm25Index) -> None:
    for query in ("pump", "valve seal seal", "heat cooling oil leak", "novel", "motor shaft"):
        assert list(left.scores(query.split()).items()) == list(right.scores(query.split()).items())
        assert left.search(query, 7) == right.search(query, 7)
    assert left.mean_idf() == right.mean_idf()
    assert len(left) == len(right) and left.vocabulary_size == right.vocabulary_size


def test_a_loaded_dump_equals_its_original_through_edits() -> None:
    original = Bm25Index()
    original.add_many(_corpus(120, 1))
    for doc_id in ("d005", "d017", "d099"):
        original.remove(doc_id)
    loaded = Bm25Index.load(original.dump())
    assert loaded is not None
    _same(loaded, original)
    rng = random.Random(7)
    for step in range(60):
        doc_id = f"d{rng.randrange(130):03d}"
        if step % 3 == 0:
            assert loaded.remove(doc_id) == original.remove(doc_id)
        else:
            text = " ".join(rng.choice([*WORDS, "novel", "gasket"]) for _ in range(4))
            loaded.add(doc_id, text)
            original.add(doc_id, text)
        _same(loaded, original)
    assert loaded.dump() == original.dump()


def test_an_untouched_load_dumps_identically_and_keeps_its_histogram() -> None:
    original = Bm25Index()
    original.add_many(_corpus(50, 2))
    data = original.dump()
    loaded = Bm25Index.load(data)
    assert loaded is not None
    assert loaded.mean_idf() == original.mean_idf()  # from the saved histogram
    assert loaded.dump() == data


# -- the vector index ----------------------------------------------------------------


DIMS = 16


def _vectors(count: int, seed: int) -> list[tuple[str, list[float]]]:
    rng = random.Random(seed)
    return [(f"v{i:03d}", [rng.uniform(-1, 1) for _ in range(DIMS)]) for i in range(count)]


def _queries() -> list[list[float]]:
    rng = random.Random(99)
    return [[rng.choice((0.0, rng.uniform(-1, 1))) for _ in range(DIMS)] for _ in range(12)]


class _Vanishing:
    """A reader whose copy disappears after `reads` section reads."""

    def __init__(self, data: bytes, reads: int) -> None:
        self.inner, self.reads = BytesDump(data), reads

    @property
    def header(self) -> dict[str, Any]:
        return self.inner.header

    def read_sections(self, indices: Sequence[int]) -> list[bytes]:
        self.reads -= 1
        if self.reads < 0:
            raise StaleDumpError("gone")
        return self.inner.read_sections(indices)

    def check(self) -> None:
        if self.reads <= 0:
            raise StaleDumpError("gone")


def test_a_lazily_loaded_pure_index_answers_like_its_original() -> None:
    items = _vectors(300, 3)
    original = VectorIndex(DIMS, backend="pure")
    original.bulk_load(items)
    original.remove("v010")
    data = original.dump(pending=["p1"])
    loaded = VectorIndex.load(data, DIMS, backend="pure")
    assert loaded is not None and loaded.saved_pending == ["p1"]
    allow = {node_id for node_id, _ in items[::3]}
    for query in _queries():
        assert loaded.search(query, 7) == original.search(query, 7)
        assert loaded.search(query, 5, allow=allow.__contains__) == original.search(
            query, 5, allow=allow.__contains__
        )
    assert loaded.get("v020") == original.get("v020") and "v010" not in loaded
    for node_id, vector in _vectors(40, 4):
        loaded.add(node_id, vector)
        original.add(node_id, vector)
    loaded.remove("v030")
    original.remove("v030")
    for query in _queries():
        assert loaded.search(query, 9) == original.search(query, 9)
    again = VectorIndex.load(loaded.dump(), DIMS, backend="pure")
    assert again is not None
    for query in _queries():
        assert again.search(query, 9) == original.search(query, 9)


def test_a_copy_vanishing_mid_use_is_rebuilt_from_the_stored_vectors() -> None:
    items = _vectors(200, 5)
    stored = {node_id: pack_f32(vector) for node_id, vector in items}
    original = VectorIndex(DIMS, backend="pure")
    original.bulk_load(stored.items())  # as the engine loads: from the stored blobs
    data = original.dump()

    def fallback(ids: Sequence[str | None]) -> list[bytes | None]:
        return [None if node_id is None else stored.get(node_id) for node_id in ids]

    for reads in (1, 2, 3):  # the ids take the first read
        loaded = VectorIndex.load(_Vanishing(data, reads), DIMS, backend="pure", fallback=fallback)
        assert loaded is not None
        for query in _queries():
            assert loaded.search(query, 6) == original.search(query, 6)
        assert loaded.source_current()  # nothing left to read from the vanished copy


@pytest.fixture
def pure(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The pure backend (the one that reads its copy lazily) for the engine."""
    monkeypatch.setenv(NO_NUMPY_ENV, "1")
    numpy_available.cache_clear()
    yield
    monkeypatch.undo()
    numpy_available.cache_clear()


@pytest.mark.usefixtures("pure")
def test_an_engine_reads_the_newer_copy_when_another_process_saved_one(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    with Graphonomous(db) as graph:
        for i in range(30):
            graph.store_node(f"pump note {i} about seals", node_id=f"n{i}")
        graph.vector_index()
        assert graph.engine.save_indexes()
    with Graphonomous(db) as reader, Graphonomous(db) as writer:
        first = reader.vector_index()
        assert first.search(writer.embed_texts(["pump seals"])[0], 3)
        writer.store_node("pump seals leak at the gland", node_id="late")
        writer.vector_index()
        assert writer.engine.save_indexes()  # replaces the copy the reader reads
        assert not first.source_current()
        index = reader.vector_index()
        assert index is not first and "late" in index
        query = reader.embed_texts(["pump seals leak"])[0]
        assert index.search(query, 5) == writer.vector_index().search(query, 5)


def test_a_column_build_over_several_blocks_equals_numpy() -> None:
    pytest.importorskip("numpy")
    rng = random.Random(11)
    items = [(f"n{i:04d}", [rng.uniform(-1, 1) for _ in range(8)]) for i in range(2_100)]
    pure, numpy = VectorIndex(8, backend="pure"), VectorIndex(8, backend="numpy")
    pure.bulk_load(items)
    numpy.bulk_load(items)
    loaded = VectorIndex.load(pure.dump(), 8, backend="pure")  # dump builds the columns
    assert loaded is not None
    for _ in range(10):
        query = [rng.uniform(-1, 1) for _ in range(8)]
        assert pure.search(query, 10) == numpy.search(query, 10) == loaded.search(query, 10)


def test_numpy_loads_a_dump_of_many_row_blocks_chunk_by_chunk() -> None:
    pytest.importorskip("numpy")
    rng = random.Random(12)
    # > _MATERIALIZE_SECTIONS row blocks, so the load reads several chunks.
    count = ROW_BLOCK * 70 + 5
    items = [(f"n{i:04d}", [rng.uniform(-1, 1) for _ in range(8)]) for i in range(count)]
    pure = VectorIndex(8, backend="pure")
    pure.bulk_load(items)
    loaded = VectorIndex.load(pure.dump(), 8, backend="numpy")
    assert loaded is not None and loaded.backend == "numpy" and len(loaded) == count
    assert loaded.get("n2244") == pure.get("n2244")
    for _ in range(5):
        query = [rng.uniform(-1, 1) for _ in range(8)]
        assert loaded.search(query, 10) == pure.search(query, 10)
    loaded.add("extra", [1.0] * 8)  # the matrix grows past the loaded rows
    pure.add("extra", [1.0] * 8)
    assert loaded.search([1.0] * 8, 3) == pure.search([1.0] * 8, 3)
    assert loaded.search([1.0] * 8, 1)[0][0] == "extra"


def test_a_numpy_dump_equals_the_pure_dump_columns_included() -> None:
    """The NumPy backend writes the pure backend's columns too (issue #20: a pure
    process reading its copy builds none), byte for byte: signs, zeros, ties."""
    pytest.importorskip("numpy")
    rng = random.Random(13)
    tie = 0.5 / 2048  # x S = 0.5 and 1.5 after normalisation by 1: rounding ties to even
    items = [
        (f"n{i:04d}", [rng.choice((0.0, rng.uniform(-1, 1))) for _ in range(40)])
        for i in range(300)
    ]
    items += [("tie", [tie] + [0.0] * 39), ("tie3", [-3 * tie] + [0.0] * 39)]
    pure, numpy = VectorIndex(40, backend="pure"), VectorIndex(40, backend="numpy")
    pure.bulk_load(items)
    numpy.bulk_load(items)
    dumped = numpy.dump()
    assert dumped == pure.dump()
    loaded = VectorIndex.load(dumped, 40, backend="pure")
    assert loaded is not None and not loaded.columns_missing_from_copy
    query = [rng.uniform(-1, 1) for _ in range(40)]
    assert loaded.search(query, 9) == pure.search(query, 9)


@pytest.mark.usefixtures("pure")
def test_a_copy_without_columns_is_saved_again_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rows-only copy (as NumPy processes wrote before) costs one column build, not
    one per process: the first pure process to load it saves it with its columns."""
    db = tmp_path / "g.db"
    with Graphonomous(db) as graph:
        for i in range(40):
            graph.store_node(f"pump note {i} about seals", node_id=f"n{i}")
        graph.vector_index()
        rows_only = _PureBackend.state
        with monkeypatch.context() as patched:
            patched.setattr(_PureBackend, "state", lambda self: (*rows_only(self)[:2], None))
            assert graph.engine.save_indexes()
        query = graph.embed_texts(["pump seals"])[0]
        expected = graph.vector_index().search(query, 5)
    seen = []
    for _ in range(2):
        with Graphonomous(db) as graph:
            index = graph.vector_index()
            seen.append(index.columns_missing_from_copy)
            assert index.search(query, 5) == expected
    assert seen == [True, False]
