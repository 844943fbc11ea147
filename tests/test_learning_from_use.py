"""Learning from use (issue "Use must make it better"): experience, credit, aids, decay.

Each test pins one rule of SPEC §9.3.6 / §11 / §12.1 that the LoCoMo learning
evaluation (benchmarks/eval_learning.py) showed to matter; the last one runs a
CI-sized version of that evaluation and fails if learning lowers unseen-question
recall.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from graphonomous.api import Graphonomous
from graphonomous.retrieval.experience import RetrievalTrace
from graphonomous.retrieval.settings import with_settings

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"

# Five similar passages; which one answers depends on the question.
PASSAGES = {
    "seal": "The pump seal on line 3 leaks when the pressure rises above six bar",
    "motor": "The pump motor on line 3 overheats when the pressure rises above six bar",
    "valve": "The pump valve on line 3 sticks when the pressure rises above six bar",
    "gauge": "The pump gauge on line 3 drifts when the pressure rises above six bar",
    "filter": "The pump filter on line 3 clogs when the pressure rises above six bar",
}
OFF_TOPIC = "Quarterly budget review for the marketing team is due in May"


@pytest.fixture
def graph() -> Graphonomous:
    graph = Graphonomous(db=":memory:")
    graph.apply_batch(
        [{"op": "add_node", "node": {"id": key, "content": text}} for key, text in PASSAGES.items()]
        + [{"op": "add_node", "node": {"id": "budget", "content": OFF_TOPIC}}]
    )
    return graph


def _rank(graph: Graphonomous, query: str) -> list[str]:
    found = graph.retrieve_context(query, limit=6, effort=0)
    return [r["node_id"] for r in found["results"]]


def test_a_failure_objects_only_for_similar_questions(graph: Graphonomous) -> None:
    question = "what happens to the pump on line 3 above six bar"
    before = _rank(graph, question)
    used = before[:3]
    graph.learn_from_outcome("answer", "failure", 1.0, used)
    after = _rank(graph, question)
    # The three that failed this question fall below the two that were not tried.
    assert set(after[:2]) == set(before[3:5])
    # An unrelated question is not reordered by that experience.
    unrelated = graph.retrieve_context("marketing budget review in May", limit=6, effort=0)
    assert unrelated["stats"]["experience"] == 0


def test_a_success_vouches_for_its_nodes_on_a_paraphrase(graph: Graphonomous) -> None:
    question = "does the pump filter on line 3 clog at high pressure"
    ranked = _rank(graph, question)
    graph.learn_from_outcome("answer", "success", 1.0, ranked[:3])
    lifted = graph.retrieve_context(
        "does the pump filter on line 3 clog when pressure is high", limit=6, effort=0
    )
    assert lifted["stats"]["experience"] == 3
    assert "experience" in lifted["stats"]["mechanisms"]


def test_learned_utility_lifts_a_node_for_questions_like_the_one_it_answered(
    graph: Graphonomous,
) -> None:
    """An attribution moves Q as seed 004 says (0.5 -> 0.65); the blend lifts the node by
    that Q for the question that earned it and not at all for an unrelated question
    (query cosine under the embedder's unrelated floor): there it blends the prior 0.5,
    as every node that never learned does."""
    question = "does the pump filter on line 3 clog at high pressure"
    graph.learn_from_outcome("answer", "success", 1.0, ["filter"], evidence={"query": question})
    q_value = graph.get_node("filter")["node"]["q_value"]
    assert q_value == pytest.approx(0.65)
    no_experience = {"experience_gain": 0.0, "experience_penalty": 0.0}
    blend = with_settings(**no_experience)
    phase_one = with_settings(utility_weight=0.0, **no_experience)
    for query, blended_q in ((question, q_value), ("gauge drifts above six bar", 0.5)):
        first = graph.retrieve_context(query, limit=6, effort=0, settings=phase_one)
        second = graph.retrieve_context(query, limit=6, effort=0, settings=blend)
        before = {r["node_id"]: r["score"] for r in first["results"]}
        after = {r["node_id"]: r["score"] for r in second["results"]}
        assert second["stats"]["utility_rerank"] is True and set(after) == set(before)
        for node_id, score in after.items():
            q = blended_q if node_id == "filter" else 0.5
            assert score == pytest.approx(0.7 * before[node_id] + 0.3 * q, abs=2e-6), query


def test_a_q_value_earned_without_a_known_query_blends_as_seed_004_says(
    graph: Graphonomous,
) -> None:
    """No retrieval before it and no ``evidence.query``: nothing tells which questions
    earned the Q-value, so it lifts the node for every question (match 1)."""
    graph.learn_from_outcome("answer", "success", 1.0, ["filter"])
    settings = {"experience_gain": 0.0, "experience_penalty": 0.0}
    query = "gauge drifts above six bar"
    plain = graph.retrieve_context(
        query, limit=6, effort=0, settings=with_settings(utility_weight=0.0, **settings)
    )
    blended = graph.retrieve_context(query, limit=6, effort=0, settings=with_settings(**settings))
    before = {r["node_id"]: r["score"] for r in plain["results"]}
    after = {r["node_id"]: r["score"] for r in blended["results"]}
    assert after["filter"] == pytest.approx(0.7 * before["filter"] + 0.3 * 0.65, abs=2e-6)


# Stage 1 alone: no Q blend, no experience, so a score is (fused / best fused) × confidence.
STAGE_ONE = with_settings(utility_weight=0.0, experience_gain=0.0, experience_penalty=0.0)
FILTER_QUESTION = "does the pump filter on line 3 clog at high pressure"
# Unrelated to FILTER_QUESTION (query cosine under the hashing floor) yet finding the filter.
OTHER_QUESTION = "filter clogs above six bar"


def _own_scores(graph: Graphonomous, query: str) -> dict[str, float]:
    found = graph.retrieve_context(query, limit=6, effort=0, settings=STAGE_ONE)
    return {r["node_id"]: r["score"] for r in found["results"]}


def test_learned_confidence_ranks_a_node_only_for_questions_like_the_one_that_earned_it(
    graph: Graphonomous,
) -> None:
    """An attribution moves the stored confidence in full (seed 003: 0.5 -> 0.6); ranking
    counts that step for the question that earned it and not for an unrelated one, where
    the node scores exactly what it scored before it learned."""
    unlearned = {query: _own_scores(graph, query) for query in (FILTER_QUESTION, OTHER_QUESTION)}
    graph.learn_from_outcome(
        "answer", "success", 1.0, ["filter"], evidence={"query": FILTER_QUESTION}
    )
    assert graph.get_node("filter")["node"]["confidence"] == pytest.approx(0.6)
    same = _own_scores(graph, FILTER_QUESTION)
    assert same["filter"] == pytest.approx(
        unlearned[FILTER_QUESTION]["filter"] * 0.6 / 0.5, abs=2e-6
    )
    other = graph.retrieve_context(OTHER_QUESTION, limit=6, effort=0, settings=STAGE_ONE)
    assert {r["node_id"]: r["score"] for r in other["results"]} == unlearned[OTHER_QUESTION]
    reported = {r["node_id"]: r["confidence"] for r in other["results"]}
    assert reported["filter"] == pytest.approx(0.6)  # the stored value, unchanged


def test_confidence_from_feedback_or_an_unknown_query_ranks_in_full(graph: Graphonomous) -> None:
    """Only the step of an attribution with a known query is conditioned: feedback's step
    and an outcome naming no query count for every question."""
    unlearned = _own_scores(graph, OTHER_QUESTION)
    graph.learn_from_outcome(
        "answer", "success", 1.0, ["filter"], evidence={"query": FILTER_QUESTION}
    )
    graph.learn_from_feedback("filter", "positive")  # 0.6 -> 0.68
    graph.learn_from_outcome("answer", "success", 1.0, ["seal"])  # no query known: 0.6
    assert graph.get_node("filter")["node"]["confidence"] == pytest.approx(0.68)
    after = _own_scores(graph, OTHER_QUESTION)
    assert after["filter"] == pytest.approx(unlearned["filter"] * 0.58 / 0.5, abs=2e-6)
    assert after["seal"] == pytest.approx(unlearned["seal"] * 0.6 / 0.5, abs=2e-6)


def test_an_attribution_records_the_confidence_it_moved(graph: Graphonomous) -> None:
    """The step ranking conditions is kept on the outcome node (a bundle moves nothing)."""
    from graphonomous.retrieval.experience import CONFIDENCE_UPDATES_KEY

    cited = graph.learn_from_outcome("answer", "success", 1.0, ["filter"])
    bundle = graph.learn_from_outcome("answer", "success", 1.0, ["seal", "motor", "valve"])
    rows = graph.get_node(cited["outcome_node_id"])["node"]["metadata"][CONFIDENCE_UPDATES_KEY]
    assert rows == [
        {"node_id": "filter", "confidence_before": 0.5, "confidence_after": pytest.approx(0.6)}
    ]
    bundle_node = graph.get_node(bundle["outcome_node_id"])["node"]
    assert CONFIDENCE_UPDATES_KEY not in bundle_node["metadata"]


def test_experience_off_means_no_change(graph: Graphonomous) -> None:
    question = "what happens to the pump on line 3 above six bar"
    before = graph.retrieve_context(question, limit=6, effort=0)
    used = [r["node_id"] for r in before["results"][:5]]
    graph.learn_from_outcome("answer", "failure", 1.0, used)
    off = with_settings(experience_gain=0.0, experience_penalty=0.0, utility_weight=0.0)
    after = graph.retrieve_context(question, limit=6, effort=0, settings=off)
    assert [r["node_id"] for r in after["results"]] == [r["node_id"] for r in before["results"]]


def test_outcomes_written_by_another_connection_count(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    first = Graphonomous(db=db)
    first.apply_batch(
        [{"op": "add_node", "node": {"id": key, "content": text}} for key, text in PASSAGES.items()]
    )
    question = "what happens to the pump on line 3 above six bar"
    before = _rank(first, question)
    second = Graphonomous(db=db)
    second.learn_from_outcome("answer", "failure", 1.0, before[:3], evidence={"query": question})
    assert set(_rank(first, question)[:2]) == set(before[3:5])
    second.close()
    first.close()


def test_trace_finds_the_retrieval_an_outcome_answers() -> None:
    trace = RetrievalTrace(size=3)
    trace.record("first", ["a", "b", "c"])
    trace.record("second", ["c", "d", "e"])
    assert trace.find(["c", "d"]).query == "second"  # type: ignore[union-attr]
    assert trace.find(["a", "b"]).query == "first"  # type: ignore[union-attr]
    assert trace.find(["x", "y", "a"]) is None  # less than half explained
    trace.forget(["d"])
    assert trace.find(["c", "d"]).query == "first"  # type: ignore[union-attr]


def test_erase_drops_the_queries_that_returned_the_node(graph: Graphonomous) -> None:
    _rank(graph, "pump seal leak")
    assert graph.retrieval_trace.find(["seal"]) is not None
    graph.gdpr_erase("seal")
    assert graph.retrieval_trace.find(["seal"]) is None


@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo dev half not at {LOCOMO}")
def test_learning_does_not_lower_unseen_question_recall() -> None:
    """CI-sized eval_learning: one conversation, both directions, efforts 0 and 3."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import eval_learning

    code = eval_learning.main(
        [
            "--data",
            str(LOCOMO),
            "--conversations",
            "1",
            "--efforts",
            "0,3",
            "--modes",
            "both",
            "--credit",
            "bundle",
            "--bootstrap",
            "100",
            "--quiet",
            "--check",
        ]
    )
    assert code == 0


def test_consolidation_never_merges_two_episodes() -> None:
    graph = Graphonomous(db=":memory:")
    graph.apply_batch(
        [
            {
                "op": "add_node",
                "node": {"id": i, "content": "Thanks, that is great!", "node_type": t},
            }
            for i, t in (
                ("e1", "episodic"),
                ("e2", "episodic"),
                ("s1", "semantic"),
                ("s2", "semantic"),
            )
        ]
    )
    merge = next(s for s in graph.run_consolidation()["stages"] if s["name"] == "merge")
    assert merge["skipped_episodes"] == 1
    assert [(m["kept"], m["merged"]) for m in merge["merges"]] == [("s1", "s2")]
    assert graph.store.require_node("e2").forgotten_at is None


def test_experienced_score_rule_and_doctests() -> None:
    """The one home of experience's score rule: noisy-OR lift scaled by standing, then a penalty."""
    import doctest

    from graphonomous.retrieval import experience
    from graphonomous.retrieval.experience import Evidence, experienced_score

    assert doctest.testmod(experience).failed == 0
    assert experienced_score(0.4, Evidence(0.0, 0.0), 0.25, 0.5, 0.4) == 0.4
    lifted = experienced_score(0.4, Evidence(0.8, 0.0), 0.25, 0.5, 0.4)
    assert abs(lifted - (0.4 + 0.25 * 0.8 * 0.6)) < 1e-12
    both = experienced_score(0.4, Evidence(0.8, 0.5), 0.25, 0.5, 0.4)
    assert abs(both - lifted * 0.75) < 1e-12
    assert experienced_score(1.0, Evidence(1.0, 0.0), 1.0, 0.5, 1.0) == 1.0  # never past 1
    # A candidate at half the best score gains half the lift: a weak match cannot
    # ride an alike earlier question past the strong ones.
    weak = experienced_score(0.2, Evidence(1.0, 0.0), 0.25, 0.5, 0.4)
    assert abs(weak - (0.2 + 0.25 * 1.0 * 0.5 * 0.8)) < 1e-12


def test_experience_index_add_is_what_refresh_indexes() -> None:
    """`add` indexes an outcome under each causal node; evidence reads it back."""
    from graphonomous.embed.hashing import HashingEmbedder
    from graphonomous.retrieval.experience import ExperienceIndex, Outcome

    embedder = HashingEmbedder()
    index = ExperienceIndex()
    index.add("o1", Outcome("where did Ana travel in May", 0.0, ("n1", "n2")))
    assert len(index) == 1
    query = embedder.embed(["where did Ana travel in May"])[0]
    found = index.evidence(query, embedder.dimensions, ["n1", "n3"], embedder.embed, 0.35)
    assert set(found) == {"n1"}
    assert found["n1"].support == 0.0 and found["n1"].objection > 0.99


# A failure objects to a node for the words it was found by, not for the whole node.
MOVES = {
    "move": "Alice moved to Berlin in May, and her garden project starts in June",
    "paris": "Alice says her friend Bob moved to Paris in April",
    "lisbon": "Alice heard that Carol's garden project in Lisbon starts in July",
}


def _experienced(graph: Graphonomous, query: str) -> int:
    found = graph.retrieve_context(query, limit=3, effort=0)
    assert "move" in [r["node_id"] for r in found["results"]]
    return int(found["stats"]["experience"])


def test_a_failure_objects_for_the_words_that_found_the_node() -> None:
    graph = Graphonomous(db=":memory:")
    graph.apply_batch(
        [{"op": "add_node", "node": {"id": key, "content": text}} for key, text in MOVES.items()]
    )
    graph.learn_from_outcome(
        "answer", "failure", 1.0, ["move"], evidence={"query": "when did Alice move to Berlin"}
    )
    # Found again through "Berlin" and "move", in other words around them: it objects.
    assert _experienced(graph, "Berlin: which month did Alice move there?") == 1
    # Found through "garden" and "start": that failure says nothing about it, although
    # the two questions are alike as wholes (hashing cosine 0.52, above the 0.35 at
    # which the cosine rule would have objected).
    assert _experienced(graph, "when did Alice start the garden") == 0
