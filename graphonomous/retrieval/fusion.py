"""Reciprocal Rank Fusion: merging ranked lists without comparing their scores.

    RRF(d) = sum over lists L containing d of 1 / (k + rank_L(d)),   rank from 1

BM25 scores and cosine similarities live on different scales; RRF uses only
ranks, so neither list needs calibrating.  k = 60 damps the difference between
the very first ranks (Cormack, Clarke, Buettcher, "Reciprocal Rank Fusion
outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

RRF_K: Final = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], *, k: int = RRF_K
) -> list[tuple[str, float]]:
    """Fuse ranked id lists by Reciprocal Rank Fusion.

    Input: lists of ids, best first (a repeated id counts at its first rank);
    the constant k >= 0.  Output: ``(id, fused score)`` for every id in any
    list, by score descending then id ascending (deterministic ties).
    Complexity: O(total length + U log U) for U distinct ids.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    fused: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
