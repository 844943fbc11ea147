"""Splitting a text file into chunks: heading-aware (Markdown, reStructuredText),
definition-aware (Python, via `ast`) and paragraph-aware (everything else).

A chunk is a contiguous run of whole lines, so it carries an exact 1-based
line range.  Its `key` (a heading, or `def name` / `class Name`) lets a
re-scan keep the node id of a section that moved.  Its `headings` say where
it sits as a reader sees it: the heading path of its section (Markdown,
reST: the titles of the enclosing sections, outermost first) or the symbol
path of its definition (Python: `("Console", "export_html")`).  No chunk
exceeds MAX_CHUNK_CHARS except a single line that is cut into pieces (all
pieces then share that line's number).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

# Bump when a chunker changes what it produces: every file ingested under an
# older version is re-chunked by the next scan (options fingerprint).
# 3: heading / symbol paths; large classes keep a large method whole; `.txt`
# files written in reST are chunked as reST.  4: an overlined reST title may be
# inset (a document title such as " Docutils Configuration " is a title).
CHUNKER_VERSION: Final = 4

# Sizes in characters.  ~1,200 characters is a few paragraphs: small enough
# for precise retrieval, large enough to keep a thought together.
MAX_CHUNK_CHARS: Final = 1_200
# A Markdown section shorter than this is merged with the next one (a title
# followed by an intro section becomes one chunk); a class member at least
# this long is its own chunk (a method a reader looks up by name), shorter
# members are packed together.
MIN_SECTION_CHARS: Final = 200

FORMAT_BY_EXTENSION: Final = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "javascript",
    ".tsx": "javascript",
    ".mts": "javascript",
    ".cts": "javascript",
    ".svelte": "javascript",
    ".vue": "javascript",
    ".txt": "text",
    ".rst": "rst",
    ".adoc": "text",
    ".org": "text",
    ".tex": "text",
}
# Formats whose references are citations of documents rather than code
# dependencies (decides the edge kind, see references.py).
DOCUMENT_FORMATS: Final = ("markdown", "rst", "text")

_ATX_HEADING: Final = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE: Final = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# reST section adornment: one punctuation character repeated (at least 3).
_RST_ADORNMENT: Final = re.compile(r"^([=\-~^\"'`#*+<>:._!$%&,;?@\\|/])\1{2,}[ \t]*$")
# A `.txt` file is reST when it has a section title per this many lines (at
# least one): reST documentation titles a section every few dozen lines, while
# a plain note with one underlined heading in a long text stays paragraphs.
RST_TITLE_LINES: Final = 400


@dataclass(frozen=True)
class Chunk:
    """Lines `line_start`..`line_end` (1-based, inclusive) of a file."""

    text: str
    line_start: int
    line_end: int
    key: str | None = None
    headings: tuple[str, ...] = ()


def file_format(path: str) -> str:
    """ "markdown", "rst", "python", "javascript", "text" or "code" (the fallback) by extension."""
    return FORMAT_BY_EXTENSION.get(os.path.splitext(path)[1].lower(), "code")


def split_lines(text: str) -> list[str]:
    """Lines without terminators; \\r\\n and lone \\r count as line ends."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


# -- packing ------------------------------------------------------------------


def _span_text(lines: Sequence[str], start: int, end: int) -> str:
    return "\n".join(lines[start : end + 1])


def _span_size(lines: Sequence[str], start: int, end: int) -> int:
    return sum(len(line) + 1 for line in lines[start : end + 1]) - 1


def _paragraphs(lines: Sequence[str], start: int, end: int) -> list[tuple[int, int]]:
    """Maximal runs of non-blank lines within [start, end] (0-based, inclusive)."""
    blocks: list[tuple[int, int]] = []
    first: int | None = None
    for i in range(start, end + 1):
        if lines[i].strip():
            if first is None:
                first = i
        elif first is not None:
            blocks.append((first, i - 1))
            first = None
    if first is not None:
        blocks.append((first, end))
    return blocks


def _split_long_line(line: str, number: int, key: str | None) -> list[Chunk]:
    return [
        Chunk(line[i : i + MAX_CHUNK_CHARS], number, number, key)
        for i in range(0, len(line), MAX_CHUNK_CHARS)
        if line[i : i + MAX_CHUNK_CHARS].strip()
    ]


