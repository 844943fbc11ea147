"""What changed wins: the update rule and the ranking of current facts, on real text.

Data: ``benchmarks/data/time`` (statements written from public release notes, each
with its source; split once by a hash of its id into *tune* and *validate*; the
update rule was built on *tune* only).  Two measurements, per split:

1. **Conflict pairs** — does ``claims.detect_update(first, second)`` say the second
   statement updates the first?  Precision / recall against the labels, next to the
   older cue detector (``learning.cues.contradiction_cues``) on the same pairs.
2. **Update cases** — an agent stores a fact, two or three other true statements
   about the same subject, and days later the fact's new value, all with plain
   ``store_node``; then asks the question the fact answers.  Reported: the current
   fact ranked first, the current fact above the superseded one, the pair linked,
   the superseded fact absent from the default results, and present in an
   ``as_of`` query before the change.  Two memories: *isolated* (one store per
   case: the fact, its distractors, its update) and *shared* (a month of one
   agent's memory: every case of the split in one store, the first statements and
   distractors over days 1–14, the updates over days 15–28, in a hash order, then
   every question), where newer statements about other subjects are everywhere and
   only what concerns the question may reorder it.

3. **Agent-memory sets** — the same two measurements on statements of the kind an
   agent is told (a phone number, a moved meeting, a raised limit), each case's pairs
   being (old, new) an update and (old, distractor), (distractor, new) not:
   ``agent_development`` (shaped the rule, both halves) and ``agent_heldout`` (never
   tuned on).

Usage::

    python benchmarks/eval_updates.py [--split tune|validate|both] [--json FILE]

Standard library only; the graph clock is a ``ManualClock`` (a day between writes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from resultfile import stamp  # noqa: E402

from graphonomous import Graphonomous  # noqa: E402
from graphonomous.clock import ManualClock  # noqa: E402
from graphonomous.learning.cues import contradiction_cues  # noqa: E402
from graphonomous.retrieval.claims import detect_update  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "time"
# Agent-memory sets (hand-written statements of the kind an agent is told; README of
# the data folder): the development set, whose both halves the rule was shaped on, and
# the held-out set, written by someone who had not read the rule and never tuned on.
AGENT_SETS = (
    ("agent_development", "agent_updates.jsonl", "both"),
    ("agent_heldout", "agent_updates_heldout.jsonl", "both"),
)
START = "2026-01-05T09:00:00Z"


def load(name: str, split: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if split == "both" or row["split"] == split]


def _scores(predicted: list[bool], actual: list[bool]) -> dict[str, Any]:
    tp = sum(p and a for p, a in zip(predicted, actual, strict=True))
    fp = sum(p and not a for p, a in zip(predicted, actual, strict=True))
    fn = sum(a and not p for p, a in zip(predicted, actual, strict=True))
    return {
        "pairs": len(actual),
        "conflicts": sum(actual),
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
    }


def pair_figures(split: str) -> dict[str, Any]:
    rows = load("conflict_pairs.jsonl", split)
    actual = [row["label"] == "conflict" for row in rows]
    rule = [detect_update(row["first"], row["second"]) is not None for row in rows]
    cues = [bool(contradiction_cues(row["first"], row["second"])) for row in rows]
    by_kind: dict[str, list[int]] = {}
    for row, predicted in zip(rows, rule, strict=True):
        if row["label"] == "conflict":
            found = by_kind.setdefault(row["kind"], [0, 0])
            found[0] += predicted
            found[1] += 1
    return {
        "update_rule": _scores(rule, actual),
        "contradiction_cues": _scores(cues, actual),
        "recall_by_kind": {
            kind: f"{hit}/{total}" for kind, (hit, total) in sorted(by_kind.items())
        },
    }


def run_case(case: dict[str, Any]) -> dict[str, bool | int]:
    clock = ManualClock(START)
    with Graphonomous(":memory:", clock=clock) as graph:
        old = graph.store_node(case["old"])["node"]["id"]
        for text in case["distractors"]:
            clock.advance(hours=2)
            graph.store_node(text)
        clock.advance(days=1)
        before = graph.now()
        clock.advance(days=1)
        stored = graph.store_node(case["new"])
        new = stored["node"]["id"]
        linked = any(u.get("supersedes") == old and u.get("by") == new for u in stored["updates"])
        return _outcome(graph, case["question"], old, new, before, linked)


def _order(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def run_shared(cases: list[dict[str, Any]]) -> list[dict[str, bool | int]]:
    """Every case in one memory over a month (module docstring); outcomes per case."""
    clock = ManualClock(START)
    firsts = sorted(
        [(c["id"], "old", c["old"]) for c in cases]
        + [(c["id"], f"d{i}", t) for c in cases for i, t in enumerate(c["distractors"])],
        key=lambda row: _order(row[0] + row[1]),
    )
    updates = sorted(cases, key=lambda c: _order(c["id"] + "new"))
    ids: dict[tuple[str, str], str] = {}
    step = 14 * 86400 / max(1, len(firsts))
    with Graphonomous(":memory:", clock=clock) as graph:
        for case_id, role, text in firsts:
            ids[case_id, role] = graph.store_node(text)["node"]["id"]
            clock.advance(seconds=step)
        before = graph.now()
        clock.advance(days=1)
        linked: dict[str, bool] = {}
        step = 13 * 86400 / max(1, len(updates))
        for case in updates:
            stored = graph.store_node(case["new"])
            ids[case["id"], "new"] = stored["node"]["id"]
            old = ids[case["id"], "old"]
            linked[case["id"]] = any(u.get("supersedes") == old for u in stored["updates"])
            clock.advance(seconds=step)
        return [
            _outcome(
                graph,
                case["question"],
                ids[case["id"], "old"],
                ids[case["id"], "new"],
                before,
                linked[case["id"]],
            )
            for case in cases
        ]


def _outcome(
    graph: Graphonomous, question: str, old: str, new: str, before: str, linked: bool
) -> dict[str, bool | int]:
    results = graph.retrieve_context(question, limit=5)["results"]
    ids = [r["node_id"] for r in results]
    doubted = [r["node_id"] for r in results if "possibly_outdated" in r["flags"]]
    past = graph.retrieve_context(question, limit=5, as_of=before)["results"]
    every = graph.retrieve_context(question, limit=10, include_superseded=True)
    ranked = [r["node_id"] for r in every["results"]]
    above = new in ranked and (old not in ranked or ranked.index(new) < ranked.index(old))
    return {
        "current_first": bool(ids) and ids[0] == new,
        "current_above_superseded": above,
        "linked": linked,
        "superseded_hidden": old not in ids,
        "as_of_finds_old": old in [r["node_id"] for r in past],
        "possibly_outdated_flags": len(doubted),
        "possibly_outdated_on_superseded": doubted.count(old),
    }


def agent_pairs(cases: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """The statement pairs an agent-memory case poses to the write-time rule, in the
    order they are written: (old, new) is an update; (old, distractor) and (distractor,
    new) are not."""
    pairs = [(c["old"], c["new"], True) for c in cases]
    for c in cases:
        pairs += [(c["old"], d, False) for d in c["distractors"]]
        pairs += [(d, c["new"], False) for d in c["distractors"]]
    return pairs


def agent_pair_figures(name: str, split: str) -> dict[str, Any]:
    pairs = agent_pairs(load(name, split))
    actual = [label for _, _, label in pairs]
    rule = [detect_update(a, b) is not None for a, b, _ in pairs]
    cues = [bool(contradiction_cues(a, b)) for a, b, _ in pairs]
    return {"update_rule": _scores(rule, actual), "contradiction_cues": _scores(cues, actual)}


FLAG_COUNTS = ("possibly_outdated_flags", "possibly_outdated_on_superseded")


def case_figures(
    split: str, memory: str = "isolated", name: str = "update_cases.jsonl"
) -> dict[str, Any]:
    cases = load(name, split)
    outcomes = run_shared(cases) if memory == "shared" else [run_case(case) for case in cases]
    keys = [key for key in (outcomes[0] if outcomes else []) if key not in FLAG_COUNTS]
    return {
        "cases": len(cases),
        **{key: round(sum(o[key] for o in outcomes) / len(outcomes), 3) for key in keys},
        # possibly_outdated flags in the default top 5 of the questions, and how many
        # of them sit on the statement the case's update replaced (the right one).
        **{key: sum(int(o[key]) for o in outcomes) for key in FLAG_COUNTS},
        "missed_current_first": [
            c["id"] for c, o in zip(cases, outcomes, strict=True) if not o["current_first"]
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("tune", "validate", "both"), default="both")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    splits = ("tune", "validate") if args.split == "both" else (args.split,)
    report: dict[str, Any] = {
        split: {
            "pairs": pair_figures(split),
            "cases": case_figures(split),
            "cases_shared_memory": case_figures(split, "shared"),
        }
        for split in splits
    }
    for key, name, split in AGENT_SETS:
        if (DATA / name).exists():
            report[key] = {
                "pairs": agent_pair_figures(name, split),
                "cases": case_figures(split, name=name),
                "cases_shared_memory": case_figures(split, "shared", name),
            }
    text = json.dumps(report, indent=2, sort_keys=True)
    print(text)
    if args.json:
        stamped = json.dumps(stamp(report, __file__, argv), indent=2, sort_keys=True)
        Path(args.json).write_text(stamped + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
