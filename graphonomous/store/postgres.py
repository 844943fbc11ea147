"""Server mode: the same store on PostgreSQL (psycopg 3), for several servers on one database.

Rules of this module:
- psycopg is imported only when a PostgreSQL store is opened (`import graphonomous`
  stays stdlib-only); a missing package is a StoreError naming the extra to install.
- `PostgresStore` IS a `Store`: every node/edge/embedding statement keeps its one home
  in store/sqlite.py (and the learning modules' bookkeeping SQL in theirs).  Only the
  connection differs: `_PgConnection` translates the small SQLite dialect this package
  writes (``?`` marks, ``instr``, ``julianday``, ``json_extract``, ``json_each``,
  catalogue reads, the PRAGMAs it uses) into PostgreSQL, and turns psycopg errors
  into the sqlite3 exception classes the callers already handle.
- Tables come from the same MIGRATIONS as SQLite (schema.py), translated by
  `pg_ddl` (REAL→DOUBLE PRECISION, INTEGER→BIGINT, BLOB→BYTEA, AUTOINCREMENT→identity,
  the change-log triggers → one PL/pgSQL function); `graphonomous_schema` holds the
  version; a database newer than this code is refused untouched.
- Writers are serialised exactly like SQLite's BEGIN IMMEDIATE: every write
  transaction takes one transaction-scoped advisory lock first, and the change-log
  trigger takes it too (so even a bare statement cannot interleave), hence change-log
  seq order is commit order and `changes_since` never misses a row.  Reads never wait.
- A lost connection is reported as a StoreError (the open transaction is gone, nothing
  of it was kept) and the next call reconnects; a statement outside a transaction is
  retried once on a fresh connection.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from ..model import DEFAULT_NAMESPACE
from . import pgvector
from .schema import MIGRATIONS, SCHEMA_VERSION
from .sqlite import _IN_NS, _SEARCHABLE, READ_ONLY_BY_RIGHTS, Store, StoreError

URL_PREFIXES: Final = ("postgresql://", "postgres://")
# "n is a live searchable node of the store's namespace" (one ``?``: the namespace).
_SEARCHABLE_HERE: Final = f"{_IN_NS} AND {_SEARCHABLE}"
STORAGE_ENV_VAR: Final = "GRAPHONOMOUS_STORAGE"
URL_ENV_VAR: Final = "DATABASE_URL"
# The key of the advisory lock every write transaction holds (any constant; this is
# "gphn" in ASCII so it does not collide with another application's small numbers).
WRITE_LOCK_KEY: Final = 0x6770686E
# How long a connection attempt may take before it is a clear error (seconds).
CONNECT_TIMEOUT_S: Final = 10
# Why `compact` refuses a PostgreSQL database: the server reclaims space itself.
NO_COMPACT: Final = (
    "compact is not supported on PostgreSQL: autovacuum makes deleted rows' space reusable; "
    "VACUUM FULL (run from psql; it locks each table while it rewrites it) gives it back "
    "to the operating system"
)
# What keeps erased rows in the cluster after VACUUM FULL, CHECKPOINT and pg_switch_wal:
# (setting, value that is safe, why it is not, what to do).  "then" in every advice:
# `graphonomous erase --finish` proves the scrub once the setting allows it.
_FINISH: Final = "then run `graphonomous erase --finish`"
_WAL_SETTINGS: Final = (
    (
        "wal_recycle",
        "off",
        "a retired WAL segment is renamed for reuse, not deleted, so it keeps the erased rows "
        "until it is overwritten",
        "ALTER SYSTEM SET wal_recycle = off; SELECT pg_reload_conf();",
    ),
    (
        "wal_keep_size",
        "0",
        "the server keeps the last wal_keep_size of WAL, which holds the erased rows",
        "ALTER SYSTEM SET wal_keep_size = 0; SELECT pg_reload_conf(); (or let that much WAL "
        "be written after the erase)",
    ),
    (
        "archive_mode",
        "off",
        "WAL segments are archived: the archive (and any base backup) holds the erased rows "
        "outside this cluster, where graphonomous cannot reach",
        "delete the segments written since the erased node was stored from the archive and "
        "the backups, or turn archive_mode off (a restart)",
    ),
)
_INSTALL_HINT: Final = "install the PostgreSQL extra: pip install 'graphonomous[postgres]'"


def is_postgres_url(path: str) -> bool:
    """Whether a --db value names a PostgreSQL database (a libpq URL)."""
    return path.startswith(URL_PREFIXES)


def redact(url: str) -> str:
    """The URL without its password (for messages, stats and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


# -- DDL ----------------------------------------------------------------------------------

# A change-log trigger: the node id column, and (vector rows, migration 8) the model column.
_TRIGGER: Final = re.compile(
    r"CREATE TRIGGER (\w+) AFTER (INSERT|DELETE|UPDATE(?: OF [\w, ]+)?) ON (\w+) BEGIN "
    r"INSERT INTO node_changes \(node_id(?:, model)?\) "
    r"VALUES \((?:NEW|OLD)\.(\w+)(?:, (?:NEW|OLD)\.(\w+))?\); END"
)
# One function for every change-log trigger: its arguments name the row's node id
# column and, when given, its model column.
_LOG_FUNCTION_TEMPLATE: Final = """
CREATE OR REPLACE FUNCTION graphonomous_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE changed jsonb;
BEGIN
    PERFORM pg_advisory_xact_lock({key});
    IF TG_OP = 'DELETE' THEN
        changed := to_jsonb(OLD);
    ELSE
        changed := to_jsonb(NEW);
    END IF;
    IF TG_NARGS > 1 THEN
        INSERT INTO node_changes (node_id, model)
        VALUES (changed ->> TG_ARGV[0], changed ->> TG_ARGV[1]);
    ELSE
        INSERT INTO node_changes (node_id) VALUES (changed ->> TG_ARGV[0]);
    END IF;
    RETURN NULL;
END $$
"""
_LOG_FUNCTION: Final = _LOG_FUNCTION_TEMPLATE.replace("{key}", str(WRITE_LOCK_KEY))
# A counter every write statement moves (the analogue of SQLite's PRAGMA data_version):
# in-memory copies (the graph snapshot, the memory-tool view) compare it.
_VERSION_DDL: Final = (
    "CREATE TABLE IF NOT EXISTS graphonomous_data_version (id INTEGER PRIMARY KEY, v BIGINT)",
    "INSERT INTO graphonomous_data_version VALUES (1, 0) ON CONFLICT DO NOTHING",
    """
    CREATE OR REPLACE FUNCTION graphonomous_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE graphonomous_data_version SET v = v + 1 WHERE id = 1;
        RETURN NULL;
    END $$
    """,
)
# SQLite's instr() searches text and bytes and finds nothing in a number; one overload
# per column type keeps that (``instr(x, ?)`` becomes ``graphonomous_instr(x, ?)``).
_HELPERS: Final = (
    "CREATE OR REPLACE FUNCTION graphonomous_instr(text, text) RETURNS integer "
    "LANGUAGE sql IMMUTABLE AS 'SELECT strpos($1, $2)'",
    "CREATE OR REPLACE FUNCTION graphonomous_instr(bytea, text) RETURNS integer "
    "LANGUAGE sql IMMUTABLE AS $$SELECT position(convert_to($2, 'UTF8') IN $1)$$",
    "CREATE OR REPLACE FUNCTION graphonomous_instr(bigint, text) RETURNS integer "
    "LANGUAGE sql IMMUTABLE AS 'SELECT 0'",
    "CREATE OR REPLACE FUNCTION graphonomous_instr(double precision, text) RETURNS integer "
    "LANGUAGE sql IMMUTABLE AS 'SELECT 0'",
)
_SCHEMA_TABLE: Final = "graphonomous_schema"


def pg_ddl(statement: str) -> list[str]:
    """The PostgreSQL statements for one SQLite migration statement."""
    trigger = _TRIGGER.fullmatch(" ".join(statement.split()))
    if trigger is not None:
        name, event, table, *columns = trigger.groups()
        arguments = ", ".join(f"'{column}'" for column in columns if column is not None)
        return [
            _LOG_FUNCTION,
            f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW "
            f"EXECUTE FUNCTION graphonomous_log_change({arguments})",
        ]
    text = re.sub(
        r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b",
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        statement,
    )
    # Byte order, like SQLite: ORDER BY id gives the same order on both backends.
    text = re.sub(r"\bTEXT\b(?! COLLATE)", 'TEXT COLLATE "C"', text)
    text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text)
    text = re.sub(r"\bINTEGER\b", "BIGINT", text)
    text = re.sub(r"\bBLOB\b", "BYTEA", text)
    return [text]


