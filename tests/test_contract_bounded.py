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

from graphonomous.contract import check_document, run_check
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
