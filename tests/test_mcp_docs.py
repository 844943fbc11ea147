"""The generated MCP tool reference, docs/mcp-tools.md (graphonomous.mcp.docs).

The page is SPEC.md's normative appendix; SPEC.md holds the prose and names the page.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graphonomous.mcp.docs import PAGE, TITLE, main, page, reference
from graphonomous.mcp.machines import MACHINES
from graphonomous.mcp.surfaces import SURFACES

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "SPEC.md"
TOOLS_PAGE = ROOT / PAGE


def test_reference_documents_every_tool_of_every_surface() -> None:
    text = reference()
    assert text == reference()  # deterministic
    for surface, tools in SURFACES.items():
        assert f"| `{surface}`" in text
        for spec in tools:
            assert f"### `{spec.name}` — {spec.title}" in text, spec.name
    for machine in MACHINES:
        for action in machine.actions:
            assert f"| `{action.name}` | `{action.tool.name}` |" in text
    for spec in SURFACES["v1"]:
        for field in spec.input_schema["properties"]:
            assert f"| `{field}` |" in text
    assert "`edge_operation` → `action`" in text


def test_the_page_is_a_title_then_the_reference() -> None:
    text = page()
    assert text.startswith("# MCP tool reference (generated)\n")
    assert text.endswith(reference())
    assert text.count("\n# ") == 0  # one title; the reference's parts are `##`
    assert "[SPEC.md](../SPEC.md)" in text


def test_check_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mcp-tools.md"
    assert main(["--check", str(path)]) == 1
    assert "does not exist" in capsys.readouterr().err
    path.write_text(f"{TITLE}\n\nstale\n", encoding="utf-8")
    assert main(["--check", str(path)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert main(["--write", str(path)]) == 0
    assert main(["--check", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == page()


@pytest.mark.parametrize("mode", ["--write", "--check"])
def test_a_file_that_is_not_the_page_is_left_alone(
    tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "SPEC.md"  # what `--write SPEC.md` named when SPEC held the reference
    prose = "# Graphonomous — specification\n\nThe prose.\n"
    path.write_text(prose, encoding="utf-8")
    assert main([mode, str(path)]) == 2
    assert "not the generated tool reference" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == prose


def test_runs_as_a_module_with_the_page_as_default(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    command = [sys.executable, "-m", "graphonomous.mcp.docs", "--write"]
    subprocess.run(command, check=True, cwd=tmp_path, timeout=60, env={"PYTHONPATH": str(ROOT)})
    assert (tmp_path / PAGE).read_text(encoding="utf-8") == page()


def test_the_committed_page_is_up_to_date() -> None:
    assert main(["--check", str(TOOLS_PAGE)]) == 0, "run: python -m graphonomous.mcp.docs --write"


def test_spec_md_names_the_page_and_holds_no_generated_copy() -> None:
    spec = SPEC.read_text(encoding="utf-8")
    assert f"]({PAGE.as_posix()})" in spec, "SPEC.md must link its appendix"
    assert "GENERATED TOOLS" not in spec
    assert "#### `retrieve_context` —" not in spec
