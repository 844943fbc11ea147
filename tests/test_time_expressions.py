"""The relative-time grammar (graphonomous/retrieval/time_expressions.py), row by row.

Every expected window is written out by hand for a fixed clock: NOW is
Wednesday 2026-03-18 15:30 UTC, JANUARY is Saturday 2026-01-10 09:00 UTC (a
month-without-year there falls in the previous year).
"""

from __future__ import annotations

import doctest
import itertools
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphonomous.model import ValidationError
from graphonomous.retrieval import time_expressions
from graphonomous.retrieval.time_expressions import (
    TimeWindow,
    asks_for_current_state,
    find_time_windows,
    parse_as_of,
    query_window,
)

NOW = datetime(2026, 3, 18, 15, 30, tzinfo=timezone.utc)  # a Wednesday
JANUARY = datetime(2026, 1, 10, 9, 0, tzinfo=timezone.utc)  # a Saturday
N = "2026-03-18T15:30"  # NOW, as a table entry


def at(value: str | None) -> datetime | None:
    """A table entry ("2026-03-18" or "2026-03-18T15:30") as a UTC datetime."""
    if value is None:
        return None
    return datetime.fromisoformat(value).replace(tzinfo=timezone.utc)


# (question, the expression found, start, end) at NOW; each question holds one expression.
CASES: list[tuple[str, str, str | None, str | None]] = [
    # today and its parts
    ("What did I do today?", "today", "2026-03-18", "2026-03-19"),
    ("What is today's plan?", "today", "2026-03-18", "2026-03-19"),
    ("Where do we eat tonight?", "tonight", "2026-03-18", "2026-03-19"),
    ("What did Bo say this morning?", "this morning", "2026-03-18", "2026-03-19"),
    ("the call this afternoon", "this afternoon", "2026-03-18", "2026-03-19"),
    ("THIS EVENING's show", "THIS EVENING", "2026-03-18", "2026-03-19"),
    ("the file I saved earlier today", "earlier today", "2026-03-18", "2026-03-19"),
    ("What did we decide yesterday?", "yesterday", "2026-03-17", "2026-03-18"),
    ("and the day before yesterday?", "the day before yesterday", "2026-03-16", "2026-03-17"),
    ("Day before yesterday, I ran", "Day before yesterday", "2026-03-16", "2026-03-17"),
    # N units ago: the calendar unit that holds the moment
    ("the bug from 3 days ago", "3 days ago", "2026-03-15", "2026-03-16"),
    ("one day ago", "one day ago", "2026-03-17", "2026-03-18"),
    ("what happened a week ago", "a week ago", "2026-03-09", "2026-03-16"),
    ("two weeks ago we shipped", "two weeks ago", "2026-03-02", "2026-03-09"),
    ("a month ago", "a month ago", "2026-02-01", "2026-03-01"),
    ("a couple of months ago", "a couple of months ago", "2026-01-01", "2026-02-01"),
    ("a few years ago", "a few years ago", "2023-01-01", "2024-01-01"),
    ("12 months ago", "12 months ago", "2025-03-01", "2025-04-01"),
    ("an hour ago", "an hour ago", "2026-03-18T14:00", "2026-03-18T15:00"),
    ("3 hrs ago", "3 hrs ago", "2026-03-18T12:00", "2026-03-18T13:00"),
    ("5 minutes ago", "5 minutes ago", "2026-03-18T15:25", "2026-03-18T15:26"),
    ("couple days ago", "couple days ago", "2026-03-16", "2026-03-17"),
    # the previous calendar unit
    ("What did we fix last week?", "last week", "2026-03-09", "2026-03-16"),
    ("in the past week", "past week", "2026-03-09", "2026-03-16"),
    ("the previous month", "previous month", "2026-02-01", "2026-03-01"),
    ("last year's budget", "last year", "2025-01-01", "2026-01-01"),
    ("this past month", "this past month", "2026-02-01", "2026-03-01"),
    ("What did we do last weekend?", "last weekend", "2026-03-14", "2026-03-16"),
    ("this past weekend", "this past weekend", "2026-03-14", "2026-03-16"),
    # the current unit, up to now
    ("What did I read this week?", "this week", "2026-03-16", N),
    ("this month", "this month", "2026-03-01", N),
    ("so far this year", "this year", "2026-01-01", N),
    # rolling windows
    ("the last 3 days", "the last 3 days", "2026-03-15T15:30", N),
    ("What happened in the last 10 days?", "in the last 10 days", "2026-03-08T15:30", N),
    ("the past two weeks", "the past two weeks", "2026-03-04T15:30", N),
    ("over the past few days", "over the past few days", "2026-03-15T15:30", N),
    ("last 6 months", "last 6 months", "2025-09-18T15:30", N),
    ("within the last 24 hours", "within the last 24 hours", "2026-03-17T15:30", N),
    ("last couple of years", "last couple of years", "2024-03-18T15:30", N),
    ("what have I been reading lately", "lately", "2026-03-11T15:30", N),
    ("Recently, what broke?", "Recently", "2026-03-11T15:30", N),
    # weekdays
    ("last Monday", "last Monday", "2026-03-16", "2026-03-17"),
    ("last Wednesday", "last Wednesday", "2026-03-11", "2026-03-12"),
    ("last Thursday", "last Thursday", "2026-03-12", "2026-03-13"),
    ("this past Sunday", "this past Sunday", "2026-03-15", "2026-03-16"),
    ("What did I do on Friday?", "on Friday", "2026-03-13", "2026-03-14"),
    ("on Wednesday", "on Wednesday", "2026-03-18", "2026-03-19"),
    ("on tuesday", "on tuesday", "2026-03-17", "2026-03-18"),
    ("this Monday", "this Monday", "2026-03-16", "2026-03-17"),
    ("this Friday", "this Friday", "2026-03-20", "2026-03-21"),
    # months
    ("What did we do in March?", "in March", "2026-03-01", "2026-04-01"),
    ("in April", "in April", "2025-04-01", "2025-05-01"),
    ("during February", "during February", "2026-02-01", "2026-03-01"),
    ("in May", "in May", "2025-05-01", "2025-06-01"),
    ("in march", "in march", "2026-03-01", "2026-04-01"),
    ("in August", "in August", "2025-08-01", "2025-09-01"),
    ("in Dec.", "in Dec", "2025-12-01", "2026-01-01"),
    ("in March 2024", "in March 2024", "2024-03-01", "2024-04-01"),
    ("March 2024 invoices", "March 2024", "2024-03-01", "2024-04-01"),
    ("May 2024", "May 2024", "2024-05-01", "2024-06-01"),
    ("during May of 2023", "during May of 2023", "2023-05-01", "2023-06-01"),
    ("Sept, 2019", "Sept, 2019", "2019-09-01", "2019-10-01"),
    ("last May", "last May", "2025-05-01", "2025-06-01"),
    ("last March", "last March", "2025-03-01", "2025-04-01"),
    ("last February", "last February", "2026-02-01", "2026-03-01"),
    # days
    ("on 2024-03-05", "on 2024-03-05", "2024-03-05", "2024-03-06"),
    ("2024-03-05", "2024-03-05", "2024-03-05", "2024-03-06"),
    ("March 5", "March 5", "2026-03-05", "2026-03-06"),
    ("March 5th", "March 5th", "2026-03-05", "2026-03-06"),
    ("on March 18", "on March 18", "2026-03-18", "2026-03-19"),
    ("March 20", "March 20", "2025-03-20", "2025-03-21"),
    ("March 5, 2024", "March 5, 2024", "2024-03-05", "2024-03-06"),
    ("5 March 2024", "5 March 2024", "2024-03-05", "2024-03-06"),
    ("5 May", "5 May", "2025-05-05", "2025-05-06"),
    ("May 5", "May 5", "2025-05-05", "2025-05-06"),
    ("on the 5th of March", "on the 5th of March", "2026-03-05", "2026-03-06"),
    ("the 1st of June, 2020", "the 1st of June, 2020", "2020-06-01", "2020-06-02"),
    ("Dec. 24", "Dec. 24", "2025-12-24", "2025-12-25"),
    ("Feb 29", "Feb 29", "2024-02-29", "2024-03-01"),
    # years
    ("What changed in 2023?", "in 2023", "2023-01-01", "2024-01-01"),
    ("during 2023", "during 2023", "2023-01-01", "2024-01-01"),
    ("in the year 2023", "in the year 2023", "2023-01-01", "2024-01-01"),
    ("in 1999, we", "in 1999", "1999-01-01", "2000-01-01"),
    # operators
    ("What changed since Monday?", "since Monday", "2026-03-16", N),
    ("since last week", "since last week", "2026-03-09", N),
    ("since March", "since March", "2026-03-01", N),
    ("since 2024-03-05", "since 2024-03-05", "2024-03-05", N),
    ("since the year 2020", "since the year 2020", "2020-01-01", N),
    ("since 3 days ago", "since 3 days ago", "2026-03-15", N),
    ("before 2024", "before 2024", None, "2024-01-01"),
    ("before last week", "before last week", None, "2026-03-09"),
    ("before the 5th of March", "before the 5th of March", None, "2026-03-05"),
    ("after March 5, 2024", "after March 5, 2024", "2024-03-06", None),
    ("after May", "after May", "2025-06-01", None),
    ("until last week", "until last week", None, "2026-03-16"),
    ("till Friday", "till Friday", None, "2026-03-14"),
    ("until 2020", "until 2020", None, "2021-01-01"),
    ("between March 1 and March 5", "between March 1 and March 5", "2026-03-01", "2026-03-06"),
    ("between 2022 and 2020", "between 2022 and 2020", "2020-01-01", "2023-01-01"),
    ("from January to February", "from January to February", "2026-01-01", "2026-03-01"),
    ("from 2020 through 2022", "from 2020 through 2022", "2020-01-01", "2023-01-01"),
]

