"""File-level retrieval on a real documentation tree: which effort (and per-file cap) is best?

Questions come from the tree's own section headings (Markdown ``##``/``###``
headings, reST section titles): a heading that occurs in exactly one file,
has at least MIN_WORDS words and is not boilerplate becomes a question whose
gold answer is that file.  A deterministic sample (SHA-256 of path and
heading) of at most ``--questions`` is asked.  Each question is answered by
``retrieve_context`` at every effort asked for, with and without the
per-file cap; a result counts for the file it names (``path``), results are
de-duplicated by file in rank order, and the metrics are file Hit@1, Hit@5
and MRR over the top 10 files.

The database must already hold the scanned tree (``graphonomous scan``) —
consolidate it first to measure "after consolidation".  The database is
opened read-mostly: retrieval records access counts, nothing else.

    python benchmarks/eval_docs.py --db fa.db --root /path/to/docs \\
        [--efforts auto,0,1,3] [--caps 2,0] [--questions 100] [--json OUT]

**Gold mode** (``--gold benchmarks/data/docs``): hand-written questions over
public trees never tuned on before they were written.  ``trees.json`` names
each tree (repo, commit, root folder, exclusions); ``NAME.jsonl`` holds its
questions, each with gold = repo-relative path + 1-based inclusive line
range.  Each tree is extracted with ``git archive`` from a local clone
(``--mirrors DIR`` holds ``owner+name/repo``, the layout the ``fetch`` tool
writes) into ``--work`` (under /tmp: fetched text is never committed),
scanned into a fresh database, and asked every question at every effort.
The by-hand baseline in the same run: ``rank-bm25`` (dev extra, Okapi,
default parameters) over windows of WINDOW_LINES lines (PY_WINDOW_LINES for
Python) advancing by half a window, tokens = lower-cased ``\\w+``.  A question
is ``tune`` or ``validate`` by the parity of the first 8 hex digits of the
SHA-256 of its id (fixed once).  Metrics per tree and split: file@1, file@5
(the gold file among the first 1 / 5 distinct files), lines@5 (a result or
window of the top 5 in the gold file overlapping the gold lines; a file
node names the whole file and so locates no lines).

    python benchmarks/eval_docs.py --gold benchmarks/data/docs \\
        [--trees rbe,docutils,rich] [--split tune] [--efforts auto,0,3,6] [--json OUT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from resultfile import stamp

from graphonomous import Graphonomous
from graphonomous.ingest.chunking import markdown_sections, rst_sections, split_lines
from graphonomous.retrieval import retriever
from graphonomous.retrieval.settings import DEFAULT_SETTINGS, RetrievalSettings, with_settings

MIN_WORDS: Final = 3
TOP_FILES: Final = 10
BOILERPLATE: Final = frozenset(
    {"recap", "introduction", "summary", "overview", "example", "examples", "technical details"}
)
_ANCHOR: Final = re.compile(r"\{\s*#[^}]*\}")  # MkDocs `{ #anchor }`, same in every language
_MARKUP: Final = re.compile(r"[`*_\[\]{}#<>|]|\(.*?\)")
# Gold mode: the by-hand baseline's window (a reader's screenful of prose;
# code is denser, so a shorter window) and how far it advances.
WINDOW_LINES: Final = 40
PY_WINDOW_LINES: Final = 30
WINDOW_STRIDE_SHARE: Final = 0.5
# Results looked at: the first 5 distinct files / the first 5 results.
GOLD_TOP: Final = 5
_WORD: Final = re.compile(r"\w+")


def _clean(heading: str) -> str:
    return " ".join(_MARKUP.sub(" ", _ANCHOR.sub(" ", heading)).split())


def headings_of(path: Path) -> list[str]:
    """Section headings of a Markdown or reST file (the file title excluded)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = split_lines(text)
    sections = rst_sections(lines) if path.suffix == ".rst" else markdown_sections(lines)
    titles = [_clean(h) for _, _, h in sections if h]
    return titles[1:]  # the first heading is the page title: too easy a question


