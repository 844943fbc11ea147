"""How far can learning from outcomes lift unseen questions?  A replay bound.

`eval_learning.py` plays the agent loop for real; this script asks a narrower
question about its ceiling: with the shipped experience rule
(`retrieval.experience`: outcomes of *similar earlier queries* vouch for or
object to the nodes they used), how much could unseen-question R@5 rise if
the engine knew exactly which used turn answered each success?

Method (LoCoMo, one fresh store per conversation, the halves and directions
of `eval_learning`):

* Every question is retrieved once on the fresh store (limit `DEPTH`); its
  ranked turns and scores are kept.
* The played half's outcomes are derived from those fresh rankings (success
  when a gold turn is in the first five) and added to an `ExperienceIndex`
  with one of two credits: ``bundle`` (the five used turns, as the agent
  reports them) or ``oracle`` (a success names only its gold turns).
* Each measured question is re-ranked with `ExperienceIndex.evidence` and
  `experienced_score` (the shipped code and constants), and R@5 is compared
  with its fresh ranking (paired bootstrap 95 % CI).

This replay leaves out what real play adds (a played retrieval already feels
earlier outcomes; consolidation) and re-ranks only the first `DEPTH`
candidates, so ``bundle`` approximates `eval_learning`'s figure and
``oracle`` bounds what better credit assignment alone can add.  Outcomes
reach a measured question only through query similarity, so the bound is set
by how often a similar played question shares the measured one's answer.

Run (data read in place):

    python benchmarks/learning_bound.py --data ../shared/data/locomo/locomo-dev.json \\
        [--efforts 0,3] [--gain 0.25] [--penalty 0.5]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_learning
import eval_locomo
import evalkit

from graphonomous.index.bm25 import Bm25Index, bm25_tokens
from graphonomous.learning.outcomes import Q_REWARDS
from graphonomous.retrieval.experience import (
    ExperienceIndex,
    Lexical,
    Outcome,
    experienced_score,
    unrelated_similarity,
)
from graphonomous.retrieval.settings import EXPERIENCE_GAIN, EXPERIENCE_PENALTY

# Candidates re-ranked per measured question (the engine's pool is of this order).
DEPTH: Final = 100
CREDITS: Final = ("bundle", "oracle")

Ranking = list[tuple[str, float]]


def fresh_rankings(store: eval_learning.Store, texts: Sequence[str], effort: int) -> list[Ranking]:
    """Each question's turns (first occurrence) and scores on the fresh store."""
    rankings = []
    for text in texts:
        answer = store.graph.retrieve_context(text, limit=DEPTH, effort=effort)
        seen: dict[str, float] = {}
        for row in answer["results"]:
            unit = store.unit_of.get(row["node_id"])
            if unit is not None and unit not in seen:
                seen[unit] = float(row["score"])
        rankings.append(list(seen.items()))
    return rankings


def played_index(
    played: Sequence[evalkit.Query], rankings: dict[str, Ranking], credit: str
) -> ExperienceIndex:
    """The played half's outcomes, credited to the used turns or (oracle) the gold ones."""
    index = ExperienceIndex()
    for query in played:
        used = [unit for unit, _ in rankings[query.qid][: eval_learning.USED_TURNS]]
        if not used:
            continue
        hits = [unit for unit in used if unit in query.gold]
        status = "success" if hits else "failure"
        causes = hits if credit == "oracle" and hits else used
        index.add(query.qid, Outcome(query.text, Q_REWARDS[status], tuple(causes)))
    return index


def unit_view(
    text_index: Bm25Index, node_of: dict[str, str], text: str, units: Sequence[str]
) -> Lexical:
    """The engine's keyword view of a question among its ranked turns (`Lexical.of`),
    addressed by turn id."""
    view = Lexical.of(text_index, bm25_tokens(text), [node_of.get(u, u) for u in units])

    def shared(unit: str, terms: frozenset[str]) -> frozenset[str]:
        return text_index.shared_terms(node_of.get(unit, unit), terms)

    return Lexical(view.query_terms, view.terms_of, shared, view.idf)


def reranked(
    ranking: Ranking,
    vector: list[float],
    index: ExperienceIndex,
    embedder: Any,
    gain: float,
    penalty: float,
    lexical: Lexical,
) -> list[str]:
    """The ranking after experience (score desc rounded to 6 places, then id, as the engine)."""
    scores = dict(ranking)
    found = index.evidence(
        vector,
        embedder.dimensions,
        scores,
        embedder.embed,
        unrelated_similarity(embedder.name),
        lexical,
    )
    best = max(scores.values(), default=0.0)
    for unit, evidence in found.items():
        scores[unit] = experienced_score(scores[unit], evidence, gain, penalty, best)
    return sorted(scores, key=lambda unit: (-round(scores[unit], 6), unit))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (read in place)")
    parser.add_argument("--efforts", default="0,3")
    parser.add_argument("--gain", type=float, default=EXPERIENCE_GAIN)
    parser.add_argument("--penalty", type=float, default=EXPERIENCE_PENALTY)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args(argv)
    embedder = evalkit.make_embedder("hashing", None)
    conversations = eval_locomo.load_locomo(args.data)
    print("| effort | credit | n | R@5 fresh | R@5 after | diff [95 % CI] |")
    print("|---|---|---|---|---|---|")
    for effort in (int(part) for part in args.efforts.split(",") if part):
        before: dict[str, list[float]] = {credit: [] for credit in CREDITS}
        after: dict[str, list[float]] = {credit: [] for credit in CREDITS}
        for conversation in conversations:
            store = eval_learning.open_store(conversation, embedder)
            texts = [query.text for query in conversation.queries]
            rankings = dict(
                zip(
                    (q.qid for q in conversation.queries),
                    fresh_rankings(store, texts, effort),
                    strict=True,
                )
            )
            text_index = store.graph.text_index()
            store.graph.close()
            vectors = dict(
                zip((q.qid for q in conversation.queries), embedder.embed(texts), strict=True)
            )
            halves: dict[str, list[evalkit.Query]] = {"A": [], "B": []}
            for query in conversation.queries:
                halves[eval_learning.half_of(query.text)].append(query)
            for played, measured in eval_learning.DIRECTIONS:
                for credit in CREDITS:
                    index = played_index(halves[played], rankings, credit)
                    for query in halves[measured]:
                        if query.label not in eval_learning.HEADLINE_CATEGORIES:
                            continue
                        ranking = rankings[query.qid]
                        fresh = [unit for unit, _ in ranking]
                        lexical = unit_view(text_index, store.node_of, query.text, fresh)
                        moved = reranked(
                            ranking,
                            vectors[query.qid],
                            index,
                            embedder,
                            args.gain,
                            args.penalty,
                            lexical,
                        )
                        before[credit].append(evalkit.recall_at(fresh, query.gold, 5))
                        after[credit].append(evalkit.recall_at(moved, query.gold, 5))
        for credit in CREDITS:
            diffs = [a - b for a, b in zip(after[credit], before[credit], strict=True)]
            samples = evalkit.bootstrap_samples(len(diffs), args.bootstrap, 0)
            low, high = evalkit.bootstrap_ci(diffs, samples)
            print(
                f"| {effort} | {credit} | {len(diffs)} | {evalkit.mean(before[credit]):.3f} | "
                f"{evalkit.mean(after[credit]):.3f} | {evalkit.mean(diffs):+.3f} "
                f"[{low:+.3f}, {high:+.3f}] |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
