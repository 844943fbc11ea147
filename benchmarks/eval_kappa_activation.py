"""κ activation rate: the share of retrieve_context queries whose topology has κ > 0.

    python benchmarks/eval_kappa_activation.py [--locomo FILE] [--tree DIR] [--json OUT]

Seed 003 v0.3 ("Kappa activation") asks for κ > 0 on more than 15 % of
benchmark queries.  Two corpora:

* LoCoMo (the dev half, read in place): each conversation stored as
  eval_locomo.py's ``graph`` variant (turns, session nodes, ``part_of`` and
  ``follows`` edges), every cleaned question asked with ``retrieve_context``
  (limit 10, default effort).
* A scanned code tree (default: this checkout's ``graphonomous`` package),
  ingested with ``scan_directory`` with semantic back-references on and off
  (off = the similarity floor raised above 1); one query per Python file:
  its module docstring's first line (or its file name).

Reported per corpus: queries, κ>0 count and rate, mean max κ, and for the tree
the back-reference edges added.  Deterministic (hashing embedder).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import eval_locomo
import evalkit
from resultfile import stamp

from graphonomous import Graphonomous
from graphonomous.ingest import backrefs, scan_directory

ROOT = Path(__file__).resolve().parent.parent


def rate(kappas: list[int]) -> dict[str, Any]:
    active = sum(1 for k in kappas if k > 0)
    return {
        "queries": len(kappas),
        "kappa_active": active,
        "activation_rate": round(active / len(kappas), 4) if kappas else 0.0,
        "mean_max_kappa": round(sum(kappas) / len(kappas), 4) if kappas else 0.0,
    }


def locomo(path: Path) -> dict[str, Any]:
    embedder = evalkit.make_embedder("hashing", None)
    kappas: list[int] = []
    for conversation in eval_locomo.load_locomo(path):
        variant = eval_locomo.store_variants(conversation)[eval_locomo.GRAPH_VARIANT]
        corpus = evalkit.build_engine_corpus(
            embedder, variant.operations, variant.unit_of, variant.unit_type
        )
        try:
            for query in conversation.queries:
                answer = corpus.graph.retrieve_context(query.text, limit=10)
                kappas.append(answer["topology"]["max_kappa"])
        finally:
            corpus.graph.close()
    return rate(kappas)


def tree_queries(tree: Path) -> list[str]:
    queries = []
    for file in sorted(tree.rglob("*.py")):
        try:
            doc = ast.get_docstring(ast.parse(file.read_text(encoding="utf-8")))
        except (SyntaxError, UnicodeDecodeError):
            doc = None
        first = (doc or "").strip().splitlines()[0] if doc else ""
        queries.append(first or file.stem.replace("_", " "))
    return queries


def code_tree(tree: Path, with_backrefs: bool) -> dict[str, Any]:
    saved = backrefs.BACKREF_SIMILARITY
    if not with_backrefs:
        backrefs.BACKREF_SIMILARITY = 2.0  # type: ignore[misc]  # no cosine reaches it
    try:
        with tempfile.TemporaryDirectory() as tmp:
            graph = Graphonomous(db=str(Path(tmp) / "tree.db"), embedder="hashing")
            try:
                scan_directory(graph, tree)
                edges = graph.store.list_edges(relationship="supports")
                added = sum(1 for e in edges if e.metadata.get("role") == backrefs.ROLE_BACKREF)
                kappas = [
                    graph.retrieve_context(q, limit=10)["topology"]["max_kappa"]
                    for q in tree_queries(tree)
                ]
            finally:
                graph.close()
    finally:
        backrefs.BACKREF_SIMILARITY = saved  # type: ignore[misc]
    return {**rate(kappas), "backref_edges": added}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--locomo", type=Path, default=ROOT.parent / "shared/data/locomo/locomo-dev.json"
    )
    parser.add_argument("--tree", type=Path, default=ROOT / "graphonomous")
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    if args.locomo.exists():
        report["locomo"] = locomo(args.locomo)
    else:
        report["locomo"] = {"skipped": f"{args.locomo} not found"}
    report["tree_with_backrefs"] = code_tree(args.tree, True)
    report["tree_without_backrefs"] = code_tree(args.tree, False)
    report["tree"] = str(args.tree)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json_path:
        stamped = json.dumps(stamp(report, __file__, argv), indent=2)
        Path(args.json_path).write_text(stamped + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
