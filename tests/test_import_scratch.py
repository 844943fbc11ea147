"""import-memory's scratch files never outlive it (SPEC "GDPR erase", scratch files).

The stdin spool and the set of entity names are files without a name: created
unlinked (an anonymous temporary file; SQLite's temporary database), so neither
SIGTERM nor kill -9 leaves the imported text in $TMPDIR, where an erase could not
find it.  SIGTERM also unwinds the import (rolled back, exit 143).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

MARKER = "Zqx7Scratch"
# The package under test, for the child processes.
ROOT = str(Path(__file__).resolve().parent.parent)

# How often the test looks at the child's open files while waiting for its spool.
POLL_S = 0.01

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


def child_env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": ROOT}
    env.pop("SQLITE_TMPDIR", None)
    return env


def open_files_under(pid: int, folder: Path) -> list[str]:
    """The targets of the process's file descriptors that lie in `folder`."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder) + os.sep):
            found.append(target)
    return found


def wait_for_scratch(child: subprocess.Popen[bytes], folder: Path) -> list[str]:
    """Block until the child holds a file in `folder` open (the scratch file exists)."""
    while not (found := open_files_under(child.pid, folder)):
        assert child.poll() is None, child.stderr.read() if child.stderr else b""
        time.sleep(POLL_S)
    return found


@needs_proc
def test_name_set_leaves_nothing_after_kill_9(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    script = (
        "import sys\n"
        "from graphonomous.server_memory.names import NameSet\n"
        "names = NameSet()\n"
        f"names.add(f'{MARKER} entity number {{i:07d}} of the import' for i in range(200000))\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        env=child_env(scratch),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        held = open_files_under(child.pid, scratch)
        assert held and all(target.endswith("(deleted)") for target in held)  # on disk, unnamed
    finally:
        child.kill()  # SIGKILL: no handler, no finally
        child.communicate()
    assert os.listdir(scratch) == []


@needs_proc
def test_import_memory_from_stdin_leaves_nothing_after_sigterm(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    db = tmp_path / "g.db"
    line = {"type": "entity", "name": f"{MARKER} Erin", "entityType": "person", "observations": []}
    child = subprocess.Popen(
        [sys.executable, "-m", "graphonomous", "--db", str(db), "import-memory", "-"],
        env=child_env(scratch),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdin is not None
        child.stdin.write((json.dumps(line) + "\n").encode())
        child.stdin.flush()  # the spool has started; stdin stays open
        held = wait_for_scratch(child, scratch)
        assert all(target.endswith("(deleted)") for target in held)
        child.send_signal(signal.SIGTERM)
        _out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 128 + signal.SIGTERM, err
    assert b"terminated" in err
    assert os.listdir(scratch) == []
