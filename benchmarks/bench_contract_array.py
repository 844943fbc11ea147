"""Peak memory of ``contract check`` on one large top-level JSON array (streamed, not read whole).

    python benchmarks/bench_contract_array.py [--mb N] [--before PATH] [--json FILE]

Writes, in a temporary directory, two files of about ``--mb`` MB each:

1. ``session.json``: an MCP transcript saved as one JSON array (``indent=1``), each
   ``tools/call analyze_topology`` request followed by its response, one document in
   ten drifted (a renamed key);
2. ``array.json``: an array of the same documents, checked as one document (an array
   is not a contract document: one violation), with a repeated key in every
   hundredth element (each a violation, capped at 200 listed and counted past that).

Each is checked by ``python -m graphonomous contract check FILE`` (text report) in a
fresh process started in the files' directory; the figures are its wall time, peak
resident set (``ru_maxrss`` of the child) and summary line.  The run's results (one per
document: where, not what) are part of the peak, so a transcript's peak grows with its
number of documents; the input's share is the difference between the two rows.
``--before PATH`` runs the same on the checkout at PATH first (the code before the
change), so both rows come from the same files on the same machine.
Files go to a temporary directory that is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
import resultfile

ROOT: Final = Path(__file__).resolve().parent.parent
# The documents repeated to fill the files (the engine's analyze_document output).
DISTINCT_DOCUMENTS: Final = 20
# Nodes per generated graph (documents of ~5 KB: SCCs, fault lines, a DAG part).
GRAPH_NODES: Final = 40


def documents() -> list[dict[str, Any]]:
    import random

    from graphonomous.topology import analyze_document

    rng = random.Random(16)
    out = []
    for _ in range(DISTINCT_DOCUMENTS):
        nodes = [f"n{index:03d}" for index in range(GRAPH_NODES)]
        edges = [
            {"source": a, "target": b}
            for a, b in (rng.sample(nodes, 2) for _ in range(GRAPH_NODES * 3 // 2))
        ]
        out.append(analyze_document({"nodes": nodes, "edges": edges}))
    return out


def write_files(directory: Path, target_bytes: int) -> dict[str, int]:
    """session.json and array.json of about `target_bytes` each; their element counts."""
    docs = documents()
    counts = {}
    with (directory / "session.json").open("w", encoding="utf-8") as handle:
        handle.write("[\n")
        ident = 0
        while handle.tell() < target_bytes:
            doc = dict(docs[ident % len(docs)])
            if ident % 10 == 3:
                doc["overall_routing"] = doc.pop("routing")
            call = {"name": "analyze_topology", "arguments": {}}
            request = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": call}
            answer = {**doc, "recommendation": "r"}
            result = {"structuredContent": answer, "content": [{"type": "text", "text": "ok"}]}
            response = {"jsonrpc": "2.0", "id": ident, "result": result}
            prefix = "" if ident == 0 else ",\n"
            handle.write(prefix + json.dumps(request, indent=1) + ",\n")
            handle.write(json.dumps(response, indent=1))
            ident += 1
        handle.write("\n]\n")
        counts["session.json"] = 2 * ident
    with (directory / "array.json").open("w", encoding="utf-8") as handle:
        handle.write("[")
        index = 0
        while handle.tell() < target_bytes:
            text = json.dumps(docs[index % len(docs)])
            if index % 100 == 0:
                text = '{"routing": "x", ' + text[1:]  # a repeated key
            handle.write(("" if index == 0 else ",") + text)
            index += 1
        handle.write("]")
        counts["array.json"] = index
    return counts


# Runs argv[1:] and prints that child's peak RSS (KiB) as its last stderr line: the
# child maximum is per process, so each measurement gets its own parent.
_PEAK_WRAPPER: Final = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def measure(checkout: Path, path: Path) -> dict[str, Any]:
    """One fresh `contract check` process on `path` with `checkout` on the path."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    argv = [sys.executable, "-m", "graphonomous", "contract", "check", str(path)]
    wrapper = [sys.executable, "-c", _PEAK_WRAPPER]
    started = time.perf_counter()
    # cwd: the file's directory, so no checkout is imported from the current directory.
    done = subprocess.run(
        [*wrapper, *argv], env=env, cwd=path.parent, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    summary = done.stdout.strip().splitlines()[-1]  # "N documents, M violations"
    return {
        "file": path.name,
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(peak_kib / 1024, 1),
        "exit": done.returncode,
        "summary": summary,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--before", type=Path, help="a checkout of the code before the change")
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as temp:
        directory = Path(temp)
        counts = write_files(directory, int(args.mb * 1e6))
        sizes = {name: (directory / name).stat().st_size for name in counts}
        for name in counts:
            print(f"{name}: {sizes[name] / 1e6:.1f} MB, {counts[name]} elements")
        trees = [("before", args.before)] if args.before else []
        for label, tree in [*trees, ("after", ROOT)]:
            assert tree is not None
            for name in counts:
                row = {"code": label, **measure(tree.resolve(), directory / name)}
                row["file_mb"] = round(sizes[name] / 1e6, 1)
                rows.append(row)
                print(json.dumps(row))
    if args.json:
        report = {"mb": args.mb, "elements": counts, "rows": rows}
        stamped = resultfile.stamp(report, "benchmarks/bench_contract_array.py")
        args.json.write_text(json.dumps(stamped, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