def _bump_triggers(tables: Iterable[str]) -> list[str]:
    return [
        f"CREATE OR REPLACE TRIGGER {table}_bump AFTER INSERT OR UPDATE OR DELETE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION graphonomous_bump()"
        for table in tables
        if table != "graphonomous_data_version"
    ]


# -- SQL dialect ----------------------------------------------------------------------------

_TOKEN: Final = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?|%")
_TABLES_QUERY: Final = re.compile(
    r"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
)
_COLUMNS_QUERY: Final = re.compile(r"SELECT name FROM pragma_table_info\('(\w+)'\)")
_TYPED_INSTR: Final = re.compile(
    r"max\(typeof\(\"(\w+)\"\) IN \('text', 'blob'\) AND instr\(\"\w+\", \?\) > 0\)"
)
_JSON_NUMBER: Final = re.compile(r"COALESCE\(json_extract\((\w+), '\$\.(\w+)'\), 0\)")
_JSON_EXTRACT: Final = re.compile(r"json_extract\(([\w.]+), '\$\.(\w+)'\)")
_JSON_EACH: Final = re.compile(r"json_each\(([\w.]+)\) AS (\w+)")
_JULIANDAY: Final = re.compile(r"julianday\((\?|\w+)\)")
# A parenthesised instr test that is a summand: followed or preceded by "+" (a test in a
# boolean position, "… AND (instr(…) > 0)", stays a test).
_INSTR_TEST: Final = r"\(instr\(((?:[^()]|\([^()]*\))*)\) > 0\)"
_SUMMED_INSTR: Final = re.compile(_INSTR_TEST + r"(?=\s*\+)|(?<=\+ )" + _INSTR_TEST)
_BUSY_TIMEOUT: Final = re.compile(r"PRAGMA busy_timeout = (\d+)")


