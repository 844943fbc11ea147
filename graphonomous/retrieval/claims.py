"""Does a new statement update an earlier one?  Same subject, a changed value.

Rules of this file: pure functions of two strings, no LLM, no tuned constant.
A later statement *updates* an earlier one when both make the same claim about
the same subject except for its value (SPEC "Updates"):

0. A later statement that says it adds ("also", "as well", "too", "in
   addition") never updates: both hold.
1. Both are reduced to their *frame* (`frame`): lower-cased tokens that keep
   values whole ("2.32.3", "#3178c6", "07:00", "case-insensitive"; a date or a
   clock time written in words is one token: "March 14" → 03-14, "6 pm" →
   18:00; ordinal words are numbers: "third" → 3rd), without function words,
   possessives and words that never carry the claim (`NEUTRAL`: "also", "now",
   "by default", relation verbs that say the same thing in other words; the
   change verbs of `_CHANGE_CUE`, which say *that* the value changed, not
   what it is), light suffixes folded; every withdrawing word ("removed",
   "dropped", "not", …: `WITHDRAWN`) is one mark.  The *subject* is what stands
   before the first predicate verb (`PREDICATE_VERBS`, else a word in -s).
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
   - **contrast** — the later statement names what it excludes ("via ArgoCD,
     not Jenkins", "instead of", "rather than", "in place of"): an update
     exactly when the excluded value is the earlier one's and the later gives
     another in its place ("in Go, not Rust" after "in Go" restates it);
   - **withdrawal** — a withdrawing mark on one side only, at most one other
     word changed on each side (the verb it replaces) and no number, or the
     later statement restates all of the earlier and withdraws it; never when
     the withdrawal is announced for later ("will be removed"; "has to be" is
     an obligation, not a plan).
   A change of words (not numbers, dates, codes) needs a value on one side at
   least (`_names_among`: a name, an identifier, a colour or frequency word),
   announced or not: "prefers water in the afternoon" / "now prefers coffee in
   the morning" may be two habits.
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
# A withdrawal announced for later is not a withdrawal yet ("will be removed", "is to
# be dropped"); "has to be" / "needs to be" is an obligation now, not a plan.
_HEDGE: Final = re.compile(
    r"\b(?:will|(?<!has\s)(?<!have\s)(?<!need\s)(?<!needs\s)to be|plan(?:s|ned)?|future|"
    r"eventually|may|might|should|soon)\b",
    re.I,
)
# Words by which a later statement says it adds to what holds ("manages the Munich
# office as well"): both hold, whatever else changed.
_ADDS: Final = re.compile(r"\b(?:also|as well|too|in addition|additionally)\b", re.I)
# Words by which a statement announces that it replaces an earlier one: then several
# values of the one subject may change at once ("now runs PostgreSQL 17 on db-stg-3").
_UPDATE_CUE: Final = re.compile(
    r"\b(?:now|no longer|instead|changed|switched|moved|replaced|updated|renamed|"
    r"from now on|these days|any ?more)\b",
    re.I,
)
# Verbs by which a statement says that a value changed ("was raised to 500", "moved to
# Thursdays", "upgraded to 1.29", "pushed to 31 July"): with the subject named in the
# earlier statement's words, they announce the replacement of its value.
_CHANGE_CUE: Final = re.compile(
    r"\b(?:raised|lowered|increased|decreased|reduced|extended|shortened|upgraded|"
    r"downgraded|pushed|postponed|delayed|rescheduled|migrated|relocated|bumped|"
    r"transferred|renamed|replaced|switched|moved|changed|updated)\b",
    re.I,
)
# "... from V1 to V2": the later statement names the value it replaces.
_FROM_TO: Final = re.compile(r"\bfrom\s+(\S+(?:\s\S+)?)\s+to\s+(\S+(?:\s\S+)?)", re.I)
# "... V2, not V1" / "V2 instead of V1" / "V2 rather than V1": the later statement names
# the value it replaces by contrast (the new value first).
_CONTRAST: Final = re.compile(
    r"(?:,\s+not|\binstead\s+of|\brather\s+than|\bin\s+place\s+of)\s+(\S+(?:\s\S+)?)", re.I
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
        "sits",
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


# A value written in several words is one value (rule 1 keeps values whole): a calendar
# date ("March 14", "14th of March, 2025") becomes MM-DD or YYYY-MM-DD and a clock time
# ("6 pm", "6:30 p.m.") HH:MM, so "March 14" / "April 2" is one value changed, as
# "2025-03-14" / "2025-04-02" is.
_MONTHS: Final = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_NAME: Final = (
    r"(?P<month>" + "|".join(_MONTHS) + r"|(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?)"
)
_DAY: Final = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR: Final = r"(?:,?\s+(?P<year>(?:19|20)\d\d))?"
_DATE_MONTH_FIRST: Final = re.compile(
    r"\b" + _MONTH_NAME + r"\s+" + _DAY + r"\b" + _YEAR + r"(?![\d:])", re.I
)
_DATE_DAY_FIRST: Final = re.compile(
    r"\b" + _DAY + r"(?:\s+of)?\s+" + _MONTH_NAME + r"\b" + _YEAR, re.I
)
_CLOCK: Final = re.compile(
    r"\b(?P<hour>1[0-2]|0?[1-9])(?::(?P<minute>[0-5]\d))?\s*(?P<half>[ap])(?:\.m\.|m\b)", re.I
)
# Ordinal words are numbers ("the third floor" / "the fifth floor" is one value
# changed, as "level 2" / "level 4" is), written as numerals with their suffix.
ORDINAL_WORDS: Final = {
    word: f"{value}{suffix}"
    for value, (word, suffix) in enumerate(
        [
            ("second", "nd"),
            ("third", "rd"),
            ("fourth", "th"),
            ("fifth", "th"),
            ("sixth", "th"),
            ("seventh", "th"),
            ("eighth", "th"),
            ("ninth", "th"),
            ("tenth", "th"),
            ("eleventh", "th"),
            ("twelfth", "th"),
        ],
        start=2,
    )
}


def _date_token(match: re.Match[str]) -> str:
    month = match.group("month").lower().rstrip(".")
    number = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(month[:3]))
    day = int(match.group("day"))
    if not 1 <= day <= 31:
        return match.group(0)
    year = match.group("year")
    return f"{year}-{number:02d}-{day:02d}" if year else f"{number:02d}-{day:02d}"


def _clock_token(match: re.Match[str]) -> str:
    hour = int(match.group("hour")) % 12 + (12 if match.group("half").lower() == "p" else 0)
    return f"{hour:02d}:{match.group('minute') or '00'}"


def whole_values(text: str) -> str:
    """`text` with each date and clock time written in several words made one token.

    >>> whole_values("The deadline moved from March 14 to the 2nd of April, 2025 at 6 pm.")
    'The deadline moved from 03-14 to the 2025-04-02 at 18:00.'
    """
    text = _DATE_MONTH_FIRST.sub(_date_token, text)
    text = _DATE_DAY_FIRST.sub(_date_token, text)
    return _CLOCK.sub(_clock_token, text)


def frame(text: str) -> Frame:
    """The claim-bearing tokens of `text`, in order (module docstring, rule 1).  O(len).

    >>> frame("Redis's daily CI workflow now runs at 07:00 UTC.").tokens
    ('redi', 'daily', 'ci', 'workflow', 'runs', '07:00', 'utc')
    """
    text = _CONTRACTION.sub(" not", whole_values(unicodedata.normalize("NFKC", text)))
    text = re.sub(r"['’]s\b", "", text)
    tokens: list[str] = []
    predicate_at: int | None = None
    additive = False
    guessed: int | None = None
    for match in _TOKEN.finditer(text.lower()):
        word = match.group(0).rstrip(".:/-")
        announcing = _CHANGE_CUE.fullmatch(word) is not None
        if predicate_at is None and word in PREDICATE_VERBS | ADDITIVE_VERBS:
            predicate_at = len(tokens)
        if guessed is None and tokens and _VERB_ENDING.match(word):
            guessed = len(tokens)
        additive = additive or word in ADDITIVE_VERBS
        word = NUMBER_WORDS.get(word) or ORDINAL_WORDS.get(word) or _EQUIVALENT.get(word, word)
        if announcing or word in NEUTRAL or (word in STOPWORDS and word not in WITHDRAWN):
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


def _own_thing(
    old: Frame,
    new: Frame,
    gone: list[str],
    added: list[str],
    texts: tuple[str, str] | None = None,
) -> bool:
    """A differently named thing with its own number on each side ("requires Werkzeug
    3.1" / "requires ItsDangerous 2.2"): a changed name directly followed by a changed
    number, on both sides — another item, not another value of the same one.  With the
    statements' `texts`, the changed word must be a name there (`_names_among`), so a
    changed verb before a number ("starts on 14 March" / "was moved to 21 March") is not
    taken for one."""

    def pairs(statement: Frame, changed: list[str], text: str | None) -> bool:
        tokens = statement.tokens
        return any(
            a in changed
            and b in changed
            and value_kind(a) in ("word", "identifier")
            and _NUMBERISH.match(b)
            and (text is None or _names_among(text, [a]))
            for a, b in itertools.pairwise(tokens)
        )

    earlier, later = texts if texts is not None else (None, None)
    return pairs(old, gone, earlier) and pairs(new, added, later)


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
    if _ADDS.search(later) and not _ADDS.search(earlier):
        return None  # the later statement adds to the earlier: both hold
    old, new = frame(earlier), frame(later)
    gone, added, shared = _difference(old, new)
    contrast = _CONTRAST.search(later)
    if contrast is not None:
        return _contrasted(earlier, later, old, contrast.group(1), added)
    if _one_word_claim(old, new, gone, added) and _all_named((earlier, later), gone, added):
        return Update("substitution", gone[0], added[0])
    announced = _announced(earlier, later, old, new, gone, added)
    if announced is not None:
        return announced
    if shared < MIN_SHARED:
        return None
    if shared == len(old.tokens) - len(gone) and len(gone) <= 1:
        extended = _restated_value(old, new, gone, added) or _withdrawal(later, gone, added, True)
        if extended is not None:
            return extended
    announced = _named_replacement(earlier, later, old, new)
    if announced is not None:
        return announced
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
    if not _units_agree(old, new, gone, added):
        return None
    if not (_in_predicate(old, gone) and _in_predicate(new, added)):
        return None
    if not _UPDATE_CUE.search(later) and (_places(old, gone) > 1 or _places(new, added) > 1):
        return None  # two things changed, unannounced: maybe another subject's value
    if not _announces(later) and not (_names_among(earlier, gone) or _names_among(later, added)):
        return None  # a common noun changed, unannounced: another thing of the subject
    return Update("substitution", " ".join(gone), " ".join(added))


_TIME_OF_DAY: Final = re.compile(r"^\d{1,2}:\d{2}$")
_WEEKDAY: Final = re.compile(r"^(?:mon|tues|wednes|thurs|fri|satur|sun)day")
_MONTH: Final = re.compile(r"^(?:" + "|".join(_MONTHS) + r")$")
# A calendar date as `whole_values` and ISO write it: YYYY-MM-DD or MM-DD.
_CALENDAR_DATE: Final = re.compile(r"^(?:\d{4}-)?[01]\d-[0-3]\d$")
_IDENTIFIER_VALUE: Final = re.compile(r"[a-z].*[\d./@]|[\d./@].*[a-z]")


def value_kind(token: str) -> str:
    """The kind of value a frame token is, for telling one value's change from another
    attribute's: hex, time, weekday, month, date, number, identifier (a host, a path, a URL:
    letters with digits, dots, slashes) or word.

    >>> [value_kind(t) for t in ("#f05138", "07:00", "thursday", "2.3", "db-stg-3", "room")]
    ['hex', 'time', 'weekday', 'number', 'identifier', 'word']
    >>> [value_kind(t) for t in ("2026-03-21", "03-21", "3rd")]
    ['date', 'date', 'number']
    """
    if _HEX.match(token):
        return "hex"
    if _TIME_OF_DAY.match(token):
        return "time"
    if _WEEKDAY.match(token):
        return "weekday"
    if _MONTH.match(token):
        return "month"
    if _CALENDAR_DATE.match(token):
        return "date"
    if _NUMBERISH.match(token):
        return "number"
    return "identifier" if _IDENTIFIER_VALUE.search(token) else "word"


def _alike(gone: Sequence[str], added: Sequence[str]) -> bool:
    """Both sides give values of the same kinds (words aside): "on Tuesdays at 10:00" /
    "to Thursdays at 15:00" is one schedule changed; "in room Ada" / "to Thursdays at
    15:00" is another attribute of the same meeting."""
    kinds = [{value_kind(t) for t in side} - {"word"} for side in (gone, added)]
    return kinds[0] == kinds[1]


