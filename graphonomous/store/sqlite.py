"""A small explicit SQLite layer for nodes, edges and embeddings.

Rules kept everywhere in this module:
- parameterised SQL only (values never formatted into statements);
- every multi-statement write runs inside `transaction()` (BEGIN IMMEDIATE,
  nested calls become SAVEPOINTs), so a crash leaves all or nothing;
- one connection per Store, guarded by a re-entrant lock, so a Store can be
  shared by threads (the MCP server, the consolidation timer);
- a Store acts in one namespace (`Store.namespace`, SPEC "Namespaces"): every
  statement on a namespaced table (`schema.NAMESPACED_TABLES`) names it, so a
  row of another namespace is neither read, counted, changed nor deleted — it
  answers as a row that does not exist;
- several processes share one file: a writer waits for another process's
  transaction (busy timeout, then retries with backoff) instead of failing,
  and the change log (`node_changes`, written by triggers) tells every
  process which nodes changed since it last looked.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final

from ..hygiene import refuse_nul
from ..model import (
    AID_CREATION_SOURCES,
    AID_NODE_TYPES,
    DEFAULT_NAMESPACE,
    EDGE_DIRECTIONS,
    Edge,
    GraphonomousError,
    Node,
    NotFoundError,
    ValidationError,
    canonical_json,
    check_choice,
    check_namespace,
)
from . import verify
from .damage import full_on_open_message, is_full
from .queries import GraphQueries
from .schema import EDGE_COLUMNS, MIGRATIONS, NODE_COLUMNS, SCHEMA_VERSION

# "n is in the store's namespace" (one ``?``, bound to `Store.namespace`).
_IN_NS: Final = "n.namespace = ?"
# "n is searchable": not a retrieval aid (model.AID_*; literals from constants).
_SEARCHABLE = "n.node_type NOT IN ({}) AND n.creation_source NOT IN ({})".format(
    ", ".join(f"'{t}'" for t in AID_NODE_TYPES),
    ", ".join(f"'{c}'" for c in AID_CREATION_SOURCES),
)

# SQLite's default limit on host parameters is 999 on old builds; stay under it.
SQL_VARIABLE_CHUNK: Final = 900
# SQLite's own wait for another connection's lock.  A real batch (a 20K-node
# import or scan embeds inside its transaction) holds the write lock for tens
# of seconds on a small device, so one wait is 30 s and BEGIN IMMEDIATE is
# retried with jittered exponential backoff for WRITE_WAIT_S in total before
# the client sees a StoreError.
BUSY_TIMEOUT_MS: Final = 30_000
WRITE_WAIT_S: Final = 600.0
_BACKOFF_FIRST_S: Final = 0.05
_BACKOFF_MAX_S: Final = 2.0
# The change log keeps at least this many newest rows when pruned: a process
# whose generation is older than the kept rows reloads its indexes in full.
CHANGE_LOG_KEEP: Final = 200_000
# A derived index saved in sections: rows named f"{name}{_PART}{number}".
_PART: Final = "/"
# Saving a derived index is a cache write: it gives up after this wait.
_CACHE_BUSY_TIMEOUT_MS: Final = 100

_NODE_SELECT: Final = f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes"
_EDGE_SELECT: Final = f"SELECT {', '.join(EDGE_COLUMNS)} FROM edges"
# The fields of an edge an upsert may change on an existing edge (`Store.upsert_edge`).
UPSERT_STATED: Final = ("strength", "metadata", "decay_rate")
_NODE_JSON_FIELDS: Final = ("metadata", "causal_parent_ids")
_JSON_COLUMNS: Final = frozenset({*_NODE_JSON_FIELDS, "metadata"})
_NODE_ORDERS: Final = {
    "created": "created_at, id",
    "created_desc": "created_at DESC, id DESC",
    "id": "id",
    "confidence_desc": "confidence DESC, id",
    "accessed_desc": "COALESCE(last_accessed_at, '') DESC, id",
}


# "Verified by this session, state not recorded yet" (the next commit or close records it).
_UNRECORDED: Final[verify.State] = (0, 0, 0, 0, 0)
# SQLite's result code (and message) when a read-only open cannot create a WAL
# file's -shm beside it: the cue to read the file as immutable.
CANTOPEN_ERROR_NAME: Final = "SQLITE_CANTOPEN"
CANTOPEN_PHRASE: Final = "unable to open database file"
# Free bytes below which an I/O error on open is read as a full disk: SQLite grows a
# WAL's -shm file in 32 KiB regions, and opening needs at least one.
OPEN_ROOM_BYTES: Final = 64 * 1024


class StoreError(GraphonomousError, RuntimeError):
    """The database cannot be used (not SQLite, too new, unreadable)."""


# The principal (a token's owner, `mcp/access.py`) on whose behalf this thread's calls run,
# or None (the local user: CLI, stdio, Python).  Audit entries name it (`Store.audit`).
ACTING_PRINCIPAL: ContextVar[str | None] = ContextVar("graphonomous_principal", default=None)
AUDIT_PRINCIPAL_KEY: Final = "principal"
# What a store opened read-only for a caller's rights says when a write is attempted.
READ_ONLY_BY_RIGHTS: Final = "the caller may only read (no write, no bookkeeping)"


def _not_writable(path: str) -> bool:
    """An existing file we may not write, or in a directory we may not write (WAL needs
    its -wal and -shm files beside it)."""
    if path == ":memory:":
        return False
    target = Path(path).expanduser()
    if not target.is_file():
        return False
    return not (os.access(target, os.W_OK) and os.access(target.parent, os.W_OK))


def _rollback(conn: Any, savepoint: str | None = None) -> None:
    """Undo the open transaction (or `savepoint`) of `conn`.  SQLite rolls the whole
    transaction back itself on some errors (a full disk, an I/O error): a ROLLBACK then
    fails with "cannot rollback - no transaction is active", which would hide the error
    that mattered, so nothing is sent when no transaction is open."""
    if not conn.in_transaction:
        return
    if savepoint is None:
        conn.execute("ROLLBACK")
    else:
        conn.execute(f"ROLLBACK TO {savepoint}")
        conn.execute(f"RELEASE {savepoint}")


def _open_connection(path: str, uri: str | None) -> sqlite3.Connection:
    """A connection to `path` (through `uri` when given), rows as ``sqlite3.Row``."""
    try:
        if uri is not None:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        else:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open database {path}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    _ensure_math(conn)
    return conn


def _first_read(conn: sqlite3.Connection) -> tuple[int, int]:
    """(user_version, table count): the first read, which fails on a file that is not
    SQLite (nothing has been written to it yet)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
    return int(version), int(tables)


def _no_room_to_open(path: str, exc: sqlite3.DatabaseError) -> bool:
    """Whether the first read failed for want of disk space: SQLite's own "full", or an
    I/O error (it cannot grow the WAL's -shm file, SQLITE_IOERR_SHMSIZE) with less than
    :data:`OPEN_ROOM_BYTES` free beside the file."""
    if is_full(exc):
        return True
    if not str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_IOERR"):
        return False
    try:
        free = shutil.disk_usage(Path(path).parent).free
    except OSError:
        return False
    return free < OPEN_ROOM_BYTES


def _needs_immutable(path: str, exc: sqlite3.DatabaseError) -> bool:
    """Whether a read-only open failed only because SQLite could not create the WAL's
    -shm file (a read-only directory or mount).  A non-empty -wal beside the file holds
    commits an immutable read would not see: that is a StoreError saying so, not a
    silent loss."""
    if getattr(exc, "sqlite_errorname", None) != CANTOPEN_ERROR_NAME and (
        CANTOPEN_PHRASE not in str(exc).lower()
    ):
        return False
    wal = Path(f"{path}-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        raise StoreError(
            f"{path} is read-only and its write-ahead log {wal} holds commits not yet in "
            "the file; they cannot be read without creating its -shm file: copy the file "
            "and its -wal somewhere writable"
        ) from exc
    return True


def _quick_check(conn: sqlite3.Connection) -> tuple[str | None, float]:
    """(None or the first problem ``PRAGMA quick_check`` finds, milliseconds taken).

    O(file size) but cheap (≈ 40 ms for a 5.7 MB file on a shared VM): it reads every
    page once without the index cross-checks of integrity_check.
    """
    started = time.perf_counter()
    try:
        row = conn.execute("PRAGMA quick_check(1)").fetchone()
        verdict = str(row[0]) if row else "no answer"
    except sqlite3.DatabaseError as exc:
        verdict = str(exc)
    elapsed = round((time.perf_counter() - started) * 1000.0, 3)
    return (None if verdict == "ok" else " ".join(verdict.split())), elapsed


def is_busy_error(exc: BaseException) -> bool:
    """Whether an SQLite error means "another connection holds the lock" (retryable)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def is_unwritable_error(exc: BaseException) -> bool:
    """Whether an SQLite error means the file cannot take writes now (read-only, full, busy)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and (
        is_busy_error(exc) or "readonly" in text or "read-only" in text or "full" in text
    )


