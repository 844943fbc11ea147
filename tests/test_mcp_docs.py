"""The generated tool reference of SPEC.md (graphonomous.mcp.docs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graphonomous.mcp.docs import BEGIN, END, main, reference, replace_region
from graphonomous.mcp.machines import MACHINES
from graphonomous.mcp.surfaces import SURFACES

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "SPEC.md"


def test_reference_documents_every_tool_of_every_surface() -> None:
    text = reference()
    assert text == reference()  # deterministic
    for surface, tools in SURFACES.items():
        assert f"| `{surface}`" in text
        for spec in tools:
            assert f"#### `{spec.name}` — {spec.title}" in text, spec.name
    for machine in MACHINES:
        for action in machine.actions:
            assert f"| `{action.name}` | `{action.tool.name}` |" in text
    for spec in SURFACES["v1"]:
        for field in spec.input_schema["properties"]:
            assert f"| `{field}` |" in text
    assert "`edge_operation` → `action`" in text


def test_replace_region() -> None:
    text = f"intro\n{BEGIN}\nold\n{END}\nrest\n"
    assert replace_region(text, "new\n") == f"intro\n{BEGIN}\nnew\n{END}\nrest\n"
    with pytest.raises(ValueError):
        replace_region("no markers", "x\n")
    with pytest.raises(ValueError):
        replace_region(f"{END}\n{BEGIN}\n", "x\n")


def test_check_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "SPEC.md"
    path.write_text(f"# Spec\n\n{BEGIN}\nstale\n{END}\n\nafter\n", encoding="utf-8")
    assert main(["--check", str(path)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert main(["--write", str(path)]) == 0
    assert main(["--check", str(path)]) == 0
    written = path.read_text(encoding="utf-8")
    assert written.startswith("# Spec\n\n") and written.endswith(f"{END}\n\nafter\n")
    (tmp_path / "plain.md").write_text("nothing here\n", encoding="utf-8")
    assert main(["--check", str(tmp_path / "plain.md")]) == 2


def test_runs_as_a_module(tmp_path: Path) -> None:
    path = tmp_path / "SPEC.md"
    path.write_text(f"{BEGIN}\n{END}\n", encoding="utf-8")
    command = [sys.executable, "-m", "graphonomous.mcp.docs", "--write", str(path)]
    subprocess.run(command, check=True, cwd=ROOT, timeout=60)
    assert path.read_text(encoding="utf-8") == f"{BEGIN}\n{reference()}{END}\n"


def test_spec_md_is_up_to_date() -> None:
    assert BEGIN in SPEC.read_text(encoding="utf-8"), "SPEC.md lost its tool-reference markers"
    assert main(["--check", str(SPEC)]) == 0, "run: python -m graphonomous.mcp.docs --write SPEC.md"
