"""κ activation rate: the share of retrieve_context queries whose topology has κ > 0.

    python benchmarks/eval_kappa_activation.py [--locomo FILE] [--tree DIR] [--json OUT]
        [--loops benchmarks/data/kappa_loops.json --corpora DIR [--sample N] [--labels FILE]]

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

* With ``--corpora DIR``: the labelled corpora of ``--loops`` (public texts that
  describe feedback loops, and a code tree with import cycles; fetched by the
  caller to DIR/<name>/<folder>, never stored here), each scanned with
  ``scan_directory`` (relations extracted at ingest), every labelled question
  asked with ``retrieve_context`` (limit 10, default effort).  Reported per
  corpus: κ activation on loop questions (recall), κ on acyclic questions (false
  κ), the relation edges written; ``--sample N`` writes the first N relation
  edges (by path, line, key) for hand labelling, ``--labels FILE`` reads the
  labels back and reports the edges' precision.  ``by_role`` pools loop recall and
  false κ over the corpora of each role and kind (prose, code); test and validate are the
  held-out roles.

Reported per corpus: queries, κ>0 count and rate, mean max κ, and for the tree
the back-reference edges added.  Deterministic (hashing embedder).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import eval_locomo
import evalkit
from resultfile import stamp

from graphonomous import Graphonomous
from graphonomous.ingest import backrefs, scan_directory
from graphonomous.topology import tarjan_scc

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


def _module_name(root: Path, file: Path) -> str:
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _imported(module: str, file: Path, node: ast.AST, modules: set[str]) -> set[str]:
    """The package modules one import statement names (relative imports resolved)."""
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    if isinstance(node, ast.Import):
        found = {alias.name for alias in node.names if alias.name in modules}
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(parts + ([base] if base else []))
        for alias in node.names:
            name = f"{base}.{alias.name}"
            found.add(name if name in modules else base)
    return {name for name in found if name in modules and name != module}


def import_cycle_labels(tree: Path) -> dict[Path, str]:
    """Per Python file: "loop" when its module is in a non-trivial SCC of the import graph
    (every import statement, TYPE_CHECKING ones included), else "acyclic"."""
    root = tree.parent
    files = {_module_name(root, f): f for f in sorted(tree.rglob("*.py"))}
    graph = {
        module: set().union(
            *(_imported(module, file, n, set(files)) for n in ast.walk(ast.parse(file.read_text())))
        )
        for module, file in files.items()
    }
    looped = {m for component in tarjan_scc(graph) if len(component) > 1 for m in component}
    return {file: "loop" if module in looped else "acyclic" for module, file in files.items()}


def _questions(corpus: dict[str, Any], folder: Path) -> list[dict[str, str]]:
    if "questions" in corpus:
        return list(corpus["questions"])
    labels = import_cycle_labels(folder)
    texts = tree_queries(folder)  # the same order: sorted rglob
    return [
        {"label": labels[file], "text": text}
        for file, text in zip(sorted(folder.rglob("*.py")), texts, strict=True)
    ]


def relation_edges(graph: Graphonomous) -> list[Any]:
    """The edges relation extraction wrote, by (path, first line, key)."""
    edges = [e for e in graph.store.list_edges() if e.metadata.get("origin") == "relations"]
    return sorted(
        edges,
        key=lambda e: (str(e.metadata.get("path")), e.metadata.get("lines", [0])[0], e.id),
    )


def edge_label_key(edge: Any, root: Path) -> str:
    """A label's key: the two sentences' places and the shared key, no text of the corpus."""
    meta = edge.metadata

    def place(path: Any, lines: Any) -> str:
        shown = str(Path(path).relative_to(root)) if path else "-"
        return f"{shown}:{lines[0]}"

    source = place(meta.get("path"), meta["lines"])
    target = place(meta.get("target_path"), meta["target_lines"])
    return f"{source}>{target}|{meta['via']}"


def loop_corpus(
    corpus: dict[str, Any], corpora: Path, sample: int, labels: dict[str, bool]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    source = corpora / corpus["name"] / corpus["folder"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / corpus["name"]
        dropped = {corpora / corpus["name"] / d for d in corpus.get("drop", [])}
        shutil.copytree(
            source, root, ignore=lambda d, names: [n for n in names if Path(d) / n in dropped]
        )
        questions = _questions(corpus, root)
        graph = Graphonomous(db=str(Path(tmp) / "corpus.db"), embedder="hashing")
        try:
            scan_directory(graph, root)
            edges = relation_edges(graph)
            asked = []
            for question in questions:
                answer = graph.retrieve_context(question["text"], limit=10)
                asked.append({**question, "max_kappa": answer["topology"]["max_kappa"]})
            sampled = [
                {
                    "key": edge_label_key(e, root),
                    **{k: e.metadata[k] for k in ("cue", "target_cue", "via")},
                }
                for e in edges[:sample]
            ]
            for row, edge in zip(sampled, edges, strict=False):
                row["sentences"] = _sentences_of(graph, edge)
            relations = relation_sample(graph, root, sample)
        finally:
            graph.close()
    kind = "prose" if "questions" in corpus else "code"
    report: dict[str, Any] = {
        "role": corpus.get("role"),
        "kind": kind,
        "relation_edges": len(edges),
    }
    for label, name in (("loop", "loop_questions"), ("acyclic", "acyclic_questions")):
        kappas = [q["max_kappa"] for q in asked if q["label"] == label]
        report[name] = rate(kappas)
    report["relations"] = relations["count"]
    for name, rows in (("edge", sampled), ("relation", relations["sample"])):
        keys = [label_key(corpus["name"], row["key"]) for row in rows]
        judged = [labels[key] for key in keys if key in labels]
        if judged:
            report[f"labelled_{name}s"] = len(judged)
            report[f"{name}_precision"] = round(sum(judged) / len(judged), 4)
    report["questions"] = asked
    return report, {"edges": sampled, "relations": relations["sample"]}


def label_key(corpus: str, key: str) -> str:
    """The key of a hand label: a hash, so no text of a corpus is stored with the labels."""
    return hashlib.sha256(f"{corpus}/{key}".encode()).hexdigest()[:16]


def relation_sample(graph: Graphonomous, root: Path, size: int) -> dict[str, Any]:
    """Every relation the corpus's chunks state (count) and `size` of them spread over the
    corpus by a hash of their key (deterministic), for labelling.  Empty where the
    package has no relation extraction (main before it)."""
    try:
        from graphonomous.retrieval.provenance import provenance
        from graphonomous.retrieval.relations import extract_relations
    except ImportError:
        return {"count": 0, "sample": []}
    rows = []
    nodes = graph.store.get_nodes([node_id for node_id, _text in graph.store.live_texts()])
    for node in nodes.values():
        place = provenance(node)
        if place["path"] is None or node.metadata.get("kind") == "file":
            continue
        shown = str(Path(place["path"]).relative_to(root))
        for r in extract_relations(node.content):
            line = place["line_start"] + r.line_start
            key = f"{shown}:{line}|{r.subject}>{r.object}|{r.cue}"
            sentence = node.content.splitlines()[r.line_start : r.line_end + 1]
            rows.append({"key": key, "kind": r.kind, "polarity": r.polarity, "text": sentence})
    rows.sort(key=lambda row: hashlib.sha256(row["key"].encode()).hexdigest())
    return {"count": len(rows), "sample": rows[:size]}


def _sentences_of(graph: Graphonomous, edge: Any) -> list[str]:
    """The two stated relations of an edge, for the labeller's eyes only (not saved here)."""
    out = []
    for node_id in (edge.source_id, edge.target_id):
        node = graph.store.get_node(node_id)
        out.append(node.content if node is not None else "")
    return out


