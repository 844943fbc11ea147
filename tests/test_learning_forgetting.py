"""Forgetting: soft / hard / cascade, the hybrid policy, GDPR erase, memory pressure."""

from __future__ import annotations

import hashlib
import json
import math
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from graphonomous import Graphonomous, NotFoundError, ValidationError
from graphonomous.cli import main
from graphonomous.learning import forgetting, tables
from graphonomous.learning.forgetting import (
    RECENCY_HALF_LIFE_HOURS,
    priority_score,
    recency_factor,
)
from graphonomous.model import format_time


def _live_ids(graph: Graphonomous) -> set[str]:
    return set(graph.store.node_ids())


# -- priority --------------------------------------------------------------------------


def test_priority_formula_and_recency() -> None:
    now = datetime(2026, 1, 10, tzinfo=timezone.utc)
    assert recency_factor(now, now) == 1.0
    assert recency_factor(now + timedelta(hours=5), now) == 1.0  # future: no bonus
    week = now - timedelta(hours=RECENCY_HALF_LIFE_HOURS)
    assert math.isclose(recency_factor(week, now), 0.5)
    assert math.isclose(priority_score(0.8, 0.5, 0, 0.0), 0.4)
    assert math.isclose(priority_score(0.8, 0.5, 9, 1.0), 0.8 * 0.5 * (1 + math.log(10)) * 2)


# -- soft / hard / cascade ---------------------------------------------------------------


def test_soft_forget_hides_from_retrieval_but_keeps_structure(graph: Graphonomous) -> None:
    target = graph.store_node("The spare key hangs in the red box by door seven")["node"]
    peer = graph.store_node("Door seven leads to the loading bay")["node"]
    graph.store_edge(peer["id"], target["id"], "related")
    assert target["id"] in [
        r["node_id"] for r in graph.retrieve_context("spare key red box")["results"]
    ]
    result = graph.forget_node(target["id"], "soft", reason="moved")
    assert result == {
        "mode": "soft",
        "node_id": target["id"],
        "forgotten": [target["id"]],
        "edges_removed": 0,
        "already_forgotten": False,
    }
    assert target["id"] not in [
        r["node_id"] for r in graph.retrieve_context("spare key red box")["results"]
    ]
    assert target["id"] not in [
        r["id"] for r in graph.similarity_search("spare key red box")["results"]
    ]
    assert graph.text_index().search("spare key red box", 5) == [] or all(
        hit[0] != target["id"] for hit in graph.text_index().search("spare key red box", 5)
    )
    assert target["id"] not in graph.vector_index()
    with pytest.raises(NotFoundError):
        graph.get_node(target["id"])
    kept = graph.get_node(target["id"], include_forgotten=True)
    assert kept["node"]["forgotten_at"] is not None and len(kept["edges"]) == 1
    assert graph.forget_node(target["id"])["already_forgotten"] is True
    audit = graph.store.audit_entries(target["id"])
    assert audit[0]["action"] == "forget_node" and audit[0]["details"]["reason"] == "moved"
    # A fresh facade on the same store never re-indexes forgotten nodes.
    graph.engine.reload()
    assert target["id"] not in graph.vector_index()
    assert all(hit[0] != target["id"] for hit in graph.text_index().search("spare key", 5))


def test_hard_forget_removes_node_edges_and_dangling_supersession(graph: Graphonomous) -> None:
    old = graph.store_node("CI runs on Jenkins")["node"]
    revised = graph.belief_revise("revise", node_id=old["id"], new_content="CI runs on GitLab")
    new_id = revised["new_node_id"]
    result = graph.forget_node(new_id, "hard")
    assert result["forgotten"] == [new_id] and result["edges_removed"] == 1
    assert graph.get_node(old["id"])["node"]["superseded_by"] is None
    assert graph.get_node(old["id"])["edges"] == []
    with pytest.raises(NotFoundError):
        graph.get_node(new_id, include_forgotten=True)
    assert new_id not in graph.vector_index()


