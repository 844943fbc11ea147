"""`export` → `import` restores a memory exactly (portable.py, store/dump.py, SPEC "Export format").

A scanned tree and a learned memory (stored facts, outcomes, a goal, a correction, a
pinned and a soft-forgotten node, a budget) are exported, imported into a fresh
database and exported again: the bytes are equal, and the memory answers the same
(`graph_stats`, the forgetting-budget dry run, `retrieve_context`); a rescan of the
tree finds every file unchanged; a second import changes nothing.  Bad files are
refused naming the line (exit 2), conflicts are refused listing them unless
``--replace``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from graphonomous import portable
from graphonomous.api import Graphonomous
from graphonomous.cli import main
from graphonomous.clock import ManualClock
from graphonomous.ingest import scan_directory
from graphonomous.learning import tables
from graphonomous.store import dump

START = "2026-03-01T09:00:00Z"
QUESTION = "why does the feed pump trip"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def open_graph(path: Path, clock: ManualClock | None = None) -> Graphonomous:
    return Graphonomous(str(path), embedder="hashing", clock=clock or ManualClock(START))


def build_learned(path: Path) -> dict[str, str]:
    """A memory that has learned: outcomes, a goal, a correction, a pin, a soft forget."""
    clock = ManualClock(START)
    with open_graph(path, clock) as graph:

        def stored(content: str, *args: Any, **kwargs: Any) -> str:
            return str(graph.store_node(content, *args, **kwargs)["node"]["id"])

        ids = {
            "pump": stored("The feed pump trips when the inlet valve sticks"),
            "valve": stored("Inlet valves stick in cold weather", source="manual.pdf"),
            "reset": stored("To reset the pump, close the inlet valve, press reset", "procedural"),
            "rules": stored("Plant safety rules always apply", pinned=True),
            "spare": stored("The spare pump is in hall B"),
            "old": stored("The canteen opens at noon"),
        }
        graph.store_edge(ids["pump"], ids["valve"], "causes", strength=0.7)
        goal = graph.manage_goal("create", title="Keep the feed pump running", status="active")
        ids["goal"] = goal["goal"]["id"]
        clock.advance(hours=2)
        graph.learn_from_outcome("reset-pump", "success", 0.9, [ids["reset"], ids["pump"]])
        clock.advance(hours=1)
        graph.learn_from_outcome("reset-pump", "failure", 0.6, [ids["reset"]], goal_id=ids["goal"])
        graph.learn_from_feedback(ids["spare"], "correction", correction="It is in hall C")
        graph.forget_node(ids["old"], "soft", reason="asked")
        graph.run_consolidation()
        with graph.engine.write() as store:  # what an unresolved contradiction leaves
            details = {"reason": "the loser is protected"}
            pair = [ids["rules"], ids["pump"]]
            tables.open_attention_item(
                store, "contradiction", "warning", pair, details, graph.now()
            )
        graph.forgetting_config(max_nodes=4)
        graph.retrieve_context(QUESTION)
    return ids


def export_of(path: Path, *, vectors: bool = False) -> list[str]:
    with open_graph(path) as graph:
        return list(portable.export_lines(graph, vectors=vectors))


def import_into(path: Path, lines: list[str], **kwargs: Any) -> dict[str, Any]:
    with open_graph(path) as graph:
        return portable.import_export(graph, portable.read_export(lines), **kwargs)


def answers(path: Path) -> dict[str, Any]:
    """What the memory says: stats, the budget's dry run and one retrieval."""
    with open_graph(path) as graph:
        stats = {k: v for k, v in graph.graph_stats().items() if k != "db_path"}
        dry = graph.forget_by_policy(dry_run=True)
        found = graph.retrieve_context(QUESTION)["results"]
    ranked = [(item["node_id"], item["score"], item["confidence"]) for item in found]
    return {"stats": stats, "dry_run": dry, "ranked": ranked}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "pump.md").write_text("# Feed pump\n\nThe pump trips when the valve sticks.\n")
    (folder / "valve.txt").write_text("Inlet valves stick in cold weather.\n" * 3)
    (folder / "sub" / "reset.py").write_text("def reset():\n    return 'closed'\n")
    return folder


def test_every_schema_table_is_memory_vectors_or_derived() -> None:
    assert dump.tables_decided() == set()
    assert dump.VECTOR_TABLE not in dump.MEMORY_TABLES