def questions(root: Path, limit: int) -> list[tuple[str, str]]:
    """(question, gold relative path) pairs (module docstring)."""
    where: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".md", ".rst") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        for heading in headings_of(path):
            where.setdefault(heading.lower(), set()).add(rel)
    pairs = []
    for heading, files in where.items():
        words = heading.split()
        if len(files) == 1 and len(words) >= MIN_WORDS and heading not in BOILERPLATE:
            pairs.append((heading, next(iter(files))))
    pairs.sort(key=lambda p: hashlib.sha256(f"{p[1]}\0{p[0]}".encode()).hexdigest())
    return pairs[:limit]


def ranked_files(result: dict[str, Any], root: str) -> list[str]:
    """Relative paths of the results' files, de-duplicated in rank order."""
    seen: list[str] = []
    for item in result["results"]:
        path = item.get("path")
        if isinstance(path, str):
            rel = path[len(root) + 1 :] if path.startswith(root + "/") else path
            if rel not in seen:
                seen.append(rel)
    return seen[:TOP_FILES]


def evaluate(
    db: str, root: Path, efforts: list[int | None], caps: list[int], n: int
) -> dict[str, Any]:
    asked = questions(root, n)
    root_text = root.resolve().as_posix()
    rows: dict[str, dict[str, float]] = {}
    with Graphonomous(db) as graph:
        for effort in efforts:
            for cap in caps:
                settings = replace(DEFAULT_SETTINGS, max_per_file=cap)
                hits1 = hits5 = 0
                rr = 0.0
                same_file_top5: Counter[int] = Counter()
                for question, gold in asked:
                    result = retriever.retrieve_context(
                        graph, question, limit=10, effort=effort, settings=settings
                    )
                    files = ranked_files(result, root_text)
                    top5_paths = [r.get("path") for r in result["results"][:5]]
                    same_file_top5[max(Counter(top5_paths).values(), default=0)] += 1
                    if files[:1] == [gold]:
                        hits1 += 1
                    if gold in files[:5]:
                        hits5 += 1
                    if gold in files:
                        rr += 1.0 / (files.index(gold) + 1)
                count = max(1, len(asked))
                label = "auto" if effort is None else str(effort)
                rows[f"effort {label}, cap {cap}"] = {
                    "hit@1": round(hits1 / count, 3),
                    "hit@5": round(hits5 / count, 3),
                    "mrr@10": round(rr / count, 3),
                    "top5_max_same_file_mean": round(
                        sum(k * v for k, v in same_file_top5.items()) / count, 2
                    ),
                }
    return {"db": db, "root": root_text, "questions": len(asked), "rows": rows}


# -- gold mode -------------------------------------------------------------------


def split_of(question_id: str) -> str:
    """ "tune" or "validate", fixed by the SHA-256 of the id (module docstring)."""
    return (
        "tune"
        if int(hashlib.sha256(question_id.encode()).hexdigest()[:8], 16) % 2 == 0
        else "validate"
    )


