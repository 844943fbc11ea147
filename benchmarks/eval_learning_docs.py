"""Does use make the memory better on documents?  Learning that transfers to unseen paraphrases.

The protocol (issue "learning that transfers", on documents), per tree of
``benchmarks/data/docs`` (`eval_docs`' gold mode: ``trees.json`` names each
tree, ``NAME.jsonl`` its questions with gold = repo-relative path + 1-based
inclusive line range; each tree is extracted with ``git archive`` from a
local clone under ``--mirrors`` into ``--work``, under /tmp):

* **Roles, fixed once by hash** (`role_of`: SHA-256 of ``"role/" + id``, first
  8 hex digits mod 3 == 0 → ``held``, else ``played``).  A played question is
  answered with feedback; a held one never is.
* **Splits, fixed once by hash** (`eval_docs.split_of`, the gold questions'
  own): a paraphrase takes the split of the question it paraphrases.
  Constants of the learning path are picked on *tune*; reports quote
  *validate*.
* **Paraphrases** (``paraphrases.jsonl``): one per played question, written by
  hand before anything was measured — other words, the same gold (read from
  the original by ``of``: one home for the gold).
* One scan of each tree into a store with the hashing embedder and the
  store's own `ManualClock` (`CLOCK_START`); every run starts from a byte
  copy of that scan, so before and after differ only by what play did.
* **Play** (file order over the played questions): ``retrieve_context``
  (limit `TOP_RESULTS`, at the effort), the first `USED_RESULTS` results are
  what the agent used; the outcome is ``success`` when one of them overlaps
  the gold lines in the gold file (`eval_docs._overlaps`), else ``failure``.
  Credit as in `eval_learning` (``--credit``): ``bundle`` cites the five,
  ``attributed`` a success cites the results that hold the gold lines (at most
  `ATTRIBUTED_MAX_CAUSES`, rank order), a failure the five.  One consolidation
  after every `CONSOLIDATE_EVERY` played questions; the clock moves
  `MINUTES_PER_QUESTION` per played question.
* **Measure**, before (a fresh copy) and after (the played store), nothing
  reported: the *paraphrases* (unseen wordings of answered questions), the
  *unrelated* held questions (gold file never among the files of any cited
  node in that run), the *related* held questions (the rest), and the played
  questions themselves (*seen*).  Per question: lines@5 (headline; a result of
  the first five overlapping the gold lines), file@1, file@5 (`eval_docs._judge`)
  and RR (1 / rank of the gold file among the first `TOP_RESULTS` distinct
  files, 0 past).  Paired bootstrap 95 % intervals (`evalkit.paired_difference`)
  of after − before, pooled over the trees, per split.

Run (data is read in place, fetched text never committed):

    python benchmarks/eval_learning_docs.py [--trees rbe,docutils,rich] \\
        [--efforts 0,3] [--credit bundle|attributed|both] [--json OUT] [--check]

``--check`` exits 1 when learning lowers validate lines@5 of the paraphrases or
of the unrelated questions (any credit, any effort) by more than
``--tolerance`` (default 0).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_docs
import evalkit
from resultfile import stamp

from graphonomous.learning.outcomes import ATTRIBUTED_MAX_CAUSES

DATA: Final = Path(__file__).resolve().parent / "data" / "docs"
PARAPHRASES: Final = "paraphrases.jsonl"
# Results asked for per retrieval, and distinct files RR looks at: eval_docs' TOP_FILES.
TOP_RESULTS: Final = eval_docs.TOP_FILES
# What the agent used to answer: eval_docs' lines@5 window.
USED_RESULTS: Final = eval_docs.GOLD_TOP
# eval_learning's pace: a consolidation after every 10 outcomes, one minute a question.
CONSOLIDATE_EVERY: Final = 10
MINUTES_PER_QUESTION: Final = 1.0
CLOCK_START: Final = "2026-01-01T00:00:00Z"
CREDITS: Final = ("bundle", "attributed")
# One question in three is held out: about 90 played (50 of them validate) and 40 held.
HELD_MODULUS: Final = 3
ROLE_RULE: Final = 'int(sha256("role/" + id)[:8], 16) % 3 == 0 -> held, else played'
SETS: Final = ("paraphrase", "unrelated", "related", "seen")
METRICS: Final = ("lines@5", "file@1", "file@5", "rr")
HEADLINE: Final = "lines@5"
SPLITS: Final = ("tune", "validate")


def role_of(question_id: str) -> str:
    """ "held" or "played", fixed by the SHA-256 of the id (module docstring).

    >>> [role_of(f"rbe-0{n}") for n in (1, 3)]
    ['played', 'held']
    """
    value = int(hashlib.sha256(f"role/{question_id}".encode()).hexdigest()[:8], 16)
    return "held" if value % HELD_MODULUS == 0 else "played"


def load_paraphrases(folder: Path, gold: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every paraphrase with its original's gold, split and tree; each played
    question must have exactly one, and no held one any (ValueError otherwise)."""
    originals = {q["id"]: (name, q) for name, entry in gold.items() for q in entry["questions"]}
    lines = (folder / PARAPHRASES).read_text(encoding="utf-8").splitlines()
    out = []
    for line in filter(str.strip, lines):
        row = json.loads(line)
        if row["of"] not in originals:
            continue  # a tree not asked for this run
        name, original = originals[row["of"]]
        if role_of(original["id"]) != "played":
            raise ValueError(f"paraphrase {row['id']} is of a held question {row['of']}")
        out.append(
            {
                **{k: original[k] for k in ("path", "lines", "split")},
                "id": row["id"],
                "of": row["of"],
                "tree": name,
                "question": row["question"],
            }
        )
    covered = [p["of"] for p in out]
    played = [i for i, (_, q) in originals.items() if role_of(q["id"]) == "played"]
    if sorted(covered) != sorted(played):
        raise ValueError("every played question needs exactly one paraphrase")
    return out


