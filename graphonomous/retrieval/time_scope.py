"""Time in retrieval: what holds when, what a question's dates narrow, which is current.

Rules of this module (SPEC "Time in retrieval"); pure functions of nodes, the
query and the graph clock's `now` (never the system clock):

- **Validity.**  A node holds over [valid_from, valid_to) (valid_from: when it was
  stated or its event happened; valid_to: set by the statement that superseded
  it, or by the caller).  By default retrieval answers about *now*: superseded
  nodes and nodes whose validity ended are left out.  ``as_of`` answers about a
  moment instead: exactly the nodes that held then (the superseded fact before
  the change, not its successor).  ``include_superseded`` returns everything.
- **Dates in the question** (`time_expressions`): a window ("last week", "in
  March 2024", "after the charity race", resolved against the clock) orders the
  candidates — those stated within it (`admitted`: widened by its own length on
  each side, since statements report events after and plan them before) rank
  before the others, which keep their order after them.  A question naming a
  time asks about that time; when no candidate falls inside, the window says
  nothing about this memory and changes nothing.
- **Recall by a time cue.**  Fading is soft: a question naming a bounded time
  brings back the faded statements made then (the `admitted` band) that share a
  word with it, re-anchored as reinforced, audited (``recall``) and reported in
  ``stats.time.recalled`` — as a person recalls a faded episode when asked about
  its day (`time_order.recall_faded`).  Only nodes that faded by decay; never ones
  forgotten on request or over budget.
- **Newest of one claim.**  Two state statements (semantic, procedural; not chunks
  of ingested files) among the best candidates that no write linked, and that
  either the update rule pairs (`claims.detect_update`: made within
  `CONCURRENT_WITHIN_S` of each other, by another agent's batch, an older version)
  or the question shows to be rival answers to it (`claims.rival_answers`: the same
  named subject, each answering what is asked, at least `CONCURRENT_WITHIN_S`
  apart): the later one takes the earlier's place unless the question asks about
  the past; the earlier is flagged ``outdated`` (update rule) or
  ``possibly_outdated`` (rival answers), or both ``contradicted`` when the update
  rule pairs concurrent statements — shown, so the agent can judge.  A statement a
  write already linked as the update of its subject (it ``supersedes`` another) has
  settled that subject: rival answers beside it are still ordered newest first but not
  flagged ``possibly_outdated`` (the write compared them and found no update).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from ..model import CONCURRENT_WITHIN_S, Node, ValidationError, parse_time
from .claims import anchors, detect_update, held_terms, question, rival_answers
from .provenance import INGESTED_KINDS
from .time_expressions import TimeWindow, asks_about_the_past, parse_as_of, query_window

# Node types whose statements describe a state that a later statement can replace.
STATE_TYPES: Final = ("semantic", "procedural")
# How many of the best candidates the newest-claim rule compares, as a multiple of the
# limit: pairs beyond that never meet in the results.
CLAIM_POOL_FACTOR: Final = 2


@dataclass(frozen=True)
class TimeScope:
    """When a retrieval answers about, and what its question's dates narrow."""

    now: datetime
    as_of: datetime | None = None
    include_superseded: bool = False
    window: TimeWindow | None = None
    past: bool = False

    def admits(self, node: Node) -> bool:
        """Whether `node` holds at the moment this retrieval answers about.  O(1)."""
        if self.include_superseded:
            return True
        if self.as_of is not None:
            return holds_at(node, self.as_of)
        return node.superseded_by is None and (
            node.valid_to is None or parse_time(node.valid_to) > self.now
        )


def holds_at(node: Node, moment: datetime) -> bool:
    """valid_from <= moment < valid_to (open ends hold).  O(1)."""
    start = node.valid_from or node.created_at
    if start and parse_time(start) > moment:
        return False
    return node.valid_to is None or moment < parse_time(node.valid_to)


def time_scope(
    query: str, now: datetime, as_of: str | None = None, include_superseded: bool = False
) -> TimeScope:
    """The scope of one retrieval.  Raises ValidationError naming ``as_of`` /
    ``include_superseded``.  O(len(query))."""
    if not isinstance(include_superseded, bool):
        raise ValidationError("include_superseded", "must be true or false")
    moment = None
    if as_of is not None:
        if not isinstance(as_of, str):
            raise ValidationError("as_of", "must be a string (ISO 8601 or a date expression)")
        moment = parse_as_of(as_of, now)
    return TimeScope(
        now=now,
        as_of=moment,
        include_superseded=include_superseded,
        window=query_window(query, now),
        past=asks_about_the_past(query),
    )


