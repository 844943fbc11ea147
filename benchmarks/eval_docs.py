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
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from resultfile import stamp

from graphonomous import Graphonomous
from graphonomous.ingest.chunking import markdown_sections, rst_sections, split_lines
from graphonomous.retrieval import retriever

MIN_WORDS: Final = 3
TOP_FILES: Final = 10
BOILERPLATE: Final = frozenset(
    {"recap", "introduction", "summary", "overview", "example", "examples", "technical details"}
)
_ANCHOR: Final = re.compile(r"\{\s*#[^}]*\}")  # MkDocs `{ #anchor }`, same in every language
_MARKUP: Final = re.compile(r"[`*_\[\]{}#<>|]|\(.*?\)")


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
                settings = replace(retriever.DEFAULT_SETTINGS, max_per_file=cap)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--efforts", default="auto,0,1,3")
    parser.add_argument("--caps", default="2,0")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
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
