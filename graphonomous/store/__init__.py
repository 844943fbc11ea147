"""SQLite persistence: schema, migrations, CRUD, batch apply."""

from __future__ import annotations

from .batch import BatchError, BatchResult, apply_batch, merge_into
from .open import open_store, storage_url_from_env
from .pgvector import cosine_eps
from .postgres import is_postgres_url
from .protocol import GraphStorage, VectorSearchStorage
from .schema import SCHEMA_VERSION
from .sqlite import Store, StoreError

__all__ = [
    "SCHEMA_VERSION",
    "BatchError",
    "BatchResult",
    "GraphStorage",
    "Store",
    "StoreError",
    "VectorSearchStorage",
    "apply_batch",
    "cosine_eps",
    "is_postgres_url",
    "merge_into",
    "open_store",
    "storage_url_from_env",
]
