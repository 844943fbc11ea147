"""`Bm25Index.within` (`Bm25Context`): BM25 with the statistics of a subset of the
documents equals a `Bm25Index` that holds only that subset — for the subset's own
documents bit for bit (ids, order, float scores, idf), after removals and reloaded
dumps; documents outside it are scored with the subset's statistics, and a term the
subset lacks weighs nothing."""

from __future__ import annotations

import heapq
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.index import Bm25Index

WORDS = [f"w{i}" for i in range(40)]
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(WORDS))]


def corpus(rng: random.Random, size: int) -> list[tuple[str, str]]:
    return [
        (f"d{number:04d}", " ".join(rng.choices(WORDS, weights=WEIGHTS, k=rng.randint(0, 20))))
        for number in range(size)
    ]


def query(rng: random.Random) -> list[str]:
    return rng.choices(WORDS, weights=WEIGHTS, k=rng.randint(1, 6)) + rng.sample(WORDS, 2)


def hexed(scores: dict[str, float]) -> dict[str, str]:
    return {doc_id: value.hex() for doc_id, value in scores.items()}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(2, 200), k=st.integers(1, 30))
def test_context_equals_an_index_of_only_its_documents(seed: int, size: int, k: int) -> None:
    rng = random.Random(seed)
    docs = corpus(rng, size)
    whole = Bm25Index()
    whole.add_many(docs)
    chosen = [doc for doc in docs if rng.random() < 0.4] or docs[:1]
    alone = Bm25Index()
    alone.add_many(chosen)
    context = whole.within(doc_id for doc_id, _ in chosen)
    ids = {doc_id for doc_id, _ in chosen}
    assert len(context) == len(chosen)
    for _ in range(5):
        tokens = query(rng)
        for term in whole.terms(tokens):
            assert context.idf(term).hex() == alone.idf(term).hex()
        inside = context.scores(tokens, allow=ids.__contains__)
        assert hexed(inside) == hexed(alone.scores(tokens))
        hits, extra = context.top_k(tokens, k, allow=ids.__contains__, also=sorted(ids)[:3])
        want, want_extra = alone.top_k(tokens, k, also=sorted(ids)[:3])
        assert hits == want
        assert hexed(extra) == hexed(want_extra)
        # Over every document (the context's statistics for those outside it too),
        # MaxScore's top k is the exhaustive one.
        every = context.scores(tokens)
        ranked = heapq.nsmallest(k, ((-v, d) for d, v in every.items() if v > 0.0))
        assert context.top_k(tokens, k)[0] == [(d, -v) for v, d in ranked]


def test_outside_documents_use_the_contexts_statistics_and_its_vocabulary() -> None:
    whole = Bm25Index()
    whole.add_many(
        [
            ("a1", "dance studio opening"),
            ("a2", "dance festival part"),
            ("a3", "glad to be part of it"),
            ("b1", "hiking trip mountains"),
            ("b2", "dance hiking"),
        ]
    )
    context = whole.within(["a1", "a2", "a3"])
    # "hiking" is no word of the context: it carries nothing, even for b1.
    assert context.idf("hiking") == 0.0
    assert "b1" not in context.scores(["hiking"])
    # b2 is scored with the context's idf of "dance" (2 of its 3 documents).
    alone = Bm25Index()
    alone.add_many([("a1", "dance studio opening"), ("a2", "dance festival part")])
    alone.add("a3", "glad to be part of it")
    assert context.idf("dance") == alone.idf("dance")
    scored = context.scores(["dance"])
    assert set(scored) == {"a1", "a2", "b2"}
    # Globally "dance" (3 of 5) weighs differently than within the context (2 of 3).
    assert whole.idf("dance") != context.idf("dance")


def test_context_after_removal_and_reload() -> None:
    rng = random.Random(7)
    docs = corpus(rng, 120)
    whole = Bm25Index()
    whole.add_many(docs)
    for doc_id, _ in docs[::5]:
        whole.remove(doc_id)
    reloaded = Bm25Index.load(whole.dump())
    assert reloaded is not None
    kept = [doc for index, doc in enumerate(docs) if index % 5 and index % 3 == 0]
    alone = Bm25Index()
    alone.add_many(kept)
    ids = [doc_id for doc_id, _ in kept] + [docs[0][0]]  # a removed id is ignored
    for index in (whole, reloaded):
        context = index.within(ids)
        assert len(context) == len(kept)
        tokens = query(rng)
        inside = context.scores(tokens, allow={doc_id for doc_id, _ in kept}.__contains__)
        assert hexed(inside) == hexed(alone.scores(tokens))


def test_empty_context_scores_nothing() -> None:
    whole = Bm25Index()
    whole.add_many([("a", "one two"), ("b", "two three")])
    context = whole.within([])
    assert len(context) == 0
    assert context.scores(["two"]) == {}
    assert context.top_k(["two"], 3, also=["a"]) == ([], {"a": 0.0})
    assert context.idf("two") == 0.0


def test_a_kept_context_is_dropped_when_the_index_changes() -> None:
    whole = Bm25Index()
    whole.add_many([("a", "one two"), ("b", "two three"), ("c", "four")])
    first = whole.within(["a", "b"])
    assert whole.within(["b", "a"]) is first  # kept while nothing changes
    whole.add("a", "one one five")  # a rewrite of a context document
    again = whole.within(["a", "b"])
    assert again is not first
    alone = Bm25Index()
    alone.add_many([("a", "one one five"), ("b", "two three")])
    assert again.scores(["one", "five"], allow={"a", "b"}.__contains__) == alone.scores(
        ["one", "five"]
    )