def test_cascade_forgets_orphans_transitively(graph: Graphonomous) -> None:
    def node(text: str, *args: Any, **fields: Any) -> str:
        created: str = graph.store_node(text, *args, **fields)["node"]["id"]
        return created

    root = node("Supplier S9 ships from Lyon")
    child = node("S9 parts arrive in two days")
    grandchild = node("Order S9 parts two days ahead")
    part = node("Section 2 of the S9 contract")
    supported = node("S9 is reliable")
    shared = node("Lyon deliveries avoid tolls")
    other = node("Lyon warehouse closes in August")
    pinned = node("Pinned: S9 contact is Marie", pinned=True)
    goal = node("Goal: qualify a second supplier", "goal")
    graph.store_edge(child, root, "derived_from")
    graph.store_edge(grandchild, child, "depends_on")
    graph.store_edge(part, root, "part_of")
    graph.store_edge(root, supported, "supports")
    graph.store_edge(shared, root, "derived_from")
    graph.store_edge(shared, other, "derived_from")
    graph.store_edge(pinned, root, "derived_from")
    graph.store_edge(goal, root, "derived_from")
    graph.store_edge(other, root, "related")  # not support
    result = graph.forget_node(root, "cascade")
    assert result["forgotten"] == sorted([root, child, grandchild, part, supported])
    assert _live_ids(graph) == {shared, other, pinned, goal}
    assert graph.store.count_nodes(forgotten=None) == 4  # hard: rows gone


def test_forget_validation(graph: Graphonomous) -> None:
    node = graph.store_node("x")["node"]
    with pytest.raises(ValidationError):
        graph.forget_node(node["id"], "vanish")
    with pytest.raises(NotFoundError):
        graph.forget_node("missing")
    with pytest.raises(ValidationError):
        graph.forget_by_policy("lru")
    with pytest.raises(ValidationError):
        graph.forget_by_policy(mode="cascade")
    with pytest.raises(ValidationError):
        graph.forget_by_policy(max_nodes=-1)


# -- the hybrid policy --------------------------------------------------------------------


def test_hybrid_policy_500_nodes_budget_200_keeps_high_priority(graph: Graphonomous) -> None:
    rng = random.Random(4)
    now = datetime.now(timezone.utc)
    operations = [
        {
            "op": "add_node",
            "node": {"id": f"n{i:03d}", "content": f"Fact number {i} about widget {i % 17}"},
        }
        for i in range(500)
    ]
    graph.apply_batch(operations)
    vip = {f"n{i:03d}" for i in range(0, 500, 25)}  # 20 nodes: confident, recent, used
    for i in range(500):
        node_id = f"n{i:03d}"
        if node_id in vip:
            fields = {"confidence": 0.95, "access_count": 40, "last_accessed_at": format_time(now)}
        else:
            age = timedelta(hours=rng.uniform(0, 24 * 60))
            fields = {
                "confidence": rng.uniform(0.05, 0.9),
                "access_count": rng.randrange(0, 20),
                "last_accessed_at": format_time(now - age),
            }
        graph.store.update_node(node_id, **fields)
    for i in range(0, 500, 50):  # a few edges so connectivity matters
        graph.store_edge(f"n{i:03d}", f"n{i + 1:03d}", "related")
    scores = {
        s["node_id"]: s["priority"] for s in forgetting.score_nodes(graph.store, graph.clock.now())
    }
    dry = graph.forget_by_policy("hybrid", max_nodes=200, dry_run=True)
    assert dry["forgotten_count"] == 0 and len(dry["candidates"]) == 300
    assert graph.graph_stats()["node_count"] == 500
    result = graph.forget_by_policy("hybrid", max_nodes=200)
    assert result["forgotten_count"] == 300 and result["surviving_count"] == 200
    assert [c["node_id"] for c in result["candidates"]] == [c["node_id"] for c in dry["candidates"]]
    survivors = _live_ids(graph)
    assert len(survivors) == 200 and vip <= survivors
    forgotten = set(scores) - survivors
    assert min(scores[s] for s in survivors) >= max(scores[f] for f in forgotten)
    priorities = [c["priority"] for c in result["candidates"]]
    assert priorities == sorted(priorities)
    assert graph.graph_stats()["forgotten_count"] == 300  # soft by default
    assert not (set(graph.vector_index().ids()) & forgotten)
    (entry,) = [e for e in graph.store.audit_entries() if e["action"] == "forget_by_policy"]
    assert len(entry["details"]["node_ids"]) == 300


