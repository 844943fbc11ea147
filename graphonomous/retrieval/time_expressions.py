"""Relative time in questions: "last week", "in March", "since Monday" → a UTC window.

Rules of this file: pure functions of the text and of a `now` the caller
passes (the engine owns the one clock; nothing here reads the system clock).
A naive `now` is UTC, every datetime returned is UTC-aware, windows are
half-open [start, end), calendar arithmetic is in UTC and weeks start on
Monday (ISO 8601).  Matching is case-insensitive and on word boundaries.
Text outside the grammar yields no window (never a guess) and no input string
raises.  Where two matches overlap the longer wins, then the earlier.  A
memory answers about the past, so a month or day without a year is the most
recent one that has started; future phrases ("tomorrow", "next week") are not
in the grammar.

N is digits (at most 4), a number word one..twelve (not the tail of a larger
number: "twenty two days ago" gives no window), "a couple (of)" = 2 or
"a few" = 3; before "ago" also "a"/"an" = 1.  Units: minute(s)/min(s),
hour(s)/hr(s), day(s), week(s), month(s), year(s)/yr(s).  MONTH is a full
name or an abbreviation (jan feb mar apr jun jul aug sep sept oct nov dec).
YEAR is four digits 1900–2199.  D is a day 1–31 with an optional st/nd/rd/th.
Today is 00:00 UTC of `now`'s date.

=====================================  ===========================================
expression                             window [start, end)
=====================================  ===========================================
today, tonight, earlier today,         today 00:00 – tomorrow 00:00
this morning|afternoon|evening         today 00:00 – tomorrow 00:00
yesterday                              yesterday 00:00 – today 00:00
(the) day before yesterday             the day before yesterday
N minutes|hours ago                    that minute | that hour
N days|weeks|months|years ago          that day | ISO week | month | year
last|past|previous|this past           the previous calendar week | month | year
  week|month|year
last|past|previous|this past weekend   previous Saturday 00:00 – this Monday 00:00
this week|month|year                   start of the current one – now
(in|over|within|during|for) (the)      rolling: now − N units – now
  last|past|previous N units
recently, lately                       rolling: now − `RECENT_WINDOW` – now
last|previous|(this) past WEEKDAY      the latest WEEKDAY strictly before today
on WEEKDAY                             the latest WEEKDAY on or before today
this WEEKDAY                           that day of the current ISO week
(in|during) MONTH                      the latest MONTH that has started
last MONTH                             the latest MONTH that has ended
(in|during) MONTH (of) (,) YEAR        that month
(on) YYYY-MM-DD                        that day
(on) MONTH D (,) YEAR                  that day
(on) (the) D (of) MONTH (,) YEAR       that day
(on) MONTH D, (on) (the) D (of) MONTH  the latest such day on or before today
(in|during) (the year (of)) YEAR       that year
since X                                start of X – now
before X                               unbounded – start of X
after X                                end of X – unbounded
until|till X                           unbounded – end of X
between X and Y                        the earlier start – the later end
from X to|until|till|through Y         the earlier start – the later end
before|after EVENT                     no bounds; `event` and `direction` set
=====================================  ===========================================

X and Y are any expression above without its leading in/during/on, or a bare
MONTH, WEEKDAY or YEAR ("since March", "before 2024", "until Friday"), which
mean what "in MONTH", "on WEEKDAY" and "in YEAR" mean; an X followed by a
possessive ("after yesterday's meeting") is not an operand.
EVENT is what follows "before"/"after" when it is not an X: the phrase up to
the end of the clause (``? ! , ; :``, a full stop before a space, a newline,
a following time expression, or a word of `_CLAUSE_WORDS`), without a leading
"the", at most `MAX_EVENT_WORDS` words, and not only pronouns ("after that").

Not in the grammar, on purpose: a bare MONTH or WEEKDAY outside an operator
("may", "march", "august" are also words; "Sunday school"), a bare YEAR
("port 2023"), slash dates (3/5/2024 is March 5 in the US and 3 May
elsewhere), dotted numbers ("version 2024.1"), and the future ("tomorrow",
"next week").
"""

from __future__ import annotations

import calendar
import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import islice
from typing import Final

from ..model import ValidationError

