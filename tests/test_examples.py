"""The programs in examples/ run, and print what their docstrings say they show.

Each example runs in its own temp directory (it writes its database and files there), in a
subprocess with this checkout on ``PYTHONPATH`` and no ``GRAPHONOMOUS_*`` variable from the
caller's environment (a stray ``$GRAPHONOMOUS_MAX_NODES`` would change the budget example).
The checks are the lines an example exists to show, not every number it prints; figures
that depend on the wall clock (the fade forecast's dates) are matched by pattern.
Every example imports only the standard library and graphonomous, and docs/index.md links
every one.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PROGRAMS = sorted(EXAMPLES.glob("*.py"))


def run_example(name: str, tmp_path: Path) -> str:
    """Run examples/`name` in `tmp_path`; its stdout (it must exit 0)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHONOMOUS_")}
    env.pop("DATABASE_URL", None)
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    return run.stdout


def test_the_examples_exist_and_the_docs_index_links_them() -> None:
    names = {p.name for p in PROGRAMS}
    assert {"agent_loop.py", "docs_search.py", "device_budget.py", "contract_check.py"} <= names
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for name in sorted(names):
        assert f"](../examples/{name})" in index, f"docs/index.md does not link {name}"


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_an_example_imports_only_the_standard_library_and_graphonomous(program: Path) -> None:
    tree = ast.parse(program.read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    }
    foreign = sorted(imported - set(sys.stdlib_module_names) - {"graphonomous"})
    assert foreign == [], f"{program.name} imports {foreign}"


def test_agent_loop(tmp_path: Path) -> None:
    out = run_example("agent_loop.py", tmp_path).splitlines()
    assert out[0] == "stored: 3 nodes"
    assert re.fullmatch(r"retrieved: cause \(score 0\.\d{3}\)", out[1])
    assert out[2] == "routing: fast"
    assert "outcome success: cause confidence 0.50 -> 0.57" in out
    assert "outcome success: fix confidence 0.50 -> 0.57" in out
    (correction,) = [line for line in out if line.startswith("correction:")]
    before, after = map(float, re.findall(r"\d\.\d\d", correction))
    assert after < before
    assert "deploy (medium tier) fades at 2026-03-05T21:00:00.000Z" in out
    assert out[-3:] == [
        "after 10 days: deploy faded = True",
        "restored: True",
        "now: 2026-03-12T09:00:00.000Z",
    ]
    assert (tmp_path / "agent-memory.db").exists()


def test_docs_search(tmp_path: Path) -> None:
    out = run_example("docs_search.py", tmp_path).splitlines()
    assert out[0].startswith("first scan: 3 seen, 3 ingested, 0 unchanged; nodes +")
    assert out[1] == "second scan: 3 seen, 0 ingested, 3 unchanged; nodes +0 ~0 -0"
    assert out[2].startswith("after an edit: 3 seen, 1 ingested, 2 unchanged;")
    answers: dict[str, str] = {}
    for i, line in enumerate(out):
        if line.startswith("? "):
            answers[line[2:]] = out[i + 1]  # the best answer of the question
    best = [re.fullmatch(r"  0\.\d{3}  (\S+):\d+-\d+  .+", a) for a in answers.values()]
    sources = dict(zip(answers, [m.group(1) if m else None for m in best], strict=True))
    assert sources == {
        "how do I fix the overheating pump": "pump.md",
        "below which pressure does the valve leak": "valve.py",
        "when does the on-call rota change": "rota.txt",
    }


def test_device_budget(tmp_path: Path) -> None:
    out = run_example("device_budget.py", tmp_path)
    lines = out.splitlines()
    assert lines[0] == "budget: 8 of 5 learned nodes, 3 exempt"
    planned = re.fullmatch(r"dry run would forget: (.+)", lines[1])
    assert planned is not None and len(planned.group(1).split(", ")) == 3
    assert lines[2] == f"forgotten: {planned.group(1)}"  # the dry run said what happens
    assert lines[3] == "budget: 5 of 5 learned nodes, 3 exempt"
    assert "$ graphonomous config\nmax_nodes  5 (policy hybrid)\n" in out
    assert "counted    5 learned nodes (100%); 3 ingested/pinned nodes exempt" in lines
    assert "nodes      8 (+3 forgotten)" in lines
    assert re.search(r"^budget     5 of 5 learned nodes \(100%\)", out, re.MULTILINE)
    assert re.search(r"^retention  3 forgotten in the last day \(budget 3\)", out, re.MULTILINE)
    forecast = lines[lines.index("$ graphonomous forget --forecast 30") + 1 :]
    assert re.fullmatch(r"\d+ node\(s\) fade by \S+ unless used \(episodic \d+\).*", forecast[0])
    assert all(re.fullmatch(r"  \S+  reading-\d  episodic/medium", row) for row in forecast[1:])


def test_contract_check(tmp_path: Path) -> None:
    out = run_example("contract_check.py", tmp_path)
    lines = out.splitlines()
    assert lines[0] == "analysed: routing deliberate, max κ 1"
    assert lines[1] == "valid topology document: no violations"
    assert lines[2] == "invalid topology document: 3 violations"
    assert "[additionalProperties]" in lines[3] and "use 'routing'" in lines[3]
    assert re.search(r"^  out/bad\.json:\d+:\d+: \$\.sccs\[0\]\.kappa ", out, re.MULTILINE)
    assert lines[-2:] == ["2 documents, 3 violations", "exit 1"]