def test_learned_memory_round_trips_byte_for_byte(tmp_path: Path) -> None:
    ids = build_learned(tmp_path / "a.db")
    lines = export_of(tmp_path / "a.db")
    header = json.loads(lines[0])
    assert header["format"] == "graphonomous-export" and header["version"] == 1
    assert header["embedding_models"] == ["hashing-384"] and header["vectors"] is False
    assert all(header["counts"][t] > 0 for t in ("nodes", "edges", "goals", "outcomes"))
    rows = [json.loads(line) for line in lines[1:]]
    nodes = {r["row"]["id"]: r["row"] for r in rows if r["table"] == "nodes"}
    assert nodes[ids["old"]]["forgotten_at"] and nodes[ids["old"]]["forgotten_reason"]
    assert nodes[ids["rules"]]["pinned"] == 1
    assert nodes[ids["reset"]]["q_update_count"] == 2
    assert {r["table"] for r in rows} >= {
        "revisions",
        "forgetting_config",
        "audit_log",
        "consolidation_log",
        "attention_items",
    }
    report = import_into(tmp_path / "b.db", lines)
    assert report["changed"] and report["inserted"] == len(lines) - 1
    assert export_of(tmp_path / "b.db") == lines


def test_vectors_round_trip_when_asked(tmp_path: Path) -> None:
    build_learned(tmp_path / "a.db")
    lines = export_of(tmp_path / "a.db", vectors=True)
    assert json.loads(lines[0])["counts"]["node_embeddings"] > 0
    import_into(tmp_path / "b.db", lines)
    assert export_of(tmp_path / "b.db", vectors=True) == lines


# Vectors are derived: without `--vectors` the import embeds the live searchable nodes
# only (a soft-forgotten node's or an outcome record's vector is not rebuilt).
VECTOR_STATS = ("embedding_count", "embedding_models")


@pytest.mark.parametrize("vectors", [False, True])
def test_learned_memory_answers_the_same_after_import(tmp_path: Path, vectors: bool) -> None:
    build_learned(tmp_path / "a.db")
    import_into(tmp_path / "b.db", export_of(tmp_path / "a.db", vectors=vectors))
    before, after = answers(tmp_path / "a.db"), answers(tmp_path / "b.db")
    assert before["dry_run"]["candidates"]  # the budget of 4 bites: the test can fail
    assert before["ranked"] and before["stats"]["forgotten_count"] == 1
    if not vectors:
        for stats in (before["stats"], after["stats"]):
            for name in VECTOR_STATS:
                stats.pop(name)
    assert after == before


def test_scanned_tree_round_trips_and_a_rescan_changes_nothing(tmp_path: Path, tree: Path) -> None:
    with open_graph(tmp_path / "a.db") as graph:
        first = scan_directory(graph, tree)
        graph.store_node("Pumps are checked every week")  # learned, beside the files
        graph.store_node("The night shift logs every pump trip")
        graph.forgetting_config(max_nodes=1)  # the files' chunks are outside the budget
    assert first.ingested == 3
    lines = export_of(tmp_path / "a.db")
    assert json.loads(lines[0])["counts"]["source_files"] == 3
    import_into(tmp_path / "b.db", lines)
    assert export_of(tmp_path / "b.db") == lines
    source, copy = answers(tmp_path / "a.db"), answers(tmp_path / "b.db")
    assert len(source["dry_run"]["candidates"]) == 1 and source["ranked"]
    assert copy == source
    with open_graph(tmp_path / "b.db") as graph:
        again = scan_directory(graph, tree)
    assert (again.unchanged, again.ingested, again.nodes_added, again.nodes_updated) == (3, 0, 0, 0)
    assert answers(tmp_path / "b.db")["stats"] == source["stats"]


def test_second_import_is_a_no_op_through_the_cli(tmp_path: Path) -> None:
    build_learned(tmp_path / "a.db")
    dump_file = tmp_path / "memory.jsonl"
    code, text = run("--db", str(tmp_path / "a.db"), "export", "--out", str(dump_file))
    assert code == 0 and "exported" in text
    target = str(tmp_path / "b.db")
    code, text = run("--db", target, "--json", "import", str(dump_file))
    assert code == 0 and json.loads(text)["changed"] is True
    code, text = run("--db", target, "--json", "import", str(dump_file))
    second = json.loads(text)
    assert code == 0 and second["changed"] is False and second["inserted"] == 0
    assert second["unchanged"] == second["records"] == len(dump_file.read_text().splitlines()) - 1
    code, text = run("--db", target, "import", str(dump_file))
    assert code == 0 and "nothing changed" in text
    assert run("--db", target, "export")[1] == dump_file.read_text()