# "recently"/"lately": a week is the span people mean when they do not say it
# ("what have I been reading lately"), and wider than any "yesterday" they could mean.
RECENT_WINDOW: Final = timedelta(days=7)
# An event is a short noun phrase ("the charity race"); a longer tail is a clause, not an event.
MAX_EVENT_WORDS: Final = 8
# February 29 recurs at most 8 years apart (2096 → 2104): the look-back for a date without a year.
DATE_LOOKBACK_YEARS: Final = 8
# What `parse_as_of` accepts, quoted in its errors so the user can fix the argument.
AS_OF_FORMS: Final = (
    "expected an ISO 8601 date (2024-03-05, meaning the end of that day) or timestamp "
    "(2024-03-05T14:30:00Z; no zone means UTC), 'now', or one relative time expression "
    "('yesterday', '3 days ago', 'last week', 'this month', 'in March 2024', 'since Monday')"
)
# The grammar is case-insensitive ("In March", "in march", "LAST WEEK").
_FLAGS: Final = re.IGNORECASE

# Spelled out here, not taken from `calendar.month_name`, which follows the process's locale;
# "may" is listed only as a full name, so no abbreviation is also a modal verb.
_MONTH_TEXT: Final = """
    january february march april may june july august september october november december
"""
_MONTH_NUMBERS: Final = {
    **{name: number for number, name in enumerate(_MONTH_TEXT.split(), start=1)},
    **{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8},
    **{"sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12},
}
# ISO weekday order (Monday = 0, as `datetime.weekday`); spelled out for the same locale reason.
_WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Number words one..twelve: enough for "two weeks ago" and "the last twelve months";
# larger counts are usually written in digits.
_NUMBER_TEXT: Final = "one two three four five six seven eight nine ten eleven twelve"
_NUMBER_WORDS: Final = tuple(_NUMBER_TEXT.split())
# Vague counts by their usual value: "a couple of days" is two, "a few weeks" three.
_COUNT_WORDS: Final = {
    **{word: value for value, word in enumerate(_NUMBER_WORDS, start=1)},
    **{"a": 1, "an": 1, "a couple": 2, "a couple of": 2, "couple": 2, "couple of": 2},
    **{"a few": 3, "few": 3},
}
# A number word after one of these is the tail of a larger number ("twenty two days ago"):
# no window, rather than the wrong one.
_LARGER_NUMBER: Final = re.compile(
    r"\b(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand)[\s-]+\Z",
    _FLAGS,
)
# A unit by its singular or abbreviated spelling (the regex keeps the plural "s" outside).
_UNITS: Final = {
    **{"minute": "minute", "min": "minute", "hour": "hour", "hr": "hour"},
    **{"day": "day", "week": "week", "month": "month", "year": "year", "yr": "year"},
}
# Units of fixed length; months and years go through `_add_months` (their length varies).
_STEPS: Final = {
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
}

# -- regex fragments (each names its groups; one pattern uses each fragment at most once) --

# Longest name first, so "sept" is tried before "sep" and "march" before "mar".
_MONTH: Final = (
    r"\b(?P<month>" + "|".join(sorted(_MONTH_NUMBERS, key=len, reverse=True)) + r")\b"
    r"(?:\.(?=\s+[0-9]))?"  # "Dec. 5"; a sentence's full stop stays out of the match
)
# Full names only: "Sun", "Sat", "Wed" are also words.
_WEEKDAY: Final = r"\b(?P<weekday>" + "|".join(_WEEKDAYS) + r")\b"
# Not glued to an identifier, a version, a time or a range: "v2024", "2024.1", "2024-05".
_NUMBER_START: Final = r"(?<![\w.\-/:])"
# The same on the right; a comma before a space is punctuation ("March 5, 2024").
_NUMBER_END: Final = r"(?![\w]|[.,:/\-][0-9])"
# 1900–2199: the years a memory can be about; "port 8080" or "1000 rows" never are.
_YEAR: Final = _NUMBER_START + r"(?P<year>(?:19|20|21)[0-9]{2})" + _NUMBER_END
# A day of the month; the calendar rejects the 0th and the 32nd.
_DAY: Final = _NUMBER_START + r"(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?" + _NUMBER_END
# An optional year after a day: "March 5 2024", "March 5, 2024".
_YEAR_TAIL: Final = r"(?:(?:,\s*|\s+)" + _YEAR + r")?"
# At most four digits: more is an id or a measurement, and would leave the calendar anyway.
_BARE_COUNT: Final = (
    r"(?P<count>[0-9]{1,4}|" + "|".join(_NUMBER_WORDS) + r"|a\s+couple(?:\s+of)?|couple(?:\s+of)?"
    r"|a\s+few|few"
)
# "a"/"an" count only before "ago": "the last a days" is not English, "a week ago" is.
_COUNT: Final = _NUMBER_START + _BARE_COUNT + r")"
_AGO_COUNT: Final = _NUMBER_START + _BARE_COUNT + r"|an?)"
_UNIT: Final = r"(?P<unit>minute|min|hour|hr|day|week|month|year|yr)s?\b"
# "last", "previous", "past" and "this past" all name the unit just before the current one.
_LAST: Final = r"\b(?:last|previous|(?:this\s+)?past)\s+"

# The operators that take a date expression (or, for before/after, an event) after them.
_OPERATOR: Final = re.compile(r"\b(?P<op>since|before|after|until|till|between|from)\s+", _FLAGS)
# What joins the two ends of a range, per opening word.
_JOINERS: Final = {
    "between": re.compile(r"\s+and\s+", _FLAGS),
    "from": re.compile(r"\s+(?:to|until|till|through|thru)\s+", _FLAGS),
}
# "after yesterday's meeting" is about the meeting: a possessive ends no operand.
_POSSESSIVE: Final = re.compile(r"['’]s\b", _FLAGS)
# Words that end an event phrase: the next clause starts ("after the race and before ...").
_CLAUSE_TEXT: Final = """
    and or but when while because then where which that who so before after since until till
    between
"""
_CLAUSE_WORDS: Final = tuple(_CLAUSE_TEXT.split())
# Where an event phrase ends: clause punctuation (a full stop only before a space or the end,
# so "v1.2" stays whole), a newline, or a clause word.
_CLAUSE_END: Final = re.compile(
    r"[?!,;:\n]|\.(?!\w)|\s(?:" + "|".join(_CLAUSE_WORDS) + r")\b", _FLAGS
)
# An event phrase's words are what lies between spaces: "Caroline's" and "LGBTQ+" stay whole.
_TOKEN: Final = re.compile(r"\S+")
# A phrase made only of these names no event ("after that", "before it", "after all").
_NOT_EVENT_TEXT: Final = """
    that this it its them him her which what all then now so there here those these me us you
    i we he she they one tomorrow
"""
_NOT_EVENTS: Final = frozenset(_NOT_EVENT_TEXT.split())
# Quotes and brackets around a word do not make it another word ("(that)" is "that").
_TOKEN_PUNCTUATION: Final = "\"'’“”()[]"

# A question about the present state: these words ask what holds now.
_PRESENT_CUES: Final = re.compile(
    r"\b(?:current(?:ly)?|now|nowadays|at\s+the\s+moment|these\s+days|at\s+present|presently"
    r"|as\s+of\s+today|latest|newest|most\s+recent(?:ly)?|still|anymore|no\s+longer"
    r"|today['’]s|up[\s-]to[\s-]date)\b",
    _FLAGS,
)
# ...unless the question also points at an earlier state ("what did I use before, and now?").
_PAST_CUES: Final = re.compile(
    r"\b(?:used\s+to|did\s+(?:\w+\s+){1,3}use\s+to|previous(?:ly)?|formerly|former"
    r"|originally|initially|first|before"
    r"|in\s+the\s+past|back\s+then|(?:the|my|our|your|his|her|their|its)\s+old)\b",
    _FLAGS,
)
# ISO 8601 as `parse_as_of` takes it, parsed here rather than by `datetime.fromisoformat`,
# whose accepted forms differ between Python 3.10 and 3.11.
_ISO: Final = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[T ](?P<H>[0-9]{2}):(?P<M>[0-9]{2})(?::(?P<S>[0-9]{2})(?:[.,](?P<f>[0-9]{1,6}))?)?"
    r"(?P<zone>Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?",
    _FLAGS,
)