def _scalar_min_max(sql: str) -> str:
    """SQLite's scalar ``min(a, b)`` / ``max(a, b)`` (two or more arguments) → LEAST/GREATEST;
    the one-argument aggregates stay."""
    out: list[str] = []
    index = 0
    for match in re.finditer(r"\b(min|max)\(", sql, flags=re.IGNORECASE):
        start = match.end()
        if match.start() < index:
            continue
        depth, position, comma = 1, start, False
        while position < len(sql) and depth:
            char = sql[position]
            depth += {"(": 1, ")": -1}.get(char, 0)
            comma = comma or (char == "," and depth == 1)
            position += 1
        if comma:
            name = "LEAST" if match.group(1).lower() == "min" else "GREATEST"
            inner = _scalar_min_max(sql[start : position - 1])
            out.append(sql[index : match.start()] + f"{name}({inner})")
            index = position
    out.append(sql[index:])
    return "".join(out)


def _marks(sql: str) -> str:
    """``?`` → ``%s`` and a literal ``%`` → ``%%``, outside quoted strings and names."""

    def swap(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        return token.replace("%", "%%")

    return _TOKEN.sub(swap, sql)


@lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """One statement of this package's SQLite dialect in PostgreSQL (pure, cached)."""
    text = " ".join(sql.split())
    if _TABLES_QUERY.fullmatch(text):
        return (
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
        )
    columns = _COLUMNS_QUERY.fullmatch(text)
    if columns is not None:
        return (
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            f"current_schema() AND table_name = '{columns.group(1)}' ORDER BY ordinal_position"
        )
    text = _TYPED_INSTR.sub(r'bool_or(graphonomous_instr("\1", ?) > 0)', text)
    # An untyped parameter tested for NULL: PostgreSQL must be told it is a value.
    text = re.sub(r"\? IS (NOT )?NULL", r"CAST(? AS TEXT) IS \1NULL", text)
    text = _JSON_NUMBER.sub(
        r"COALESCE(CAST(CAST(\1 AS JSONB) ->> '\2' AS DOUBLE PRECISION), 0)", text
    )
    text = _JSON_EXTRACT.sub(r"(CAST(\1 AS JSONB) ->> '\2')", text)
    text = re.sub(r" INDEXED BY \w+", "", text)  # SQLite planner hints only
    text = _JSON_EACH.sub(r"jsonb_array_elements_text(CAST(\1 AS JSONB)) AS \2(value)", text)
    text = _JULIANDAY.sub(
        r"(EXTRACT(EPOCH FROM CAST(\1 AS TIMESTAMPTZ)) / 86400.0 + 2440587.5)", text
    )
    # A test summed as a number ("(instr(…) > 0) + …") is an integer in SQLite.
    text = _SUMMED_INSTR.sub(
        lambda m: f"CAST(instr({m.group(1) or m.group(2)}) > 0 AS INTEGER)", text
    )
    text = re.sub(r"\binstr\(", "graphonomous_instr(", text)
    text = _scalar_min_max(text)
    if text.upper().startswith(("CREATE TABLE", "ALTER TABLE")):
        text = pg_ddl(text)[0]
    if text == "BEGIN IMMEDIATE":  # a write transaction: the database-wide write lock
        return f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})"
    if text == "BEGIN":  # a read transaction: one consistent snapshot
        return "BEGIN ISOLATION LEVEL REPEATABLE READ"
    busy = _BUSY_TIMEOUT.fullmatch(text)
    if busy is not None:  # how long a writer waits for the lock (then "database is locked")
        return f"SET lock_timeout = {int(busy.group(1))}"
    return _marks(text)


