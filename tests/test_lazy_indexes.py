"""Loaded index dumps are sliced lazily (issue #20) and behave exactly like the original.

A loaded BM25 dump copies a term's postings (and a document's terms) only
when something reads them; every operation on it must give what the index it
was dumped from gives: scores (values and order), removals and re-adds of
saved documents, new terms, the df histogram (mean idf) and a second dump.
"""

from __future__ import annotations

import random

from graphonomous.index import Bm25Index

WORDS = "pump valve seal bearing motor shaft leak pressure flow heat cooling oil".split()


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
