"""The mutation harness: each mutant is caught by some scenario, and patches are undone."""

from __future__ import annotations

import json

import pytest

from graphonomous.capabilities import CATEGORY_NAMES
from graphonomous.capabilities.mutants import MUTANTS, applied, run_mutants
from graphonomous.cli import main
from graphonomous.learning import goals
from graphonomous.retrieval import retriever


def test_every_mutant_is_caught_by_its_own_category() -> None:
    """Each mutant fails a scenario of its target category; all 15 categories have one."""
    report = run_mutants(targets_only=True)
    assert report["baseline_failed"] == []
    survivors = [row["name"] for row in report["mutants"] if not row["caught"]]
    assert survivors == []
    assert report["summary"]["mutants"] == len(MUTANTS) >= 15
    assert all(row["failed_in_target"] == len(row["failed"]) > 0 for row in report["mutants"])
    assert {m.target_category for m in MUTANTS} == set(CATEGORY_NAMES)


def test_targets_only_respects_categories() -> None:
    report = run_mutants([6], targets_only=True)
    assert {row["target_category"] for row in report["mutants"]} == {6}
    assert {row["name"] for row in report["mutants"]} == {"propagation_off", "wald_interval"}
    assert report["summary"]["survived"] == 0


def test_patches_are_restored() -> None:
    before = (goals.apply_outcome, retriever.DEFAULT_SETTINGS)
    for mutant in MUTANTS:
        with pytest.raises(RuntimeError), applied(mutant):
            raise RuntimeError("a scenario run that crashes")
    assert (goals.apply_outcome, retriever.DEFAULT_SETTINGS) == before


def test_cli_mutants_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "capabilities", "--mutants", "--category", "13", "--json", "-"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    by_name = {row["name"]: row for row in report["mutants"]}
    assert by_name["goal_outcomes_off"]["caught"] is True
