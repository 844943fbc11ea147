"""Corrupt and read-only database files (issue #12, defect 6).

A damaged file (4 KiB overwritten in the middle) is detected on open by
``PRAGMA quick_check``: writes are refused with a message naming ``doctor``
and backups, reads still work where they can, and ``graphonomous doctor``
runs the full integrity check.  A read-only file (``chattr +i``: the only way
to deny writes to root, who runs these tests) opens read-only and serves
reads instead of being "not a SQLite database".
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.store import StoreError


def build(path: Path, nodes: int = 600) -> None:
    with Graphonomous(path) as graph:
        for i in range(nodes):
            graph.store_node(f"note {i} about valve V-{i} " + "padding " * 40)


def damage(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(size // 2 // 4096 * 4096)
        handle.write(os.urandom(4096))


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(args, out)
    return code, out.getvalue(), err.getvalue()


def test_a_damaged_file_refuses_writes_and_names_doctor(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    build(db)
    damage(db)
    code, _, err = run(["--db", str(db), "remember", "a new note about pumps"])
    assert code == 1
    assert "damaged" in err and "doctor" in err and "backup" in err
    assert "internal error" not in err
    with Graphonomous(db) as graph:
        assert graph.store.damage is not None
        with pytest.raises(StoreError, match="doctor"):
            graph.store_node("another write")


def test_doctor_reports_damage_and_health(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.db", tmp_path / "bad.db"
    build(good)
    shutil.copy(good, bad)
    damage(bad)
    code, text, _ = run(["--db", str(good), "doctor", "--json"])
    report = json.loads(text)
    assert code == 0 and report["integrity"] == "ok" and report["problems"] == []
    code, text, _ = run(["--db", str(bad), "doctor", "--json"])
    report = json.loads(text)
    assert code == 1 and report["integrity"] == "damaged" and report["problems"]
    assert "recover" in report["advice"]


@pytest.fixture
def immutable(tmp_path: Path) -> Iterator[Path]:
    db = tmp_path / "ro.db"
    build(db, 50)
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not available")
    done = subprocess.run(["chattr", "+i", str(db)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i failed: {done.stderr!r}")
    try:
        yield db
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=False)


def test_a_read_only_file_serves_reads(immutable: Path) -> None:
    assert not os.access(immutable, os.W_OK)
    code, text, err = run(["--db", str(immutable), "recall", "valve V-7"])
    assert code == 0, err
    assert "note 7 about valve V-7" in text
    code, text, err = run(["--db", str(immutable), "stats", "--json"])
    assert code == 0 and json.loads(text)["node_count"] == 50
    code, _, err = run(["--db", str(immutable), "remember", "cannot be written"])
    assert code == 1 and "read-only" in err
    assert "not a SQLite database" not in err and "internal error" not in err


def _lock(paths: list[Path]) -> bool:
    """Make `paths` read-only for this process (chmod; chattr +i too for root, whom
    permission bits do not stop); False when that is impossible here."""
    for path in paths:
        path.chmod(0o555 if path.is_dir() else 0o444)
    if os.geteuid() != 0:
        return True
    if shutil.which("chattr") is None:
        return False
    done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True, check=False)
    return done.returncode == 0


def _unlock(paths: list[Path]) -> None:
    if os.geteuid() == 0 and shutil.which("chattr") is not None:
        subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True, check=False)
    for path in paths:
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A WAL database in a directory where no -shm file can be created (a read-only
    mount): the file and its directory read-only, no -wal or -shm beside it."""
    folder = tmp_path / "mount"
    folder.mkdir()
    db = folder / "g.db"
    build(db, 50)
    for leftover in folder.iterdir():
        if leftover != db:
            leftover.unlink()
    locked = [db, folder]
    if not _lock(locked):
        _unlock(locked)
        pytest.skip("no way to make a read-only directory here")
    try:
        yield db
    finally:
        _unlock(locked)


def test_a_database_on_a_read_only_mount_serves_reads(read_only_mount: Path) -> None:
    # mode=ro alone fails there ("unable to open database file", once reported as
    # "not a SQLite database"): the store reads the file as immutable instead.
    code, text, err = run(["--db", str(read_only_mount), "recall", "valve V-7"])
    assert code == 0, err
    assert "note 7 about valve V-7" in text
    code, _, err = run(["--db", str(read_only_mount), "remember", "cannot be written"])
    assert code == 1 and "read-only" in err
    assert "not a SQLite database" not in err and "internal error" not in err
    assert sorted(p.name for p in read_only_mount.parent.iterdir()) == ["g.db"]


def test_a_read_only_mount_with_pending_wal_commits_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "mount"
    folder.mkdir()
    live = tmp_path / "live.db"
    build(live, 5)
    with Graphonomous(live) as graph:
        graph.store._conn.execute("PRAGMA wal_autocheckpoint = 0")
        graph.store_node("a commit still in the write-ahead log")
        shutil.copy(live, folder / "g.db")
        shutil.copy(f"{live}-wal", folder / "g.db-wal")
    assert (folder / "g.db-wal").stat().st_size > 0
    locked = [folder / "g.db", folder / "g.db-wal", folder]
    if not _lock(locked):
        _unlock(locked)
        pytest.skip("no way to make a read-only directory here")
    try:
        code, _, err = run(["--db", str(folder / "g.db"), "stats"])
    finally:
        _unlock(locked)
    # Reading it immutable would silently drop that commit: refused, naming the log.
    assert code == 1, err
    assert "write-ahead log" in err and "g.db-wal" in err
    assert "internal error" not in err
