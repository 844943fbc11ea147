"""Namespaces (SPEC "Namespaces"): two projects on one SQLite file, each seeing only its own.

Every test here tries to break the separation: the other namespace's ids, names and
queries through every MCP surface, rankings with and without a busy neighbour, two
processes writing at once, an old file upgraded.  A request for another namespace's id
must answer exactly as for an id that does not exist (no existence oracle), and leave
the other namespace's rows as they were.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_tool_calls import Session, call

from graphonomous import Graphonomous
from graphonomous.cli import main
from graphonomous.clock import ManualClock
from graphonomous.mcp import build_server
from graphonomous.model import Node, ValidationError
from graphonomous.portable import export_lines, import_export, read_export
from graphonomous.store import Store, dump
from graphonomous.store.schema import MIGRATIONS

# B's seeded ids (mcp_tool_calls.SEED_NODES) and an id that exists nowhere.
B_IDS = ("valve", "seal", "pump", "proc", "episode", "fact")
MISSING = "nosuch"
START = "2026-03-01T09:00:00Z"
A_NODES = (
    ("a-0", "The release train leaves every second Tuesday"),
    ("a-1", "Pressure tests of the release pipeline run nightly"),
    ("a-2", "The seal of approval comes from the release manager"),
    ("a-3", "Valve names in the docs follow the V-number scheme"),
)


def _records(graph: Graphonomous) -> list[str]:
    """The export's records (the header names the moment of export; left out)."""
    return list(export_lines(graph))[1:]


def _graphs(path: Path) -> tuple[Graphonomous, Graphonomous]:
    clock = ManualClock(START)
    return (
        Graphonomous(path, namespace="alpha", clock=clock),
        Graphonomous(path, namespace="beta", clock=clock),
    )


def _seed_a(graph: Graphonomous) -> None:
    for node_id, content in A_NODES:
        graph.store_node(content, node_id=node_id)
    graph.store_edge("a-0", "a-1", "related")


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Graphonomous, Session]]:
    """(A: alpha with its own nodes, B: a v1 session in beta seeded with the plant graph)."""
    a, b = _graphs(tmp_path / "shared.db")
    with a, b:
        _seed_a(a)
        yield a, Session(b, "v1")


def _normalised(out: dict[str, Any], node_id: str) -> str:
    return json.dumps(out, sort_keys=True).replace(node_id, "<ID>")


# -- the data: every row in one namespace --------------------------------------------


def test_a_file_without_namespaces_keeps_its_rows_in_default(tmp_path: Path) -> None:
    path = tmp_path / "v9.db"
    con = sqlite3.connect(path)
    for migration in MIGRATIONS[:9]:
        for statement in migration:
            con.execute(statement)
    con.execute(
        "INSERT INTO nodes (id, node_type, content, created_at, updated_at) "
        "VALUES ('old', 'semantic', 'kept from before', 't', 't')"
    )
    con.execute(
        "INSERT INTO source_files (path, root, content_hash, size, mtime_ns, ingested_at) "
        "VALUES ('/r/a.md', '/r', 'h', 1, 1, 't')"
    )
    con.execute("PRAGMA user_version = 9")
    con.commit()
    con.close()
    with Graphonomous(path) as default, Graphonomous(path, namespace="other") as other:
        assert default.get_node("old")["node"]["content"] == "kept from before"
        assert default.graph_stats()["node_count"] == 1
        assert other.graph_stats()["node_count"] == 0
        with pytest.raises(Exception, match="not found"):
            other.get_node("old")
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT namespace FROM source_files").fetchall() == [("default",)]


def test_a_bad_namespace_name_is_refused_naming_the_field() -> None:
    for bad in ("", "Upper", "has space", "-lead", "x" * 65, "a:b", 7):
        with pytest.raises(ValidationError, match="namespace"):
            Store(":memory:", namespace=bad)  # type: ignore[arg-type]


def test_every_row_written_carries_its_namespace(pair: tuple[Graphonomous, Session]) -> None:
    a, _ = pair
    a.learn_from_outcome("act-a", "success", 0.9, ["a-0"])
    a.manage_goal("create", title="Ship the release")
    a.run_consolidation()
    a.forget_node("a-3", "soft", "audited")
    with sqlite3.connect(a.db_path) as con:
        for table in ("nodes", "edges", "goals", "outcomes", "audit_log", "consolidation_log"):
            found = dict(con.execute(f"SELECT namespace, count(*) FROM {table} GROUP BY 1"))
            assert set(found) <= {"alpha", "beta"} and found.get("alpha"), table


