"""Run an implementation of the κ contract against the shared fixture files.

A fixture is a JSON file ``topology/<name>.json`` or ``preview/<name>.json``::

    {"name": ..., "description": ...,
     "input": {"nodes": [...], "edges": [...], "preview": {"source": ..., "target": ...}},
     "expected": <canonical output>, "expected_reference": <optional>}

(``preview`` only in preview fixtures.)  For each fixture the command under
test is started without a shell, receives ``json.dumps(input)`` on stdin and
must print one JSON document on stdout.  The output is checked against the
contract (:func:`check_document`) and then compared with ``expected``:

* **exact** — equal as JSON values (numbers by value, so ``2`` equals ``2.0``;
  ``true`` never equals ``1``; array order matters, key order does not); the
  first differing JSON path is reported.
* **semantic** — same SCC node sets, the same κ for each SCC (matched by node
  set), the same ``dag_nodes`` set, ``routing``, ``max_kappa`` and
  ``scc_count``, and each exact SCC's fault lines form a minimum cut of that
  SCC in the fixture's directed graph.  Previews: same flags and κ numbers
  (the description text is free).

``expected_reference`` (the brute-force reference's raw output) is ignored
here; it documents the fixture.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from graphonomous.contract.checker import check_document
from graphonomous.contract.options import DEFAULT_TIMEOUT_S as DEFAULT_TIMEOUT_S
from graphonomous.contract.options import FIXTURE_FORMATS as FIXTURE_FORMATS
from graphonomous.contract.options import FIXTURE_MODES as FIXTURE_MODES
from graphonomous.contract.report import github_command, junit_document, junit_testcase
from graphonomous.contract.schema import (
    SchemaValidator,
    Violation,
    describe,
    index_path,
    json_equal,
    key_path,
    load_package_schema,
    parse_json,
)
from graphonomous.model import ValidationError

FIXTURE_SUITE: Final = "graphonomous contract fixtures"
FIXTURE_KINDS: Final = ("topology", "preview")  # subdirectory = document kind
FIXTURE_SCHEMA_FILE: Final = "fixture.schema.json"
# How much of a failing command's stderr / stdout is quoted in the report.
_STDERR_TAIL_LINES: Final = 10
_QUOTE_CHARS: Final = 300


@dataclass
class FixtureResult:
    """The outcome of one fixture.

    `error` is set when the run produced nothing to judge (the fixture file is
    broken, the command failed, timed out or printed non-JSON); otherwise
    `violations` lists every problem found in the output (empty = pass).
    """

    name: str
    kind: str
    file: str
    error: str | None = None
    violations: list[Violation] = field(default_factory=list)
    duration_ms: float = 0.0

    @property
    def passed(self) -> bool:
        return self.error is None and not self.violations

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "file": self.file,
            "passed": self.passed,
            "error": self.error,
            "violations": [violation.to_dict() for violation in self.violations],
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass
class FixtureReport:
    """Per-fixture results plus totals.  `problems` are run-level (no fixtures found)."""

    command: list[str]
    fixtures_dir: str
    mode: str
    results: list[FixtureResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Fixture files not run because --fail-fast stopped at an earlier failure.
    skipped: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def passed(self) -> int:
        return sum(1 for result in self.results if result.passed)

    @property
    def failed(self) -> int:
        return self.total - self.passed

    @property
    def ok(self) -> bool:
        """True when at least one fixture ran, every fixture passed and none was skipped."""
        return not self.problems and self.total > 0 and self.failed == 0 and not self.skipped

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "mode": self.mode,
            "command": self.command,
            "fixtures_dir": self.fixtures_dir,
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "problems": list(self.problems),
            "skipped": list(self.skipped),
            "results": [result.to_dict() for result in self.results],
        }

    def format(self, as_json: bool = False) -> str:
        return format_fixture_report(self, as_json)


def format_fixture_report(report: FixtureReport, as_json: bool = False) -> str:
    """Render a report for people (PASS/FAIL lines with reasons) or as JSON."""
    if as_json:
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
    lines = [
        f"contract fixtures: mode {report.mode}, command: {shlex.join(report.command)}",
        f"fixtures: {report.fixtures_dir}",
    ]
    lines += [f"problem: {problem}" for problem in report.problems]
    for result in report.results:
        lines.append(
            f"{'PASS' if result.passed else 'FAIL'} {result.file} ({result.duration_ms:.1f} ms)"
        )
        lines += [f"    {line}" for line in failure_lines(result)]
    lines += [f"SKIP {file} (--fail-fast stopped the run)" for file in report.skipped]
    verdict = "OK" if report.ok else "FAILED"
    skipped = f", {len(report.skipped)} skipped" if report.skipped else ""
    lines.append(
        f"{report.total} fixtures: {report.passed} passed, {report.failed} failed{skipped}"
        f" — {verdict}"
    )
    return "\n".join(lines)


def format_fixture_junit(report: FixtureReport) -> str:
    """JUnit XML: one test case per fixture (classname = its kind), with its time.

    A fixture --fail-fast did not run is a test case with ``<skipped/>``;
    run-level problems (no fixtures) are one failing test case.
    """
    cases: list[list[str]] = []
    failures = 0
    for result in report.results:
        failure = None
        if not result.passed:
            failures += 1
            reasons = failure_lines(result)
            failure = ("fixture", reasons[0] if reasons else "failed", "\n".join(reasons))
        name = f"{result.file} ({result.name})"
        cases.append(junit_testcase(name, result.kind, failure, result.duration_ms / 1000.0))
    for file in report.skipped:
        head = junit_testcase(file, file.split("/", 1)[0], None)[0][: -len("/>")]
        cases.append([head + ">", '      <skipped message="--fail-fast"/>', "    </testcase>"])
    for problem in report.problems:
        failures += 1
        cases.append(junit_testcase("fixtures", "run", ("run", problem, problem)))
    total_s = sum(result.duration_ms for result in report.results) / 1000.0
    return junit_document(FIXTURE_SUITE, cases, failures, total_s)


def format_fixture_github(report: FixtureReport) -> str:
    """One ``::error`` annotation per failing fixture (file = the fixture file), then totals."""
    lines = []
    for result in report.results:
        if result.passed:
            continue
        reasons = failure_lines(result)
        properties = {
            "file": f"{report.fixtures_dir}/{result.file}",
            "title": f"graphonomous contract fixture {result.name}",
        }
        lines.append(github_command("error", "\n".join(reasons) or "failed", properties))
    for problem in report.problems:
        lines.append(github_command("error", problem, {"title": "graphonomous contract fixtures"}))
    lines.append(format_fixture_report(report).splitlines()[-1])
    return "\n".join(lines)


def failure_lines(result: FixtureResult) -> list[str]:
    """Why a fixture failed: the run error's lines, then each violation (empty when it passed)."""
    lines = result.error.splitlines() if result.error is not None else []
    return lines + [f"{violation}  [{violation.rule}]" for violation in result.violations]


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