def load_gold(folder: Path, names: list[str] | None) -> dict[str, dict[str, Any]]:
    """{tree name: {"tree": trees.json entry, "questions": [...]}} in trees.json order."""
    trees = json.loads((folder / "trees.json").read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for name, tree in trees.items():
        if names and name not in names:
            continue
        lines = (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        asked = [json.loads(line) for line in lines if line.strip()]
        for q in asked:
            q["split"] = split_of(q["id"])
        out[name] = {"tree": tree, "questions": asked}
    return out


def extract_tree(tree: dict[str, Any], mirrors: Path, work: Path, name: str) -> Path:
    """The tree's root folder at its commit, extracted fresh under `work`/`name`."""
    git_dir = mirrors / tree["repo"].replace("/", "+") / "repo"
    target = work / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", tree["commit"], tree["root"]],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    for excluded in tree["exclude"]:
        shutil.rmtree(target / excluded, ignore_errors=True)
    return target


def windows(root: Path) -> list[tuple[str, int, int, list[str]]]:
    """(relative path, first line, last line, tokens) of every window of every file."""
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        size = PY_WINDOW_LINES if path.suffix == ".py" else WINDOW_LINES
        step = max(1, int(size * WINDOW_STRIDE_SHARE))
        for start in range(0, max(1, len(lines)), step):
            chunk = lines[start : start + size]
            out.append((rel, start + 1, start + len(chunk), _WORD.findall(" ".join(chunk).lower())))
            if start + size >= len(lines):
                break
    return out


def _overlaps(gold: dict[str, Any], path: str | None, start: Any, end: Any) -> bool:
    if path != gold["path"] or not isinstance(start, int) or not isinstance(end, int):
        return False
    return start <= gold["lines"][1] and end >= gold["lines"][0]


def _judge(gold: dict[str, Any], ranked: list[tuple[str | None, Any, Any]]) -> dict[str, Any]:
    """file@1, file@5, lines@5 and the gold file's rank (None past 10 files)."""
    files: list[str] = []
    for path, _, _ in ranked:
        if isinstance(path, str) and path not in files:
            files.append(path)
    rank = files.index(gold["path"]) + 1 if gold["path"] in files[:TOP_FILES] else None
    lines5 = any(_overlaps(gold, *item) for item in ranked[:GOLD_TOP])
    return {
        "file@1": rank == 1,
        "file@5": rank is not None and rank <= GOLD_TOP,
        "lines@5": lines5,
        "rank": rank,
    }


def bm25_system(root: Path) -> Any:
    """A question -> ranked (path, start, end) of the by-hand baseline (module docstring)."""
    from rank_bm25 import BM25Okapi

    units = windows(root)
    index = BM25Okapi([tokens for _, _, _, tokens in units])

    def ask(question: str) -> list[tuple[str | None, Any, Any]]:
        scores = index.get_scores(_WORD.findall(question.lower()))
        order = sorted(range(len(units)), key=lambda i: (-scores[i], i))[: 4 * TOP_FILES]
        return [units[i][:3] for i in order if scores[i] > 0]

    return ask


def graph_system(
    graph: Graphonomous, root: Path, effort: int | None, settings: RetrievalSettings
) -> Any:
    """A question -> ranked (path, start, end) of `retrieve_context` at `effort`."""
    prefix = root.resolve().as_posix() + "/"

    def ask(question: str) -> list[tuple[str | None, Any, Any]]:
        result = graph.retrieve_context(question, limit=TOP_FILES, effort=effort, settings=settings)
        out: list[tuple[str | None, Any, Any]] = []
        for item in result["results"]:
            path = item.get("path")
            if isinstance(path, str) and path.startswith(prefix):
                path = path[len(prefix) :]
            if graph.get_node(item["node_id"])["node"]["metadata"].get("kind") == "file":
                out.append((path, None, None))  # the whole file: names it, locates nothing
            else:
                out.append((path, item.get("line_start"), item.get("line_end")))
        return out

    return ask


def _tally(judged: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(judged)
    row: dict[str, Any] = {"questions": n}
    for metric in ("file@1", "file@5", "lines@5"):
        hits = sum(1 for j in judged if j[metric])
        row[metric] = hits
        row[f"{metric}_rate"] = round(hits / n, 3) if n else None
    return row


def evaluate_gold(
    gold: dict[str, dict[str, Any]],
    efforts: list[int | None],
    mirrors: Path,
    work: Path,
    split: str | None,
    settings: RetrievalSettings = DEFAULT_SETTINGS,
    keep_db: bool = False,
) -> dict[str, Any]:
    """Every tree scanned (fresh unless `keep_db`: then an incremental re-scan), every
    question asked of every system (module docstring)."""
    report: dict[str, Any] = {"trees": {}, "per_question": {}}
    for name, entry in gold.items():
        root = extract_tree(entry["tree"], mirrors, work, name)
        asked = [q for q in entry["questions"] if split in (None, q["split"])]
        db = work / f"{name}.db"
        for leftover in work.glob(f"{name}.db*") if not keep_db else ():
            leftover.unlink()
        started = time.perf_counter()
        with Graphonomous(str(db)) as graph:
            from graphonomous.ingest import scan_directory

            summary = scan_directory(graph, root)
            scan_s = time.perf_counter() - started
            systems = {"bm25_windows": bm25_system(root)}
            for effort in efforts:
                label = "auto" if effort is None else str(effort)
                systems[f"effort_{label}"] = graph_system(graph, root, effort, settings)
            results: dict[str, dict[str, Any]] = {}
            for system, ask in systems.items():
                judged = {q["id"]: _judge(q, ask(q["question"])) for q in asked}
                results[system] = {
                    part: _tally(
                        [judged[q["id"]] for q in asked if part == "all" or q["split"] == part]
                    )
                    for part in ("tune", "validate", "all")
                }
                for qid, j in judged.items():
                    report["per_question"].setdefault(qid, {})[system] = j
        report["trees"][name] = {
            "repo": entry["tree"]["repo"],
            "commit": entry["tree"]["commit"],
            "kind": entry["tree"]["kind"],
            "files_ingested": summary.ingested,
            "nodes": summary.nodes_added,
            "scan_s": round(scan_s, 1),
            "systems": results,
        }
    report["overall"] = _overall(report)
    return report


def _overall(report: dict[str, Any]) -> dict[str, Any]:
    """Counts summed over the trees, per system and split."""
    out: dict[str, Any] = {}
    for tree in report["trees"].values():
        for system, parts in tree["systems"].items():
            for part, row in parts.items():
                acc = out.setdefault(system, {}).setdefault(
                    part, {"questions": 0, "file@1": 0, "file@5": 0, "lines@5": 0}
                )
                for key in acc:
                    acc[key] += row[key]
    for parts in out.values():
        for row in parts.values():
            for metric in ("file@1", "file@5", "lines@5"):
                row[f"{metric}_rate"] = (
                    round(row[metric] / row["questions"], 3) if row["questions"] else None
                )
    return out


def print_gold(report: dict[str, Any]) -> None:
    def line(label: str, row: dict[str, Any]) -> str:
        return f"    {label:<14} n={row['questions']:<3} " + "  ".join(
            f"{m} {row[m]:>3} ({row[f'{m}_rate']})" for m in ("file@1", "file@5", "lines@5")
        )

    for name, tree in [*report["trees"].items(), ("overall", {"systems": report["overall"]})]:
        print(f"{name}:")
        for system, parts in tree["systems"].items():
            for part, row in parts.items():
                if row["questions"]:
                    print(line(f"{system}/{part}", row))


def main_gold(args: argparse.Namespace) -> int:
    gold = load_gold(args.gold, args.trees.split(",") if args.trees else None)
    efforts = [None if e == "auto" else int(e) for e in args.efforts.split(",")]
    args.work.mkdir(parents=True, exist_ok=True)
    overrides = dict(pair.split("=", 1) for pair in args.settings.split(",") if pair)
    settings = with_settings(
        **{k: int(v) if v.isdigit() else float(v) for k, v in overrides.items()}
    )
    report = evaluate_gold(
        gold, efforts, args.mirrors, args.work, args.split, settings, args.keep_db
    )
    report["settings"] = overrides
    print_gold(report)
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps(stamp(report, __file__), indent=2) + "\n", encoding="utf-8"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="heading mode: the scanned database")
    parser.add_argument("--root", type=Path, help="heading mode: the scanned tree")
    parser.add_argument("--gold", type=Path, help="gold mode: folder with trees.json + NAME.jsonl")
    parser.add_argument("--trees", help="gold mode: comma-separated tree names (default: all)")
    parser.add_argument("--split", choices=("tune", "validate"), help="gold mode: one split only")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument(
        "--keep-db", action="store_true", help="gold mode: re-scan the last run's databases"
    )
    parser.add_argument(
        "--settings",
        default="",
        help="gold mode: RetrievalSettings overrides, k=v,k=v (integers or floats)",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/eval_docs"))
    parser.add_argument("--efforts", default="auto,0,1,3")
    parser.add_argument("--caps", default="2,0")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    if args.gold:
        if args.efforts == parser.get_default("efforts"):
            args.efforts = "auto,0,3,6"
        return main_gold(args)
    if args.db is None or args.root is None:
        parser.error("--db and --root are required without --gold")
    report = evaluate(
        args.db,
        args.root,
        [None if e == "auto" else int(e) for e in args.efforts.split(",")],
        [int(c) for c in args.caps.split(",")],
        args.questions,
    )
    print(f"{report['root']}: {report['questions']} questions")
    for name, metrics in report["rows"].items():
        print(f"  {name:<18} " + "  ".join(f"{k} {v}" for k, v in metrics.items()))
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps(stamp(report, __file__), indent=2) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