def test_saved_derived_indexes_are_kept_per_namespace(tmp_path: Path) -> None:
    path = tmp_path / "saved.db"
    with Store(path) as default, Store(path, namespace="alpha") as alpha:
        assert default.save_derived("vectors", "m", 1, b"default's")
        assert alpha.save_derived("vectors", "m", 1, b"alpha's")
        assert default.load_derived("vectors", "m") == (1, b"default's")
        assert alpha.load_derived("vectors", "m") == (1, b"alpha's")
        with Store(path, namespace="beta") as beta:
            assert beta.load_derived("vectors", "m") is None
    with sqlite3.connect(path) as con:
        names = sorted(row[0] for row in con.execute("SELECT name FROM derived_indexes"))
    assert names == ["alpha:vectors", "vectors"]  # a file's saved copies stay valid


# -- the other namespace's ids answer as missing ones --------------------------------

# (tool, arguments) with the probed id as "{id}": every v1 tool that takes a node id.
V1_PROBES: list[tuple[str, dict[str, Any]]] = [
    ("query_graph", {"operation": "get_node", "node_id": "{id}"}),
    ("query_graph", {"operation": "get_edges", "node_id": "{id}"}),
    ("graph_traverse", {"node_id": "{id}", "depth": 2}),
    ("manage_edge", {"action": "list", "node_id": "{id}", "direction": "both"}),
    ("store_edge", {"source_id": "a-0", "target_id": "{id}"}),
    ("trace_evidence_path", {"from_id": "a-0", "to_id": "{id}"}),
    ("topology_analyze", {"node_ids": ["{id}"]}),
    ("learn_from_feedback", {"node_id": "{id}", "feedback": "positive"}),
    (
        "learn_from_outcome",
        {"action_id": "x", "status": "success", "confidence": 0.9, "causal_node_ids": ["{id}"]},
    ),
    ("deliberate", {"node_ids": ["{id}"]}),
    ("forget_node", {"node_id": "{id}", "mode": "soft", "reason": "probe"}),
    ("restore_node", {"node_id": "{id}", "reason": "probe"}),
    ("forget_node", {"node_id": "{id}", "mode": "hard", "reason": "probe"}),
    ("delete_node", {"node_id": "{id}"}),
    ("gdpr_erase", {"node_id": "{id}", "reason": "probe"}),
]


def _filled(arguments: dict[str, Any], node_id: str) -> dict[str, Any]:
    return json.loads(json.dumps(arguments).replace("{id}", node_id))


@pytest.mark.parametrize(("tool", "arguments"), V1_PROBES)
def test_v1_tools_answer_for_another_namespaces_id_as_for_a_missing_one(
    pair: tuple[Graphonomous, Session], tool: str, arguments: dict[str, Any]
) -> None:
    a, b = pair
    before = _records(b.graph)
    server = build_server(a, "v1", check_output=True)
    for node_id in B_IDS:
        probe = call(server, tool, _filled(arguments, node_id))
        missing = call(server, tool, _filled(arguments, MISSING))
        assert _normalised(probe, node_id) == _normalised(missing, MISSING), (tool, node_id)
    assert _records(b.graph) == before


# The v2 machines' actions that take a node id (the same facade calls as v1).
V2_PROBES: list[tuple[str, dict[str, Any]]] = [
    ("retrieve", {"action": "query", "operation": "get_node", "node_id": "{id}"}),
    ("retrieve", {"action": "traverse", "node_id": "{id}"}),
    ("retrieve", {"action": "trace_evidence", "from_id": "a-0", "to_id": "{id}"}),
    ("act", {"action": "store_edge", "source_id": "a-0", "target_id": "{id}"}),
    ("act", {"action": "forget_node", "node_id": "{id}", "mode": "soft", "reason": "p"}),
    ("act", {"action": "delete_node", "node_id": "{id}"}),
    ("act", {"action": "gdpr_erase", "node_id": "{id}", "reason": "p"}),
    ("learn", {"action": "from_feedback", "node_id": "{id}", "feedback": "negative"}),
]


