"""First-hour papercuts of the command line, one test each (issue #19)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphonomous.cli import main


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["stats"],
        ["node", "show", "abc"],
        ["node", "list"],
        ["edge", "list"],
        ["recall", "anything"],
        ["coverage", "a task"],
    ],
)
def test_read_only_commands_on_a_missing_database_exit_2_and_create_nothing(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "typo.db"
    code, _ = run("--db", str(db), *argv)
    assert code == 2
    err = capsys.readouterr().err
    assert f"no database at {db}" in err and "graphonomous init" in err
    assert list(tmp_path.iterdir()) == []


def test_usage_errors_name_the_subcommand_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run("--db", str(tmp_path / "x.db"), "edge", "add", "a", "b", "-r", "blah")
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("graphonomous: edge add: argument --relationship/-r: invalid choice")
    assert "graphonomous: graphonomous" not in err


def test_a_bad_batch_operation_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "b.db")
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps([{"op": "add_edge", "edge": {"source_id": "a"}}]), "utf-8")
    assert run("--db", db, "batch", str(ops))[0] == 2
    assert "operation 0 (add_edge)" in capsys.readouterr().err


def test_node_list_marks_forgotten_nodes(tmp_path: Path) -> None:
    db = str(tmp_path / "f.db")
    node = json.loads(run("--db", db, "--json", "node", "add", "old fact")[1])["node"]["id"]
    run("--db", db, "node", "add", "live fact")
    run("--db", db, "forget", node)
    code, text = run("--db", db, "node", "list", "--include-forgotten")
    assert code == 0
    lines = [line for line in text.splitlines() if line.startswith(node)]
    assert lines and "FORGOTTEN" in lines[0]
    assert sum("FORGOTTEN" in line for line in text.splitlines()) == 1


def test_serve_on_a_terminal_says_it_waits_for_a_client(tmp_path: Path) -> None:
    """stdin is a pseudo-terminal: the waiting line goes to stderr, stdout stays clean."""
    pty = pytest.importorskip("pty")
    import os

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "graphonomous", "--db", str(tmp_path / "s.db"), "serve"],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        os.write(leader, b"\x04")  # Ctrl-D: end of input
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    assert b"waiting for a client on stdin" in err
    assert out == b""


def test_export_round_trips_through_import(tmp_path: Path) -> None:
    db, copy = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    first = json.loads(run("--db", db, "--json", "node", "add", "pumps fail", "--source", "s")[1])
    second = json.loads(run("--db", db, "--json", "node", "add", "valves leak")[1])
    a, b = first["node"]["id"], second["node"]["id"]
    run("--db", db, "edge", "add", a, b, "-r", "causes")
    dump = tmp_path / "graph.jsonl"
    assert run("--db", db, "export", "--out", str(dump))[0] == 0
    lines = dump.read_text("utf-8").splitlines()
    records = [json.loads(line).get("table") for line in lines[1:]]
    assert json.loads(lines[0])["format"] == "graphonomous-export"
    assert records == ["nodes", "nodes", "edges"]
    assert run("--db", copy, "import", str(dump))[0] == 0
    _, again = run("--db", copy, "export")
    assert again.splitlines() == lines


def test_backup_is_a_consistent_copy(tmp_path: Path) -> None:
    db = str(tmp_path / "live.db")
    run("--db", db, "node", "add", "kept in the backup")
    target = tmp_path / "copy.db"
    code, text = run("--db", db, "backup", str(target))
    assert code == 0 and "backed up" in text
    code, text = run("--db", str(target), "--json", "node", "list")
    assert [n["content"] for n in json.loads(text)["nodes"]] == ["kept in the backup"]
    assert run("--db", db, "backup", db)[0] == 2  # onto itself
    assert run("--db", str(tmp_path / "none.db"), "backup", str(target))[0] == 2


def test_forget_path_removes_what_a_scan_brought_in(tmp_path: Path) -> None:
    db = str(tmp_path / "f.db")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nalpha text\n", "utf-8")
    (docs / "sub" / "b.md").write_text("# B\n\nbeta text\n", "utf-8")
    run("--db", db, "scan", str(docs), "-q")
    mine = json.loads(run("--db", db, "--json", "node", "add", "my own note")[1])["node"]["id"]
    code, text = run("--db", db, "--json", "forget", "--path", str(docs / "sub"))
    assert code == 0 and json.loads(text)["files"] == 1
    code, text = run("--db", db, "--json", "forget", "--path", str(docs))
    removed = json.loads(text)
    assert removed["files"] == 1 and removed["nodes_removed"] >= 2
    listed = json.loads(run("--db", db, "--json", "node", "list")[1])["nodes"]
    assert [n["id"] for n in listed] == [mine]
    assert run("--db", db, "forget", "--path", str(docs), "--policy", "hybrid")[0] == 2


def test_batch_help_shows_the_operation_format() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "graphonomous", "batch", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert '"op": "add_node"' in proc.stdout and "Example" in proc.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "capabilities", "--category", "2", "--json"],
        ["--json", "bench", "capabilities", "--category", "2"],
        ["bench", "capabilities", "--json", "--category", "2"],
    ],
)
def test_bench_capabilities_json_in_any_position(argv: list[str]) -> None:
    code, text = run(*argv)
    assert code == 0
    assert json.loads(text)["summary"]["failed"] == 0


def test_top_level_help_lists_db_and_json() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "graphonomous", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert "--db PATH" in proc.stdout and "--json" in proc.stdout
    assert "GRAPHONOMOUS_DB" in proc.stdout


def test_serve_names_a_bad_port_and_an_address_in_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    db = str(tmp_path / "s.db")
    assert run("--db", db, "serve", "--transport", "http", "--port", "99999")[0] == 2
    assert "invalid port: 99999" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, _ = run("--db", db, "serve", "--transport", "http", "--port", str(port))
    err = capsys.readouterr().err
    assert code == 1 and f"cannot listen on 127.0.0.1:{port}" in err
    assert "internal error" not in err


def test_ids_by_unique_prefix_and_neighbour_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "p.db")
    run("--db", db, "node", "add", "the pump overheats", "--id", "pump-1")
    run("--db", db, "node", "add", "the valve sticks", "--id", "valve-1")
    run("--db", db, "node", "add", "the valve leaks", "--id", "valve-2")
    code, text = run("--db", db, "edge", "add", "pump", "valve-1", "-r", "causes")
    assert code == 0 and "pump-1 -[causes]-> valve-1" in text
    code, text = run("--db", db, "node", "show", "pu")
    assert code == 0 and "the pump overheats" in text
    assert "the pump overheats → the valve sticks" in text  # the edge names its ends
    code, text = run("--db", db, "edge", "list", "--node", "pump")
    assert "the pump overheats → the valve sticks" in text
    assert run("--db", db, "node", "show", "valve")[0] == 2
    assert "matches 2 nodes" in capsys.readouterr().err


def test_an_unknown_relationship_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    run("--db", db, "node", "add", "x", "--id", "n1")
    assert run("--db", db, "remember", "y", "--link", "n1:blah")[0] == 2
    err = capsys.readouterr().err
    assert "unknown relationship 'blah'" in err and "existing nodes" not in err
    assert run("--db", db, "remember", "y", "--link", "n1:causes")[0] == 0


def test_doctor_without_db_checks_the_default_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --db: $GRAPHONOMOUS_DB, else ~/.graphonomous/knowledge.db, as every other command."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GRAPHONOMOUS_DB", raising=False)
    monkeypatch.delenv("GRAPHONOMOUS_STORAGE", raising=False)
    default = tmp_path / ".graphonomous" / "knowledge.db"
    assert run("doctor")[0] == 2
    assert f"no database file at {default}" in capsys.readouterr().err
    assert run("init")[0] == 0
    code, text = run("--json", "doctor")
    assert code == 0
    assert json.loads(text)["database"] == str(default)
    assert json.loads(text)["integrity"] == "ok"
    chosen = tmp_path / "env.db"
    monkeypatch.setenv("GRAPHONOMOUS_DB", str(chosen))
    assert run("init")[0] == 0
    code, text = run("doctor")
    assert code == 0 and text.startswith(f"{chosen}: ok")


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "topology"


def test_topology_reference_output_passes_the_contract_checker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`topology --reference`: the brute-force reference's κ and cuts, in the canonical shape."""
    from graphonomous.contract.checker import check_document

    for fixture in sorted(FIXTURES.glob("*.json")):
        case = json.loads(fixture.read_text("utf-8"))
        monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(case["input"])))
        code, text = run("topology", "--reference")
        assert code == 0
        printed = json.loads(text)
        assert check_document(printed) == [], fixture.name
        reference = case["expected_reference"]
        assert sorted((sorted(s["nodes"]), s["kappa"]) for s in printed["sccs"]) == sorted(
            (sorted(s["nodes"]), s["kappa"]) for s in reference["sccs"]
        ), fixture.name
    # End to end through `contract check -` for a graph with an SCC (κ 25 > the caps).
    case = json.loads((FIXTURES / "large-scc-25.json").read_text("utf-8"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(case["input"])))
    text = run("topology", "--reference")[1]
    assert json.loads(text)["scc_count"] == 1
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code, report = run("contract", "check", "-")
    assert code == 0, report
    assert "0 violations" in report or "no violations" in report


