"""LLM-free relations: cue rules, the relation index, and the links a write makes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.ingest import scan_directory
from graphonomous.learning import relation_links
from graphonomous.retrieval import relations
from graphonomous.retrieval.relations import (
    DIRECT_CONFIDENCE,
    HEDGED_CONFIDENCE,
    RelationIndex,
    extract_relations,
)


def _triples(text: str) -> list[tuple[str, str, str | None, str]]:
    return [(r.subject_key, r.kind, r.polarity, r.object_key) for r in extract_relations(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Births increase population.", [("birth", "causes", "positive", "population")]),
        (
            "Predation reduces the prey population.",
            [("predation", "causes", "negative", "prey")],
        ),
        (
            "Higher temperatures raise evaporation.",
            [("temperature", "causes", "positive", "evaporation")],
        ),
        (
            "Overfishing leads to stock collapse.",
            [("overfish", "causes", "positive", "stock collapse")],
        ),
        ("Crop failure is caused by drought.", [("drought", "causes", "positive", "crop failure")]),
        ("Delays due to rain are common.", [("rain", "causes", "positive", "delay")]),
        ("The parser depends on the tokenizer.", [("parser", "depends_on", None, "tokenizer")]),
        ("Warming in turn suppresses ice cover.", [("warm", "causes", "negative", "ice cover")]),
    ],
)
def test_cues_give_directed_relations(text: str, expected: list[tuple[str, ...]]) -> None:
    assert _triples(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The valve does not cause pressure loss.",  # negation
        "Vaccination never causes autism.",
        "Moderate exercise causes no harm.",
        "Does caffeine raise blood pressure?",  # a question asserts nothing
        "We left because it rained.",  # a plain "because" introduces a clause
        "It raises the price.",  # a pronoun is no mention
        "We want to raise prices.",  # "to" + verb has no subject
        "Ice cover, which reflects sunlight, lowers temperature.",  # not adjacent
        "The heater, which the thermostat runs, raises the temperature.",
        "Increased demand increases demand.",  # one quantity
    ],
)
def test_no_relation_where_the_cue_is_negated_or_the_mentions_are_not_adjacent(
    text: str,
) -> None:
    assert extract_relations(text) == []


def test_hedges_lower_the_confidence_and_lines_are_kept() -> None:
    direct, hedged = extract_relations(
        "Demand drives prices.\n\nIn dry years, demand may\nincrease imports."
    )
    assert direct.confidence == DIRECT_CONFIDENCE and (direct.line_start, direct.line_end) == (0, 0)
    assert hedged.confidence == HEDGED_CONFIDENCE and (hedged.line_start, hedged.line_end) == (2, 3)
    assert hedged.object_key == "import"


def test_the_index_follows_adds_and_removals() -> None:
    index = RelationIndex()
    index.add("x", "Births increase population.")
    index.add("y", "Population increases births.")
    assert list(index.stating_subject("causes", "population")) == ["y"]
    assert list(index.stating_object("causes", "population")) == ["x"]
    index.add("y", "Nothing relevant here.")
    assert list(index.stating_subject("causes", "population")) == []
    index.remove("x")
    assert len(index) == 0


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as opened:
        yield opened


def test_a_loop_stated_in_two_notes_becomes_a_two_cycle(graph: Graphonomous) -> None:
    x = graph.store_node("More rabbits increase the fox population.", node_id="x")
    y = graph.store_node("The fox population reduces rabbits.", node_id="y")
    assert x["relation_links"] == {"linked": 0, "hub_keys_skipped": 0, "unlinked": 0}
    assert y["relation_links"] == {"linked": 2, "hub_keys_skipped": 0, "unlinked": 0}
    forward = graph.store.find_edge("x", "y", "causes")
    back = graph.store.find_edge("y", "x", "causes")
    assert forward is not None and back is not None
    assert forward.metadata["via"] == "fox"
    assert (forward.metadata["cue"], forward.metadata["polarity"]) == ("increase", "positive")
    assert (back.metadata["cue"], back.metadata["polarity"]) == ("reduces", "negative")
    assert forward.strength == round(relation_links.STRENGTH_SCALE * DIRECT_CONFIDENCE, 3)
    result = graph.retrieve_context("rabbits fox population", limit=1, effort=0)
    assert result["topology"]["routing"] == "deliberate"


def test_an_acyclic_chain_stays_a_dag(graph: Graphonomous) -> None:
    graph.store_node("Rain raises the river level.", node_id="a")
    graph.store_node("The river level drives flooding.", node_id="b")
    graph.store_node("Flooding damages crops.", node_id="c")  # "damages" is no cue
    assert graph.store.find_edge("a", "b", "causes") is not None
    assert graph.store.find_edge("b", "c", "causes") is None
    result = graph.retrieve_context("river level", limit=2, effort=0)
    assert result["topology"]["routing"] == "fast"


def test_kinds_and_agents_do_not_chain(graph: Graphonomous) -> None:
    graph.store_node("The parser depends on the tokenizer.", node_id="p")
    graph.store_node("The tokenizer raises errors.", node_id="t")  # causes, not depends_on
    graph.store_node("The tokenizer depends on the alphabet.", node_id="u", agent_id="other")
    assert graph.store.list_edges() == []


def test_a_hub_key_is_skipped_and_counted(
    graph: Graphonomous, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relation_links, "MAX_COUNTERPARTS", 1)
    graph.store_node("Load raises latency.", node_id="a")
    graph.store_node("Traffic raises latency.", node_id="b")
    stored = graph.store_node("Latency reduces throughput.", node_id="c")
    assert stored["relation_links"] == {"linked": 0, "hub_keys_skipped": 1, "unlinked": 0}


def test_ingest_links_chunks_with_file_lines(tmp_path: Path, graph: Graphonomous) -> None:
    filler = "\n".join(f"Line {i} says nothing in particular." for i in range(60))
    (tmp_path / "loop.md").write_text(
        "# Predators\n\nMore rabbits increase the fox population.\n\n"
        + filler
        + "\n\n# Prey\n\nThe fox population reduces rabbits.\n",
        encoding="utf-8",
    )
    scan_directory(graph, tmp_path)
    edges = graph.store.list_edges(relationship="causes")
    assert len(edges) == 2 and {e.source_id for e in edges} == {e.target_id for e in edges}
    lines = sorted(tuple(e.metadata["lines"]) for e in edges)
    assert lines == [(3, 3), (68, 68)]  # the file's own line numbers
    assert {e.metadata["path"] for e in edges} == {str(tmp_path / "loop.md")}


def test_markup_is_no_part_of_the_words() -> None:
    text = (
        "Overall, <u>insulin causes blood glucose level to decrease.</u> The amount of `chickens`"
        " increases the amount of `eggs`, which in turn increases the amount of `chickens`."
        " [[Glucagon|Glucagon]] raises *blood glucose*."
    )
    assert _triples(text) == [
        ("insulin", "causes", "positive", "blood glucose"),
        ("chicken", "causes", "positive", "egg"),
        ("egg", "causes", "positive", "chicken"),
        ("glucagon", "causes", "positive", "blood glucose"),
    ]


def test_covariation_states_a_cause_and_its_sign() -> None:
    assert _triples("As the number of wolves increases, the number of deer decreases.") == [
        ("wolve", "causes", "negative", "deer")
    ]
    assert _triples("When demand rises, prices also rise.") == [
        ("demand", "causes", "positive", "price")
    ]


def test_a_word_found_everywhere_names_no_one_quantity(
    graph: Graphonomous, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relation_links, "MAX_COUNTERPARTS", 2)
    graph.store_node("Drought raises risk.", node_id="a")
    graph.store_node("The risk of floods is low.", node_id="b")
    graph.store_node("Every plan has some risk.", node_id="c")
    stored = graph.store_node("Risk reduces trade.", node_id="d")
    assert stored["relation_links"] == {"linked": 0, "hub_keys_skipped": 1, "unlinked": 0}
    assert graph.store.find_edge("a", "d", "causes") is None


@pytest.mark.parametrize(
    "text",
    [
        "Transpiration decreases with increasing humidity.",  # intransitive: no object
        "The population increases by a percentage.",
        "Afterwards produce sterile seeds.",  # an adverb is no mention
        "raise KeyError(key)",  # a line of code states no relation
        "value = causes(x)",
    ],
)
def test_intransitive_verbs_adverbs_and_code_state_nothing(text: str) -> None:
    assert extract_relations(text) == []


def test_a_subject_keeps_the_noun_it_complements_and_docstrings_stay_prose() -> None:
    assert _triples("Vasodilation of arterioles increases blood flow.") == [
        ("vasodilation of arteriole", "causes", "positive", "blood flow")
    ]
    code = 'def test_masks():\n    """Test that masks reduce transmission."""\n    assert x\n'
    (found,) = extract_relations(code)
    assert (found.subject_key, found.object_key, found.line_start) == ("mask", "transmission", 1)


def test_the_index_is_saved_and_a_fresh_process_reads_only_later_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "saved.db")
    with Graphonomous(db) as writer:
        writer.store_node("More rabbits increase the fox population.", node_id="x")
        writer.store_node("Births increase population.", node_id="z")
        writer.store_node("The fox population reduces rabbits.", node_id="y")
    index = RelationIndex()
    index.add("x", "More rabbits increase the fox population.")
    assert RelationIndex.load(index.dump()) is not None
    assert RelationIndex.load(b"not a dump") is None
    from graphonomous.retrieval import relations

    calls: list[str] = []
    original = relations.extract_relations
    monkeypatch.setattr(
        relations, "extract_relations", lambda text: calls.append(text) or original(text)
    )
    with Graphonomous(db) as reader:
        loaded = relations.relation_index(reader.engine)
        assert list(loaded.stating_subject("causes", "fox")) == ["y"]
        assert [r.object_key for r in loaded.relations_of("z")] == ["population"]
    # The copy saved at the first write was loaded: only the nodes written after it
    # (replayed from the change log) were read again.
    assert sorted(calls) == ["Births increase population.", "The fox population reduces rabbits."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("More rabbits -> more foxes", [("rabbit", "causes", None, "fox")]),
        (
            "more births → more rabbits → more births",
            [("birth", "causes", None, "rabbit"), ("rabbit", "causes", None, "birth")],
        ),
        ("- Fewer prey --> predators", [("prey", "causes", None, "predator")]),
        (
            "Temperature feeds back into evaporation.",
            [("temperature", "causes", None, "evaporation")],
        ),
        (
            "Insulin stimulates glycogen synthesis.",
            [("insulin", "causes", "positive", "glycogen synthesis")],
        ),
        ("Oestrogen promotes LH release.", [("oestrogen", "causes", "positive", "lh release")]),
        ("Shade limits growth.", [("shade", "causes", "negative", "growth")]),
        ("Glucose levels rise; the rabbit population grows.", []),
    ],
)
def test_arrows_feedback_and_stimulation_are_cues(
    text: str, expected: list[tuple[str, ...]]
) -> None:
    assert _triples(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2H2 + O2 → 2H2O",  # a reaction: formulas, no words
        "Glucose + oxygen → carbon dioxide + water",  # an equation line
        "x = a -> b",
        "A[Chickens] -->|+| B[Eggs]",
        "Speed limits reduce accidents.",  # "limits" the noun is no cue here
        "nostril → nasal cavity → pharynx",  # a path between plain nouns, no change word
    ],
)
def test_reactions_and_equations_make_no_arrow_relation(text: str) -> None:
    assert _triples(text) == []


def test_a_trailing_measure_is_no_part_of_the_key() -> None:
    assert _triples("The rabbit population raises fox numbers.") == [
        ("rabbit", "causes", "positive", "fox")
    ]
    assert _triples("Insulin lowers blood glucose levels.") == [
        ("insulin", "causes", "negative", "blood glucose")
    ]


def _update(graph: Graphonomous, node_id: str, content: str) -> dict[str, int]:
    fields = {"content": content}
    result = graph.apply_batch([{"op": "update_node", "id": node_id, "fields": fields}])
    links: dict[str, int] = result["relation_links"]
    return links


def test_a_content_update_re_derives_the_node_relations(graph: Graphonomous) -> None:
    graph.store_node("More rabbits increase the fox population.", node_id="x")
    graph.store_node("The fox population reduces rabbits.", node_id="y")
    graph.store_edge("x", "y", "supports")  # a caller's edge: never the rule's to delete
    # y no longer says what foxes do: both links through "fox" are stale.
    assert _update(graph, "y", "Foxes sleep in dens.") == {
        "linked": 0,
        "hub_keys_skipped": 0,
        "unlinked": 2,
    }
    assert graph.store.find_edge("x", "y", "causes") is None
    assert graph.store.find_edge("y", "x", "causes") is None
    assert graph.store.find_edge("x", "y", "supports") is not None
    # y states the back-link again: it is linked as a new statement would be.
    assert _update(graph, "y", "Foxes lower the rabbit count.") == {
        "linked": 2,
        "hub_keys_skipped": 0,
        "unlinked": 0,
    }
    kept = graph.store.find_edge("x", "y", "causes")
    assert kept is not None
    # Restating the same relations keeps the edge (same id), nothing unlinked.
    assert _update(graph, "y", "Foxes lower rabbit numbers.")["unlinked"] == 0
    again = graph.store.find_edge("x", "y", "causes")
    assert again is not None and again.id == kept.id


def test_an_update_without_content_leaves_the_links(graph: Graphonomous) -> None:
    graph.store_node("More rabbits increase the fox population.", node_id="x")
    graph.store_node("The fox population reduces rabbits.", node_id="y")
    result = graph.apply_batch([{"op": "update_node", "id": "y", "fields": {"confidence": 0.9}}])
    assert "relation_links" not in result
    assert graph.store.find_edge("y", "x", "causes") is not None


def test_a_mathml_arrow_is_an_arrow_and_its_annotation_no_words() -> None:
    annotation = '<annotation>{"fontFamily":"Times"}</annotation>'
    arrow = f"<math><semantics><mo>→</mo>{annotation}</semantics></math>"
    assert _triples(f"<b>more sweat </b>{arrow}<b> more cooling</b>") == [
        ("sweat", "causes", None, "cool")
    ]


def test_no_word_is_in_two_word_lists() -> None:
    homes: dict[str, str] = {}
    twice = []
    for name, words in relations.WORD_LISTS.items():
        for word in words:
            if word in homes and homes[word] != name:
                twice.append((word, homes[word], name))
            homes.setdefault(word, name)
    assert twice == []


def test_the_word_sets_are_unions_of_the_word_lists() -> None:
    listed = {word for words in relations.WORD_LISTS.values() for word in words}
    for name in (
        "HEDGES",
        "NEGATIONS",
        "BETWEEN_WORDS",
        "MODIFIERS",
        "DETERMINERS",
        "ARROW_CHANGE_WORDS",
        "MEASURES",
        "TRAILING_MEASURES",
        "PREPOSITIONS",
        "ADVERBS",
        "COVARIATION_OPENERS",
        "TEND",
    ):
        assert getattr(relations, name) <= listed, name
    cue_words = {cue.words[0] for cue in relations.CUES if len(cue.words) == 1}
    assert cue_words - {relations.ARROW} <= listed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # a pronoun opening a sentence: the sentence before's subject
            "Heat raises pressure. It also causes leaks.",
            [
                ("heat", "causes", "positive", "pressure"),
                ("heat", "causes", "positive", "leak"),
            ],
        ),
        (
            "Wolves are predators. They reduce the deer population.",
            [("wolve", "causes", "negative", "deer")],
        ),
        (
            "The wall is one cell thick; this reduces the diffusion distance.",
            [("wall", "causes", "negative", "diffusion distance")],
        ),
        (  # a demonstrative before a noun is its determiner, no pronoun
            "Wolves are predators. These animals reduce grass.",
            [("animal", "causes", "negative", "grass")],
        ),
    ],
)
def test_a_pronoun_stands_for_the_subject_of_the_sentence_before(
    text: str, expected: list[tuple[str, ...]]
) -> None:
    assert _triples(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "It raises the price.",  # no sentence before
        "Heat is high. Nothing happens then. It causes leaks.",  # not the sentence just before
        "Heat is high. Pressure builds and it causes leaks.",  # not the sentence's subject
        "Heat is high. He causes leaks.",  # only it / they / this / these
        "Heat is high. They do not cause leaks.",  # negation kept
        "As heat rises. It causes leaks.",  # the sentence before opens with no subject
    ],
)
def test_no_pronoun_is_read_without_its_antecedent(text: str) -> None:
    assert [t for t in _triples(text) if t[3] == "leak"] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The atheroma narrows the lumen, thereby raising blood pressure.",
            [("atheroma", "causes", "positive", "blood pressure")],
        ),
        (
            "Warmer air can hold more moisture, leading to changes in rainfall.",
            [("warmer air", "causes", "positive", "change")],
        ),
        (  # after a relation: its subject is the clause's
            "Blood clots reduce blood flow, therefore reducing respiration.",
            [
                ("blood clot", "causes", "negative", "blood flow"),
                ("blood clot", "causes", "negative", "respiration"),
            ],
        ),
        (
            "Fertilisers can leach into waterways, causing eutrophication.",
            [("fertiliser", "causes", "positive", "eutrophication")],
        ),
    ],
)
def test_a_participle_chain_attaches_to_the_clause_subject(
    text: str, expected: list[tuple[str, ...]]
) -> None:
    assert _triples(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Risk factors: smoking, increasing age.",  # a list, no clause subject
        "Increasing age is common.",  # a gerund that is an adjective
        "In spring, leading to floods.",  # no subject before the comma
        "The atheroma narrows the lumen, and raising it is hard.",  # no chain mark
    ],
)
def test_no_participle_chain_without_its_mark_and_subject(text: str) -> None:
    assert [t for t in _triples(text) if t[0] in ("atheroma", "age", "risk factor")] == []
    assert all(
        r.cue not in ("increasing", "leading to", "raising") for r in extract_relations(text)
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("RuBP is regenerated from GALP.", [("galp", "causes", "positive", "rubp")]),
        ("ATP can then be regenerated from ADP.", [("adp", "causes", "positive", "atp")]),
        ("ATP is converted back into ADP.", [("atp", "causes", "positive", "adp")]),
        ("Starch is broken down into maltose.", [("starch", "causes", "positive", "maltose")]),
    ],
)
def test_conversions_are_causal_produces_links(text: str, expected: list[tuple[str, ...]]) -> None:
    assert _triples(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Membranes are formed from phospholipids.",  # composition, no conversion
        "Proteins are made from amino acids.",
        "ATP is not converted into ADP.",
        "Is RuBP regenerated from GALP?",
    ],
)
def test_composition_and_negated_conversions_are_no_relation(text: str) -> None:
    assert extract_relations(text) == []


def test_a_list_item_is_a_sentence_and_a_negated_subject_no_mention() -> None:
    assert _triples("* Heat raises pressure\n* Rain falls") == [
        ("heat", "causes", "positive", "pressure")
    ]
    assert extract_relations("The cells can no longer produce ATP.") == []