@pytest.mark.parametrize(("tool", "arguments"), V2_PROBES)
def test_v2_machines_answer_for_another_namespaces_id_as_for_a_missing_one(
    pair: tuple[Graphonomous, Session], tool: str, arguments: dict[str, Any]
) -> None:
    a, b = pair
    before = _records(b.graph)
    server = build_server(a, "v2", check_output=True)
    for node_id in B_IDS:
        probe = call(server, tool, _filled(arguments, node_id))
        missing = call(server, tool, _filled(arguments, MISSING))
        assert _normalised(probe, node_id) == _normalised(missing, MISSING), (tool, node_id)
    assert _records(b.graph) == before


def test_an_edge_id_of_another_namespace_is_unknown(pair: tuple[Graphonomous, Session]) -> None:
    a, b = pair
    edge_id = b.graph.manage_edge("list", node_id="valve")["edges"][0]["id"]
    server = build_server(a, "v1", check_output=True)
    for action in ("get", "delete"):
        probe = call(server, "manage_edge", {"action": action, "edge_id": edge_id})
        missing = call(server, "manage_edge", {"action": action, "edge_id": MISSING})
        assert _normalised(probe, edge_id) == _normalised(missing, MISSING)
    assert b.graph.manage_edge("get", edge_id=edge_id)["edge"]["id"] == edge_id


# -- queries: nothing of the other namespace is found -------------------------------


_ID_KEYS = frozenset({"id", "node_id", "node_ids", "source_id", "target_id", "subject_ids"})