class _Rows:
    """A finished statement's result, shaped like the sqlite3 cursor the callers use."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount
        self.lastrowid: int | None = None

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class Row(tuple[Any, ...]):
    """A result row readable by position and by column name (like sqlite3.Row)."""

    _names: tuple[str, ...] = ()

    def keys(self) -> list[str]:
        return list(self._names)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names.index(key))
        return tuple.__getitem__(self, key)


def _row_class(names: tuple[str, ...]) -> type[Row]:
    return type("Row", (Row,), {"_names": names})


def _to_sqlite_error(exc: Exception) -> sqlite3.Error:
    """The sqlite3 exception the callers expect for a psycopg error (same meaning)."""
    import psycopg

    message = str(exc).strip()
    if isinstance(exc, psycopg.errors.ForeignKeyViolation):
        return sqlite3.IntegrityError(f"FOREIGN KEY constraint failed ({message})")
    if isinstance(exc, psycopg.errors.UniqueViolation):
        return sqlite3.IntegrityError(f"UNIQUE constraint failed ({message})")
    if isinstance(exc, psycopg.errors.CheckViolation):
        return sqlite3.IntegrityError(f"CHECK constraint failed ({message})")
    if isinstance(exc, psycopg.errors.NotNullViolation):
        return sqlite3.IntegrityError(f"NOT NULL constraint failed ({message})")
    if isinstance(exc, psycopg.errors.IntegrityError):
        return sqlite3.IntegrityError(message)
    if isinstance(exc, (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected)):
        return sqlite3.OperationalError(f"database is locked ({message})")
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return sqlite3.OperationalError(f"attempt to write a readonly database ({message})")
    if isinstance(exc, psycopg.errors.DiskFull):
        return sqlite3.OperationalError(f"database or disk is full ({message})")
    return sqlite3.OperationalError(message)


def _bool_dumper() -> type:
    """A psycopg dumper writing Python booleans as the integers 0/1 (SQLite's storage)."""
    import psycopg
    from psycopg.adapt import Dumper

    class BoolAsInt(Dumper):  # type: ignore[misc]
        oid = psycopg.adapters.types["int8"].oid

        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    return BoolAsInt


class _PgConnection:
    """One psycopg connection behind the sqlite3.Connection surface `Store` uses."""

    def __init__(self, url: str, shown: str, *, read_only: bool = False) -> None:
        self._url = url
        self._shown = shown
        self._read_only = read_only
        self._conn: Any = None
        # Rows written through this connection (SQLite's total_changes()).
        self.total_changes = 0
        self._connect()

    def _connect(self) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise StoreError(f"{self._shown}: PostgreSQL needs psycopg 3; {_INSTALL_HINT}") from exc
        try:
            self._conn = psycopg.connect(
                self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            )
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {self._shown}: {str(exc).strip()}") from exc
        # sum()/avg() answer numeric: floats, as SQLite gives; booleans are stored 0/1.
        self._conn.adapters.register_loader("numeric", psycopg.types.numeric.FloatLoader)
        self._conn.adapters.register_dumper(bool, _bool_dumper())
        self.execute("PRAGMA busy_timeout = 30000")
        if self._read_only:  # on every (re)connection: the session itself refuses writes
            self._conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

    @property
    def raw(self) -> Any:
        """The psycopg connection (reconnected if it was lost)."""
        if self._conn is None or self._conn.closed:
            self._connect()
        return self._conn

    @property
    def in_transaction(self) -> bool:
        import psycopg

        if self._conn is None or self._conn.closed:
            return False
        return bool(self._conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def _pragma(self, text: str) -> _Rows | None:
        """The PRAGMAs this package sends, answered for PostgreSQL (None: not a PRAGMA)."""
        lowered = text.strip().lower()
        if not lowered.startswith("pragma"):
            return None
        if lowered.startswith("pragma busy_timeout"):
            return None
        if lowered.startswith("pragma wal_checkpoint"):
            # Make the data files current and retire the WAL segment that held the old
            # rows (with wal_recycle = off the server deletes it; needs CHECKPOINT and
            # pg_switch_wal rights).  (busy, 0, 0): busy = 1 when that was refused.
            try:
                self.execute("CHECKPOINT")
                self.execute("SELECT pg_switch_wal()")
                self.execute("CHECKPOINT")
            except sqlite3.Error:
                return _Rows([(1, 0, 0)], -1)
            return _Rows([(0, 0, 0)], -1)
        if lowered == "pragma data_version":
            rows = self.execute("SELECT v FROM graphonomous_data_version WHERE id = 1")
            return _Rows([(int(rows.fetchall()[0][0]),)], -1)
        if lowered == "pragma user_version":
            return _Rows([(schema_version(self),)], -1)
        if lowered.startswith(("pragma integrity_check", "pragma quick_check")):
            return _Rows([("ok",)], -1)
        if lowered == "pragma secure_delete":
            return _Rows([(0,)], -1)  # no such switch: the scrub is VACUUM FULL
        if lowered == "pragma page_count":
            size = self.execute("SELECT pg_database_size(current_database()) / 8192")
            return _Rows([(int(size.fetchall()[0][0]),)], -1)
        return _Rows([], -1)  # busy_timeout, secure_delete = …, foreign_keys: built in

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Rows:
        import psycopg

        pragma = self._pragma(sql)
        if pragma is not None:
            return pragma
        text = sql.replace("total_changes()", str(self.total_changes))
        statement = translate(text)
        if statement == "VACUUM":
            statement = "VACUUM FULL"
        head = statement.split(None, 1)[0].upper() if statement.strip() else ""
        was_open = self.in_transaction
        for attempt in (1, 2):
            try:
                with self.raw.cursor() as cursor:
                    cursor.execute(statement, tuple(params) or None)
                    rows = self._fetch(cursor)
                    count = int(cursor.rowcount)
                if head in {"INSERT", "UPDATE", "DELETE"} and count > 0:
                    self.total_changes += count
                return _Rows(rows, count)
            except psycopg.OperationalError as exc:
                if self._conn is not None and not self._conn.broken:
                    if head == "BEGIN" and self.in_transaction:
                        self.raw.execute("ROLLBACK")  # the lock wait failed: nothing begun
                    raise _to_sqlite_error(exc) from exc
                self._conn = None
                if head in {"ROLLBACK", "RELEASE"}:
                    return _Rows([], -1)  # the server already dropped the transaction
                if was_open or attempt == 2:
                    raise StoreError(
                        f"lost the connection to {self._shown} ({str(exc).strip()}); the "
                        "open transaction was rolled back, nothing of it was kept; the next "
                        "request reconnects"
                    ) from exc
            except psycopg.Error as exc:
                if head == "BEGIN" and self.in_transaction:
                    self.raw.execute("ROLLBACK")  # the lock wait failed: nothing was begun
                raise _to_sqlite_error(exc) from exc
        raise AssertionError("unreachable")

    @staticmethod
    def _fetch(cursor: Any) -> list[Any]:
        if cursor.description is None:
            return []
        names = tuple(column.name for column in cursor.description)
        cls = _row_class(names)
        return [cls(row) for row in cursor.fetchall()]

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        import psycopg

        statement = translate(sql)
        batch = [tuple(row) for row in rows]
        if not batch:
            return
        try:
            with self.raw.cursor() as cursor:
                cursor.executemany(statement, batch)
        except psycopg.Error as exc:
            if self._conn is not None and self._conn.broken:
                self._conn = None
                raise StoreError(f"lost the connection to {self._shown}: {exc}") from exc
            raise _to_sqlite_error(exc) from exc
        self.total_changes += len(batch)


def schema_version(conn: _PgConnection) -> int:
    """The version recorded in the database (0: no graphonomous tables yet)."""
    rows = conn.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_name = ?",
        (_SCHEMA_TABLE,),
    ).fetchall()
    if int(rows[0][0]) == 0:
        return 0
    found = conn.execute(f"SELECT max(version) FROM {_SCHEMA_TABLE}").fetchall()
    return int(found[0][0] or 0)


def _user_tables(conn: _PgConnection) -> list[str]:
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = "
        "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
    ).fetchall()
    return [str(row[0]) for row in rows]


