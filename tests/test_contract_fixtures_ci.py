"""``contract fixtures`` for a port's CI: --list, --fail-fast, timing, --format junit|github.

Reuses the standalone brute-force implementation and the fixture set of
test_contract_fixtures (run as a separate process, as a port's binary is).
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
from test_contract_ci import parse_annotation, validate_junit
from test_contract_fixtures import FIXTURES, IMPLEMENTATION, write_fixtures

from graphonomous.cli import main


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    fixtures = write_fixtures(tmp_path / "fixtures", FIXTURES)
    script = tmp_path / "impl.py"
    script.write_text(IMPLEMENTATION, encoding="utf-8")
    return fixtures, script


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def run_cmd(script: Path, mode: str) -> str:
    return f'"{sys.executable}" "{script}" {mode}'


def test_list_names_every_fixture_in_run_order(setup: tuple[Path, Path]) -> None:
    fixtures, _ = setup
    code, out = cli("contract", "fixtures", "--list", "--fixtures", str(fixtures))
    assert code == 0
    assert out.splitlines() == [
        "topology/chain.json  chain",
        "topology/cycle3.json  cycle3",
        "topology/k22.json  k22",
        "preview/close_cycle.json  close_cycle",
    ]
    code, out = cli("contract", "fixtures", "--list", "--fixtures", str(fixtures), "--json")
    assert [entry["kind"] for entry in json.loads(out)] == ["topology"] * 3 + ["preview"]


def test_run_or_list_is_required(setup: tuple[Path, Path]) -> None:
    fixtures, _ = setup
    assert cli("contract", "fixtures", "--fixtures", str(fixtures))[0] == 2


def test_text_report_times_each_fixture(setup: tuple[Path, Path]) -> None:
    fixtures, script = setup
    code, out = cli(
        "contract", "fixtures", "--run", run_cmd(script, "first"), "--fixtures", str(fixtures)
    )
    assert code == 0
    timed = [line for line in out.splitlines() if line.startswith("PASS ")]
    assert len(timed) == 4
    assert all(re.fullmatch(r"PASS \S+ \(\d+\.\d ms\)", line) for line in timed)


def test_fail_fast_stops_at_the_first_failure_and_lists_the_rest(
    setup: tuple[Path, Path],
) -> None:
    fixtures, script = setup
    argv = ["contract", "fixtures", "--run", run_cmd(script, "drift"), "--fixtures", str(fixtures)]
    code, out = cli(*argv, "--fail-fast")
    assert code == 1
    lines = out.splitlines()
    assert [line.split()[0] for line in lines if line[:4] in ("PASS", "FAIL", "SKIP")] == [
        "FAIL",
        "SKIP",
        "SKIP",
        "SKIP",
    ]
    assert lines[-1] == "1 fixtures: 0 passed, 1 failed, 3 skipped — FAILED"
    code, out = cli(*argv, "--fail-fast", "--json")
    payload = json.loads(out)
    assert payload["skipped"] == [
        "topology/cycle3.json",
        "topology/k22.json",
        "preview/close_cycle.json",
    ]


def test_junit_report_has_a_timed_case_per_fixture(setup: tuple[Path, Path]) -> None:
    fixtures, script = setup
    argv = ["contract", "fixtures", "--run", run_cmd(script, "drift"), "--fixtures", str(fixtures)]
    code, out = cli(*argv, "--format", "junit")
    assert code == 1
    root = validate_junit(out)
    cases = root.findall("./testsuite/testcase")
    assert [case.attrib["name"] for case in cases] == [
        "topology/chain.json (chain)",
        "topology/cycle3.json (cycle3)",
        "topology/k22.json (k22)",
        "preview/close_cycle.json (close_cycle)",
    ]
    assert all(re.fullmatch(r"\d+\.\d{3}", case.attrib["time"]) for case in cases)
    failures = {case.attrib["name"]: case.find("failure") for case in cases}
    assert failures["preview/close_cycle.json (close_cycle)"] is None  # drift spares previews
    cycle3 = failures["topology/cycle3.json (cycle3)"]
    assert cycle3 is not None and "$.overall_routing: unknown key" in (cycle3.text or "")
    code, out = cli(*argv, "--format", "junit", "--fail-fast")
    root = validate_junit(out)
    skipped = root.findall("./testsuite/testcase/skipped")
    assert len(skipped) == 3


def test_github_report_annotates_each_failing_fixture_file(setup: tuple[Path, Path]) -> None:
    fixtures, script = setup
    argv = ["contract", "fixtures", "--run", run_cmd(script, "drift"), "--fixtures", str(fixtures)]
    code, out = cli(*argv, "--format", "github")
    assert code == 1
    lines = out.splitlines()
    annotations = [parse_annotation(line) for line in lines[:-1]]
    assert {props["file"] for _, props, _ in annotations} == {
        f"{fixtures}/topology/chain.json",
        f"{fixtures}/topology/cycle3.json",
        f"{fixtures}/topology/k22.json",
    }
    assert any("$.sccs[0].kappa: must be an integer" in message for _, _, message in annotations)
    assert lines[-1] == "4 fixtures: 1 passed, 3 failed — FAILED"