@dataclass(frozen=True)
class TimeWindow:
    """A time expression found in a query and the window it names.

    `start` is inclusive and `end` exclusive, both UTC-aware or None for
    unbounded.  `expression` is ``text[span[0]:span[1]]``.  For "before/after
    <event>" `event` is the event phrase, `direction` is "before" or "after"
    and both bounds are None; for every date window `event` and `direction`
    are None.
    """

    start: datetime | None
    end: datetime | None
    expression: str
    span: tuple[int, int]
    event: str | None = None
    direction: str | None = None


@dataclass(frozen=True)
class _Resolved:
    """The bounds of one grammar match; `point` is the moment an "N units ago" names."""

    start: datetime
    end: datetime
    point: datetime | None = None


@dataclass(frozen=True)
class _Found:
    """A candidate match: its span, its rank among the forms, and what it means."""

    begin: int
    finish: int
    rank: int
    start: datetime | None
    end: datetime | None
    point: datetime | None = None
    event: str | None = None
    direction: str | None = None


_Resolver = Callable[[re.Match[str], datetime], _Resolved | None]


@dataclass(frozen=True)
class _Form:
    """One grammar row: the pattern found alone in text, its operand core, its meaning."""

    name: str
    standalone: re.Pattern[str]
    core: re.Pattern[str]
    resolve: _Resolver


