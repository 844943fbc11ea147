"""The entity walk: Personalized PageRank over passages ↔ entities (HippoRAG, LLM-free).

Rules of this file: pure functions over an `entities.EntityIndex` and
scores; no store access, no I/O; deterministic (sorted iteration, the
forward push of `algorithms.push`).

The walk graph is bipartite and local: the seed passages, the entities they
and the query mention (entities in more than `max_df` passages are hubs —
a speaker's name on every turn — and are left out), and every passage that
mentions one of those entities.  A seed's entity that no other passage
mentions is left out too: it could only send the seed's mass back to the
seed, which would count as evidence for passages with many unique words.
An edge passage–entity weighs the entity's `EntityIndex.specificity`
(ln(1 + N/df)), so a rare shared name carries more than a common phrase.

Restart weights: each seed's score, and each query entity's specificity ×
`query_weight` × the best seed score / the sum of query-entity
specificities (the query's entities together weigh `query_weight` times the
best seed).  Output: each passage's PageRank mass, minus what it holds by
restarting there, divided by the largest such mass — a relative score in
(0, 1] that the retriever scales and combines with the passage's own score.

Complexity: O(seeds × entities per passage × max_df) to build the graph, plus
one push, O(1 / (epsilon × restart)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ..algorithms.push import ppr_push, transitions_of
from .entities import EntityIndex

# Entity nodes live in the walk graph under this prefix (never a node id: ids
# are printable, see model.check_id).
ENTITY_PREFIX: Final = "\x00entity:"


def entity_walk(
    index: EntityIndex,
    seeds: Mapping[str, float],
    query_entities: Sequence[str],
    *,
    max_df: int,
    query_weight: float,
    restart: float,
    epsilon: float,
) -> dict[str, float]:
    """Passage -> relative PageRank mass from the seeds and query entities (module docstring).

    Seeds with score <= 0 are ignored; empty input returns ``{}``.
    """
    positive = {node: score for node, score in seeds.items() if score > 0.0}
    graph: dict[str, dict[str, float]] = {}

    def link(passage: str, key: str) -> None:
        weight = index.specificity(key)
        entity = ENTITY_PREFIX + key
        graph.setdefault(passage, {})[entity] = weight
        graph.setdefault(entity, {})[passage] = weight

    usable = [key for key in query_entities if 0 < index.document_frequency(key) <= max_df]
    keys = set(usable)
    for passage in sorted(positive):
        keys.update(
            key
            for key in index.entities_of(passage)
            if 2 <= index.document_frequency(key) <= max_df
        )
    for key in sorted(keys):
        for passage in sorted(index.mentions(key)):
            link(passage, key)
    if not graph:
        return {}
    personalization = {node: score for node, score in positive.items() if node in graph}
    best = max(positive.values(), default=1.0)
    total = sum(index.specificity(key) for key in usable)
    for key in usable:
        personalization[ENTITY_PREFIX + key] = query_weight * best * index.specificity(key) / total
    ranks = ppr_push(transitions_of(graph), personalization, alpha_restart=restart, epsilon=epsilon)
    # What arrived by walking: the estimate minus the node's own restart share.
    weight = sum(personalization.values())
    passages = {
        node: rank - restart * personalization.get(node, 0.0) / weight
        for node, rank in ranks.items()
        if not node.startswith(ENTITY_PREFIX)
    }
    top = max(passages.values(), default=0.0)
    if top <= 0.0:
        return {}
    return {node: rank / top for node, rank in passages.items() if rank > 0.0}


__all__ = ["ENTITY_PREFIX", "entity_walk"]
