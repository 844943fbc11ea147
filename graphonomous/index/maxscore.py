"""Exact BM25 top-k by MaxScore pruning (Turtle & Flood 1995), byte-identical to exhaustive.

Rules of this module:
- Pure functions over plain data (postings as typed arrays, document lengths);
  `Bm25Index.top_k` prepares the terms and calls `top_k`.  The exhaustive
  reference is `Bm25Index.scores` + a top-k selection; `top_k` must return
  exactly what that returns — the same documents, the same order and the same
  float scores, bit for bit (tests/test_bm25_maxscore.py pins it).
- A document's score is always summed the way the reference sums it: 0.0 plus
  each query term's gain in query-term order (first occurrence), the gain
  computed by the same expression (`_gain`).  Pruning only decides *which*
  documents get an exact score, never how it is computed.

The method (MaxScore, H. Turtle & J. Flood, "Query evaluation: strategies and
optimizations", Information Processing & Management 31(6), 1995): every term
has an upper bound of its gain in any document, ``U_t = w_t · M_t (k1 + 1) /
(M_t + norm_min_t)`` (M_t its largest term frequency, norm_min_t the length
normalisation of its shortest document: the gain grows with tf and falls with
the document length).  Terms are scored in descending bound; after each one,
if the bounds of the terms not yet scored sum below θ — the k-th best partial
score so far, a lower bound of the k-th best exact score — no document
outside the accumulators can reach the top k, and the rest of the terms (the
common words, with the longest postings) are only looked up for the few
candidates whose partial score plus that rest can still reach θ.  Comparisons
carry a relative margin (`_MARGIN`) far above float rounding, so a document
is dropped only when it is below the k-th score by more than any rounding.

Complexity: O(P_s + P_r + C · m + C log k) where P_s are the postings of the
scored terms (Python loop), P_r those of the remaining terms (scanned at C
speed for C candidates by a set membership test), m the number of terms;
the reference is O(P) Python work for all postings plus O(P' log k).
Negative or zero term weights (rank-bm25's idf floor below zero, tiny
corpora) make bounds meaningless: the function then scores exhaustively.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import compress
from typing import Final

# Relative slack on every pruning comparison: float sums of <= a few hundred
# gains differ from the exact real sums by < 1e-13 relative; 1e-9 is far above
# that and still prunes (bounds are typically 2x the gains they bound).
_MARGIN: Final = 1e-9


@dataclass(frozen=True)
class Term:
    """One distinct query term: weight (idf × repeats), postings, bound inputs."""

    weight: float
    docs: array[int]  # document slots
    tfs: array[int]  # term frequencies, parallel to docs
    max_tf: int  # >= every tf in tfs
    min_len: int  # <= the length of every document in docs
    # tf (k1 + 1) / (tf + norm) per posting for the current norms (the gain
    # without its weight, the same double the gain's parenthesis computes),
    # when the caller has it cached; None: computed while scoring
    impacts: array[float] | None = None


@dataclass(frozen=True)
class Scoring:
    """The BM25 constants of one query: k1, b, the mean document length, and each
    document slot's length normalisation ``norms[slot] = norm(length)``."""

    k1: float
    b: float
    avgdl: float
    norms: Sequence[float]

    def norm(self, length: int) -> float:
        """Length normalisation (the reference's expression, operand for operand)."""
        return self.k1 * (1.0 - self.b + self.b * length / self.avgdl)

    def gain(self, weight: float, tf: int, doc: int) -> float:
        """One term's contribution to one document (the reference's expression)."""
        return weight * (tf * (self.k1 + 1.0) / (tf + self.norms[doc]))

    def bound(self, term: Term) -> float:
        """An upper bound of `gain` over the term's postings (weight > 0): `norm` is
        monotone in the length operation by operation, so norm(min_len) <= every norm."""
        m = term.max_tf
        return term.weight * (m * (self.k1 + 1.0) / (m + self.norm(term.min_len)))


def norms_of(k1: float, b: float, avgdl: float, doc_len: Iterable[int]) -> array[float]:
    """`Scoring.norm` of every length (a free slot's 0 gives an unused value).  O(N)."""
    return array("d", [k1 * (1.0 - b + b * length / avgdl) for length in doc_len])


