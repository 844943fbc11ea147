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
