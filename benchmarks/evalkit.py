"""Shared harness of the retrieval-quality benchmarks (eval_locomo.py, eval_multihop.py).

What is here, and nothing else: the scoring rules (dedupe in rank order,
then cut at k; recall, hit, reciprocal rank, nDCG), seeded bootstrap
confidence intervals (per system and paired between systems), Reciprocal
Rank Fusion for the baseline row, the *rankers* compared (the `rank-bm25`
baseline, the engine's BM25 and embedding channels, and the engine's
`retrieve_context` at any arguments), and Markdown tables.  The data
loaders live in the two scripts.  No data is read or written here.

At run time only the standard library and graphonomous are needed;
`rank-bm25` is imported only when its baseline row is asked for.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

# Same tokenisation for every BM25 in every comparison (design note).
WORD_PATTERN: Final = re.compile(r"\w+")
RRF_K: Final = 60
# Each list fused by the baseline RRF row is cut at this depth.
FUSION_DEPTH: Final = 100
NDCG_K: Final = 10
CI_LEVEL: Final = 0.95


# The rows every benchmark reports: baselines, single channels, hybrid, engine efforts.
DEFAULT_SYSTEMS: Final = (
    "rank-bm25",
    "rrf-baseline",
    "bm25",
    "embed",
    "hybrid",
    "e0",
    "e3",
    "e6",
    "e9",
)


def word_tokens(text: str) -> list[str]:
    """Lower-cased ``\\w+`` runs of ``text`` (the BM25 tokenisation of the design note)."""
    return WORD_PATTERN.findall(text.lower())


# ---------------------------------------------------------------------------
# Units, queries, rankings
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """One retrievable item: ``uid`` is what gold labels name, ``text`` what is indexed."""

    uid: str
    text: str
    group: str = ""  # coarser unit for group-level hits (LoCoMo: the session "D3")


@dataclass(frozen=True)
class Query:
    """One scored question: its gold unit ids and the label it is reported under."""

    qid: str
    text: str
    gold: tuple[str, ...]
    label: str


# Dev/test halves of every dataset: a question is "dev" when the first byte
# of sha256(question id) is even, else "test".  Constants are tuned on dev
# only and confirmed on test (SPEC "Retrieval quality"); "all" is both.
SPLITS: Final = ("all", "dev", "test")


def split_of(qid: str) -> str:
    """ "dev" or "test": the half a question id falls in (stable across runs and machines)."""
    return "dev" if hashlib.sha256(qid.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def split_queries(queries: Sequence[Query], split: str) -> list[Query]:
    """The questions of one half (`SPLITS`), in their original order."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
    return [q for q in queries if split == "all" or split_of(q.qid) == split]


def split_line(split: str, kept: int, total: int) -> str:
    """The line every benchmark prints about the half it scored."""
    rule = "sha256(question id)[0] even = dev, odd = test"
    return f"split: {split} ({kept} of {total} questions; {rule})"


def dedupe_cut(ids: Iterable[str | None], k: int) -> list[str]:
    """The first ``k`` distinct ids in rank order, skipping ``None`` (not a unit).

    Input: ids best first, where results that map to no unit (e.g. a
    session node) are ``None``.  Output: at most ``k`` ids.  The cut comes
    after de-duplication, so graph expansion can never place more than k
    units in the top k.  Complexity: O(len(ids)).
    """
    seen: set[str] = set()
    out: list[str] = []
    for uid in ids:
        if uid is None or uid in seen:
            continue
        seen.add(uid)
        out.append(uid)
        if len(out) == k:
            break
    return out


