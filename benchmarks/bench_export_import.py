"""`export` → `import` on a scanned tree: time, size, peak memory and what survives.

    nice python benchmarks/bench_export_import.py [--tree DIR] [--max-nodes 1000] [--keep DIR]
                                                  [--json FILE]

Rules of this benchmark:
- The tree defaults to a copy of this package's own source (`graphonomous/`, caches left
  out), copied to a fixed place under the work directory so the rescan sees the same paths.
- Every command is the CLI in a FRESH process (`python -m graphonomous`, embedder
  `hashing`), timed from outside; peak RSS is that child's own (`os.wait4`'s rusage).
- Checked, not only timed: the re-export of the imported database is byte-identical
  (without and with `--vectors`), the forgetting-budget dry run (`--max-nodes`) forgets
  as many nodes as on the original, a rescan after import ingests nothing, a second
  import changes nothing.
- Output: one JSON object on stdout (nodes, edges, bytes, seconds, peak_rss_mb and the
  checks); `--json FILE` also writes it with its provenance (`resultfile.stamp`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from resultfile import stamp  # noqa: E402


def cli(db: Path, *argv: str) -> tuple[float, float, str]:
    """(seconds, peak RSS MB of that child, stdout) of one CLI command in a fresh process;
    raises RuntimeError with its stderr when it fails."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "graphonomous", "--db", str(db), "--embedder", "hashing"]
    with tempfile.TemporaryFile("w+") as errors:
        start = time.perf_counter()
        child = subprocess.Popen(
            [*command, *argv],
            env=env,
            cwd=db.parent,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        child.stdout.close()
        if child.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(argv)}: exit {child.returncode}: {errors.read()}")
    return round(seconds, 2), round(usage.ru_maxrss / 1024, 1), out


def _json(db: Path, *argv: str) -> Any:
    return json.loads(cli(db, "--json", *argv)[2])


def run(tree: Path, work: Path, max_nodes: int) -> dict[str, Any]:
    source, target, copy = work / "source.db", work / "target.db", work / "vectors.db"
    figures: dict[str, Any] = {"scan_s": cli(source, "scan", str(tree))[0]}
    stats = _json(source, "stats")
    figures.update(nodes=stats["node_count"], edges=stats["edge_count"])
    out, vectors = work / "export.jsonl", work / "vectors.jsonl"
    figures["export_s"], _, _ = cli(source, "export", "--out", str(out))
    cli(source, "export", "--vectors", "--out", str(vectors))
    figures.update(bytes=out.stat().st_size, vector_bytes=vectors.stat().st_size)
    figures["import_s"], figures["import_peak_rss_mb"], _ = cli(target, "import", str(out))
    figures["import_vectors_s"], _, _ = cli(copy, "import", str(vectors))
    cli(target, "export", "--out", str(work / "again.jsonl"))
    cli(copy, "export", "--vectors", "--out", str(work / "again-vectors.jsonl"))
    budget = ("forget", "--policy", "hybrid", "--max-nodes", str(max_nodes), "--dry-run")
    seconds, _, text = cli(target, "--json", "import", str(out))
    rescan = _json(target, "scan", str(tree))
    figures["checks"] = {
        "byte_identical": out.read_bytes() == (work / "again.jsonl").read_bytes(),
        "byte_identical_vectors": vectors.read_bytes()
        == (work / "again-vectors.jsonl").read_bytes(),
        "dry_run_forgets": [len(_json(db, *budget)["candidates"]) for db in (source, target)],
        "rescan_ingested": rescan["ingested"],
        "rescan_unchanged": rescan["unchanged"],
        "second_import_changed": json.loads(text)["changed"],
    }
    figures["second_import_s"] = seconds
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="folder to scan (default: the package)")
    parser.add_argument("--max-nodes", type=int, default=1000, help="budget of the dry run")
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it (default: a temp dir)")
    parser.add_argument("--json", metavar="FILE", help="also write the result with provenance")
    argv = sys.argv[1:]
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-export-"))
    work.mkdir(parents=True, exist_ok=True)
    tree = work / "tree"
    if not tree.exists():
        shutil.copytree(
            args.tree or ROOT / "graphonomous", tree, ignore=shutil.ignore_patterns("__pycache__")
        )
    try:
        figures = run(tree, work, args.max_nodes)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(figures, indent=2))
    if args.json:
        stamped = json.dumps(stamp(figures, __file__, argv), indent=2, sort_keys=True)
        Path(args.json).write_text(stamped + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
