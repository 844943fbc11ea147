"""A writer SIGKILLed in the middle of a large batch leaves all or none of it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphonomous.store import Store

WRITER = r"""
import sys
from graphonomous.store import Store, apply_batch
store = Store(sys.argv[1])
ops = [{"op": "add_node", "node": {"id": f"n{i:06d}", "content": f"fact number {i}"}}
       for i in range(int(sys.argv[2]))]
ops += [{"op": "add_edge", "edge": {"source_id": f"n{i:06d}", "target_id": f"n{i+1:06d}",
         "relationship": "follows"}} for i in range(int(sys.argv[2]) - 1)]
print("begin", flush=True)
apply_batch(store, ops, '2026-01-01T00:00:00.000Z')
print("done", flush=True)
"""

BATCH = 40_000


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8])
def test_sigkill_mid_batch_is_all_or_nothing(tmp_path: Path, delay: float) -> None:
    db = tmp_path / "crash.db"
    Store(db).close()  # committed, migrated file exists before the writer starts
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), str(BATCH)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "begin"
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
    conn.close()
    assert (nodes, edges) in {(0, 0), (BATCH, BATCH - 1)}
    with Store(db) as reopened:
        assert reopened.integrity_check() == "ok"
