"""Near pairs for consolidation: which nodes changed, and their nearest neighbours.

Stages 4.5 (conflicts), 5 (merges) and 7 (abstractions) need pairs of nodes
whose embeddings are very similar.  Comparing every pair is O(N²); asking
the index about every node is N searches.  Instead each run looks only at
*changed* nodes — created or updated since the previous run — and asks the
exact vector index for each one's `k` nearest eligible neighbours.  A pair of
two unchanged nodes was already examined by an earlier run.

"Changed since" is a watermark: the ``(updated_at, id)`` of the last node a
run examined.  A run examines at most `budget` changed nodes, oldest first;
the rest wait for the next run, so a bulk import is worked through over
several runs and no run exceeds its time budget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..embed import VectorIndex
from ..store import Store

Watermark = tuple[str, str]
"""``(updated_at, node_id)`` of the last node examined; runs resume after it."""


@dataclass(frozen=True)
class NearPair:
    """Two distinct nodes (``a < b``) and the exact cosine of their stored vectors."""

    a: str
    b: str
    similarity: float


def changed_nodes(
    store: Store, watermark: Watermark | None, budget: int
) -> tuple[list[Watermark], int]:
    """Live, non-superseded nodes changed after `watermark`, oldest first.

    Output: up to `budget` ``(updated_at, id)`` keys in ``(updated_at, id)``
    order, and how many more are waiting.  ``watermark`` None means every
    node has changed (first run).  Complexity: one scan of the nodes table.
    """
    keys, total = store.nodes_changed_after(watermark, budget)
    return keys, total - len(keys)


GroupLookup = Callable[[Sequence[str]], Mapping[str, tuple[str, str]]]
"""The (node_type, agent_id) of each of the given ids that is *eligible* (others absent)."""


def neighbour_pairs(
    index: VectorIndex,
    node_ids: Sequence[str],
    group_of: Mapping[str, tuple[str, str]] | GroupLookup,
    k: int,
    min_similarity: float,
) -> list[NearPair]:
    """Pairs (changed node, one of its k nearest neighbours) at least `min_similarity` alike.

    Input: the index, the changed node ids, ``group_of`` mapping every
    *eligible* node to its (node_type, agent_id) — or a `GroupLookup` asked
    once for the changed ids and once for their neighbours, so a cold run
    reads the groups of those few nodes, not of the whole graph — `k` and
    the similarity floor.  The k nearest stored vectors are taken over the
    whole index (so the search needs no filter); those that are eligible, of
    the same group and at least `min_similarity` alike form pairs.
    Output: distinct pairs sorted by similarity descending, then (a, b).
    Complexity: one exact top-(k + 1) index search per changed node.
    """
    lookup: GroupLookup = (lambda _ids: group_of) if isinstance(group_of, Mapping) else group_of
    groups = dict(lookup(node_ids))
    searched: list[tuple[str, tuple[str, str], list[tuple[str, float]]]] = []
    with index.batch():  # a cold process reads only the columns these searches need
        for node_id in node_ids:
            group = groups.get(node_id)
            vector = index.get(node_id) if group is not None else None
            if group is None or vector is None:
                continue
            # (the floor inside the search: only vectors that can reach it are rescored)
            near = index.search(vector, k + 1, min_score=min_similarity)
            hits = [(other, score) for other, score in near if other != node_id]
            searched.append((node_id, group, hits))
    unknown = sorted({other for _, _, hits in searched for other, _ in hits} - groups.keys())
    if unknown:
        groups.update(lookup(unknown))
    found: dict[tuple[str, str], float] = {}
    for node_id, group, hits in searched:  # the searches' order: a repeated pair keeps the last
        for other, score in hits:
            if groups.get(other) == group:
                found[(min(node_id, other), max(node_id, other))] = score
    pairs = [NearPair(a, b, score) for (a, b), score in found.items()]
    pairs.sort(key=lambda pair: (-pair.similarity, pair.a, pair.b))
    return pairs
