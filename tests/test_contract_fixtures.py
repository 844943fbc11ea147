"""run_fixtures and the CLI wrappers, end to end with a standalone implementation.

The implementation under test is a small brute-force script written into
tmp_path (it imports nothing from graphonomous), run as a separate process
exactly as another port's binary would be.  Fixture files are generated here
with hand-written expected results.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from graphonomous.contract import (
    cli_check,
    cli_fixtures,
    compare_topology,
    first_difference,
    run_fixtures,
)

IMPLEMENTATION = r"""
import itertools
import json
import sys
import time


def reach(start, arcs):
    seen, stack = {start}, [start]
    while stack:
        node = stack.pop()
        for source, target in arcs:
            if source == node and target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def analyze(nodes, arcs, pick):
    reachable = {node: reach(node, arcs) for node in nodes}
    groups = {frozenset(m for m in reachable[n] if n in reachable[m]) for n in nodes}
    sccs = sorted((sorted(g) for g in groups if len(g) > 1), key=lambda g: g[0])
    out = []
    for index, members in enumerate(sccs):
        cuts = []
        for size in range(1, len(members)):
            for side in itertools.combinations(members, size):
                leaving = sorted(
                    (s, t) for s, t in arcs if s in side and t in members and t not in side
                )
                cuts.append((len(leaving), leaving))
        kappa = min(count for count, _ in cuts)
        best = sorted(lines for count, lines in cuts if count == kappa)
        lines = best[0] if pick == "first" else best[-1]
        out.append({
            "id": f"scc-{index}",
            "nodes": members,
            "kappa": kappa,
            "approximate": False,
            "fault_line_edges": [{"source": s, "target": t} for s, t in lines],
            "routing": "deliberate",
            "deliberation_budget": {
                "max_iterations": min(kappa + 1, 4),
                "agent_count": min(kappa, 3),
                "timeout_multiplier": round(min(1.0 + 0.5 * kappa, 3.5), 10),
                "confidence_threshold": round(min(0.7 + 0.05 * kappa, 0.95), 10),
            },
        })
    in_scc = {node for scc in out for node in scc["nodes"]}
    max_kappa = max((scc["kappa"] for scc in out), default=0)
    return {
        "sccs": out,
        "dag_nodes": sorted(nodes - in_scc),
        "routing": "deliberate" if max_kappa else "fast",
        "max_kappa": max_kappa,
        "scc_count": len(out),
    }


def graph(doc):
    nodes, arcs = set(doc["nodes"]), set()
    for edge in doc["edges"]:
        nodes.update((edge["source"], edge["target"]))
        if edge["source"] != edge["target"]:
            arcs.add((edge["source"], edge["target"]))
    return nodes, arcs


mode = sys.argv[1] if len(sys.argv) > 1 else "first"
doc = json.load(sys.stdin)
if mode == "crash":
    print("boom: cannot analyze", file=sys.stderr)
    sys.exit(3)
if mode == "garbage":
    print("kappa is 1")
    sys.exit(0)
if mode == "sleep":
    time.sleep(30)
nodes, arcs = graph(doc)
if "preview" in doc:
    before = analyze(nodes, arcs, "first")
    source, target = doc["preview"]["source"], doc["preview"]["target"]
    extra = {(source, target)} if source != target else set()
    after = analyze(nodes | {source, target}, arcs | extra, "first")
    creates = after["scc_count"] > before["scc_count"]
    result = {
        "creates_new_scc": creates,
        "enlarges_existing_scc": after["max_kappa"] > before["max_kappa"] and not creates,
        "kappa_before": before["max_kappa"],
        "kappa_after": after["max_kappa"],
        "kappa_delta": after["max_kappa"] - before["max_kappa"],
        "description": f"κ: {before['max_kappa']}→{after['max_kappa']}",
    }
else:
    result = analyze(nodes, arcs, "last" if mode == "last" else "first")
    if mode == "drift":
        result["overall_routing"] = result.pop("routing")
        for scc in result["sccs"]:
            scc["kappa"] = str(scc["kappa"])
    if mode == "badcut":
        for scc in result["sccs"]:
            if scc["nodes"] == ["a1", "a2", "b1", "b2"]:
                scc["fault_line_edges"] = [
                    {"source": "a1", "target": "b1"}, {"source": "a2", "target": "b2"}
                ]
