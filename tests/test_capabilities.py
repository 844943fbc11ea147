"""The capability framework, and every registered scenario (GraphMemBench Phase 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphonomous.api import Graphonomous
from graphonomous.capabilities import (
    CATEGORY_NAMES,
    ScenarioSpec,
    Skip,
    format_table,
    load_scenarios,
    registered_scenarios,
    run_capabilities,
    run_scenario,
)
from graphonomous.cli import main


def _passing(graph: Graphonomous) -> tuple[bool, str]:
    node = graph.store_node("a fresh graph accepts a node")["node"]
    return graph.graph_stats()["node_count"] == 1, f"stored {node['id']}"


def _skipping(graph: Graphonomous) -> tuple[bool, str]:
    raise Skip("prerequisite missing")


def _crashing(graph: Graphonomous) -> tuple[bool, str]:
    raise RuntimeError("boom")


def test_run_scenario_statuses() -> None:
    rows = [
        run_scenario(ScenarioSpec(2, 90, "passing", _passing)),
        run_scenario(ScenarioSpec(2, 91, "skipping", _skipping)),
        run_scenario(ScenarioSpec(2, 92, "crashing", _crashing)),
    ]
    assert [row["status"] for row in rows] == ["passed", "skipped", "failed"]
    assert rows[0]["id"] == "2.90" and rows[0]["category_name"] == "belief_revision"
    assert rows[1]["detail"] == "prerequisite missing"
    assert rows[2]["detail"] == "RuntimeError: boom"
    assert all(row["duration_ms"] >= 0 for row in rows)


def test_unknown_category_rejected() -> None:
    with pytest.raises(ValueError):
        run_capabilities([99])


def test_every_registered_scenario_passes() -> None:
    report = run_capabilities()
    assert json.loads(json.dumps(report)) == report
    failures = [
        f"{r['id']} {r['name']}: {r['detail']}"
        for r in report["scenarios"]
        if r["status"] == "failed"
    ]
    assert failures == []
    assert report["summary"]["total"] == len(report["scenarios"])
    table = format_table(report)
    assert table.endswith("skipped\n")


def test_scenario_ids_are_dense_per_category() -> None:
    load_scenarios()
    for category in CATEGORY_NAMES:
        indices = [s.index for s in registered_scenarios({category})]
        assert indices == list(range(1, len(indices) + 1))


def test_fifteen_categories_of_eight() -> None:
    """GraphMemBench's 120 capability scenarios: categories 1-15, 8 each."""
    load_scenarios()
    counts = {c: len(registered_scenarios({c})) for c in CATEGORY_NAMES}
    assert counts == dict.fromkeys(range(1, 16), 8)


def test_cli_bench_capabilities(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    assert main(["bench", "capabilities", "--category", "2", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "category 2 belief_revision: 8/8 passed" in table
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"] == {"passed": 8, "failed": 0, "skipped": 0, "total": 8}
    assert main(["bench", "capabilities", "--category", "5", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["categories"]["5"]["total"] == 8
    assert main(["bench", "capabilities", "--category", "42"]) == 2


def test_cli_bench_exit_code_on_failure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import graphonomous.capabilities as capabilities

    spec = ScenarioSpec(2, 1, "crashing", _crashing)
    report = {
        "scenarios": [run_scenario(spec)],
        "categories": {
            "2": {"name": "belief_revision", "passed": 0, "failed": 1, "skipped": 0, "total": 1}
        },
        "summary": {"passed": 0, "failed": 1, "skipped": 0, "total": 1},
    }
    monkeypatch.setattr(capabilities, "run_capabilities", lambda categories: report)
    assert main(["bench", "capabilities"]) == 1
    assert "FAIL  crashing" in capsys.readouterr().out
