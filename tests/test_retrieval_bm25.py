"""BM25 index and light stemming, score fusion and RRF, the facade's text-index hooks,
forward-push PageRank."""

from __future__ import annotations

import math
import random

import pytest

from graphonomous import Graphonomous
from graphonomous.embed import exact_score
from graphonomous.embed.index import normalized_f32
from graphonomous.retrieval import Bm25Index, bm25_tokens, reciprocal_rank_fusion
from graphonomous.retrieval.candidates import hybrid_search
from graphonomous.retrieval.fusion import (
    DEFAULT_KEYWORD_WEIGHT,
    KEYWORD_WEIGHTS,
    embedder_family,
    embedder_keyword_weight,
    score_fusion,
)
from graphonomous.retrieval.stem import light_stem

CORPUS = [
    "The pump lost pressure because the valve was stuck",
    "Replace the valve seal every six months",
    "Error code E-47 means pressure loss in the pump",
    "Market share drives revenue and revenue funds research",
    "The the the the pump",
    "",
    "Ünïcödé ﬁle names are normalised by NFKC",
    "pressure pressure pressure",
]
QUERIES = [
    "pump pressure",
    "why did the valve stick",
    "the",
    "revenue research market",
    "file names",
    "nothing matches zzz",
    "pressure pressure",
]


def _index(corpus: list[str], *, stem: bool = True) -> Bm25Index:
    index = Bm25Index(stem=stem)
    index.add_many((f"d{i}", text) for i, text in enumerate(corpus))
    return index


def test_tokens_are_nfkc_lowercase_word_runs() -> None:
    assert bm25_tokens("Ünïcödé ﬁle-Names, E-47!") == ["ünïcödé", "file", "names", "e", "47"]


def test_scores_match_rank_bm25() -> None:
    rank_bm25 = pytest.importorskip("rank_bm25")
    reference = rank_bm25.BM25Okapi([bm25_tokens(text) for text in CORPUS])
    index = _index(CORPUS, stem=False)  # the unstemmed formula is rank-bm25's exactly
    for query in QUERIES:
        tokens = bm25_tokens(query)
        expected = reference.get_scores(tokens)
        ours = index.scores(tokens)
        for i, value in enumerate(expected):
            assert ours.get(f"d{i}", 0.0) == pytest.approx(float(value), rel=1e-12, abs=1e-12)


def test_negative_idf_uses_rank_bm25_epsilon_floor() -> None:
    rank_bm25 = pytest.importorskip("rank_bm25")
    corpus = ["common a", "common b", "common c", "rare"]
    reference = rank_bm25.BM25Okapi([bm25_tokens(text) for text in corpus])
    index = _index(corpus, stem=False)
    assert index.idf("common") == pytest.approx(reference.idf["common"])
    assert index.idf("common") == pytest.approx(0.25 * index.mean_idf())
    assert index.mean_idf() == pytest.approx(reference.average_idf)
    assert index.idf("unknown") == 0.0


def test_incremental_updates_equal_a_fresh_build() -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(40)]
    docs = {f"d{i}": " ".join(rng.choices(words, k=rng.randint(1, 12))) for i in range(60)}
    live = Bm25Index()
    for doc_id, text in docs.items():
        live.add(doc_id, text)
    for doc_id in list(docs)[::3]:  # delete a third, rewrite another third
        live.remove(doc_id)
        del docs[doc_id]
    for doc_id in list(docs)[::2]:
        docs[doc_id] = " ".join(rng.choices(words, k=5))
        live.add(doc_id, docs[doc_id])
    fresh = Bm25Index()
    fresh.add_many(docs.items())
    assert len(live) == len(fresh) == len(docs)
    assert live.vocabulary_size == fresh.vocabulary_size
    assert live.mean_idf() == pytest.approx(fresh.mean_idf(), rel=1e-12)
    for query in ("w1 w2", "w3", "w5 w5 w7 w9"):
        ours, theirs = live.search(query, 10), fresh.search(query, 10)
        assert [doc for doc, _ in ours] == [doc for doc, _ in theirs]
        assert [score for _, score in ours] == pytest.approx([score for _, score in theirs])
    assert live.remove("missing") is False


def test_query_touches_only_postings_of_its_terms() -> None:
    index = _index(CORPUS + [f"filler document number {i}" for i in range(500)])
    examined: list[str] = []

    def allow(doc_id: str) -> bool:
        examined.append(doc_id)
        return True

    hits = index.search("valve", 10, allow=allow)
    assert sorted(examined) == ["d0", "d1"]  # the two documents containing "valve"
    assert [doc_id for doc_id, _ in hits] == ["d1", "d0"]  # shorter document first