if mode == "dupkey":
    text = json.dumps(result)
    print(text[:-1] + ', "scc_count": 0}' if "scc_count" in result else text)
else:
    print(json.dumps(result, ensure_ascii=False))
"""


def plain(*arcs: str) -> list[dict[str, str]]:
    """Edges from "a>b" strings."""
    return [dict(zip(("source", "target"), arc.split(">"), strict=True)) for arc in arcs]


def budget(iterations: int, agents: int, timeout: float, confidence: float) -> dict[str, Any]:
    return {
        "max_iterations": iterations,
        "agent_count": agents,
        "timeout_multiplier": timeout,
        "confidence_threshold": confidence,
    }


def one_scc(
    nodes: list[str], kappa: int, lines: list[tuple[str, str]], plan: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": "scc-0",
        "nodes": nodes,
        "kappa": kappa,
        "approximate": False,
        "fault_line_edges": [{"source": s, "target": t} for s, t in lines],
        "routing": "deliberate",
        "deliberation_budget": plan,
    }


FIXTURES: dict[str, dict[str, Any]] = {
    "topology/cycle3.json": {
        "name": "cycle3",
        "description": "a 3-cycle fed by a DAG node",
        "input": {"nodes": ["x"], "edges": plain("a>b", "b>c", "c>a", "x>a")},
        "expected": {
            "sccs": [one_scc(["a", "b", "c"], 1, [("a", "b")], budget(2, 1, 1.5, 0.75))],
            "dag_nodes": ["x"],
            "routing": "deliberate",
            "max_kappa": 1,
            "scc_count": 1,
        },
        "expected_reference": {"overall_routing": "deliberate"},
    },
    "topology/k22.json": {
        "name": "k22",
        "description": "complete bipartite K2,2 with both directions: κ = 2",
        "input": {
            "nodes": [],
            "edges": plain("a1>b1", "b1>a1", "a1>b2", "b2>a1", "a2>b1", "b1>a2", "a2>b2", "b2>a2"),
        },
        "expected": {
            "sccs": [
                one_scc(
                    ["a1", "a2", "b1", "b2"],
                    2,
                    [("a1", "b1"), ("a1", "b2")],
                    budget(3, 2, 2.0, 0.8),
                )
            ],
            "dag_nodes": [],
            "routing": "deliberate",
            "max_kappa": 2,
            "scc_count": 1,
        },
    },
    "topology/chain.json": {
        "name": "chain",
        "description": "a DAG",
        "input": {"nodes": ["a"], "edges": plain("a>b", "b>c")},
        "expected": {
            "sccs": [],
            "dag_nodes": ["a", "b", "c"],
            "routing": "fast",
            "max_kappa": 0,
            "scc_count": 0,
        },
    },
    "preview/close_cycle.json": {
        "name": "close_cycle",
        "description": "closing a chain into a cycle creates an SCC",
        "input": {
            "nodes": [],
            "edges": plain("a>b", "b>c"),
            "preview": {"source": "c", "target": "a"},
        },
        "expected": {
            "creates_new_scc": True,
            "enlarges_existing_scc": False,
            "kappa_before": 0,
            "kappa_after": 1,
            "kappa_delta": 1,
            "description": "κ: 0→1",
        },
    },
}


def write_fixtures(root: Path, fixtures: dict[str, dict[str, Any]]) -> Path:
    for relative, fixture in fixtures.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(fixture, ensure_ascii=False, indent=2), encoding="utf-8")
    return root


@pytest.fixture
def fixtures_dir(tmp_path: Path) -> Path:
    return write_fixtures(tmp_path / "fixtures", FIXTURES)


@pytest.fixture
def implementation(tmp_path: Path) -> Path:
    script = tmp_path / "impl.py"
    script.write_text(IMPLEMENTATION, encoding="utf-8")
    return script


def command(script: Path, mode: str = "first") -> list[str]:
    return [sys.executable, str(script), mode]


def violations_of(report: Any, name: str) -> set[tuple[str, str]]:
    [result] = [r for r in report.results if r.name == name]
    return {(v.path, v.rule) for v in result.violations}


# --------------------------------------------------------------------------
# End to end
# --------------------------------------------------------------------------


def test_correct_implementation_passes_exact_and_semantic(
    fixtures_dir: Path, implementation: Path
) -> None:
    for mode in ("exact", "semantic"):
        report = run_fixtures(command(implementation), fixtures_dir, mode)
        assert report.ok, report.format()
        assert (report.total, report.passed, report.failed) == (4, 4, 0)
        assert [r.file for r in report.results] == [
            "topology/chain.json",
            "topology/cycle3.json",
            "topology/k22.json",
            "preview/close_cycle.json",
        ]
    text = report.format()
    assert "PASS topology/k22.json" in text
    assert text.endswith("4 fixtures: 4 passed, 0 failed — OK")
    payload = json.loads(report.format(as_json=True))
    assert payload["ok"] is True and payload["mode"] == "semantic" and payload["passed"] == 4


def test_string_command_is_split_without_a_shell(fixtures_dir: Path, implementation: Path) -> None:
    report = run_fixtures(f'"{sys.executable}" "{implementation}" first', fixtures_dir, "exact")
    assert report.ok, report.format()


def test_drifted_implementation_fails_with_precise_paths(
    fixtures_dir: Path, implementation: Path
) -> None:
    report = run_fixtures(command(implementation, "drift"), fixtures_dir, "exact")
    assert not report.ok
    assert (report.passed, report.failed) == (1, 3)  # only the preview is unaffected
    found = violations_of(report, "cycle3")
    assert ("$.overall_routing", "additionalProperties") in found
    assert ("$.routing", "required") in found
    assert ("$.sccs[0].kappa", "type") in found
    text = report.format()
    assert "FAIL topology/cycle3.json" in text
    assert (
        "$.overall_routing: unknown key 'overall_routing' is not allowed here; use 'routing'"
        in text
    )
    assert '$.sccs[0].kappa: must be an integer; got string "1"' in text
    assert "$.sccs[0].kappa: expected number 1, got string" in text  # the exact comparison
    payload = json.loads(report.format(as_json=True))
    [cycle3] = [r for r in payload["results"] if r["name"] == "cycle3"]
    assert cycle3["passed"] is False and cycle3["error"] is None
    assert {"path": "$.overall_routing", "rule": "additionalProperties"}.items() <= next(
        v for v in cycle3["violations"] if v["path"] == "$.overall_routing"
    ).items()


def test_another_minimum_cut_passes_semantic_but_not_exact(
    fixtures_dir: Path, implementation: Path
) -> None:
    semantic = run_fixtures(command(implementation, "last"), fixtures_dir, "semantic")
    assert semantic.ok, semantic.format()
    exact = run_fixtures(command(implementation, "last"), fixtures_dir, "exact")
    assert violations_of(exact, "cycle3") == {("$.sccs[0].fault_line_edges[0].source", "exact")}
    [cycle3] = [r for r in exact.results if r.name == "cycle3"]
    assert cycle3.violations[0].message == 'expected string "a", got string "c"'


def test_fault_lines_that_are_not_a_cut_fail_semantic(
    fixtures_dir: Path, implementation: Path
) -> None:
    report = run_fixtures(command(implementation, "badcut"), fixtures_dir, "semantic")
    assert violations_of(report, "k22") == {("$.sccs[0].fault_line_edges", "semantic-fault-line")}
    assert report.failed == 1


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        ("crash", "command exited with status 3; stderr ends with:\nboom: cannot analyze"),
        (
            "garbage",
            "stdout is not JSON: Expecting value at line 1 column 1; "
            "stdout begins: 'kappa is 1\\n'",
        ),
    ],
)
def test_process_failures_are_reported_per_fixture(
    fixtures_dir: Path, implementation: Path, mode: str, fragment: str
) -> None:
    report = run_fixtures(command(implementation, mode), fixtures_dir, "exact")
    assert report.failed == 4
    assert all(r.error is not None and fragment in r.error for r in report.results)
    assert fragment.splitlines()[0] in report.format()


def test_timeout_kills_the_process(tmp_path: Path, implementation: Path) -> None:
    root = write_fixtures(
        tmp_path / "one", {"topology/chain.json": FIXTURES["topology/chain.json"]}
    )
    report = run_fixtures(command(implementation, "sleep"), root, "exact", timeout_s=0.5)
    [result] = report.results
    assert result.error == "timed out after 0.5 s (the process was killed)"
    assert result.duration_ms < 10_000


def test_missing_command(fixtures_dir: Path) -> None:
    report = run_fixtures(["/nonexistent/kappa-port"], fixtures_dir, "exact")
    assert {r.error for r in report.results} == {"command not found: /nonexistent/kappa-port"}


def test_duplicate_keys_in_output_are_violations(tmp_path: Path, implementation: Path) -> None:
    root = write_fixtures(
        tmp_path / "one", {"topology/chain.json": FIXTURES["topology/chain.json"]}
    )
    report = run_fixtures(command(implementation, "dupkey"), root, "exact")
    assert ("$.scc_count", "duplicate-key") in violations_of(report, "chain")


def test_malformed_fixtures_are_blamed_on_the_fixture(tmp_path: Path, implementation: Path) -> None:
    broken = dict(FIXTURES["topology/chain.json"])
    del broken["expected"]
    wrong = json.loads(json.dumps(FIXTURES["topology/chain.json"]))
    wrong["expected"]["scc_count"] = 3
    root = write_fixtures(
        tmp_path / "bad", {"topology/broken.json": broken, "topology/wrong.json": wrong}
    )
    (root / "topology" / "syntax.json").write_text("{", encoding="utf-8")
    report = run_fixtures(command(implementation), root, "exact")
    errors = {r.file: r.error or "" for r in report.results}
    assert "$.expected: required key 'expected' is missing" in errors["topology/broken.json"]
    assert (
        "$.expected.scc_count: must equal the number of entries in sccs (0)"
        in errors["topology/wrong.json"]
    )
    assert errors["topology/syntax.json"].startswith("fixture file is unreadable")
    assert not report.ok


def test_no_fixtures_is_not_ok(tmp_path: Path, implementation: Path) -> None:
    report = run_fixtures(command(implementation), tmp_path, "exact")
    assert report.total == 0 and not report.ok
    assert report.problems and "no fixtures found" in report.problems[0]


def test_bad_arguments_raise(fixtures_dir: Path) -> None:
    with pytest.raises(ValueError, match="mode must be one of exact, semantic"):
        run_fixtures("x", fixtures_dir, "fuzzy")
    with pytest.raises(ValueError, match="empty"):
        run_fixtures("  ", fixtures_dir, "exact")


# --------------------------------------------------------------------------
# Comparison helpers
# --------------------------------------------------------------------------


def test_first_difference() -> None:
    assert first_difference({"a": [1, 2]}, {"a": [1, 2.0]}) is None
    assert first_difference({"a": 1, "b": 2}, {"b": 2}) == ("$.a", "missing; expected number 1")
    assert first_difference({"a": 1}, {"a": 1, "z": 0})[0] == "$.z"  # type: ignore[index]
    assert first_difference([1, 2], [1]) == ("$[1]", "missing item: expected 2 items, got 1")
    assert first_difference([1], [1, 2]) == ("$[1]", "unexpected item: expected 1 items, got 2")
    assert first_difference({"k": 1}, {"k": True}) == ("$.k", "expected number 1, got boolean true")
    assert first_difference({"s": [{"x": "a"}]}, {"s": [{"x": "b"}]})[0] == "$.s[0].x"  # type: ignore[index]


def test_fault_line_check_uses_kappa_arc_directions() -> None:
    # `a superseded_by b` is the arc b→a (KAPPA_ARC_DIRECTION −1); `related` is no arc.
    graph_input = {
        "nodes": [],
        "edges": [
            {"source": "a", "target": "b"},
            {"source": "a", "target": "b", "relationship": "superseded_by"},
            {"source": "b", "target": "a", "relationship": "related"},
        ],
    }
    expected = {
        "sccs": [one_scc(["a", "b"], 1, [("a", "b")], budget(2, 1, 1.5, 0.75))],
        "dag_nodes": [],
        "routing": "deliberate",
        "max_kappa": 1,
        "scc_count": 1,
    }
    reversed_cut = json.loads(json.dumps(expected))
    reversed_cut["sccs"][0]["fault_line_edges"] = [{"source": "b", "target": "a"}]
    assert compare_topology(expected, expected, graph_input) == []
    assert compare_topology(expected, reversed_cut, graph_input) == []
    without_reverse = {"nodes": [], "edges": graph_input["edges"][::2]}
    [violation] = compare_topology(expected, reversed_cut, without_reverse)
    assert violation.path == "$.sccs[0].fault_line_edges[0]"
    assert "is not an arc" in violation.message


def test_semantic_differences_are_named() -> None:
    expected = FIXTURES["topology/cycle3.json"]["expected"]
    actual = json.loads(json.dumps(expected))
    actual["sccs"][0]["kappa"] = 2
    actual["dag_nodes"] = ["y"]
    actual["max_kappa"] = 2
    found = {
        (v.path, v.rule)
        for v in compare_topology(expected, actual, FIXTURES["topology/cycle3.json"]["input"])
    }
    assert found == {
        ("$.sccs[0].kappa", "semantic-kappa"),
        ("$.dag_nodes", "semantic-dag"),
        ("$.max_kappa", "semantic-value"),
    }
    actual = json.loads(json.dumps(expected))
    actual["sccs"][0]["nodes"] = ["a", "b"]
    found = {
        (v.path, v.rule) for v in compare_topology(expected, actual, {"nodes": [], "edges": []})
    }
    assert found == {("$.sccs", "semantic-scc"), ("$.sccs[0]", "semantic-scc")}


# --------------------------------------------------------------------------
# CLI wrappers
# --------------------------------------------------------------------------


def run_check(target: str, as_json: bool = False, stdin_text: str = "") -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    status = cli_check(target, as_json, io.StringIO(stdin_text), stdout, stderr)
    return status, stdout.getvalue(), stderr.getvalue()


def test_cli_check_exit_codes(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(FIXTURES["topology/cycle3.json"]["expected"]), encoding="utf-8")
    assert run_check(str(good)) == (0, "valid topology document: no violations\n", "")

    drifted = dict(FIXTURES["topology/cycle3.json"]["expected"])
    drifted["overall_routing"] = drifted.pop("routing")
    status, out, _ = run_check("-", stdin_text=json.dumps(drifted))
    assert status == 1
    assert (
        "$.overall_routing: unknown key 'overall_routing' is not allowed here; use 'routing'" in out
    )

    status, out, _ = run_check(
        "-", as_json=True, stdin_text=json.dumps(FIXTURES["preview/close_cycle.json"]["expected"])
    )
    assert status == 0 and json.loads(out) == {
        "valid": True,
        "kind": "preview",
        "violation_count": 0,
        "violations": [],
    }

    status, out, err = run_check(str(tmp_path / "missing.json"), as_json=True)
    assert status == 2 and "cannot read" in err and json.loads(out)["valid"] is False
    assert run_check("-", stdin_text="{not json")[0] == 2
    assert run_check("-", stdin_text='{"max_kappa": NaN}')[0] == 2

    status, out, _ = run_check("-", stdin_text='{"sccs": [], "sccs": []}', as_json=True)
    assert status == 1 and any(v["rule"] == "duplicate-key" for v in json.loads(out)["violations"])


def test_cli_fixtures(
    tmp_path: Path, fixtures_dir: Path, implementation: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(*args: Any, **kwargs: Any) -> tuple[int, str, str]:
        stdout, stderr = io.StringIO(), io.StringIO()
        status = cli_fixtures(*args, stdout, stderr, **kwargs)
        return status, stdout.getvalue(), stderr.getvalue()

    cmd = f'"{sys.executable}" "{implementation}"'
    status, out, _ = run(cmd, "exact", str(fixtures_dir), False)
    assert status == 0 and out.rstrip().endswith("— OK")
    status, out, _ = run(f"{cmd} drift", "semantic", str(fixtures_dir), True)
    assert status == 1 and json.loads(out)["failed"] == 3

    monkeypatch.chdir(tmp_path)  # tmp_path/fixtures is the default directory
    assert run(cmd, "exact", None, False)[0] == 0
    monkeypatch.chdir(fixtures_dir)
    status, _, err = run(cmd, "exact", None, False)
    assert status == 2 and "does not exist (the default; pass --fixtures DIR)" in err
    assert run(cmd, "fuzzy", str(fixtures_dir), False)[0] == 2
    assert run("", "exact", str(fixtures_dir), False)[0] == 2
    (tmp_path / "empty").mkdir()
    assert run(cmd, "exact", str(tmp_path / "empty"), False)[0] == 2