# -- calendar arithmetic (UTC) ---------------------------------------------------------------


def _utc(moment: datetime) -> datetime:
    """`moment` as UTC-aware; a naive one is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def _midnight(moment: datetime) -> datetime:
    """00:00 of `moment`'s day."""
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _add_months(moment: datetime, months: int) -> datetime:
    """`moment` moved by whole months, the day clamped to the month's last.

    >>> _add_months(datetime(2024, 3, 31, tzinfo=timezone.utc), -1).date()
    datetime.date(2024, 2, 29)
    """
    year, index = divmod(moment.year * 12 + moment.month - 1 + months, 12)
    day = min(moment.day, calendar.monthrange(year, index + 1)[1])
    return moment.replace(year=year, month=index + 1, day=day)


def _shift(moment: datetime, unit: str, count: int) -> datetime:
    """`moment` minus `count` units (a negative count moves forward)."""
    if unit == "month":
        return _add_months(moment, -count)
    if unit == "year":
        return _add_months(moment, -12 * count)
    return moment - count * _STEPS[unit]


def _floor(moment: datetime, unit: str) -> datetime:
    """The start of the calendar `unit` (ISO week: Monday) that contains `moment`."""
    if unit == "minute":
        return moment.replace(second=0, microsecond=0)
    if unit == "hour":
        return moment.replace(minute=0, second=0, microsecond=0)
    day = _midnight(moment)
    if unit == "week":
        return day - timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    if unit == "year":
        return day.replace(month=1, day=1)
    return day


def _unit_window(moment: datetime, unit: str) -> _Resolved:
    """The calendar `unit` that contains `moment`."""
    start = _floor(moment, unit)
    return _Resolved(start, _shift(start, unit, -1))


def _day(start: datetime) -> _Resolved:
    return _Resolved(start, start + timedelta(days=1))


def _month_window(year: int, month: int) -> _Resolved:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    return _Resolved(start, _add_months(start, 1))


def _date_window(year: int, month: int, day: int) -> _Resolved | None:
    """The day year-month-day, or None when there is no such date (April 31)."""
    try:
        return _day(datetime(year, month, day, tzinfo=timezone.utc))
    except ValueError:
        return None


def _latest_date(month: int, day: int, now: datetime) -> _Resolved | None:
    """The latest month-day on or before today (February 29: the latest leap year)."""
    today = _midnight(now)
    for year in range(now.year, now.year - DATE_LOOKBACK_YEARS - 1, -1):
        window = _date_window(year, month, day)
        if window is not None and window.start <= today:
            return window
    return None


# -- resolvers: a match and `now` → its window ------------------------------------------------


def _count(match: re.Match[str]) -> int:
    """The count of "N units"; ValueError when N is the tail of a larger number."""
    begin = match.start("count")
    if _LARGER_NUMBER.search(match.string, max(0, begin - 16), begin):
        raise ValueError("the tail of a larger number")
    word = " ".join(match.group("count").lower().split())
    return int(word) if word.isascii() and word.isdigit() else _COUNT_WORDS[word]


def _unit(match: re.Match[str]) -> str:
    return _UNITS[match.group("unit").lower()]


def _month_of(match: re.Match[str]) -> int:
    return _MONTH_NUMBERS[match.group("month").lower()]


def _weekday_of(match: re.Match[str]) -> int:
    return _WEEKDAYS.index(match.group("weekday").lower())


def _resolve_day_word(match: re.Match[str], now: datetime) -> _Resolved:
    word = " ".join(match.group(0).lower().split())
    back = 2 if word.endswith("before yesterday") else 1 if word == "yesterday" else 0
    return _day(_midnight(now) - timedelta(days=back))


