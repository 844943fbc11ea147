"""Field matches of ingested candidates (retrieval/fields.py): path and heading paths."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from graphonomous import Graphonomous
from graphonomous.ingest import scan_directory
from graphonomous.model import Node
from graphonomous.retrieval import retriever
from graphonomous.retrieval.fields import (
    field_factor,
    field_share,
    field_text,
    own_title,
    with_camel_words,
)
from graphonomous.retrieval.settings import DEFAULT_SETTINGS


def _node(metadata: dict[str, object]) -> Node:
    return Node(id="n", node_type="semantic", content="x", metadata=metadata)


def test_field_text_is_path_and_headings_of_ingested_nodes_only() -> None:
    chunk = {"kind": "chunk", "path": "scope/lifetime.md", "headings": ["Lifetimes", "Elision"]}
    assert field_text(_node(chunk)) == "scope/lifetime.md Lifetimes Elision"
    assert field_text(_node({"kind": "file", "path": "a.py"})) == "a.py"
    assert field_text(_node({"path": "a.py", "headings": ["x"]})) == ""  # not ingested


def test_camelcase_names_give_their_words() -> None:
    assert with_camel_words("TimeRemainingColumn") == "TimeRemainingColumn Time Remaining Column"
    assert with_camel_words("HTMLFormat x") == "HTMLFormat x HTML Format x"
    assert with_camel_words("plain words_here") == "plain words_here"
    chunk = {"kind": "chunk", "path": "rich/progress.py", "headings": ["TransferSpeedColumn"]}
    assert field_text(_node(chunk)).endswith("Transfer Speed Column")


def test_the_own_title_is_the_innermost_heading_below_a_title() -> None:
    assert own_title(_node({"kind": "chunk", "headings": ["Guide", "Install"]})) == "Install"
    assert own_title(_node({"kind": "chunk", "headings": ["Console", "save_html"]})) == "save_html"
    assert own_title(_node({"kind": "chunk", "headings": ["Guide"]})) == ""  # the page title
    assert own_title(_node({"kind": "chunk", "headings": []})) == ""
    assert own_title(_node({"headings": ["a", "b"]})) == ""  # not ingested


def test_a_section_whose_title_repeats_the_path_outranks_its_siblings() -> None:
    """Both chunks hold "slide show" in their path; only one is titled with it."""

    def factor(headings: list[str]) -> float:
        meta = {"kind": "chunk", "path": "user/slide-shows.rst", "headings": headings}
        return field_factor(_node(meta), ["slide", "show"], lambda t: 1.0, _stems, 1.0)

    titled = factor(["Easy Slide Shows", "Generating a Slide Show"])
    sibling = factor(["Easy Slide Shows", "Themes"])
    assert sibling == 2.0  # path and outer title hold every term
    assert titled == 3.0  # ... and so does its own title


def _stems(tokens: list[str]) -> list[str]:
    return [t[:-1] if t.endswith("s") else t for t in tokens]


def test_field_share_is_idf_weighted() -> None:
    idf = {"rare": 3.0, "common": 1.0}.__getitem__
    assert field_share(["rare"], ["rare", "common", "rare"], idf) == 0.75
    assert field_share([], ["rare"], idf) == 0.0
    assert field_share(["rare"], [], idf) == 0.0


def test_a_chunk_under_the_named_heading_path_ranks_first(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "lifetimes").mkdir(parents=True)
    (root / "traits").mkdir()
    body = "Annotations tell the borrow checker how long references live."
    (root / "lifetimes" / "notes.md").write_text(f"# Notes\n\n{body}\n", "utf-8")
    more = " The borrow checker checks references."
    (root / "traits" / "notes.md").write_text(f"# Notes\n\n{body}{more}\n", "utf-8")
    with Graphonomous(tmp_path / "f.db") as graph:
        scan_directory(graph, root)
        query = "lifetimes: how does the borrow checker see references"

        def first(gain: float) -> str:
            settings = replace(DEFAULT_SETTINGS, field_gain=gain)
            result = retriever.retrieve_context(
                graph.engine, query, limit=3, effort=0, settings=settings
            )
            kinds = {r["node_id"]: graph.get_node(r["node_id"])["node"] for r in result["results"]}
            chunks = [
                r for r in result["results"] if kinds[r["node_id"]]["metadata"]["kind"] == "chunk"
            ]
            return str(chunks[0]["path"]).rsplit("/", 2)[-2]

        assert first(0.0) == "traits"  # the text alone prefers the other file
        assert first(DEFAULT_SETTINGS.field_gain) == "lifetimes"
