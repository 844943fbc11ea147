"""Speaker attribution (`retrieval.attribution`) and its retrieval stage (effort >= 5)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.retrieval.attribution import MIN_SPEAKER_PASSAGES, name_mentions, speaker_of
from graphonomous.retrieval.entities import entity_key
from graphonomous.retrieval.settings import (
    ABSENT_PARTICIPANT_FACTOR,
    CONTENT_FLOOR,
    CONTEXT_STATISTICS,
    OTHER_SPEAKER_FACTOR,
    SPEAKER_FOCUS_GAIN,
    with_settings,
)
from graphonomous.retrieval.speakers import SpeakerIndex

QUERY = "What did Melanie say about pottery?"


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as opened:
        opened.store_node("Melanie: I just signed up for a pottery class.", node_id="hers")
        opened.store_node("Caroline: Wow Melanie, pottery sounds fun!", node_id="theirs")
        for i in range(MIN_SPEAKER_PASSAGES - 1):  # both are speakers, not one-off labels
            opened.store_node(f"Melanie: the weather today {i}", node_id=f"m{i}")
            opened.store_node(f"Caroline: the weather today {i}", node_id=f"c{i}")
        opened.store_node("A note on pottery glazes.", node_id="plain")
        yield opened


def test_speaker_is_the_leading_capitalised_label() -> None:
    assert speaker_of("Melanie: hi there") == ["Melanie"]
    assert speaker_of("  Dr Jane Smith: hello") == ["Dr", "Jane", "Smith"]
    assert speaker_of("https://example.org is a site") is None
    assert speaker_of("note: lower-case labels are not speakers") is None
    assert speaker_of("Melanie said: hi") is None
    assert speaker_of("No colon here") is None


def test_name_mentions_are_capitalised_words_and_runs() -> None:
    found = name_mentions("Did Jane Smith's dog meet melanie?")
    assert ["Jane"] in found and ["Smith"] in found and ["Jane", "Smith"] in found
    assert ["melanie"] not in found


def test_index_keeps_speakers_current() -> None:
    index = SpeakerIndex()
    for i in range(MIN_SPEAKER_PASSAGES):
        index.add(f"a{i}", f"Melanie: I went camping {i}.")
        index.add(f"b{i}", f"Caroline: Wow, Melanie {i}!")
    index.add("title", "Atlantis: The Lost Empire")
    assert index.speaker("a0") == entity_key(["Melanie"])
    assert index.speakers() == 2
    assert index.query_speakers("What are Melanie's pets?") == [entity_key(["Melanie"])]
    assert index.query_speakers("did melanie go camping") == []
    assert index.query_speakers("When was Atlantis released?") == []
    index.remove("b0")
    assert index.speakers() == 1 and index.speaker("b0") is None


def test_other_speakers_turns_are_demoted_at_effort_six(graph: Graphonomous) -> None:
    shallow = {r["node_id"]: r["score"] for r in graph.retrieve_context(QUERY, effort=3)["results"]}
    deep = graph.retrieve_context(QUERY, effort=6)
    assert "speaker_attribution" in deep["stats"]["mechanisms"]
    assert deep["stats"]["other_speaker_demoted"] >= 1
    off = with_settings(other_speaker_factor=1.0, entity_gain=0.0)
    plain = {
        r["node_id"]: r["score"]
        for r in graph.retrieve_context(QUERY, effort=6, settings=off)["results"]
    }
    scores = {r["node_id"]: r["score"] for r in deep["results"]}
    assert scores["theirs"] < plain["theirs"]
    assert set(shallow) >= {"hers", "theirs"}
    assert OTHER_SPEAKER_FACTOR < 1.0


def test_no_named_speaker_or_factor_one_leaves_scores_alone(graph: Graphonomous) -> None:
    unnamed = graph.retrieve_context("what about pottery", effort=6)
    assert "speaker_attribution" not in unnamed["stats"]["mechanisms"]
    assert unnamed["stats"]["other_speaker_demoted"] == 0
    off = graph.retrieve_context(QUERY, effort=6, settings=with_settings(other_speaker_factor=1.0))
    assert "speaker_attribution" not in off["stats"]["mechanisms"]
    shallow = graph.retrieve_context(QUERY, effort=3)
    assert "speaker_attribution" not in shallow["stats"]["mechanisms"]


def test_demotion_is_exactly_the_factor(graph: Graphonomous) -> None:
    alone = {"content_floor": 1.0, "speaker_focus_gain": 0.0}  # the demotion alone
    base = with_settings(other_speaker_factor=1.0, **alone)
    half = with_settings(other_speaker_factor=0.5, **alone)
    before = {
        r["node_id"]: r["score"]
        for r in graph.retrieve_context(QUERY, effort=6, settings=base)["results"]
    }
    after = {
        r["node_id"]: r["score"]
        for r in graph.retrieve_context(QUERY, effort=6, settings=half)["results"]
    }
    assert after["theirs"] == pytest.approx(before["theirs"] * 0.5, abs=2e-6)
    assert after["hers"] == pytest.approx(before["hers"], abs=2e-6)
    assert after["plain"] == pytest.approx(before["plain"], abs=2e-6)


def test_a_turn_saying_what_the_named_speaker_never_said_is_kept() -> None:
    """Adversarial questions name the wrong person: the other speaker's turn is the evidence."""
    query = "What did Caroline realize after her charity race?"
    with Graphonomous(":memory:") as graph:
        said = "Melanie: I ran a charity race and realized self-care matters."
        graph.store_node(said, node_id="m")
        graph.store_node("Caroline: Thanks, Melanie! I realize you are great.", node_id="c")
        for i in range(MIN_SPEAKER_PASSAGES - 1):
            graph.store_node(f"Melanie: the weather today {i}", node_id=f"m{i}")
            graph.store_node(f"Caroline: the weather today {i}", node_id=f"c{i}")
        deep = graph.retrieve_context(query, effort=6)
        assert "speaker_attribution" in deep["stats"]["mechanisms"]
        assert deep["stats"]["other_speaker_kept"] == 1
        off = with_settings(other_speaker_factor=1.0)
        plain = {
            r["node_id"]: r["score"]
            for r in graph.retrieve_context(query, effort=6, settings=off)["results"]
        }
        scores = {r["node_id"]: r["score"] for r in deep["results"]}
        assert scores["m"] == pytest.approx(plain["m"], abs=2e-6)  # kept: it says "charity race"
        assert scores["m0"] < plain["m0"]  # Melanie's other turns are still demoted
        assert deep["results"][0]["node_id"] == "m"
        strict = with_settings(said_it_ratio=100.0)  # nobody out-says 100x: all demoted
        demoted = graph.retrieve_context(query, effort=6, settings=strict)
        assert demoted["stats"]["other_speaker_kept"] == 0


