"""Benchmark the hashing embedder and the exact vector index.

Measures (on the machine it runs on):

* embedding throughput for N sentences (cold and warm feature caches);
* how sparse the hashing vectors really are (non-zero components);
* for each index backend (pure Python, NumPy when available): bulk-load
  time, first-search column build (pure), top-k query latency p50/p95 over
  an index of M vectors, and incremental add cost;
* a naive pure-Python full scan (every stored vector dotted with the query)
  as the baseline the pure backend must beat.

Sentences come from LoCoMo turns (``--data``; read in place, never copied);
the index is filled with those turns plus deterministic two-turn
combinations up to ``--index-size``; queries are the LoCoMo questions.
Without the data file, generated sentences are used instead.

    python benchmarks/bench_embed.py [--no-numpy] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from resultfile import stamp

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def load_locomo(path: Path) -> tuple[list[str], list[str]]:
    """(turn texts, question texts) of a LoCoMo file, in file order."""
    with path.open(encoding="utf-8") as handle:
        samples = json.load(handle)
    turns: list[str] = []
    questions: list[str] = []
    for sample in samples:
        for value in sample["conversation"].values():
            if isinstance(value, list):
                for turn in value:
                    text = f"{turn['speaker']}: {turn['text']}"
                    if turn.get("blip_caption"):
                        text += f" [image: {turn['blip_caption']}]"
                    turns.append(text)
        questions.extend(item["question"] for item in sample["qa"])
    return turns, questions


def generated_sentences(count: int, seed: int) -> list[str]:
    """Deterministic pseudo-English sentences (fallback when the data is absent)."""
    rng = random.Random(seed)
    subjects = ["Melanie", "Caroline", "the team", "my sister", "our neighbour", "the valve"]
    verbs = ["visited", "painted", "repaired", "talked about", "planned", "remembered"]
    objects = [
        "the museum downtown",
        "a pottery class",
        "the hydraulic pressure sensor",
        "her adoption interview",
        "a camping trip to the lake",
        "the support group meeting",
        "an old guitar",
    ]
    tails = ["last week", "on Monday", "after work", "with friends", "in May 2023", ""]
    return [
        " ".join(
            part
            for part in (
                rng.choice(subjects),
                rng.choice(verbs),
                rng.choice(objects),
                rng.choice(tails),
            )
            if part
        )
        + "."
        for _ in range(count)
    ]


def corpus(turns: list[str], size: int) -> list[str]:
    """`size` texts: the turns, then deterministic pairs of turns."""
    texts = list(turns[:size])
    count = len(turns)
    index = 0
    while len(texts) < size:
        first = turns[index % count]
        second = turns[(index * 7919 + 13) % count]
        texts.append(first + " " + second)
        index += 1
    return texts


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    position = min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))
    return ordered[position]


def nonzero_stats(vectors: list[list[float]]) -> dict[str, float]:
    counts = sorted(sum(1 for x in vector if x) for vector in vectors)
    return {
        "mean": round(statistics.fmean(counts), 1),
        "p50": float(percentile([float(c) for c in counts], 0.5)),
        "p95": float(percentile([float(c) for c in counts], 0.95)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--sentences", type=int, default=1000, help="sentences to embed")
    parser.add_argument("--index-size", type=int, default=10_000, help="vectors in the index")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per backend")
    parser.add_argument("--scan-queries", type=int, default=10, help="naive full-scan queries")
    parser.add_argument("--adds", type=int, default=300, help="incremental adds timed")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--no-numpy", action="store_true", help="force the pure-Python paths")
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS threads (NumPy)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.no_numpy:
        os.environ["GRAPHONOMOUS_NO_NUMPY"] = "1"
    # One query is one memory-bound mat-vec: BLAS threads only add contention
    # on small shared machines.  Set before NumPy is first imported.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, str(args.blas_threads))

    sys.path.insert(0, str(REPO))
    from graphonomous.embed import HashingEmbedder, VectorIndex, numpy_available
    from graphonomous.embed.hashing import _word_slots, feature_slot
    from graphonomous.embed.index import exact_score, normalized_f32

    if args.data.is_file():
        turns, questions = load_locomo(args.data)
        source = str(args.data)
    else:
        turns = generated_sentences(max(args.sentences, 3000), seed=1)
        questions = [f"What did {s.split(' ', 2)[0]} do?" for s in generated_sentences(500, 2)]
        source = "generated"
    embedder = HashingEmbedder()
    results: dict[str, Any] = {
        "source": source,
        "k": args.k,
        "python": sys.version.split()[0],
        "blas_threads": os.environ["OPENBLAS_NUM_THREADS"],
    }

    # -- embedding throughput -------------------------------------------------
    sentences = corpus(turns, args.sentences)
    feature_slot.cache_clear()
    _word_slots.cache_clear()
    start = time.perf_counter()
    sentence_vectors = embedder.embed(sentences)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    embedder.embed(sentences)
    warm = time.perf_counter() - start
    results["embed"] = {
        "sentences": len(sentences),
        "cold_s": round(cold, 3),
        "warm_s": round(warm, 3),
        "per_sentence_ms_cold": round(1000 * cold / len(sentences), 3),
    }

    # -- index corpus and queries ---------------------------------------------
    texts = corpus(turns, args.index_size)
    vectors = embedder.embed(texts)
    ids = [f"n{position:06d}" for position in range(len(vectors))]
    query_texts = [questions[i % len(questions)] for i in range(args.queries)]
    query_vectors = embedder.embed(query_texts)
    results["density"] = {
        "dimensions": embedder.dimensions,
        "sentences_nonzero": nonzero_stats(sentence_vectors),
        "index_nonzero": nonzero_stats(vectors),
        "queries_nonzero": nonzero_stats(query_vectors),
    }

    backends = ["pure"] + (["numpy"] if numpy_available() else [])
    answers: dict[str, list[list[tuple[str, float]]]] = {}
    results["index"] = {}
    for backend in backends:
        index = VectorIndex(embedder.dimensions, backend=backend)
        start = time.perf_counter()
        index.bulk_load(zip(ids, vectors, strict=False))
        load = time.perf_counter() - start
        start = time.perf_counter()
        first = index.search(query_vectors[0], args.k)
        first_search = time.perf_counter() - start
        latencies = []
        found = [first]
        for query in query_vectors[1:]:
            start = time.perf_counter()
            found.append(index.search(query, args.k))
            latencies.append(time.perf_counter() - start)
        answers[backend] = found
        # Incremental adds (each followed by nothing) then one search that
        # pays any pending rebuild.
        extra = embedder.embed(
            [f"extra note {n}: {turns[n % len(turns)]}" for n in range(args.adds)]
        )
        start = time.perf_counter()
        for number, vector in enumerate(extra):
            index.add(f"x{number:06d}", vector)
        adds = time.perf_counter() - start
        start = time.perf_counter()
        index.search(query_vectors[0], args.k)
        after_adds = time.perf_counter() - start
        results["index"][backend] = {
            "vectors": len(ids),
            "bulk_load_s": round(load, 3),
            "first_search_s": round(first_search, 3),
            "query_p50_ms": round(1000 * percentile(latencies, 0.5), 2),
            "query_p95_ms": round(1000 * percentile(latencies, 0.95), 2),
            "add_us": round(1e6 * adds / max(1, len(extra)), 1),
            "search_after_adds_ms": round(1000 * after_adds, 2),
        }
    if len(answers) == 2:
        results["backends_identical"] = answers["pure"] == answers["numpy"]

    # -- naive pure full scan baseline ----------------------------------------
    stored = [normalized_f32(vector, embedder.dimensions) for vector in vectors]
    scan_times = []
    for query in query_vectors[: args.scan_queries]:
        start = time.perf_counter()
        scores = [exact_score(query, row) for row in stored]
        sorted(range(len(scores)), key=lambda i: (-scores[i], ids[i]))[: args.k]
        scan_times.append(time.perf_counter() - start)
    results["full_scan_pure"] = {
        "queries": len(scan_times),
        "p50_ms": round(1000 * percentile(scan_times, 0.5), 1),
    }

    print_table(results)
    if args.json:
        args.json.write_text(
            json.dumps(stamp(results, __file__, argv), indent=2) + "\n", encoding="utf-8"
        )
    return 0


def print_table(results: dict[str, Any]) -> None:
    embed = results["embed"]
    density = results["density"]
    print(f"source: {results['source']}   python {results['python']}")
    print(
        f"embed {embed['sentences']} sentences: cold {embed['cold_s']} s "
        f"({embed['per_sentence_ms_cold']} ms each), warm {embed['warm_s']} s"
    )
    for key in ("sentences_nonzero", "index_nonzero", "queries_nonzero"):
        stats = density[key]
        print(
            f"non-zero of {density['dimensions']} ({key.split('_')[0]}): mean {stats['mean']}, "
            f"p50 {stats['p50']}, p95 {stats['p95']}"
        )
    header = f"{'backend':8} {'N':>6} {'load s':>7} {'1st s':>6} {'p50 ms':>7} {'p95 ms':>7}"
    print(header + f" {'add us':>7} {'after adds ms':>13}")
    for backend, row in results["index"].items():
        print(
            f"{backend:8} {row['vectors']:>6} {row['bulk_load_s']:>7} {row['first_search_s']:>6} "
            f"{row['query_p50_ms']:>7} {row['query_p95_ms']:>7} {row['add_us']:>7} "
            f"{row['search_after_adds_ms']:>13}"
        )
    scan = results["full_scan_pure"]
    print(f"naive pure full scan: p50 {scan['p50_ms']} ms over {scan['queries']} queries")
    if "backends_identical" in results:
        print(f"pure and numpy results identical: {results['backends_identical']}")


if __name__ == "__main__":
    raise SystemExit(main())
