"""Contradiction cues: lexical signs that two similar statements make incompatible claims.

Rules of this file: pure functions of two strings; every cue needs evidence
that both statements are about the same claim (`claim_overlap`), because a
cue alone (a "not", a number) is in almost every sentence.  Measured on
tests/data/contradiction_pairs.tsv (272 labelled pairs, half contradictions):
see SPEC "Contradiction cues" for the figures; tests/test_contradiction_cues.py
keeps precision >= 0.9.

Cues (callers also require embedding similarity):

- ``negation`` — exactly one statement is negated (not/no/never/…/n't) and
  claim overlap >= `SAME_CLAIM_OVERLAP`;
- ``update`` — a replacement word only one side has: a strong one
  ("instead", "no longer", "anymore") with the overlap, or a weak one
  ("now", "moved", "replaced", …) with the overlap and a differing content
  word on each side (something was replaced by something else);
- ``antonym`` — one says X, the other its opposite (`ANTONYM_PAIRS`),
  neither says both, with the overlap;
- ``number`` — a number on one side stands in the same slot as a different
  number on the other (same word before or after: "port 8080" /
  "port 9090", "at 02:00" / "at 04:00", "384-dimensional" / "768-dimensional";
  a month name before either counts as the same word: "Jan 18" / "Feb 3").
  Digits inside identifiers ("PS-2", "E-47", "v1") are not numbers; number
  words one..twelve are;
- ``value`` — when no other cue fires, the update rule
  (`retrieval.claims.detect_update`, either order): the same claim with another
  value ("90 °C" / "95 °C", "blue" / "green");
- ``entity`` — token sets overlap >= `ENTITY_SWAP_MIN_OVERLAP` (Jaccard) and
  each side has a capitalised inner word the other lacks ("lives in Paris" /
  "lives in Berlin").
"""

from __future__ import annotations

import re
from typing import Final

from ..embed import tokenize
from ..retrieval.claims import NUMBER_WORDS, detect_update
from ..retrieval.keywords import content_words, fold

NEGATIONS: Final = frozenset(
    {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without"}
)
_CONTRACTION_NEGATION: Final = re.compile(r"n['’]t\b", re.IGNORECASE)
STRONG_UPDATE_CUES: Final = frozenset({"instead", "anymore", "longer"})  # "no longer"
WEAK_UPDATE_CUES: Final = frozenset(
    {
        "now",
        "changed",
        "replaced",
        "moved",
        "switched",
        "updated",
        "formerly",
        "previously",
        "renamed",
    }
)
UPDATE_CUES: Final = STRONG_UPDATE_CUES | WEAK_UPDATE_CUES
ANTONYM_PAIRS: Final = (
    ("open", "closed"),
    ("on", "off"),
    ("true", "false"),
    ("enabled", "disabled"),
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("up", "down"),
    ("high", "low"),
    ("higher", "lower"),
    ("allowed", "forbidden"),
    ("valid", "invalid"),
    ("safe", "unsafe"),
    ("success", "failure"),
    ("succeeded", "failed"),
    ("succeeds", "fails"),
    ("pass", "fail"),
    ("passed", "failed"),
    ("always", "never"),
    ("above", "below"),
    ("more", "less"),
    ("start", "stop"),
    ("started", "stopped"),
    ("accept", "reject"),
    ("accepted", "rejected"),
    ("include", "exclude"),
    ("includes", "excludes"),
    ("included", "excluded"),
    ("present", "absent"),
    ("active", "inactive"),
    ("available", "unavailable"),
    ("correct", "incorrect"),
    ("possible", "impossible"),
    ("legal", "illegal"),
    ("positive", "negative"),
    ("hot", "cold"),
    ("dark", "light"),
    ("online", "offline"),
    ("alive", "dead"),
    ("win", "lose"),
    ("won", "lost"),
    ("before", "after"),
    ("supported", "unsupported"),
    ("required", "optional"),
    ("love", "hate"),
    ("easy", "difficult"),
    ("older", "younger"),
    ("full", "empty"),
    ("small", "huge"),
    ("calm", "nervous"),
    ("great", "awful"),
    ("flat", "steep"),
)
_ANTONYM_WORDS: Final = frozenset(word for pair in ANTONYM_PAIRS for word in pair)
# A standalone number: not preceded by a letter, digit, '.', '-' (so "PS-2", "v1" are
# identifiers), not followed by a letter except an ordinal suffix; "12-test" is a number.
_NUMBER: Final = re.compile(r"(?<![\w.-])(\d+(?:[.,:]\d+)*)(?:st|nd|rd|th)?(?![\w])")
_WORD: Final = re.compile(r"\w+")
# Neighbours that name the same kind of slot: "Jan 18" and "Feb 3" are both a day of a month.
_MONTH_TEXT: Final = """
    jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june
    july august september october november december
"""
_MONTHS: Final = frozenset(_MONTH_TEXT.split())
_IDENTIFIER: Final = re.compile(r"(?<![\w.-])(?=[\w.-]*\d)[^\W_](?:[\w.-]*[^\W_])?(?![\w-])")
_CUE_WORDS: Final = NEGATIONS | UPDATE_CUES | _ANTONYM_WORDS | frozenset(NUMBER_WORDS)
SAME_CLAIM_OVERLAP: Final = 0.5
"""Share of the smaller claim's words the other must contain: "the pump is running" /
"the pump is not running" share 2 of 2; "I don't have big plans" / "I saved 300
dollars" share 0."""
ENTITY_SWAP_MIN_OVERLAP: Final = 0.5


def negated(text: str) -> bool:
    """Whether `text` contains a negation word or an n't contraction.  O(len(text))."""
    return bool(NEGATIONS.intersection(tokenize(text))) or bool(_CONTRACTION_NEGATION.search(text))


def claim_words(text: str) -> set[str]:
    """Content words and identifiers of `text`, without the cue words themselves."""
    words = set(content_words(text)) | {m.group(0).casefold() for m in _IDENTIFIER.finditer(text)}
    return {w for w in words if w not in _CUE_WORDS}


def claim_overlap(first: str, second: str) -> float:
    """|A ∩ B| / min(|A|, |B|) over `claim_words`; 0 if either is empty.  O(text)."""
    a, b = claim_words(first), claim_words(second)
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def numbers_in_slots(text: str) -> list[tuple[str, str | None, str | None]]:
    """(number, word before, word after) for each standalone number or number word."""
    words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]
    found: list[tuple[str, str | None, str | None]] = []
    spans = {m.start(): m for m in _NUMBER.finditer(text)}
    for i, (word, start, _) in enumerate(words):
        value = None
        if start in spans:
            value = spans[start].group(1)
        elif word.lower() in NUMBER_WORDS:
            value = NUMBER_WORDS[word.lower()]
        if value is None:
            continue
        end = spans[start].end() if start in spans else words[i][2]
        before = next((w for w, s, _ in reversed(words[:i]) if not w.isdigit()), None)
        after = next((w for w, s, _ in words[i + 1 :] if s >= end and not w.isdigit()), None)
        found.append((value, _slot_word(before), _slot_word(after)))
    return found


