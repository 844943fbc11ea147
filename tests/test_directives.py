"""Governing statements (retrieval/directives.py): recognised on write, returned with the
later questions whose scope they match, beside (never instead of) the answers."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from mcp_tool_calls import Session

from graphonomous import Graphonomous
from graphonomous.cli import main as cli_main
from graphonomous.clock import ManualClock
from graphonomous.retrieval import directives
from graphonomous.retrieval.directives import DirectiveIndex, detect


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:", embedder="hashing") as opened:
        yield opened


# -- recognition ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "rule"),
    [
        ("Always answer in French.", "instruction", "always_never"),
        ("Oh, and never use tabs in Python code!", "instruction", "always_never"),
        ("Please don't use emojis in emails.", "instruction", "please_dont"),
        ("From now on, reply in English.", "instruction", "from_now_on"),
        ("Keep it short from now on.", "instruction", "from_now_on"),
        ("You can call me Sam.", "instruction", "call_me"),
        ("Remember that I am vegetarian.", "preference", "remember_that"),
        ("I prefer tea over coffee.", "preference", "i_prefer"),
        ("User: I really hate cilantro.", "preference", "i_like"),
        ("My favourite band is Queen.", "preference", "favourite"),
        ("Harry Potter is my favorite book.", "preference", "favourite"),
        ("I'm a big fan of hip hop dance.", "preference", "favourite"),
        ("I always go running before work.", "preference", "i_always"),
        ("My name is Ana.", "preference", "my_attribute"),
        ('We should never say "I hope this email finds you well".', "instruction", "always_never"),
        ("(Remember: always respond in the first person)", "instruction", "always_never"),
        ("Please do not miss any other mistakes in my messages, ok?", "instruction", "please_dont"),
        (
            "let's abbreviate Mixed-Use Architecture as MUA from now on, okay?",
            "instruction",
            "from_now_on",
        ),
        ("use kivy2.1.0 from now on and kivymd1.1.1", "instruction", "from_now_on"),
        ("Please don't apologize so much.", "instruction", "please_dont"),
        ("I'm ok if you call me Larry in our conversations", "instruction", "call_me"),
        ("hm I prefer the previous syntax.", "preference", "i_prefer"),
        (
            "User: Here is my text.\nRemember: always respond in the first person.",
            "instruction",
            "always_never",
        ),
        ("Dance is pretty much my go-to for stress relief.", "preference", "favourite"),
        ("Contemporary dance is so graceful - it really speaks to me.", "preference", "favourite"),
        ("I've been into dancing since I was a kid.", "preference", "favourite"),
        ("I really admire his work ethic.", "preference", "i_like"),
    ],
)
def test_governing_statements_are_recognised(text: str, kind: str, rule: str) -> None:
    found = detect(text)
    assert found is not None and (found.kind, found.rule) == (kind, rule)


@pytest.mark.parametrize(
    "text",
    [
        "She said always answer in French.",  # reported speech
        'He keeps saying "never give up".',  # quoted
        "Do you always answer in French?",  # a question
        "Should I always use tabs",  # a question without its mark
        "It's not always easy.",  # a negated cue
        "Maybe always answer in French.",  # a hedge
        "Assistant: I will always answer in French.",  # not the user's words
        "User: hi\nAssistant: Sure.\nI always answer in French.",  # the assistant's turn goes on
        "I love that!",  # a reaction, not a preference
        "Call me back later.",  # a request for a call
        "From now on I'll write things down.",  # a plan of the speaker's
        "I never thought I'd say this.",  # narrative
        "Never tried",  # a past form, not an imperative
        "Don't worry, please.",  # politeness
        "Please don't write what comes next yet.",  # for now only
        "Caroline: Never give up on your dreams!",  # advice between people, not to the assistant
        '"Never give up," she wrote.',  # a quoted sentence
        "The valve is closed.",
    ],
)
def test_non_directives_are_rejected(text: str) -> None:
    assert detect(text) is None


def test_scope_is_the_object_and_answering_instructions_are_global() -> None:
    assert detect("Always answer in French.").scope == ()  # type: ignore[union-attr]
    assert detect("Call me Sam.").scope == ()  # type: ignore[union-attr]
    tabs = detect("Never use tabs in Python code.")
    assert tabs is not None and tabs.scope == ("tabs", "python", "code")
    topic = detect("Always answer briefly when I ask about taxes.")
    assert topic is not None and topic.scope == ("taxe",)
    addressed = detect("From now on, put MAN: before every message you send me.")
    assert addressed is not None and addressed.is_global
    assert detect("Please don't apologize so much.").is_global  # type: ignore[union-attr]
    assert detect("From now on, instead of the long name use EGG.").is_global  # type: ignore[union-attr]
    kivy = detect("use kivy2.1.0 from now on")
    assert kivy is not None and directives.stems(kivy.scope) == directives.stems(["kivy"])
    liked = detect("Caroline: I love painting landscapes")
    assert liked is not None and liked.holder == "caroline"
    assert set(liked.scope) == {"painting", "landscape"}


def test_index_round_trips_and_forgets(graph: Graphonomous) -> None:
    index = DirectiveIndex()
    index.add_many([("a", "Always answer in French."), ("b", "Never use tabs in Python code.")])
    loaded = DirectiveIndex.load(index.dump())
    assert loaded is not None and loaded.dump() == index.dump()
    assert loaded.candidates(directives.stems(["python"])) == {"a", "b"}
    loaded.remove("b")
    assert loaded.candidates(directives.stems(["python"])) == {"a"}
    assert DirectiveIndex.load(b"not a dump") is None


# -- the write side ----------------------------------------------------------------


def test_store_node_marks_and_types_a_directive(graph: Graphonomous) -> None:
    rule = graph.store_node("Always answer in French.")["node"]
    assert rule["node_type"] == "procedural"
    assert rule["metadata"] == {"directive": "instruction", "directive_rule": "always_never"}
    liked = graph.store_node("I prefer tea over coffee.", metadata='{"room": "B"}')["node"]
    assert liked["node_type"] == "semantic"
    assert liked["metadata"] == {
        "room": "B",
        "directive": "preference",
        "directive_rule": "i_prefer",
    }
    chosen = graph.store_node("Never deploy on Fridays.", "episodic")["node"]
    assert chosen["node_type"] == "episodic" and chosen["metadata"]["directive"] == "instruction"
    given = graph.store_node("Always answer in French.", metadata={"directive": None})["node"]
    assert given["node_type"] == "semantic" and given["metadata"] == {"directive": None}
    plain = graph.store_node("The valve is closed.")["node"]
    assert plain["node_type"] == "semantic" and plain["metadata"] == {}


def test_batch_turns_keep_their_type(graph: Graphonomous) -> None:
    operations = [
        {
            "op": "add_node",
            "node": {"id": "t1", "node_type": "episodic", "content": "Jo: I love jazz"},
        },
        {"op": "add_node", "node": {"id": "t2", "content": "Never use tabs in Python code"}},
        {"op": "add_node", "node": {"id": "t3", "type": "goal", "content": "Always ship on time"}},
    ]
    graph.apply_batch(operations)
    turn = graph.get_node("t1")["node"]
    assert turn["node_type"] == "episodic" and turn["metadata"]["directive"] == "preference"
    assert graph.get_node("t2")["node"]["node_type"] == "procedural"
    assert graph.get_node("t3")["node"]["node_type"] == "goal"
    assert operations[0]["node"] == {
        "id": "t1",
        "node_type": "episodic",
        "content": "Jo: I love jazz",
    }


def test_interaction_marks_the_users_words_only(graph: Graphonomous) -> None:
    told = graph.learn_from_interaction("Please don't use emojis.", "Noted, no emojis.")
    assert told["episode"]["metadata"]["directive"] == "instruction"
    assert told["episode"]["node_type"] == "episodic"
    echoed = graph.learn_from_interaction("Thanks.", "I will always answer in French.")
    assert "directive" not in echoed["episode"]["metadata"]


def test_cli_remember_types_an_instruction(tmp_path: object) -> None:
    db = str(tmp_path) + "/k.db"  # type: ignore[operator]
    out = io.StringIO()
    assert cli_main(["--db", db, "--json", "remember", "Always cite sources."], out) == 0
    node_id = json.loads(out.getvalue())["node_id"]
    with Graphonomous(db, embedder="hashing") as opened:
        assert opened.get_node(node_id)["node"]["node_type"] == "procedural"


# -- the read side -----------------------------------------------------------------


def _fill(graph: Graphonomous) -> dict[str, str]:
    ids = {
        "french": graph.store_node("Always answer in French.")["node"]["id"],
        "tabs": graph.store_node("Never use tabs in Python code.")["node"]["id"],
        "veg": graph.store_node("Remember that I am vegetarian.")["node"]["id"],
    }
    for i in range(30):
        graph.store_node(f"Maintenance log {i}: pump P-{i} was serviced and its valve checked.")
    return ids


def test_global_and_scoped_directives_come_with_the_question(graph: Graphonomous) -> None:
    ids = _fill(graph)
    code = graph.retrieve_context("How should I indent my Python code?", limit=3)
    listed = {row["node_id"] for row in code["directives"]}
    shown = {row["node_id"] for row in code["results"] if "directive" in row["flags"]}
    assert {ids["french"], ids["tabs"]} <= listed | shown
    assert ids["veg"] not in listed
    pumps = graph.retrieve_context("When was pump P-7 serviced?", limit=3)
    assert [row["node_id"] for row in pumps["directives"]] == [ids["french"]]
    row = pumps["directives"][0]
    assert row["channel"] == "directive" and row["kind"] == "instruction" and row["scope"] == []
    assert all("Maintenance" in r["content"] for r in pumps["results"])
    assert len(pumps["results"]) == 3  # the directive took no answer's slot
    assert pumps["stats"]["directives"] == {"matched": 1, "returned": 1}


def test_directives_respect_forgetting_supersession_and_agents(graph: Graphonomous) -> None:
    ids = _fill(graph)
    graph.forget_node(ids["french"], "soft")
    other = graph.store_node("Always sign emails as Bo.", agent_id="agent-b")["node"]["id"]
    result = graph.retrieve_context("When was pump P-7 serviced?", limit=3, agent_id="default")
    assert {row["node_id"] for row in result["directives"]}.isdisjoint({ids["french"], other})


def test_results_unchanged_by_the_channel(graph: Graphonomous) -> None:
    _fill(graph)
    before = graph.retrieve_context("pump valve serviced", limit=5)
    index = directives.directive_index(graph.engine)
    for node_id in list(index._found):
        index.remove(node_id)
    after = graph.retrieve_context("pump valve serviced", limit=5)
    strip = [{k: v for k, v in r.items() if k != "flags"} for r in before["results"]]
    assert strip == [{k: v for k, v in r.items() if k != "flags"} for r in after["results"]]
    assert after["directives"] == []


def test_the_later_of_two_global_instructions_comes_first() -> None:
    clock = ManualClock("2026-03-02T09:00:00Z")
    with Graphonomous(":memory:", embedder="hashing", clock=clock) as graph:
        said_later = graph.store_node("From now on, reply in English.", valid_from="2026-02-01")
        clock.advance(hours=1)  # stored after, said before
        said_first = graph.store_node("Always answer in French.", valid_from="2026-01-01")
        graph.store_node("The capital of Peru is Lima.")
        result = graph.retrieve_context("What is the capital of Peru?", limit=1)
    assert "Lima" in result["results"][0]["content"]
    assert said_later["updates"] == [] and said_first["updates"] == []
    order = [row["node_id"] for row in result["directives"]]
    assert order == [said_later["node"]["id"], said_first["node"]["id"]]


def test_the_bound_holds(graph: Graphonomous) -> None:
    for i in range(directives.MAX_DIRECTIVES + 3):
        graph.store_node(f"Always answer in language number {i} politely.")
    result = graph.retrieve_context("what is new?", limit=1)
    assert len(result["directives"]) == directives.MAX_DIRECTIVES
    assert result["stats"]["directives"]["matched"] == directives.MAX_DIRECTIVES + 3


def test_a_question_about_preferences_gets_its_holders_preferences(graph: Graphonomous) -> None:
    turns = [
        ("n1", "Nate: I love coconut milk and mixed berries."),
        ("n2", "Nate: I enjoy playing video games at night."),
        ("n3", "Nate: I like turtles a lot."),
        ("n4", "Nate: We went to the lake on Sunday."),
        ("j1", "Joanna: I love hiking in the mountains."),
        ("j2", "Joanna: My script got accepted."),
        ("j3", "Joanna: The movie was long."),
    ]
    graph.apply_batch(
        [
            {"op": "add_node", "node": {"id": i, "node_type": "episodic", "content": c}}
            for i, c in turns
        ]
    )
    result = graph.retrieve_context("What are Nate's favorite desserts?", limit=1)
    listed = [row["node_id"] for row in result["directives"]]
    flagged = [row["node_id"] for row in result["results"] if "directive" in row["flags"]]
    assert len(listed) <= directives.ASKED_PREFERENCES
    assert set(listed + flagged) <= {"n1", "n2", "n3"} and listed  # Nate's, not Joanna's
    assert all(row["matched"] == [] for row in result["directives"])
    plain = graph.retrieve_context("Where did Nate go on Sunday?", limit=1)
    assert plain["directives"] == []


def test_mcp_output_keeps_its_schema(graph: Graphonomous) -> None:
    session = Session(graph, "v1")
    session.ok("store_node", {"content": "Always answer in French."})
    out = session.ok("retrieve_context", {"query": "pressure loss of valve V-12", "limit": 2})
    assert out["directives"] and out["directives"][0]["channel"] == "directive"