# -- one store ------------------------------------------------------------------------


def open_graph(db: Path, embedder: Any) -> Any:
    from graphonomous.api import Graphonomous
    from graphonomous.clock import ManualClock

    return Graphonomous(str(db), embedder=embedder, clock=ManualClock(CLOCK_START))


def scanned(root: Path, work: Path, name: str, embedder: Any) -> tuple[Path, dict[str, Any]]:
    """The tree scanned once into ``work/NAME.learn.db`` (fresh); the scan's facts."""
    from graphonomous.ingest import scan_directory

    db = work / f"{name}.learn.db"
    for leftover in work.glob(f"{name}.learn.db*"):
        leftover.unlink()
    started = time.perf_counter()
    graph = open_graph(db, embedder)
    summary = scan_directory(graph, root)
    graph.vector_index()
    graph.close()
    facts = {
        "files_ingested": summary.ingested,
        "nodes": summary.nodes_added,
        "scan_s": round(time.perf_counter() - started, 1),
    }
    return db, facts


def fresh_copy(db: Path, label: str) -> Path:
    """A byte copy of the scanned store (every run starts from the same bytes)."""
    target = db.with_name(f"{db.stem}.{label}.db")
    for leftover in db.parent.glob(target.name + "*"):
        leftover.unlink()
    shutil.copyfile(db, target)
    return target


Asked = list[dict[str, Any]]


def asker(graph: Any, root: Path, effort: int, settings: Any = None) -> Callable[[str], Asked]:
    """A question -> ranked results {node_id, path (tree-relative), start, end};
    `settings`: RetrievalSettings (None: the defaults)."""
    prefix = root.resolve().as_posix() + "/"
    kinds: dict[str, bool] = {}

    def is_file(node_id: str) -> bool:
        if node_id not in kinds:
            kinds[node_id] = graph.get_node(node_id)["node"]["metadata"].get("kind") == "file"
        return kinds[node_id]

    def ask(question: str) -> Asked:
        result = graph.retrieve_context(
            question, limit=TOP_RESULTS, effort=effort, settings=settings
        )
        out = []
        for item in result["results"]:
            path = item.get("path")
            if isinstance(path, str) and path.startswith(prefix):
                path = path[len(prefix) :]
            whole = is_file(item["node_id"])  # a file node names the file, locates nothing
            out.append(
                {
                    "node_id": item["node_id"],
                    "path": path,
                    "start": None if whole else item.get("line_start"),
                    "end": None if whole else item.get("line_end"),
                }
            )
        return out

    return ask


def judged(question: Mapping[str, Any], ranked: Asked) -> dict[str, float]:
    """lines@5, file@1, file@5 (`eval_docs._judge`) and RR of one answer, as numbers."""
    verdict = eval_docs._judge(dict(question), [(r["path"], r["start"], r["end"]) for r in ranked])
    rank = verdict["rank"]
    return {
        "lines@5": float(verdict["lines@5"]),
        "file@1": float(verdict["file@1"]),
        "file@5": float(verdict["file@5"]),
        "rr": 1.0 / rank if rank else 0.0,
    }


def holding(question: Mapping[str, Any], used: Asked) -> list[str]:
    """Node ids of the used results that overlap the gold lines, rank order."""
    return [
        r["node_id"] for r in used if eval_docs._overlaps(question, r["path"], r["start"], r["end"])
    ]


