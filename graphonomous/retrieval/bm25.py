"""BM25 moved to `graphonomous.index.bm25` (below the engine); this name stays for importers."""

from __future__ import annotations

from ..index.bm25 import BM25_B, BM25_EPSILON, BM25_K1, BM25_STEM, Bm25Index, bm25_tokens

__all__ = ["BM25_B", "BM25_EPSILON", "BM25_K1", "BM25_STEM", "Bm25Index", "bm25_tokens"]
