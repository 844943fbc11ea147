"""The node budget on the command line: --max-nodes, $GRAPHONOMOUS_MAX_NODES, config,
stats, the 90 % warning, and consolidation reporting what it forgot."""

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
    return str(tmp_path / "budget.db")


def test_config_shows_and_sets_the_budget(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHONOMOUS_MAX_NODES", raising=False)
    code, text = run("--db", db, "--json", "config")
    assert code == 0 and json.loads(text)["forgetting"]["max_nodes"] == 50_000
    code, text = run("--db", db, "config", "--max-nodes", "123")
    assert code == 0 and "max_nodes  123" in text
    monkeypatch.setenv("GRAPHONOMOUS_MAX_NODES", "77")
    code, text = run("--db", db, "--json", "config")
    assert json.loads(text)["budget"]["max_nodes"] == 77
    monkeypatch.setenv("GRAPHONOMOUS_MAX_NODES", "lots")
    assert run("--db", db, "config")[0] == 2
    monkeypatch.delenv("GRAPHONOMOUS_MAX_NODES")
    assert run("--db", db, "config", "--max-nodes", "0")[0] == 2


def test_stats_warns_above_ninety_percent_and_consolidate_names_what_it_forgot(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n" + "alpha " * 50, encoding="utf-8")
    assert run("--db", db, "scan", str(docs), "--quiet")[0] == 0
    ids = [
        json.loads(run("--db", db, "--json", "node", "add", f"note {i}")[1])["node"]["id"]
        for i in range(4)
    ]
    run("--db", db, "config", "--max-nodes", "4")
    capsys.readouterr()
    code, text = run("--db", db, "stats")
    assert code == 0 and "budget     4 of 4 learned nodes (100%)" in text
    assert "warning: 4 of 4 budgeted nodes" in capsys.readouterr().err
    code, text = run("--db", db, "--json", "stats")
    budget = json.loads(text)["budget"]
    assert budget["counted_nodes"] == 4 and budget["exempt_nodes"] >= 2
    code, text = run("--db", db, "consolidate", "--dry-run", "--max-nodes", "2")
    assert code == 0 and "would forget 2 node(s)" in text
    assert "nodes 6 → 4" in text.splitlines()[0]  # the header agrees with the body
    code, text = run("--db", db, "--json", "consolidate")
    prune = next(s for s in json.loads(text)["stages"] if s["name"] == "prune_nodes")
    assert len(prune["forgotten"]) == 2 and set(prune["forgotten"]) <= set(ids)
    code, text = run("--db", db, "--json", "stats")
    assert json.loads(text)["budget"]["counted_nodes"] == 2