# A quantity (not a version or an address): what a unit word may follow.
_QUANTITY: Final = re.compile(r"^\d+(?:[.,]\d+)?$")


def _unit_after(statement: Frame, changed: Sequence[str]) -> set[str]:
    """The words that directly follow a changed number in the statement (its units)."""
    tokens = statement.tokens
    return {
        b
        for a, b in itertools.pairwise(tokens)
        if a in changed and _QUANTITY.match(a) and value_kind(b) == "word"
    }


def _units_agree(old: Frame, new: Frame, gone: Sequence[str], added: Sequence[str]) -> bool:
    """A changed number keeps its unit: "6 nodes" / "16 GB" are two quantities."""
    before, after = _unit_after(old, gone), _unit_after(new, added)
    return not before or not after or bool(before & after)


# The basic colour terms: a colour word is a value ("shows XPASS in red" / "in yellow").
COLOUR_WORDS: Final = frozenset(
    [
        "red",
        "orange",
        "yellow",
        "green",
        "blue",
        "purple",
        "violet",
        "pink",
        "brown",
        "black",
        "white",
        "grey",
        "gray",
        "cyan",
        "magenta",
    ]
)
# How often something happens, a closed class like the colours: a frequency word is a
# value ("the invoices are paid monthly" / "quarterly"), never another thing of the
# subject.  Stemmed as frame tokens are (`_stem`: "quarterly" → "quarterly").
FREQUENCY_WORDS: Final = frozenset(
    _stem(word)
    for word in (
        "hourly",
        "nightly",
        "daily",
        "weekly",
        "biweekly",
        "fortnightly",
        "monthly",
        "bimonthly",
        "quarterly",
        "yearly",
        "annually",
        "biannually",
    )
)
_NAMED_WORD: Final = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Za-z]*[A-Z]\w*|\b\w+(?:[_\-]\w+)+", re.M)


