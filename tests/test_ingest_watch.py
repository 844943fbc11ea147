"""The polling watcher, the progress line and the `scan` / `watch` CLI commands."""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.ingest import ScanOptions, ScanSummary, scan_directory, watch
from graphonomous.ingest import scan as scan_module
from graphonomous.ingest.progress import ProgressLine, format_duration, progress_for, progress_text

PAST = time.time() - 3600


def write(root: Path, rel: str, text: str, offset: float = 0.0) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (PAST + offset, PAST + offset))


def paths(graph: Graphonomous) -> list[str]:
    return sorted(
        n.metadata["path"] for n in graph.store.list_nodes() if n.metadata.get("kind") == "file"
    )


@pytest.fixture
def graph() -> Iterator[Graphonomous]:
    with Graphonomous(":memory:") as g:
        yield g


def scripted(steps: list[Callable[[], None]]) -> Callable[[float], None]:
    """A `sleep` that performs the next file-system change instead of waiting."""
    pending = list(steps)

    def sleep(_seconds: float) -> None:
        pending.pop(0)()

    return sleep


# -- watch --------------------------------------------------------------------------


def test_watch_picks_up_create_modify_delete(graph: Graphonomous, tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\n\nfirst version\n")
    write(tmp_path, "b.md", "# B\n\nstays\n")
    cycles: list[ScanSummary] = []
    result = watch(
        graph,
        tmp_path,
        ScanOptions(ingest_on_start=True, poll_interval_ms=5),
        iterations=4,
        sleep=scripted(
            [
                lambda: write(tmp_path, "c.md", "# C\n\nnew file\n", 1),
                lambda: write(tmp_path, "a.md", "# A\n\nsecond version\n", 2),
                lambda: os.remove(tmp_path / "b.md"),
            ]
        ),
        on_cycle=lambda n, s: cycles.append(s),
    )
    assert [s.ingested for s in cycles] == [2, 1, 1, 0]
    assert [s.removed for s in cycles] == [0, 0, 0, 1]
    assert paths(graph) == ["a.md", "c.md"]
    a_chunks = [n.content for n in graph.store.list_nodes() if n.metadata.get("path") == "a.md"]
    assert any("second version" in text for text in a_chunks)
    assert result.cycles == 4 and not result.interrupted
    assert result.files_watched == 2
    assert result.to_dict()["ingested"] == 4
    assert result.to_dict()["removed"] == 1


def test_watch_without_ingest_on_start_only_ingests_changes(
    graph: Graphonomous, tmp_path: Path
) -> None:
    write(tmp_path, "kept.md", "# Kept\n\nscanned once\n")
    scan_directory(graph, tmp_path)  # the folder was scanned before: watch starts from stats
    write(tmp_path, "old.md", "# Old\n\nwas here before\n")
    result = watch(
        graph,
        tmp_path,
        ScanOptions(poll_interval_ms=5),
        iterations=2,
        sleep=scripted([lambda: write(tmp_path, "new.md", "# New\n\nappeared later\n", 1)]),
    )
    assert paths(graph) == ["kept.md", "new.md"]
    assert result.totals.ingested == 1 and result.ingested_on_start is False


def test_watch_of_a_never_scanned_folder_ingests_it(graph: Graphonomous, tmp_path: Path) -> None:
    write(tmp_path, "old.md", "# Old\n\nwas here before\n")
    result = watch(graph, tmp_path, ScanOptions(poll_interval_ms=5), iterations=1)
    assert paths(graph) == ["old.md"]
    assert result.ingested_on_start is True and result.to_dict()["ingested_on_start"] is True


def test_unchanged_cycles_touch_neither_files_nor_database(
    graph: Graphonomous, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "a.md", "# A\n\ntext\n")
    reads: list[str] = []
    real = scan_module.read_prefix

    def counting(path: str, limit: int, **safety: Any) -> tuple[bytes, bool]:
        reads.append(path)
        return real(path, limit, **safety)

    monkeypatch.setattr(scan_module, "read_prefix", counting)
    result = watch(
        graph,
        tmp_path,
        ScanOptions(ingest_on_start=True),
        iterations=5,
        sleep=lambda _s: None,
    )
    assert len(reads) == 1
    assert result.totals.ingested == 1


def test_watch_survives_errors_and_stops_on_ctrl_c(
    graph: Graphonomous, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "ok.md", "# Ok\n\nfine\n")
    write(tmp_path, "locked.md", "# Locked\n\nno access\n")
    real = scan_module.read_prefix

    def deny(path: str, limit: int, **safety: Any) -> tuple[bytes, bool]:
        if path.endswith("locked.md"):
            raise PermissionError(13, "Permission denied")
        return real(path, limit, **safety)

    monkeypatch.setattr(scan_module, "read_prefix", deny)

    def interrupt(_seconds: float) -> None:
        raise KeyboardInterrupt

    result = watch(graph, tmp_path, ScanOptions(ingest_on_start=True), sleep=interrupt)
    assert result.interrupted
    assert result.cycles == 1
    assert result.totals.failed == 1
    assert paths(graph) == ["ok.md"]


def test_watch_keeps_knowledge_when_the_root_becomes_unlistable(
    graph: Graphonomous, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    write(root, "a.md", "# A\n\ntext\n")

    def denied(_path: object) -> object:
        raise PermissionError(13, "Permission denied")

    def break_listing() -> None:
        monkeypatch.setattr(os, "scandir", denied)

    result = watch(
        graph,
        root,
        ScanOptions(ingest_on_start=True),
        iterations=2,
        sleep=scripted([break_listing]),
    )
    assert paths(graph) == ["a.md"]
    assert result.totals.removed == 0
    assert result.totals.error_count == 1


# -- progress ----------------------------------------------------------------------------


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_text_and_durations() -> None:
    summary = ScanSummary(ingested=40, unchanged=10, skipped=2, failed=1)
    text = progress_text(53, 106, summary, elapsed=2.0)
    assert "53/106 files 50%" in text
    assert "ingested 40" in text and "failed 1" in text
    assert "26 files/s" in text and "ETA 2s" in text
    assert progress_text(0, 0, summary, 0.0).endswith("ETA -")
    assert [format_duration(s) for s in (4.4, 185, 3720)] == ["4s", "3m05s", "1h02m"]


def test_progress_line_redraws_one_line_and_clears_it() -> None:
    clock = iter([0.0, 0.0, 0.05, 0.5, 1.0])
    stream = FakeTty()
    line = ProgressLine(stream, clock=lambda: next(clock))
    summary = ScanSummary()
    line(1, 3, summary)  # drawn
    line(2, 3, summary)  # too soon: skipped
    line(3, 3, summary)  # the last one is always drawn
    line.close()
    out = stream.getvalue()
    assert out.count("\r") == 3
    assert "\n" not in out
    assert out.endswith("\r\x1b[K")


def test_progress_only_on_a_terminal_and_not_quiet() -> None:
    assert progress_for(io.StringIO(), quiet=False) is None
    assert progress_for(FakeTty(), quiet=True) is None
    assert isinstance(progress_for(FakeTty(), quiet=False), ProgressLine)


def test_scan_reports_progress_for_every_file(graph: Graphonomous, tmp_path: Path) -> None:
    for i in range(5):
        write(tmp_path, f"f{i}.txt", f"file {i}\n")
    calls: list[tuple[int, int]] = []
    scan_directory(graph, tmp_path, progress=lambda done, total, s: calls.append((done, total)))
    assert calls == [(i, 5) for i in range(1, 6)]


# -- CLI -----------------------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_cli_scan_human_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "tree"
    write(tree, "doc.md", "# Doc\n\nSee `code.py`.\n")
    write(tree, "code.py", "def f():\n    return 1\n")
    write(tree, "skip.rs", "fn main() {}\n")
    db = str(tmp_path / "g.db")
    code, text = run_cli("--db", db, "scan", str(tree), "--extensions", ".md,py")
    assert code == 0
    assert "2 seen: 2 ingested, 0 unchanged" in text
    assert "files/s" in text
    code, text = run_cli("--db", db, "scan", str(tree), "--extensions", ".md,py", "--json")
    assert code == 0
    summary = json.loads(text)
    assert (summary["files_seen"], summary["ingested"], summary["unchanged"]) == (2, 0, 2)
    assert summary["excluded"] == 1
    code, text = run_cli("--db", db, "scan", str(tree), "--quiet")
    assert code == 0 and text == ""
    assert capsys.readouterr().err == ""  # stderr is not a terminal: no progress line


def test_cli_watch_runs_cycles_and_prints_a_summary(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write(tree, "doc.md", "# Doc\n\nbody\n")
    db = str(tmp_path / "g.db")
    code, text = run_cli(
        "--db", db, "watch", str(tree), "--ingest-on-start", "--cycles", "2",
        "--poll-interval-ms", "1", "--json",
    )  # fmt: skip
    assert code == 0
    result = json.loads(text)
    assert (result["cycles"], result["ingested"], result["interrupted"]) == (2, 1, False)
    code, text = run_cli("--db", db, "watch", str(tree), "--cycles", "1", "--poll-interval-ms", "1")
    assert code == 0
    assert text.startswith("watching ")
    assert "watch finished after 1 cycles" in text


def test_cli_bad_arguments_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "g.db")
    assert run_cli("--db", db, "scan", str(tmp_path / "missing"))[0] == 2
    assert "invalid root" in capsys.readouterr().err
    assert run_cli("--db", db, "scan", str(tmp_path), "--max-read-bytes", "0")[0] == 2
    assert run_cli("--db", db, "scan", str(tmp_path), "--extensions", ",")[0] == 2
    assert run_cli("--db", db, "watch", str(tmp_path), "--cycles", "0")[0] == 2
