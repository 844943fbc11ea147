"""The state one retrieval carries from stage to stage: the scored entries and the report.

Rules of this file: `Run` is created once per `retrieve_context` call and handed to
every stage; a stage reads ``run.settings`` and ``run.plan``, scores ``run.entries``
and reports in ``run.stats``, ``run.mechanisms`` and ``run.timings``.  No stage
keeps state of its own between calls.  An `Entry`'s ``own`` is its stage-1 evidence
(later stages pass support with it); its ``score`` is what the stages made of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..index.bm25 import KeywordIndex
from ..model import Node
from .graph_view import GraphReader
from .settings import EffortPlan, RetrievalSettings

if TYPE_CHECKING:
    from .graph_view import GraphEngine


# How an entry was found (its ``channel`` in the answer): an embedding hit, a
# keyword-only hit, or a node reached through the graph.
SOURCES: Final = ("seed", "bm25", "neighbor")


@dataclass
class Entry:
    """A scored node during one retrieval.

    ``own`` is its stage-1 (fused × confidence) score, 0 for nodes found
    only through the graph.
    """

    node_id: str
    score: float
    source: str
    hops: int
    via: str | None
    own: float = 0.0


@dataclass
class Run:
    """State of one retrieval call."""

    graph: GraphEngine
    reader: GraphReader
    settings: RetrievalSettings
    plan: EffortPlan
    returnable: Callable[[Node], bool]
    entries: dict[str, Entry] = field(default_factory=dict)
    seeds: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    mechanisms: list[str] = field(default_factory=list)
    aids: int = 0
    cosines: dict[str, float] = field(default_factory=dict)  # exact, from stage 1
    # Named speakers -> the wholes (conversations) they spoke in (`scope`).
    joined: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    # The BM25 statistics keywords are weighed with (None: the whole index's).
    keywords: KeywordIndex | None = None
    # The candidates out of the query's context (`scope.participant_stage`).
    out_of_context: set[str] = field(default_factory=set)
    # False for an `as_of` retrieval: a fact superseded since held then, undemoted.
    answers_now: bool = True

    def text_index(self) -> KeywordIndex:
        """The keyword index of this retrieval: a context's statistics or the whole index's."""
        return self.graph.text_index() if self.keywords is None else self.keywords

    def offer(self, node_id: str, score: float, hops: int, via: str | None) -> bool:
        """Keep the better of an existing entry and a neighbour path; True if it improved."""
        current = self.entries.get(node_id)
        if current is not None and current.score >= score:
            return False
        self.entries[node_id] = Entry(node_id, score, "neighbor", hops, via)
        return True

    def raise_score(self, node_id: str, score: float) -> None:
        """Raise an existing entry's score, keeping how it was found (source, hops, via)."""
        entry = self.entries[node_id]
        entry.score = max(entry.score, score)

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Time the block in ``timings[name]`` (milliseconds)."""
        started = time.perf_counter()
        yield
        self.timings[name] = elapsed_ms(started)


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started` (a `time.perf_counter` reading), rounded to 3 digits."""
    return round((time.perf_counter() - started) * 1000.0, 3)