def _names_among(text: str, changed: Sequence[str]) -> bool:
    """Whether a changed token is a name: written with a capital inside the sentence,
    marked as an identifier (a digit, a dot, an underscore, a hyphen), a colour or a
    frequency word.
    A state's value is named ("uses Opsgenie", "is case-insensitive", "in red"); a
    changed common noun names another thing of the same subject ("leads the payments
    team" / "the search team", "allergic to peanuts" / "to cats"), and both can hold."""
    text = _CONTRACTION.sub(" not", unicodedata.normalize("NFKC", text))
    named = {_stem(m.group(0).lower()) for m in _NAMED_WORD.finditer(text.strip())}
    return any(
        token in named
        or token in COLOUR_WORDS
        or token in FREQUENCY_WORDS
        or value_kind(token) != "word"
        for token in changed
    )


def _all_named(texts: tuple[str, str], gone: Sequence[str], added: Sequence[str]) -> bool:
    """Whether both sides of a change give a value (`_names_among`): a changed common
    word ("is protected" / "was renamed to main") is another claim of the subject."""
    return _names_among(texts[0], gone) and _names_among(texts[1], added)


def _announces(later: str) -> bool:
    """The statement says that it replaces: a change verb or a word of the present
    state ("now", "no longer", "instead")."""
    return bool(_CHANGE_CUE.search(later) or _UPDATE_CUE.search(later))


