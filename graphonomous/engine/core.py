"""The engine: the one owner of a graph's in-process state.

Rules of this module:
- One `Engine` per open database in a process.  It owns the store, the lock
  (the store's re-entrant lock: one lock, so no lock order to get wrong),
  the embedder, the vector index, the BM25 index, the graph snapshot, named
  hooks, the clock and the activity clock.  Nothing else keeps a copy of them.
- Writes go through ``with engine.write() as store:`` (or any
  `Store.transaction`): the store's triggers log every node change in the
  same transaction (`node_changes`), so nobody hands index changes around.
- Before answering, every index accessor applies the logged changes since
  the engine's generation — its own commits and other processes' alike —
  incrementally (O(changed nodes)); when nothing changed the check is one
  indexed read.  The log is also applied right after each of this process's
  commits and at the start of every write transaction (all commits visible,
  none of its own writes yet), so reads inside a write see every committed
  change and nothing uncommitted.
- Indexes are loaded lazily in the order a query needs them: a saved copy
  (`derived_indexes`, `VectorIndex.dump`, `Bm25Index.dump`, a `SavedMirror`'s `dump`)
  when its generation is still in the log, else built from rows; a built index is
  saved back, best effort.
- Vectors are per embedding model (`embedding_model`): the engine reads, builds, saves
  and writes only its own model's vectors and saved vector index, never another's.
  Log rows of another model's vector writes are skipped (`changes_since(.., model)`)
  and do not count towards a resave.  Nodes lacking this model's vector are embedded
  on first need (said once per engine when other models' vectors exist), or ahead
  of use by `embed_missing`.
Layer: imports model, store, embed and index only (never retrieval, learning
or the facade); the graph snapshot's builder is handed in by the facade.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, Generic, Protocol, TypeVar

from .. import telemetry
from ..clock import Clock, SystemClock
from ..embed import Embedder, VectorIndex, pack_f32, unpack_f32
from ..embed.index import RowSpool, normalized_f32
from ..embed.vectors import StaleDumpError
from ..index import Bm25Index
from ..store import GraphStorage, StoreError, VectorSearchStorage
from .db_vectors import DatabaseVectorIndex
from .read_cache import ReadCache


class TextMirror(Protocol):
    """What the engine needs of a derived text index (add re-indexes an id)."""

    def add(self, node_id: str, content: str) -> None: ...

    def add_many(self, items: Iterable[tuple[str, str]]) -> None: ...

    def remove(self, node_id: str) -> None: ...


class SavedMirror(TextMirror, Protocol):
    """A text mirror that can be saved: `dump` bytes; its factory's ``load(bytes)``
    returns a mirror (or None for unreadable bytes)."""

    def dump(self) -> bytes: ...


class SavedSections:
    """A `DumpReader` over a derived index saved in sections (`save_derived_sections`).

    The header row starts with the save's random nonce and every section row
    repeats it: a section of another save, a missing one, or a header whose
    nonce changed (`check`) raise `StaleDumpError` (another process saved a
    newer copy, or a GDPR erase dropped it).
    """

    def __init__(self, store: GraphStorage, name: str, model: str, data: bytes) -> None:
        self._store = store
        self._name = name
        self._model = model
        self._nonce = data[:_NONCE_BYTES]
        header = json.loads(data[_NONCE_BYTES:].decode("utf-8"))
        self._header: dict[str, Any] = header if isinstance(header, dict) else {}

    @property
    def header(self) -> dict[str, Any]:
        return self._header

    def read_sections(self, indices: Sequence[int]) -> list[memoryview]:
        found = self._store.load_derived_sections(self._name, self._model, indices)
        nonce = self._nonce
        if found is None or any(section[:_NONCE_BYTES] != nonce for section in found):
            raise StaleDumpError("the saved copy was replaced")
        return [memoryview(section)[_NONCE_BYTES:] for section in found]  # no copy

    def check(self) -> None:
        if self._store.derived_nonce(self._name, self._model) != self._nonce:
            raise StaleDumpError("the saved copy was replaced")


def _sectioned(header: dict[str, Any], sections: int) -> bytes:
    """The header row of a save of `sections` sections: a fresh nonce, then the JSON header."""
    meta = {**header, "sections": sections}
    return os.urandom(_NONCE_BYTES) + json.dumps(meta).encode("utf-8")


SnapshotT = TypeVar("SnapshotT")
StorageT = TypeVar("StorageT", bound=GraphStorage)
PartT = TypeVar("PartT")

# Changes above this many nodes since the saved vector index was written make
# the engine save a fresh copy after the next load (a cold process then
# applies at most this many changes instead of all of them).  Another model's
# vector writes do not count: they change nothing this engine's indexes hold.
RESAVE_AFTER_CHANGES: Final = 2_000
# The saved vector index: one per embedding model (`derived_indexes` is keyed by
# name and model), so switching embedders never overwrites another model's copy.
VECTORS_NAME: Final = "vectors"
# Nodes embedded per embedder call and per write transaction by `embed_missing`
# (`graphonomous reembed`): progress is reported after each batch, and no write
# transaction holds the file longer than one batch's embedding takes.
REEMBED_BATCH: Final = 256
# Said once per engine when nodes lack this embedder's vector but another model's
# are stored (`_note_missing_vectors`): the telemetry event and the logger.
VECTORS_MISSING_EVENT: Final = "graphonomous.engine.vectors_missing"
LOGGER_NAME: Final = "graphonomous.engine"
_NONCE_BYTES: Final = 8
TEXT_NAME: Final = "bm25"
# A text mirror's saved copy is the derived index "mirror/<name>" (the entity
# index: "mirror/entities"); only mirrors with `dump` and a `load` factory are saved.
MIRROR_PREFIX: Final = "mirror/"


class Engine(Generic[StorageT, SnapshotT]):
    """Store + embedder + indexes of one database, kept fresh across processes."""

    def __init__(
        self,
        store: StorageT,
        embedder: Embedder,
        snapshot_builder: Callable[[StorageT], SnapshotT],
        *,
        persist_indexes: bool = True,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        # The one clock of this graph (clock.py): every timestamp and elapsed time.
        self.clock: Clock = clock or SystemClock()
        self.embedder = embedder
        self.lock = store.lock
        self.hooks: dict[str, Any] = {}
        self._parts: dict[type[Any], Any] = {}
        self._snapshot_builder = snapshot_builder
        self._persist = persist_indexes and store.path != ":memory:"
        self._vectors: VectorIndex | None = None
        self._text: Bm25Index | None = None
        self._vectors_saved_at = 0
        self._text_saved_at = 0
        self._generation = 0  # change-log seq both loaded indexes reflect
        self._pending_vectors: set[str] = set()  # live nodes lacking a vector
        self._missing_noted = False  # `_note_missing_vectors` spoke (once per engine)
        self._snapshot: SnapshotT | None = None
        self._snapshot_fingerprint: tuple[int, int] | None = None
        self._last_activity = 0.0
        self._syncing = False
        # (store fingerprint, generation) after the last full `_sync` outside a
        # transaction: while both are unchanged nothing was committed anywhere
        # (the fingerprint counts this connection's writes and other connections'
        # commits), so the change log is not read again.
        self._synced: tuple[tuple[int, int], int] | None = None
        # Other in-memory indexes derived from searchable content (the entity index
        # of the multi-hop walk): built with the BM25 index's rows and kept in step
        # by the same change log; saved like the BM25 index when they can be
        # (`SavedMirror`: extracting entities from 50K nodes takes minutes).
        self._mirrors: dict[str, TextMirror] = {}
        self._mirrors_saved_at: dict[str, int] = {}
        self._read_cache = ReadCache()
        # Node changes this process committed while an index was not loaded (`_count_begin`):
        # a writer that never searched (a `scan`, a bulk import) still leaves the
        # indexes saved at `close`, so the next process does not rebuild them.
        self._written_unindexed = 0
        self._begin_generation: int | None = None
        store.on_begin(self._sync)
        store.on_begin(self._count_begin)
        store.on_commit(self._sync)
        store.on_commit(self._count_commit)

    # -- embeddings ------------------------------------------------------------

    @property
    def embedding_model(self) -> str:
        """The tag stored with each vector: vectors of different models never mix."""
        return self.embedder.name

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of texts, rounded through float32 so they equal what is stored."""
        return [unpack_f32(pack_f32(v)) for v in self.embedder.embed(list(texts))]

    # -- writes ----------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[StorageT]:
        """One write transaction: everything inside commits together or not at all.

        Index changes are derived from the change log when the transaction
        commits (and only then); a rollback leaves the indexes untouched.
        """
        with self.lock, self.store.transaction():
            yield self.store

    # -- per-graph state of the layers above --------------------------------------

    def part(self, kind: type[PartT], factory: Callable[[], PartT] | None = None) -> PartT:
        """The one `kind` object of this graph, made by `factory` (default `kind()`) on
        first use: state an upper layer keeps per graph (the retrieval trace, the
        experience index, contradiction hooks) lives here without the engine knowing
        its type."""
        with self.lock:
            found = self._parts.get(kind)
            if not isinstance(found, kind):
                found = self._parts[kind] = (factory or kind)()
            return found

    # -- the clock and the activity clock -------------------------------------------

    def now(self) -> str:
        """The clock's time in the stored form (``2026-01-02T03:04:05.678Z``)."""
        return self.clock.iso()

    def touch(self) -> None:
        """Record activity now: the idle consolidation timer waits for quiet."""
        self._last_activity = self.clock.monotonic()

    @property
    def last_activity(self) -> float:
        """`clock.monotonic()` of the last recorded activity (0.0: none yet)."""
        return self._last_activity

    # -- freshness -----------------------------------------------------------------

    @property
    def generation(self) -> int:
        """The change-log seq the loaded indexes reflect."""
        return self._generation

    def refresh(self) -> None:
        """Apply every committed change since this engine's generation to the loaded
        indexes.  Inside an open write transaction it does nothing (the start of that
        transaction already did it).  O(1) read when nothing changed, else
        O(changed nodes) reads plus their re-indexing."""
        with self.lock:
            if not self.store.in_transaction:
                self._sync()

    def reload(self) -> None:
        """Forget the loaded indexes and snapshot: the next access loads them again."""
        with self.lock:
            self._vectors, self._text, self._snapshot = None, None, None
            self._pending_vectors.clear()
            self._mirrors.clear()

    def _sync(self) -> None:
        if self._syncing or (self._vectors is None and self._text is None):
            return
        outside = not self.store.in_transaction
        fingerprint = self.store.fingerprint() if outside else None
        if fingerprint is not None and self._synced == (fingerprint, self._generation):
            return  # nothing committed since the last sync: the log has nothing new
        self._syncing = True
        try:
            generation, changed = self.store.changes_since(self._generation, self.embedding_model)
            if changed is None:  # the log no longer reaches back: reload lazily
                self._vectors, self._text = None, None
                self._pending_vectors.clear()
                self._mirrors.clear()
                self._generation = generation
                return
            if changed:
                self._apply(changed)
            self._generation = generation
            # taken before the log was read: a commit after it changes it again
            self._synced = None if fingerprint is None else (fingerprint, generation)
        finally:
            self._syncing = False

    def _count_begin(self) -> None:
        """At a write's start with an index not loaded, note the change log's seq."""
        unindexed = (self._vectors is None or self._text is None) and self._persist
        self._begin_generation = self.store.change_generation() if unindexed else None

    def _count_commit(self) -> None:
        if self._begin_generation is not None:
            self._written_unindexed += self.store.change_generation() - self._begin_generation
            self._begin_generation = None

    def _apply(self, changed: Sequence[str]) -> None:
        """Re-read the changed nodes and put each index in step with the rows."""
        rows = {row[0]: row for row in self.store.index_rows(changed, self.embedding_model)}
        vectors, text = self._vectors, self._text
        for node_id in changed:
            row = rows.get(node_id)
            if row is None or not row[2]:  # deleted, forgotten, or a retrieval aid
                self._pending_vectors.discard(node_id)
                if vectors is not None:
                    vectors.remove(node_id)
                if text is not None:
                    text.remove(node_id)
                for mirror in self._mirrors.values():
                    mirror.remove(node_id)
                continue
            _, content, _, blob = row
            if text is not None:
                text.add(node_id, content)
            for mirror in self._mirrors.values():
                mirror.add(node_id, content)
            if vectors is not None:
                if blob is None:
                    vectors.remove(node_id)
                    self._pending_vectors.add(node_id)
                else:
                    self._pending_vectors.discard(node_id)
                    vectors.add(node_id, blob)

    # -- the vector index -------------------------------------------------------------

    def vector_index(self) -> VectorIndex:
        """The similarity index of every live node, current with the database.

        Loaded on first use (a saved copy, else from the stored embeddings);
        live nodes lacking a vector of the current embedder are embedded and
        stored now, so every similarity search sees every live node.
        """
        with self.lock:
            self.refresh()
            if self._vectors is not None and not self._vectors.source_current():
                self._vectors = None  # its saved copy was replaced: read the newer one
                self._pending_vectors.clear()
            # A load whose catch-up finds the log pruned meanwhile drops the
            # index again; the next attempt starts from the newer log.
            while self._vectors is None:
                self._load_vectors()
            index = self._vectors
            if self._pending_vectors and not self.store.in_transaction:
                self._embed_pending(index)
            return index

    def _load_vectors(self) -> None:
        store, model = self.store, self.embedding_model
        dimensions = self.embedder.dimensions
        if isinstance(store, VectorSearchStorage):  # the database answers (pgvector)
            with store.read_snapshot():
                generation = store.change_generation()
                missing = store.live_ids_without_embedding(model)
            self._catch_up(generation, other_loaded=self._text is not None)
            self._vectors = DatabaseVectorIndex(store, model, dimensions)
            self._vectors_saved_at = generation
            self._pending_vectors = set(missing)
            self._sync()
            self._note_missing_vectors()
            return
        index: VectorIndex | None = None
        with store.read_snapshot():
            generation = store.change_generation()
            copy = store.load_derived(VECTORS_NAME, model) if self._persist else None
            if copy is not None and store.changes_since(copy[0], model)[1] is None:
                copy = None  # the log no longer reaches back to the copy
            if copy is not None:
                # Read lazily: ids now, columns and row blocks as queries need them.
                try:
                    reader = SavedSections(store, VECTORS_NAME, model, copy[1])
                except (ValueError, UnicodeDecodeError):
                    reader = None  # a copy of another format: rebuilt and saved again
                index = (
                    None
                    if reader is None
                    else VectorIndex.load(reader, dimensions, fallback=self._stored_vectors)
                )
                generation_saved = copy[0]
            # A copy of another format is rebuilt and resaved; one without the columns
            # this backend searches with is resaved with them (built once, not per process).
            reusable = index is not None and not index.columns_missing_from_copy
            if index is None:
                index = VectorIndex(dimensions)
                index.bulk_load(store.iter_embeddings(model, searchable_only=True))
                generation_saved = generation
                missing = store.live_ids_without_embedding(model)
            else:  # the saver's pending set; the catch-up below adds later changes
                missing = index.saved_pending or []
        self._catch_up(generation_saved, other_loaded=self._text is not None)
        self._vectors = index
        self._vectors_saved_at = generation_saved
        self._pending_vectors = set(missing)
        self._sync()
        self._note_missing_vectors()
        if self._persist and (
            not reusable or self._changes_after(generation_saved) > RESAVE_AFTER_CHANGES
        ):
            self.save_indexes()

    def stored_vectors(self, node_ids: Sequence[str]) -> dict[str, list[float]]:
        """The vector-index vector (`VectorIndex.get`) of each id among `node_ids` the
        index holds, without loading the index when it is not loaded: the stored
        rows of these ids are read and normalised as the index would.  A live
        searchable id lacking a vector of this model loads the index (which embeds
        it), as `vector_index` would.  For callers needing a few vectors (ingestion's
        back-references) that should not hold every vector.  O(len(node_ids) * d)."""
        with self.lock:
            if self._vectors is None and not isinstance(self.store, VectorSearchStorage):
                rows = self.store.index_rows(node_ids, self.embedding_model)
                if all(blob is not None for _, _, indexed, blob in rows if indexed):
                    dims = self.embedder.dimensions
                    return {
                        node_id: normalized_f32(blob, dims)
                        for node_id, _, indexed, blob in rows
                        if indexed and blob is not None
                    }
            index = self.vector_index()
            found = {node_id: index.get(node_id) for node_id in node_ids}
            return {node_id: vector for node_id, vector in found.items() if vector is not None}

    def _note_missing_vectors(self) -> None:
        """Say once per engine, on stderr (logging) and as a telemetry event, that nodes
        lack a vector of this embedder while other models' vectors are stored: an
        embedder switch, whose vectors are now built (the others' are kept)."""
        if self._missing_noted or not self._pending_vectors:
            return
        model = self.embedding_model
        others = {m: n for m, n in self.store.embedding_counts().items() if m != model}
        if not others:
            return  # no switch: vectors deferred by a bulk writer, embedded as always
        self._missing_noted = True
        count = len(self._pending_vectors)
        kept = ", ".join(f"{m} {n}" for m, n in others.items())
        telemetry.emit(VECTORS_MISSING_EVENT, {"count": count}, {"model": model, "kept": others})
        import logging

        logging.getLogger(LOGGER_NAME).warning(
            "%s: %d %s no vector of this embedder yet; embedding them now (the other "
            "embedders' vectors are kept: %s; `graphonomous reembed --embedder %s` builds "
            "them ahead of use)",
            model,
            count,
            "node has" if count == 1 else "nodes have",
            kept,
            model,
        )

    def _stored_vectors(self, ids: Sequence[str | None]) -> list[bytes | None]:
        """The stored vector of each searchable id (None otherwise): what a lazily
        read vector copy is rebuilt from should it vanish while read."""
        wanted = [node_id for node_id in ids if node_id is not None]
        rows = self.store.index_rows(wanted, self.embedding_model)
        found = {row[0]: row[3] for row in rows if row[2]}
        return [None if node_id is None else found.get(node_id) for node_id in ids]

    def _saved_vectors(self) -> VectorIndex | None:
        """The loaded vector index if it is an in-memory one (a database's is never saved)."""
        vectors = self._vectors
        return None if isinstance(vectors, DatabaseVectorIndex) else vectors

    def _embed_pending(self, index: VectorIndex) -> None:
        """Embed the pending nodes `REEMBED_BATCH` at a time (one batch's nodes and
        float vectors alive at once, not every pending node's), store and index them."""
        pending = sorted(self._pending_vectors)
        self._pending_vectors.clear()
        for start in range(0, len(pending), REEMBED_BATCH):
            ids = pending[start : start + REEMBED_BATCH]
            nodes = self.store.get_nodes(ids)
            live = [nodes[i] for i in ids if i in nodes and nodes[i].forgotten_at is None]
            if not live:
                continue
            vectors = self.embed_texts([node.content for node in live])
            self._release_embedder_caches()
            # The vectors are a pure function of the content: adding them to the
            # index now is right even if the rows are lost; the next load re-embeds
            # (a read-only or damaged file keeps them in memory only).
            if self.store.write_refusal() is None:
                with self.store.transaction():
                    for node, vector in zip(live, vectors, strict=True):
                        self.store.set_embedding(node.id, pack_f32(vector), self.embedding_model)
            for node, vector in zip(live, vectors, strict=True):
                index.add(node.id, vector)

    def _close_streamed(self) -> None:
        """(Closing, the vector index not loaded.)  One index in memory at a time, in
        the order that keeps each saved copy's generation current: the missing vectors
        are embedded and stored (their writes are logged), the embedder's caches
        dropped, the BM25 index built row by row and saved, then dropped, and the
        vector index saved straight from the stored rows.  The peak is the largest
        step's, not their sum."""
        if self.store.write_refusal() is not None:
            return  # (a read-only or full file: the next process builds the indexes)
        self._embed_all_missing()
        self.text_index()
        if self._text is not None and self._text_saved_at >= self._generation:
            self._text = None  # saved and current: the vector save reuses its memory
        self._save_vectors_streamed()

    def _embed_all_missing(self) -> None:
        """Embed and store every missing vector of this model, `REEMBED_BATCH` at a time."""
        missing = self.store.live_ids_without_embedding(self.embedding_model)
        for start in range(0, len(missing), REEMBED_BATCH):
            self._embed_batch(missing[start : start + REEMBED_BATCH])

    def _release_embedder_caches(self) -> None:
        """After one batch of a bulk embedding: drop the embedder's memoised work
        (`release_caches`, when it has one), so a bulk embedding holds one batch's
        vocabulary, not a full cache (the hashing embedder's: ~55 MB; dropping them per
        batch cost 12% of the embedding time measured on import-memory's texts)."""
        release = getattr(self.embedder, "release_caches", None)
        if callable(release):
            release()

    def _save_vectors_streamed(self) -> bool:
        """Embed and store the missing vectors, then save the vector index straight from
        the stored rows (`RowSpool`): the bytes `save_indexes` would write for an index
        built from them, without the index in memory.  For `close`, which does not
        keep the index.  Output: whether the copy was saved."""
        store, model = self.store, self.embedding_model
        if store.write_refusal() is not None:
            return False  # (a read-only or full file: the next process builds the index)
        self._embed_all_missing()
        with RowSpool(self.embedder.dimensions) as spool:
            with store.read_snapshot():
                generation = store.change_generation()
                for page in store.embedding_pages(model, searchable_only=True):
                    spool.add_many(page)
                pending = store.live_ids_without_embedding(model)
            header, count, sections = spool.sections(pending)
            return store.save_derived_sections(
                VECTORS_NAME, model, generation, _sectioned(header, count), sections
            )

    def embed_missing(self, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Store a vector of the current embedder for every live searchable node lacking
        one (`graphonomous reembed`); other models' vectors are left alone.

        Batches of `REEMBED_BATCH` nodes are embedded with no lock held, then written in
        a transaction of their own; a node erased, forgotten or rewritten meanwhile is
        skipped (its vector is the next search's to build).  `progress(done, total)`
        after each batch.  Then the vector index is loaded (and saved when built), so
        the next process's first search reads it instead of building it.
        Output: ``{"model", "missing", "embedded", "vectors"}`` (vectors: this model's
        stored vectors afterwards).  Complexity: O(missing) embeddings.
        """
        model = self.embedding_model
        missing = self.store.live_ids_without_embedding(model)
        embedded = 0
        for start in range(0, len(missing), REEMBED_BATCH):
            embedded += self._embed_batch(missing[start : start + REEMBED_BATCH])
            if progress is not None:
                progress(min(start + REEMBED_BATCH, len(missing)), len(missing))
        self.vector_index()
        vectors = self.store.embedding_counts().get(model, 0)
        return {"model": model, "missing": len(missing), "embedded": embedded, "vectors": vectors}

    def _embed_batch(self, ids: Sequence[str]) -> int:
        """Embed the live nodes among `ids` and store the vectors of those whose content
        is still the embedded one; returns how many were stored."""
        found = self.store.get_nodes(ids)
        live = [found[i] for i in ids if i in found and found[i].forgotten_at is None]
        if not live:
            return 0
        vectors = self.embed_texts([node.content for node in live])
        self._release_embedder_caches()
        with self.write() as store:
            now = store.get_nodes([node.id for node in live])
            stored = 0
            for node, vector in zip(live, vectors, strict=True):
                current = now.get(node.id)
                if current is None or current.forgotten_at is not None:
                    continue
                if current.content != node.content:
                    continue
                store.set_embedding(node.id, pack_f32(vector), self.embedding_model)
                stored += 1
        return stored

    # -- text mirrors -----------------------------------------------------------------------

    def text_mirror(self, name: str, factory: Callable[[], TextMirror]) -> TextMirror:
        """An index of searchable content besides BM25 (e.g. entities), current with the
        database: built on first use from the rows the BM25 index holds, then kept in
        step by the change log like it.  O(graph) once, then O(changed nodes)."""
        with self.lock:
            self.text_index()  # loaded and synced: the engine's generation is current
            mirror = self._mirrors.get(name)
            if mirror is None:
                mirror = self._load_mirror(name, factory)
                if mirror is None:
                    mirror = factory()
                    mirror.add_many(self.store.live_texts())
                    self._mirrors[name] = mirror
                    self._mirrors_saved_at[name] = -1
                    self._save_mirror(name)
                elif self._changes_after(self._mirrors_saved_at[name]) > RESAVE_AFTER_CHANGES:
                    self._save_mirror(name)
            return mirror

    def _load_mirror(self, name: str, factory: Callable[[], TextMirror]) -> TextMirror | None:
        """The saved copy of a mirror with the logged changes after it applied, or None
        (not saveable, no copy, unreadable, or the log no longer reaches back)."""
        load = getattr(factory, "load", None)
        if not self._persist or load is None:
            return None
        store = self.store
        with store.read_snapshot():
            saved = store.load_derived(MIRROR_PREFIX + name, "")
            if saved is None:
                return None
            changed = store.changes_since(saved[0], self.embedding_model)[1]
        mirror: TextMirror | None = load(saved[1]) if changed is not None else None
        if mirror is None or changed is None:
            return None
        # Changes after the engine's generation are applied again by the next `_sync`
        # (harmless: each node is set to its row's current state).
        rows = {row[0]: row for row in store.index_rows(changed, self.embedding_model)}
        for node_id in changed:
            row = rows.get(node_id)
            if row is None or not row[2]:
                mirror.remove(node_id)
            else:
                mirror.add(node_id, row[1])
        self._mirrors[name] = mirror
        self._mirrors_saved_at[name] = saved[0]
        return mirror

    def _save_mirror(self, name: str) -> bool:
        """Save one mirror with the engine's generation (best effort); True when saved."""
        mirror = self._mirrors[name]
        dump = getattr(mirror, "dump", None)
        if not self._persist or dump is None or self.store.in_transaction:
            return False
        if not self.store.save_derived(MIRROR_PREFIX + name, "", self._generation, dump()):
            return False
        self._mirrors_saved_at[name] = self._generation
        return True

    # -- the BM25 index -------------------------------------------------------------------

    def text_index(self) -> Bm25Index:
        """The BM25 index of live nodes' content, current with the database."""
        with self.lock:
            self.refresh()
            while self._text is None:  # (see vector_index)
                store = self.store
                index: Bm25Index | None = None
                with store.read_snapshot():
                    generation = store.change_generation()
                    saved = store.load_derived(TEXT_NAME, "") if self._persist else None
                    if saved is not None and store.changes_since(saved[0])[1] is None:
                        saved = None  # the log no longer reaches back to the copy
                    if saved is not None:
                        index = Bm25Index.load(saved[1])
                        generation_saved = saved[0]
                    reusable = index is not None
                    if index is None:
                        index = Bm25Index()
                        index.add_many(store.iter_live_texts())
                        generation_saved = generation
                self._catch_up(generation_saved, other_loaded=self._vectors is not None)
                self._text = index
                self._text_saved_at = generation_saved
                self._sync()
                if self._persist and (
                    not reusable or self._changes_after(generation_saved) > RESAVE_AFTER_CHANGES
                ):
                    self.save_indexes()
            return self._text

    def _catch_up(self, loaded_at: int, *, other_loaded: bool) -> None:
        """A freshly loaded index reflects `loaded_at`: the engine's generation becomes
        the older of that and the other index's, and the following `_sync` re-applies
        the changes after it to every loaded index (re-applying a change is
        harmless: each index is set to the row's current state)."""
        self._generation = min(self._generation, loaded_at) if other_loaded else loaded_at

    def _changes_after(self, saved_at: int) -> int:
        """How many nodes changed for this engine's indexes between a saved copy's
        generation and the engine's (another model's vector writes are not counted):
        what a process loading that copy would apply.  One indexed read, and only when
        the log moved more than `RESAVE_AFTER_CHANGES` rows; past the log's reach it is
        `RESAVE_AFTER_CHANGES + 1` (resave)."""
        moved = self._generation - saved_at
        if moved <= RESAVE_AFTER_CHANGES:
            return max(moved, 0)
        changed = self.store.changes_since(saved_at, self.embedding_model)[1]
        return RESAVE_AFTER_CHANGES + 1 if changed is None else len(changed)

    # -- persistence ------------------------------------------------------------------------

    def save_indexes(self) -> bool:
        """Save the loaded indexes (with their generation) for the next process, best effort.

        Output: whether every loaded index was saved.  Skipped inside a write
        transaction, for `":memory:"` and when the file takes no writes.
        """
        with self.lock:
            if not self._persist or self.store.in_transaction:
                return False
            self.refresh()
            ok = True
            vectors = self._saved_vectors()
            if vectors is not None:
                header, sections = vectors.dump_sections(pending=sorted(self._pending_vectors))
                if self.store.save_derived_sections(
                    VECTORS_NAME,
                    self.embedding_model,
                    self._generation,
                    _sectioned(header, len(sections)),
                    sections,
                ):
                    self._vectors_saved_at = self._generation
                else:
                    ok = False
            if self._text is not None:
                size, parts = self._text.dump_parts()
                if self.store.save_derived_parts(TEXT_NAME, "", self._generation, size, parts):
                    self._text_saved_at = self._generation
                else:
                    ok = False
            for name, mirror in self._mirrors.items():
                if hasattr(mirror, "dump") and not self._save_mirror(name):
                    ok = False
            # Saved copies now reach this generation: the log's old rows can go
            # (it keeps CHANGE_LOG_KEEP rows for processes further behind).
            self.store.try_write(self._prune_log)
            return ok

    def _prune_log(self) -> None:
        self.store.prune_change_log()

    # -- the graph snapshot ------------------------------------------------------------------

    def graph_snapshot(self) -> SnapshotT:
        """Every live node and edge in memory, rebuilt when the database changed.

        Validity is `Store.fingerprint` (rows written through this connection,
        commits by other connections): O(1) per call.
        """
        with self.lock:
            fingerprint = self.store.fingerprint()
            if self._snapshot is None or self._snapshot_fingerprint != fingerprint:
                self._snapshot = self._snapshot_builder(self.store)
                self._snapshot_fingerprint = fingerprint
            return self._snapshot

    def snapshot_writes_done(self, before: tuple[int, int]) -> None:
        """Declare the writes since fingerprint `before` graph-neutral (access counters):
        a snapshot that was current then stays current."""
        with self.lock:
            if self._snapshot is not None and self._snapshot_fingerprint == before:
                self._snapshot_fingerprint = self.store.fingerprint()

    # -- rows read between calls ------------------------------------------------------------

    def read_cache(self) -> ReadCache | None:
        """The `ReadCache`, emptied first when the store's fingerprint moved (a write or
        erase by this or any other process); None inside an open transaction (what is
        read there may be rolled back).  O(1): one ``PRAGMA data_version``."""
        with self.lock:
            if self.store.in_transaction:
                return None
            fingerprint = self.store.fingerprint()
            if self._read_cache.fingerprint != fingerprint:
                self._read_cache.reset(fingerprint)
            return self._read_cache

    def neutral_write(self, write: Callable[[], None], patch: Callable[[ReadCache], None]) -> bool:
        """Run `write` in its own transaction (`Store.try_write`, best effort) as a write
        that changes no graph structure (the access counters): the snapshot and the
        read cache stay valid, the latter after `patch` applied the write to its rows.

        Both fingerprints are taken inside the transaction (it holds the file's write
        lock): a commit by another process just before it or just after it still
        moves the fingerprint, so that commit is seen.  Inside an open transaction the
        write joins it and both caches are left to the next fingerprint check.
        Output: whether the write was made."""
        with self.lock:
            store = self.store
            if store.in_transaction:
                return store.try_write(write)
            marks: list[tuple[int, int]] = []

            def marked() -> None:
                marks.append(store.fingerprint())
                write()
                marks.append(store.fingerprint())
                if self._vectors is not None or self._text is not None:
                    # This transaction's start applied the log (`_sync`, on_begin) and the
                    # write logs nothing: at `after` the indexes are current, so the sync
                    # after the commit need not read the log again.
                    self._synced = (marks[-1], self._generation)

            if not store.try_write(marked) or len(marks) != 2:
                return False
            before, after = marks
            if self._snapshot is not None and self._snapshot_fingerprint == before:
                self._snapshot_fingerprint = after
            if self._read_cache.fingerprint == before:
                self._read_cache.fingerprint = after
                patch(self._read_cache)
            return True

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Save indexes that moved far from their saved copy (best effort), then close.

        A process that committed more than `RESAVE_AFTER_CHANGES` node changes
        while an index was not loaded (a `scan`, a bulk import) loads the vector and
        BM25 indexes first — the saved copies plus its changes, or a build — so
        they are saved: the next process's first query reads them instead of
        embedding and tokenizing the whole graph.  O(its changes), once.
        """
        with self.lock:
            if self._persist and self._written_unindexed > RESAVE_AFTER_CHANGES:
                self._written_unindexed = 0
                # Best effort, as every save: a file that stops taking writes (a full
                # disk) leaves the build to the next process.
                with contextlib.suppress(StoreError):
                    if self._vectors is None and not isinstance(self.store, VectorSearchStorage):
                        self._close_streamed()
                    else:
                        self.vector_index()
                        self.text_index()
            saved_at = [
                at
                for index, at in (
                    (self._saved_vectors(), self._vectors_saved_at),
                    (self._text, self._text_saved_at),
                )
                if index is not None
            ]
            saved_at += [
                self._mirrors_saved_at[name]
                for name, mirror in self._mirrors.items()
                if hasattr(mirror, "dump")
            ]
            if (
                self._persist
                and saved_at
                and self._changes_after(min(saved_at)) > RESAVE_AFTER_CHANGES
            ):
                self.save_indexes()
            self.store.close()