def test_import_reads_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_learned(tmp_path / "a.db")
    text = run("--db", str(tmp_path / "a.db"), "export")[1]
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code, _ = run("--db", str(tmp_path / "b.db"), "import", "-")
    assert code == 0
    assert run("--db", str(tmp_path / "b.db"), "export")[1] == text


def _refused(
    tmp_path: Path, lines: list[str], capsys: pytest.CaptureFixture[str], *extra: str
) -> str:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    db = tmp_path / "fresh.db"
    code, _ = run("--db", str(db), "import", str(path), *extra)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "nothing was imported" in err
    if db.exists():
        with open_graph(db) as graph:
            assert graph.graph_stats()["node_count"] == 0
    return err


def test_bad_files_are_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_learned(tmp_path / "a.db")
    lines = export_of(tmp_path / "a.db")
    header = json.loads(lines[0])
    batch = json.dumps({"op": "add_node", "node": {"content": "x"}})
    assert "line 1: not a graphonomous export" in _refused(tmp_path, [batch], capsys)
    future = json.dumps({**header, "version": 2})
    assert "line 1: export format version 2" in _refused(tmp_path, [future, *lines[1:]], capsys)
    newer = json.dumps({**header, "schema_version": 99})
    assert "schema_version" in _refused(tmp_path, [newer, *lines[1:]], capsys)
    row = json.loads(lines[2])
    row["row"]["confidence"] = "high"
    err = _refused(tmp_path, [*lines[:2], json.dumps(row), *lines[3:]], capsys)
    assert "line 3: field 'confidence' must be a number" in err
    row = json.loads(lines[2])
    row["row"]["colour"] = "red"
    err = _refused(tmp_path, [*lines[:2], json.dumps(row)], capsys)
    assert "line 3: unknown field 'colour'" in err
    assert "end of file" in _refused(tmp_path, lines[:-1], capsys)  # truncated
    assert "repeats line 2" in _refused(tmp_path, [*lines[:3], lines[1], *lines[3:]], capsys)


def test_an_edge_to_a_missing_node_is_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_learned(tmp_path / "a.db")
    lines = export_of(tmp_path / "a.db")
    header = json.loads(lines[0])
    edge = next(i for i, line in enumerate(lines) if json.loads(line).get("table") == "edges")
    kept = [line for i, line in enumerate(lines) if i == edge or i == 0 or i > edge]
    header["counts"]["nodes"] = 0
    err = _refused(tmp_path, [json.dumps(header), *kept[1:]], capsys)
    assert f"line 2: edges {json.loads(lines[edge])['row']['id']}" in err
    assert "FOREIGN KEY" in err


def test_conflicts_are_refused_unless_replace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = build_learned(tmp_path / "a.db")
    lines = export_of(tmp_path / "a.db")
    path = tmp_path / "memory.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    target = tmp_path / "b.db"
    assert run("--db", str(target), "import", str(path))[0] == 0
    with open_graph(target) as graph:
        graph.learn_from_feedback(ids["pump"], "positive")
    changed = export_of(target)
    code, _ = run("--db", str(target), "import", str(path))
    err = capsys.readouterr().err
    assert code == 2 and f"nodes {ids['pump']}" in err and "--replace" in err
    code, text = run("--db", str(target), "--json", "import", str(path))
    refusal = json.loads(text)
    assert code == 2 and refusal["imported"] is False
    assert any(f"nodes {ids['pump']}" in item for item in refusal["conflicts"])
    assert export_of(target) == changed  # refused: nothing written
    code, text = run("--db", str(target), "--json", "import", str(path), "--replace")
    report = json.loads(text)
    assert code == 0 and report["replaced"] >= 1 and report["changed"]
    assert export_of(target) == lines


def test_batch_names_import_for_an_export_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_learned(tmp_path / "a.db")
    path = tmp_path / "memory.jsonl"
    path.write_text(run("--db", str(tmp_path / "a.db"), "export")[1], encoding="utf-8")
    code, _ = run("--db", str(tmp_path / "b.db"), "batch", str(path))
    assert code == 2 and "graphonomous import" in capsys.readouterr().err


def test_audit_rows_keep_their_seq_or_append(tmp_path: Path) -> None:
    build_learned(tmp_path / "a.db")
    lines = export_of(tmp_path / "a.db")
    audit = [json.loads(line)["row"] for line in lines[1:] if '"table": "audit_log"' in line]
    assert audit
    with open_graph(tmp_path / "b.db") as graph, graph.engine.write() as store:
        store.audit("2026-01-01T00:00:00.000Z", "local", None, {})  # seq 1 is taken
    report = import_into(tmp_path / "b.db", lines)
    assert report["tables"][-1]["inserted"] == len(audit)
    with open_graph(tmp_path / "b.db") as graph:
        entries = graph.store.audit_entries()
    assert entries[0]["action"] == "local"
    assert sorted(e["action"] for e in entries[1:]) == sorted(r["action"] for r in audit)
    assert len({e["seq"] for e in entries}) == len(entries)
    again = import_into(tmp_path / "b.db", lines)
    assert again["changed"] is False


