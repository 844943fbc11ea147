"""Similarity search answered by the database (PostgreSQL + pgvector), exact like in memory.

Rules of this module:
- `DatabaseVectorIndex` IS a `VectorIndex` to its callers (same `search`, `get`,
  `similarities`, `dimensions`): every caller of `Engine.vector_index` works unchanged on
  either backend.  A reading method added to `VectorIndex` must be overridden here too
  (the inherited one would read the empty in-memory part).
- Results equal the in-memory index's bit for bit: the database orders candidates by
  its float32 cosine, every candidate that can belong to the exact top k is fetched
  (approximate score >= k-th allowed approximate score - 2*eps, eps =
  `cosine_eps(d)`), and those are rescored with `exact_score` on the stored forms
  (`normalized_f32`), sorted by (score descending, node_id ascending).
- `allow` (a Python predicate) is applied to the fetched rows; the fetch grows 4x
  until k allowed rows and every tie within 2*eps are in (at most the whole graph).
- HNSW mode (GRAPHONOMOUS_PG_VECTOR_INDEX=hnsw) takes the same path through the
  approximate index: exactly scored, but a true neighbour the index misses is missed
  (SPEC has the measured recall@10).  A zero query is always answered exactly.  An
  approximate fetch that comes back short (the filtered index scan gave up, or the
  namespace holds fewer rows) proves nothing: the search is asked again exactly, counted
  in `exact_fallbacks` and reported as the EXACT_FALLBACK_EVENT telemetry event; so a
  namespace never gets fewer than k rows it holds because another namespace is nearer.
- Nothing is held in memory but a cache of stored forms for `get` (the engine's
  change-log sync calls `add`/`remove` for every changed node, so it never goes stale).
Layer: engine (imports embed and store only).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Final

from .. import telemetry
from ..embed import VectorIndex, exact_score
from ..embed.index import VectorLike, check_min_score, normalized_f32, sparse_scorer
from ..model import ValidationError
from ..store import VectorSearchStorage, cosine_eps
from ..store.pgvector import HNSW_EF_SEARCH_MAX

# Rows fetched by the first candidate query: at least this many, and twice k.
FIRST_FETCH: Final = 32
# Emitted when an approximate fetch came back short and the exact scan answered
# (measurements: rows asked, rows the index gave; metadata: the model).
EXACT_FALLBACK_EVENT: Final = "graphonomous.vectors.exact_fallback"
# Stored forms kept for `get` (a retrieval's result rows, fusion's BM25-only hits).
CACHE_MAX: Final = 4_096


class DatabaseVectorIndex(VectorIndex):
    """The similarity index of one embedding model, answered by the store's SQL."""

    def __init__(self, store: VectorSearchStorage, model: str, dimensions: int) -> None:
        super().__init__(dimensions, backend="pure")  # (its in-memory part stays empty)
        self._store = store
        self._model = model
        self._cache: dict[str, list[float] | None] = {}
        self.approximate = store.vector_index_mode == "hnsw"
        # Searches of this index answered exactly after a short approximate fetch.
        self.exact_fallbacks = 0

    # -- what the engine's change-log sync calls ----------------------------------------

    def add(self, node_id: str, vector: VectorLike) -> None:
        """A changed node's vector (already in the database): refresh the cache."""
        self._remember(node_id, normalized_f32(vector, self.dimensions))

    def remove(self, node_id: str) -> bool:
        """A changed node lost its vector (or left the search): drop it from the cache."""
        return self._cache.pop(node_id, None) is not None

    def bulk_load(self, items: Iterable[tuple[str, VectorLike]]) -> None:
        for node_id, vector in items:
            self.add(node_id, vector)

    def source_current(self) -> bool:
        return True  # no saved copy: the rows are the index

    # -- reads ----------------------------------------------------------------------------

    def get(self, node_id: str) -> list[float] | None:
        """The stored form of a searchable node's vector, or None.  One indexed read
        unless cached."""
        if node_id in self._cache:
            return self._cache[node_id]
        blob = self._store.vector_rows([node_id], self._model).get(node_id)
        vector = None if blob is None else normalized_f32(blob, self.dimensions)
        self._remember(node_id, vector)
        return vector

    def similarities(self, query: VectorLike, node_ids: Iterable[str]) -> dict[str, float]:
        """`VectorIndex.similarities`: the index score of each id with a stored vector, in
        the order given; the uncached ones are read in one query."""
        wanted = list(dict.fromkeys(node_ids))
        missing = [node_id for node_id in wanted if node_id not in self._cache]
        blobs = self._store.vector_rows(missing, self._model) if missing else {}
        for node_id in missing:
            blob = blobs.get(node_id)
            self._remember(node_id, None if blob is None else normalized_f32(blob, self.dimensions))
        score = sparse_scorer(normalized_f32(query, self.dimensions))
        found = {node_id: self._cache.get(node_id) for node_id in wanted}
        return {node_id: score(vector) for node_id, vector in found.items() if vector is not None}

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str) and self.get(node_id) is not None

    def _note_fallback(self, asked: int, given: int) -> None:
        self.exact_fallbacks += 1
        telemetry.emit(
            EXACT_FALLBACK_EVENT, {"asked": asked, "given": given}, {"model": self._model}
        )

    def _remember(self, node_id: str, vector: list[float] | None) -> None:
        if len(self._cache) >= CACHE_MAX:
            self._cache.clear()
        self._cache[node_id] = vector

    def search(
        self,
        query: VectorLike,
        k: int,
        *,
        allow: Callable[[str], bool] | None = None,
        min_score: float | None = None,
    ) -> list[tuple[str, float]]:
        """The k stored vectors most similar to `query`: `VectorIndex.search`'s contract
        (scores, order, zero query, `min_score` keeps the pairs scoring >= it), computed
        by the database plus an exact rescoring."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValidationError("k", f"must be a non-negative integer, got {k!r}")
        floor = check_min_score(min_score)
        vector = normalized_f32(query, self.dimensions)
        if k == 0:
            return []
        zero = not any(vector)
        # A zero query scores every vector exactly 0.0: no margin, the k smallest ids.
        eps = 0.0 if zero else cosine_eps(self.dimensions)
        approximate = self.approximate and not zero
        verdicts: dict[str, bool] = {}

        def allowed(node_id: str) -> bool:
            verdict = verdicts.get(node_id)
            if verdict is None:
                verdict = verdicts[node_id] = allow is None or allow(node_id)
            return verdict

        fetch = max(FIRST_FETCH, 2 * k)
        while True:
            through_index = approximate and fetch <= HNSW_EF_SEARCH_MAX
            rows = self._store.vector_candidates(
                self._model, vector, fetch, approximate=through_index
            )
            if through_index and len(rows) < fetch:
                self._note_fallback(fetch, len(rows))
                approximate = False  # the exact scan answers this search from here on
                continue
            # (NaN: a zero stored vector, which scores 0.0 in memory too)
            scored = [
                (0.0 if zero or score != score else score, node_id, blob)
                for node_id, score, blob in rows
            ]
            kept = [row for row in scored if allowed(row[1])]
            exhausted = len(rows) < fetch
            if len(kept) >= k or exhausted:
                cut = heapq.nlargest(k, (row[0] for row in kept))[-1] - 2.0 * eps if kept else 0.0
                # Every row not fetched scores at most the last fetched one (approximate
                # mode: of the rows the index scan reaches, nearly).
                if exhausted or not rows or min(row[0] for row in scored) < cut:
                    break
            fetch *= 4
        candidates = [row for row in kept if row[0] >= cut]
        exact = []
        for _, node_id, blob in candidates:
            stored = normalized_f32(blob, self.dimensions)
            self._remember(node_id, stored)
            exact.append((-(0.0 if zero else exact_score(vector, stored)), node_id))
        exact.sort()
        return [(node_id, -negated + 0.0) for negated, node_id in exact[:k] if -negated >= floor]
