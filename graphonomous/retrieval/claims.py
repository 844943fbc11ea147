"""Does a new statement update an earlier one?  Same subject, a changed value.

Rules of this file: pure functions of two strings, no LLM, no tuned constant.
A later statement *updates* an earlier one when both make the same claim about
the same subject except for its value (SPEC "Updates"):

1. Both are reduced to their *frame* (`frame`): lower-cased tokens that keep
   values whole ("2.32.3", "#3178c6", "07:00", "case-insensitive"), without
   function words, possessives and words that never carry the claim
   (`NEUTRAL`: "also", "now", "by default", relation verbs that say the same
   thing in other words), light suffixes folded; every withdrawing word
   ("removed", "dropped", "not", …: `WITHDRAWN`) is one mark.  The *subject* is
   what stands before the first predicate verb (`PREDICATE_VERBS`, else a word
   in -s).
2. The frames are compared as multisets.  The shared part must be at least
   `MIN_SHARED` tokens and at least as large as what differs (they are mostly
   the same statement).  Then one of:
   - **substitution** — tokens replaced on both sides, all in the predicate (the
     subject is the same), not the same value written differently
     (`same_value`, number words, "midnight" = "00:00"), of one kind on each side
     (a colour word and a hex code cannot be compared), not a differently named
     thing with its own number ("requires Werkzeug 3.1" / "requires ItsDangerous
     2.2": a second requirement), not a list-adding verb ("added", "fixed":
     both additions hold), and in one place unless the later statement
     announces an update ("now", "changed", "moved", "no longer"…): two
     unannounced changes may be another subject's value ("404 lines yellow" /
     "304 lines cyan");
   - **restated value** — the later statement repeats all of the earlier but one
     value (a number, version, date, colour code) and gives one value of that
     kind in its place, plus detail ("jemalloc 5.2.1" / "jemalloc 5.3.0, fixing
     hangs");
   - **withdrawal** — a withdrawing mark on one side only, at most one other
     word changed on each side (the verb it replaces) and no number, or the
     later statement restates all of the earlier and withdraws it; never when
     the withdrawal is announced for later ("will be removed").
   Everything else (another subject, another event, an added detail, a
   rephrasing) is not an update: both can be true.

Why this rule: an update names the thing it updates in the words the earlier
statement used and changes the value; the other things a later statement says
about a similar subject differ in the subject, in more places, or add without
replacing.  It is built for precision: a false update hides a true fact by
default, a missed one leaves both visible (ranked newest first when they meet,
`retrieval.time_scope`).  Measured on real release-note pairs
(benchmarks/data/time; the validate half never tuned on): SPEC "Updates",
`benchmarks/eval_updates.py`.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .keywords import STOPWORDS, fold

# Tokens: a value kept whole (versions, hex colours, times, hyphenated and dotted
# identifiers), else a word.  Possessive 's and surrounding punctuation drop.
_TOKEN: Final = re.compile(r"#?\w(?:[\w#+]|[.:/\-](?=\w))*")
# Words that never carry the claim itself: fillers, tense and time-of-statement
# words ("now", "currently" say *when* it holds, not *what*), slot names ("date",
# "value"), and verbs that say the same relation in other words ("X defaults to V" =
# "X is V by default" = "by default X uses V"; "supports 3.8+" = "requires 3.8+").
NEUTRAL: Final = frozenset(
    [
        "also",
        "too",
        "still",
        "now",
        "currently",
        "presently",
        "today",
        "anymore",
        "longer",
        "officially",
        "default",
        "defaults",
        "instead",
        "changed",
        "change",
        "changes",
        "switched",
        "replaced",
        "use",
        "uses",
        "used",
        "using",
        "set",
        "sets",
        "called",
        "named",
        "value",
        "values",
        "unit",
        "support",
        "supports",
        "supported",
        "require",
        "requires",
        "required",
        "need",
        "needs",
        "date",
        "dated",
        "well",
        "either",
        "actually",
        "indeed",
        "just",
        "really",
        "only",
    ]
)
# Words that withdraw or negate a claim when only one side has them.
WITHDRAWN: Final = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "cannot",
        "removed",
        "remove",
        "removes",
        "dropped",
        "drop",
        "drops",
        "disabled",
        "disable",
        "disables",
        "deprecated",
        "deleted",
        "discontinued",
        "stopped",
        "retired",
        "yanked",
        "abandoned",
        "unsupported",
        "obsolete",
        "gone",
        "lacks",
        "lost",
    ]
)
# Every withdrawing word is one token in a frame: "removed" and "dropped" say the same.
WITHDRAWN_MARK: Final = "<withdrawn>"
# A withdrawal announced for later is not a withdrawal yet.
_HEDGE: Final = re.compile(
    r"\b(?:will|to be|plan(?:s|ned)?|future|eventually|may|might|should|soon)\b", re.I
)
# Words by which a statement announces that it replaces an earlier one: then several
# values of the one subject may change at once ("now runs PostgreSQL 17 on db-stg-3").
_UPDATE_CUE: Final = re.compile(
    r"\b(?:now|no longer|instead|changed|switched|moved|replaced|updated|renamed|"
    r"from now on|these days|any ?more)\b",
    re.I,
)
# Verbs after which a sentence states its value: the subject is what comes before
# the first of them.  Common state verbs of technical and personal facts.
PREDICATE_VERBS: Final = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "has",
        "have",
        "had",
        "uses",
        "use",
        "runs",
        "run",
        "listens",
        "defaults",
        "requires",
        "supports",
        "sets",
        "returns",
        "shows",
        "prints",
        "lives",
        "points",
        "works",
        "costs",
        "takes",
        "starts",
        "opens",
        "becomes",
        "became",
        "moved",
        "changed",
        "switched",
        "stores",
        "keeps",
        "sends",
        "calls",
        "means",
        "equals",
        "contains",
        "includes",
        "needs",
        "likes",
        "prefers",
        "colours",
        "colors",
        "depends",
        "builds",
        "ships",
        "targets",
        "lists",
        "renders",
        "raises",
        "reads",
        "writes",
        "hosts",
        "serves",
        "speaks",
        "exposes",
        "imports",
        "imported",
        "expects",
        "accepts",
        "released",
        "lives",
        "lived",
        "works",
        "worked",
        "costs",
        "runs",
        "ran",
        "goes",
        "went",
        "owns",
        "owned",
        "leads",
        "led",
        "manages",
        "managed",
    ]
)
# Statements that add to a list: two different objects of these are both true.
ADDITIVE_VERBS: Final = frozenset(
    ["added", "adds", "add", "introduced", "introduces", "fixed", "fixes", "new"]
)
_CONTRACTION: Final = re.compile(r"n['’]t\b", re.IGNORECASE)
# Words ending so are taken for a verb when no listed verb marks the predicate.
_VERB_ENDING: Final = re.compile(r"^[a-z]{3,}[^s's]s$")
# The fewest shared frame tokens that make "the same claim": a subject and a predicate.
MIN_SHARED: Final = 2
# Number words one..twelve (the values statements spell out), one home for the package.
NUMBER_WORDS: Final = {
    word: str(value)
    for value, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}
_EQUIVALENT: Final = {"midnight": "00:00", "noon": "12:00", "once": "1", "single": "1"}
_NUMBERISH: Final = re.compile(r"^#?[\d.,:]+[a-z]*$|^v?\d")
_HEX: Final = re.compile(r"^#[0-9a-f]{3,8}$")


@dataclass(frozen=True)
class Update:
    """Why a statement updates another: the kind and the changed values."""

    cue: str  # "substitution" | "withdrawn"
    old: str  # the earlier statement's value (frame tokens), "" for a withdrawal
    new: str  # the later statement's value, or the withdrawing words

    def evidence(self) -> dict[str, str]:
        return {"cue": self.cue, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class Frame:
    """A statement's claim-bearing tokens and where its predicate starts."""

    tokens: tuple[str, ...]
    predicate_at: int  # index of the first predicate token (len(tokens): none found)
    additive: bool  # its verb adds to a list ("added", "introduced")