def _ids_in(value: Any) -> set[str]:
    """B's ids named anywhere in `value` under an id key (a topic word "pump" is no id)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            named = item if isinstance(item, list) else [item]
            if key in _ID_KEYS:
                found |= {x for x in named if isinstance(x, str) and x in B_IDS}
            found |= _ids_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _ids_in(item)
    return found


def test_reads_find_nothing_of_the_other_namespace(pair: tuple[Graphonomous, Session]) -> None:
    a, b = pair
    query = "pressure loss of valve V-12 seal pump"
    found = [
        a.retrieve_context(query, limit=20),
        a.similarity_search(query, limit=20),
        a.retrieve_episodic(limit=20),
        a.retrieve_procedural("restart pump P-3"),
        a.list_nodes(limit=100),
        a.manage_edge("list"),
        a.epistemic_frontier(min_gap=0.0),
        a.learn_detect_novelty("Valve V-12 loses pressure when its seal wears out"),
        a.coverage_query("restart pump P-3 after a pressure loss"),
        a.attention_survey(),
        a.manage_goal("list"),
    ]
    assert _ids_in(found) == set()
    assert a.graph_stats()["node_count"] == len(A_NODES)
    assert a.graph_stats()["edge_count"] == 1
    ids_a = {r["node_id"] for r in a.retrieve_context(query, limit=20)["results"]}
    assert ids_a <= {node_id for node_id, _ in A_NODES}
    # B still finds its own, and none of A's.
    results_b = b.graph.retrieve_context(query, limit=20)["results"]
    own_b = {n["id"] for n in b.graph.list_nodes(limit=100)["nodes"]}
    assert results_b and {r["node_id"] for r in results_b} <= own_b
    assert own_b.isdisjoint(node_id for node_id, _ in A_NODES)


def test_the_export_holds_one_namespace(pair: tuple[Graphonomous, Session]) -> None:
    a, b = pair
    records = [json.loads(line) for line in _records(a)]
    assert "a-0" in json.dumps(records) and _ids_in(records) == set()
    assert "Keep pump P-3 running" not in json.dumps(records)  # B's goal
    # the id as a JSON string: a random UUID of B's may hold the letters a-0
    assert '"a-0"' not in "\n".join(_records(b.graph))


def test_an_export_of_one_project_imports_into_another(
    pair: tuple[Graphonomous, Session], tmp_path: Path
) -> None:
    a, _ = pair
    lines = list(export_lines(a))
    target = tmp_path / "other.db"
    with Graphonomous(target, namespace="gamma", clock=ManualClock(START)) as gamma:
        import_export(gamma, read_export(lines))
        assert gamma.get_node("a-0")["node"]["content"] == A_NODES[0][1]
        with sqlite3.connect(target) as con:
            assert {row[0] for row in con.execute("SELECT namespace FROM nodes")} == {"gamma"}


def test_memory_surface_names_stay_apart(tmp_path: Path) -> None:
    a, b = _graphs(tmp_path / "memory.db")
    with a, b:
        server_a = build_server(a, "memory", check_output=True)
        server_b = build_server(b, "memory", check_output=True)
        entity = {"name": "Alice", "entityType": "person", "observations": ["likes tea"]}
        call(server_b, "create_entities", {"entities": [entity]})
        call(
            server_b,
            "create_relations",
            {"relations": [{"from": "Alice", "to": "Bob", "relationType": "knows"}]},
        )
        before = _records(b)
        read = call(server_a, "read_graph", {})["structuredContent"]
        assert read == {"entities": [], "relations": []}
        assert (
            call(server_a, "search_nodes", {"query": "tea"})["structuredContent"]["entities"] == []
        )
        assert (
            call(server_a, "open_nodes", {"names": ["Alice"]})["structuredContent"]["entities"]
            == []
        )
        call(server_a, "delete_entities", {"entityNames": ["Alice"]})
        call(
            server_a,
            "delete_relations",
            {"relations": [{"from": "Alice", "to": "Bob", "relationType": "knows"}]},
        )
        # A creates its own Alice: a separate entity, B's stays as it was.
        call(
            server_a,
            "create_entities",
            {"entities": [{**entity, "observations": ["likes coffee"]}]},
        )
        assert _records(b) == before
        seen_b = call(server_b, "open_nodes", {"names": ["Alice"]})["structuredContent"]
        assert seen_b["entities"][0]["observations"] == ["likes tea"]


# -- learning and maintenance stay inside -------------------------------------------


def test_consolidation_forgetting_and_config_leave_the_other_namespace_alone(
    pair: tuple[Graphonomous, Session],
) -> None:
    a, b = pair
    before = _records(b.graph)
    config_b = b.graph.forgetting_config()
    a.forgetting_config(max_nodes=1)
    a.clock.advance(days=400)  # type: ignore[attr-defined]
    a.run_consolidation()
    a.forget_by_policy(max_nodes=1)
    assert b.graph.forgetting_config() == config_b
    assert a.forgetting_config()["max_nodes"] == 1
    assert a.graph_stats()["node_count"] < len(A_NODES)
    assert _records(b.graph) == before
    assert b.graph.consolidation_log()["runs"] == []


# -- rankings: one namespace's data never changes another's -------------------------

QUERIES = ("release pipeline pressure", "seal of approval", "valve names", "every Tuesday")
WORDS = ("release", "pipeline", "pressure", "seal", "valve", "approval", "train", "night")


def _rankings(graph: Graphonomous) -> list[Any]:
    out: list[Any] = []
    for query in QUERIES:
        context = graph.retrieve_context(query, limit=10)
        out.append([(r["node_id"], r["score"]) for r in context["results"]])
        similar = graph.similarity_search(query, limit=10)
        out.append([(r["id"], r["similarity"]) for r in similar["results"]])
    return out


def test_rankings_in_a_are_the_same_whether_or_not_b_exists(tmp_path: Path) -> None:
    alone, _ = _graphs(tmp_path / "alone.db")
    with alone:
        _seed_a(alone)
        expected = _rankings(alone)
    crowded, other = _graphs(tmp_path / "crowded.db")
    rng = random.Random(20261203)
    with crowded, other:
        for i in range(60):  # B: random texts over A's vocabulary (idf, lengths, vectors)
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
            other.store_node(text, node_id=f"b-{i}")
        _seed_a(crowded)
        for i in range(60, 90):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
            other.store_node(text, node_id=f"b-{i}")
        assert _rankings(crowded) == expected
    # Reopened (the saved indexes of A alone are loaded, then the later log rows).
    with Graphonomous(
        tmp_path / "crowded.db", namespace="alpha", clock=ManualClock(START)
    ) as again:
        assert _rankings(again) == expected


# -- two processes writing one file at once ----------------------------------------

_WRITER = """
import sys
from graphonomous import Graphonomous
path, namespace, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Graphonomous(path, namespace=namespace) as graph:
    for i in range(count):
        graph.store_node(f"{namespace} note {i} about the shared file", node_id=f"{namespace}-{i}")
        if i:
            graph.store_edge(f"{namespace}-{i - 1}", f"{namespace}-{i}", "related")
        graph.retrieve_context(f"{namespace} note {i}", limit=3)
