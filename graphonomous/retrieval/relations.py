"""LLM-free directed relations in prose: "A raises B", "B suppresses A", "C depends on D".

Rules of this file:

* Extraction is pure and deterministic (regular expressions over words; no
  model, no parser, no download).  A relation is a **cue** between two
  **mentions** in one sentence: the mention is the run of up to
  `MAX_MENTION_WORDS` content words (words that are not `entities.FUNCTION_WORDS`;
  identifiers and codes count) directly left of the cue and directly right of it.
  Only hedges and adverbs (`BETWEEN_WORDS`) may stand between a mention and its
  cue; anything else (a relative clause, a comma) means no relation — high
  precision first: a missed relation costs one edge, a wrong one fakes a loop.
* Cues (`CUES`), each with its reason:
  - causal, positive (`causes`, polarity ``positive``): raises, increases,
    causes, leads to, drives, triggers, produces, results in, amplifies,
    boosts, and their plural forms — verbs whose subject makes the object
    happen or grow;
  - causal, negative (`causes`, polarity ``negative``): reduces, decreases,
    lowers, suppresses, inhibits, prevents, dampens — the subject makes the
    object shrink or not happen (a balancing link in system-dynamics terms);
  - reversed: "B because of A", "B due to A", and the passives "B is caused /
    driven / triggered / produced / raised / increased / reduced / suppressed /
    inhibited / prevented by A" — the cause stands after the cue.  A plain
    "because" introduces a clause whose noun phrase a word rule cannot find
    ("we left because it rained"), so it makes no relation;
  - dependency (`depends_on`): depends on, relies on, requires — the subject
    rests on the object;
  - conversions (`causes`, polarity ``positive``): "X is converted (back) into Y",
    "is turned into", "is broken down into" and, reversed, "Y is regenerated / recycled /
    reformed / resynthesised from X" — one substance is made into the other (a
    "produces" link); composition ("formed from", "made from") is none;
  - participle chains (`causes`, the gerund's polarity): after a comma, "thereby" or
    "thus", "raising X", "reducing X", "leading to X", ... continue the clause, so the
    clause's subject (the previous relation's subject in the sentence, else the sentence's
    opening subject, `_leading_subject`) acts on X; no subject known, no relation;
  - feedback (`causes`, no polarity): "feeds back into / to / on" — the subject acts
    back on the object, the sign unsaid;
  - arrows (`causes`, no polarity): "more A -> more B", "fewer A → B", chains
    "more A → more B → more A" (each arrow one relation, the object of one the subject
    of the next) — an arrow between changing quantities says that one acts on the
    other, not how.  A change word (`ARROW_CHANGE_WORDS`) must stand at one end: an
    arrow between plain nouns is mostly a path ("nostril → nasal cavity") or a
    conversion.  Both mentions must be words (letters only): "2H2 + O2 → 2H2O" is a
    reaction; a line with "+" or "=" is an equation and makes no arrow relation.
  Past tense and gerunds outside a participle chain ("increased", "increasing") are
  no cues: they are mostly adjectives ("increased pressure").
* A pronoun (`PRONOUNS`: it, they, this, these) opening a sentence stands for the
  opening subject of the sentence just before it in the same text ("Wolves are
  predators. They reduce the deer population."); anywhere else a pronoun is no mention
  — the subject is known without a parser only there.  A sentence ends at . ! ? ; a
  blank line or a list item's line.  A subject right after a negation ("no longer
  produce") is no mention.
* Negation between the mentions ("does not cause", "never raises", "causes no")
  → no relation.  A hedge ("may", "might", "could", "can", "possibly",
  "probably", "likely", "often", "sometimes", "tends to") anywhere in the
  clause before the cue → confidence `HEDGED_CONFIDENCE` instead of
  `DIRECT_CONFIDENCE`.  Questions assert nothing: a sentence ending in "?" makes
  no relation.
* A mention's key is `entities.entity_key` of its words (case folded, plural and
  singular one) without leading comparatives (`MODIFIERS`: "higher temperatures" and
  "temperature" are one quantity whose change the cue already says) and without a
  trailing measure (`TRAILING_MEASURES`: "the rabbit population" is rabbits).
* `RelationIndex` maps each node to its relations and (kind, subject key) /
  (kind, object key) to the nodes stating them; the engine keeps it current
  with the database and saves it like the entity index (`Engine.text_mirror`,
  `dump` / `load`).  It adds no node to the graph.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import astuple, dataclass
from typing import Any, Final

from ..engine import Engine
from .entities import FUNCTION_WORDS, entity_key

# The saved copy's layout (`RelationIndex.dump`, kept by the engine like the BM25 index).
# /2: keys drop a trailing measure; a saved /1 copy is rebuilt, never read with old keys.
# /3: pronouns, participle chains, conversions, list-item sentences: a /2 copy is rebuilt.
_DUMP_FORMAT: Final = "graphonomous-relations/3"
CAUSES: Final = "causes"
DEPENDS_ON: Final = "depends_on"
POSITIVE: Final = "positive"
NEGATIVE: Final = "negative"

# A cue with both mentions adjacent is right most of the time; the hand-labelled
# sample (benchmarks/eval_kappa_activation.py --label) measures how often.
DIRECT_CONFIDENCE: Final = 0.8
# A hedged statement ("may raise") asserts a possibility: half the confidence.
HEDGED_CONFIDENCE: Final = 0.4
# A mention is a short noun phrase; more words are mostly a clause swallowed whole.
MAX_MENTION_WORDS: Final = 3
# A mention key shorter than this is an abbreviation fragment or a symbol, not a quantity.
MIN_KEY_CHARS: Final = 3

# Every word of this file's word lists has one home: a list below, or a named tuple that
# two sets read (`WORD_LISTS` names them; a test checks that no word is in two).
# Verbs of change that are cues when transitive ("births increase the population") and
# change verbs when intransitive ("as births increase, ..."): read by `_cues` and `_UP`.
_TRANSITIVE_UP: Final = ("increases", "increase")
_TRANSITIVE_DOWN: Final = ("decreases", "decrease")
# A cue word is never part of a mention, so a verb that is as often a noun ("limit",
# "block", "slow") is a cue only in its third-person form, or not at all ("lower", a
# comparative as well, is a cue by its home `_LOWER`).
_POSITIVE_VERBS: Final = (
    "raises raise causes cause drives drive triggers trigger "
    "produces produce amplifies amplify boosts boost stimulates stimulate promotes promote "
    "activates activate enhances enhance induces induce accelerates accelerate"
)
_NEGATIVE_VERBS: Final = (
    "reduces reduce lowers suppresses suppress inhibits inhibit "
    "prevents prevent dampens dampen limits slows counteracts counteract"
)
# "X requires Y": the subject rests on the object.
_REQUIRE: Final = ("requires", "require")
# "feeds back into the temperature": the subject acts back on the object, sign unsaid.
_FEEDBACK: Final = (("feeds", "feed"), ("into", "to", "on"))
# An arrow between two mentions ("A -> B", "A → B"; "-->" is a diagram's arrow too).
ARROW: Final = "→"
_ARROWS: Final = re.compile(r"-{1,2}>|⟶|→")
# Comparatives say which way a quantity moved, not which quantity it is: dropped from a
# key (`MODIFIERS`), a change word at an arrow's end (`ARROW_CHANGE_WORDS`); the amount
# comparatives stand where an article does too (`DETERMINERS`).
_AMOUNT_COMPARATIVES: Final = ("more", "less", "fewer")
# "lower" is a plural verb too ("foxes lower the count"): a negative cue (`_cues`).
_LOWER: Final = "lower"
_SIZE_COMPARATIVES: Final = ("higher", _LOWER, "greater", "smaller", "larger")
# Participles of movement: the same two uses as the comparatives ("increased demand").
_INCREASED: Final = "increased"  # also a passive cue ("is increased by"): `_PASSIVE_UP`
_MOVED: Final = ("decreased", "rising", "falling")
# Participles of state: dropped from a key, but no change word at an arrow ("reduced" /
# "oxidised" name a redox state in chemistry: "→ reduced DCPIP").
_REDUCED: Final = "reduced"  # also a passive cue ("is reduced by"): `_PASSIVE_DOWN`
_STATES: Final = ("growing", "declining", "elevated")
# Levels and quantifiers make an arrow a change ("high prices → ...") and stay in a key;
# the quantifiers stand where an article does (`DETERMINERS`).
_LEVELS: Final = ("high", "low")
_QUANTIFIERS: Final = ("much", "many")
# An arrow between two plain nouns is mostly a path ("nostril → nasal cavity", "receptor →
# sensory neurone") or a conversion, not a cause: in a hand-labelled sample of 24 arrows 9
# were causes, all of them with a change word at one end ("fewer prey → fewer predators",
# "high prices → ...").  So an arrow states a cause only with one of these at an end.
ARROW_CHANGE_WORDS: Final = frozenset(
    (*_AMOUNT_COMPARATIVES, *_SIZE_COMPARATIVES, _INCREASED, *_MOVED, *_LEVELS, *_QUANTIFIERS)
)
# A line holding one of these around an arrow is an equation or a reaction, no cause.
_EQUATION_MARKS: Final = frozenset("+=")
# The forms of "be" that open a passive or a conversion ("is caused by", "is converted into").
_BE: Final = ("is", "are", "was", "were", "be", "been")
# Conversions: one substance is made into another, a causal "produces" link (positive):
# "ATP is converted back into ADP" (the subject becomes the object), "RuBP is regenerated
# from GALP" (the object becomes the subject).  Composition ("membranes are formed from a
# bilayer", "proteins are made from amino acids") is no conversion, so "formed" / "made"
# are no conversion cues.
_CONVERTED_INTO: Final = ("converted", "converted back", "turned", "turned back", "broken down")
_REMADE_FROM: Final = (
    "regenerated",
    "recycled",
    "reformed",
    "re-formed",
    "resynthesised",
    "resynthesized",
)
# Participle chains: ", thereby raising X", "..., leading to Z": a gerund after a comma or
# "thereby" / "thus" continues its clause, so the clause's subject acts on X.  Elsewhere a
# gerund is mostly an adjective ("increasing pressure") and no cue.
_PARTICIPLES_UP: Final = (
    "raising",
    "increasing",
    "causing",
    "triggering",
    "producing",
    "boosting",
    "stimulating",
    "promoting",
    "leading to",
    "resulting in",
)
_PARTICIPLES_DOWN: Final = (
    "reducing",
    "decreasing",
    "lowering",
    "suppressing",
    "inhibiting",
    "preventing",
    "limiting",
    "slowing",
)
# Adverbs that mark a participle chain (", thereby raising"); also allowed between a
# mention and its cue ("X thereby raises Y", `BETWEEN_WORDS`).
_CHAIN_ADVERBS: Final = ("thereby", "thus")
# Pronouns that stand for the subject of the sentence before ("... . They eat more deer"):
# only these, only as a sentence's subject, only for the sentence just before in one node.
# "this" / "these" are determiners too ("these molecules": `DETERMINERS`).
_DEMONSTRATIVES: Final = ("this", "these")
_PERSONAL_PRONOUNS: Final = ("it", "they")
PRONOUNS: Final = frozenset((*_PERSONAL_PRONOUNS, *_DEMONSTRATIVES))
# Words after which a sentence's opening run of content words is its subject ("Atheroma
# is ...", "Warmer air will ..."), besides the forms of "be", hedges, cues and change verbs.
_AUXILIARIES: Final = ("has", "have", "had", "will", "would", "must", "should")
# Passive cues "B is <participle> by A": the cause stands after the cue.
_PASSIVE_UP: Final = ("caused", "driven", "triggered", "produced", "raised")
_PASSIVE_DOWN: Final = ("suppressed", "inhibited", "prevented")
_PASSIVE: Final = {
    **dict.fromkeys((*_PASSIVE_UP, _INCREASED), POSITIVE),
    **dict.fromkeys((*_PASSIVE_DOWN, _REDUCED), NEGATIVE),
}


@dataclass(frozen=True)
class Cue:
    """One cue phrase: the relation it states and whether the cause comes after it."""

    words: tuple[str, ...]
    kind: str
    polarity: str | None
    reversed: bool


def _cues() -> tuple[Cue, ...]:
    up, down = (
        (*_POSITIVE_VERBS.split(), *_TRANSITIVE_UP),
        (*_NEGATIVE_VERBS.split(), _LOWER, *_TRANSITIVE_DOWN),
    )
    cues = [Cue((verb,), CAUSES, POSITIVE, False) for verb in up]
    cues += [Cue((verb,), CAUSES, NEGATIVE, False) for verb in down]
    cues += [Cue((verb, "to"), CAUSES, POSITIVE, False) for verb in ("leads", "lead")]
    cues += [Cue((verb, "in"), CAUSES, POSITIVE, False) for verb in ("results", "result")]
    cues += [
        Cue(("because", "of"), CAUSES, POSITIVE, True),
        Cue(("due", "to"), CAUSES, POSITIVE, True),
    ]
    for be in _BE:
        cues += [Cue((be, verb, "by"), CAUSES, sign, True) for verb, sign in _PASSIVE.items()]
        cues += _conversions(be)
    for verb in ("depends", "depend", "relies", "rely"):
        cues.append(Cue((verb, "on"), DEPENDS_ON, None, False))
    cues += [Cue((verb,), DEPENDS_ON, None, False) for verb in _REQUIRE]
    cues += [
        Cue((verb, "back", to), CAUSES, None, False) for verb in _FEEDBACK[0] for to in _FEEDBACK[1]
    ]
    cues.append(Cue((ARROW,), CAUSES, None, False))
    # Longest first: "is caused by" wins over "caused"-less readings, "leads to" over none.
    return tuple(sorted(cues, key=lambda cue: -len(cue.words)))


def _conversions(be: str) -> list[Cue]:
    """The conversion cues after one form of "be" (`_CONVERTED_INTO`, `_REMADE_FROM`).

    >>> [" ".join(c.words) for c in _conversions("is")][:2]
    ['is converted into', 'is converted to']
    """
    cues = [
        Cue((be, *verb.split(), to), CAUSES, POSITIVE, False)
        for verb in _CONVERTED_INTO
        for to in ("into", "to")
    ]
    return cues + [Cue((be, verb, "from"), CAUSES, POSITIVE, True) for verb in _REMADE_FROM]


def _participles() -> tuple[Cue, ...]:
    up = [Cue(tuple(p.split()), CAUSES, POSITIVE, False) for p in _PARTICIPLES_UP]
    down = [Cue(tuple(p.split()), CAUSES, NEGATIVE, False) for p in _PARTICIPLES_DOWN]
    return tuple(sorted(up + down, key=lambda cue: -len(cue.words)))


CUES: Final = _cues()
PARTICIPLE_CUES: Final = _participles()
_PARTICIPLE_HEADS: Final = frozenset(cue.words[0] for cue in PARTICIPLE_CUES)
_CUE_HEADS: Final = frozenset(cue.words[0] for cue in CUES)

# "tends to raise": the only "to" allowed before a cue ("want to raise" has no subject).
TEND: Final = frozenset({"tend", "tends"})
_HEDGE_WORDS: Final = (
    "may",
    "might",
    "could",
    "can",
    "possibly",
    "probably",
    "likely",
    "perhaps",
    "often",
    "sometimes",
)
HEDGES: Final = TEND | frozenset(_HEDGE_WORDS)
NEGATIONS: Final = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "nothing",
        "cannot",
        "neither",
        "nor",
        "doesn't",
        "don't",
        "didn't",
        "won't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "can't",
        "couldn't",
    ]
)
# Words allowed between a mention and its cue besides hedges and negations (which are
# read for what they say): adverbs of degree and sequence, auxiliaries.
_BETWEEN_ONLY: Final = (
    "also",
    "directly",
    "indirectly",
    "further",
    "strongly",
    "weakly",
    "slightly",
    "greatly",
    "usually",
    "generally",
    "typically",
    "in",
    "turn",
    "then",
    "therefore",
    "eventually",
    "ultimately",
    "does",
    "do",
    "did",
)
BETWEEN_WORDS: Final = HEDGES | frozenset((*_BETWEEN_ONLY, *_CHAIN_ADVERBS))
# A participle chain's marks (one must stand before the gerund) and the words that may
# stand with them (", and thereby", ", in turn").
_CHAIN_MARKS: Final = frozenset((",", *_CHAIN_ADVERBS))
_CHAIN_WORDS: Final = _CHAIN_MARKS | {"and"} | frozenset(_BETWEEN_ONLY)
# Words that say which way a quantity moved, not which quantity it is.
MODIFIERS: Final = frozenset(
    (*_AMOUNT_COMPARATIVES, *_SIZE_COMPARATIVES, _INCREASED, *_MOVED, _REDUCED, *_STATES)
)

# Prepositions `entities.FUNCTION_WORDS` lacks: they end a mention ("oscillations around").
PREPOSITIONS: Final = frozenset(
    [
        "around",
        "across",
        "along",
        "among",
        "amongst",
        "within",
        "without",
        "toward",
        "towards",
        "via",
        "per",
        "versus",
        "despite",
        "beyond",
        "throughout",
        "onto",
        "inside",
        "outside",
        "near",
        "unlike",
    ]
)
# What may stand between a cue and its object: articles, demonstratives, quantifiers.
_ARTICLES: Final = (
    "the",
    "a",
    "an",
    "those",
    "its",
    "their",
    "his",
    "her",
    "our",
    "your",
    "my",
    "some",
    "any",
    "all",
    "both",
    "each",
    "every",
    "several",
    "most",
    "few",
    "another",
    "such",
)
DETERMINERS: Final = frozenset((*_ARTICLES, *_DEMONSTRATIVES, *_AMOUNT_COMPARATIVES, *_QUANTIFIERS))
# Adverbs name no thing: "-ly" adverbs by their endings (nouns such as "supply" or
# "family" do not end so), and a few others.
ADVERBS: Final = frozenset(["always", "afterwards", "meanwhile", "already", "still", "soon"])
_ADVERB: Final = re.compile(r"(?:ally|ously|ively|ently|antly|fully|ably|ibly|edly|ingly)$")
# A line of program code states no relation ("raise KeyError(key)", "x = f(y)", "if a:"):
# it is cut out of the text before sentences are read.
_CODE_LINE: Final = re.compile(
    r"^\s*(?:(?:def|class|return|raise|assert|import|from|yield|del|pass|@)\b|"
    r"(?:if|elif|else|for|while|with|try|except|finally)\b.*:\s*$|[\w.\[\]]+\s*[-+*/]?=[^=])",
    re.MULTILINE,
)
# Measures read before their quantity ("the amount of eggs") and after it ("egg amount").
_MEASURE_NOUNS: Final = ("amount", "number", "level")
# Quantities named by their measure: "the amount of eggs" is about eggs.
_LEADING_MEASURES: Final = ("quantity", "size", "volume")
MEASURES: Final = frozenset((*_MEASURE_NOUNS, *_LEADING_MEASURES))
# A measure after its quantity ("the rabbit population", "glucose levels") names the
# quantity as much as "the number of rabbits" does: dropped from the key's end.
_TRAILING_ONLY: Final = (
    "numbers",
    "levels",
    "concentration",
    "concentrations",
    "population",
    "populations",
    "count",
)
TRAILING_MEASURES: Final = frozenset((*_MEASURE_NOUNS, *_TRAILING_ONLY))
# Verbs of change in "as X increases, Y decreases" (not cues on their own: "prices rise"
# says nothing about a cause).
_UP_ONLY: Final = ("rises", "rise", "grows", "grow", "goes up", "go up")
_UP: Final = (*_TRANSITIVE_UP, *_UP_ONLY)
_DOWN_ONLY: Final = (
    "falls",
    "fall",
    "declines",
    "decline",
    "drops",
    "drop",
    "shrinks",
    "shrink",
    "goes down",
    "go down",
)
_DOWN: Final = (*_TRANSITIVE_DOWN, *_DOWN_ONLY)
_CHANGE_PHRASES: Final = tuple((tuple(p.split()), 1) for p in _UP) + tuple(
    (tuple(p.split()), -1) for p in _DOWN
)
CHANGES: Final = frozenset(words[0] for words, _sign in _CHANGE_PHRASES)
# "as", "when", "if", "whenever" open a covariation ("as X increases, Y ...").
COVARIATION_OPENERS: Final = frozenset(("as", "when", "whenever", "if"))
# After these a sentence's opening run of content words is its subject (`_AUXILIARIES`).
_SUBJECT_MARKS: Final = (
    frozenset((*_BE, *_AUXILIARIES)) | HEDGES | frozenset(cue.words[0] for cue in CUES) | CHANGES
)
# Every word list's home, by name: no word is in two (a test checks), so a word's role
# is changed in one place; the sets above are unions of these.
WORD_LISTS: Final[Mapping[str, tuple[str, ...]]] = {
    "transitive change verbs": (*_TRANSITIVE_UP, *_TRANSITIVE_DOWN),
    "positive verbs": tuple(_POSITIVE_VERBS.split()),
    "negative verbs": tuple(_NEGATIVE_VERBS.split()),
    "dependency verbs": _REQUIRE,
    "be": _BE,
    "conversions into": _CONVERTED_INTO,
    "conversions from": _REMADE_FROM,
    "participles up": _PARTICIPLES_UP,
    "participles down": _PARTICIPLES_DOWN,
    "chain adverbs": _CHAIN_ADVERBS,
    "demonstratives": _DEMONSTRATIVES,
    "pronouns": _PERSONAL_PRONOUNS,
    "auxiliaries": _AUXILIARIES,
    "feedback verbs": _FEEDBACK[0],
    "feedback particles": _FEEDBACK[1],
    "amount comparatives": _AMOUNT_COMPARATIVES,
    "size comparatives": _SIZE_COMPARATIVES,
    "increased": (_INCREASED,),
    "moved": _MOVED,
    "reduced": (_REDUCED,),
    "states": _STATES,
    "levels": _LEVELS,
    "quantifiers": _QUANTIFIERS,
    "passive up": _PASSIVE_UP,
    "passive down": _PASSIVE_DOWN,
    "tend": tuple(TEND),
    "hedges": _HEDGE_WORDS,
    "negations": tuple(NEGATIONS),
    "between": _BETWEEN_ONLY,
    "prepositions": tuple(PREPOSITIONS),
    "articles": _ARTICLES,
    "adverbs": tuple(ADVERBS),
    "measure nouns": _MEASURE_NOUNS,
    "leading measures": _LEADING_MEASURES,
    "trailing measures": _TRAILING_ONLY,
    "up": _UP_ONLY,
    "down": _DOWN_ONLY,
    "covariation openers": tuple(COVARIATION_OPENERS),
}
# Markup is no part of a sentence's words: a MathML annotation (editor metadata such as
# {"fontFamily": ...}; the arrow in <mo>→</mo> stays), HTML tags, a wiki link's target
# ("[[Page|shown]]" reads "shown"), TeX between $...$ (its symbols are no mentions).
_TAGS: Final = re.compile(
    r"<annotation\b[^<>]*>[^<]*</annotation>|<[^<>\n]*>|\[\[(?:[^\]|\n]*\|)?|\]\]|\$[^$\n]*\$"
)
# Emphasis and code marks around a word are no part of it: `eggs`, *eggs*, "eggs".
_MARKUP: Final = re.compile(r"[`*\"“”]|(?<![\w'’])['‘’]|['‘’](?![\w])|(?<!\w)_|_(?!\w)")

# A sentence ends at . ! ? ; a blank line, or before a list item's line ("* ", "+ ", "- ",
# "1. "): notes without full stops are one statement a line, not one run-on sentence; any
# other single line break is a wrapped line.
_ITEM: Final = r"\n[ \t]*(?:[*+•-]|\d+[.)])[ \t]"
_SENTENCE: Final = re.compile(
    rf"(?:[^.!?;\n]|\n(?![ \t]*\n)(?!{_ITEM[2:]}))+(?:[.!?;]+|\n[ \t]*\n|$|(?={_ITEM}))"
)
_TOKEN: Final = re.compile(r"[A-Za-z0-9][\w'’-]*|[^\sA-Za-z0-9]")


@dataclass(frozen=True)
class Relation:
    """One extracted relation: subject --kind--> object, as the sentence states it."""

    subject: str  # the words as written
    object: str
    subject_key: str
    object_key: str
    kind: str  # CAUSES or DEPENDS_ON
    polarity: str | None  # POSITIVE / NEGATIVE for causes, None for depends_on
    cue: str
    confidence: float
    line_start: int  # 0-based lines of the sentence within the text
    line_end: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "object": self.object,
            "kind": self.kind,
            "polarity": self.polarity,
            "cue": self.cue,
            "confidence": self.confidence,
        }


def _sentences(text: str) -> Iterator[tuple[int, str]]:
    """(start offset, sentence) for each sentence or line of `text`.  O(len(text))."""
    for match in _SENTENCE.finditer(text):
        if match.group(0).strip():
            yield match.start(), match.group(0)


def _is_content(token: str) -> bool:
    plain = token.lower()
    return (
        token[:1].isalnum()
        and plain not in FUNCTION_WORDS
        and plain not in PREPOSITIONS
        and plain not in ADVERBS
        and not _ADVERB.search(plain)
        and plain not in _CUE_HEADS
        and plain not in CHANGES
    )


def _run_left(tokens: list[str], end: int) -> tuple[list[str], int]:
    """The content-word run ending at token `end`, in reading order, and its first index."""
    words: list[str] = []
    index = end
    while index >= 0 and _is_content(tokens[index]) and len(words) < MAX_MENTION_WORDS:
        words.append(tokens[index])
        index -= 1
    return words[::-1], index + 1


def _mention(tokens: list[str], end: int) -> list[str] | None:
    """The subject mention ending at token `end`.  A run after "of" is the complement of
    the noun before it ("vasodilation of arterioles", "intake of dietary fibres"): the
    mention is the whole "X of Y"."""
    words, start = _run_left(tokens, end)
    if not words or (start >= 1 and tokens[start - 1].lower() in NEGATIONS):
        return None  # "no longer produce", "no antibodies raise": a negated subject
    before = start - 1
    if before >= 1 and tokens[before].lower() in DETERMINERS:
        before -= 1
    if before >= 1 and tokens[before].lower() == "of":
        head, _ = _run_left(tokens, before - 1)
        if head and head[-1].lower() not in MEASURES:  # "the amount of eggs" is eggs
            return [*head, "of", *words]
    return words


def _key(words: list[str]) -> str:
    while words and words[0].lower() in MODIFIERS:
        words = words[1:]
    while len(words) > 1 and words[-1].lower() in TRAILING_MEASURES:
        words = words[:-1]
    return entity_key(words)


def _phrase_start(lowered: list[str], index: int) -> int | None:
    """Past determiners, comparatives and "the amount of"; None at a negation or at any
    other function word ("increases in spring", "decreases with humidity": the verb is
    intransitive there and what follows is no object)."""
    while index < len(lowered):
        word = lowered[index]
        if word in NEGATIONS:
            return None
        if word in MEASURES and index + 1 < len(lowered) and lowered[index + 1] == "of":
            index += 2
        elif word in DETERMINERS or word in MODIFIERS:
            index += 1
        elif word in FUNCTION_WORDS or word in PREPOSITIONS:
            return None
        else:
            break
    return index


def _phrase(tokens: list[str], lowered: list[str], start: int) -> tuple[list[str], int] | None:
    """The mention read rightwards from `start`: (its words, the index after them)."""
    index = _phrase_start(lowered, start)
    if index is None:
        return None
    words: list[str] = []
    while index < len(tokens) and _is_content(tokens[index]) and len(words) < MAX_MENTION_WORDS:
        words.append(tokens[index])
        index += 1
    return (words, index) if words else None


def _match_cue(lowered: list[str], at: int) -> Cue | None:
    for cue in CUES:
        if tuple(lowered[at : at + len(cue.words)]) == cue.words:
            return cue
    return None


@dataclass(frozen=True)
class _Found:
    """A relation before its lines are known, and where its object ended (for "which")."""

    cause: list[str]
    effect: list[str]
    kind: str
    polarity: str | None
    cue: str
    tail: list[str]  # the mention that ends the relation ("which" after it refers to it)
    object_end: int  # the token index after `tail`
    agent: list[str]  # the clause's subject as written (a participle chain's subject)


@dataclass(frozen=True)
class _Opening:
    """Where a sentence's first word is and the subject it opens with (`_leading_subject`)."""

    first: int
    subject: list[str] | None