def _resolve_ago(match: re.Match[str], now: datetime) -> _Resolved:
    unit = _unit(match)
    point = _shift(now, unit, _count(match))
    window = _unit_window(point, unit)
    return _Resolved(window.start, window.end, point)


def _resolve_rolling(match: re.Match[str], now: datetime) -> _Resolved:
    return _Resolved(_shift(now, _unit(match), _count(match)), now)


def _resolve_recent(match: re.Match[str], now: datetime) -> _Resolved:
    return _Resolved(now - RECENT_WINDOW, now)


def _resolve_last_unit(match: re.Match[str], now: datetime) -> _Resolved:
    unit = match.group("unit").lower()
    if unit == "weekend":
        monday = _floor(now, "week")
        return _Resolved(monday - timedelta(days=2), monday)
    current = _floor(now, unit)
    return _Resolved(_shift(current, unit, 1), current)


def _resolve_this_unit(match: re.Match[str], now: datetime) -> _Resolved:
    return _Resolved(_floor(now, match.group("unit").lower()), now)


def _resolve_last_weekday(match: re.Match[str], now: datetime) -> _Resolved:
    today = _midnight(now)
    back = (today.weekday() - _weekday_of(match) - 1) % 7 + 1
    return _day(today - timedelta(days=back))


def _resolve_on_weekday(match: re.Match[str], now: datetime) -> _Resolved:
    today = _midnight(now)
    return _day(today - timedelta(days=(today.weekday() - _weekday_of(match)) % 7))


def _resolve_this_weekday(match: re.Match[str], now: datetime) -> _Resolved:
    return _day(_floor(now, "week") + timedelta(days=_weekday_of(match)))


def _resolve_month(match: re.Match[str], now: datetime) -> _Resolved:
    month = _month_of(match)
    return _month_window(now.year if now.month >= month else now.year - 1, month)


def _resolve_last_month_name(match: re.Match[str], now: datetime) -> _Resolved:
    month = _month_of(match)
    return _month_window(now.year if now.month > month else now.year - 1, month)


def _resolve_month_year(match: re.Match[str], now: datetime) -> _Resolved:
    return _month_window(int(match.group("year")), _month_of(match))


def _resolve_named_date(match: re.Match[str], now: datetime) -> _Resolved | None:
    month, day, year = _month_of(match), int(match.group("day")), match.group("year")
    return _latest_date(month, day, now) if year is None else _date_window(int(year), month, day)


def _resolve_iso_date(match: re.Match[str], now: datetime) -> _Resolved | None:
    return _date_window(int(match.group("year")), int(match.group("m")), int(match.group("d")))


def _resolve_year(match: re.Match[str], now: datetime) -> _Resolved:
    start = datetime(int(match.group("year")), 1, 1, tzinfo=timezone.utc)
    return _Resolved(start, start.replace(year=start.year + 1))


# -- the grammar -------------------------------------------------------------------------------


def _form(
    name: str, core: str, resolve: _Resolver, prefix: str = "", required: bool = False
) -> _Form:
    """A grammar row; `prefix` (in/during/on…) may, or if `required` must, precede `core`."""
    lead = "" if not prefix else rf"\b(?:{prefix})\s+" if required else rf"(?:\b(?:{prefix})\s+)?"
    return _Form(name, re.compile(lead + core, _FLAGS), re.compile(core, _FLAGS), resolve)