def _subject(statement: Frame) -> Counter[str]:
    return Counter(statement.tokens[: statement.predicate_at])


def _announced(
    earlier: str, later: str, old: Frame, new: Frame, gone: list[str], added: list[str]
) -> Update | None:
    """An announced change of one subject's value: the later statement says the value
    changed (`_CHANGE_CUE`), names the same subject in the same words before its
    predicate, and every changed word stands after it — "The weekly planning meeting is
    on Tuesdays at 10:00." / "The weekly planning meeting moved to Thursdays at 15:00."
    Then several words of the value may change at once, since the cue says they replace
    the earlier ones."""
    if not _announces(later) or _HEDGE.search(later) or old.additive or new.additive:
        return None
    if _CHANGE_CUE.search(earlier):
        return None  # two reports of a change are two events, both true of their time
    subject = _subject(old)
    if not subject or subject != _subject(new):
        return None
    if (WITHDRAWN_MARK in gone) != (WITHDRAWN_MARK in added) or not gone or not added:
        return None
    if same_value(gone, added) or not _alike(gone, added):
        return None
    if not (_names_among(earlier, gone) or _names_among(later, added)):
        return None  # the cue changes a value; common words changed are another claim
    if _own_thing(old, new, gone, added, (earlier, later)):
        return None
    if not _units_agree(old, new, gone, added):
        return None
    if not (_in_predicate(old, gone) and _in_predicate(new, added)):
        return None
    return Update("substitution", " ".join(gone), " ".join(added))