def discover_fixtures(fixtures_dir: Path) -> list[tuple[str, Path]]:
    """(kind, file) for every ``topology/*.json`` and ``preview/*.json``, sorted by name."""
    found: list[tuple[str, Path]] = []
    for kind in FIXTURE_KINDS:
        directory = fixtures_dir / kind
        if directory.is_dir():
            found += [(kind, path) for path in sorted(directory.glob("*.json")) if path.is_file()]
    return found


def run_fixtures(
    command: str | Sequence[str],
    fixtures_dir: Path,
    mode: str = "exact",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    fail_fast: bool = False,
) -> FixtureReport:
    """Run `command` on every fixture under `fixtures_dir` and judge its output.

    Input: the command (a string is split with :func:`shlex.split`; no shell
    is involved), the fixtures directory, ``"exact"`` or ``"semantic"`` and a
    per-fixture timeout in seconds; `fail_fast` stops at the first failing
    fixture (the rest are listed as skipped).  Output: a :class:`FixtureReport`.
    Complexity: one process per fixture; judging is linear in the size of the
    output plus O(V + E) of the fixture graph per SCC in semantic mode.
    """
    if mode not in FIXTURE_MODES:
        raise ValueError(f"mode must be one of {', '.join(FIXTURE_MODES)}; got {mode!r}")
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError("the command to run is empty")
    fixtures_dir = Path(fixtures_dir)
    report = FixtureReport(command=argv, fixtures_dir=str(fixtures_dir), mode=mode)
    files = discover_fixtures(fixtures_dir)
    if not files:
        report.problems.append(
            f"no fixtures found: expected {fixtures_dir}/topology/*.json "
            f"or {fixtures_dir}/preview/*.json"
        )
    for position, (kind, path) in enumerate(files):
        result = _run_one(argv, fixtures_dir, kind, path, mode, timeout_s)
        report.results.append(result)
        if fail_fast and not result.passed:
            report.skipped = [
                later.relative_to(fixtures_dir).as_posix() for _, later in files[position + 1 :]
            ]
            break
    return report


