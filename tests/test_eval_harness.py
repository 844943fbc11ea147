"""The retrieval-benchmark harness (benchmarks/evalkit.py, eval_locomo.py, eval_multihop.py).

Only tiny synthetic data made here is used — never the licensed data sets.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import eval_locomo  # noqa: E402
import eval_multihop  # noqa: E402
import eval_whatif  # noqa: E402
import evalkit  # noqa: E402

HAVE_RANK_BM25 = importlib.util.find_spec("rank_bm25") is not None


# -- evidence cleaning ---------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D1:3", ["D1:3"]),
        ("D:11:26", ["D11:26"]),
        ("D1:03", ["D1:3"]),
        ("D8:6; D9:17", ["D8:6", "D9:17"]),
        ("D", []),
        ("", []),
        (None, []),
    ],
)
def test_normalise_ids(raw: object, expected: list[str]) -> None:
    assert eval_locomo.normalise_ids(raw) == expected


def synthetic_sample(sample_id: str = "conv-x") -> dict[str, Any]:
    """A LoCoMo-shaped conversation: 2 sessions, a non-list session value, defects."""
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_10_date_time": "9:00 am on 2 June, 2023",
            "session_10": [
                {"speaker": "Ann", "dia_id": "D10:1", "text": "The zebra escaped from the zoo."},
                {
                    "speaker": "Bob",
                    "dia_id": "D10:2",
                    "text": "Look at this.",
                    "blip_caption": "a photo of a red kayak",
                },
            ],
            "session_2_date_time": "1:00 pm on 1 May, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "I adopted a puppy named Biscuit."},
                {"speaker": "Bob", "dia_id": "D2:2", "text": "Biscuit sounds lovely."},
                {"speaker": "Ann", "dia_id": "D2:3", "text": "We hiked the volcano trail."},
            ],
            "session_3": "not a list, so not a session",
            "session_3_date_time": "never",
        },
        "qa": [
            {"question": "What is the puppy called?", "evidence": ["D2:01"], "category": 4},
            {"question": "Where did the zebra go?", "evidence": ["D:10:1"], "category": 2},
            {"question": "Kayak colour?", "evidence": ["D10:2; D2:9"], "category": 1},
            {"question": "Unanswerable", "evidence": ["D"], "category": 3},
            {"question": "Also gone", "evidence": ["D7:1"], "category": 5},
            {"question": "Nothing", "evidence": [], "category": 4},
            {
                "question": "What did they hike?",
                "adversarial_answer": "x",
                "evidence": ["D2:3"],
                "category": 5,
            },
        ],
    }


def test_sessions_are_only_list_values_in_session_order() -> None:
    sessions = eval_locomo.sessions_of(synthetic_sample()["conversation"])
    assert [s.number for s in sessions] == [2, 10]
    assert sessions[1].date == "9:00 am on 2 June, 2023"
    assert [t.dia_id for t in sessions[0].turns] == ["D2:1", "D2:2", "D2:3"]


def test_render_turn_adds_caption_and_no_date() -> None:
    turns = {
        t.dia_id: t
        for s in eval_locomo.sessions_of(synthetic_sample()["conversation"])
        for t in s.turns
    }
    assert eval_locomo.render_turn(turns["D10:1"]) == "Ann: The zebra escaped from the zoo."
    assert (
        eval_locomo.render_turn(turns["D10:2"])
        == "Bob: Look at this. [image: a photo of a red kayak]"
    )


def test_clean_questions_drops_bad_ids_then_empty_questions() -> None:
    sample = synthetic_sample()
    turn_ids = {"D2:1", "D2:2", "D2:3", "D10:1", "D10:2"}
    queries, stats = eval_locomo.clean_questions("c", sample["qa"], turn_ids)
    assert [q.gold for q in queries] == [("D2:1",), ("D10:1",), ("D10:2",), ("D2:3",)]
    assert [q.label for q in queries] == ["4", "2", "1", "5"]
    # "D2:9" and "D7:1" name no turn, "D" names nothing at all.
    assert stats == {"questions": 7, "ids_dropped": 3, "questions_dropped": 3}


def test_store_variants_graph_shape() -> None:
    conversation = eval_locomo.load_locomo_samples([synthetic_sample()])[0]
    variants = eval_locomo.store_variants(conversation)
    graph = variants[eval_locomo.GRAPH_VARIANT]
    nodes = [op["node"] for op in graph.operations if op["op"] == "add_node"]
    edges = [op["edge"] for op in graph.operations if op["op"] == "add_edge"]
    assert sorted(n["id"] for n in nodes if n["node_type"] == "temporal") == [
        "session-10",
        "session-2",
    ]
    assert sorted(graph.unit_of) == ["D10:1", "D10:2", "D2:1", "D2:2", "D2:3"]
    assert {n["metadata"]["dia_id"] for n in nodes if n["node_type"] == "episodic"} == set(
        graph.unit_of
    )
    follows = sorted(
        (e["source_id"], e["target_id"]) for e in edges if e["relationship"] == "follows"
    )
    assert follows == [("D10:2", "D10:1"), ("D2:2", "D2:1"), ("D2:3", "D2:2")]
    part_of = [e for e in edges if e["relationship"] == "part_of"]
    assert len(part_of) == 5
    flat = variants[eval_locomo.FLAT_VARIANT]
    assert all(op["op"] == "add_node" for op in flat.operations)
    assert len(flat.operations) == 5


# -- ranking and metrics ---------------------------------------------------------


def test_dedupe_cut_skips_non_units_and_repeats_before_cutting() -> None:
    ranked = ["a", None, "a", "b", None, "c", "d"]
    assert evalkit.dedupe_cut(ranked, 3) == ["a", "b", "c"]
    assert evalkit.dedupe_cut([None, None], 3) == []


def test_metrics_by_hand() -> None:
    ranked = ["x", "g1", "y", "g2", "z"]
    gold = ["g1", "g2", "g3"]
    assert evalkit.recall_at(ranked, gold, 1) == 0.0
    assert evalkit.recall_at(ranked, gold, 2) == pytest.approx(1 / 3)
    assert evalkit.recall_at(ranked, gold, 5) == pytest.approx(2 / 3)
    assert evalkit.hit_at(ranked, gold, 1) == 0.0
    assert evalkit.hit_at(ranked, gold, 2) == 1.0
    assert evalkit.reciprocal_rank(ranked, gold) == 0.5
    assert evalkit.reciprocal_rank(["x"], gold) == 0.0
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert evalkit.ndcg_at(ranked, gold, 10) == pytest.approx(dcg / ideal)
    assert evalkit.ndcg_at(["g1"], ["g1"], 10) == 1.0
    assert evalkit.recall_at(ranked, [], 5) == 0.0


def test_score_query_group_hits_use_the_top_k_units() -> None:
    row = evalkit.score_query(
        ["D1:4", "D3:1", "D2:2"],
        ["D2:7"],
        (1, 2, 3),
        eval_locomo.session_of,
        (1, 3),
    )
    assert row["R@3"] == 0.0
    assert row["GroupHit@1"] == 0.0
    assert row["GroupHit@3"] == 1.0  # D2:2 is in the gold turn's session
    assert list(row) == evalkit.metric_names((1, 2, 3), (1, 3))


def test_rrf_fuse_by_hand() -> None:
    fused = evalkit.rrf_fuse([["a", "b", "c"], ["b", "d"]], k=1)
    # a: 1/2; b: 1/3 + 1/2; c: 1/4; d: 1/3
    assert fused == ["b", "a", "d", "c"]


# -- bootstrap -------------------------------------------------------------------


def test_bootstrap_is_seeded_and_paired() -> None:
    first = evalkit.bootstrap_samples(7, 5, seed=3)
    assert first == evalkit.bootstrap_samples(7, 5, seed=3)
    assert first != evalkit.bootstrap_samples(7, 5, seed=4)
    assert all(len(s) == 7 and all(0 <= i < 7 for i in s) for s in first)


def test_percentile_interval_indices() -> None:
    values = [float(i) for i in range(1000)]
    assert evalkit.percentile_interval(values) == (25.0, 974.0)
    assert evalkit.percentile_interval([2.0]) == (2.0, 2.0)


def test_bootstrap_ci_brackets_the_mean() -> None:
    values = [0.0, 1.0] * 50
    samples = evalkit.bootstrap_samples(len(values), 400, seed=0)
    low, high = evalkit.bootstrap_ci(values, samples)
    assert low < 0.5 < high
    assert low > 0.35 and high < 0.65
    constant = evalkit.bootstrap_ci([0.7] * 10, evalkit.bootstrap_samples(10, 30, seed=0))
    assert constant == pytest.approx((0.7, 0.7))


def test_paired_difference() -> None:
    samples = evalkit.bootstrap_samples(20, 200, seed=1)
    same = evalkit.paired_difference([0.3] * 20, [0.3] * 20, samples)
    assert same["diff"] == 0.0 and same["low"] == 0.0 and same["high"] == 0.0
    a = [1.0] * 10 + [0.0] * 10
    better = evalkit.paired_difference(a, [0.0] * 20, samples)
    assert better["diff"] == pytest.approx(0.5)
    assert 0.0 < better["low"] < 0.5 < better["high"]
    assert better["share_le_zero"] == 0.0
    with pytest.raises(ValueError):
        evalkit.paired_difference([1.0], [1.0, 2.0], samples)


# -- systems ----------------------------------------------------------------------


def test_system_specs() -> None:
    assert evalkit.parse_engine_spec("e3") == {"effort": 3}
    assert evalkit.parse_engine_spec("hybrid") == {"effort": 0, "expansion_hops": 0}
    assert evalkit.parse_engine_spec("engine[effort=6,neighbors_per_node=10,node_type=none]") == {
        "effort": 6,
        "neighbors_per_node": 10,
        "node_type": None,
    }
    assert evalkit.parse_engine_spec("rank-bm25") is None
    assert evalkit.split_systems("bm25, engine[effort=3,expansion_hops=2],flat:e9") == [
        "bm25",
        "engine[effort=3,expansion_hops=2]",
        "flat:e9",
    ]
    assert evalkit.check_systems(["flat:e9", "embed"], ("flat",)) == ["flat:e9", "embed"]
    with pytest.raises(ValueError, match="unknown system"):
        evalkit.check_systems(["nope"])
    with pytest.raises(ValueError, match="unknown system"):
        evalkit.check_systems(["other:e9"], ("flat",))
    with pytest.raises(ValueError, match="bad engine argument"):
        evalkit.parse_engine_spec("engine[effort]")


class CountingEmbedder:
    name = "counting"
    dimensions = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(t)), 1.0] for t in texts]


def test_caching_embedder_embeds_each_text_once() -> None:
    inner = CountingEmbedder()
    cached = evalkit.CachingEmbedder(inner)
    assert cached.embed(["bb", "a", "bb"]) == [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    assert cached.embed(["a", "ccc"])[1] == [3.0, 1.0]
    assert inner.calls == [["a", "bb"], ["ccc"]]
    assert (cached.name, cached.dimensions) == ("counting", 2)


@pytest.mark.skipif(not HAVE_RANK_BM25, reason="rank-bm25 not installed")
def test_rank_bm25_ranker_ranks_only_overlapping_units() -> None:
    units = [
        evalkit.Unit("u1", "the cat sat on the mat"),
        evalkit.Unit("u2", "a dog chased the cat the cat ran"),
        evalkit.Unit("u3", "volcano eruption"),
        evalkit.Unit("u4", "quiet evening"),
    ]
    ranker = evalkit.RankBm25Ranker(units)
    ranked = ranker.rank("Where is the CAT?", 10)
    assert set(ranked) == {"u1", "u2"}
    assert ranker.rank("volcano", 10) == ["u3"]
    assert ranker.rank("???", 10) == []
    assert ranker.rank("cat", 1) == ranked[:1]


# -- multi-hop ----------------------------------------------------------------------


def test_mention_form() -> None:
    assert eval_multihop.mention_form("Lilu (mythology)") == ("lilu",)
    assert eval_multihop.mention_form("New York City") == ("new", "york", "city")
    assert eval_multihop.mention_form("Abc") == ()
    assert eval_multihop.mention_form("1990") == ()


def test_title_links() -> None:
    units = [
        evalkit.Unit("p0", "Paris\nParis is the capital of France.", "Paris"),
        evalkit.Unit("p1", "France\nA country whose capital is Paris.", "France"),
        evalkit.Unit("p2", "Paris\nAnother Paris paragraph.", "Paris"),
        evalkit.Unit("p3", "Lyon\nA city; not in Parisian lists. France too.", "Lyon"),
        evalkit.Unit("p4", "Eve (band)\nA band.", "Eve (band)"),
    ]
    pairs = eval_multihop.title_links(units)
    # p0-p2 share a title; p1 mentions Paris (p0, p2); p0 mentions France; p3 mentions France.
    assert pairs == [("p0", "p1"), ("p0", "p2"), ("p1", "p2"), ("p1", "p3")]
    stats = eval_multihop.degree_stats(pairs, len(units))
    assert stats["edges"] == 4 and stats["max_degree"] == 3 and stats["isolated_share"] == 0.2


def test_multihop_loaders(tmp_path: Path) -> None:
    musique_corpus = [
        {"title": "A", "text": "alpha text"},
        {"title": "B", "text": "beta text"},
        {"title": "A", "text": "another alpha"},
    ]
    musique = [
        {
            "id": "2hop__1_2",
            "question": "q?",
            "paragraphs": [
                {"idx": 0, "title": "A", "paragraph_text": "another alpha", "is_supporting": True},
                {"idx": 1, "title": "B", "paragraph_text": "beta text", "is_supporting": True},
                {"idx": 2, "title": "A", "paragraph_text": "alpha text", "is_supporting": False},
            ],
        }
    ]
    hotpot_corpus = {"T1": ["First.", " Second."], "T2": ["Other."]}
    hotpot = [
        {
            "_id": "h1",
            "question": "q?",
            "type": "bridge",
            "supporting_facts": [["T1", 0], ["T1", 1], ["T2", 0]],
        }
    ]
    for name, value in (
        ("musique_train_corpus.json", musique_corpus),
        ("musique_train.json", musique),
        ("hotpotqa_train_corpus.json", hotpot_corpus),
        ("hotpotqa_train.json", hotpot),
    ):
        (tmp_path / name).write_text(json.dumps(value), encoding="utf-8")
    units, queries = eval_multihop.load_musique(tmp_path)
    assert [u.text for u in units] == ["A\nalpha text", "B\nbeta text", "A\nanother alpha"]
    assert queries[0].gold == ("p2", "p1") and queries[0].label == "2-hop"
    units, queries = eval_multihop.load_hotpotqa(tmp_path)
    assert units[0] == evalkit.Unit("T1", "T1\nFirst. Second.", "T1")
    assert queries[0].gold == ("T1", "T2") and queries[0].label == "bridge"


# -- end to end on a synthetic conversation ------------------------------------------


def test_locomo_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([synthetic_sample("c1"), synthetic_sample("c2")]), encoding="utf-8")
    systems = ["bm25", "embed", "hybrid", "e3", "e6", "flat:e3"]
    if HAVE_RANK_BM25:
        systems = ["rank-bm25", "rrf-baseline", *systems]
    embedder = evalkit.make_embedder("hashing", None)
    result = eval_locomo.evaluate(
        path, systems, embedder, rounds=20, seed=0, replay=2, progress=False
    )
    json.dumps(result)  # JSON-ready
    assert result["cleaning"]["questions_kept"] == 8
    head = result["summary"][eval_locomo.HEADLINE]
    assert head["embed"]["n"] == 6
    for system in systems:
        # Five turns per conversation: every gold turn is within the top 20.
        assert head[system]["R@20"]["mean"] == pytest.approx(1.0), system
        assert 0.0 <= head[system]["R@1"]["mean"] <= 1.0
    assert all(v["mismatches"] == 0 for v in result["replay"].values())
    assert set(result["replay"]) >= {"bm25", "embed", "hybrid", "e3"}
    # Units an engine row ranked are attributed to pipeline sources (8 questions, 5 turns each).
    assert 0 < sum(result["sources"]["e3"].values()) <= 8 * 5
    assert set(result["sources"]["e3"]) <= {"seed", "bm25", "neighbor"}
    text = eval_locomo.report(result, systems)
    assert "categories 1-4 pooled" in text and "category 5 (adversarial)" in text
    if HAVE_RANK_BM25:  # per-category paired R@5 of the paired rows
        by_category = result["paired_by_category"]
        assert set(by_category) == {entry["system"] for entry in result["paired"]}
        for cells in by_category.values():
            assert set(cells) <= {"1", "2", "3", "4", "5"}
            assert all(v["low"] <= v["diff"] <= v["high"] for v in cells.values())
        assert "by category" in text


def test_rows_to_pair_picks_best_engine_row_then_best_channel_row() -> None:
    summary = {
        name: {"R@5": {"mean": value}}
        for name, value in {
            "rank-bm25": 0.9,
            "rrf-baseline": 0.8,
            "bm25": 0.5,
            "embed": 0.6,
            "hybrid": 0.4,
            "e3": 0.45,
            "strong:e3": 0.44,
        }.items()
    }
    assert evalkit.rows_to_pair(summary, list(summary), "R@5") == ["e3", "embed"]


# -- what-if prototypes -------------------------------------------------------------


def test_light_stem_and_whatif_specs() -> None:
    assert [eval_whatif.light_stem(w) for w in ("researching", "activities", "cats", "is")] == [
        "research",
        "activity",
        "cat",
        "is",
    ]
    settings = eval_whatif.parse_whatif("whatif[fusion=rrf,support=0.5]")
    assert settings is not None
    assert settings["fusion"] == "rrf" and settings["support"] == 0.5 and settings["stem"] == 0
    assert eval_whatif.parse_whatif("e3") is None
    with pytest.raises(ValueError, match="unknown what-if setting"):
        eval_whatif.parse_whatif("whatif[nope=1]")


# The engine's stage 1 with equal-weight RRF (no graph stages).
ENGINE_RRF = "engine[effort=0,expansion_hops=0,s.fusion=rrf,s.keyword_weight=0.5]"


def test_whatif_rrf_row_reproduces_the_engine_stage_one() -> None:
    conversation = eval_locomo.load_locomo_samples([synthetic_sample()])[0]
    corpus = eval_locomo.corpus_spec(conversation)
    extra = evalkit.Query("extra", "Biscuit the puppy and the zebra", ("D2:1",), "4")
    corpus.queries.append(extra)
    embedder = evalkit.make_embedder("hashing", None)
    runs = evalkit.run_grid(
        [corpus],
        [ENGINE_RRF, "whatif[fusion=rrf]", "whatif[support=0.5,group=0.2,stem=1]"],
        embedder,
        eval_locomo.DEPTH,
        factory=eval_whatif.whatif_factory,
    )
    assert runs["whatif[fusion=rrf]"].rankings == runs[ENGINE_RRF].rankings
    assert all(len(r) <= 5 for r in runs["whatif[support=0.5,group=0.2,stem=1]"].rankings)
