"""Peer memory/retrieval systems against Graphonomous, same protocol, one run.

The protocol is eval_locomo.py's (or eval_multihop.py's with ``--benchmark
musique|hotpotqa``): the same units, the same text rendering, one fresh
store or index per conversation, results mapped to units, de-duplicated in
rank order and then cut at k, the same dev/test split of the questions
(``--split``, printed), seeded bootstrap CIs.  Peers (each imported only if
asked for, never a dependency of graphonomous):

* ``rank-bm25`` — ``BM25Okapi`` over lower-cased ``\\w+`` tokens (pip: rank-bm25);
* ``bm25s`` — ``bm25s.BM25`` (Lucene variant, k1 = 1.5, b = 0.75) over the
  same tokens (pip: bm25s);
* ``wordllama`` — WordLlama static embeddings (the ``l2_supercat`` 256-dim
  weights shipped inside the wheel, loaded with downloads disabled), cosine
  top-k (pip: wordllama);
* ``mcp-memory-service-lite`` and ``basic-memory`` — listed so that their
  rows say why they did not run here (see `UNAVAILABLE`).

Install the peers in a benchmark-only virtual environment, never into the
package's (see benchmarks/requirements-peers.txt)::

    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install -r benchmarks/requirements-peers.txt
    PYTHONPATH=. /tmp/peers/bin/python benchmarks/eval_peers.py \\
        --data ../shared/data/locomo/locomo-dev.json --split dev [--systems ...] [--json OUT]

A peer whose package is missing is reported as not run (with the import
error) and the other rows still run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_locomo
import eval_multihop
import evalkit

PEERS: Final = ("rank-bm25", "bm25s", "wordllama", "mcp-memory-service-lite", "basic-memory")
DEFAULT_SYSTEMS: Final = ("rank-bm25", "bm25s", "wordllama", "e0", "e3", "e6")
# Peers this script has no in-process adapter for, and why (measured on this machine).
UNAVAILABLE: Final[Mapping[str, str]] = {
    "mcp-memory-service-lite": (
        "pip-installs (12.4.0), but its ONNX embedder fetches the MiniLM archive from "
        "chroma-onnx-models.s3.amazonaws.com (SHA-256 pinned) on first use, and only PyPI is "
        "reachable here; no adapter that feeds it a local model is written yet"
    ),
    "basic-memory": (
        "not installable here: every release on PyPI requires Python >= 3.12 and this "
        "machine has 3.11"
    ),
}
BM25_K1: Final = 1.5
BM25_B: Final = 0.75


class Bm25sRanker:
    """bm25s over the design note's tokens (lower-cased ``\\w+``)."""

    def __init__(self, name: str, units: Sequence[evalkit.Unit]) -> None:
        bm25s = importlib.import_module("bm25s")
        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build
        self.name = name
        self._ids = [unit.uid for unit in units]
        self._model = bm25s.BM25(k1=BM25_K1, b=BM25_B)
        self._model.index([evalkit.word_tokens(u.text) for u in units], show_progress=False)

    def rank(self, query: str, depth: int) -> list[str]:
        scores = self._model.get_scores(evalkit.word_tokens(query))
        order = sorted(range(len(self._ids)), key=lambda i: (-float(scores[i]), i))
        return evalkit.dedupe_cut(
            (self._ids[i] for i in order[:depth] if float(scores[i]) > 0.0), depth
        )


class WordLlamaRanker:
    """WordLlama static embeddings (bundled weights, no download), cosine top-k."""

    def __init__(self, name: str, units: Sequence[evalkit.Unit]) -> None:
        wordllama = importlib.import_module("wordllama")
        self.name = name
        self._ids = [unit.uid for unit in units]
        self._model = wordllama.WordLlama.load(
            cache_dir=Path(wordllama.__file__).parent, disable_download=True
        )
        self._vectors = self._model.embed([u.text for u in units], norm=True)

    def rank(self, query: str, depth: int) -> list[str]:
        vector = self._model.embed([query], norm=True)[0]
        scores = self._vectors @ vector
        order = sorted(range(len(self._ids)), key=lambda i: (-float(scores[i]), i))
        return evalkit.dedupe_cut((self._ids[i] for i in order[:depth]), depth)


def availability(systems: Sequence[str]) -> dict[str, str]:
    """{peer row: reason it cannot run} for the peers asked for."""
    modules = {"rank-bm25": "rank_bm25", "bm25s": "bm25s", "wordllama": "wordllama"}
    missing: dict[str, str] = {}
    for row in systems:
        if row in UNAVAILABLE:
            missing[row] = UNAVAILABLE[row]
        elif row in modules:
            try:
                importlib.import_module(modules[row])
            except ImportError as exc:
                missing[row] = f"not installed ({exc}); pip install {row}"
    return missing