def loops(args: argparse.Namespace) -> dict[str, Any]:
    spec = json.loads(Path(args.loops).read_text(encoding="utf-8"))
    labels: dict[str, bool] = {}
    if args.labels:
        labels = json.loads(Path(args.labels).read_text(encoding="utf-8"))["labels"]
    report: dict[str, Any] = {}
    samples: dict[str, Any] = {}
    for corpus in spec["corpora"]:
        if not (args.corpora / corpus["name"] / corpus["folder"]).is_dir():
            report[corpus["name"]] = {"skipped": "not fetched"}
            continue
        report[corpus["name"]], samples[corpus["name"]] = loop_corpus(
            corpus, args.corpora, args.sample, labels
        )
    if args.sample_out:
        Path(args.sample_out).write_text(json.dumps(samples, indent=1) + "\n", encoding="utf-8")
    report["by_role"] = by_role(report)
    return report


def by_role(report: dict[str, Any]) -> dict[str, Any]:
    """Loop recall and false κ pooled over the corpora of each role (dev, tune, test,
    validate) and kind (prose; code: import cycles), e.g. ``validate_prose``: the figures
    to quote are the held-out roles' (test, validate)."""
    pooled: dict[str, dict[str, list[int]]] = {}
    for corpus in report.values():
        if "role" not in corpus:
            continue
        group = f"{corpus['role']}_{corpus.get('kind', 'prose')}"
        counts = pooled.setdefault(group, {"loop": [0, 0], "acyclic": [0, 0]})
        for label in ("loop", "acyclic"):
            figures = corpus[f"{label}_questions"]
            counts[label][0] += figures["kappa_active"]
            counts[label][1] += figures["queries"]
    return {
        role: {
            "loop_recall": _share(counts["loop"]),
            "false_kappa": _share(counts["acyclic"]),
            "loop_questions": counts["loop"][1],
            "acyclic_questions": counts["acyclic"][1],
        }
        for role, counts in sorted(pooled.items())
    }


def _share(counts: list[int]) -> float:
    return round(counts[0] / counts[1], 4) if counts[1] else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--locomo", type=Path, default=ROOT.parent / "shared/data/locomo/locomo-dev.json"
    )
    parser.add_argument("--tree", type=Path, default=ROOT / "graphonomous")
    parser.add_argument("--json", dest="json_path")
    parser.add_argument("--loops", default=str(ROOT / "benchmarks/data/kappa_loops.json"))
    parser.add_argument("--corpora", type=Path, help="where the --loops corpora were fetched")
    parser.add_argument("--only-loops", action="store_true", help="skip LoCoMo and the tree")
    parser.add_argument("--sample", type=int, default=0, help="relation edges to sample per corpus")
    parser.add_argument("--sample-out", help="write the sampled edges (for labelling) here")
    parser.add_argument("--labels", help="hand labels of sampled edges: {labels: {key: bool}}")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    if args.corpora is not None:
        report["loops"] = loops(args)
    if args.only_loops:
        return _emit(report, args.json_path, argv)
    if args.locomo.exists():
        report["locomo"] = locomo(args.locomo)
    else:
        report["locomo"] = {"skipped": f"{args.locomo} not found"}
    report["tree_with_backrefs"] = code_tree(args.tree, True)
    report["tree_without_backrefs"] = code_tree(args.tree, False)
    report["tree"] = str(args.tree)
    return _emit(report, args.json_path, argv)


def _emit(report: dict[str, Any], json_path: str | None, argv: list[str] | None) -> int:
    text = json.dumps(report, indent=2)
    print(text)
    if json_path:
        stamped = json.dumps(stamp(report, __file__, argv), indent=2)
        Path(json_path).write_text(stamped + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
