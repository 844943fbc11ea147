"""Do governing statements come back with the later questions they govern?

Data: the real conversations of LoCoMo (read in place, never copied; cases are
named by ``sample_id`` + question index + ``dia_id``).  The cases are fixed by
rules that do not use the detector under test (`retrieval/directives.py`):

* **governed** (directive, question): a LoCoMo question (categories 1-4) that
  asks about a preference (`PREFERENCE_QUESTION`: like, love, enjoy, favourite,
  prefer, hate, fan) paired with each of its evidence turns — the statement of
  the preference the answer rests on.  Hit = that turn is among the top-5
  results *or* in the ``directives`` list of ``retrieve_context(question,
  limit=5, node_type="episodic")`` (the LoCoMo call of eval_locomo.py).
* **not governed** (directive, question): every other question of the same
  conversation paired with each turn the write path marked a directive
  (``metadata.directive``) that is not among that question's evidence.  False
  inclusion = that turn is in the question's ``directives`` list.  (A turn that
  is topical without being the evidence counts as false: an upper bound.)
  For the governed questions the list's entries that are not their evidence are
  counted too (``governed_questions_listed_not_evidence``).

One store per conversation, filled like eval_locomo's ``graph`` variant (turns,
session nodes, ``part_of``/``follows``).  Split once by a hash of the question id
(evalkit.split_of: sha256(question id)[0] even = tune, odd = validate); rules were
tuned on tune only.  Figures per split: governed hit rate (with and without the
directives list, the latter = what a reader of ``results`` alone gets), false
inclusions per pair and per question, and how many directives matched before the
`MAX_DIRECTIVES` cut.  LoCoMo has no standing *instructions* between its two
friends; instruction recognition and scope are covered by tests/test_directives.py.

Run:  python benchmarks/eval_directives.py --data ../shared/data/locomo/locomo-dev.json
          [--json benchmarks/results/eval_directives.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evalkit
from eval_locomo import GRAPH_VARIANT, TURN_TYPE, load_locomo, store_variants
from resultfile import stamp

PREFERENCE_QUESTION: Final = re.compile(
    r"\b(?:like|likes|love|loves|enjoy|enjoys|favou?rite|prefer|prefers|hate|hates|fan)\b",
    re.IGNORECASE,
)
HEADLINE_CATEGORIES: Final = ("1", "2", "3", "4")
K: Final = 5
SPLIT_NAMES: Final = {"dev": "tune", "test": "validate"}


def _marked(graph: Any) -> set[str]:
    """Turn ids the write path marked as governing statements."""
    nodes = graph.list_nodes(node_type=TURN_TYPE, limit=10_000)["nodes"]
    return {node["id"] for node in nodes if node["metadata"].get("directive")}


def _score_conversation(conversation: Any, embedder: Any, split: str) -> dict[str, Any]:
    variant = store_variants(conversation)[GRAPH_VARIANT]
    corpus = evalkit.build_engine_corpus(embedder, variant.operations, variant.unit_of, TURN_TYPE)
    graph = corpus.graph
    marked = _marked(graph)
    out: dict[str, Any] = {"governed": [], "pairs": 0, "false": 0, "questions": 0}
    out.update(false_questions=0, matched=[], marked=len(marked), listed=0, listed_other=0, ms=[])
    for query in conversation.queries:
        if query.label not in HEADLINE_CATEGORIES or evalkit.split_of(query.qid) != split:
            continue
        result = graph.retrieve_context(query.text, limit=K, node_type=TURN_TYPE)
        top = [row["node_id"] for row in result["results"]][:K]
        listed = [row["node_id"] for row in result.get("directives", [])]
        out["matched"].append(result["stats"].get("directives", {}).get("matched", 0))
        out["ms"].append(result["stats"]["timings_ms"].get("directives", 0.0))
        if PREFERENCE_QUESTION.search(query.text):
            out["listed"] += len(listed)
            out["listed_other"] += len([turn for turn in listed if turn not in query.gold])
            for turn in query.gold:
                out["governed"].append(
                    {
                        "case": f"{query.qid}@{turn}",
                        "in_results": turn in top,
                        "in_directives": turn in listed,
                        "marked": turn in marked,
                    }
                )
            continue
        out["questions"] += 1
        wrong = [turn for turn in listed if turn not in query.gold]
        out["pairs"] += len(marked - set(query.gold))
        out["false"] += len(wrong)
        out["false_questions"] += bool(wrong)
    graph.close()
    return out


def evaluate(data: Path, split: str) -> dict[str, Any]:
    embedder = evalkit.make_embedder("hashing", None)
    governed: list[dict[str, Any]] = []
    pairs = false = questions = false_questions = marked = listed = listed_other = 0
    matched: list[int] = []
    ms: list[float] = []
    for conversation in load_locomo(data):
        part = _score_conversation(conversation, embedder, split)
        governed += part["governed"]
        pairs += part["pairs"]
        false += part["false"]
        questions += part["questions"]
        false_questions += part["false_questions"]
        marked += part["marked"]
        listed += part["listed"]
        listed_other += part["listed_other"]
        matched += part["matched"]
        ms += part["ms"]
    hits = sum(c["in_results"] or c["in_directives"] for c in governed)
    results_only = sum(c["in_results"] for c in governed)
    return {
        "split": SPLIT_NAMES[split],
        "governed_cases": len(governed),
        "governed_in_top5_or_directives": round(hits / max(len(governed), 1), 4),
        "governed_in_top5_results_only": round(results_only / max(len(governed), 1), 4),
        "governed_marked": sum(c["marked"] for c in governed),
        "governed_questions_listed": listed,
        "governed_questions_listed_not_evidence": listed_other,
        "not_governed_questions": questions,
        "not_governed_pairs": pairs,
        "false_inclusions": false,
        "false_inclusion_rate_per_pair": round(false / max(pairs, 1), 5),
        "questions_with_a_false_inclusion": round(false_questions / max(questions, 1), 4),
        "turns_marked": marked,
        "matched_before_cut_mean": round(sum(matched) / max(len(matched), 1), 3),
        "matched_before_cut_max": max(matched, default=0),
        "directives_stage_ms_mean": round(sum(ms) / max(len(ms), 1), 3),
        "directives_stage_ms_max": round(max(ms, default=0.0), 3),
        "misses": [c["case"] for c in governed if not (c["in_results"] or c["in_directives"])],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--split", choices=("tune", "validate", "both"), default="both")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    wanted = (
        ("dev", "test") if args.split == "both" else ("dev" if args.split == "tune" else "test",)
    )
    report = {"k": K, "splits": [evaluate(args.data, split) for split in wanted]}
    for row in report["splits"]:
        print(json.dumps({k: v for k, v in row.items() if k != "misses"}))
    if args.json:
        stamped = json.dumps(stamp(report, __file__, argv), indent=2, sort_keys=True)
        args.json.write_text(stamped + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