def _run_one(
    argv: list[str], root: Path, kind: str, path: Path, mode: str, timeout_s: float
) -> FixtureResult:
    relative = path.relative_to(root).as_posix()
    result = FixtureResult(name=path.stem, kind=kind, file=relative)
    fixture, problem = _load_fixture(path, kind)
    if fixture is None:
        result.error = problem
        return result
    result.name = fixture["name"]
    started = time.perf_counter()
    output, failure = _invoke(argv, json.dumps(fixture["input"]), timeout_s)
    result.duration_ms = (time.perf_counter() - started) * 1000.0
    if failure is not None:
        result.error = failure
        return result
    value, duplicates = output
    result.violations = duplicates + check_document(value, kind)
    if mode == "exact":
        difference = first_difference(fixture["expected"], value)
        if difference is not None:
            result.violations.append(Violation(difference[0], difference[1], "exact"))
    elif kind == "topology":
        result.violations += compare_topology(fixture["expected"], value, fixture["input"])
    else:
        result.violations += compare_preview(fixture["expected"], value)
    return result


def _load_fixture(path: Path, kind: str) -> tuple[dict[str, Any] | None, str]:
    """The fixture document, or None and why it cannot be used."""
    try:
        fixture, duplicates = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"fixture file is unreadable: {exc}"
    problems = duplicates + fixture_validator().validate(fixture, ref=f"#/$defs/{kind}_fixture")
    if not problems:
        expected = check_document(fixture["expected"], kind)
        problems = [Violation(f"$.expected{v.path[1:]}", v.message, v.rule) for v in expected]
    if problems:
        listed = "\n".join(f"  {violation}" for violation in problems)
        return (
            None,
            f"fixture file is malformed (a fixture bug, not an implementation bug):\n{listed}",
        )
    return fixture, ""


@functools.cache
def fixture_validator() -> SchemaValidator:
    """Validator for the fixture file format (``fixture.schema.json``), built once."""
    return SchemaValidator(load_package_schema("graphonomous.contract", FIXTURE_SCHEMA_FILE))


