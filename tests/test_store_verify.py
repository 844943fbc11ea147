"""The remembered quick_check verdict (store/verify.py, issue #20).

An open of a file that a sound session left unchanged skips `PRAGMA
quick_check`; any change made outside such a session (here: bytes
overwritten in place, with the mtime moved past the racy margin) brings the
check back and finds the damage.
"""

from __future__ import annotations

import os
from pathlib import Path

from graphonomous import Graphonomous
from graphonomous.store import verify


def build(path: Path, nodes: int = 300) -> None:
    with Graphonomous(path) as graph:
        for i in range(nodes):
            graph.store_node(f"note {i} about valve V-{i} " + "padding " * 40)


def test_an_unchanged_sound_file_opens_without_the_check(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    build(db)
    assert Path(str(db) + verify.WITNESS_SUFFIX).is_file()
    with Graphonomous(db) as graph:
        assert graph.store.quick_check_skipped and graph.store.damage is None
        graph.store_node("a write by a session that found the file sound")
    with Graphonomous(db) as graph:  # its own writes do not bring the check back
        assert graph.store.quick_check_skipped


def test_a_foreign_write_brings_the_check_back_and_finds_damage(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    build(db)
    size = db.stat().st_size
    with db.open("r+b") as handle:
        handle.seek(size // 2 // 4096 * 4096)
        handle.write(os.urandom(4096))
    stat = db.stat()
    os.utime(db, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    with Graphonomous(db) as graph:
        assert not graph.store.quick_check_skipped
        assert graph.store.damage is not None
    assert not Path(str(db) + verify.WITNESS_SUFFIX).exists()


def test_a_copy_is_checked(tmp_path: Path) -> None:
    db, copy = tmp_path / "g.db", tmp_path / "copy.db"
    build(db, 20)
    db.replace(copy)  # same inode, other path: no witness beside it
    with Graphonomous(copy) as graph:
        assert not graph.store.quick_check_skipped


def test_racy_states_are_not_recorded_without_waiting(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    db.write_bytes(b"x" * 100)
    future = os.stat(db).st_mtime_ns + 3_000_000_001  # racy for the next few seconds
    os.utime(db, ns=(future, future))
    state = verify.file_state(str(db))
    assert state is not None
    assert verify.record_sound(str(db), state, wait=False) is None
    assert verify.known_sound(str(db)) is None
    past = future - 10_000_000_001
    os.utime(db, ns=(past, past))  # the ctime is now: waited out (<= 20 ms)
    state = verify.file_state(str(db))
    assert verify.record_sound(str(db), state, wait=True) == state
    assert verify.known_sound(str(db)) == state
    db.write_bytes(b"y" * 100)
    assert verify.known_sound(str(db)) is None
