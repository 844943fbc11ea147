"""`graphonomous pulse [--validate FILE|-] [--json]`: output and exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from graphonomous.cli import main
from graphonomous.pulse import manifest

UPSTREAM = Path(__file__).parent / "data" / "pulse"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def write(tmp_path: Path, doc: object, name: str = "m.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("argv", [("pulse",), ("pulse", "--json"), ("--json", "pulse")])
def test_prints_our_manifest_as_json(argv: tuple[str, ...]) -> None:
    code, text = run(*argv)
    assert code == 0
    assert json.loads(text) == manifest()


def test_validate_our_manifest_via_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    _, text = run("pulse")
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code, report_text = run("pulse", "--validate", "-", "--json")
    report = json.loads(report_text)
    assert code == 0  # pending exits 0 (T08 is runtime-only for every file)
    assert report["loop_id"] == "graphonomous.continual_learning"
    assert report["overall"] == "pending"  # a file cannot prove T08/T10; `pulse --check` can
    assert [c["id"] for c in report["checks"] if c["status"] == "pending"] == ["T08", "T10"]


def test_validate_upstream_file_human_output() -> None:
    path = str(UPSTREAM / "upstream.graphonomous.continual_learning.json")
    code, text = run("pulse", "--validate", path)
    assert code == 0
    lines = text.splitlines()
    assert lines[0] == "graphonomous.continual_learning: pending (9 pass, 0 fail, 4 pending)"
    assert any(line.startswith("  T02  pending") for line in lines)


def test_failing_manifest_exits_1(tmp_path: Path) -> None:
    doc = manifest()
    doc["closure"]["to_phase"] = "nowhere"
    code, text = run("pulse", "--validate", write(tmp_path, doc), "--json")
    report = json.loads(text)
    assert code == 1
    assert report["overall"] == "fail"
    assert report["violations"][0]["path"] == "$.closure.to_phase"


def test_passing_manifest_exits_0(tmp_path: Path) -> None:
    # Nothing null and no runtime-only claim left open except T08, which a file
    # can never settle: such a manifest is "pending" at best.
    doc = manifest()
    doc["substrates"].update(policy="opa://local", auth="oidc://local")
    code, text = run("pulse", "--validate", write(tmp_path, doc), "--json")
    report = json.loads(text)
    assert code == 0
    assert [c["id"] for c in report["checks"] if c["status"] != "pass"] == ["T08", "T10"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "is not JSON"),
        ('{"a": NaN}', "is not JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_unusable_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    code, text = run("pulse", "--validate", str(path), "--json")
    assert code == 2
    assert json.loads(text)["overall"] is None
    assert message in capsys.readouterr().err


def test_not_an_object_is_a_failure_not_unusable(tmp_path: Path) -> None:
    code, text = run("pulse", "--validate", write(tmp_path, [1, 2]))
    assert code == 1
    assert text.startswith("(no loop_id): fail")


def test_check_reports_our_manifest_with_live_probes() -> None:
    code, text = run("pulse", "--check", "--json")
    report = json.loads(text)
    assert code == 0 and report["overall"] == "pass"
    assert {c["id"] for c in report["checks"] if "evidence" in c} == {"T02", "T05", "T08", "T10"}
    code, text = run("pulse", "--check")
    assert code == 0 and text.startswith("graphonomous.continual_learning: pass (13 pass")
