"""Similarity search inside PostgreSQL: the pgvector column, its upkeep and the candidate query.

Rules of this module:
- The one home of every SQL statement on the `vec` column (PostgreSQL only; SQLite keeps
  its vectors in memory, embed/index.py).  `node_embeddings.vec` holds the stored
  embedding's float32 components as a pgvector `vector` (the BLOB stays the record:
  migrate, checksums and `get_embedding` read the BLOB, never `vec`).
- `vec` is written with the BLOB in one statement (`upsert_sql`).  A BLOB written
  without it (a bare INSERT: migrate, an older server) leaves `vec` NULL, and a BEFORE
  UPDATE trigger sets it NULL when the BLOB changes without it.  The exact query reads
  ``COALESCE(vec, graphonomous_vec(embedding))`` (the SQL decoding of the BLOB, slow
  but only for such rows), so a search never misses a stored vector; `fill_missing`
  writes the NULL ones before a search outside a write transaction (an indexed read
  when there is none), so the decoding stays rare.
- Inside a write transaction the store runs these reads on a second connection that
  sees only committed rows (store/postgres.py): the search, like the in-memory index,
  reflects the state the transaction began from, never its own uncommitted writes.
- The database computes cosine distance (`<=>`) in float32; its order is only a
  candidate order.  The engine (engine/db_vectors.py) rescores the candidates exactly
  like the in-memory index, so results equal the SQLite path's bit for bit.
  `COSINE_EPS` bounds the difference between the database's cosine and that exact score.
- Exact by default: the candidate query orders by a computed distance (a zero vector
  scores 0.0 as in memory) that no index can serve, so PostgreSQL scans every row.  With
  GRAPHONOMOUS_PG_VECTOR_INDEX=hnsw the order is the bare distance and an HNSW index
  (`vector_cosine_ops`, one partial index per embedding model) answers approximately.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .sqlite import Store

VECTOR_INDEX_ENV_VAR: Final = "GRAPHONOMOUS_PG_VECTOR_INDEX"
VECTOR_INDEX_MODES: Final = ("exact", "hnsw")
# Unit roundoff of float32.  pgvector sums d float32 products and two float32 norms,
# each within d*u relative (|error| <= d*u*|a||b| by Cauchy-Schwarz), then divides in
# double; the stored forms the exact score uses are re-normalised and rounded to
# float32 (a few u more).  4*(d+2)*u covers all of it with room to spare (d = 384:
# 9.2e-5); an underestimate could drop a true top-k vector, an overestimate only
# rescores a few more candidates.
_F32_UNIT: Final = 2.0**-24
# HNSW's candidate list per query (pgvector caps hnsw.ef_search at 1000); below
# the cap a query asking for more rows than that is answered by the exact scan.
HNSW_EF_SEARCH_MIN: Final = 100
HNSW_EF_SEARCH_MAX: Final = 1000
# HNSW build parameters (pgvector's defaults; the recall figure in SPEC is for these).
HNSW_M: Final = 16
HNSW_EF_CONSTRUCTION: Final = 64
# Stored vectors written by `fill_missing` per statement batch.
_FILL_BATCH: Final = 500

SETUP_DDL: Final = (
    "CREATE EXTENSION IF NOT EXISTS vector",
    "ALTER TABLE node_embeddings ADD COLUMN vec vector",
    # A row holds the BLOB and `vec` (~1.5 KB each at d = 384): over the 2 KB TOAST
    # threshold.  `vec` stays in the row (PLAIN) so a scan reads no TOAST table, and the
    # BLOB, read only for the candidates, goes out of line uncompressed (floats do not
    # compress).  Measured: the exact scan 6.5 -> ~1 buffer per row.
    "ALTER TABLE node_embeddings ALTER COLUMN vec SET STORAGE PLAIN",
    "ALTER TABLE node_embeddings ALTER COLUMN embedding SET STORAGE EXTERNAL",
    """
    CREATE OR REPLACE FUNCTION graphonomous_vec_stale() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.embedding IS DISTINCT FROM OLD.embedding AND NEW.vec IS NOT DISTINCT FROM OLD.vec
        THEN
            NEW.vec := NULL;
        END IF;
        RETURN NEW;
    END $$
    """,
    "CREATE TRIGGER node_embeddings_vec_stale BEFORE UPDATE ON node_embeddings "
    "FOR EACH ROW EXECUTE FUNCTION graphonomous_vec_stale()",
    "CREATE INDEX node_embeddings_vec_missing ON node_embeddings (node_id) WHERE vec IS NULL",
    # The GDPR scan tests every column for the erased text: numbers never hold it.
    "CREATE OR REPLACE FUNCTION graphonomous_instr(vector, text) RETURNS integer "
    "LANGUAGE sql IMMUTABLE AS 'SELECT 0'",
    # The BLOB (little-endian IEEE float32) decoded in SQL: sign, exponent, mantissa of
    # each 4-byte word (zero/subnormal exponent included), exact as float32.
    """
    CREATE OR REPLACE FUNCTION graphonomous_vec(b bytea) RETURNS vector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CAST(array_agg(CAST(
        CASE WHEN e = 0 THEN m * 2.0::float8 ^ (-149) ELSE (m + 8388608) * 2.0::float8 ^ (e - 150)
        END * (1 - 2 * s) AS real) ORDER BY i) AS vector)
    FROM (SELECT i, (w >> 31) & 1 AS s, (w >> 23) & 255 AS e, w & 8388607 AS m FROM (
        SELECT i, get_byte(b, 4 * i)::bigint | (get_byte(b, 4 * i + 1)::bigint << 8)
            | (get_byte(b, 4 * i + 2)::bigint << 16) | (get_byte(b, 4 * i + 3)::bigint << 24) AS w
        FROM generate_series(0, length(b) / 4 - 1) AS i) AS words) AS parts
    $$
    """,
)


def cosine_eps(dimensions: int) -> float:
    """The bound on |database cosine - exact index score| for `dimensions` components."""
    return 4.0 * (dimensions + 2) * _F32_UNIT


def vector_index_mode() -> str:
    """'exact' (default) or 'hnsw', from $GRAPHONOMOUS_PG_VECTOR_INDEX; else ValueError."""
    mode = os.environ.get(VECTOR_INDEX_ENV_VAR, "").strip().lower() or "exact"
    if mode not in VECTOR_INDEX_MODES:
        raise ValueError(
            f"{VECTOR_INDEX_ENV_VAR} must be one of {', '.join(VECTOR_INDEX_MODES)}, not {mode!r}"
        )
    return mode


def vector_literal(values: Sequence[float]) -> str:
    """pgvector's text form of float32-exact values (repr round-trips every float32)."""
    return "[" + ",".join(repr(float(v)) for v in values) + "]"


