"""Whether a database file must be re-checked (`PRAGMA quick_check`) when it opens.

Rules of this module:
- `quick_check` reads every page: O(file size), ≈ 0.8 s of CPU for a 50K-node
  file, more than a whole cold `recall` may take on a small device.  So the
  verdict is remembered: after a file passed the check, a side file
  ``<db>-verified`` records the file's identity and state (device, inode,
  size, mtime and ctime in ns); an open whose file still
  has exactly that state skips the check.  (ctime too: `os.utime` can set
  the mtime back, not the ctime.)
- Any change made outside a graphonomous session that found the file sound
  changes the state (a foreign write moves the mtime; a copy or restore is
  another inode) and so brings the check back.  A session that found the file
  sound records the state again after each of its commits that moved it (a
  checkpoint writes the file) and when it closes, so its own writes do not.
- Racy timestamps (git's "racy clean" problem): a write in the same clock
  tick as the recorded one keeps the mtime.  A state is recorded only once
  the mtime is older than `RACY_MARGIN_NS` (a commit waits out at most that);
  on a file system with whole-second (or coarser) timestamps a fresh state is
  not recorded at all (the next open checks).
- Best effort: an unreadable or unwritable side file means "check".
Layer: stdlib only (the store calls it).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Final

WITNESS_SUFFIX: Final = "-verified"
_FORMAT: Final = "graphonomous-quick-check/1"
# Linux file timestamps come from the coarse clock (one scheduler tick, ≤ 10 ms);
# twice that is past any tick.
RACY_MARGIN_NS: Final = 20_000_000
# Whole-second mtimes (FAT, ext3, some network file systems) are too coarse to wait out.
_COARSE_NS: Final = 1_000_000_000

State = tuple[int, int, int, int, int]


def file_state(path: str) -> State | None:
    """(device, inode, size, mtime ns, ctime ns) of a database file, or None.

    Only `os.stat`: never open the database file here -- closing any descriptor
    of it drops every POSIX lock SQLite holds on it in this process.
    """
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _witness(path: str) -> Path:
    return Path(path + WITNESS_SUFFIX)


def known_sound(path: str) -> State | None:
    """The file's state when it is exactly the one last recorded as sound, else None."""
    state = file_state(path)
    if state is None:
        return None
    try:
        recorded = json.loads(_witness(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or recorded.get("format") != _FORMAT:
        return None
    saved = recorded.get("state")
    if not isinstance(saved, list) or tuple(saved) != state:
        return None
    return state


def record_sound(path: str, state: State | None = None, *, wait: bool = True) -> State | None:
    """Record the file's current state as sound (best effort).

    A state younger than `RACY_MARGIN_NS` is waited out (`wait`, at most that
    long) or not recorded.  Output: the state recorded, or None when nothing
    was (unwritable, too fresh, or timestamps too coarse).
    """
    state = state or file_state(path)
    if state is None:
        return None
    changed = max(state[3], state[4])  # mtime, ctime
    age = time.time_ns() - changed
    if age < RACY_MARGIN_NS:
        if age < 0 or changed % _COARSE_NS == 0 or not wait:
            return None
        time.sleep((RACY_MARGIN_NS - age) / 1e9)
        if file_state(path) != state:
            return None  # written meanwhile: the next commit or close records it
    witness = _witness(path)
    temporary = witness.with_name(f"{witness.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps({"format": _FORMAT, "state": list(state)}), "utf-8")
        os.replace(temporary, witness)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        return None
    return state


def forget(path: str) -> None:
    """Drop the recorded verdict (the file was found damaged)."""
    with contextlib.suppress(OSError):
        _witness(path).unlink(missing_ok=True)
