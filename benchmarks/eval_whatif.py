"""What-if rows: prototypes of retrieval-pipeline changes, measured with the same harness.

NOT the engine.  Each row re-ranks with the engine's own indexes (the
store's BM25 `text_index()` and embedding `vector_index()`) and the store's
edges, changing one stage at a time, so the lead can see what a proposed
pipeline change would buy before building it.  Every setting here was
chosen on the LoCoMo *dev* half: confirm on the held-out half before
adopting any of it.

History: these prototypes were measured (SPEC "Retrieval quality", what-if
table) when the store's BM25 index did not stem; the engine has since
adopted weighted score fusion, graph support and light stemming in its own
form (`graphonomous.retrieval`).  The store's index now stems, so
``whatif[fusion=rrf]`` equals the engine's stage 1 with
``s.fusion=rrf,s.keyword_weight=0.5`` (the tests check it), not the
figures of that table.

Row grammar ``whatif[key=value,...]`` (defaults in brackets):

* ``fusion`` = ``rrf`` (engine stage 1: RRF of the two top-``pool`` lists,
  score = RRF / best RRF) or ``convex`` (score = ``alpha`` · bm25 / max
  bm25 + (1 − ``alpha``) · cos / max cos, over the union of both lists).
  [convex]; ``alpha`` [0.7]; ``pool`` [60].
* ``stem`` = 1: BM25 over the prototype's suffix stripper (`light_stem`)
  instead of the store's index (a separate, otherwise unstemmed index of the
  unit texts). [0]
* ``support`` = λ: final(v) = s(v) + λ · max over v's neighbours u of s(u),
  neighbours = unit nodes joined to v by any edge (LoCoMo: ``follows``;
  linked MuSiQue: ``related``).  Neighbours of candidates become
  candidates. [0]
* ``group`` = μ: + μ · (best s in v's ``part_of`` parent), e.g. the session. [0]

    python benchmarks/eval_whatif.py --data ../shared/data/locomo/locomo-dev.json \\
        [--systems "whatif[fusion=rrf],whatif[support=0.5],..."]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_locomo
import evalkit
from resultfile import stamp

DEFAULTS: Final[Mapping[str, float | str]] = {
    "fusion": "convex",
    "alpha": 0.7,
    "pool": 60,
    "stem": 0,
    "support": 0.0,
    "group": 0.0,
}
DEFAULT_ROWS: Final = (
    "hybrid",
    "whatif[fusion=rrf]",
    "whatif[fusion=convex]",
    "whatif[fusion=rrf,support=0.25]",
    "whatif[fusion=convex,support=0.5]",
    "whatif[fusion=convex,stem=1]",
    "whatif[fusion=convex,stem=1,support=0.5]",
    "whatif[fusion=convex,stem=1,support=0.5,group=0.2]",
)
SUFFIXES: Final = ("ing", "edly", "ed", "ies", "es", "s", "ly")
MIN_STEM: Final = 3


def light_stem(token: str) -> str:
    """Strip the first matching suffix of `SUFFIXES` if >= 3 characters remain ("ies" -> "y").

    A deliberately crude prototype (researching/research, activities/activity),
    not a proposal for the exact rule set.  O(len(token)).
    """
    for suffix in SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= MIN_STEM:
            return token[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return token


def parse_whatif(spec: str) -> dict[str, Any] | None:
    """Settings of a ``whatif[...]`` row (defaults filled in), or None."""
    match = re.fullmatch(r"whatif\[(.*)\]", spec)
    if match is None:
        return None
    settings: dict[str, Any] = dict(DEFAULTS)
    for item in filter(None, (p.strip() for p in match.group(1).split(","))):
        key, _, raw = item.partition("=")
        if key not in DEFAULTS:
            raise ValueError(f"unknown what-if setting {key!r}")
        settings[key] = raw if key == "fusion" else float(raw)
    if settings["fusion"] not in ("rrf", "convex"):
        raise ValueError("fusion must be rrf or convex")
    return settings


def _normalised(scores: Mapping[str, float]) -> dict[str, float]:
    best = max(scores.values(), default=0.0)
    return {k: v / best for k, v in scores.items()} if best > 0 else {}


def _top(scores: Mapping[str, float], count: int) -> list[str]:
    return sorted(scores, key=lambda k: (-scores[k], k))[:count]


class WhatIfRanker:
    """One what-if row on one fresh store (module docstring)."""

    def __init__(self, name: str, corpus: evalkit.EngineCorpus, settings: Mapping[str, Any]):
        from graphonomous.retrieval.bm25 import Bm25Index, bm25_tokens

        self.name = name
        self._corpus = corpus
        self._settings = dict(settings)
        self._tokens = bm25_tokens
        graph = corpus.graph
        units = corpus.unit_of
        self._neighbours: dict[str, set[str]] = {}
        self._parent: dict[str, str] = {}
        for edge in graph.store.list_edges():
            a, b = edge.source_id, edge.target_id
            if a in units and b in units:
                self._neighbours.setdefault(a, set()).add(b)
                self._neighbours.setdefault(b, set()).add(a)
            elif edge.relationship == "part_of" and a in units:
                self._parent[a] = b
        self._stemmed: Any = None
        if settings["stem"]:
            self._stemmed = Bm25Index(stem=False)
            for node_id, content in sorted(self._contents().items()):
                self._stemmed.add(node_id, " ".join(light_stem(t) for t in bm25_tokens(content)))

    def _contents(self) -> dict[str, str]:
        nodes = self._corpus.graph.store.get_nodes(sorted(self._corpus.unit_of))
        return {node_id: node.content for node_id, node in nodes.items()}

    def _stage1(self, query: str) -> dict[str, float]:
        from graphonomous.retrieval.fusion import reciprocal_rank_fusion

        graph = self._corpus.graph
        allow = self._corpus.unit_of.__contains__
        pool = int(self._settings["pool"])
        tokens = self._tokens(query)
        if not tokens:
            return {}
        if self._stemmed is not None:
            bm25 = self._stemmed.scores([light_stem(t) for t in tokens])
        else:
            bm25 = graph.text_index().scores(tokens, allow=allow)
        bm25 = {k: v for k, v in bm25.items() if v > 0.0}
        vector = graph.embed_texts([query])[0]
        cosine = {k: v for k, v in graph.vector_index().search(vector, pool, allow=allow) if v > 0}
        if self._settings["fusion"] == "rrf":
            fused = reciprocal_rank_fusion([_top(cosine, pool), _top(bm25, pool)])
            best = fused[0][1] if fused else 1.0
            return {k: v / best for k, v in fused}
        alpha = float(self._settings["alpha"])
        b = _normalised({k: bm25[k] for k in _top(bm25, pool)})
        c = _normalised(cosine)
        return {k: alpha * b.get(k, 0.0) + (1 - alpha) * c.get(k, 0.0) for k in set(b) | set(c)}

    def rank(self, query: str, depth: int) -> list[str]:
        scores = self._stage1(query)
        support = float(self._settings["support"])
        if support > 0:
            pool = set(scores) | {m for k in scores for m in self._neighbours.get(k, ())}
            scores = {
                k: scores.get(k, 0.0)
                + support
                * max((scores.get(m, 0.0) for m in self._neighbours.get(k, ())), default=0)
                for k in pool
            }
        group = float(self._settings["group"])
        if group > 0:
            best: dict[str, float] = {}
            for k, v in scores.items():
                parent = self._parent.get(k)
                if parent is not None:
                    best[parent] = max(best.get(parent, 0.0), v)
            scores = {
                k: v + group * best.get(self._parent.get(k, ""), 0.0) for k, v in scores.items()
            }
        return evalkit.dedupe_cut((self._corpus.unit_of.get(k) for k in _top(scores, depth)), depth)


def whatif_factory(
    spec: str, corpus: evalkit.CorpusSpec, embedder: Any, opened: list[evalkit.EngineCorpus]
) -> evalkit.Ranker | None:
    """`evalkit.run_grid` hook: build a what-if row, or None for ordinary rows."""
    variant_name, row = evalkit.split_variant(spec, corpus)
    settings = parse_whatif(row)
    if settings is None:
        return None
    variant = corpus.variants[variant_name]
    store = evalkit.build_engine_corpus(
        embedder, variant.operations, variant.unit_of, variant.unit_type
    )
    opened.append(store)
    return WhatIfRanker(spec, store, settings)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON")
    parser.add_argument("--systems", default=",".join(DEFAULT_ROWS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    systems = evalkit.split_systems(args.systems)
    for spec in systems:
        row = spec.partition(":")[2] if spec.partition(":")[0] in eval_locomo.VARIANTS else spec
        if parse_whatif(row) is None:
            evalkit.check_systems([spec], eval_locomo.VARIANTS)
    started = time.perf_counter()
    conversations = eval_locomo.load_locomo(args.data)
    corpora = [eval_locomo.corpus_spec(c) for c in conversations]
    queries = [q for c in corpora for q in c.queries]
    embedder = evalkit.make_embedder("hashing", None)
    runs = evalkit.run_grid(corpora, systems, embedder, eval_locomo.DEPTH, factory=whatif_factory)
    scores = evalkit.score_runs(runs, queries, eval_locomo.KS)
    groups = eval_locomo.question_groups(queries)
    summary = evalkit.summarise(scores, groups, evalkit.metric_names(eval_locomo.KS), 0, 0)
    head = summary[eval_locomo.HEADLINE]
    rows = [
        [
            s,
            *(evalkit.fmt(head[s][m]["mean"]) for m in ("R@1", "R@5", "R@10", "MRR")),
            *(evalkit.fmt(summary[g][s]["R@5"]["mean"]) for g in "12345"),
        ]
        for s in systems
    ]
    header = ["row (dev-tuned prototype)", "R@1", "R@5", "R@10", "MRR"]
    header += [f"R@5 cat {g}" for g in "12345"]
    print(f"LoCoMo categories 1-4, n = {head[systems[0]]['n']} (what-if rows are NOT the engine)")
    print(evalkit.markdown_table(header, rows))
    print(f"Time: {time.perf_counter() - started:.1f} s")
    if args.json:
        args.json.write_text(
            json.dumps(stamp(summary, __file__, argv), indent=1, sort_keys=True) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