def pack_blocks(
    lines: Sequence[str],
    blocks: Sequence[tuple[int, int]],
    key: str | None = None,
    headings: tuple[str, ...] = (),
) -> list[Chunk]:
    """Greedily join consecutive blocks into chunks of at most MAX_CHUNK_CHARS.

    Input: 0-based inclusive line ranges in order.  A chunk spans from its
    first block's start to its last block's end (blank lines in between are
    kept).  A block that alone is too large is cut at line boundaries, and a
    line that alone is too large is cut every MAX_CHUNK_CHARS characters.
    Keys: the first chunk gets `key`, later ones `key#2`, `key#3`, ...; every
    chunk gets `headings`.
    Complexity: O(total characters).
    """
    spans: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for start, end in blocks:
        if current is not None and _span_size(lines, current[0], end) <= MAX_CHUNK_CHARS:
            current = (current[0], end)
            continue
        if current is not None:
            spans.append(current)
        current = (start, end)
    if current is not None:
        spans.append(current)
    chunks: list[Chunk] = []
    for start, end in spans:
        if _span_size(lines, start, end) <= MAX_CHUNK_CHARS:
            chunks.append(Chunk(_span_text(lines, start, end), start + 1, end + 1))
            continue
        first = start
        for i in range(start, end + 1):
            if len(lines[i]) > MAX_CHUNK_CHARS:
                if first < i:
                    chunks.append(Chunk(_span_text(lines, first, i - 1), first + 1, i))
                chunks.extend(_split_long_line(lines[i], i + 1, None))
                first = i + 1
            elif _span_size(lines, first, i) > MAX_CHUNK_CHARS:
                chunks.append(Chunk(_span_text(lines, first, i - 1), first + 1, i))
                first = i
        if first <= end:
            chunks.append(Chunk(_span_text(lines, first, end), first + 1, end + 1))
    kept = [c for c in chunks if c.text.strip()]
    return [
        Chunk(c.text, c.line_start, c.line_end, _part_key(key, n), headings)
        for n, c in enumerate(kept)
    ]


def _part_key(key: str | None, index: int) -> str | None:
    if key is None:
        return None
    return key if index == 0 else f"{key}#{index + 1}"


# -- plain text and generic code ---------------------------------------------------


def chunk_paragraphs(text: str) -> list[Chunk]:
    """Paragraph-aware chunks (blank lines separate paragraphs); no keys.  O(n)."""
    lines = split_lines(text)
    return pack_blocks(lines, _paragraphs(lines, 0, len(lines) - 1))


# -- Markdown -------------------------------------------------------------------


# A section as the chunkers see it: 0-based inclusive lines, its heading (None
# for the preamble) and its heading path (outermost first; () for the preamble).
Section = tuple[int, int, str | None, tuple[str, ...]]
# A section start: line, heading, nesting level (1 = outermost).
_Start = tuple[int, str | None, int]


def markdown_outline(lines: Sequence[str]) -> list[Section]:
    """(start, end, heading, heading path) of every Markdown section, 0-based inclusive.

    ATX (`# Title`, level = the number of `#`) and setext (`Title` over
    `===`, level 1, or `---`, level 2) headings start a section; lines inside
    fenced code blocks and a leading `---` front-matter block are never
    headings.  The preamble before the first heading has heading None.  O(lines).
    """
    starts: list[_Start] = [(0, None, 0)]
    fence: str | None = None
    i = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for j in range(1, len(lines)):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                break
    while i < len(lines):
        line = lines[i]
        opener = _FENCE.match(line)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
        elif opener:
            fence = opener.group(1)
        elif (atx := _ATX_HEADING.match(line)) is not None:
            level = len(atx.group(1))
            starts.append((i, (atx.group(2) or "").strip() or atx.group(1), level))
        elif (
            line.strip()
            and i + 1 < len(lines)
            and _SETEXT_UNDERLINE.match(lines[i + 1])
            and (i == 0 or not lines[i - 1].strip())
        ):
            starts.append((i, line.strip(), 1 if lines[i + 1].strip()[0] == "=" else 2))
            i += 1  # the underline belongs to the heading
        i += 1
    return _sections_from_starts(starts, len(lines))


def markdown_sections(lines: Sequence[str]) -> list[tuple[int, int, str | None]]:
    """(start, end, heading) line ranges, 0-based inclusive; heading None for the preamble
    (`markdown_outline` without the paths).  O(lines)."""
    return [(start, end, heading) for start, end, heading, _ in markdown_outline(lines)]


def _sections_from_starts(starts: Sequence[_Start], line_count: int) -> list[Section]:
    """Sections from section starts: each ends where the next starts, its path is the
    headings of the open sections of lower level plus its own; empty ranges (the
    preamble when a heading opens the file) are dropped.  O(starts × depth)."""
    sections: list[Section] = []
    open_: list[tuple[int, str]] = []  # (level, heading) of the enclosing sections
    for n, (start, heading, level) in enumerate(starts):
        if heading is not None:
            while open_ and open_[-1][0] >= level:
                open_.pop()
            open_.append((level, heading))
        path = tuple(h for _, h in open_) if heading is not None else ()
        end = starts[n + 1][0] - 1 if n + 1 < len(starts) else line_count - 1
        if end >= start:
            sections.append((start, end, heading, path))
    return sections


