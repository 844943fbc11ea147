"""LLM-free entity extraction and the in-memory entity index (multi-hop retrieval).

HippoRAG's idea (Gutiérrez et al., "HippoRAG", NeurIPS 2024) without its
LLM: at write time every node's content is reduced to *entity keys* by a
small deterministic extractor; at query time Personalized PageRank over the
bipartite graph passage ↔ entity carries a seed passage's score to the other
passages that mention the same entities (`walk.entity_stage`).

Rules of this file:

* Extraction is pure and deterministic (regular expressions and a tiny rule
  tagger; no model, no download).  What counts as an entity:
  - **proper-noun spans** — runs of capitalised words (``"New York City"``),
    which may be joined by one lower-case connector (``"Bank of America"``);
    function words (`FUNCTION_WORDS`) never start or end a span, so a
    sentence-initial "The"/"What" is dropped;
  - **quoted terms** — 1–`MAX_QUOTED_WORDS` words between straight or curly
    double quotes;
  - **identifiers and codes** — a token mixing letters and digits, or
    letters, a hyphen and digits (``E-47``, ``PS-2``, ``v2``, ``RFC7231``);
  - **numbers with units** and four-digit years (``5 km``, ``1987``);
  - **noun-phrase chunks** — runs of 2–`MAX_PHRASE_WORDS` content words
    (not function words, at least `MIN_CONTENT_CHARS` characters) inside a
    clause (`noun_phrases`), e.g. ``"pottery class"``.
* A key is the lower-cased, `stem.light_stem`-ed tokens joined by a space,
  so "Pottery Classes" and "pottery class" are one entity.
* The index is derived state: built from the nodes table on first use, kept
  current on every committed write (with the BM25 index) and saved with it
  (`dump` / `load`, in `derived_indexes`, so a fresh process does not
  re-extract 50K nodes) — a GDPR erase drops every saved index, so erasing a
  node leaves nothing behind (as for the BM25 index).  It adds no
  node to the graph, so entities never compete with memories in results and
  never count against the forgetting budget.
* Query entities are found by looking every 1–`MAX_QUERY_NGRAM`-gram of the
  query up in the index's vocabulary (the query need not be capitalised).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..embed import tokenize
from ..engine import Engine
from .stem import light_stem

# The saved copy's layout (`EntityIndex.dump`, kept by the engine like the BM25 index).
_DUMP_FORMAT: Final = "graphonomous-entities/1"
MAX_QUOTED_WORDS: Final = 6
MAX_PHRASE_WORDS: Final = 3
MIN_CONTENT_CHARS: Final = 3
MAX_SPAN_WORDS: Final = 6
# Query n-grams looked up in the vocabulary: the longest extracted key has
# MAX_SPAN_WORDS words, but query mentions of longer names are rare.
MAX_QUERY_NGRAM: Final = 4

# Function words: never an entity on their own, never the edge of a span.
_FUNCTION_WORDS_TEXT: Final = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    else ever every few for from further get gets got had has have having he her here hers
    herself him himself his how i if in into is it its itself just let like me more most
    much my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up upon us very was we were what when
    where which while who whom whose why will with would yes yet you your yours yourself
    yourselves oh ok okay hey hi hello thanks thank yeah wow really well sure maybe also one
    ones thing things something anything everything nothing lot lots way ways time times day
    days today tomorrow yesterday year years week weeks month months
"""
FUNCTION_WORDS: Final = frozenset(_FUNCTION_WORDS_TEXT.split())
# Lower-case words allowed *inside* a proper-noun span ("Bank of America").
SPAN_CONNECTORS: Final = frozenset({"of", "de", "da", "del", "der", "van", "von", "la", "le"})
UNITS: Final = (
    "%|percent|km|kg|g|mg|m|cm|mm|mi|miles?|kms?|kilomet(?:er|re)s?|met(?:er|re)s?|"
    "feet|foot|ft|inch(?:es)?|lbs?|pounds?|hours?|hrs?|minutes?|mins?|seconds?|secs?|"
    "ms|gb|mb|kb|tb|ghz|mhz|hz|kw|w|v|mph|kph|°c|°f|usd|eur|dollars?|euros?"
)

