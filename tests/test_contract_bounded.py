"""``contract check`` in bounded memory: JSON Lines streamed, violations capped per document.

Rules of this file: inputs are generated here (no fixture files); the cap is checked in
every report format through `run_check`, the streaming by what a half-consumed stream
has read and by tracemalloc's peak over a generated 10 MB file (the old reader held its
whole text and every parsed document at once: more than the file).
"""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from graphonomous.contract import check_document, run_check, sources
from graphonomous.contract.report import MAX_FINDINGS_PER_DOCUMENT
from graphonomous.contract.run import check_inputs
from graphonomous.contract.sources import collect

PREVIEW: dict[str, Any] = {
    "creates_new_scc": True,
    "enlarges_existing_scc": False,
    "kappa_before": 0,
    "kappa_after": 1,
    "kappa_delta": 1,
    "description": "κ: 0→1 — creates a feedback loop",
}
SCC: dict[str, Any] = {
    "id": "scc-0",
    "nodes": ["a", "b"],
    "kappa": "1",  # drifted: a string κ, one violation per component
    "approximate": False,
    "fault_line_edges": [],
    "routing": "fast",
}


def broken_topology(components: int) -> dict[str, Any]:
    sccs = [{**SCC, "id": f"scc-{i}"} for i in range(components)]
    return {
        "sccs": sccs,
        "dag_nodes": [],
        "routing": "fast",
        "max_kappa": 1,
        "scc_count": components,
    }


def run(*operands: str, fmt: str | None = None) -> tuple[int, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = run_check(list(operands), io.StringIO(""), stdout, stderr, report_format=fmt)
    return code, stdout.getvalue()


def test_violations_past_the_cap_are_counted_not_kept(tmp_path: Path) -> None:
    document = broken_topology(3 * MAX_FINDINGS_PER_DOCUMENT)
    total = len(check_document(document, "topology"))
    assert total > MAX_FINDINGS_PER_DOCUMENT
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(document) + "\n" + json.dumps(PREVIEW) + "\n")
    code, out = run(str(path), fmt="json")
    report = json.loads(out)
    assert code == 1 and report["violation_cap"] == MAX_FINDINGS_PER_DOCUMENT
    assert report["violation_count"] == total
    broken, fine = report["documents"]
    assert broken["violation_count"] == total
    assert len(broken["violations"]) == MAX_FINDINGS_PER_DOCUMENT
    assert broken["violations_omitted"] == total - MAX_FINDINGS_PER_DOCUMENT
    assert fine["violations_omitted"] == 0 and fine["valid"]
    omitted = f"{total - MAX_FINDINGS_PER_DOCUMENT} more violations not listed"
    for fmt in ("text", "github", "junit", "sarif"):
        code, out = run(str(path), fmt=fmt)
        assert code == 1 and omitted in out, fmt
    code, out = run(str(path))
    assert f"{total} violations" in out