def chunk_markdown(text: str) -> list[Chunk]:
    """Heading-aware chunks: one per section (small sections merged into the next,
    large ones split by paragraphs); key = the section's heading, headings = its
    heading path.  O(n)."""
    lines = split_lines(text)
    return chunk_sections(lines, markdown_outline(lines))


# -- reStructuredText ----------------------------------------------------------


def rst_outline(lines: Sequence[str]) -> list[Section]:
    """(start, end, title, title path) of every section of a reST document, 0-based inclusive.

    A title is a non-blank line followed by an adornment line (one repeated
    punctuation character) at least as long as the title, optionally with
    the same adornment above it (the overline starts the section).  A title
    must follow a blank line (or an overline, or start the file) and is
    unindented unless overlined (reST lets an overlined title be inset, as
    document titles usually are); the preamble before the first title has
    title None.  Levels are reST's: each
    adornment style (character, with or without overline) is one level, in
    the order the document first uses them.  O(lines).
    """
    starts: list[_Start] = [(0, None, 0)]
    styles: dict[tuple[str, bool], int] = {}
    i = 0
    while i + 1 < len(lines):
        if _is_rst_title(lines, i):
            under = lines[i + 1].rstrip()
            over = i > 0 and lines[i - 1].rstrip() == under
            level = styles.setdefault((under[0], over), len(styles) + 1)
            starts.append((i - 1 if over else i, lines[i].strip(), level))
            i += 2
            continue
        i += 1
    return _sections_from_starts(starts, len(lines))


def _is_rst_title(lines: Sequence[str], i: int) -> bool:
    """Is line `i` a reST section title (`rst_outline`'s rule)?  O(1)."""
    title = lines[i].rstrip()
    under = lines[i + 1].rstrip()
    over = i > 0 and lines[i - 1].rstrip() == under
    return bool(
        title.strip()
        and not _RST_ADORNMENT.match(title)
        and (over or not title.startswith((" ", "\t")))
        and _RST_ADORNMENT.match(under)
        and len(under) >= len(title)
        and (over or i == 0 or not lines[i - 1].strip())
    )


def rst_sections(lines: Sequence[str]) -> list[tuple[int, int, str | None]]:
    """(start, end, title) line ranges of a reST document, 0-based inclusive
    (`rst_outline` without the paths).  O(lines)."""
    return [(start, end, title) for start, end, title, _ in rst_outline(lines)]


def looks_like_rst(lines: Sequence[str]) -> bool:
    """True when a plain-text file has reST section titles (a `.txt` docs tree, such
    as a web framework's, is reST): at least one title per RST_TITLE_LINES lines
    and at least one.  O(lines)."""
    titles = sum(1 for _, _, title, _ in rst_outline(lines) if title is not None)
    return titles >= max(1, len(lines) // RST_TITLE_LINES)


def chunk_rst(text: str) -> list[Chunk]:
    """Heading-aware chunks of a reST document (as `chunk_markdown`).  O(n)."""
    lines = split_lines(text)
    return chunk_sections(lines, rst_outline(lines))


def chunk_sections(lines: Sequence[str], sections: Sequence[Section]) -> list[Chunk]:
    """One chunk per section: small ones merged into the next, large ones split
    by paragraphs; key = the section's heading ("(preamble)" before the first),
    headings = its heading path (a merged chunk keeps those of its first titled
    section)."""
    merged: list[Section] = []
    for start, end, heading, path in sections:
        if merged:
            prev_start, prev_end, prev_heading, prev_path = merged[-1]
            small = _span_size(lines, prev_start, prev_end) < MIN_SECTION_CHARS
            if small and _span_size(lines, prev_start, end) <= MAX_CHUNK_CHARS:
                keep = prev_heading is not None
                merged[-1] = (
                    prev_start,
                    end,
                    prev_heading if keep else heading,
                    prev_path if keep else path,
                )
                continue
        merged.append((start, end, heading, path))
    chunks: list[Chunk] = []
    for start, end, heading, path in merged:
        blocks = _paragraphs(lines, start, end)
        chunks.extend(pack_blocks(lines, blocks, heading or "(preamble)", path))
    return chunks


# -- Python -----------------------------------------------------------------------


def _definition_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ClassDef):
        return f"class {node.name}"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return f"def {node.name}"
    return None