# The month-without-year rule seen from January: a month that has not started is last year's.
JANUARY_CASES: list[tuple[str, str, str | None, str | None]] = [
    ("in March", "in March", "2025-03-01", "2025-04-01"),
    ("in January", "in January", "2026-01-01", "2026-02-01"),
    ("during December", "during December", "2025-12-01", "2026-01-01"),
    ("last January", "last January", "2025-01-01", "2025-02-01"),
    ("last December", "last December", "2025-12-01", "2026-01-01"),
    ("January 10", "January 10", "2026-01-10", "2026-01-11"),
    ("January 11", "January 11", "2025-01-11", "2025-01-12"),
    ("last week", "last week", "2025-12-29", "2026-01-05"),
    ("this week", "this week", "2026-01-05", "2026-01-10T09:00"),
    ("last month", "last month", "2025-12-01", "2026-01-01"),
    ("2 months ago", "2 months ago", "2025-11-01", "2025-12-01"),
    ("last weekend", "last weekend", "2026-01-03", "2026-01-05"),
    ("on Saturday", "on Saturday", "2026-01-10", "2026-01-11"),
    ("last Saturday", "last Saturday", "2026-01-03", "2026-01-04"),
]

# (question, expression, event, direction)
EVENTS: list[tuple[str, str, str, str]] = [
    (
        "What did Melanie do after the charity race?",
        "after the charity race",
        "charity race",
        "after",
    ),
    ("What did I read before the trip, and why?", "before the trip", "trip", "before"),
    (
        "after Caroline's talk at the school.",
        "after Caroline's talk at the school",
        "Caroline's talk at the school",
        "after",
    ),
    (
        "before I moved to Berlin when it rained",
        "before I moved to Berlin",
        "I moved to Berlin",
        "before",
    ),
    (
        "after one two three four five six seven eight nine ten",
        "after one two three four five six seven eight",
        "one two three four five six seven eight",
        "after",
    ),
    (
        "after running the v1.2 tests",
        "after running the v1.2 tests",
        "running the v1.2 tests",
        "after",
    ),
]