def test_a_jsonl_stream_reads_its_file_as_it_is_consumed(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    path.write_text(json.dumps(PREVIEW) + "\n" + "{not json\n" + json.dumps(PREVIEW) + "\n")
    inputs = collect([str(path)], "auto", "auto", io.StringIO(""))
    stream = iter(inputs.documents)
    first = next(stream)
    assert first.line == 1 and inputs.problems == []  # line 2 not read yet
    rest = list(stream)
    assert [d.line for d in rest] == [3]
    assert [p.line for p in inputs.problems] == [2]


def test_a_large_jsonl_file_is_checked_in_less_memory_than_its_size(tmp_path: Path) -> None:
    path = tmp_path / "large.jsonl"
    padded = {**PREVIEW, "description": "κ: 0→1 " + "x" * 2_000}
    lines = 5_000
    with path.open("w", encoding="utf-8") as handle:
        for number in range(lines):
            doc = broken_topology(2) if number % 1_000 == 7 else padded
            handle.write(json.dumps(doc) + "\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        report = check_inputs(collect([str(path)], "auto", "auto", io.StringIO("")))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(report.results) == lines and report.invalid_count == 5
    assert all(result.document.value is None for result in report.results)
    assert peak < size / 2, (peak, size)


# -- a top-level JSON array: streamed element by element ------------------------------


def _message_pair(
    ident: int, document: dict[str, Any], tool: str = "analyze_topology"
) -> list[dict[str, Any]]:
    call = {"name": tool, "arguments": {}}
    result = {"structuredContent": document, "content": [{"type": "text", "text": "ok"}]}
    return [
        {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": ident, "result": result},
    ]


def _analyze(document: dict[str, Any]) -> dict[str, Any]:
    return {**document, "recommendation": "r"}


def _from_file_and_stdin(path: Path, mode: str, fmt: str | None) -> tuple[Any, Any]:
    """(code, output) of the file (streamed) and of its text on stdin (read whole), the
    stdin report's source name replaced by the file's."""
    outputs = []
    for operand, stdin in ((str(path), ""), ("-", path.read_text(encoding="utf-8"))):
        stdout, stderr = io.StringIO(), io.StringIO()
        code = run_check(
            [operand], io.StringIO(stdin), stdout, stderr, input_mode=mode, report_format=fmt
        )
        text = stdout.getvalue() + stderr.getvalue()
        outputs.append((code, text if operand != "-" else text.replace("stdin", str(path))))
    return outputs[0], outputs[1]


ARRAYS: dict[str, str] = {
    "transcript": json.dumps(
        [m for i in range(6) for m in _message_pair(i, _analyze(broken_topology(i % 2)))],
        indent=1,
    ),
    "transcript on one line": json.dumps(
        [m for i in range(4) for m in _message_pair(i, _analyze(broken_topology(1)))]
    ),
    "repeated keys past the cap": "[\n"
    + ",\n".join(['{"a": 1, "a": 2, "b": {"c": 1, "c": 2}}'] * (MAX_FINDINGS_PER_DOCUMENT // 2 + 7))
    + "\n]",
    "mixed messages and documents": json.dumps([*_message_pair(0, PREVIEW), PREVIEW]),
    "empty": "  [ ]\n",
    "trailing comma": "[1, 2,]",
    "extra data": "[1] [2]",
    "NaN inside": "[1, NaN]",
    "unclosed": '[{"a": 1}',
}


def test_a_streamed_array_reports_what_its_whole_text_reports(tmp_path: Path) -> None:
    for name, text in ARRAYS.items():
        path = tmp_path / "array.json"
        path.write_text(text, encoding="utf-8")
        for mode in ("auto", "json", "mcp"):
            for fmt in (None, "json", "sarif", "github"):
                streamed, whole = _from_file_and_stdin(path, mode, fmt)
                assert streamed == whole, (name, mode, fmt)
    path.write_text(ARRAYS["repeated keys past the cap"], encoding="utf-8")
    report = json.loads(run(str(path), fmt="json")[1])
    (document,) = report["documents"]
    assert document["violation_count"] == 1 + 2 * (MAX_FINDINGS_PER_DOCUMENT // 2 + 7)
    assert len(document["violations"]) == MAX_FINDINGS_PER_DOCUMENT


def test_a_large_array_file_is_checked_in_less_memory_than_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "READ_CHARS", 1 << 16)  # steps small beside the file
    path = tmp_path / "session.json"
    padded = {**PREVIEW, "description": "κ: 0→1 " + "x" * 2_000}
    pairs = 2_500
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for ident in range(pairs):
            document = {**padded, "kappa_delta": "1"} if ident % 500 == 7 else padded
            pair = _message_pair(ident, document, "preview_edge_impact")
            text = ",\n".join(json.dumps(m, indent=1) for m in pair)
            handle.write(("" if ident == 0 else ",\n") + text)
        handle.write("]\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        report = check_inputs(collect([str(path)], "auto", "auto", io.StringIO("")))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(report.results) == pairs and report.invalid_count == 5
    assert peak < size / 2, (peak, size)
