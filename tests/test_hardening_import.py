"""import-memory streams (issue #12, defect 8): the file is read line by line, in chunks
inside one transaction, with the same results as the whole-file import.

Peak memory is measured by ``benchmarks`` / the closing report, not here (no timed or
memory-sized unit tests); these tests pin the behaviour the streaming must keep.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.server_memory import memory_view, parse_memory_jsonl
from graphonomous.server_memory.jsonl import iter_records


def memory_file(path: Path) -> Path:
    lines = []
    for i in range(25):
        lines.append(
            {
                "type": "entity",
                "name": f"e{i % 10}",
                "entityType": "t",
                "observations": [f"fact {i}"],
            }
        )
    for i in range(12):
        lines.append(
            {
                "type": "relation",
                "from": f"e{i % 10}",
                "to": f"e{(i + 1) % 10}",
                "relationType": "knows",
            }
        )
    lines.append({"type": "relation", "from": "e1", "to": "ghost", "relationType": "knows"})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_streamed_import_matches_the_whole_file_import(tmp_path: Path) -> None:
    path = memory_file(tmp_path / "m.jsonl")
    with Graphonomous(":memory:") as whole, Graphonomous(":memory:") as streamed:
        expected = memory_view(whole).import_records(parse_memory_jsonl(path.read_text()))
        got = memory_view(streamed).import_stream(
            lambda: iter_records(path.open(encoding="utf-8")), chunk=3
        )
        assert got == expected
        assert memory_view(streamed).read_graph() == memory_view(whole).read_graph()


def test_a_failure_in_a_late_chunk_imports_nothing(tmp_path: Path) -> None:
    path = memory_file(tmp_path / "m.jsonl")
    with Graphonomous(":memory:") as graph:
        view = memory_view(graph)
        calls = {"n": 0}
        real = view.import_records

        def failing(records, *, source=None):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            if calls["n"] == 4:
                raise OSError("disk vanished")
            return real(records, source=source)

        view.import_records = failing  # type: ignore[method-assign]
        with pytest.raises(OSError):
            view.import_stream(lambda: iter_records(path.open(encoding="utf-8")), chunk=3)
        view.import_records = real  # type: ignore[method-assign]
        assert graph.graph_stats()["node_count"] == 0
        assert view.read_graph() == {"entities": [], "relations": []}


def test_cli_import_streams_stdin_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = memory_file(tmp_path / "m.jsonl")
    # The whole-file parser is not used any more: the CLI must stream.
    monkeypatch.setattr(
        "graphonomous.server_memory.jsonl.parse_memory_jsonl",
        lambda text: pytest.fail("the whole file was parsed at once"),
    )
    out = io.StringIO()
    assert main(["--db", str(tmp_path / "a.db"), "import-memory", str(path), "--json"], out) == 0
    first = json.loads(out.getvalue())
    assert first["entities_created"] == 10 and len(first["relations_dangling"]) == 1
    monkeypatch.setattr("sys.stdin", io.StringIO(path.read_text()))
    out = io.StringIO()
    assert main(["--db", str(tmp_path / "b.db"), "import-memory", "-", "--json"], out) == 0
    assert json.loads(out.getvalue()) == first
