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

and multiplies its stage-1 score by ``1 + FIELD_GAIN × share`` (a BM25F-like
boost of the title fields, applied to candidates only: it reorders what the
text found, it finds nothing new).  Field terms are the index's document
terms (stemmed, identifier parts split: ``add_column`` gives add, column),
the query's its query terms, so both sides match as BM25 matches them.
Nodes not ingested from a file (conversation turns, facts an agent wrote)
have no fields: their score is unchanged.  Deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

from ..model import Node
from .bm25 import bm25_tokens
from .provenance import INGESTED_KINDS

# Weight of a full field match: a chunk whose path and headings hold every
# query term scores twice its text score.  Tune questions of
# benchmarks/data/docs, effort 0 file@1 of 58: gain 0 -> 39, 0.5 -> 44,
# 1.0 -> 44, 1.5 -> 45, 2.5 -> 43 (a plateau; its middle is taken).
FIELD_GAIN: Final = 1.0


def field_text(node: Node) -> str:
    """The path and heading / symbol path of an ingested node, space-joined ("" for
    any other node).  O(len(fields))."""
    meta = node.metadata
    if meta.get("kind") not in INGESTED_KINDS:
        return ""
    path = meta.get("path")
    headings = meta.get("headings")
    parts = [path] if isinstance(path, str) else []
    if isinstance(headings, list):
        parts.extend(h for h in headings if isinstance(h, str))
    return " ".join(parts)


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
    """``1 + gain × share`` of one node (1.0 for a node without fields).  O(len(fields))."""
    text = field_text(node)
    if not text or gain <= 0.0:
        return 1.0
    return 1.0 + gain * field_share(document_terms(bm25_tokens(text)), query_terms, idf)