def test_policy_respects_protection_and_config(graph: Graphonomous) -> None:
    graph.store_node("Goal: ship v2", "goal", confidence=0.01)
    graph.store_node("Core definition", timescale="glacial", confidence=0.01)
    graph.store_node("Pinned note", pinned=True, confidence=0.01)
    plain = [graph.store_node(f"plain {i}", confidence=0.9)["node"]["id"] for i in range(3)]
    assert graph.forgetting_config()["max_nodes"] == 50_000
    assert graph.forget_by_policy()["forgotten_count"] == 0  # under the default budget
    graph.forgetting_config(max_nodes=2)
    result = graph.forget_by_policy(mode="hard")
    assert result["max_nodes"] == 2 and result["protected_count"] == 3
    assert sorted(c["node_id"] for c in result["candidates"]) == sorted(plain)
    # The pinned note is exempt from the budget: 5 counted, goal + glacial remain.
    assert result["budget_count_before"] == 5 and result["exempt_count"] == 1
    assert result["over_budget_protected"] is False
    assert sorted(result["forgotten"]) == sorted(plain)
    assert graph.graph_stats()["node_count"] == 3 and graph.graph_stats()["forgotten_count"] == 0
    graph.forgetting_config(max_nodes=1)
    assert graph.forget_by_policy(dry_run=True)["over_budget_protected"] is True


def test_policy_inside_caller_transaction_reaches_indexes_only_on_commit(
    graph: Graphonomous,
) -> None:
    ids = [graph.store_node(f"note {i}")["node"]["id"] for i in range(3)]
    graph.vector_index()

    class Undo(Exception):
        pass

    with pytest.raises(Undo), graph.lock, graph.store.transaction():
        result = forgetting.forget_by_policy(graph.engine, max_nodes=1)
        assert len(result["candidates"]) == 2
        assert all(node_id in graph.vector_index() for node_id in ids)  # not committed
        raise Undo
    assert all(node_id in graph.vector_index() for node_id in ids)  # rolled back: unchanged
    with graph.lock, graph.store.transaction():
        result = forgetting.forget_by_policy(graph.engine, max_nodes=1)
    gone = {c["node_id"] for c in result["candidates"]}
    assert len(gone) == 2 and not gone & set(graph.vector_index().ids())
    assert not gone & {hit[0] for hit in graph.text_index().search("note", 5)}


def test_forgetting_config_validation(graph: Graphonomous) -> None:
    config = graph.forgetting_config(max_nodes=50, max_age_hours=24)
    assert config["max_nodes"] == 50 and config["max_age_hours"] == 24
    assert config["policy"] == "hybrid" and config["updated_at"] is not None
    assert graph.forgetting_config() == config
    for bad in ({"max_nodes": 0}, {"max_age_hours": 0}, {"policy": "fifo"}, {"max_nodes": 1.5}):
        with pytest.raises(ValidationError):
            graph.forgetting_config(**bad)  # type: ignore[arg-type]
    assert graph.forgetting_config() == config


def test_memory_pressure(graph: Graphonomous) -> None:
    graph.forgetting_config(max_nodes=10)
    for i in range(9):
        graph.store_node(f"log line {i}")
    assert graph.memory_pressure() is None  # 9 is not more than 90 % of 10
    graph.store_node("log line 9")
    item = graph.memory_pressure()
    assert item == {
        "type": "memory_pressure",
        "severity": "warning",
        "node_count": 10,
        "max_nodes": 10,
        "ratio": 1.0,
        "recommendation": "forget_by_policy",
        "target_node_count": 9,
    }
    graph.store_node("log line 10")
    critical = graph.memory_pressure()
    assert critical is not None and critical["severity"] == "critical"
    graph.forget_by_policy()
    assert graph.memory_pressure() is not None  # 10 of 10 is still above 90 %
    graph.forget_by_policy(max_nodes=critical["target_node_count"])
    assert graph.memory_pressure() is None


# -- GDPR erase -------------------------------------------------------------------------------

MARKER = "QZX-UNIQUE-MARKER-4417"


def _everywhere(graph: Graphonomous, needle: str, skip: tuple[str, ...] = ()) -> list[str]:
    """Every table.column whose text holds `needle` (brute force, independent of the code)."""
    found = []
    names = [
        r[0]
        for r in tables.query(graph.store, "SELECT name FROM sqlite_master WHERE type = 'table'")
    ]
    for table in names:
        if table in skip:
            continue
        for (column,) in tables.query(
            graph.store, f"SELECT name FROM pragma_table_info('{table}')"
        ):
            hits = graph.store.scalar(
                f'SELECT count(*) FROM "{table}" WHERE instr(CAST("{column}" AS TEXT), ?) > 0',
                (needle,),
            )
            if hits:
                found.append(f"{table}.{column}")
    return found