def peer_factory(
    spec: str, corpus: evalkit.CorpusSpec, embedder: Any, opened: list[evalkit.EngineCorpus]
) -> evalkit.Ranker | None:
    """Rankers of the peer rows (None: an engine or component row, built by evalkit)."""
    del embedder, opened
    if spec == "bm25s":
        return Bm25sRanker(spec, corpus.units)
    if spec == "wordllama":
        return WordLlamaRanker(spec, corpus.units)
    return None


def load(benchmark: str, data: Path, split: str) -> tuple[list[evalkit.CorpusSpec], int]:
    """The corpora of a benchmark with their questions cut to `split`, and the full count."""
    if benchmark == "locomo":
        corpora = [eval_locomo.corpus_spec(c) for c in eval_locomo.load_locomo(data)]
    else:
        loader = (
            eval_multihop.load_musique if benchmark == "musique" else eval_multihop.load_hotpotqa
        )
        units, queries = loader(data)
        corpora = [eval_multihop.corpus_spec(benchmark, units, queries)]
    total = sum(len(c.queries) for c in corpora)
    for corpus in corpora:
        corpus.queries = evalkit.split_queries(corpus.queries, split)
    return corpora, total


def evaluate(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    missing = availability(systems)
    runnable = [s for s in systems if s not in missing]
    corpora, total = load(args.benchmark, args.data, args.split)
    queries = [q for c in corpora for q in c.queries]
    embedder = evalkit.make_embedder(args.embedder, args.model_dir)
    runs = evalkit.run_grid(corpora, runnable, embedder, eval_locomo.DEPTH, factory=peer_factory)
    if args.benchmark == "locomo":
        scores = evalkit.score_runs(runs, queries, eval_locomo.KS)
        groups = eval_locomo.question_groups(queries)
        headline = eval_locomo.HEADLINE
        names = evalkit.metric_names(eval_locomo.KS)
    else:
        scores = evalkit.score_runs(runs, queries, eval_multihop.KS)
        groups = eval_multihop.question_groups(queries)
        headline = eval_multihop.ALL
        names = evalkit.metric_names(eval_multihop.KS)
    summary = evalkit.summarise(scores, groups, names, args.bootstrap, args.seed)
    per_query = {s: runs[s].seconds / max(1, len(queries)) for s in runnable}
    return {
        "benchmark": args.benchmark,
        "data": str(args.data),
        "split": args.split,
        "split_line": evalkit.split_line(args.split, len(queries), total),
        "embedder": embedder.name,
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "systems": runnable,
        "not_run": missing,
        "headline": headline,
        "summary": summary,
        "seconds_per_question": per_query,
        "total_seconds": time.perf_counter() - started,
    }


def report(result: Mapping[str, Any]) -> str:
    summary = result["summary"]
    head = summary[result["headline"]]
    systems = result["systems"]
    out = [
        f"{result['benchmark']} peers — embedder `{result['embedder']}` for the engine rows, "
        f"{result['bootstrap']} bootstrap rounds",
        result["split_line"],
        "",
    ]
    reference = "e0" if "e0" in systems else None
    columns = ["R@1", "R@5", "R@10", "MRR", "nDCG@10"]
    rows = []
    for system in sorted(systems, key=lambda s: -head[s]["R@5"]["mean"]):
        cells = [system] + [evalkit.with_ci(head[system][c]) for c in columns]
        seconds = result["seconds_per_question"][system]
        ratio = (
            f"{seconds / result['seconds_per_question'][reference]:.2f}×"
            if reference and result["seconds_per_question"][reference] > 0
            else "-"
        )
        cells += [f"{seconds * 1000:.1f}", ratio]
        rows.append(cells)
    out.append(evalkit.markdown_table(["system", *columns, "ms / question", "vs e0"], rows))
    groups = [g for g in summary if g != result["headline"]]
    if groups:
        out += ["", "R@5 by group:", ""]
        out.append(
            evalkit.markdown_table(
                ["system", *(f"{g} (n={summary[g][systems[0]]['n']})" for g in groups)],
                [
                    [s, *(evalkit.fmt(summary[g][s]["R@5"]["mean"]) for g in groups)]
                    for s in systems
                ],
            )
        )
    for peer, reason in result["not_run"].items():
        out.append(f"not run: {peer} — {reason}")
    out.append(f"Time: {result['total_seconds']:.1f} s")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark", choices=("locomo", "musique", "hotpotqa"), default="locomo")
    parser.add_argument(
        "--data", type=Path, required=True, help="LoCoMo JSON, or the multihop-hipporag dir"
    )
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS))
    parser.add_argument("--split", choices=evalkit.SPLITS, default="dev")
    parser.add_argument("--embedder", choices=("hashing", "onnx"), default="hashing")
    parser.add_argument("--model-dir", help="ONNX model directory (tokenizer.json + model.onnx)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    systems = evalkit.split_systems(args.systems)
    evalkit.check_systems([s for s in systems if s not in PEERS or s == "rank-bm25"])
    result = evaluate(args, systems)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