def test_a_reply_repeating_the_named_speakers_words_is_still_demoted(graph: Graphonomous) -> None:
    """ "Wow Melanie, pottery sounds fun!" covers no more of the question than her own turn."""
    deep = graph.retrieve_context(QUERY, effort=6)
    assert deep["stats"]["other_speaker_kept"] == 0
    assert deep["stats"]["other_speaker_demoted"] >= 1


def _destress_graph(opened: Graphonomous) -> None:
    """Her short turns match only her name and the question's function words."""
    opened.store_node("Melanie: What does it mean to you? What do you do?", node_id="short1")
    opened.store_node("Melanie: Cool! What do you do?", node_id="short2")
    opened.store_node(
        "Melanie: I signed up for a pottery class, it helps me relax and destress after work.",
        node_id="pottery",
    )
    opened.store_node(
        "Melanie: Running farther helps me destress; it has been great for my headspace.",
        node_id="running",
    )
    for i in range(MIN_SPEAKER_PASSAGES):
        opened.store_node(f"Caroline: Thanks Melanie, see you soon {i}!", node_id=f"c{i}")


def test_name_free_content_lifts_her_turns_that_say_it_above_name_only_matches() -> None:
    with Graphonomous(":memory:") as opened:
        _destress_graph(opened)
        query = "What does Melanie do to destress?"
        deep = opened.retrieve_context(query, effort=6)
        off = opened.retrieve_context(
            query, effort=6, settings=with_settings(content_floor=1.0, speaker_focus_gain=0.0)
        )
        shallow = opened.retrieve_context(query, effort=3)
    order = [r["node_id"] for r in deep["results"]]
    assert set(order[:2]) == {"running", "pottery"}
    assert "speaker_content" in deep["stats"]["mechanisms"]
    assert deep["stats"]["content_scaled"] >= 2
    # Without the stage her shortest turn wins on the name alone (what it repairs).
    assert off["results"][0]["node_id"] == "short1"
    assert "speaker_content" not in off["stats"]["mechanisms"]
    assert off["stats"]["content_scaled"] == 0
    assert "speaker_content" not in shallow["stats"]["mechanisms"]
    assert CONTENT_FLOOR < 1.0


