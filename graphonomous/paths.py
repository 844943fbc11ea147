"""Whether a file can be created at a path, and if not why, in plain words.

Rules: adapters (CLI) ask before creating a database or a backup so that an
unwritable place is a usage error naming the path (exit 2), never "internal
error" or SQLite's "unable to open database file".  The answer comes from the
operating system itself — a probe file created and removed in the nearest
existing directory — because permission bits lie for root, immutable
directories and pseudo file systems.  Stdlib only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

# The probe's name prefix (hidden; removed at once).
PROBE_PREFIX: Final = ".graphonomous-probe-"


def create_problem(path: str | os.PathLike[str]) -> str | None:
    """Why a new file at `path` cannot be created, or None when it can.

    Missing parent directories are fine when they can be made (the nearest
    existing ancestor is probed).  O(depth of the path) stat calls, one probe.
    """
    target = Path(path).expanduser()
    if target.is_dir():
        return f"{target} is a directory"
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is not a directory"
    import tempfile  # here: a command opening an existing file never probes

    try:
        handle, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=ancestor)
    except OSError as exc:
        return f"directory {ancestor} is not writable ({exc.strerror or exc})"
    os.close(handle)
    os.unlink(probe)
    return None