def _stem(token: str) -> str:
    """A light suffix fold, so "released" / "release", "dates" / "date" meet."""
    if not token.isalpha() or len(token) <= 4:
        return token
    for suffix in ("ing", "ed", "es", "s", "e"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            return token[: -len(suffix)]
    return fold(token)


def frame(text: str) -> Frame:
    """The claim-bearing tokens of `text`, in order (module docstring, rule 1).  O(len).

    >>> frame("Redis's daily CI workflow now runs at 07:00 UTC.").tokens
    ('redi', 'daily', 'ci', 'workflow', 'runs', '07:00', 'utc')
    """
    text = _CONTRACTION.sub(" not", unicodedata.normalize("NFKC", text))
    text = re.sub(r"['’]s\b", "", text)
    tokens: list[str] = []
    predicate_at: int | None = None
    additive = False
    guessed: int | None = None
    for match in _TOKEN.finditer(text.lower()):
        word = match.group(0).rstrip(".:/-")
        if predicate_at is None and word in PREDICATE_VERBS | ADDITIVE_VERBS:
            predicate_at = len(tokens)
        if guessed is None and tokens and _VERB_ENDING.match(word):
            guessed = len(tokens)
        additive = additive or word in ADDITIVE_VERBS
        word = NUMBER_WORDS.get(word, _EQUIVALENT.get(word, word))
        if word in NEUTRAL or (word in STOPWORDS and word not in WITHDRAWN):
            continue
        tokens.append(WITHDRAWN_MARK if word in WITHDRAWN else _stem(word))
    start = predicate_at if predicate_at is not None else guessed
    return Frame(tuple(tokens), len(tokens) if start is None else start, additive)


def same_value(first: list[str], second: list[str]) -> bool:
    """Two spans that name the same value (order ignored).  O(n log n)."""
    return sorted(first) == sorted(second)


def _kind(token: str) -> str:
    if _HEX.match(token):
        return "hex"
    return "number" if _NUMBERISH.match(token) else "word"


def _comparable(old: list[str], new: list[str]) -> bool:
    """One value on each side of one kind, or spans: a hex code and a colour word, a
    number and a word, cannot be told apart as a change."""
    return len(old) != 1 or len(new) != 1 or _kind(old[0]) == _kind(new[0])


def _own_thing(old: Frame, new: Frame, gone: list[str], added: list[str]) -> bool:
    """A differently named thing with its own number on each side ("requires Werkzeug
    3.1" / "requires ItsDangerous 2.2"): a changed name directly followed by a changed
    number, on both sides — another item, not another value of the same one."""

    def pairs(statement: Frame, changed: list[str]) -> bool:
        tokens = statement.tokens
        return any(
            a in changed and b in changed and not _NUMBERISH.match(a) and _NUMBERISH.match(b)
            for a, b in itertools.pairwise(tokens)
        )

    return pairs(old, gone) and pairs(new, added)


def _difference(first: Frame, second: Frame) -> tuple[list[str], list[str], int]:
    """(tokens only the first has, only the second has, shared count) as multisets,
    each side in its own order.  O(n + m)."""
    left = Counter(first.tokens)
    right = Counter(second.tokens)
    common = left & right
    gone, added = left - common, right - common
    only_first = [t for t in first.tokens if gone[t] > 0 and not gone.subtract([t])]
    only_second = [t for t in second.tokens if added[t] > 0 and not added.subtract([t])]
    return only_first, only_second, sum(common.values())


def _in_predicate(statement: Frame, changed: Sequence[str]) -> bool:
    """Whether every changed token stands after the subject."""
    positions = [i for i, token in enumerate(statement.tokens) if token in changed]
    return bool(positions) and min(positions) >= statement.predicate_at > 0


def detect_update(earlier: str, later: str) -> Update | None:
    """The `Update` by which `later` replaces `earlier`, or None (module docstring).

    >>> detect_update("The staging database runs PostgreSQL 16.", "The staging database "
    ...               "now runs PostgreSQL 17.").evidence()
    {'cue': 'substitution', 'old': '16', 'new': '17'}
    >>> detect_update("Click 8.2.0 was released on 2025-05-10.",
    ...               "Click 8.3.0 was released on 2025-09-17.") is None
    True
    >>> detect_update("Requests supports Python 2.7.", "Requests has dropped Python 2.7 "
    ...               "support.").cue
    'withdrawn'

    Complexity: O(n + m) in the statements' lengths.
    """
    old, new = frame(earlier), frame(later)
    gone, added, shared = _difference(old, new)
    if _one_word_claim(old, new, gone, added):
        return Update("substitution", gone[0], added[0])
    if shared < MIN_SHARED:
        return None
    if shared == len(old.tokens) - len(gone) and len(gone) <= 1:
        extended = _restated_value(old, new, gone, added) or _withdrawal(later, gone, added, True)
        if extended is not None:
            return extended
    if shared <= len(gone) + len(added) - 1:
        return None
    flip = _withdrawal(later, gone, added)
    if flip is not None:
        return flip
    if not gone or not added or old.additive or new.additive:
        return None
    if (WITHDRAWN_MARK in gone) != (WITHDRAWN_MARK in added):
        return None  # a withdrawal with other changes: neither rule says which holds
    if same_value(gone, added) or _own_thing(old, new, gone, added):
        return None
    if not _comparable(gone, added):
        return None
    if not (_in_predicate(old, gone) and _in_predicate(new, added)):
        return None
    if not _UPDATE_CUE.search(later) and (_places(old, gone) > 1 or _places(new, added) > 1):
        return None  # two things changed, unannounced: maybe another subject's value
    return Update("substitution", " ".join(gone), " ".join(added))


def _one_word_claim(old: Frame, new: Frame, gone: list[str], added: list[str]) -> bool:
    """ "The logo is blue." / "The logo is green.": a one-word subject, its verb, and one
    value of one kind replaced — the whole claim, nothing else said."""
    return (
        len(old.tokens) == len(new.tokens) == 2
        and old.predicate_at == new.predicate_at == 1
        and old.tokens[0] == new.tokens[0]
        and len(gone) == len(added) == 1
        and _comparable(gone, added)
        and WITHDRAWN_MARK not in (gone[0], added[0])
    )


def _places(statement: Frame, changed: Sequence[str]) -> int:
    """How many separate runs of changed tokens the statement has."""
    marks = [token in changed for token in statement.tokens]
    return sum(1 for i, mark in enumerate(marks) if mark and (i == 0 or not marks[i - 1]))


def _restated_value(old: Frame, new: Frame, gone: list[str], added: list[str]) -> Update | None:
    """The later statement repeats all of the earlier but one value (a number, version,
    date or colour code) and gives one value of that kind in its place, plus detail:
    "Redis bundles jemalloc 5.2.1." / "Redis bundles jemalloc 5.3.0, resolving hangs."."""
    if len(gone) != 1 or _kind(gone[0]) == "word" or old.additive or new.additive:
        return None
    same_kind = [t for t in added if _kind(t) == _kind(gone[0])]
    if len(same_kind) != 1 or not (_in_predicate(old, gone) and _in_predicate(new, same_kind)):
        return None
    return Update("substitution", gone[0], same_kind[0])


def _withdrawal(
    later: str, gone: list[str], added: list[str], restated: bool = False
) -> Update | None:
    """A polarity flip: withdrawing words on one side only, at most one other word
    changed on each side (the verb they replace), none of them a number — or, when the
    later statement restates all of the earlier (`restated`), a withdrawal with detail
    ("… was removed in favour of the pytest-reportlog plugin")."""
    out_old, out_new = WITHDRAWN_MARK in gone, WITHDRAWN_MARK in added
    if out_old == out_new or _HEDGE.search(later):
        return None
    if restated and not gone and out_new:
        return Update("withdrawn", "", " ".join(added))
    rest_old = [t for t in gone if t != WITHDRAWN_MARK]
    rest_new = [t for t in added if t != WITHDRAWN_MARK]
    if (
        len(rest_old) > 1
        or len(rest_new) > 1
        or any(_NUMBERISH.match(t) for t in rest_old + rest_new)
    ):
        return None
    return Update("withdrawn", " ".join(gone), " ".join(added))


# ---------------------------------------------------------------------------
# Two answers to one question (read-time; SPEC "Newest of one claim").
#
# At read time a question is extra evidence the write did not have: two statements
# that both answer it about the same subject are rival answers, whatever words each
# uses.  The rule, no tuned constant:
#
# - The question's *terms* are its frame tokens (`frame`), the words the question
#   asks with ("what", "which", ...) being function words.
# - The pair names the asked subject: both hold one of the *anchors*.  Of the
#   question's terms, take those that exactly two of the compared statements hold
#   (the pair they name) or more but no more than half (a term most of them hold is
#   what the whole memory is about, not the subject of one claim); of those its
#   *names* when there are any (a word written with a capital or with the marks of
#   an identifier: "Vala", "replica-serve-stale-data", "Response.reason"; a question
#   asks about a named thing); and of those the ones the fewest statements hold (the
#   most specific thing asked about).
# - And both answer it: each holds a strict majority of the question's terms (each
#   is mostly about what is asked); or the question asks for a value of a kind (a
#   colour, a number: `Question.asks`) and each gives a different value of that kind
#   ("Haskell's Linguist colour is #5e5086" answers "What colour does Haskell show
#   up as in GitHub's language statistics?" in other words); or the question asks
#   yes or no and one statement denies what the other affirms (an odd number of
#   denying words, `NEGATING`, on one side only: "rejects PING" / "still answers
#   PING").  These last two need the anchor to be a name: with few words in common,
#   only a name says that the two are about one thing.
# ---------------------------------------------------------------------------

# A question that asks for a colour names it; the value is a hex code.
_ASKS_COLOUR: Final = re.compile(r"\b(?:colou?rs?|hex)\b", re.I)
# A question that asks for a number, a version, a date or a time of day.
_ASKS_NUMBER: Final = re.compile(
    r"\b(?:how (?:many|much|long|often|big|large|old)|versions?|years?|ports?|numbers?|"
    r"when|dates?|what time|codes?|limits?|sizes?|rates?|prices?|costs?)\b",
    re.I,
)


# A question that asks yes or no opens with an auxiliary verb.
_ASKS_POLARITY: Final = re.compile(
    r"^\W*(?:does|do|did|is|are|was|were|can|could|will|would|has|have|had|should|must)\b",
    re.I,
)
# Words that deny or reverse what a sentence would otherwise affirm: the withdrawing
# words and the verbs and prepositions of their opposite ("hides" / "shows",
# "rejects" / "answers", "without tomli" / "depends on tomli"), and the negative values.
NEGATING: Final = WITHDRAWN | frozenset(
    [
        "without",
        "hides",
        "hide",
        "hidden",
        "rejects",
        "reject",
        "rejected",
        "refuses",
        "refused",
        "skips",
        "skipped",
        "excludes",
        "excluded",
        "omits",
        "omitted",
        "ignores",
        "ignored",
        "false",
        "off",
    ]
)
# Marks of an identifier inside a word: a name even when written in lower case.
_IDENTIFIER: Final = re.compile(r"[\d._/#\-]")


@dataclass(frozen=True)
class Question:
    """What a question asks with: its terms, its names, the kind of answer it asks."""

    terms: frozenset[str]
    names: frozenset[str]
    asks: str | None  # "hex" | "number" | "polarity" | None


def question(text: str) -> Question:
    """The terms of `text` and the value kind it asks for.  O(len).

    >>> q = question("What colour does Haskell show up as in GitHub's statistics?")
    >>> sorted(q.terms), sorted(q.names), q.asks
    (['colour', 'github', 'haskell', 'show', 'statistic'], ['github', 'haskell'], 'hex')
    """
    terms = frozenset(t for t in frame(text).tokens if t != WITHDRAWN_MARK)
    names = frozenset(
        _stem(word.lower())
        for match in _TOKEN.finditer(re.sub(r"['’]s\b", "", text))
        if (word := match.group(0).rstrip(".:/-")).lower() not in STOPWORDS
        and (word[0].isupper() or _IDENTIFIER.search(word))
    )
    if _ASKS_COLOUR.search(text):
        asks: str | None = "hex"
    elif _ASKS_NUMBER.search(text):
        asks = "number"
    else:
        asks = "polarity" if _ASKS_POLARITY.match(text) else None
    return Question(terms, names & terms, asks)


def held_terms(asked: Question, text: str) -> frozenset[str]:
    """The question's terms `text` holds.  O(len)."""
    return asked.terms & frozenset(frame(text).tokens)


def anchors(asked: Question, held: Sequence[frozenset[str]]) -> frozenset[str]:
    """The question's most specific terms among the statements: of the terms two of
    them hold, or more but no more than half, the names if any, and of those the ones
    the fewest hold.  Module section above.  O(total terms).

    >>> q = question("Which colour is Vala drawn in on GitHub language bars?")
    >>> sorted(anchors(q, [frozenset({"vala", "github", "language"}), frozenset({"vala"}),
    ...                    frozenset({"github", "language"}), frozenset({"github"})]))
    ['vala']
    >>> anchors(q, [frozenset({"vala", "github"}), frozenset({"github"}),
    ...             frozenset({"github"}), frozenset({"language"})])
    frozenset()
    """
    counts = Counter(term for terms in held for term in terms)
    # Shared by exactly two statements (the pair it names), or by no more than half of
    # them: a name most of them hold is what the whole memory is about, not the subject
    # of one claim.
    shared = {term: n for term, n in counts.items() if n == 2 or 2 <= n <= len(held) / 2}
    named = {term: n for term, n in shared.items() if term in asked.names}
    candidates = named or shared
    fewest = min(candidates.values(), default=0)
    return frozenset(term for term, n in candidates.items() if n == fewest)


def values_of(text: str, kind: str) -> frozenset[str]:
    """The values of `kind` ("hex" | "number") a statement gives.  O(len)."""
    return frozenset(t for t in frame(text).tokens if _kind(t) == kind)


def rival_answers(
    asked: Question,
    anchor: frozenset[str],
    first: tuple[str, frozenset[str]],
    second: tuple[str, frozenset[str]],
) -> bool:
    """Whether two statements ((text, held terms) each) answer the question about
    the same subject (module section above).  O(len).

    >>> q = question("Which port does the cache listen on?")
    >>> a = ("The cache listens on port 6379.", held_terms(q, "The cache listens on port 6379."))
    >>> b = ("Port 6380 is where the cache is.", held_terms(q, "Port 6380 is where the cache is."))
    >>> rival_answers(q, anchors(q, [a[1], b[1]]), a, b)
    True
    """
    (first_text, first_held), (second_text, second_held) = first, second
    if not anchor & first_held & second_held:
        return False
    if min(len(first_held), len(second_held)) * 2 > len(asked.terms):
        return True
    if asked.asks is None or not anchor <= asked.names:
        return False  # fewer words in common: only a shared name says it is one subject
    if asked.asks == "polarity":
        return _denies(first_text) != _denies(second_text)
    first_values, second_values = (
        values_of(first_text, asked.asks),
        values_of(second_text, asked.asks),
    )
    return bool(first_values) and bool(second_values) and first_values != second_values


def _denies(text: str) -> bool:
    """An odd number of denying words (`NEGATING`; "n't" counts as "not").  O(len)."""
    text = _CONTRACTION.sub(" not", text.lower())
    return sum(match.group(0) in NEGATING for match in _TOKEN.finditer(text)) % 2 == 1