def test_name_free_content_needs_a_named_speaker(graph: Graphonomous) -> None:
    unnamed = graph.retrieve_context("what about pottery", effort=6)
    assert "speaker_content" not in unnamed["stats"]["mechanisms"]
    assert unnamed["stats"]["content_scaled"] == 0


def _camping_graph(opened: Graphonomous, her_words: str) -> None:
    opened.store_node(f"Melanie: we went {her_words} with the kids last weekend.", node_id="hers")
    opened.store_node("Caroline: Melanie, camping at the beach sounds fun!", node_id="theirs")
    for i in range(MIN_SPEAKER_PASSAGES):
        opened.store_node(f"Melanie: see you soon {i}", node_id=f"m{i}")
        opened.store_node(f"Caroline: see you soon {i}", node_id=f"c{i}")


def _scores(opened: Graphonomous, query: str, **settings: float) -> dict[str, Any]:
    return opened.retrieve_context(query, effort=6, settings=with_settings(**settings))


def test_speaker_focus_lifts_her_turns_by_name_free_bm25() -> None:
    query = "Where has Melanie camped at the beach?"
    with Graphonomous(":memory:") as opened:
        _camping_graph(opened, "camping at the beach")
        on = _scores(opened, query)
        off = _scores(opened, query, speaker_focus_gain=0.0)
    hers = {r["node_id"]: r["score"] for r in on["results"]}["hers"]
    before = {r["node_id"]: r["score"] for r in off["results"]}["hers"]
    assert on["stats"]["speaker_focused"] >= 1 and off["stats"]["speaker_focused"] == 0
    assert hers > before
    assert SPEAKER_FOCUS_GAIN > 0.0


def test_speaker_focus_stays_off_when_someone_else_said_more() -> None:
    # Caroline's turn holds "camping" and "beach", Melanie's only "camping":
    # the question may name the wrong person, so her turns are not lifted.
    with Graphonomous(":memory:") as opened:
        _camping_graph(opened, "camping in the forest")
        answer = _scores(opened, "Where has Melanie camped at the beach?")
    assert answer["stats"]["other_speaker_kept"] == 1
    assert answer["stats"]["speaker_focused"] == 0
    assert "speaker_content" in answer["stats"]["mechanisms"]


# -- participant scope (effort >= 1) ------------------------------------------------

PARTICIPANT_QUERY = "What did Melanie say about the pottery class glaze?"
MC_LINES = [
    "I tried a new glaze in my pottery class.",
    "Wow, what colour was it?",
    "A deep blue, I loved it.",
    "I went hiking on Sunday.",
    "My kids loved the beach trip.",
    "That sounds lovely.",
]


def _conversation(
    graph: Graphonomous, name: str, speakers: tuple[str, str], lines: list[str]
) -> None:
    """One session whole with turns alternating between `speakers` (ids name-i)."""
    graph.store_node(f"Session {name}", node_id=f"{name}-session")
    for i, line in enumerate(lines):
        node_id = f"{name}-{i}"
        graph.store_node(f"{speakers[i % 2]}: {line}", node_id=node_id)
        graph.store_edge(node_id, f"{name}-session", "part_of")


@pytest.fixture
def pooled() -> Iterator[Graphonomous]:
    """Two conversations in one memory: Melanie/Caroline, and Jon/Gina (who never meet Melanie)."""
    with Graphonomous(":memory:") as opened:
        _conversation(
            opened,
            "mc",
            ("Melanie", "Caroline"),
            MC_LINES,
        )
        _conversation(
            opened,
            "jg",
            ("Jon", "Gina"),
            [
                "The pottery class glaze cracked in the kiln, what did the teacher say?",
                "She said the pottery class glaze was too thick.",
                "I opened my dance studio.",
                "Congratulations on the studio!",
                "Thanks, it was a long road.",
                "You earned it.",
            ],
        )
        yield opened