_WORD: Final = re.compile(r"[^\W_][\w'’.-]*[^\W_]|[^\W_]", re.UNICODE)
_QUOTED: Final = re.compile(r"[\"“”]([^\"“”\n]{1,80})[\"“”]")
_CODE: Final = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[^\W_][\w]*(?:-[\w]+)*\b")
_NUMBER_UNIT: Final = re.compile(rf"\b(\d+(?:[.,]\d+)?)\s?({UNITS})(?![\w])", re.IGNORECASE)
_YEAR: Final = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
# Clause boundaries of spans and chunks: line breaks and punctuation other
# than hyphen/apostrophe.
_CLAUSE: Final = re.compile(r"[^\w \t'’-]+")


def entity_key(words: Iterable[str]) -> str:
    """The canonical key of a mention: lower-cased, light-stemmed tokens joined by a space."""
    return " ".join(light_stem(token) for word in words for token in tokenize(word))


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper()


def proper_noun_spans(text: str) -> list[str]:
    """Runs of capitalised words, joined by at most one connector, function words trimmed."""
    spans: list[str] = []
    for clause in _CLAUSE.split(text):
        words = _WORD.findall(clause)
        run: list[str] = []
        for index, word in enumerate([*words, ""]):
            nxt = words[index + 1] if index + 1 < len(words) else ""
            if (
                word
                and _is_capitalised(word)
                and len(run) < MAX_SPAN_WORDS
                and not (run and word.lower() in FUNCTION_WORDS)
            ):
                run.append(word)
                continue
            if (
                run
                and word.lower() in SPAN_CONNECTORS
                and _is_capitalised(nxt)
                and len(run) < MAX_SPAN_WORDS - 1
            ):
                run.append(word)
                continue
            spans.extend(_trimmed(run))
            run = [word] if word and _is_capitalised(word) else []
    return spans


def _trimmed(run: list[str]) -> list[str]:
    """A span without leading/trailing function words or connectors ([] if nothing is left)."""
    start, end = 0, len(run)
    while start < end and run[start].lower() in FUNCTION_WORDS | SPAN_CONNECTORS:
        start += 1
    while end > start and run[end - 1].lower() in FUNCTION_WORDS | SPAN_CONNECTORS:
        end -= 1
    return [" ".join(run[start:end])] if end > start else []


def noun_phrases(text: str) -> list[str]:
    """Runs of 2..`MAX_PHRASE_WORDS` content words inside a clause (a rule chunker).

    A content word is lower-case alphabetic, not a function word, at least
    `MIN_CONTENT_CHARS` long; a longer run yields its leading and trailing
    windows of `MAX_PHRASE_WORDS` words.  O(len(text)).
    """
    phrases: list[str] = []
    for clause in _CLAUSE.split(text):
        run: list[str] = []
        for word in [*_WORD.findall(clause), ""]:
            plain = word.lower()
            if (
                word
                and word.isalpha()
                and not _is_capitalised(word)
                and plain not in FUNCTION_WORDS
                and len(plain) >= MIN_CONTENT_CHARS
            ):
                run.append(plain)
                continue
            if len(run) >= 2:
                phrases.append(" ".join(run[:MAX_PHRASE_WORDS]))
                if len(run) > MAX_PHRASE_WORDS:
                    phrases.append(" ".join(run[-MAX_PHRASE_WORDS:]))
            run = []
    return phrases


def extract_entities(text: str) -> dict[str, int]:
    """Entity key -> mention count in `text` (the module docstring's rules), first-seen order.

    Single-token keys that are function words or shorter than 2 characters
    are dropped.  Deterministic; O(len(text)).
    """
    mentions: list[str] = []
    mentions.extend(proper_noun_spans(text))
    mentions.extend(match.group(1) for match in _QUOTED.finditer(text))
    mentions.extend(match.group(0) for match in _CODE.finditer(text))
    mentions.extend(f"{m.group(1)} {m.group(2)}" for m in _NUMBER_UNIT.finditer(text))
    mentions.extend(match.group(1) for match in _YEAR.finditer(text))
    mentions.extend(noun_phrases(text))
    counts: dict[str, int] = {}
    for mention in mentions:
        words = mention.split()
        if len(words) > MAX_QUOTED_WORDS:
            continue
        key = entity_key(words)
        if not key or (" " not in key and (key in FUNCTION_WORDS or len(key) < 2)):
            continue
        counts[key] = counts.get(key, 0) + 1
    return counts