def play(
    graph: Any, ask: Callable[[str], Asked], played: Sequence[Mapping[str, Any]], credit: str
) -> dict[str, Any]:
    """The agent loop over the played questions; the counts and the files it credited."""
    counts = {"success": 0, "failure": 0, "consolidations": 0}
    credited: set[str] = set()
    for number, question in enumerate(played, start=1):
        used = ask(question["question"])[:USED_RESULTS]
        gold = holding(question, used)
        status = "success" if gold else "failure"
        if used:
            cited = (
                gold[:ATTRIBUTED_MAX_CAUSES]
                if credit == "attributed" and gold
                else [r["node_id"] for r in used]
            )
            cited = list(dict.fromkeys(cited))
            graph.learn_from_outcome(
                action_id=f"answer-{question['id']}",
                status=status,
                confidence=1.0,
                causal_node_ids=cited,
            )
            credited |= {r["path"] for r in used if r["node_id"] in cited and r["path"]}
            counts[status] += 1
        if number % CONSOLIDATE_EVERY == 0:
            graph.run_consolidation()
            counts["consolidations"] += 1
        graph.clock.advance(minutes=MINUTES_PER_QUESTION)
    return {"counts": counts, "credited_files": sorted(credited)}


# -- one tree -------------------------------------------------------------------------