def _require_current_schema(conn: _PgConnection, shown: str) -> None:
    """A read-only store's check: the schema is this package's (an upgrade writes)."""
    version = schema_version(conn)
    if version != SCHEMA_VERSION:
        raise StoreError(
            f"{shown} has schema version {version}; a read-only session needs "
            f"{SCHEMA_VERSION} (an upgrade writes): open it once with write rights"
        )


def migrate_schema(conn: _PgConnection, shown: str) -> None:
    """Bring the database to SCHEMA_VERSION, each migration in one transaction (under the
    write lock, so two servers starting together migrate once); refuse a newer one."""
    conn.execute("BEGIN")
    try:
        conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK_KEY,))
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{shown} has schema version {version}, newer than this graphonomous "
                f"understands ({SCHEMA_VERSION}); upgrade graphonomous to open it "
                "(the database was not modified)"
            )
        if version == 0 and _user_tables(conn):
            raise StoreError(
                f"{shown} already has tables but no {_SCHEMA_TABLE}: not a graphonomous "
                "database (use an empty database or another schema)"
            )
        for helper in _HELPERS:
            conn.execute(helper)
        if version == 0:
            conn.execute(f"CREATE TABLE {_SCHEMA_TABLE} (version INTEGER PRIMARY KEY)")
            for statement in _VERSION_DDL:
                conn.execute(statement)
        for number in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[number]:
                for translated in pg_ddl(statement):
                    conn.execute(translated)
            conn.execute(f"INSERT INTO {_SCHEMA_TABLE} (version) VALUES (?)", (number + 1,))
        if version < SCHEMA_VERSION:
            for statement in _bump_triggers(_user_tables(conn)):
                conn.execute(statement)
        if not pgvector.has_vec_column(conn):
            _set_up_vectors(conn, shown)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _set_up_vectors(conn: _PgConnection, shown: str) -> None:
    """The pgvector extension and the `vec` column (store/pgvector.py), once per database."""
    try:
        conn.execute(pgvector.SETUP_DDL[0])
    except sqlite3.Error as exc:
        raise StoreError(
            f"{shown} needs the pgvector extension for similarity search, and this role "
            f"cannot create it ({exc}); run CREATE EXTENSION vector as a superuser once"
        ) from exc
    for statement in pgvector.SETUP_DDL[1:]:
        conn.execute(statement)