class EntityIndex:
    """Entity key -> {node id: mentions}, and node id -> its keys; kept current on writes.

    Not thread-safe by itself: the facade calls it under its lock.
    """

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, int]] = {}
        self._entities: dict[str, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self._entities)

    def add(self, node_id: str, content: str) -> None:
        """Index (or re-index) one node's content.  O(len(content))."""
        self.remove(node_id)
        found = extract_entities(content)
        if not found:
            return
        # One string object per key and node id (`sys.intern`), however many nodes
        # mention it: at 50K nodes the repeated copies were ~40 % of the index.
        node_id = sys.intern(node_id)
        keys = tuple(map(sys.intern, found))
        self._entities[node_id] = keys
        for key, count in zip(keys, found.values(), strict=True):
            self._postings.setdefault(key, {})[node_id] = count

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        for node_id, content in items:
            self.add(node_id, content)

    def remove(self, node_id: str) -> None:
        """Forget a node (no-op if unknown).  O(its keys)."""
        for key in self._entities.pop(node_id, ()):
            posting = self._postings[key]
            posting.pop(node_id, None)
            if not posting:
                del self._postings[key]

    def dump(self) -> bytes:
        """The whole index as bytes (`load` restores it, dict orders included).  O(size)."""
        state = {
            "format": _DUMP_FORMAT,
            "postings": [[key, list(nodes.items())] for key, nodes in self._postings.items()],
            "entities": list(self._entities.items()),
        }
        return json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def load(cls, data: bytes) -> EntityIndex | None:
        """An index from `dump` bytes; None when they are not a readable dump.  O(size):
        no content is parsed again (the extraction is the expensive part).  A copy saved
        before the speaker table had its own index (`speakers`) also holds a ``"speaker"``
        list; it is ignored."""
        try:
            state = json.loads(data.decode("utf-8"))
            if not isinstance(state, dict) or state.get("format") != _DUMP_FORMAT:
                return None
            index = cls()
            intern = sys.intern  # one object per key and node id, as `add` keeps them
            index._postings = {
                intern(str(key)): {intern(str(node)): int(count) for node, count in nodes}
                for key, nodes in state["postings"]
            }
            index._entities = {
                intern(str(node)): tuple(intern(str(key)) for key in keys)
                for node, keys in state["entities"]
            }
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            return None
        return index

    def entities_of(self, node_id: str) -> tuple[str, ...]:
        """The node's entity keys in first-mention order (() if none)."""
        return self._entities.get(node_id, ())

    def mentions(self, key: str) -> Mapping[str, int]:
        """{node id: mention count} of an entity key ({} if unknown)."""
        return self._postings.get(key, {})

    def document_frequency(self, key: str) -> int:
        return len(self._postings.get(key, {}))

    def specificity(self, key: str) -> float:
        """ln(1 + N / df): how much sharing this entity says (0 for an unknown key)."""
        df = self.document_frequency(key)
        return math.log1p(len(self._entities) / df) if df else 0.0

    def query_entities(self, text: str) -> list[str]:
        """The query's known entities: its own extracted keys, then indexed n-grams.

        First the keys `extract_entities` finds in the query (a capitalised
        name, a code, a quoted term) that the index knows; then known keys
        among the query's 2..`MAX_QUERY_NGRAM`-grams, longest first (the
        query need not be capitalised), skipping an n-gram inside a longer
        match ("new york city" hides "new york").  Single lower-case words
        are not looked up: a sentence-initial "Located" in some passage must
        not make "located" an entity of every question.
        O(query tokens × MAX_QUERY_NGRAM).
        """
        found = [key for key in extract_entities(text) if key in self._postings]
        tokens = [light_stem(token) for token in tokenize(text)]
        covered = [False] * len(tokens)
        for size in range(min(MAX_QUERY_NGRAM, len(tokens)), 1, -1):
            for start in range(len(tokens) - size + 1):
                if all(covered[start : start + size]):
                    continue
                key = " ".join(tokens[start : start + size])
                if key in self._postings and key not in FUNCTION_WORDS and key not in found:
                    found.append(key)
                    for position in range(start, start + size):
                        covered[position] = True
        return found


__all__ = [
    "EntityIndex",
    "entity_key",
    "extract_entities",
    "noun_phrases",
    "proper_noun_spans",
]


def entity_index(engine: Engine[Any, Any]) -> EntityIndex:
    """The entity index of searchable content (the multi-hop walk), kept current with
    the database by the engine like the BM25 index."""
    index = engine.text_mirror("entities", EntityIndex)
    assert isinstance(index, EntityIndex)
    return index