def test_scan_one_file_then_rescan_it(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha text\n", "utf-8")
    (docs / "b.md").write_text("# B\n\nbeta text\n", "utf-8")
    code, text = run("--db", db, "--json", "scan", str(docs / "a.md"))
    first = json.loads(text)
    assert code == 0 and (first["files_seen"], first["ingested"]) == (1, 1)
    code, text = run("--db", db, "--json", "scan", str(docs / "a.md"))
    again = json.loads(text)
    assert code == 0 and (again["ingested"], again["unchanged"]) == (0, 1)
    assert again["nodes_added"] == again["nodes_updated"] == 0
    code, text = run("--db", db, "--json", "node", "list")
    assert {n["metadata"]["path"] for n in json.loads(text)["nodes"]} == {"a.md"}


def test_scan_where_every_seen_file_failed_is_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Failures only: exit 1 and one line saying so; skipped or unchanged files are not failures.
    (Tests run as root, where chmod 000 does not block reads: the reader is patched.)"""
    import os

    from graphonomous.ingest import scan as scan_module

    db = str(tmp_path / "s.db")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha\n", "utf-8")
    (docs / "b.md").write_text("# B\n\nbeta\n", "utf-8")
    for name in ("a.md", "b.md"):  # older than the racy window: a stat settles them
        os.utime(docs / name, (1_600_000_000, 1_600_000_000))
    real = scan_module.read_prefix
    failing = {"a.md", "b.md"}

    def deny(path: str, limit: int, **safety: Any) -> tuple[bytes, bool]:
        if Path(path).name in failing:
            raise PermissionError(13, "Permission denied")
        return real(path, limit, **safety)

    monkeypatch.setattr(scan_module, "read_prefix", deny)
    code, text = run("--db", db, "scan", str(docs))
    err = capsys.readouterr().err
    assert code == 1 and "2 failed" in text
    assert err.count("\n") == 1 and "every file seen failed (2 of 2)" in err
    code, text = run("--db", db, "--json", "scan", str(docs / "a.md"))
    assert code == 1 and json.loads(text)["failed"] == 1
    capsys.readouterr()
    failing.discard("a.md")  # one ingested, one failed: exit 0
    assert run("--db", db, "scan", str(docs), "-q")[0] == 0
    failing.add("a.md")  # a.md unchanged (one stat, no read), b.md failed: exit 0
    (docs / "c.png.md").write_bytes(b"\x00binary")  # skipped, not failed
    assert run("--db", db, "scan", str(docs), "-q")[0] == 0
    (docs / "a.md").unlink()
    assert run("--db", db, "scan", str(docs), "-q")[0] == 0  # b.md failed, c.png.md skipped
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("--db", db, "scan", str(empty))[0] == 0  # nothing seen
