"""Merging the keyword (BM25) and embedding (cosine) channels into one candidate ranking.

Two methods, both with a per-channel weight:

* **Weighted score fusion** (the default, `SCORE_FUSION`): each channel's
  scores are divided by the channel's best score, then combined linearly,

      F(d) = Σ over channels c of w_c · s_c(d) / max_d' s_c(d')      (s_c(d) = 0 if absent)

  so the best document of a channel gets that channel's full weight.  A
  convex combination of max-normalised scores keeps how *much* better one
  document is than the next, which rank-based fusion throws away (Bruch,
  Gai, Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", ACM
  TOIS 42(1), 2023, found it more accurate than RRF and more robust to the
  choice of its one parameter).
* **Reciprocal Rank Fusion** (`RRF_FUSION`, seed 001):

      RRF(d) = Σ over lists L containing d of w_L / (k + rank_L(d)),   rank from 1

  with k = 60 damping the difference between the very first ranks
  (Cormack, Clarke, Buettcher, SIGIR 2009).  Equal weights give the
  classic unweighted RRF.

The channel weights depend on how good the embedder is: the BM25 weight
`embedder_keyword_weight(embedder name)` is `KEYWORD_WEIGHTS` for a known family
(the zero-dependency hashing embedder is a weak semantic signal, so BM25
leads) and `DEFAULT_KEYWORD_WEIGHT` (balanced) for any real model.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Final

RRF_K: Final = 60
SCORE_FUSION: Final = "score"
RRF_FUSION: Final = "rrf"
FUSION_METHODS: Final = (SCORE_FUSION, RRF_FUSION)
DEFAULT_FUSION: Final = SCORE_FUSION
# BM25's share of the fused score, by embedder family (the embedder name up
# to its first "-" or ":").  Tuned on the LoCoMo dev half (SPEC "Retrieval
# quality"): hashing vectors alone reach R@5 0.35 there against BM25's 0.45.
KEYWORD_WEIGHTS: Final[Mapping[str, float]] = {"hashing": 0.7}
# Any other embedder (a trained sentence model): both channels count alike.
DEFAULT_KEYWORD_WEIGHT: Final = 0.5


def embedder_family(name: str) -> str:
    """``"hashing-384"`` -> ``"hashing"``, ``"onnx:dir:sha"`` -> ``"onnx"``.  O(len(name))."""
    for position, char in enumerate(name):
        if char in "-:":
            return name[:position]
    return name


def embedder_keyword_weight(embedder_name: str) -> float:
    """BM25's fusion weight in [0, 1] for an embedder (module docstring).  O(len(name))."""
    return KEYWORD_WEIGHTS.get(embedder_family(embedder_name), DEFAULT_KEYWORD_WEIGHT)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked id lists by (weighted) Reciprocal Rank Fusion.

    Input: lists of ids, best first (a repeated id counts at its first rank);
    the constant k >= 0; optional weights >= 0, one per list (default 1 each).
    Output: ``(id, fused score)`` for every id in any list, by score
    descending then id ascending (deterministic ties).
    Complexity: O(total length + U log U) for U distinct ids.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings) or any(w < 0.0 for w in weights):
        raise ValueError("weights: one non-negative weight per ranking")
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))


def score_fusion(
    channels: Sequence[Mapping[str, float]],
    weights: Sequence[float],
    *,
    aside: Container[str] = (),
) -> list[tuple[str, float]]:
    """Fuse scored channels by a weighted sum of max-normalised scores.

    Input: one ``{id: score}`` map per channel (only positive scores count;
    a channel with no positive score contributes nothing), one weight >= 0
    per channel, and ids set `aside` from the normalisation: each channel's
    max is taken over the other ids (over all when only ids set aside score
    in it), so the set-aside ids cannot change how the others compare.
    Output: ``(id, F)`` for every id with a positive score in a channel of
    positive weight, F = Σ w_c · s_c / max s_c, by F descending then id
    ascending (with two channels each F is one exact sum, independent of the
    order of the maps).  Complexity: O(total entries + U log U).

    >>> score_fusion([{"a": 2.0, "b": 1.0}, {"a": 0.5, "b": 1.0}], [0.5, 0.5])
    [('a', 0.75), ('b', 0.75)]
    >>> channels = [{"a": 2.0, "b": 1.0, "x": 4.0}, {"a": 0.5, "b": 1.0}]
    >>> score_fusion(channels, [0.5, 0.5], aside={"x"})
    [('x', 1.0), ('a', 0.75), ('b', 0.75)]
    """
    if len(weights) != len(channels) or any(w < 0.0 for w in weights):
        raise ValueError("weights: one non-negative weight per channel")
    fused: dict[str, float] = {}
    for channel, weight in zip(channels, weights, strict=True):
        best = max(
            (score for item, score in channel.items() if score > 0.0 and item not in aside),
            default=0.0,
        ) or max((score for score in channel.values() if score > 0.0), default=0.0)
        for item, score in channel.items():
            if score > 0.0 and weight > 0.0:
                fused[item] = fused.get(item, 0.0) + weight * (score / best)
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))


def combine_evidence(own: float, support: float) -> float:
    """Noisy-OR of two pieces of evidence in [0, 1]: own + support × (1 − own).

    Bounded by 1, never below either input, equal to ``own`` when there is
    no support (Pearl, "Probabilistic Reasoning in Intelligent Systems",
    1988, §4.3.2).  O(1).
    """
    return own + support * (1.0 - own)


__all__ = [
    "DEFAULT_FUSION",
    "DEFAULT_KEYWORD_WEIGHT",
    "FUSION_METHODS",
    "KEYWORD_WEIGHTS",
    "RRF_FUSION",
    "RRF_K",
    "SCORE_FUSION",
    "combine_evidence",
    "embedder_family",
    "embedder_keyword_weight",
    "reciprocal_rank_fusion",
    "score_fusion",
]
