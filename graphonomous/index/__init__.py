"""In-memory text indexes below the engine: BM25 ranking (exact MaxScore top-k), stemmer.

Layer: imports only `model` and `embed` (the tokenizer).  The engine owns the
instances; retrieval reads them through the engine.
"""

from __future__ import annotations

from .bm25 import BM25_B, BM25_EPSILON, BM25_K1, BM25_STEM, Bm25Index, bm25_tokens
from .stem import light_stem

__all__ = [
    "BM25_B",
    "BM25_EPSILON",
    "BM25_K1",
    "BM25_STEM",
    "Bm25Index",
    "bm25_tokens",
    "light_stem",
]
