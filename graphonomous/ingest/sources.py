"""The `source_files` table (schema migration 3): one row per ingested file.

Columns: path (absolute POSIX path — the key, unique across scan roots),
root (absolute scan root the file was last ingested under), content_hash
(SHA-256 of the bytes read), size and mtime_ns (the stat seen when it was
ingested; mtime_ns = 0 forces a re-read next time), file_node_id,
chunk_node_ids (JSON list, in chunk order), ingested_at.

SQL goes through `Store.query` / `Store.execute`; the table itself is defined
in `store/schema.py`.  Writes must run inside a `store.transaction()` owned by
the caller.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..store import Store

_COLUMNS: Final = (
    "path",
    "root",
    "content_hash",
    "size",
    "mtime_ns",
    "file_node_id",
    "chunk_node_ids",
    "ingested_at",
)
_SELECT: Final = f"SELECT {', '.join(_COLUMNS)} FROM source_files"


@dataclass(frozen=True)
class SourceRow:
    path: str
    root: str
    content_hash: str
    size: int
    mtime_ns: int
    file_node_id: str | None
    chunk_node_ids: tuple[str, ...]
    ingested_at: str


def _row(values: Sequence[object]) -> SourceRow:
    chunk_ids = json.loads(str(values[6]))
    return SourceRow(
        path=str(values[0]),
        root=str(values[1]),
        content_hash=str(values[2]),
        size=int(str(values[3])),
        mtime_ns=int(str(values[4])),
        file_node_id=None if values[5] is None else str(values[5]),
        chunk_node_ids=tuple(str(i) for i in chunk_ids),
        ingested_at=str(values[7]),
    )


def rows_under(store: Store, root: str) -> dict[str, SourceRow]:
    """Every row last ingested under `root`, by absolute path.  O(rows)."""
    rows = store.query(
        f"{_SELECT} WHERE namespace = ? AND root = ? ORDER BY path", (store.namespace, root)
    )
    return {row[0]: _row(tuple(row)) for row in rows}


def rows_inside(store: Store, directory: str) -> dict[str, SourceRow]:
    """Every row whose file lies inside `directory` (absolute POSIX), by path.  O(rows)."""
    prefix = directory.rstrip("/") + "/"
    rows = store.query(
        f"{_SELECT} WHERE namespace = ? AND substr(path, 1, ?) = ? ORDER BY path",
        (store.namespace, len(prefix), prefix),
    )
    return {row[0]: _row(tuple(row)) for row in rows}


def get_row(store: Store, path: str) -> SourceRow | None:
    rows = store.query(f"{_SELECT} WHERE namespace = ? AND path = ?", (store.namespace, path))
    return _row(tuple(rows[0])) if rows else None


def upsert_row(store: Store, row: SourceRow) -> None:
    store.execute(
        f"INSERT INTO source_files ({', '.join(_COLUMNS)}, namespace) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(namespace, path) DO UPDATE SET root = excluded.root, "
        "content_hash = excluded.content_hash, size = excluded.size, "
        "mtime_ns = excluded.mtime_ns, file_node_id = excluded.file_node_id, "
        "chunk_node_ids = excluded.chunk_node_ids, ingested_at = excluded.ingested_at",
        (
            row.path,
            row.root,
            row.content_hash,
            row.size,
            row.mtime_ns,
            row.file_node_id,
            json.dumps(list(row.chunk_node_ids)),
            row.ingested_at,
            store.namespace,
        ),
    )


def delete_row(store: Store, path: str) -> None:
    store.execute(
        "DELETE FROM source_files WHERE namespace = ? AND path = ?", (store.namespace, path)
    )
