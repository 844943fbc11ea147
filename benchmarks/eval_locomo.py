"""LoCoMo turn-retrieval quality of Graphonomous against BM25, dense and RRF baselines.

Follows the protocol of the design note "Measuring retrieval quality
honestly" (shared/design/retrieval-eval.md) exactly:

* Only ``session_<n>`` values that are lists are sessions.  Evidence ids are
  normalised with ``D:?(\\d+):0*(\\d+)`` (every match of an entry counts, so
  ``"D8:6; D9:17"`` names two turns); ids naming no turn are dropped, then
  questions left with no evidence are dropped.
* One fresh in-memory store per conversation *and per system* (never pooled,
  never shared between rows).  Each turn is one ``episodic`` node whose
  content is ``"<speaker>: <text>"`` plus ``" [image: <blip_caption>]"`` when
  the turn has a caption — the same text for every system, baselines
  included.  The session date is *not* in the turn text (it is in the turn's
  metadata and on the session node); see ``render_turn``.
* Graph: a ``temporal`` node per session (content ``"Session <n>: <date>"``),
  every turn ``part_of`` its session, and ``<turn t+1> follows <turn t>``
  inside a session.  Session nodes are never answers: results are mapped to
  turn ids, de-duplicated in rank order, and only then cut at k.
* Metrics per category (the file's numbering: 1 multi-hop, 2 temporal,
  3 open-domain, 4 single-hop, 5 adversarial; headline = 1-4 pooled, 5
  reported separately): turn-level R@k and Hit@k (k = 1, 5, 10, 20), MRR
  over the top 20, nDCG@10, session-level Hit@k, seeded bootstrap 95 % CIs,
  and paired bootstraps of the best ``retrieve_context`` row and of the
  best engine-channel row against ``rank-bm25`` (all metrics on categories
  1-4, and R@5 within each category).
* Nothing learns from the scored questions: no feedback call is ever made,
  and a replay of each conversation's first questions after all of them
  checks that answering left no state that changes rankings.

Run (data is read in place, never copied):

    python benchmarks/eval_locomo.py --data ../shared/data/locomo/locomo-dev.json \\
        [--json OUT] [--systems rank-bm25,embed,e3,...] [--embedder hashing|onnx|static \\
        --model-dir DIR|FILE] [--bootstrap 1000] [--seed 0] [--db postgresql://…]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evalkit
from resultfile import stamp

EVIDENCE_PATTERN: Final = re.compile(r"D:?(\d+):0*(\d+)")
SESSION_KEY: Final = re.compile(r"session_(\d+)")
CATEGORY_NAMES: Final[Mapping[int, str]] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
HEADLINE: Final = "1-4"
KS: Final = (1, 5, 10, 20)
DEPTH: Final = max(KS)
SESSION_KS: Final = (1, 5, 10)
DEFAULT_SYSTEMS: Final = evalkit.DEFAULT_SYSTEMS
GRAPH_VARIANT: Final = "graph"
# Turns are the only episodic nodes, so this type is the engine's node_type filter.
TURN_TYPE: Final = "episodic"
FLAT_VARIANT: Final = "flat"
STRONG_VARIANT: Final = "strong"
VARIANTS: Final = (GRAPH_VARIANT, FLAT_VARIANT, STRONG_VARIANT)
# Edge strength of the "strong" store (the "graph" store leaves it to the engine's default).
STRONG_EDGE_STRENGTH: Final = 1.0


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    caption: str | None


@dataclass(frozen=True)
class Session:
    number: int
    date: str
    turns: tuple[Turn, ...]


@dataclass
class Conversation:
    sample_id: str
    sessions: list[Session]
    queries: list[evalkit.Query]
    cleaning: dict[str, int] = field(default_factory=dict)


def normalise_ids(raw: object) -> list[str]:
    """Every ``D<s>:<t>`` named by one evidence entry, canonical (no leading zeros).

    ``"D:11:26"`` -> ``["D11:26"]``; ``"D8:6; D9:17"`` -> two ids;
    ``"D"`` -> ``[]``.
    """
    if not isinstance(raw, str):
        return []
    return [f"D{int(s)}:{int(t)}" for s, t in EVIDENCE_PATTERN.findall(raw)]


def sessions_of(conversation: Mapping[str, Any]) -> list[Session]:
    """The ``session_<n>`` entries that are lists of turns, in session order."""
    sessions = []
    for key, value in conversation.items():
        match = SESSION_KEY.fullmatch(key)
        if match is None or not isinstance(value, list):
            continue
        number = int(match.group(1))
        turns = []
        for turn in value:
            ids = normalise_ids(turn.get("dia_id"))
            caption = turn.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=ids[0] if ids else str(turn.get("dia_id")),
                    session=number,
                    speaker=str(turn.get("speaker", "")),
                    text=str(turn.get("text", "")),
                    caption=caption if isinstance(caption, str) and caption else None,
                )
            )
        date = conversation.get(f"session_{number}_date_time")
        sessions.append(Session(number, date if isinstance(date, str) else "", tuple(turns)))
    return sorted(sessions, key=lambda s: s.number)


def render_turn(turn: Turn) -> str:
    """The text every system indexes for a turn.

    ``"<speaker>: <text>"`` + ``" [image: <caption>]"`` when captioned.  The
    session date is left out: it would add the same tokens to every turn
    of a session (noise for BM25 and the embedder alike), and the design
    note's baselines were measured without it.
    """
    text = f"{turn.speaker}: {turn.text}"
    return f"{text} [image: {turn.caption}]" if turn.caption else text


def clean_questions(
    sample_id: str, qa: Sequence[Mapping[str, Any]], turn_ids: set[str]
) -> tuple[list[evalkit.Query], dict[str, int]]:
    """Questions with normalised, existing evidence; counts of what was dropped."""
    stats = {"questions": len(qa), "ids_dropped": 0, "questions_dropped": 0}
    queries = []
    for index, item in enumerate(qa):
        gold: list[str] = []
        for raw in item.get("evidence", []):
            for dia_id in normalise_ids(raw):
                if dia_id not in turn_ids:
                    stats["ids_dropped"] += 1
                elif dia_id not in gold:
                    gold.append(dia_id)
            if not normalise_ids(raw):
                stats["ids_dropped"] += 1
        if not gold:
            stats["questions_dropped"] += 1
            continue
        queries.append(
            evalkit.Query(
                qid=f"{sample_id}#{index}",
                text=str(item["question"]),
                gold=tuple(gold),
                label=str(item["category"]),
            )
        )
    return queries, stats


def load_locomo(path: Path) -> list[Conversation]:
    """Read a LoCoMo JSON list and clean it (`load_locomo_samples`)."""
    with path.open(encoding="utf-8") as handle:
        return load_locomo_samples(json.load(handle))


def load_locomo_samples(samples: Sequence[Mapping[str, Any]]) -> list[Conversation]:
    """Parse and clean LoCoMo samples (see the module docstring)."""
    conversations = []
    for sample in samples:
        sessions = sessions_of(sample["conversation"])
        turn_ids = {t.dia_id for s in sessions for t in s.turns}
        queries, stats = clean_questions(sample["sample_id"], sample["qa"], turn_ids)
        stats["turns"] = len(turn_ids)
        stats["sessions"] = len(sessions)
        conversations.append(Conversation(sample["sample_id"], sessions, queries, stats))
    return conversations


def store_variants(conversation: Conversation) -> dict[str, evalkit.StoreVariant]:
    """The batch operations that fill a store with one conversation.

    ``graph``: turns + session nodes + ``part_of`` and ``follows`` edges at
    the engine's default strength (what a caller gets by not choosing one).
    ``strong``: the same edges at strength 1.0 (an ablation).
    ``flat``: the turns alone (an ablation: no edges, no session nodes).
    Node ids are the canonical dia_ids and ``session-<n>``.
    """
    turn_ops: list[dict[str, Any]] = []
    graph_ops: list[dict[str, Any]] = []
    unit_of: dict[str, str] = {}
    for session in conversation.sessions:
        session_id = f"session-{session.number}"
        graph_ops.append(
            {
                "op": "add_node",
                "node": {
                    "id": session_id,
                    "node_type": "temporal",
                    "content": f"Session {session.number}: {session.date}".rstrip(": "),
                    "metadata": {"session": session.number, "date": session.date},
                },
            }
        )
        previous: str | None = None
        for turn in session.turns:
            unit_of[turn.dia_id] = turn.dia_id
            turn_ops.append(
                {
                    "op": "add_node",
                    "node": {
                        "id": turn.dia_id,
                        "node_type": TURN_TYPE,
                        "content": render_turn(turn),
                        "metadata": {
                            "dia_id": turn.dia_id,
                            "session": session.number,
                            "date": session.date,
                        },
                    },
                }
            )
            graph_ops.append(_edge(turn.dia_id, session_id, "part_of"))
            if previous is not None:
                graph_ops.append(_edge(turn.dia_id, previous, "follows"))
            previous = turn.dia_id
    strong_ops = [
        {**op, "edge": {**op["edge"], "strength": STRONG_EDGE_STRENGTH}}
        if op["op"] == "add_edge"
        else op
        for op in graph_ops
    ]
    return {
        GRAPH_VARIANT: evalkit.StoreVariant(turn_ops + graph_ops, unit_of, TURN_TYPE),
        STRONG_VARIANT: evalkit.StoreVariant(turn_ops + strong_ops, dict(unit_of), TURN_TYPE),
        FLAT_VARIANT: evalkit.StoreVariant(list(turn_ops), dict(unit_of), TURN_TYPE),
    }


def _edge(source: str, target: str, relationship: str) -> dict[str, Any]:
    return {
        "op": "add_edge",
        "edge": {"source_id": source, "target_id": target, "relationship": relationship},
    }


def corpus_spec(conversation: Conversation) -> evalkit.CorpusSpec:
    units = [
        evalkit.Unit(turn.dia_id, render_turn(turn), f"D{turn.session}")
        for session in conversation.sessions
        for turn in session.turns
    ]
    return evalkit.CorpusSpec(
        name=conversation.sample_id,
        units=units,
        queries=conversation.queries,
        variants=store_variants(conversation),
        default_variant=GRAPH_VARIANT,
    )


def session_of(dia_id: str) -> str:
    """``"D3:7"`` -> ``"D3"``: the session-level unit."""
    return dia_id.split(":", 1)[0]


def question_groups(queries: Sequence[evalkit.Query]) -> dict[str, list[int]]:
    """Question indices per reported group: "1-4" (headline), then "1" ... "5"."""
    groups: dict[str, list[int]] = {HEADLINE: []}
    for category in sorted(CATEGORY_NAMES):
        groups[str(category)] = []
    for index, query in enumerate(queries):
        groups.setdefault(query.label, []).append(index)
        if query.label in ("1", "2", "3", "4"):
            groups[HEADLINE].append(index)
    return groups


def group_title(group: str) -> str:
    if group == HEADLINE:
        return "categories 1-4 pooled (headline)"
    return f"category {group} ({CATEGORY_NAMES.get(int(group), '?')})"


def report(result: Mapping[str, Any], systems: Sequence[str]) -> str:
    """All Markdown tables of one run."""
    summary = result["summary"]
    out = [
        f"LoCoMo `{result['data']}` — embedder `{result['embedder']}`, "
        f"{result['bootstrap']} bootstrap rounds (seed {result['seed']})",
        result["split_line"],
        "",
        "Cleaning: " + ", ".join(f"{k} {v}" for k, v in result["cleaning"].items()),
        "",
    ]
    head = summary[HEADLINE]
    columns = ["R@1", "R@5", "R@10", "R@20", "Hit@5", "MRR", "nDCG@10", "GroupHit@5"]
    out += [
        f"### {group_title(HEADLINE)}, n = {head[systems[0]]['n']}",
        "(GroupHit@5 = session-level Hit@5; seconds = store builds + all questions, "
        "embedding excluded)",
        "",
        evalkit.metric_table(
            head,
            systems,
            columns,
            ci_columns=("R@5", "MRR"),
            extra=lambda s: [f"{result['timing']['systems'][s]:.1f}"],
            extra_header=["seconds"],
        ),
        "",
        "### R@5 by category",
        "",
    ]
    groups = [g for g in summary if g != HEADLINE]
    rows = [[s, *(f"{evalkit.fmt(summary[g][s]['R@5']['mean'])}" for g in groups)] for s in systems]
    header = [
        "system",
        *(f"{g} {CATEGORY_NAMES[int(g)]} (n={summary[g][systems[0]]['n']})" for g in groups),
    ]
    out += [evalkit.markdown_table(header, rows), ""]
    all_columns = [
        *(f"R@{k}" for k in KS),
        *(f"Hit@{k}" for k in KS),
        "MRR",
        "nDCG@10",
        *(f"GroupHit@{k}" for k in SESSION_KS),
    ]
    for group in summary:
        out += [
            f"### {group_title(group)}, n = {summary[group][systems[0]]['n']}",
            "",
            evalkit.metric_table(summary[group], systems, all_columns, ci_columns=("R@5",)),
            "",
        ]
    for paired in result.get("paired", []):
        out += [
            f"### Paired bootstrap, `{paired['system']}` − `{paired['baseline']}`, "
            f"categories 1-4 (n = {head[systems[0]]['n']})",
            "",
            evalkit.markdown_table(
                ["metric", "difference", "95 % CI", "share of resamples ≤ 0"],
                [
                    [
                        name,
                        f"{v['diff']:+.3f}",
                        f"[{v['low']:+.3f}, {v['high']:+.3f}]",
                        f"{v['share_le_zero']:.3f}",
                    ]
                    for name, v in paired["metrics"].items()
                ],
            ),
            "",
        ]
    by_category = result.get("paired_by_category", {})
    if by_category:
        out += [
            "### Paired bootstrap of R@5 against `rank-bm25`, by category",
            "",
            evalkit.markdown_table(
                [
                    "system",
                    *(f"{g} {CATEGORY_NAMES[int(g)]}" for g in next(iter(by_category.values()))),
                ],
                [
                    [
                        system,
                        *(
                            f"{v['diff']:+.3f} [{v['low']:+.3f}, {v['high']:+.3f}]"
                            for v in cells.values()
                        ),
                    ]
                    for system, cells in by_category.items()
                ],
            ),
            "",
        ]
    replay = result["replay"]
    out += evalkit.pair_lines(result.get("pairs", []), "R@5")
    out.append(
        "Replay check (first questions re-asked after all): "
        + ", ".join(f"{s} {v['mismatches']}/{v['checked']}" for s, v in replay.items())
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
    out.append(
        f"Time: total {timing['total']:.1f} s, embedding {timing['embedding']:.1f} s, "
        f"loading {timing['load']:.2f} s"
    )
    return "\n".join(out)


def evaluate(
    data: Path,
    systems: Sequence[str],
    embedder: evalkit.CachingEmbedder,
    rounds: int,
    seed: int,
    replay: int,
    progress: bool = True,
    split: str = "all",
    pairs: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """Run the grid and aggregate it into a JSON-ready result."""
    started = time.perf_counter()
    conversations = load_locomo(data)
    loaded = time.perf_counter() - started
    corpora = [corpus_spec(c) for c in conversations]
    total = sum(len(c.queries) for c in corpora)
    for corpus in corpora:
        corpus.queries = evalkit.split_queries(corpus.queries, split)
    queries = [q for c in corpora for q in c.queries]
    runs = evalkit.run_grid(
        corpora,
        systems,
        embedder,
        DEPTH,
        replay=replay,
        progress=(lambda m: print(m, file=sys.stderr)) if progress else None,
    )
    scores = evalkit.score_runs(runs, queries, KS, session_of, SESSION_KS)
    names = evalkit.metric_names(KS, SESSION_KS)
    groups = question_groups(queries)
    summary = evalkit.summarise(scores, groups, names, rounds, seed)
    cleaning: dict[str, int] = {}
    for conversation in conversations:
        for key, value in conversation.cleaning.items():
            cleaning[key] = cleaning.get(key, 0) + value
    cleaning["questions_kept"] = len(queries)
    result: dict[str, Any] = {
        "benchmark": "locomo",
        "data": str(data),
        "split": split,
        "split_line": evalkit.split_line(split, len(queries), total),
        "embedder": embedder.name,
        "bootstrap": rounds,
        "seed": seed,
        "systems": list(systems),
        "conversations": [c.sample_id for c in conversations],
        "category_names": {str(k): v for k, v in CATEGORY_NAMES.items()},
        "cleaning": cleaning,
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
                    groups[HEADLINE],
                    row,
                    "rank-bm25",
                    ["R@1", "R@5", "R@10", "R@20", "MRR", "nDCG@10", "GroupHit@5"],
                    rounds,
                    seed,
                ),
            }
            for row in evalkit.rows_to_pair(summary[HEADLINE], systems, "R@5")
        ]
        # The same rows' R@5 against rank-bm25 within each category (the
        # multi-hop target is a per-category figure).
        result["paired_by_category"] = {
            entry["system"]: {
                group: evalkit.paired_table(
                    scores, groups[group], entry["system"], "rank-bm25", ["R@5"], rounds, seed
                )["R@5"]
                for group in groups
                if group != HEADLINE and groups[group]
            }
            for entry in result["paired"]
        }
    if pairs and rounds:
        result["pairs"] = evalkit.explicit_pairs(
            scores, groups, pairs, ["R@5", "MRR"], rounds, seed
        )
    result["timing"] = {
        "total": time.perf_counter() - started,
        "load": loaded,
        "embedding": embedder.seconds,
        "systems": {s: r.seconds for s, r in runs.items()},
    }
    return result


def postgres_databases(url: str) -> Any:
    """A callable giving the URL of a fresh database on `url`'s server per call (psycopg)."""
    import itertools

    import psycopg

    from graphonomous.store import is_postgres_url

    if not is_postgres_url(url):
        raise SystemExit(f"--db: expected :memory: or a postgresql:// URL, got {url!r}")
    counter = itertools.count()
    stamp = f"{int(time.time())}"

    def fresh() -> str:
        name = f"gx_locomo_{stamp}_{next(counter)}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        head, sep, tail = url.partition("?")
        base = head.rsplit("/", 1)[0]
        return f"{base}/{name}{sep}{tail}"

    return fresh


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (a list)")
    parser.add_argument("--json", type=Path, help="also write the full result as JSON here")
    parser.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help="comma-separated rows: rank-bm25, rrf-baseline, bm25, embed, hybrid, e0..e9-style "
        "presets, engine[key=value,...] (s.<field> = RetrievalSettings); prefix flat: (no "
        "edges) or strong: (edges at strength 1.0) for another store",
    )
    parser.add_argument("--embedder", choices=("hashing", "onnx", "static"), default="hashing")
    parser.add_argument(
        "--model-dir",
        help="ONNX model directory (tokenizer.json + model.onnx), or static table file",
    )
    parser.add_argument("--bootstrap", type=int, default=1000, help="rounds (0: no CIs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--replay", type=int, default=10, help="questions re-asked per conversation and row"
    )
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--split", choices=evalkit.SPLITS, default="all", help="question half (tune on dev only)"
    )
    parser.add_argument(
        "--pair", default="", help="extra paired bootstraps ROW>BASELINE,... (e.g. e6>e3)"
    )
    parser.add_argument(
        "--db",
        default=":memory:",
        help="where the engine rows' stores live: :memory: (SQLite, default) or a "
        "postgresql:// URL whose role may CREATE DATABASE (one fresh database per store)",
    )
    args = parser.parse_args(argv)
    if args.db != ":memory:":
        evalkit.NEW_DATABASE[:] = [postgres_databases(args.db)]
    systems = evalkit.check_systems(evalkit.split_systems(args.systems), VARIANTS)
    pairs = evalkit.parse_pairs(args.pair, systems)
    embedder = evalkit.make_embedder(args.embedder, args.model_dir)
    result = evaluate(
        args.data,
        systems,
        embedder,
        args.bootstrap,
        args.seed,
        args.replay,
        not args.quiet,
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
