"""The question's time in `retrieve_context`: recall before stage 1, order at stage 5.5.

Rules of this file: the rules are `time_scope`'s (validity, windows, the newest of
one claim) and `time_expressions`' (the grammar); this module applies them to one
retrieval.  `recall_faded` runs before the candidates: a question naming a bounded
time brings back the faded statements made then (a write, best effort).
`time_stage` runs after the rerank: the window orders the candidates, then the
newest of one claim ranks first; it flags, it never drops a candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from ..embed import pack_f32
from ..model import format_time, parse_time
from .bm25 import bm25_tokens
from .run import Run
from .time_expressions import TimeWindow
from .time_scope import (
    CLAIM_POOL_FACTOR,
    STATE_TYPES,
    TimeScope,
    admitted,
    newest_claims_first,
    window_order,
)

if TYPE_CHECKING:
    from .graph_view import GraphEngine


def time_stage(run: Run, scope: TimeScope, limit: int, query: str) -> dict[str, Any]:
    """Stage 5.5 (`time_scope`): the question's time window orders the candidates, then
    the newest of one claim ranks first.  Output: the ``time`` stats and the ids to flag
    (``{"flags": {id: flag}}``).  O(candidates) + O((2·limit)²) rule checks."""
    report: dict[str, Any] = {"as_of": None, "window": None, "reordered": 0}
    if scope.as_of is not None:
        report["as_of"] = format_time(scope.as_of)
    run.reader.load_nodes(run.entries)
    nodes = {
        node_id: node
        for node_id in run.entries
        if (node := run.reader.node(node_id)) is not None and run.returnable(node)
    }
    scores = {node_id: run.entries[node_id].score for node_id in nodes}
    window = scope.window
    if window is not None:
        start, end = _window_bounds(run, window)
        low, high = admitted(start, end)
        inside = window_order(scores, nodes, low, high) if start or end else 0
        report["window"] = {
            "expression": window.expression,
            "start": format_time(start) if start else None,
            "end": format_time(end) if end else None,
            "admitted": [format_time(low) if low else None, format_time(high) if high else None],
            "event": window.event,
            "candidates_inside": inside,
        }
        if inside:
            run.mechanisms.append("time_window")
    ranked = sorted(scores, key=lambda i: (-scores[i], i))[: CLAIM_POOL_FACTOR * limit]
    settled = frozenset(
        node_id
        for node_id in ranked
        if node_id in nodes
        and nodes[node_id].node_type in STATE_TYPES
        and any(
            link.outgoing and link.relationship == "supersedes"
            for link in run.reader.links(node_id)
        )
    )
    moved, marks = (
        ([], {}) if scope.past else newest_claims_first(ranked, scores, nodes, query, settled)
    )
    report["reordered"] = len(moved)
    if moved:
        run.mechanisms.append("newest_claim")
    for node_id, score in scores.items():
        run.entries[node_id].score = score
    report["flags"] = dict(sorted(marks.items()))
    return report


def recall_faded(
    graph: GraphEngine, scope: TimeScope, tokens: Sequence[str], agent_id: str | None
) -> list[str]:
    """Cue-dependent recall (`time_scope`): a question naming a bounded time brings back
    the faded statements made then (`admitted` band) that share a word with it — at most
    `RECALL_POOL`, oldest first — re-anchored now, with an audit entry ``recall``.  Best
    effort: a file that takes no write recalls nothing.  Returns the recalled ids."""
    window = scope.window
    if window is None or scope.as_of is not None:
        return []
    low, high = admitted(window.start, window.end)
    if low is None or high is None:  # an open window (since, before, after) names no time
        return []
    ids = graph.store.faded_between(format_time(low), format_time(high), agent_id, RECALL_POOL)
    if not ids or not tokens:
        return []
    wanted = set(tokens)
    rows = graph.store.get_nodes(ids)
    chosen = [i for i in ids if i in rows and wanted & set(bm25_tokens(rows[i].content))]
    if not chosen:
        return []
    vectors = graph.embed_texts([rows[i].content for i in chosen])
    now = graph.now()

    def restore() -> None:
        graph.store.recall_faded(chosen, now)
        for node_id, vector in zip(chosen, vectors, strict=True):
            graph.store.set_embedding(node_id, pack_f32(vector), graph.embedding_model)
        graph.store.audit(now, "recall", None, {"node_ids": chosen, "cue": window.expression})

    return chosen if graph.store.try_write(restore) else []


# Faded statements one question may recall: a time cue brings back a handful of
# memories; more than a page of them is not a recall but a restore (`restore`).
RECALL_POOL: Final = 50


def _window_bounds(run: Run, window: TimeWindow) -> tuple[datetime | None, datetime | None]:
    """A date window's bounds, or an event window resolved through the event's own node
    (the best keyword match of the event phrase: "after the charity race" → after
    the moment that race was told of)."""
    if window.event is None:
        return window.start, window.end
    tokens = bm25_tokens(window.event)
    hits, _ = run.text_index().top_k(tokens, 1) if tokens else ([], {})
    event = run.reader.node(hits[0][0]) if hits else None
    if event is None:
        return None, None
    moment = parse_time(event.valid_from or event.created_at)
    return (moment, None) if window.direction == "after" else (None, moment)
