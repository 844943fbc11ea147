"""Multi-hop paragraph retrieval (MuSiQue-100, HotpotQA-100) of Graphonomous vs baselines.

The HippoRAG tuning subsets (shared/data/multihop-hipporag/, read in place):

* One pooled corpus per dataset; the unit is a paragraph, indexed as
  ``"<title>\\n<text>"`` by every system.  MuSiQue's corpus is a list of
  ``{"title", "text"}`` (titles repeat: units are numbered ``p<index>``);
  HotpotQA's is ``{title: [sentences]}`` (text = the sentences joined as
  they are, since each carries its leading space; unit id = the title).
* Gold: MuSiQue — the question's paragraphs with ``is_supporting`` true,
  matched to the corpus by (title, text); reported by hop count (= number
  of supporting paragraphs, 2-4).  HotpotQA — the distinct titles of
  ``supporting_facts``; reported by ``type`` (bridge / comparison).
* Metrics: R@2, R@5, R@10 (and Hit@k), MRR over the top 20, nDCG@10,
  bootstrap 95 % CIs.  n = 100 per dataset is small: read the intervals.
* Graph (variant ``linked``; only corpus text is used, never the
  questions): an undirected ``related`` edge from paragraph P to every
  paragraph titled T when T's *mention form* occurs in P's text as a whole
  token sequence, and between paragraphs sharing a title.  The mention
  form of a title is its lower-cased ``\\w+`` tokens after dropping a
  trailing parenthetical (``"Lilu (mythology)"`` -> ``lilu``); titles whose
  form has fewer than 4 characters or only digits are not matched.  Variant
  ``plain`` has no edges; a row prefixed ``linked:`` runs on the linked
  store, any other row on the plain one.

    python benchmarks/eval_multihop.py --data-dir ../shared/data/multihop-hipporag \\
        --dataset musique|hotpotqa [--json OUT] [--systems ...] [--bootstrap 1000]
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

import evalkit
from resultfile import stamp

KS: Final = (2, 5, 10)
DEPTH: Final = 20
PLAIN: Final = "plain"
LINKED: Final = "linked"
ALL: Final = "all"
MIN_MENTION_CHARS: Final = 4
TRAILING_PARENTHETICAL: Final = re.compile(r"\s*\([^()]*\)\s*$")
DEFAULT_SYSTEMS: Final = (
    *evalkit.DEFAULT_SYSTEMS,
    "linked:e0",
    "linked:e3",
    "linked:e6",
    "linked:e9",
)


def unit_text(title: str, text: str) -> str:
    return f"{title}\n{text}"


def load_musique(data_dir: Path) -> tuple[list[evalkit.Unit], list[evalkit.Query]]:
    """MuSiQue units (``p<i>``) and questions labelled ``"<h>-hop"``."""
    corpus = json.loads((data_dir / "musique_train_corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((data_dir / "musique_train.json").read_text(encoding="utf-8"))
    units = [
        evalkit.Unit(f"p{i}", unit_text(p["title"], p["text"]), p["title"])
        for i, p in enumerate(corpus)
    ]
    by_key: dict[tuple[str, str], str] = {}
    for i, p in enumerate(corpus):
        by_key.setdefault((p["title"], p["text"]), f"p{i}")
    queries = []
    for item in questions:
        gold = [
            by_key[(p["title"], p["paragraph_text"])]
            for p in item["paragraphs"]
            if p.get("is_supporting")
        ]
        if gold:
            queries.append(
                evalkit.Query(item["id"], item["question"], tuple(gold), f"{len(gold)}-hop")
            )
    return units, queries


def load_hotpotqa(data_dir: Path) -> tuple[list[evalkit.Unit], list[evalkit.Query]]:
    """HotpotQA units (id = title) and questions labelled by type."""
    corpus = json.loads((data_dir / "hotpotqa_train_corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((data_dir / "hotpotqa_train.json").read_text(encoding="utf-8"))
    units = [
        evalkit.Unit(title, unit_text(title, "".join(sentences)), title)
        for title, sentences in corpus.items()
    ]
    queries = []
    for item in questions:
        gold: list[str] = []
        for title, _ in item["supporting_facts"]:
            if title in corpus and title not in gold:
                gold.append(title)
        if gold:
            queries.append(
                evalkit.Query(item["_id"], item["question"], tuple(gold), str(item["type"]))
            )
    return units, queries


def mention_form(title: str) -> tuple[str, ...]:
    """The token sequence by which a title is recognised in text (module docstring)."""
    tokens = tuple(evalkit.word_tokens(TRAILING_PARENTHETICAL.sub("", title)))
    joined = "".join(tokens)
    if len(" ".join(tokens)) < MIN_MENTION_CHARS or joined.isdigit():
        return ()
    return tokens


def title_links(units: Sequence[evalkit.Unit]) -> list[tuple[str, str]]:
    """Undirected (a, b) pairs, a < b: title mentions and shared titles (module docstring).

    Input: units whose ``group`` is the title and whose text is
    ``"<title>\\n<body>"``; only the body is searched.  Output: sorted
    distinct pairs.  Complexity: O(total tokens · titles per first token).
    """
    by_title: dict[str, list[str]] = {}
    for unit in units:
        by_title.setdefault(unit.group, []).append(unit.uid)
    by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for title in sorted(by_title):
        form = mention_form(title)
        if form:
            by_first.setdefault(form[0], []).append((form, title))
    pairs: set[tuple[str, str]] = set()
    for members in by_title.values():
        pairs.update((a, b) for a in members for b in members if a < b)
    for unit in units:
        tokens = evalkit.word_tokens(unit.text.split("\n", 1)[-1])
        for start, token in enumerate(tokens):
            for form, title in by_first.get(token, ()):
                if title == unit.group or tuple(tokens[start : start + len(form)]) != form:
                    continue
                for other in by_title[title]:
                    pairs.add((min(unit.uid, other), max(unit.uid, other)))
    return sorted(pairs)


def corpus_spec(name: str, units: list[evalkit.Unit], queries: list[evalkit.Query]) -> Any:
    """The pooled corpus with its ``plain`` and ``linked`` stores."""
    nodes: list[dict[str, Any]] = [
        {
            "op": "add_node",
            "node": {
                "id": u.uid,
                "node_type": "semantic",
                "content": u.text,
                "metadata": {"title": u.group},
            },
        }
        for u in units
    ]
    edges: list[dict[str, Any]] = [
        {"op": "add_edge", "edge": {"source_id": a, "target_id": b, "relationship": "related"}}
        for a, b in title_links(units)
    ]
    unit_of = {u.uid: u.uid for u in units}
    return evalkit.CorpusSpec(
        name=name,
        units=units,
        queries=queries,
        variants={
            PLAIN: evalkit.StoreVariant(nodes, unit_of),
            LINKED: evalkit.StoreVariant(nodes + edges, dict(unit_of)),
        },
        default_variant=PLAIN,
    )


def question_groups(queries: Sequence[evalkit.Query]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {ALL: list(range(len(queries)))}
    for label in sorted({q.label for q in queries}):
        groups[label] = [i for i, q in enumerate(queries) if q.label == label]
    return groups


def degree_stats(pairs: Sequence[tuple[str, str]], units: int) -> dict[str, float]:
    """Edges, mean and max degree, isolated share of the linked graph."""
    degree: dict[str, int] = {}
    for a, b in pairs:
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    return {
        "edges": len(pairs),
        "mean_degree": 2 * len(pairs) / units if units else 0.0,
        "max_degree": max(degree.values(), default=0),
        "isolated_share": (units - len(degree)) / units if units else 0.0,
    }


def evaluate(
    data_dir: Path,
    dataset: str,
    systems: Sequence[str],
    embedder: evalkit.CachingEmbedder,
    rounds: int,
    seed: int,
    replay: int,
    split: str = "all",
    pairs: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    started = time.perf_counter()
    loader = load_musique if dataset == "musique" else load_hotpotqa
    units, every_query = loader(data_dir)
    queries = evalkit.split_queries(every_query, split)
    corpus = corpus_spec(dataset, units, queries)
    links = title_links(units)
    runs = evalkit.run_grid([corpus], systems, embedder, DEPTH, replay=replay)
    scores = evalkit.score_runs(runs, queries, KS)
    names = evalkit.metric_names(KS)
    groups = question_groups(queries)
    summary = evalkit.summarise(scores, groups, names, rounds, seed)
    result: dict[str, Any] = {
        "benchmark": dataset,
        "data_dir": str(data_dir),
        "split": split,
        "split_line": evalkit.split_line(split, len(queries), len(every_query)),
        "embedder": embedder.name,
        "bootstrap": rounds,
        "seed": seed,
        "systems": list(systems),
        "units": len(units),
        "questions": len(queries),
        "links": degree_stats(links, len(units)),
        "summary": summary,
        **evalkit.run_facts(runs),
    }
    if "rank-bm25" in systems and rounds:
        result["paired"] = [
            {
                "system": row,
                "baseline": "rank-bm25",
                "metrics": evalkit.paired_table(
                    scores,
                    groups[ALL],
                    row,
                    "rank-bm25",
                    ["R@2", "R@5", "R@10", "MRR"],
                    rounds,
                    seed,
                ),
            }
            for row in evalkit.rows_to_pair(summary[ALL], systems, "R@5")
        ]
    if pairs and rounds:
        result["pairs"] = evalkit.explicit_pairs(
            scores, groups, pairs, ["R@5", "MRR"], rounds, seed
        )
    result["timing"] = {
        "total": time.perf_counter() - started,
        "embedding": embedder.seconds,
        "systems": {s: r.seconds for s, r in runs.items()},
    }
    return result


def report(result: Mapping[str, Any], systems: Sequence[str]) -> str:
    summary = result["summary"]
    links = result["links"]
    out = [
        f"{result['benchmark']}: {result['units']} paragraphs, {result['questions']} questions, "
        f"embedder `{result['embedder']}`, {result['bootstrap']} bootstrap rounds",
        f"linked store: {links['edges']} related edges, mean degree "
        f"{links['mean_degree']:.2f}, max {links['max_degree']}, isolated "
        f"{links['isolated_share']:.1%}",
        result["split_line"],
        "",
    ]
    columns = ["R@2", "R@5", "R@10", "Hit@5", "MRR", "nDCG@10"]
    for group in summary:
        n = summary[group][systems[0]]["n"]
        out += [
            f"### {result['benchmark']} — {group}, n = {n}",
            "",
            evalkit.metric_table(
                summary[group],
                systems,
                columns,
                ci_columns=("R@5",),
                extra=(lambda s: [f"{result['timing']['systems'][s]:.1f}"])
                if group == ALL
                else None,
                extra_header=["seconds"] if group == ALL else (),
            ),
            "",
        ]
    for paired in result.get("paired", []):
        out += [
            f"Paired bootstrap `{paired['system']}` − `{paired['baseline']}`: "
            + "; ".join(
                f"{k} {v['diff']:+.3f} [{v['low']:+.3f}, {v['high']:+.3f}]"
                for k, v in paired["metrics"].items()
            ),
        ]
    out += evalkit.pair_lines(result.get("pairs", []), "R@5")
    out.append(
        "Replay check: "
        + ", ".join(f"{s} {v['mismatches']}/{v['checked']}" for s, v in result["replay"].items())
        + " mismatches"
    )
    out.append(
        "Sources of the units in the engine rows' rankings: "
        + "; ".join(
            f"{s} " + ", ".join(f"{k} {v}" for k, v in counts.items())
            for s, counts in result["sources"].items()
        )
    )
    timing = result["timing"]
    out.append(f"Time: total {timing['total']:.1f} s, embedding {timing['embedding']:.1f} s")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--dataset", choices=("musique", "hotpotqa"), required=True)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS))
    parser.add_argument("--embedder", choices=("hashing", "onnx"), default="hashing")
    parser.add_argument("--model-dir", help="ONNX model directory (tokenizer.json + model.onnx)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--replay", type=int, default=10)
    parser.add_argument(
        "--split", choices=evalkit.SPLITS, default="all", help="question half (tune on dev only)"
    )
    parser.add_argument(
        "--pair", default="", help="extra paired bootstraps ROW>BASELINE,... (e.g. e6>e3)"
    )
    args = parser.parse_args(argv)
    systems = evalkit.check_systems(evalkit.split_systems(args.systems), (PLAIN, LINKED))
    pairs = evalkit.parse_pairs(args.pair, systems)
    embedder = evalkit.make_embedder(args.embedder, args.model_dir)
    result = evaluate(
        args.data_dir,
        args.dataset,
        systems,
        embedder,
        args.bootstrap,
        args.seed,
        args.replay,
        args.split,
        pairs,
    )
    print(report(result, systems))
    if args.json:
        args.json.write_text(
            json.dumps(stamp(result, __file__, argv), indent=1, sort_keys=True) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
