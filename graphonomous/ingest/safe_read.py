"""Opening and reading one listed file safely while the tree may change under us.

The walk (:mod:`.walk`) lists files; between that listing and the read, the
tree can change: a file can be replaced by a FIFO (a plain ``open`` then
blocks forever), by a symlink to a file outside the tree, or a parent
directory can be swapped for a symlink.  Rules (SPEC.md, "Scanning a
directory"):

* open with ``O_NONBLOCK`` (opening a FIFO or device never blocks) and, unless
  the scan follows symlinks, ``O_NOFOLLOW`` (a symlink in the last component
  fails with ``ELOOP``);
* ``fstat`` the descriptor that was opened: anything but a regular file is
  refused (:class:`NotRegularFile`);
* unless the scan follows symlinks, the opened file's real path must still be
  inside the root (a parent directory swapped for a symlink is refused,
  :class:`OutsideRoot`);
* reading stops after :data:`READ_DEADLINE_S` seconds (:class:`ReadTimeout`);
  it reads in :data:`CHUNK_BYTES` pieces and checks the clock between them.

Every refusal is an :class:`OSError` with a ``strerror`` a scan summary can show,
so callers handle it like any other unreadable file.  Stdlib only.
"""

from __future__ import annotations

import os
import stat
import time
from typing import Final

from ..model import GraphonomousError

# A whole text file of the default size cap is read in well under a second on any
# disk; 10 s is generous for a slow network mount and still bounds a scan.
READ_DEADLINE_S: Final = 10.0
# Read granularity: the clock is checked between chunks.
CHUNK_BYTES: Final = 1 << 16
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)


class NotRegularFile(GraphonomousError, OSError):
    """The path now names a FIFO, socket, device or directory."""


class OutsideRoot(GraphonomousError, OSError):
    """The opened file resolves to a place outside the scanned root."""


class ReadTimeout(GraphonomousError, OSError):
    """Reading took longer than the deadline."""


def _real_path(fd: int, path: str) -> str:
    """Where the descriptor really points (Linux: /proc/self/fd; else realpath)."""
    proc = f"/proc/self/fd/{fd}"
    try:
        return os.readlink(proc)
    except OSError:
        return os.path.realpath(path)


def _inside(path: str, root: str) -> bool:
    root = os.path.normpath(root)
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives (Windows)
        return False


def open_regular(path: str, *, root: str | None = None, follow_symlinks: bool = False) -> int:
    """An open read-only descriptor on the regular file at `path` (the caller closes it).

    Raises FileNotFoundError when it vanished, OSError(ELOOP) for a symlink
    when not following, NotRegularFile, OutsideRoot (when `root` is given and
    symlinks are not followed).
    """
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY | (0 if follow_symlinks else _NOFOLLOW)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(0, "not a regular file (replaced since it was listed)", path)
        if root is not None and not follow_symlinks:
            real = _real_path(fd, path)
            if not _inside(real, root):
                raise OutsideRoot(0, "resolves outside the scanned root", path)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_prefix(
    path: str,
    limit: int,
    *,
    root: str | None = None,
    follow_symlinks: bool = False,
    deadline_s: float = READ_DEADLINE_S,
) -> tuple[bytes, bool]:
    """The first `limit` bytes of the regular file at `path` and whether it is longer.

    Opens with :func:`open_regular`, then reads at most ``limit + 1`` bytes in
    chunks; raises ReadTimeout past `deadline_s`.  O(limit).
    """
    fd = open_regular(path, root=root, follow_symlinks=follow_symlinks)
    try:
        deadline = time.monotonic() + deadline_s
        chunks: list[bytes] = []
        wanted = limit + 1
        while wanted > 0:
            try:
                chunk = os.read(fd, min(CHUNK_BYTES, wanted))
            except BlockingIOError:
                chunk = None
            if chunk == b"":
                break
            if chunk:
                chunks.append(chunk)
                wanted -= len(chunk)
            if time.monotonic() > deadline:
                raise ReadTimeout(0, f"reading took longer than {deadline_s:g} s", path)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    return data[:limit], len(data) > limit