def test_turns_of_conversations_the_named_speaker_never_joined_are_demoted(
    pooled: Graphonomous,
) -> None:
    off = with_settings(absent_participant_factor=1.0)
    plain = pooled.retrieve_context(PARTICIPANT_QUERY, effort=3, settings=off)
    scoped = pooled.retrieve_context(PARTICIPANT_QUERY, effort=3)
    assert scoped["stats"]["absent_participant_demoted"] >= 2
    assert "participant_scope" in scoped["stats"]["mechanisms"]
    before = {r["node_id"]: r["score"] for r in plain["results"]}
    after = {r["node_id"]: r["score"] for r in scoped["results"]}
    assert after["jg-1"] < before["jg-1"]  # Gina's turn: Melanie never spoke in that session
    assert after["jg-0"] < before["jg-0"]
    assert scoped["results"][0]["node_id"] == "mc-0"
    # Nothing is hidden: the demoted turns are still results, only lower.
    assert {"jg-0", "jg-1"} <= set(after)
    assert ABSENT_PARTICIPANT_FACTOR < 1.0


def _melanie_alone() -> dict[str, float]:
    with Graphonomous(":memory:") as alone:
        _conversation(alone, "mc", ("Melanie", "Caroline"), MC_LINES)
        answer = alone.retrieve_context(PARTICIPANT_QUERY, effort=3)
    return {r["node_id"]: r["score"] for r in answer["results"]}


def test_her_conversation_scores_as_in_a_memory_holding_it_alone(pooled: Graphonomous) -> None:
    """Context statistics: the other conversation's words and scores change nothing in hers."""
    scoped = pooled.retrieve_context(PARTICIPANT_QUERY, effort=3)
    assert "context_statistics" in scoped["stats"]["mechanisms"]
    mine = {r["node_id"]: r["score"] for r in scoped["results"] if r["node_id"].startswith("mc")}
    alone = _melanie_alone()
    assert mine == {node_id: alone[node_id] for node_id in mine}
    assert len(mine) >= 5
    # Without them, the pool's idf ("pottery", "glaze" are Jon and Gina's words too)
    # and the other conversation's best scores set her turns' scores.
    off = with_settings(context_statistics=False)
    plain = pooled.retrieve_context(PARTICIPANT_QUERY, effort=3, settings=off)
    assert "context_statistics" not in plain["stats"]["mechanisms"]
    theirs = {r["node_id"]: r["score"] for r in plain["results"] if r["node_id"].startswith("mc")}
    assert theirs != {node_id: alone[node_id] for node_id in theirs}
    assert CONTEXT_STATISTICS is True


def test_participant_scope_moves_nothing_within_one_conversation() -> None:
    """Every session of a two-person conversation has both: no score moves."""
    with Graphonomous(":memory:") as graph:
        _conversation(graph, "a", ("Melanie", "Caroline"), [f"glaze note {i}" for i in range(6)])
        _conversation(graph, "b", ("Caroline", "Melanie"), [f"pottery note {i}" for i in range(6)])
        off = with_settings(absent_participant_factor=1.0)
        for query in (PARTICIPANT_QUERY, "What did Caroline say about pottery notes?"):
            scoped = graph.retrieve_context(query, effort=3)
            plain = graph.retrieve_context(query, effort=3, settings=off)
            assert scoped["stats"]["absent_participant_demoted"] == 0
            assert scoped["results"] == plain["results"]


def test_participant_scope_needs_a_named_speaker(pooled: Graphonomous) -> None:
    answer = pooled.retrieve_context("pottery class glaze", effort=3)
    assert answer["stats"]["absent_participant_demoted"] == 0
    assert pooled.retrieve_context("pottery class glaze", effort=0)["results"]


def _crowded(graph: Graphonomous, with_crowd: bool) -> None:
    """Melanie's conversation (30 turns, few about pottery) and, when asked, Jon and Gina's
    60 turns that all say "pottery glaze" (more than the candidate pool holds)."""
    lines = [f"Weekend note {i} about the garden." for i in range(30)]
    lines[7] = "My pottery glaze came out blue."
    lines[19] = "The kiln made the glaze crack."
    lines[23] = "I glazed a pottery mug for Caroline."
    _conversation(graph, "mc", ("Melanie", "Caroline"), lines)
    if with_crowd:
        crowd = [f"Another pottery glaze story number {i}." for i in range(60)]
        _conversation(graph, "jg", ("Jon", "Gina"), crowd)