_DAY_WORDS: Final = (
    r"\b(?:(?:the\s+)?day\s+before\s+yesterday|yesterday|earlier\s+today|today|tonight"
    r"|this\s+(?:morning|afternoon|evening))\b"
)
# Order is the tie-break between equally long overlapping matches (earlier wins).
_FORMS: Final = (
    _form("day word", _DAY_WORDS, _resolve_day_word),
    _form("ago", _AGO_COUNT + r"\s+" + _UNIT + r"\s+ago\b", _resolve_ago),
    _form(
        "rolling",
        r"\b(?:the\s+)?(?:last|past|previous)\s+" + _COUNT + r"\s+" + _UNIT,
        _resolve_rolling,
        prefix="in|over|within|during|for",
    ),
    _form("recently", r"\b(?:recently|lately)\b", _resolve_recent),
    _form("last unit", _LAST + r"(?P<unit>week|month|year|weekend)\b", _resolve_last_unit),
    _form("this unit", r"\bthis\s+(?P<unit>week|month|year)\b", _resolve_this_unit),
    _form("last weekday", _LAST + _WEEKDAY, _resolve_last_weekday),
    _form("this weekday", r"\bthis\s+" + _WEEKDAY, _resolve_this_weekday),
    _form("on weekday", _WEEKDAY, _resolve_on_weekday, prefix="on", required=True),
    _form(
        "iso date",
        _NUMBER_START
        + r"(?P<year>(?:19|20|21)[0-9]{2})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"
        + _NUMBER_END,
        _resolve_iso_date,
        prefix="on",
    ),
    _form("month day", _MONTH + r"\s+" + _DAY + _YEAR_TAIL, _resolve_named_date, prefix="on"),
    _form(
        "day month",
        r"(?:\bthe\s+)?" + _DAY + r"(?:\s+of)?\s+" + _MONTH + _YEAR_TAIL,
        _resolve_named_date,
        prefix="on",
    ),
    _form(
        "month year",
        _MONTH + r"(?:\s+of)?(?:,\s*|\s+)" + _YEAR,
        _resolve_month_year,
        prefix="in|during",
    ),
    _form("last month", r"\blast\s+" + _MONTH, _resolve_last_month_name),
    _form("month", _MONTH, _resolve_month, prefix="in|during", required=True),
    _form(
        "year",
        r"(?:\bthe\s+year\s+(?:of\s+)?)?" + _YEAR,
        _resolve_year,
        prefix="in|during",
        required=True,
    ),
)
_COMPOSITE_RANK: Final = len(_FORMS)  # composites and events lose ties to the plain forms
_EVENT_RANK: Final = len(_FORMS) + 1


# -- scanning ----------------------------------------------------------------------------------


def _resolve(form: _Form, match: re.Match[str], now: datetime) -> _Resolved | None:
    """`form`'s window for `match`, or None when the calendar has no such time."""
    try:
        return form.resolve(match, now)
    except (ValueError, OverflowError):  # year 0 or 10000, "9999 years ago", "twenty two"
        return None


def _atoms(text: str, now: datetime) -> list[_Found]:
    """Every standalone match of every form (overlaps included)."""
    found = []
    for rank, form in enumerate(_FORMS):
        for match in form.standalone.finditer(text):
            resolved = _resolve(form, match, now)
            if resolved is not None:
                start, end, point = resolved.start, resolved.end, resolved.point
                found.append(_Found(match.start(), match.end(), rank, start, end, point))
    return found


def _operand(text: str, pos: int, now: datetime) -> tuple[int, _Resolved] | None:
    """The longest operand (a form's core) starting at `pos`: (its end, its window)."""
    best: tuple[int, _Resolved] | None = None
    for form in _FORMS:
        match = form.core.match(text, pos)
        if match is None or (best is not None and match.end() <= best[0]):
            continue
        if _POSSESSIVE.match(text, match.end()):
            continue
        resolved = _resolve(form, match, now)
        if resolved is not None:
            best = (match.end(), resolved)
    return best


def _bounded(operator: re.Match[str], text: str, now: datetime, starts: list[int]) -> _Found | None:
    """since/before/after/until/till X, or before/after EVENT."""
    op = operator.group("op").lower()
    operand = _operand(text, operator.end(), now)
    if operand is None:
        return _event(operator, text, starts) if op in ("before", "after") else None
    finish, window = operand
    bounds = {
        "since": (window.start, now),
        "before": (None, window.start),
        "after": (window.end, None),
    }.get(op, (None, window.end))
    return _Found(operator.start(), finish, _COMPOSITE_RANK, *bounds)


def _range(operator: re.Match[str], text: str, now: datetime) -> _Found | None:
    """between X and Y, from X to Y: the earlier start to the later end."""
    first = _operand(text, operator.end(), now)
    if first is None:
        return None
    joiner = _JOINERS[operator.group("op").lower()].match(text, first[0])
    second = None if joiner is None else _operand(text, joiner.end(), now)
    if second is None:
        return None
    a, b = first[1], second[1]
    start, end = min(a.start, b.start), max(a.end, b.end)
    return _Found(operator.start(), second[0], _COMPOSITE_RANK, start, end)


