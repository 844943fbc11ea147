"""Entity extraction, the entity index, the entity walk and its retrieval stage (effort >= 5)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphonomous import Graphonomous
from graphonomous.retrieval.entities import (
    EntityIndex,
    entity_key,
    extract_entities,
    noun_phrases,
    proper_noun_spans,
)
from graphonomous.retrieval.multihop import entity_walk
from graphonomous.retrieval.settings import with_settings

FORGOTTEN_AT = "2026-01-01T00:00:00.000Z"
ZIMBABWE = entity_key(["Zimbabwe"])


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as opened:
        yield opened


def test_proper_noun_spans_trim_function_words_and_keep_connectors() -> None:
    spans = proper_noun_spans("The Bank of America opened in New York City. What did Anna do?")
    assert spans == ["Bank of America", "New York City", "Anna"]


def test_line_breaks_and_capitalised_function_words_split_spans() -> None:
    assert proper_noun_spans("Journal of Ideas\nThe Journal of Ideas") == [
        "Journal of Ideas",
        "Journal of Ideas",
    ]


def test_codes_numbers_quotes_and_phrases_are_entities() -> None:
    found = extract_entities('Error E-47 on PS-2 after 5 km in 1987; she said "blue moon" twice.')
    assert {"e 47", "ps 2", "5 km", "1987", "blue moon"} <= set(found)


def test_noun_phrases_are_runs_of_content_words() -> None:
    assert noun_phrases("she joined a pottery class and the support group, then left") == [
        "pottery class",
        "support group",
    ]


def test_keys_are_stemmed_and_lower_cased() -> None:
    assert entity_key(["Pottery", "Classes"]) == entity_key(["pottery", "class"])
    assert "pump" in extract_entities("Pumps") or "pump" in extract_entities("The Pumps")


def test_extraction_is_deterministic() -> None:
    text = "Alice met Bob in Paris; Bob showed Alice the E-47 manual."
    assert list(extract_entities(text)) == list(extract_entities(text))


def test_index_add_remove_and_specificity() -> None:
    index = EntityIndex()
    index.add("a", "Zimbabwe borders Zambia.")
    index.add("b", "Victoria Falls lies between Zambia and Zimbabwe.")
    index.add("c", "Paris is in France.")
    assert set(index.mentions(ZIMBABWE)) == {"a", "b"}
    assert index.specificity(entity_key(["Paris"])) > index.specificity(ZIMBABWE) > 0.0
    index.add("a", "Nothing named here.")  # re-indexing replaces
    assert set(index.mentions(ZIMBABWE)) == {"b"}
    index.remove("b")
    assert index.mentions(ZIMBABWE) == {} and index.specificity(ZIMBABWE) == 0.0


def test_query_entities_match_names_and_lower_case_ngrams_not_single_words() -> None:
    index = EntityIndex()
    index.add("a", "The Bubye River flows. Located near it.")
    index.add("b", "A support group, at last.")
    found = index.query_entities("where is the bubye river and the support group located?")
    assert "bubye river" in found and "support group" in found
    assert "locat" not in found


def test_entity_walk_reaches_passages_sharing_entities_with_seeds() -> None:
    index = EntityIndex()
    index.add("seed", "Bubye River is a river in Zimbabwe.")
    index.add("bridge", "Victoria Falls is a waterfall in Zimbabwe.")
    index.add("other", "Paris is in France.")
    mass = entity_walk(
        index, {"seed": 1.0}, [], max_df=10, query_weight=1.0, restart=0.5, epsilon=1e-6
    )
    assert mass.get("bridge", 0.0) > 0.0
    assert "other" not in mass
    assert max(mass.values()) == pytest.approx(1.0)


def test_hub_entities_are_skipped() -> None:
    index = EntityIndex()
    index.add("seed", "Zimbabwe has a river.")
    index.add("bridge", "Zimbabwe has a waterfall.")
    mass = entity_walk(
        index, {"seed": 1.0}, [], max_df=1, query_weight=1.0, restart=0.5, epsilon=1e-6
    )
    assert mass == {}


def _bridge_graph(graph: Graphonomous) -> None:
    graph.store_node("The Bubye River is a tributary of the Limpopo in Zimbabwe.", node_id="hop1")
    graph.store_node("Victoria Falls lies on the border of Zambia and Zimbabwe.", node_id="hop2")
    for i in range(6):
        graph.store_node(f"Unrelated note {i} about gardening tools.", node_id=f"noise{i}")


def test_effort_six_brings_in_the_bridge_passage(graph: Graphonomous) -> None:
    _bridge_graph(graph)
    query = "Which waterfall is in the country of the Bubye River?"
    deep = graph.retrieve_context(query, effort=6, limit=3)
    assert "entity_walk" in deep["stats"]["mechanisms"]
    ids = [r["node_id"] for r in deep["results"]]
    assert ids[:2] == ["hop1", "hop2"] or set(ids[:2]) == {"hop1", "hop2"}
    shallow = graph.retrieve_context(query, effort=3, limit=3)
    assert "entity_walk" not in shallow["stats"]["mechanisms"]
    assert shallow["stats"]["entity_nodes"] == 0


def test_entity_gain_zero_switches_the_stage_off(graph: Graphonomous) -> None:
    _bridge_graph(graph)
    off = with_settings(entity_gain=0.0)
    result = graph.retrieve_context("Bubye River country", effort=6, settings=off)
    assert "entity_walk" not in result["stats"]["mechanisms"]


def test_entity_index_follows_writes_and_forgetting(graph: Graphonomous) -> None:
    _bridge_graph(graph)
    index = graph.entity_index()
    assert "hop2" in index.mentions(ZIMBABWE)
    graph.store_node("Harare is the capital of Zimbabwe.", node_id="late")
    assert "late" in index.mentions(ZIMBABWE)
    graph.delete_node("late")
    assert "late" not in index.mentions(ZIMBABWE)
    graph.store.update_node("hop2", forgotten_at=FORGOTTEN_AT)
    result = graph.retrieve_context("Which waterfall is near the Bubye River?", effort=6)
    assert "hop2" not in [r["node_id"] for r in result["results"]]
    # A raw write (another process, say) reaches the index through the change log.
    assert "hop2" not in graph.entity_index().mentions(ZIMBABWE)
