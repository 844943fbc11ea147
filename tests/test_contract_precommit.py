"""The ``graphonomous-contract`` pre-commit hook, end to end with ``pre-commit try-repo``.

A sample repository (made in tmp_path) holds good and drifted documents;
pre-commit installs this repository's hook into its own environment exactly
as an adopting project's CI would, and the hook must fail naming only the
drifted documents, with file, line and JSON path.  Skipped only when
pre-commit itself is not importable (it is in the ``dev`` extra).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_contract_ci import GOOD, PREVIEW, drifted

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install -e '.[dev]')")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_the_hook_flags_exactly_the_drifted_documents(tmp_path: Path) -> None:
    repo = tmp_path / "sample"
    (repo / "out").mkdir(parents=True)
    (repo / "out" / "good.json").write_text(json.dumps(GOOD, indent=2))
    (repo / "out" / "preview.json").write_text(json.dumps(PREVIEW, indent=2))
    (repo / "out" / "drifted.json").write_text(json.dumps(drifted(), indent=2))
    capture = [json.dumps(GOOD), json.dumps(drifted())]
    (repo / "out" / "capture.jsonl").write_text("\n".join(capture) + "\n")
    (repo / "README.md").write_text("a sample repository\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    env.pop("PYTHONPATH", None)  # the hook must use the graphonomous pre-commit installed
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "graphonomous-contract"]
    result = subprocess.run(
        [*command, "--all-files", "--verbose", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    lines = (repo / "out" / "drifted.json").read_text().splitlines()
    key_line = next(n for n, line in enumerate(lines, 1) if '"overall_routing"' in line)
    assert (
        f"out/drifted.json:{key_line}:3: $.overall_routing (pointer /overall_routing): unknown key"
        in output
    )
    assert "$.sccs[0].kappa (pointer /sccs/0/kappa): must be an integer" in output
    assert "out/capture.jsonl:2: invalid topology document" in output
    assert "good.json" not in output and "preview.json" not in output
    assert "README.md" not in output