def _seed_references(graph: Graphonomous, node_id: str, content: str) -> dict[str, str]:
    """Make every bookkeeping table mention the node: its id, or a copy of its content."""
    other = graph.store_node("Deliveries to Elm Street happen on Tuesdays")["node"]["id"]
    graph.store_edge(other, node_id, "derived_from")
    graph.store_edge(node_id, other, "causes", metadata={"note": content})
    outcome = graph.learn_from_outcome(
        "deliver-1", "success", 0.9, [node_id, other], evidence={"customer": content}
    )
    revised = graph.belief_revise(
        "revise",
        node_id=other,
        new_content="Deliveries to Elm Street happen on Wednesdays",
        reason=f"asked by: {content}",
    )
    now = graph.now()
    goal_node = graph.store_node("Goal: on-time deliveries", "goal")["node"]["id"]
    tables.execute(
        graph.store,
        "INSERT INTO goals (id, node_id, title, description, linked_node_ids, metadata, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            "goal-1",
            goal_node,
            "Happy customer",
            f"about {content}",
            json.dumps([node_id, other]),
            json.dumps({"owner": node_id}),
            now,
            now,
        ),
    )
    for item_id, subjects in (("att-1", [node_id]), ("att-2", [node_id, other])):
        tables.execute(
            graph.store,
            "INSERT INTO attention_items (id, kind, subject_ids, details, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (item_id, "conflict", json.dumps(subjects), json.dumps({"preview": content}), now),
        )
    tables.execute(
        graph.store,
        "INSERT INTO source_files (path, root, content_hash, size, mtime_ns, file_node_id, "
        "chunk_node_ids, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ("/notes/a.md", "/notes", "h", 1, 1, other, json.dumps([node_id, other]), now),
    )
    tables.execute(
        graph.store,
        "INSERT INTO consolidation_log (id, started_at, finished_at, trigger, stages, totals) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        ("log-1", now, now, "manual", json.dumps([{"node_ids": [node_id, other]}]), "{}"),
    )
    graph.store.update_node(other, metadata={"merged_from": [node_id], "note": f"see {node_id}"})
    graph.retrieve_context("Elm Street customer")  # BM25 index built, access counters touched
    return {"other": other, "outcome": outcome["outcome_node_id"], "new": revised["new_node_id"]}


def test_gdpr_erase_leaves_no_trace_in_tables_or_file_bytes(tmp_path: Path) -> None:
    path = tmp_path / "erase.db"
    with Graphonomous(path, embedder="hashing") as graph:
        content = f"Customer {MARKER} lives at 12 Elm Street"
        person = graph.store_node(content)["node"]["id"]
        refs = _seed_references(graph, person, content)
        for i in range(50):  # pages that VACUUM must rewrite
            graph.store_node(f"Unrelated filler note {i} about invoices and shipping")
        secure_delete_before = graph.store.scalar("PRAGMA secure_delete")
        result = graph.gdpr_erase(person, reason=f"request from {MARKER}")
        assert result["erased"] is True and result["residual"] == []
        assert result["nodes_quoting_content"] == []
        assert result["file"]["vacuumed"] and result["file"]["wal_truncated"]
        assert _everywhere(graph, MARKER) == []
        assert _everywhere(graph, person, skip=("audit_log",)) == []
        assert graph.text_index().search(MARKER, 5) == []
        assert person not in graph.vector_index()
        rows = {r[0] for r in tables.query(graph.store, "SELECT id FROM attention_items")}
        assert rows == {"att-2"}  # the item about the person alone is gone
        chunk_ids = tables.query(graph.store, "SELECT chunk_node_ids FROM source_files")
        assert json.loads(chunk_ids[0][0]) == [refs["other"]]
        (entry,) = [e for e in graph.store.audit_entries() if e["action"] == "gdpr_erase"]
        assert entry["subject_id"] == person
        reason_hash = hashlib.sha256(f"request from {MARKER}".encode()).hexdigest()
        assert entry["details"]["reason_sha256"] == reason_hash
        assert graph.store.scalar("PRAGMA secure_delete") == secure_delete_before  # restored
        assert graph.get_node(refs["other"])["node"]["metadata"] == {
            "merged_from": [],
            "note": "see [erased]",
        }
    for name in ("erase.db", "erase.db-wal", "erase.db-shm"):
        file = tmp_path / name
        if file.exists():
            assert MARKER.encode() not in file.read_bytes(), name


