"""The storage interface the engine talks to: what a backend must offer.

Rules of this module:
- Only types and signatures; no SQL and nothing SQLite-specific (no
  connections, cursors, PRAGMAs, row objects).  `Store` (store/sqlite.py) is
  the one implementation today; a PostgreSQL backend implements the same
  protocol (its change log can be a table written by triggers too, its
  fingerprint a transaction id) and nothing above the engine changes.
- Every method is what `Store` already does; see its docstrings for the
  contracts (transactions, ordering, missing ids).
- Bookkeeping tables of learning and ingestion (outcomes, goals, revisions,
  source_files, ...) still reach SQL through `Store.execute` / `Store.query`;
  every statement on nodes/edges is a named `Store` method (store/sqlite.py,
  store/queries.py), not yet listed in this protocol.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from ..model import Edge, Node


@runtime_checkable
class GraphStorage(Protocol):
    """Nodes, edges, embeddings, the change log and saved derived indexes."""

    path: str
    checkpoint_refusal: str | None
    readers_block_vacuum: bool
    # The namespace every statement of this store is bound to (SPEC §3.4).
    namespace: str

    # -- lifetime, locking, transactions ------------------------------------------------
    @property
    def lock(self) -> threading.RLock: ...

    def close(self) -> None: ...

    def transaction(self, *, retry: bool = True) -> AbstractContextManager[None]: ...

    def write_refusal(self) -> str | None: ...

    def try_write(self, write: Callable[[], None], wait_ms: int = ...) -> bool: ...

    def read_snapshot(self) -> AbstractContextManager[None]: ...

    @property
    def in_transaction(self) -> bool: ...

    def after_commit(self, callback: Callable[[], None]) -> None: ...

    def on_begin(self, listener: Callable[[], None]) -> None: ...

    def on_commit(self, listener: Callable[[], None]) -> None: ...

    def fingerprint(self) -> tuple[int, int]: ...

    # -- change log and derived indexes --------------------------------------------------
    def change_generation(self) -> int: ...

    def changes_since(
        self, generation: int, model: str | None = None
    ) -> tuple[int, list[str] | None]: ...

    def index_rows(
        self, node_ids: Sequence[str], model: str
    ) -> list[tuple[str, str, bool, bytes | None]]: ...

    def live_texts(self) -> list[tuple[str, str]]: ...

    def iter_live_texts(self) -> Iterator[tuple[str, str]]: ...

    def live_ids_without_embedding(self, model: str) -> list[str]: ...

    def prune_change_log(self, keep: int = ...) -> int: ...

    def erase_change_traces(self, node_id: str) -> None: ...
    def scrub_obstacles(self) -> list[dict[str, str]]: ...

    def load_derived(self, name: str, model: str) -> tuple[int, bytes] | None: ...

    def derived_nonce(self, name: str, model: str) -> bytes | None: ...

    def load_derived_sections(
        self, name: str, model: str, indices: Sequence[int]
    ) -> list[bytes] | None: ...

    def save_derived_sections(
        self,
        name: str,
        model: str,
        generation: int,
        header: bytes,
        sections: Iterable[bytes | memoryview],
    ) -> bool: ...

    def save_derived(self, name: str, model: str, generation: int, data: bytes) -> bool: ...

    def save_derived_parts(
        self,
        name: str,
        model: str,
        generation: int,
        size: int,
        parts: Iterable[bytes | memoryview],
    ) -> bool: ...

    # -- nodes ------------------------------------------------------------------------------
    def insert_node(self, node: Node) -> None: ...

    def get_node(self, node_id: str) -> Node | None: ...

    def require_node(self, node_id: str, *, include_forgotten: bool = False) -> Node: ...

    def get_nodes(self, node_ids: Sequence[str]) -> dict[str, Node]: ...

    def update_node(self, node_id: str, **fields: Any) -> None: ...

    def bump_access(self, node_ids: Sequence[str], now: str) -> None: ...

    def delete_node(self, node_id: str) -> int: ...

    def delete_nodes(self, node_ids: Sequence[str]) -> int: ...

    def list_nodes(
        self,
        *,
        node_type: str | None = None,
        timescale: str | None = None,
        agent_id: str | None = None,
        min_confidence: float | None = None,
        max_confidence: float | None = None,
        forgotten: bool | None = False,
        created_after: str | None = None,
        created_before: str | None = None,
        order: str = "created",
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Node]: ...

    def count_nodes(self, **filters: Any) -> int: ...

    def node_ids(self, **filters: Any) -> list[str]: ...

    def live_node_facts(self) -> list[tuple[str, float, str]]: ...

    # -- embeddings ---------------------------------------------------------------------------
    def set_embedding(self, node_id: str, blob: bytes, model: str) -> None: ...

    def delete_embeddings(self, node_ids: Sequence[str]) -> None: ...

    def get_embedding(self, node_id: str, model: str | None = None) -> bytes | None: ...

    def iter_embeddings(
        self, model: str, *, live_only: bool = True, searchable_only: bool = False
    ) -> list[tuple[str, bytes]]: ...

    def embedding_pages(
        self, model: str, *, searchable_only: bool = ..., page: int = ...
    ) -> Iterator[list[tuple[str, bytes]]]: ...

    def embedding_counts(self) -> dict[str, int]: ...

    # -- edges ----------------------------------------------------------------------------------
    def insert_edge(self, edge: Edge) -> None: ...

    def get_edge(self, edge_id: str) -> Edge | None: ...

    def find_edge(self, source_id: str, target_id: str, relationship: str) -> Edge | None: ...

    def upsert_edge(self, edge: Edge, stated: Collection[str] = ...) -> tuple[str, bool]: ...

    def update_edge(self, edge_id: str, **fields: Any) -> None: ...

    def delete_edge(self, edge_id: str) -> None: ...

    def edges_of(
        self, node_id: str, direction: str = "both", relationship: str | None = None
    ) -> list[Edge]: ...

    def edges_touching(self, node_ids: Iterable[str]) -> list[Edge]: ...

    def list_edges_between(self, node_ids: Iterable[str]) -> list[Edge]: ...

    def list_edges(
        self,
        *,
        relationship: str | None = None,
        agent_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Edge]: ...

    def edges_without_metadata(self) -> list[Edge]: ...

    def count_edges(self) -> int: ...

    # -- audit ------------------------------------------------------------------------------------
    def audit(
        self, at: str, action: str, subject_id: str | None, details: dict[str, Any]
    ) -> None: ...

    def audit_entries(
        self, subject_id: str | None = None, since: str | None = None
    ) -> list[dict[str, Any]]: ...


@runtime_checkable
class VectorSearchStorage(Protocol):
    """A backend that answers similarity search itself (PostgreSQL + pgvector).

    `vector_candidates` returns ``(node_id, approximate cosine, stored BLOB)`` of the
    `limit` best live searchable vectors of `model`, best first; the approximate
    cosine is within `cosine_eps(len(query))` of the exact index score (exact mode),
    and the engine rescores the candidates exactly (engine/db_vectors.py).  Inside a
    write transaction both reads see committed rows only (never the transaction's own
    writes), like the in-memory index.
    """

    vector_index_mode: str

    def vector_candidates(
        self, model: str, query: Sequence[float], limit: int, *, approximate: bool
    ) -> list[tuple[str, float, bytes]]: ...

    def vector_rows(self, node_ids: Sequence[str], model: str) -> dict[str, bytes]: ...