# ---------------------------------------------------------------------------
# Metrics (binary relevance; `ranked` is already deduplicated)
# ---------------------------------------------------------------------------


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """|gold ∩ top-k| / |gold|; 0.0 for empty gold."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def hit_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 if any gold id is in the top k, else 0.0."""
    return 1.0 if set(gold).intersection(ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float:
    """1 / (1-based rank of the first gold id), 0.0 if none is ranked."""
    wanted = set(gold)
    for position, uid in enumerate(ranked, start=1):
        if uid in wanted:
            return 1.0 / position
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Binary-relevance nDCG@k (Järvelin & Kekäläinen 2002), gains 1/log2(rank+1).

    The ideal ranking puts min(|gold|, k) relevant ids first.  0.0 for empty gold.
    """
    wanted = set(gold)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, uid in enumerate(ranked[:k]) if uid in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(wanted), k)))
    return dcg / ideal


def metric_names(ks: Sequence[int], group_ks: Sequence[int] = ()) -> list[str]:
    """Column order of `score_query`'s dict."""
    names = [f"R@{k}" for k in ks] + [f"Hit@{k}" for k in ks] + ["MRR", f"nDCG@{NDCG_K}"]
    return names + [f"GroupHit@{k}" for k in group_ks]


def score_query(
    ranked: Sequence[str],
    gold: Sequence[str],
    ks: Sequence[int],
    group_of: Callable[[str], str] | None = None,
    group_ks: Sequence[int] = (),
) -> dict[str, float]:
    """Every metric of one question.

    Input: the deduplicated ranking (depth >= max k), the gold ids, the cut-offs,
    and optionally ``group_of`` (unit id -> group id) for group-level Hit@k:
    a hit when a gold unit's group is the group of one of the top-k units.
    Output: ``{metric name: value}`` in `metric_names` order.  MRR is
    computed over the ranking as given (its depth is the run's depth).
    Complexity: O(depth + |gold|) per metric.
    """
    row = {f"R@{k}": recall_at(ranked, gold, k) for k in ks}
    row.update({f"Hit@{k}": hit_at(ranked, gold, k) for k in ks})
    row["MRR"] = reciprocal_rank(ranked, gold)
    row[f"nDCG@{NDCG_K}"] = ndcg_at(ranked, gold, NDCG_K)
    if group_of is not None:
        gold_groups = {group_of(uid) for uid in gold}
        for k in group_ks:
            row[f"GroupHit@{k}"] = hit_at([group_of(uid) for uid in ranked[:k]], gold_groups, k)
    return row


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; 0.0 for no values (an empty category reports zeros, with n = 0)."""
    return math.fsum(values) / len(values) if values else 0.0


# ---------------------------------------------------------------------------
# Bootstrap confidence intervals (Efron & Tibshirani 1993, percentile method)
# ---------------------------------------------------------------------------


def bootstrap_samples(n: int, rounds: int, seed: int) -> list[list[int]]:
    """``rounds`` resamples of ``range(n)`` with replacement, from ``random.Random(seed)``.

    Using the same resamples for every system makes differences *paired*.
    Complexity: O(rounds * n).
    """
    rng = random.Random(seed)
    return [[rng.randrange(n) for _ in range(n)] for _ in range(rounds)] if n else []


def percentile_interval(
    statistics: Sequence[float], level: float = CI_LEVEL
) -> tuple[float, float]:
    """The central ``level`` interval of bootstrap statistics.

    With the B values sorted, lower = value at index floor(B * (1 - level) / 2),
    upper = value at index ceil(B * (1 + level) / 2) - 1 (clamped to the list).
    """
    ordered = sorted(statistics)
    if not ordered:
        return (0.0, 0.0)
    tail = (1.0 - level) / 2.0
    low = min(len(ordered) - 1, math.floor(len(ordered) * tail))
    high = max(0, min(len(ordered) - 1, math.ceil(len(ordered) * (1.0 - tail)) - 1))
    return (ordered[low], ordered[high])


def bootstrap_ci(values: Sequence[float], samples: Sequence[Sequence[int]]) -> tuple[float, float]:
    """95 % percentile interval of the mean of ``values`` over the given resamples."""
    if not samples:
        return (mean(values), mean(values))
    means = [math.fsum(values[i] for i in sample) / len(sample) for sample in samples]
    return percentile_interval(means)


def paired_difference(
    a: Sequence[float], b: Sequence[float], samples: Sequence[Sequence[int]]
) -> dict[str, float]:
    """Mean of a - b per question with its paired bootstrap interval.

    Output: ``{"diff", "low", "high", "share_le_zero"}`` where
    ``share_le_zero`` is the fraction of resamples whose mean difference is
    <= 0 (a one-sided bootstrap p-value for "a beats b").
    """
    if len(a) != len(b):
        raise ValueError("paired values must have equal length")
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    means = [math.fsum(diffs[i] for i in sample) / len(sample) for sample in samples]
    low, high = percentile_interval(means) if means else (mean(diffs), mean(diffs))
    share = sum(1 for m in means if m <= 0.0) / len(means) if means else 0.0
    return {"diff": mean(diffs), "low": low, "high": high, "share_le_zero": share}


# ---------------------------------------------------------------------------
# Rankers
# ---------------------------------------------------------------------------


class Ranker(Protocol):
    """Something that ranks the units of one corpus for a query."""

    name: str

    def rank(self, query: str, depth: int) -> list[str]:
        """Unit ids, best first, distinct, at most ``depth``."""
        ...


def rrf_fuse(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

    score(d) = sum over lists containing d of 1 / (k + rank), rank 1-based.
    Output: ids by descending score, ties by id.  Complexity: O(total length · log).
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        for position, uid in enumerate(ranking, start=1):
            scores[uid] = scores.get(uid, 0.0) + 1.0 / (k + position)
    return sorted(scores, key=lambda uid: (-scores[uid], uid))


class RankBm25Ranker:
    """The baseline: `rank_bm25.BM25Okapi` (k1 = 1.5, b = 0.75, ε = 0.25) on `word_tokens`.

    Units sharing no token with the query are not ranked (their score
    carries no evidence); ties keep corpus order.
    """

    name = "rank-bm25"

    def __init__(self, units: Sequence[Unit]) -> None:
        try:
            from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]
        except ImportError as exc:  # only this baseline row needs it
            raise RuntimeError("the rank-bm25 row needs: pip install rank-bm25") from exc
        self._uids = [u.uid for u in units]
        tokenised = [word_tokens(u.text) for u in units]
        self._bm25 = BM25Okapi(tokenised)
        self._postings: dict[str, set[int]] = {}
        for index, tokens in enumerate(tokenised):
            for token in tokens:
                self._postings.setdefault(token, set()).add(index)

    def rank(self, query: str, depth: int) -> list[str]:
        tokens = word_tokens(query)
        candidates: set[int] = set()
        for token in tokens:
            candidates |= self._postings.get(token, set())
        if not candidates:
            return []
        scores = self._bm25.get_scores(tokens)
        order = sorted(candidates, key=lambda i: (-float(scores[i]), i))
        return [self._uids[i] for i in order[:depth]]


class FusedRanker:
    """RRF of other rankers' lists, each cut at `FUSION_DEPTH` (the baseline RRF row)."""

    def __init__(self, name: str, parts: Sequence[Ranker]) -> None:
        self.name = name
        self._parts = list(parts)

    def rank(self, query: str, depth: int) -> list[str]:
        lists = [part.rank(query, max(depth, FUSION_DEPTH)) for part in self._parts]
        return rrf_fuse(lists)[:depth]


class CachingEmbedder:
    """Wraps an embedder and remembers every text's vector.

    Every store of a run is built from the same texts and asked the same
    questions; caching makes that embedding work happen once (a real model
    costs seconds per hundred texts).  Same ``name``/``dimensions`` as the
    wrapped embedder, so stored vectors are labelled as that model's.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.dimensions: int = inner.dimensions
        self._cache: dict[str, list[float]] = {}
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = sorted({t for t in texts if t not in self._cache})
        if missing:
            started = time.perf_counter()
            self._cache.update(zip(missing, self.inner.embed(missing), strict=True))
            self.seconds += time.perf_counter() - started
        return [list(self._cache[t]) for t in texts]


def make_embedder(kind: str, model_dir: str | None) -> CachingEmbedder:
    """The (cached) embedder shared by the dense baseline and the engine.

    ``"hashing"`` (the default, no dependencies) or ``"onnx"`` with the
    directory of an ONNX export (`graphonomous.embed.onnx.OnnxEmbedder`), or
    ``"static"`` with a distilled table file as `model_dir`
    (`graphonomous.embed.static.StaticEmbedder`).
    """
    if kind == "static" and model_dir:
        from graphonomous.embed import get_embedder

        return CachingEmbedder(get_embedder("static:" + model_dir))
    if kind == "hashing":
        from graphonomous.embed import get_embedder

        return CachingEmbedder(get_embedder("hashing"))
    if kind != "onnx" or not model_dir:
        raise ValueError(
            "embedder must be 'hashing', 'onnx' with a model directory "
            "or 'static' with a table file"
        )
    from graphonomous.embed.onnx import OnnxEmbedder

    return CachingEmbedder(OnnxEmbedder(model_dir))


@dataclass
class EngineCorpus:
    """A fresh in-memory Graphonomous store holding one corpus.

    ``unit_of`` maps node ids to unit ids; nodes missing from it (LoCoMo
    session nodes) are context, never answers.  When every unit node has
    type ``unit_type`` (and no other node has it), rankers pass it as the
    engine's ``node_type`` filter, so exactly ``depth`` results are asked
    for; otherwise ``extra`` (the number of non-unit nodes) is added to the
    limit so that ``depth`` units still come back.
    """

    graph: Any
    unit_of: dict[str, str]
    extra: int
    unit_type: str | None = None
    build_seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)

    def close(self) -> None:
        self.graph.close()


# Where each engine corpus lives: a fresh ":memory:" SQLite store unless a driver sets
# this to a callable returning a fresh database (eval_locomo.py --db postgresql://…).
NEW_DATABASE: list[Callable[[], str]] = []


def build_engine_corpus(
    embedder: Any,
    operations: Sequence[Mapping[str, Any]],
    unit_of: Mapping[str, str],
    unit_type: str | None = None,
) -> EngineCorpus:
    """Open ``Graphonomous(":memory:")`` and apply ``operations`` as one batch.

    Input: an embedder (shared, cached), the add_node/add_edge operations,
    and the node-id -> unit-id map.  Output: the `EngineCorpus`.
    """
    from graphonomous.api import Graphonomous

    started = time.perf_counter()
    graph = Graphonomous(db=NEW_DATABASE[0]() if NEW_DATABASE else ":memory:", embedder=embedder)
    result = graph.apply_batch(list(operations))
    graph.vector_index()  # load now so build time is not charged to the first query
    nodes = len(result["added_node_ids"])
    return EngineCorpus(
        graph=graph,
        unit_of=dict(unit_of),
        extra=0 if unit_type is not None else nodes - len(unit_of),
        unit_type=unit_type,
        build_seconds=time.perf_counter() - started,
        counts={"nodes": nodes, "edges": len(result["added_edge_ids"])},
    )


class EmbeddingRanker:
    """The engine's embedding channel alone: `Graphonomous.similarity_search` (exact cosine)."""

    name = "embed"

    def __init__(self, corpus: EngineCorpus) -> None:
        self._corpus = corpus

    def rank(self, query: str, depth: int) -> list[str]:
        found = self._corpus.graph.similarity_search(
            query, limit=depth + self._corpus.extra, node_type=self._corpus.unit_type
        )
        return dedupe_cut((self._corpus.unit_of.get(r["id"]) for r in found["results"]), depth)


class EngineRanker:
    """`Graphonomous.retrieve_context` mapped to units.

    Called with ``limit = depth`` (+ ``extra``) and ``node_type = unit_type``
    unless the row's arguments say otherwise (``engine[limit=5]`` measures
    what a caller asking for 5 results gets; deeper ranks are then empty).
    ``sources`` counts the result ``source`` ("seed", "bm25", "neighbor") of
    every unit that made it into a ranking: how often graph stages placed a
    unit in the top ``depth``.
    """

    def __init__(self, name: str, corpus: EngineCorpus, arguments: Mapping[str, Any]) -> None:
        self.name = name
        self._corpus = corpus
        self._arguments = dict(arguments)
        self.sources: dict[str, int] = {}
        if "settings" in self._arguments:
            from graphonomous.retrieval.settings import with_settings

            self._arguments["settings"] = with_settings(**self._arguments["settings"])

    def rank(self, query: str, depth: int) -> list[str]:
        arguments = {
            "limit": depth + self._corpus.extra,
            "node_type": self._corpus.unit_type,
            **self._arguments,
        }
        answer = self._corpus.graph.retrieve_context(query, **arguments)
        source_of: dict[str, str] = {}
        for result in answer["results"]:
            unit = self._corpus.unit_of.get(result["node_id"])
            if unit is not None:
                source_of.setdefault(unit, result["channel"])
        ranked = dedupe_cut(
            (self._corpus.unit_of.get(r["node_id"]) for r in answer["results"]), depth
        )
        for unit in ranked:
            self.sources[source_of[unit]] = self.sources.get(source_of[unit], 0) + 1
        return ranked


# ---------------------------------------------------------------------------
# System specifications: row name -> how to build its ranker
# ---------------------------------------------------------------------------

# Named rows; "engine[key=value,...]" gives any other retrieve_context arguments.
ENGINE_PRESETS: Final[Mapping[str, Mapping[str, Any]]] = {
    "hybrid": {"effort": 0, "expansion_hops": 0},
    "e0": {"effort": 0},
    "e3": {"effort": 3},
    "e6": {"effort": 6},
    "e9": {"effort": 9},
}
COMPONENT_SYSTEMS: Final = ("rank-bm25", "rrf-baseline", "bm25", "embed")


def parse_engine_spec(spec: str) -> dict[str, Any] | None:
    """retrieve_context arguments of an engine row, or None if ``spec`` is not one.

    ``"e3"`` -> {"effort": 3}; ``"engine[effort=3,neighbors_per_node=10]"`` ->
    those arguments (ints, floats, ``none``/``true``/``false`` parsed); keys
    ``s.<field>`` go to ``{"settings": {field: value}}`` (`RetrievalSettings`
    overrides, e.g. ``s.hop_decay=1.0``).
    """
    if spec in ENGINE_PRESETS:
        return dict(ENGINE_PRESETS[spec])
    match = re.fullmatch(r"engine\[(.*)\]", spec)
    if match is None:
        return None
    arguments: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in match.group(1).split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or key == "s.":
            raise ValueError(f"bad engine argument {item!r} in {spec!r}")
        if key.startswith("s."):
            settings[key[2:]] = _parse_value(raw.strip())
        else:
            arguments[key] = _parse_value(raw.strip())
    if settings:
        arguments["settings"] = settings
    return arguments


def _parse_value(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def split_systems(text: str) -> list[str]:
    """Split a ``--systems`` value on commas outside ``[...]`` (engine arguments have commas)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "["
        depth -= char == "]"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p for p in (p.strip() for p in parts) if p]


def check_systems(specs: Sequence[str], variants: Sequence[str] = ()) -> list[str]:
    """Validate row names (raises ValueError naming the bad one); returns them in order.

    A row may be prefixed ``<variant>:`` with one of ``variants``.
    """
    for spec in specs:
        prefix, sep, rest = spec.partition(":")
        row = rest if sep and prefix in variants else spec
        if row not in COMPONENT_SYSTEMS and parse_engine_spec(row) is None:
            raise ValueError(
                f"unknown system {spec!r}; expected one of "
                f"{', '.join((*COMPONENT_SYSTEMS, *ENGINE_PRESETS))} or engine[key=value,...]"
            )
    return list(specs)


# ---------------------------------------------------------------------------
# Running and aggregating
# ---------------------------------------------------------------------------


@dataclass
class SystemRun:
    """Per-question rankings of one system, in question order, with its timing."""

    name: str
    rankings: list[list[str]] = field(default_factory=list)
    seconds: float = 0.0
    replay_mismatches: int = 0
    replay_checked: int = 0
    sources: dict[str, int] = field(default_factory=dict)


def run_facts(runs: Mapping[str, SystemRun]) -> dict[str, Any]:
    """The per-system replay checks and result sources that every report carries."""
    return {
        "replay": {
            s: {"checked": r.replay_checked, "mismatches": r.replay_mismatches}
            for s, r in runs.items()
            if r.replay_checked
        },
        "sources": {s: dict(sorted(r.sources.items())) for s, r in runs.items() if r.sources},
    }


def run_ranker(
    ranker: Ranker, queries: Sequence[Query], depth: int, run: SystemRun, replay: int = 0
) -> None:
    """Rank every query (appending to ``run``), then re-ask the first ``replay`` ones.

    The replay detects state that answering changes and that feeds back
    into ranking (access counts, co-activation): a mismatch means the order
    of questions influenced results.
    """
    started = time.perf_counter()
    first = [ranker.rank(q.text, depth) for q in queries]
    run.seconds += time.perf_counter() - started
    run.rankings.extend(first)
    for source, count in getattr(ranker, "sources", {}).items():
        run.sources[source] = run.sources.get(source, 0) + count
    for query, ranking in list(zip(queries, first, strict=True))[:replay]:
        run.replay_checked += 1
        if ranker.rank(query.text, depth) != ranking:
            run.replay_mismatches += 1


def aggregate(
    rows: Sequence[Mapping[str, float]],
    indices: Sequence[int],
    names: Sequence[str],
    rounds: int,
    seed: int,
) -> dict[str, Any]:
    """Means (and bootstrap CIs when rounds > 0) of the questions at ``indices``."""
    samples = bootstrap_samples(len(indices), rounds, seed)
    out: dict[str, Any] = {"n": len(indices)}
    for name in names:
        values = [rows[i][name] for i in indices]
        entry: dict[str, Any] = {"mean": mean(values)}
        if rounds:
            entry["ci"] = list(bootstrap_ci(values, samples))
        out[name] = entry
    return out


def fmt(value: float) -> str:
    return f"{value:.3f}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def with_ci(entry: Mapping[str, Any]) -> str:
    """``0.453 [0.421, 0.486]`` (or just the mean without a CI)."""
    if "ci" in entry:
        low, high = entry["ci"]
        return f"{fmt(entry['mean'])} [{fmt(low)}, {fmt(high)}]"
    return fmt(entry["mean"])


# ---------------------------------------------------------------------------
# The grid: corpora x systems
# ---------------------------------------------------------------------------


@dataclass
class StoreVariant:
    """How to fill a store for one corpus: batch operations and node-id -> unit-id map."""

    operations: list[dict[str, Any]]
    unit_of: dict[str, str]
    unit_type: str | None = None


@dataclass
class CorpusSpec:
    """One corpus (a LoCoMo conversation, a pooled multi-hop corpus) and its questions.

    ``variants`` are alternative stores of the same units (e.g. with and
    without graph edges); a system named ``"<variant>:<row>"`` runs on that
    variant, any other on ``default_variant``.
    """

    name: str
    units: list[Unit]
    queries: list[Query]
    variants: dict[str, StoreVariant]
    default_variant: str


class OurBm25Ranker:
    """The engine's BM25 channel alone: the store's `Bm25Index` (``text_index()``).

    It indexes every node (as the engine's stage 1 does, so idf counts
    session nodes too); the search is restricted to unit nodes.
    """

    name = "bm25"

    def __init__(self, corpus: EngineCorpus) -> None:
        self._corpus = corpus
        self._index = corpus.graph.text_index()
        self._allow = corpus.unit_of.__contains__

    def rank(self, query: str, depth: int) -> list[str]:
        hits = self._index.search(query, depth, allow=self._allow)
        return dedupe_cut((self._corpus.unit_of.get(doc_id) for doc_id, _ in hits), depth)


def split_variant(spec: str, corpus: CorpusSpec) -> tuple[str, str]:
    """(variant, row) of a system name such as ``"linked:e9"`` or ``"e9"``."""
    variant, sep, row = spec.partition(":")
    if sep and variant in corpus.variants:
        return variant, row
    return corpus.default_variant, spec


def make_ranker(spec: str, corpus: CorpusSpec, embedder: Any, opened: list[EngineCorpus]) -> Ranker:
    """Build the ranker of row ``spec`` on ``corpus``; every store it opens is fresh.

    Stores opened are appended to ``opened`` so the caller closes them.
    """
    variant_name, row = split_variant(spec, corpus)

    def fresh_store() -> EngineCorpus:
        variant = corpus.variants[variant_name]
        store = build_engine_corpus(
            embedder, variant.operations, variant.unit_of, variant.unit_type
        )
        opened.append(store)
        return store

    if row == "rank-bm25":
        return RankBm25Ranker(corpus.units)
    if row == "rrf-baseline":
        return FusedRanker(spec, [RankBm25Ranker(corpus.units), EmbeddingRanker(fresh_store())])
    if row == "bm25":
        return OurBm25Ranker(fresh_store())
    if row == "embed":
        return EmbeddingRanker(fresh_store())
    arguments = parse_engine_spec(row)
    if arguments is None:
        raise ValueError(f"unknown system {spec!r}")
    return EngineRanker(spec, fresh_store(), arguments)


RankerFactory = Callable[[str, CorpusSpec, Any, list[EngineCorpus]], "Ranker | None"]


def warm_up(embedder: Any, corpus: CorpusSpec) -> None:
    """Embed every node text and question of a corpus once, before any system is timed.

    With a `CachingEmbedder` this moves all embedding work out of the
    per-system timings (it is reported separately as ``embedder.seconds``).
    """
    texts = {q.text for q in corpus.queries}
    for variant in corpus.variants.values():
        texts.update(
            op["node"]["content"] for op in variant.operations if op.get("op") == "add_node"
        )
    embedder.embed(sorted(texts))


def run_grid(
    corpora: Sequence[CorpusSpec],
    systems: Sequence[str],
    embedder: Any,
    depth: int,
    replay: int = 0,
    progress: Callable[[str], None] | None = None,
    factory: RankerFactory | None = None,
) -> dict[str, SystemRun]:
    """Rank every question of every corpus with every system.

    Each (corpus, system) pair gets its own freshly built store, so no
    system sees state left by another, and no corpus sees another's units.
    Rankings are kept in corpus order, then question order.  ``factory``
    may build extra kinds of rows (it returns None for rows it does not know).
    """
    runs = {spec: SystemRun(spec) for spec in systems}
    for corpus in corpora:
        warm_up(embedder, corpus)
        for spec in systems:
            opened: list[EngineCorpus] = []
            started = time.perf_counter()
            custom = factory(spec, corpus, embedder, opened) if factory else None
            ranker = custom if custom is not None else make_ranker(spec, corpus, embedder, opened)
            runs[spec].seconds += time.perf_counter() - started  # build time counts too
            run_ranker(ranker, corpus.queries, depth, runs[spec], replay if opened else 0)
            for store in opened:
                store.close()
        if progress is not None:
            progress(f"{corpus.name}: {len(corpus.queries)} questions done")
    return runs


def score_runs(
    runs: Mapping[str, SystemRun],
    queries: Sequence[Query],
    ks: Sequence[int],
    group_of: Callable[[str], str] | None = None,
    group_ks: Sequence[int] = (),
) -> dict[str, list[dict[str, float]]]:
    """Per system, one metric dict per question (same order as ``queries``)."""
    return {
        name: [
            score_query(ranking, query.gold, ks, group_of, group_ks)
            for ranking, query in zip(run.rankings, queries, strict=True)
        ]
        for name, run in runs.items()
    }


def summarise(
    scores: Mapping[str, Sequence[Mapping[str, float]]],
    groups: Mapping[str, Sequence[int]],
    names: Sequence[str],
    rounds: int,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """``{group: {system: aggregate}}``; every system of a group uses the same resamples."""
    return {
        group: {
            system: aggregate(rows, indices, names, rounds, seed) for system, rows in scores.items()
        }
        for group, indices in groups.items()
    }


def paired_table(
    scores: Mapping[str, Sequence[Mapping[str, float]]],
    indices: Sequence[int],
    system: str,
    baseline: str,
    names: Sequence[str],
    rounds: int,
    seed: int,
) -> dict[str, dict[str, float]]:
    """Per metric: mean(system - baseline) on the questions at ``indices``, paired CI."""
    samples = bootstrap_samples(len(indices), rounds, seed)
    return {
        name: paired_difference(
            [scores[system][i][name] for i in indices],
            [scores[baseline][i][name] for i in indices],
            samples,
        )
        for name in names
    }


BASELINE_ROWS: Final = ("rank-bm25", "rrf-baseline")


def parse_pairs(text: str, systems: Sequence[str]) -> list[tuple[str, str]]:
    """``"e6:e3,e9:e3"`` -> [("e6", "e3"), ("e9", "e3")]; both rows must be among `systems`."""
    pairs = []
    for item in filter(None, (part.strip() for part in split_systems(text))):
        row, sep, baseline = item.rpartition(">")
        if not sep or row not in systems or baseline not in systems:
            raise ValueError(f"--pair wants ROW>BASELINE with both rows in --systems; got {item!r}")
        pairs.append((row, baseline))
    return pairs


def explicit_pairs(
    scores: Mapping[str, Sequence[Mapping[str, float]]],
    groups: Mapping[str, Sequence[int]],
    pairs: Sequence[tuple[str, str]],
    names: Sequence[str],
    rounds: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Paired bootstraps of each (row, baseline) in every question group (`--pair`)."""
    return [
        {
            "system": row,
            "baseline": baseline,
            "groups": {
                group: paired_table(scores, indices, row, baseline, names, rounds, seed)
                for group, indices in groups.items()
                if indices
            },
        }
        for row, baseline in pairs
    ]


def pair_lines(pairs: Sequence[Mapping[str, Any]], metric: str) -> list[str]:
    """One line per explicit pair: the metric's paired difference and CI in every group."""
    return [
        f"Paired `{p['system']}` − `{p['baseline']}` {metric}: "
        + "; ".join(
            f"{group} {v[metric]['diff']:+.3f} [{v[metric]['low']:+.3f}, {v[metric]['high']:+.3f}]"
            for group, v in p["groups"].items()
        )
        for p in pairs
    ]


def rows_to_pair(summary: Mapping[str, Any], systems: Sequence[str], metric: str) -> list[str]:
    """Rows compared with ``rank-bm25``: the best `retrieve_context` row, then the best other
    non-baseline row (engine channels alone) when it differs.  Ties go to the first listed.

    Choosing the best row on the same questions favours it; the paired CI
    does not correct for that selection.
    """
    chosen = []
    for wanted in (True, False):
        rows = [
            s
            for s in systems
            if s not in BASELINE_ROWS
            and (parse_engine_spec(s.rpartition(":")[2]) is not None) == wanted
        ]
        if rows:
            chosen.append(max(rows, key=lambda s: summary[s][metric]["mean"]))
    return chosen


def metric_table(
    summary: Mapping[str, Mapping[str, Any]],
    systems: Sequence[str],
    columns: Sequence[str],
    ci_columns: Sequence[str] = (),
    extra: Callable[[str], Sequence[str]] | None = None,
    extra_header: Sequence[str] = (),
) -> str:
    """Rows = systems, columns = metrics of one group's summary (CIs where asked)."""
    rows = []
    for system in systems:
        entry = summary[system]
        cells = [with_ci(entry[c]) if c in ci_columns else fmt(entry[c]["mean"]) for c in columns]
        rows.append([system, *cells, *(extra(system) if extra else ())])
    return markdown_table(["system", *columns, *extra_header], rows)