def _chunks(items: Sequence[str], size: int = SQL_VARIABLE_CHUNK) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _stored_names(names: Iterable[str]) -> list[str]:
    """The distinct `names` that could be stored, sorted: a name holding NUL is refused
    at every write (hygiene.refuse_nul), so it names nothing and is not sent (PostgreSQL
    refuses NUL even as a lookup parameter; SQLite would find nothing)."""
    return sorted({name for name in names if "\x00" not in name})


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


# The JSON texts most rows hold, decoded without the parser (a fresh container
# each time: callers may mutate it).  Retrieval parses ~50 node rows per query.
_EMPTY_JSON: Final[dict[str, Callable[[], Any]]] = {"{}": dict, "[]": list}


def _json_column(text: str) -> Any:
    empty = _EMPTY_JSON.get(text)
    return empty() if empty is not None else json.loads(text)


def _ensure_math(conn: sqlite3.Connection) -> None:
    """Give the connection SQL ``exp`` when its SQLite was built without the math
    functions (decay uses it; builds since 3.35 usually have it)."""
    try:
        conn.execute("SELECT exp(0.0)")
    except sqlite3.OperationalError:
        conn.create_function("exp", 1, math.exp, deterministic=True)


def _row_to_node(row: sqlite3.Row) -> Node:
    # dict(zip(keys, values)): 3x faster than dict(row), the same mapping
    values = dict(zip(row.keys(), row, strict=True))
    for key in _NODE_JSON_FIELDS:
        values[key] = _json_column(values[key])
    values["pinned"] = bool(values["pinned"])
    return Node(**values)


def _row_to_edge(row: sqlite3.Row) -> Edge:
    values = dict(zip(row.keys(), row, strict=True))
    values["metadata"] = _json_column(values["metadata"])
    return Edge(**values)


# A node's memory-compat entity name (server_memory); idx_nodes_entity_name indexes it.
# The entity queries name their index (INDEXED BY) and join order (CROSS JOIN): without
# ANALYZE statistics SQLite's planner prefers idx_nodes_agent / idx_nodes_forgotten,
# a scan of every node per lookup.  (The PostgreSQL translation drops INDEXED BY.)
_ENTITY_NAME: Final = "json_extract(metadata, '$.entity_name')"
# Rows of entity nodes / edges read per query by the memory view's whole-graph scans:
# bounds the rows alive at once (a page of nodes with observations is a few MB at most).
ENTITY_PAGE: Final = 2000
# Every live searchable node's (id, content), oldest first: what the BM25 index holds.
_LIVE_TEXTS_SQL: Final = (
    "SELECT n.id, n.content FROM nodes n "
    f"WHERE {_IN_NS} AND n.forgotten_at IS NULL AND {_SEARCHABLE} "
    "ORDER BY n.created_at, n.id"
)
# Rows per page of `embedding_pages`: 256 vectors are ~0.4 MB at d = 384, and a
# keyset page costs one indexed seek (idx_embeddings_model).
EMBEDDING_PAGE: Final = 256


def _entity_condition(alias: str) -> str:
    """SQL: node `alias` is an entity of the namespace and agent bound by two ``?``: live,
    with an entity name, and no older live node of that agent carries the same name."""
    name = f"json_extract({alias}.metadata, '$.entity_name')"
    older = f"o_{alias}"
    return (
        f"{alias}.namespace = ? AND {alias}.agent_id = ? AND {alias}.forgotten_at IS NULL "
        f"AND {name} IS NOT NULL "
        f"AND NOT EXISTS (SELECT 1 FROM nodes {older} WHERE "
        f"json_extract({older}.metadata, '$.entity_name') = {name} "
        f"AND {older}.namespace = {alias}.namespace AND {older}.agent_id = {alias}.agent_id "
        f"AND {older}.forgotten_at IS NULL "
        f"AND ({older}.created_at < {alias}.created_at OR "
        f"({older}.created_at = {alias}.created_at AND {older}.id < {alias}.id)))"
    )


def _entity_edges(rows: Iterable[sqlite3.Row]) -> Iterator[tuple[str, str, str, str, str]]:
    """The `iter_entity_edges` rows whose two entity names are strings."""
    for edge_id, source, target, relationship, metadata in rows:
        if isinstance(source, str) and isinstance(target, str):
            yield edge_id, source, target, relationship, metadata


# The columns an insert writes: the record's, then the store's namespace.
_NODE_INSERT: Final = (
    f"INSERT INTO nodes ({', '.join(NODE_COLUMNS)}, namespace) "
    f"VALUES ({', '.join('?' * (len(NODE_COLUMNS) + 1))})"
)
_EDGE_INSERT: Final = (
    f"INSERT INTO edges ({', '.join(EDGE_COLUMNS)}, namespace) "
    f"VALUES ({', '.join('?' * (len(EDGE_COLUMNS) + 1))})"
)


def _node_params(node: Node) -> list[Any]:
    params: list[Any] = []
    for column in NODE_COLUMNS:
        value = getattr(node, column)
        refuse_nul(column, value)
        if column in _NODE_JSON_FIELDS:
            value = canonical_json(value)
        elif column == "pinned":
            value = int(value)
        params.append(value)
    return params


def _edge_params(edge: Edge) -> list[Any]:
    for column in EDGE_COLUMNS:
        refuse_nul(column, getattr(edge, column))
    return [
        canonical_json(edge.metadata) if column == "metadata" else getattr(edge, column)
        for column in EDGE_COLUMNS
    ]