NO_WINDOW = [
    "May I ask something?",
    "the port is 2023",
    "what's on the march agenda",
    "how to march forward",
    "known issues",
    "snowfall",
    "version 2024.1",
    "we now use X",
    "an august institution",
    "this may take a while",
    "3/5/2024",
    "the date is 05/03/2024",
    "1000 rows in 2024-05",
    "in 2200",
    "in 1899",
    "April 31",
    "on 2024-02-30",
    "twenty two days ago",
    "9999 years ago",
    "Sunday school",
    "what happened after that?",
    "after all, it works",
    "before it",
    "before?",
    "",
]


def windows_at(question: str, now: datetime) -> list[tuple[str, datetime | None, datetime | None]]:
    return [(w.expression, w.start, w.end) for w in find_time_windows(question, now)]


@pytest.mark.parametrize(("question", "expression", "start", "end"), CASES)
def test_every_grammar_row_at_a_fixed_now(
    question: str, expression: str, start: str | None, end: str | None
) -> None:
    assert windows_at(question, NOW) == [(expression, at(start), at(end))]


@pytest.mark.parametrize(("question", "expression", "start", "end"), JANUARY_CASES)
def test_a_month_without_a_year_seen_from_january(
    question: str, expression: str, start: str | None, end: str | None
) -> None:
    assert windows_at(question, JANUARY) == [(expression, at(start), at(end))]