def in_window(node: Node, start: datetime | None, end: datetime | None) -> bool:
    """Whether the node's valid_from falls in [start, end).  O(1)."""
    moment = parse_time(node.valid_from or node.created_at)
    return (start is None or moment >= start) and (end is None or moment < end)


def admitted(
    start: datetime | None, end: datetime | None
) -> tuple[datetime | None, datetime | None]:
    """The statement times a question's window admits: a bounded window widened by its
    own length on each side.  Reason: a statement about a time is made around it —
    reports after the event ("I had dinner with her on Wednesday", told on Friday),
    plans before it ("in September I will visit…") — and `valid_from` dates the
    statement, not the event.  Open windows (since, before, after) stay as they are.

    >>> from datetime import datetime, timezone
    >>> day = datetime(2023, 5, 3, tzinfo=timezone.utc)
    >>> [m.day for m in admitted(day, day.replace(day=4))]
    [2, 5]
    """
    if start is None or end is None:
        return start, end
    span = end - start
    return start - span, end + span


def window_order(
    scores: dict[str, float], nodes: dict[str, Node], start: datetime | None, end: datetime | None
) -> int:
    """Rank the candidates stated within the window (`admitted` bounds, given by the
    caller) before the others (each group keeps its order): the other scores are scaled
    below the lowest admitted score.  Returns how many candidates were admitted (0:
    nothing changed).  O(n)."""
    inside = {i for i, node in nodes.items() if i in scores and in_window(node, start, end)}
    outside = [i for i in scores if i not in inside]
    if not inside or not outside:
        return len(inside)
    floor = min(scores[i] for i in inside)
    top = max(scores[i] for i in outside)
    if top >= floor and top > 0.0:
        factor = floor / top * OUTSIDE_MARGIN
        for node_id in outside:
            scores[node_id] *= factor
    return len(inside)


# Below the lowest in-window score by this factor, so ties cannot interleave the groups.
OUTSIDE_MARGIN: Final = 0.999


def newest_claims_first(
    ranked: list[str],
    scores: dict[str, float],
    nodes: dict[str, Node],
    query: str = "",
    settled: frozenset[str] = frozenset(),
) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The newest-claim rule over `ranked` ids (best first; module docstring).

    Returns (the (earlier, later) pairs reordered, {id: flag} — ``outdated`` for the
    earlier of a pair the update rule links, ``contradicted`` for both of a concurrent
    one, ``possibly_outdated`` for the earlier of two rival answers to `query`
    (`claims.rival_answers`)).  Scores of a reordered pair are swapped, so the later
    statement takes the earlier's place.  O(len(ranked)²) rule checks.
    """
    moved: list[tuple[str, str]] = []
    flags: dict[str, str] = {}
    states = [i for i in ranked if i in nodes and _stated(nodes[i])]
    asked = question(query)
    held = {i: held_terms(asked, nodes[i].content) for i in states}
    anchor = anchors(asked, list(held.values()))
    for position, first in enumerate(states):
        for second in states[position + 1 :]:
            a, b = nodes[first], nodes[second]
            if a.agent_id != b.agent_id or _stamp(a) == _stamp(b):
                continue
            earlier, later = (a, b) if _stamp(a) <= _stamp(b) else (b, a)
            gap = (_moment(later) - _moment(earlier)).total_seconds()
            if detect_update(earlier.content, later.content) is not None:
                concurrent = gap < CONCURRENT_WITHIN_S
                flag = "contradicted" if concurrent else "outdated"
            elif gap >= CONCURRENT_WITHIN_S and rival_answers(
                asked,
                anchor,
                (earlier.content, held[earlier.id]),
                (later.content, held[later.id]),
            ):
                concurrent, flag = False, "possibly_outdated"
            else:
                continue
            if scores[earlier.id] > scores[later.id]:
                scores[earlier.id], scores[later.id] = scores[later.id], scores[earlier.id]
                moved.append((earlier.id, later.id))
            if concurrent:
                flags[earlier.id] = flags[later.id] = flag
            elif flag != "possibly_outdated" or not {earlier.id, later.id} & settled:
                flags.setdefault(earlier.id, flag)
    return moved, flags


def _moment(node: Node) -> datetime:
    return parse_time(node.valid_from or node.created_at)


def _stated(node: Node) -> bool:
    """A state statement someone made: not a chunk of an ingested file, whose file is
    its truth (two files may well say different things)."""
    return node.node_type in STATE_TYPES and node.metadata.get("kind") not in INGESTED_KINDS


def _stamp(node: Node) -> tuple[str, str]:
    return (node.valid_from or node.created_at, node.created_at)
