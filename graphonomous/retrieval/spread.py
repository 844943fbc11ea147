"""Spreading ranked results across files (a per-file cap).

On a scanned tree, graph support and expansion lift the neighbours of a good
chunk — usually chunks of the same file — so without a cap the top 5 of a
code or documentation question can be five chunks of one file (measured:
SPEC §10 "Effort on documentation trees").  `spread_by_file` picks, best
first, at most `per_file` results from one file; results of other files
fill the freed places; when there are not `limit` results that way, the
capped ones fill up in rank order.  The chosen set is returned in its
original (score) order, so the result order is still "score desc, then id".
Nodes without a file (`path_of` None) are never capped.  Deterministic;
O(len(ranked)).

`text_first_within_files` is the other half of "graph evidence on a
tree": support, expansion and the walk rank *files* well (a file with many
matching chunks lifts them all — file@1 rises with effort) but they reorder
the chunks *inside* a file by their neighbours, not by what they say, so
the chunk holding the answer drops behind its siblings.  Within each file
the ranks that file earned are kept and handed to its chunks in the order
of their own stage-1 (text) scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def spread_by_file(
    ranked: Sequence[T], path_of: Callable[[T], str | None], per_file: int, limit: int
) -> list[T]:
    """The first `limit` of `ranked` with at most `per_file` per file (module docstring).

    `per_file` 0 disables the cap (the plain top `limit`).
    """
    if per_file <= 0:
        return list(ranked[:limit])
    taken: list[int] = []
    deferred: list[int] = []
    per_path: dict[str, int] = {}
    for index, item in enumerate(ranked):
        if len(taken) == limit:
            break
        path = path_of(item)
        if path is not None:
            if per_path.get(path, 0) >= per_file:
                deferred.append(index)
                continue
            per_path[path] = per_path.get(path, 0) + 1
        taken.append(index)
    if len(taken) < limit:
        taken.extend(deferred[: limit - len(taken)])
        # Anything after the last examined item was never reached: only the
        # deferred ones can fill; the caller gets fewer than `limit` otherwise.
    return [ranked[i] for i in sorted(taken)]


def text_first_within_files(
    ranked: Sequence[T],
    path_of: Callable[[T], str | None],
    own_of: Callable[[T], float],
    key_of: Callable[[T], str],
) -> list[tuple[int, T]]:
    """Each file's items, in its own places of `ranked`, re-ordered by own score.

    Output: (index in `ranked` whose place and score the item takes, item),
    in `ranked` order; items without a file keep their place.  Within a file
    the item with the best own score (ties: `key_of`) takes the file's best
    place, and so on (module docstring).  Deterministic; O(n log n).
    """
    places: dict[str, list[int]] = {}
    for index, item in enumerate(ranked):
        path = path_of(item)
        if path is not None:
            places.setdefault(path, []).append(index)
    out: list[tuple[int, T]] = [(index, item) for index, item in enumerate(ranked)]
    for indices in places.values():
        items = sorted((ranked[i] for i in indices), key=lambda it: (-own_of(it), key_of(it)))
        for index, item in zip(indices, items, strict=True):
            out[index] = (index, item)
    return out