@pytest.mark.parametrize(("question", "expression", "event", "direction"), EVENTS)
def test_before_or_after_an_event(
    question: str, expression: str, event: str, direction: str
) -> None:
    windows = find_time_windows(question, NOW)
    assert len(windows) == 1
    window = windows[0]
    assert (window.expression, window.event, window.direction) == (expression, event, direction)
    assert (window.start, window.end) == (None, None)
    assert question[window.span[0] : window.span[1]] == expression


@pytest.mark.parametrize("question", NO_WINDOW)
def test_text_outside_the_grammar_gives_no_window(question: str) -> None:
    assert find_time_windows(question, NOW) == []
    assert query_window(question, NOW) is None


def test_the_table_is_big() -> None:
    assert len(CASES) + len(JANUARY_CASES) >= 60


def test_several_expressions_in_order_without_overlap() -> None:
    question = "What did Mel do after the race last week, and since March 5 in 2026?"
    windows = find_time_windows(question, NOW)
    assert [w.expression for w in windows] == [
        "after the race",
        "last week",
        "since March 5",
        "in 2026",
    ]
    assert windows[0].event == "race"
    spans = [w.span for w in windows]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    assert all(question[s:e] == w.expression for w, (s, e) in zip(windows, spans, strict=True))


def test_the_longest_match_wins() -> None:
    # "the day before yesterday" holds "before yesterday" and "yesterday".
    assert windows_at("the day before yesterday", NOW) == [
        ("the day before yesterday", at("2026-03-16"), at("2026-03-17"))
    ]
    # "since last Monday" holds "last Monday".
    assert [w.expression for w in find_time_windows("since last Monday", NOW)] == [
        "since last Monday"
    ]


def test_a_possessive_date_is_not_an_operand() -> None:
    # "after yesterday's meeting" is about a meeting of yesterday, not about today onwards.
    assert windows_at("after yesterday's meeting", NOW) == [
        ("yesterday", at("2026-03-17"), at("2026-03-18"))
    ]


def test_weekdays_when_today_is_that_weekday() -> None:
    monday = datetime(2026, 3, 16, 8, 0, tzinfo=timezone.utc)
    assert windows_at("on Monday", monday) == [("on Monday", at("2026-03-16"), at("2026-03-17"))]
    assert windows_at("last Monday", monday) == [
        ("last Monday", at("2026-03-09"), at("2026-03-10"))
    ]
    assert windows_at("this Monday", monday) == [
        ("this Monday", at("2026-03-16"), at("2026-03-17"))
    ]


def test_last_weekend_seen_from_the_weekend() -> None:
    sunday = datetime(2026, 3, 22, 12, 0, tzinfo=timezone.utc)
    assert windows_at("last weekend", sunday) == [
        ("last weekend", at("2026-03-14"), at("2026-03-16"))
    ]


