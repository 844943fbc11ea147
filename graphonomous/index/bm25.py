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
alike), so "activities" matches "activity"; a document token joining words
with underscores (``add_column``, ``__init__``) also counts each of its parts
(``add``, ``column``; ``init``), so a question in words finds the identifier
that names it (queries keep their tokens whole: ``add_column`` asked matches
the identifier itself).  ``Bm25Index(stem=False)`` indexes the raw tokens
and then equals rank-bm25 exactly.  The negative-idf floor (``epsilon`` = 0.25) is
rank-bm25's: a term in more than half of the documents still scores a little.
``mean_idf`` would cost O(vocabulary) per change; it is computed instead from a
histogram *document frequency -> number of terms with it*, which has at most
O(sqrt(total tokens)) entries and is updated in O(1) per posting.

Memory (a small device holds 50K documents): documents and terms are
interned once as integer slots; a term's postings are two typed arrays
(document slots, term frequencies, 4 bytes each) and a document's terms one
typed array of term slots, so a posting costs ~12 bytes instead of a dict
entry (~100).  Postings keep insertion order, so scores and their dict order
equal those of a dict-of-dicts index fed the same documents.  `dump` and
`load` turn the whole index into one bytes value and back without
tokenising anything (the engine saves it in the database).

Reference: S. Robertson, H. Zaragoza, "The Probabilistic Relevance Framework:
BM25 and Beyond", FnTIR 3(4), 2009; rank-bm25 (D. Brown), ``BM25Okapi``.
"""

from __future__ import annotations

import functools
import math
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Final, TypeAlias

from ..embed import tokenize
from ..embed.vectors import section_head, unpack_sections
from .maxscore import Scoring, Term, norms_of
from .maxscore import top_k as maxscore_top_k
from .stem import light_stem

BM25_K1: Final = 1.5
BM25_B: Final = 0.75
# rank-bm25's floor for negative idf, as a fraction of the vocabulary's mean idf.
BM25_EPSILON: Final = 0.25
# Light stemming of documents and queries (`stem.light_stem`); measured on the
# LoCoMo dev half: BM25 R@5 0.445 -> see SPEC "Retrieval quality".
BM25_STEM: Final = True
_STEM_CACHE_SIZE: Final = 1 << 16
# Contexts (`within`) kept until the next change: one per group of people a
# question names; each holds one int per distinct term of its documents.
_CONTEXT_CACHE_SIZE: Final = 8
# Postings whose impacts (8 bytes each) `top_k` keeps between queries until the
# next change: the common words recur in most queries; 4 MB at most.
_IMPACT_CACHE_POSTINGS: Final = 500_000


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


@functools.lru_cache(maxsize=_STEM_CACHE_SIZE)
def identifier_parts(token: str) -> tuple[str, ...]:
    """The stemmed words of an underscore-joined token (`add_column` -> add, column;
    `__init__` -> init); () for a token without an underscore.  O(len(token))."""
    if "_" not in token:
        return ()
    parts = [part for part in token.split("_") if part]
    if parts == [token]:
        return ()
    return tuple(light_stem(part) for part in parts)


def _term_counts(tokens: Iterable[str]) -> dict[str, int]:
    """Token -> count, keyed in first-occurrence order (a deterministic sum order)."""
    counts: dict[str, int] = {}
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    return counts


# Typed-array element type of every slot, length and frequency (4 bytes).
_SLOT: Final = "I"
# /2: the df histogram is saved (a /1 copy is rebuilt once and saved again);
# /3: documents' identifier parts are indexed (an older copy is rebuilt).
_DUMP_FORMAT: Final = "graphonomous-bm25/3"
# Bytes per piece of `Bm25Index.dump_parts`: one piece is what a saver holds at a time;
# 1 MB keeps that small next to an index of tens of MB while a write call moves many
# short postings at once.
_DUMP_PIECE_BYTES: Final = 1 << 20
# Stands for "still in the loaded dump" in the postings and document-term lists:
# `load` slices a term's postings (or a document's terms) out of the dump's
# flat arrays only when something reads them, so a fresh process answering one
# query copies the postings of its query terms, not all of them.
_LAZY: Final = array(_SLOT)


class _Saved:
    """The flat arrays of a loaded dump and where each term's / document's run starts."""

    def __init__(
        self,
        lengths: array[int],
        docs: array[int],
        tfs: array[int],
        term_counts: array[int],
        doc_terms: array[int],
    ) -> None:
        self.lengths = lengths
        self.docs = docs
        self.tfs = tfs
        self.post_start = array("q", accumulate(lengths, initial=0))
        self.doc_terms = doc_terms
        self.doc_start = array("q", accumulate(term_counts, initial=0))


def _pieces(head: bytes, groups: Sequence[Sequence[array[int]]]) -> Iterator[bytes]:
    """`head`, then every array's bytes of every group in order, in pieces of about
    `_DUMP_PIECE_BYTES` (many short postings coalesced; a long one is one piece)."""
    buffer = bytearray(head)
    for group in groups:
        for values in group:
            buffer += memoryview(values).cast("B")
            if len(buffer) >= _DUMP_PIECE_BYTES:
                yield bytes(buffer)
                buffer.clear()
    if buffer:
        yield bytes(buffer)


class Bm25Index:
    """An incrementally maintained Okapi BM25 index of short documents.

    ``add`` / ``remove`` keep the postings, document lengths and the
    document-frequency histogram current; ``search`` ranks by BM25.  Not
    thread-safe by itself: the engine calls it under its lock.
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
        # documents: id <-> slot; a removed document's slot is reused
        self._doc_ids: list[str | None] = []
        self._doc_slot: dict[str, int] = {}
        self._free: list[int] = []
        self._doc_len = array(_SLOT)  # slot -> length (0 for free slots)
        self._doc_terms: list[array[int] | None] = []  # slot -> its term slots (_LAZY: saved)
        # terms: text <-> slot; postings as parallel typed arrays per term slot
        self._terms: list[str] = []
        self._term_slot: dict[str, int] = {}
        self._post_docs: list[array[int]] = []  # (_LAZY: in `_saved`)
        self._post_tfs: list[array[int]] = []
        self._saved: _Saved | None = None
        self._vocabulary = 0  # terms with at least one posting
        self._total_len = 0
        # document frequency -> how many terms have exactly that frequency
        self._df_histogram: dict[int, int] = {}
        self._mean_idf: float | None = None
        # term slot -> (>= its largest tf, <= its shortest document's length):
        # MaxScore's bound inputs, computed on first use; adds keep them
        # current, removals leave them (a stale bound is still a bound).
        self._bounds: dict[int, tuple[int, int]] = {}
        # every document slot's length normalisation for the current lengths,
        # keyed by `_version` (bumped by every add and remove)
        self._version = 0
        self._norms: tuple[int, array[float]] | None = None
        # term slot -> its postings' impacts for `_norms` (maxscore.Term.impacts),
        # dropped with the norms, bounded by `_IMPACT_CACHE_POSTINGS`
        self._impacts: dict[int, array[float]] = {}
        self._impact_postings = 0
        # document slots -> its `Bm25Context` for `_contexts_version`: questions about
        # the same people recur, and a context costs a pass over its documents' terms
        self._contexts: dict[tuple[int, ...], Bm25Context] = {}
        self._contexts_version = 0

    # -- contents ------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._doc_slot)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_slot

    @property
    def vocabulary_size(self) -> int:
        return self._vocabulary

    def terms(self, tokens: Iterable[str]) -> list[str]:
        """The index terms of tokens (`bm25_tokens`): stemmed when ``stem`` is on.  O(n)."""
        if not self.stem:
            return list(tokens)
        return [_cached_stem(token) for token in tokens]

    def document_terms(self, tokens: Iterable[str]) -> list[str]:
        """A document's index terms: `terms`, plus the `identifier_parts` of each
        token when stemming is on (module docstring).  O(n)."""
        if not self.stem:
            return list(tokens)
        out: list[str] = []
        for token in tokens:
            out.append(_cached_stem(token))
            out.extend(identifier_parts(token))
        return out

    def _postings(self, slot: int) -> tuple[array[int], array[int]]:
        """(document slots, term frequencies) of a term slot, sliced from the dump on
        first use.  O(1) when materialised, else O(df)."""
        docs = self._post_docs[slot]
        if docs is _LAZY:
            saved = self._saved
            assert saved is not None
            start, end = saved.post_start[slot], saved.post_start[slot + 1]
            docs = self._post_docs[slot] = saved.docs[start:end]
            self._post_tfs[slot] = saved.tfs[start:end]
        return docs, self._post_tfs[slot]

    def _df_of(self, slot: int) -> int:
        docs = self._post_docs[slot]
        if docs is _LAZY:
            assert self._saved is not None
            return self._saved.lengths[slot]
        return len(docs)

    def _terms_of(self, doc: int) -> array[int] | None:
        """The term slots of a document slot (None: a free slot), sliced on first use."""
        slots = self._doc_terms[doc]
        if slots is _LAZY:
            saved = self._saved
            assert saved is not None
            slots = saved.doc_terms[saved.doc_start[doc] : saved.doc_start[doc + 1]]
            self._doc_terms[doc] = slots
        return slots

    def _bump_histogram(self, df: int, delta: int) -> None:
        if df <= 0:
            return
        count = self._df_histogram.get(df, 0) + delta
        if count:
            self._df_histogram[df] = count
        else:
            del self._df_histogram[df]

    def _term_slot_of(self, term: str) -> int:
        slot = self._term_slot.get(term)
        if slot is None:
            slot = self._term_slot[term] = len(self._terms)
            self._terms.append(sys.intern(term))
            self._post_docs.append(array(_SLOT))
            self._post_tfs.append(array(_SLOT))
        return slot

    def add(self, doc_id: str, text: str) -> None:
        """Index (or re-index) one document.

        Input: an id and its text.  A document with no terms is still counted
        (it has length 0), as rank-bm25 counts empty documents.
        Complexity: O(len(text)).
        """
        self._add(doc_id, text, histogram=True)

    def _add(self, doc_id: str, text: str, *, histogram: bool) -> None:
        if doc_id in self._doc_slot:
            self.remove(doc_id)
        counts = _term_counts(self.document_terms(bm25_tokens(text)))
        if self._free:
            doc = self._free.pop()
            self._doc_ids[doc] = doc_id
        else:
            doc = len(self._doc_ids)
            self._doc_ids.append(doc_id)
            self._doc_len.append(0)
            self._doc_terms.append(None)
        self._doc_slot[doc_id] = doc
        slots = array(_SLOT)
        length = sum(counts.values())
        bounds = self._bounds
        for term, tf in counts.items():
            slot = self._term_slot_of(term)
            docs, tfs = self._postings(slot)
            old_df = len(docs)
            if old_df == 0:
                self._vocabulary += 1
            docs.append(doc)
            tfs.append(tf)
            if histogram:
                self._bump_histogram(old_df, -1)
                self._bump_histogram(old_df + 1, +1)
            slots.append(slot)
            bound = bounds.get(slot)
            if bound is not None:
                bounds[slot] = (max(bound[0], tf), min(bound[1], length))
        self._doc_terms[doc] = slots
        self._doc_len[doc] = length
        self._total_len += length
        self._mean_idf = None
        self._version += 1

    def add_many(self, documents: Iterable[tuple[str, str]]) -> None:
        """`add` for each (id, text) pair; the df histogram is recounted once at the end.

        Complexity: O(total text length + vocabulary).
        """
        for doc_id, text in documents:
            if doc_id in self._doc_slot:
                self.remove(doc_id)
            self._add(doc_id, text, histogram=False)
        self._recount_histogram()

    def _recount_histogram(self) -> None:
        histogram: dict[int, int] = {}
        for slot in range(len(self._post_docs)):
            df = self._df_of(slot)
            if df:
                histogram[df] = histogram.get(df, 0) + 1
        self._df_histogram = histogram
        self._mean_idf = None

    def remove(self, doc_id: str) -> bool:
        """Drop a document (e.g. deleted or soft-forgotten).  Returns whether it was present.

        Complexity: O(sum of the postings lengths of the document's terms),
        C-speed scans of typed arrays.
        """
        doc = self._doc_slot.pop(doc_id, None)
        if doc is None:
            return False
        slots = self._terms_of(doc)
        assert slots is not None
        for slot in slots:
            docs, tfs = self._postings(slot)
            old_df = len(docs)
            position = docs.index(doc)
            del docs[position]
            del tfs[position]
            self._bump_histogram(old_df, -1)
            self._bump_histogram(old_df - 1, +1)
            if old_df == 1:
                self._vocabulary -= 1
        self._total_len -= self._doc_len[doc]
        self._doc_len[doc] = 0
        self._doc_terms[doc] = None
        self._doc_ids[doc] = None
        self._free.append(doc)
        self._mean_idf = None
        self._version += 1
        return True

    # -- scoring -------------------------------------------------------------

    def _raw_idf(self, df: int) -> float:
        n = len(self._doc_slot)
        return math.log(n - df + 0.5) - math.log(df + 0.5)

    def mean_idf(self) -> float:
        """Mean raw idf over the vocabulary (0.0 when empty).

        Complexity: O(distinct document frequencies), cached until the next change.
        """
        if self._mean_idf is None:
            vocabulary = self._vocabulary
            if vocabulary == 0:
                self._mean_idf = 0.0
            else:
                total = math.fsum(
                    terms * self._raw_idf(df) for df, terms in sorted(self._df_histogram.items())
                )
                self._mean_idf = total / vocabulary
        return self._mean_idf

    def _df(self, term: str) -> int:
        slot = self._term_slot.get(term)
        return 0 if slot is None else self._df_of(slot)

    def document_frequency(self, term: str) -> int:
        """How many indexed documents hold `term` (a term as `terms` returns it).  O(1)."""
        return self._df(term)

    def idf(self, term: str) -> float:
        """Okapi idf of a term with rank-bm25's negative floor; 0.0 for unknown terms.  O(1)."""
        df = self._df(term)
        if not df:
            return 0.0
        value = self._raw_idf(df)
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
        n = len(self._doc_slot)
        if n == 0:
            return {}
        # Postings exist only if some document has a term, so avgdl > 0 below.
        terms = self._query_terms(query_tokens, self._df_of, self.idf)
        return self._posting_scores(terms, self._total_len / n, allow)

    def _query_terms(
        self, query_tokens: Sequence[str], df: Callable[[int], int], idf: Callable[[str], float]
    ) -> list[tuple[int, float]]:
        """(term slot, idf × repeats) of the distinct query terms with df > 0, in query order."""
        terms = []
        for term, repeats in _term_counts(self.terms(query_tokens)).items():
            slot = self._term_slot.get(term)
            if slot is not None and df(slot):
                terms.append((slot, idf(term) * repeats))
        return terms

    def _posting_scores(
        self, terms: Sequence[tuple[int, float]], avgdl: float, allow: Callable[[str], bool] | None
    ) -> dict[str, float]:
        """Every posting of `terms` scored with mean length `avgdl` (the reference sums)."""
        k1, b = self.k1, self.b
        doc_len, doc_ids = self._doc_len, self._doc_ids
        verdicts: dict[int, bool] = {}
        totals: dict[int, float] = {}
        for slot, weight in terms:
            for doc, tf in zip(*self._postings(slot), strict=True):
                if allow is not None:
                    verdict = verdicts.get(doc)
                    if verdict is None:
                        doc_id = doc_ids[doc]
                        assert doc_id is not None
                        verdict = verdicts[doc] = allow(doc_id)
                    if not verdict:
                        continue
                norm = k1 * (1.0 - b + b * doc_len[doc] / avgdl)
                gain = weight * (tf * (k1 + 1.0) / (tf + norm))
                totals[doc] = totals.get(doc, 0.0) + gain
        # Every slot in `totals` holds a live document (a removed one left the postings).
        live_ids = map(doc_ids.__getitem__, totals)
        return dict(zip(live_ids, totals.values(), strict=True))  # type: ignore[arg-type]

    def _term_bound(self, slot: int) -> tuple[int, int]:
        """(max tf, min document length) of a term's postings, cached.  O(df) once."""
        bound = self._bounds.get(slot)
        if bound is None:
            docs, tfs = self._postings(slot)
            bound = self._bounds[slot] = (max(tfs), min(map(self._doc_len.__getitem__, docs)))
        return bound

    def top_k(
        self,
        query_tokens: Sequence[str],
        k: int,
        *,
        allow: Callable[[str], bool] | None = None,
        also: Iterable[str] = (),
    ) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """The k best documents and the scores of ``also``, exactly as `scores` gives them.

        Input: query tokens (as for `scores`), k, optional ``allow(doc_id)``,
        document ids whose scores are wanted as well.  Output: ``(hits,
        extra)`` — hits = the k best ``(doc_id, score)`` with score > 0, by
        score descending then id ascending (what `search` returns), extra =
        ``{doc_id: score}`` for each id of ``also`` (0.0 without a query term,
        unknown or not allowed) — every float equal to `scores`' bit for bit.
        Complexity: MaxScore pruning (`maxscore.top_k`): the postings of the
        rare terms are scored, the common terms' only scanned for candidates.
        """
        n = len(self._doc_slot)
        wanted = list(dict.fromkeys(also))
        if n == 0 or self._total_len == 0:  # no postings at all
            return [], {doc_id: 0.0 for doc_id in wanted}
        avgdl = self._total_len / n
        if self._norms is None or self._norms[0] != self._version:
            self._norms = (self._version, norms_of(self.k1, self.b, avgdl, self._doc_len))
            self._impacts, self._impact_postings = {}, 0
        scoring = Scoring(self.k1, self.b, avgdl, self._norms[1])
        terms = self._query_terms(query_tokens, self._df_of, self.idf)

        def remember(i: int, impacts: array[float]) -> None:
            if self._impact_postings + len(impacts) > _IMPACT_CACHE_POSTINGS:
                self._impacts, self._impact_postings = {}, 0
            self._impacts[terms[i][0]] = impacts
            self._impact_postings += len(impacts)

        return self._maxscore(terms, scoring, k, allow, wanted, self._impacts, remember)

    def _maxscore(
        self,
        terms: Sequence[tuple[int, float]],
        scoring: Scoring,
        k: int,
        allow: Callable[[str], bool] | None,
        wanted: Sequence[str],
        impacts: dict[int, array[float]],
        remember: Callable[[int, array[float]], None] | None,
    ) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """`maxscore.top_k` over `terms` ((slot, weight)) with cached `impacts` per slot."""
        prepared = []
        for slot, weight in terms:
            docs, tfs = self._postings(slot)
            max_tf, min_len = self._term_bound(slot)
            prepared.append(Term(weight, docs, tfs, max_tf, min_len, impacts.get(slot)))
        doc_ids, doc_slot = self._doc_ids, self._doc_slot
        hits, extra = maxscore_top_k(
            prepared,
            scoring,
            k,
            doc_ids,
            allow=None if allow is None else lambda doc: allow(doc_ids[doc]),  # type: ignore[arg-type]
            also=[doc_slot[doc_id] for doc_id in wanted if doc_id in doc_slot],
            remember=remember,
        )
        return hits, {doc_id: extra.get(doc_slot.get(doc_id, -1), 0.0) for doc_id in wanted}

    def search(
        self, query: str | Sequence[str], k: int, *, allow: Callable[[str], bool] | None = None
    ) -> list[tuple[str, float]]:
        """The k best documents for a query, by BM25.

        Input: query text (tokenised with `bm25_tokens`) or tokens, k >= 0,
        optional ``allow(doc_id)`` filter.  Output: up to k ``(doc_id, score)``
        pairs with score > 0, by score descending then id ascending.
        Complexity: `top_k` (MaxScore); at most O(P + P' log k) with P the
        postings of the query terms and P' the documents they reach.
        """
        tokens = bm25_tokens(query) if isinstance(query, str) else query
        if k <= 0:
            return []
        return self.top_k(tokens, k, allow=allow)[0]

    def term_counts(self, doc_ids: Iterable[str]) -> dict[str, int]:
        """How many of `doc_ids` hold each index term (unknown ids hold none).

        Complexity: O(Σ distinct terms of the documents).
        """
        counts: dict[str, int] = {}
        for doc_id in doc_ids:
            doc = self._doc_slot.get(doc_id)
            held = None if doc is None else self._terms_of(doc)
            for slot in held or ():
                term = self._terms[slot]
                counts[term] = counts.get(term, 0) + 1
        return counts

    def shared_terms(self, doc_id: str, terms: Iterable[str]) -> frozenset[str]:
        """The index terms among `terms` (already `terms()`-mapped) that a document holds.

        Empty for an unknown document.  Complexity: O(len(terms) + the document's
        distinct terms).
        """
        doc = self._doc_slot.get(doc_id)
        held = None if doc is None else self._terms_of(doc)
        if not held:
            return frozenset()
        slots = set(held)
        return frozenset(term for term in terms if self._term_slot.get(term, -1) in slots)

    def within(self, doc_ids: Iterable[str]) -> Bm25Context:
        """A view scoring with the statistics of `doc_ids` only (`Bm25Context`).

        Complexity: O(Σ distinct terms of the documents) the first time, O(len(doc_ids))
        while the index does not change (the last `_CONTEXT_CACHE_SIZE` are kept).
        """
        slots = tuple(sorted({self._doc_slot[d] for d in doc_ids if d in self._doc_slot}))
        if self._contexts_version != self._version:
            self._contexts, self._contexts_version = {}, self._version
        context = self._contexts.get(slots)
        if context is None:
            if len(self._contexts) >= _CONTEXT_CACHE_SIZE:
                self._contexts = {}
            context = self._contexts[slots] = Bm25Context(self, slots)
        return context

    # -- persistence -------------------------------------------------------------

    def memory_bytes(self) -> dict[str, int]:
        """Bytes held per structure (typed arrays exactly, containers by `sys.getsizeof`)."""
        self._materialize()
        size = sys.getsizeof
        return {
            "postings": sum(a.buffer_info()[1] * a.itemsize for a in self._post_docs)
            + sum(a.buffer_info()[1] * a.itemsize for a in self._post_tfs)
            + 2 * sum(size(a) - a.buffer_info()[1] * a.itemsize for a in self._post_docs),
            "doc_terms": sum(size(a) for a in self._doc_terms if a is not None),
            "ids": size(self._doc_ids) + size(self._doc_slot) + size(self._doc_len),
            "terms": size(self._terms) + size(self._term_slot) + sum(map(size, self._terms)),
        }

    def dump(self) -> bytes:
        """The whole index as bytes (`load` restores it exactly).  O(size)."""
        return b"".join(self.dump_parts()[1])

    def dump_parts(self) -> tuple[int, Iterator[bytes]]:
        """`dump` as its size and its bytes in pieces of about `_DUMP_PIECE_BYTES`
        (their concatenation is `dump`), read from the postings and document-term
        arrays as the pieces are taken: a saver writing them in turn holds one piece,
        not a flat copy of the postings nor the joined value.  The index must not
        change until the pieces are taken (the engine holds its lock).  O(size)."""
        self._materialize()
        lengths = array(_SLOT, (len(a) for a in self._post_docs))
        term_counts = array(_SLOT, (0 if a is None else len(a) for a in self._doc_terms))
        doc_terms = [a for a in self._doc_terms if a is not None]
        groups: list[Sequence[array[int]]] = [
            [lengths],
            self._post_docs,
            self._post_tfs,
            [self._doc_len],
            [term_counts],
            doc_terms,
        ]
        header = {
            "format": _DUMP_FORMAT,
            "byteorder": sys.byteorder,
            "params": [self.k1, self.b, self.epsilon, self.stem],
            "doc_ids": self._doc_ids,
            "free": self._free,
            "terms": self._terms,
            "total_len": self._total_len,
            "df_histogram": sorted(self._df_histogram.items()),
        }
        sizes = [sum(len(a) for a in group) * lengths.itemsize for group in groups]
        head = section_head(header, sizes)
        return len(head) + sum(sizes), _pieces(head, groups)

    @classmethod
    def load(cls, data: bytes) -> Bm25Index | None:
        """An index from `dump` bytes; None when they are not a readable dump."""
        unpacked = unpack_sections(data)
        if unpacked is None:
            return None
        header, blobs = unpacked
        if header.get("format") != _DUMP_FORMAT or header.get("byteorder") != sys.byteorder:
            return None
        k1, b, epsilon, stem = header["params"]
        index = cls(k1=k1, b=b, epsilon=epsilon, stem=stem)
        lengths, docs, tfs, doc_len, term_counts, doc_terms = (_typed(blob) for blob in blobs)
        index._doc_ids = header["doc_ids"]
        index._doc_slot = {d: slot for slot, d in enumerate(index._doc_ids) if d is not None}
        index._free = header["free"]
        index._doc_len = doc_len
        index._total_len = header["total_len"]
        index._terms = header["terms"]
        index._term_slot = {term: slot for slot, term in enumerate(index._terms)}
        index._saved = _Saved(lengths, docs, tfs, term_counts, doc_terms)
        index._post_docs = [_LAZY] * len(lengths)
        index._post_tfs = [_LAZY] * len(lengths)
        index._doc_terms = [None if d is None else _LAZY for d in index._doc_ids]
        index._vocabulary = len(lengths) - lengths.tolist().count(0)
        histogram = header.get("df_histogram")
        if isinstance(histogram, list):
            index._df_histogram = {int(df): int(terms) for df, terms in histogram}
        else:  # a dump written before the histogram was saved
            index._recount_histogram()
        return index

    def _materialize(self) -> None:
        """Slice every postings list and document-term list out of the dump."""
        if self._saved is None:
            return
        for slot in range(len(self._post_docs)):
            self._postings(slot)
        for doc in range(len(self._doc_terms)):
            self._terms_of(doc)
        self._saved = None


