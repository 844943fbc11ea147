"""RM3 pseudo-relevance feedback: expansion terms and the effort >= 5 stage."""

from __future__ import annotations

from graphonomous import Graphonomous
from graphonomous.retrieval.prf import expansion_terms
from graphonomous.retrieval.settings import with_settings


def _idf(term: str) -> float:
    return {"the": 0.01}.get(term, 1.0)


def test_expansion_terms_weight_by_document_score_and_skip_query_terms() -> None:
    documents = [("valve valve gasket the", 1.0), ("gasket seal the", 0.5)]
    terms = expansion_terms(documents, ["valve"], 2, lambda t: t, _idf)
    assert terms == ["gasket", "seal"]


def test_expansion_terms_are_deterministic_and_skip_short_and_numeric_tokens() -> None:
    documents = [("an ox 1234 pump", 1.0), ("pump seal", 1.0)]
    assert expansion_terms(documents, [], 5, lambda t: t, _idf) == ["pump", "seal"]
    assert expansion_terms([], ["pump"], 5, lambda t: t, _idf) == []


def test_feedback_stage_runs_only_when_weighted_and_at_effort_five_or_more() -> None:
    with Graphonomous(":memory:") as graph:
        graph.store_node("The pump lost pressure; the gasket failed.", node_id="a")
        graph.store_node("Replace the gasket and check the seal.", node_id="b")
        graph.store_node("Gardening tools in the shed.", node_id="c")
        on = with_settings(prf_weight=0.5)
        deep = graph.retrieve_context("pump pressure", effort=6, settings=on)
        assert "feedback" in deep["stats"]["mechanisms"]
        assert "b" in [r["node_id"] for r in deep["results"]]
        shallow = graph.retrieve_context("pump pressure", effort=3, settings=on)
        assert "feedback" not in shallow["stats"]["mechanisms"]
        default = graph.retrieve_context("pump pressure", effort=6)
        assert "feedback" not in default["stats"]["mechanisms"]