def _event(operator: re.Match[str], text: str, starts: list[int]) -> _Found | None:
    """before/after EVENT: the phrase up to the clause's end (module docstring)."""
    pos = operator.end()
    stop = _CLAUSE_END.search(text, pos)
    limit = len(text) if stop is None else stop.start()
    following = bisect_left(starts, pos)
    if following < len(starts):
        limit = min(limit, starts[following])
    words = list(islice(_TOKEN.finditer(text, pos, max(pos, limit)), MAX_EVENT_WORDS + 1))
    if words and words[0].group(0).lower() == "the":
        words = words[1:]
    words = words[:MAX_EVENT_WORDS]
    if not any(w.group(0).strip(_TOKEN_PUNCTUATION).lower() not in _NOT_EVENTS for w in words):
        return None
    begin, finish = words[0].start(), words[-1].end()
    direction = operator.group("op").lower()
    return _Found(
        operator.start(), finish, _EVENT_RANK, None, None, None, text[begin:finish], direction
    )


def _composites(text: str, now: datetime, starts: list[int]) -> list[_Found]:
    """Every operator expression: since/before/after/until/till/between/from."""
    found = []
    for operator in _OPERATOR.finditer(text):
        if operator.group("op").lower() in _JOINERS:
            item = _range(operator, text, now)
        else:
            item = _bounded(operator, text, now, starts)
        if item is not None:
            found.append(item)
    return found


def _select(found: list[_Found], length: int) -> list[_Found]:
    """Non-overlapping matches, longest first (then earliest, then form order), in text order."""
    taken = bytearray(length)
    chosen = []
    for item in sorted(found, key=lambda f: (f.begin - f.finish, f.begin, f.rank)):
        if taken.find(1, item.begin, item.finish) == -1:
            taken[item.begin : item.finish] = b"\x01" * (item.finish - item.begin)
            chosen.append(item)
    return sorted(chosen, key=lambda f: f.begin)


def _scan(text: str, now: datetime) -> list[_Found]:
    """The chosen matches of `text` for a UTC `now`.  O(len(text) × number of forms)."""
    atoms = _atoms(text, now)
    starts = sorted(item.begin for item in atoms)
    return _select(atoms + _composites(text, now, starts), len(text))


def _window(text: str, item: _Found) -> TimeWindow:
    span = (item.begin, item.finish)
    return TimeWindow(
        item.start, item.end, text[span[0] : span[1]], span, item.event, item.direction
    )


# -- public API --------------------------------------------------------------------------------


def find_time_windows(text: str, now: datetime) -> list[TimeWindow]:
    """Every time expression in `text`, in order, non-overlapping (the longest match wins).

    Complexity: O(len(text) × number of grammar rows); never raises.

    >>> now = datetime(2026, 3, 18, 15, 30, tzinfo=timezone.utc)  # a Wednesday
    >>> [w.expression for w in find_time_windows("What did Mel do after the race in 2025?", now)]
    ['after the race', 'in 2025']
    >>> find_time_windows("What did Mel do after the race in 2025?", now)[0].event
    'race'
    >>> window = find_time_windows("since last Monday", now)[0]
    >>> window.start.isoformat(), window.end.isoformat()
    ('2026-03-16T00:00:00+00:00', '2026-03-18T15:30:00+00:00')
    >>> find_time_windows("May I ask about port 2023?", now)
    []
    """
    return [_window(text, item) for item in _scan(text, _utc(now))]


def query_window(text: str, now: datetime) -> TimeWindow | None:
    """The one window a question narrows to: the intersection of its date windows.

    None when there is no window or the date windows do not intersect (an
    empty window counts as none).  Event windows are not intersected: the
    first is returned only when there is no date window.  Several date
    windows give a window whose span runs from the first to the last of them.
    Complexity: that of `find_time_windows`.

    >>> now = datetime(2026, 3, 18, 15, 30, tzinfo=timezone.utc)
    >>> window = query_window("What did I read in 2026 before March 5?", now)
    >>> window.start.date(), window.end.date(), window.expression
    (datetime.date(2026, 1, 1), datetime.date(2026, 3, 5), 'in 2026 before March 5')
    >>> query_window("in 2024 or in 2025", now) is None
    True
    """
    windows = find_time_windows(text, now)
    dates = [w for w in windows if w.event is None]
    if not dates:
        return next(iter(windows), None)
    starts = [w.start for w in dates if w.start is not None]
    ends = [w.end for w in dates if w.end is not None]
    start, end = max(starts, default=None), min(ends, default=None)
    if start is not None and end is not None and start >= end:
        return None
    if len(dates) == 1:
        return dates[0]
    span = (dates[0].span[0], dates[-1].span[1])
    return TimeWindow(start, end, text[span[0] : span[1]], span)