class Store(GraphQueries):
    """Nodes, edges, embeddings and bookkeeping tables in one SQLite file.

    `Store(":memory:")` gives a private in-memory database.  Use as a context
    manager or call `close()`.
    """

    damage: str | None  # why the file is damaged (quick_check on open), else None
    # Why a read-only store is read-only when not because of the file (None: the file).
    read_only_reason: str | None
    _sound_state: verify.State | None  # `_init_session_state`

    def __init__(
        self,
        path: str | Path = ":memory:",
        namespace: str = DEFAULT_NAMESPACE,
        *,
        read_only: bool = False,
    ) -> None:
        self._init_session_state(str(path), namespace)
        if read_only:
            if self.path == ":memory:":
                raise StoreError("a read-only store needs a database file, not :memory:")
            self.read_only_reason = READ_ONLY_BY_RIGHTS
        # A file we may not write (or whose directory we may not write) opens read-only;
        # so does any file for a caller that may only read (`read_only`).
        self.read_only = read_only or _not_writable(self.path)
        self._conn = self._connect(self.path, self.read_only)
        if self.path != ":memory:":
            self._sound_state = verify.known_sound(self.path)
            self.quick_check_skipped = self._sound_state is not None
            if self._sound_state is None:
                self.damage, self.quick_check_ms = _quick_check(self._conn)
                if self.damage is None:
                    self._sound_state = verify.record_sound(self.path) or _UNRECORDED
                else:
                    verify.forget(self.path)
            if self.damage is not None:
                self._conn.execute("PRAGMA query_only = ON")

    def _init_session_state(self, path: str, namespace: str = DEFAULT_NAMESPACE) -> None:
        """The per-connection state every backend shares (PostgreSQL's store calls it too)."""
        self.path = path
        # Every statement on a namespaced table is bound to this one (SPEC "Namespaces").
        self.namespace = check_namespace("namespace", namespace)
        self._lock = threading.RLock()
        self._depth = 0
        self._after_commit: list[Callable[[], None]] = []
        # Called after BEGIN IMMEDIATE of every outermost transaction, before
        # its body: the engine brings its indexes up to date there (all
        # commits visible, none of this transaction's writes yet).
        self._on_begin: list[Callable[[], None]] = []
        # Called after every outermost COMMIT (after the `after_commit` callbacks).
        self._on_commit: list[Callable[[], None]] = []
        self.read_only = False
        # Why a read-only store is read-only when not because of the file (None: the file).
        self.read_only_reason = None
        # None, or why the file is damaged (PRAGMA quick_check on open); writes are refused.
        self.damage = None
        self.quick_check_ms = 0.0
        # The file state last recorded as sound (`verify`): None = not verified by
        # this session (":memory:", damaged, another backend), so nothing is recorded.
        self._sound_state = None
        self.quick_check_skipped = False

    def write_refusal(self) -> str | None:
        """Why this store refuses writes (damaged or read-only file), or None."""
        if self.damage is not None:
            return (
                f"{self.path} is damaged (quick_check: {self.damage}); writes are refused so "
                f"the damage does not spread. Run `graphonomous --db {self.path} doctor` for "
                "the full integrity check, then restore a backup (or salvage the readable "
                f"rows with `sqlite3 {self.path} .recover`)"
            )
        if self.read_only and self.read_only_reason is not None:
            return f"{self.path} is open read-only: {self.read_only_reason}"
        if self.read_only:
            return (
                f"{self.path} is read-only (the file or its directory is not writable): it "
                "serves reads only; copy it somewhere writable to change it"
            )
        return None

    @property
    def lock(self) -> threading.RLock:
        """The re-entrant lock every use of the connection holds (shared with the engine)."""
        return self._lock

    def on_begin(self, listener: Callable[[], None]) -> None:
        """Call `listener()` at the start of every outermost write transaction."""
        with self._lock:
            self._on_begin.append(listener)

    def on_commit(self, listener: Callable[[], None]) -> None:
        """Call `listener()` after every outermost write transaction commits."""
        with self._lock:
            self._on_commit.append(listener)

    # -- opening ---------------------------------------------------------

    @staticmethod
    def _connect(path: str, read_only: bool = False) -> sqlite3.Connection:
        uri = None
        if path != ":memory:":
            target = Path(path).expanduser()
            if target.is_dir():
                raise StoreError(f"{target} is a directory, not a database file")
            if not read_only:
                target.parent.mkdir(parents=True, exist_ok=True)
            path = str(target)
            if read_only:
                uri = f"{target.resolve().as_uri()}?mode=ro"
        conn = _open_connection(path, uri)
        try:
            version, tables = _first_read(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _no_room_to_open(path, exc):
                raise StoreError(full_on_open_message(path)) from exc
            if uri is None or not _needs_immutable(path, exc):
                raise StoreError(f"{path} is not a SQLite database ({exc})") from exc
            # A WAL file on a read-only mount: `mode=ro` cannot create the -shm
            # file SQLite needs, so the file is read as immutable (nothing can
            # change it there; `_needs_immutable` checked no commit waits in -wal).
            conn = _open_connection(path, f"{uri}&immutable=1")
            try:
                version, tables = _first_read(conn)
            except sqlite3.DatabaseError as again:
                conn.close()
                raise StoreError(f"{path} is not a SQLite database ({again})") from again
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{path} has schema version {version}, newer than this graphonomous "
                f"understands ({SCHEMA_VERSION}); upgrade graphonomous to open it "
                "(the file was not modified)"
            )
        if version == 0 and tables > 0:
            conn.close()
            raise StoreError(f"{path} is a SQLite database but not a graphonomous one")
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if read_only:
            if version < SCHEMA_VERSION:
                conn.close()
                raise StoreError(
                    f"{path} is read-only and has schema version {version}; this graphonomous "
                    f"needs {SCHEMA_VERSION} (an upgrade writes): open a writable copy once"
                )
            return conn
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        for number in range(version, SCHEMA_VERSION):
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[number]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                conn.close()
                raise
        return conn

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._note_sound_state(wait=True)

    def _note_sound_state(self, *, wait: bool = False) -> None:
        """Record the file's state as sound again when this session's writes moved it
        (a checkpoint; the final one at close): one stat, a write only on a change.
        A commit never waits out a racy mtime (close does)."""
        if self._sound_state is None or self.read_only:
            return
        state = verify.file_state(self.path)
        if state is not None and state != self._sound_state:
            recorded = verify.record_sound(self.path, state, wait=wait)
            if recorded is not None:
                self._sound_state = recorded

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    # -- transactions ----------------------------------------------------

    @contextmanager
    def transaction(self, *, retry: bool = True) -> Iterator[None]:
        """All writes inside commit together or not at all.

        The outermost call holds the store lock and a write lock on the file
        (BEGIN IMMEDIATE); nested calls use savepoints so an inner failure that
        the caller catches does not undo the outer work.
        """
        refusal = self.write_refusal()
        if refusal is not None:
            raise StoreError(refusal)
        with self._lock:
            depth = self._depth
            self._depth += 1
            savepoint = f"sp{depth}"
            pending_before = len(self._after_commit)
            try:
                if depth == 0 and retry:
                    self._begin_immediate()
                elif depth == 0:
                    self._conn.execute("BEGIN IMMEDIATE")
                else:
                    self._conn.execute(f"SAVEPOINT {savepoint}")
            except BaseException:
                self._depth = depth
                raise
            try:
                if depth == 0:
                    for listener in list(self._on_begin):
                        listener()
                yield
            except BaseException:
                # Callbacks registered inside the undone scope must never run.
                del self._after_commit[pending_before:]
                _rollback(self._conn, None if depth == 0 else savepoint)
                raise
            else:
                try:
                    self._conn.execute("COMMIT" if depth == 0 else f"RELEASE {savepoint}")
                except BaseException:  # e.g. the disk filled up: nothing is kept
                    del self._after_commit[pending_before:]
                    if depth == 0:
                        _rollback(self._conn)
                    raise
            finally:
                self._depth = depth
            if depth == 0:
                self._note_sound_state()
                callbacks, self._after_commit = self._after_commit, []
                for callback in callbacks:
                    callback()
                for listener in list(self._on_commit):
                    listener()

    def _begin_immediate(self) -> None:
        """BEGIN IMMEDIATE, waiting out other processes' write transactions.

        SQLite's busy handler waits up to BUSY_TIMEOUT_MS per attempt; on
        "database is locked" the attempt is repeated after a jittered,
        doubling pause until WRITE_WAIT_S have passed (then StoreError).
        """
        deadline = time.monotonic() + WRITE_WAIT_S
        pause = _BACKOFF_FIRST_S
        while True:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not is_busy_error(exc):
                    raise
                if time.monotonic() + pause > deadline:
                    raise StoreError(
                        f"{self.path}: another process kept the database locked for "
                        f"{WRITE_WAIT_S:.0f} s; try again later"
                    ) from exc
                time.sleep(pause * (0.5 + random.random()))
                pause = min(_BACKOFF_MAX_S, pause * 2)

    def try_write(self, write: Callable[[], None], wait_ms: int = _CACHE_BUSY_TIMEOUT_MS) -> bool:
        """Run `write()` in its own transaction if the file takes it now; best effort.

        For writes a reader may skip (access counters): the lock is waited
        for at most `wait_ms` (no retries), and a read-only file, a full disk
        or a busy database make it return False with nothing written.
        Inside an open transaction it joins it (a savepoint).
        """
        if self.write_refusal() is not None:
            return False  # read-only or damaged: the reader answers without bookkeeping
        with self._lock:
            if self._conn.in_transaction:
                with self.transaction():
                    write()
                return True
            self._conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
            try:
                with self.transaction(retry=False):
                    write()
            except sqlite3.OperationalError as exc:
                if is_unwritable_error(exc):
                    return False
                raise
            finally:
                self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            return True

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` once the outermost transaction has committed (now, if none is open).

        In-memory mirrors of the database (the vector and BM25 indexes) update
        through this, so a rolled-back write never leaves them out of step.
        """
        with self._lock:
            if self._depth == 0:
                callback()
            else:
                self._after_commit.append(callback)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one parameterised write written in this package (bookkeeping tables).

        Modules that own a bookkeeping table (learning, ingestion) use this and
        `query`; schemas stay in `schema.py`.  Wrap related writes in `transaction()`.
        """
        with self._lock:
            return self._conn.execute(sql, params)

    def execute_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one parameterised write for each row (inside the caller's transaction)."""
        with self._lock:
            self._conn.executemany(sql, rows)

    @property
    def in_transaction(self) -> bool:
        """True while a `transaction()` (or any open write) is in progress."""
        return bool(self._conn.in_transaction)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Rows of one parameterised read written in this package."""
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Several reads from one consistent state of the file (a deferred read
        transaction; inside an open write transaction it simply joins it)."""
        with self._lock:
            if self._conn.in_transaction:
                yield
                return
            self._conn.execute("BEGIN")
            try:
                yield
            finally:
                self._conn.execute("COMMIT")

    def fingerprint(self) -> tuple[int, int]:
        """A value that changes whenever the database may have changed: rows written
        through this connection and commits by other connections.  O(1)."""
        with self._lock:  # total_changes: sqlite3_total_changes, no statement needed
            version = self._conn.execute("PRAGMA data_version").fetchall()[0][0]
            return int(self._conn.total_changes), int(version)

    # -- change log ----------------------------------------------------------

    def change_generation(self) -> int:
        """The newest change-log seq visible to this connection (0: no change yet).  O(log n)."""
        return int(self.query("SELECT coalesce(max(seq), 0) FROM node_changes")[0][0])

    def changes_since(
        self, generation: int, model: str | None = None
    ) -> tuple[int, list[str] | None]:
        """Node ids changed after `generation`: ``(new generation, sorted ids)``.

        With `model`, a row that records another model's vector being written or
        dropped is skipped (that process's vectors are none of this one's indexes);
        changes of the node itself and of `model`'s vectors are kept.  The new
        generation is the newest row either way, so skipped rows are read once.
        The ids are None when the log no longer reaches back that far (pruned,
        or a GDPR erase scrubbed it): the caller must reload in full.
        Complexity: O(changes since `generation`).
        """
        with self.read_snapshot():
            rows = self.query(
                "SELECT seq, node_id, model FROM node_changes WHERE seq > ? ORDER BY seq",
                (generation,),
            )
            if not rows:
                return generation, []
            floor = int(self.query("SELECT min(seq) FROM node_changes")[0][0])
        newest = int(rows[-1][0])
        ids = {str(row[1]) for row in rows if model is None or row[2] is None or row[2] == model}
        if floor > generation + 1 or "" in ids:
            return newest, None
        return newest, sorted(ids)

    def index_rows(
        self, node_ids: Sequence[str], model: str
    ) -> list[tuple[str, str, bool, bytes | None]]:
        """``(id, content, indexed, embedding of `model` or None)`` of the existing nodes
        among `node_ids`, by id (absent ids were deleted); indexed = live and not a
        retrieval aid (what the search indexes hold).  O(len(node_ids))."""
        found: list[tuple[str, str, bool, bytes | None]] = []
        for chunk in _chunks(sorted(set(node_ids))):
            rows = self.query(
                f"SELECT n.id, n.content, n.forgotten_at IS NULL AND {_SEARCHABLE}, e.embedding "
                "FROM nodes n LEFT JOIN node_embeddings e ON e.node_id = n.id AND e.model = ? "
                f"WHERE {_IN_NS} AND n.id IN ({_placeholders(len(chunk))})",
                [model, self.namespace, *chunk],
            )
            found.extend(
                (row[0], row[1], bool(row[2]), None if row[3] is None else bytes(row[3]))
                for row in rows
            )
        found.sort()
        return found

    def live_texts(self) -> list[tuple[str, str]]:
        """(id, content) of every live searchable node (no retrieval aid), oldest first:
        what the BM25 index holds."""
        return list(self.iter_live_texts())

    def iter_live_texts(self) -> Iterator[tuple[str, str]]:
        """`live_texts` (same rows, same order) row by row from one statement: a caller
        indexing them holds one text at a time, not every text.  The store's lock is
        held until the iterator is exhausted or closed: consume it inside one
        `read_snapshot`, with no other thread waiting on the store meanwhile."""
        with self._lock:
            cursor = self._conn.execute(_LIVE_TEXTS_SQL, (self.namespace,))
            for row in cursor:
                yield row[0], row[1]

    def live_ids_without_embedding(self, model: str) -> list[str]:
        """Ids of live searchable nodes that have no vector of `model` (to embed), by id."""
        rows = self.query(
            "SELECT n.id FROM nodes n LEFT JOIN node_embeddings e "
            "ON e.node_id = n.id AND e.model = ? "
            f"WHERE {_IN_NS} AND n.forgotten_at IS NULL AND {_SEARCHABLE} AND e.node_id IS NULL "
            "ORDER BY n.id",
            (model, self.namespace),
        )
        return [row[0] for row in rows]

    def prune_change_log(self, keep: int = CHANGE_LOG_KEEP) -> int:
        """Drop all but the `keep` newest change-log rows; returns how many went."""
        newest = self.change_generation()
        return int(
            self.execute("DELETE FROM node_changes WHERE seq <= ?", (newest - keep,)).rowcount
        )

    def erase_change_traces(self, node_id: str) -> None:
        """GDPR erase: no change-log row or saved index may keep the erased id.

        The node's log rows are replaced by one resync marker (empty id), so
        every process reloads its indexes in full instead of missing the
        removal; saved derived indexes of every model are dropped (rebuilt on
        next use).
        Inside the caller's transaction.
        """
        self.execute("DELETE FROM node_changes WHERE node_id = ?", (node_id,))
        self.execute("INSERT INTO node_changes (node_id) VALUES ('')")
        self.execute("DELETE FROM derived_indexes")

    # What an incomplete truncating checkpoint means on this backend: None = another
    # connection's read transaction holds the WAL (SQLite); else the reason in words.
    checkpoint_refusal: str | None = None
    # Whether another connection's read transaction makes VACUUM wait (PostgreSQL's
    # VACUUM FULL takes each table's exclusive lock); SQLite's WAL readers never do.
    readers_block_vacuum: bool = False

    def scrub_obstacles(self) -> list[dict[str, str]]:
        """Settings under which a GDPR scrub cannot prove the erased bytes left the store:
        ``[{setting, value, advice}]``.  None for a SQLite file: the scrub reads every file
        of the store itself."""
        return []

    # -- derived indexes -------------------------------------------------------

    def derived_name(self, name: str) -> str:
        """The stored name of this namespace's derived index `name`: the bare name in
        `default` (files made before namespaces keep their saved copies), else
        ``"<namespace>:<name>"`` (':' is no namespace character, so names never clash)."""
        return name if self.namespace == DEFAULT_NAMESPACE else f"{self.namespace}:{name}"

    def load_derived(self, name: str, model: str) -> tuple[int, bytes] | None:
        """A saved derived index: ``(generation, data)``, or None (absent or other model)."""
        rows = self.query(
            "SELECT generation, data FROM derived_indexes WHERE name = ? AND model = ?",
            (self.derived_name(name), model),
        )
        return (int(rows[0][0]), bytes(rows[0][1])) if rows else None

    def derived_nonce(self, name: str, model: str) -> bytes | None:
        """The first 8 bytes of a saved index (the nonce of a sectioned save), or None."""
        rows = self.query(
            "SELECT substr(data, 1, 8) FROM derived_indexes WHERE name = ? AND model = ?",
            (self.derived_name(name), model),
        )
        return bytes(rows[0][0]) if rows else None

    def load_derived_sections(
        self, name: str, model: str, indices: Sequence[int]
    ) -> list[bytes] | None:
        """Sections of an index saved with `save_derived_sections`, each still
        prefixed by its save's nonce (the caller compares); None when one is
        missing.  One primary-key read per section, all from one state."""
        found: list[bytes] = []
        name = self.derived_name(name)
        with self.read_snapshot():
            for index in indices:
                rows = self.query(
                    "SELECT data FROM derived_indexes WHERE name = ? AND model = ?",
                    (f"{name}{_PART}{index}", model),
                )
                if not rows:
                    return None
                found.append(bytes(rows[0][0]))
        return found

    def save_derived_sections(
        self,
        name: str,
        model: str,
        generation: int,
        header: bytes,
        sections: Iterable[bytes | memoryview],
    ) -> bool:
        """Save a derived index as a header row and one row per section (named
        ``name/0``, ``name/1``, ...), so a reader can take a few sections without
        the rest; each section is stored behind the header's first 8 bytes (the
        save's nonce).  Best effort and generation-checked, like `save_derived`."""
        nonce = header[:8]
        name = self.derived_name(name)
        # Generated row by row: the nonce-prefixed copy of one section at a time, not of
        # all of them (≈ 90 MB for a 50K-node vector index).
        rows = itertools.chain(
            [(name, model, generation, header)],
            ((f"{name}{_PART}{i}", model, generation, nonce + s) for i, s in enumerate(sections)),
        )
        return self._save_rows(name, model, generation, rows)

    def save_derived(self, name: str, model: str, generation: int, data: bytes) -> bool:
        """Save a derived index, best effort: False (nothing written) when the file
        cannot take writes now (read-only, disk full, locked by another process) or
        the copy is stale past an erase (`_stale_copy`, checked inside the write)."""
        name = self.derived_name(name)
        return self._save_rows(name, model, generation, [(name, model, generation, data)])

    def save_derived_parts(
        self,
        name: str,
        model: str,
        generation: int,
        size: int,
        parts: Iterable[bytes | memoryview],
    ) -> bool:
        """`save_derived` of the concatenation of `parts` (`size` bytes in all; the same
        stored value), written into the row part by part (incremental blob I/O) as
        they are taken, never joined: the caller's current piece is the one copy held
        (a joined value, then SQLite's copy of it while inserting, were two more).  A
        connection without blob I/O (PostgreSQL) saves the joined value.  Raises
        ValueError (nothing written) when the parts do not add up to `size`."""
        blobopen = getattr(self._conn, "blobopen", None)
        if blobopen is None:
            return self.save_derived(name, model, generation, b"".join(parts))
        name = self.derived_name(name)

        def fill() -> None:
            cursor = self._conn.execute(
                "INSERT INTO derived_indexes (name, model, generation, data) "
                "VALUES (?, ?, ?, zeroblob(?))",
                (name, model, generation, size),
            )
            assert cursor.lastrowid is not None
            written = 0
            with blobopen("derived_indexes", "data", cursor.lastrowid) as blob:
                for part in parts:
                    length = memoryview(part).nbytes
                    if written + length > size:
                        break
                    blob.write(part)
                    written += length
                else:
                    if written == size:
                        return
            raise ValueError(f"parts: they do not add up to size {size}")

        return self._save_rows(name, model, generation, [], fill)

    def _stale_copy(self, generation: int) -> bool:
        """Whether a copy reflecting `generation` may hold what a GDPR erase removed
        since: a resync marker (`erase_change_traces`) lies after it, or the log no
        longer reaches back to it (what changed is unknown).  Inside the save's write
        transaction, so no erase can commit between this check and the save.  O(log n)."""
        rows = self._conn.execute(
            "SELECT coalesce(min(seq), 0), coalesce(max(seq), 0), "
            "EXISTS (SELECT 1 FROM node_changes WHERE seq > ? AND node_id = '') "
            "FROM node_changes",
            (generation,),
        ).fetchall()
        floor, newest, marker = int(rows[0][0]), int(rows[0][1]), bool(rows[0][2])
        return newest > generation and (marker or floor > generation + 1)

    def _save_rows(
        self,
        name: str,
        model: str,
        generation: int,
        rows: Iterable[tuple[str, str, int, bytes]],
        fill: Callable[[], None] | None = None,
    ) -> bool:
        """Replace `name` of `model` and its sections by `rows` (and what `fill` writes in
        the same transaction) in one cache write (another model's copy of `name`
        stays); a copy stale past an erase is dropped (False, nothing written)."""
        try:
            with self._lock:
                if self._conn.in_transaction:
                    return False
                # A cache write never waits for another process's transaction.
                self._conn.execute(f"PRAGMA busy_timeout = {_CACHE_BUSY_TIMEOUT_MS}")
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                    try:
                        if self._stale_copy(generation):
                            self._conn.execute("ROLLBACK")
                            return False
                        self._conn.execute(
                            "DELETE FROM derived_indexes WHERE model = ? "
                            "AND (name = ? OR (name > ? AND name < ?))",
                            (model, name, f"{name}{_PART}", f"{name}{chr(ord(_PART) + 1)}"),
                        )
                        self._conn.executemany(
                            "INSERT INTO derived_indexes (name, model, generation, data) "
                            "VALUES (?, ?, ?, ?)",
                            rows,
                        )
                        if fill is not None:
                            fill()
                        self._conn.execute("COMMIT")
                    except BaseException:
                        _rollback(self._conn)
                        raise
                finally:
                    self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except sqlite3.OperationalError as exc:
            if is_unwritable_error(exc):
                return False
            raise
        return True

    # -- nodes -------------------------------------------------------------

    def insert_node(self, node: Node) -> None:
        try:
            self.execute(_NODE_INSERT, [*_node_params(node), self.namespace])
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc) or "PRIMARY KEY" in str(exc):
                raise ValidationError("id", f"a node with id {node.id!r} already exists") from exc
            raise ValidationError("node", f"rejected by the database: {exc}") from exc

    def get_node(self, node_id: str) -> Node | None:
        rows = self.query(
            f"{_NODE_SELECT} WHERE id = ? AND namespace = ?", (node_id, self.namespace)
        )
        return _row_to_node(rows[0]) if rows else None

    def require_node(self, node_id: str, *, include_forgotten: bool = False) -> Node:
        node = self.get_node(node_id)
        if node is None or (node.forgotten_at is not None and not include_forgotten):
            raise NotFoundError("node", node_id)
        return node

    def get_nodes(self, node_ids: Sequence[str]) -> dict[str, Node]:
        """Nodes by id (missing ids are simply absent from the result)."""
        unique = sorted(set(node_ids))
        found: dict[str, Node] = {}
        for chunk in _chunks(unique):
            rows = self.query(
                f"{_NODE_SELECT} WHERE namespace = ? AND id IN ({_placeholders(len(chunk))})",
                [self.namespace, *chunk],
            )
            for row in rows:
                node = _row_to_node(row)
                found[node.id] = node
        return found

    def update_node(self, node_id: str, **fields: Any) -> None:
        """Set columns of one node.  Unknown column names are a programming error.

        A learned `confidence` / `q_value` is also the node's new retention anchor
        (`base_confidence` / `base_q_value`, and `reinforced_at` = `updated_at` when
        given): time decays from what was last learned, so no writer can have its
        update undone by the next decay (SPEC "Retention").  Changed `content` drops
        the node's vectors of every model in the same transaction."""
        if "confidence" in fields:
            fields.setdefault("base_confidence", fields["confidence"])
        if "q_value" in fields:
            fields.setdefault("base_q_value", fields["q_value"])
        if {"confidence", "q_value"} & set(fields) and "updated_at" in fields:
            fields.setdefault("reinforced_at", fields["updated_at"])
        if "content" not in fields:
            self._update_row("node", node_id, fields, NODE_COLUMNS[1:])
            return
        refuse_nul("content", fields["content"])  # before the DELETE below binds it
        with self.transaction():
            # Every model's vector embeds the old text: none may outlive it (the
            # caller stores its own model's new vector after this; the others are
            # built again by their processes, `Engine.vector_index`).
            self.execute(
                "DELETE FROM node_embeddings WHERE node_id = ? AND EXISTS "
                "(SELECT 1 FROM nodes WHERE id = ? AND namespace = ? AND content <> ?)",
                (node_id, node_id, self.namespace, fields["content"]),
            )
            self._update_row("node", node_id, fields, NODE_COLUMNS[1:])

    def bump_access(self, node_ids: Sequence[str], now: str) -> None:
        """access_count += 1 and last_accessed_at = `now` on each existing node, once per id.

        A retrieval is a reinforcement: the node's retention anchor moves to `now`
        and its decayed confidence and Q-value return to their anchor values
        (seed 003: a TTL runs "without reinforcement").  The increment is done by
        SQL inside the caller's write transaction, so concurrent processes never
        lose one.  One statement per 900 ids.
        """
        for chunk in _chunks(sorted(set(node_ids))):
            self.execute(
                "UPDATE nodes SET access_count = access_count + 1, last_accessed_at = ?, "
                "reinforced_at = ?, confidence = COALESCE(base_confidence, confidence), "
                "q_value = COALESCE(base_q_value, q_value) "
                f"WHERE namespace = ? AND id IN ({_placeholders(len(chunk))})",
                [now, now, self.namespace, *chunk],
            )

    def delete_node(self, node_id: str) -> int:
        """Delete a node; its edges and embedding go with it (ON DELETE CASCADE).

        Returns the number of edges removed.
        """
        with self.transaction():
            edge_count = self.query(
                "SELECT count(*) FROM edges "
                "WHERE namespace = ? AND (source_id = ? OR target_id = ?)",
                (self.namespace, node_id, node_id),
            )[0][0]
            cursor = self.execute(
                "DELETE FROM nodes WHERE id = ? AND namespace = ?", (node_id, self.namespace)
            )
            if cursor.rowcount == 0:
                raise NotFoundError("node", node_id)
        return int(edge_count)

    def delete_nodes(self, node_ids: Sequence[str]) -> int:
        """Delete many nodes (edges and embeddings cascade); absent ids are ignored.

        Returns how many nodes were deleted.  Inside the caller's transaction.
        """
        deleted = 0
        for chunk in _chunks(sorted(set(node_ids))):
            cursor = self.execute(
                f"DELETE FROM nodes WHERE namespace = ? AND id IN ({_placeholders(len(chunk))})",
                [self.namespace, *chunk],
            )
            deleted += cursor.rowcount
        return deleted

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
    ) -> list[Node]:
        """Nodes matching every given filter.

        `forgotten`: False (default) hides soft-forgotten nodes, True returns
        only them, None returns both.  `order` is one of `_NODE_ORDERS`.
        """
        where, params = self._node_filters(
            node_type=node_type,
            timescale=timescale,
            agent_id=agent_id,
            min_confidence=min_confidence,
            max_confidence=max_confidence,
            forgotten=forgotten,
            created_after=created_after,
            created_before=created_before,
        )
        sql = f"{_NODE_SELECT}{where} ORDER BY {_NODE_ORDERS[order]}"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        return [_row_to_node(row) for row in self.query(sql, params)]

    def count_nodes(self, **filters: Any) -> int:
        where, params = self._node_filters(**filters)
        return int(self.query(f"SELECT count(*) FROM nodes{where}", params)[0][0])

    def _node_filters(
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
    ) -> tuple[str, list[Any]]:
        clauses: list[str] = ["namespace = ?"]
        params: list[Any] = [self.namespace]
        for column, value in (
            ("node_type", node_type),
            ("timescale", timescale),
            ("agent_id", agent_id),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if min_confidence is not None:
            clauses.append("confidence >= ?")
            params.append(min_confidence)
        if max_confidence is not None:
            clauses.append("confidence <= ?")
            params.append(max_confidence)
        if created_after is not None:
            clauses.append("created_at >= ?")
            params.append(created_after)
        if created_before is not None:
            clauses.append("created_at <= ?")
            params.append(created_before)
        if forgotten is True:
            clauses.append("forgotten_at IS NOT NULL")
        elif forgotten is False:
            clauses.append("forgotten_at IS NULL")
        return f" WHERE {' AND '.join(clauses)}", params

    def node_ids(self, **filters: Any) -> list[str]:
        """Ids of nodes matching the `list_nodes` filters (live nodes by default), sorted."""
        where, params = self._node_filters(**filters)
        return [row[0] for row in self.query(f"SELECT id FROM nodes{where} ORDER BY id", params)]

    # -- embeddings --------------------------------------------------------

    def set_embedding(self, node_id: str, blob: bytes, model: str) -> None:
        """Store the node's vector of `model` (its other models' vectors stay)."""
        self.execute(
            "INSERT INTO node_embeddings (node_id, embedding, model) VALUES (?, ?, ?) "
            "ON CONFLICT(node_id, model) DO UPDATE SET embedding = excluded.embedding",
            (node_id, blob, model),
        )

    def delete_embeddings(self, node_ids: Sequence[str]) -> None:
        """Drop the stored vectors of these nodes, of every model (absent ones are ignored)."""
        for chunk in _chunks(sorted(set(node_ids))):
            self.execute(
                f"DELETE FROM node_embeddings WHERE node_id IN ({_placeholders(len(chunk))})",
                chunk,
            )

    def get_embedding(self, node_id: str, model: str | None = None) -> bytes | None:
        """The node's stored vector of `model` (None: of any model, the first by name)."""
        rows = self.query(
            "SELECT e.embedding FROM node_embeddings e JOIN nodes n ON n.id = e.node_id "
            f"WHERE e.node_id = ? AND {_IN_NS} AND (? IS NULL OR e.model = ?) "
            "ORDER BY e.model LIMIT 1",
            (node_id, self.namespace, model, model),
        )
        return bytes(rows[0][0]) if rows else None

    def iter_embeddings(
        self, model: str, *, live_only: bool = True, searchable_only: bool = False
    ) -> list[tuple[str, bytes]]:
        """(node_id, blob) of every embedding of one model (live nodes only by default;
        with `searchable_only`, no retrieval aid: what the vector index holds)."""
        sql = (
            "SELECT e.node_id, e.embedding FROM node_embeddings e JOIN nodes n ON n.id = e.node_id "
            f"WHERE e.model = ? AND {_IN_NS}"
        )
        if live_only:
            sql += " AND n.forgotten_at IS NULL"
        if searchable_only:
            sql += f" AND {_SEARCHABLE}"
        rows = self.query(sql + " ORDER BY e.node_id", (model, self.namespace))
        return [(row[0], bytes(row[1])) for row in rows]

    def embedding_pages(
        self, model: str, *, searchable_only: bool = False, page: int = EMBEDDING_PAGE
    ) -> Iterator[list[tuple[str, bytes]]]:
        """`iter_embeddings` of live nodes (same rows, same order) in pages of `page`
        rows, each one keyset query (``node_id > last``): a caller streaming them holds
        one page, not every vector.  Consistent across pages inside `read_snapshot`."""
        sql = (
            "SELECT e.node_id, e.embedding FROM node_embeddings e JOIN nodes n ON n.id = e.node_id "
            f"WHERE e.model = ? AND {_IN_NS} AND n.forgotten_at IS NULL AND e.node_id > ?"
        )
        if searchable_only:
            sql += f" AND {_SEARCHABLE}"
        sql += " ORDER BY e.node_id LIMIT ?"
        after = ""  # below every id
        while True:
            rows = self.query(sql, (model, self.namespace, after, page))
            if not rows:
                return
            yield [(row[0], bytes(row[1])) for row in rows]
            after = rows[-1][0]

    # -- edges -------------------------------------------------------------

    def insert_edge(self, edge: Edge) -> None:
        self._require_endpoints(edge)
        try:
            self.execute(_EDGE_INSERT, [*_edge_params(edge), self.namespace])
        except sqlite3.IntegrityError as exc:
            message = str(exc)
            if "FOREIGN KEY" in message:
                raise ValidationError(
                    "source_id/target_id", "both endpoints must be existing nodes"
                ) from exc
            if "UNIQUE" in message:
                raise ValidationError(
                    "relationship",
                    f"an edge {edge.source_id} -[{edge.relationship}]-> {edge.target_id} "
                    "already exists",
                ) from exc
            raise ValidationError("edge", f"rejected by the database: {message}") from exc

    def _require_endpoints(self, edge: Edge) -> None:
        """Both endpoints are nodes of this namespace (another namespace's node answers
        like a missing one: the foreign key's message)."""
        found = self.query(
            "SELECT count(*) FROM nodes WHERE namespace = ? AND id IN (?, ?)",
            (self.namespace, edge.source_id, edge.target_id),
        )[0][0]
        if int(found) < len({edge.source_id, edge.target_id}):
            raise ValidationError("source_id/target_id", "both endpoints must be existing nodes")

    def get_edge(self, edge_id: str) -> Edge | None:
        rows = self.query(
            f"{_EDGE_SELECT} WHERE id = ? AND namespace = ?", (edge_id, self.namespace)
        )
        return _row_to_edge(rows[0]) if rows else None

    def find_edge(self, source_id: str, target_id: str, relationship: str) -> Edge | None:
        rows = self.query(
            f"{_EDGE_SELECT} WHERE source_id = ? AND target_id = ? AND relationship = ? "
            "AND namespace = ?",
            (source_id, target_id, relationship, self.namespace),
        )
        return _row_to_edge(rows[0]) if rows else None

    def upsert_edge(self, edge: Edge, stated: Collection[str] = UPSERT_STATED) -> tuple[str, bool]:
        """Store `edge`, or re-assert the existing (source, target, relationship) edge.

        The one edge upsert (store_edge, learning's links, the merge of nodes;
        SPEC "Edge upsert").  `stated`: which of ``strength``, ``metadata``,
        ``decay_rate`` the caller gave (the others of `edge` are defaults and
        leave an existing edge alone).  An existing edge gets
        - strength: max(existing, stated) — a re-assertion is more support,
          never evidence against, so it never weakens an edge (weakening is
          `manage_edge update` or decay) and the result does not depend on
          which of two writers came last;
        - metadata: the stated keys merged over its own;
        - decay_rate: the stated one;
        - updated_at: the edge's.
        Returns (edge id, created).  Runs in a transaction (a savepoint inside
        the caller's).  O(1).
        """
        unknown = set(stated) - set(UPSERT_STATED)
        if unknown:
            raise ValueError(f"not upserted edge fields: {sorted(unknown)}")
        with self.transaction():
            existing = self.find_edge(edge.source_id, edge.target_id, edge.relationship)
            if existing is None:
                self.insert_edge(edge)
                return edge.id, True
            updates: dict[str, Any] = {"updated_at": edge.updated_at}
            if "strength" in stated and edge.strength > existing.strength:
                updates["strength"] = edge.strength
            if "metadata" in stated and edge.metadata:
                updates["metadata"] = {**existing.metadata, **edge.metadata}
            if "decay_rate" in stated:
                updates["decay_rate"] = edge.decay_rate
            self.update_edge(existing.id, **updates)
            return existing.id, False

    def update_edge(self, edge_id: str, **fields: Any) -> None:
        """Set mutable columns of one edge (not its endpoints or relationship)."""
        self._update_row("edge", edge_id, fields, EDGE_COLUMNS[4:])

    def _update_row(
        self, kind: str, row_id: str, fields: dict[str, Any], allowed: Sequence[str]
    ) -> None:
        """UPDATE one node or edge row; JSON columns are serialised, booleans stored as 0/1."""
        unknown = set(fields) - set(allowed)
        if unknown:
            raise ValueError(f"unknown or immutable {kind} columns: {sorted(unknown)}")
        if not fields:
            return
        names = sorted(fields)  # column names come from `allowed`, never from input
        for name in names:
            refuse_nul(name, fields[name])
        values = [
            canonical_json(fields[name])
            if name in _JSON_COLUMNS
            else int(fields[name])
            if isinstance(fields[name], bool)
            else fields[name]
            for name in names
        ]
        assignments = ", ".join(f"{name} = ?" for name in names)
        table = "nodes" if kind == "node" else "edges"
        cursor = self.execute(
            f"UPDATE {table} SET {assignments} WHERE id = ? AND namespace = ?",
            [*values, row_id, self.namespace],
        )
        if cursor.rowcount == 0:
            raise NotFoundError(kind, row_id)

    def delete_edge(self, edge_id: str) -> None:
        cursor = self.execute(
            "DELETE FROM edges WHERE id = ? AND namespace = ?", (edge_id, self.namespace)
        )
        if cursor.rowcount == 0:
            raise NotFoundError("edge", edge_id)

    def edges_of(
        self, node_id: str, direction: str = "both", relationship: str | None = None
    ) -> list[Edge]:
        """Edges touching a node: direction "out" (node is source), "in" or "both"."""
        check_choice("direction", direction, EDGE_DIRECTIONS)
        condition = {
            "out": "source_id = ?",
            "in": "target_id = ?",
            "both": "(source_id = ? OR target_id = ?)",
        }[direction]
        params: list[Any] = [node_id, node_id] if direction == "both" else [node_id]
        condition += " AND namespace = ?"
        params.append(self.namespace)
        if relationship is not None:
            condition += " AND relationship = ?"
            params.append(relationship)
        return [
            _row_to_edge(row)
            for row in self.query(f"{_EDGE_SELECT} WHERE {condition} ORDER BY id", params)
        ]

    def edges_touching(self, node_ids: Iterable[str]) -> list[Edge]:
        """Every edge with at least one endpoint in `node_ids`, by id."""
        unique = sorted(set(node_ids))
        found: dict[str, Edge] = {}
        for chunk in _chunks(unique, SQL_VARIABLE_CHUNK // 2):
            marks = _placeholders(len(chunk))
            rows = self.query(
                f"{_EDGE_SELECT} WHERE namespace = ? "
                f"AND (source_id IN ({marks}) OR target_id IN ({marks}))",
                [self.namespace, *chunk, *chunk],
            )
            for row in rows:
                edge = _row_to_edge(row)
                found[edge.id] = edge
        return [found[key] for key in sorted(found)]

    def list_edges_between(self, node_ids: Iterable[str]) -> list[Edge]:
        """Every edge whose source AND target are both in `node_ids`, ordered by id.

        Parameterised and chunked: the source side is queried in chunks under
        SQLite's variable limit and the target side is filtered in Python, so
        any number of ids works.  O(E_touching) rows read.
        """
        wanted = set(node_ids)
        ordered = sorted(wanted)
        found: list[Edge] = []
        for chunk in _chunks(ordered):
            rows = self.query(
                f"{_EDGE_SELECT} WHERE namespace = ? "
                f"AND source_id IN ({_placeholders(len(chunk))})",
                [self.namespace, *chunk],
            )
            found.extend(_row_to_edge(row) for row in rows if row["target_id"] in wanted)
        found.sort(key=lambda edge: edge.id)
        return found

    def edges_leaving(self, node_ids: Sequence[str]) -> dict[str, list[Edge]]:
        """``{source id: its edges, by id}`` for the ids with an outgoing edge (the rows
        `list_edges_between` reads, grouped for the engine's read cache).  O(E_leaving)."""
        found: dict[str, list[Edge]] = {}
        for chunk in _chunks(sorted(set(node_ids))):
            rows = self.query(
                f"{_EDGE_SELECT} WHERE namespace = ? "
                f"AND source_id IN ({_placeholders(len(chunk))})",
                [self.namespace, *chunk],
            )
            for row in rows:
                edge = _row_to_edge(row)
                found.setdefault(edge.source_id, []).append(edge)
        for edges in found.values():
            edges.sort(key=lambda edge: edge.id)
        return found

    def list_edges(
        self,
        *,
        relationship: str | None = None,
        agent_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Edge]:
        clauses: list[str] = ["namespace = ?"]
        params: list[Any] = [self.namespace]
        if relationship is not None:
            clauses.append("relationship = ?")
            params.append(relationship)
        if agent_id is not None:
            clauses.append("agent_id = ?")
            params.append(agent_id)
        sql = f"{_EDGE_SELECT} WHERE {' AND '.join(clauses)} ORDER BY id"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        return [_row_to_edge(row) for row in self.query(sql, params)]

    # -- memory-compat entities (server_memory): nodes with metadata.entity_name ----------

    def entity_nodes_named(self, agent_id: str, names: Iterable[str]) -> dict[str, Node]:
        """name → the entity node of each given name that has one: the oldest live node of
        `agent_id` whose metadata.entity_name is that string (idx_nodes_entity_name).
        Names without an entity are left out.  O(len(names) · log V)."""
        unique = _stored_names(names)
        found: dict[str, Node] = {}
        for chunk in _chunks(unique, SQL_VARIABLE_CHUNK - 2):
            rows = self.query(
                f"{_NODE_SELECT} INDEXED BY idx_nodes_entity_name "
                f"WHERE {_ENTITY_NAME} IN ({_placeholders(len(chunk))}) "
                "AND agent_id = ? AND namespace = ? AND forgotten_at IS NULL "
                "ORDER BY created_at, id",
                [*chunk, agent_id, self.namespace],
            )
            for node in map(_row_to_node, rows):
                name = node.metadata.get("entity_name")
                if isinstance(name, str):
                    found.setdefault(name, node)
        return found

    def iter_entity_rows(
        self, agent_id: str, containing: Sequence[str] = (), page: int = ENTITY_PAGE
    ) -> Iterator[tuple[str, str]]:
        """(node id, metadata JSON text) of every entity node of `agent_id` (the oldest
        live node per entity_name; the caller checks the name is a string), oldest first
        (created_at, id), read `page` rows at a time (keyset paging: memory is one page).
        With `containing`: only rows whose ASCII-lower-cased metadata text contains one
        of those strings (the stored JSON is ASCII, so this is Python's lower case too).
        Run inside `read_snapshot` for one consistent state."""
        after: tuple[str, str] = ("", "")
        wanted = " OR ".join("instr(lower(n.metadata), ?) > 0" for _ in containing)
        having = f" AND ({wanted})" if containing else ""
        while True:
            rows = self.query(
                "SELECT n.id, n.metadata, n.created_at FROM nodes n INDEXED BY idx_nodes_created "
                f"WHERE {_entity_condition('n')} AND n.created_at >= ? "
                f"AND (n.created_at > ? OR n.id > ?){having} ORDER BY n.created_at, n.id LIMIT ?",
                [self.namespace, agent_id, after[0], after[0], after[1], *containing, page],
            )
            yield from ((row[0], row[1]) for row in rows)
            if len(rows) < page:
                return
            after = (rows[-1][2], rows[-1][0])

    def iter_entity_edges(
        self, agent_id: str, node_ids: Iterable[str] | None = None, page: int = ENTITY_PAGE
    ) -> Iterator[tuple[str, str, str, str, str]]:
        """(edge id, source name, target name, relationship, metadata JSON text) of every
        edge joining two entity nodes of `agent_id` (see `iter_entity_rows`) with string
        names, by edge id; only the edges touching `node_ids` when given.  Paged; run
        inside `read_snapshot`."""
        select = (
            "SELECT e.id, json_extract(s.metadata, '$.entity_name'), "
            "json_extract(t.metadata, '$.entity_name'), e.relationship, e.metadata "
            "FROM edges e CROSS JOIN nodes s CROSS JOIN nodes t "
            "WHERE s.id = e.source_id AND t.id = e.target_id "
            f"AND {_entity_condition('s')} AND {_entity_condition('t')}"
        )
        if node_ids is None:
            after = ""
            while True:
                rows = self.query(
                    f"{select} AND e.id > ? ORDER BY e.id LIMIT ?",
                    [*self._entity_pair(agent_id), after, page],
                )
                yield from _entity_edges(rows)
                if len(rows) < page:
                    return
                after = rows[-1][0]
        found: dict[str, tuple[str, str, str, str, str]] = {}
        for chunk in _chunks(sorted(set(node_ids)), SQL_VARIABLE_CHUNK // 2 - 2):
            marks = _placeholders(len(chunk))
            rows = self.query(
                f"{select} AND (e.source_id IN ({marks}) OR e.target_id IN ({marks}))",
                [*self._entity_pair(agent_id), *chunk, *chunk],
            )
            found.update((item[0], item) for item in _entity_edges(rows))
        yield from (found[key] for key in sorted(found))

    def _entity_pair(self, agent_id: str) -> list[str]:
        """The parameters of two `_entity_condition`s (source and target)."""
        return [self.namespace, agent_id, self.namespace, agent_id]

    # -- memory-compat relations whose endpoints are not both entities (migration 9) --

    def dangling_relations(
        self, agent_id: str, names: Iterable[str] | None = None
    ) -> list[tuple[str, str, str, str]]:
        """(stamp, from name, to name, relationType) of the kept dangling relations of
        `agent_id`, by stamp; only those with an endpoint among `names` when given.
        O(R) without names; else O(len(names) · log R + matches) through the unique key
        (from) and idx_memory_dangling_to (to)."""
        select = (
            "SELECT stamp, from_name, to_name, relation_type FROM memory_dangling_relations "
            "WHERE namespace = ? AND agent_id = ?"
        )
        if names is None:
            rows = self.query(f"{select} ORDER BY stamp", [self.namespace, agent_id])
            return [(row[0], row[1], row[2], row[3]) for row in rows]
        found: dict[str, tuple[str, str, str, str]] = {}
        for chunk in _chunks(_stored_names(names), SQL_VARIABLE_CHUNK // 2 - 1):
            marks = _placeholders(len(chunk))
            rows = self.query(
                f"{select} AND (from_name IN ({marks}) OR to_name IN ({marks}))",
                [self.namespace, agent_id, *chunk, *chunk],
            )
            found.update((row[0], (row[0], row[1], row[2], row[3])) for row in rows)
        return [found[stamp] for stamp in sorted(found)]

    def add_dangling_relations(
        self, agent_id: str, relations: Iterable[tuple[str, str, str, str]]
    ) -> None:
        """Keep (stamp, from name, to name, relationType) rows (the caller checked that
        none is present; a repeat is an IntegrityError).  Inside the caller's transaction."""
        self.execute_many(
            "INSERT INTO memory_dangling_relations "
            "(stamp, agent_id, from_name, to_name, relation_type, namespace) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                (stamp, agent_id, source, target, kind, self.namespace)
                for stamp, source, target, kind in relations
            ),
        )

    def remove_dangling_relations(self, stamps: Iterable[str]) -> None:
        """Drop the kept dangling relations with these stamps (unknown stamps: nothing)."""
        self.execute_many(
            "DELETE FROM memory_dangling_relations WHERE stamp = ? AND namespace = ?",
            ((s, self.namespace) for s in stamps),
        )

    def remove_dangling_touching(self, agent_id: str, names: Iterable[str]) -> int:
        """Drop every kept dangling relation of `agent_id` with an endpoint among `names`
        (server-memory's delete_entities removes the relations of a name; an erase of an
        entity removes them too); returns how many went."""
        removed = 0
        for chunk in _chunks(_stored_names(names), SQL_VARIABLE_CHUNK // 2 - 1):
            marks = _placeholders(len(chunk))
            cursor = self.execute(
                "DELETE FROM memory_dangling_relations WHERE namespace = ? AND agent_id = ? "
                f"AND (from_name IN ({marks}) OR to_name IN ({marks}))",
                [self.namespace, agent_id, *chunk, *chunk],
            )
            removed += max(0, cursor.rowcount)
        return removed

    def live_node_facts(self) -> list[tuple[str, float, str]]:
        """(id, confidence, agent_id) of every live node, by id: a light whole-graph read."""
        rows = self.query(
            "SELECT id, confidence, agent_id FROM nodes WHERE namespace = ? "
            "AND forgotten_at IS NULL ORDER BY id",
            (self.namespace,),
        )
        return [(row[0], float(row[1]), row[2]) for row in rows]

    def edges_without_metadata(self) -> list[Edge]:
        """Every edge, by id, with `metadata` left empty (not parsed) — for whole-graph work."""
        columns = ", ".join(c for c in EDGE_COLUMNS if c != "metadata")
        rows = self.query(
            f"SELECT {columns} FROM edges WHERE namespace = ? ORDER BY id", (self.namespace,)
        )
        return [Edge(**dict(row)) for row in rows]

    def count_edges(self) -> int:
        return int(
            self.query("SELECT count(*) FROM edges WHERE namespace = ?", (self.namespace,))[0][0]
        )

    # -- audit ---------------------------------------------------------------

    def audit(self, at: str, action: str, subject_id: str | None, details: dict[str, Any]) -> None:
        """Append one audit entry; its details name the acting principal when one acts
        (`ACTING_PRINCIPAL`: the token of the HTTP request being served)."""
        principal = ACTING_PRINCIPAL.get()
        if principal is not None:
            details = {**details, AUDIT_PRINCIPAL_KEY: principal}
        self.execute(
            "INSERT INTO audit_log (at, action, subject_id, details, namespace) "
            "VALUES (?, ?, ?, ?, ?)",
            (at, action, subject_id, json.dumps(details, sort_keys=True), self.namespace),
        )

    def audit_entries(
        self, subject_id: str | None = None, since: str | None = None
    ) -> list[dict[str, Any]]:
        """Audit entries in order, optionally of one subject and/or at or after `since`."""
        sql = "SELECT seq, at, action, subject_id, details FROM audit_log WHERE namespace = ?"
        params: list[Any] = [self.namespace]
        if subject_id is not None:
            sql += " AND subject_id = ?"
            params.append(subject_id)
        if since is not None:
            sql += " AND at >= ?"
            params.append(since)
        return [
            {
                "seq": row[0],
                "at": row[1],
                "action": row[2],
                "subject_id": row[3],
                "details": json.loads(row[4]),
            }
            for row in self.query(sql + " ORDER BY seq", params)
        ]

    # -- statistics ----------------------------------------------------------

    def grouped_counts(self, table: str, column: str, *, live_only: bool = False) -> dict[str, int]:
        """{value: count} of one column — table and column come from our code, never input.
        `live_only`: nodes only, soft-forgotten ones left out."""
        if (table, column) not in {
            ("nodes", "node_type"),
            ("nodes", "timescale"),
            ("nodes", "agent_id"),
            ("edges", "relationship"),
        }:
            raise ValueError(f"no grouped count for {table}.{column}")
        if live_only and table != "nodes":
            raise ValueError(f"live_only counts nodes, not {table}")
        where = "WHERE namespace = ?" + (" AND forgotten_at IS NULL" if live_only else "")
        rows = self.query(
            f"SELECT {column}, count(*) FROM {table} {where} GROUP BY {column} ORDER BY {column}",
            (self.namespace,),
        )
        return {str(row[0]): int(row[1]) for row in rows}

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """One value from a read-only query written in this package."""
        return self.query(sql, params)[0][0]

    # -- space: what the file holds, and giving free pages back (`compact`) -------------

    def file_bytes(self) -> int | None:
        """Bytes on disk: the database file plus its -wal file (None in memory)."""
        if self.path == ":memory:":
            return None
        return sum(
            os.path.getsize(name)
            for name in (self.path, f"{self.path}-wal")
            if os.path.exists(name)
        )

    def space(self, *, tables: bool = True) -> dict[str, Any] | None:
        """What takes the file: ``{file_bytes, page_size, page_count, free_pages, method,
        tables}`` (None from a backend without a file).  ``tables`` (method ``"dbstat"``,
        when SQLite has the dbstat virtual table) is ``[{name, bytes, index_bytes}]`` per
        table, its indexes' pages counted with it, largest first (then by name); without
        dbstat, or with `tables` False (method ``"page_count"``), only the whole file's
        page counts are given and ``tables`` is [].  O(1) page counts; O(pages) with
        dbstat, which reads every page of the file once."""
        page_size = int(self.scalar("PRAGMA page_size"))
        report: dict[str, Any] = {
            "file_bytes": self.file_bytes(),
            "page_size": page_size,
            "page_count": int(self.scalar("PRAGMA page_count")),
            "free_pages": int(self.scalar("PRAGMA freelist_count")),
            "method": "page_count",
            "tables": [],
        }
        if not tables:
            return report
        try:
            rows = self.query(
                "SELECT coalesce(m.tbl_name, d.name), m.type = 'index', sum(d.pgsize) "
                "FROM dbstat('main', 1) d LEFT JOIN sqlite_schema m ON m.name = d.name "
                "GROUP BY 1, 2"
            )
        except sqlite3.OperationalError:  # SQLite built without SQLITE_ENABLE_DBSTAT_VTAB
            return report
        sizes: dict[str, dict[str, Any]] = {}
        for name, is_index, size in rows:
            entry = sizes.setdefault(name, {"name": name, "bytes": 0, "index_bytes": 0})
            entry["index_bytes" if is_index else "bytes"] += int(size)
        report["method"] = "dbstat"
        report["tables"] = sorted(
            sizes.values(), key=lambda t: (-(t["bytes"] + t["index_bytes"]), t["name"])
        )
        return report

    def vacuum(self) -> None:
        """Rewrite the file without its free pages (``VACUUM``), then truncate the -wal
        file.  Outside any transaction; waits for other connections like a write.  O(file)
        time and up to twice the file's size on disk while it runs."""
        refusal = self.write_refusal()
        if refusal is not None:
            raise StoreError(refusal)
        with self._lock:
            if self._conn.in_transaction:
                raise StoreError("VACUUM cannot run inside a transaction")
            try:
                self._conn.execute("VACUUM")
            except sqlite3.OperationalError as exc:
                if not is_busy_error(exc):
                    raise
                raise StoreError(
                    f"{self.path} stayed locked by another connection's write for the whole "
                    f"busy timeout; nothing was changed: run compact again when it is done"
                ) from exc
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._note_sound_state()

    def integrity_check(self) -> str:
        return str(self.query("PRAGMA integrity_check")[0][0])

    def integrity_problems(self, limit: int = 100) -> list[str]:
        """Every problem ``PRAGMA integrity_check`` reports (at most `limit`); [] when ok.
        A file too damaged to check reports the error itself."""
        try:
            with self._lock:
                rows = self._conn.execute(f"PRAGMA integrity_check({int(limit)})").fetchall()
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        found = [str(row[0]) for row in rows]
        return [] if found == ["ok"] else found