def _subject(
    tokens: list[str], lowered: list[str], at: int, previous: _Found | None, opening: _Opening
) -> list[str] | None:
    """The mention left of a cue at `at`; ", which" refers to the object just before it; a
    pronoun that opens the sentence stands for the sentence before's subject (`opening`)."""
    end = at - 1
    while end >= 0 and (
        lowered[end] in BETWEEN_WORDS | NEGATIONS
        or (lowered[end] == "to" and end > 0 and lowered[end - 1] in TEND)
    ):
        end -= 1
    if any(word in NEGATIONS for word in lowered[end + 1 : at]):
        return None  # "does not cause", "never raises"
    if (
        end >= 1
        and lowered[end] == "which"
        and lowered[end - 1] == ","
        and previous is not None
        and previous.object_end == end - 1
    ):
        return previous.tail
    if end == opening.first and lowered[end] in PRONOUNS and not _determines(tokens, end):
        return opening.subject
    return _mention(tokens, end)


def _words_only(words: list[str]) -> bool:
    """Letters (and inner hyphens or apostrophes) only: no formula, code or number."""
    return all(re.fullmatch(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", word) for word in words)


def _arrow_states_cause(lowered: list[str], at: int, words: list[str]) -> bool:
    """An arrow at `at` is a cause when its mentions are words, the line no equation, and a
    change word stands at one of its ends ("more births → more rabbits")."""
    if not _words_only(words) or not _EQUATION_MARKS.isdisjoint(lowered):
        return False
    before = lowered[max(0, at - MAX_MENTION_WORDS - 2) : at]
    return not ARROW_CHANGE_WORDS.isdisjoint(before + lowered[at + 1 : at + 3])


def _cue_relation(
    tokens: list[str],
    lowered: list[str],
    at: int,
    cue: Cue,
    context: tuple[_Found | None, _Opening],
) -> _Found | None:
    """The relation a cue at token `at` states, or None (see the module rules)."""
    subject = _subject(tokens, lowered, at, *context)
    found = _phrase(tokens, lowered, at + len(cue.words))
    if subject is None or found is None:
        return None
    words, end = found
    if cue.words == (ARROW,) and not _arrow_states_cause(lowered, at, subject + words):
        return None  # a path, a reaction or an equation, no cause (module rules)
    cause, effect = (words, subject) if cue.reversed else (subject, words)
    return _Found(cause, effect, cue.kind, cue.polarity, " ".join(cue.words), words, end, subject)


def _change(lowered: list[str], index: int) -> tuple[int, int] | None:
    """(+1 / -1, index after) of a change verb ("rises", "goes down") at `index`."""
    for words, sign in _CHANGE_PHRASES:
        if tuple(lowered[index : index + len(words)]) == words:
            return sign, index + len(words)
    return None


def _covariation(tokens: list[str], lowered: list[str], at: int) -> _Found | None:
    """ "As X increases, Y decreases": X causes Y, positive when both move one way."""
    first = _phrase(tokens, lowered, at + 1)
    if first is None:
        return None
    cause, index = first
    moved = _change(lowered, index)
    if moved is None:
        return None
    sign, index = moved
    index += 1 if index < len(lowered) and lowered[index] == "," else 0
    index += 1 if index < len(lowered) and lowered[index] in ("so", "then") else 0
    second = _phrase(tokens, lowered, index)
    if second is None:
        return None
    effect, index = second
    while index < len(lowered) and lowered[index] in BETWEEN_WORDS | {"too", "likewise"}:
        index += 1
    answered = _change(lowered, index)
    if answered is None:
        return None
    polarity = POSITIVE if answered[0] == sign else NEGATIVE
    cue = f"{lowered[at]} ... {' '.join(lowered[index : answered[1]])}"
    return _Found(cause, effect, CAUSES, polarity, cue, effect, answered[1], effect)


def _leading_subject(
    tokens: list[str], lowered: list[str], antecedent: list[str] | None
) -> _Opening:
    """The subject a sentence opens with: its first run of content words when a verb
    follows it ("be", an auxiliary, a hedge, a cue or a change verb), or without its last
    word when that word is a verb before an article ("The atheroma narrows the lumen");
    an opening pronoun stands for `antecedent`.  Without a parser the subject is known
    only there, so elsewhere None (no pronoun or participle is read against a guess).

    >>> words = "The atheroma narrows the lumen".split()
    >>> _leading_subject(words, [w.lower() for w in words], None).subject
    ['atheroma']
    >>> _leading_subject(["They", "eat"], ["they", "eat"], ["wolves"]).subject
    ['wolves']
    """
    first = 0
    while first < len(tokens) and not tokens[first][:1].isalpha():
        first += 1  # list bullets and numbers
    if first < len(tokens) and lowered[first] in PRONOUNS and not _determines(tokens, first):
        return _Opening(first, antecedent)
    index = first
    while index < len(tokens) and lowered[index] in DETERMINERS:
        index += 1
    words: list[str] = []
    while index < len(tokens) and _is_content(tokens[index]) and len(words) <= MAX_MENTION_WORDS:
        words.append(tokens[index])
        index += 1
    after = lowered[index] if index < len(tokens) else ""
    if words and len(words) <= MAX_MENTION_WORDS and after in _SUBJECT_MARKS:
        return _Opening(first, words)
    if len(words) >= 2 and after in _ARTICLES:
        return _Opening(first, words[:-1])
    return _Opening(first, None)


def _determines(tokens: list[str], index: int) -> bool:
    """ "These molecules": a demonstrative before a content word is its determiner."""
    return (
        tokens[index].lower() in _DEMONSTRATIVES
        and index + 1 < len(tokens)
        and _is_content(tokens[index + 1])
    )


def _chained(lowered: list[str], at: int) -> bool:
    """A gerund at `at` continues its clause: a comma, "thereby" or "thus" before it
    (with "and", "in turn", ... among them) and a clause before those.

    >>> _chained("x narrows y , thereby".split() + ["raising"], 5)
    True
    >>> _chained("increasing".split(), 0)
    False
    """
    index = at - 1
    marked = False
    while index >= 0 and lowered[index] in _CHAIN_WORDS:
        marked = marked or lowered[index] in _CHAIN_MARKS
        index -= 1
    return marked and index >= 0


def _participle(
    tokens: list[str], lowered: list[str], at: int, agent: list[str] | None
) -> _Found | None:
    """ ", thereby raising X": the clause's subject `agent` acts on X (module rules).

    >>> [(r.subject, r.cue, r.object) for r in extract_relations(
    ...     "The atheroma narrows the lumen, thereby raising blood pressure.")]
    [('atheroma', 'raising', 'blood pressure')]
    >>> extract_relations("Risk factors: smoking, increasing age.")
    []
    """
    if agent is None or not _chained(lowered, at):
        return None
    for cue in PARTICIPLE_CUES:
        if tuple(lowered[at : at + len(cue.words)]) == cue.words:
            found = _phrase(tokens, lowered, at + len(cue.words))
            if found is None:
                return None
            words, end = found
            return _Found(
                agent, words, cue.kind, cue.polarity, " ".join(cue.words), words, end, agent
            )
    return None


def _sentence_relations(
    sentence: str, antecedent: list[str] | None
) -> tuple[list[tuple[_Found, bool]], list[str] | None]:
    """(relation, hedged) for every relation one sentence states, in reading order, and
    the subject the sentence opens with (the antecedent of a pronoun opening the next)."""
    plain = _MARKUP.sub(" ", _TAGS.sub(" ", _ARROWS.sub(f" {ARROW} ", sentence)))
    tokens = _TOKEN.findall(plain)
    lowered = [token.lower() for token in tokens]
    opening = _leading_subject(tokens, lowered, antecedent)
    found: list[tuple[_Found, bool]] = []
    previous: _Found | None = None
    for at, word in enumerate(lowered):
        relation = None
        if word in COVARIATION_OPENERS:
            relation = _covariation(tokens, lowered, at)
        elif word in _CUE_HEADS and (cue := _match_cue(lowered, at)) is not None:
            relation = _cue_relation(tokens, lowered, at, cue, (previous, opening))
        elif word in _PARTICIPLE_HEADS:
            agent = previous.agent if previous is not None else opening.subject
            relation = _participle(tokens, lowered, at, agent)
        if relation is not None:
            found.append((relation, any(w in HEDGES for w in lowered[:at])))
            previous = relation
    return found, opening.subject


def _code_free(text: str) -> str:
    """`text` with every line of code emptied (line numbers kept: the line stays, blank)."""
    return "\n".join("" if _CODE_LINE.match(line) else line for line in text.split("\n"))


def extract_relations(text: str) -> list[Relation]:
    """Every relation `text` states (module rules), in reading order.

    Deterministic; O(len(text) × number of cues).  Line numbers are 0-based
    within `text` (a caller adds the node's own first line).
    """
    out: list[Relation] = []
    text = _code_free(text)
    antecedent: list[str] | None = None
    for offset, sentence in _sentences(text):
        stated, antecedent = _sentence_relations(sentence, antecedent)
        if sentence.rstrip().endswith("?"):
            continue
        first_line = text.count("\n", 0, offset + len(sentence) - len(sentence.lstrip()))
        last_line = first_line + sentence.strip().count("\n")
        for found, hedged in stated:
            cause_key, effect_key = _key(found.cause), _key(found.effect)
            if min(len(cause_key), len(effect_key)) < MIN_KEY_CHARS or cause_key == effect_key:
                continue
            out.append(
                Relation(
                    subject=" ".join(found.cause),
                    object=" ".join(found.effect),
                    subject_key=cause_key,
                    object_key=effect_key,
                    kind=found.kind,
                    polarity=found.polarity,
                    cue=found.cue,
                    confidence=HEDGED_CONFIDENCE if hedged else DIRECT_CONFIDENCE,
                    line_start=first_line,
                    line_end=last_line,
                )
            )
    return out


class RelationIndex:
    """Node -> its relations; (kind, key) -> nodes whose relations start / end there.

    Kept current with the database by the engine (`Engine.text_mirror`), like the
    entity index; not thread-safe by itself (callers hold the engine lock).
    """

    def __init__(self) -> None:
        self._relations: dict[str, tuple[Relation, ...]] = {}
        self._by_subject: dict[tuple[str, str], set[str]] = {}
        self._by_object: dict[tuple[str, str], set[str]] = {}

    def __len__(self) -> int:
        return len(self._relations)

    def add(self, node_id: str, content: str) -> None:
        """Index (or re-index) one node's content.  O(len(content))."""
        self.remove(node_id)
        self._index(node_id, tuple(extract_relations(content)))

    def _index(self, node_id: str, found: tuple[Relation, ...]) -> None:
        if not found:
            return
        self._relations[node_id] = found
        for relation in found:
            self._by_subject.setdefault((relation.kind, relation.subject_key), set()).add(node_id)
            self._by_object.setdefault((relation.kind, relation.object_key), set()).add(node_id)

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        for node_id, content in items:
            self.add(node_id, content)

    def remove(self, node_id: str) -> None:
        """Forget a node (no-op if unknown).  O(its relations)."""
        for relation in self._relations.pop(node_id, ()):
            for table, key in (
                (self._by_subject, relation.subject_key),
                (self._by_object, relation.object_key),
            ):
                nodes = table.get((relation.kind, key))
                if nodes is not None:
                    nodes.discard(node_id)
                    if not nodes:
                        del table[(relation.kind, key)]

    def dump(self) -> bytes:
        """The whole index as bytes (`load` restores it).  O(size): saved beside the BM25
        index (`Engine.text_mirror`), so a fresh process extracts no content again."""
        state = {
            "format": _DUMP_FORMAT,
            "relations": [
                [node_id, [list(astuple(r)) for r in found]]
                for node_id, found in self._relations.items()
            ],
        }
        return json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def load(cls, data: bytes) -> RelationIndex | None:
        """An index from `dump` bytes; None when they are not a readable dump.  O(size)."""
        try:
            state = json.loads(data.decode("utf-8"))
            if not isinstance(state, dict) or state.get("format") != _DUMP_FORMAT:
                return None
            index = cls()
            for node_id, found in state["relations"]:
                index._index(str(node_id), tuple(Relation(*fields) for fields in found))
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            return None
        return index

    def relations_of(self, node_id: str) -> tuple[Relation, ...]:
        return self._relations.get(node_id, ())

    def stating_subject(self, kind: str, key: str) -> Mapping[str, None]:
        """Nodes with a relation of `kind` whose subject key is `key`, sorted."""
        return dict.fromkeys(sorted(self._by_subject.get((kind, key), ())))

    def stating_object(self, kind: str, key: str) -> Mapping[str, None]:
        """Nodes with a relation of `kind` whose object key is `key`, sorted."""
        return dict.fromkeys(sorted(self._by_object.get((kind, key), ())))


def relation_index(engine: Engine[Any, Any]) -> RelationIndex:
    """The relation index of searchable content, kept current like the BM25 index."""
    index = engine.text_mirror("relations", RelationIndex)
    assert isinstance(index, RelationIndex)
    return index


__all__ = [
    "ARROW",
    "CAUSES",
    "CUES",
    "DEPENDS_ON",
    "NEGATIVE",
    "POSITIVE",
    "Relation",
    "RelationIndex",
    "extract_relations",
    "relation_index",
]
