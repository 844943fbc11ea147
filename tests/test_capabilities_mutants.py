"""The mutation harness: each mutant is caught by some scenario, and patches are undone."""

from __future__ import annotations

import json

import pytest

from graphonomous.capabilities.mutants import MUTANTS, applied, run_mutants
from graphonomous.cli import main
from graphonomous.learning import goals
from graphonomous.retrieval import retriever


def test_every_mutant_is_caught_and_the_baseline_is_clean() -> None:
    report = run_mutants()
    assert report["baseline_failed"] == []
    survivors = [row["name"] for row in report["mutants"] if not row["caught"]]
    assert survivors == []
    assert report["summary"]["mutants"] == len(MUTANTS) >= 12
    # Category 13 (the audit's regression guards) catches the mutants aimed at it.
    for row in report["mutants"]:
        if row["target_category"] == 13:
            assert row["failed_in_target"] > 0, row


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
