"""An unwritable path is named plainly with exit 2 (issue #19 g).

A database in a directory that cannot take a new file, a backup or an export
into such a place: exit 2, the path named, never "internal error" or SQLite's
"unable to open database file", and nothing created.  Two kinds of unwritable
place: a path under a regular file (unwritable for everyone, root included) and
a read-only directory (``chmod 555``, or ``chattr +i`` when running as root).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.paths import create_problem


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(args, out)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory no new file can be created in (for root too, via chattr +i)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    if shutil.which("chattr") is None:
        pytest.skip("root without chattr: no read-only directory to test with")
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i failed: {done.stderr!r}")
    try:
        yield folder
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=False)


@pytest.fixture
def under_a_file(tmp_path: Path) -> Path:
    blocker = tmp_path / "plain.txt"
    blocker.write_text("not a directory\n", encoding="utf-8")
    return blocker


@pytest.fixture
def source_db(tmp_path: Path) -> Path:
    db = tmp_path / "source.db"
    with Graphonomous(db, embedder="hashing") as graph:
        graph.store_node("a note about valve V-12")
    return db


def assert_plain(code: int, err: str, named: str) -> None:
    assert code == 2, err
    assert named in err
    assert "internal error" not in err and "unable to open database file" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", [["remember", "hello"], ["init"], ["scan", "."]])
def test_a_database_in_a_read_only_dir(read_only_dir: Path, command: list[str]) -> None:
    db = read_only_dir / "g.db"
    code, _, err = run(["--db", str(db), *command])
    assert_plain(code, err, str(db))
    assert "not writable" in err
    assert list(read_only_dir.iterdir()) == []


def test_a_database_under_a_file(under_a_file: Path) -> None:
    db = under_a_file / "g.db"
    code, _, err = run(["--db", str(db), "remember", "hello"])
    assert_plain(code, err, str(db))
    assert "is not a directory" in err


def test_serve_on_an_uncreatable_database(under_a_file: Path) -> None:
    code, _, err = run(["--db", str(under_a_file / "sub" / "g.db"), "serve"])
    assert_plain(code, err, "g.db")


@pytest.mark.parametrize("where", ["read_only_dir", "under_a_file"])
def test_backup_to_an_unwritable_place(
    source_db: Path, where: str, request: pytest.FixtureRequest
) -> None:
    target = Path(request.getfixturevalue(where)) / "copy.db"
    code, _, err = run(["--db", str(source_db), "backup", str(target)])
    assert_plain(code, err, str(target))
    assert not target.exists()


@pytest.mark.parametrize("where", ["read_only_dir", "under_a_file"])
def test_export_to_an_unwritable_place(
    source_db: Path, where: str, request: pytest.FixtureRequest
) -> None:
    target = Path(request.getfixturevalue(where)) / "graph.jsonl"
    code, _, err = run(["--db", str(source_db), "export", "--out", str(target)])
    assert_plain(code, err, str(target))


def test_create_problem_is_none_where_a_file_can_be_made(tmp_path: Path) -> None:
    assert create_problem(tmp_path / "new" / "deeper" / "g.db") is None
    assert list(tmp_path.iterdir()) == []  # the probe leaves nothing behind
    assert create_problem(tmp_path) == f"{tmp_path} is a directory"