def test_a_month_end_moves_to_the_last_day_of_a_shorter_month() -> None:
    march_31 = datetime(2026, 3, 31, 10, 0, tzinfo=timezone.utc)
    assert windows_at("a month ago", march_31) == [
        ("a month ago", at("2026-02-01"), at("2026-03-01"))
    ]
    # Without a count "the last month" is the calendar month, not a rolling one.
    assert windows_at("the last month", march_31) == [
        ("last month", at("2026-02-01"), at("2026-03-01"))
    ]
    assert windows_at("the last 1 month", march_31) == [
        ("the last 1 month", at("2026-02-28T10:00"), at("2026-03-31T10:00"))
    ]


def test_a_naive_now_is_utc_and_an_aware_now_is_converted() -> None:
    naive = datetime(2026, 3, 18, 15, 30)
    assert find_time_windows("yesterday", naive) == find_time_windows("yesterday", NOW)
    # 01:00 on March 19 at +02:00 is still March 18 in UTC.
    plus_two = datetime(2026, 3, 19, 1, 0, tzinfo=timezone(timedelta(hours=2)))
    window = find_time_windows("today", plus_two)[0]
    assert (window.start, window.end) == (at("2026-03-18"), at("2026-03-19"))
    assert window.start is not None and window.start.tzinfo is timezone.utc


def test_query_window_intersects_the_date_windows() -> None:
    window = query_window("What did I read in 2026 before March 5?", NOW)
    assert window == TimeWindow(
        at("2026-01-01"), at("2026-03-05"), "in 2026 before March 5", (16, 38)
    )
    assert query_window("this month since Monday", NOW) == TimeWindow(
        at("2026-03-16"), NOW, "this month since Monday", (0, 23)
    )
    single = query_window("What did I do last week?", NOW)
    assert single is not None and single.expression == "last week"


def test_query_window_is_none_when_the_windows_do_not_intersect() -> None:
    assert query_window("in 2024 or in 2025", NOW) is None
    assert query_window("since this Friday", NOW) is None  # an empty window: Friday is ahead
    assert query_window("nothing about time", NOW) is None


def test_query_window_returns_an_event_only_without_a_date_window() -> None:
    event = query_window("after the charity race, before the wedding", NOW)
    assert event is not None and (event.event, event.direction) == ("charity race", "after")
    dated = query_window("after the charity race in 2025", NOW)
    assert dated is not None and dated.event is None and dated.expression == "in 2025"


CURRENT = [
    "Where does Caroline live now?",
    "What is my current address?",
    "Which editor do I currently use?",
    "What are you working on right now?",
    "What is the team doing at the moment?",
    "What does she eat these days?",
    "What's the latest version?",
    "What is the most recent release?",
    "Do I still run on Tuesdays?",
    "Does he play chess anymore?",
    "What's today's plan?",
    "What do people use nowadays?",
    "As of now, who leads the team?",
    "we now use X",
    "NOW what?",
    "Which tools do I use to deploy these days?",
]
NOT_CURRENT = [
    "What is known about the pump?",
    "How much snowfall was there?",
    "Nowhere to be found",
    "What was the old address?",
    "Where did she live before she moved? And now?",
    "What editor did I use to prefer, and what is current?",
    "What did I previously use? What's the latest?",
    "What was the original plan, originally, and now?",
    "What tools did Bo use to prefer, and which are current?",
    "What was the first car I bought, and which do I still have?",
    "What did Melanie do after the charity race?",
    "",
]


@pytest.mark.parametrize("question", CURRENT)
def test_current_state_questions(question: str) -> None:
    assert asks_for_current_state(question)


@pytest.mark.parametrize("question", NOT_CURRENT)
def test_questions_not_about_the_current_state(question: str) -> None:
    assert not asks_for_current_state(question)