def top_k(
    terms: Sequence[Term],
    scoring: Scoring,
    k: int,
    ids: Sequence[str | None],
    *,
    allow: Callable[[int], bool] | None = None,
    also: Iterable[int] = (),
    remember: Callable[[int, array[float]], None] | None = None,
) -> tuple[list[tuple[str, float]], dict[int, float]]:
    """The k best documents by BM25 and the exact scores of some others.

    Input: the distinct query terms in query order (weights > 0 for pruning),
    the scoring constants, k > 0, the document id of every slot (ties are
    broken by id, as the reference does), an optional ``allow(slot)`` filter,
    document slots ``also`` whose exact scores are wanted too.  Output:
    ``(hits, extra)`` — hits as (id, score) for score > 0, by score
    descending then id ascending; extra ``{slot: score}`` for every slot of
    ``also`` (0.0 when it has no query term or is not allowed).  ``remember(i,
    impacts)`` receives the impacts computed for ``terms[i]`` (when it had
    none and every posting was visited), for the caller to cache.
    Complexity: see the module docstring.
    """
    if k <= 0:
        return [], {doc: 0.0 for doc in also}
    if any(term.weight <= 0.0 for term in terms):
        return _exhaustive(terms, scoring, k, ids, allow=allow, also=also)
    verdicts: dict[int, bool] = {}

    def allowed(doc: int) -> bool:
        verdict = verdicts.get(doc)
        if verdict is None:
            verdict = verdicts[doc] = allow(doc) if allow is not None else True
        return verdict

    bounds = [scoring.bound(term) for term in terms]
    order = sorted(range(len(terms)), key=lambda i: -bounds[i])
    # suffix[p]: the bounds of the terms after position p, each summed directly
    # (no running subtraction, whose cancellation could exceed the margin)
    suffix = [sum(bounds[j] for j in order[p + 1 :]) for p in range(len(order))]
    rest = 0.0
    partial: dict[int, float] = {}
    gains: list[dict[int, float] | None] = [None] * len(terms)
    remaining: list[int] = []
    theta = 0.0
    for position, i in enumerate(order):
        impacts = _score_term(terms[i], scoring, partial, None if allow is None else allowed)
        if impacts is not None and remember is not None:
            remember(i, impacts)
        rest = suffix[position]
        if position + 1 == len(order) or len(partial) < k:
            continue
        ceiling = rest * (1.0 + _MARGIN)
        if ceiling >= max(partial.values()) * (1.0 - _MARGIN):
            continue
        theta = _kth(partial.values(), k)
        if ceiling < theta * (1.0 - _MARGIN):
            remaining = order[position + 1 :]
            break
    extra_slots = list(dict.fromkeys(also))
    extras = {doc for doc in extra_slots if allowed(doc)}
    if not remaining:  # every term scored: the current k-th partial score
        theta = _kth(partial.values(), k)
    pool = partial
    for step, i in enumerate(remaining):
        # Drop the documents that cannot reach θ even with every term left,
        # then look this term up for the rest (and the extras) only.
        ahead = sum(bounds[j] for j in remaining[step:])
        floor = theta * (1.0 - _MARGIN) - ahead * (1.0 + _MARGIN)
        pool = {doc: value for doc, value in pool.items() if value >= floor}
        gains[i] = found = _lookup_term(terms[i], scoring, pool.keys() | extras)
        for doc in found.keys() & pool.keys():
            pool[doc] += found[doc]
        theta = max(theta, _kth(pool.values(), k))
    floor = theta * (1.0 - _MARGIN)
    candidates = [doc for doc, value in pool.items() if value >= floor]
    wanted = extras.union(candidates)
    for i, term in enumerate(terms):  # the scored terms' gains, for these documents only
        if gains[i] is None:
            gains[i] = _lookup_term(term, scoring, wanted)
    exact = {doc: _exact(gains, doc) for doc in wanted}
    positive = ((-exact[doc], ids[doc]) for doc in candidates if exact[doc] > 0.0)
    return _ranked(positive, k), {doc: exact.get(doc, 0.0) for doc in extra_slots}


