"""The README's sample output has the shape a real run of its main job prints now.

The README's ``<!-- ci:main-job -->`` block scans this repository and asks it a question;
the plain fenced block after it ("What it prints") is a sample of that output.  This test
runs the same `graphonomous` commands, with the same arguments, on the same tree (this
checkout, as the README's ``scan .`` from the repository root), on a fresh database, and
compares the *shape* of the output with the sample: which lines exist and in what order,
their field names and column positions.  Numbers (counts, seconds, scores, line ranges),
values (routing, node type, channel, mechanisms), file names and snippets may differ.
The sample may stop early with a line ``  …`` when the real output goes on.

It also keeps the README's promise of exactly two set-up commands (the main job and the
test command, the two blocks `.ci/run` runs).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from test_docs import SHELL_LANGUAGES, Block, blocks, commands

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAIN_JOB = "<!-- ci:main-job -->"
# The README writes the scanned checkout's absolute path as this.
SAMPLE_ROOT = "/path/to/graphonomous"
ABRIDGED = "…"
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
RESULT = re.compile(
    r"^(?P<rank> *\d+)\. \d\.\d{3}  (?P<type>\S+ +)(?P<origin>\S+ +)"
    r"(?P<where>[^\s\[]+?)(?P<lines>:\d+(?:-\d+)?)?(?P<flags> \[.*\])?$"
)
ROUTING = re.compile(r"^routing \w+ \(max κ \d+, \d+ SCC\) — effort \d+: [\w, ]+$")
PLACE = re.compile(r"^ {7}<root>/\S+?:\d+(?:-\d+)?$")
FAULT_LINES = re.compile(r"^  scc-\d+ κ=\d+ fault lines: .+$")
LOOPS = re.compile(
    r"^  loops looked for in \d+ nodes, cut at the (?:radius \d+|node budget) "
    r"\(\d+ arcs not followed\)$"
)


def _readme_blocks() -> list[Block]:
    return blocks(README)


def main_job_block() -> Block:
    """The fenced block right after the ci:main-job marker."""
    lines = README.read_text(encoding="utf-8").splitlines()
    marker = lines.index(MAIN_JOB) + 1  # 1-based line of the fence after the marker
    (block,) = [b for b in _readme_blocks() if b.line == marker + 1]
    return block


def sample_block() -> Block:
    """The first plain fenced block after the main job: the sample of its output."""
    job = main_job_block()
    return next(b for b in _readme_blocks() if b.line > job.line and b.language == "")


def shape(text: str, root: str) -> list[str]:
    """The skeleton of a scan + recall output: one entry per line, values abstracted.

    A result is ``result type@C origin@C where@C [lines] [flags]`` (C the column where each
    field starts); the lines after it are ``place`` (the absolute path and lines) and
    ``snippet``; the routing, fault-line and loop-search lines are named by kind; the scan
    summary keeps its words with every number as ``#``.
    """
    out: list[str] = []
    after_result = 0
    for raw in text.replace(root, "<root>").splitlines():
        if raw.strip() == ABRIDGED:
            out.append(ABRIDGED)
            after_result = 0
            continue
        match = RESULT.match(raw)
        if match is not None:
            fields = " ".join(f"{name}@{match.start(name)}" for name in ("type", "origin", "where"))
            extra = "".join(f" {name}" for name in ("lines", "flags") if match.group(name))
            out.append(f"result rank@{len(match.group('rank'))} {fields}{extra}")
            after_result = 1
        elif after_result == 1 and PLACE.match(raw):
            out.append("place")
            after_result = 2
        elif after_result and raw.startswith(" " * 7):
            out.append("snippet")
            after_result = 0
        elif ROUTING.match(raw):
            out.append("routing")
        elif FAULT_LINES.match(raw):
            out.append("fault lines")
        elif LOOPS.match(raw):
            out.append("loops looked for")
        else:
            out.append(NUMBER.sub("#", raw))
    return out


def shape_problems(sample: list[str], real: list[str]) -> list[str]:
    """How a sample's shape differs from a real output's (empty: it fits)."""
    abridged = bool(sample) and sample[-1] == ABRIDGED
    body = sample[:-1] if abridged else sample
    if abridged and len(real) <= len(body):
        return ["the sample ends with … but the real output ends there"]
    problems = [
        f"line {i + 1}: sample {want!r}, real {got!r}"
        for i, (want, got) in enumerate(zip(body, real, strict=False))
        if want != got
    ]
    if not abridged and len(body) != len(real):
        problems.append(f"the sample has {len(body)} lines, the real output {len(real)}")
    if len(real) < len(body):
        problems.append(f"the real output stops after {len(real)} lines")
    return problems


def run_main_job(tmp: Path) -> str:
    """The stdout of the main job's graphonomous commands, run from the repository root
    on a fresh database (the README's `.venv/bin/graphonomous`, as `python -m`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHONOMOUS_")}
    env.pop("DATABASE_URL", None)
    env.update(PYTHONPATH=str(ROOT), GRAPHONOMOUS_DB=str(tmp / "knowledge.db"))
    output = ""
    for argv in commands(main_job_block()):
        run = subprocess.run(
            [sys.executable, "-m", "graphonomous", *argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, f"graphonomous {argv}: {run.stderr}"
        output += run.stdout
    return output


def test_the_readme_keeps_exactly_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert re.findall(r"^<!-- ci:([\w-]+) -->$", text, re.MULTILINE) == ["main-job", "test"]
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    fences = re.findall(r"^```(\w*)\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    setup = [body for language, body in fences if language in SHELL_LANGUAGES]
    assert len(setup) == 2 and all(body.count("\n") == 1 for body in setup), setup


def test_the_main_job_scans_this_tree_and_asks_one_question() -> None:
    words = [argv[0] for argv in commands(main_job_block())]
    assert words == ["scan", "recall"]
    assert commands(main_job_block())[0][1:] == ["."]


def test_the_sample_output_has_the_shape_of_a_real_run(tmp_path: Path) -> None:
    real = shape(run_main_job(tmp_path), str(ROOT))
    sample = shape(sample_block().text, SAMPLE_ROOT)
    assert sample[0] == "scanned <root>" and "routing" in sample
    assert shape_problems(sample, real) == []


def test_the_shape_check_fails_on_a_stale_sample() -> None:
    real_text = "\n".join(
        [
            "scanned /x",
            "  files   3 seen: 3 ingested, 0 unchanged, 0 skipped, 0 failed; 0 removed, 1 "
            "excluded by rules",
            "routing deliberate (max κ 1, 1 SCC) — effort 0: embedding, bm25, topology",
            "  scc-0 κ=1 fault lines: a.md → b.md",
            "  loops looked for in 40 nodes, cut at the radius 2 (7 arcs not followed)",
            "  1. 0.500  semantic   seed        a.md:1-4",
            "       /x/a.md:1-4",
            "       # A …",
            "  2. 0.400  semantic   bm25        b.md:2-2",
            "       /x/b.md:2",
            "       B …",
        ]
    )
    real = shape(real_text, "/x")
    assert real[3:8] == [
        "fault lines",
        "loops looked for",
        "result rank@3 type@12 origin@23 where@35 lines",
        "place",
        "snippet",
    ]
    same = real_text.replace("3 seen: 3", "9 seen: 9").replace("0.500", "0.731")
    same = same.replace("cut at the radius 2", "cut at the node budget")
    assert shape_problems(shape(same, "/x"), real) == []
    abridged = "\n".join([*real_text.splitlines()[:8], "  …"])
    assert shape_problems(shape(abridged, "/x"), real) == []
    renamed = real_text.replace("excluded by rules", "excluded")
    assert shape_problems(shape(renamed, "/x"), real) == [
        f"line 2: sample {shape(renamed, '/x')[1]!r}, real {real[1]!r}"
    ]
    no_loop = real_text.replace("  scc-0 κ=1 fault lines: a.md → b.md\n", "")
    assert shape_problems(shape(no_loop, "/x"), real)[0].startswith("line 4:")
    moved = real_text.replace("semantic   seed", "semantic seed  ")
    assert shape_problems(shape(moved, "/x"), real)
    too_long = shape(abridged, "/x")
    assert shape_problems(too_long, too_long[:-1]) == [
        "the sample ends with … but the real output ends there"
    ]