def _first_line(node: ast.stmt) -> int:
    """0-based first line of a statement, decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators]) - 1


def _with_leading_comments(lines: Sequence[str], start: int, floor: int) -> int:
    # Comment lines directly above a definition describe it: keep them together.
    while start - 1 >= floor and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return start


def _member_name(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name
    return None


def _class_chunks(lines: Sequence[str], node: ast.ClassDef, start: int) -> list[Chunk]:
    """A large class, split at its members (each with its decorators and comments).

    A member definition of at least MIN_SECTION_CHARS is its own chunk (packed
    by paragraphs when larger than MAX_CHUNK_CHARS), key `def Class.member`
    (`class Class.Inner` for a nested class), headings (Class, member); the
    class line, docstring, attributes and runs of smaller members are packed
    together, keys `class Class`, `class Class#2`, ..., headings (Class,).
    O(lines of the class).
    """
    end = (node.end_lineno or node.lineno) - 1
    chunks: list[Chunk] = []
    run: list[tuple[int, int]] = []
    parts = 0

    def flush() -> None:
        nonlocal parts
        for chunk in pack_blocks(lines, run, None, (node.name,)):
            key = _part_key(f"class {node.name}", parts)
            chunks.append(Chunk(chunk.text, chunk.line_start, chunk.line_end, key, (node.name,)))
            parts += 1
        run.clear()

    cursor = start
    for member in node.body:
        first = _with_leading_comments(lines, _first_line(member), cursor)
        last = (member.end_lineno or member.lineno) - 1
        if first > cursor:
            run.append((cursor, first - 1))
        name = _member_name(member)
        if name is not None and _span_size(lines, first, last) >= MIN_SECTION_CHARS:
            flush()
            kind = "class" if isinstance(member, ast.ClassDef) else "def"
            key = f"{kind} {node.name}.{name}"
            blocks = _paragraphs(lines, first, last)
            chunks.extend(pack_blocks(lines, blocks, key, (node.name, name)))
        else:
            run.append((first, last))
        cursor = last + 1
    if cursor <= end:
        run.append((cursor, end))
    flush()
    return chunks


def parse_python(text: str) -> ast.Module | None:
    """The module's syntax tree, or None when it does not parse."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def chunk_python(text: str, tree: ast.Module | None = None) -> list[Chunk]:
    """Definition-aware chunks: each top-level def/class (with decorators and the
    comments right above it) is its own chunk, keyed `def name` / `class Name`,
    headings = (name,); a larger class is split at its members (`_class_chunks`),
    a larger function at its paragraphs; module-level code between definitions
    is paragraph-packed (no key, no headings).  Falls back to
    paragraphs when the source does not parse (e.g. cut at max_read_bytes).
    `tree` is the already parsed module, if the caller has it.
    Complexity: O(n) plus the parse.
    """
    tree = tree if tree is not None else parse_python(text)
    if tree is None:
        return chunk_paragraphs(text)
    lines = split_lines(text)
    chunks: list[Chunk] = []
    cursor = 0
    for node in tree.body:
        name = _definition_name(node)
        if name is None:
            continue
        start = _with_leading_comments(lines, _first_line(node), cursor)
        end = (node.end_lineno or node.lineno) - 1
        if start > cursor:
            chunks.extend(pack_blocks(lines, _paragraphs(lines, cursor, start - 1)))
        symbol = (getattr(node, "name", ""),)
        if _span_size(lines, start, end) <= MAX_CHUNK_CHARS:
            text = _span_text(lines, start, end)
            chunks.append(Chunk(text, start + 1, end + 1, name, symbol))
        elif isinstance(node, ast.ClassDef) and node.body:
            chunks.extend(_class_chunks(lines, node, start))
        else:
            chunks.extend(pack_blocks(lines, _paragraphs(lines, start, end), name, symbol))
        cursor = end + 1
    if cursor < len(lines):
        chunks.extend(pack_blocks(lines, _paragraphs(lines, cursor, len(lines) - 1)))
    return chunks


def chunk_text(text: str, fmt: str) -> list[Chunk]:
    """Chunks of a file's text by its format (see `file_format`); a "text" file
    that `looks_like_rst` is chunked as reST.  O(n)."""
    if fmt == "markdown":
        return chunk_markdown(text)
    if fmt == "rst":
        return chunk_rst(text)
    if fmt == "python":
        return chunk_python(text)
    if fmt == "text" and looks_like_rst(split_lines(text)):
        return chunk_rst(text)
    return chunk_paragraphs(text)