def blob_literal(blob: bytes) -> str:
    """The text form of a stored BLOB (little-endian float32) as a pgvector value."""
    values = array("f")
    values.frombytes(bytes(blob))
    if array("I", [1]).tobytes()[0] == 0:  # a big-endian host: the BLOB is little-endian
        values.byteswap()
    return vector_literal(values.tolist())


def has_vec_column(conn: Any) -> bool:
    """Whether `node_embeddings.vec` exists (a database set up by this version)."""
    rows = conn.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = "
        "current_schema() AND table_name = 'node_embeddings' AND column_name = 'vec'"
    ).fetchall()
    return int(rows[0][0]) > 0


def upsert_sql() -> str:
    """`Store.set_embedding`'s statement with the vector column written alongside."""
    return (
        "INSERT INTO node_embeddings (node_id, embedding, model, vec) "
        "VALUES (?, ?, ?, CAST(? AS vector)) "
        "ON CONFLICT(node_id, model) DO UPDATE SET embedding = excluded.embedding, "
        "vec = excluded.vec"
    )


def fill_missing(store: Store) -> int:
    """Write `vec` for every stored BLOB lacking it (in the caller's transaction, or its
    own); returns how many.  One indexed read when none lacks it."""
    filled = 0
    while True:
        rows = store.query(
            "SELECT node_id, model, embedding FROM node_embeddings WHERE vec IS NULL "
            "ORDER BY node_id, model LIMIT ?",
            (_FILL_BATCH,),
        )
        if not rows:
            return filled
        with store.transaction():
            store.execute_many(
                "UPDATE node_embeddings SET vec = CAST(? AS vector) "
                "WHERE node_id = ? AND model = ? AND embedding = ?",
                [(blob_literal(bytes(r[2])), r[0], r[1], bytes(r[2])) for r in rows],
            )
        filled += len(rows)