def _named_replacement(earlier: str, later: str, old: Frame, new: Frame) -> Update | None:
    """The later statement names the value it replaces — "We switched the on-call
    rotation from PagerDuty to Opsgenie." after "Our on-call rotation is managed in
    PagerDuty.": a change verb, "from V1 to V2" with V1 in the earlier statement and V2
    not, and the rest sharing at least `MIN_SHARED` words with it (the same subject)."""
    match = _FROM_TO.search(later)
    if match is None or not _CHANGE_CUE.search(later) or _HEDGE.search(later):
        return None
    if _CHANGE_CUE.search(earlier):
        return None  # two reports of a change are two events (`_announced`)
    was, becomes = frame(match.group(1)).tokens, frame(match.group(2)).tokens
    held = Counter(old.tokens)
    if not was or not becomes or any(held[t] == 0 for t in was) or any(held[t] for t in becomes):
        return None
    rest = Counter(new.tokens) - Counter(was) - Counter(becomes)
    if sum(((held - Counter(was)) & rest).values()) < MIN_SHARED:
        return None
    return Update("substitution", " ".join(was), " ".join(becomes))


def _contrasted(
    earlier: str, later: str, old: Frame, excluded: str, added: list[str]
) -> Update | None:
    """A later statement that names what it excludes ("go through ArgoCD, not Jenkins",
    "by email rather than by post") updates the earlier one exactly when the excluded
    value is the earlier one's and the later gives another value of its kind in its
    place; a contrast with a value the earlier never gave ("in Go, not Rust") restates
    it.  Never when the change is announced for later (`_HEDGE`)."""
    was = [t for t in frame(excluded).tokens if t != WITHDRAWN_MARK]
    held = Counter(old.tokens)
    if not was or any(held[t] == 0 for t in was) or _HEDGE.search(later):
        return None
    becomes = [t for t in added if t != WITHDRAWN_MARK and t not in was]
    if not becomes or len(old.tokens) - len(was) < MIN_SHARED - 1:
        return None
    # Two names need no common kind (the contrast pairs them); else values of one kind.
    if _all_named((earlier, later), was, becomes) or (
        _alike(was, becomes) and _names_among(later, becomes)
    ):
        return Update("substitution", " ".join(was), " ".join(becomes))
    return None


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
    if not _units_agree(old, new, gone, same_kind):
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