def test_search_order_filters_and_edge_cases() -> None:
    index = _index(["alpha beta", "alpha gamma", "beta gamma", "delta", "epsilon"])
    ranked = index.search("alpha", 5)
    assert [doc for doc, _ in ranked] == ["d0", "d1"]  # equal scores: id order
    assert ranked[0][1] == ranked[1][1] > 0
    assert index.search("alpha", 5, allow=lambda d: d != "d0") == [ranked[1]]
    assert index.search("alpha", 0) == []
    assert index.search("", 5) == []
    assert Bm25Index().search("alpha", 5) == []
    assert all(math.isfinite(score) for _, score in index.search("alpha beta gamma", 5))


@pytest.mark.parametrize(
    ("token", "stem"),
    [
        ("activities", "activiti"),
        ("activity", "activiti"),
        ("studied", "studi"),
        ("studying", "studi"),
        ("movies", "movi"),
        ("movie", "movi"),
        ("classes", "class"),
        ("watches", "watch"),
        ("houses", "house"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("liked", "like"),
        ("making", "make"),
        ("stopped", "stop"),
        ("running", "run"),
        ("called", "call"),
        ("painting", "paint"),
        ("joined", "join"),
        ("agreed", "agreed"),  # -eed is kept
        ("string", "string"),  # no vowel before -ing
        ("thing", "thing"),  # too short a stem
        ("really", "real"),
        ("lovely", "love"),
        ("family", "famili"),  # -ly after a vowel stays; final y -> i
        ("played", "play"),
        ("was", "was"),
        ("is", "is"),
        ("e47", "e47"),  # digits: unchanged
        ("snake_case", "snake_case"),
    ],
)
def test_light_stem_rules(token: str, stem: str) -> None:
    assert light_stem(token) == stem


def test_stemming_is_applied_to_documents_and_queries() -> None:
    corpus = ["Her favourite activity is painting", "He painted the fence", "Budget review"]
    stemmed, raw = _index(corpus), _index(corpus, stem=False)
    assert stemmed.stem and not raw.stem
    assert [doc for doc, _ in stemmed.search("activities", 5)] == ["d0"]
    assert raw.search("activities", 5) == []
    assert {doc for doc, _ in stemmed.search("paints", 5)} == {"d0", "d1"}
    assert stemmed.terms(["activities", "painted"]) == ["activiti", "paint"]
    assert raw.terms(["activities"]) == ["activities"]
    assert stemmed.idf("activiti") > 0.0 and stemmed.idf("activities") == 0.0


def test_score_fusion_formula() -> None:
    keyword = {"a": 4.0, "b": 2.0, "c": 0.0}
    cosine = {"b": 0.5, "c": 0.25, "d": -0.1}
    fused = dict(score_fusion([keyword, cosine], (0.7, 0.3)))
    assert fused == pytest.approx({"a": 0.7, "b": 0.7 * 0.5 + 0.3, "c": 0.3 * 0.5})
    assert [item for item, _ in score_fusion([keyword, cosine], (0.7, 0.3))] == ["a", "b", "c"]
    assert score_fusion([{"x": 1.0}, {}], (1.0, 0.0)) == [("x", 1.0)]
    assert score_fusion([{}, {}], (0.5, 0.5)) == []
    with pytest.raises(ValueError):
        score_fusion([keyword], (0.5, 0.5))


def test_keyword_weight_by_embedder() -> None:
    assert embedder_family("hashing-384") == "hashing"
    assert embedder_family("onnx:all-MiniLM-L6-v2:0123abcd") == "onnx"
    assert embedder_family("custom") == "custom"
    assert (
        embedder_keyword_weight("hashing-384")
        == KEYWORD_WEIGHTS["hashing"]
        > DEFAULT_KEYWORD_WEIGHT
    )
    assert (
        embedder_keyword_weight("sentence-transformers:all-MiniLM-L6-v2") == DEFAULT_KEYWORD_WEIGHT
    )


def test_hybrid_search_scores_every_candidate_on_both_channels() -> None:
    with Graphonomous(":memory:") as graph:
        texts = {
            "kw": "zebra zebra crossing rules",
            "sem": "rules for crossing the road",
            "both": "zebra crossing at the road",
            "none": "quarterly budget",
        }
        for node_id, text in texts.items():
            graph.store_node(text, node_id=node_id)
        query = "zebra crossing road"
        vector = graph.embed_texts([query])[0]
        tokens = bm25_tokens(query)
        with graph.lock:
            fused, embedded, counts = hybrid_search(
                graph.engine, vector, tokens, 2, keyword_weight=0.6
            )
            keyword = graph.text_index().scores(tokens)
            unit = normalized_f32(vector, graph.vector_index().dimensions)
            cosine = {}
            for node_id in texts:
                stored = graph.vector_index().get(node_id)
                assert stored is not None
                cosine[node_id] = exact_score(unit, stored)
        assert counts == {"embedding": 2, "bm25": 2}
        best_kw = max(keyword.values())
        best_cos = max(cosine.values())
        for node_id, value in fused:  # fill-in: exact scores from both channels
            expected = 0.6 * max(keyword.get(node_id, 0.0), 0.0) / best_kw
            expected += 0.4 * max(cosine[node_id], 0.0) / best_cos
            assert value == pytest.approx(expected, rel=1e-12)
        assert embedded <= {node_id for node_id, _ in fused}
        rrf, _, _ = hybrid_search(graph.engine, vector, tokens, 2, fusion="rrf", keyword_weight=0.5)
        assert len(rrf) <= 4


def test_weighted_rrf() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=0, weights=(0.25, 0.75)))
    assert fused == pytest.approx({"a": 0.25, "b": 0.25 / 2 + 0.75, "c": 0.75 / 2})
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], weights=(1.0, 1.0))