def hnsw_index_name(model: str, dimensions: int) -> str:
    """The HNSW index of one embedding model (a stable name from the model tag)."""
    digest = hashlib.sha256(model.encode("utf-8")).hexdigest()[:12]
    return f"node_embeddings_hnsw_{dimensions}_{digest}"


def has_hnsw(store: Store, model: str, dimensions: int) -> bool:
    """Whether the HNSW index of `model` exists."""
    name = hnsw_index_name(model, dimensions)
    found = store.query("SELECT count(*) FROM pg_indexes WHERE indexname = ?", (name,))
    return bool(int(found[0][0]))


def ensure_hnsw(store: Store, model: str, dimensions: int) -> None:
    """Build the HNSW index of `model` unless it exists (blocks writes while it builds)."""
    name = hnsw_index_name(model, dimensions)
    if has_hnsw(store, model, dimensions):
        return
    quoted = model.replace("'", "''")
    with store.transaction():
        store.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON node_embeddings USING hnsw "
            f"((CAST(vec AS vector({int(dimensions)}))) vector_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) "
            f"WHERE model = '{quoted}'"
        )


def candidate_sql(dimensions: int, searchable: str, *, approximate: bool) -> str:
    """The candidate query: (node_id, database cosine, BLOB) of the live searchable vectors
    of one model, best first by the database's cosine (then by id, exact mode).

    Parameters: the query vector (`vector_literal`), the model, the query vector again,
    the row limit.  Exact mode scores a zero vector (NaN in pgvector) 0.0, like the
    in-memory index, and its computed ORDER BY is served by no index: a full scan.
    """
    query = f"CAST(? AS vector({int(dimensions)}))"
    if approximate:  # the bare operator on the indexed expression: HNSW serves this order
        distance = f"(CAST(e.vec AS vector({int(dimensions)})) <=> {query})"
        order = distance
    else:
        typed = f"CAST(COALESCE(e.vec, graphonomous_vec(e.embedding)) AS vector({int(dimensions)}))"
        distance = f"COALESCE(NULLIF({typed} <=> {query}, 'NaN'), 1.0)"
        order = f"{distance}, e.node_id"
    return (
        f"SELECT e.node_id, 1.0 - {distance}, e.embedding FROM node_embeddings e "
        "JOIN nodes n ON n.id = e.node_id "
        f"WHERE e.model = ? AND n.forgotten_at IS NULL AND {searchable} ORDER BY {order} LIMIT ?"
    )


def rows_sql(count: int, searchable: str) -> str:
    """(node_id, BLOB) of the live searchable nodes among `count` ids with a vector of one
    model (parameters: the model, then the ids): what the index holds of them."""
    marks = ", ".join("?" * count)
    return (
        "SELECT e.node_id, e.embedding FROM node_embeddings e JOIN nodes n ON n.id = e.node_id "
        f"WHERE e.model = ? AND n.forgotten_at IS NULL AND {searchable} AND e.node_id IN ({marks})"
    )
