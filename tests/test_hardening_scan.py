"""Scans against a changing tree, and .gitignore patterns that cannot stall (issue #12, 3-4).

Each race is staged by letting the walk list the tree, then changing the tree
before the files are read (the scan reads after listing, see
:func:`graphonomous.ingest.scan.sync_tree`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.ingest import ScanOptions, scan_directory
from graphonomous.ingest import scan as scan_module
from graphonomous.ingest.gitignore import IgnoreMatcher, compile_pattern
from graphonomous.ingest.safe_read import NotRegularFile, OutsideRoot, read_prefix
from graphonomous.mcp.query import query_graph

SECRET = "OUTSIDE-THE-TREE-7f3a"


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as g:
        yield g


def after_listing(monkeypatch: pytest.MonkeyPatch, change: Callable[[], None]) -> None:
    """Run `change` once the walk has listed the tree, before any file is read."""
    real = scan_module.walk_files

    def walk(*args: Any, **kwargs: Any) -> Iterator[Any]:
        entries = list(real(*args, **kwargs))
        change()
        return iter(entries)

    monkeypatch.setattr(scan_module, "walk_files", walk)


def scan_with_timeout(graph: Graphonomous, root: Path, fifo: Path | None = None) -> Any:
    """The scan's summary; fails (after releasing a blocked FIFO reader) past 20 s."""
    box: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: box.setdefault("summary", scan_directory(graph, root)), daemon=True
    )
    worker.start()
    worker.join(20)
    if worker.is_alive():
        if fifo is not None:  # unblock the reader so the thread can end
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        pytest.fail("the scan hung")
    return box["summary"]


def test_file_replaced_by_a_fifo_does_not_hang(
    graph: Graphonomous, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("# A\n\nfine\n")
    (tmp_path / "b.md").write_text("# B\n\nalso fine\n")
    fifo = tmp_path / "a.md"

    def swap() -> None:
        fifo.unlink()
        os.mkfifo(fifo)

    after_listing(monkeypatch, swap)
    summary = scan_with_timeout(graph, tmp_path, fifo)
    assert {"path": "a.md", "error": "not a regular file (replaced since it was listed)"} in (
        summary.errors
    )
    assert summary.files_seen == 2


def test_file_replaced_by_a_symlink_to_outside_is_not_ingested(
    graph: Graphonomous, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside.md"
    tree.mkdir()
    outside.write_text(f"# Secret\n\n{SECRET}\n")
    (tree / "a.md").write_text("# A\n\nfine\n")

    def swap() -> None:
        (tree / "a.md").unlink()
        (tree / "a.md").symlink_to(outside)

    after_listing(monkeypatch, swap)
    summary = scan_with_timeout(graph, tree)
    assert summary.failed == 1
    contents = [n["content"] for n in query_graph(graph, "list_nodes", limit=1000)["nodes"]]
    assert not any(SECRET in c for c in contents)


def test_directory_replaced_by_a_symlink_to_outside_is_not_ingested(
    graph: Graphonomous, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, elsewhere = tmp_path / "tree", tmp_path / "elsewhere"
    (tree / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    (tree / "sub" / "a.md").write_text("# A\n\nfine\n")
    (elsewhere / "a.md").write_text(f"# Secret\n\n{SECRET}\n")

    def swap() -> None:
        (tree / "sub" / "a.md").unlink()
        (tree / "sub").rmdir()
        (tree / "sub").symlink_to(elsewhere, target_is_directory=True)

    after_listing(monkeypatch, swap)
    summary = scan_with_timeout(graph, tree)
    assert summary.failed == 1
    contents = [n["content"] for n in query_graph(graph, "list_nodes", limit=1000)["nodes"]]
    assert not any(SECRET in c for c in contents)


def test_followed_symlinks_still_work(graph: Graphonomous, tmp_path: Path) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside.md"
    tree.mkdir()
    outside.write_text(f"# Shared\n\n{SECRET}\n")
    (tree / "link.md").symlink_to(outside)
    summary = scan_directory(graph, tree, ScanOptions(follow_symlinks=True))
    assert summary.failed == 0
    contents = [n["content"] for n in query_graph(graph, "list_nodes", limit=1000)["nodes"]]
    assert any(SECRET in c for c in contents)


def test_safe_read_refusals(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFile):
        read_prefix(str(tmp_path / "pipe"), 100)
    (tmp_path / "real").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OSError):
        read_prefix(str(tmp_path / "link"), 100)
    inner = tmp_path / "inner"
    inner.mkdir()
    with pytest.raises(OutsideRoot):
        read_prefix(str(tmp_path / "real"), 100, root=str(inner))
    assert read_prefix(str(tmp_path / "real"), 100, root=str(tmp_path)) == (b"x", False)


def test_gitignore_fifo_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".gitignore")
    box: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: box.setdefault("rules", IgnoreMatcher(tmp_path).rules_in("")), daemon=True
    )
    worker.start()
    worker.join(20)
    if worker.is_alive():
        os.close(os.open(tmp_path / ".gitignore", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO .gitignore hung")
    assert box["rules"] == []


# -- pathological .gitignore patterns -----------------------------------------------


def _bounded(seconds: float, code: str) -> bool:
    """Does `code` (run in a fresh interpreter) finish within `seconds` of matching time?

    A backtracking regex holds the GIL and cannot be interrupted, so the work
    runs in a subprocess that is killed when too slow; the child times itself so
    interpreter start-up is not counted.
    """
    program = (
        "import time\n"
        "from graphonomous.ingest.gitignore import compile_pattern\n"
        "started = time.monotonic()\n"
        f"{code}\n"
        "print(time.monotonic() - started)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", program], capture_output=True, timeout=30, check=True
        )
    except subprocess.TimeoutExpired:
        return False
    return float(done.stdout) < seconds


def test_pathological_star_pattern_is_fast() -> None:
    rule = compile_pattern("*a*a*a*a*a*a*a*a*a*a*b")
    assert rule is not None
    assert _bounded(
        1.0,
        "rule = compile_pattern('*a*a*a*a*a*a*a*a*a*a*b')\n"
        "assert not any(rule.matches('a' * n, False) for n in range(30, 41))",
    )
    assert rule.matches("a" * 10 + "b", False)
    assert not rule.matches("a" * 40, False)


def test_pathological_double_star_pattern_is_fast() -> None:
    rule = compile_pattern("**/" * 15 + "x")
    assert rule is not None
    deep = "/".join(["d"] * 60)
    assert _bounded(
        1.0,
        "rule = compile_pattern('**/' * 15 + 'x')\n"
        "assert not rule.matches('/'.join(['d'] * 60) + '/y', False)",
    )
    assert rule.matches(deep + "/x", False)
    assert not rule.matches(deep + "/y", False)


def test_a_file_name_that_is_not_utf8_is_reported_not_fatal(
    graph: Graphonomous, tmp_path: Path
) -> None:
    (tmp_path / "ok.md").write_text("# OK\n\nfine\n")
    with open(os.path.join(os.fsencode(tmp_path), b"\xffbad.md"), "w") as handle:
        handle.write("# Bad name\n\ntext\n")
    summary = scan_directory(graph, tmp_path)
    assert summary.ingested == 1
    assert {"path": "\ufffdbad.md", "error": "file name is not valid UTF-8; skipped"} in (
        summary.errors
    )
