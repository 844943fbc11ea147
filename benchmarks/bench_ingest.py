"""Benchmark directory ingestion (`graphonomous scan`).

Measures (on the machine it runs on, SQLite file database, hashing embedder):

* a generated tree of ``--files`` text files (Markdown with links, Python
  modules importing each other, plain text) in nested folders: files/s of
  the first scan and of a second scan of the unchanged tree;
* this repository (or ``--repo``) scanned twice: the second scan must ingest
  0 files and be at least 10x faster than the first;
* the share of the first scan spent embedding, and the peak RSS.

Generated files get an mtime one hour in the past, like any tree that was
not edited in the last seconds: files modified within the racy window
(2 s) are re-hashed by the next scan, which would hide the stat-only path.

    python benchmarks/bench_ingest.py [--files 2000] [--repo PATH] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from resultfile import stamp

REPO = Path(__file__).resolve().parents[1]
WORDS = [
    "valve",
    "pressure",
    "sensor",
    "pipeline",
    "widget",
    "order",
    "invoice",
    "schedule",
    "retry",
    "cache",
    "index",
    "graph",
    "node",
    "edge",
    "memory",
    "context",
    "query",
    "answer",
    "error",
    "timeout",
    "backup",
    "restore",
    "deploy",
    "release",
    "config",
    "secret",
    "token",
    "user",
    "session",
    "report",
    "metric",
    "alert",
    "threshold",
    "window",
]


def sentence(rng: random.Random, length: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(length)).capitalize() + "."


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(2, 5)))


def generate_tree(root: Path, count: int, seed: int = 7) -> None:
    """`count` files in folders of 40, a third each Markdown, Python and text."""
    rng = random.Random(seed)
    past = time.time() - 3600
    names: list[str] = []
    for i in range(count):
        folder = f"area{i // 400:02d}/part{i // 40:03d}"
        kind = ("md", "py", "txt")[i % 3]
        names.append(f"{folder}/file{i:05d}.{kind}")
    for i, rel in enumerate(names):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".md"):
            other = names[rng.randrange(count)]
            body = "\n\n".join(
                f"## Section {n}\n\n{paragraph(rng)}" for n in range(rng.randint(1, 4))
            )
            text = f"# Document {i}\n\nSee [related](/{other}).\n\n{body}\n"
        elif rel.endswith(".py"):
            target = names[(i + 3) % count]  # another module, sometimes importing back
            module = target.removesuffix(".py").replace("/", ".") if target.endswith(".py") else ""
            imports = f"import {module}\n" if module else ""
            functions = "\n\n".join(
                f'def f{n}(x):\n    """{sentence(rng)}"""\n    return x + {n}\n'
                for n in range(rng.randint(1, 5))
            )
            text = f'"""{sentence(rng)}"""\n{imports}\n\n{functions}'
        else:
            text = "\n\n".join(paragraph(rng) for _ in range(rng.randint(1, 4))) + "\n"
        path.write_text(text, encoding="utf-8")
        os.utime(path, (past, past))


def timed_scan(graph: Any, root: Path) -> dict[str, Any]:
    from graphonomous.ingest import scan_directory

    embed_seconds = 0.0
    original = graph.embed_texts

    def counting(texts: Sequence[str]) -> list[list[float]]:
        nonlocal embed_seconds
        started = time.perf_counter()
        try:
            return original(texts)  # type: ignore[no-any-return]
        finally:
            embed_seconds += time.perf_counter() - started

    graph.embed_texts = counting
    try:
        started = time.perf_counter()
        summary = scan_directory(graph, root)
        seconds = time.perf_counter() - started
    finally:
        graph.embed_texts = original
    return {
        "files_seen": summary.files_seen,
        "ingested": summary.ingested,
        "unchanged": summary.unchanged,
        "skipped": summary.skipped,
        "failed": summary.failed,
        "nodes_added": summary.nodes_added,
        "edges_added": summary.edges_added,
        "seconds": round(seconds, 3),
        "files_per_s": round(summary.files_seen / seconds, 1) if seconds else None,
        "embed_seconds": round(embed_seconds, 3),
    }


def scan_twice(root: Path, db: Path) -> dict[str, Any]:
    from graphonomous import Graphonomous

    with Graphonomous(db) as graph:
        first = timed_scan(graph, root)
        second = timed_scan(graph, root)
        stats = graph.graph_stats()
    speedup = first["seconds"] / second["seconds"] if second["seconds"] else None
    return {
        "root": str(root),
        "first": first,
        "second": second,
        "speedup": round(speedup, 1) if speedup else None,
        "nodes": stats["node_count"],
        "edges": stats["edge_count"],
        "edges_by_relationship": stats["edges_by_relationship"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="files in the generated tree")
    parser.add_argument("--repo", type=Path, default=REPO, help="a real tree to scan twice")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))

    results: dict[str, Any] = {"python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as scratch:
        tree = Path(scratch) / "tree"
        started = time.perf_counter()
        generate_tree(tree, args.files)
        results["generate_seconds"] = round(time.perf_counter() - started, 3)
        results["generated"] = scan_twice(tree, Path(scratch) / "generated.db")
        results["repository"] = scan_twice(args.repo.resolve(), Path(scratch) / "repo.db")
    results["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

    for name in ("generated", "repository"):
        part = results[name]
        first, second = part["first"], part["second"]
        print(
            f"{name:<10} {first['files_seen']:>5} files  first {first['seconds']:>7.2f} s "
            f"({first['files_per_s']:>7.1f} files/s, embedding {first['embed_seconds']:.2f} s)  "
            f"second {second['seconds']:>6.3f} s ({second['files_per_s']:>8.1f} files/s, "
            f"{second['ingested']} ingested)  speedup {part['speedup']}x  "
            f"nodes {part['nodes']:,} edges {part['edges']:,}"
        )
    print(f"peak RSS {results['peak_rss_mb']} MB")
    if args.json:
        args.json.write_text(
            json.dumps(stamp(results, __file__, argv), indent=2) + "\n", encoding="utf-8"
        )
    repo_second = results["repository"]["second"]
    ok = repo_second["ingested"] == 0 and (results["repository"]["speedup"] or 0) >= 10
    if not ok:
        print(
            "FAIL: the second scan of the repository must ingest 0 files and be >= 10x faster"
            " (files edited between the two scans are ingested again: is the tree being edited?)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