def test_gdpr_erase_of_an_outcome_node_drops_its_row(graph: Graphonomous) -> None:
    cause = graph.store_node("Flush the line")["node"]["id"]
    outcome = graph.learn_from_outcome("a", "success", 1.0, [cause], evidence="it worked fine")
    graph.gdpr_erase(outcome["outcome_node_id"])
    assert tables.outcome_rows(graph.store) == []
    assert graph.get_node(cause)["edges"] == []


def test_gdpr_erase_reports_nodes_quoting_the_content(graph: Graphonomous) -> None:
    message = graph.store_node(f"My account number is {MARKER}")["node"]["id"]
    episode = graph.store_node(f"User said: My account number is {MARKER}. Assistant: noted")
    tables.execute(graph.store, "PRAGMA secure_delete = 0")
    result = graph.gdpr_erase(message)
    assert graph.store.scalar("PRAGMA secure_delete") == 0  # the previous setting is restored
    assert result["nodes_quoting_content"] == [episode["node"]["id"]]
    # A retry of a committed erase (e.g. after a failed file scrub) completes the scrub.
    again = graph.gdpr_erase(message)
    assert again["already_erased"] is True and again["erased_ids"] == []
    with pytest.raises(NotFoundError):
        graph.gdpr_erase("never-existed")
    with pytest.raises(ValidationError), graph.store.transaction():
        graph.gdpr_erase(episode["node"]["id"])


def test_gdpr_erase_reports_residue_in_tables_it_does_not_know(graph: Graphonomous) -> None:
    content = f"Private note {MARKER} for the residual check"
    node_id = graph.store_node(content)["node"]["id"]
    tables.execute(graph.store, "CREATE TABLE plugin_cache (key TEXT, value TEXT, blob BLOB)")
    tables.execute(
        graph.store,
        "INSERT INTO plugin_cache VALUES (?, ?, ?)",
        (node_id, f"copy: {content}", content.encode()),
    )
    result = graph.gdpr_erase(node_id)
    assert result["residual"] == ["plugin_cache.blob", "plugin_cache.key", "plugin_cache.value"]


# -- CLI -------------------------------------------------------------------------------------


def test_cli_forget_and_erase(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "cli.db")
    with Graphonomous(db) as graph:
        ids = [
            graph.store_node(f"note {i}", confidence=0.1 * (i + 1))["node"]["id"] for i in range(4)
        ]
    assert (
        main(
            ["--db", db, "forget", "--policy", "hybrid", "--max-nodes", "2", "--dry-run", "--json"]
        )
        == 0
    )
    dry = json.loads(capsys.readouterr().out)
    assert [c["node_id"] for c in dry["candidates"]] == ids[:2]
    assert main(["--db", db, "forget", ids[3], "--mode", "hard", "--reason", "test"]) == 0
    assert "forgot 1 node(s) (hard)" in capsys.readouterr().out
    assert main(["--db", db, "erase", ids[2]]) == 0
    assert f"erased {ids[2]}" in capsys.readouterr().out
    assert main(["--db", db, "forget"]) == 2
    assert main(["--db", db, "forget", ids[0], "--policy", "hybrid"]) == 2
    assert main(["--db", db, "forget", ids[0], "--dry-run"]) == 2
    assert main(["--db", db, "forget", "--policy", "hybrid", "--mode", "cascade"]) == 2
    assert main(["--db", db, "erase", "missing"]) == 1
    with Graphonomous(db) as graph:
        assert graph.store.node_ids() == ids[:2]


def test_gdpr_erase_of_a_short_id_only_scrubs_whole_tokens(graph: Graphonomous) -> None:
    # A caller-chosen id that also occurs inside ordinary words ("Fix", "x-ray").
    graph.store_node("secret fact", node_id="x")
    goal = graph.manage_goal("create", title="Fix pump x-ray", description="about the x-ray")
    graph.manage_goal("link_nodes", goal_id=goal["goal"]["id"], node_ids=["x"])
    result = graph.gdpr_erase("x")
    assert result["residual"] == []
    kept = graph.manage_goal("get", goal_id=goal["goal"]["id"])["goal"]
    assert (kept["title"], kept["description"]) == ("Fix pump x-ray", "about the x-ray")
    assert "x" not in kept["linked_node_ids"]
    assert forgetting._scrub_text("see x, not x-ray or fix", frozenset({"x"}), ()) == (
        "see [erased], not x-ray or fix"
    )
