"""Text embeddings and exact vector similarity.

Default: `HashingEmbedder` (deterministic, stdlib only).  Optional: a real
sentence-transformers model through `get_embedder`.  `VectorIndex` answers
exact top-k cosine queries in pure Python or with NumPy when available.
Importing this package imports neither NumPy nor any model library.
"""

from __future__ import annotations

from graphonomous.embed.base import EMBEDDER_ALIAS_ENV, EMBEDDER_ENV, Embedder, get_embedder
from graphonomous.embed.hashing import HashingEmbedder, tokenize
from graphonomous.embed.index import VectorIndex, exact_score
from graphonomous.embed.vectors import (
    NO_NUMPY_ENV,
    cosine,
    dot,
    l2_norm,
    l2_normalize,
    numpy_available,
    pack_f32,
    to_float32,
    unpack_f32,
)

__all__ = [
    "EMBEDDER_ALIAS_ENV",
    "EMBEDDER_ENV",
    "NO_NUMPY_ENV",
    "Embedder",
    "HashingEmbedder",
    "VectorIndex",
    "cosine",
    "dot",
    "exact_score",
    "get_embedder",
    "l2_norm",
    "l2_normalize",
    "numpy_available",
    "pack_f32",
    "to_float32",
    "tokenize",
    "unpack_f32",
]
