"""The project's pytest configuration keeps pytest's closing summary line.

Rule: CI judges a run by the summary line ("N passed in ..."), so it must be
printed by a plain `pytest` and by `pytest -q` alike.  A `-q` in pyproject's
`addopts` would turn a user's `-q` into `-qq`, which hides that line.  One
trivial test file in tmp_path, run with the project's pyproject.toml (`-c`).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
SUMMARY = re.compile(r"^=*\s*1 passed in [0-9.]+s", re.MULTILINE)


@pytest.mark.parametrize("flags", [[], ["-q"]], ids=["default", "quiet"])
def test_the_summary_line_is_printed(tmp_path: Path, flags: list[str]) -> None:
    (tmp_path / "test_trivial.py").write_text("def test_one():\n    assert True\n", "utf-8")
    config = ["-p", "no:cacheprovider", "-c", str(PYPROJECT), "--rootdir", str(tmp_path)]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *config, *flags, str(tmp_path / "test_trivial.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert SUMMARY.search(proc.stdout), proc.stdout