def test_rrf_scores_and_tie_break() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "b", "x"]])
    assert [item for item, _ in fused] == ["c", "b", "a", "x"]
    assert dict(fused)["c"] == pytest.approx(1 / 63 + 1 / 61)  # 1st + 3rd beats 2nd + 2nd
    assert dict(fused)["b"] == pytest.approx(2 / 62)
    # Ties are broken by id; repeats inside one list count once, at the first rank.
    assert reciprocal_rank_fusion([["z", "y", "z"], ["y", "z"]], k=0) == [
        ("y", 1.5),
        ("z", 1.5),
    ]
    assert reciprocal_rank_fusion([]) == []
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=-1)


def test_facade_keeps_text_index_current() -> None:
    with Graphonomous(":memory:") as graph:
        first = graph.store_node("valve seal replacement")["node"]["id"]
        index = graph.text_index()  # built lazily from the nodes table
        assert first in index
        second = graph.store_node("valve pressure check")["node"]["id"]
        assert second in index  # store_node hook
        result = graph.apply_batch(
            [
                {"op": "update_node", "id": first, "fields": {"content": "pump bearing"}},
                {"op": "add_node", "node": {"id": "third", "content": "valve third"}},
            ]
        )
        assert result["applied"] == 2
        assert {doc for doc, _ in index.search("valve", 5)} == {second, "third"}
        assert [doc for doc, _ in index.search("bearing", 5)] == [first]
        graph.delete_node(second)
        assert second not in index
        graph.store.update_node("third", forgotten_at="2026-01-01T00:00:00.000Z")  # soft forget
        assert graph.text_index() is index  # a raw write is applied at the next access
        assert index.search("valve", 5) == []
        assert "third" not in graph.vector_index()


# -- forward-push PageRank (the effort 8–10 walk) --------------------------------------


def test_ppr_push_approximates_power_iteration() -> None:
    from graphonomous.algorithms import personalized_pagerank
    from graphonomous.retrieval import ppr_push, transitions_of

    rng = random.Random(3)
    nodes = [f"v{i:03d}" for i in range(300)]
    graph: dict[str, dict[str, float]] = {node: {} for node in nodes}
    for node in nodes:
        for _ in range(3):
            other = nodes[rng.randrange(len(nodes))]
            if other != node:
                weight = rng.uniform(0.1, 1.0)
                graph[node][other] = graph[other][node] = weight
    graph["lonely"] = {}  # dangling: its mass restarts
    seeds = {"v000": 2.0, "v001": 1.0, "lonely": 1.0}
    exact = personalized_pagerank(graph, seeds, max_iter=500, tol=1e-14)
    transitions = transitions_of(graph)
    approx = ppr_push(transitions, seeds, epsilon=1e-7)
    for node, value in exact.items():
        degree = max(1, len(transitions[node]))
        assert approx.get(node, 0.0) <= value + 1e-12
        assert value - approx.get(node, 0.0) <= 1e-7 * degree * 50
    coarse = ppr_push(transitions, seeds)  # default epsilon
    top = sorted(exact, key=lambda n: (-exact[n], n))[:10]
    assert sorted(coarse, key=lambda n: (-coarse[n], n))[:10] == top
    assert ppr_push(transitions, {}) == {}
    assert ppr_push(transitions, seeds) == ppr_push(transitions, dict(reversed(seeds.items())))


def test_a_document_identifier_is_found_by_its_words() -> None:
    index = _index(["def add_column(self, header): pass", "columns are added", *CORPUS])
    # Documents count an identifier's parts; queries keep their tokens whole.
    assert index.search("add column", 5)[0][0] == "d0"
    assert [doc for doc, _ in index.search("add_column", 5)] == ["d0"]
    assert index.document_terms(["__init__", "add_column", "plain"]) == [
        "__init__",
        "init",
        "add_column",
        "add",
        "column",
        "plain",
    ]
    raw = _index(["def add_column(self): pass", *CORPUS], stem=False)
    assert raw.search("column", 5) == []  # unstemmed: raw tokens, exactly rank-bm25