class Bm25Context:
    """BM25 with the statistics of a context: a subset of an index's documents.

    N, the document frequencies, avgdl and the mean idf of the negative-idf
    floor are those of the context's documents, exactly what a `Bm25Index`
    holding only them would compute; any document of the index can be scored
    with them (its own tf and length).  A term no context document holds
    carries no evidence (idf 0), as in an index without it.  Why: in a store
    pooling several conversations, a word one conversation talks about all
    the time (its topic, its speakers' names) is rare in the pool, so global
    idf lets it outweigh the words that tell that conversation's turns apart;
    inside the context the question is about, it weighs what it weighs there.
    Reference: the local collection statistics of distributed retrieval
    (J. Callan, "Distributed Information Retrieval", 2000, §5).  Built by
    `Bm25Index.within`; valid until the index changes (one retrieval).
    """

    def __init__(self, index: Bm25Index, slots: Sequence[int]) -> None:
        self._index = index
        self.k1, self.b, self.epsilon = index.k1, index.b, index.epsilon
        self._n = len(slots)
        self._total_len = sum(index._doc_len[slot] for slot in slots)
        df: dict[int, int] = {}
        for doc in slots:
            for term in index._terms_of(doc) or ():
                df[term] = df.get(term, 0) + 1
        self._df = df
        histogram: dict[int, int] = {}
        for count in df.values():
            histogram[count] = histogram.get(count, 0) + 1
        total = math.fsum(terms * self._raw_idf(d) for d, terms in sorted(histogram.items()))
        self._mean_idf = total / len(df) if df else 0.0
        self._norms: array[float] | None = None

    def __len__(self) -> int:
        return self._n

    def terms(self, tokens: Iterable[str]) -> list[str]:
        """The index's terms of `tokens` (`Bm25Index.terms`).  O(n)."""
        return self._index.terms(tokens)

    def _raw_idf(self, df: int) -> float:
        return math.log(self._n - df + 0.5) - math.log(df + 0.5)

    def idf(self, term: str) -> float:
        """Okapi idf in the context with rank-bm25's floor; 0.0 for a term it lacks.  O(1)."""
        slot = self._index._term_slot.get(term)
        df = 0 if slot is None else self._df.get(slot, 0)
        if not df:
            return 0.0
        value = self._raw_idf(df)
        return self.epsilon * self._mean_idf if value < 0.0 else value

    def scores(
        self, query_tokens: Sequence[str], *, allow: Callable[[str], bool] | None = None
    ) -> dict[str, float]:
        """BM25 in the context of every allowed document holding a query term it weighs.

        As `Bm25Index.scores` (same sums in the same order), with the context's
        statistics.  Complexity: O(postings of the distinct query terms).
        """
        if self._n == 0 or self._total_len == 0:
            return {}
        terms = self._index._query_terms(query_tokens, self._df_of, self.idf)
        return self._index._posting_scores(terms, self._total_len / self._n, allow)

    def _df_of(self, slot: int) -> int:
        return self._df.get(slot, 0)

    def top_k(
        self,
        query_tokens: Sequence[str],
        k: int,
        *,
        allow: Callable[[str], bool] | None = None,
        also: Iterable[str] = (),
    ) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """`Bm25Index.top_k` with the context's statistics, equal to `scores` bit for bit.

        Complexity: MaxScore (`maxscore.top_k`), the length normalisations of
        every document computed once per context (O(N)).
        """
        index = self._index
        wanted = list(dict.fromkeys(also))
        if self._n == 0 or self._total_len == 0:
            return [], {doc_id: 0.0 for doc_id in wanted}
        avgdl = self._total_len / self._n
        if self._norms is None:
            self._norms = norms_of(self.k1, self.b, avgdl, index._doc_len)
        scoring = Scoring(self.k1, self.b, avgdl, self._norms)
        terms = index._query_terms(query_tokens, self._df_of, self.idf)
        return index._maxscore(terms, scoring, k, allow, wanted, {}, None)


# What retrieval scores keywords with: the whole index or a context of it.
KeywordIndex: TypeAlias = Bm25Index | Bm25Context


def _typed(blob: bytes | memoryview) -> array[int]:
    values = array(_SLOT)
    values.frombytes(blob)
    return values