def _kth(values: Collection[float], k: int) -> float:
    """The k-th largest value (0.0 when there are fewer than k)."""
    return heapq.nlargest(k, values)[-1] if len(values) >= k else 0.0


def _ranked(positive: Iterable[tuple[float, str | None]], k: int) -> list[tuple[str, float]]:
    """The k smallest (-score, id) pairs as (id, score): score desc, id asc."""
    return [(doc_id, -negated) for negated, doc_id in heapq.nsmallest(k, positive)]  # type: ignore[misc]


def _score_term(
    term: Term,
    scoring: Scoring,
    partial: dict[int, float],
    allowed: Callable[[int], bool] | None,
) -> array[float] | None:
    """Every posting's gain of one term (allowed documents) added to ``partial``;
    returns the impacts when it computed them for every posting (no filter).  O(df)."""
    weight, get = term.weight, partial.get
    if term.impacts is not None:
        pairs = zip(term.docs, term.impacts, strict=True)
        if allowed is None:
            for doc, impact in pairs:
                partial[doc] = get(doc, 0.0) + weight * impact
        else:
            for doc, impact in pairs:
                if allowed(doc):
                    partial[doc] = get(doc, 0.0) + weight * impact
        return None
    norms, k1p1 = scoring.norms, scoring.k1 + 1.0
    if allowed is None:
        pairs = zip(term.docs, term.tfs, strict=True)
        impacts = array("d", [tf * k1p1 / (tf + norms[doc]) for doc, tf in pairs])
        for doc, impact in zip(term.docs, impacts, strict=True):
            partial[doc] = get(doc, 0.0) + weight * impact
        return impacts
    for doc, tf in zip(term.docs, term.tfs, strict=True):
        if allowed(doc):
            partial[doc] = get(doc, 0.0) + weight * (tf * k1p1 / (tf + norms[doc]))
    return None


def _lookup_term(term: Term, scoring: Scoring, wanted: AbstractSet[int]) -> dict[int, float]:
    """The gains of one term in the wanted documents only.  O(df) at C speed: one
    membership scan of the postings picks the positions of the hits (`compress`
    over positions, no pair per posting), then only the hits are read."""
    docs, weight = term.docs, term.weight
    hits = compress(range(len(docs)), map(wanted.__contains__, docs))
    if term.impacts is not None:
        impacts = term.impacts
        return {docs[at]: weight * impacts[at] for at in hits}
    tfs, norms, k1p1 = term.tfs, scoring.norms, scoring.k1 + 1.0
    return {docs[at]: weight * (tfs[at] * k1p1 / (tfs[at] + norms[docs[at]])) for at in hits}


def _exact(gains: Sequence[dict[int, float] | None], doc: int) -> float:
    """The reference's sum: 0.0 plus the document's gains in query-term order."""
    total = 0.0
    for by_doc in gains:
        if by_doc is not None:
            gain = by_doc.get(doc)
            if gain is not None:
                total += gain
    return total


def _exhaustive(
    terms: Sequence[Term],
    scoring: Scoring,
    k: int,
    ids: Sequence[str | None],
    *,
    allow: Callable[[int], bool] | None,
    also: Iterable[int],
) -> tuple[list[tuple[str, float]], dict[int, float]]:
    """Every posting scored in query-term order (the reference order of sums)."""
    verdicts: dict[int, bool] = {}
    totals: dict[int, float] = {}
    for term in terms:
        for doc, tf in zip(term.docs, term.tfs, strict=True):
            if allow is not None:
                verdict = verdicts.get(doc)
                if verdict is None:
                    verdict = verdicts[doc] = allow(doc)
                if not verdict:
                    continue
            totals[doc] = totals.get(doc, 0.0) + scoring.gain(term.weight, tf, doc)
    positive = ((-score, ids[doc]) for doc, score in totals.items() if score > 0.0)
    return _ranked(positive, k), {doc: totals.get(doc, 0.0) for doc in also}