def _slot_word(word: str | None) -> str | None:
    """A neighbour word as a slot label: folded, lower case, a month name as "<month>"."""
    if word is None:
        return None
    lowered = word.lower()
    return "<month>" if lowered in _MONTHS else fold(lowered)


def _number_cue(first: str, second: str) -> bool:
    """Two numbers in the same slot (same word before or after) with different values."""
    slots_b = numbers_in_slots(second)
    return any(
        value != other
        and (
            (before is not None and before == other_before)
            or (after is not None and after == other_after)
        )
        for value, before, after in numbers_in_slots(first)
        for other, other_before, other_after in slots_b
    )


def _capitalised_inner_words(text: str) -> set[str]:
    """Lower-cased words written with a capital letter, except each sentence's first word."""
    found: set[str] = set()
    for sentence in re.split(r"[.!?]\s+", text):
        words = _WORD.findall(sentence)
        found.update(word.lower() for word in words[1:] if word[:1].isupper())
    return found


def contradiction_cues(first: str, second: str) -> list[str]:
    """The cue names (sorted) that say `first` and `second` disagree (module docstring).

    Symmetric in its arguments.  O(len(first) + len(second)).
    """
    cues: set[str] = set()
    tokens_a, tokens_b = set(tokenize(first)), set(tokenize(second))
    same_claim = claim_overlap(first, second) >= SAME_CLAIM_OVERLAP
    if same_claim and negated(first) != negated(second):
        cues.add("negation")
    one_sided = tokens_a ^ tokens_b
    if same_claim and STRONG_UPDATE_CUES & one_sided:
        cues.add("update")
    elif same_claim and WEAK_UPDATE_CUES & one_sided:
        words_a, words_b = claim_words(first), claim_words(second)
        if words_a - words_b and words_b - words_a:
            cues.add("update")
    if same_claim:
        for left, right in ANTONYM_PAIRS:
            a_left, a_right = left in tokens_a, right in tokens_a
            b_left, b_right = left in tokens_b, right in tokens_b
            if (a_left and b_right and not a_right and not b_left) or (
                a_right and b_left and not a_left and not b_right
            ):
                cues.add("antonym")
                break
    if _number_cue(first, second):
        cues.add("number")
    union = tokens_a | tokens_b
    if union and len(tokens_a & tokens_b) / len(union) >= ENTITY_SWAP_MIN_OVERLAP:
        only_a = (tokens_a - tokens_b) & _capitalised_inner_words(first)
        only_b = (tokens_b - tokens_a) & _capitalised_inner_words(second)
        if only_a and only_b:
            cues.add("entity")
    if not cues and (detect_update(first, second) or detect_update(second, first)):
        cues.add("value")
    return sorted(cues)