def test_replace_of_a_changed_content_drops_the_stale_vector(tmp_path: Path) -> None:
    ids = build_learned(tmp_path / "a.db")
    lines = export_of(tmp_path / "a.db")
    import_into(tmp_path / "b.db", lines)
    edited = []
    for line in lines:
        record = json.loads(line)
        if record.get("table") == "nodes" and record["row"]["id"] == ids["pump"]:
            record["row"]["content"] = "The feed pump never trips"
            line = json.dumps(record, ensure_ascii=False)
        edited.append(line)
    report = import_into(tmp_path / "b.db", edited, replace=True)
    assert report["replaced"] == 1 and report["embedded"] == 1
    import_into(tmp_path / "c.db", edited)
    vectors = []
    for name in ("b.db", "c.db"):
        with open_graph(tmp_path / name) as graph:
            vectors.append(graph.store.get_embedding(ids["pump"], graph.embedding_model))
    assert vectors[0] is not None and vectors[0] == vectors[1]


def test_a_damaged_json_column_fails_the_export_naming_the_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    ids = build_learned(tmp_path / "a.db")
    with sqlite3.connect(tmp_path / "a.db") as raw:
        raw.execute("UPDATE goals SET metadata = '{' WHERE id = ?", (ids["goal"],))
    code, out = run("--db", str(tmp_path / "a.db"), "export")
    err = capsys.readouterr().err
    assert code == 1 and out == "" and "Traceback" not in err
    assert f"goals {ids['goal']}: column metadata holds no JSON" in err


def test_line_separators_inside_text_survive_the_cli(tmp_path: Path) -> None:
    text = "first\u2028second\u0085third\u2029fourth"
    with open_graph(tmp_path / "a.db") as graph:
        graph.store_node(text)
    path = tmp_path / "memory.jsonl"
    assert run("--db", str(tmp_path / "a.db"), "export", "--out", str(path))[0] == 0
    assert run("--db", str(tmp_path / "b.db"), "import", str(path))[0] == 0
    with open_graph(tmp_path / "b.db") as graph:
        assert [n["content"] for n in graph.list_nodes()["nodes"]] == [text]


def test_import_merges_into_a_used_database_parents_first(tmp_path: Path) -> None:
    with open_graph(tmp_path / "a.db") as graph:
        parent = graph.manage_goal("create", title="Run the plant")["goal"]["id"]
        child = graph.manage_goal("create", title="Run the pump", parent_goal_id=parent)
    lines = export_of(tmp_path / "a.db")
    goals = [i for i, line in enumerate(lines) if json.loads(line).get("table") == "goals"]
    first, second = goals  # the child's line before its parent's: inserted parent first
    lines[first], lines[second] = lines[second], lines[first]
    with open_graph(tmp_path / "b.db") as graph:
        kept = graph.store_node("Already here before the import")["node"]["id"]
    report = import_into(tmp_path / "b.db", lines)
    assert report["changed"] and report["unchanged"] == 0
    with open_graph(tmp_path / "b.db") as graph:
        assert graph.get_node(kept)["node"]["content"] == "Already here before the import"
        found = graph.manage_goal("get", goal_id=child["goal"]["id"])["goal"]
    assert found["parent_goal_id"] == parent


def test_dangling_relations_of_the_memory_surface_round_trip(tmp_path: Path) -> None:
    from graphonomous.server_memory import memory_view

    with open_graph(tmp_path / "a.db") as graph:
        view = memory_view(graph)
        view.create_entities([{"name": "Alice", "entityType": "person", "observations": []}])
        view.create_relations([{"from": "Alice", "to": "Bob", "relationType": "mentors"}])
        before = view.read_graph()
    lines = export_of(tmp_path / "a.db")
    assert any(json.loads(line).get("table") == "memory_dangling_relations" for line in lines)
    import_into(tmp_path / "b.db", lines)
    with open_graph(tmp_path / "b.db") as graph:
        assert memory_view(graph).read_graph() == before
    # The rows again; the header differs only in the vectors the import built for its nodes.
    assert export_of(tmp_path / "b.db")[1:] == lines[1:]