def asks_for_current_state(text: str) -> bool:
    """Whether `text` asks about the present state ("what is my current address").

    A present cue ("current", "now", "still", "latest", "these days", …, on
    word boundaries: "known" and "snow" are not "now") and no past cue ("used
    to", "before", "previously", "originally", "first", "the old", …).  O(len(text)).

    >>> asks_for_current_state("Where does Caroline live now?")
    True
    >>> asks_for_current_state("What was the old address before the current one?")
    False
    >>> asks_for_current_state("Which known issues block the release?")
    False
    """
    return _PRESENT_CUES.search(text) is not None and _PAST_CUES.search(text) is None


def asks_about_the_past(text: str) -> bool:
    """Whether `text` points at an earlier state ("used to", "before", "originally",
    "the old …").  O(len(text)).

    >>> asks_about_the_past("Which database did staging use before?")
    True
    >>> asks_about_the_past("Which database does staging use?")
    False
    """
    return _PAST_CUES.search(text) is not None


def parse_as_of(value: str, now: datetime, field_name: str = "as_of") -> datetime:
    """An ``--as-of`` argument as a UTC-aware moment.

    Accepted: an ISO 8601 timestamp (a trailing Z or an offset; naive is UTC),
    an ISO date (the end of that day, so the day is included), "now", or
    exactly one date expression of the grammar (its window's end; for
    "N units ago" the moment itself).  Anything else raises
    `ValidationError(field_name, …)` listing the accepted forms.  O(len(value)).

    >>> now = datetime(2026, 3, 18, 15, 30, tzinfo=timezone.utc)
    >>> parse_as_of("2024-03-05", now).isoformat()
    '2024-03-06T00:00:00+00:00'
    >>> parse_as_of("2024-03-05T14:30:00+02:00", now).isoformat()
    '2024-03-05T12:30:00+00:00'
    >>> parse_as_of("last week", now).isoformat()
    '2026-03-16T00:00:00+00:00'
    >>> parse_as_of("3 days ago", now).isoformat()
    '2026-03-15T15:30:00+00:00'
    >>> parse_as_of("whenever", now)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphonomous.model.ValidationError: as_of: 'whenever' is not a time: expected an ISO ...
    """
    text = value.strip() if isinstance(value, str) else ""
    moment = _iso_moment(text, field_name)
    if moment is None:
        moment = _relative_moment(text, _utc(now))
    if moment is None:
        raise ValidationError(field_name, f"{value!r} is not a time: {AS_OF_FORMS}")
    return moment


def _iso_moment(text: str, field_name: str) -> datetime | None:
    """An ISO 8601 date or timestamp as UTC; None if `text` does not look like one."""
    match = _ISO.fullmatch(text)
    if match is None:
        return None
    try:
        return _iso_fields(match)
    except (ValueError, OverflowError) as exc:  # 2024-02-30, 25:00, 9999-12-31 + 1 day
        message = f"{text!r} is not a valid date or time: {AS_OF_FORMS}"
        raise ValidationError(field_name, message) from exc


def _iso_fields(match: re.Match[str]) -> datetime:
    year, month, day = (int(match.group(key)) for key in "ymd")
    if match.group("H") is None:
        return datetime(year, month, day, tzinfo=timezone.utc) + timedelta(days=1)
    hour, minute, second = (int(match.group(key) or 0) for key in "HMS")
    micro = int((match.group("f") or "").ljust(6, "0"))
    moment = datetime(year, month, day, hour, minute, second, micro, _zone(match.group("zone")))
    return moment.astimezone(timezone.utc)


def _zone(text: str | None) -> timezone:
    """A UTC offset from "Z", "+02", "+0200" or "-05:30"; None is UTC."""
    if text is None or text.upper() == "Z":
        return timezone.utc
    digits = text[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or "0"))
    return timezone(-offset if text[0] == "-" else offset)


def _relative_moment(text: str, now: datetime) -> datetime | None:
    """The moment one whole-`text` date expression names, or None."""
    if text.lower() == "now":
        return now
    found = _scan(text, now)
    if len(found) != 1 or (found[0].begin, found[0].finish) != (0, len(text)):
        return None
    item = found[0]
    if item.event is not None:
        return None
    return item.point if item.point is not None else item.end