@pytest.mark.parametrize("effort", [0, 3])
def test_out_of_context_turns_do_not_take_the_pool_places_of_the_named_speakers(
    effort: int,
) -> None:
    """Each channel's top k is taken within the named speaker's conversations: her
    conversation's results are those of a memory holding it alone, however many
    other turns match better.  At every effort (the scope is part of stage 1)."""
    query = "What did Melanie say about the pottery glaze and the kiln?"
    with Graphonomous(":memory:") as alone_graph:
        _crowded(alone_graph, with_crowd=False)
        alone = alone_graph.retrieve_context(query, effort=effort, limit=5)
    with Graphonomous(":memory:") as graph:
        _crowded(graph, with_crowd=True)
        scoped = graph.retrieve_context(query, effort=effort, limit=5)
        assert scoped["stats"]["absent_participant_demoted"] > 0
        assert "participant_scope" in scoped["stats"]["mechanisms"]
        # widened by the out-of-context count, within the context
        assert scoped["stats"]["candidates"]["pool_size"] > 20
        expected = [(r["node_id"], r["score"]) for r in alone["results"]]
        assert [(r["node_id"], r["score"]) for r in scoped["results"]] == expected
        assert {"mc-7", "mc-19", "mc-23"} <= {node_id for node_id, _ in expected}
        # Without the scope the crowd takes the pool's and the results' places.
        off = with_settings(absent_participant_factor=1.0, context_statistics=False)
        plain = graph.retrieve_context(query, effort=effort, limit=5, settings=off)
        assert [(r["node_id"], r["score"]) for r in plain["results"]] != expected


def test_another_conversations_learning_does_not_switch_the_q_blend_on_for_hers() -> None:
    """The utility rerank blends Q-values in when a candidate *in the query's context*
    has outcomes: Jon's learned turn, set aside by the scope, leaves her scores alone."""
    query = "What did Melanie say about the pottery glaze and the kiln?"
    with Graphonomous(":memory:") as alone_graph:
        _crowded(alone_graph, with_crowd=False)
        alone = alone_graph.retrieve_context(query, effort=3, limit=5)
    with Graphonomous(":memory:") as graph:
        _crowded(graph, with_crowd=True)
        graph.learn_from_outcome(
            action_id="jon-answer", status="success", confidence=1.0, causal_node_ids=["jg-2"]
        )
        assert graph.get_node("jg-2")["node"]["q_update_count"] == 1
        scoped = graph.retrieve_context(query, effort=3, limit=5)
        assert scoped["stats"]["absent_participant_demoted"] > 0  # jg-2 among them
        assert scoped["stats"]["utility_rerank"] is False
        mine = [(r["node_id"], r["score"]) for r in scoped["results"]]
        assert mine == [(r["node_id"], r["score"]) for r in alone["results"]]
        # Melanie's own outcomes do switch it on.
        graph.learn_from_outcome(
            action_id="mel-answer", status="success", confidence=1.0, causal_node_ids=["mc-7"]
        )
        assert graph.retrieve_context(query, effort=3, limit=5)["stats"]["utility_rerank"] is True


def test_her_experience_weighs_words_among_the_candidates_in_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failure's objection weighs words by their idf among the candidates
    (`Lexical.of`): with the participant scope those are the candidates in context,
    not the other conversation's turns set aside (which are still candidates)."""
    from graphonomous.retrieval.experience import Lexical

    seen: list[list[str]] = []
    original = Lexical.of

    def spy(index: object, tokens: object, candidates: list[str]) -> object:
        seen.append(list(candidates))
        return original(index, tokens, candidates)  # type: ignore[arg-type]

    monkeypatch.setattr(Lexical, "of", spy)
    with Graphonomous(":memory:") as graph:
        _crowded(graph, with_crowd=True)
        asked = graph.retrieve_context("glaze kiln pottery mug", effort=3, limit=20)
        used = [r["node_id"] for r in asked["results"]][:5]
        graph.learn_from_outcome(
            action_id="a", status="failure", confidence=1.0, causal_node_ids=used
        )
        query = "What did Melanie say about the pottery glaze and the kiln?"
        scoped = graph.retrieve_context(query, effort=3, limit=5)
        assert scoped["stats"]["absent_participant_demoted"] > 0
        assert seen and seen[-1] and not any(n.startswith("jg-") for n in seen[-1])
        assert any(n.startswith("mc-") for n in seen[-1])
        # A question naming nobody has no context: every candidate counts.
        graph.retrieve_context("pottery glaze and the kiln", effort=3, limit=5)
        assert any(n.startswith("jg-") for n in seen[-1])
