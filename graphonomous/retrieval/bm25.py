"""Okapi BM25 keyword ranking over an in-memory inverted index.

The index maps every term to its postings ``{doc_id: term frequency}`` and is
kept current on each write, so a query touches only the postings of its own
terms — never all N documents.  Scores equal those of ``rank_bm25.BM25Okapi``
(the reference the retrieval baselines were measured with) up to float
rounding:

    idf(t)   = ln(N - n_t + 0.5) - ln(n_t + 0.5)
    idf(t)   = epsilon * mean_idf     when the value above is negative
    score(d) = sum over query tokens t of
               idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))

where N is the number of documents, n_t the number containing t, ``mean_idf``
the mean of the raw idf over the whole vocabulary, and a query token repeated
r times counts r times.  Terms are the index's *terms* of the tokens: by
default each token goes through `stem.light_stem` (documents and queries
alike), so "activities" matches "activity"; ``Bm25Index(stem=False)`` indexes
the raw tokens and then equals rank-bm25 exactly.  The negative-idf floor (``epsilon`` = 0.25) is
rank-bm25's: a term in more than half of the documents still scores a little.
``mean_idf`` would cost O(vocabulary) per change; it is computed instead from a
histogram *document frequency -> number of terms with it*, which has at most
O(sqrt(total tokens)) entries and is updated in O(1) per posting.

Reference: S. Robertson, H. Zaragoza, "The Probabilistic Relevance Framework:
BM25 and Beyond", FnTIR 3(4), 2009; rank-bm25 (D. Brown), ``BM25Okapi``.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from ..embed import tokenize
from .stem import light_stem

BM25_K1: Final = 1.5
BM25_B: Final = 0.75
# rank-bm25's floor for negative idf, as a fraction of the vocabulary's mean idf.
BM25_EPSILON: Final = 0.25
# Light stemming of documents and queries (`stem.light_stem`); measured on the
# LoCoMo dev half: BM25 R@5 0.445 -> see SPEC "Retrieval quality".
BM25_STEM: Final = True
_STEM_CACHE_SIZE: Final = 1 << 16


def bm25_tokens(text: str) -> list[str]:
    """The tokens BM25 sees: NFKC, lower-cased ``\\w+`` runs (the embedder's tokens).

    These are raw tokens; `Bm25Index.terms` stems them (when the index
    stems).  No stopword list: the mean-idf floor already makes very common
    words nearly free.  O(len(text)).
    """
    return tokenize(text)


@functools.lru_cache(maxsize=_STEM_CACHE_SIZE)
def _cached_stem(token: str) -> str:
    return light_stem(token)


def _term_counts(tokens: Iterable[str]) -> dict[str, int]:
    """Token -> count, keyed in first-occurrence order (a deterministic sum order)."""
    counts: dict[str, int] = {}
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    return counts


class Bm25Index:
    """An incrementally maintained Okapi BM25 index of short documents.

    ``add`` / ``remove`` keep the postings, document lengths and the
    document-frequency histogram current; ``search`` ranks by BM25.  Not
    thread-safe by itself: the facade calls it under its lock.
    """

    def __init__(
        self,
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
        epsilon: float = BM25_EPSILON,
        stem: bool = BM25_STEM,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self.stem = stem
        self._postings: dict[str, dict[str, int]] = {}
        self._doc_terms: dict[str, tuple[str, ...]] = {}
        self._doc_len: dict[str, int] = {}
        self._total_len = 0
        # document frequency -> how many terms have exactly that frequency
        self._df_histogram: dict[int, int] = {}
        self._mean_idf: float | None = None

    # -- contents ------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_len

    @property
    def vocabulary_size(self) -> int:
        return len(self._postings)

    def terms(self, tokens: Iterable[str]) -> list[str]:
        """The index terms of tokens (`bm25_tokens`): stemmed when ``stem`` is on.  O(n)."""
        if not self.stem:
            return list(tokens)
        return [_cached_stem(token) for token in tokens]

    def _bump_histogram(self, df: int, delta: int) -> None:
        if df <= 0:
            return
        count = self._df_histogram.get(df, 0) + delta
        if count:
            self._df_histogram[df] = count
        else:
            del self._df_histogram[df]

    def add(self, doc_id: str, text: str) -> None:
        """Index (or re-index) one document.

        Input: an id and its text.  A document with no terms is still counted
        (it has length 0), as rank-bm25 counts empty documents.
        Complexity: O(len(text)).
        """
        if doc_id in self._doc_len:
            self.remove(doc_id)
        counts = _term_counts(self.terms(bm25_tokens(text)))
        for term, tf in counts.items():
            postings = self._postings.get(term)
            if postings is None:
                postings = self._postings[term] = {}
            old_df = len(postings)
            postings[doc_id] = tf
            self._bump_histogram(old_df, -1)
            self._bump_histogram(old_df + 1, +1)
        self._doc_terms[doc_id] = tuple(counts)
        length = sum(counts.values())
        self._doc_len[doc_id] = length
        self._total_len += length
        self._mean_idf = None

    def add_many(self, documents: Iterable[tuple[str, str]]) -> None:
        """`add` for each (id, text) pair.  O(total text length)."""
        for doc_id, text in documents:
            self.add(doc_id, text)

    def remove(self, doc_id: str) -> bool:
        """Drop a document (e.g. deleted or soft-forgotten).  Returns whether it was present.

        Complexity: O(number of distinct terms of the document).
        """
        terms = self._doc_terms.pop(doc_id, None)
        if terms is None:
            return False
        for term in terms:
            postings = self._postings[term]
            old_df = len(postings)
            del postings[doc_id]
            self._bump_histogram(old_df, -1)
            self._bump_histogram(old_df - 1, +1)
            if not postings:
                del self._postings[term]
        self._total_len -= self._doc_len.pop(doc_id)
        self._mean_idf = None
        return True

    # -- scoring -------------------------------------------------------------

    def _raw_idf(self, df: int) -> float:
        n = len(self._doc_len)
        return math.log(n - df + 0.5) - math.log(df + 0.5)

    def mean_idf(self) -> float:
        """Mean raw idf over the vocabulary (0.0 when empty).

        Complexity: O(distinct document frequencies), cached until the next change.
        """
        if self._mean_idf is None:
            vocabulary = len(self._postings)
            if vocabulary == 0:
                self._mean_idf = 0.0
            else:
                total = math.fsum(
                    terms * self._raw_idf(df) for df, terms in sorted(self._df_histogram.items())
                )
                self._mean_idf = total / vocabulary
        return self._mean_idf

    def idf(self, term: str) -> float:
        """Okapi idf of a term with rank-bm25's negative floor; 0.0 for unknown terms.  O(1)."""
        postings = self._postings.get(term)
        if not postings:
            return 0.0
        value = self._raw_idf(len(postings))
        return self.epsilon * self.mean_idf() if value < 0.0 else value

    def scores(
        self, query_tokens: Sequence[str], *, allow: Callable[[str], bool] | None = None
    ) -> dict[str, float]:
        """BM25 score of every document containing at least one query term.

        Input: query tokens as `bm25_tokens` returns them (the index maps them
        to its terms; repeats count), optional ``allow(doc_id)`` filter.
        Output: ``{doc_id: score}``.  Complexity: O(sum of the postings
        lengths of the distinct query terms).
        """
        n = len(self._doc_len)
        if n == 0:
            return {}
        # Postings exist only if some document has a term, so avgdl > 0 below.
        avgdl = self._total_len / n
        k1, b = self.k1, self.b
        doc_len = self._doc_len
        verdicts: dict[str, bool] = {}
        totals: dict[str, float] = {}
        for term, repeats in _term_counts(self.terms(query_tokens)).items():
            postings = self._postings.get(term)
            if not postings:
                continue
            weight = self.idf(term) * repeats
            for doc_id, tf in postings.items():
                if allow is not None:
                    verdict = verdicts.get(doc_id)
                    if verdict is None:
                        verdict = verdicts[doc_id] = allow(doc_id)
                    if not verdict:
                        continue
                norm = k1 * (1.0 - b + b * doc_len[doc_id] / avgdl)
                gain = weight * (tf * (k1 + 1.0) / (tf + norm))
                totals[doc_id] = totals.get(doc_id, 0.0) + gain
        return totals

    def search(
        self, query: str | Sequence[str], k: int, *, allow: Callable[[str], bool] | None = None
    ) -> list[tuple[str, float]]:
        """The k best documents for a query, by BM25.

        Input: query text (tokenised with `bm25_tokens`) or tokens, k >= 0,
        optional ``allow(doc_id)`` filter.  Output: up to k ``(doc_id, score)``
        pairs with score > 0, by score descending then id ascending.
        Complexity: O(P + P' log k) with P the postings of the query terms and
        P' the documents they reach.
        """
        tokens = bm25_tokens(query) if isinstance(query, str) else query
        if k <= 0:
            return []
        totals = self.scores(tokens, allow=allow)
        positive = ((-score, doc_id) for doc_id, score in totals.items() if score > 0.0)
        return [(doc_id, -negated) for negated, doc_id in heapq.nsmallest(k, positive)]