"""


def test_two_processes_write_their_namespaces_at_once(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    with Graphonomous(path):
        pass  # the schema exists before both start
    count = 25
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), name, str(count)],
            stderr=subprocess.PIPE,
        )
        for name in ("left", "right")
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err.decode()
    for name, other in (("left", "right"), ("right", "left")):
        with Graphonomous(path, namespace=name) as graph:
            stats = graph.graph_stats()
            assert (stats["node_count"], stats["edge_count"]) == (count, count - 1)
            found = graph.retrieve_context("note about the shared file", limit=50)["results"]
            assert found and all(r["node_id"].startswith(f"{name}-") for r in found)
            assert other not in json.dumps(_records(graph))


# -- the CLI -----------------------------------------------------------------------


def test_cli_project_and_its_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "cli.db")
    assert main(["--db", db, "--project", "one", "remember", "one knows about comets"]) == 0
    monkeypatch.setenv("GRAPHONOMOUS_PROJECT", "two")
    assert main(["--db", db, "remember", "two knows about tides"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "recall", "comets tides", "--json"]) == 0
    two = [r["content"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert two == ["two knows about tides"]
    monkeypatch.delenv("GRAPHONOMOUS_PROJECT")
    assert main(["--db", db, "recall", "comets tides", "--json", "--project", "one"]) == 0
    one = [r["content"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert one == ["one knows about comets"]
    assert main(["--db", db, "stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["node_count"] == 0  # default holds neither
    assert main(["--db", db, "--project", "Not Valid", "stats"]) == 2
    assert "project" in capsys.readouterr().err


# -- keys that are the caller's own are unique per namespace -------------------------


def test_two_projects_may_send_the_same_signal_id(pair: tuple[Graphonomous, Session]) -> None:
    a, b = pair
    first = a.learn_from_outcome("act", "success", 0.9, ["a-0"], signal_id="sig-1")
    other = b.graph.learn_from_outcome("act", "success", 0.9, ["valve"], signal_id="sig-1")
    again = b.graph.learn_from_outcome("act", "success", 0.9, ["valve"], signal_id="sig-1")
    assert other["outcome_id"] != first["outcome_id"] and not other.get("duplicate")
    assert again["duplicate"] is True and again["outcome_id"] == other["outcome_id"]


def test_two_projects_may_ingest_the_same_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Comets\n\nComets have tails of dust and gas.\n")
    db = str(tmp_path / "ingest.db")
    for project in ("one", "two"):
        assert main(["--db", db, "--project", project, "scan", str(folder)]) == 0
    capsys.readouterr()
    for project in ("one", "two"):
        with Graphonomous(db, namespace=project) as graph:
            found = graph.retrieve_context("comet tails", limit=5)["results"]
            assert found and all(r["path"] and r["path"].endswith("a.md") for r in found)
    with sqlite3.connect(db) as con:
        rows = sorted(con.execute("SELECT namespace FROM source_files"))
    assert rows == [("one",), ("two",)]


def test_an_import_cannot_write_a_vector_onto_another_namespaces_node(tmp_path: Path) -> None:
    path = tmp_path / "vectors.db"
    with Store(path, namespace="beta") as beta:
        beta.insert_node(
            Node(
                id="theirs", node_type="semantic", content="beta's", created_at="t", updated_at="t"
            )
        )
        beta.set_embedding("theirs", b"\x00" * 8, "m")
    layout = dump.layouts()[dump.VECTOR_TABLE]
    messages = []
    for node_id in ("theirs", MISSING):
        record = {"node_id": node_id, "embedding": "AQEBAQEBAQE=", "model": "m"}
        with (
            Store(path, namespace="alpha") as alpha,
            alpha.transaction(),
            pytest.raises(dump.DumpError) as caught,
        ):
            dump.merge(alpha, layout, [(1, record)], replace=False)
        messages.append(str(caught.value).replace(node_id, "<ID>"))
    assert messages[0] == messages[1]
    with Store(path, namespace="beta") as beta:
        assert beta.get_embedding("theirs", "m") == b"\x00" * 8


def test_serve_project_writes_into_that_namespace(tmp_path: Path) -> None:
    db = str(tmp_path / "served.db")
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "store_node",
                "arguments": {"content": "served into beta", "node_id": "s-1"},
            },
        },
    ]
    command = [sys.executable, "-m", "graphonomous", "--db", db, "serve", "--project", "beta"]
    done = subprocess.run(
        [*command, "--surface", "v1", "--no-idle-consolidation"],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert not replies[-1]["result"].get("isError"), replies[-1]
    with Graphonomous(db, namespace="beta") as beta, Graphonomous(db) as default:
        assert beta.get_node("s-1")["node"]["content"] == "served into beta"
        assert default.graph_stats()["node_count"] == 0
