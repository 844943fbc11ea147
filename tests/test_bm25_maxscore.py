"""MaxScore BM25 top-k (`Bm25Index.top_k`, `index/maxscore.py`) equals the exhaustive
reference (`Bm25Index.scores` + top-k by score desc, id asc) bit for bit: the same ids,
the same order, the same float scores, also for the extra ids, filters, repeated query
terms, removals and reloaded dumps."""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.index import Bm25Index
from graphonomous.index.maxscore import Scoring, Term, norms_of, top_k

# A Zipf-like vocabulary: a few very common words (long postings, low bounds)
# and a long tail of rare ones, the shape MaxScore prunes on.
WORDS = [f"w{i}" for i in range(60)]
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(WORDS))]


def reference(
    index: Bm25Index,
    tokens: Sequence[str],
    k: int,
    allow: Callable[[str], bool] | None = None,
    also: Sequence[str] = (),
) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """The exhaustive top-k and scores of `also` (what hybrid search did before)."""
    totals = index.scores(tokens, allow=allow)
    positive = ((-score, doc_id) for doc_id, score in totals.items() if score > 0.0)
    hits = [(doc_id, -negated) for negated, doc_id in heapq.nsmallest(k, positive)]
    return hits, {doc_id: totals.get(doc_id, 0.0) for doc_id in also}


def corpus(rng: random.Random, size: int) -> list[tuple[str, str]]:
    docs = []
    for number in range(size):
        length = rng.randint(0, 25)
        words = rng.choices(WORDS, weights=WEIGHTS, k=length)
        docs.append((f"d{rng.randrange(10 * size):05d}-{number}", " ".join(words)))
    return docs


def query(rng: random.Random) -> list[str]:
    return rng.choices(WORDS, weights=WEIGHTS, k=rng.randint(1, 8)) + rng.sample(WORDS, 2)


def assert_same(
    index: Bm25Index,
    tokens: Sequence[str],
    k: int,
    allow: Callable[[str], bool] | None = None,
    also: Sequence[str] = (),
) -> None:
    got = index.top_k(tokens, k, allow=allow, also=also)
    want = reference(index, tokens, k, allow, also)
    assert got[0] == want[0]
    assert [score.hex() for _, score in got[0]] == [score.hex() for _, score in want[0]]
    assert {d: s.hex() for d, s in got[1].items()} == {d: s.hex() for d, s in want[1].items()}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 300), k=st.integers(1, 40))
def test_top_k_equals_exhaustive_on_random_corpora(seed: int, size: int, k: int) -> None:
    rng = random.Random(seed)
    index = Bm25Index()
    documents = corpus(rng, size)
    index.add_many(documents)
    ids = [doc_id for doc_id, _ in documents]
    for _ in range(4):
        tokens = query(rng)
        also = [*rng.sample(ids, min(len(ids), 5)), "missing"]
        assert_same(index, tokens, k, also=also)
        keep = {doc_id for doc_id in ids if rng.random() < 0.5}
        assert_same(index, tokens, k, allow=keep.__contains__, also=also)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_top_k_after_removals_rewrites_and_reload(seed: int) -> None:
    rng = random.Random(seed)
    index = Bm25Index()
    documents = corpus(rng, 200)
    index.add_many(documents)
    tokens = query(rng)
    assert_same(index, tokens, 10)  # caches the terms' bounds
    for doc_id, _ in rng.sample(documents, 60):
        index.remove(doc_id)
    for doc_id, _ in rng.sample(documents, 40):  # rewrites and re-adds (reused slots)
        index.add(doc_id, " ".join(rng.choices(WORDS, k=rng.randint(1, 40))))
    assert_same(index, tokens, 10)
    assert_same(index, query(rng), 25)
    loaded = Bm25Index.load(index.dump())
    assert loaded is not None
    assert_same(loaded, tokens, 10)


def test_ties_at_the_kth_score_are_broken_by_id() -> None:
    index = Bm25Index()
    # 30 identical documents share every score; the rare term lifts three of them
    index.add_many([(f"t{i:02d}", "common words here") for i in range(30)])
    index.add_many([(f"r{i}", "common rare") for i in range(3)])
    for k in (1, 3, 4, 10, 40):
        assert_same(index, ["rare", "common", "words"], k, also=["t05", "r1"])


def test_pruning_skips_postings_of_common_terms() -> None:
    """The point of MaxScore: the common term's postings are not all scored."""
    rng = random.Random(7)
    index = Bm25Index(stem=False)
    index.add_many((f"d{i}", "the " * rng.randint(1, 3) + f"x{i % 50}") for i in range(2000))
    tokens = ["x7", "the"]
    assert_same(index, tokens, 5)
    common = index._postings(index._term_slot["the"])
    rare = index._postings(index._term_slot["x7"])
    avgdl = index._total_len / len(index)
    scoring = Scoring(index.k1, index.b, avgdl, norms_of(index.k1, index.b, avgdl, index._doc_len))
    calls: list[int] = []

    def allow(slot: int) -> bool:
        calls.append(slot)
        return True

    terms = [
        Term(index.idf("x7"), *rare, max(rare[1]), 1),
        Term(index.idf("the"), *common, max(common[1]), 1),
    ]
    hits, _ = top_k(terms, scoring, 5, index._doc_ids, allow=allow)
    assert len(hits) == 5
    assert len(set(calls)) == len(rare[0])  # only the rare term's postings were scored


def test_non_positive_weights_fall_back_to_the_exhaustive_order() -> None:
    index = Bm25Index()
    # every term in every document: raw idf < 0 everywhere, mean idf < 0
    index.add_many([(f"d{i}", "alpha beta" + " alpha" * i) for i in range(6)])
    assert index.idf("alpha") < 0.0
    assert_same(index, ["alpha", "beta", "alpha"], 3, also=["d1"])
