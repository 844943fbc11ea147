"""Fields of an ingested node a ranker weighs besides its text: path and headings.

A reader looks for an answer by where it sits as much as by its words: the
file's path (``scheme/lifetime/elision.md``, ``rich/table.py``) and the
chunk's heading path or symbol path (``Configuration Files``,
``("Table", "add_column")``; `ingest.chunking`).  A chunk's text often lacks
those words — the second part of a long section does not repeat its title,
a method's body does not repeat its class — so stage 1 gives each ingested
candidate a *field match*:

    share(node) = sum of idf(t) over the distinct query terms t found in its fields
                  / sum of idf(t) over all distinct query terms

    own(node)   = the same share over the chunk's own title alone

and multiplies its stage-1 score by ``1 + FIELD_GAIN × (share + own)`` (a
BM25F-like boost of the title fields, applied to candidates only: it reorders
what the text found, it finds nothing new).  The own title is the innermost
heading of a heading path of at least two (a section inside a titled
document, a member inside its class): the path and the outer headings are
shared by every chunk of the file and tell files apart, the own title is
what tells a file's chunks apart — a reader who opens ``slide-shows.rst``
for "make a slide show" reads the section titled "Generating a Slide Show",
whose words the path already holds, so without its own weight it ranks no
higher than its siblings.  A path of one heading is a document's title (or a
top-level definition, which its text already names) and earns nothing more.
Field terms are the index's document terms (stemmed, identifier parts split:
``add_column`` gives add, column; a CamelCase name also gives its words:
``TimeRemainingColumn`` gives time, remaining, column), the query's its query
terms, so both sides match as BM25 matches them.
Nodes not ingested from a file (conversation turns, facts an agent wrote)
have no fields: their score is unchanged.  Deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from ..model import Node
from .bm25 import bm25_tokens
from .provenance import INGESTED_KINDS

# Weight of a full field match: a chunk whose path and headings hold every
# query term scores twice its text score (three times when its own title
# holds them all too).  Tune questions of
# benchmarks/data/docs, effort 0 file@1 of 58: gain 0 -> 39, 0.5 -> 44,
# 1.0 -> 44, 1.5 -> 45, 2.5 -> 43 (a plateau; its middle is taken).
FIELD_GAIN: Final = 1.0
# The boundaries inside a CamelCase name: lower or digit -> upper
# (`TimeRemaining`), and an acronym's last capital before a word (`HTMLFormat`).
_CAMEL_BOUNDARY: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# A heading path of at least this many headings has an own title (module docstring).
OWN_TITLE_DEPTH: Final = 2


def with_camel_words(text: str) -> str:
    """`text` followed by its CamelCase names cut into words ("RichHandler" ->
    "RichHandler Rich Handler"); `text` alone when it has none.  O(len(text))."""
    split = _CAMEL_BOUNDARY.sub(" ", text)
    return text if split == text else f"{text} {split}"


def own_title(node: Node) -> str:
    """The innermost heading of an ingested chunk's heading path of at least
    OWN_TITLE_DEPTH headings ("" otherwise, module docstring).  O(1)."""
    headings = node.metadata.get("headings")
    if node.metadata.get("kind") not in INGESTED_KINDS or not isinstance(headings, list):
        return ""
    if len(headings) < OWN_TITLE_DEPTH or not isinstance(headings[-1], str):
        return ""
    return headings[-1]


def field_text(node: Node) -> str:
    """The path and heading / symbol path of an ingested node, space-joined, with
    their CamelCase words (`with_camel_words`; "" for any other node).  O(len(fields))."""
    meta = node.metadata
    if meta.get("kind") not in INGESTED_KINDS:
        return ""
    path = meta.get("path")
    headings = meta.get("headings")
    parts = [path] if isinstance(path, str) else []
    if isinstance(headings, list):
        parts.extend(h for h in headings if isinstance(h, str))
    return with_camel_words(" ".join(parts))


def field_share(
    fields: Iterable[str], query_terms: Sequence[str], idf: Callable[[str], float]
) -> float:
    """The idf-weighted share of the distinct `query_terms` among `fields` (module
    docstring); 0.0 without query terms or idf mass.  O(len(query_terms))."""
    present = frozenset(fields)
    distinct = sorted(set(query_terms))
    total = sum(idf(term) for term in distinct)
    if total <= 0.0:
        return 0.0
    return sum(idf(term) for term in distinct if term in present) / total


def field_factor(
    node: Node,
    query_terms: Sequence[str],
    idf: Callable[[str], float],
    document_terms: Callable[[list[str]], list[str]],
    gain: float = FIELD_GAIN,
) -> float:
    """``1 + gain × (share + own)`` of one node (module docstring; 1.0 for a node
    without fields).  O(len(fields))."""
    text = field_text(node)
    if not text or gain <= 0.0:
        return 1.0
    share = field_share(document_terms(bm25_tokens(text)), query_terms, idf)
    title = own_title(node)
    if title:
        title_terms = document_terms(bm25_tokens(with_camel_words(title)))
        share += field_share(title_terms, query_terms, idf)
    return 1.0 + gain * share