AS_OF_GOOD = [
    ("2024-03-05", "2024-03-06T00:00"),  # a bare date includes its day
    ("2024-03-05T10:00:00Z", "2024-03-05T10:00"),
    ("2024-03-05T10:00", "2024-03-05T10:00"),  # naive is UTC
    ("2024-03-05 10:00:00.250+02:00", "2024-03-05T08:00:00.250"),
    ("2024-03-05T10:00-0530", "2024-03-05T15:30"),
    ("2024-03-05t10:00z", "2024-03-05T10:00"),
    ("  yesterday ", "2026-03-18"),
    ("today", "2026-03-19"),
    ("last week", "2026-03-16"),
    ("3 days ago", "2026-03-15T15:30"),  # "ago": the moment itself
    ("2 weeks ago", "2026-03-04T15:30"),
    ("in March 2024", "2024-04-01"),
    ("March 5, 2024", "2024-03-06"),
    ("before March", "2026-03-01"),
    ("until last week", "2026-03-16"),
    ("since Monday", N),
    ("this month", N),
    ("now", N),
    ("Now", N),
]
AS_OF_BAD = [
    "",
    "   ",
    "whenever",
    "tomorrow",
    "next week",
    "2024-02-30",
    "2024-13-01",
    "2024-03-05T25:00",
    "2024-03-05T10:00+24:00",
    "9999-12-31",
    "2024/03/05",
    "3/5/2024",
    "20240305",
    "port 2023",
    "2023",  # a bare year is no expression of the grammar
    "after March",  # no end
    "after the race",  # an event, not a time
    "last week and yesterday",  # two expressions
    "yesterday please",
]


@pytest.mark.parametrize(("value", "expected"), AS_OF_GOOD)
def test_parse_as_of_accepts(value: str, expected: str) -> None:
    moment = parse_as_of(value, NOW)
    assert moment == at(expected)
    assert moment.utcoffset() == timedelta(0)


@pytest.mark.parametrize("value", AS_OF_BAD)
def test_parse_as_of_rejects_with_the_accepted_forms(value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_as_of(value, NOW)
    assert caught.value.field == "as_of"
    assert "ISO 8601 date" in caught.value.message and "3 days ago" in caught.value.message


def test_parse_as_of_names_the_field_it_was_given() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_as_of("soonish", NOW, field_name="until")
    assert caught.value.field == "until"


GRAMMAR_TEXT = (
    "last this past previous week weekend month year day days ago a an few couple of the in on "
    "during since before after until till between from to and through March may May Monday "
    "friday 2024 2023 1899 5th 31 3 12 two twenty 2024-03-05 2024-02-30 Dec. yesterday today "
    "tonight recently now still used race , ? . 's"
)
GRAMMAR_WORDS = GRAMMAR_TEXT.split()
ANY_NOW = st.one_of(
    st.datetimes(),  # naive: taken as UTC, anywhere in datetime's range
    st.datetimes(
        min_value=datetime(1901, 1, 1),
        max_value=datetime(2199, 1, 1),
        timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-7))]),
    ),
)
ANY_TEXT = st.one_of(st.text(), st.lists(st.sampled_from(GRAMMAR_WORDS)).map(" ".join))


@given(ANY_TEXT, ANY_NOW)
@settings(max_examples=400, deadline=None)
def test_any_text_gives_deterministic_spans_inside_it_without_overlap(
    text: str, now: datetime
) -> None:
    windows = find_time_windows(text, now)
    assert windows == find_time_windows(text, now)
    previous_end = 0
    for window in windows:
        begin, end = window.span
        assert previous_end <= begin < end <= len(text)
        assert window.expression == text[begin:end]
        for bound in (window.start, window.end):
            assert bound is None or bound.utcoffset() == timedelta(0)
        if window.event is not None:
            assert window.direction in ("before", "after") and window.start is window.end is None
        previous_end = end
    assert query_window(text, now) == query_window(text, now)
    asks_for_current_state(text)
    try:
        parse_as_of(text, now)
    except ValidationError as exc:
        assert exc.field == "as_of"


def test_the_module_doctests_pass() -> None:
    result = doctest.testmod(time_expressions)
    assert result.attempted >= 10
    assert result.failed == 0