class PostgresStore(Store):
    """The graph in a PostgreSQL database (`url` is any libpq URL)."""

    def __init__(
        self, url: str, namespace: str = DEFAULT_NAMESPACE, *, read_only: bool = False
    ) -> None:
        self._init_session_state(redact(url), namespace)
        self._url = url
        # A caller that may only read: every session of this store is READ ONLY (the
        # server refuses any write, bookkeeping included), the schema is checked, not migrated.
        self.read_only = read_only
        self.read_only_reason = READ_ONLY_BY_RIGHTS if read_only else None
        try:
            self.vector_index_mode = pgvector.vector_index_mode()
        except ValueError as exc:
            raise StoreError(str(exc)) from exc
        self._hnsw_ready: set[tuple[str, int]] = set()
        self._reader: _PgConnection | None = None  # committed-rows reads (`_committed`)
        connection = _PgConnection(url, self.path, read_only=read_only)
        try:
            if read_only:
                _require_current_schema(connection, self.path)
            else:
                migrate_schema(connection, self.path)
        except sqlite3.Error as exc:
            connection.close()
            raise StoreError(f"cannot prepare {self.path}: {exc}") from exc
        except BaseException:
            connection.close()
            raise
        self._conn = connection  # type: ignore[assignment]

    @property
    def schema_version(self) -> int:
        with self._lock:
            return schema_version(self._conn)  # type: ignore[arg-type]

    def space(self, *, tables: bool = True) -> dict[str, Any] | None:
        """Not measured here: the database is no file of ours (the server's
        ``pg_total_relation_size`` tells what each table takes)."""
        return None

    def vacuum(self) -> None:
        """Refused: `compact` is SQLite's VACUUM; see NO_COMPACT."""
        raise StoreError(NO_COMPACT)

    def fingerprint(self) -> tuple[int, int]:
        """(rows written through this connection, the database's write counter)."""
        with self._lock:
            version = self._conn.execute("PRAGMA data_version").fetchall()[0][0]
            return int(self._conn.total_changes), int(version)

    def integrity_problems(self, limit: int = 100) -> list[str]:
        """PostgreSQL checks its own pages; a query that cannot read the tables is the problem."""
        try:
            with self._lock:
                self._conn.execute("SELECT count(*) FROM nodes").fetchall()
        except (sqlite3.Error, StoreError) as exc:
            return [str(exc)]
        return []

    # -- similarity search in the database (store/pgvector.py) ------------------------------

    # Readers never block a PostgreSQL checkpoint: an incomplete one was refused.
    checkpoint_refusal = (
        "CHECKPOINT or pg_switch_wal() was refused: the role needs the pg_checkpoint role "
        "and EXECUTE on pg_switch_wal() (GRANT pg_checkpoint TO role; GRANT EXECUTE ON "
        "FUNCTION pg_switch_wal() TO role)"
    )

    # VACUUM FULL waits for every reader's lock on the table it rewrites.
    readers_block_vacuum = True

    def scrub_obstacles(self) -> list[dict[str, str]]:
        """Settings of the cluster under which a scrub cannot guarantee the erased bytes
        left it (`_WAL_SETTINGS`, replication slots retaining WAL, connected standbys that
        received it): ``[{setting, value, advice}]``, sorted by setting.  A client cannot
        read the server's files, so these are what the verdict rests on."""
        names = [name for name, *_ in _WAL_SETTINGS]
        with self._lock:
            rows = self._conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name = ANY(?)", (names,)
            ).fetchall()
            slots = self._conn.execute(
                "SELECT slot_name FROM pg_replication_slots ORDER BY slot_name"
            ).fetchall()
            standbys = self._conn.execute("SELECT count(*) FROM pg_stat_replication").fetchall()
        current = {str(name): str(value) for name, value in rows}
        found = [
            {"setting": name, "value": current[name], "advice": f"{why}: {fix}, {_FINISH}"}
            for name, safe, why, fix in _WAL_SETTINGS
            if name in current and current[name] != safe
        ]
        if slots:
            found.append(_slots_obstacle([str(row[0]) for row in slots]))
        if int(standbys[0][0]):
            found.append(_standby_obstacle(int(standbys[0][0])))
        return sorted(found, key=lambda item: item["setting"])

    def set_embedding(self, node_id: str, blob: bytes, model: str) -> None:
        """The BLOB and its pgvector column in one statement."""
        self.execute(pgvector.upsert_sql(), (node_id, blob, model, pgvector.blob_literal(blob)))

    def vector_candidates(
        self, model: str, query: Sequence[float], limit: int, *, approximate: bool
    ) -> list[tuple[str, float, bytes]]:
        """``(node_id, database cosine, BLOB)`` of the `limit` live searchable vectors of
        `model` nearest `query` (float32 values, `len(query)` dimensions), best first
        (ties by id when exact).  `approximate`: through the model's HNSW index (built on
        first use).  Committed rows only inside a write transaction (`_committed`)."""
        dimensions = len(query)
        with self._lock:
            writable = self.write_refusal() is None
            if self._depth == 0 and writable:
                pgvector.fill_missing(self)  # read-only: the exact query decodes them in SQL
            if approximate and not writable:  # building the index writes: exact unless built
                approximate = pgvector.has_hnsw(self, model, dimensions)
            if approximate:
                self._prepare_hnsw(model, dimensions, limit)
            literal = pgvector.vector_literal(query)
            sql = pgvector.candidate_sql(dimensions, _SEARCHABLE_HERE, approximate=approximate)
            params = (literal, model, self.namespace, literal, int(limit))
            rows = self._committed().execute(sql, params)
            return [(str(r[0]), float(r[1]), bytes(r[2])) for r in rows.fetchall()]

    def vector_rows(self, node_ids: Sequence[str], model: str) -> dict[str, bytes]:
        """The BLOB of each live searchable node among `node_ids` with a vector of `model`
        (committed rows only inside a write transaction, like `vector_candidates`)."""
        found: dict[str, bytes] = {}
        with self._lock:
            conn = self._committed()
            ids = sorted(set(node_ids))
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                sql = pgvector.rows_sql(len(chunk), _SEARCHABLE_HERE)
                for row in conn.execute(sql, (model, self.namespace, *chunk)).fetchall():
                    found[str(row[0])] = bytes(row[1])
        return found

    def _committed(self) -> _PgConnection:
        """The connection whose reads see committed rows only: this store's own outside a
        write transaction, else a second one (opened on first use).  Writers hold the
        database-wide write lock, so inside a write transaction the committed state is the
        one it began from -- what the in-memory index of the SQLite path answers from."""
        if self._depth == 0:
            return self._conn  # type: ignore[return-value]
        if self._reader is None:
            self._reader = _PgConnection(self._url, self.path, read_only=self.read_only)
        return self._reader

    def _prepare_hnsw(self, model: str, dimensions: int, limit: int) -> None:
        if (model, dimensions) not in self._hnsw_ready:
            version = pgvector.pgvector_version(self)
            if not pgvector.iterative_scans(version):
                raise StoreError(
                    f"{pgvector.VECTOR_INDEX_ENV_VAR}=hnsw needs pgvector >= 0.8 (iterative "
                    f"index scans keep a namespace's filtered search complete); {self.path} "
                    f"has {version or 'none'}: ALTER EXTENSION vector UPDATE, or unset "
                    f"{pgvector.VECTOR_INDEX_ENV_VAR} for the exact scan"
                )
            pgvector.ensure_hnsw(self, model, dimensions)
            self._hnsw_ready.add((model, dimensions))
        connection = self._committed()
        for statement in pgvector.hnsw_session_sql(max(pgvector.HNSW_EF_SEARCH_MIN, limit)):
            connection.execute(statement)

    def close(self) -> None:
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        super().close()


def _slots_obstacle(slots: list[str]) -> dict[str, str]:
    return {
        "setting": "replication_slots",
        "value": ", ".join(slots),
        "advice": "replication slots retain the WAL that holds the erased rows until their "
        "consumers confirm it (and the consumers keep copies): drop the unused slots "
        "(SELECT pg_drop_replication_slot(name)), scrub the consumers too, " + _FINISH,
    }


def _standby_obstacle(count: int) -> dict[str, str]:
    return {
        "setting": "streaming_replication",
        "value": f"{count} connected",
        "advice": "standbys received the WAL that holds the erased rows: their files keep it "
        "until they replay the erase and retire those segments; apply the same settings on "
        "them, " + _FINISH,
    }
