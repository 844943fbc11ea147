"""The answer of `retrieve_context`: which entries go out, their JSON rows, the access record.

Rules of this file: `select` keeps the returnable entries scoring at least
`min_score` (as reported, rounded to `SCORE_DIGITS`), best first, ties by id; after
the graph stages text orders the chunks of one file (`spread.text_first_within_files`)
and at most `max_per_file` results of one file come before other files get a place
(`spread.spread_by_file`, among the best `limit` × `SPREAD_POOL_FACTOR`).
`result_rows` reports each with its exact cosine to the query.  `record_access`
(stage 7) counts the access in one best-effort transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from ..embed import exact_score
from ..embed.index import normalized_f32
from ..model import Node
from .graph_view import patch_accessed
from .provenance import provenance
from .run import Entry, Run
from .spread import spread_by_file, text_first_within_files

if TYPE_CHECKING:
    from .graph_view import GraphEngine

# Scores and similarities are reported, compared and thresholded at this many digits.
SCORE_DIGITS: Final = 6


# The per-file cap chooses among the best `limit` × this returnable entries.
SPREAD_POOL_FACTOR: Final = 5


def select(run: Run, limit: int, min_score: float) -> list[Entry]:
    """Returnable entries with score >= min_score, best first, cut at limit.

    Scores are compared as reported (rounded to `SCORE_DIGITS`), ties by id:
    the order and the threshold agree with the numbers the caller sees, and
    float noise from summation order (PageRank) cannot break a tie.
    """
    chosen = []
    paths: dict[str, str | None] = {}
    ranked = sorted(run.entries.values(), key=lambda e: (-round(e.score, SCORE_DIGITS), e.node_id))
    for entry in ranked:
        node = run.reader.node(entry.node_id)
        if (
            node is not None
            and run.returnable(node)
            and round(entry.score, SCORE_DIGITS) >= min_score
        ):
            chosen.append(entry)
            paths[entry.node_id] = provenance(node)["path"]
            if len(chosen) == limit * SPREAD_POOL_FACTOR:
                break
    if run.plan.effort > 0:  # the graph stages ran: text orders the chunks of a file
        chosen = [
            replace(entry, score=chosen[place].score)
            for place, entry in text_first_within_files(
                chosen, lambda e: paths[e.node_id], lambda e: e.own, lambda e: e.node_id
            )
        ]
    return spread_by_file(chosen, lambda e: paths[e.node_id], run.settings.max_per_file, limit)


def record_access(graph: GraphEngine, result_ids: Sequence[str]) -> None:
    """In one transaction: access_count += 1 and last_accessed_at = now on every result.

    Co-activation is counted by rewarded outcomes (learning.outcomes), not by
    retrieval: edges strengthen between nodes that succeed together, not
    between nodes that merely came back together.

    Counts are re-read inside the (write-locked) transaction, so concurrent
    processes never lose an increment.  The whole-graph snapshot stays valid:
    these columns do not change the graph it holds.  Best effort: when the
    file takes no write now (read-only, disk full, another process's long
    transaction) the counters are skipped and the answer still goes out.
    """
    if not result_ids or graph.store.write_refusal() is not None:
        return  # a read-only or damaged file serves reads without bookkeeping
    store = graph.store
    now = graph.now()

    def bump() -> None:
        store.bump_access(result_ids, now)

    # Graph-neutral: the snapshot and the engine's read cache (patched) stay valid.
    graph.neutral_write(bump, lambda cache: patch_accessed(cache, result_ids, now))


def result_rows(
    graph: GraphEngine,
    chosen: Sequence[Entry],
    nodes: Mapping[str, Node],
    flags: Mapping[str, list[str]],
    vector: list[float] | None,
    known: Mapping[str, float],
) -> list[dict[str, Any]]:
    """The JSON result objects; similarity = cosine(query, node), 0.0 without a query vector.

    `known`: exact cosines stage 1 computed (the same `exact_score` value), reused;
    the index is asked only for the others."""
    query_vector: list[float] | None = None
    rows = []
    for entry in chosen:
        node = nodes[entry.node_id]
        similarity = 0.0
        if vector is not None:
            found = known.get(entry.node_id)
            if found is None:
                index = graph.vector_index()
                if query_vector is None:
                    query_vector = normalized_f32(vector, index.dimensions)
                stored = index.get(entry.node_id)
                found = exact_score(query_vector, stored) if stored is not None else 0.0
            similarity = found
        rows.append(
            {
                "node_id": entry.node_id,
                "content": node.content,
                "node_type": node.node_type,
                "confidence": node.confidence,
                "similarity": round(similarity, SCORE_DIGITS),
                "score": round(entry.score, SCORE_DIGITS),
                **provenance(node),
                "channel": entry.source,
                "hops": entry.hops,
                "via": entry.via,
                "flags": list(flags.get(entry.node_id, [])),
            }
        )
    return rows