def _invoke(
    argv: list[str], stdin_text: str, timeout_s: float
) -> tuple[tuple[Any, list[Violation]], str | None]:
    """Run the command once.  Returns ((output, duplicate-key violations), None) or (_, reason)."""
    nothing: tuple[Any, list[Violation]] = (None, [])
    try:
        # A new session lets a timeout kill the whole process group, not just the leader.
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )
    except FileNotFoundError:
        return nothing, f"command not found: {argv[0]}"
    except OSError as exc:
        return nothing, f"could not start {argv[0]}: {exc}"
    try:
        stdout, stderr = process.communicate(stdin_text.encode("utf-8"), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill(process)
        return nothing, f"timed out after {timeout_s:g} s (the process was killed)"
    if process.returncode != 0:
        return nothing, f"command exited with status {process.returncode}{_stderr_tail(stderr)}"
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return nothing, f"stdout is not UTF-8: {exc}"
    if not text.strip():
        return nothing, f"stdout is empty; expected one JSON document{_stderr_tail(stderr)}"
    try:
        return parse_json(text), None
    except json.JSONDecodeError as exc:
        return nothing, (
            f"stdout is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; "
            f"stdout begins: {text[:_QUOTE_CHARS]!r}"
        )
    except ValueError as exc:
        return nothing, f"stdout is not JSON: {exc}"


def _kill(process: subprocess.Popen[bytes]) -> None:
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    else:
        process.kill()
    process.communicate()


def _stderr_tail(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", errors="replace").strip().splitlines()
    if not lines:
        return ""
    tail = "\n".join(lines[-_STDERR_TAIL_LINES:])[-_QUOTE_CHARS * 4 :]
    return f"; stderr ends with:\n{tail}"


# --------------------------------------------------------------------------
# Exact comparison
# --------------------------------------------------------------------------


def first_difference(expected: Any, actual: Any, path: str = "$") -> tuple[str, str] | None:
    """The first place where `actual` differs from `expected` as JSON values.

    Input: two parsed JSON values.  Output: (JSON path, message) or None when
    equal.  Objects are walked in `expected`'s key order (missing keys first
    noticed there), then unexpected keys; arrays item by item, then length.
    Complexity: O(size of the values).
    """
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            if key not in actual:
                return key_path(path, key), f"missing; expected {describe(value)}"
            found = first_difference(value, actual[key], key_path(path, key))
            if found is not None:
                return found
        for key in actual:
            if key not in expected:
                return key_path(
                    path, key
                ), f"unexpected key (not in the expected output); got {describe(actual[key])}"
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(left, right, index_path(path, index))
            if found is not None:
                return found
        if len(expected) != len(actual):
            index = min(len(expected), len(actual))
            where = index_path(path, index)
            if len(expected) > len(actual):
                return where, f"missing item: expected {len(expected)} items, got {len(actual)}"
            return where, f"unexpected item: expected {len(expected)} items, got {len(actual)}"
        return None
    if json_equal(expected, actual):
        return None
    return path, f"expected {describe(expected)}, got {describe(actual)}"


# --------------------------------------------------------------------------
# Semantic comparison
# --------------------------------------------------------------------------


def _sccs_by_node_set(doc: Any) -> dict[frozenset[str], tuple[int, Mapping[str, Any]]]:
    """Usable SCC entries keyed by their node set, with their index."""
    found: dict[frozenset[str], tuple[int, Mapping[str, Any]]] = {}
    sccs = doc.get("sccs") if isinstance(doc, dict) else None
    for index, scc in enumerate(sccs if isinstance(sccs, list) else []):
        nodes = scc.get("nodes") if isinstance(scc, dict) else None
        if isinstance(nodes, list) and all(isinstance(node, str) for node in nodes):
            found.setdefault(frozenset(nodes), (index, scc))
    return found


def _nodes_text(nodes: frozenset[str]) -> str:
    return "[" + ", ".join(repr(node) for node in sorted(nodes)) + "]"


def compare_topology(
    expected: Mapping[str, Any], actual: Any, graph_input: Mapping[str, Any]
) -> list[Violation]:
    """Semantic differences between a canonical topology result and `actual`.

    Input: the fixture's expected result, the implementation's output and the
    fixture input (for the fault-line check).  Output: violations; the
    contract check of `actual` itself is not repeated here.
    Complexity: O(N log N + Σ over SCCs of (V + E) of the SCC).
    """
    if not isinstance(actual, dict):
        return []
    out: list[Violation] = []
    try:
        adjacency = _fixture_graph(graph_input)
    except ValidationError as exc:
        problem = f"cannot check fault lines: the fixture input is invalid ({exc})"
        out.append(Violation("$", problem, "fixture"))
        adjacency = {}
    wanted = _sccs_by_node_set(expected)
    got = _sccs_by_node_set(actual)
    for nodes, (_, scc) in sorted(wanted.items(), key=lambda item: item[1][0]):
        if nodes not in got:
            out.append(
                Violation(
                    "$.sccs",
                    f"missing the SCC {_nodes_text(nodes)} (κ = {scc['kappa']})",
                    "semantic-scc",
                )
            )
    for nodes, (index, scc) in sorted(got.items(), key=lambda item: item[1][0]):
        scc_path = index_path("$.sccs", index)
        if nodes not in wanted:
            out.append(
                Violation(
                    scc_path,
                    f"unexpected SCC {_nodes_text(nodes)}: no such SCC in the expected result",
                    "semantic-scc",
                )
            )
            continue
        wanted_kappa = wanted[nodes][1]["kappa"]
        if not json_equal(scc.get("kappa"), wanted_kappa):
            out.append(
                Violation(
                    key_path(scc_path, "kappa"),
                    f"expected κ = {wanted_kappa} for this SCC, got {describe(scc.get('kappa'))}",
                    "semantic-kappa",
                )
            )
        if adjacency:
            out += _check_cut_in_graph(scc, scc_path, adjacency)
    out += _compare_dag_nodes(expected, actual)
    for key in ("routing", "max_kappa", "scc_count"):
        if key in actual and not json_equal(expected[key], actual[key]):
            out.append(
                Violation(
                    key_path("$", key),
                    f"expected {describe(expected[key])}, got {describe(actual[key])}",
                    "semantic-value",
                )
            )
    return out


def _compare_dag_nodes(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Violation]:
    got = actual.get("dag_nodes")
    if not isinstance(got, list) or not all(isinstance(node, str) for node in got):
        return []
    missing = set(expected["dag_nodes"]) - set(got)
    extra = set(got) - set(expected["dag_nodes"])
    if not missing and not extra:
        return []
    parts = []
    if missing:
        parts.append(f"missing {_nodes_text(frozenset(missing))}")
    if extra:
        parts.append(f"unexpected {_nodes_text(frozenset(extra))}")
    return [
        Violation(
            "$.dag_nodes",
            f"differs as a set from the expected dag_nodes: {'; '.join(parts)}",
            "semantic-dag",
        )
    ]


def _check_cut_in_graph(
    scc: Mapping[str, Any], scc_path: str, adjacency: Mapping[str, set[str]]
) -> list[Violation]:
    """Whether an exact SCC's fault lines are exactly the arcs leaving one side of a cut."""
    lines = scc.get("fault_line_edges")
    if scc.get("approximate") is not False or not isinstance(lines, list):
        return []
    arcs = [
        (item["source"], item["target"])
        for item in lines
        if isinstance(item, dict)
        and isinstance(item.get("source"), str)
        and isinstance(item.get("target"), str)
    ]
    if len(arcs) != len(lines) or not arcs:
        return []  # malformed or empty: the contract check has reported it
    members = set(scc["nodes"])
    lines_path = key_path(scc_path, "fault_line_edges")
    out = [
        Violation(
            index_path(lines_path, index),
            f"{source!r} → {target!r} is not an arc between two nodes of this SCC "
            "in the fixture's directed graph",
            "semantic-fault-line",
        )
        for index, (source, target) in enumerate(arcs)
        if source not in members or target not in members or target not in adjacency.get(source, ())
    ]
    if out:
        return out
    reached = _cut_side(adjacency, members, arcs)
    crossing = sorted(reached & {target for _, target in arcs})
    if crossing:
        out.append(
            Violation(
                lines_path,
                "not a cut of this SCC: no side A has exactly these arcs leaving it — from the "
                "fault lines' sources, other arcs of the SCC already reach "
                f"{crossing[0]!r}, a fault-line target",
                "semantic-fault-line",
            )
        )
    return out


def _cut_side(
    adjacency: Mapping[str, set[str]], members: set[str], arcs: list[tuple[str, str]]
) -> set[str]:
    """The smallest side A that could have `arcs` as its leaving arcs.

    A must hold every fault-line source and, since no other arc may leave it,
    everything reachable from them inside the SCC without using a fault line.
    The fault lines are a valid cut iff this closure contains no fault-line
    target (then the arcs leaving A are exactly the fault lines).  O(V + E).
    """
    cut = set(arcs)
    side = {source for source, _ in arcs}
    stack = list(side)
    while stack:
        node = stack.pop()
        for target in adjacency.get(node, set()):
            if target in members and target not in side and (node, target) not in cut:
                side.add(target)
                stack.append(target)
    return side


def _fixture_graph(graph_input: Mapping[str, Any]) -> Mapping[str, set[str]]:
    # The arc rules (KAPPA_ARC_DIRECTION) are applied by the topology engine's
    # reader; imported late so importing the contract never loads the engine.
    from graphonomous.topology import adjacency_from_json

    return adjacency_from_json(
        {"nodes": graph_input.get("nodes", []), "edges": graph_input.get("edges", [])}
    )


def compare_preview(expected: Mapping[str, Any], actual: Any) -> list[Violation]:
    """Semantic differences between previews: flags and κ numbers (not the description)."""
    if not isinstance(actual, dict):
        return []
    return [
        Violation(
            key_path("$", key),
            f"expected {describe(expected[key])}, got {describe(actual[key])}",
            "semantic-value",
        )
        for key in (
            "creates_new_scc",
            "enlarges_existing_scc",
            "kappa_before",
            "kappa_after",
            "kappa_delta",
        )
        if key in actual and not json_equal(expected[key], actual[key])
    ]
