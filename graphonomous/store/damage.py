"""A damaged database file, or a full disk, named plainly (SPEC "Corruption and read-only").

Rules: one home for deciding that an SQLite error means the *file* is damaged
(not busy, not read-only, not a constraint) or that a write found no room (a full
disk: the file is sound, the write rolled back), and for the stable sentence every
surface shows for each — the CLI (exit 1), the MCP server (JSON-RPC error
:data:`DAMAGED_CODE`) and the health resource.  The sentence names the file,
SQLite's own words, ``graphonomous doctor`` and the backup to restore.  No I/O.
"""

from __future__ import annotations

import sqlite3
from typing import Final

# SQLite's result codes for a file that is not (or no longer) a sound database.
DAMAGE_ERROR_NAMES: Final = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
# Their messages, for builds whose exceptions carry no sqlite_errorname.
DAMAGE_PHRASES: Final = ("malformed", "not a database", "corrupt")
# The stable start of every damage message (clients and tests may match on it).
DAMAGED_PREFIX: Final = "database file damaged"


def is_damage(exc: BaseException) -> bool:
    """Whether `exc` says the database file itself is damaged."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if getattr(exc, "sqlite_errorname", None) in DAMAGE_ERROR_NAMES:
        return True
    text = str(exc).lower()
    return any(phrase in text for phrase in DAMAGE_PHRASES)


def damage_message(path: str | None, problem: str) -> str:
    """The one sentence for a damaged file at `path` (SQLite said `problem`)."""
    where = path or "the database"
    db = f"--db {path} " if path else ""
    return (
        f"{DAMAGED_PREFIX}: {where} ({problem}). Nothing was changed. Run "
        f"`graphonomous {db}doctor` for the full integrity check, then restore a backup "
        f"(made with `graphonomous backup PATH`) or salvage the readable rows with "
        f"`sqlite3 {path or 'FILE'} .recover`"
    )


# SQLite's result code for a write that found no room (a full disk, or max_page_count).
FULL_ERROR_NAME: Final = "SQLITE_FULL"
# Its message, for builds whose exceptions carry no sqlite_errorname.
FULL_PHRASE: Final = "database or disk is full"
# The stable start of every full-disk message.
FULL_PREFIX: Final = "no space left for the database"


def is_full(exc: BaseException) -> bool:
    """Whether `exc` says the write found no room: the disk (or the file's page limit) is
    full.  The file is sound; the write was rolled back."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if getattr(exc, "sqlite_errorname", None) == FULL_ERROR_NAME:
        return True
    return FULL_PHRASE in str(exc).lower()


def full_message(path: str | None) -> str:
    """The one sentence for a write that found no room at `path`."""
    where = path or "the database"
    return (
        f"{FULL_PREFIX}: {where} (the disk is full). The write was rolled back and the "
        f"file is sound; free disk space (or run `graphonomous compact` after forgetting) "
        f"and retry."
    )


def full_on_open_message(path: str) -> str:
    """The one sentence for a file that cannot be opened for want of disk space (SQLite
    could not create or grow its -shm file beside it).  It starts with
    :data:`FULL_PREFIX`, spelled out so docs/troubleshooting.md can quote the template
    (tests/test_trust_full_disk.py checks the two agree)."""
    return (
        f"no space left for the database: {path} (the disk is full): SQLite cannot create "
        f"its shared-memory file {path}-shm to open it. Nothing was changed; free disk "
        f"space and retry."
    )
