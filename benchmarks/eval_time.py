"""A month of an always-on memory server, on a simulated clock.

The server is what `graphonomous serve` runs: one graph on a SQLite file and its
idle consolidation timer (interval 5 minutes, idle threshold 30 seconds, seed
003's defaults), driven by a `ManualClock` in 5-minute steps (`timer.tick()`
after each), so thirty days take minutes.  Along the way an agent stores
knowledge of every kind, asks about some of it (reinforcement), stores the new
values of facts that changed (benchmarks/data/time/update_cases.jsonl), leaves
the server idle for a week, and asks questions that name a time.

Reported (JSON):
- ``retention``: per kind, the share still live (not faded) at days 3, 7, 14, 30,
  for facts never asked about and for facts asked about every few days; rows
  hard-deleted by time (must be 0); faded nodes without an audit entry (must be 0);
  restores that bring a faded node back.
- ``updates``: per split of the update cases, current fact first / above the
  superseded one / pair linked / superseded left out / found "as of" before.
- ``temporal``: questions with a relative date ("yesterday", "last Tuesday", "two
  weeks ago", "in January"): the note of that day ranked first.
- ``runs``: consolidation cycles, wall seconds.

Usage::

    python benchmarks/eval_time.py [--days 30] [--step-s 300] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from resultfile import stamp  # noqa: E402

from graphonomous import Graphonomous  # noqa: E402
from graphonomous.clock import ManualClock  # noqa: E402
from graphonomous.learning.timer import ConsolidationTimer  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "time"
START = "2026-01-05T08:00:00Z"  # a Monday
DAY = 86400.0
CHECKPOINTS = (3, 7, 14, 30)
# Knowledge of every kind an agent stores: (kind, store_node keyword arguments).
KINDS: dict[str, dict[str, Any]] = {
    "episodic": {"node_type": "episodic"},
    "semantic": {},
    "procedural": {"node_type": "procedural"},
    "temporal": {"node_type": "temporal"},
    "rule_0.9": {"confidence": 0.9},
    "goal": {"node_type": "goal"},
    "fast": {"timescale": "fast"},
    "slow": {"timescale": "slow"},
    "glacial": {"timescale": "glacial"},
    "pinned": {"pinned": True},
}
SUBJECTS = (
    "pump P-{n} on line {n}",
    "the billing service in region {n}",
    "Maria's project number {n}",
    "the cooling loop of hall {n}",
)
# (expression, whether it is in the grammar); all asked on day 24, Thursday 2026-01-29,
# of a diary with one note a day since Monday 2026-01-05.  A hit: the first result was
# written inside the window the expression names.
TEMPORAL = (
    ("yesterday", True),
    ("the day before yesterday", True),
    ("two days ago", True),
    ("last Tuesday", True),
    ("on 2026-01-21", True),
    ("three weeks ago", True),
    ("last week", True),
    ("in the first week of January", False),  # outside the grammar: changes nothing
)
ASKED_DAY = 24


def _code(kind: str, n: int) -> str:
    """A word only this note and its question share, so asking reinforces exactly it."""
    return f"{kind.replace('.', '').replace('_', '')}{'abcdefgh'[n]}tag"


def _statement(kind: str, n: int) -> str:
    subject = SUBJECTS[n % len(SUBJECTS)].format(n=n)
    return f"Note about {subject}: it needs attention ({_code(kind, n)})"


def _question(kind: str, n: int) -> str:
    return f"what needs attention about {SUBJECTS[n % len(SUBJECTS)].format(n=n)} {_code(kind, n)}"


class Server:
    """One graph + its idle timer on a manual clock."""

    def __init__(self, path: Path, step_s: float) -> None:
        self.clock = ManualClock(START)
        self.graph = Graphonomous(path, clock=self.clock)
        self.timer = ConsolidationTimer(self.graph.engine, interval_s=300.0, idle_s=30.0)
        self.step_s = step_s

    def idle_until(self, day: float) -> None:
        target = day * DAY
        while self.clock.monotonic() + self.step_s <= target:
            self.clock.advance(self.step_s)
            self.timer.tick()

    def act(self) -> None:
        self.graph.touch()


def _live(graph: Graphonomous, node_id: str) -> bool:
    return graph.get_node(node_id, include_forgotten=True)["node"]["forgotten_at"] is None


def retention_run(server: Server, days: int) -> dict[str, Any]:
    graph = server.graph
    stored: dict[str, dict[str, list[str]]] = {}
    for kind, fields in KINDS.items():
        stored[kind] = {"never_asked": [], "asked": []}
        for n in range(6):
            node = graph.store_node(_statement(kind, n), **fields)["node"]["id"]
            stored[kind]["asked" if n % 2 else "never_asked"].append(node)
    server.act()
    live: dict[str, dict[str, dict[int, float]]] = {
        k: {"never_asked": {}, "asked": {}} for k in KINDS
    }
    day = 0
    for checkpoint in CHECKPOINTS:
        if checkpoint > days:
            break
        while day < checkpoint:
            day += 1
            if day % 3 == 0 and not 15 <= day < 22:  # asked every third day, idle week 15-21
                server.idle_until(day - 0.5)
                for kind in KINDS:
                    for n in range(1, 6, 2):
                        graph.retrieve_context(_question(kind, n), limit=5, effort=0)
                server.act()
            server.idle_until(day)
        for kind, groups in stored.items():
            for group, ids in groups.items():
                live[kind][group][checkpoint] = round(
                    sum(_live(graph, i) for i in ids) / len(ids), 3
                )
    every = [i for groups in stored.values() for ids in groups.values() for i in ids]
    rows = {i: graph.get_node(i, include_forgotten=True)["node"] for i in every}
    faded = [i for i, node in rows.items() if node["forgotten_at"] is not None]
    audited = {
        node_id
        for entry in graph.store.audit_entries()
        if entry["action"] == "fade"
        for node_id in entry["details"]["node_ids"]
    }
    restored = graph.restore_node(faded[0], "benchmark")["restored"] if faded else None
    return {
        "live_share": live,
        "stored": len(every),
        "hard_deleted": len(every) - len(rows),
        "faded": len(faded),
        "faded_without_audit": len(set(faded) - audited),
        "restore_brings_back": restored,
    }


def temporal_run(server: Server) -> dict[str, Any]:
    graph = server.graph
    notes: dict[int, str] = {}
    for offset in range(0, 24):
        server.idle_until(offset + 0.4)
        notes[offset] = graph.store_node(
            f"Diary day {offset}: I worked on the greenhouse sensor task {offset * 7 % 13}",
            "episodic",
        )["node"]["id"]
        server.act()
    rows = []
    server.idle_until(ASKED_DAY + 0.4)
    for expression, known in TEMPORAL:
        answer = graph.retrieve_context(f"what did I work on {expression}", limit=5, effort=0)
        window = answer["stats"]["time"]["window"]
        top = answer["results"][0] if answer["results"] else None
        written = graph.get_node(top["node_id"])["node"]["valid_from"] if top else None
        rows.append(
            {
                "expression": expression,
                "window": None if window is None else [window["start"], window["end"]],
                "admitted": None if window is None else window["admitted"],
                "top_written": written,
                "hit": _within(written, window, "start", "end") if known else None,
                "hit_admitted": _within(written, window, *ADMITTED) if known else None,
                "unchanged": (window is None) if not known else None,
            }
        )
    server.act()
    scored = [row["hit"] for row in rows if row["hit"] is not None]
    banded = [row["hit_admitted"] for row in rows if row["hit_admitted"] is not None]
    live = sum(_live(graph, node_id) for node_id in notes.values())
    return {
        "accuracy": round(sum(scored) / len(scored), 3),
        "accuracy_admitted": round(sum(banded) / len(banded), 3),
        "notes": len(notes),
        "notes_live": live,
        "questions": rows,
    }


ADMITTED = (0, 1)


def _within(written: str | None, window: dict[str, Any] | None, low: Any, high: Any) -> bool:
    """Whether `written` falls in the window's [low, high) (keys, or positions in
    ``admitted``: the band the retrieval admits)."""
    if window is None or written is None:
        return False
    bounds = window["admitted"] if isinstance(low, int) else window
    start, end = bounds[low], bounds[high]
    return (start is None or written >= start) and (end is None or written < end)


def update_run(path: Path, split: str) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from eval_updates import case_figures

    return case_figures(split)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--step-s", type=float, default=300.0)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder) / "month.db", args.step_s)
        retention = retention_run(server, args.days)
        runs = server.timer.runs
        server.graph.close()
        diary = Server(Path(folder) / "diary.db", args.step_s)
        temporal = temporal_run(diary)
        diary.graph.close()
        updates = {split: update_run(Path(folder), split) for split in ("tune", "validate")}
    report = {
        "days": args.days,
        "step_s": args.step_s,
        "consolidation_runs": runs,
        "retention": retention,
        "temporal": temporal,
        "updates": updates,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    text = json.dumps(report, indent=2, sort_keys=True)
    print(text)
    if args.json:
        stamped = json.dumps(stamp(report, __file__, argv), indent=2, sort_keys=True)
        Path(args.json).write_text(stamped + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
