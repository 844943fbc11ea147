"""The learning-(B) commands: consolidate, goal, coverage."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from graphonomous.cli import main


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "cli.db")


def test_consolidate_dry_run_then_real_then_log(db: str) -> None:
    run("--db", db, "node", "add", "a weak memory", "--confidence", "0.01")
    code, text = run("--db", db, "consolidate", "--dry-run")
    assert code == 0 and text.startswith("dry run ") and "prune_nodes" in text
    code, text = run("--db", db, "--json", "consolidate")
    entry = json.loads(text)
    assert code == 0 and entry["totals"]["nodes_pruned"] == 1
    code, text = run("--db", db, "consolidate", "--log")
    assert code == 0 and len(text.strip().splitlines()) == 2


def test_goal_lifecycle(db: str) -> None:
    code, text = run("--db", db, "--json", "goal", "create", "Reset valve V2", "--priority", "0.7")
    goal = json.loads(text)["goal"]
    assert code == 0 and goal["status"] == "proposed"
    assert run("--db", db, "goal", "transition", goal["id"], "active")[0] == 0
    code, _ = run("--db", db, "goal", "transition", goal["id"], "proposed")
    assert code == 2  # illegal transition: a usage error
    assert run("--db", db, "goal", "progress", goal["id"], "0.5")[0] == 0
    code, text = run("--db", db, "--json", "goal", "decompose", goal["id"], "Close intake", "Flush")
    assert [g["title"] for g in json.loads(text)["subgoals"]] == ["Close intake", "Flush"]
    code, text = run("--db", db, "--json", "node", "add", "Close the intake before a reset")
    node_id = json.loads(text)["node"]["id"]
    assert run("--db", db, "goal", "link", goal["id"], node_id)[0] == 0
    code, text = run("--db", db, "goal", "show", goal["id"])
    assert code == 0 and "linked " + node_id in text and "progress 0.50" in text
    code, text = run("--db", db, "goal", "list", "--status", "proposed")
    assert code == 0 and text.strip().endswith("2 goals")
    code, text = run("--db", db, "goal", "review", goal["id"])
    assert code == 0 and text.startswith("decision ")
    assert run("--db", db, "goal", "unlink", goal["id"], node_id)[0] == 0
    assert run("--db", db, "goal", "update", goal["id"], "--title", "Reset valve V3")[0] == 0
    assert run("--db", db, "goal", "delete", goal["id"])[0] == 0
    assert run("--db", db, "goal", "show", goal["id"])[0] == 1


def test_coverage_command(db: str) -> None:
    run("--db", db, "node", "add", "To reset valve V2 close the intake", "--confidence", "0.9")
    code, text = run(
        "--db", db, "coverage", "reset valve V2", "--topic", "valve", "--topic", "torque"
    )
    assert code == 0 and text.startswith("recommendation learn")
    assert "covered  valve" in text and "missing  torque" in text
    code, text = run("--db", db, "--json", "coverage", "reset valve V2")
    assert code == 0 and json.loads(text)["recommendation"] in ("act", "learn", "escalate")