def run_tree(
    name: str,
    entry: Mapping[str, Any],
    paraphrases: Sequence[Mapping[str, Any]],
    args: argparse.Namespace,
    embedder: Any,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Every (credit, effort) run of one tree: per question, before and after."""
    root = eval_docs.extract_tree(dict(entry["tree"]), args.mirrors, args.work, name)
    db, facts = scanned(root, args.work, name, embedder)
    log(f"{name}: scanned {facts}")
    questions = entry["questions"]
    played = [q for q in questions if role_of(q["id"]) == "played"]
    held = [q for q in questions if role_of(q["id"]) == "held"]
    mine = [p for p in paraphrases if p["tree"] == name]
    if args.split != "all":  # a tune-only run never measures a validate question
        mine = [q for q in mine if q["split"] == args.split]
        held = [q for q in held if q["split"] == args.split]
    measured = [*mine, *held, *(q for q in played if args.split in ("all", q["split"]))]
    runs: dict[str, Any] = {}
    for effort in args.efforts:
        graph = open_graph(fresh_copy(db, f"before-{effort}"), embedder)
        ask = asker(graph, root, effort, args.retrieval_settings)
        before = {q["id"]: judged(q, ask(q["question"])) for q in measured}
        graph.close()
        for credit in args.credits:
            graph = open_graph(fresh_copy(db, f"{credit}-{effort}"), embedder)
            ask = asker(graph, root, effort, args.retrieval_settings)
            started = time.perf_counter()
            outcome = play(graph, ask, played, credit)
            after = {q["id"]: judged(q, ask(q["question"])) for q in measured}
            graph.close()
            credited = set(outcome["credited_files"])
            rows = []
            for q, kind in (
                *((p, "paraphrase") for p in mine),
                *((h, "related" if h["path"] in credited else "unrelated") for h in held),
                *((p, "seen") for p in played if args.split in ("all", p["split"])),
            ):
                rows.append(
                    {
                        "id": q["id"],
                        "set": kind,
                        "split": q["split"],
                        "before": before[q["id"]],
                        "after": after[q["id"]],
                    }
                )
            key = f"{credit}/{effort}"
            runs[key] = {
                "counts": outcome["counts"],
                "credited_files": len(credited),
                "rows": rows,
                "play_s": round(time.perf_counter() - started, 1),
            }
            log(f"{name} {credit}/{effort}: {outcome['counts']} in {runs[key]['play_s']} s")
    return {**facts, "repo": entry["tree"]["repo"], "commit": entry["tree"]["commit"], "runs": runs}


# -- summary --------------------------------------------------------------------------


def summarise(trees: Mapping[str, Any], rounds: int, seed: int) -> dict[str, Any]:
    """Per run key, split and set (trees pooled): n, before/after means, diff and CI."""
    keys = list(dict.fromkeys(k for tree in trees.values() for k in tree["runs"]))
    out: dict[str, Any] = {}
    for key in keys:
        rows = [row for tree in trees.values() for row in tree["runs"][key]["rows"]]
        cell: dict[str, Any] = {}
        for split in (*SPLITS, "all"):
            for kind in SETS:
                chosen = [r for r in rows if r["set"] == kind and split in ("all", r["split"])]
                samples = evalkit.bootstrap_samples(len(chosen), rounds, seed)
                entry: dict[str, Any] = {"n": len(chosen)}
                for metric in METRICS:
                    before = [r["before"][metric] for r in chosen]
                    after = [r["after"][metric] for r in chosen]
                    diff = evalkit.paired_difference(after, before, samples)
                    entry[metric] = {
                        "before": round(evalkit.mean(before), 4),
                        "after": round(evalkit.mean(after), 4),
                        "diff": round(diff["diff"], 4),
                        "ci": [round(diff["low"], 4), round(diff["high"], 4)],
                        "changed": {
                            "up": sum(1 for a, b in zip(after, before, strict=True) if a > b),
                            "down": sum(1 for a, b in zip(after, before, strict=True) if a < b),
                        },
                    }
                cell.setdefault(split, {})[kind] = entry
        out[key] = cell
    return out


def report(cells: Mapping[str, Any], split: str) -> str:
    """Markdown: per run and set, n, lines@5 before → after, diff [CI], and RR's diff."""
    lines = [
        f"Split {split}.",
        "",
        "| credit/effort | set | n | lines@5 before | after | diff [95 % CI] | up/down "
        "| file@5 diff [CI] | RR diff [CI] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key, cell in cells.items():
        for kind in SETS:
            e = cell[split][kind]
            h = e[HEADLINE]
            lines.append(
                f"| {key} | {kind} | {e['n']} | {h['before']:.3f} | {h['after']:.3f} | "
                f"{_with_ci(h)} | {h['changed']['up']}/{h['changed']['down']} | "
                f"{_with_ci(e['file@5'])} | {_with_ci(e['rr'])} |"
            )
    return "\n".join(lines)


def _with_ci(entry: Mapping[str, Any]) -> str:
    return f"{entry['diff']:+.3f} [{entry['ci'][0]:+.3f}, {entry['ci'][1]:+.3f}]"


def lowered(cells: Mapping[str, Any], tolerance: float) -> list[str]:
    """The "key:set" cells whose validate lines@5 of paraphrases or unrelated questions fell."""
    return [
        f"{key}:{kind}"
        for key, cell in cells.items()
        for kind in ("paraphrase", "unrelated")
        if cell["validate"][kind]["n"] and cell["validate"][kind][HEADLINE]["diff"] < -tolerance
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--gold", type=Path, default=DATA)
    parser.add_argument("--trees", default="", help="comma-separated tree names (default all)")
    parser.add_argument("--efforts", default="0,3")
    parser.add_argument("--credit", choices=(*CREDITS, "both"), default="both")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/eval_learning_docs"))
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--tolerance", type=float, default=0.0)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--split",
        choices=("all", *SPLITS),
        default="all",
        help="measure only this split's questions (play is the same; default all)",
    )
    parser.add_argument(
        "--settings", default="", help="RetrievalSettings overrides, e.g. experience_floor=0.2"
    )
    args = parser.parse_args(argv)
    overrides = {
        key: evalkit._parse_value(raw)
        for key, _, raw in (pair.partition("=") for pair in args.settings.split(",") if pair)
    }
    from graphonomous.retrieval.settings import with_settings

    args.retrieval_settings = with_settings(**overrides) if overrides else None
    args.efforts = [int(e) for e in args.efforts.split(",") if e]
    args.credits = list(CREDITS) if args.credit == "both" else [args.credit]
    args.work.mkdir(parents=True, exist_ok=True)
    gold = eval_docs.load_gold(args.gold, args.trees.split(",") if args.trees else None)
    paraphrases = load_paraphrases(args.gold, gold)
    embedder = evalkit.make_embedder("hashing", None)

    def log(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    trees = {
        name: run_tree(name, entry, paraphrases, args, embedder, log)
        for name, entry in gold.items()
    }
    cells = summarise(trees, args.bootstrap, args.seed)
    summary = {
        "protocol": {
            "role_rule": ROLE_RULE,
            "split_rule": "int(sha256(id)[:8], 16) % 2 == 0 -> tune (a paraphrase: its original's)",
            "top_results": TOP_RESULTS,
            "used_results": USED_RESULTS,
            "consolidate_every": CONSOLIDATE_EVERY,
            "clock": {"start": CLOCK_START, "minutes_per_question": MINUTES_PER_QUESTION},
            "credits": args.credits,
            "attributed_max_causes": ATTRIBUTED_MAX_CAUSES,
            "efforts": args.efforts,
            "split": args.split,
            "settings": overrides,
            "embedder": "hashing",
            "headline": HEADLINE,
            "bootstrap": args.bootstrap,
            "seed": args.seed,
        },
        "trees": trees,
        "cells": cells,
    }
    for split in SPLITS if args.split == "all" else (args.split,):
        print(report(cells, split) + "\n")
    if args.json:
        args.json.write_text(
            json.dumps(stamp(summary, __file__, argv), indent=2) + "\n", encoding="utf-8"
        )
    if args.check:
        fell = lowered(cells, args.tolerance)
        if fell:
            print(f"learning lowered validate {HEADLINE} in: {', '.join(fell)}")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
