"""Chunkers (Markdown headings, Python definitions, paragraphs) and reference extraction."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.ingest.chunking import (
    MAX_CHUNK_CHARS,
    chunk_markdown,
    chunk_paragraphs,
    chunk_python,
    chunk_text,
    file_format,
    markdown_sections,
    split_lines,
)
from graphonomous.ingest.references import extract_references, resolve_reference


def _covers_lines(text: str, chunks: list) -> None:  # type: ignore[type-arg]
    lines = split_lines(text)
    for chunk in chunks:
        assert 1 <= chunk.line_start <= chunk.line_end <= len(lines)
        assert chunk.text.strip()
        span = "\n".join(lines[chunk.line_start - 1 : chunk.line_end])
        assert chunk.text in span


# -- Markdown --------------------------------------------------------------------

MARKDOWN = """# Title

Intro paragraph that is long enough to stand on its own as a section of the
document, explaining what the project does and why somebody would care about
it at all, with a few more words to pass the minimum section size easily.

## Install

Run the installer.

```sh
# not a heading inside a fence
pip install thing
```

Setext heading
--------------

Body of the setext section, also long enough to be a chunk of its own when
the merging rule looks at it, because it keeps going for a while longer.
"""


def test_markdown_sections_follow_headings_and_skip_fences() -> None:
    lines = split_lines(MARKDOWN)
    headings = [h for _, _, h in markdown_sections(lines)]
    assert headings == ["Title", "Install", "Setext heading"]  # no empty preamble


def test_markdown_chunks_are_keyed_by_heading_with_exact_line_ranges() -> None:
    chunks = chunk_markdown(MARKDOWN)
    # "Install" is shorter than MIN_SECTION_CHARS: it merges with the next section.
    assert [c.key for c in chunks] == ["Title", "Install"]
    assert (chunks[0].line_start, chunks[0].line_end) == (1, 5)  # trailing blank line dropped
    assert chunks[1].text.startswith("## Install")
    assert "# not a heading inside a fence" in chunks[1].text
    assert "Setext heading\n-----" in chunks[1].text
    _covers_lines(MARKDOWN, chunks)


def test_small_markdown_sections_merge_into_the_next() -> None:
    text = "# A\n\nshort\n\n# B\n\n" + "long words " * 40 + "\n"
    chunks = chunk_markdown(text)
    assert len(chunks) == 1
    assert chunks[0].key == "A"


def test_front_matter_is_not_a_heading() -> None:
    text = "---\ntitle: x\n---\n\n# Real\n\n" + "text " * 60
    assert [h for _, _, h in markdown_sections(split_lines(text))] == [None, "Real"]


def test_large_sections_split_at_paragraphs_with_part_keys() -> None:
    paragraph = ("word " * 50).strip()
    text = "# Big\n\n" + "\n\n".join([paragraph] * 12) + "\n"
    chunks = chunk_markdown(text)
    assert len(chunks) > 1
    assert chunks[0].key == "Big"
    assert chunks[1].key == "Big#2"
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks)
    _covers_lines(text, chunks)


# -- Python -----------------------------------------------------------------------

PYTHON = '''"""Module docstring."""

import os

CONSTANT = 1


# A comment that belongs to f.
@decorator
def f(x):
    return x


class C:
    def method(self):
        return 1


if __name__ == "__main__":
    f(1)
'''


def test_python_chunks_are_definitions_with_decorators_and_comments() -> None:
    chunks = chunk_python(PYTHON)
    keys = [c.key for c in chunks]
    assert keys == [None, "def f", "class C", None]
    f_chunk = chunks[1]
    assert f_chunk.text.startswith("# A comment that belongs to f.\n@decorator")
    assert (f_chunk.line_start, f_chunk.line_end) == (8, 11)
    _covers_lines(PYTHON, chunks)


def test_large_class_splits_at_members() -> None:
    methods = "\n".join(f"    def m{i}(self):\n        return '{'x' * 80}'\n" for i in range(30))
    text = f"class Big:\n{methods}"
    chunks = chunk_python(text)
    assert len(chunks) > 1
    assert chunks[0].key == "class Big"
    assert chunks[1].key == "class Big#2"
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks)
    _covers_lines(text, chunks)


def test_python_syntax_error_falls_back_to_paragraphs() -> None:
    text = "def broken(:\n    pass\n\nsecond paragraph\n"
    assert [c.key for c in chunk_python(text)] == [None]
    assert chunk_text(text, "python") == chunk_paragraphs(text)


# -- paragraphs and long lines ----------------------------------------------------


def test_a_very_long_line_is_cut_into_pieces_on_the_same_line() -> None:
    text = "x" * (MAX_CHUNK_CHARS * 2 + 10)
    chunks = chunk_paragraphs(text)
    assert len(chunks) == 3
    assert all(c.line_start == c.line_end == 1 for c in chunks)
    assert "".join(c.text for c in chunks) == text


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab #\n`-=\t"), max_size=3000))
def test_every_chunker_returns_in_range_line_spans(text: str) -> None:
    for fmt in ("markdown", "python", "text"):
        chunks = chunk_text(text, fmt)
        _covers_lines(text, chunks)
        assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks)


def test_formats_by_extension() -> None:
    assert file_format("a/B.MD") == "markdown"
    assert file_format("x.py") == "python"
    assert file_format("x.tsx") == "javascript"
    assert file_format("x.rst") == "rst"
    assert file_format("x.toml") == "code"


# -- references ---------------------------------------------------------------------


def test_python_references_absolute_relative_and_nested() -> None:
    text = (
        "import os, pkg.mod\nfrom . import sibling\nfrom ..up import name\n"
        "def f():\n    from pkg import lazy\n"
    )
    refs = extract_references(text, "python")
    assert ["python", "os"] in refs
    assert ["python", "pkg.mod"] in refs
    assert ["python", ".sibling", "."] in refs
    assert ["python", "..up.name", "..up"] in refs
    assert ["python", "pkg.lazy", "pkg"] in refs


def test_python_references_survive_a_truncated_file() -> None:
    refs = extract_references("import alpha\nfrom beta import gamma\ndef cut(", "python")
    assert refs == [["python", "alpha"], ["python", "beta.gamma", "beta"]]


def test_python_resolution_uses_the_package_root() -> None:
    files = {"pkg/__init__.py", "pkg/a.py", "pkg/sub/__init__.py", "pkg/sub/b.py", "types.py"}
    resolve = resolve_reference
    assert resolve(["python", "pkg.a"], "pkg/sub/b.py", files) == "pkg/a.py"
    assert resolve(["python", ".b"], "pkg/sub/__init__.py", files) == "pkg/sub/b.py"
    assert resolve(["python", "..a"], "pkg/sub/b.py", files) == "pkg/a.py"
    assert resolve(["python", "pkg.sub.b.Thing", "pkg.sub.b"], "pkg/a.py", files) == "pkg/sub/b.py"
    assert resolve(["python", "pkg.sub"], "pkg/a.py", files) == "pkg/sub/__init__.py"
    assert resolve(["python", "....too.far"], "pkg/a.py", files) is None
    # a sibling module is not importable by a bare name from inside a package
    assert resolve(["python", "a"], "pkg/sub/b.py", files) is None
    assert resolve(["python", "types"], "pkg/a.py", files) == "types.py"
    assert resolve(["python", "src_only"], "x.py", {"src/src_only.py"}) == "src/src_only.py"


def test_javascript_references() -> None:
    text = (
        "import a from './a';\nimport {b} from \"../lib/b.js\";\nconst c = require('./c');\n"
        "export * from './d';\nimport 'react';\nconst e = await import('./e');\n"
    )
    refs = extract_references(text, "javascript")
    assert refs == [
        ["js", "./a"],
        ["js", "../lib/b.js"],
        ["js", "./c"],
        ["js", "./d"],
        ["js", "./e"],
    ]
    files = {"src/a.ts", "lib/b.ts", "src/c/index.js", "src/d.mjs"}
    assert resolve_reference(["js", "./a"], "src/m.ts", files) == "src/a.ts"
    assert resolve_reference(["js", "../lib/b.js"], "src/m.ts", files) == "lib/b.ts"
    assert resolve_reference(["js", "./c"], "src/m.ts", files) == "src/c/index.js"
    assert resolve_reference(["js", "./d"], "src/m.ts", files) == "src/d.mjs"
    assert resolve_reference(["js", "./e"], "src/m.ts", files) is None


def test_markdown_links_and_backticked_paths() -> None:
    text = (
        "See [the guide](docs/guide.md#setup), ![img](<img/a b.png>), "
        "[web](https://example.com), [top](#top).\n[ref]: ../up.md\n"
        "Run `scripts/run.sh` or `make`; edit `config.toml`.\n"
    )
    refs = extract_references(text, "markdown")
    assert ["link", "docs/guide.md"] in refs
    assert ["link", "img/a b.png"] in refs
    assert ["link", "../up.md"] in refs
    assert ["mention", "scripts/run.sh"] in refs
    assert ["mention", "config.toml"] in refs
    assert not any("example.com" in part for ref in refs for part in ref)
    assert ["mention", "make"] not in refs
    files = {"docs/guide.md", "up.md", "config.toml"}
    assert resolve_reference(["link", "docs/guide.md"], "README.md", files) == "docs/guide.md"
    assert resolve_reference(["link", "../up.md"], "docs/x.md", files) == "up.md"
    assert resolve_reference(["link", "../../out.md"], "docs/x.md", files) is None
    assert resolve_reference(["mention", "config.toml"], "docs/x.md", files) == "config.toml"
    assert resolve_reference(["link", "/docs/guide.md"], "a/b/c.md", files) == "docs/guide.md"
    # never a reference to itself
    assert resolve_reference(["link", "guide.md"], "docs/guide.md", files) is None


# -- chunk id reuse -----------------------------------------------------------------------


def test_pair_chunks_prefers_same_text_then_same_key_then_order() -> None:
    from graphonomous.ingest.chunking import Chunk
    from graphonomous.ingest.plan import pair_chunks
    from graphonomous.model import Node

    def node(node_id: str, text: str, section: str | None) -> Node:
        return Node(id=node_id, node_type="semantic", content=text, metadata={"section": section})

    old = [node("o1", "intro", None), node("o2", "setup v1", "Setup"), node("o3", "misc", None)]
    new = [
        Chunk("new preface", 1, 1, None),
        Chunk("intro", 2, 2, None),
        Chunk("setup v2", 3, 3, "Setup"),
        Chunk("tail", 4, 4, None),
        Chunk("extra", 5, 5, None),
    ]
    assigned, surplus = pair_chunks(old, new)
    assert assigned == ["o3", "o1", "o2", None, None]
    assert surplus == []
    assigned, surplus = pair_chunks(old, new[1:2])
    assert (assigned, surplus) == (["o1"], ["o2", "o3"])


def test_rst_sections_with_overlines_and_literal_lookalikes() -> None:
    from graphonomous.ingest.chunking import rst_sections

    lines = [
        "=====",
        "Title",
        "=====",
        "",
        "text",
        "not a title",
        "---",  # shorter than the line above and not after a blank line
        "",
        "Part",
        "====",
        "end",
    ]
    assert rst_sections(lines) == [(0, 7, "Title"), (8, 10, "Part")]


# -- heading and symbol paths -------------------------------------------------------


def test_markdown_chunks_know_their_heading_path() -> None:
    body = "word " * 50
    text = f"# Book\n\n{body}\n\n## Part\n\n{body}\n\n### Detail\n\n{body}\n\n## Other\n\n{body}\n"
    chunks = chunk_markdown(text)
    assert [c.headings for c in chunks] == [
        ("Book",),
        ("Book", "Part"),
        ("Book", "Part", "Detail"),
        ("Book", "Other"),
    ]
    assert [c.key for c in chunks] == ["Book", "Part", "Detail", "Other"]


def test_rst_levels_follow_the_order_adornments_are_first_used() -> None:
    from graphonomous.ingest.chunking import chunk_rst

    body = "word " * 50
    text = (
        f"=====\nGuide\n=====\n\n{body}\n\nInstall\n-------\n\n{body}\n\n"
        f"From source\n~~~~~~~~~~~\n\n{body}\n\nUsage\n-----\n\n{body}\n"
    )
    assert [c.headings for c in chunk_rst(text)] == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "From source"),
        ("Guide", "Usage"),
    ]


def test_an_overlined_rst_title_may_be_inset_an_underlined_one_not() -> None:
    from graphonomous.ingest.chunking import chunk_rst

    body = "word " * 50
    # The document title of the Docutils docs: overlined and inset by one space.
    text = (
        f"========================\n Docutils Configuration\n========================\n\n"
        f"{body}\n\nhalt_level\n----------\n\n{body}\n\n  inset\n  -----\n\n{body}\n"
    )
    assert [c.headings for c in chunk_rst(text)] == [
        ("Docutils Configuration",),
        ("Docutils Configuration", "halt_level"),
    ]


def test_a_txt_file_written_in_rest_is_chunked_as_rest() -> None:
    body = "word " * 50
    text = f"Settings\n========\n\n{body}\n\nDebug\n-----\n\n{body}\n"
    chunks = chunk_text(text, "text")
    assert [c.key for c in chunks] == ["Settings", "Debug"]
    assert chunks[1].headings == ("Settings", "Debug")
    plain = f"A note\n\n{body}\n\n{body}\n"
    assert chunk_text(plain, "text") == chunk_paragraphs(plain)


def test_a_large_class_keeps_a_large_method_whole_under_its_symbol_path() -> None:
    small = "\n".join(f"    def m{i}(self):\n        return {i}\n" for i in range(15))
    doc = "\n".join(f"        line {i} of the docstring of export" for i in range(20))
    big = f'    def export(self):\n        """Export.\n\n{doc}\n        """\n        return 1\n'
    text = f'class Console:\n    """A console."""\n\n{small}\n{big}\n{small}'
    chunks = chunk_python(text)
    by_key = {c.key: c for c in chunks}
    assert "def Console.export" in by_key
    export = by_key["def Console.export"]
    assert export.headings == ("Console", "export")
    assert export.text.lstrip().startswith("def export(self):")
    assert export.text.rstrip().endswith("return 1")
    assert chunks[0].key == "class Console" and chunks[0].headings == ("Console",)
    assert chunks[-1].key == "class Console#2"
    _covers_lines(text, chunks)


def test_a_top_level_definition_has_its_name_as_symbol_path() -> None:
    chunks = chunk_python(PYTHON)
    assert [c.headings for c in chunks] == [(), ("f",), ("C",), ()]
